"""api.video (its OpenAPI file oas_apivideo.yaml, and https://docs.api.video).

- credentials: the API key, as HTTP Basic's user name with an empty password; the secret
  holds the key, or JSON `{"api_key": "..."}`;
- create: `POST /videos` with `title` (required), `description`, `tags`, `source` (the URL),
  `public` (false for a private row), the operator's `mp4Support` and `playerId`, and
  `metadata` key/value pairs (text only): our exact id as `migration_ref`, the attempt's key,
  the original's creation time, the folder, the poster time (a thumbnail is picked by a later
  call, not at create) and the row's custom fields; 201 (or 202) with the video, its id
  `videoId`; the video object has no status;
- no idempotency key: an earlier create is found with the list's metadata filter
  (`metadata[migration_ref]=<id>`), newest first, and its `/status` is read so an
  encoding that failed is never adopted;
- poll: `GET /videos/{id}/status`: ready when `encoding.playable` (duration in
  `encoding.metadata.duration`); there is no error state or reason, so a video whose
  every quality `failed` is taken as rejected;
- webhooks: `X-Api-Video-Signature`, a hex HMAC of the body alone (no timestamp: the
  body's `emittedAt` bounds replays); `video.encoding.quality.completed` names only the
  video and a quality, so it is a prompt to read the video's status, not an outcome; no
  event exists for a failure (reconcile's poll finds those);
- rate limits: per minute (uploads 100, writes 200, reads 500 in production), with
  `X-RateLimit-Limit`, `-Remaining` and `-Retry-After` on every answer;
- private videos (`public: false`): every read of the video gives links with a fresh private token in
  their path (`https://vod.api.video/vod/{id}/token/{private token}/hls/manifest.m3u8`), good for one
  request; `GET https://vod.api.video/vod/{id}/token/{private token}/session` answers
  `{"session_token"}`, which every later request carries as `avh` for 24 hours (docs.api.video,
  "Private video session tokens"). `signed_playback` (migrator verify) reads the video again and opens
  such a session; the source's resolve does the same for the MP4 a target fetches;
- caption tracks: `POST /videos/{id}/captions/{language}`, a multipart `file` that is WebVTT
  ("Currently only VTT file format is supported", docs.api.video/vod/add-captions; the
  OpenAPI's Caption `{uri, src, srclang, languageName, default}`), one per language;
  `GET /videos/{id}/captions` lists them (`data`, paginated);
- what a viewer sees first (docs/providers.md "What a viewer sees"): the thumbnail is uploaded, `POST
  /videos/{id}/thumbnail`, a multipart `file` "image/jpeg, image/png or image/webp. The max allowed size is
  8 MiB" (oas_apivideo.yaml video-thumbnail-upload-payload; api-video 1.4.7 `upload_thumbnail`), or picked
  from a time, `PATCH /videos/{id}/thumbnail {"timecode": "hh:mm:ss.ms"}` (video-thumbnail-pick-payload), where
  the row has a poster time and no image. The video object does not say whether its thumbnail is a custom
  one, so the image's fingerprint goes into its metadata (`migration_thumbnail`, written whole: "whatever
  you send here will overwrite the existing metadata", video-update-payload) for a later pass's look.
  Chapters: `POST /videos/{id}/chapters/{language}`, a WebVTT `file`, listed at `GET /videos/{id}/chapters`
  (ChaptersApi). api.video has no folders or playlists (its API's resources are videos, captions, chapters,
  tags, players, watermarks, upload tokens, live streams, webhooks, analytics, summaries): a row's collections
  become tags (their names) and `metadata.collections` at the create, each membership noted. No create field
  takes an original publish time (`publishedAt` is read-only: "The date and time the API created the
  video"), so it goes to metadata (`published_at`).
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from ..fate import Outcome, OutcomeKind, excerpt
from ..messages import Track
from ..redact import strip_controls
from ..signatures import Scheme, SignatureError, sign
from ..states import State
from ..tracks import TrackOutcome, TrackResult
from .base import Provider, listing_pages, lookup_failure, secret_text, too_many_pages, verified_event
from .extras import ChaptersLook, ChaptersUpload, ThumbnailLook, ThumbnailUpload
from .facts import (
    AssetRef,
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
    mapping,
    our_ref,
    playback_of,
    rejected_video,
    text,
    video_id,
)
from .fidelity import PUBLIC, SIGNED, as_text, details_of, free_map, privacy_notes, row_fields, with_usage
from .http import Answer, HttpTransport, TransportError, quote
from .keys import idempotency_key

PAGE_SIZE = 100  # the list's maximum
# The smallest page the list takes: the OpenAPI file says 1-100, but api.video's own documented
# 400 for an out-of-range pageSize gives the range as 10-100, so doctor asks for 10.
PAGE_SIZE_MIN = 10
# How far back a signed body's `emittedAt` may lie. It is when the event happened, not when this
# copy was sent, and api.video retries a failed delivery 3 times, 3 s apart (docs.api.video,
# webhooks), so a genuine delivery can come late by more than any clock tolerance. A replay of the
# same bytes is refused by the events table as long as it remembers the body's hash
# (webhook.DEDUPE_TTL_S, 14 days; tests pin the two together): the body's time need only stop a
# copy older than that memory.
EVENT_MEMORY_S = 14 * 86_400
MAX_CLOCK_SKEW_S = 3600  # how far ahead emittedAt may run (WebhookToleranceSeconds, at most this)
# The row's fields `metadata` carries as pairs, as text (oas_apivideo.yaml: metadata values are strings).
METADATA_FIELDS = ("created_at", "published_at", "folder", "poster_time_s")
# Our fingerprint of the thumbnail image a pass uploaded (extras.digest), in the video's metadata.
THUMBNAIL_MARK = "migration_thumbnail"
# "The max allowed size is 8 MiB" (video-thumbnail-upload-payload).
THUMBNAIL_MAX_BYTES = 8 * 1024 * 1024
# How many keys a note names when it lists the custom values sent as text.
NOTE_KEYS = 5
INGESTING = frozenset({"uploading", "uploaded", "ingesting", "ingested"})
QUALITY_EVENT = "video.encoding.quality.completed"
# "The session token TTL is 24 hours." (docs.api.video, "Private video session tokens")
SESSION_TTL_S = 86_400.0
# Pages of webhook subscriptions doctor reads at most (100 a page): an account has a handful.
WEBHOOK_MAX_PAGES = 10
# A private video's link: `<host>[/prefix]/<video id>/token/<private token>/<file>` (docs.api.video, "Video privacy
# access management": "the HLS manifest has the token in the url path").
_PRIVATE_LINK = re.compile(
    r"^(?P<base>https?://[^/?#\s]+(?:/[^?#\s]*)?/[A-Za-z0-9]{1,64}/token/[A-Za-z0-9-]{1,128})/[^?#\s]+(?:\?[^#\s]*)?$"
)
_SESSION_TOKEN = re.compile(r"^[A-Za-z0-9._~-]{1,256}$")


class SessionError(Exception):
    """No session for a private video's link: why, without the link or its token."""


