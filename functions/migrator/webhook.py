"""The webhook Lambda: the provider's signed callbacks, through API Gateway, into the ledger.

The URL is public, so every request is untrusted until its signature checks out over
the exact bytes received, in the stack's provider's scheme (`Provider.read_webhook`).
Order of checks: size (413), our own configuration (503: no usable secret, so the
provider keeps the event and retries), signature (401), JSON and shape (400), then the
event. Before a 401 the secrets are read once more past their cache (at most once per
SECRET_REREAD_EVERY_S in a warm container, so forgeries cannot make every request a Secrets
Manager call): a secret rotated at the provider a moment ago is accepted at once.
A verified event is acted on exactly once: the record of its id (with a TTL) and the
ledger's move are one transaction, so a crash between them cannot lose it and a replay
cannot repeat it; the ledger only ever moves forward. An event that names only
the provider's video is matched to our asset through the ledger's `by_remote` index;
one that only says "something changed" (api.video) is confirmed by reading the video's
status, the one provider call this path makes; one whose kind says "ready" (JW Player's,
where every call counts against 60 a minute) is settled from the ledger's item instead.
A 5xx means only that nothing was written, so the provider's retry acts.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import boto3
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from .canary import DEFAULT_TOLERANCE_S
from .ledger import EventOutcome, Ledger, NotResendable, message_of
from .providers import AssetRef, EventError, Provider, WebhookEvent, from_settings
from .secrets import read_secret
from .settings import load
from .settle import flag_drift
from .signatures import SecretError, SignatureError, decode_body
from .states import State
from .tracks_due import tell_tracks_worker, tracks_sender

logger = Logger(service="webhook")
metrics = Metrics(namespace="VideoMigration", service="webhook")

MAX_BODY_BYTES = 256 * 1024
DEDUPE_TTL_S = 14 * 86_400  # longer than any provider's redelivery schedule
# How often a signature failure may read the secrets past their cache, per warm container:
# a rotation is seen within seconds, and a flood of forgeries costs one read per window.
SECRET_REREAD_EVERY_S = 30.0


def response(status: int, **body) -> dict:
    return {"statusCode": status, "headers": {"content-type": "application/json"}, "body": json.dumps(body)}


@dataclass
class Receiver:
    ledger: Ledger
    events_table: str
    provider: Provider
    secrets: Callable[[], list[str]]
    tolerance_s: int = 300
    drift_tolerance_s: float = DEFAULT_TOLERANCE_S
    clock: Callable[[], float] = time.time
    # The secrets read past their cache (None: never re-read), and the clock that paces it.
    reread_secrets: Callable[[], list[str]] | None = None
    reread_every_s: float = SECRET_REREAD_EVERY_S
    monotonic: Callable[[], float] = time.monotonic
    # Sends the tracks worker's message for an asset (`tracks_sender`); None: a stack without a tracks queue.
    tracks_now: Callable[[str], None] | None = None
    _reread_at: float | None = field(default=None, init=False, repr=False)

    def handle(self, request: Mapping) -> dict:
        headers = request_headers(request)
        raw = request.get("body") or ""
        if len(raw) > MAX_BODY_BYTES * 4 // 3 + 4:  # cheap check before decoding
            return self._refuse(413, "body too large")
        try:
            body = decode_body(raw, bool(request.get("isBase64Encoded")))
        except SignatureError as exc:
            return self._refuse(400, exc.reason)
        if len(body) > MAX_BODY_BYTES:
            return self._refuse(413, "body too large")
        event = self._authentic(body, headers)
        if isinstance(event, dict):
            return event
        return self.act(event)

    def handle_job_event(self, event: Mapping) -> dict:
        """A job's state change through EventBridge (the aws target's MediaConvert jobs): AWS delivers it by the
        stack's rule, so there is no signature to check; the provider reads it (and refuses a job that is not this
        stack's), then it is acted on as a verified webhook is: once, forward only."""
        read = getattr(self.provider, "read_job_event", None)
        if read is None:
            return self._refuse(400, f"the {self.provider.name} provider sends no job events")
        try:
            verified = read(event)
        except EventError as exc:
            return self._refuse(400, exc.reason)
        return self.act(verified)

    def act(self, event: WebhookEvent) -> dict:
        """A verified event acted on: the asset settled as it says (once: the event's record and the move are one
        transaction), a confirming read where it only says that something changed."""
        logger.append_keys(event_id=event.event_id)
        video, item, asset_id = event.video, None, event.asset_id
        if event.confirm and event.remote_id:
            # A ledger outage here raises: the provider retries the event, as after a failed settle below.
            asset_id = asset_id or self._asset_of(event.remote_id)
            if not asset_id:
                # Nothing to settle whatever the provider says (a lost create's video, not recorded yet: the
                # uploader's retry finds it): a read would spend a call of its budget (JW Player: one of
                # 60 a minute, and these reads took the minute past it in bench/pacing) for nothing.
                return self._unknown(event.remote_id)
            item = self._item_of(asset_id)
            if _settled(item, event.remote_id):
                logger.info("video already settled in the ledger; the provider is not asked again")
                metrics.add_metric(name="WebhookDuplicate", unit=MetricUnit.Count, value=1)
                return response(200, result="duplicate", reason="already settled")
            video = self._ready_from_ledger(event, item) or self._confirm(event)
        if video is None or video.target is None:
            logger.info("event acknowledged, nothing to do: %s", event.note)
            metrics.add_metric(name="WebhookIgnored", unit=MetricUnit.Count, value=1)
            return response(200, result="ignored", reason=event.note)
        asset_id = asset_id or self._asset_of(event.remote_id)
        if not asset_id:  # the event named neither our asset nor a video the ledger records
            return self._unknown(event.remote_id)
        logger.set_correlation_id(asset_id)
        now = self.clock()
        try:
            result = self.ledger.settle_event(
                self.events_table,
                {"event_id": event.event_id, "seen_at": now, "expires_at": int(now + DEDUPE_TTL_S)},
                asset_id,
                video.target,
                video.remote_id or event.remote_id,
                now,
                provider_duration_s=video.duration_s,
                error=video.error,
                playback=video.playback,
            )
        except Exception:
            # Nothing was written (one transaction): the provider's retry acts on the event.
            logger.exception("ledger write failed; asking the provider to retry")
            return response(500, error="ledger unavailable, retry later")
        target = video.target.value
        if result.outcome is EventOutcome.DUPLICATE:
            logger.info("duplicate or replayed event; acknowledged, not acted on")
            metrics.add_metric(name="WebhookDuplicate", unit=MetricUnit.Count, value=1)
            return response(200, result="duplicate")
        if result.outcome is EventOutcome.APPLIED:
            logger.info("asset %s", target, extra={"remote_id": video.remote_id or event.remote_id})
            metrics.add_metric(name=f"Webhook{target.title()}", unit=MetricUnit.Count, value=1)
            self._canary(asset_id, result.current or {})
            if video.target is State.READY and self.tracks_now is not None:
                tell_tracks_worker(self.tracks_now, result.current or {}, self.provider.poster_time_later, logger)
            return response(200, result=target)
        current = result.current or {}
        if not current:
            logger.warning("event for an asset the ledger does not have")
            return response(200, result="unknown asset")
        logger.info("event not applied: asset is %s (remote_id %s)", current.get("state"), current.get("remote_id"))
        return response(200, result="not applied", state=current.get("state"))

    def _authentic(self, body: bytes, headers: Mapping) -> WebhookEvent | dict:
        """The event, if signed with one of our secrets, else the answer to send. Before a 401 the
        secrets are read past their cache, in case they were rotated since it was filled."""
        secrets = self.secrets()
        checked = self._verified(body, headers, secrets)
        if isinstance(checked, SignatureError):
            fresh = self._reread(secrets)
            if isinstance(fresh, dict):
                return fresh
            if fresh is not None:
                checked = self._verified(body, headers, fresh)
        if isinstance(checked, SignatureError):
            return self._refuse(401, checked.reason)
        return checked

    def _verified(self, body: bytes, headers: Mapping, secrets: list[str]) -> WebhookEvent | SignatureError | dict:
        """The event, if signed with one of `secrets`; the SignatureError, if not; else the answer."""
        if not secrets:
            return self._misconfigured("no secret configured")
        try:
            return self.provider.read_webhook(body, headers, secrets, self.clock(), self.tolerance_s)
        except SecretError as exc:
            return self._misconfigured(exc.reason)
        except SignatureError as exc:
            return exc
        except EventError as exc:
            return self._refuse(400, exc.reason)

    def _reread(self, cached: list[str]) -> list[str] | dict | None:
        """The secrets read past the cache when they differ from `cached`; None when they do not,
        or when this window's re-read is spent; a 503 when they cannot be read."""
        now = self.monotonic()
        if self.reread_secrets is None or (self._reread_at is not None and now - self._reread_at < self.reread_every_s):
            return None
        self._reread_at = now
        metrics.add_metric(name="WebhookSecretReread", unit=MetricUnit.Count, value=1)
        try:
            fresh = self.reread_secrets()
        except Exception as exc:  # the event may be genuine: the provider retries a 503, not a 401
            logger.error("could not re-read the webhook secret after a signature failure: %s", type(exc).__name__)
            return response(503, error="signature could not be checked, retry later")
        if fresh == cached:
            return None
        logger.info("webhook secret changed since it was cached; checking the signature again")
        return fresh

    def _item_of(self, asset_id: str) -> dict | None:
        """The ledger's item for the event's asset, or None (not there, or the read failed: the full path decides)."""
        try:
            return self.ledger.get(asset_id)
        except Exception:
            return None

    def _ready_from_ledger(self, event: WebhookEvent, item: dict | None):
        """The video an event says is ready, built from the ledger's item where the provider can (JW Player,
        whose every call counts against 60 a minute); None: the provider is asked. Only for the video the
        ledger records: an event for another (a lost create's, found later) is read."""
        if not event.says_ready or event.remote_id is None or not item or item.get("remote_id") != event.remote_id:
            return None
        try:
            asset = AssetRef(item["asset_id"], details=message_of(item))
        except NotResendable:
            return None
        return self.provider.ready_video(event.remote_id, asset)

    def _confirm(self, event: WebhookEvent):
        """The video's state, asked of the provider: the event only said that something changed.
        A failed read is left to reconcile's poll (the asset stays processing until then)."""
        try:
            answer = self.provider.poll(event.asset_id or "", event.remote_id)
        except Exception:
            logger.exception("could not read the video's status; reconcile's poll will")
            return None
        if answer.http_status != 200 or answer.video is None:
            logger.info("video status unavailable (HTTP %s); reconcile's poll will settle it", answer.http_status)
            return None
        return answer.video

    def _unknown(self, remote_id: str | None) -> dict:
        logger.warning("event for a video the ledger does not know", extra={"remote_id": remote_id})
        return response(200, result="unknown asset")

    def _asset_of(self, remote_id: str | None) -> str | None:
        """Our asset for a provider's video id, when the event named only the video."""
        return self.ledger.asset_for_remote(remote_id) if remote_id else None

    def _canary(self, asset_id: str, settled: dict) -> None:
        try:
            drift = flag_drift(self.ledger, asset_id, settled, self.drift_tolerance_s, self.clock())
        except Exception:  # the asset is settled either way; only its flag (and report --drift) miss it
            logger.exception("could not flag the drift")
            return
        if drift is not None:
            logger.warning("duration drift %+.3f s (source %s s)", drift, settled.get("duration_s"))
            metrics.add_metric(name="DurationDrift", unit=MetricUnit.Count, value=1)

    def _misconfigured(self, reason: str) -> dict:
        """Our misconfiguration, not the sender's fault: a 401 would make the provider drop the
        event for good, a 503 makes it retry once the secret is fixed. Loud in the log."""
        logger.error("webhook signing secret unusable (%s): every event is refused until it is fixed", reason)
        metrics.add_metric(name="WebhookMisconfigured", unit=MetricUnit.Count, value=1)
        return response(503, error="receiver not configured, retry later")

    def _refuse(self, status: int, reason: str) -> dict:
        logger.warning("webhook refused: %s", reason, extra={"status": status})
        metrics.add_metric(name="WebhookRefused", unit=MetricUnit.Count, value=1)
        if status == 401:  # forgery, or a rotated secret: its own alarm
            metrics.add_metric(name="WebhookUnauthorized", unit=MetricUnit.Count, value=1)
        return response(status, error=reason)


