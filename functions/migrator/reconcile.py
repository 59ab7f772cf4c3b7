"""The reconcile Lambda: heal lost work, poll the provider when webhooks never came, flag drift.

It runs on a schedule and on demand (`migrator reconcile`). Each run reads reconcile's
due lanes (`due.py`: a sparse index of only the assets it may have to act on, by the time
their silence began) and never the settled bulk of the table: `heal#n` (a lost worker
or deferred message), `queued#n` (a message the queue may have dropped), `poll#n` (a
video whose webhook may be lost), 16 shards each, and `tracks#n` in an index of its own (an
asset whose caption tracks are unsettled and whose tracks message may be lost). Lanes are read in rounds, a page each,
the longest silent first, until the run's budget (`max_items` lane items, `max_polls`
provider calls, the invocation's time) is spent; an asset acted on leaves the window (its
`due_at` moves on), so the next run starts again from what is still due, with no
checkpoint to keep, and every due asset is reached within a few runs.

Each run also looks at whether the migration is done or has stalled, and says so once (`notify.py`).

Healing is exactly-once per quiet period: a conditional write of the marker (the
item's `updated_at` as read) comes before the message is sent, so of two reconcile
runs, or a reconcile and an uploader, at most one acts on what it read.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from threading import Lock
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric

from . import due
from .due import Family
from .dynamo import typed
from .fate import classify_failure, excerpt
from .heal import (
    DEFAULT_RETENTION_S,
    MAX_POLL_MISSES,
    OVERRIDES,
    PollVerdict,
    RunLimits,
    RunRequestError,
    heal_reason,
    limits_for,
    poll_due,
    poll_verdict,
    stuck_for,
)
from .hours import Hours
from .ledger import Ledger, NotResendable, message_of
from .ledger.archive import PREFIX as ARCHIVE_PREFIX
from .messages import encode_message, id_message
from .notify import Notifier, look
from .notify import from_env as notifier_from_env
from .pacer import POLL, Go, Hold, Pacer, wait_for_slot
from .providers import Poll, Provider, Video, from_settings
from .providers.http import TransportError
from .settings import env_number, load
from .settle import settle_reported
from .states import State
from .tally import read_stats
from .tracks import tracks_message
from .tracks_due import tell_tracks_worker, tracks_sender

logger = Logger(service="reconcile")
metrics = Metrics(namespace="VideoMigration", service="reconcile")

PAGE_SIZE_MAX = 100  # lane items read per query
# Stop starting new pages with less time than this left: a page and its heals fit in it.
TIME_MARGIN_S = 15.0
# The lanes not walked while the working hours are closed: the uploader and the tracks worker send their messages
# back until the window opens without a ledger write, so their assets look silent (hours.py).
HELD_BY_HOURS = frozenset({Family.HEAL, Family.TRACKS})


@dataclass
class Summary:
    """What one run did; returned to the caller and logged."""

    examined: int = 0
    healed: int = 0
    polled: int = 0
    settled_ready: int = 0
    settled_rejected: int = 0
    still_processing: int = 0
    drifted: int = 0
    failed_unfound: int = 0  # processing assets the provider kept saying nothing about: now failed
    failed_stuck: int = 0  # processing past MaxProcessingSeconds: now failed
    parked: int = 0  # due assets whose record can no longer make a message: failed for good
    tracks_resent: int = 0  # assets whose tracks message was sent again
    archive_resent: int = 0  # originals whose archive message was sent again
    skipped: dict = field(default_factory=dict)  # reason -> count
    lanes: int = 0
    lanes_finished: int = 0  # lanes read to the end of what is due
    errors: int = 0
    elapsed_s: float = 0.0

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def as_dict(self) -> dict:
        return {**self.__dict__, "skipped_total": sum(self.skipped.values())}


@dataclass
class _Lane:
    name: str
    family: Family
    before: float  # items silent since before this are due
    key: dict | None = None  # where the next page starts
    done: bool = False


@dataclass
class Reconciler:
    ledger: Ledger
    sqs: Any  # a boto3 SQS client (boto3 ships no types)
    queue_url: str
    provider: Provider
    limits: RunLimits
    clock: Callable[[], float] = time.time
    workers: int = 4
    # Polls take slots of the fleet's pace like creates (None: unpaced, for tests of other things).
    pace: PollPace | None = None
    tracks_queue_url: str = ""  # the tracks worker's queue; "" (a stack from before tracks): no tracks lanes
    archive_queue_url: str = ""  # the archive worker's queue; "" (no ArchiveBucket): no archive lanes
    hours: Hours | None = None  # the working hours: while they are closed nothing is healed (HELD_BY_HOURS)

    def run(self, limits: RunLimits | None = None, remaining_s=lambda: 900.0) -> Summary:
        limits = limits or self.limits
        started = now = self.clock()
        summary = Summary()
        quiet = {Family.HEAL: limits.heal_after_s, Family.QUEUED: limits.queued_after_s}
        quiet[Family.POLL] = limits.poll_after_s
        quiet[Family.TRACKS] = quiet[Family.ARCHIVE] = limits.heal_after_s
        queues = {Family.TRACKS: self.tracks_queue_url, Family.ARCHIVE: self.archive_queue_url}
        closed = self.hours is not None and self.hours.closed_until(now) is not None
        # A side lane only where its queue is; while the working hours are closed, the messages they hold back
        # look lost and are not: no heal sends another.
        families = [f for f in Family if queues.get(f, True) and not (closed and f in HELD_BY_HOURS)]
        lanes = [_Lane(name, family, now - quiet[family]) for family in families for name in due.lanes(family)]
        summary.lanes = len(lanes)
        budget, polls, lock = _Allowance(limits.max_items), _Allowance(limits.max_polls), Lock()
        # The first round gives every lane the same share, so a crowded lane cannot starve the rest;
        # later rounds share what the others left among the lanes that still have due items.
        share = max(1, min(PAGE_SIZE_MAX, limits.max_items // len(lanes)))

        def walk(lane: _Lane) -> None:
            if lane.family is Family.POLL and polls.left <= 0:
                return  # no poll budget left: the rest stay due for the next run
            try:
                items, next_key = self.ledger.query_due(lane.name, lane.before, share, lane.key)
            except Exception:
                logger.exception("could not read lane %s", lane.name)
                with lock:
                    summary.errors += 1
                lane.done = True
                return
            for item in items:
                if remaining_s() < TIME_MARGIN_S or not budget.take():
                    return  # resume after the last item done (this run) or from what is still due (the next)
                lane.key = _due_key(item, lane.family)
                self._one(item, lane.family, limits, polls, summary, lock, remaining_s)
                with lock:
                    summary.examined += 1
            if not next_key:
                lane.done = True
                with lock:
                    summary.lanes_finished += 1
            lane.key = next_key

        with ThreadPoolExecutor(self.workers) as pool:
            while budget.left > 0 and remaining_s() >= TIME_MARGIN_S:
                active = [lane for lane in lanes if not lane.done]
                if not active or (all(lane.family is Family.POLL for lane in active) and polls.left <= 0):
                    break
                list(pool.map(walk, active))
                share = max(1, min(PAGE_SIZE_MAX, budget.left // max(1, len(active))))
        summary.elapsed_s = round(self.clock() - started, 3)
        return summary

    # --- one candidate -----------------------------------------------------------------

    def _one(
        self, item: dict, family: Family, limits: RunLimits, polls: _Allowance, summary: Summary, lock, remaining_s
    ) -> None:
        now = self.clock()
        try:
            if family is Family.POLL:
                if not poll_due(item, now, limits.poll_after_s):
                    with lock:
                        summary.skip("not due")
                elif polls.take():
                    self._poll(item, limits, polls, summary, lock, remaining_s() - TIME_MARGIN_S)
                else:
                    with lock:
                        summary.skip("poll budget spent")
                return
            if family is Family.TRACKS:
                self._resend_tracks(item, now, summary, lock)
                return
            if family is Family.ARCHIVE:
                self._resend_archive(item, now, summary, lock)
                return
            reason = heal_reason(item, now, limits.heal_after_s, limits.queued_after_s)
            if reason is None:
                with lock:
                    summary.skip(f"{item.get('state')}: live or waiting")
                return
            self._heal(item, reason, now, summary, lock)
        except Exception:
            logger.exception("reconcile failed on one asset", extra={"asset_id": item.get("asset_id")})
            with lock:
                summary.errors += 1

    def _heal(self, seen: dict, reason: str, now: float, summary: Summary, lock) -> None:
        marked = self.ledger.mark_healed(seen, now)
        if not marked.won:
            with lock:
                summary.skip("moved since it was read")
            return
        try:
            message = message_of(marked.current or {})
        except NotResendable as exc:
            # Sending it would fail the same way every run: failed for good, with the reason.
            self.ledger.park(marked.current or seen, self.clock(), f"cannot be re-sent: {exc.reason}")
            logger.warning("not re-sent: %s", exc.reason, extra={"asset_id": seen.get("asset_id")})
            with lock:
                summary.parked += 1
            return
        # If this send fails, the marker stays and the lane brings it back after the next quiet period.
        self.sqs.send_message(QueueUrl=self.queue_url, MessageBody=encode_message(message))
        logger.info("healed: %s", reason, extra={"asset_id": message.asset_id})
        metrics.add_metric(name="Healed", unit=MetricUnit.Count, value=1)
        with lock:
            summary.healed += 1

    def _resend_tracks(self, seen: dict, now: float, summary: Summary, lock) -> None:
        """An asset whose tracks have been silent past the quiet period: its tracks message was lost (or
        the worker died with it). The marker first, so of two runs at most one sends it."""
        if not self.ledger.mark_tracks_healed(seen, now).won:
            with lock:
                summary.skip("moved since it was read")
            return
        self.sqs.send_message(QueueUrl=self.tracks_queue_url, MessageBody=tracks_message(seen["asset_id"]))
        metrics.add_metric(name="TracksResent", unit=MetricUnit.Count, value=1)
        with lock:
            summary.tracks_resent += 1

    def _resend_archive(self, seen: dict, now: float, summary: Summary, lock) -> None:
        """A copy owed to the archive and silent past the quiet period: its message was lost (or the worker died
        with it). The marker first, so of two runs at most one sends it; the copy's claim refuses a duplicate."""
        asset_id = str(seen["asset_id"]).removeprefix(ARCHIVE_PREFIX)
        if not seen["asset_id"].startswith(ARCHIVE_PREFIX) or not self.ledger.mark_archive_healed(seen, now).won:
            with lock:
                summary.skip("moved since it was read")
            return
        self.sqs.send_message(QueueUrl=self.archive_queue_url, MessageBody=id_message(asset_id))
        metrics.add_metric(name="ArchiveResent", unit=MetricUnit.Count, value=1)
        with lock:
            summary.archive_resent += 1

    def _poll(
        self, item: dict, limits: RunLimits, polls: _Allowance, summary: Summary, lock, may_wait_s: float
    ) -> None:
        asset_id = item["asset_id"]
        if self.pace is not None and not self.pace.take(may_wait_s):
            polls.stop()  # held past what this run can wait: a poll now would only meet the same limit
            with lock:
                summary.skip("provider held the fleet")
            return
        with lock:
            summary.polled += 1
        # By the recorded id, or (none recorded) found by our reference.
        answer = self.provider.poll(asset_id, item.get("remote_id"))
        if self.pace is not None:
            self.pace.told(answer)
        if answer.http_status == 429:
            if self.pace is None:  # else the answer held the fleet (told above): the next poll waits it out, or stops
                polls.stop()
            with lock:
                summary.skip("provider throttled the poll")
            return
        status = answer.video
        verdict = poll_verdict(answer.http_status, status)
        now = self.clock()
        if verdict is PollVerdict.LATER:
            with lock:
                summary.skip(
                    f"provider answered HTTP {answer.http_status}" if answer.http_status else "provider unreachable"
                )
            return
        if verdict is PollVerdict.MISS or status is None:  # no video: a miss (poll_verdict)
            note = "no such video (HTTP 404)" if answer.http_status == 404 else _unreadable(status, answer.http_status)
            result = self.ledger.note_poll_miss(asset_id, now, note, MAX_POLL_MISSES)
            failed = result.won and (result.current or {}).get("state") == State.FAILED.value
            if failed:
                logger.warning("stopped polling: %s", note, extra={"asset_id": asset_id})
                metrics.add_metric(name="PollGaveUp", unit=MetricUnit.Count, value=1)
            with lock:
                summary.skip("provider has no such video" if answer.http_status == 404 else "unreadable status")
                summary.failed_unfound += int(failed)
            return
        if verdict is PollVerdict.WORKING or status.target is None:  # no target: working (poll_verdict)
            stuck = stuck_for(item, now, limits.max_processing_s)
            if stuck is not None:
                self._fail_stuck(asset_id, stuck, status.status, now, summary, lock)
                return
            polled = int(item.get("polls") or 0) + 1
            since = item.get("processing_at")
            next_at = due.next_poll_at(
                now, polled, limits.poll_after_s, float(since) if since is not None else None, limits.max_processing_s
            )
            self.ledger.note_polled(asset_id, now, f"provider says {status.status}", next_at)
            with lock:
                summary.still_processing += 1
            return
        self._settle_polled(item, status, status.target, limits, summary, lock)

    def _fail_stuck(self, asset_id: str, stuck_s: float, word: str, now: float, summary: Summary, lock) -> None:
        reason = (
            f"provider still says {word or 'processing'} after {stuck_s:,.0f} s (MaxProcessingSeconds): its ingest"
            " may hang without ever failing; check the video at the provider, delete it there if it is stuck,"
            " then migrator retry"
        )
        result = self.ledger.fail_stuck(asset_id, now, reason)
        if result.won:
            logger.warning("gave up on a video still processing", extra={"asset_id": asset_id})
            metrics.add_metric(name="ProcessingGaveUp", unit=MetricUnit.Count, value=1)
        with lock:
            summary.failed_stuck += int(result.won)

    def _settle_polled(
        self, item: dict, status: Video, target: State, limits: RunLimits, summary: Summary, lock
    ) -> None:
        asset_id = item["asset_id"]
        settled = settle_reported(
            self.ledger, asset_id, status, item.get("remote_id"), self.clock(), limits.drift_tolerance_s
        )
        if not settled.won:
            with lock:
                summary.skip("settled meanwhile")
            return
        metrics.add_metric(name="PolledSettled", unit=MetricUnit.Count, value=1)
        logger.info("settled by poll: %s", target.value, extra={"asset_id": asset_id})
        if target is State.READY and self.tracks_queue_url:
            send = tracks_sender(self.tracks_queue_url, lambda: self.sqs)
            tell_tracks_worker(send, item, self.provider.poster_time_later, logger)
        if settled.drift_s is not None:
            metrics.add_metric(name="DurationDrift", unit=MetricUnit.Count, value=1)
        with lock:
            if target is State.READY:
                summary.settled_ready += 1
            else:
                summary.settled_rejected += 1
            summary.drifted += int(settled.drift_s is not None)


