"""The webhook Lambda: the provider's signed callbacks, through API Gateway, into the ledger.

The URL is public, so every request is untrusted until its signature checks out over
the exact bytes received. Order of checks: size (413), our own configuration (503: no
secret, so the provider keeps the event and retries), signature (401), JSON and shape
(400), then the event. A verified event is acted on exactly once: the record of its id
(with a TTL) and the ledger's move are one transaction, so a crash between them cannot
lose it and a replay cannot repeat it; the ledger only ever moves forward. Answers are
fast (no provider calls here); a 5xx means only that nothing was written, so the
provider's retry acts.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from hashlib import sha256

import boto3
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from .canary import DEFAULT_TOLERANCE_S, drifted
from .fate import classify_video, excerpt
from .ledger import EventOutcome, Ledger
from .messages import id_problem
from .secrets import read_secret
from .signatures import Scheme, SecretError, SignatureError, decode_body, verify
from .states import State

logger = Logger(service="webhook")
metrics = Metrics(namespace="VideoMigration", service="webhook")

MAX_BODY_BYTES = 256 * 1024
DEDUPE_TTL_S = 14 * 86_400  # longer than any provider's redelivery schedule


@dataclass(frozen=True)
class Action:
    """What a verified event asks of the ledger. `target` None: nothing to do."""

    asset_id: str | None
    target: State | None
    remote_id: str | None = None
    provider_duration_s: float | None = None
    error: str | None = None
    note: str = ""


def interpret(event: object) -> Action:
    """Turn a verified event body into a ledger action (pure)."""
    if not isinstance(event, dict):
        return Action(None, None, note="event is not an object")
    kind = event.get("type")
    if not isinstance(kind, str):
        return Action(None, None, note="event type is not a string")
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    asset_id = metadata.get("migration_ref")
    if not isinstance(asset_id, str) or id_problem(asset_id):
        return Action(None, None, note="event names no usable migration_ref")
    # The event's type says what happened; the video object carries the details.
    status = {"video.ready": "ready", "video.errored": "errored"}.get(kind)
    video = classify_video({**data, "status": status})
    if status is not None and video.target is not None:
        return Action(asset_id, video.target, video.remote_id, video.duration_s, video.error, note=status)
    return Action(asset_id, None, video.remote_id, note=f"not an outcome: {excerpt(str(kind), 60)}")


def event_id_of(verified_id: str | None, event: object, body: bytes) -> str:
    """The id a redelivery shares: the scheme's id, else the event's own, else the body's hash."""
    if verified_id:
        return verified_id[:255]
    if isinstance(event, dict) and isinstance(event.get("id"), str) and event["id"]:
        return event["id"][:255]
    return "sha256:" + sha256(body).hexdigest()


def response(status: int, **body) -> dict:
    return {"statusCode": status, "headers": {"content-type": "application/json"}, "body": json.dumps(body)}


