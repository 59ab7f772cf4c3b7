"""The HTTP transport every provider shares: one pooled session, timeouts, no retries, no secrets in errors.

Answers come back as raw facts (status, parsed body, text, headers); what they mean is
each provider's business. Retries are never the transport's: the ledger decides them.
Credentials are read lazily, per request, through `auth` (so a rotated secret is picked
up when the cache refreshes) and never appear in an exception or a log line.

An answer is untrusted in size and in pace too. The body is streamed and reading stops
at the cap (the connection is then closed, not drained), so a 128 MiB answer costs about
the cap in memory, not twice its size; and every request has one overall deadline
(connect budget + read budget), which a watchdog enforces by shutting the connection's
socket down, so a server that trickles a byte every few seconds cannot hold the
invocation past its budget (requests' own read timeout is per socket read, not overall).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

MAX_BODY_BYTES = 1024 * 1024
CHUNK_BYTES = 64 * 1024


# What watches every request this context sends (`migrator doctor --source/--target`, cli/migrator_cli/
# first_contact.py): `before(method, url)` may refuse one (by raising) before it is sent, `after(method, url,
# params, json_body, answer)` sees each answer and what asked for it. None, as in every Lambda: nothing watches.
class Watch(Protocol):
    def before(self, method: str, url: str) -> None: ...

    def after(
        self, method: str, url: str, params: Mapping[str, str] | None, json_body: object, answer: Answer
    ) -> None: ...


_watch: ContextVar[Watch | None] = ContextVar("migrator_http_watch", default=None)


@contextlib.contextmanager
def watching(watch: Watch):
    """Every request sent in this context (this thread) shown to `watch` before it goes and once answered."""
    token = _watch.set(watch)
    try:
        yield watch
    finally:
        _watch.reset(token)


@dataclass(frozen=True)
class Answer:
    status: int
    body: object  # parsed JSON, or None when the body is not JSON (or was cut at the cap)
    text: str
    headers: dict = field(default_factory=dict)
    truncated: bool = False  # longer than the cap: `text` is its start, and it was never parsed


class TransportError(Exception):
    """No HTTP answer: timeout, refused connection, TLS failure. Carries no secrets."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


class _Deadline:
    """One request's overall deadline: at it, the socket of the connection serving the request
    (registered by `_Registers`) is shut down, which ends any blocked read."""

    def __init__(self, budget_s: float):
        self.expires_at = time.monotonic() + budget_s
        self.connection: HTTPConnection | None = None
        # The socket the answer is read from: http.client hands it to the response and clears
        # `connection.sock` when the answer ends with the connection (HTTP/1.0, Connection: close).
        self.sock: socket.socket | None = None
        self.expired = False
        self._lock = threading.Lock()
        self._done = False
        self._timer = threading.Timer(budget_s, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._token = _serving.set(self)
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        with self._lock:  # after this the timer can no longer touch a connection back in the pool
            self._done = True
        self._timer.cancel()
        _serving.reset(self._token)

    def passed(self) -> bool:
        return self.expired or time.monotonic() >= self.expires_at

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.expired = True
            sock = self.sock or getattr(self.connection, "sock", None)
            if sock is not None:
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain socket's: safe under TLS too


_serving: ContextVar[_Deadline | None] = ContextVar("migrator_http_deadline", default=None)


class _Registers(HTTPConnection):
    """A connection that tells the request it serves about itself (so its deadline can cut it off)."""

    def request(self, *args, **kwargs):
        deadline = _serving.get()
        if deadline is not None:
            deadline.connection = self
        return super().request(*args, **kwargs)

    def getresponse(self, *args, **kwargs):
        deadline = _serving.get()
        if deadline is not None:
            deadline.sock = self.sock
        return super().getresponse(*args, **kwargs)


class _WatchedHTTPConnection(_Registers, HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Registers, HTTPSConnection):
    pass


class _WatchedPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedTLSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


class _WatchedAdapter(HTTPAdapter):
    """requests' adapter, with connections a request's deadline can cut off."""

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _WatchedPool, "https": _WatchedTLSPool}

    def proxy_manager_for(self, *args, **kwargs):
        manager = super().proxy_manager_for(*args, **kwargs)
        manager.pool_classes_by_scheme = {"http": _WatchedPool, "https": _WatchedTLSPool}
        return manager