def session_url(link: str) -> str | None:
    """The session route of the private token `link` carries (`.../token/{token}/session`), or None when the
    link carries none (a public video's)."""
    found = _PRIVATE_LINK.match(link) if isinstance(link, str) and len(link) <= 2048 else None
    return f"{found.group('base')}/session" if found else None


def with_session(link: str, session: str) -> str:
    """`link` with the session token as `avh`, which every request after the session's first carries."""
    parts = urllib.parse.urlsplit(link)
    query = urllib.parse.urlencode([*urllib.parse.parse_qsl(parts.query), ("avh", session)])
    return urllib.parse.urlunsplit(parts._replace(query=query))


def open_session(vod: HttpTransport, link: str) -> str:
    """A session token for the private token in `link`, from its delivery host (no credentials: the
    private token is the credential, spent by this request). SessionError when the host refuses or answers
    garbage; TransportError when it does not answer."""
    target = session_url(link)
    if target is None:
        raise SessionError("the link carries no private token")
    answer = vod.send("GET", target, max_body_bytes=16 * 1024)
    if answer.status == 429 or answer.status >= 500:
        raise TransportError(f"HTTP {answer.status} from the delivery host")
    if answer.status != 200:
        raise SessionError(f"the private video's session route answered HTTP {answer.status}")
    token = mapping(answer.body).get("session_token")
    if not isinstance(token, str) or not _SESSION_TOKEN.match(token):
        raise SessionError("the private video's session route gave no session token")
    return token


