"""The caption files and servers the track tests use at every depth (the server is infra/captions.py's)."""

from __future__ import annotations

from infra.captions import SRT, VTT, FileServer, body

__all__ = ["SRT", "VTT", "FileServer", "body", "declared_huge", "redirect"]


def redirect(location: str, status: int = 302):
    return body(b"", status, {"Location": location})


def declared_huge(size: int = 50 * 1024 * 1024):
    """An answer that says it is `size` bytes, and sends until the reader goes away."""

    def answer(handler):
        handler.send_response(200)
        handler.send_header("Content-Length", str(size))
        handler.end_headers()
        try:
            for start in range(0, size, 65536):
                handler.wfile.write(b"x" * min(65536, size - start))
        except OSError:
            pass

    return answer
