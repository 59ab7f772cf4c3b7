"""The fate table: every ledger state a message can meet x every provider outcome.

For each row the claim's condition decides whether the provider is called at all; if
it is, `decide` says where the asset moves and what happens to the message.
"""

import random

import pytest
from migrator.fate import (
    FateKind,
    MoveKind,
    Outcome,
    OutcomeKind,
    claim_eligible,
    classify_failure,
    decide,
    excerpt,
    fate_of_refused_claim,
    plan_after_claim,
    transport_failure,
)

NOW = 1_800_000_000.0
MAX = 5

# The ledger as a message can find it. None: an id the ledger has never seen.
ITEMS = {
    "new": None,
    "pending": {"state": "pending"},
    "pending_throttled_future": {"state": "pending", "retry_after": NOW + 30},
    "pending_throttled_past": {"state": "pending", "retry_after": NOW - 1},
    "inventoried": {"state": "inventoried", "duration_s": 12},
    "uploading_live_lease": {"state": "uploading", "lease_until": NOW + 40, "attempts": 1},
    "uploading_expired_lease": {"state": "uploading", "lease_until": NOW - 1, "attempts": 1},
    "processing": {"state": "processing", "remote_id": "v1"},
    "ready": {"state": "ready", "remote_id": "v1"},
    "failed_retry_future": {"state": "failed", "retry_after": NOW + 60, "attempts": 2},
    "failed_retry_past": {"state": "failed", "retry_after": NOW - 1, "attempts": 2},
    "failed_for_good": {"state": "failed", "attempts": 5},
    "rejected": {"state": "rejected"},
}

OUTCOMES = {
    "created": Outcome(OutcomeKind.CREATED, remote_id="vid_1"),
    "throttled": Outcome(OutcomeKind.THROTTLED, retry_after=12, error="HTTP 429"),
    "throttled_no_header": Outcome(OutcomeKind.THROTTLED, error="HTTP 429"),
    "transient": Outcome(OutcomeKind.TRANSIENT, error="HTTP 502"),
    "timeout": transport_failure("timeout"),
    "rejected": Outcome(OutcomeKind.REJECTED, error="HTTP 400: bad input"),
    "conflict_unresolved": Outcome(OutcomeKind.NOT_FOUND),
}

# Rows where the claim is refused: (fate kind, delay bounds) — the provider is never called.
REFUSED = {
    "pending_throttled_future": (FateKind.LATER, 30, 31),
    "uploading_live_lease": (FateKind.LATER, 41, 43),
    "processing": (FateKind.FINISHED, 0, 0),
    "ready": (FateKind.FINISHED, 0, 0),
    "failed_retry_future": (FateKind.LATER, 60, 61),
    "failed_for_good": (FateKind.FINISHED, 0, 0),
    "rejected": (FateKind.FINISHED, 0, 0),
}

# What each outcome does after a granted claim: (move, fate kind, metric).
AFTER_CLAIM = {
    "created": (MoveKind.TO_PROCESSING, FateKind.FINISHED, "Uploaded"),
    "throttled": (MoveKind.RELEASE_THROTTLED, FateKind.LATER, "Throttled"),
    "throttled_no_header": (MoveKind.RELEASE_THROTTLED, FateKind.LATER, "Throttled"),
    "transient": (MoveKind.TO_FAILED, FateKind.LATER, "Retried"),
    "timeout": (MoveKind.TO_FAILED, FateKind.LATER, "Retried"),
    "rejected": (MoveKind.TO_REJECTED, FateKind.FINISHED, "Rejected"),
    "conflict_unresolved": (MoveKind.TO_FAILED, FateKind.LATER, "Retried"),
}


@pytest.mark.parametrize("item_name", list(ITEMS))
@pytest.mark.parametrize("outcome_name", list(OUTCOMES))
def test_fate_table(item_name, outcome_name):
    item = ITEMS[item_name]
    rng = random.Random(7)
    if not claim_eligible(item, NOW):
        kind, low, high = REFUSED[item_name]
        fate = fate_of_refused_claim(item, NOW, rng)
        assert fate.kind is kind
        assert low <= fate.delay_s <= high
        return
    assert item_name not in REFUSED
    attempts = int((item or {}).get("attempts", 0)) + 1
    decision = decide(OUTCOMES[outcome_name], attempts, MAX, NOW, rng)
    move, kind, metric = AFTER_CLAIM[outcome_name]
    assert (decision.move, decision.fate.kind, decision.metric) == (move, kind, metric)
    if move is MoveKind.TO_PROCESSING:
        assert decision.remote_id == "vid_1"
    if move is MoveKind.RELEASE_THROTTLED:
        # the message is not back before the provider said; it is pacing, not the message's fault
        told = OUTCOMES[outcome_name].retry_after or 5
        assert decision.fate.delay_s >= told and decision.fate.pacing
        assert decision.retry_at == pytest.approx(NOW + decision.fate.delay_s)
    if move is MoveKind.TO_FAILED:
        assert decision.retry_at is not None and decision.retry_at > NOW
        assert decision.error