def vod_allowed(link: str, api_base: str) -> bool:
    """Whether a session may be asked at `link`'s host: over https, or at the API's own origin (a simulator)."""
    parts, base = urllib.parse.urlsplit(link), urllib.parse.urlsplit(api_base)
    return parts.scheme == "https" or (parts.scheme, parts.netloc) == (base.scheme, base.netloc)


def vod_transport(http: HttpTransport) -> HttpTransport:
    """A transport to api.video's delivery host: the API's connection pool and timeouts, no credentials
    (the API key never leaves for another host)."""
    connect, read = http.timeout
    return HttpTransport("", dict, http.session, connect, read)


def basic_auth(raw: str | None) -> dict[str, str]:
    """HTTP Basic with the API key as user name and no password."""
    key = secret_text(raw, "api_key", "api.video")
    return {"Authorization": "Basic " + base64.b64encode(f"{key}:".encode()).decode("ascii")} if key else {}


def metadata_value(video: object, key: str) -> object:
    entries = mapping(video).get("metadata")
    if not isinstance(entries, list):
        return None
    return next((e.get("value") for e in entries if isinstance(e, dict) and e.get("key") == key), None)


def read_status(remote_id: str | None, status: object, ref: str | None = None) -> Video:
    """`GET /videos/{id}/status`: playable means ready; every quality failed means rejected."""
    if not isinstance(status, dict):
        return Video(remote_id, ref, status="not an object", known=False)
    encoding, ingest = mapping(status.get("encoding")), mapping(status.get("ingest"))
    qualities = [q for q in entries(encoding.get("qualities")) if isinstance(q, dict)]
    word = ingest.get("status") if isinstance(ingest.get("status"), str) else ""
    if encoding.get("playable") is True:
        media = mapping(encoding.get("metadata"))
        size = playback_of(width=media.get("width"), height=media.get("height"))
        return Video(
            remote_id, ref, State.READY, "playable", duration_s=duration_of(media.get("duration")), playback=size
        )
    if qualities and all(q.get("status") == "failed" for q in qualities):
        return rejected_video(remote_id, ref, "failed", "encoding failed for every quality")
    known = word in INGESTING or any(q.get("status") in ("waiting", "encoding", "encoded") for q in qualities)
    return Video(remote_id, ref, None, excerpt(word or "encoding", 40), known=known)


def read_listed(video: object) -> Video:
    """A video object (create answer, list entry): identity and privacy only; its status lives elsewhere."""
    public = mapping(video).get("public")  # "If set to `false` the video will become private"
    return Video(
        video_id(mapping(video).get("videoId")),
        our_ref(metadata_value(video, "migration_ref")),
        status="listed",
        created_at=epoch_of(mapping(video).get("createdAt")),
        privacy=(PUBLIC if public else SIGNED) if isinstance(public, bool) else None,
    )


_IFRAME_SRC = re.compile(r"""\bsrc=["']([^"'<>\s]+)["']""")


def read_playback(video: object, size: dict | None = None) -> dict | None:
    """The video object's `assets` (`hls`, `player`, `iframe`: an HTML snippet whose `src` is read,
    `thumbnail`, `mp4`) and `public` (false: a private video, whose URLs carry a token that plays
    once), with the resolution `/status` reported (`size`). (oas_apivideo.yaml: video, video-assets.)"""
    video = mapping(video)
    assets = mapping(video.get("assets"))
    iframe = assets.get("iframe")
    embed = _IFRAME_SRC.search(iframe) if isinstance(iframe, str) and len(iframe) < 4096 else None
    size = size or {}
    return playback_of(
        # Public only when api.video says so: a missing or malformed `public` never widens the record.
        policy="public" if video.get("public") is True else "private",
        playback_id=video.get("videoId"),
        hls=assets.get("hls"),
        player=assets.get("player"),
        embed=embed.group(1) if embed else None,
        thumbnail=assets.get("thumbnail"),
        mp4=assets.get("mp4"),
        width=size.get("width"),
        height=size.get("height"),
    )


