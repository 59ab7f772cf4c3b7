"""JW Player (JWP Platform Management API v2, docs.jwplayer.com; the official `jwplatform` 2.2.2 SDK).

- credentials: the property's (site's) id and a v2 API secret, `Authorization: Bearer <secret>`
  ("API v2 authentication"); the secret holds JSON `{"site_id": ..., "api_secret": ...}`, and for
  signed playback the property's URL-signing secret, `"signing_secret"`, with `"url_signing": true`
  once URL signing is turned on for the property (below);
- create: `POST /v2/sites/{site}/media/` `{"upload": {"method": "fetch", "download_url": url},
  "metadata": {...}}` ("Fetch upload via URL": the answer says `"status": "processing"`); metadata
  `title, description, tags[], custom_params{}, publish_start_date, publish_end_date, external_id`
  ("Upload content"). Our exact id goes in `external_id` and in `custom_params.migration_ref`, the
  attempt's key, the row's creation time, folder, poster time and custom fields in `custom_params`
  as text (JW's custom params are string pairs: jwplatform-py's update_custom_params example);
- no idempotency key: an earlier create is found in the media list read newest first, `sort=created:dsc`
  with `page` and `page_length` ("Building a request"), back to the earlier try, each media matched here on
  `custom_params.migration_ref`, the asset's whole id. Not with `q`: the Management API documents an
  exact match on a field but says "value filters longer than 15 characters may not exactly match"
  (Query Parameter q), and documents no query on custom params (`custom_params: ( name: "abc" AND value:
  "123" )` is the separate Cross-Property Search API's, docs.cross-property-search.jwp.services). Only the
  newest 10,000 media of any query can be read (listing-media): a lost create older than that is not found;
- poll: `GET /v2/sites/{site}/media/{id}/`; `status` processing | ready | failed (with
  `error_message`; the full enum is not published);
- webhooks (`/v2/webhooks/`, "Learn about webhooks"): `media_created`, `conversions_complete`
  (first upload only), `media_available` (never for a publish date in the future), ... with a body
  `{event, media_id, webhook_id, site_id, event_time}` and `Authorization: Bearer <JWT>`, HS256
  with the webhook's secret, whose payload is the body (verify-the-authenticity-of-a-webhook, as
  peers read it): the token is checked against every secret, its payload must equal the body. The
  body names only the media: `conversions_complete` and `media_available` prompt a read of it
  (`confirm`); a failure sends nothing, and a held (unpublished) media never gets `media_available`,
  so reconcile's poll settles what no event will;
- privacy: JW has no private flag per media. Who may watch is the property's URL signing ("Protect
  your content with signed URLs": signed Delivery API requests, JWT HS256 with the property's secret)
  and each media's publish window. A row to be signed is published only on a property whose
  credentials say URL signing is on; elsewhere it is created held, `publish_start_date` HELD_UNTIL,
  so JW delivers it to no one until its owner publishes it. Never public by accident;
- signed playback (`migrator verify`): the HLS manifest `/manifests/{id}.m3u8` with the non-JWT
  signature (`exp`, `sig` = md5 of "<path>:<exp>:<secret>", "Legacy URL token signing"), made here;
- rate limit: "60 requests/minute per API token" for the Management API as a whole, a 429 past it,
  headers `jw-request-limit` / `jw-request-remaining` (peer clients); so creates at most 1/s
  (`create_rate_per_s`) with the pacer's lookups and polls on the same slots;
- caption tracks: `POST /v2/sites/{site}/media/{id}/text_tracks/` (post_v2-sites-site-id-media-media-id-text-
  tracks; jwplatform-py `TextTrack.create`) with the file fetched by URL (`upload.method` fetch, `download_url`,
  `file_format`) and `upload.auto_publish` (jwplatform-go's TextTrackUploadRequest), listed at
  `.../text_tracks/` (50 a media at most: "Each media can have a maximum of 50 text tracks") with `status`
  processing | draft | ready | failed. A draft is held back from viewers: `PUT .../text_tracks/{track}/publish/`
  "Enables a text track to be delivered via the Delivery API by changing the track status from draft to ready"
  (put_v2-sites-site-id-media-media-id-text-tracks-track-id-publish). So a track is created to publish itself,
  and one the tracks worker finds in draft (auto_publish not honoured, or made by a version of ours that sent
  none) is published by `publish_track`; a track is attached only once JW lists it ready. A track of `track_kind`
  chapters is not a caption: it is the chapters extra's;
- what a viewer sees first (jwplayer_extras.py, docs/providers.md "What a viewer sees"): the poster a thumbnail made
  from the image's link and promoted, chapters a text track of kind chapters, collections manual playlists in
  source order; the row's original publish time is the create's `metadata.publish_start_date` (jwplatform-go's
  MediaMetadata), unless the media is held or the time lies ahead (then custom_params, noted). The walk of the
  media list by date is jwplayer_walk.py's.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..fate import Outcome, OutcomeKind, excerpt
from ..messages import Track
from ..signatures import Scheme, SignatureError, hs256_token, verify
from ..states import State
from ..tracks import TrackOutcome, TrackResult
from .apivideo import emitted_in_window
from .base import (
    FIND_MARGIN_S,
    FIND_MAX_PAGES,
    ListingError,
    json_event,
    listing_pages,
    too_many_pages,
)
from .facts import (
    AssetRef,
    CredentialsError,
    PlaybackKeys,
    Poll,
    RateSignal,
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
from .fidelity import PUBLIC, SIGNED, as_text, details_of, free_map, privacy_notes, row_fields, with_usage
from .http import Answer, TransportError, quote
from .jwplayer_extras import JwExtras, is_chapters
from .jwplayer_walk import CEILING, CeilingError, Slice
from .keys import idempotency_key
from .ratelimit import read_rate_headers

DELIVERY = "https://cdn.jwplayer.com"
# No maximum page_length is published (the default is 10); a page is asked for at this size and read at the size
# the answer says it used, so a smaller cap at JW costs requests, never videos.
PAGE_LENGTH = 1000
# Pages of the newest media a lookup reads at most: the ceiling at the page length asked, and at a smaller cap
# a lookup that cannot reach back to the earlier try answers TRANSIENT rather than spend the minute's calls.
FIND_MAX_LOOKUP_PAGES = 20
# "Each media can have a maximum of 50 text tracks" (post_v2-sites-site-id-media-media-id-text-tracks): asked as one
# page, and read on at the page length JW answers with, to 5 pages (50 at the default 10 a page).
TRACKS_PAGE_LENGTH = 50
TRACK_LIST_MAX_PAGES = 5
WORKING = frozenset({"created", "processing", "updating"})
# Pages of webhook subscriptions doctor reads at most, and their length: an account has a handful.
WEBHOOK_MAX_PAGES, WEBHOOK_PAGE_LENGTH = 10, 100
# A media a signed row makes on a property without URL signing: published at this date, so no one before it.
HELD_UNTIL = "2099-12-31T00:00:00+00:00"
HELD_NOTE = (
    "privacy: held unpublished (publish_start_date 2099-12-31): the property's URL signing is not set in the"
    " credentials (url_signing and signing_secret), and JW has no private media; publish it once signing is on"
)
# The row's fields custom_params carries as text, under their own names.
CUSTOM_FIELDS = ("created_at", "folder", "poster_time_s")
CONFIRMING = frozenset({"conversions_complete", "media_available", "media_reuploaded"})
FINISHED_EVENTS = frozenset({"conversions_complete", "media_available"})
MAX_TOKEN_CHARS = 8192
SIGNED_TTL_MAX_S = 86_400.0


# --- credentials --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Credentials:
    site_id: str
    api_secret: str
    signing_secret: str | None = None
    url_signing: bool = False  # the operator says the property requires signed URLs


def credentials_of(doc: Mapping | None, what: str = "JW Player") -> Credentials:
    """The property and its secrets, checked (CredentialsError naming the field, never its value)."""
    if not isinstance(doc, Mapping):
        raise CredentialsError(f"no {what} credentials are configured")
    site, secret = doc.get("site_id"), doc.get("api_secret")
    if not isinstance(site, str) or not site.isalnum() or not 1 <= len(site) <= 32 or not site.isascii():
        raise CredentialsError(f'the {what} credentials need "site_id" (the property id: letters and digits)')
    if not isinstance(secret, str) or not secret:
        raise CredentialsError(f'the {what} credentials need "api_secret" (a v2 API secret)')
    signing = doc.get("signing_secret")
    if signing is not None and (not isinstance(signing, str) or not signing):
        raise CredentialsError(f"the {what} credentials' \"signing_secret\" must be the property's secret, as text")
    url_signing = doc.get("url_signing", False)
    if not isinstance(url_signing, bool):
        raise CredentialsError(f'the {what} credentials\' "url_signing" must be true or false')
    if url_signing and signing is None:
        raise CredentialsError(f'the {what} credentials say url_signing but carry no "signing_secret"')
    return Credentials(site, secret, signing, url_signing)


def parse_secret(raw: str | None) -> Credentials:
    if raw is None:
        raise CredentialsError("no JW Player credentials are configured (ProviderTokenSecretName)")
    try:
        doc = json.loads(raw)
    except ValueError:
        raise CredentialsError('the JW Player secret must be JSON {"site_id": ..., "api_secret": ...}') from None
    return credentials_of(doc if isinstance(doc, dict) else None)


# --- signing: JWTs (HS256) and the non-JWT file signatures -------------------------------------------


def hs256_jwt(claims: Mapping, secret: str) -> str:
    """`claims` as a compact JWS, HS256 with `secret` ("JW Platform only supports a single algorithm")."""
    return hs256_token(json.dumps(dict(claims), separators=(",", ":"), ensure_ascii=False).encode(), secret.encode())


def file_signature(url_path: str, expires: int, secret: str) -> str:
    """`md5(CONTENT_PATH:EXPIRATION_STAMP:ACCOUNT_SECRET)`, the path without its leading slash (Legacy URL token
    signing: `/videos/`, `/manifests/`, `/tracks/`, `/thumbs/` are signed so)."""
    return hashlib.md5(
        f"{url_path.lstrip('/')}:{expires}:{secret}".encode()
    ).hexdigest()  # JW's scheme, not ours to choose


def signed_file_url(url: str, expires: int, secret: str) -> str:
    parts = urlsplit(url)
    query = f"exp={expires}&sig={file_signature(parts.path, expires, secret)}"
    return parts._replace(query=f"{parts.query}&{query}" if parts.query else query).geturl()


def jw_rate_signal(headers: Mapping[str, str], now: float) -> RateSignal:
    """`jw-request-limit` (a minute's) and `jw-request-remaining`, read as the X-RateLimit pair; Retry-After too."""
    lowered = {str(k).lower(): v for k, v in headers.items() if isinstance(v, str)}
    mapped = dict(lowered)
    for ours, theirs in (("x-ratelimit-limit", "jw-request-limit"), ("x-ratelimit-remaining", "jw-request-remaining")):
        if theirs in lowered:
            mapped[ours] = lowered[theirs]
    return read_rate_headers(mapped, now, 60.0)


# --- what JW says of a media --------------------------------------------------------------------------


def window_closed(metadata: Mapping, now: float) -> bool:
    """Whether the media's publish window keeps it from everyone now (a start ahead, an end passed)."""
    start, end = epoch_of(metadata.get("publish_start_date")), epoch_of(metadata.get("publish_end_date"))
    return (start is not None and start > now) or (end is not None and end <= now)


def read_media(media: object, now: float, signs: bool, hosts: Callable[[str], dict] | None = None) -> Video:
    """A media object (a create's, a GET's, a list entry) in our terms. `signs`: the property requires signed
    URLs, so whatever is published plays only with a token; `hosts(id)`: its playback URLs."""
    if not isinstance(media, dict):
        return Video(None, status="not an object", known=False)
    remote_id = video_id(media.get("id"))
    metadata = mapping(media.get("metadata"))
    ref = our_ref(mapping(metadata.get("custom_params")).get("migration_ref"))
    status = text(media.get("status")) or ""
    created = epoch_of(media.get("created"))
    privacy = SIGNED if signs or window_closed(metadata, now) else PUBLIC
    if status == "ready":
        urls = hosts(remote_id) if hosts and remote_id else {}
        playback = playback_of(policy="signed" if privacy == SIGNED else "public", playback_id=remote_id, **urls)
        duration = duration_of(media.get("duration"))
        return Video(remote_id, ref, State.READY, status, duration_s=duration, created_at=created, privacy=privacy,
                     playback=playback)  # fmt: skip
    if status in ("failed", "error"):
        reason = text(media.get("error_message"))
        return rejected_video(remote_id, ref, status, reason, created_at=created, privacy=privacy)
    return Video(
        remote_id, ref, None, excerpt(status, 40), known=status in WORKING, created_at=created, privacy=privacy
    )


def delivery_urls(delivery: str, media_id: str) -> dict[str, str]:
    """Where a media plays (signing doc: `/manifests/{id}.m3u8`, `/v2/media/{id}/poster.jpg`, `/previews/{id}`);
    a simulator serves the same files under `<base>/_play/jwplayer/<id>/`."""
    mid = quote(media_id)
    if delivery == DELIVERY:
        return {
            "hls": f"{DELIVERY}/manifests/{mid}.m3u8",
            "thumbnail": f"{DELIVERY}/v2/media/{mid}/poster.jpg",
            "player": f"{DELIVERY}/previews/{mid}",
        }
    return {"hls": f"{delivery}/{mid}/manifest.m3u8", "thumbnail": f"{delivery}/{mid}/poster.jpg",
            "player": f"{delivery}/{mid}/player"}  # fmt: skip


class JwPlayerProvider(JwExtras):
    name = "jwplayer"
    default_base_url = "https://api.jwplayer.com"
    # "60 requests/minute per API token. Calls that exceed this rate will not be executed and will return a 429"
    # (authentication): about one call a second, creates and the pacer's lookups and polls together. Paced at
    # exactly 60 a minute, a minute's window may hold a 61st call, refused with the rest of that minute; 57 a
    # minute leaves room for that and for the few calls outside the pacer (a webhook's read of a media it
    # cannot settle from the ledger).
    create_rate_per_s = 0.95
    documented_rate_per_s = create_rate_per_s
    documented_rate_doc = (
        "60 requests a minute per API token, creates, lookups and polls together"
        " (docs.jwplayer.com/platform/reference/authentication)"
    )
    budget_covers_all_calls = True
    rate_limit_window_s = 60.0
    duplicate_window = (
        "none found: before any second create the uploader reads the media list newest first back to the "
        "earlier try and keeps only media whose custom_params.migration_ref is the asset's id; a create is found "
        "as soon as JW lists it, unless more than 10,000 media were made since (the ceiling of any query)"
    )
    # media_created, conversions_complete, media_available, and media_updated when a text track is added.
    events_per_asset = 4
    takes_caption_files = False  # a text track is fetched by JW from a URL, as media are
    webhook_scheme = Scheme.JWPLAYER
    track_needs_webvtt = False
    # "Fetch upload via URL": the media is `processing` from the create; no later fetch, and no lifetime the link
    # must have, is documented: a link alive at the create will do.
    link_valid_for_s = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.delivery = DELIVERY if self.http.base == self.default_base_url else self.http.base + "/_play/jwplayer"

    def creds(self) -> Credentials:
        return parse_secret(self.secret())

    def _site_id(self) -> str:
        return self.creds().site_id

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.creds().api_secret}"}

    def _media(self, suffix: str = "") -> str:
        return f"/v2/sites/{quote(self.creds().site_id)}/media/{suffix}"

    def rate_signal(self, headers: Mapping[str, str]) -> RateSignal:
        return jw_rate_signal(headers, self.clock())

    def check(self) -> Answer:
        return self.http.send("GET", self._media(), params={"page_length": "1"})

    def webhook_urls(self) -> list[str] | None:
        """For `migrator doctor`: where this property's webhooks point, `GET /v2/webhooks/` (jwplatform 2.2.2
        `WebhookClient.list`: `{webhooks: [{id, metadata: {webhook_url, events, site_ids}}], page_length, total}`),
        every page, those naming only other properties left out; None when the secret may not read them."""
        site, urls = self.creds().site_id, []
        for page in range(1, WEBHOOK_MAX_PAGES + 1):
            params = {"page": str(page), "page_length": str(WEBHOOK_PAGE_LENGTH)}
            answer = self.http.send("GET", "/v2/webhooks/", params=params)
            if answer.status in (401, 403, 404):
                return None
            if answer.status != 200:
                raise TransportError(f"HTTP {answer.status} listing the webhooks")
            body, length = mapping(answer.body), told_length(mapping(answer.body), WEBHOOK_PAGE_LENGTH)
            hooks = [mapping(mapping(h).get("metadata")) for h in entries(body.get("webhooks"))]
            urls += [
                text(m.get("webhook_url"))
                for m in hooks
                if not isinstance(m.get("site_ids"), list) or site in m["site_ids"]
            ]
            total = body.get("total")
            if len(hooks) < length or not isinstance(total, int) or page * length >= total:
                break
        return [u for u in urls if u]

    def _read(self, body: object) -> Video:
        signs = self.creds().url_signing
        return read_media(body, self.clock(), signs, lambda mid: delivery_urls(self.delivery, mid))

    # --- the create -----------------------------------------------------------------------------

    def create(self, asset: AssetRef, source_url: str) -> Outcome:
        body, notes = self._create_body(asset, source_url)
        return self._post_create(self._media(), body, notes, lambda answer: self._read(answer).remote_id)

    def _create_body(self, asset: AssetRef, source_url: str) -> tuple[dict, list[str]]:
        details, notes = details_of(asset), []
        ours = {
            "migration_ref": asset.asset_id,
            "migration_key": idempotency_key(asset.asset_id, asset.generation),
            **{k: as_text(v) for k, v in row_fields(details, CUSTOM_FIELDS).items()},
        }
        custom, clash_notes = free_map(ours, with_usage(details.metadata, details.usage), "custom_params")
        metadata: dict = {
            "title": asset.title or asset.asset_id,
            "external_id": asset.asset_id,
            "custom_params": {k: as_text(v) for k, v in custom.items()},
        }
        if details.description is not None:
            metadata["description"] = details.description
        if details.tags:
            metadata["tags"] = list(details.tags)
        if self.playback(asset) == SIGNED and not self._signs():
            metadata["publish_start_date"] = HELD_UNTIL
            notes.append(HELD_NOTE)
        published, published_note = publish_start(details.published_at, self.clock(), "publish_start_date" in metadata)
        if published is not None:
            metadata["publish_start_date"] = published
        elif published_note and details.published_at is not None:
            metadata["custom_params"]["published_at"] = details.published_at
            notes.append(published_note)
        if details.poster_time_s is not None:
            notes.append("poster_time_s: kept in custom_params only (JW picks a thumbnail by a later call)")
        body = {"upload": {"method": "fetch", "download_url": source_url}, "metadata": metadata}
        return body, notes + clash_notes + privacy_notes(details.privacy, self.name)

    def _signs(self) -> bool:
        try:
            return self.creds().url_signing
        except CredentialsError:
            return False  # no credentials: nothing is published signed (the create itself fails on them)

    # --- finding an earlier create, polling ------------------------------------------------------

    def find(self, asset_id: str, created_after: float | None) -> Outcome:
        """The media an earlier try made, from the list newest first (`sort=created:dsc`) back to `created_after`
        less FIND_MARGIN_S, each matched on `custom_params.migration_ref`: CREATED; NOT_FOUND once a page
        reaches back that far or the list ends; TRANSIENT when the newest media that can be read (the 10,000 of
        the ceiling, FIND_MAX_LOOKUP_PAGES pages) do not reach back to it. With no `created_after` (a poll with
        no recorded id), FIND_MAX_PAGES pages and then NOT_FOUND."""
        bound = created_after - FIND_MARGIN_S if created_after is not None else None
        for page in range(1, FIND_MAX_LOOKUP_PAGES + 1):
            if bound is None and page > FIND_MAX_PAGES:
                return Outcome(OutcomeKind.NOT_FOUND)
            params = {"sort": "created:dsc", "page": str(page), "page_length": str(PAGE_LENGTH)}
            listed = self._listing_page(self._media(), params, "media")
            if isinstance(listed, Outcome):
                return listed
            body, items = listed
            found = found_among([self._read(item) for item in items], asset_id)
            if found is not None:
                return found
            size = told_length(body, PAGE_LENGTH)
            times = [t for t in (_created(mapping(item)) for item in items) if t is not None and math.isfinite(t)]
            past = bound is not None and bool(times) and min(times) < bound
            if len(items) < size or past:
                return Outcome(OutcomeKind.NOT_FOUND)
            if page * size >= CEILING:
                break
        return Outcome(
            OutcomeKind.TRANSIENT,
            error="lookup window too long: the newest media JW lets a query read did not reach back to the claim",
        )

    def _poll_video(self, asset_id: str, remote_id: str) -> Poll:
        return self._get_video(self._media(f"{quote(remote_id)}/"), self._read)

    # --- webhooks ----------------------------------------------------------------------------------

    def read_webhook(
        self, body: bytes, headers: Mapping[str, str], secrets: Sequence[str], now: float, tolerance_s: int
    ) -> WebhookEvent:
        verify(Scheme.JWPLAYER, body, headers, secrets, now, tolerance_s)  # the token's payload is the body
        event = json_event(body)
        emitted = epoch_of(event.get("event_time"))
        if emitted is not None and not emitted_in_window(emitted, now, tolerance_s):
            raise SignatureError("timestamp outside tolerance")
        kind, remote_id = text(event.get("event")) or "", video_id(event.get("media_id"))
        if kind not in CONFIRMING or remote_id is None:
            return WebhookEvent(body_event_id(body), None, remote_id, note=f"not an outcome: {excerpt(kind, 60)}")
        # conversions_complete ("thumbnail + all initial renditions" done) and media_available say it is ready;
        # a failure sends no event at all, and is met by reconcile's poll.
        finished = kind in FINISHED_EVENTS
        return WebhookEvent(body_event_id(body), None, remote_id, confirm=True, note=kind, says_ready=finished)

    def ready_video(self, remote_id: str, asset: AssetRef) -> Video:
        """The media an event says is ready, as a read of it would give it, from what the create sent: signed
        when the property signs or the row's media was created held (HELD_UNTIL), else public. Reading it
        instead would spend a second call a video of the 60 a minute every call shares, halving the pace.
        What the event cannot give is the duration: the drift canary runs only where reconcile's poll settles."""
        privacy = SIGNED if self._signs() or self.playback(asset) == SIGNED else PUBLIC
        urls = delivery_urls(self.delivery, remote_id)
        playback = playback_of(policy="signed" if privacy == SIGNED else "public", playback_id=remote_id, **urls)
        return Video(remote_id, asset.asset_id, State.READY, "ready", privacy=privacy, playback=playback)

    # --- the audit -----------------------------------------------------------------------------------

    def videos(self) -> Iterator[Video]:
        """Every media, oldest first, by creation date under the ceiling (`Slice`); past LISTING_MAX_PAGES, loudly."""
        at = Slice(0, int(self.clock()) + 1)
        for _ in listing_pages():
            body, items = self._library_page(self._media(), at.params("created", PAGE_LENGTH), "media")
            for item in items:
                if text(mapping(item).get("id")) not in at.tail:
                    yield self._read(item)
            try:
                following = at.following(items, body.get("total"), told_length(body, PAGE_LENGTH), _created)
            except CeilingError as exc:
                raise ListingError(f"listing the provider's videos stopped: {exc}") from None
            if following is None:
                return
            at = following
        raise too_many_pages()

    # --- migrator verify --------------------------------------------------------------------------

    def signed_playback(self, playback: Mapping, ttl_s: float, keys: PlaybackKeys | None) -> SignedPlayback:
        """The HLS manifest with `exp` and `sig` (md5 of its path, the expiry and the property's secret)."""
        hls = text(playback.get("hls"))
        try:
            secret = self.creds().signing_secret
        except CredentialsError as exc:
            raise SigningUnavailable(str(exc)) from None
        if not secret:
            raise SigningUnavailable("the JW Player credentials carry no signing_secret (the property's secret)")
        if not hls or urlsplit(hls).scheme not in ("https", "http"):
            raise SigningUnavailable("no HLS manifest recorded for it")
        expires = int(self.clock() + min(max(ttl_s, 60.0), SIGNED_TTL_MAX_S))
        return SignedPlayback(signed_file_url(hls, expires, secret))

    # --- caption tracks ----------------------------------------------------------------------------

    takes_tracks = True

    def track_list(self, remote_id: str) -> TrackList | TrackOutcome:
        """Every text track of the media, page by page to the `total` JW gives (a track left on a page unread
        would be uploaded a second time)."""
        listed: list = []
        for page in range(1, TRACK_LIST_MAX_PAGES + 1):
            params = {"page": str(page), "page_length": str(TRACKS_PAGE_LENGTH)}
            answer = self._track_send("GET", self._media(f"{quote(remote_id)}/text_tracks/"), params=params)
            if isinstance(answer, TrackOutcome):
                return answer
            if answer.status != 200:
                return self._track_list_failure(answer)
            body = mapping(answer.body)
            found = entries(body.get("text_tracks"))
            listed += found
            total = body.get("total")
            if not found or not isinstance(total, int) or isinstance(total, bool) or len(listed) >= total:
                # A chapters track is the chapters extra's (chapters_of), never a caption of its language.
                return TrackList(tuple(remote_track(t) for t in listed if not is_chapters(t)))
        return TrackOutcome(TrackResult.TRANSIENT, error=f"provider: {len(listed)} text tracks read, more listed")

    def attach_track(self, remote_id: str, track: Track, upload: TrackUpload, label: str) -> TrackOutcome:
        body = {
            # auto_publish: ready (delivered) once JW has read it, not held as a draft no viewer gets.
            "upload": {
                "method": "fetch",
                "download_url": upload.url,
                "file_format": upload.caption.format,
                "auto_publish": True,
            },
            "metadata": {"label": label, "srclang": track.language, "track_kind": "captions"},
        }
        answer = self._track_send("POST", self._media(f"{quote(remote_id)}/text_tracks/"), json_body=body)
        if isinstance(answer, TrackOutcome):
            return answer
        if not 200 <= answer.status < 300:
            return self._track_failure(answer)
        return TrackOutcome(TrackResult.SUBMITTED, remote_track_id=text(mapping(answer.body).get("id")))

    def publish_track(self, remote_id: str, remote: RemoteTrack) -> TrackOutcome:
        """Publish a track JW holds as a draft (PUT, idempotent: a retry publishes the same track, never makes
        one): ATTACHED once JW answers it ready; else SUBMITTED, so the next pass reads the list again."""
        if not remote.remote_id:
            return TrackOutcome(TrackResult.REFUSED, error="provider: JW lists the draft track without its id")
        path = self._media(f"{quote(remote_id)}/text_tracks/{quote(remote.remote_id)}/publish/")
        answer = self._track_send("PUT", path)
        if isinstance(answer, TrackOutcome):
            return answer
        if answer.status == 404:  # the track (not the media) is gone: the next pass looks, and uploads it again
            return TrackOutcome(TrackResult.TRANSIENT, error="provider: the draft track is no longer there (404)")
        if not 200 <= answer.status < 300:
            return self._track_failure(answer)
        if text(mapping(answer.body).get("status")) == "ready":
            return TrackOutcome(TrackResult.ATTACHED, remote_track_id=remote.remote_id)
        return TrackOutcome(TrackResult.SUBMITTED, remote_track_id=remote.remote_id)


