"""A local AWS Elemental MediaConvert: the REST API boto3's `mediaconvert` client calls, jobs that really transcode.

It answers on a loopback port, as the provider simulator does (infra/sim/server.py), but it is a service of its
own: it speaks AWS's REST-JSON protocol (the service model's `rest-json`, version 2017-08-29), reads its inputs
from and writes its outputs to an injected S3 client (the emulator's, in tests), and sends its state-change events
to an injected EventBridge client. Request signatures are not checked (the emulator's S3 does not check them
either). Start it with `MediaConvertSim(config, s3=..., events=...).start()`; `sim.url` is the account endpoint.

The operations (the API reference, https://docs.aws.amazon.com/mediaconvert/latest/apireference/, and the service
model botocore carries, whose `http` and shapes each operation's method, path, body and answer follow):

- DescribeEndpoints, `POST /2017-08-29/endpoints` (endpoints.html): "Send a request with an empty body to the
  regional API endpoint to get your account API endpoint"; the answer `{"endpoints": [{"url": ...}]}` names this
  simulator's own URL. (The model marks it deprecated: "DescribeEndpoints and account specific endpoints are no
  longer required".)
- CreateJob, `POST /2017-08-29/jobs`, answered 201 `{"job": Job}` (jobs.html). A ClientRequestToken "can be any
  string that includes up to 64 ASCII characters. If you reuse a client request token within one minute of a
  successful request, the API returns the job details of the original request instead" (idempotency.html, "Preventing
  duplicate jobs"). boto3 fills the token in when the caller does not (the model's `idempotencyToken`).
- GetJob, `GET /2017-08-29/jobs/{id}` (jobs-id.html): `{"job": Job}`, or NotFoundException.
- ListJobs, `GET /2017-08-29/jobs?maxResults&nextToken&order&queue&status` (jobs.html): "up to twenty of your most
  recently created jobs ... To retrieve the twenty next most recent jobs, use the nextToken string returned".
- CancelJob, `DELETE /2017-08-29/jobs/{id}`, answered 202 with `{}` (the model's CancelJob: "Permanently cancel a
  job. Once you have canceled a job, you can't start it again"; its CancelJobResponse has no members): a SUBMITTED or
  PROGRESSING job becomes CANCELED and its CANCELED event is sent (mediaconvert_jobs.py). An unknown job is
  NotFoundException; one that has already ended (COMPLETE, ERROR, CANCELED) ConflictException 409, the model's
  "The service couldn't complete your request because there is a conflict with the current state of the resource"
  (which statuses the service refuses is not in the documents read).

What a job may ask for: one s3:// input with sidecar WebVTT or SRT caption files; HLS groups of H.264 renditions and
WebVTT captions renditions (mediaconvert_captions.py); file groups of an MP4 or JPEG frame captures
(mediaconvert_files.py). mediaconvert_settings.py says what is checked and what is refused.

Faults for the tests of a caller, each off by default and drawn from one random generator seeded by `seed` (so a
run repeats): `create_throttle_rate` answers a CreateJob TooManyRequestsException (HTTP 429, the model's "Too many
requests have been sent in too short of a time. The service limits the rate at which it will accept requests") before
anything is made; `lose_create_answer_rate` makes the job (or finds the one its ClientRequestToken names), then
closes the connection without an answer, as a network that drops the answer would. A caller that retries with the
same ClientRequestToken (boto3 keeps the token across its own retries, and its HTTP layer was seen to send a POST
again once after a closed connection even with retries off) gets the job it made. The command line,
infra/sim/mediaconvert_cli.py, starts the simulator as a process.

Errors are the model's exceptions: HTTP status (BadRequestException 400, NotFoundException 404, ...), the name in the
`x-amzn-ErrorType` header and `{"message": ...}` in the body, the REST-JSON form botocore reads into
`ClientError.response["Error"]` and the client's `exceptions.BadRequestException` and kin.

Queues: `Default` unless the config names more; each runs its jobs `concurrency` at a time (mediaconvert_jobs.py).

EventBridge (and ministack) refuse an `aws.` source from anyone but AWS, so the events' source is a setting:
`aws.mediaconvert` by default, another where a rule in the emulator must receive them. Unconfirmed in the documents
read: the segment files' numbering (`_00001.ts`); the real service's validation messages; the answer to an unknown
queue (NotFoundException here); whether a finished job still carries `JobPercentComplete` (omitted here); error
code 1999's meaning (used here for a failed encode or upload); a lone output's playlist name without a
`NameModifier` (refused here).
"""

