"""One guarded GET from the operator's machine, for `migrator verify`: public addresses only, redirects
included, bounded in size and time.

The URL comes from the provider (or a redirect it answers), so it is untrusted: it could point at
the cloud's metadata service, at localhost or at the operator's own network. The rules are the
probe's (guard.py): a name is resolved once, every address it resolves to must be globally
routable (`address_refusal`), and the connection goes to an address that was checked, never to the
name again (no DNS-rebinding gap); TLS still verifies the certificate for the name. Each redirect is
a new URL, checked the same way, at most MAX_REDIRECTS of them. `allow_private` lifts the address
rule (a local simulator). No proxy from the environment is used: a proxy would resolve the name.
"""

from __future__ import annotations

import http.client
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from migrator.deadline import Watchdog
from migrator.pinned import first_refused, pinned_connection

from .guard import IPAddress, resolve_host

MAX_REDIRECTS = 4
MAX_BYTES = 4 * 1024 * 1024
REDIRECTS = (301, 302, 303, 307, 308)


class FetchError(Exception):
    """No answer worth reading: `kind` is refused (the address policy), unresolved, unreachable
    (connect, TLS, timeout), too_large, redirects or bad_url; `detail` says it in words."""

    def __init__(self, kind: str, detail: str):
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail

    @property
    def transient(self) -> bool:
        """Whether a later run may get an answer (the path to the server, not the URL)."""
        return self.kind in ("unresolved", "unreachable")


@dataclass(frozen=True)
class Fetched:
    status: int
    body: bytes
    url: str  # after redirects
    content_type: str = ""


def guarded_get(
    url: str,
    *,
    allow_private: bool = False,
    timeout_s: float = 10.0,
    max_bytes: int = MAX_BYTES,
    resolve: Callable[[str, int], list[IPAddress]] = resolve_host,
    context: ssl.SSLContext | None = None,
) -> Fetched:
    """GET `url` under the rules above; FetchError when there is no answer to read. Each socket
    operation is held to `timeout_s`, and the whole fetch, redirects included, to three times that:
    a server that trickles its status line, headers or body is cut there (deadline.Watchdog)."""
    deadline = time.monotonic() + timeout_s * 3
    for _ in range(MAX_REDIRECTS + 1):
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        try:
            host, port = parts.hostname, parts.port or (443 if scheme == "https" else 80)
        except ValueError:
            raise FetchError("bad_url", "the port is not a number") from None
        if scheme not in ("http", "https") or not host:
            raise FetchError("bad_url", f"not an http(s) URL: {url[:100]}")
        ip = _checked_address(host, port, allow_private, resolve)
        left = deadline - time.monotonic()
        if left <= 0:
            raise FetchError("unreachable", f"no answer within {timeout_s * 3:g} s")
        conn = pinned_connection(scheme, host, port, ip, min(timeout_s, left), context)
        watchdog = Watchdog(conn, left)
        try:
            with watchdog:
                answer = _exchange(conn, parts, max_bytes)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if watchdog.fired:
                raise FetchError("unreachable", f"no answer within {timeout_s * 3:g} s") from None
            raise FetchError("unreachable", f"{host}: {type(exc).__name__}: {exc}"[:200]) from None
        finally:
            conn.close()
        if watchdog.fired:  # what was read before the cut is not the answer
            raise FetchError("unreachable", f"no answer within {timeout_s * 3:g} s")
        if isinstance(answer, str):
            url = urljoin(url, answer)
            continue
        status, body, content_type = answer
        return Fetched(status, body, url, content_type)
    raise FetchError("redirects", f"more than {MAX_REDIRECTS} redirects")


def _exchange(conn: http.client.HTTPConnection, parts, max_bytes: int) -> str | tuple[int, bytes, str]:
    """One request on `conn`: a redirect's Location, or (status, body, content type)."""
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    conn.request("GET", path, headers={"User-Agent": "migrator-verify", "Accept": "*/*"})
    response = conn.getresponse()
    location = response.getheader("Location")
    if response.status in REDIRECTS and location:
        response.read(64 * 1024)
        return location
    body = response.read(max_bytes + 1)
    if len(body) > max_bytes:
        raise FetchError("too_large", f"over {max_bytes} bytes")
    return response.status, body, response.getheader("Content-Type") or ""


def _checked_address(host: str, port: int, allow_private: bool, resolve) -> IPAddress:
    try:
        addresses = resolve(host, port)
    except (OSError, UnicodeError) as exc:
        raise FetchError("unresolved", f"{host}: {getattr(exc, 'strerror', None) or exc}") from None
    if not addresses:
        raise FetchError("unresolved", f"{host}: no address")
    refused = None if allow_private else first_refused(addresses)
    if refused:
        ip, why = refused
        raise FetchError("refused", f"{host} resolves to {ip} ({why}): public addresses only")
    return addresses[0]