def _settled(item: Mapping | None, remote_id: str | None) -> bool:
    """Whether the ledger has settled the event's video already. api.video sends a confirming event per encoded
    quality (five a video), and each confirmation reads the video twice (its status, then its playback); after
    the first, asking again spends the provider's read budget (500 a minute against 100 uploads) on an answer
    the ledger would refuse."""
    if not item:
        return False
    return item.get("state") in (State.READY.value, State.REJECTED.value) and item.get("remote_id") == remote_id


def request_headers(request: Mapping) -> Mapping:
    """The headers as received. API Gateway's REST payload keeps every value of a header sent
    twice in `multiValueHeaders` (its `headers` keeps only the last); the verifier refuses a
    name sent twice, in one spelling or two, rather than guess which one the sender meant."""
    multi = request.get("multiValueHeaders")
    if isinstance(multi, Mapping) and multi:
        return {
            name: values if not isinstance(values, list) or len(values) != 1 else values[0]
            for name, values in multi.items()
        }
    return request.get("headers") or {}


def secret_getter(secret_name: str | None, parameter_name: str | None, fresh: bool = False) -> Callable[[], list[str]]:
    """The accepted signing secrets: JSON {"current": ..., "previous": ...} (rotation) or one plain
    value; `fresh` reads past the cache."""

    def get() -> list[str]:
        raw = read_secret(secret_name, parameter_name, fresh=fresh)
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