def emitted_in_window(emitted: float, now: float, tolerance_s: float) -> bool:
    """Whether a body emitted at `emitted` may still be taken at `now`: up to the clock tolerance
    ahead, and back as far as the events table remembers it, less that tolerance (a copy first seen
    up to `skew` before its emittedAt is still remembered when the window closes on it)."""
    skew = max(0.0, min(float(tolerance_s), MAX_CLOCK_SKEW_S))
    return now - (EVENT_MEMORY_S - skew) <= emitted <= now + skew


class ApiVideoProvider(Provider):
    name = "apivideo"
    default_base_url = "https://ws.api.video"
    # X-RateLimit-Limit counts per minute (docs.api.video's rate limits: 100 uploads, 200 writes a minute).
    rate_limit_window_s = 60.0
    documented_rate_per_s = 100 / 60
    documented_rate_doc = "100 uploads a minute in production (docs.api.video/reference/limits)"
    duplicate_window = (
        "none found: before any second create the uploader asks for the asset's videos with the list's "
        "metadata filter, so a create whose answer was lost is found as soon as api.video lists it"
    )

    # video.encoding.quality.completed once per quality (4 HLS renditions + 1 MP4 for a 1080p source).
    events_per_asset = 5
    webhook_scheme = Scheme.APIVIDEO
    # `source` is fetched as the video is made (ingesting); no later fetch, and no lifetime the link must have,
    # is documented: a link alive at the create will do.
    link_valid_for_s = None

    def auth_headers(self) -> dict[str, str]:
        return basic_auth(self.secret())

    def check(self) -> Answer:
        return self.http.send("GET", "/videos", params={"pageSize": str(PAGE_SIZE_MIN)})

    def webhook_urls(self) -> list[str] | None:
        """Where the account's webhooks point: `GET /webhooks` ("List all webhooks", oas_apivideo.yaml; api-video
        1.4.7 `WebhooksApi.list`), `{data: [{webhookId, createdAt, events, url}], pagination}`, every page; None
        when the key may not read them. For `migrator doctor`: the account keeps many subscriptions."""
        urls: list[str] = []
        for page in range(1, WEBHOOK_MAX_PAGES + 1):
            answer = self.http.send("GET", "/webhooks", params={"currentPage": str(page), "pageSize": str(PAGE_SIZE)})
            if answer.status in (401, 403, 404):
                return None
            if answer.status != 200:
                raise TransportError(f"HTTP {answer.status} listing the webhooks")
            body = mapping(answer.body)
            urls += [u for u in (text(mapping(w).get("url")) for w in entries(body.get("data"))) if u]
            pages = mapping(body.get("pagination")).get("pagesTotal")
            if not isinstance(pages, int) or page >= pages:
                break
        return urls

    def doctor_event(self, secret: str, now: float) -> tuple[bytes, dict[str, str]]:
        emitted = datetime.fromtimestamp(now, UTC).isoformat()
        body = json.dumps({"type": "migrator.doctor", "emittedAt": emitted, "videoId": "doctor"}).encode()
        return body, sign(Scheme.APIVIDEO, body, secret, now)

    def create(self, asset: AssetRef, source_url: str) -> Outcome:
        body, notes = self._create_body(asset, source_url)
        return self._post_create("/videos", body, notes, lambda answer: read_listed(answer).remote_id)

    def _create_body(self, asset: AssetRef, source_url: str) -> tuple[dict, list[str]]:
        # Fields: oas_apivideo.yaml video-creation-payload (api-video 1.4.7 VideoCreationPayload); no lengths or
        # counts are documented for them, so what the message allows goes whole.
        details, notes = details_of(asset), []
        ours = {
            "migration_ref": asset.asset_id,
            "migration_key": idempotency_key(asset.asset_id, asset.generation),
            **row_fields(details, METADATA_FIELDS),
        }
        if details.collections:  # no folders or playlists at api.video: the list in metadata, the names as tags
            ours["collections"] = [c.as_dict() for c in details.collections]
        pairs, clash_notes = free_map(ours, with_usage(details.metadata, details.usage), "metadata")
        as_json = [key for key, value in details.metadata.items() if key not in ours and not isinstance(value, str)]
        body: dict = {"title": asset.title or asset.asset_id, "source": source_url}
        if details.description is not None:
            body["description"] = details.description
        tags = list(dict.fromkeys([*details.tags, *(c.name for c in details.collections)]))
        if tags:
            body["tags"] = tags
        body["metadata"] = [{"key": key, "value": as_text(value)} for key, value in pairs.items()]
        # "Default: True. If set to `false` the video will become private."
        body["public"] = self.playback(asset) == PUBLIC
        options, option_notes = self.create_options(asset)
        body.update({name: options[name] for name in ("mp4Support", "playerId") if name in options})
        if details.poster_time_s is not None and details.thumbnail_url:
            notes.append("poster_time_s: kept in metadata only (the row's thumbnail image is the poster)")
        if as_json:
            shown = ", ".join(strip_controls(k)[:40] for k in as_json[:NOTE_KEYS])
            shown += ", …" if len(as_json) > NOTE_KEYS else ""
            notes.append(f"metadata: {len(as_json)} values sent as JSON text (api.video keeps text): {shown}")
        return body, notes + clash_notes + privacy_notes(details.privacy, self.name) + option_notes

    def find(self, asset_id: str, created_after: float | None) -> Outcome:
        listed = self._listed(asset_id)
        if isinstance(listed, Outcome):
            return listed
        for remote_id in listed:
            status = self._status(remote_id)
            if isinstance(status, Outcome):
                return status
            if status.target is not State.REJECTED:
                return Outcome(OutcomeKind.CREATED, remote_id=remote_id)
        return Outcome(OutcomeKind.NOT_FOUND)

    def _listed(self, asset_id: str) -> list[str] | Outcome:
        """The ids of the asset's videos, newest first (the list's metadata filter)."""
        params = {"metadata[migration_ref]": asset_id, "sortBy": "createdAt", "sortOrder": "desc"}
        items = self._listing("/videos", {**params, "pageSize": str(PAGE_SIZE)}, "data")
        if isinstance(items, Outcome):
            return items
        return [v.remote_id for v in map(read_listed, items) if v.remote_id and v.ref == asset_id]

    def _status(self, remote_id: str) -> Video | Outcome:
        answer = self._send("GET", f"/videos/{quote(remote_id)}/status")
        if isinstance(answer, Outcome):
            return Outcome(answer.kind, error=f"lookup {answer.error}")
        if not 200 <= answer.status < 300:
            return lookup_failure(self._failure(answer))
        return read_status(remote_id, answer.body)

    def _poll_video(self, asset_id: str, remote_id: str) -> Poll:
        polled = self._get_video(
            f"/videos/{quote(remote_id)}/status", lambda body: read_status(remote_id, body, asset_id)
        )
        video = polled.video
        if video is None or video.target is not State.READY:
            return polled
        # /status has no URLs: a ready video's playback lives on the video object (one read more,
        # per asset, once: reads are 500 a minute against 100 uploads). Without it the video is
        # ready all the same; export then says its playback was not recorded.
        answer = self._send("GET", f"/videos/{quote(remote_id)}")
        if isinstance(answer, Outcome) or answer.status != 200:
            return polled
        return replace(polled, video=replace(video, playback=read_playback(answer.body, video.playback)))

    def read_webhook(
        self, body: bytes, headers: Mapping[str, str], secrets: Sequence[str], now: float, tolerance_s: int
    ) -> WebhookEvent:
        event, kind, _ = verified_event(Scheme.APIVIDEO, body, headers, secrets, now, tolerance_s)
        # The signature binds no time: the body's own emittedAt bounds how long a copy can be replayed.
        emitted = epoch_of(event.get("emittedAt"))
        if emitted is not None and not emitted_in_window(emitted, now, tolerance_s):
            raise SignatureError("timestamp outside tolerance")
        remote_id = video_id(event.get("videoId"))
        if kind != QUALITY_EVENT or remote_id is None:
            return WebhookEvent(body_event_id(body), None, remote_id, note=f"not an outcome: {excerpt(kind, 60)}")
        return WebhookEvent(body_event_id(body), None, remote_id, confirm=True, note=f"{kind} (asking for its status)")

    def videos(self) -> Iterator[Video]:
        """Oldest first, 100 a page, up to `pagination.pagesTotal`; an empty page ends it whatever
        that total says, and past LISTING_MAX_PAGES pages it stops loudly."""
        for page in listing_pages():
            params = {"sortBy": "createdAt", "sortOrder": "asc", "pageSize": str(PAGE_SIZE), "currentPage": str(page)}
            body, items = self._library_page("/videos", params, "data")
            for item in items:
                yield read_listed(item)
            total = mapping(body.get("pagination")).get("pagesTotal")
            if not items or not isinstance(total, int) or page >= total:
                return
        raise too_many_pages()

    def settled(self, video: Video) -> Video:
        """A listed video's status: api.video lists identities only."""
        if not video.remote_id:
            return video
        status = self._status(video.remote_id)
        if isinstance(status, Outcome):
            return replace(video, status=f"status unknown ({status.error})", known=False)
        return replace(
            video,
            target=status.target,
            status=status.status,
            known=status.known,
            duration_s=status.duration_s,
            error=status.error,
        )

    # --- migrator verify: a private video's playback ---------------------------------------

    def signed_playback(self, playback: Mapping, ttl_s: float, keys: object = None) -> SignedPlayback:
        """A private video's HLS, for verify's own fetches: the video read again (`GET /videos/{id}`: its
        `assets.hls` with a fresh private token), a session opened on that token, and its `avh` on the
        manifest and every request after it (the session lives 24 hours, longer than any `ttl_s`)."""
        vid = video_id(playback.get("playback_id"))
        if vid is None:
            raise SigningUnavailable("no api.video video id is recorded for this playback")
        answer = self.http.send("GET", f"/videos/{quote(vid)}")
        if answer.status == 429 or answer.status >= 500:
            raise TransportError(f"HTTP {answer.status} reading the video")
        if answer.status != 200:
            raise SigningUnavailable(f"reading the video at api.video answered HTTP {answer.status}")
        hls = text(mapping(mapping(answer.body).get("assets")).get("hls"))
        if not hls:
            raise SigningUnavailable("api.video gives the video no HLS link")
        if session_url(hls) is None:
            return SignedPlayback(hls)  # no private token in it (made public since): nothing to open
        if not vod_allowed(hls, self.http.base):
            raise SigningUnavailable("api.video's HLS link is not https")
        try:
            session = open_session(vod_transport(self.http), hls)
        except SessionError as exc:
            raise SigningUnavailable(str(exc)) from None
        return SignedPlayback(with_session(hls, session), (("avh", session),))

    # --- caption tracks ----------------------------------------------------------------------

    takes_tracks = True
    one_track_per_language = True

    def track_list(self, remote_id: str) -> TrackList | TrackOutcome:
        params = {"pageSize": str(PAGE_SIZE)}  # one page: a video holds a caption per language, far fewer than 100
        answer = self._track_send("GET", f"/videos/{quote(remote_id)}/captions", params=params)
        if isinstance(answer, TrackOutcome):
            return answer
        if answer.status != 200:
            return self._track_list_failure(answer)
        listed = [mapping(c) for c in entries(mapping(answer.body).get("data"))]
        return TrackList(tuple(RemoteTrack(text(c.get("srclang")), remote_id=text(c.get("uri"))) for c in listed))

    def attach_track(self, remote_id: str, track: Track, upload: TrackUpload, label: str) -> TrackOutcome:
        answer = self._upload_caption(
            "POST", f"/videos/{quote(remote_id)}/captions/{quote(track.language)}", track, upload
        )
        if isinstance(answer, TrackOutcome):
            return answer
        uri = text(mapping(answer.body).get("uri"))
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=uri or track.language)

    # --- what a viewer sees: thumbnail, chapters (no collections: tags and metadata at the create) -----------

    takes_thumbnail = "image"
    thumbnail_max_bytes = THUMBNAIL_MAX_BYTES
    poster_time_later = True  # PATCH /videos/{id}/thumbnail picks a frame once the video exists
    takes_chapters = True
    collections_instead = (
        "carried as a tag of its name and in metadata.collections, at the create (api.video has no folders or"
        " playlists)"
    )

    def thumbnail_state(self, remote_id: str) -> ThumbnailLook | TrackOutcome:
        """Whether a pass uploaded a thumbnail already: our fingerprint in the video's metadata."""
        answer = self._extra_call("GET", f"/videos/{quote(remote_id)}")
        if isinstance(answer, TrackOutcome):
            return answer
        mark = text(metadata_value(answer.body, THUMBNAIL_MARK))
        return ThumbnailLook(custom=bool(mark), digest=mark)

    def set_thumbnail(self, remote_id: str, image: ThumbnailUpload) -> TrackOutcome:
        """The upload, then our fingerprint merged into the metadata its answer lists (a write of the whole list).
        The image is the video's poster once the upload is taken: a marker that could not be written leaves it
        so (ATTACHED), only a later pass's look is then blind to it."""
        files = {"file": (f"thumbnail.{image.suffix}", image.body, image.media_type)}
        answer = self._extra_call("POST", f"/videos/{quote(remote_id)}/thumbnail", files=files)
        if isinstance(answer, TrackOutcome):
            return answer
        listed = map(mapping, entries(mapping(answer.body).get("metadata")))
        pairs = [{"key": text(m.get("key")) or "", "value": text(m.get("value")) or ""} for m in listed]
        pairs = [pair for pair in pairs if pair["key"] != THUMBNAIL_MARK]
        pairs.append({"key": THUMBNAIL_MARK, "value": image.digest})
        self._track_send("PATCH", f"/videos/{quote(remote_id)}", json_body={"metadata": pairs})
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=image.digest)

    def set_thumbnail_time(self, remote_id: str, time_s: float) -> TrackOutcome:
        body = {"timecode": timecode(time_s)}
        answer = self._extra_call("PATCH", f"/videos/{quote(remote_id)}/thumbnail", json_body=body)
        if isinstance(answer, TrackOutcome):
            return answer
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=body["timecode"])

    def chapters_of(self, remote_id: str, language: str) -> ChaptersLook | TrackOutcome:
        """The video's chapter files in `language` (one a language; the list is one page: a video has a few)."""
        answer = self._extra_call("GET", f"/videos/{quote(remote_id)}/chapters", params={"pageSize": str(PAGE_SIZE)})
        if isinstance(answer, TrackOutcome):
            return answer
        listed = [mapping(c) for c in entries(mapping(answer.body).get("data"))]
        return ChaptersLook(sum(1 for c in listed if (text(c.get("language")) or "").lower() == language.lower()))

    def set_chapters(self, remote_id: str, upload: ChaptersUpload) -> TrackOutcome:
        path = f"/videos/{quote(remote_id)}/chapters/{quote(upload.language)}"
        files = {"file": (f"{upload.language}.vtt", upload.webvtt, "text/vtt")}
        answer = self._extra_call("POST", path, files=files)
        if isinstance(answer, TrackOutcome):
            return answer
        uri = text(mapping(answer.body).get("uri"))
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=uri or upload.language)


def timecode(seconds: float) -> str:
    """A frame's time as the pick takes it, `hh:mm:ss.cc` (video-thumbnail-pick-payload's pattern,
    `\\d{2}:\\d{2}:\\d{2}(\\.\\d{2})?`)."""
    centis = max(0, round(seconds * 100))
    hours, rest = divmod(centis, 360_000)
    minutes, rest = divmod(rest, 6000)
    return f"{min(hours, 99):02d}:{minutes:02d}:{rest // 100:02d}.{rest % 100:02d}"
