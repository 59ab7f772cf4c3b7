"""HTTP adapter for the video provider's API (the seed's contract).

`POST {base}/videos` with an `Idempotency-Key` creates a video from a URL, tagged with
`metadata.migration_ref = <asset id>`; `GET {base}/videos?metadata[migration_ref]=<id>`
finds the one we made. Answers come back as raw facts (status, parsed body, headers);
deciding what they mean is `fate.classify_*`'s job. The bearer token is fetched lazily
and never logged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
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


def idempotency_key(asset_id: str, generation: int = 0) -> str:
    """The create's Idempotency-Key: stable for an asset, ASCII whatever its id holds.

    A header carries Latin-1 at best, and an id may be any text (`library/日本語.mp4`,
    a leading space), so the key is a hash of the exact id. `generation` moves on when
    an operator re-arms a rejected asset: its retry must make a new video, not be
    answered with the errored one the first key made.
    """
    digest = hashlib.sha256(f"{generation}\n{asset_id}".encode()).hexdigest()
    return f"vm-{digest[:48]}"


class ProviderClient:
    def __init__(
        self,
        base_url: str,
        token: Callable[[], str | None],
        session: requests.Session | None = None,
        connect_timeout_s: float = 3.05,
        read_timeout_s: float = 10.0,
        pool_size: int = 10,
    ):
        self.base = base_url.rstrip("/")
        self._token = token
        self.timeout = (connect_timeout_s, read_timeout_s)
        if session is None:
            session = requests.Session()
            # requests retries nothing by default; keep it so: retries are the ledger's call.
            adapter = HTTPAdapter(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0)
            session.mount("https://", adapter)
            session.mount("http://", adapter)
        self.session = session

    def create(self, asset_id: str, source_url: str, generation: int = 0) -> Answer:
        payload = {"input": source_url, "metadata": {"migration_ref": asset_id}}
        key = idempotency_key(asset_id, generation)
        return self._call("POST", "/videos", json_body=payload, extra_headers={"Idempotency-Key": key})

    def lookup(self, asset_id: str) -> Answer:
        return self._call("GET", "/videos", params={"metadata[migration_ref]": asset_id})

    def get(self, remote_id: str) -> Answer:
        return self._call("GET", f"/videos/{requests.utils.quote(remote_id, safe='')}")

    def _call(self, method, path, json_body=None, params=None, extra_headers=None) -> Answer:
        headers = {"Accept": "application/json", **(extra_headers or {})}
        token = self._token()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            resp = self.session.request(
                method, self.base + path, json=json_body, params=params, headers=headers, timeout=self.timeout
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
        except ValueError:
            body = None
        return Answer(resp.status_code, body, text, dict(resp.headers))
