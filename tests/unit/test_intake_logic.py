"""Intake's pure decision: forward, queue or drop a valid message, from what the ledger had."""

import pytest
from migrator.intake import IntakeKind, intake_fate

NOW = 1_000_000.0


@pytest.mark.parametrize(
    ("known", "kind", "words"),
    [
        (None, IntakeKind.FORWARD, "new asset"),
        ({"state": "pending"}, IntakeKind.QUEUE, "staged"),  # load --stage, now enqueued
        ({"state": "inventoried"}, IntakeKind.QUEUE, "staged"),  # probed, now enqueued
        ({"state": "pending", "due_lane": "queued#3"}, IntakeKind.DROP, "on the way"),  # loaded twice
        # deferred: its own message comes back at its retry time; once that is past, this one may take it
        ({"state": "pending", "due_lane": "heal#3", "retry_after": NOW + 9}, IntakeKind.DROP, "retry time"),
        ({"state": "failed", "due_lane": "heal#1", "retry_after": NOW + 9}, IntakeKind.DROP, "retry time"),
        ({"state": "failed", "due_lane": "heal#1", "retry_after": NOW - 9}, IntakeKind.FORWARD, "claimable"),
        ({"state": "failed"}, IntakeKind.DROP, "migrator retry"),  # failed for good: the operator decides
        ({"state": "uploading", "lease_token": "t", "lease_until": NOW + 60}, IntakeKind.DROP, "a worker holds it"),
        # its worker died (the lease ran out): this message is how it gets claimed again
        ({"state": "uploading", "lease_token": "t", "lease_until": NOW - 60}, IntakeKind.FORWARD, "claimable"),
        ({"state": "processing", "due_lane": "poll#0"}, IntakeKind.DROP, "already processing"),
        ({"state": "ready"}, IntakeKind.DROP, "already ready"),
        ({"state": "rejected"}, IntakeKind.DROP, "already rejected"),
        ({"state": "???"}, IntakeKind.DROP, "not one intake knows"),
    ],
)
def test_what_intake_does_with_a_message_for_what_the_ledger_holds(known, kind, words):
    fate = intake_fate(known, NOW)
    assert fate.kind is kind and words in fate.reason


def test_a_redelivered_message_whose_forward_may_have_failed_is_forwarded_again():
    queued = {"state": "pending", "due_lane": "queued#3"}
    assert intake_fate(queued, NOW, redelivered=True).kind is IntakeKind.FORWARD
    assert intake_fate(queued, NOW).kind is IntakeKind.DROP  # a second load: one message is enough
    claimed = {"state": "uploading", "lease_token": "t", "lease_until": NOW + 60, "due_lane": "heal#3"}
    assert intake_fate(claimed, NOW, redelivered=True).kind is IntakeKind.DROP  # the first copy arrived
