"""The archive's ledger item (issue 43) against the emulator's DynamoDB: one pass at a time, parts recorded once
and in order whatever two passes race, a restart that begins a new upload, and the end fenced by the claim."""

from __future__ import annotations

import time

import pytest
from migrator.archive.decide import ArchiveState
from migrator.ledger import ArchiveClaim, ArchiveEnd, ArchiveRefused, Ledger

pytestmark = pytest.mark.emulator


@pytest.fixture
def ledger(aws, table):
    return Ledger(table, aws("dynamodb"))


def test_one_pass_at_a_time_and_a_dead_pass_is_taken_over_after_its_lease(ledger):
    now = time.time()
    first = ledger.claim_archive("a", "t1", now, now + 60)
    assert isinstance(first, ArchiveClaim) and first.item["state"] == "pending" and first.item["passes"] == 1
    assert isinstance(ledger.claim_archive("a", "t2", now + 1, now + 61), ArchiveRefused)  # held
    taken = ledger.claim_archive("a", "t3", now + 61, now + 121)  # the first pass died: its lease ran out
    assert isinstance(taken, ArchiveClaim) and taken.item["passes"] == 2
    assert not ledger.record_upload("a", "t1", "m/a/original.mp4", "up1", 10, 4, now + 62).won  # fenced out


def test_parts_are_recorded_once_each_in_order_whatever_two_passes_race(ledger):
    now = time.time()
    ledger.claim_archive("b", "tok", now, now + 60)
    assert ledger.record_upload("b", "tok", "m/b/original.mp4", "up1", 10, 4, now).won
    assert ledger.record_part("b", "tok", "up1", 1, "c1", "e1", 4, now).won
    assert not ledger.record_part("b", "tok", "up1", 1, "c1", "e1", 4, now).won  # the same part again: refused
    assert not ledger.record_part("b", "tok", "up1", 3, "c3", "e3", 2, now).won  # out of order: refused
    assert not ledger.record_part("b", "tok", "up-old", 2, "c2", "e2", 4, now).won  # another upload's part
    done = ledger.record_part("b", "tok", "up1", 2, "c2", "e2", 4, now)
    assert done.won and done.current["parts"] == [["c1", "e1"], ["c2", "e2"]] and done.current["bytes_done"] == 8


def test_a_restart_begins_a_new_upload_and_the_end_is_fenced_by_the_claim(ledger):
    now = time.time()
    ledger.claim_archive("c", "tok", now, now + 60)
    ledger.record_upload("c", "tok", "m/c/original.mp4", "up1", 10, 4, now)
    ledger.record_part("c", "tok", "up1", 1, "c1", "e1", 4, now)
    again = ledger.record_upload("c", "tok", "m/c/original.mp4", "up2", 12, 4, now)  # the file changed: copy again
    assert again.current["parts"] == [] and again.current["copies"] == 2 and again.current["size"] == 12
    assert not ledger.finish_archive("c", "other", ArchiveEnd(ArchiveState.ARCHIVED), now).won
    end = ArchiveEnd(ArchiveState.ARCHIVED, fields={"sha256": "x-3", "bytes": 12})
    done = ledger.finish_archive("c", "tok", end, now)
    assert done.won and done.current["state"] == "archived" and done.current["sha256"] == "x-3"
    assert "lease_token" not in done.current and "parts" not in done.current
    assert isinstance(ledger.claim_archive("c", "later", now + 100, now + 160), ArchiveRefused)  # archived stays


def test_a_failed_copy_is_taken_again_only_at_its_retry_time_and_never_once_failed_for_good(ledger):
    now = time.time()
    ledger.claim_archive("d", "tok", now, now + 60)
    ledger.finish_archive("d", "tok", ArchiveEnd(ArchiveState.FAILED, "HTTP 503", retry_after=now + 30), now)
    assert isinstance(ledger.claim_archive("d", "early", now + 10, now + 70), ArchiveRefused)
    later = ledger.claim_archive("d", "late", now + 31, now + 91)
    assert isinstance(later, ArchiveClaim)
    ledger.finish_archive("d", "late", ArchiveEnd(ArchiveState.FAILED, "HTTP 404: gone"), now + 32)
    refused = ledger.claim_archive("d", "never", now + 10_000, now + 10_060)
    assert isinstance(refused, ArchiveRefused) and refused.item["error"] == "HTTP 404: gone"


def _failed_for_good(ledger: Ledger, asset_id: str, now: float, copies: int = 2) -> None:
    """An asset whose copy failed for good after `copies` copies, as the archiver leaves it (and notes it)."""
    from migrator.messages import AssetMessage

    ledger.claim(AssetMessage(asset_id, f"https://videos.example.com/{asset_id}.mp4"), now, now + 60, "up")
    ledger.claim_archive(asset_id, "tok", now, now + 60)
    for n in range(copies):
        ledger.record_upload(asset_id, "tok", f"m/{asset_id}/original.mp4", f"up{n}", 10, 4, now)
    ledger.count_mint(asset_id, "tok", now)
    ledger.finish_archive(asset_id, "tok", ArchiveEnd(ArchiveState.FAILED, "HTTP 404: gone"), now)
    ledger.note_archive(asset_id, {"archive_state": "failed", "archive_error": "HTTP 404: gone"}, now)


