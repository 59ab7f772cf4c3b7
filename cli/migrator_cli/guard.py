"""The probe's guard: a proxy, one per probe, through which ffprobe reaches public addresses only.

A source URL is untrusted, and so is where its server sends ffprobe next: a redirect (or a
playlist, were one ever let through) can point at the cloud's metadata service, at localhost
or at the private network the operator runs in. Checking the source URL once is not enough,
and checking a name and then letting ffprobe resolve it again leaves a DNS-rebinding gap. So
every connection ffprobe makes goes through this proxy (ffprobe 5.1, with `http_proxy` set,
sends http requests in absolute form and tunnels https with CONNECT; it ignores
`https_proxy`). The proxy resolves each target itself, refuses it unless every address the
name resolves to is globally routable (`address_refusal`), and connects to an address it
checked, never to the name again. TLS stays end to end: a CONNECT is a byte pipe, and
ffprobe verifies the certificate as before.

What the proxy refused, could not resolve or reach, or cut short itself is kept as
`GuardEvent`s for the probe to classify: a refusal rejects the source; a DNS or connect
failure, or a connection the guard turned away or ended (over its bound, a request that
never came, an idle pipe), leaves it pending. Those last are the guard's own doing, and
ffprobe's words for them ("End of file", "Server returned 400", "moov atom not found" after
a cut) would otherwise blame the source.

`parse_request` is pure and `Guard` does the I/O; the address policy (`address_refusal`,
`resolve_host`) is `migrator.addresses`, shared with the tracks worker's fetch.
"""

from __future__ import annotations

import errno
import os
import selectors
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

# The address policy lives with the functions (the tracks worker's fetch applies it too).
from migrator.addresses import IPAddress, address_refusal, is_public, resolve_host

__all__ = [
    "Guard",
    "GuardEvent",
    "IPAddress",
    "Request",
    "address_refusal",
    "is_public",
    "parse_request",
    "resolve_host",
]

MAX_HEAD = 16 * 1024  # ffprobe's request heads are a few hundred bytes
MAX_CONNECTIONS = 8  # at once; ffprobe holds one or two (a seek opens the next before closing)
HEAD_TIMEOUT_S = 10.0  # ffprobe writes its request as soon as it connects
CHUNK = 64 * 1024
_DROPPED_HEADERS = (b"proxy-", b"connection:", b"keep-alive:")

# --- requests (pure) --------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """Where one proxied connection goes, and what to send there first."""

    host: str
    port: int
    tunnel: bool  # CONNECT: answer 200, then pipe bytes both ways
    head: bytes = b""  # for plain http: the request rewritten to origin form


def parse_request(head: bytes) -> Request | str:
    """The request in `head` (up to its blank line), or why it is not one this proxy serves."""
    lines = head.split(b"\r\n")
    try:
        method, target, version = lines[0].decode("ascii").split(" ")
    except (UnicodeDecodeError, ValueError):
        return "malformed request line"
    if not version.startswith("HTTP/1."):
        return "not HTTP/1.x"
    if method == "CONNECT":
        parts = urlsplit(f"//{target}")
    elif method in ("GET", "HEAD"):
        parts = urlsplit(target)
        if parts.scheme != "http":
            return "not an absolute http URL"
    else:
        return f"method {method[:20]} not served"
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        return "bad port"
    if not host:
        return "no host or port"
    if method == "CONNECT":
        return Request(host, port, tunnel=True) if port is not None else "no host or port"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    # One request per connection: a second one on it would reach this host unchecked.
    headers = [line for line in lines[1:] if line and not line.lower().startswith(_DROPPED_HEADERS)]
    rewritten = b"\r\n".join([f"{method} {path} {version}".encode(), *headers, b"Connection: close", b"", b""])
    return Request(host, port or 80, tunnel=False, head=rewritten)