@dataclass
class PollPace:
    """Reconcile's polls as the fleet's pacer sees them: each takes a slot of the one pace the
    creates and lookups take (a provider whose budget covers every call, Cloudflare's, would
    otherwise be spent twice), waited out in place; and each answer tells the pacer what a
    create's would (a 429 holds the fleet and cuts the rate, a failure counts for the breaker)."""

    pacer: Pacer
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    max_wait_s: float = 30.0
    # A hold is waited out when it ends within this long (and within the run's time): a provider that
    # holds for its window's reset (Vimeo: up to 60 s) while the tracks worker spends the same limit
    # would otherwise stop every poll of every run, and on a target without webhooks nothing turns ready.
    max_hold_s: float = 60.0

    def take(self, may_wait_s: float | None = None) -> bool:
        """Wait for a poll slot, waiting out holds that end soon enough; False when the fleet is held past
        what this poll may wait (`max_hold_s`, or `may_wait_s`: what is left of the run's time)."""
        limit = self.max_hold_s if may_wait_s is None else min(self.max_hold_s, may_wait_s)
        waited = 0.0
        while True:
            slot = self.pacer.reserve(self.clock(), self.max_wait_s, POLL)
            due = wait_for_slot(
                self.pacer, slot, self.clock, self.sleep, lambda _go, wait: wait > self.max_wait_s, "too far for a poll"
            )
            if isinstance(due, Go):
                return True
            wait = hold_wait(due, self.clock(), waited, limit)
            if wait is None:
                return False
            self.sleep(wait)
            waited += wait

    def told(self, answer: Poll) -> None:
        if 200 <= answer.http_status < 300 or answer.http_status == 404:
            self.pacer.saw(True)  # an answer: the provider is serving
        elif answer.http_status == 0:
            self.pacer.saw(False)  # no answer at all
        else:
            self.pacer.observe(classify_failure(answer.http_status, None, answer.retry_after), self.clock())


