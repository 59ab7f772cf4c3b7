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