from __future__ import annotations

import base64
import json
import random
import string
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .mediaconvert_jobs import EVENT_SOURCE, EventBridge, Events, Job, Runner
from .mediaconvert_settings import Invalid, create_fields, list_query
from .mediaconvert_transcode import S3, TOOL_TIMEOUT_S

API = "/2017-08-29"
IDEMPOTENCY_WINDOW_S = 60.0  # "within one minute of a successful request"
DEFAULT_QUEUE = "Default"


@dataclass
class MediaConvertConfig:
    host: str = "127.0.0.1"
    port: int = 0  # 0: a free port
    region: str = "us-east-1"
    account: str = "111122223333"  # the account id the documents' samples use
    queues: dict[str, int] = field(default_factory=lambda: {DEFAULT_QUEUE: 2})  # name -> jobs run at once
    encode_delay_s: float = 0.0  # added to every job's time in PROGRESSING
    idempotency_window_s: float = IDEMPOTENCY_WINDOW_S
    event_source: str = EVENT_SOURCE
    event_bus: str = "default"
    tool_timeout_s: float = TOOL_TIMEOUT_S
    lose_create_answer_rate: float = 0.0  # CreateJob made, its answer dropped (the connection closed)
    create_throttle_rate: float = 0.0  # CreateJob refused TooManyRequestsException before anything is made
    seed: int | None = None  # seeds the fault draws

    def __post_init__(self) -> None:
        if not self.queues or any(not isinstance(n, int) or n < 1 for n in self.queues.values()):
            raise ValueError("queues must name at least one queue, each with a concurrency of 1 or more")
        if self.encode_delay_s < 0 or self.idempotency_window_s < 0 or self.tool_timeout_s <= 0:
            raise ValueError("encode_delay_s and idempotency_window_s must be 0 or more, tool_timeout_s above 0")
        if not all(0.0 <= r <= 1.0 for r in (self.lose_create_answer_rate, self.create_throttle_rate)):
            raise ValueError("lose_create_answer_rate and create_throttle_rate must be from 0 to 1")


class ApiError(Exception):
    """An answer in the model's error form: the exception's name, its HTTP status, its message."""

    def __init__(self, name: str, status: int, message: str) -> None:
        super().__init__(message)
        self.name, self.status, self.message = name, status, message


def bad_request(message: str) -> ApiError:
    return ApiError("BadRequestException", 400, message)


def not_found(message: str) -> ApiError:
    return ApiError("NotFoundException", 404, message)


class DropAnswer(Exception):
    """The request was carried out; its answer is not sent: the connection closes without one."""


Answer = tuple[int, dict[str, Any]]


