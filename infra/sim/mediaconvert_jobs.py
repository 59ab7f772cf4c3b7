"""The MediaConvert simulator's jobs: a job's record and wire shape, its queue's workers, its state-change events.

A job is SUBMITTED when created, PROGRESSING when a queue's slot takes it, then COMPLETE, or ERROR with an error code
and message ("A job's status can be SUBMITTED, PROGRESSING, COMPLETE, CANCELED, or ERROR": the API reference's Job,
https://docs.aws.amazon.com/mediaconvert/latest/apireference/jobs-id.html#jobs-id-model-job). Timing holds
"when jobs are submitted, started, and finished ... in Unix epoch format in seconds"; JobPercentComplete is "An
estimate of how far your job has progressed ... from when your job leaves its queue to when your output files appear
in your output Amazon S3 bucket", given while the job progresses ("For some jobs, the service can't provide
information about job progress. In those cases, jobPercentComplete returns a null value"); CurrentPhase is
"PROBING, TRANSCODING OR UPLOADING".

Each queue runs as many jobs at once as its concurrency, in the order they were submitted; an optional encode delay
holds each job in PROGRESSING that much longer, so a test or a benchmark sees a queue fill.

Events ("List of MediaConvert EventBridge events", https://docs.aws.amazon.com/mediaconvert/latest/ug/
mediaconvert_event_list.html): "AWS Elemental MediaConvert emits an event to Amazon EventBridge when the status of a
job changes": PROGRESSING ("A job moves from the SUBMITTED state to the PROGRESSING state"), COMPLETE ("Warnings and
output information about the completed job"), ERROR ("The error code or codes and any messages"). Each is a
"MediaConvert Job State Change" from source `aws.mediaconvert`, its detail `timestamp` (ms), `accountId`, `queue`,
`jobId`, `status`, `userMetadata`; COMPLETE adds `outputGroupDetails` (ev_status_complete and the Apple HLS group
sample, https://docs.aws.amazon.com/mediaconvert/latest/ug/apple-hls-group.html: per output `outputFilePaths`,
`durationInMs`, `videoDetails` {`widthInPx`, `heightInPx`}, and per group `type` HLS_GROUP and `playlistFilePaths`),
ERROR adds `errorCode` and `errorMessage` (https://docs.aws.amazon.com/mediaconvert/latest/ug/ev_status_error.html).
A file group's outputs are `type` FILE_GROUP with no `playlistFilePaths` ("not returned"), each output's
`outputFilePaths` its file, or for a frame capture "the final captured image" ("Output file names and paths",
https://docs.aws.amazon.com/mediaconvert/latest/ug/output-file-names-and-paths.html, and the File group sample,
https://docs.aws.amazon.com/mediaconvert/latest/ug/file-group.html). GetJob's Job carries the same outputs as the
model's OutputGroupDetail: per output only `durationInMs` and `videoDetails` (the file paths are the event's).
CANCELED ("MediaConvert sends the event for CANCELED when the job is canceled. It contains basic job details including
timestamp, accountID, queue, jobId, and userMetadata", https://docs.aws.amazon.com/mediaconvert/latest/ug/
ev_status_canceled.html) follows a CancelJob: "Permanently cancel a job. Once you have canceled a job, you can't start
it again" (the model's CancelJob). A SUBMITTED job is canceled before it starts; a PROGRESSING one stops at its next
step (before its next output; an ffmpeg call already running finishes first), and what it wrote stays where it is.
Which statuses the service lets you cancel is not in the documents read: SUBMITTED and PROGRESSING here; an ended job
(COMPLETE, ERROR, CANCELED) is refused ConflictException, the model's "conflict with the current state of the
resource" (mediaconvert.py).
The simulator sends them with PutEvents to an injected EventBridge client. EventBridge refuses PutEvents from any
other sender for an `aws.` source (the emulator, ministack, answers NotAuthorizedForSourceException as AWS does), so
the source is a setting: `aws.mediaconvert` by default, another where a rule in the emulator must receive them.
Not modelled: INPUT_INFORMATION, STATUS_UPDATE, NEW_WARNING.
"""

from __future__ import annotations

import json
import queue
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from .mediaconvert_transcode import (
    OTHER_ERROR,
    S3,
    TOOL_TIMEOUT_S,
    GroupResult,
    Plan,
    Rendition,
    TranscodeError,
    transcode,
)

SUBMITTED, PROGRESSING, COMPLETE, CANCELED, ERROR = "SUBMITTED", "PROGRESSING", "COMPLETE", "CANCELED", "ERROR"
STATUSES = (SUBMITTED, PROGRESSING, COMPLETE, CANCELED, ERROR)  # the model's JobStatus enum
ENDED = (COMPLETE, CANCELED, ERROR)
EVENT_SOURCE = "aws.mediaconvert"
DETAIL_TYPE = "MediaConvert Job State Change"