# The least a wait on a hold counts for: a hold that has just ended, seen again, still spends the poll's patience.
MIN_HOLD_WAIT_S = 0.25


def hold_wait(hold: Hold, now: float, waited_s: float, may_wait_s: float) -> float | None:
    """How long a poll sleeps before it asks for a slot again, the fleet being held: until the hold ends (and
    within its spread, so the lanes do not all come back at once: its first tenth); None once the poll has
    waited, or would, longer than `may_wait_s`."""
    wait = max(MIN_HOLD_WAIT_S, hold.until - now + hold.spread / 10)
    return None if waited_s + wait > may_wait_s else wait


def _unreadable(status, http_status: int) -> str:
    if status is None:
        return f"HTTP {http_status} without a video"
    return f"status {status.status or 'missing'!r} we cannot read"


def _due_key(item: dict, family: Family) -> dict:
    """The lane index position of `item`, as a query's ExclusiveStartKey."""
    _, lane, due_at = due.index_of(family)
    return typed({k: item[k] for k in ("asset_id", lane, due_at)})


class _Allowance:
    """A count shared by the lane threads (provider polls left in this run)."""

    def __init__(self, left: int):
        self.left, self._lock = left, Lock()

    def take(self) -> bool:
        with self._lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True

    def stop(self) -> None:
        with self._lock:
            self.left = 0


