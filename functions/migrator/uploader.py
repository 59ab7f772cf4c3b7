"""The uploader Lambda: one SQS record per asset, each given an explicit fate.

For every record: validate it (poison is recorded and deleted), claim the asset in the
ledger (a refused claim says why without a second read), look it up at the provider if
an earlier try may have created it, wait for a cluster-wide create slot, create it
idempotently, then move the ledger with a write fenced by the claim's lease token.
A record whose fate is "later" gets ChangeMessageVisibility to its delay and is
reported as a batch item failure; one bad record never fails the rest of its batch.
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import boto3
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from . import fate as F
from .chaos import Chaos
from .dynamo import MARSHALLING_ERRORS
from .fate import Decision, Fate, FateKind, MoveKind, Outcome, OutcomeKind
from .ledger import Claimed, Ledger, NotResendable, Refused, message_of
from .messages import AssetMessage, Poison, message_doc, parse_message
from .pacer import CREATE, LOOKUP, Go, Hold, Pacer
from .presign import S3Presigner
from .providers import AssetRef, CredentialsError, Provider, from_settings
from .retry import DEFAULT_THROTTLE_S, deferral_floor, visibility_for
from .settings import Settings, load
from .settle import settle_reported
from .sources import Resolution, ResolutionKind, Resolver
from .states import State
from .tracks import tracks_message

logger = Logger(service="uploader")
metrics = Metrics(namespace="VideoMigration", service="uploader")

# Lease = the invocation's remaining time plus this margin: a holder cannot outlive it.
LEASE_MARGIN_S = 5.0
# A hold or a Retry-After up to this long is waited out inside the invocation (when its
# time allows) instead of sending the message back through the queue.
INLINE_WAIT_MAX_S = 15.0
# A video's tracks are worked on once it is ready: its tracks message waits a little for the provider.
TRACKS_DELAY_S = 15


@dataclass
class Uploader:
    settings: Settings
    ledger: Ledger
    pacer: Pacer
    provider: Provider
    sqs: object
    presign: Callable[[str], str]
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = random.Random()  # noqa: RUF009 - one shared generator is fine
    inline_wait_max_s: float = INLINE_WAIT_MAX_S
    chaos: Chaos = field(default_factory=Chaos)  # benchmarks only: a crash right after a create
    # source_url -> what the provider is handed (presigned s3://, a platform's fresh link); None: the
    # presigner alone, and no platform's references resolvable.
    sources: Callable[[str], Resolution] | None = None

    # --- the batch -----------------------------------------------------------------------

    def handle_batch(self, event: dict, remaining_s: Callable[[], float]) -> dict:
        received_at = self.clock()  # the ESM received these moments ago
        failures = []
        for record in event.get("Records", []):
            message_id = record.get("messageId", "")
            beyond = self._beyond_reach(self.clock() + remaining_s())
            if remaining_s() < self.settings.record_budget_s:
                fate = Fate.later(0, "not enough invocation time left to start")
                logger.info(fate.reason, extra={"message_id": message_id})
            elif beyond is not None:
                fate = beyond
            else:
                try:
                    fate = self.process(record, self.clock() + remaining_s())
                except MARSHALLING_ERRORS as exc:
                    # Data no store or header can carry: retrying it would fail the same way for days.
                    fate = self._unstorable(record, exc)
                except Exception:  # one bad record never fails the rest of its batch
                    logger.exception("unexpected error; the record will be retried")
                    metrics.add_metric(name="Errors", unit=MetricUnit.Count, value=1)
                    fate = Fate.later(self.rng.uniform(5, 15), "unexpected error")
                finally:
                    logger.set_correlation_id(None)
            if fate.kind is FateKind.LATER:
                self._defer(record, fate, received_at)
                failures.append({"itemIdentifier": message_id})
        rate = (self.pacer.last_seen or {}).get("rate")
        if rate is not None:  # the pace in use, for the dashboard
            metrics.add_metric(name="PaceRate", unit=MetricUnit.CountPerSecond, value=float(rate))
        return {"batchItemFailures": failures}

    def _beyond_reach(self, deadline: float) -> Fate | None:
        """A record's fate when the pacer's queue (as this worker last saw it, no write) is beyond
        what this invocation can wait: deferred as pacing, before a claim, until it would be in reach."""
        now = self.clock()
        slot = self.pacer.known_hold(now, deadline - now - self.settings.work_s)
        if slot is None or slot.kind != "queue":
            return None
        delay = slot.until - now + self.rng.uniform(0.0, max(1.0, slot.spread))
        return Fate.later(delay, f"held: {slot.reason}", pacing=True)

    def _defer(self, record: dict, fate: Fate, received_at: float) -> None:
        receives = str(record.get("attributes", {}).get("ApproximateReceiveCount", "1"))
        receives_n = int(receives) if receives.isdigit() else 1
        # The floor slows a message that keeps failing; the provider's pacing is not that.
        floor = 0.0 if fate.pacing else deferral_floor(receives_n - fate.paced_receives)
        seconds = visibility_for(max(fate.delay_s, floor), received_at, self.clock())
        try:
            self.sqs.change_message_visibility(
                QueueUrl=self.settings.queue_url, ReceiptHandle=record["receiptHandle"], VisibilityTimeout=seconds
            )
        except Exception as exc:  # the queue's own visibility timeout still brings it back
            logger.warning("could not set the retry delay: %s", type(exc).__name__)

    # --- one record ------------------------------------------------------------------------

    def process(self, record: dict, deadline: float) -> Fate:
        parsed = parse_message(record.get("body", ""))
        if isinstance(parsed, Poison):
            return self._poison(parsed, record)
        msg = parsed
        logger.set_correlation_id(msg.asset_id)
        now = self.clock()
        token = uuid.uuid4().hex
        claim = self.ledger.claim(msg, now, deadline + LEASE_MARGIN_S, token)
        if isinstance(claim, Refused):
            fate = F.fate_of_refused_claim(claim.item, now, self.rng)
            logger.info("claim refused: %s", fate.reason, extra={"fate": fate.kind.value})
            if fate.kind is FateKind.FINISHED:
                metrics.add_metric(name="Duplicates", unit=MetricUnit.Count, value=1)
            return replace(fate, paced_receives=_paced(claim.item))
        if claim.source_url != msg.source_url:
            logger.warning("message source_url differs from the ledger's; the ledger wins")
        return replace(self._upload(msg, claim, deadline), paced_receives=_paced(claim.previous))

    def _upload(self, msg: AssetMessage, claim: Claimed, deadline: float) -> Fate:
        plan = F.plan_after_claim(claim.previous, claim.attempts, self.settings.max_attempts)
        spent = plan.spent
        if plan.give_up:
            error = f"attempt budget of {self.settings.max_attempts} spent (earlier tries never finished)"
            self.ledger.mark_failed(msg.asset_id, claim.token, error, None, self.clock())
            metrics.add_metric(name="Failed", unit=MetricUnit.Count, value=1)
            return Fate.finished(error)

        attempt = Attempt(claim)
        try:
            return self._find_or_create(msg, attempt, plan.lookup_first, spent, deadline)
        except CredentialsError as exc:
            # Our configuration (or the secret store's weather), not the asset's fault: hold it
            # without spending its budget, loudly.
            now = self.clock()
            error = f"provider credentials unusable: {exc}"
            logger.error(error)
            metrics.add_metric(name="ProviderMisconfigured", unit=MetricUnit.Count, value=1)
            self.ledger.release_throttled(msg.asset_id, claim.token, _back_to(claim), now + 60, error, now, count=False)
            return Fate.later(60 + self.rng.uniform(0, 15), error)
        except Exception as exc:
            metrics.add_metric(name="Errors", unit=MetricUnit.Count, value=1)
            if attempt.create_sent:
                # The create may have happened: the lease runs out and the next claim looks first.
                logger.exception("unexpected error after the create was sent; the next claim looks it up first")
                return Fate.later(self.rng.uniform(5, 15), "unexpected error after the create was sent")
            # Nothing can exist at the provider yet: the attempt is given back and the lease dropped.
            logger.exception("unexpected error before any create was sent; the attempt is given back")
            now, delay = self.clock(), self.rng.uniform(5, 15)
            error = f"worker error before any create was sent: {type(exc).__name__}"
            self.ledger.give_back(msg.asset_id, claim.token, _back_to(claim), now + delay, error, now)
            return Fate.later(delay, error)

    def _find_or_create(
        self, msg: AssetMessage, attempt: Attempt, lookup_first: bool, spent: int, deadline: float
    ) -> Fate:
        claim = attempt.claim
        problem = self.provider.source_problem(claim.source_url)
        if problem:  # never fetchable by this provider: refused before any request, with the fix
            return self._apply(msg, attempt, Outcome(OutcomeKind.REJECTED, error=problem), spent)
        if lookup_first:
            found = self._find(msg.asset_id, claim, deadline)
            if isinstance(found, Hold):
                return self._release_held(msg, attempt, found)
            if found.kind is not OutcomeKind.NOT_FOUND:
                return self._adopt(msg, attempt, found, spent)
            attempt.searched = True  # nothing exists from the tries before this claim
        handed = self._hand_off(msg, attempt, spent)  # resolved now, just before the create, never earlier
        if isinstance(handed, Fate):
            return handed
        waited_out = 0  # 429s met and waited out inside this invocation
        while True:
            slot = self._slot(deadline, CREATE)
            if isinstance(slot, Hold):
                if self._wait_if_short(slot.until, deadline, slot.spread):
                    continue  # a short hold costs a sleep, not a trip through the queue
                return self._release_held(msg, attempt, slot)
            source = handed
            attempt.create_sent = True  # from here on, a crash may leave a video behind
            outcome = self.provider.create(attempt.asset_ref(msg), source)
            if outcome.kind is OutcomeKind.CREATED:
                self.chaos.after_create()
            self._observe(outcome)
            if outcome.kind is OutcomeKind.THROTTLED:
                asked = outcome.retry_after if outcome.retry_after is not None else DEFAULT_THROTTLE_S
                if self._wait_if_short(self.clock() + asked, deadline):
                    waited_out += 1
                    continue
                outcome = replace(outcome, retry_after=asked)
            if outcome.kind is OutcomeKind.CONFLICT:
                found = self._find(msg.asset_id, claim, deadline)
                if isinstance(found, Hold):
                    return self._release_held(msg, attempt, found)
                return self._adopt(msg, attempt, found, spent)
            return self._apply(msg, attempt, outcome, spent, waited_out)

    def _hand_off(self, msg: AssetMessage, attempt: Attempt, spent: int) -> str | Fate:
        """The URL to hand the provider, made now (an s3:// source presigned, a source reference resolved by
        its platform, so no link expires in the queue); or the fate of an asset whose source cannot be had
        now: rejected with the inventory's reason, deferred without spending its attempt (a file the source
        is preparing, its rate limit, its credentials), or failed like any request that did not answer."""
        claim = attempt.claim
        resolver = self.sources or Resolver(_no_source_credentials, self.presign)
        resolution = resolver(claim.source_url)
        kind, reason = resolution.kind, resolution.reason or ""
        if kind is ResolutionKind.READY and resolution.url:
            return resolution.url
        if kind in (ResolutionKind.READY, ResolutionKind.UNFETCHABLE):
            return self._apply(msg, attempt, Outcome(OutcomeKind.REJECTED, error=reason or "no file link"), spent)
        if kind is ResolutionKind.TRANSIENT:
            return self._apply(msg, attempt, Outcome(OutcomeKind.TRANSIENT, error=f"source: {reason}"), spent)
        if kind is ResolutionKind.PREPARING:
            return self._wait_for_source(msg, claim, resolution)
        if kind is ResolutionKind.DENIED:  # our configuration: loud, and the asset's budget untouched
            logger.error("source credentials unusable: %s", reason)
            metrics.add_metric(name="SourceMisconfigured", unit=MetricUnit.Count, value=1)
        delay = (resolution.retry_after if resolution.retry_after is not None else 60.0) + self.rng.uniform(0, 5)
        now = self.clock()
        self.ledger.release_throttled(
            msg.asset_id, claim.token, _back_to(claim), now + delay, f"source: {reason}", now, count=False
        )
        return Fate.later(delay, f"source: {reason}", pacing=True)

    def _wait_for_source(self, msg: AssetMessage, claim: Claimed, resolution: Resolution) -> Fate:
        """A file the source is preparing: the message comes back when it may be ready, without spending an
        attempt, until the wait has lasted SourcePrepareTimeoutSeconds; then the asset fails with the reason."""
        now, reason = self.clock(), resolution.reason or "the source is preparing the file"
        since = (claim.previous or {}).get("preparing_since")
        limit = self.settings.source_prepare_timeout_s
        waited = now - float(since) if since is not None else 0.0
        if waited >= limit:
            error = (
                f"the source's file was not ready after {waited:.0f} s"
                f" (SourcePrepareTimeoutSeconds {limit:.0f}): {reason}"
            )
            self.ledger.fail_preparing(msg.asset_id, claim.token, error, now)
            metrics.add_metric(name="SourceNeverReady", unit=MetricUnit.Count, value=1)
            return Fate.finished(error)
        delay = min(resolution.retry_after or 30.0, limit - waited + 1.0) + self.rng.uniform(0, 3)
        self.ledger.release_preparing(msg.asset_id, claim.token, _back_to(claim), now + delay, reason, now)
        metrics.add_metric(name="SourcePreparing", unit=MetricUnit.Count, value=1)
        logger.info("source preparing; back in %.0f s: %s", delay, reason)
        return Fate.later(delay, reason, pacing=True)

    def _slot(self, deadline: float, purpose: str) -> Go | Hold:
        """A slot of the fleet's pace for a create (or a lookup, a poll), waited out in place: one
        this record could not wait for and still finish in its invocation is not taken; a far
        one is confirmed when it is due (a hold or a cut may have moved it)."""
        now = self.clock()
        slot = self.pacer.reserve(now, deadline - now - self.settings.work_s, purpose)
        while isinstance(slot, Go):
            wait = slot.at - self.clock()
            if slot.at + self.settings.work_s > deadline:
                return Hold(slot.at, "the slot moved past this invocation's time", "queue")
            if wait > 0:
                self.sleep(wait)
            if not slot.confirm:
                return slot
            slot = self.pacer.confirm(slot, self.clock())
        return slot

    def _observe(self, outcome: Outcome) -> None:
        """What one create's answer tells the pacer (`Pacer.observe`: the stated limit, a throttle
        by its scope, an outcome for the breaker), and the metrics on it."""
        throttled = outcome.kind is OutcomeKind.THROTTLED
        # 100 or 0 per attempt: the metric's average is the share of attempts that met a 429 (its alarm).
        metrics.add_metric(name="ThrottledPercent", unit=MetricUnit.Percent, value=100 if throttled else 0)
        if throttled:
            metrics.add_metric(name="ProviderThrottled", unit=MetricUnit.Count, value=1)
        self.pacer.observe(outcome, self.clock())

    def _wait_if_short(self, until: float, deadline: float, spread: float = 0.0) -> bool:
        """Sleep until `until` when that is short and leaves this record its time budget
        (`_inline_wait`); False when it is not."""
        wait = self._inline_wait(until, deadline, spread)
        if wait is None:
            return False
        if wait > 0:
            self.sleep(wait)
        return True

    def _inline_wait(self, until: float, deadline: float, spread: float = 0.0) -> float | None:
        """How long to sleep for `until` in place (plus a little jitter, so the fleet does not
        resume in one burst; a fleet held together comes back over `spread`); None when that
        is not short or would not leave this record its time budget."""
        now = self.clock()
        wait = until - now + self.rng.uniform(0.0, 0.05 + 0.02 * max(0.0, until - now) + spread)
        if wait > self.inline_wait_max_s or now + wait + self.settings.record_budget_s > deadline:
            return None
        return wait

    def _release_held(self, msg: AssetMessage, attempt: Attempt, slot: Hold) -> Fate:
        now, claim = self.clock(), attempt.claim
        delay = slot.until - now + self.rng.uniform(0.0, max(1.0, 0.2 * (slot.until - now), slot.spread))
        self.ledger.release_throttled(
            msg.asset_id,
            claim.token,
            _back_to(claim),
            now + delay,
            f"held: {slot.reason}",
            now,
            count=False,
            lookup_from=attempt.lookup_from,
        )
        logger.info("held for %.1f s: %s", delay, slot.reason)
        return Fate.later(delay, f"held: {slot.reason}", pacing=True)

    def _adopt(self, msg: AssetMessage, attempt: Attempt, found: Outcome, spent: int) -> Fate:
        """Take over a video an earlier try made. Its webhook may have come and gone while the
        ledger did not yet know the video (a provider whose events name only the video cannot
        be matched then), so a video the provider has already finished is settled now, from
        one read, rather than waiting for reconcile's poll."""
        if found.kind is OutcomeKind.CREATED:  # what the earlier create carried: its answer never came
            found = replace(found, notes=self.provider.create_notes(attempt.asset_ref(msg), attempt.claim.source_url))
        fate = self._apply(msg, attempt, found, spent)
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

    def _find(self, asset_id: str, claim: Claimed, deadline: float) -> Outcome | Hold:
        """What an earlier try may have created, looked for among videos made since the earliest try
        that may have made one (`lookup_from`: the first claim, moved on only by a lookup that completed
        and found nothing), so a throttled or interrupted lookup in between never narrows the search.

        A lookup is paced like a create (one slot of the fleet's pace, however many pages it reads),
        and what it is answered tells the pacer the same (a 429 holds the fleet); a Hold when the
        fleet is held for longer than this record can wait."""
        while isinstance(slot := self._slot(deadline, LOOKUP), Hold):
            if not self._wait_if_short(slot.until, deadline, slot.spread):
                return slot
        previous = claim.previous or {}
        earlier = previous.get("lookup_from", previous.get("claimed_at"))
        found = self.provider.find(asset_id, float(earlier) if earlier is not None else None)
        self.pacer.observe(found, self.clock())
        return found

    def _apply(self, msg: AssetMessage, attempt: Attempt, outcome: Outcome, spent: int, waited_out: int = 0) -> Fate:
        """Move the ledger and choose the message's fate for `outcome`. `waited_out`: 429s this
        claim met and waited out before it, counted as throttles with the final write."""
        now, claim = self.clock(), attempt.claim
        decision: Decision = F.decide(outcome, spent, self.settings.max_attempts, now, self.rng)
        asset_id, token = msg.asset_id, claim.token
        if decision.move is MoveKind.TO_PROCESSING:
            result = self.ledger.mark_processing(
                asset_id,
                token,
                decision.remote_id,
                now,
                throttles=waited_out,
                notes=outcome.notes,
                playback=self.provider.playback(attempt.asset_ref(msg)),
            )
        elif decision.move is MoveKind.RELEASE_THROTTLED:
            result = self.ledger.release_throttled(
                asset_id,
                token,
                _back_to(claim),
                decision.retry_at,
                decision.error,
                now,
                lookup_from=attempt.lookup_from,
            )
        elif decision.move is MoveKind.TO_REJECTED:
            result = self.ledger.mark_rejected(asset_id, token, decision.error, now, throttles=waited_out)
        else:
            result = self.ledger.mark_failed(
                asset_id,
                token,
                decision.error,
                decision.retry_at,
                now,
                throttles=waited_out,
                lookup_from=attempt.lookup_from,
            )
        if decision.move is MoveKind.TO_PROCESSING:
            self._tracks_due(msg, claim)  # won or lost to a settle, the video exists: its tracks can go
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

    def _tracks_due(self, msg: AssetMessage, claim: Claimed) -> None:
        """Tell the tracks worker about a video with caption tracks (its lane in the ledger is the backstop
        if this message is lost: reconcile sends it again)."""
        if not self.settings.tracks_queue_url or not (msg.tracks or (claim.previous or {}).get("tracks")):
            return
        try:
            self.sqs.send_message(
                QueueUrl=self.settings.tracks_queue_url,
                MessageBody=tracks_message(msg.asset_id),
                DelaySeconds=TRACKS_DELAY_S,
            )
        except Exception as exc:
            logger.warning("could not send the tracks message (reconcile will): %s", type(exc).__name__)

    def _poison(self, poison: Poison, record: dict) -> Fate:
        metrics.add_metric(name="Poison", unit=MetricUnit.Count, value=1)
        logger.warning(
            "poison message: %s",
            poison.reason,
            extra={"message_id": record.get("messageId"), "asset_id": poison.asset_id},
        )
        if poison.asset_id:
            source = _loose_source(record.get("body"))
            try:
                self.ledger.record_poison(poison.asset_id, poison.reason, source, self.clock())
            except MARSHALLING_ERRORS:
                logger.warning("the poison could not be recorded either; the log line above is its record")
        return Fate.poison(poison.reason)

    def _unstorable(self, record: dict, exc: BaseException) -> Fate:
        reason = f"message cannot be stored or sent: {type(exc).__name__}"
        logger.warning("poison message: %s", reason, extra={"message_id": record.get("messageId")})
        metrics.add_metric(name="Poison", unit=MetricUnit.Count, value=1)
        return Fate.poison(reason)


