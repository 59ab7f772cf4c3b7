"""Pilot runs: `load --sample N --seed S` sends a reproducible subset chosen by a hash of id and seed
(whatever the rows' order, growing with N, held in memory only N at a time), `--where` filters by
folder, tag and privacy, and a later full load's copies of what the pilot moved are dropped by intake."""

from __future__ import annotations

import io
import json
import random

import pytest
from migrator.intake import IntakeKind, intake_fate
from migrator_cli.load import load_inventory
from migrator_cli.main import main
from migrator_cli.select import Selection, parse_where

from tests.unit.test_sender import FakeSQS


def rows(n: int, start: int = 0) -> list[dict]:
    out = []
    for i in range(start, start + n):
        doc = {"id": f"lib/{i:05d}", "source_url": f"https://m.example/{i}.mp4"}
        if i % 3 == 0:
            doc["folder"] = f"shows/s{i % 2}"
        if i % 5 == 0:
            doc["tags"] = ["news"] if i % 2 else ["sport", "news"]
        if i % 7 == 0:
            doc["privacy"] = "private"
        out.append(doc)
    return out


def write(tmp_path, docs, name="inv.jsonl") -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return str(path)


def sent(tmp_path, docs, selection, name="inv.jsonl"):
    sqs = FakeSQS()
    summary = load_inventory(
        write(tmp_path, docs, name), sqs=sqs, queue_url="q", out=io.StringIO(), selection=selection
    )
    return summary, set(sqs.received)


def test_a_sample_is_the_same_rows_whatever_their_order_and_grows_with_n(tmp_path):
    docs = rows(2000)
    summary, first = sent(tmp_path, docs, Selection(sample=50, seed=7))
    assert len(first) == 50 and summary.sent == 50 and summary.sampled_out == 1950 and summary.good == 50
    shuffled = docs[:]
    random.Random(1).shuffle(shuffled)
    _, again = sent(tmp_path, shuffled, Selection(sample=50, seed=7), "shuffled.jsonl")
    assert again == first
    _, other_seed = sent(tmp_path, docs, Selection(sample=50, seed=8))
    assert other_seed != first
    _, bigger = sent(tmp_path, docs, Selection(sample=200, seed=7))
    assert first < bigger  # a grown pilot keeps the rows of the smaller one


@pytest.mark.slow  # seconds of real time or work: `make unit` and CI run it, `make quick` does not
def test_a_sample_is_sent_in_file_order_and_holds_only_n_rows(tmp_path):
    import tracemalloc

    class Order(FakeSQS):
        pass

    sqs = Order()
    load_inventory(
        write(tmp_path, rows(500)), sqs=sqs, queue_url="q", out=io.StringIO(), selection=Selection(sample=20)
    )
    ids = [json.loads(e["MessageBody"])["id"] for call in sqs.calls for e in call]
    assert ids == sorted(ids)  # the file's order (its ids are in order)

    peaks = []
    for n in (2_000, 20_000):
        path = write(tmp_path, rows(n), f"big{n}.jsonl")
        tracemalloc.start()
        load_inventory(path, dry_run=True, out=io.StringIO(), selection=Selection(sample=10))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < peaks[0] * 2


def test_where_filters_by_folder_tag_and_privacy(tmp_path):
    docs = rows(300)
    where = Selection(where=(parse_where("folder=shows/*"), parse_where("tag=news")))
    summary, ids = sent(tmp_path, docs, where)
    expected = {d["id"] for d in docs if "folder" in d and "news" in d.get("tags", [])}
    assert ids == expected and summary.filtered == 300 - len(expected)
    _, either = sent(tmp_path, docs, Selection(where=(("tag", "sport"), ("tag", "missing"))))
    assert either == {d["id"] for d in docs if "sport" in d.get("tags", [])}
    _, default = sent(tmp_path, docs, Selection(where=(("privacy", "default"),)))
    assert default == {d["id"] for d in docs if "privacy" not in d}
    summary, both = sent(tmp_path, docs, Selection(where=(("privacy", "private"),), sample=5, seed=3))
    assert len(both) == 5 and all(int(i[4:]) % 7 == 0 for i in both)
    assert any("of 43 matching privacy=private" in line for line in summary.lines())


@pytest.mark.parametrize("text", ["title=x", "folder", "tag=", "=x"])
def test_where_names_only_the_fields_it_knows(text):
    with pytest.raises(ValueError, match="FIELD=VALUE"):
        parse_where(text)


def test_the_pilot_flags_on_the_command_line(tmp_path, capsys):
    path = write(tmp_path, rows(100))
    assert main(["load", path, "--dry-run", "--sample", "10", "--seed", "4", "--where", "tag=news", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert (summary["good"], summary["sample"], summary["seed"], summary["where"]) == (10, 10, 4, ["tag=news"])
    assert summary["filtered"] == 80 and summary["sampled_out"] == 10
    with pytest.raises(SystemExit) as refused:  # argparse's usage error
        main(["load", path, "--dry-run", "--where", "colour=x"])  # title=x is a --where of its own now (where.py)
    assert refused.value.code == 2 and "'colour' is not a column: one of plays" in capsys.readouterr().err


def test_after_a_pilot_the_full_load_sends_all_and_intake_drops_what_the_pilot_moved(tmp_path):
    docs = rows(120)
    _, pilot = sent(tmp_path, docs, Selection(sample=50, seed=1))
    ledger = {i: {"asset_id": i, "state": "ready" if n % 2 else "processing"} for n, i in enumerate(sorted(pilot))}
    summary, full = sent(tmp_path, docs, None)
    assert summary.sent == 120 and full >= pilot
    forwarded = {i for i in full if intake_fate(ledger.get(i), 0.0).kind is not IntakeKind.DROP}
    assert forwarded == full - pilot  # the pilot's 50 never reach the paced queue, so no second create