@dataclass
class Receiver:
    ledger: Ledger
    dynamodb: object
    events_table: str
    scheme: Scheme
    secrets: Callable[[], list[str]]
    tolerance_s: int = 300
    drift_tolerance_s: float = DEFAULT_TOLERANCE_S
    clock: Callable[[], float] = time.time

    def handle(self, request: Mapping) -> dict:
        # Headers as received: the verifier refuses a name sent twice in different case
        # rather than guessing which of the two the sender meant.
        headers = request.get("headers") or {}
        raw = request.get("body") or ""
        if len(raw) > MAX_BODY_BYTES * 4 // 3 + 4:  # cheap check before decoding
            return self._refuse(413, "body too large")
        try:
            body = decode_body(raw, bool(request.get("isBase64Encoded")))
        except SignatureError as exc:
            return self._refuse(400, exc.reason)
        if len(body) > MAX_BODY_BYTES:
            return self._refuse(413, "body too large")
        secrets = self.secrets()
        if not secrets:
            return self._misconfigured("no secret configured")
        try:
            verified = verify(self.scheme, body, headers, secrets, self.clock(), self.tolerance_s)
        except SecretError as exc:
            return self._misconfigured(exc.reason)
        except SignatureError as exc:
            return self._refuse(401, exc.reason)
        try:
            event = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return self._refuse(400, "body is not valid JSON")
        if isinstance(event, dict) and "type" in event and not isinstance(event["type"], str):
            return self._refuse(400, "event type is not a string")

        event_id = event_id_of(verified.event_id, event, body)
        action = interpret(event)
        logger.append_keys(event_id=event_id)
        if action.asset_id:
            logger.set_correlation_id(action.asset_id)
        if action.target is None:
            logger.info("event acknowledged, nothing to do: %s", action.note)
            metrics.add_metric(name="WebhookIgnored", unit=MetricUnit.Count, value=1)
            return response(200, result="ignored", reason=action.note)
        now = self.clock()
        try:
            result = self.ledger.settle_event(
                self.events_table,
                {"event_id": event_id, "seen_at": now, "expires_at": int(now + DEDUPE_TTL_S)},
                action.asset_id,
                action.target,
                action.remote_id,
                now,
                provider_duration_s=action.provider_duration_s,
                error=action.error,
            )
        except Exception:
            # Nothing was written (one transaction): the provider's retry acts on the event.
            logger.exception("ledger write failed; asking the provider to retry")
            return response(500, error="ledger unavailable, retry later")
        if result.outcome is EventOutcome.DUPLICATE:
            logger.info("duplicate or replayed event; acknowledged, not acted on")
            metrics.add_metric(name="WebhookDuplicate", unit=MetricUnit.Count, value=1)
            return response(200, result="duplicate")
        if result.outcome is EventOutcome.APPLIED:
            logger.info("asset %s", action.target.value, extra={"remote_id": action.remote_id})
            metrics.add_metric(name=f"Webhook{action.target.value.title()}", unit=MetricUnit.Count, value=1)
            self._canary(action.asset_id, result.current or {})
            return response(200, result=action.target.value)
        current = result.current or {}
        if not current:
            logger.warning("event for an asset the ledger does not have")
            return response(200, result="unknown asset")
        logger.info("event not applied: asset is %s (remote_id %s)", current.get("state"), current.get("remote_id"))
        return response(200, result="not applied", state=current.get("state"))

    def _canary(self, asset_id: str, settled: dict) -> None:
        drift = drifted(settled, self.drift_tolerance_s)
        if drift is None:
            return
        logger.warning("duration drift %+.3f s (source %s s)", drift, settled.get("duration_s"))
        metrics.add_metric(name="DurationDrift", unit=MetricUnit.Count, value=1)
        try:
            self.ledger.flag_drift(asset_id, drift, self.clock())
        except Exception:  # the asset is settled either way; only its flag (and report --drift) miss it
            logger.exception("could not flag the drift")

    def _misconfigured(self, reason: str) -> dict:
        """Our misconfiguration, not the sender's fault: a 401 would make the provider drop the
        event for good, a 503 makes it retry once the secret is fixed. Loud in the log."""
        logger.error("webhook signing secret unusable (%s): every event is refused until it is fixed", reason)
        metrics.add_metric(name="WebhookMisconfigured", unit=MetricUnit.Count, value=1)
        return response(503, error="receiver not configured, retry later")

    def _refuse(self, status: int, reason: str) -> dict:
        logger.warning("webhook refused: %s", reason, extra={"status": status})
        metrics.add_metric(name="WebhookRefused", unit=MetricUnit.Count, value=1)
        return response(status, error=reason)


def secret_getter(secret_name: str | None, parameter_name: str | None) -> Callable[[], list[str]]:
    """The accepted signing secrets: JSON {"current": ..., "previous": ...} (rotation) or one plain value."""

    def get() -> list[str]:
        raw = read_secret(secret_name, parameter_name)
        return [] if raw is None else parse_secrets(raw)

    return get


def parse_secrets(raw: str) -> list[str]:
    text = raw.strip()
    if text.startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError:
            return [text]
        if isinstance(doc, dict):
            return [v for k in ("current", "previous") if isinstance(v := doc.get(k), str) and v]
    return [text] if text else []


_receiver: Receiver | None = None


def build() -> Receiver:
    scheme_name = os.environ.get("WEBHOOK_SCHEME", "seed")
    try:
        scheme = Scheme(scheme_name)
    except ValueError:
        raise ValueError(f"WEBHOOK_SCHEME must be one of {[s.value for s in Scheme]}, got {scheme_name!r}") from None
    dynamodb = boto3.client("dynamodb")
    return Receiver(
        ledger=Ledger(os.environ["LEDGER_TABLE"], dynamodb),
        dynamodb=dynamodb,
        events_table=os.environ["WEBHOOK_EVENTS_TABLE"],
        scheme=scheme,
        secrets=secret_getter(
            os.environ.get("WEBHOOK_SECRET_NAME", "").strip() or None,
            os.environ.get("WEBHOOK_SECRET_PARAMETER", "").strip() or None,
        ),
        tolerance_s=int(os.environ.get("WEBHOOK_TOLERANCE_SECONDS", "300")),
        drift_tolerance_s=float(os.environ.get("DRIFT_TOLERANCE_SECONDS", str(DEFAULT_TOLERANCE_S))),
    )


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event, context):
    global _receiver
    if _receiver is None:
        _receiver = build()
    return _receiver.handle(event)