@dataclass
class Attempt:
    """One claim's try: whether a create went out (after which a crash may have left a video),
    and whether a lookup completed and found nothing (which moves the next lookup's bound on)."""

    claim: Claimed
    create_sent: bool = False
    searched: bool = False
    _asset: AssetRef | None = None

    def asset_ref(self, msg: AssetMessage) -> AssetRef:
        """What the create carries of the asset (made once a claim: see `_asset_ref`)."""
        if self._asset is None:
            self._asset = _asset_ref(msg, self.claim)
        return self._asset

    @property
    def lookup_from(self) -> float | None:
        """Where the next lookup may start: this claim's time, once nothing older can exist."""
        return self.claim.claimed_at if self.searched and self.claim.claimed_at else None


def _asset_ref(msg: AssetMessage, claim: Claimed) -> AssetRef:
    """What the create needs: the id, a title, the create generation (moved on by a retry of a
    rejected asset, so its key differs from the errored try's), and what the video is as the
    ledger keeps it once this claim is written: the first value it saw of each field wins over a
    later message's, and a field it had none of takes the message's (as the claim just stored it),
    so a privacy a later row adds is never lost to the one before the claim."""
    previous = claim.previous or {}
    generation = previous.get("generation")
    carried = {"asset_id": msg.asset_id, **{k: v for k, v in message_doc(msg).items() if k != "id"}}
    try:
        details = message_of({**carried, **previous}) if previous.get("source_url") else msg
    except NotResendable:
        details = msg
    return AssetRef(
        msg.asset_id,
        details.title or msg.title,
        int(generation) if generation is not None else 0,
        details,
    )


