"""Test helpers for the simulator's profile and fault tests: a webhook receiver, a media origin, verifiers.

Nothing here uses the simulator's own code: signatures are recomputed with hmac/hashlib
from each provider's documented scheme, so a bug in the simulator's signing shows up.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Delivery:
    at: float  # time.monotonic() when it arrived
    headers: dict  # lower-cased names
    body: bytes
    answered: int


class _Loopback:
    """A threaded HTTP server on a free loopback port, stopped by close()."""

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> str:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


class Hooks(_Loopback):
    """A webhook endpoint that records deliveries; `decide(headers, body)` picks each answer (204 by default)."""

    def __init__(self, decide: Callable[[dict, bytes], int] | None = None) -> None:
        self.decide = decide or (lambda headers, body: 204)
        self.deliveries: list[Delivery] = []
        self._cond = threading.Condition()
        hooks = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                arrived = time.monotonic()
                body = self.rfile.read(int(self.headers["Content-Length"]))
                headers = {k.lower(): v for k, v in self.headers.items()}
                status = hooks.decide(headers, body)
                with hooks._cond:
                    hooks.deliveries.append(Delivery(arrived, headers, body, status))
                    hooks._cond.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.url = self._serve(Handler) + "/hook"

    def wait(self, n: int, timeout: float = 5.0) -> list[Delivery]:
        with self._cond:
            self._cond.wait_for(lambda: len(self.deliveries) >= n, timeout)
            return list(self.deliveries)


class Origin(_Loopback):
    """A media origin on loopback whose files behave as the path says, recording each request it gets.

    - `/ok.mp4`: HEAD with a Content-Length, range GETs answered 206 (what Cloudflare needs);
    - `/no-head.mp4`: HEAD answered 403, as a presigned S3 GET URL answers it;
    - `/no-range.mp4`: ranges ignored, every GET answered 200 with the whole file;
    - `/no-size.mp4`: HEAD answered 200 without the file's size;
    - `/moved.mp4`: a redirect to `/ok.mp4`; anything else 404.
    """

    SIZE = 4096

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, str | None]] = []  # (method, path, Range header)
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self, with_body: bool) -> None:
                path = self.path.split("?")[0]
                origin.requests.append((self.command, path, self.headers.get("Range")))
                ranged = self.headers.get("Range") == "bytes=0-1023" and path != "/no-range.mp4"
                if path == "/moved.mp4":
                    status, headers, body = 302, {"Location": "/ok.mp4"}, b""
                elif path not in ("/ok.mp4", "/no-head.mp4", "/no-range.mp4", "/no-size.mp4"):
                    status, headers, body = 404, {}, b""
                elif self.command == "HEAD" and path == "/no-head.mp4":
                    status, headers, body = 403, {}, b""
                elif ranged:
                    status, headers, body = 206, {"Content-Range": f"bytes 0-1023/{origin.SIZE}"}, b"\0" * 1024
                else:
                    status, headers, body = 200, {}, b"\0" * origin.SIZE
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if not (self.command == "HEAD" and path == "/no-size.mp4"):
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if with_body:
                    self.wfile.write(body)
                elif path == "/no-size.mp4":
                    self.close_connection = True  # no length: the connection ends the answer

            def do_HEAD(self):
                self._answer(with_body=False)

            def do_GET(self):
                self._answer(with_body=True)

            def log_message(self, *args):
                pass

        self.url = self._serve(Handler)


def wait_for(predicate: Callable[[], object], timeout: float = 5.0, step: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())


def _hex(secret: str, data: bytes) -> str:
    return hmac.new(secret.encode(), data, hashlib.sha256).hexdigest()


def _fields(header: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in header.split(","):
        name, _, value = item.strip().partition("=")
        out.setdefault(name, []).append(value)
    return out


def verify_mux(secret: str, headers: dict, body: bytes) -> bool:
    """Mux: `mux-signature: t=<unix>,v1=<hex>`, HMAC-SHA256 over "<t>.<body>"; any v1 may match."""
    parts = _fields(headers.get("mux-signature", ""))
    t = parts.get("t", [""])[0]
    expected = _hex(secret, f"{t}.".encode() + body)
    return bool(t) and any(hmac.compare_digest(v, expected) for v in parts.get("v1", []))


def verify_cloudflare(secret: str, headers: dict, body: bytes) -> bool:
    """Cloudflare Stream: `Webhook-Signature: time=<unix>,sig1=<hex>` over "<time>.<body>"."""
    parts = _fields(headers.get("webhook-signature", ""))
    t = parts.get("time", [""])[0]
    return bool(t) and hmac.compare_digest(parts.get("sig1", [""])[0], _hex(secret, f"{t}.".encode() + body))


def verify_apivideo(secret: str, headers: dict, body: bytes) -> bool:
    """api.video: `X-Api-Video-Signature` is the hex HMAC-SHA256 of the raw body."""
    return hmac.compare_digest(headers.get("x-api-video-signature", ""), _hex(secret, body))


def verify_generic(secret: str, headers: dict, body: bytes) -> bool:
    """The seed scheme: `x-signature` is the hex HMAC-SHA256 of the raw body."""
    return hmac.compare_digest(headers.get("x-signature", ""), _hex(secret, body))


VERIFY = {"generic": verify_generic, "mux": verify_mux, "cloudflare": verify_cloudflare, "apivideo": verify_apivideo}


def list_all(source, since=None, tracks=True) -> tuple[list, int]:
    """Every entry of every page of a migrator.sources source, and how many pages it took."""
    entries, cursor, pages = [], None, 0
    while True:
        page = source.page(cursor, since, tracks)
        entries += page.entries
        pages += 1
        cursor = page.cursor
        if cursor is None:
            return entries, pages
