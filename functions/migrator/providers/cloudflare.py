"""Cloudflare Stream (https://developers.cloudflare.com/stream; the API reference and cloudflare-go).

- credentials: an account id and an API token (Bearer); the secret holds JSON
  `{"account_id": "...", "api_token": "..."}`;
- create: `POST /accounts/{account}/stream/copy` with `input` (the source URL; the older `url`
  is deprecated), `creator` (a 64-character field Cloudflare can filter on: our per-asset tag
  `vm-<hash>`), `meta` (a free map: the title as `name`, our exact id as `migration_ref`, the
  attempt's key, and the row's description, tags, creation and publish times, folder, collections
  and custom fields),
  `requireSignedURLs` from the row's privacy, `thumbnailTimestampPct` from its poster time and
  duration, and the operator's `allowedOrigins`; 200 with the video in `result`, its id `uid`;
- no idempotency key: an earlier create is found by the `creator` filter, exactly;
- poll: `GET /accounts/{account}/stream/{uid}`; `status.state` pendingupload, downloading,
  queued, inprogress → ready | error (`errorReasonCode`/`errorReasonText`, spelt
  `errReason*` in one documentation example), `duration` in seconds (-1 while unknown);
- webhooks: `Webhook-Signature: time=<unix>,sig1=<hex>` over `<time>.<body>`; the body is
  the video itself, with no event type and no event id (the body's hash stands in);
  changing the webhook URL rotates the secret, so current and previous are both accepted;
- rate limits: 1,200 requests per 5 minutes per token, and a 429 blocks every call for
  5 minutes (`retry-after`); `Ratelimit` / `Ratelimit-Policy` headers on answers;
- caption tracks: `PUT /accounts/{a}/stream/{uid}/captions/{language}`, a multipart upload of
  a WebVTT `file`, "one caption or subtitle file per language" (cloudflare-python
  `stream.captions.language.update`; developers.cloudflare.com/stream/edit-videos/adding-captions),
  answered with the caption `{language, label}`; `GET .../captions` lists them;
- signed playback (`migrator verify` of a video created with `requireSignedURLs`): `POST
  /accounts/{a}/stream/{uid}/token {"exp": ...}` -> `result.token` ("Create signed URL tokens for videos";
  cloudflare-python `stream.token.create`: `exp` at most 24 h ahead, one hour without it), and the HLS
  manifest with the token "in place of the video id" (developers.cloudflare.com/stream/viewing-videos/
  securing-your-stream: `https://customer-<CODE>.cloudflarestream.com/<TOKEN>/manifest/video.m3u8`); the
  manifest's relative variant URIs resolve under the token's path, so nothing else carries it;
- what a viewer sees first (docs/providers.md "What a viewer sees"): Stream keeps no poster image, only a
  frame, `thumbnailTimestampPct`, "a percentage value of the video's duration ... If this value is not set, the
  default thumbnail image is taken from 0s" (cloudflare-python 5.9.0 CopyCreateParams, StreamEditParams): set at
  the create where the row's duration is known, and by the tracks worker through "Edit video details", `POST
  /accounts/{a}/stream/{uid}` (stream.edit), from the video's own duration, where the row has an image (kept in
  the stack's bucket, the time noted). Stream documents no chapters (its API's video resources are captions,
  audio tracks, downloads, clips, watermarks, keys, tokens, embeds, webhooks and live inputs), no folders or
  playlists and no publish time: the chapters file is kept in the stack's bucket, the collections and the
  publish time ride in `meta`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from urllib.parse import urlsplit, urlunsplit

from ..fate import Outcome, OutcomeKind, excerpt
from ..messages import Track
from ..signatures import Scheme, sign, verify
from ..states import State
from ..tracks import TrackOutcome, TrackResult
from .base import Provider, json_event, listing_pages, too_many_pages
from .facts import (
    AssetRef,
    CredentialsError,
    PlaybackKeys,
    Poll,
    RemoteTrack,
    SignedPlayback,
    SigningUnavailable,
    TrackList,
    TrackUpload,
    Video,
    WebhookEvent,
    body_event_id,
    duration_of,
    entries,
    epoch_of,
    found_among,
    mapping,
    our_ref,
    playback_of,
    rejected_video,
    text,
    video_id,
)
from .fidelity import PUBLIC, SIGNED, details_of, free_map, privacy_notes, row_fields, with_usage
from .http import Answer, TransportError, quote
from .keys import asset_tag, idempotency_key

WORKING = frozenset({"pendingupload", "downloading", "queued", "inprogress", "live-inprogress"})
PAGE_SIZE = 1000  # the list's maximum
# The row's fields `meta` carries under their own names (Stream documents no size limit for `meta`).
META_FIELDS = ("description", "tags", "created_at", "published_at", "folder")


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
    # "When set to true, a signed token must be generated with a signing key to view the video."
    signed = video.get("requireSignedURLs")
    privacy = (SIGNED if signed else PUBLIC) if isinstance(signed, bool) else None
    if state == "ready":
        return Video(
            remote_id,
            ref,
            State.READY,
            state,
            duration_s=duration_of(video.get("duration")),
            created_at=created_at,
            privacy=privacy,
            playback=read_playback(video, remote_id),
        )
    if state == "error":
        code = status.get("errorReasonCode") or status.get("errReasonCode")
        text = status.get("errorReasonText") or status.get("errReasonText")
        reason = ": ".join(str(part) for part in (code, text) if isinstance(part, str) and part) or None
        return rejected_video(remote_id, ref, state, reason, created_at=created_at, privacy=privacy)
    known = state in WORKING
    return Video(remote_id, ref, None, excerpt(state, 40), known=known, created_at=created_at, privacy=privacy)


# A create's answer at one of Stream's account limits (developers.cloudflare.com/stream/faq: past 120
# videos queued or encoding, or past the storage minutes bought, an upload gets a 429 or a 413 with
# the reason in its body). The body's wording is not documented: a 429 is the in-progress cap when
# it speaks of videos queued or in progress as the FAQ does; any other 429 is the request rate's
# (its "please wait and consider throttling your request speed", code 971).
_IN_PROGRESS = re.compile(r"queued|in ?progress|being encoded|encoding|concurren", re.I)


# Signed URL tokens ("Create signed URL tokens for videos"): `exp` "The maximum time specification is 24 hours
# from issuing time" (cloudflare-python 5.9.0, TokenCreateParams). A token is a JWT (base64url parts and dots)
# that takes the uid's place in a URL path; anything else in `result.token` is refused.
MAX_TOKEN_TTL_S = 86_400
MAX_TOKEN_LENGTH = 4096
_TOKEN = re.compile(r"^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+){0,2}$")


def token_body(ttl_s: float, now: float, downloadable: bool = False) -> dict:
    """A /token request's body: `exp` `ttl_s` from `now` (a minute to 24 h), and `downloadable` (the MP4 too)."""
    body: dict = {"exp": int(now + min(max(ttl_s, 60.0), MAX_TOKEN_TTL_S - 60.0))}
    if downloadable:
        body["downloadable"] = True
    return body


