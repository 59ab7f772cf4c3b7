"""Fake video provider: a loopback HTTP server that the migration tool's tests, benchmark and demo talk to.

It imitates the parts of a real provider that make a migration hard: rate limits with
every common Retry-After dialect, idempotency keys (honoured or not), duplicate
conflicts, injected latency and failures, asynchronous processing and signed webhooks
with retries. Everything is standard library so it runs anywhere Python 3.12 does.

Run `python infra/provider_sim.py --help` for the command line, or use ProviderSim
from tests.
"""

from __future__ import annotations

import argparse
import base64
import copy
import email.utils
import hashlib
import heapq
import hmac
import ipaddress
import itertools
import json
import math
import os
import random
import signal
import socket
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RETRY_AFTER_MODES = ("seconds", "date", "x-ratelimit", "absent")
WEBHOOK_SCHEMES = ("seed", "standard")
# Delay before attempt 2, 3, ... of a webhook; len + 1 is the maximum number of tries.
WEBHOOK_BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0)
WEBHOOK_TIMEOUT_S = 5.0
REQUEST_LOG_MAX = 200_000
DEFAULT_PORT = 8790
STAT_KEYS = (
    "creates", "create_requests", "duplicate_creates_prevented", "throttled", "failed_injected", "rejected",
    "webhooks_delivered", "webhooks_failed", "videos", "duplicate_videos", "lookups",
)  # fmt: skip


class ConfigError(ValueError):
    """Raised when a configuration value or patch is rejected."""


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_http_url(value: object) -> bool:
    if not isinstance(value, str):
        return False
    parts = urllib.parse.urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


# Field name -> kind. Kinds drive both type checking in patch() and range checks below.
_KINDS: dict[str, object] = {
    "host": "str",
    "port": "int",
    "token": "optstr",
    "rate": "float",
    "burst": "int",
    "retry_after_mode": RETRY_AFTER_MODES,
    "latency_ms": "float",
    "latency_jitter_ms": "float",
    "fail_rate": "float",
    "honour_idempotency": "bool",
    "conflict_on_duplicate": "bool",
    "processing_delay_s": "float",
    "webhook_url": "optstr",
    "webhook_scheme": WEBHOOK_SCHEMES,
    "webhook_secret": "optstr",
    "webhooks_enabled": "bool",
}


@dataclass
class SimConfig:
    """All behaviour knobs of the simulator; patch() is the only validated way to change them."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    rate: float = 20.0
    burst: int = 20
    retry_after_mode: str = "seconds"
    latency_ms: float = 0.0
    latency_jitter_ms: float = 0.0
    fail_rate: float = 0.0
    honour_idempotency: bool = True
    conflict_on_duplicate: bool = False
    processing_delay_s: float = 1.0
    webhook_url: str | None = None
    webhook_scheme: str = "seed"
    webhook_secret: str | None = None
    webhooks_enabled: bool = True

    def __post_init__(self) -> None:
        # Route constructor values through the same checks as run-time patches.
        self.patch({f.name: getattr(self, f.name) for f in fields(self)})

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def patch(self, changes: dict) -> None:
        """Validate every change first, then apply them all, so a bad patch changes nothing."""
        if not isinstance(changes, dict):
            raise ConfigError("config patch must be a JSON object")
        clean = {}
        for name, value in changes.items():
            if name not in _KINDS:
                raise ConfigError(f"unknown config field: {name}")
            clean[name] = _check_field(name, _KINDS[name], value)
        for name, value in clean.items():
            setattr(self, name, value)


def _check_field(name: str, kind: object, value: object) -> object:
    # bool is a subclass of int, so it is excluded explicitly from the numeric kinds.
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{name} must be a boolean")
    elif kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{name} must be an integer")
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ConfigError(f"{name} must be a number")
        value = float(value)
    elif kind == "str":
        if not isinstance(value, str):
            raise ConfigError(f"{name} must be a string")
    elif kind == "optstr":
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{name} must be a string or null")
    elif isinstance(kind, tuple) and value not in kind:
        raise ConfigError(f"{name} must be one of {', '.join(kind)}")

    if name == "host" and not _is_loopback(value):
        raise ConfigError("host must be a loopback address (127.0.0.0/8, ::1 or localhost)")
    if name == "port" and not 0 <= value <= 65535:
        raise ConfigError("port must be between 0 and 65535")
    if name == "burst" and value < 1:
        raise ConfigError("burst must be at least 1")
    if name == "fail_rate" and not 0.0 <= value <= 1.0:
        raise ConfigError("fail_rate must be between 0 and 1")
    if name in ("rate", "latency_ms", "latency_jitter_ms", "processing_delay_s") and value < 0:
        raise ConfigError(f"{name} must not be negative")
    if name == "webhook_url" and value is not None and not _is_http_url(value):
        raise ConfigError("webhook_url must be an http(s) URL")
    return value


def sign_seed(secret: str, body: bytes) -> str:
    """Return the hex HMAC-SHA256 of the raw body, the provider's own ("seed") scheme."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def standard_key(secret: str) -> bytes:
    """Return the HMAC key for a Standard Webhooks secret (`whsec_<base64>`, else raw utf-8)."""
    if secret.startswith("whsec_"):
        try:
            return base64.b64decode(secret[len("whsec_") :], validate=True)
        except ValueError:
            pass  # Not valid base64: fall through and use the text itself, as for unprefixed secrets.
    return secret.encode()


