"""A local HTTP server for caption files: what the demo's caption tracks are fetched from.

The tracks worker fetches public https addresses only; a local run names this server's one exact
origin in the stack's `TrackFetchTestOrigins`, and every other loopback address stays refused. The
track tests at every depth share it (tests/track_files.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

SRT = b"1\n00:00:01,000 --> 00:00:02,500\nHello from SubRip\n\n2\n00:00:03,000 --> 00:00:04,000\nSecond cue\n"
VTT = b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nBonjour du WebVTT\n"


class FileServer:
    """Serves `route(path, answer)` on 127.0.0.1; `seen` lists (path, Host) of every GET."""

    def __init__(self) -> None:
        routes: dict[str, Callable] = {}
        seen: list[tuple[str, str | None]] = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            paths: ClassVar[dict] = routes

            def log_message(self, *args):
                pass

            def do_GET(self):
                seen.append((self.path, self.headers.get("Host")))
                answer = routes.get(self.path.split("?")[0])
                if answer is None:
                    body(b"not found", 404)(self)
                else:
                    answer(self)

        self.routes, self.seen = routes, seen
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> FileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def route(self, path: str, answer: Callable) -> str:
        self.routes[path] = answer
        return self.url(path)

    def url(self, path: str = "/") -> str:
        return f"{self.origin}{path}"


def body(content: bytes, status: int = 200, headers: dict | None = None):
    """An answer with `content` (and a Content-Length)."""

    def answer(handler):
        handler.send_response(status)
        for name, value in {"Content-Length": str(len(content)), **(headers or {})}.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(content)

    return answer
