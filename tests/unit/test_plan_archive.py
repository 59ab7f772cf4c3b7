"""`migrator plan`'s archive of the originals (issue 43): each storage class's month, copy and minimum duration,
checked against cases computed by hand, and every price cited to its page."""

from __future__ import annotations

import json

import pytest
from migrator.archive.plan import MAX_ARCHIVE_BYTES, STORAGE_CLASSES
from migrator_cli.archive_prices import PRICES, PRICING, storage_usd
from migrator_cli.main import main
from migrator_cli.plan_archive import archive_outlook, parts_of

GiB = 1024**3
KB_GB = 1 / (1024 * 1024)  # a KB in GB


@pytest.mark.parametrize(
    ("storage_class", "month", "copy", "minimum"),
    [
        # 3 originals of 1 GiB (one without a size, at the mean), 64 parts of 16 MiB each: 192 UploadParts, then a
        # Create and a Complete each in the class; a List and the row's JSON each at STANDARD's; one HEAD each.
        ("STANDARD", 3 * 0.023, 198 / 1000 * 0.005 + 6 / 1000 * 0.005 + 3 / 1000 * 0.0004, 0.0),
        ("STANDARD_IA", 3 * 0.0125, 198 / 1000 * 0.01 + 6 / 1000 * 0.005 + 3 / 1000 * 0.0004, 3 * 0.0125),
        (
            "INTELLIGENT_TIERING",
            3 * 0.023 + 3 / 1000 * 0.0025,  # and the monitoring of 3 objects
            198 / 1000 * 0.005 + 6 / 1000 * 0.005 + 3 / 1000 * 0.0004,
            0.0,
        ),
        (
            "DEEP_ARCHIVE",
            3 * 0.00099 + 3 * 32 * KB_GB * 0.00099 + 3 * 8 * KB_GB * 0.023,  # 32 KB index, 8 KB metadata each
            198 / 1000 * 0.05 + 6 / 1000 * 0.005 + 3 / 1000 * 0.0004,
            6 * (3 * 0.00099 + 3 * 32 * KB_GB * 0.00099 + 3 * 8 * KB_GB * 0.023),  # 180 days: six months
        ),
    ],
)
def test_each_class_costs_a_month_of_the_library_the_copys_requests_and_its_minimum(
    storage_class, month, copy, minimum
):
    outlook = archive_outlook(3, 2 * GiB, 2, 2 * parts_of(GiB), 0)
    assert (outlook.bytes, outlook.estimated, outlook.parts) == (3 * GiB, 1, 192)
    cost = next(c for c in outlook.classes if c.storage_class == storage_class)
    assert cost.usd_month == pytest.approx(month, abs=1e-6)
    assert cost.usd_copy == pytest.approx(copy, abs=1e-6)
    assert cost.usd_minimum == pytest.approx(minimum, abs=1e-6)
    assert [c.storage_class for c in outlook.classes] == list(STORAGE_CLASSES)


@pytest.mark.parametrize(
    ("size", "parts"),
    [(1, 1), (16 * 1024**2, 1), (16 * 1024**2 + 1, 2), (GiB, 64), (MAX_ARCHIVE_BYTES, 1000), (0, 0)],
)
def test_the_parts_are_the_archivers_own_and_a_file_past_one_copy_has_none(size, parts):
    assert parts_of(size) == parts
    assert parts_of(MAX_ARCHIVE_BYTES + 1) is None


@pytest.mark.parametrize(
    ("gb", "usd"),
    [
        (1000, 1000 * 0.023),
        (50 * 1024 + 1000, 50 * 1024 * 0.023 + 1000 * 0.022),  # past the first 50 TB
        (600 * 1024, 50 * 1024 * 0.023 + 450 * 1024 * 0.022 + 100 * 1024 * 0.021),  # past 500 TB
    ],
)
def test_standard_storage_is_billed_through_its_tiers(gb, usd):
    assert storage_usd(PRICES["STANDARD"], gb) == pytest.approx(usd)
    assert storage_usd(PRICES["DEEP_ARCHIVE"], gb) == pytest.approx(gb * 0.00099)


def test_an_inventory_without_a_size_is_not_costed_and_says_what_it_needs():
    outlook = archive_outlook(10, 0, 0, 0, 0)
    assert not outlook.costed and "give size_bytes" in outlook.line() and outlook.lines() == [outlook.line()]


def test_every_class_the_archive_takes_has_its_prices_cited_to_the_aws_page():
    assert set(PRICES) == set(STORAGE_CLASSES)
    for price in PRICES.values():
        assert price.source == PRICING and price.cited()["date"] and price.cited()["terms"].startswith("https://")
        assert price.gb_month and price.put_per_1000 > 0 and price.min_days >= 0


def test_plan_gives_the_archive_in_one_line_and_its_table_with_archive(tmp_path, capsys):
    inventory = tmp_path / "inv.jsonl"
    rows = [{"id": f"v{i}", "source_url": f"https://e.example.com/{i}.mp4", "size_bytes": GiB} for i in range(3)]
    rows.append({"id": "huge", "source_url": "https://e.example.com/h.mov", "size_bytes": MAX_ARCHIVE_BYTES + 1})
    inventory.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["plan", str(inventory), "--provider", "mux", "--rate", "1"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("archive "))
    assert "(DEEP_ARCHIVE) to $" in line and "a month for" in line and "--archive: each class" in line
    assert "copy, once" not in out
    assert main(["plan", str(inventory), "--provider", "mux", "--rate", "1", "--archive"]) == 0
    table = capsys.readouterr().out
    assert "4 originals, 192 parts to copy" in table
    assert "  DEEP_ARCHIVE " in table and "180 days, at least $" in table
    assert "1 files are past what one archive copy takes: copy them by hand" in table
    assert "    DEEP_ARCHIVE         $0.00099/GB-month, $0.05 per 1,000 PUTs, 180-day minimum" in table
    assert PRICING in table and "storage-class-intro.html" in table
    assert main(["plan", str(inventory), "--provider", "mux", "--rate", "1", "--json"]) == 0
    assert "archive" not in json.loads(capsys.readouterr().out)  # asked for: the table is long
    assert main(["plan", str(inventory), "--provider", "mux", "--rate", "1", "--json", "--archive"]) == 0
    doc = json.loads(capsys.readouterr().out)["archive"]
    assert (doc["originals"], doc["parts"], doc["too_large"]) == (4, 192, 1)
    assert {c["storage_class"] for c in doc["classes"]} == set(STORAGE_CLASSES)
    assert doc["prices"]["GLACIER"]["source"] == PRICING and doc["prices"]["GLACIER"]["min_days"] == 90