class HttpTransport:
    def __init__(
        self,
        base_url: str,
        auth: Callable[[], Mapping[str, str]],
        session: requests.Session | None = None,
        connect_timeout_s: float = 3.05,
        read_timeout_s: float = 10.0,
        pool_size: int = 10,
    ):
        self.base = base_url.rstrip("/")
        self._auth = auth
        self.timeout = (connect_timeout_s, read_timeout_s)
        # The whole request, however the server paces its bytes.
        self.deadline_s = connect_timeout_s + read_timeout_s
        if session is None:
            session = requests.Session()
            # requests retries nothing by default; keep it so: retries are the ledger's call.
            adapter = _WatchedAdapter(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0)
            session.mount("https://", adapter)
            session.mount("http://", adapter)
        self.session = session

    def send(
        self,
        method: str,
        path: str,
        json_body: Any = None,  # any JSON value
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
        files: Mapping[str, tuple[str, bytes, str]] | None = None,
        data: bytes | None = None,
    ) -> Answer:
        """One request; `files` sends a multipart/form-data body of (file name, bytes, media type) parts,
        `data` a body of raw bytes (its Content-Type in `headers`: Vimeo's text-track file)."""
        watch = _watch.get()
        if watch is not None:
            watch.before(method, self.base + path)
        all_headers = {"Accept": "application/json", **self._auth(), **(headers or {})}
        with _Deadline(self.deadline_s) as deadline:
            try:
                resp = self.session.request(
                    method,
                    self.base + path,
                    json=json_body,
                    files=files,
                    data=data,
                    params=params,
                    headers=all_headers,
                    timeout=self.timeout,
                    stream=True,
                )
            except requests.Timeout:
                raise TransportError("timeout") from None
            except requests.RequestException as exc:
                if deadline.expired:
                    raise TransportError("timeout") from None
                if isinstance(exc, requests.ConnectionError):
                    raise TransportError("connection error") from None
                raise TransportError(f"request error: {type(exc).__name__}") from None
            except (UnicodeError, ValueError) as exc:  # a header or URL http.client cannot encode
                raise TransportError(f"request could not be encoded: {type(exc).__name__}") from None
            try:
                raw, truncated = _read_capped(resp, max_body_bytes, deadline)
            finally:
                resp.close()  # a cut body's connection is closed, never handed back to the pool half read
        text = raw.decode("utf-8", errors="replace")
        body = None
        if not truncated and text.strip():
            try:
                body = json.loads(text)
            except (ValueError, RecursionError):
                body = None
        answer = Answer(resp.status_code, body, text, dict(resp.headers), truncated)
        if watch is not None:
            watch.after(method, self.base + path, params, json_body, answer)
        return answer


def _read_capped(resp: requests.Response, cap: int, deadline: _Deadline) -> tuple[bytes, bool]:
    """The body's first `cap` bytes, and whether there was more; TransportError past the deadline."""
    if resp.raw is None:  # a body already in memory (a session that does not stream)
        content = resp.content or b""
        return content[:cap], len(content) > cap
    buf = bytearray()
    try:
        for chunk in resp.iter_content(CHUNK_BYTES):
            if deadline.passed():
                raise TransportError("timeout")
            room = cap - len(buf)
            if len(chunk) > room:
                buf += chunk[:room]
                return bytes(buf), True
            buf += chunk
    except (requests.RequestException, OSError):  # the body broke off (or the watchdog cut it)
        raise TransportError("timeout" if deadline.expired else "connection error") from None
    if deadline.expired:  # a body without a length ends "cleanly" when the watchdog cuts it
        raise TransportError("timeout")
    return bytes(buf), False


def quote(segment: str) -> str:
    """One path segment, every reserved character escaped."""
    return requests.utils.quote(segment, safe="")
