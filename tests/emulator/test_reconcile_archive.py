"""Reconcile's archive lane against the emulator (issue 43): a copy owed to the archive whose message was lost (the
uploader's send failed, or the worker died with it) is sent again, once per quiet period; a copy archived, or
failed for good, leaves the lane and costs reconcile nothing; a pass's claim moves the silence to its lease's end."""

from __future__ import annotations

import time

import pytest
from migrator.archive.decide import ArchiveState
from migrator.ledger import ArchiveEnd, Ledger
from migrator.ledger.archive import archive_item_id
from migrator.providers import build
from migrator.reconcile import Reconciler

from tests.conftest import unique
from tests.emulator.test_reconcile import LIMITS
from tests.emulator.test_reconcile_tracks import bodies, run_ahead

pytestmark = pytest.mark.emulator


def test_a_lost_archive_message_is_sent_again_once_and_finished_copies_leave_the_lane(
    aws, table, queue, tracks_queue, sim
):
    ledger, now = Ledger(table, aws("dynamodb")), time.time()
    lost, archived, failed, held = (unique(n) for n in ("lost", "archived", "failed", "held"))
    for asset_id in (lost, archived, failed, held):
        assert ledger.owe_archive(asset_id, now).won
    assert not ledger.owe_archive(lost, now + 1).won  # owed once: a second create's message changes nothing
    for asset_id, end in (
        (archived, ArchiveEnd(ArchiveState.ARCHIVED, fields={"sha256": "x-1", "bytes": 1})),
        (failed, ArchiveEnd(ArchiveState.FAILED, "the source no longer serves the file (HTTP 404)")),
    ):
        token = unique("t")
        assert ledger.claim_archive(asset_id, token, now, now + 60).item["due_lane"].startswith("archive#")
        assert ledger.finish_archive(asset_id, token, end, now).won
        assert "due_lane" not in ledger.archive(asset_id)
    # A pass holds `held` for two hours: silence counts from its lease's end, not from when it was owed.
    claimed = ledger.claim_archive(held, unique("t"), now, now + 7200)
    assert float(claimed.item["due_at"]) == pytest.approx(now + 7200, abs=0.01)

    def run(ahead_s: float):  # any queue stands in for the archive's: what it holds is what reconcile sent
        return run_ahead(ledger, aws, queue, sim, ahead_s, archive_queue_url=tracks_queue)

    assert run(3600).archive_resent == 1
    assert bodies(aws("sqs"), tracks_queue) == [{"id": lost}]
    assert run(3600).archive_resent == 0  # the marker moved its due time: not again this quiet period
    assert run(7300).archive_resent == 1  # a whole quiet period later, still not copied: again
    assert bodies(aws("sqs"), tracks_queue) == [{"id": lost}]
    assert int(ledger.get(archive_item_id(lost))["heals"]) == 2


def test_a_stack_without_an_archive_reads_no_archive_lane(aws, table, queue, sim):
    ledger = Ledger(table, aws("dynamodb"))
    summary = Reconciler(ledger, aws("sqs"), queue, build("generic", sim.url, lambda: sim.config.token), LIMITS).run()
    assert summary.lanes == 48 and summary.archive_resent == 0
