"""The operator's side of the archive (issue 43): `retry --archive` (failed copies re-armed in one conditional write
each, then sent to the archive worker) and a stack without the archive named as such."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from migrator.ledger import WriteResult
from migrator_cli.commands.retry import archive_queue
from migrator_cli.errors import CliError
from migrator_cli.ops import ArchiveDue, retry_archive


class FakeLedger:
    def __init__(self, refuse=None):
        self.refuse, self.rearmed = dict(refuse or {}), []

    def rearm_archive(self, asset_id, now):
        if asset_id in self.refuse:
            return WriteResult(False, self.refuse[asset_id])
        self.rearmed.append(asset_id)
        return WriteResult(True, {"asset_id": f"#archive#{asset_id}", "state": "pending"})


def _sent(into):
    def send(due):
        into.extend(due)
        return len(into), []

    return send


@pytest.mark.parametrize(
    ("item", "refused", "rearmed", "why"),
    [
        ({"asset_id": "a", "state": "ready", "archive_state": "failed"}, None, True, None),
        # The copy moved between the scan and the write (a pass took it, or it was re-armed already).
        (
            {"asset_id": "b", "state": "ready", "archive_state": "failed"},
            {"state": "copying"},
            False,
            "its archive copy is copying now",
        ),
        ({"asset_id": "c", "state": "ready", "archive_state": "failed"}, {}, False, "no archive copy"),
        # Named by --id but not failed: left alone, and said why.
        ({"asset_id": "d", "state": "ready", "archive_state": "archived"}, None, False, "its archive copy is archived"),
        ({"asset_id": "e", "state": "processing"}, None, False, "no archive copy yet"),
        ({"asset_id": "f"}, None, False, "unknown to the ledger"),
    ],
)
def test_retry_archive_rearms_only_failed_copies_and_sends_each_once(item, refused, rearmed, why):
    ledger, sent = FakeLedger({} if refused is None else {item["asset_id"]: refused}), []
    summary = retry_archive(ledger, [item], _sent(sent), clock=lambda: 5.0)
    assert (ledger.rearmed, sent) == (([item["asset_id"]], [ArchiveDue(item["asset_id"])]) if rearmed else ([], []))
    assert (summary.listed, summary.rearmed, summary.sent) == (1, int(rearmed), int(rearmed))
    assert summary.moved_on == ([] if why is None else [(item["asset_id"], why)])


def test_retry_archive_dry_run_writes_and_sends_nothing_but_counts_what_it_would():
    ledger, sent = FakeLedger(), []
    items = [{"asset_id": "a", "state": "ready", "archive_state": "failed"}, {"asset_id": "b", "state": "ready"}]
    summary = retry_archive(ledger, items, _sent(sent), dry_run=True)
    assert ledger.rearmed == [] and sent == [] and (summary.rearmed, summary.sent) == (1, 0)


@pytest.mark.parametrize(
    ("outputs", "answer"),
    [
        ({"ArchiveBucketName": "owner-masters", "ArchiveQueueUrl": "https://sqs/archive"}, "https://sqs/archive"),
        ({}, "keeps no archive: deploy it with the ArchiveBucket parameter"),
        ({"ArchiveBucketName": "", "ArchiveQueueUrl": "https://sqs/archive"}, "with the ArchiveBucket parameter"),
        ({"ArchiveBucketName": "owner-masters"}, "has no output ArchiveQueueUrl"),
    ],
)
def test_retry_archive_needs_a_stack_that_keeps_an_archive_and_says_how_to_turn_it_on(outputs, answer):
    if answer.startswith("https://"):
        assert archive_queue(outputs, "s") == answer
    else:
        with pytest.raises(CliError, match=answer):
            archive_queue(outputs, "s")


def test_retry_archive_finds_failed_copies_by_one_filtered_scan_of_the_assets():
    from migrator.dynamo import to_item
    from migrator_cli.report import scan_ledger

    asked = []

    class Dynamo:
        def scan(self, **kwargs):
            asked.append(kwargs)
            return {"Items": []}

    assert list(scan_ledger(Dynamo(), "ledger", archive_states=["failed"])) == []
    first = asked[0]
    assert first["FilterExpression"] == "NOT begins_with(asset_id, :control) AND #archive_state IN (:a0)"
    assert first["ExpressionAttributeNames"] == {"#archive_state": "archive_state"}
    assert to_item(first["ExpressionAttributeValues"]) == {":control": "#", ":a0": "failed"}


# --- verify --archive -----------------------------------------------------------------------------------------

ARCHIVED = {
    "asset_id": "lib/a",
    "state": "ready",
    "archive_state": "archived",
    "archive_key": "masters/lib/a/original.mp4",
    "archive_bytes": Decimal("1000"),
    "archive_sha256": "abc=-2",
}


def _held(size=1000, sha256="abc=-2"):
    from migrator.archive.store import Archived

    return Archived(size, sha256, "DEEP_ARCHIVE")


@pytest.mark.parametrize(
    ("item", "held", "status", "kinds"),
    [
        (ARCHIVED, _held(), "verified", []),
        (ARCHIVED, _held(size=999), "differs", ["size"]),
        (ARCHIVED, _held(sha256="abd=-2"), "differs", ["checksum"]),
        (ARCHIVED, _held(size=1, sha256="abd=-2"), "differs", ["size", "checksum"]),
        # A composite of another number of parts is another checksum, whatever its digest.
        (ARCHIVED, _held(sha256="abc=-3"), "differs", ["checksum"]),
        (ARCHIVED, _held(sha256=None), "differs", ["no_checksum"]),
        (ARCHIVED, None, "missing", ["missing"]),
        (ARCHIVED, "AccessDenied (HTTP 403)", "unchecked", ["unchecked"]),
        ({**ARCHIVED, "archive_sha256": None}, _held(), "differs", ["unrecorded"]),
        ({**ARCHIVED, "archive_bytes": "1000"}, _held(), "differs", ["unrecorded"]),
        ({**ARCHIVED, "archive_key": ""}, _held(), "differs", ["unrecorded"]),
    ],
)
def test_an_archived_object_stands_only_where_s3_holds_the_ledgers_size_and_checksum(item, held, status, kinds):
    from migrator_cli.verify_archive import check

    verdict = check(item, held)
    assert verdict.status == status and [f.kind for f in verdict.findings] == kinds
    assert verdict.size == (1000 if status == "verified" else 0)
    for finding in verdict.findings:
        doc = json.loads(json.dumps(finding.as_dict()))
        assert doc["type"] == "archive_mismatch" and doc["id"] == "lib/a" and doc["detail"]


@pytest.mark.parametrize(
    ("counts", "line", "ok"),
    [
        ({"assets": 3, "verified": 3, "bytes": 5_300_000_000}, "archived 3 of 3, 5.3 GB, checksums verified", True),
        ({"assets": 1200, "verified": 1000, "bytes": 999}, "archived 1000 of 1200, 999 B, checksums verified", True),
        ({"assets": 0}, "archived 0 of 0, 0 B, checksums verified", True),
        (
            {"assets": 5, "verified": 3, "bytes": 3_000, "differ": 2},
            "archived 3 of 5, 3.0 KB, 2 checksums differ",
            False,
        ),
        ({"assets": 5, "verified": 4, "bytes": 4, "missing": 1}, "archived 4 of 5, 4 B, 1 missing", False),
        (
            {"assets": 9, "verified": 4, "differ": 1, "missing": 2, "unchecked": 1},
            "archived 4 of 9, 0 B, 1 checksums differ, 2 missing, 1 unchecked",
            False,
        ),
    ],
)
def test_the_summary_line_says_checksums_verified_only_when_every_checked_object_matches(counts, line, ok):
    from migrator_cli.verify_archive import ArchiveReport

    report = ArchiveReport(**counts)
    assert (report.line(), report.ok) == (line, ok)
    assert report.as_dict()["line"] == line and report.lines()[0] == line


def test_verify_archive_heads_each_archived_object_and_lists_ready_assets_not_archived():
    from botocore.exceptions import ClientError
    from migrator_cli.verify_archive import run_archive_verify

    def archived(asset_id, size, **more):
        return {**ARCHIVED, "asset_id": asset_id, "archive_key": f"m/{asset_id}", "archive_bytes": size, **more}

    items = [
        archived("ok1", 10),
        archived("ok2", 20),
        archived("bad", 30),
        archived("gone", 40),
        archived("denied", 50),
        {"asset_id": "failed", "state": "ready", "archive_state": "failed", "archive_error": "HTTP 404: gone"},
        {"asset_id": "never", "state": "ready"},
        {"asset_id": "busy", "state": "processing", "archive_state": "copying"},
        # Owed no copy: the provider refused it, or has not taken it yet.
        {"asset_id": "refused", "state": "rejected"},
        {"asset_id": "queued", "state": "pending"},
    ]
    asked = []

    def held(key):
        asked.append(key)
        if key == "m/gone":
            return None
        if key == "m/denied":
            raise ClientError({"Error": {"Code": "AccessDenied"}, "ResponseMetadata": {"HTTPStatusCode": 403}}, "Head")
        return _held(size=31 if key == "m/bad" else int(key[-1]) * 10, sha256="abc=-2")

    found = []
    report = run_archive_verify(items, held, workers=3, rate=0, on_finding=found.append)
    assert sorted(asked) == ["m/bad", "m/denied", "m/gone", "m/ok1", "m/ok2"]  # the archived ones alone
    assert (report.assets, report.verified, report.bytes) == (8, 2, 30)
    assert (report.differ, report.missing, report.unchecked, report.ok) == (1, 1, 1, False)
    assert report.line() == "archived 2 of 8, 30 B, 1 checksums differ, 1 missing, 1 unchecked"
    assert dict(report.not_archived) == {"failed": 1, "none": 1, "copying": 1} and report.ready_not_archived == 2
    assert dict(report.not_owed) == {"rejected": 1, "pending": 1}
    assert "  owed no copy (the provider has not taken them): 1 rejected, 1 pending" in report.lines()
    by_id = {doc["id"]: doc for doc in found}
    assert by_id["failed"] == {
        "type": "not_archived",
        "id": "failed",
        "state": "ready",
        "archive_state": "failed",
        "archive_error": "HTTP 404: gone",
    }
    assert by_id["never"]["archive_state"] is None and "busy" not in by_id  # still in flight: not listed
    assert not {"refused", "queued"} & set(by_id)
    assert by_id["bad"]["kind"] == "size" and by_id["gone"]["kind"] == "missing"
    assert by_id["denied"]["detail"] == "no answer from S3 for m/denied: AccessDenied (HTTP 403)"


def test_verify_archive_on_a_stack_without_the_archive_is_one_clear_line(tmp_path, capsys):
    from migrator_cli.main import main

    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"LedgerTableName": "ledger", "StatsTableName": "stats"}))
    assert main(["verify", "--archive", "--outputs", str(outputs)]) == 2
    assert "keeps no archive: deploy it with the ArchiveBucket parameter" in capsys.readouterr().err
    assert main(["retry", "--archive", "--outputs", str(outputs)]) == 2
    assert "keeps no archive: deploy it with the ArchiveBucket parameter" in capsys.readouterr().err