class Canceled(Exception):
    """Raised at a running job's next step once it is canceled: its worker stops there."""


class EventBridge(Protocol):
    def put_events(self, Entries: list[dict]) -> dict: ...


@dataclass
class Job:
    """One job's record; `wire()` is its Job shape in the REST API's JSON (the model's locationNames)."""

    id: str
    arn: str
    queue_arn: str
    role: str
    settings: dict  # as the request sent it, echoed back
    plan: Plan
    user_metadata: dict[str, str]
    client_request_token: str | None
    priority: int
    submit_time: float
    status: str = SUBMITTED
    start_time: float | None = None
    finish_time: float | None = None
    percent: int | None = None
    phase: str | None = None
    error_code: int | None = None
    error_message: str | None = None
    results: list[GroupResult] = field(default_factory=list)
    canceled: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    def wire(self) -> dict[str, Any]:
        timing: dict[str, Any] = {"submitTime": int(self.submit_time)}
        if self.start_time is not None:
            timing["startTime"] = int(self.start_time)
        if self.finish_time is not None:
            timing["finishTime"] = int(self.finish_time)
        body: dict[str, Any] = {
            "arn": self.arn,
            "id": self.id,
            "createdAt": int(self.submit_time),
            "queue": self.queue_arn,
            "role": self.role,
            "settings": self.settings,
            "status": self.status,
            "timing": timing,
            "userMetadata": self.user_metadata,
            "priority": self.priority,
        }
        if self.client_request_token is not None:
            body["clientRequestToken"] = self.client_request_token
        if self.status == PROGRESSING:
            body["jobPercentComplete"] = self.percent if self.percent is not None else 0
            if self.phase:
                body["currentPhase"] = self.phase
        if self.status == ERROR:
            body["errorCode"] = self.error_code
            body["errorMessage"] = self.error_message
        if self.status == COMPLETE:
            # The API's OutputGroupDetail: per output DurationInMs and VideoDetails (no file paths: those are the
            # event's).
            body["outputGroupDetails"] = [
                {"outputDetails": [output_detail(r) for r in group.renditions]} for group in self.results
            ]
        return body


def output_detail(rendition: Rendition, paths: bool = False) -> dict[str, Any]:
    """An output's OutputDetail (the API's), with its `outputFilePaths` first when `paths` (the event's)."""
    detail: dict[str, Any] = {"outputFilePaths": list(rendition.paths)} if paths else {}
    detail["durationInMs"] = rendition.duration_ms
    if rendition.width is not None and rendition.height is not None:
        detail["videoDetails"] = {"widthInPx": rendition.width, "heightInPx": rendition.height}
    return detail


def group_detail(group: GroupResult) -> dict[str, Any]:
    """The COMPLETE event's entry for one output group."""
    detail: dict[str, Any] = {
        "outputDetails": [output_detail(r, paths=True) for r in group.renditions],
        "type": group.type,
    }
    if group.playlist is not None:
        detail["playlistFilePaths"] = [group.playlist]
    return detail


class Events:
    """Sends each state change to EventBridge; keeps what was sent and what was refused, for tests to read."""

    def __init__(
        self, client: EventBridge | None, region: str, account: str, source: str = EVENT_SOURCE, bus: str = "default"
    ) -> None:
        self.client, self.region, self.account, self.source, self.bus = client, region, account, source, bus
        self.sent: list[dict] = []
        self.refused: list[dict] = []
        self._lock = threading.Lock()

    def detail(self, job: Job) -> dict[str, Any]:
        detail: dict[str, Any] = {
            "timestamp": int(time.time() * 1000),
            "accountId": self.account,
            "queue": job.queue_arn,
            "jobId": job.id,
            "status": job.status,
            "userMetadata": job.user_metadata,
        }
        if job.status == COMPLETE:
            detail["outputGroupDetails"] = [group_detail(group) for group in job.results]
        if job.status == ERROR:
            detail["errorCode"] = job.error_code
            detail["errorMessage"] = job.error_message
        return detail

    def send(self, job: Job) -> None:
        """PutEvents of the job's current state; a refusal or a failed call is kept in `refused`, never raised."""
        entry = {
            "Time": datetime.now(UTC),
            "Source": self.source,
            "Resources": [job.arn],
            "DetailType": DETAIL_TYPE,
            "Detail": json.dumps(self.detail(job)),
            "EventBusName": self.bus,
        }
        if self.client is None:
            return
        try:
            answer = self.client.put_events(Entries=[entry])
        except Exception as exc:  # the bus unreachable: the job goes on, as MediaConvert's own would
            with self._lock:
                self.refused.append({"entry": entry, "error": type(exc).__name__})
            return
        failed = [e for e in answer.get("Entries", []) if e.get("ErrorCode")]
        with self._lock:
            if answer.get("FailedEntryCount") or failed:
                self.refused.append({"entry": entry, "error": failed[0].get("ErrorCode") if failed else "failed"})
            else:
                self.sent.append(entry)


