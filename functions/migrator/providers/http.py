"""The HTTP transport every provider shares: one pooled session, timeouts, no retries, no secrets in errors.

Answers come back as raw facts (status, parsed body, text, headers); what they mean is
each provider's business. Retries are never the transport's: the ledger decides them.
Credentials are read lazily, per request, through `auth` (so a rotated secret is picked
up when the cache refreshes) and never appear in an exception or a log line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import requests
from requests.adapters import HTTPAdapter

MAX_BODY_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Answer:
    status: int
    body: object  # parsed JSON, or None when the body is not JSON
    text: str
    headers: dict = field(default_factory=dict)


class TransportError(Exception):
    """No HTTP answer: timeout, refused connection, TLS failure. Carries no secrets."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


class HttpTransport:
    def __init__(
        self,
        base_url: str,
        auth: Callable[[], Mapping[str, str]],
        session: requests.Session | None = None,
        connect_timeout_s: float = 3.05,
        read_timeout_s: float = 10.0,
        pool_size: int = 10,
    ):
        self.base = base_url.rstrip("/")
        self._auth = auth
        self.timeout = (connect_timeout_s, read_timeout_s)
        if session is None:
            session = requests.Session()
            # requests retries nothing by default; keep it so: retries are the ledger's call.
            adapter = HTTPAdapter(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0)
            session.mount("https://", adapter)
            session.mount("http://", adapter)
        self.session = session

    def send(
        self,
        method: str,
        path: str,
        json_body: object = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        all_headers = {"Accept": "application/json", **self._auth(), **(headers or {})}
        try:
            resp = self.session.request(
                method, self.base + path, json=json_body, params=params, headers=all_headers, timeout=self.timeout
            )
        except requests.Timeout:
            raise TransportError("timeout") from None
        except requests.ConnectionError:
            raise TransportError("connection error") from None
        except requests.RequestException as exc:
            raise TransportError(f"request error: {type(exc).__name__}") from None
        except (UnicodeError, ValueError) as exc:  # a header or URL http.client cannot encode
            raise TransportError(f"request could not be encoded: {type(exc).__name__}") from None
        raw = resp.content[:MAX_BODY_BYTES]
        text = raw.decode("utf-8", errors="replace")
        try:
            body = json.loads(text) if text.strip() else None
        except (ValueError, RecursionError):
            body = None
        return Answer(resp.status_code, body, text, dict(resp.headers))


def quote(segment: str) -> str:
    """One path segment, every reserved character escaped."""
    return requests.utils.quote(segment, safe="")