def _no_source_credentials(platform: str):
    raise CredentialsError(f"no source credentials are configured for {platform} (SourceTokenSecretName)")


def _paced(item: dict | None) -> int:
    """Receives an asset's message spent on the provider's pacing (429s, holds), not on failures."""
    item = item or {}
    return int(item.get("throttles") or 0) + int(item.get("holds") or 0)


def _back_to(claim: Claimed) -> State:
    """Where a released claim returns: inventoried when the duration is known."""
    previous = claim.previous or {}
    return State.INVENTORIED if previous.get("duration_s") is not None else State.PENDING


def _loose_source(body: object) -> object:
    try:
        doc = json.loads(body) if isinstance(body, str) else None
    except ValueError:
        return None
    return doc.get("source_url") if isinstance(doc, dict) else None


def count_calls(client, metric: str):
    """Emit one `metric` per AWS API call the client makes: requests per asset is a
    cost figure operators (and bench/drain.py) read from the metrics."""
    client.meta.events.register(
        "before-call", lambda **_: metrics.add_metric(name=metric, unit=MetricUnit.Count, value=1)
    )
    return client


def build(settings: Settings | None = None) -> Uploader:
    settings = settings or load()
    dynamodb = count_calls(boto3.client("dynamodb"), "DynamoDBCalls")
    provider = from_settings(settings)
    presign = S3Presigner(settings.presign_expiry_s)
    return Uploader(
        settings=settings,
        ledger=Ledger(settings.table_name, dynamodb),
        pacer=Pacer.configured(settings, dynamodb, provider),
        provider=provider,
        sqs=count_calls(boto3.client("sqs"), "SQSCalls"),
        presign=presign,
        sources=Resolver.from_settings(settings, presign),
        chaos=Chaos.from_env(),
    )


_uploader: Uploader | None = None  # built once per warm container: HTTP pool and clients reused


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event, context):
    global _uploader
    if _uploader is None:
        _uploader = build()
    return _uploader.handle_batch(event, lambda: context.get_remaining_time_in_millis() / 1000)
