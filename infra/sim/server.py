"""The HTTP layer: a threaded loopback server that hands API requests to ProviderSim and serves /_sim/*.

The /_sim/ control endpoints (stats, requests, config, reset, tracks: the caption tracks
each video holds) are the same in every profile; everything else is the active profile's
API. A reply marked lost is never written: the connection closes without an answer.
"""

from __future__ import annotations

import json
import socket
import threading
import urllib.parse
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Protocol

from . import media
from .config import ConfigError, SimConfig
from .library import Served
from .profile import Reply
from .request import OPS, ApiRequest, parse_json


class ProviderSim(Protocol):
    """What the HTTP layer asks of the simulator it serves (core.ProviderSim, which starts this server): a
    protocol, so the layer imports nothing of the core's and the core imports it."""

    verbose: bool

    @property
    def config(self) -> SimConfig: ...

    @property
    def url(self) -> str: ...

    def handle(self, request: ApiRequest) -> Reply: ...

    def stats(self) -> dict: ...

    def text_tracks(self) -> list[dict]: ...

    def requests_log(self, ops: Sequence[str] | None = ("create",)) -> list[dict]: ...

    def config_dict(self) -> dict: ...

    def patch_config(self, changes: dict) -> dict: ...

    def reset(self, keep_account: bool = False) -> None: ...

    def playback_media(self, path: str, query: str) -> media.Answer: ...

    def media(self, method: str, path: str, query: str, range_header: str | None) -> Served: ...

    def change_library(self, delete: list[int], make_private: list[int]) -> None: ...


class Server(ThreadingHTTPServer):
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


Answer = tuple[int, object, dict]


class _Handler(BaseHTTPRequestHandler):
    """Routes HTTP requests to ProviderSim and turns every outcome into a JSON response."""

    protocol_version = "HTTP/1.1"  # Keep-alive: clients under test reuse connections.
    # Headers and body go out in two writes; without TCP_NODELAY the body waits for the
    # client's delayed ACK (about 40 ms), a latency no provider adds on purpose.
    disable_nagle_algorithm = True
    server_version = "provider-sim/1.0"
    server: Server

    def setup(self) -> None:
        super().setup()
        # A recognisable name lets tests check that no connection thread outlives stop().
        threading.current_thread().name = "provider-sim-conn"

    def log_message(self, format: str, *args: object) -> None:
        if self.server.sim.verbose:
            super().log_message(format, *args)

    def do_GET(self) -> None:
        self._dispatch(self.command)

    # Every method goes through the router, which answers 405 where a method does not apply; HEAD is
    # answered for files only (/_media, /_stream), as a CDN answers it.
    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_GET

    def _send_raw(self, status: int, headers: dict, body: bytes, head: bool = False) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

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
        if parts.path.startswith(media.PREFIX):  # a ready video's playlists and pages, not JSON
            status, content_type, data = self.server.sim.playback_media(parts.path, parts.query)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if parts.path.startswith(("/_media/", "/_stream/")):
            served = self.server.sim.media(method, parts.path, parts.query, self.headers.get("Range"))
            self._send_raw(served.status, served.headers, served.body, head=method == "HEAD")
            return
        if method == "HEAD":
            self._send_raw(405, {"Allow": "GET"}, b"")
            return
        try:
            if parts.path == "/_sim" or parts.path.startswith("/_sim/"):
                status, payload, headers = self._control(method, parts.path, parts.query, raw)
            else:
                host = self.headers.get("Host")
                base_url = f"http://{host}" if host else self.server.sim.url
                request = ApiRequest(method, parts.path, parts.query, self.headers, raw, base_url)
                reply = self.server.sim.handle(request)
                if reply.lost:
                    # The provider did the work; the client never hears about it.
                    self.close_connection = True
                    return
                if reply.raw is not None:
                    self._send_raw(reply.status, reply.headers, reply.raw)
                    return
                status, payload, headers = reply.status, reply.body, reply.headers
        except Exception as exc:  # The server must keep serving whatever a request does.
            status, payload, headers = 500, {"error": f"internal: {exc!r}"}, {}
        self._send(status, payload, headers)

    def _control(self, method: str, path: str, query: str, raw: bytes) -> Answer:
        sim = self.server.sim
        routes: dict[str, dict[str, Callable[[], Answer]]] = {
            "/_sim/stats": {"GET": lambda: (200, sim.stats(), {})},
            "/_sim/tracks": {"GET": lambda: (200, sim.text_tracks(), {})},
            "/_sim/requests": {"GET": lambda: self._requests(query)},
            "/_sim/config": {"GET": lambda: (200, sim.config_dict(), {}), "POST": lambda: self._patch(raw)},
            "/_sim/reset": {"POST": self._reset},
            "/_sim/library": {"POST": lambda: self._library(raw)},
        }
        methods = routes.get(path.rstrip("/"))
        if methods is None:
            return 404, {"error": "not found"}, {}
        if method not in methods:
            return 405, {"error": "method not allowed"}, {"Allow": ", ".join(sorted(methods))}
        return methods[method]()

    def _requests(self, query: str) -> Answer:
        # ?op=all, or a comma list of create,list,get,status; creates only without it, as before.
        wanted = urllib.parse.parse_qs(query).get("op", ["create"])[0]
        ops = None if wanted == "all" else [op for op in wanted.split(",") if op in OPS]
        return 200, self.server.sim.requests_log(ops), {}

    def _library(self, raw: bytes) -> Answer:
        """{"delete": [index, ...], "make_private": [index, ...]}: what changes at a source after its inventory."""
        changes, error = parse_json(raw)
        if error or not isinstance(changes, dict):
            return 400, {"error": error or "expected a JSON object"}, {}
        lists = [changes.get(k, []) for k in ("delete", "make_private")]
        if not all(isinstance(v, list) and all(isinstance(i, int) for i in v) for v in lists):
            return 400, {"error": "delete and make_private must be lists of video indexes"}, {}
        self.server.sim.change_library(*lists)
        return 200, {"changed": True}, {}

    def _reset(self) -> Answer:
        self.server.sim.reset()
        return 200, {"reset": True}, {}

    def _patch(self, raw: bytes) -> Answer:
        changes, error = parse_json(raw)
        if error or not isinstance(changes, dict):  # the words SimConfig.patch has for one that is no object
            return 400, {"error": error or "config patch must be a JSON object"}, {}
        try:
            return 200, self.server.sim.patch_config(changes), {}
        except ConfigError as exc:
            return 400, {"error": str(exc)}, {}
