"""`migrator plan`: the figures of a migration from its inventory alone, checked against a case computed
by hand, on a 10,000-row inventory with no AWS at all, and with the price table's dates and sources."""

from __future__ import annotations

import json

import pytest
from migrator.platforms import TARGETS
from migrator_cli.main import main
from migrator_cli.plan import Price

PRICES = {
    "providers": {
        "mux": {
            "encoding_per_minute": {"usd": 0.02, "date": "2026-01-02", "source": "https://mux.example/p"},
            "storage_per_minute_month": {"usd": 0.001, "date": "2026-01-02", "source": "https://mux.example/p"},
        },
        "cloudflare": {
            "encoding_per_minute": {"usd": 0.01, "date": "2026-01-03", "source": "https://cf.example/p"},
            "storage_per_minute_month": {
                "usd": 0.005,
                "block_minutes": 1000,
                "date": "2026-01-03",
                "source": "https://cf.example/p",
            },
        },
    }
}
AWS_PRICES = {
    "regions": {
        "eu-west-1": {
            name: {"usd_per_million": 1.0, "date": "2026-01-04", "source": "https://aws.example/p"}
            for name in (
                "dynamodb_write_request_unit",
                "dynamodb_read_request_unit",
                "sqs_request",
                "lambda_request",
                "rest_api_request",
            )
        }
        | {
            "lambda_gb_second": {"usd": 0.00001, "date": "2026-01-04", "source": "https://aws.example/l"},
            "dynamodb_storage_gb_month": {"usd": 1.0, "date": "2026-01-04", "source": "https://aws.example/s"},
        }
    }
}
REQUESTS = {
    "ledger_item_bytes": 1_000_000,
    "uploader_gb_seconds": {"memory_gb": 1.0, "create_s": 1.0, "max_inline_wait_s": 15},
    "per_asset": {
        name: {
            "dynamodb_write_units": 10,
            "dynamodb_read_units": 2,
            "sqs_requests": 1,
            "lambda_requests": 3,
            "lambda_gb_seconds": 0.5,
            "api_requests": 2,
        }
        for name in ("mux", "cloudflare")
    },
}
SMALL = [
    '{"id": "a", "source_url": "https://m.example/a.mp4", "duration_s": 60, "size_bytes": 1000,'
    ' "tracks": [{"url": "https://m.example/a.vtt", "language": "en"}]}',
    '{"id": "b", "source_url": "s3://bucket/b.mp4", "duration_s": 120, "size_bytes": 3000, "privacy": "private"}',
    '{"id": "c", "source_url": "vimeo://9"}',
    '{"id": "a", "source_url": "https://m.example/a.mp4"}',
    '{"id": "d", "source_url": "ftp://x/d.mp4"}',
]


def write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return str(path)


def plan(tmp_path, capsys, *extra, lines=SMALL):
    inventory = write(tmp_path, "inv.jsonl", "\n".join(lines) + "\n")
    argv = ["plan", inventory, "--prices", write(tmp_path, "p.json", PRICES)]
    argv += [
        "--aws-prices",
        write(tmp_path, "a.json", AWS_PRICES),
        "--aws-requests",
        write(tmp_path, "r.json", REQUESTS),
    ]
    code = main([*argv, "--region", "eu-west-1", *extra])
    out = capsys.readouterr().out
    return code, out


