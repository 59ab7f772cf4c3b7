"""The intake Lambda: every message that reaches the stack is recorded in the ledger, unpaced, then forwarded.

Users load an inventory by pushing one message per asset to the intake queue (the
`QueueUrl` output). The paced work queue behind it drains at the provider's rate, which
for a large library can take longer than a queue keeps a message (14 days at most): a
message that waited that long unreceived would vanish with no trace. So intake first
gives each asset a durable ledger item (pending, in reconcile's `queued` lane: a message
the queue may drop is sent again from the ledger), then forwards the message to the work
queue. Status counts every loaded asset from the first minute.

Each record's fate is explicit and pure (`intake_fate`): forward it (a new asset, or a
staged one whose message this is), drop it (the ledger shows its message is already on
its way, or there is nothing to do), or poison (recorded, dropped). A failure to record or
forward fails only that record, which SQS delivers again; recording is idempotent.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from .dynamo import MARSHALLING_ERRORS
from .fate import claim_eligible
from .ledger import Ledger
from .messages import AssetMessage, Poison, encode_message, narrowest_privacy, parse_message
from .states import State

logger = Logger(service="intake")
metrics = Metrics(namespace="VideoMigration", service="intake")

SEND_BATCH = 10  # SendMessageBatch's maximum
WRITERS = 8  # ledger writes in flight at once within one invocation


class IntakeKind(StrEnum):
    FORWARD = "forward"  # send it on to the work queue
    QUEUE = "queue"  # a staged asset: mark it queued, then send it on
    DROP = "drop"  # nothing to send: the ledger says why


@dataclass(frozen=True)
class IntakeFate:
    kind: IntakeKind
    reason: str


def intake_fate(known: Mapping | None, now: float, redelivered: bool = False) -> IntakeFate:
    """What to do with a valid message, from the item the ledger already had (None: it is new).
    `redelivered`: SQS brings this message back, so an earlier forward of it may have failed.

    Only plain duplicates are dropped here; whatever might need this message goes on, and the
    uploader's claim decides (a second copy in the queue is harmless: one claim wins)."""
    if known is None:
        return IntakeFate(IntakeKind.FORWARD, "new asset")
    state = known.get("state")
    if state in (State.PROCESSING.value, State.READY.value, State.REJECTED.value):
        return IntakeFate(IntakeKind.DROP, f"duplicate: asset already {state}")
    if state == State.FAILED.value and known.get("retry_after") is None:
        return IntakeFate(IntakeKind.DROP, "failed for good: use migrator retry to try it again")
    queued = str(known.get("due_lane") or "").startswith("queued#")
    if queued and state in (State.PENDING.value, State.INVENTORIED.value):
        if redelivered:  # recorded by this message's first delivery, whose forward may have failed
            return IntakeFate(IntakeKind.FORWARD, "recorded before, forwarded again")
        return IntakeFate(IntakeKind.DROP, f"already {state} with its message on the way")
    if state in (State.PENDING.value, State.INVENTORIED.value) and not known.get("due_lane"):
        if not known.get("lease_token"):
            return IntakeFate(IntakeKind.QUEUE, f"{state} and staged: this message sends it")
    if state in {s.value for s in State} and claim_eligible(known, now):
        return IntakeFate(IntakeKind.FORWARD, f"{state} and claimable: this message takes it")
    if state == State.UPLOADING.value:
        return IntakeFate(IntakeKind.DROP, "duplicate: a worker holds it")
    if state in (State.PENDING.value, State.INVENTORIED.value, State.FAILED.value):
        return IntakeFate(IntakeKind.DROP, f"{state} until its retry time, when its message comes back")
    return IntakeFate(IntakeKind.DROP, f"not forwarded: state {state!r} is not one intake knows")


def _narrows(known: Mapping | None, privacy: str) -> bool:
    """Whether `privacy` is narrower than what the ledger has of a video no create has been sent for."""
    if not known or known.get("remote_id") or known.get("state") not in ("pending", "inventoried", "failed"):
        return False
    return narrowest_privacy(known.get("privacy"), privacy) != known.get("privacy")


