"""The tracks worker's fetch of a caption file (and of a range of a source file: the archive's parts, issue 43):
a request from our Lambda to a URL from outside, so guarded.

The URL comes from the inventory, so it may point anywhere: the cloud's metadata address,
localhost, the VPC's private ranges, or redirect its way there. So, per hop:

- https only (`url_problem`): no other scheme, no credentials in the URL, no IP literal
  outside the public ranges;
- the name is resolved here and refused unless *every* address it resolves to is globally
  routable (`migrator.addresses`), and the connection goes to an address that was checked,
  never to the name again (no DNS-rebinding gap); TLS is verified against the name;
- a redirect is a new hop, checked the same way, at most MAX_REDIRECTS of them;
- the answer is bounded: a Content-Length past `max_bytes` is refused before any read, a
  body is read only up to `max_bytes` + 1, and the whole fetch, redirects included, has one
  deadline that every socket operation is held to, so a server that trickles cannot hold
  the worker; no compression is asked for, so a small body cannot expand.

A refusal or failure says why in a sentence that is safe to store, and whether a later try
could succeed (`retryable`: a timeout, a 5xx; not a refused address or a 404). Tests reach
local servers through `FetchPolicy.test_origins`: exact `scheme://host:port` origins that are
fetched whatever the rules above say (the stack's TrackFetchTestOrigins parameter, empty
outside tests), so 127.0.0.1 is still refused on every other port.
"""

from __future__ import annotations

import http.client
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from .addresses import IPAddress, address_refusal, literal_address, resolve_host
from .deadline import Watchdog
from .pinned import first_refused, pinned_connection

MAX_TRACK_BYTES = 2 * 1024 * 1024
FETCH_TIMEOUT_S = 10.0
MAX_REDIRECTS = 3
CHUNK_BYTES = 64 * 1024
REDIRECTS = frozenset({301, 302, 303, 307, 308})
# Answers a later try may get past: the server's trouble, or its pacing.
RETRYABLE_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
USER_AGENT = "video-migrator-tracks/1"


@dataclass(frozen=True)
class FetchPolicy:
    max_bytes: int = MAX_TRACK_BYTES
    timeout_s: float = FETCH_TIMEOUT_S
    max_redirects: int = MAX_REDIRECTS
    # Exact origins ("http://127.0.0.1:8123") fetched whatever the scheme and address rules say: tests only.
    test_origins: frozenset[str] = field(default_factory=frozenset)

    def is_test_origin(self, url: str) -> bool:
        return bool(self.test_origins) and origin_of(url) in self.test_origins


@dataclass(frozen=True)
class Fetched:
    body: bytes
    url: str  # where it was found, after redirects
    status: int = 200  # 206 for a range answered as a range
    headers: dict[str, str] = field(default_factory=dict, compare=False)  # those of KEPT_HEADERS it answered


@dataclass(frozen=True)
class FetchFailed:
    reason: str
    retryable: bool = False
    status: int = field(default=0, compare=False)  # the server's answer where it gave one (0: none, or refused here)


def origin_of(url: str) -> str | None:
    """`scheme://host:port` with the default port written out, lower case; None when it does not parse."""
    try:
        parts = urlsplit(url)
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme.lower())
    except ValueError:
        return None
    if not parts.hostname or port is None:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme.lower()}://{host.lower()}:{port}"


def parse_test_origins(text: str) -> frozenset[str]:
    """The stack's comma-separated TrackFetchTestOrigins as origins (what does not parse is dropped)."""
    found = (origin_of(part.strip()) for part in text.split(",") if part.strip())
    return frozenset(o for o in found if o)


def url_problem(url: str, policy: FetchPolicy) -> str | None:
    """Why `url` is never fetched, before any lookup (None when it may be): the scheme, credentials,
    and a host written as an address outside the public ranges."""
    if policy.is_test_origin(url):
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError:
        return "the track URL does not parse"
    if parts.scheme.lower() != "https":
        return f"only https track URLs are fetched, not {parts.scheme.lower() or 'none'}"
    if not parts.hostname:
        return "the track URL names no host"
    if parts.username or parts.password:
        return "the track URL carries credentials (user:password@), which are never sent"
    ip = literal_address(parts.hostname)
    if ip is not None and (why := address_refusal(ip)):
        return f"the track URL's host {ip} is {why}: only public addresses are fetched"
    return None


def fetch(
    url: str,
    policy: FetchPolicy,
    resolve: Callable[[str, int], list[IPAddress]] = resolve_host,
    clock: Callable[[], float] = time.monotonic,
    byte_range: tuple[int, int] | None = None,
) -> Fetched | FetchFailed:
    """The file at `url` (following redirects, each checked), or why not. With `byte_range` (first, last, both
    included) only those bytes are asked for (RFC 9110 14.2): a 206 is the range, a 200 the whole file (a server
    may ignore Range), each at most `policy.max_bytes`; the caller reads which from `Fetched.status`."""
    deadline = clock() + policy.timeout_s
    for _ in range(policy.max_redirects + 1):
        problem = url_problem(url, policy)
        if problem:
            return FetchFailed(problem)
        answer = _hop(url, policy, resolve, deadline, clock, byte_range)
        if not isinstance(answer, tuple):
            return answer
        status, location, body, headers = answer
        if status in REDIRECTS:
            if not location:
                return FetchFailed(f"HTTP {status} without a Location to follow")
            url = urljoin(url, location)
            continue
        return Fetched(body, url, status, headers)
    return FetchFailed(f"more than {policy.max_redirects} redirects")


