"""A local CloudFront edge: the emulator's distribution, with signed URLs and signed cookies enforced.

The emulator (ministack) serves a distribution's viewer requests itself (its `handle_viewer_request`, reached
with `Host: <label>.cloudfront.net`, ministack/app.py `_handle_cloudfront_dataplane_request`), S3 origins with
origin access control included, but it does not model signed URLs or cookies: a behaviour that trusts a key
group serves anyone. This stand-in sits in front of it on 127.0.0.1 and refuses, as CloudFront does, what the
trusted key group has not signed; what passes goes on to the emulator's data plane. Start it with
`LocalEdge(cloudfront, distribution_id, data_plane_url).start()`: `edge.url` is the viewer's base URL, and a
signer signs URLs under it (`http://127.0.0.1:<port>/...`; CloudFront checks the URL the viewer requested, so
the resource is `http://` plus the Host header the viewer sent, the edge's own address by default).

What it does, each from the CloudFront Developer Guide (D = https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide):
- Cache behaviour, D/DownloadDistValuesCacheBehavior.html#DownloadDistValuesPathPattern (and the API's
  CacheBehavior.PathPattern): "the requested path is compared with path patterns in the order in which cache
  behaviors are listed in the distribution"; `*` matches zero or more characters and `?` exactly one; path
  patterns are case-sensitive (re:Post, cloudfront-not-following-cache-behavior); a leading `/` in a pattern is
  optional; the default behaviour (`*`) applies when no pattern matches. Only the path is compared, not the
  query string. The path is matched as the viewer sent it (percent escapes not decoded: unconfirmed).
- Restricted viewer access, D/private-content-trusted-signers.html: a behaviour whose TrustedKeyGroups is
  enabled serves only signed URLs or signed cookies made with a key of one of its key groups; the public keys
  are the key groups' (GetKeyGroup) public keys' EncodedKey (GetPublicKey). A behaviour that trusts only the
  legacy TrustedSigners (account key pairs) is restricted too, but no key is known here, so it refuses all.
- The checks themselves (policy, signature, expiry, resource, IP from the TCP peer, URL before cookies):
  migrator.cloudfront_signing, whose docstring cites each page.
- Refusals: 403, `Content-Type: text/xml`, `Server: CloudFront`, `X-Cache: Error from cloudfront` and the body
  `<?xml version="1.0" encoding="UTF-8"?><Error><Code>..</Code><Message>..</Message></Error>` with no line
  break (a real answer, Content-Length 146 for MissingKey). The codes, from re:Post
  knowledge-center/cloudfront-troubleshoot-signed-url-cookies and answers people quote:
  MissingKey "Missing Key-Pair-Id query parameter or cookie value" (no Key-Pair-Id, or an empty one);
  InvalidKey "Unknown Key" (a key not in the trusted key groups); MalformedSignature "Could not unencode
  Signature"; MalformedPolicy "Malformed Policy"; AccessDenied "Access denied" (a bad signature, an expired
  or not yet valid policy, a resource or an address the policy does not cover, anything else).
- Forwarding, D/private-content-signed-urls.html: Expires, Policy, Signature, Key-Pair-Id and Hash-Algorithm
  are CloudFront's own and not the origin's, so they are removed from the query string sent on; the
  CloudFront-* cookies likewise. The emulator then applies the behaviour's cache and origin request policies.
- Sizes, D/cloudfront-limits.html: a URL of at most 8,192 bytes, a request's headers and query string at most
  20,480 bytes (what CloudFront answers beyond them is unconfirmed: 414 and 400 here).

The distribution's config is read with GetDistributionConfig and kept `config_ttl_s`; the key groups' keys
likewise, and both are read again at once when a request names a Key-Pair-Id not among the cached keys (a key
just added). Only GET and HEAD are served (others: 501). Nothing logged names a signature, policy or cookie.
"""

from __future__ import annotations

import contextlib
import http.client
import logging
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from http.client import HTTPResponse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import rsa
from migrator.cloudfront_signing import (
    COOKIES,
    MALFORMED,
    UNKNOWN_KEY,
    URL_PARAMETERS,
    Verdict,
    cloudfront_b64decode,
    load_public_key,
    resource_matches,
    verify_request,
)
from migrator.playback_tokens import SigningKeyError

log = logging.getLogger("migrator.sim.edge")