# The environment variable behind each bound an on-demand run may also override (heal.OVERRIDES).
LIMIT_VARIABLES = {
    "heal_after_s": "HEAL_AFTER_SECONDS",
    "poll_after_s": "POLL_AFTER_SECONDS",
    "max_items": "RECONCILE_MAX_ITEMS",
    "max_polls": "RECONCILE_MAX_POLLS",
}


def load_limits(env=None) -> RunLimits:
    """The stack's thresholds, in the same ranges an on-demand run is held to."""
    env = os.environ if env is None else env
    defaults = RunLimits()
    limits: dict[str, Any] = {}  # RunLimits' fields, by name
    for name, variable in LIMIT_VARIABLES.items():
        low, high = OVERRIDES[name]
        value = env_number(env, variable, getattr(defaults, name), low, high)
        limits[name] = int(value) if isinstance(low, int) else value
    drift = env_number(env, "DRIFT_TOLERANCE_SECONDS", defaults.drift_tolerance_s, 0, 3600)
    retention = env_number(env, "QUEUE_RETENTION_SECONDS", DEFAULT_RETENTION_S, 60, DEFAULT_RETENTION_S)
    stuck = env_number(env, "MAX_PROCESSING_SECONDS", defaults.max_processing_s, 0, 30 * 86_400)
    return RunLimits(
        **limits, drift_tolerance_s=drift, queued_after_s=due.queued_after_s(retention), max_processing_s=stuck
    )