class QueueWorkers:
    """One queue: `concurrency` threads that each take the next SUBMITTED job, in order, and run it to its end."""

    def __init__(
        self,
        name: str,
        concurrency: int,
        run: Callable[[Job], None],
    ) -> None:
        self.name, self.concurrency, self._run = name, concurrency, run
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for n in range(self.concurrency):
            thread = threading.Thread(target=self._work, name=f"mediaconvert-sim-{self.name}-{n}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def submit(self, job: Job) -> None:
        self._jobs.put(job)

    def stop(self, timeout_s: float = 30) -> None:
        """Jobs still SUBMITTED are dropped; running ones end at their next step (the stop event)."""
        while True:
            try:
                self._jobs.get_nowait()
            except queue.Empty:
                break
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            thread.join(timeout=timeout_s)
        self._threads = []

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            self._run(job)


class Runner:
    """Runs jobs on their queues' workers: each state change under the simulator's lock, then its event."""

    def __init__(
        self,
        lock: threading.Lock,
        s3: S3 | None,
        events: Events,
        concurrency: dict[str, int],
        encode_delay_s: float = 0.0,
        tool_timeout_s: float = TOOL_TIMEOUT_S,
    ) -> None:
        self._lock, self._s3, self.events = lock, s3, events
        self.encode_delay_s, self.tool_timeout_s = encode_delay_s, tool_timeout_s
        self._stopping = threading.Event()
        self.queues = {name: QueueWorkers(name, n, self._run) for name, n in concurrency.items()}
        self.running = 0  # jobs PROGRESSING now, and the most at once: a queue's concurrency, observed
        self.most_running = 0

    def start(self) -> None:
        for workers in self.queues.values():
            workers.start()

    def stop(self) -> None:
        self._stopping.set()
        for workers in self.queues.values():
            workers.stop()

    def submit(self, queue_name: str, job: Job) -> None:
        self.queues[queue_name].submit(job)

    def cancel(self, job: Job) -> bool:
        """CancelJob: a SUBMITTED or PROGRESSING job becomes CANCELED (and its event is sent); False if it had
        already ended. The caller holds no lock."""
        with self._lock:
            if job.status in ENDED:
                return False
            job.canceled.set()
            job.status, job.finish_time, job.percent, job.phase = CANCELED, time.time(), None, None
        self.events.send(job)
        return True

    def _change(self, job: Job, **changes: Any) -> bool:
        """A state change and its event, unless the job was canceled meanwhile (then nothing, and False)."""
        with self._lock:
            if job.canceled.is_set():
                return False
            for name, value in changes.items():
                setattr(job, name, value)
        self.events.send(job)
        return True

    def _progress(self, job: Job, phase: str, percent: int) -> None:
        if job.canceled.is_set() or self._stopping.is_set():
            raise Canceled
        with self._lock:
            job.phase, job.percent = phase, percent

    def _hold(self, job: Job) -> bool:
        """The encode delay, cut short by a cancel or a stop; True if the job should go on."""
        deadline = time.monotonic() + self.encode_delay_s
        while (left := deadline - time.monotonic()) > 0:
            if self._stopping.wait(min(left, 0.05)) or job.canceled.is_set():
                return False
        return not job.canceled.is_set()

    def _run(self, job: Job) -> None:
        if self._stopping.is_set() or job.canceled.is_set():
            return
        with self._lock:
            self.running += 1
            self.most_running = max(self.most_running, self.running)
        try:
            if not self._change(job, status=PROGRESSING, start_time=time.time(), percent=0, phase="PROBING"):
                return
            if not self._hold(job):
                return
            try:
                if self._s3 is None:
                    raise TranscodeError(OTHER_ERROR, "the simulator has no S3 client to read the input with")
                with tempfile.TemporaryDirectory(prefix="mediaconvert-sim-") as work:
                    results = transcode(
                        job.plan, self._s3, Path(work), lambda p, n: self._progress(job, p, n), self.tool_timeout_s
                    )
            except Canceled:
                return
            except TranscodeError as exc:
                self._change(job, status=ERROR, finish_time=time.time(), error_code=exc.code, error_message=exc.message)
                return
            except Exception as exc:  # whatever else goes wrong ends the job, never the worker
                message = f"internal error: {type(exc).__name__}"
                self._change(job, status=ERROR, finish_time=time.time(), error_code=OTHER_ERROR, error_message=message)
                return
            self._change(job, status=COMPLETE, finish_time=time.time(), results=results, percent=None, phase=None)
        finally:
            with self._lock:
                self.running -= 1