def _hop(url, policy, resolve, deadline, clock, byte_range=None) -> _Answer | FetchFailed:
    parts = urlsplit(url)
    host, scheme = parts.hostname or "", parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    try:
        addresses = resolve(host, port)
    except (OSError, UnicodeError):
        return FetchFailed(f"the track's host {host} does not resolve", retryable=True)
    if not addresses:
        return FetchFailed(f"the track's host {host} does not resolve", retryable=True)
    refused = None if policy.is_test_origin(url) else first_refused(addresses)
    if refused:
        ip, why = refused
        return FetchFailed(f"the track's host {host} resolves to {ip}, {why}: only public addresses are fetched")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    last: FetchFailed | None = None
    for ip in addresses:
        remaining = deadline - clock()
        if remaining <= 0:
            break
        connection = pinned_connection(scheme, host, port, ip, remaining)
        # The socket timeout bounds each read; the watchdog bounds the whole (status line, headers, body).
        watchdog = Watchdog(connection, remaining)
        try:
            with watchdog:
                answer = _get(connection, host, path, policy, deadline, clock, byte_range)
            if watchdog.fired:  # what was read before the cut is not the file
                raise TimeoutError
            return answer
        except Exception as exc:
            if watchdog.fired or isinstance(exc, TimeoutError):
                return FetchFailed(f"the track's server took more than {policy.timeout_s:g} s", retryable=True)
            if isinstance(exc, ssl.SSLError):
                return FetchFailed(f"TLS with {host} failed ({exc.reason or type(exc).__name__})")
            if isinstance(exc, ConnectionRefusedError):
                last = FetchFailed(f"the track's server {host} refused the connection", retryable=True)
            elif isinstance(exc, OSError | http.client.HTTPException):
                name = type(exc).__name__
                last = FetchFailed(f"the track's server {host} could not be read ({name})", retryable=True)
            else:
                raise
        finally:
            connection.close()
    return last or FetchFailed(f"the track's server took more than {policy.timeout_s:g} s", retryable=True)


# What a hop answered: its status, a redirect's Location, the body, and the headers a caller reads.
_Answer = tuple[int, str | None, bytes, dict[str, str]]
# The source's own word on the whole file, where it gives one (the archive's checks, archive/checks.py): GCS's
# hashes, Azure's whole-blob MD5, S3's encryption (which says whether its ETag is the MD5).
KEPT_HEADERS = (
    "Content-Range",
    "Content-Type",
    "Content-Length",
    "ETag",
    "Content-MD5",
    "x-goog-hash",
    "x-ms-blob-content-md5",
    "x-amz-server-side-encryption",
    "x-amz-server-side-encryption-customer-algorithm",
)


def _get(connection, host, path, policy, deadline, clock, byte_range=None) -> _Answer | FetchFailed:
    headers = {"User-Agent": USER_AGENT, "Accept": "text/vtt, application/x-subrip, text/plain, */*"}
    if byte_range is not None:
        headers = {"User-Agent": USER_AGENT, "Accept": "*/*", "Range": f"bytes={byte_range[0]}-{byte_range[1]}"}
    connection.request("GET", path, headers={**headers, "Accept-Encoding": "identity", "Connection": "close"})
    response = connection.getresponse()
    status = response.status
    if status in REDIRECTS:
        return status, response.getheader("Location"), b"", {}
    if status != 200 and not (status == 206 and byte_range is not None):
        return FetchFailed(
            f"the track's server answered HTTP {status}", retryable=status in RETRYABLE_STATUS, status=status
        )
    kept = {name: value for name in KEPT_HEADERS if (value := response.getheader(name)) is not None}
    length = response.getheader("Content-Length")
    if length and length.strip().isdigit() and int(length) > policy.max_bytes:
        return FetchFailed(f"the track file is {int(length):,} bytes, over the {policy.max_bytes:,} allowed")
    body = bytearray()
    while True:
        remaining = deadline - clock()
        if remaining <= 0:
            raise TimeoutError
        if connection.sock is not None:
            connection.sock.settimeout(remaining)
        chunk = response.read1(CHUNK_BYTES) if hasattr(response, "read1") else response.read(CHUNK_BYTES)
        if not chunk:
            break
        body += chunk
        if len(body) > policy.max_bytes:
            return FetchFailed(f"the track file is over the {policy.max_bytes:,} bytes allowed")
    return status, None, bytes(body), kept