def test_a_copy_failed_for_good_is_rearmed_once_with_a_fresh_budget_and_the_asset_says_pending(ledger):
    now = time.time()
    _failed_for_good(ledger, "e", now)
    rearmed = ledger.rearm_archive("e", now + 5)
    assert rearmed.won and rearmed.current["state"] == "pending" and rearmed.current["copies"] == 0
    assert rearmed.current["mints"] == 0 and rearmed.current["failures"] == 0
    assert not {"error", "retry_after", "lease_token", "lease_until"} & set(rearmed.current)
    assert float(rearmed.current["due_at"]) == pytest.approx(
        now + 5, abs=0.01
    )  # in reconcile's archive lane: a lost message is sent again
    asset = ledger.get("e")
    assert asset["archive_state"] == "pending" and "archive_error" not in asset
    assert not ledger.rearm_archive("e", now + 6).won  # pending already: nothing to re-arm
    taken = ledger.claim_archive("e", "again", now + 7, now + 67)  # the worker takes it at once
    assert isinstance(taken, ArchiveClaim) and taken.item["copies"] == 0


def test_only_a_failed_copy_no_live_pass_holds_is_rearmed_and_a_pass_that_began_is_not_overwritten(ledger):
    now = time.time()
    ledger.claim_archive("f", "tok", now, now + 60)  # copying, its lease live
    ledger.record_upload("f", "tok", "m/f/original.mp4", "up1", 10, 4, now)
    refused = ledger.rearm_archive("f", now + 1)
    assert not refused.won and refused.current["state"] == "copying"
    archived = ArchiveEnd(ArchiveState.ARCHIVED, fields={"sha256": "x-1", "bytes": 10})
    ledger.finish_archive("f", "tok", archived, now + 2)
    assert not ledger.rearm_archive("f", now + 3).won  # archived stays archived
    assert not ledger.rearm_archive("no-such-asset", now).won  # no copy owed at all
    # A failed item with a lease still live (a pass writing its end) waits for it.
    _failed_for_good(ledger, "g", now)
    ledger.client.update_item(
        TableName=ledger.table,
        Key={"asset_id": {"S": "#archive#g"}},
        UpdateExpression="SET lease_until = :l",
        ExpressionAttributeValues={":l": {"N": str(now + 100)}},
    )
    assert not ledger.rearm_archive("g", now + 10).won and ledger.rearm_archive("g", now + 101).won
    # The asset's item is moved back only where it still says failed: a pass that noted copying keeps it.
    _failed_for_good(ledger, "h", now)
    ledger.note_archive("h", {"archive_state": "copying"}, now + 1)
    assert ledger.rearm_archive("h", now + 2).won and ledger.get("h")["archive_state"] == "copying"


def test_verify_archive_reads_the_ledgers_record_back_from_the_bucket(aws, ledger):
    """`migrator verify --archive` end to end on the emulator: the ledger scanned, each archived original's
    HeadObject (with its checksum) through the archiver's adapter, held against what the asset's item says."""
    import uuid

    from migrator.archive.plan import MiB, sha256_b64
    from migrator.archive.store import ArchiveStore
    from migrator.messages import AssetMessage
    from migrator_cli.report import scan_ledger
    from migrator_cli.verify_archive import run_archive_verify

    s3 = aws("s3")
    store = ArchiveStore(f"archive-{uuid.uuid4().hex[:10]}", s3, storage_class="DEEP_ARCHIVE")
    s3.create_bucket(Bucket=store.bucket)
    parts = [b"a" * (5 * MiB), b"b" * 100]
    key = "masters/good/original.mp4"
    upload = store.start(key, "video/mp4")
    sent = [store.send_part(key, upload, n, body, sha256_b64(body)) for n, body in enumerate(parts, 1)]
    checksum = store.complete(key, upload, sent)
    now = time.time()
    for asset_id, noted in (
        ("good", {"archive_key": key, "archive_sha256": checksum}),
        ("lied", {"archive_key": key, "archive_sha256": "AAAA-2"}),  # a checksum S3 does not hold
        ("gone", {"archive_key": "masters/gone/original.mp4", "archive_sha256": checksum}),
    ):
        ledger.claim(AssetMessage(asset_id, f"https://videos.example.com/{asset_id}.mp4"), now, now + 60, "up")
        size = sum(map(len, parts))
        ledger.note_archive(asset_id, {"archive_state": "archived", "archive_bytes": size, **noted}, now)
    ledger.claim(AssetMessage("waiting", "https://videos.example.com/w.mp4"), now, now + 60, "up")
    found: list[dict] = []
    report = run_archive_verify(
        scan_ledger(ledger.client, ledger.table), store.held, workers=2, rate=0, on_finding=found.append
    )
    assert (report.assets, report.verified, report.differ, report.missing) == (3, 1, 1, 1)
    assert report.bytes == sum(map(len, parts)) and report.not_owed == {"uploading": 1}  # not taken: owes none
    assert {(doc["id"], doc["kind"]) for doc in found} == {("lied", "checksum"), ("gone", "missing")}
