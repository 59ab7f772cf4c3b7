"""The caption files and servers the track tests use at every depth (the server is infra/captions.py's)."""

from __future__ import annotations

from infra.captions import SRT, VTT, FileServer, body

__all__ = ["SRT", "VTT", "FileServer", "body", "declared_huge", "range_answer", "redirect"]


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


def range_answer(handler, content: bytes) -> None:
    """Answer the request's `Range: bytes=a-b` with a 206 of those bytes and the file's size (RFC 9110 14.4)."""
    first, last = (int(x) for x in handler.headers.get("Range", "").removeprefix("bytes=").split("-"))
    part = content[first : last + 1]
    handler.send_response(206)
    handler.send_header("Content-Range", f"bytes {first}-{first + len(part) - 1}/{len(content)}")
    handler.send_header("Content-Length", str(len(part)))
    handler.send_header("Content-Type", "video/mp4")
    handler.end_headers()
    handler.wfile.write(part)
