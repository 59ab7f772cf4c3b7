"""The operator's levers: retry assets in a state (or their failed caption tracks, or their failed archive copies),
redrive the DLQ, pause and resume, run reconcile now."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from migrator.ledger import Ledger, NotResendable, message_of
from migrator.messages import AssetMessage, id_problem
from migrator.states import State
from migrator.tracks import TrackState

from .errors import CliError


@dataclass
class RetrySummary:
    listed: int = 0
    rearmed: int = 0
    moved_on: list = field(default_factory=list)  # (id, state now)
    not_retryable: list = field(default_factory=list)  # (id, reason): its record cannot make a message
    sent: int = 0
    failed: list = field(default_factory=list)  # (id, reason)


def retry_candidates(
    ledger: Ledger, state: State, ids: list[str] | None, listed_at: float, page_size: int = 100
) -> Iterator[dict]:
    """Whole items in `state`: the named ones, or every one (listed through the index, then read
    a hundred at a time, since the index does not carry what a message needs).

    The index walk stops at `listed_at`: a re-armed item's `updated_at` moves past it, so the
    walk never meets an item it has already re-armed (which would send it again, forever).
    """
    if ids:
        listed: Iterable[dict] = ({"asset_id": asset_id} for asset_id in checked_ids(ids))
    else:
        listed = ledger.iter_state(state, page_size=page_size, older_than=listed_at)
    page: list[str] = []
    for item in listed:
        page.append(item["asset_id"])
        if len(page) == 100:
            yield from _whole(ledger, page)
            page = []
    yield from _whole(ledger, page)


def _whole(ledger: Ledger, asset_ids: list[str]) -> Iterator[dict]:
    found = ledger.get_many(asset_ids) if asset_ids else {}
    for asset_id in asset_ids:
        yield found.get(asset_id) or {"asset_id": asset_id, "state": None}


def retry(
    ledger: Ledger,
    state: State,
    ids: list[str] | None,
    send: Callable[[Iterable[AssetMessage]], tuple[int, list]],
    dry_run: bool = False,
    clock: Callable[[], float] = time.time,
    page_size: int = 100,
) -> RetrySummary:
    """Re-arm each matching asset (a conditional write), then enqueue it.

    The write comes first: an asset that moved meanwhile (claimed, settled) is left
    alone, and one whose message fails to send is already armed for reconcile's heal.
    A record that cannot make a valid message (a poison record without a source) is
    reported as not retryable before anything is written, and the run goes on past it.
    """
    summary = RetrySummary()

    def rearmed() -> Iterator[AssetMessage]:
        for item in retry_candidates(ledger, state, ids, clock(), page_size):
            summary.listed += 1
            if item.get("state") != state.value:
                summary.moved_on.append((item["asset_id"], item.get("state") or "unknown to the ledger"))
                continue
            try:
                message_of(item)
            except NotResendable as exc:
                summary.not_retryable.append((item["asset_id"], exc.reason))
                continue
            if dry_run:
                continue
            result = ledger.rearm(item["asset_id"], state, clock())
            if not result.won:
                summary.moved_on.append((item["asset_id"], (result.current or {}).get("state", "gone")))
                continue
            summary.rearmed += 1
            try:
                yield message_of(result.current or {})  # a won rearm returns the item (ALL_NEW)
            except NotResendable as exc:  # it changed between the read and the write: armed, not sent
                summary.not_retryable.append((item["asset_id"], exc.reason))

    sent, failed = send(rearmed())
    summary.sent, summary.failed = sent, failed
    return summary


# --- failed caption tracks -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TracksDue:
    """A tracks-worker message to send (its body is `tracks.tracks_message(asset_id)`)."""

    asset_id: str


@dataclass
class TrackRetrySummary:
    listed: int = 0  # assets read
    assets: int = 0  # assets whose failed tracks were re-armed (or would be)
    tracks: int = 0  # failed tracks re-armed
    moved_on: list = field(default_factory=list)  # (id, why): its tracks moved since they were read
    sent: int = 0
    failed: list = field(default_factory=list)  # (id, reason): re-armed, not sent (reconcile sends it)


def retry_tracks(
    ledger: Ledger,
    items: Iterable[dict],
    send: Callable[[Iterable[TracksDue]], tuple[int, list]],
    dry_run: bool = False,
    clock: Callable[[], float] = time.time,
) -> TrackRetrySummary:
    """`migrator retry --tracks`: each asset's failed tracks (only those) get a fresh attempt budget in one
    conditional write, then the asset's tracks message goes to the tracks worker. Attached and pending
    tracks are left as they are; an asset whose tracks moved since they were read is left alone."""
    summary = TrackRetrySummary()

    def rearmed() -> Iterator[TracksDue]:
        for item in items:
            summary.listed += 1
            states = said if isinstance(said := item.get("track_states"), dict) else {}
            failed = [k for k, e in states.items() if isinstance(e, dict) and e.get("state") == TrackState.FAILED]
            if not failed:
                continue
            if not dry_run:
                result = ledger.rearm_failed_tracks(item, clock())
                if not result.won:
                    summary.moved_on.append((item["asset_id"], "its tracks moved since they were read"))
                    continue
            summary.assets += 1
            summary.tracks += len(failed)
            if not dry_run:
                yield TracksDue(item["asset_id"])

    sent, failed = send(rearmed())
    summary.sent, summary.failed = sent, failed
    return summary


# --- failed archive copies ---------------------------------------------------------------------


@dataclass(frozen=True)
class ArchiveDue:
    """An archive-worker message to send (its body is `archiver.archive_message(asset_id)`)."""

    asset_id: str


@dataclass
class ArchiveRetrySummary:
    listed: int = 0  # assets read
    rearmed: int = 0  # failed copies re-armed (or, with --dry-run, that would be)
    moved_on: list = field(default_factory=list)  # (id, why): not failed, or moved since it was read
    sent: int = 0
    failed: list = field(default_factory=list)  # (id, reason): re-armed, not sent (reconcile sends it)


def retry_archive(
    ledger: Ledger,
    items: Iterable[dict],
    send: Callable[[Iterable[ArchiveDue]], tuple[int, list]],
    dry_run: bool = False,
    clock: Callable[[], float] = time.time,
) -> ArchiveRetrySummary:
    """`migrator retry --archive`: each asset whose archive copy failed for good (its item says `archive_state`
    failed) is re-armed in one conditional write (`Ledger.rearm_archive`: a fresh budget of copies), then its
    message goes to the archive worker. A copy that is not failed, or moved since it was read (a pass took it), is
    left alone and said why; an id the ledger does not know is said so."""
    summary = ArchiveRetrySummary()

    def rearmed() -> Iterator[ArchiveDue]:
        for item in items:
            summary.listed += 1
            asset_id, said = item["asset_id"], item.get("archive_state")
            if item.get("state") is None and said is None:
                summary.moved_on.append((asset_id, "unknown to the ledger"))
                continue
            if said != "failed":
                summary.moved_on.append((asset_id, f"its archive copy is {said}" if said else "no archive copy yet"))
                continue
            if not dry_run:
                result = ledger.rearm_archive(asset_id, clock())
                if not result.won:
                    now = (result.current or {}).get("state")
                    summary.moved_on.append((asset_id, f"its archive copy is {now} now" if now else "no archive copy"))
                    continue
            summary.rearmed += 1
            if not dry_run:
                yield ArchiveDue(asset_id)

    sent, failed = send(rearmed())
    summary.sent, summary.failed = sent, failed
    return summary


def checked_ids(ids: list[str]) -> list[str]:
    """The --id values, each one a valid asset id (else the CLI's error naming it)."""
    for asset_id in ids:
        problem = id_problem(asset_id)
        if problem:
            raise CliError(f"--id {asset_id!r}: {problem}")
    return ids


# --- the dead-letter queue -----------------------------------------------------------------------


@dataclass
class Redrive:
    moved: int
    failed: int
    method: str  # "StartMessageMoveTask" or "copy then delete"


# What an endpoint without SQS's message move tasks (an emulator) answers.
NO_MOVE_TASKS = frozenset({"InvalidAction", "UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation"})


def redrive(sqs, dlq_url: str, queue_url: str, limit: int | None = None, on_progress=None, sleep=time.sleep) -> Redrive:
    """Move DLQ messages back to the queue.

    On AWS, with SQS's own redrive (StartMessageMoveTask): it moves every message, keeps
    their attributes, and survives our process. With `limit`, or where the endpoint has no
    move tasks, by copy then delete (see `copy_then_delete`). The result says which ran.
    """
    if limit is None:
        moved = _move_task(sqs, dlq_url, queue_url, on_progress, sleep)
        if moved is not None:
            return Redrive(moved, 0, "StartMessageMoveTask")
    moved, failed = copy_then_delete(sqs, dlq_url, queue_url, limit, on_progress)
    return Redrive(moved, failed, "copy then delete")


def _move_task(sqs, dlq_url: str, queue_url: str, on_progress, sleep) -> int | None:
    """Run a message move task to its end; None when the endpoint has none."""
    from botocore.exceptions import ClientError

    def arn(url: str) -> str:
        return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    source = arn(dlq_url)
    try:
        handle = sqs.start_message_move_task(SourceArn=source, DestinationArn=arn(queue_url))["TaskHandle"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in NO_MOVE_TASKS:
            return None
        raise
    while True:
        tasks = sqs.list_message_move_tasks(SourceArn=source, MaxResults=10).get("Results", [])
        task = next((t for t in tasks if t.get("TaskHandle") == handle), tasks[0] if tasks else {})
        moved = int(task.get("ApproximateNumberOfMessagesMoved", 0))
        status = task.get("Status", "RUNNING")
        if on_progress:
            on_progress(moved, int(task.get("ApproximateNumberOfMessagesToMove", 0) or 0))
        if status == "COMPLETED":
            return moved
        if status in ("FAILED", "CANCELLED", "CANCELLING"):
            raise CliError(f"the DLQ move task {status.lower()}: {task.get('FailureReason', 'no reason given')}")
        sleep(2)


def copy_then_delete(sqs, dlq_url: str, queue_url: str, limit: int | None = None, on_progress=None) -> tuple[int, int]:
    """Move DLQ messages back to the queue: send a copy, then delete the original.

    A crash between the two leaves a duplicate message, never a lost one; the ledger's
    claim makes the duplicate harmless. Returns (moved, failed to move).
    """
    moved = failed = 0
    empty_receives = 0
    while limit is None or moved < limit:
        want = 10 if limit is None else max(1, min(10, limit - moved))
        resp = sqs.receive_message(QueueUrl=dlq_url, MaxNumberOfMessages=want, WaitTimeSeconds=1, VisibilityTimeout=60)
        messages = resp.get("Messages", [])
        if not messages:
            empty_receives += 1
            if empty_receives >= 2:  # the DLQ is drained (receives are approximate: ask twice)
                break
            continue
        empty_receives = 0
        entries = [{"Id": str(i), "MessageBody": m["Body"]} for i, m in enumerate(messages)]
        result = sqs.send_message_batch(QueueUrl=queue_url, Entries=entries)
        sent_ids = {s["Id"] for s in result.get("Successful", [])}
        failed += len(messages) - len(sent_ids)
        done = [
            {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages) if str(i) in sent_ids
        ]
        if done:
            sqs.delete_message_batch(QueueUrl=dlq_url, Entries=done)
        moved += len(done)
        if on_progress:
            on_progress(moved, failed)
    return moved, failed


# --- pause and resume ----------------------------------------------------------------------------


def set_paused(lambda_client, mapping_id: str, paused: bool, wait_s: float = 30.0) -> str:
    """Disable (pause) or enable (resume) the uploader's event source mapping; returns its state.

    Disabling stops new polls; invocations already running finish, and their messages'
    fates (delete, defer) are applied as usual. Messages not yet received stay in the
    queue, so nothing is lost.
    """
    lambda_client.update_event_source_mapping(UUID=mapping_id, Enabled=not paused)
    wanted = "Disabled" if paused else "Enabled"
    deadline = time.time() + wait_s
    while True:
        state = lambda_client.get_event_source_mapping(UUID=mapping_id).get("State", "")
        if state == wanted or time.time() > deadline:
            return state
        time.sleep(1)


# --- reconcile now -----------------------------------------------------------------------------


# How long past the function's own timeout the CLI waits for its answer.
INVOKE_MARGIN_S = 30


def invoke_once_config(function_timeout_s: float):
    """A client configuration for one synchronous invoke of a long function.

    botocore's defaults (a 60 s read timeout, then retries) would start a 300-second
    reconcile up to five times over: the read timeout sits above the function's own
    timeout, and nothing is retried.
    """
    from botocore.config import Config

    return Config(read_timeout=function_timeout_s + INVOKE_MARGIN_S, retries={"total_max_attempts": 1})


def run_reconcile(lambda_client, function_name: str, request: dict) -> dict:
    """Invoke the reconcile Lambda once and wait for its summary (see `invoke_once_config`)."""
    from botocore.exceptions import ConnectionClosedError, ReadTimeoutError

    try:
        resp = lambda_client.invoke(
            FunctionName=function_name, InvocationType="RequestResponse", Payload=json.dumps(request).encode()
        )
    except (ReadTimeoutError, ConnectionClosedError):
        raise CliError(
            "reconcile's answer was lost on the way back; the run may still be going: "
            "see its log group before starting another"
        ) from None
    raw = resp["Payload"].read()
    try:
        result = json.loads(raw or b"null")
    except ValueError:
        raise CliError("reconcile answered with something that is not JSON") from None
    if resp.get("FunctionError"):
        message = result.get("errorMessage") if isinstance(result, dict) else None
        raise CliError(f"reconcile failed: {message or 'see its logs'}")
    if not isinstance(result, dict):
        raise CliError("reconcile answered with an unexpected result")
    if "error" in result:
        raise CliError(f"reconcile refused the request: {result['error']}")
    return result
