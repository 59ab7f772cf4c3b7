"""Test helpers for the simulator's profile and fault tests: a webhook receiver and independent verifiers.

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


class Hooks:
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

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.start()

    def wait(self, n: int, timeout: float = 5.0) -> list[Delivery]:
        with self._cond:
            self._cond.wait_for(lambda: len(self.deliveries) >= n, timeout)
            return list(self.deliveries)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


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
