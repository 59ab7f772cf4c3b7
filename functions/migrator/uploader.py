"""The uploader Lambda: one SQS record per asset, each given an explicit fate.

For every record: outside the working hours (`hours.py`), send it back to the queue until they open; else
validate it (poison is recorded and deleted), claim the asset in the
ledger (a refused claim says why without a second read), look it up at the provider if
an earlier try may have created it, wait for a cluster-wide create slot, create it
idempotently, then move the ledger with a write fenced by the claim's lease token.
A record whose fate is "later" gets ChangeMessageVisibility to its delay and is
reported as a batch item failure; one bad record never fails the rest of its batch.

This module is the batch and the record's flow up to its claim; the parts after it are in
`upload`: the fleet's pace within the invocation (`upload.pace`), the provider's lookup and
create (`upload.create`), the source's hand-off (`upload.handoff`) and the ledger's moves
(`upload.moves`); with ArchiveFirst, the original archived before the create (`upload.archive_first`).
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import boto3

from . import fate as F
from .chaos import Chaos
from .dynamo import MARSHALLING_ERRORS
from .fate import Fate, FateKind
from .hours import Hours
from .ledger import Claimed, Ledger, Refused
from .link_life import need_of
from .messages import AssetMessage, Poison, parse_message
from .pacer import Pacer
from .presign import S3Presigner
from .providers import CredentialsError, Provider, from_settings
from .retry import deferral_floor, visibility_for
from .settings import Settings, load
from .sources import Resolution, Resolver
from .states import State
from .tracks import needs_tracks_worker, tracks_unarmed
from .upload.attempt import Attempt, back_to, paced_receives
from .upload.create import FindOrCreate
from .upload.handoff import SourceHandOff
from .upload.moves import TRACKS_DELAY_S, LedgerMoves
from .upload.pace import INLINE_WAIT_MAX_S, Pace
from .upload.telemetry import MetricUnit, logger, metrics

__all__ = ["INLINE_WAIT_MAX_S", "LEASE_MARGIN_S", "TRACKS_DELAY_S", "Uploader", "build", "count_calls", "handler"]

# Lease = the invocation's remaining time plus this margin: a holder cannot outlive it.
LEASE_MARGIN_S = 5.0


@dataclass
class Uploader:
    settings: Settings
    ledger: Ledger
    pacer: Pacer
    provider: Provider
    sqs: Any  # a boto3 SQS client (boto3 ships no types)
    presign: Callable[..., str]
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = random.Random()  # noqa: RUF009 - one shared generator is fine
    inline_wait_max_s: float = INLINE_WAIT_MAX_S
    chaos: Chaos = field(default_factory=Chaos)  # benchmarks only: a crash right after a create
    # source_url -> what the provider is handed (presigned s3://, a platform's fresh link); None: the
    # presigner alone, and no platform's references resolvable.
    sources: Callable[..., Resolution] | None = None
    hours: Hours | None = None  # the working hours (hours.py); None: always open

    # The parts after the claim, made of the fields as they are when asked for (none keeps state of
    # its own, and a field set after construction is the one they use).

    @property
    def pace(self) -> Pace:
        return Pace(self.pacer, self.settings, self.clock, self.sleep, self.rng, self.inline_wait_max_s, self.hours)

    @property
    def moves(self) -> LedgerMoves:
        return LedgerMoves(self.settings, self.ledger, self.provider, self.sqs, self.clock, self.rng)

    @property
    def find_or_create(self) -> FindOrCreate:
        hand_off = SourceHandOff(
            self.settings, self.ledger, self.presign, self.sources, self.clock, self.rng, need_of(self.provider)
        )
        return FindOrCreate(self.provider, self.pace, hand_off, self.moves, self.chaos, self.clock)

    # --- the batch -----------------------------------------------------------------------

    def handle_batch(self, event: dict, remaining_s: Callable[[], float]) -> dict:
        received_at = self.clock()  # the ESM received these moments ago
        failures = []
        for record in event.get("Records", []):
            message_id = record.get("messageId", "")
            beyond = self.pace.outside_hours() or self.pace.beyond_reach(self.clock() + remaining_s())
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
        # A poster time alone is the tracks worker's where the target picks the frame after the create (api.video);
        # read leniently: the uploader's tests stand in for a provider with a few of its methods.
        later = bool(getattr(self.provider, "poster_time_later", False))
        claim = self.ledger.claim(msg, now, deadline + LEASE_MARGIN_S, token, needs_tracks_worker(msg, later))
        if isinstance(claim, Refused):
            fate = F.fate_of_refused_claim(claim.item, now, self.rng)
            logger.info("claim refused: %s", fate.reason, extra={"fate": fate.kind.value})
            if fate.kind is FateKind.FINISHED:
                metrics.add_metric(name="Duplicates", unit=MetricUnit.Count, value=1)
                if tracks_unarmed(claim.item, later):  # settled before this message's write: it owes the tracks
                    ready = claim.item.get("state") == State.READY.value
                    self.moves.send_tracks(msg.asset_id, 0 if ready else TRACKS_DELAY_S)
            return replace(fate, paced_receives=paced_receives(claim.item))
        if claim.source_url != msg.source_url:
            logger.warning("message source_url differs from the ledger's; the ledger wins")
        return replace(self._upload(msg, claim, deadline), paced_receives=paced_receives(claim.previous))

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
            return self.find_or_create(msg, attempt, plan.lookup_first, spent, deadline)
        except CredentialsError as exc:
            # Our configuration (or the secret store's weather), not the asset's fault: hold it
            # without spending its budget, loudly.
            now = self.clock()
            error = f"provider credentials unusable: {exc}"
            logger.error(error)
            metrics.add_metric(name="ProviderMisconfigured", unit=MetricUnit.Count, value=1)
            self.ledger.release_throttled(msg.asset_id, claim.token, back_to(claim), now + 60, error, now, count=False)
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
            self.ledger.give_back(msg.asset_id, claim.token, back_to(claim), now + delay, error, now)
            return Fate.later(delay, error)

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
        hours=Hours(settings.working_hours, settings.table_name, dynamodb),
    )


_uploader: Uploader | None = None  # built once per warm container: HTTP pool and clients reused


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event, context):
    global _uploader
    if _uploader is None:
        _uploader = build()
    return _uploader.handle_batch(event, lambda: context.get_remaining_time_in_millis() / 1000)
