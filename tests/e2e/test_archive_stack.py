"""Keep the masters, end to end (issue 43): a Vimeo library (private videos and captions among it) moved to Mux on
the deployed template with ArchiveBucket set, and every original archived on the way, by the stack's own archive
lane (the uploader owes each copy once Mux has the video, the archive worker copies it from the source a part at a
time and checks it).

What is asserted is what the bucket holds at the end, against what the Vimeo simulator serves: each original's
bytes (their SHA-256 equal to the source file's), the row's JSON beside it, the captions beside those that have
them, nothing outside the prefix; `migrator verify --archive` reads every object's size and S3 checksum back
against the ledger; Mux holds no video twice.
"""

from __future__ import annotations

import hashlib
import json
import time

import pytest
from migrator.archive.plan import object_prefix
from migrator.ledger import Ledger
from migrator_cli.main import main

from infra.sim.library import _file
from tests.e2e.source_pairs import held_by

pytestmark = pytest.mark.e2e

SETTLED = ("archived", "failed")


def archive_states(aws, table: str, ids: list[str], timeout_s: float) -> dict[str, dict]:
    """The assets' items once every one's original is archived or failed (or `timeout_s` has passed)."""
    ledger = Ledger(table, aws("dynamodb"))
    deadline = time.time() + timeout_s
    while True:
        found = ledger.get_many(ids)
        if all(found.get(i, {}).get("archive_state") in SETTLED for i in ids) or time.time() > deadline:
            return found
        time.sleep(1)


def test_a_vimeo_library_is_archived_checksummed_while_it_moves_to_mux(
    sources, targets, migrate, aws, endpoint, capsys
):
    target = targets("mux")
    outputs = target.outputs
    bucket, prefix = outputs["ArchiveBucketName"], outputs["ArchivePrefix"]
    with target.uploader_environment(aws("lambda"), ARCHIVE_QUEUE_URL=outputs["ArchiveQueueUrl"]):
        rows, _, items = migrate("vimeo", target)
        ids = [row["id"] for row in rows]
        assert {items[i]["state"] for i in ids} == {"ready"}
        found = archive_states(aws, outputs["LedgerTableName"], ids, timeout_s=240)
    states = {i: (found[i].get("archive_state"), found[i].get("archive_error")) for i in ids}
    assert {state for state, _ in states.values()} == {"archived"}, states
    assert any(row.get("privacy") == "private" for row in rows) and any(row.get("tracks") for row in rows)

    s3 = aws("s3")
    vimeo = sources.sims["vimeo"].config
    for row in rows:
        item = found[row["id"]]
        held = s3.get_object(Bucket=bucket, Key=item["archive_key"])["Body"].read()
        served, _ = _file(held_by(sources, "vimeo", row), "original.mp4", vimeo.media_bytes)
        assert hashlib.sha256(held).digest() == hashlib.sha256(served).digest(), row["id"]
        assert int(item["archive_bytes"]) == len(served)
        folder = object_prefix(prefix, row["id"])
        assert item["archive_key"].startswith(f"{folder}/original.")
        sidecar = json.loads(s3.get_object(Bucket=bucket, Key=f"{folder}/row.json")["Body"].read())
        assert sidecar["asset_id"] == row["id"] and sidecar.get("title") == row["title"]
        beside = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=f"{folder}/").get("Contents", [])]
        if row.get("tracks"):  # each caption the row names, kept beside its original
            assert [k for k in beside if k.startswith(f"{folder}/captions/")], (row["id"], beside)
    everything = s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    assert everything and all(o["Key"].startswith(f"{prefix}/") for o in everything)

    code = main(["verify", "--archive", "--outputs", str(target.outputs_path), "--endpoint", endpoint])
    said = capsys.readouterr().err
    assert code == 0, said
    assert f"archived {len(rows)} of {len(rows)}," in said and "checksums verified" in said, said
    assert target.sim.stats()["duplicate_videos"] == 0