def build(env=None) -> Reconciler:
    """The provider and queue settings are the uploader's, read and checked by the same code."""
    env = os.environ if env is None else env
    settings = load(env)
    dynamodb = boto3.client("dynamodb")
    provider = from_settings(settings)
    return Reconciler(
        ledger=Ledger(settings.table_name, dynamodb),
        sqs=boto3.client("sqs"),
        queue_url=settings.queue_url,
        provider=provider,
        limits=load_limits(env),
        pace=PollPace(Pacer.configured(settings, dynamodb, provider)),
        tracks_queue_url=settings.tracks_queue_url,
        archive_queue_url=settings.archive_queue_url,
        hours=Hours(settings.working_hours, settings.table_name, dynamodb),
    )


def self_check(provider: Provider, clock: Callable[[], float]) -> dict:
    """`migrator doctor`'s questions, answered from inside the stack with this function's own role
    and network: are the provider's credentials readable, is the provider reachable, does it take
    them, and how far is our clock from the provider's."""
    checks: dict = {"credentials": {"ok": True}, "provider": {"ok": False}, "clock": {}}
    try:
        provider.auth_headers()
    except Exception as exc:  # AccessDenied, a missing secret, a malformed one: never its value
        checks["credentials"] = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"[:300]}
        return checks
    try:
        answer = provider.check()
    except TransportError as exc:
        checks["provider"] = {"ok": False, "detail": f"unreachable: {exc.kind}"}
        return checks
    checks["provider"] = {
        "ok": 200 <= answer.status < 300,
        "status": answer.status,
        "detail": excerpt(answer.text, 200),
    }
    date = {k.lower(): v for k, v in answer.headers.items()}.get("date")
    if date:
        try:
            checks["clock"] = {"skew_s": round(clock() - parsedate_to_datetime(date).timestamp(), 1)}
        except (TypeError, ValueError):
            pass
    return checks