def token_of(body: object) -> str | None:
    """The signed token of a /token answer (`result.token`), when it is one a URL path can carry."""
    token = mapping(mapping(body).get("result")).get("token")
    ok = isinstance(token, str) and len(token) <= MAX_TOKEN_LENGTH and _TOKEN.match(token) is not None
    return token if ok else None


def with_token(url: str, uid: str, token: str) -> str | None:
    """A Stream delivery URL that names the video by its uid (its manifest, its MP4 download) with the token
    in place of the uid, as Stream serves a video that requires signed URLs; None when not exactly one
    segment of its path is the uid."""
    parts = urlsplit(url)
    segments = parts.path.split("/")
    at = [i for i, segment in enumerate(segments) if segment == uid]
    if len(at) != 1 or parts.scheme not in ("https", "http"):
        return None
    segments[at[0]] = token
    return urlunsplit(parts._replace(path="/".join(segments)))


def account_limit(answer: Answer, outcome: Outcome) -> Outcome:
    """A 413, or a 429 about videos in progress, is the account's limit, not this asset's nor the
    request rate's: the fleet holds (scope "account"), no cut, and the asset is never rejected for it."""
    if answer.status == 413 or (answer.status == 429 and _IN_PROGRESS.search(answer.text or "")):
        detail = excerpt(answer.text, 200)
        error = f"HTTP {answer.status}: {detail}" if detail else f"HTTP {answer.status}"
        return replace(outcome, kind=OutcomeKind.THROTTLED, scope="account", error=error)
    return outcome


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
    # developers.cloudflare.com/stream/faq: at most 120 videos queued or encoding at once, by default.
    max_in_flight = 120
    # developers.cloudflare.com/fundamentals/api/reference/limits: 1,200 requests per 5 minutes per
    # user, every call, token and the dashboard together; its `Ratelimit-Policy` states that budget.
    budget_covers_all_calls = True
    documented_rate_per_s = 1200 / 300
    documented_rate_doc = (
        "1,200 API calls per 5 minutes per user, every call counted"
        " (developers.cloudflare.com/fundamentals/api/reference/limits)"
    )
    rate_limit_window_s = None  # it states its window in `Ratelimit-Policy`; a bare limit has none
    duplicate_window = (
        "none found: before any second create the uploader asks for the asset's videos by `creator` (an exact "
        "filter on our per-asset tag), so a create whose answer was lost is found as soon as Cloudflare lists it"
    )

    # one callback when processing is over (Stream: use webhooks).
    events_per_asset = 1
    webhook_scheme = Scheme.CLOUDFLARE
    # "The URL must support HTTP HEAD requests and HTTP GET range requests" (Stream: upload via a link).
    fetches_presigned_get = False
    # "Stream will fetch the file on your behalf ... Stream must download and encode the video, which can take a
    # few seconds to a few minutes" (upload-via-link): fetched at the copy, so a link alive then will do.
    link_valid_for_s = None

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {credentials(self.secret())[1]}"}

    def check(self) -> Answer:
        return self.http.send("GET", self._stream(), params={"limit": "1"})

    def doctor_event(self, secret: str, now: float) -> tuple[bytes, dict[str, str]]:
        # Cloudflare's callback is a video; one still in progress settles nothing.
        body = json.dumps({"uid": "doctor", "status": {"state": "inprogress"}, "meta": {}}).encode()
        return body, sign(Scheme.CLOUDFLARE, body, secret, now)

    def webhook_target(self) -> str | None:
        """The account's one webhook (`GET .../stream/webhook`, "Use webhooks": one per account, per
        user of it: pointing it at this stack takes it from any other integration); "" when unset."""
        answer = self.http.send("GET", f"{self._stream()}/webhook")
        if answer.status == 404:
            return ""
        result = mapping(mapping(answer.body).get("result"))
        url = result.get("notificationUrl") or result.get("notification_url")
        return url if isinstance(url, str) else ""

    def _stream(self) -> str:
        return f"/accounts/{quote(credentials(self.secret())[0])}/stream"

    def create(self, asset: AssetRef, source_url: str) -> Outcome:
        body, notes = self._create_body(asset, source_url)
        return self._post_create(f"{self._stream()}/copy", body, notes, _result_uid)

    def _create_failure(self, answer: Answer) -> Outcome:
        """A 413, or a 429 about videos in progress, is an account limit, never the asset's fault."""
        return account_limit(answer, self._failure(answer))

    def _create_body(self, asset: AssetRef, source_url: str) -> tuple[dict, list[str]]:
        # Fields: cloudflare-python 5.9.0 stream.copy.create (CopyCreateParams), from Cloudflare's OpenAPI.
        details, notes = details_of(asset), []
        ours = {
            "name": asset.title or asset.asset_id,
            "migration_ref": asset.asset_id,
            "migration_key": idempotency_key(asset.asset_id, asset.generation),
            **row_fields(details, META_FIELDS),
        }
        if details.collections:  # no folders or playlists at Stream: the row's list, in meta
            ours["collections"] = [c.as_dict() for c in details.collections]
        options, option_notes = self.create_options(asset)
        # The row's poster time as a fraction of its duration, else the option (the row's, else the stack's).
        pct = options.get("thumbnailTimestampPct")  # checked: a number from 0 to 1 (create_options)
        if details.poster_time_s is not None:
            if details.duration_s:
                pct = min(1.0, details.poster_time_s / details.duration_s)
                if details.poster_time_s > details.duration_s:
                    notes.append("poster_time_s: past the duration, the last frame taken (thumbnailTimestampPct 1)")
            else:
                ours["poster_time_s"] = details.poster_time_s
                notes.append("poster_time_s: kept in meta only (thumbnailTimestampPct needs the duration, not known)")
        meta, clash_notes = free_map(ours, with_usage(details.metadata, details.usage), "meta")
        # `input`, not the deprecated `url` (developers.cloudflare.com/api: stream "upload from URL").
        body: dict = {
            "input": source_url,
            "creator": asset_tag(asset.asset_id),
            "meta": meta,
            "requireSignedURLs": self.playback(asset) == SIGNED,
        }
        if isinstance(pct, int | float):
            body["thumbnailTimestampPct"] = round(float(pct), 6)
        origins = options.get("allowedOrigins")  # checked: a list of domains
        if isinstance(origins, list) and origins:
            body["allowedOrigins"] = list(origins)
        return body, notes + clash_notes + privacy_notes(details.privacy, self.name) + option_notes

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

    # --- migrator verify: signed playback ------------------------------------------------------

    def signed_playback(self, playback: Mapping, ttl_s: float, keys: PlaybackKeys | None) -> SignedPlayback:
        """The video's HLS manifest with a token Stream made for it in place of its uid (`keys` unused: the
        /token route signs with Stream's own key). A 429 or 5xx is a TransportError (checked next run)."""
        uid, hls = video_id(playback.get("playback_id")), text(playback.get("hls"))
        if uid is None or hls is None:
            raise SigningUnavailable("no Stream uid and HLS URL recorded for it")
        try:
            path = f"{self._stream()}/{quote(uid)}/token"
        except CredentialsError as exc:
            raise SigningUnavailable(str(exc)) from None
        answer = self.http.send("POST", path, token_body(ttl_s, self.clock()))
        if answer.status == 429 or answer.status >= 500:
            raise TransportError(f"HTTP {answer.status}")
        if answer.status != 200:
            raise SigningUnavailable(f"Stream's /token answered HTTP {answer.status}: {excerpt(answer.text, 120)}")
        token = token_of(answer.body)
        url = with_token(hls, uid, token) if token else None
        if url is None:
            raise SigningUnavailable("Stream's token, or the HLS URL recorded, cannot make a signed manifest URL")
        return SignedPlayback(url)

    # --- caption tracks ----------------------------------------------------------------------

    takes_tracks = True
    one_track_per_language = True

    def track_list(self, remote_id: str) -> TrackList | TrackOutcome:
        answer = self._track_send("GET", f"{self._stream()}/{quote(remote_id)}/captions")
        if isinstance(answer, TrackOutcome):
            return answer
        if answer.status != 200:
            return self._track_list_failure(answer)
        listed = [mapping(c) for c in entries(mapping(answer.body).get("result"))]
        return TrackList(tuple(_caption(c) for c in listed if not c.get("generated")))

    def attach_track(self, remote_id: str, track: Track, upload: TrackUpload, label: str) -> TrackOutcome:
        path = f"{self._stream()}/{quote(remote_id)}/captions/{quote(track.language)}"
        answer = self._upload_caption("PUT", path, track, upload)
        if isinstance(answer, TrackOutcome):
            return answer
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=track.language)

    # --- what a viewer sees: the poster frame (no chapters, no collections: meta at the create) ---------------

    takes_thumbnail = "time"  # thumbnailTimestampPct: Stream keeps no image of its own
    collections_instead = "carried in meta.collections at the create (Stream has no folders or playlists)"

    def set_thumbnail_time(self, remote_id: str, time_s: float) -> TrackOutcome:
        """The frame at `time_s` as the fraction of the video's duration Stream takes (read from the video: the row
        may not know it); nothing is written when the video shows that frame already (the create set it)."""
        path = f"{self._stream()}/{quote(remote_id)}"
        answer = self._extra_call("GET", path)
        if isinstance(answer, TrackOutcome):
            return answer
        video = mapping(mapping(answer.body).get("result"))
        duration = duration_of(video.get("duration"))
        if not duration:
            return TrackOutcome(TrackResult.WAITING, error="Stream does not know the video's duration yet")
        pct = round(min(1.0, max(0.0, time_s) / duration), 6)
        if video.get("thumbnailTimestampPct") == pct:
            return TrackOutcome(TrackResult.ATTACHED, remote_track_id=str(pct))
        # An edit changes what it names only (StreamEditParams: every field optional, "omit the field to indicate no
        # change"): the video's meta, signing and origins stay as the create set them.
        edited = self._extra_call("POST", path, json_body={"thumbnailTimestampPct": pct})
        if isinstance(edited, TrackOutcome):
            return edited
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=str(pct))


def _caption(caption: dict) -> RemoteTrack:
    language = caption.get("language")
    said = caption.get("status")
    status = said if isinstance(said, str) and said in ("ready", "inprogress", "error") else "ready"
    words = {"inprogress": "preparing", "error": "errored"}.get(status, status)
    return RemoteTrack(language if isinstance(language, str) else None, words, remote_id=text(language))


def _result_uid(answer: object) -> str | None:
    """The uid of the video an envelope's `result` carries (a create's answer)."""
    return read_stream_video(mapping(answer).get("result")).remote_id


def _uid(item: object) -> str | None:
    """A listed video's uid, or None when it has none we can read."""
    return video_id(mapping(item).get("uid"))