def build(env=None) -> Receiver:
    """The provider is the stack's (PROVIDER and its settings, as the uploader reads them)."""
    env = os.environ if env is None else env
    settings = load(env, require_queue=False)
    dynamodb = boto3.client("dynamodb")
    secret_name = env.get("WEBHOOK_SECRET_NAME", "").strip() or None
    parameter_name = env.get("WEBHOOK_SECRET_PARAMETER", "").strip() or None
    return Receiver(
        ledger=Ledger(settings.table_name, dynamodb),
        events_table=env["WEBHOOK_EVENTS_TABLE"],
        provider=from_settings(settings),
        secrets=secret_getter(secret_name, parameter_name),
        reread_secrets=secret_getter(secret_name, parameter_name, fresh=True),
        tolerance_s=int(env.get("WEBHOOK_TOLERANCE_SECONDS", "300")),
        drift_tolerance_s=float(env.get("DRIFT_TOLERANCE_SECONDS", str(DEFAULT_TOLERANCE_S))),
        tracks_now=tracks_sender(env.get("TRACKS_QUEUE_URL", "").strip(), lambda: boto3.client("sqs")),
    )


def _built() -> Receiver:
    global _receiver
    if _receiver is None:
        _receiver = build()
    return _receiver


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event, context):
    return _built().handle(event)


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def job_event_handler(event, context):
    """The aws target's job events (an EventBridge rule's target). A 5xx (nothing written) raises, so Lambda's
    asynchronous retries deliver the event again; anything else is done or refused for good."""
    answer = _built().handle_job_event(event)
    if answer["statusCode"] >= 500:
        raise RuntimeError(f"job event not recorded (HTTP {answer['statusCode']}): retried")
    return answer