def publish_counts(dynamodb, stats_table: str, now: float) -> None:
    """Assets per state, as gauges for the dashboard: the tally's aggregates (16 reads), once a run."""
    if not stats_table:
        return
    try:
        counts = read_stats(dynamodb, stats_table, now, window_minutes=0).counts
    except Exception:  # the dashboard misses a point; the run's own work is done
        logger.exception("could not read the status counts")
        return
    for state, count in counts.items():
        with single_metric(
            name="AssetsInState",
            unit=MetricUnit.Count,
            value=count,
            namespace=metrics.namespace,
            default_dimensions={"service": "reconcile", "state": state},
        ):
            pass


_reconciler: Reconciler | None = None
_notifier: Notifier | None = None


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event, context):
    global _reconciler, _notifier
    if _reconciler is None:
        _reconciler = build()
        _notifier = notifier_from_env(_reconciler.ledger.client)
    if isinstance(event, dict) and event.get("doctor") is True:
        return self_check(_reconciler.provider, _reconciler.clock)
    try:
        limits = limits_for(event, _reconciler.limits)
    except RunRequestError as exc:
        logger.warning("reconcile request refused: %s", exc)
        return {"error": str(exc)}
    summary = _reconciler.run(limits, lambda: context.get_remaining_time_in_millis() / 1000)
    # Heals and drift are counted as they happen (Healed, DurationDrift); these are per run.
    for name in ("polled", "examined", "errors"):
        metrics.add_metric(name=f"Reconcile{name.title()}", unit=MetricUnit.Count, value=getattr(summary, name))
    publish_counts(_reconciler.ledger.client, os.environ.get("STATS_TABLE", ""), _reconciler.clock())
    result = {**summary.as_dict(), "notices": look(_notifier)}  # done and stalled (notify.py), once a run
    logger.info("reconcile run done", extra={"summary": result})
    return result