def test_every_state_is_covered_by_the_table():
    from migrator.states import State

    assert {s.value for s in State} <= {(i or {"state": "pending"})["state"] for i in ITEMS.values()}


def test_eligibility_matches_the_table():
    eligible = {name for name, item in ITEMS.items() if claim_eligible(item, NOW)}
    assert eligible == {
        "new",
        "pending",
        "pending_throttled_past",
        "inventoried",
        "uploading_expired_lease",
        "failed_retry_past",
    }


@pytest.mark.parametrize("outcome_name", ["transient", "timeout", "conflict_unresolved"])
def test_attempt_budget_ends_in_failed_for_good(outcome_name):
    decision = decide(OUTCOMES[outcome_name], MAX, MAX, NOW, random.Random(1))
    assert decision.move is MoveKind.TO_FAILED
    assert decision.retry_at is None  # no retry time: failed for good
    assert decision.fate.kind is FateKind.FINISHED
    assert decision.metric == "Failed"


def test_throttle_never_spends_the_budget():
    decision = decide(OUTCOMES["throttled"], MAX, MAX, NOW, random.Random(1))
    assert decision.move is MoveKind.RELEASE_THROTTLED
    assert decision.fate.kind is FateKind.LATER


def test_plan_after_claim():
    assert plan_after_claim(None, 1, MAX).lookup_first is False
    assert plan_after_claim({"state": "pending", "attempts": 0}, 1, MAX).lookup_first is False
    # an earlier try (crash, timeout, 5xx) may have created the video: look first
    assert plan_after_claim(ITEMS["uploading_expired_lease"], 2, MAX).lookup_first is True
    assert plan_after_claim(ITEMS["failed_retry_past"], 3, MAX).lookup_first is True
    assert plan_after_claim({"state": "uploading", "attempts": 5}, 6, MAX).give_up is True
    assert plan_after_claim({"state": "uploading", "attempts": 4}, 5, MAX).give_up is False


def test_an_operator_retry_grants_a_fresh_budget_but_still_looks_up_first():
    spent = {"state": "failed", "attempts": MAX, "retry_base": MAX}
    plan = plan_after_claim(spent, MAX + 1, MAX)
    assert plan.give_up is False
    assert plan.lookup_first is True  # an earlier try may have created the video
    assert plan_after_claim(spent, 2 * MAX + 1, MAX).give_up is True


def test_after_an_operator_retry_the_asset_gets_max_attempts_real_tries():
    """The budget decide() charges is the one since the retry, not the lifetime count."""
    retried = {"state": "failed", "attempts": MAX, "retry_base": MAX}
    fates = []
    for attempts in range(MAX + 1, 2 * MAX + 1):  # the claims after the retry
        plan = plan_after_claim(retried, attempts, MAX)
        decision = decide(OUTCOMES["transient"], plan.spent, MAX, NOW, random.Random(1))
        fates.append(decision.fate.kind)
    assert fates == [FateKind.LATER] * (MAX - 1) + [FateKind.FINISHED]


@pytest.mark.parametrize(
    ("status", "text", "retry_after", "kind"),
    [
        (429, "", 3.0, OutcomeKind.THROTTLED),
        (503, "", 2.0, OutcomeKind.THROTTLED),  # it says when to come back: pacing
        (503, "", None, OutcomeKind.TRANSIENT),  # it does not: this one request failed
        (500, "", None, OutcomeKind.TRANSIENT),
        (502, "", None, OutcomeKind.TRANSIENT),
        (401, "", None, OutcomeKind.TRANSIENT),  # our token, not the asset's fault
        (403, "", None, OutcomeKind.TRANSIENT),
        (408, "", None, OutcomeKind.TRANSIENT),
        (400, '{"error": "bad input"}', None, OutcomeKind.REJECTED),
        (422, "unprocessable", None, OutcomeKind.REJECTED),
        (404, "", None, OutcomeKind.REJECTED),
        (302, "", None, OutcomeKind.TRANSIENT),
    ],
)
def test_classify_failure(status, text, retry_after, kind):
    outcome = classify_failure(status, text, retry_after)
    assert outcome.kind is kind
    assert outcome.retry_after == (retry_after if kind is OutcomeKind.THROTTLED else None)


def test_rejection_keeps_a_short_excerpt():
    outcome = classify_failure(400, "x" * 5000 + "\n\nsecret-ish tail", None)
    assert outcome.kind is OutcomeKind.REJECTED
    assert len(outcome.error) < 320
    assert "\n" not in outcome.error


def test_excerpt():
    assert excerpt(None) == ""
    assert excerpt("a\n b\t c") == "a b c"


@pytest.mark.parametrize(
    ("status", "retry_after", "scope"),
    [
        (429, None, "rate"),  # the provider paces the fleet
        (429, 2.0, "rate"),
        (503, 2.0, "request"),  # about this request: only it waits
        (503, None, None),  # not a throttle: this request failed
        (500, None, None),
    ],
)
def test_a_throttle_says_what_it_is_about(status, retry_after, scope):
    assert classify_failure(status, "", retry_after).scope == scope