def test_the_arithmetic_of_a_small_case_computed_by_hand(tmp_path, capsys):
    code, out = plan(tmp_path, capsys, "--json")
    doc = json.loads(out)
    assert code == 1  # one bad row: something to look at
    # 3 assets (a repeat dropped, ftp refused); 60 + 120 s known, c at their mean (90 s): 270 s.
    assert (doc["assets"], doc["bad"], doc["repeats"], doc["duration_known"]) == (3, 1, 1, 2)
    assert doc["hours"] == pytest.approx(270 / 3600) and doc["hours_known"] == pytest.approx(180 / 3600)
    assert (doc["bytes"], doc["size_known"], doc["tracks"], doc["track_languages"]) == (4000, 2, 1, {"en": 1})
    assert doc["privacy"] == {"default": 2, "private": 1}
    assert doc["source_references"] == {"vimeo": 1}

    mux = doc["providers"]["mux"]
    # vimeo:// is resolved at the create (a source reference): all 3 go, 4.5 minutes of video.
    assert mux["assets_to_send"] == 3 and mux["unfetchable"] == {}
    assert mux["time_s"] == pytest.approx(3.0)  # 3 creates at Mux's documented 1/s
    assert mux["encoding_usd"] == pytest.approx(4.5 * 0.02)
    assert mux["storage_usd_month"] == pytest.approx(4.5 * 0.001)
    # Per asset: 10 + 2 + 1 + 3 + 2 requests at $1 a million, and 0.5 + 1 GB x (min(15, 5 workers / 1/s) + 1 s)
    # = 6.5 GB-s at $0.00001: 18e-6 + 65e-6 = 83e-6 dollars, for 3 assets.
    assert mux["aws_usd"] == pytest.approx(3 * 83e-6)
    assert mux["aws_breakdown"]["lambda_gb_seconds"] == pytest.approx(3 * 6.5 * 0.00001)
    assert mux["ledger_storage_usd_month"] == pytest.approx(0.003)  # 3 x 1 MB at $1 a GB-month

    cf = doc["providers"]["cloudflare"]
    # s3:// cannot go (a presigned GET refuses HEAD): 2 of 3 assets, 2/3 of 4.5 minutes = 3 minutes;
    # storage is bought 1,000 minutes at a time.
    assert cf["assets_to_send"] == 2 and sum(cf["unfetchable"].values()) == 1
    assert cf["time_s"] == pytest.approx(0.5)  # 2 creates at 4/s
    assert cf["encoding_usd"] == pytest.approx(3.0 * 0.01)
    assert cf["storage_usd_month"] == pytest.approx(5.0)
    assert cf["prices"]["storage_per_minute_month"] == {
        "usd": 0.005,
        "date": "2026-01-03",
        "source": "https://cf.example/p",
        "verified": True,
    }
    generic = doc["providers"]["generic"]
    assert generic["time_s"] is None and any("give --rate" in w for w in generic["warnings"])


def test_a_configured_rate_and_the_accounts_storage_change_the_figures(tmp_path, capsys):
    _, out = plan(tmp_path, capsys, "--json", "--provider", "cloudflare", "--rate", "0.5", "--storage-minutes", "1")
    cf = json.loads(out)["providers"]["cloudflare"]
    assert cf["time_s"] == pytest.approx(4.0) and "configured" in cf["rate_source"]  # 2 creates at 0.5/s
    assert any("3 minutes needed, the account has 1" in w for w in cf["warnings"])


def test_the_text_names_each_price_with_its_date_and_source(tmp_path, capsys):
    _, out = plan(tmp_path, capsys, "--provider", "mux")
    assert "mux        storage_per_minute_month" in out and "2026-01-02  https://mux.example/p" in out
    assert "$1 per million  2026-01-04  https://aws.example/p" in out
    assert "vimeo:// source reference" not in out  # resolved at the create, not unfetchable


def test_a_price_without_its_date_and_source_is_refused():
    with pytest.raises(Exception, match="date and source"):
        Price.of({"usd": 1.0}, "x")
    assert Price.of({"usd": 0.005, "block_minutes": 1000, "date": "d", "source": "s"}, "x").cost(1001) == 10.0


