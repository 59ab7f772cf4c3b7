"""Sends asset messages to the queue with SendMessageBatch: 10 per call, calls in parallel, failures retried.

The input is pulled as the pool has room (a bounded number of batches in flight), so a
million-row file is never held in memory. A batch whose entries fail for a transient
reason (SenderFault false, a throttled or 5xx call, a dropped connection) is retried with
exponential backoff and jitter; what still fails is reported with its reason, never lost
silently. A stop event (Ctrl-C) stops the taking of new rows; the batches in flight are
finished, so the count of what was sent is exact.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    HTTPClientError,
)
from botocore.exceptions import ConnectionError as BotoConnectionError
from migrator.messages import AssetMessage, encode_message

# The sender's own loop is the one retry policy for its calls: botocore's is switched off.
SENDER_CLIENT_CONFIG = Config(retries={"mode": "standard", "total_max_attempts": 1})
MAX_BATCH_ENTRIES = 10
MAX_BATCH_BYTES = 256 * 1024  # SQS: the sum of the bodies in one SendMessageBatch
THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "RequestThrottled",
        "RequestLimitExceeded",
        "TooManyRequestsException",
        "AWS.SimpleQueueService.RequestThrottled",
        "ServiceUnavailable",
        "InternalError",
        "InternalFailure",
        "RequestTimeout",
    }
)


@dataclass(frozen=True)
class SendSummary:
    sent: int
    failed: list[tuple[str, str]]  # (asset_id, reason) of entries that failed for good
    batches: int
    calls: int  # SendMessageBatch calls, retries included
    elapsed_s: float
    retried: int = 0  # entries sent again after a transient failure
    stopped: bool = False  # the stop event (or Ctrl-C) ended the run before the input did
    fatal: str | None = None  # a call refused outright, or no endpoint to answer: sending stopped


@dataclass
class BatchResult:
    sent: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    calls: int = 0
    retried: int = 0
    fatal: str | None = None


def split_batches(
    messages: Iterable[AssetMessage],
    max_entries: int = MAX_BATCH_ENTRIES,
    max_bytes: int = MAX_BATCH_BYTES,
    encode: Callable[[Any], str] = encode_message,
) -> Iterator[list[tuple[AssetMessage, str]]]:
    """(message, body) batches of at most `max_entries` entries and `max_bytes` of bodies, in input order.

    A batch is yielded as soon as it is full, so no more than one message is read ahead.
    """
    batch: list[tuple[AssetMessage, str]] = []
    size = 0
    for msg in messages:
        body = encode(msg)
        body_bytes = len(body.encode("utf-8"))
        if batch and size + body_bytes > max_bytes:
            yield batch
            batch, size = [], 0
        batch.append((msg, body))
        size += body_bytes
        if len(batch) >= max_entries:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def is_transient(exc: Exception) -> bool:
    """Whether a whole failed call is worth trying again."""
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        return code in THROTTLING_CODES or status == 429 or status >= 500
    return isinstance(exc, (BotoConnectionError, HTTPClientError))


def is_unreachable(exc: Exception) -> bool:
    """No connection at all (refused, no route, connect timeout): every other call would fail the same way."""
    return isinstance(exc, (EndpointConnectionError, ConnectTimeoutError))


def describe(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        return f"{error.get('Code', 'error')}: {error.get('Message', '')}".rstrip(": ")
    return f"{type(exc).__name__}: {exc}"


def run_bounded[T, R](
    items: Iterable[T],
    work: Callable[[T], R],
    on_done: Callable[[T, R], None],
    *,
    workers: int,
    stop: threading.Event,
    max_in_flight: int | None = None,
) -> bool:
    """Run `work` on each item in a thread pool, with at most `max_in_flight` items taken and unfinished.

    `on_done(item, result)` runs in the calling thread. The next item is taken only when
    there is room and `stop` is not set. Ctrl-C (KeyboardInterrupt here) sets `stop`; either
    way the items in flight are finished. Returns True when the run stopped before the
    items ran out. An error raised by the items themselves (a file that turns unreadable)
    is raised again once the items in flight are finished.
    """
    limit = max_in_flight or 2 * workers
    in_flight: dict[Future, T] = {}
    stopped = False

    def collect() -> None:
        done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
        for future in done:
            item = in_flight.pop(future)
            on_done(item, future.result())

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="load")
    try:
        try:
            source = iter(items)
            while True:
                if stop.is_set():
                    stopped = True
                    break
                if len(in_flight) >= limit:
                    collect()
                    continue
                try:
                    item = next(source)
                except StopIteration:
                    break
                # Finished items are collected when the pool is full (or at the end): a few late, none lost.
                in_flight[pool.submit(work, item)] = item
        except KeyboardInterrupt:
            stop.set()
            stopped = True
        except BaseException:
            stop.set()
            while in_flight:
                collect()
            raise
        while in_flight:
            collect()
    finally:
        # Normally nothing is left; after a second Ctrl-C during the drain, abandon what was queued.
        pool.shutdown(wait=not in_flight, cancel_futures=True)
    return stopped


class BatchSender:
    """Sends AssetMessages (or anything with an `asset_id` that `encode` makes a body of) to one queue,
    in parallel SendMessageBatch calls."""

    def __init__(
        self,
        sqs: Any,
        queue_url: str,
        *,
        workers: int = 8,
        max_retries: int = 5,
        max_connect_retries: int = 2,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        base_delay_s: float = 0.2,
        max_delay_s: float = 5.0,
        encode: Callable[[Any], str] = encode_message,
    ):
        self.sqs = sqs
        self.encode = encode
        self.queue_url = queue_url
        self.workers = workers
        self.max_retries = max_retries
        self.max_connect_retries = max_connect_retries
        self.sleep = sleep
        self.clock = clock
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s

    def send(
        self,
        messages: Iterable[AssetMessage],
        *,
        stop: threading.Event | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> SendSummary:
        """Send every message (until `stop`); on_progress(sent, failed) after each batch."""
        stop = stop or threading.Event()
        started = self.clock()
        totals = BatchResult()
        batches = 0

        def on_done(batch: list[tuple[AssetMessage, str]], result: BatchResult) -> None:
            nonlocal batches
            batches += 1
            totals.sent += result.sent
            totals.failed.extend(result.failed)
            totals.calls += result.calls
            totals.retried += result.retried
            if result.fatal and not totals.fatal:
                totals.fatal = result.fatal
                stop.set()  # every other call would be refused the same way
            if on_progress:
                on_progress(totals.sent, len(totals.failed))

        batches_of = split_batches(messages, encode=self.encode)
        stopped = run_bounded(batches_of, self.send_batch, on_done, workers=self.workers, stop=stop)
        return SendSummary(
            sent=totals.sent,
            failed=totals.failed,
            batches=batches,
            calls=totals.calls,
            elapsed_s=self.clock() - started,
            retried=totals.retried,
            stopped=stopped,
            fatal=totals.fatal,
        )

    def send_batch(self, batch: list[tuple[AssetMessage, str]]) -> BatchResult:
        """One batch to the end: sent, failed for good, or given up on after max_retries."""
        result = BatchResult()
        # Entry ids are positions: asset ids may hold characters SQS batch ids refuse.
        pending = {str(position): entry for position, entry in enumerate(batch)}
        reasons: dict[str, str] = {}
        attempt = 0
        while True:
            entries = [{"Id": entry_id, "MessageBody": body} for entry_id, (_, body) in pending.items()]
            result.calls += 1
            try:
                resp = self.sqs.send_message_batch(QueueUrl=self.queue_url, Entries=entries)
            except (ClientError, BotoCoreError) as exc:
                fatal = None
                if not is_transient(exc):
                    fatal = f"SQS refused SendMessageBatch: {describe(exc)}"
                elif is_unreachable(exc) and attempt >= self.max_connect_retries:
                    # Fail fast: a load pointed at nothing stops in seconds, not one retry loop per batch.
                    fatal = f"cannot reach SQS ({describe(exc)}; tried {attempt + 1} times)"
                if fatal:
                    result.fatal = fatal
                    result.failed.extend((msg.asset_id, fatal) for msg, _ in pending.values())
                    return result
                reasons = dict.fromkeys(pending, describe(exc))
            else:
                reasons = {}
                for ok in resp.get("Successful", []):
                    if pending.pop(ok["Id"], None) is not None:
                        result.sent += 1
                for failure in resp.get("Failed", []):
                    reason = f"{failure.get('Code', 'error')}: {failure.get('Message', '')}".rstrip(": ")
                    if failure.get("SenderFault"):
                        entry = pending.pop(failure["Id"], None)
                        if entry is not None:
                            result.failed.append((entry[0].asset_id, reason))
                    else:
                        reasons[failure["Id"]] = reason
            if not pending:
                return result
            if attempt >= self.max_retries:
                for entry_id, (msg, _) in pending.items():
                    reason = reasons.get(entry_id, "neither sent nor failed in the reply")
                    result.failed.append((msg.asset_id, f"{reason} (gave up after {attempt + 1} tries)"))
                return result
            attempt += 1
            result.retried += len(pending)
            self.sleep(self.backoff_s(attempt))

    def backoff_s(self, attempt: int) -> float:
        """Equal jitter: between half and all of min(max, base * 2^(attempt-1))."""
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return ceiling / 2 + random.uniform(0, ceiling / 2)
