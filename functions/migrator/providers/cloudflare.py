"""Cloudflare Stream (https://developers.cloudflare.com/stream; the API reference and cloudflare-go).

- credentials: an account id and an API token (Bearer); the secret holds JSON
  `{"account_id": "...", "api_token": "..."}`;
- create: `POST /accounts/{account}/stream/copy` with `input` (the source URL; the older `url`
  is deprecated), `creator` (a 64-character
  field Cloudflare can filter on: our per-asset tag `vm-<hash>`) and `meta` (our exact id
  as `migration_ref`, the attempt's key, and a `name` for the dashboard); 200 with the
  video in `result`, its id `uid`;
- no idempotency key: an earlier create is found by the `creator` filter, exactly;
- poll: `GET /accounts/{account}/stream/{uid}`; `status.state` pendingupload, downloading,
  queued, inprogress → ready | error (`errorReasonCode`/`errorReasonText`, spelt
  `errReason*` in one documentation example), `duration` in seconds (-1 while unknown);
- webhooks: `Webhook-Signature: time=<unix>,sig1=<hex>` over `<time>.<body>`; the body is
  the video itself, with no event type and no event id (the body's hash stands in);
  changing the webhook URL rotates the secret, so current and previous are both accepted;
- rate limits: 1,200 requests per 5 minutes per token, and a 429 blocks every call for
  5 minutes (`retry-after`); `Ratelimit` / `Ratelimit-Policy` headers on answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence

from ..fate import Outcome, OutcomeKind, excerpt
from ..signatures import Scheme, sign, verify
from ..states import State
from .base import Provider, json_event, listing_pages, too_many_pages
from .facts import (
    AssetRef,
    CredentialsError,
    Poll,
    RateSignal,
    Video,
    WebhookEvent,
    body_event_id,
    duration_of,
    epoch_of,
    found_among,
    mapping,
    our_ref,
    playback_of,
    rejected_video,
    text,
    video_id,
)
from .http import Answer, quote
from .keys import asset_tag, idempotency_key
from .ratelimit import read_rate_headers

WORKING = frozenset({"pendingupload", "downloading", "queued", "inprogress", "live-inprogress"})
PAGE_SIZE = 1000  # the list's maximum
NAME_MAX = 255


def credentials(raw: str | None) -> tuple[str, str]:
    """(account id, API token) from `{"account_id": ..., "api_token": ...}`."""
    if raw is None:
        raise CredentialsError("no Cloudflare credentials are configured (ProviderTokenSecretName)")
    try:
        doc = json.loads(raw)
    except ValueError:
        raise CredentialsError('the Cloudflare secret must be JSON {"account_id": ..., "api_token": ...}') from None
    account = doc.get("account_id") if isinstance(doc, dict) else None
    token = doc.get("api_token") if isinstance(doc, dict) else None
    if not isinstance(account, str) or not account.isalnum() or len(account) > 32:
        raise CredentialsError('the Cloudflare secret needs "account_id" (up to 32 letters and digits)')
    if not isinstance(token, str) or not token:
        raise CredentialsError('the Cloudflare secret needs "api_token"')
    return account, token


def read_stream_video(video: object) -> Video:
    """A Stream video (a create's or GET's `result`, a list entry, a webhook's body)."""
    if not isinstance(video, dict):
        return Video(None, status="not an object", known=False)
    remote_id = video_id(video.get("uid"))
    ref = our_ref(mapping(video.get("meta")).get("migration_ref"))
    status = mapping(video.get("status"))
    state = status.get("state") if isinstance(status.get("state"), str) else ""
    created_at = epoch_of(video.get("created"))
    if state == "ready":
        return Video(
            remote_id,
            ref,
            State.READY,
            state,
            duration_s=duration_of(video.get("duration")),
            created_at=created_at,
            playback=read_playback(video, remote_id),
        )
    if state == "error":
        code = status.get("errorReasonCode") or status.get("errReasonCode")
        text = status.get("errorReasonText") or status.get("errReasonText")
        reason = ": ".join(str(part) for part in (code, text) if isinstance(part, str) and part) or None
        return rejected_video(remote_id, ref, state, reason, created_at=created_at)
    return Video(remote_id, ref, None, excerpt(state, 40), known=state in WORKING, created_at=created_at)


def read_playback(video: dict, uid: str | None) -> dict | None:
    """The video object's `playback.hls`/`dash`, `preview` (its watch page), `thumbnail`, the input's
    `width`/`height`, and `requireSignedURLs` (true: every URL needs a signed token in place of the uid).
    (developers.cloudflare.com/api: stream video object; stream/viewing-videos/securing-your-stream.)"""
    playback = mapping(video.get("playback"))
    source = mapping(video.get("input"))
    return playback_of(
        policy="signed" if video.get("requireSignedURLs") is True else "public",
        playback_id=uid,
        hls=playback.get("hls"),
        dash=playback.get("dash"),
        preview=video.get("preview"),
        player=video.get("preview"),
        thumbnail=video.get("thumbnail"),
        width=source.get("width"),
        height=source.get("height"),
    )


class CloudflareProvider(Provider):
    name = "cloudflare"
    default_base_url = "https://api.cloudflare.com/client/v4"
    duplicate_window = (
        "none found: before any second create the uploader asks for the asset's videos by `creator` (an exact "
        "filter on our per-asset tag), so a create whose answer was lost is found as soon as Cloudflare lists it"
    )

    webhook_scheme = Scheme.CLOUDFLARE
    # "The URL must support HTTP HEAD requests and HTTP GET range requests" (Stream: upload via a link).
    fetches_presigned_get = False

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {credentials(self.secret())[1]}"}

    def check(self) -> Answer:
        return self.http.send("GET", self._stream(), params={"limit": "1"})

    def doctor_event(self, secret: str, now: float) -> tuple[bytes, dict[str, str]]:
        # Cloudflare's callback is a video; one still in progress settles nothing.
        body = json.dumps({"uid": "doctor", "status": {"state": "inprogress"}, "meta": {}}).encode()
        return body, sign(Scheme.CLOUDFLARE, body, secret, now)

    def _stream(self) -> str:
        return f"/accounts/{quote(credentials(self.secret())[0])}/stream"

    def create(self, asset: AssetRef, source_url: str) -> Outcome:
        meta = {
            "name": (asset.title or asset.asset_id)[:NAME_MAX],
            "migration_ref": asset.asset_id,
            "migration_key": idempotency_key(asset.asset_id, asset.generation),
        }
        # `input`, not the deprecated `url` (developers.cloudflare.com/api: stream "upload from URL").
        body = {"input": source_url, "creator": asset_tag(asset.asset_id), "meta": meta}
        answer = self._send("POST", f"{self._stream()}/copy", json_body=body)
        if isinstance(answer, Outcome):
            return answer
        if 200 <= answer.status < 300:
            return self._created(answer, read_stream_video(mapping(answer.body).get("result")).remote_id)
        return self._failure(answer)

    def find(self, asset_id: str, created_after: float | None) -> Outcome:
        listed = self._by_creator(asset_id)
        if isinstance(listed, Outcome):
            return listed
        return found_among(listed, asset_id) or Outcome(OutcomeKind.NOT_FOUND)

    def _by_creator(self, asset_id: str) -> list[Video] | Outcome:
        items = self._listing(self._stream(), {"creator": asset_tag(asset_id), "limit": str(PAGE_SIZE)}, "result")
        return items if isinstance(items, Outcome) else [read_stream_video(item) for item in items]

    def _poll_video(self, asset_id: str, remote_id: str) -> Poll:
        return self._get_video(
            f"{self._stream()}/{quote(remote_id)}", lambda body: read_stream_video(mapping(body).get("result"))
        )

    def read_webhook(
        self, body: bytes, headers: Mapping[str, str], secrets: Sequence[str], now: float, tolerance_s: int
    ) -> WebhookEvent:
        verify(Scheme.CLOUDFLARE, body, headers, secrets, now, tolerance_s)
        video = read_stream_video(json_event(body))
        # Sent only once processing is over; the same bytes again are a redelivery.
        event_id = body_event_id(body)
        if video.target is None:
            return WebhookEvent(event_id, video.ref, video.remote_id, note=f"not an outcome: {video.status}")
        return WebhookEvent(event_id, video.ref, video.remote_id, video, note=video.status)

    def videos(self) -> Iterator[Video]:
        """Oldest first, a page of up to 1,000 at a time, each page after the last one's `created`
        (the list has no cursor). A page may repeat the videos that share the boundary's timestamp:
        only their uids are kept to skip them (memory stays flat whatever the library's size).
        A page with nothing new ends it; past LISTING_MAX_PAGES pages it stops loudly."""
        boundary: set[str] = set()  # uids listed already that carry the `after` timestamp
        after: str | None = None
        for _ in listing_pages():
            params = {"asc": "true", "limit": str(PAGE_SIZE), **({"after": after} if after else {})}
            _, items = self._library_page(self._stream(), params, "result")
            fresh = [item for item in items if _uid(item) not in boundary]
            for item in fresh:
                yield read_stream_video(item)
            last = text(mapping(items[-1]).get("created")) if items else None
            if not fresh or len(items) < PAGE_SIZE or last is None:
                return
            at_last = {uid for item in items if (uid := _uid(item)) and mapping(item).get("created") == last}
            # A page wholly at the boundary's timestamp keeps the earlier ones' uids too.
            boundary = boundary | at_last if last == after else at_last
            after = last
        raise too_many_pages()

    def rate_signal(self, headers: Mapping[str, str]) -> RateSignal:
        return read_rate_headers(headers, self.clock())


def _uid(item: object) -> str | None:
    """A listed video's uid, or None when it has none we can read."""
    return video_id(mapping(item).get("uid"))