def publish_start(published_at: str | None, now: float, held: bool) -> tuple[str | None, str]:
    """The create's `publish_start_date` from the row's original publish time, and the note where it is not set
    there: a media held unpublished keeps its hold, and a time ahead of now is not made a hold of its own (JW
    delivers a media to no one before its start: the row's privacy decides who sees it, not a date)."""
    at = epoch_of(published_at)
    if published_at is None or at is None:
        return None, ""
    if held:
        return None, "published_at: kept in custom_params.published_at (publish_start_date holds the media unpublished)"
    if at > now:
        return (
            None,
            "published_at: ahead of now, kept in custom_params.published_at (a publish_start_date would hold it)",
        )
    return published_at, ""


def _created(media: Mapping) -> float | None:
    return epoch_of(media.get("created"))


def told_length(body: Mapping, asked: int) -> int:
    """The page length the answer says it used (a smaller cap than asked), else the one asked."""
    told = body.get("page_length")
    return told if isinstance(told, int) and not isinstance(told, bool) and 1 <= told <= asked else asked


def remote_track(raw: object) -> RemoteTrack:
    track = mapping(raw)
    metadata = mapping(track.get("metadata"))
    status = {"ready": "ready", "failed": "errored", "draft": "draft"}.get(text(track.get("status")) or "", "preparing")
    error = f"provider: {excerpt(text(track.get('error_message')) or 'JW could not ingest the track', 200)}"
    return RemoteTrack(
        text(metadata.get("srclang")), status, remote_id=video_id(track.get("id")),
        error=error if status == "errored" else None,
    )  # fmt: skip