@dataclass(frozen=True)
class GuardEvent:
    kind: str  # "refused" (policy), "unresolved" (DNS), "unreachable" (connect failed) or "cut" (by the guard)
    host: str  # "" for a connection cut before its request was read
    port: int
    addresses: tuple[str, ...] = ()  # for "refused": the addresses the policy refused
    detail: str = ""  # for "unresolved" and "unreachable": the OS's words; for "cut": why


# --- the proxy --------------------------------------------------------------------------------


def _reply(sock: socket.socket, status: str) -> None:
    try:
        sock.sendall(f"HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
    except OSError:
        pass


class Guard:
    """A CONNECT and absolute-form HTTP proxy on 127.0.0.1 that connects only where `allowed` says.

    Use as a context manager: on exit the listener, every connection and every thread end.
    `allowed` is the per-address policy (default `is_public`), `resolve` the DNS lookup
    (default `resolve_host`); tests inject them.
    """

    def __init__(
        self,
        *,
        allowed: Callable[[IPAddress], bool] | None = None,
        resolve: Callable[[str, int], list[IPAddress]] | None = None,
        timeout_s: float = 60.0,
        max_connections: int | None = None,
    ):
        self.allowed = allowed or is_public
        self.resolve = resolve or resolve_host
        self.timeout_s = timeout_s
        self.events: list[GuardEvent] = []
        self._lock = threading.Lock()
        self.max_connections = MAX_CONNECTIONS if max_connections is None else max_connections
        self._slots = threading.BoundedSemaphore(self.max_connections)
        self._sockets: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._stopped = threading.Event()
        # Every wait selects on this too: one byte written on close wakes them all at once.
        self._wake_r, self._wake_w = socket.socketpair()
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=16)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._acceptor = threading.Thread(target=self._accept, name="probe-guard", daemon=True)

    def __enter__(self) -> Guard:
        self._acceptor.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._wake_w.send(b"x")
        if self._acceptor.is_alive():
            self._acceptor.join(5)
        with self._lock:
            sockets, threads = list(self._sockets), list(self._threads)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in threads:
            thread.join(5)
        self._listener.close()
        self._wake_r.close()
        self._wake_w.close()

    def first(self, kind: str) -> GuardEvent | None:
        with self._lock:
            return next((e for e in self.events if e.kind == kind), None)

    def _record(self, event: GuardEvent) -> None:
        with self._lock:
            self.events.append(event)

    def _wait(self, *socks: socket.socket, timeout: float | None, event: int = selectors.EVENT_READ) -> list:
        """The sockets ready (to read, or `event`), [] on timeout; raises OSError once the guard is closing."""
        with selectors.DefaultSelector() as selector:
            selector.register(self._wake_r, selectors.EVENT_READ)
            for sock in socks:
                selector.register(sock, event)
            ready = [key.fileobj for key, _ in selector.select(timeout)]
        if self._wake_r in ready or self._stopped.is_set():
            raise OSError("guard closed")
        return ready

    def _accept(self) -> None:
        while True:
            try:
                self._wait(self._listener, timeout=None)
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                # Over the bound. A bare close would reach ffprobe as "End of file", which
                # reads like the source's answer: say 503, and record that it was ours.
                self._record(GuardEvent("cut", "", 0, detail=f"connection limit ({self.max_connections}) reached"))
                client.settimeout(1)
                _reply(client, "503 Service Unavailable")
                client.close()
                continue
            thread = threading.Thread(target=self._serve, args=(client,), name="probe-guard-conn", daemon=True)
            with self._lock:
                self._sockets.add(client)
                self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            thread.start()

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | str | None = None
        try:
            client.settimeout(self.timeout_s)
            got = self._read_head(client)
            if isinstance(got, str):
                return _reply(client, got)
            head, rest = got
            request = parse_request(head)
            if isinstance(request, str):
                return _reply(client, "400 Bad Request")
            upstream = self._connect(request)
            if isinstance(upstream, str):
                return _reply(client, upstream)
            if request.tunnel:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream.sendall(request.head)
            if rest:
                upstream.sendall(rest)
            self._pipe(client, upstream, request)
        except OSError:
            pass
        finally:
            opened = [s for s in (client, upstream) if isinstance(s, socket.socket)]
            with self._lock:
                self._sockets.difference_update(opened)
            for sock in opened:
                sock.close()
            self._slots.release()

    def _read_head(self, client: socket.socket) -> tuple[bytes, bytes] | str:
        """The request head and whatever came after it, or the status to answer when it is too long, slow or cut."""
        data = b""
        wait = min(HEAD_TIMEOUT_S, self.timeout_s)
        while b"\r\n\r\n" not in data:
            if len(data) > MAX_HEAD:
                return "400 Bad Request"
            if not self._wait(client, timeout=wait):
                # ffprobe writes its request at once: a slow one says the machine is busy, not
                # that the source is bad (a 400 would be taken for the source's answer).
                self._record(GuardEvent("cut", "", 0, detail=f"no request within {wait:g} s"))
                return "408 Request Timeout"
            chunk = client.recv(4096)
            if not chunk:
                return "400 Bad Request"
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        if len(head) > MAX_HEAD:
            return "400 Bad Request"
        return head + b"\r\n\r\n", rest

    def _connect(self, request: Request) -> socket.socket | str:
        """A socket to an address of the target the policy allows, or the status to answer instead."""
        try:
            addresses = self.resolve(request.host, request.port)
        except (OSError, UnicodeError) as exc:
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self._record(GuardEvent("unresolved", request.host, request.port, detail=detail))
            return "502 Bad Gateway"
        refused = tuple(str(ip) for ip in addresses if not self.allowed(ip))
        if refused or not addresses:
            # All or nothing: a name with one public and one private answer could be steered.
            self._record(GuardEvent("refused", request.host, request.port, addresses=refused))
            return "403 Forbidden"
        error = OSError("no address")
        for ip in addresses:
            try:
                # The checked address itself: the name is never looked up again.
                return self._open(ip, request.port)
            except OSError as exc:
                if self._stopped.is_set():
                    raise
                error = exc
        detail = error.strerror or str(error)
        self._record(GuardEvent("unreachable", request.host, request.port, detail=detail))
        return "502 Bad Gateway"

    def _open(self, ip: IPAddress, port: int) -> socket.socket:
        """A connection to `ip`: connecting without blocking, so that closing the guard ends the wait."""
        sock = socket.socket(socket.AF_INET6 if ip.version == 6 else socket.AF_INET, socket.SOCK_STREAM)
        with self._lock:
            self._sockets.add(sock)
        try:
            sock.setblocking(False)
            if (code := sock.connect_ex((str(ip), port))) not in (0, errno.EINPROGRESS):
                raise OSError(code, os.strerror(code))
            if not self._wait(sock, timeout=self.timeout_s, event=selectors.EVENT_WRITE):
                raise OSError(errno.ETIMEDOUT, os.strerror(errno.ETIMEDOUT))
            if code := sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                raise OSError(code, os.strerror(code))
            sock.settimeout(self.timeout_s)
            return sock
        except OSError:
            with self._lock:
                self._sockets.discard(sock)
            sock.close()
            raise

    def _pipe(self, client: socket.socket, upstream: socket.socket, request: Request) -> None:
        """Copy bytes both ways until either side closes, or neither says anything for timeout_s."""
        other = {client: upstream, upstream: client}
        while True:
            ready = self._wait(client, upstream, timeout=self.timeout_s)
            if not ready:
                # Cutting the transfer leaves ffprobe a truncated file it would blame on the source.
                detail = f"nothing passed for {self.timeout_s:g} s"
                self._record(GuardEvent("cut", request.host, request.port, detail=detail))
                return
            for sock in ready:
                data = sock.recv(CHUNK)
                if not data:
                    return
                other[sock].sendall(data)