def sign_standard(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """Return the Standard Webhooks 1.0 `webhook-signature` value (`v1,<base64>`)."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(standard_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def source_duration(url: str) -> tuple[float, float]:
    """Return (true duration, provider-reported duration) for a source URL, deterministically."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)

    def number(key: str) -> float | None:
        try:
            value = float(query[key][0])
        except (KeyError, IndexError, ValueError):
            return None
        return value if math.isfinite(value) else None

    duration = number("duration")
    if duration is None:
        # A stable hash, not hash(), so every run and process agrees on the value.
        n = int.from_bytes(hashlib.sha256(url.encode()).digest()[:8], "big")
        duration = 5.0 + (n % 595_000) / 1000.0
    drift = number("drift") or 0.0
    return duration, round(duration + drift, 3)


class Scheduler:
    """One background thread running callables at due times, shared by processing and webhook retries."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()  # Tie-breaker so callables are never compared.
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="provider-sim-scheduler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def call_later(self, delay_s: float, fn: Callable[[], None]) -> None:
        with self._cond:
            heapq.heappush(self._heap, (time.monotonic() + max(0.0, delay_s), next(self._seq), fn))
            self._cond.notify()

    def clear(self) -> None:
        with self._cond:
            self._heap.clear()

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._stopped:
                        return
                    now = time.monotonic()
                    if self._heap and self._heap[0][0] <= now:
                        fn = heapq.heappop(self._heap)[2]
                        break
                    self._cond.wait(self._heap[0][0] - now if self._heap else None)
            try:
                fn()  # Outside the condition so a task may schedule further tasks.
            except Exception as exc:  # A bad task must not kill the only scheduler thread.
                print(f"provider-sim: scheduled task failed: {exc!r}", file=sys.stderr, flush=True)


class ProviderSim:
    """The simulator's state and behaviour, plus the HTTP server and threads that expose it."""

    def __init__(self, config: SimConfig | None = None, verbose: bool = False) -> None:
        self.config = config or SimConfig()
        self.verbose = verbose
        self._lock = threading.Lock()
        self._rng = random.Random()
        self._server: _Server | None = None
        self._server_thread: threading.Thread | None = None
        self._scheduler: Scheduler | None = None
        self._pool: ThreadPoolExecutor | None = None
        # Webhooks need an opener that ignores *_proxy variables: receivers are on loopback.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self._reset_state()

    # ----- lifecycle -------------------------------------------------------------------

    def start(self) -> ProviderSim:
        """Bind the socket and serve in daemon threads; returns self for chaining."""
        if self._server is not None:
            raise RuntimeError("already started")
        self._server = _Server(self)
        self._scheduler = Scheduler()
        self._scheduler.start()
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="provider-sim-webhook")
        self._server_thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="provider-sim-server", daemon=True
        )
        self._server_thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close open connections and stop the scheduler and delivery pool."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.close_connections()  # Otherwise idle keep-alive handler threads outlive the server.
        server.server_close()
        if self._server_thread is not None:
            self._server_thread.join(timeout=5)
        self._scheduler.stop()
        # In-flight deliveries finish (bounded by the urllib timeout); queued ones are dropped.
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> ProviderSim:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Base URL of the running server, with the real port when port 0 was asked for."""
        if self._server is None:
            raise RuntimeError("not started")
        host, port = self._server.server_address[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    # ----- state -----------------------------------------------------------------------

    def _reset_state(self) -> None:
        self._videos: dict[str, dict] = {}
        self._durations: dict[str, float] = {}
        self._by_ref: dict[str, list[str]] = {}
        self._by_key: dict[str, str] = {}
        self._requests: deque[dict] = deque(maxlen=REQUEST_LOG_MAX)
        self._counters = dict.fromkeys((k for k in STAT_KEYS if k not in ("videos", "duplicate_videos")), 0)
        self._tokens = float(self.config.burst)
        self._refilled_at = time.monotonic()
        # Bumped on reset so completions and deliveries scheduled before it become no-ops.
        self._generation = getattr(self, "_generation", 0) + 1

    def reset(self) -> None:
        """Forget videos, counters and logs, refill the bucket and drop pending work."""
        with self._lock:
            self._reset_state()
        if self._scheduler is not None:
            self._scheduler.clear()

    def stats(self) -> dict:
        with self._lock:
            out = dict(self._counters)
            out["videos"] = len(self._videos)
            out["duplicate_videos"] = sum(1 for ids in self._by_ref.values() if len(ids) > 1)
            return {k: out[k] for k in STAT_KEYS}

    def requests_log(self) -> list[dict]:
        with self._lock:
            return list(self._requests)

    def config_dict(self) -> dict:
        with self._lock:
            return self.config.to_dict()

    def patch_config(self, changes: dict) -> dict:
        """Apply a validated patch under the state lock and return the new config."""
        # host and port are accepted but only take effect on the next start().
        with self._lock:
            self.config.patch(changes)
            self._tokens = min(self._tokens, float(self.config.burst))
            return self.config.to_dict()

    # ----- API operations (return status, JSON body, extra headers) --------------------

    def _authorized(self, cfg: SimConfig, authorization: str | None) -> bool:
        if cfg.token is None:
            return True
        return hmac.compare_digest((authorization or "").encode(), f"Bearer {cfg.token}".encode())

    def _take_token(self, cfg: SimConfig) -> float | None:
        """Consume one create token; return None if allowed, else seconds until one is available."""
        if cfg.rate <= 0:
            return None  # rate 0 means unlimited.
        now = time.monotonic()
        self._tokens = min(float(cfg.burst), self._tokens + (now - self._refilled_at) * cfg.rate)
        self._refilled_at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return None
        return (1.0 - self._tokens) / cfg.rate

    def create_video(self, authorization: str | None, key: str | None, raw: bytes) -> tuple[int, dict, dict]:
        arrived = time.time()
        body, parse_error = _parse_json(raw)
        metadata = body.get("metadata") if isinstance(body, dict) else None
        ref = metadata.get("migration_ref") if isinstance(metadata, dict) else None
        log_ref = ref if isinstance(ref, str) else None
        with self._lock:
            cfg = copy.copy(self.config)
            self._counters["create_requests"] += 1

        def finish(status: int, payload: dict, headers: dict | None = None, told: float | None = None):
            with self._lock:
                self._requests.append(
                    {"t": arrived, "key": key, "ref": log_ref, "status": status, "retry_after_s": told}
                )
                if status == 400:
                    self._counters["rejected"] += 1
            return status, payload, headers or {}

        if not self._authorized(cfg, authorization):
            return finish(401, {"error": "unauthorized"})

        delay_ms = cfg.latency_ms + (self._rng.uniform(0, cfg.latency_jitter_ms) if cfg.latency_jitter_ms else 0)
        if delay_ms > 0:
            time.sleep(delay_ms / 1000.0)  # Outside the lock: slow requests must not serialise others.

        injected, wait = False, None
        with self._lock:
            if cfg.fail_rate > 0 and self._rng.random() < cfg.fail_rate:
                self._counters["failed_injected"] += 1
                injected = True
            else:
                wait = self._take_token(cfg)
                if wait is not None:
                    self._counters["throttled"] += 1
        if injected:
            return finish(500, {"error": "injected"})
        if wait is not None:
            told = max(1, math.ceil(wait))
            headers = {
                "seconds": {"Retry-After": str(told)},
                "date": {"Retry-After": email.utils.formatdate(time.time() + told, usegmt=True)},
                "x-ratelimit": {"X-RateLimit-Retry-After": str(told)},
                "absent": {},
            }[cfg.retry_after_mode]
            return finish(429, {"error": "rate limited"}, headers, None if not headers else float(told))

        reason = parse_error or _validate_create(body)
        if reason:
            return finish(400, {"error": reason})
        url = body["input"]
        if "unsupported" in url:
            return finish(400, {"error": "unsupported source"})

        with self._lock:
            seen = self._by_key.get(key) if cfg.honour_idempotency and key is not None else None
            if seen in self._videos:
                self._counters["duplicate_creates_prevented"] += 1
                result = (200, copy.deepcopy(self._videos[seen]))
            elif cfg.conflict_on_duplicate and self._by_ref.get(ref):
                self._counters["duplicate_creates_prevented"] += 1
                result = (409, {"error": "exists"})
            else:
                video = {
                    "id": "vid_" + uuid.uuid4().hex,
                    "status": "preparing",
                    "input": url,
                    "metadata": copy.deepcopy(metadata),
                    "created_at": int(time.time()),
                }
                self._videos[video["id"]] = video
                self._durations[video["id"]] = source_duration(url)[1]
                self._by_ref.setdefault(ref, []).append(video["id"])
                if key is not None:
                    self._by_key[key] = video["id"]
                self._counters["creates"] += 1
                generation = self._generation
                result = (201, copy.deepcopy(video))
        if result[0] == 201 and self._scheduler is not None:
            vid = result[1]["id"]
            self._scheduler.call_later(cfg.processing_delay_s, lambda: self._complete(vid, generation))
        return finish(*result)

    def list_videos(self, authorization: str | None, query: str) -> tuple[int, dict, dict]:
        with self._lock:
            cfg = copy.copy(self.config)
        if not self._authorized(cfg, authorization):
            return 401, {"error": "unauthorized"}, {}
        params = urllib.parse.parse_qs(query)
        with self._lock:
            if "metadata[migration_ref]" in params:
                self._counters["lookups"] += 1
                ref = params["metadata[migration_ref]"][0]
                ids = self._by_ref.get(ref, [])
            else:
                ids = list(self._videos)
            data = [copy.deepcopy(self._videos[i]) for i in ids if i in self._videos]
        return 200, {"data": data}, {}

    def get_video(self, authorization: str | None, vid: str) -> tuple[int, dict, dict]:
        with self._lock:
            cfg = copy.copy(self.config)
            video = copy.deepcopy(self._videos.get(vid))
        if not self._authorized(cfg, authorization):
            return 401, {"error": "unauthorized"}, {}
        if video is None:
            return 404, {"error": "not found"}, {}
        return 200, video, {}

    # ----- processing and webhooks -----------------------------------------------------

    def _complete(self, vid: str, generation: int) -> None:
        """Finish processing one video (scheduler thread) and queue its webhook."""
        with self._lock:
            video = self._videos.get(vid)
            if generation != self._generation or video is None:
                return
            if "corrupt" in video["input"]:
                video["status"] = "errored"
                video["error"] = {"type": "invalid_input", "message": "source could not be ingested"}
            else:
                video["status"] = "ready"
                video["duration"] = self._durations[vid]
            cfg = copy.copy(self.config)
            snapshot = copy.deepcopy(video)
        if not cfg.webhooks_enabled or not cfg.webhook_url:
            return
        event = {
            "id": "evt_" + uuid.uuid4().hex,
            "type": f"video.{snapshot['status']}",
            "created_at": int(time.time()),
            "data": snapshot,
        }
        body = json.dumps(event, separators=(",", ":")).encode()
        self._submit_delivery(cfg, event["id"], body, 0, generation)

    def _submit_delivery(self, cfg: SimConfig, evt_id: str, body: bytes, attempt: int, generation: int) -> None:
        try:
            self._pool.submit(self._deliver, cfg, evt_id, body, attempt, generation)
        except RuntimeError:
            pass  # The pool is shut down: the simulator is stopping.

    def _deliver(self, cfg: SimConfig, evt_id: str, body: bytes, attempt: int, generation: int) -> None:
        """Make one delivery attempt (pool thread); on failure schedule the next or give up."""
        if generation != self._generation:
            return
        headers = {"Content-Type": "application/json", "User-Agent": "provider-sim"}
        if cfg.webhook_scheme == "standard":
            ts = int(time.time())  # Fresh per attempt, as Standard Webhooks senders do; the id stays.
            headers.update({"webhook-id": evt_id, "webhook-timestamp": str(ts)})
            if cfg.webhook_secret:
                headers["webhook-signature"] = sign_standard(cfg.webhook_secret, evt_id, ts, body)
        elif cfg.webhook_secret:
            headers["x-signature"] = sign_seed(cfg.webhook_secret, body)
        request = urllib.request.Request(cfg.webhook_url, data=body, headers=headers, method="POST")
        try:
            with self._opener.open(request, timeout=WEBHOOK_TIMEOUT_S) as response:
                ok = 200 <= response.status < 300
        except urllib.error.HTTPError as exc:
            exc.close()
            ok = False
        except (OSError, ValueError):  # URLError, refused, timeout, malformed URL.
            ok = False
        with self._lock:
            if generation != self._generation:
                return
            if ok:
                self._counters["webhooks_delivered"] += 1
                return
            if attempt >= len(WEBHOOK_BACKOFF_S):
                self._counters["webhooks_failed"] += 1
                return
        scheduler = self._scheduler
        if scheduler is not None:
            scheduler.call_later(
                WEBHOOK_BACKOFF_S[attempt],
                lambda: self._submit_delivery(cfg, evt_id, body, attempt + 1, generation),
            )


def _parse_json(raw: bytes) -> tuple[object, str | None]:
    if not raw:
        return None, "request body must be a JSON object"
    try:
        return json.loads(raw), None
    except (ValueError, UnicodeDecodeError):
        return None, "request body is not valid JSON"


def _validate_create(body: object) -> str | None:
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    if not _is_http_url(body.get("input")):
        return "input must be an http(s) URL string"
    metadata = body.get("metadata")
    if not isinstance(metadata, dict):
        return "metadata must be an object"
    ref = metadata.get("migration_ref")
    if not isinstance(ref, str) or not ref:
        return "metadata.migration_ref must be a non-empty string"
    return None


class _Server(ThreadingHTTPServer):
    """Threaded HTTP server that remembers open connections so stop() can close them."""

    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True

    def __init__(self, sim: ProviderSim) -> None:
        self.sim = sim
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        host = sim.config.host
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, sim.config.port), _Handler)

    def process_request(self, request, client_address):
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._open_lock:
            sockets = list(self._open)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # Wakes the handler thread blocked reading the next request.
            except OSError:
                pass


class _Handler(BaseHTTPRequestHandler):
    """Routes HTTP requests to ProviderSim and turns every outcome into a JSON response."""

    protocol_version = "HTTP/1.1"  # Keep-alive: clients under test reuse connections.
    server_version = "provider-sim/1.0"
    server: _Server

    def setup(self) -> None:
        super().setup()
        # A recognisable name lets tests check that no connection thread outlives stop().
        threading.current_thread().name = "provider-sim-conn"

    def log_message(self, format: str, *args: object) -> None:
        if self.server.sim.verbose:
            super().log_message(format, *args)

    def do_GET(self) -> None:
        self._dispatch(self.command)

    # Every method goes through the router, which answers 405 where a method does not apply.
    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _send(self, status: int, payload: object, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _read_body(self) -> bytes | None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return None
        if length < 0:
            return None
        return self.rfile.read(length) if length else b""

    def _dispatch(self, method: str) -> None:
        raw = self._read_body()  # Always drain the body so the keep-alive stream stays in step.
        if raw is None:
            self.close_connection = True  # Cannot tell where the next request starts.
            self._send(400, {"error": "invalid Content-Length"})
            return
        parts = urllib.parse.urlsplit(self.path)
        try:
            status, payload, headers = self._route(method, parts.path, parts.query, raw)
        except Exception as exc:  # The server must keep serving whatever a request does.
            status, payload, headers = 500, {"error": f"internal: {exc!r}"}, {}
        self._send(status, payload, headers)

    def _route(self, method: str, path: str, query: str, raw: bytes) -> tuple[int, object, dict]:
        sim = self.server.sim
        auth = self.headers.get("Authorization")
        routes: dict[str, dict[str, Callable[[], tuple[int, object, dict]]]] = {
            "/videos": {
                "POST": lambda: sim.create_video(auth, self.headers.get("Idempotency-Key"), raw),
                "GET": lambda: sim.list_videos(auth, query),
            },
            "/_sim/stats": {"GET": lambda: (200, sim.stats(), {})},
            "/_sim/requests": {"GET": lambda: (200, sim.requests_log(), {})},
            "/_sim/config": {"GET": lambda: (200, sim.config_dict(), {}), "POST": lambda: self._patch(raw)},
            "/_sim/reset": {"POST": self._reset},
        }
        path = path.rstrip("/") or "/"
        if path in routes:
            methods = routes[path]
        elif path.startswith("/videos/") and "/" not in path[len("/videos/") :]:
            vid = urllib.parse.unquote(path[len("/videos/") :])
            methods = {"GET": lambda: sim.get_video(auth, vid)}
        else:
            return 404, {"error": "not found"}, {}
        if method not in methods:
            return 405, {"error": "method not allowed"}, {"Allow": ", ".join(sorted(methods))}
        return methods[method]()

    def _reset(self) -> tuple[int, object, dict]:
        self.server.sim.reset()
        return 200, {"reset": True}, {}

    def _patch(self, raw: bytes) -> tuple[int, object, dict]:
        changes, error = _parse_json(raw)
        if error:
            return 400, {"error": error}, {}
        try:
            return 200, self.server.sim.patch_config(changes), {}
        except ConfigError as exc:
            return 400, {"error": str(exc)}, {}


def build_parser() -> argparse.ArgumentParser:
    d = SimConfig()
    p = argparse.ArgumentParser(
        prog="provider_sim.py",
        description="Fake video provider on loopback for the migration tool's tests, benchmark and demo. "
        "Every setting can also be changed at run time with POST /_sim/config.",
    )
    add = p.add_argument
    add("--host", default=d.host, help="loopback address to bind; anything else is refused (default %(default)s)")
    add("--port", type=int, default=d.port, help="port to listen on; 0 picks a free one (default %(default)s)")
    add("--token", default=os.environ.get("SIM_TOKEN"), help="require 'Authorization: Bearer TOKEN' (env SIM_TOKEN)")
    add("--rate", type=float, default=d.rate, help="creates per second allowed, 0 = unlimited (default %(default)s)")
    add("--burst", type=int, default=d.burst, help="token bucket capacity for creates (default %(default)s)")
    add(
        "--retry-after-mode",
        choices=RETRY_AFTER_MODES,
        default=d.retry_after_mode,
        help="how a 429 says when to retry: Retry-After seconds or HTTP-date, X-RateLimit-Retry-After, or nothing",
    )
    add("--latency-ms", type=float, default=d.latency_ms, help="delay added to every create (default %(default)s)")
    add("--latency-jitter-ms", type=float, default=d.latency_jitter_ms, help="extra uniform 0..N ms random delay")
    add("--fail-rate", type=float, default=d.fail_rate, help="probability 0..1 that a create answers 500 'injected'")
    add(
        "--ignore-idempotency",
        dest="honour_idempotency",
        action="store_false",
        help="ignore Idempotency-Key, so a retried create makes a duplicate video",
    )
    add("--conflict-on-duplicate", action="store_true", help="answer 409 if a video with the migration_ref exists")
    add(
        "--processing-delay-s",
        type=float,
        default=d.processing_delay_s,
        help="seconds from create to ready/errored (default %(default)s)",
    )
    add("--webhook-url", default=None, help="where to POST video.ready / video.errored events")
    add(
        "--webhook-scheme",
        choices=WEBHOOK_SCHEMES,
        default=d.webhook_scheme,
        help="'seed': x-signature hex HMAC of the body; 'standard': Standard Webhooks 1.0 (default %(default)s)",
    )
    add(
        "--webhook-secret",
        default=os.environ.get("SIM_WEBHOOK_SECRET"),
        help="signing secret, whsec_<base64> for standard (env SIM_WEBHOOK_SECRET)",
    )
    add("--no-webhooks", dest="webhooks_enabled", action="store_false", help="never send webhooks; clients must poll")
    add("--verbose", action="store_true", help="log every request to stderr")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the simulator from the command line until SIGTERM or SIGINT."""
    parser = build_parser()
    args = vars(parser.parse_args(argv))
    verbose = args.pop("verbose")
    try:
        config = SimConfig(**args)
    except ConfigError as exc:
        parser.error(str(exc))
    sim = ProviderSim(config, verbose=verbose)
    try:
        sim.start()
    except OSError as exc:
        print(f"provider-sim: cannot listen on {config.host}:{config.port}: {exc}", file=sys.stderr)
        return 1
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    print(f"provider-sim listening on {sim.url}", flush=True)
    while not stopping.wait(0.5):  # A timed wait keeps the main thread responsive to signals.
        pass
    sim.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