@dataclass
class Intake:
    ledger: Ledger
    sqs: Any  # a boto3 SQS client (boto3 ships no types)
    work_queue_url: str
    clock: Callable[[], float] = time.time

    def handle_batch(self, event: dict) -> dict:
        records = event.get("Records", [])
        with ThreadPoolExecutor(WRITERS) as pool:
            verdicts = list(pool.map(self._record, records))
        failures = [r.get("messageId", "") for r, v in zip(records, verdicts, strict=True) if v is None]
        forward = [(r, v) for r, v in zip(records, verdicts, strict=True) if isinstance(v, AssetMessage)]
        failures += self._forward(forward)
        if forward:
            metrics.add_metric(name="Recorded", unit=MetricUnit.Count, value=len(forward))
        return {"batchItemFailures": [{"itemIdentifier": m} for m in failures]}

    def _record(self, record: dict) -> AssetMessage | bool | None:
        """The message to forward, True when there is nothing to send, None when the record must come back."""
        try:
            parsed = parse_message(record.get("body", ""))
            if isinstance(parsed, Poison):
                return self._poison(parsed, record)
            now = self.clock()
            recorded = self.ledger.record_intake(parsed, now)
            receives = str(record.get("attributes", {}).get("ApproximateReceiveCount", "1"))
            redelivered = receives not in ("", "1")
            if not recorded.new and parsed.privacy and _narrows(recorded.item, parsed.privacy):
                # Made private at the source since the first row: the narrower privacy is kept for the create.
                if self.ledger.narrow_privacy(parsed.asset_id, parsed.privacy, now).won:
                    metrics.add_metric(name="PrivacyNarrowed", unit=MetricUnit.Count, value=1)
            fate = intake_fate(None if recorded.new else recorded.item, now, redelivered)
            if fate.kind is IntakeKind.QUEUE:
                queued = self.ledger.mark_queued(recorded.item, now)
                if not queued.won:  # it moved meanwhile: decide again from what it is now
                    fate = intake_fate(queued.current, now, redelivered)
            if fate.kind is IntakeKind.DROP:
                logger.info("not forwarded: %s", fate.reason, extra={"asset_id": parsed.asset_id})
                metrics.add_metric(name="IntakeDropped", unit=MetricUnit.Count, value=1)
                return True
            return parsed
        except MARSHALLING_ERRORS as exc:  # data no store can carry: it would fail the same way for days
            logger.warning("poison message: cannot be stored (%s)", type(exc).__name__)
            metrics.add_metric(name="Poison", unit=MetricUnit.Count, value=1)
            return True
        except Exception:
            logger.exception("could not record the message; SQS will deliver it again")
            metrics.add_metric(name="Errors", unit=MetricUnit.Count, value=1)
            return None

    def _poison(self, poison: Poison, record: dict) -> bool:
        metrics.add_metric(name="Poison", unit=MetricUnit.Count, value=1)
        logger.warning("poison message: %s", poison.reason, extra={"message_id": record.get("messageId")})
        if poison.asset_id:
            try:
                self.ledger.record_poison(poison.asset_id, poison.reason, None, self.clock())
            except MARSHALLING_ERRORS:
                logger.warning("the poison could not be recorded either; the log line above is its record")
        return True

    def _forward(self, forward: list[tuple[dict, AssetMessage]]) -> list[str]:
        """Send the recorded messages on, ten a call; the message ids whose send failed."""
        failed: list[str] = []
        for start in range(0, len(forward), SEND_BATCH):
            chunk = forward[start : start + SEND_BATCH]
            entries = [{"Id": str(i), "MessageBody": encode_message(msg)} for i, (_, msg) in enumerate(chunk)]
            try:
                resp = self.sqs.send_message_batch(QueueUrl=self.work_queue_url, Entries=entries)
                refused = {int(f["Id"]) for f in resp.get("Failed", [])}
            except Exception:
                logger.exception("could not forward a batch; SQS will deliver it again")
                refused = set(range(len(chunk)))
            failed += [chunk[i][0].get("messageId", "") for i in sorted(refused)]
        return failed


def build(env=None) -> Intake:
    import os

    env = os.environ if env is None else env
    return Intake(
        ledger=Ledger(env["LEDGER_TABLE"], boto3.client("dynamodb")),
        sqs=boto3.client("sqs"),
        work_queue_url=env["WORK_QUEUE_URL"],
    )


_intake: Intake | None = None


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event, context):
    global _intake
    if _intake is None:
        _intake = build()
    return _intake.handle_batch(event)