def test_ten_thousand_rows_with_no_aws_at_all(tmp_path, capsys, monkeypatch):
    for name in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "MIGRATOR_STACK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    import boto3

    def no_aws(*args, **kwargs):
        raise AssertionError("plan must not reach AWS")

    monkeypatch.setattr(boto3, "client", no_aws)
    monkeypatch.setattr(boto3.session.Session, "client", no_aws)
    rows = ["id,source_url,duration_s,size_bytes,privacy,tracks,metadata"]
    for i in range(10_000):
        track = f'"[{{""url"": ""https://c.example/{i}.vtt"", ""language"": ""fr""}}]"' if i % 4 == 0 else ""
        size = '"{""height"": 2160, ""width"": 3840}"' if i % 50 == 0 else ""
        rows.append(f"lib/{i},https://m.example/{i}.mp4,{60 if i % 10 else ''},{10**6},unlisted,{track},{size}")
    inventory = tmp_path / "big.csv"
    inventory.write_text("\n".join(rows) + "\n")

    assert main(["plan", str(inventory), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["assets"], doc["duration_known"], doc["bytes"], doc["tracks"]) == (10_000, 9_000, 10**10, 2_500)
    assert doc["hours"] == pytest.approx(10_000 / 60) and doc["privacy"] == {"unlisted": 10_000}
    assert list(doc["providers"]) == list(TARGETS)  # every registered target, in the registry's order
    for name in ("mux", "cloudflare", "apivideo"):
        figures = doc["providers"][name]
        assert figures["time_s"] > 0 and figures["storage_usd_month"] > 0 and figures["aws_usd"] > 0
        assert all(price["date"] and price["source"].startswith("https://") for price in figures["prices"].values())
    assert doc["providers"]["mux"]["time_s"] == pytest.approx(10_000)  # 1 create a second, documented
    assert any("200 sources are above 1080p" in w for w in doc["providers"]["mux"]["warnings"])
    assert any("10,000 minutes" in w for w in doc["providers"]["cloudflare"]["warnings"])

    assert main(["plan", str(inventory)]) == 0
    text = capsys.readouterr().out
    assert "assets          10,000" in text and "video           166.7 h" in text and "size            10.0 GB" in text
    assert "https://developers.cloudflare.com/stream/pricing/" in text and "2026-12-01" in text


def test_from_a_platform_without_credentials_is_one_clear_line(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("VIMEO_TOKEN", raising=False)
    monkeypatch.delenv("MIGRATOR_SOURCE_CREDENTIALS", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.config/video-migrator/sources.json either
    assert main(["plan", "--from", "vimeo"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("migrator plan: ") and "vimeo" in err and "Traceback" not in err
    assert main(["plan", str(tmp_path / "x.jsonl"), "--from", "vimeo"]) == 2  # one of the two
    assert "one of the two" in capsys.readouterr().err


def test_a_migration_from_stream_is_timed_at_the_slower_of_the_source_budget_and_the_targets(tmp_path, capsys):
    """Review 4, item 8: Stream's 1,200 requests per 5 minutes per user pay for the source side too (a
    download request and the reads around it for each video), so 600 videos from Stream to Cloudflare take
    600 x 5 / 4 = 750 s at the source, not the 150 s of the target's 4 creates a second."""
    rows = [json.dumps({"id": f"s/{i}", "source_url": f"cloudflare://{i:032x}", "duration_s": 60}) for i in range(600)]
    code, out = plan(tmp_path, capsys, "--json", lines=rows)
    doc = json.loads(out)
    cloudflare, mux = doc["providers"]["cloudflare"], doc["providers"]["mux"]
    assert cloudflare["target_time_s"] == pytest.approx(150.0)
    assert cloudflare["source_time_s"] == {"cloudflare": pytest.approx(750.0)}
    assert cloudflare["time_s"] == pytest.approx(750.0)  # the slower side
    assert any("share them" in w for w in cloudflare["warnings"])
    assert mux["target_time_s"] == pytest.approx(600.0) and mux["time_s"] == pytest.approx(750.0)
    code, text = plan(tmp_path, capsys, lines=rows)
    assert code == 0
    assert "cloudflare: source cloudflare: 12.5 min to resolve 600 references at 4 requests a second, 5 a video" in text
    assert "(slower: it sets the time)" in text


def test_a_source_that_documents_no_read_rate_is_not_timed_and_says_so(tmp_path, capsys):
    rows = [json.dumps({"id": f"v/{i}", "source_url": f"vimeo://{i}", "duration_s": 60}) for i in range(10)]
    code, out = plan(tmp_path, capsys, "--json", lines=rows)
    mux = json.loads(out)["providers"]["mux"]
    assert code == 0
    assert mux["source_time_s"] == {} and mux["time_s"] == pytest.approx(10.0)
    assert "vimeo: no documented read rate: the source side is not timed" in mux["warnings"]


def test_the_unfetchable_file_is_read_a_line_at_a_time_and_a_torn_line_is_passed_over(tmp_path):
    """Review 4, item 9: plan --from read it whole and a torn last line (a crash mid-write) ended the plan."""
    from migrator_cli.commands.plan import unfetchable_reasons

    path = tmp_path / "vimeo.jsonl.unfetchable.jsonl"
    lines = [json.dumps({"id": f"vimeo/{i}", "reason": "no file access"}) for i in range(3)]
    path.write_text("\n".join(lines) + '\n{"id": "vimeo/9", "rea')
    assert list(unfetchable_reasons(path)) == ["no file access"] * 3
