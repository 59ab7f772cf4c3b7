"""The ledger's move for what one claim's try came to: use `LedgerMoves` to write an outcome (or a hold) to the
asset's record, fenced by the claim, and to choose the message's fate from it."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .. import fate as F
from ..fate import Decision, Fate, FateKind, MoveKind, Outcome, OutcomeKind
from ..ledger import Claimed, Ledger, WriteResult
from ..messages import AssetMessage, id_message
from ..pacer import Hold
from ..providers import Provider
from ..settings import Settings
from ..settle import settle_reported
from ..tracks import item_needs_tracks_worker, needs_tracks_worker, tracks_message
from .attempt import Attempt, back_to
from .telemetry import MetricUnit, logger, metrics

# A video's tracks are worked on once it is ready: its tracks message waits a little for the provider.
TRACKS_DELAY_S = 15


@dataclass
class LedgerMoves:
    settings: Settings
    ledger: Ledger
    provider: Provider
    sqs: Any  # a boto3 SQS client (boto3 ships no types)
    clock: Callable[[], float] = time.time
    rng: random.Random = random.Random()  # noqa: RUF009 - one shared generator is fine

    def apply(self, msg: AssetMessage, attempt: Attempt, outcome: Outcome, spent: int, waited_out: int = 0) -> Fate:
        """Move the ledger and choose the message's fate for `outcome`. `waited_out`: 429s this
        claim met and waited out before it, counted as throttles with the final write."""
        now, claim = self.clock(), attempt.claim
        decision: Decision = F.decide(outcome, spent, self.settings.max_attempts, now, self.rng)
        result = self._write(msg, attempt, outcome, decision, now, waited_out)
        if decision.move is MoveKind.TO_PROCESSING:
            self._tracks_due(msg, claim)  # won or lost to a settle, the video exists: its tracks can go
            if attempt.archived_url is None:  # (ArchiveFirst created it from the copy, made already)
                self.archive_due(msg.asset_id)  # and its original is copied while the source's links work
        metrics.add_metric(name=decision.metric, unit=MetricUnit.Count, value=1)
        logger.info(
            "%s: %s",
            decision.move.value,
            decision.fate.reason,
            extra={"remote_id": decision.remote_id, "attempts": claim.attempts, "fate": decision.fate.kind.value},
        )
        if not result.won:
            # Someone with a newer lease, or a webhook, got there first; the ledger has
            # the truth and the newer holder owns the message's future.
            return Fate.finished("lost the lease; newer holder owns the asset")
        return decision.fate

    def _write(
        self, msg: AssetMessage, attempt: Attempt, outcome: Outcome, decision: Decision, now: float, waited_out: int
    ) -> WriteResult:
        """The fenced write `decision` calls for."""
        asset_id, claim = msg.asset_id, attempt.claim
        token = claim.token
        if decision.move is MoveKind.TO_PROCESSING:
            return self.ledger.mark_processing(
                asset_id,
                token,
                _given(decision.remote_id, "video"),
                now,
                throttles=waited_out,
                notes=outcome.notes,
                playback=self.provider.playback(attempt.asset_ref(msg)),
                privacy=attempt.narrowed_privacy,
            )
        if decision.move is MoveKind.RELEASE_THROTTLED:
            return self.ledger.release_throttled(
                asset_id,
                token,
                back_to(claim),
                _given(decision.retry_at, "retry time"),
                _given(decision.error, "reason"),
                now,
                lookup_from=attempt.lookup_from,
                wait_ended=attempt.wait_ended,
            )
        if decision.move is MoveKind.TO_REJECTED:
            return self.ledger.mark_rejected(
                asset_id, token, _given(decision.error, "reason"), now, throttles=waited_out
            )
        return self.ledger.mark_failed(
            asset_id,
            token,
            _given(decision.error, "reason"),
            decision.retry_at,
            now,
            throttles=waited_out,
            lookup_from=attempt.lookup_from,
            wait_ended=attempt.wait_ended,
        )

    def release_held(self, msg: AssetMessage, attempt: Attempt, slot: Hold) -> Fate:
        """Give the claim back while the fleet is held longer than this record can wait: the message
        comes back after the hold (spread), without spending an attempt."""
        now = self.clock()
        # The working hours' hold may last days: its messages come back over its spread, not a fifth of it.
        scale = 0.0 if slot.kind == "window" else 0.2 * (slot.until - now)
        delay = slot.until - now + self.rng.uniform(0.0, max(1.0, scale, slot.spread))
        logger.info("held for %.1f s: %s", delay, slot.reason)
        return self._hold(msg, attempt, now, delay, f"held: {slot.reason}")

    def hold_for_archive(self, msg: AssetMessage, attempt: Attempt, delay_s: float, reason: str) -> Fate:
        """ArchiveFirst: give the claim back while the original is archived (`upload.archive_first`), without
        spending an attempt, as a hold; the message comes back in `delay_s` (the heal lane sends it again if lost)."""
        metrics.add_metric(name="HeldForArchive", unit=MetricUnit.Count, value=1)
        logger.info("held for the archive, back in %.0f s: %s", delay_s, reason)
        return self._hold(msg, attempt, self.clock(), delay_s, reason)

    def _hold(self, msg: AssetMessage, attempt: Attempt, now: float, delay_s: float, reason: str) -> Fate:
        """The claim given back as a hold (no attempt spent), its message back in `delay_s`."""
        claim = attempt.claim
        self.ledger.release_throttled(
            msg.asset_id, claim.token, back_to(claim), now + delay_s, reason, now, count=False,
            lookup_from=attempt.lookup_from,
        )  # fmt: skip
        return Fate.later(delay_s, reason, pacing=True)

    def fail_for_good(self, msg: AssetMessage, attempt: Attempt, error: str) -> Fate:
        """The asset failed for good with `error` before any create (the operator's retry decides)."""
        self.ledger.mark_failed(msg.asset_id, attempt.claim.token, error, None, self.clock())
        metrics.add_metric(name="Failed", unit=MetricUnit.Count, value=1)
        logger.info("failed: %s", error)
        return Fate.finished(error)

    def adopt(self, msg: AssetMessage, attempt: Attempt, found: Outcome, spent: int) -> Fate:
        """Take over a video an earlier try made. Its webhook may have come and gone while the
        ledger did not yet know the video (a provider whose events name only the video cannot
        be matched then), so a video the provider has already finished is settled now, from
        one read, rather than waiting for reconcile's poll."""
        if found.kind is OutcomeKind.CREATED:  # what the earlier create carried: its answer never came
            found = replace(found, notes=self.provider.create_notes(attempt.asset_ref(msg), attempt.claim.source_url))
        fate = self.apply(msg, attempt, found, spent)
        if found.kind is OutcomeKind.CREATED and fate.kind is FateKind.FINISHED:
            answer = self.provider.poll(msg.asset_id, found.remote_id)
            if answer.video is not None and answer.video.target is not None:
                settled = settle_reported(
                    self.ledger,
                    msg.asset_id,
                    answer.video,
                    found.remote_id,
                    self.clock(),
                    self.settings.drift_tolerance_s,
                )
                if settled.won:
                    logger.info("adopted video already %s", answer.video.target.value)
                    metrics.add_metric(name="SettledOnAdoption", unit=MetricUnit.Count, value=1)
        return fate

    def _tracks_due(self, msg: AssetMessage, claim: Claimed) -> None:
        """Tell the tracks worker about a video with caption tracks or extras (its lane in the ledger is the
        backstop if this message is lost: reconcile sends it again)."""
        # A poster time alone is the tracks worker's where the target picks the frame after the create (api.video);
        # read leniently: the uploader's tests stand in for a provider with a few of its methods.
        later = bool(getattr(self.provider, "poster_time_later", False))
        if needs_tracks_worker(msg, later) or item_needs_tracks_worker(claim.previous, later):
            self.send_tracks(msg.asset_id, TRACKS_DELAY_S)

    def send_tracks(self, asset_id: str, delay_s: int = 0) -> None:
        """The tracks worker's message for `asset_id`, `delay_s` from now (nothing on a stack without tracks)."""
        if not self.settings.tracks_queue_url:
            return
        try:
            self.sqs.send_message(
                QueueUrl=self.settings.tracks_queue_url, MessageBody=tracks_message(asset_id), DelaySeconds=delay_s
            )
        except Exception as exc:
            logger.warning("could not send the tracks message (reconcile will): %s", type(exc).__name__)

    def archive_due(self, asset_id: str) -> None:
        """Tell the archive worker to copy the asset's original (nothing on a stack without an archive). The copy
        is owed in the ledger first (`owe_archive` files it in reconcile's archive lane), so a lost message is
        sent again. A copy owed already (an earlier try's create, ArchiveFirst's) was told then: nothing is sent."""
        if not self.settings.archive_queue_url:
            return
        try:
            if self.ledger.owe_archive(asset_id, self.clock()).won:
                self.sqs.send_message(QueueUrl=self.settings.archive_queue_url, MessageBody=id_message(asset_id))
        except Exception as exc:
            logger.warning("could not send the archive message (reconcile will): %s", type(exc).__name__)


def _given[T](value: T | None, what: str) -> T:
    """What fate.decide() always sets for the move at hand (the video of a create, the reason and retry time
    of a throttle, the reason of a failure): a decision without it is a bug, raised before any write."""
    if value is None:
        raise ValueError(f"the decision for this move names no {what}")
    return value