MAX_URL_BYTES = 8_192  # "Maximum length of a URL" (cloudfront-limits)
MAX_REQUEST_BYTES = 20_480  # "Maximum length of a request ... including headers and query strings"
CHUNK = 64 * 1024
XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'
_HOST = re.compile(r"[A-Za-z0-9.-]{1,253}(?::[0-9]{1,5})?")
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "upgrade", "trailer", "proxy-connection"}
_FORWARDED_HEADERS = (  # what a viewer's request carries on to the emulator (its policies pick among them)
    "Accept", "Accept-Encoding", "Accept-Language", "Origin", "Range", "Referer", "User-Agent",
    "If-Match", "If-Modified-Since", "If-None-Match", "If-Range", "If-Unmodified-Since",
)  # fmt: skip


# --- pure decisions -------------------------------------------------------------------------------------------


def path_matches(pattern: str, path: str) -> bool:
    """Whether a cache behaviour's PathPattern covers a request path: `*` any run, `?` one character, case kept."""
    return resource_matches(pattern if pattern.startswith("/") else f"/{pattern}", path)


def choose_behavior(config: dict[str, Any], path: str) -> dict[str, Any]:
    """The cache behaviour CloudFront applies: the first ordered behaviour whose pattern matches, else the default."""
    for behavior in (config.get("CacheBehaviors") or {}).get("Items") or []:
        if path_matches(behavior.get("PathPattern", ""), path):
            return behavior
    return config["DefaultCacheBehavior"]


def trusted_key_groups(behavior: dict[str, Any]) -> list[str] | None:
    """The key group ids a behaviour trusts; None when viewers need no signature; [] when no key group can sign."""
    groups = behavior.get("TrustedKeyGroups") or {}
    signers = behavior.get("TrustedSigners") or {}
    if groups.get("Enabled"):
        return list(groups.get("Items") or [])
    return [] if signers.get("Enabled") else None


def strip_cloudfront_parameters(query: str) -> str:
    """The query string without CloudFront's own parameters (Expires, Policy, Signature, ...), the rest verbatim."""
    kept = [item for item in query.split("&") if item and item.partition("=")[0] not in URL_PARAMETERS.all]
    return "&".join(kept)


def parse_cookies(headers: Iterable[str]) -> list[tuple[str, str]]:
    """Every name=value pair of the Cookie headers, in order, a name sent twice kept twice."""
    pairs = []
    for header in headers:
        for part in header.split(";"):
            name, sep, value = part.strip().partition("=")
            if sep and name:
                pairs.append((name, value.strip()))
    return pairs


@dataclass(frozen=True)
class Refusal:
    code: str
    message: str

    def body(self) -> bytes:
        text = f"<Error><Code>{self.code}</Code><Message>{self.message}</Message></Error>"
        return (XML_DECLARATION + text).encode("ascii")


MISSING_KEY = Refusal("MissingKey", "Missing Key-Pair-Id query parameter or cookie value")
UNKNOWN_KEY_REFUSAL = Refusal("InvalidKey", "Unknown Key")
MALFORMED_SIGNATURE = Refusal("MalformedSignature", "Could not unencode Signature")
MALFORMED_POLICY = Refusal("MalformedPolicy", "Malformed Policy")
ACCESS_DENIED = Refusal("AccessDenied", "Access denied")


# A cookie's name -> the URL parameter's name it stands for (CloudFront-Key-Pair-Id -> Key-Pair-Id, ...).
_COOKIE_TO_PARAMETER = {
    COOKIES.expires: URL_PARAMETERS.expires,
    COOKIES.policy: URL_PARAMETERS.policy,
    COOKIES.signature: URL_PARAMETERS.signature,
    COOKIES.key_pair_id: URL_PARAMETERS.key_pair_id,
    COOKIES.hash_algorithm: URL_PARAMETERS.hash_algorithm,
}


def signing_values(url: str, cookies: list[tuple[str, str]]) -> dict[str, str]:
    """The signing values a request offers, by their URL names: the URL's if it has any of them, else the cookies'
    (a URL with any of CloudFront's parameters is a signed URL, D/private-content-choosing-signed-urls-cookies.html)."""
    pairs = [item.partition("=") for item in url.partition("?")[2].split("&") if item]
    from_url = {name: value for name, _, value in pairs if name in URL_PARAMETERS.all}
    if from_url:
        return from_url
    return {_COOKIE_TO_PARAMETER[name]: value for name, value in cookies if name in _COOKIE_TO_PARAMETER}


