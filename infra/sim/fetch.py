"""Fetching a source the way the provider does before it ingests it, over loopback only.

Two ways (a profile's `fetch_mode`): "get", a GET of the first bytes, as any provider that
downloads a URL starts (Mux, api.video, the generic contract); and "head-range", Cloudflare
Stream's: HEAD with a size, then a range GET. Either fails the ingest when the source refuses
(an expired or unsigned link answers 403, a deleted file 404), as the real provider does.

Stream's "Upload via link": the server "must support HTTP HEAD requests and HTTP GET range
requests" (https://developers.cloudflare.com/stream/uploading-videos/upload-via-link/;
cloudflare-python's `stream.copy.create` says the same of `input`: "The server must be
publicly routable and support `HTTP HEAD` requests and `HTTP GET` range requests. The
server should respond to `HTTP HEAD` requests with a `content-range` header that includes
the size of the file."). The simulator only ever connects to loopback: a source elsewhere
fails without a connection, and so does a redirect that leaves loopback.
"""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request

from .config import is_loopback

TIMEOUT_S = 5.0
RANGE = "bytes=0-1023"
RANGE_BYTES = 1024


def _on_loopback(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme in ("http", "https") and is_loopback(parts.hostname or "")


class _LoopbackRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only while it stays on loopback (a CDN redirect to elsewhere is refused)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if not _on_loopback(newurl):
            raise urllib.error.HTTPError(newurl, code, "redirect off loopback refused", headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _LoopbackRedirects())


def _size(headers) -> int | None:
    """The file's size from HEAD: Content-Length, or the total of a Content-Range (`bytes 0-1/123`)."""
    for value in (headers.get("Content-Length"), (headers.get("Content-Range") or "").rpartition("/")[2]):
        if value and value.strip().isdigit():
            return int(value)
    return None


def source_problem(url: str, mode: str = "head-range") -> str | None:
    """None if the source can be fetched the way `mode` says; else what went wrong.

    "head-range": HEAD answered with the size, then a range GET with 206. "get": a GET (asking for the
    first bytes) answered 200 or 206."""
    if not _on_loopback(url):
        return "not a loopback address (the simulator fetches nothing else)"
    try:
        if mode == "head-range":
            with _OPENER.open(urllib.request.Request(url, method="HEAD"), timeout=TIMEOUT_S) as response:
                if _size(response.headers) is None:
                    return "HEAD answered without the file's size"
        request = urllib.request.Request(url, headers={"Range": RANGE})
        with _OPENER.open(request, timeout=TIMEOUT_S) as response:
            response.read(RANGE_BYTES)  # never the whole file
            if mode == "head-range" and response.status != 206:
                return f"a range GET answered {response.status}, not 206"
    except urllib.error.HTTPError as exc:
        exc.close()
        return f"answered {exc.code}"
    except (OSError, ValueError) as exc:  # refused, timed out, malformed
        return f"unreachable: {exc.__class__.__name__}"
    return None