class MediaConvertSim:
    """The API, the jobs it holds and the HTTP server that exposes them."""

    def __init__(
        self, config: MediaConvertConfig | None = None, s3: S3 | None = None, events: EventBridge | None = None
    ) -> None:
        self.config = config or MediaConvertConfig()
        self._lock = threading.Lock()
        self._jobs: dict[str, Job] = {}
        self._order: dict[str, int] = {}  # job id -> its place in creation order (ListJobs' paging)
        self._tokens: dict[str, tuple[str, float]] = {}  # ClientRequestToken -> (job id, when it made the job)
        self._faults = random.Random(self.config.seed)  # the fault draws, apart from the ids' randomness
        self.lost_answers = 0  # CreateJob answers dropped, for tests
        self.events = Events(
            events, self.config.region, self.config.account, self.config.event_source, self.config.event_bus
        )
        self.runner = Runner(
            self._lock, s3, self.events, self.config.queues, self.config.encode_delay_s, self.config.tool_timeout_s
        )
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> MediaConvertSim:
        if self._server is not None:
            raise RuntimeError("already started")
        self._server = _Server(self)
        self.runner.start()
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="mediaconvert-sim-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.runner.stop()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("not started")
        return "http://{}:{}".format(*self._server.server_address[:2])  # IPv4: the config's host is 127.0.0.1

    def jobs(self) -> list[dict]:
        """Every job's Job shape, oldest first (for tests)."""
        with self._lock:
            return [job.wire() for job in sorted(self._jobs.values(), key=lambda j: self._order[j.id])]

    # --- the operations ----------------------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: str, body: bytes) -> Answer:
        """One API request -> (status, JSON body); an ApiError for the model's error answers."""
        routes: dict[tuple[str, str], Callable[[], Answer]] = {
            ("POST", f"{API}/endpoints"): lambda: self._describe_endpoints(body),
            ("POST", f"{API}/jobs"): lambda: self._create_job(body),
            ("GET", f"{API}/jobs"): lambda: self._list_jobs(query),
        }
        route = routes.get((method, path.rstrip("/")))
        if route is not None:
            return route()
        prefix = f"{API}/jobs/"
        if path.startswith(prefix) and "/" not in path[len(prefix) :]:
            job_id = urllib.parse.unquote(path[len(prefix) :])
            if method == "GET":
                return self._get_job(job_id)
            if method == "DELETE":
                return self._cancel_job(job_id)
        raise not_found(f"no such operation: {method} {path}")

    def _describe_endpoints(self, body: bytes) -> Answer:
        _json(body, allow_empty=True)
        return 200, {"endpoints": [{"url": self.url}]}

    def _queue_name(self, queue: str | None) -> str:
        """A queue given by name or ARN (arn:aws:mediaconvert:region:account:queues/Name) -> its name."""
        name = DEFAULT_QUEUE if queue is None else queue.rsplit("queues/", 1)[-1] if queue.startswith("arn:") else queue
        if name not in self.config.queues:
            raise not_found(f"queue {name} not found")
        return name

    def _queue_arn(self, name: str) -> str:
        return f"arn:aws:mediaconvert:{self.config.region}:{self.config.account}:queues/{name}"

    def _draw(self, rate: float, locked: bool = False) -> bool:
        if rate <= 0:
            return False
        if locked:
            return self._faults.random() < rate
        with self._lock:
            return self._faults.random() < rate

    def _answer_or_drop(self, answer: Answer, locked: bool = False) -> Answer:
        """A CreateJob's answer, or DropAnswer as often as lose_create_answer_rate says."""
        if self._draw(self.config.lose_create_answer_rate, locked):
            self.lost_answers += 1
            raise DropAnswer
        return answer

    def _create_job(self, body: bytes) -> Answer:
        if self._draw(self.config.create_throttle_rate):
            raise ApiError(
                "TooManyRequestsException",
                429,
                "Too many requests have been sent in too short of a time. "
                "The service limits the rate at which it will accept requests.",
            )
        try:
            fields = create_fields(_json(body))
        except Invalid as exc:
            raise bad_request(str(exc)) from exc
        queue = self._queue_name(fields.pop("queue"))
        token = fields["client_request_token"]
        now = time.time()
        with self._lock:  # one section: two creates with one token make one job
            known = self._tokens.get(token) if token is not None else None
            if known is not None and now - known[1] <= self.config.idempotency_window_s:
                return self._answer_or_drop((201, {"job": self._jobs[known[0]].wire()}), locked=True)
            job_id = f"{int(now * 1000)}-{''.join(random.choices(string.ascii_lowercase + string.digits, k=6))}"
            job = Job(
                id=job_id,
                arn=f"arn:aws:mediaconvert:{self.config.region}:{self.config.account}:jobs/{job_id}",
                queue_arn=self._queue_arn(queue),
                submit_time=now,
                **fields,
            )
            self._jobs[job_id] = job
            self._order[job_id] = len(self._order)
            if token is not None:
                self._tokens[token] = (job_id, now)
            answer = job.wire()
        self.runner.submit(queue, job)
        return self._answer_or_drop((201, {"job": answer}))

    def _get_job(self, job_id: str) -> Answer:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                raise not_found(f"The specified job {job_id} was not found")  # the simulator's words
            return 200, {"job": job.wire()}

    def _cancel_job(self, job_id: str) -> Answer:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise not_found(f"The specified job {job_id} was not found")
        if not self.runner.cancel(job):
            raise ApiError("ConflictException", 409, f"The job {job_id} has ended ({job.status}) and can't be canceled")
        return 202, {}

    def _list_jobs(self, query: str) -> Answer:
        try:
            asked = list_query(urllib.parse.parse_qs(query))
        except Invalid as exc:
            raise bad_request(str(exc)) from exc
        queue = asked["queue"]
        queue_arn = self._queue_arn(queue.rsplit("queues/", 1)[-1]) if queue else None
        start = _cursor(asked["next_token"]) if asked["next_token"] else None
        newest_first = asked["order"] == "DESCENDING"
        with self._lock:
            jobs = sorted(self._jobs.values(), key=lambda j: self._order[j.id], reverse=newest_first)
            jobs = [
                j
                for j in jobs
                if (asked["status"] is None or j.status == asked["status"])
                and (queue_arn is None or j.queue_arn == queue_arn)
                and (start is None or (self._order[j.id] <= start if newest_first else self._order[j.id] >= start))
            ]
            page, rest = jobs[: asked["max_results"]], jobs[asked["max_results"] :]
            answer: dict[str, Any] = {"jobs": [j.wire() for j in page]}
            if rest:
                answer["nextToken"] = _token(self._order[rest[0].id])
        return 200, answer