def refusal_for(values: dict[str, str], verdict: Verdict | None) -> Refusal | None:
    """What CloudFront answers a request with these signing values and the verifier's verdict (None: served).

    A missing or empty Key-Pair-Id is MissingKey before anything is checked (re:Post); `verdict` is None then."""
    if not values.get(URL_PARAMETERS.key_pair_id):
        return MISSING_KEY
    if verdict is None or verdict.allowed:
        return None
    if verdict.reason == UNKNOWN_KEY:
        return UNKNOWN_KEY_REFUSAL
    if verdict.reason == MALFORMED:
        try:
            cloudfront_b64decode(values.get(URL_PARAMETERS.signature, ""))
        except ValueError:
            return MALFORMED_SIGNATURE
        if URL_PARAMETERS.policy in values:
            return MALFORMED_POLICY
    return ACCESS_DENIED


# --- the edge -------------------------------------------------------------------------------------------------


class LocalEdge:
    """The edge: the distribution's config and keys, cached; the HTTP server viewers reach."""

    def __init__(
        self,
        cloudfront: Any,
        distribution_id: str,
        data_plane_url: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        config_ttl_s: float = 5.0,
        timeout_s: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        parts = urllib.parse.urlsplit(data_plane_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError("the data plane URL is the emulator's http://host:port")
        self.cloudfront, self.distribution_id = cloudfront, distribution_id
        self._upstream = (parts.hostname, parts.port or 80)
        self._bind = (host, port)
        self.config_ttl_s, self.timeout_s, self.clock = config_ttl_s, timeout_s, clock
        self._lock = threading.Lock()
        self._config: tuple[float, dict[str, Any]] | None = None
        self._keys: dict[str, tuple[float, dict[str, rsa.PublicKey]]] = {}  # key group id -> (read at, keys)
        self.domain_name = ""
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> LocalEdge:
        if self._server is not None:
            raise RuntimeError("already started")
        self.domain_name = self.cloudfront.get_distribution(Id=self.distribution_id)["Distribution"]["DomainName"]
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="local-edge", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("not started")
        return "http://{}:{}".format(*self._server.server_address[:2])

    # --- config and keys, cached ---

    def distribution_config(self, *, fresh: bool = False) -> dict[str, Any]:
        with self._lock:
            cached = self._config
        if cached is None or fresh or self.clock() - cached[0] >= self.config_ttl_s:
            config = self.cloudfront.get_distribution_config(Id=self.distribution_id)["DistributionConfig"]
            with self._lock:
                self._config = cached = (self.clock(), config)
        return cached[1]

    def public_keys(self, group_ids: list[str], *, fresh: bool = False) -> dict[str, rsa.PublicKey]:
        """Every public key of the key groups, by its id (a key that does not parse is left out, as unknown)."""
        keys: dict[str, rsa.PublicKey] = {}
        for group_id in group_ids:
            with self._lock:
                cached = self._keys.get(group_id)
            if cached is None or fresh or self.clock() - cached[0] >= self.config_ttl_s:
                cached = (self.clock(), self._read_key_group(group_id))
                with self._lock:
                    self._keys[group_id] = cached
            keys.update(cached[1])
        return keys

    def _read_key_group(self, group_id: str) -> dict[str, rsa.PublicKey]:
        group = self.cloudfront.get_key_group(Id=group_id)["KeyGroup"]["KeyGroupConfig"]
        keys = {}
        for key_id in group.get("Items") or []:
            pem = self.cloudfront.get_public_key(Id=key_id)["PublicKey"]["PublicKeyConfig"]["EncodedKey"]
            try:
                keys[key_id] = load_public_key(pem)
            except SigningKeyError:
                log.warning("public key %s of key group %s does not parse; left out", key_id, group_id)
        return keys

    # --- one request ---

    def decide(self, url: str, path: str, cookies: list[tuple[str, str]], client_ip: str) -> Refusal | None:
        """None to serve the request, else CloudFront's refusal."""
        groups = trusted_key_groups(choose_behavior(self.distribution_config(), path))
        if groups is None:
            return None
        values = signing_values(url, cookies)
        if not values.get(URL_PARAMETERS.key_pair_id):
            return MISSING_KEY
        keys = self.public_keys(groups)
        if values[URL_PARAMETERS.key_pair_id] not in keys:  # a miss: the behaviour or the group may have changed
            groups = trusted_key_groups(choose_behavior(self.distribution_config(fresh=True), path))
            if groups is None:
                return None
            keys = self.public_keys(groups, fresh=True)
        verdict = verify_request(url, cookies, keys, self.clock(), client_ip=client_ip)
        if not verdict.allowed:
            log.info("refused %s: %s", path[:200], verdict.reason)  # the reason names no signature or policy
        return refusal_for(values, verdict)

    @contextlib.contextmanager
    def forward(self, method: str, path: str, query: str, headers: dict[str, str]) -> Iterator[HTTPResponse]:
        """The emulator's data plane's answer for the distribution's domain, its connection closed after."""
        conn = http.client.HTTPConnection(*self._upstream, timeout=self.timeout_s)
        try:
            target = path + (f"?{query}" if query else "")
            # The edge is where a viewer's TLS ends: it stands for an HTTPS viewer (a behaviour's redirect-to-https
            # or https-only is the real edge's to enforce), which the emulator reads from X-Forwarded-Proto.
            sent = {**headers, "Host": self.domain_name, "Connection": "close", "X-Forwarded-Proto": "https"}
            conn.request(method, target, headers=sent)
            yield conn.getresponse()
        finally:
            conn.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, edge: LocalEdge) -> None:
        self.edge = edge
        super().__init__(edge._bind, _Handler)


class _Handler(BaseHTTPRequestHandler):
    """One viewer request (HTTP/1.0: the connection closes after each answer)."""

    server: _Server
    server_version = "CloudFront"
    timeout = 30  # a viewer that stops sending holds a thread this long at most

    def version_string(self) -> str:
        return "CloudFront"  # the Server header of CloudFront's own answers

    def log_message(self, format: str, *args: object) -> None:
        pass  # the request line carries signatures: never logged

    def do_GET(self) -> None:
        edge = self.server.edge
        if len(self.path.encode("latin-1", "replace")) > MAX_URL_BYTES or not self.path.startswith("/"):
            self._plain(414 if self.path.startswith("/") else 400, b"Bad request.")
            return
        header_bytes = sum(len(k) + len(v) + 4 for k, v in self.headers.items())
        if header_bytes + len(self.path) > MAX_REQUEST_BYTES:
            self._plain(400, b"Bad request.")
            return
        host = self.headers.get("Host") or "{}:{}".format(*self.server.server_address[:2])
        if not _HOST.fullmatch(host):
            self._plain(400, b"Bad request.")
            return
        path, _, query = self.path.partition("?")
        cookies = parse_cookies(self.headers.get_all("Cookie") or [])
        try:
            refusal = edge.decide(f"http://{host}{self.path}", path, cookies, self.client_address[0])
        except Exception as exc:  # the emulator's API failed: the edge cannot decide
            log.warning("cannot read distribution %s: %s", edge.distribution_id, type(exc).__name__)
            self._plain(502, b"The edge could not read its distribution.")
            return
        if refusal is not None:
            self._send(403, [("Content-Type", "text/xml"), ("X-Cache", "Error from cloudfront")], refusal.body())
            return
        self._relay(path, strip_cloudfront_parameters(query), cookies)

    do_HEAD = do_GET

    def _relay(self, path: str, query: str, cookies: list[tuple[str, str]]) -> None:
        headers = {name: self.headers[name] for name in _FORWARDED_HEADERS if self.headers.get(name)}
        viewer_cookies = [f"{name}={value}" for name, value in cookies if name not in COOKIES.all]
        if viewer_cookies:
            headers["Cookie"] = "; ".join(viewer_cookies)
        started = False  # once the status line is out, a failure can only end the connection
        try:
            with self.server.edge.forward(self.command, path, query, headers) as answer:
                self.send_response_only(answer.status)
                started = True
                for name, value in answer.getheaders():
                    if name.lower() not in _HOP_BY_HOP:
                        self.send_header(name, value)
                self.end_headers()
                if self.command != "HEAD":
                    while chunk := answer.read(CHUNK):
                        self.wfile.write(chunk)
        except (OSError, http.client.HTTPException) as exc:
            log.warning("relaying from the emulator's data plane failed: %s", type(exc).__name__)
            if not started:
                self._plain(502, b"The request could not be satisfied.")

    def _plain(self, status: int, body: bytes) -> None:
        self._send(status, [("Content-Type", "text/plain")], body)

    def _send(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