def _json(body: bytes, allow_empty: bool = False) -> Any:
    if not body.strip():
        if allow_empty:
            return {}
        raise bad_request("the request has no body")
    try:
        return json.loads(body)
    except ValueError as exc:
        raise bad_request("the request body is not JSON") from exc


def _token(place: int) -> str:
    """ListJobs' nextToken: opaque to the caller, the place of the next job in creation order here."""
    return base64.urlsafe_b64encode(json.dumps({"from": place}).encode()).decode()


def _cursor(token: str) -> int:
    try:
        place = json.loads(base64.urlsafe_b64decode(token.encode()))["from"]
    except (ValueError, KeyError, TypeError) as exc:
        raise bad_request("nextToken is not one this service gave") from exc
    if isinstance(place, bool) or not isinstance(place, int) or place < 0:
        raise bad_request("nextToken is not one this service gave")
    return place


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, sim: MediaConvertSim) -> None:
        self.sim = sim
        super().__init__((sim.config.host, sim.config.port), _Handler)


class _Handler(BaseHTTPRequestHandler):
    """One request (HTTP/1.0: the connection closes after each answer, so no handler thread outlives stop())."""

    server: _Server
    server_version = "mediaconvert-sim/1.0"

    def setup(self) -> None:
        super().setup()
        threading.current_thread().name = "mediaconvert-sim-conn"

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: tests read the jobs, not the access log

    def do_GET(self) -> None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self._send(400, {"message": "invalid Content-Length"}, "BadRequestException")
            return
        body = self.rfile.read(length) if length else b""
        parts = urllib.parse.urlsplit(self.path)
        try:
            status, payload = self.server.sim.handle(self.command, parts.path, parts.query, body)
        except DropAnswer:
            self.close_connection = True  # nothing written: the client sees the connection close without an answer
            return
        except ApiError as exc:
            self._send(exc.status, {"message": exc.message}, exc.name)
            return
        except Exception as exc:  # the server keeps serving whatever a request does
            self._send(500, {"message": f"internal: {type(exc).__name__}"}, "InternalServerErrorException")
            return
        self._send(status, payload)

    do_POST = do_PUT = do_DELETE = do_PATCH = do_GET

    def _send(self, status: int, payload: dict, error: str | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if error:
            self.send_header("x-amzn-ErrorType", error)
        self.end_headers()
        self.wfile.write(data)
