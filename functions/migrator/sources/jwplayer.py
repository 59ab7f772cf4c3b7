"""JW Player as a source (JWP Platform Management API v2 and the Delivery API, docs.jwplayer.com; jwplatform 2.2.2
sends the same requests).

- credentials: the property's id and a v2 API secret, `Authorization: Bearer <secret>`; `{"site_id": ...,
  "api_secret": ...}`, and on a property with URL signing on its secret, `"signing_secret"` (the provider's
  format, providers.jwplayer.credentials_of);
- list: `GET /v2/sites/{site}/media/?q=&sort=&page=&page_length=`, `{media, page, page_length, total}`.
  "The API returns an upper limit of 10,000 media per search query. Regardless of pagination, only the
  first 10,000 results based on the sorting used may be retrieved" (listing-media): a page-number walk
  stops there without a word. So the library is walked by date (`providers.jwplayer.Slice`): each query
  `created:[lo TO hi]` sorted `created:asc` (date ranges in `q` as peers query JW; "Building a request"
  documents `q` and `sort=field:asc|dsc`) reads its first page, and the next query starts at the second
  of that page's last media, dropping the ids already listed in that second. No query reads past its
  first page but for media sharing one second, so none nears the ceiling, a video deleted mid-walk moves
  nothing, and one created since the walk began waits for the next delta (`hi` is fixed at the start).
  A delta sweep (`since`) walks `last_modified` the same way from the mark;
- a media: `id` (8 letters and digits), `status` (created, processing, updating, ready, failed; the full
  list is not published), `created`, `last_modified`, `duration`, `media_type`, `error_message`, `metadata
  {title, description, tags, custom_params, publish_start_date, publish_end_date, external_id}`. One still
  being made goes to `page.pending` and `video(id)` answers one (the next sweep asks again: nothing says
  the end of processing moves `last_modified`); a failed one, or one that is no video, is unfetchable;
- privacy: JW keeps none per media ("URL signing" is the property's; "publish_start_date/publish_end_date"
  each media's). A media whose publish window is closed now is private; on a property whose credentials
  carry its signing secret, every other one is signed; else public. The resolve reads it again;
- resolve: the media read (status, window) and then the Delivery API's `GET https://cdn.jwplayer.com/v2/media/
  {id}`, signed just before the create with a JWT (HS256, the property's secret, claims `resource` and
  `exp`: "Protect your content with signed URLs") when the credentials carry the secret; its `playlist[0].
  sources` hold the renditions, and "the response includes signed video URLs" on a signed request: the
  widest MP4 is handed over (as Bunny's importer picks it). A property with signing on answers an unsigned
  request 403: unfetchable, saying to add the secret. The Delivery API is the CDN's, not the token's budget;
- text tracks: `GET /v2/sites/{site}/media/{id}/text_tracks/` (jwplatform-py `TextTrack.list`), `{text_tracks:
  [{id, status, track_kind, metadata: {label, srclang}, ...}]}` (`track_kind` read at the top, as jwplatform-go's
  TextTrackResource has it, or in `metadata`); captions and subtitles carried, a track still processing holds
  its media pending. A `draft` is its owner's caption held back from viewers ("Prevents a text track from
  delivering via the Delivery API by changing the track status from ready to draft": the unpublish
  reference), whose file the Delivery API does not serve: not carried, which would publish it at the target,
  and counted in the row's `text_tracks_note` (as a failed one is), never dropped without a word. A track's
  file is the Delivery API's `/tracks/{id}.{format}`, signed with `exp` and `sig` (md5 of path, expiry and
  secret: "Legacy URL token signing") where the secret is given: no Management API call at the resolve;
- what a viewer sees first (issue 42; jwplayer_extras.py): the poster as `jwplayer://<id>/poster/poster.jpg`,
  resolved to the Delivery API's `/v2/media/{id}/poster.jpg` (signed where the secret is given: no Management API
  call); a text track of kind chapters carried as a chapters track; the manual playlists that hold the media (read
  once a sweep, each media's place kept; playlists JW fills by rule are not carried) as `collections`;
  `publish_start_date` as `published_at`. `tracks=False` (`--no-tracks`) leaves out the playlists;
- rate limit: "60 requests/minute per API token. Calls that exceed this rate will not be executed and will
  return a 429" (authentication), listing and resolving together: paced at one a second, a 429 with no
  hint waited out as a lock-out of up to the minute (`lockout_s`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar
from urllib.parse import urlsplit

from ..link_life import LinkTerms
from ..providers.facts import CredentialsError, entries, epoch_of, finite_number, mapping, text
from ..providers.http import HttpTransport, TransportError, quote
from ..providers.jwplayer import (
    DELIVERY,
    PAGE_LENGTH,
    CeilingError,
    Credentials,
    Slice,
    credentials_of,
    hs256_jwt,
    jw_rate_signal,
    signed_file_url,
    told_length,
    window_closed,
)
from .base import (
    Entry,
    HttpSource,
    Page,
    Resolution,
    ResolutionKind,
    SourceDenied,
    SourceError,
    SourceRef,
    Unfetchable,
    gone,
)
from .jwplayer_extras import POSTER, POSTER_WIDTH, PlaylistIndex
from .rows import TrackInfo, make_row, unfetchable

STILL_PROCESSING = "still processing at the source: list it again once JW Player has finished"
CAPTIONS_PROCESSING = "a text track JW Player is still processing: listed once it is ready"
NO_FILE = "JW Player's Delivery API lists no MP4 rendition for it"
SIGNING_NEEDED = (
    "the property requires signed URLs (the Delivery API answered 403): add the property's secret to the"
    ' jwplayer source credentials as "signing_secret"'
)
NOT_DELIVERED = (
    "JW Player's Delivery API does not serve it (404): a media outside its publish window is delivered to no one;"
    " widen its window, then list it again"
)
REFUSED_SIGNED = "JW Player refused the signed request (403): check the credentials' signing_secret"
# How long a signed Delivery API request and the file URLs it hands out live: the target fetches within minutes,
# a queue may hold the create for hours.
SIGNED_TTL_S = 6 * 3600.0
PROCESSING_RETRY_S = 60.0
TRACK_KINDS = {"captions": "captions", "subtitles": "subtitles", "chapters": "chapters"}
DELIVERY_MAX_BYTES = 4 * 1024 * 1024


def why_unfetchable(media: Mapping) -> str | None:
    status = text(media.get("status")) or ""
    kind = text(media.get("media_type")) or "video"
    if status in ("failed", "error"):
        detail = text(media.get("error_message"))
        return "failed at the source (JW Player status failed" + (f": {detail[:200]})" if detail else ")")
    if kind != "video":
        return f"not a video (JW Player media_type {kind[:40]})"
    if status != "ready":
        return STILL_PROCESSING
    return None


def privacy_of(media: Mapping, signed: bool, now: float) -> str:
    if window_closed(mapping(media.get("metadata")), now):
        return "private"
    return "signed" if signed else "public"


def widest_mp4(sources: object) -> Mapping | None:
    mp4s = [
        mapping(s)
        for s in entries(sources)
        if text(mapping(s).get("file"))
        and (mapping(s).get("type") == "video/mp4" or mapping(s)["file"].endswith(".mp4"))
    ]
    return max(mp4s, key=lambda s: finite_number(s.get("width")) or 0.0) if mp4s else None


def tracks_note(drafts: int, failed: int) -> str | None:
    """What the row says of the caption tracks it does not carry, or None when it carries them all."""
    notes = []
    if drafts:
        notes.append(
            f"{drafts} draft text track(s) on JW Player, not published (delivered to no one): not carried; publish"
            " them at JW Player and list the media again to carry them"
        )
    if failed:
        notes.append(f"{failed} text track(s) JW Player failed to make, or holds undelivered: not carried")
    return "; ".join(notes) or None


def _created(media: Mapping) -> float | None:
    return epoch_of(media.get("created"))


def _modified(media: Mapping) -> float | None:
    return epoch_of(media.get("last_modified")) or epoch_of(media.get("created"))


class JwPlayerSource(HttpSource):
    platform = "jwplayer"
    credential_env: ClassVar[Mapping[str, str]] = {"site_id": "JWPLAYER_SITE_ID", "api_secret": "JWPLAYER_API_SECRET"}
    default_base_url = "https://api.jwplayer.com"
    documented_rate_per_s = 1.0  # 60 requests a minute per API token
    requests_per_video = 1  # the media read at the resolve (the Delivery API is the CDN's)
    lockout_s = 60.0  # a 429 with no hint: the minute's budget is spent
    link_terms = LinkTerms("JW Player's signed links are signed here for 6 hours (SIGNED_TTL_S)")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._playlists: PlaylistIndex | None = None  # read on the first media that asks, kept for the sweep

    @property
    def delivery(self) -> str:
        return DELIVERY if self.base_url == self.default_base_url else self.base_url + "/_stream/jwplayer"

    def jw(self) -> Credentials:
        try:
            return credentials_of(self.credentials(), "jwplayer source")
        except CredentialsError as exc:
            raise SourceDenied(str(exc)) from None

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        return {"Authorization": f"Bearer {credentials_of(creds, 'jwplayer source').api_secret}"}

    def rate_signal(self, headers: Mapping[str, str]):
        return jw_rate_signal(headers, self.clock())

    def _media(self, suffix: str = "") -> str:
        return f"/v2/sites/{quote(self.jw().site_id)}/media/{suffix}"

    # --- listing ------------------------------------------------------------------------------

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        field, when = ("last_modified", _modified) if since is not None else ("created", _created)
        at = Slice.parse(cursor) or Slice(int(since or 0), int(self.clock()) + 1)
        body = mapping(
            self.read("GET", self._media(), "the media list", gone_ok=False, params=at.params(field, PAGE_LENGTH))
        )
        items = [mapping(m) for m in entries(body.get("media"))]
        fresh = [m for m in items if text(m.get("id")) not in at.tail]
        page = Page()
        self.take(page, fresh, _modified, None, tracks)
        _hold(page)
        size = told_length(body, PAGE_LENGTH)
        try:
            following = at.following(items, body.get("total"), size, when)
        except CeilingError as exc:
            raise SourceError(f"jwplayer: the listing cannot go on: {exc}") from None
        page.cursor = str(following) if following else None
        total = body.get("total")
        if isinstance(total, int) and not isinstance(total, bool) and since is None:
            page.remaining = max(0, total - (at.page - 1) * size - len(items))
        return page

    def video(self, video_id: str, tracks: bool = True) -> Page:
        """One media as a page lists it (the next sweep asks for those a sweep left processing); empty when gone."""
        page = Page()
        if not video_id.isalnum():
            return page
        media = self.read("GET", self._media(f"{quote(video_id)}/"), "the media")
        if media is not None:
            self.take(page, [mapping(media)], _modified, None, tracks)
        return _hold(page)

    def entry(self, media: Mapping, tracks: bool) -> Entry | None:
        mid = text(media.get("id"))
        if not mid or not mid.isalnum() or len(mid) > 64:
            return None
        ref, metadata = self.ref(mid), mapping(media.get("metadata"))
        reason = why_unfetchable(media)
        if reason:
            return unfetchable(self.platform, mid, ref, reason, metadata.get("title"))
        listed = self._tracks(mid) if tracks else ([], None)
        if listed is None:
            return unfetchable(self.platform, mid, ref, CAPTIONS_PROCESSING, metadata.get("title"))
        found, note = listed
        extra = {k: metadata[k] for k in ("external_id", "author", "category") if isinstance(metadata.get(k), str)}
        if note:
            extra["text_tracks_note"] = note
        custom = {k: v for k, v in mapping(metadata.get("custom_params")).items() if isinstance(v, str)}
        if custom:
            extra["custom_params"] = custom
        playlists = self.playlists().of(mid) if tracks else []
        if tracks and self.playlists().refused:
            extra["playlists_note"] = self.playlists().refused
        return make_row(
            self.platform,
            mid,
            ref,
            title=metadata.get("title"),
            description=metadata.get("description"),
            tags=entries(metadata.get("tags")),
            created_at=media.get("created"),
            duration_s=media.get("duration"),
            privacy=privacy_of(media, self.jw().signing_secret is not None, self.clock()),
            tracks=found,
            metadata=extra,
            thumbnail_url=self.ref(mid, "poster", POSTER),
            collections=playlists,
            published_at=metadata.get("publish_start_date"),
        )

    def playlists(self) -> PlaylistIndex:
        """The property's manual playlists, read once a sweep (jwplayer_extras.PlaylistIndex)."""
        if self._playlists is None:
            self._playlists = PlaylistIndex(self.call, f"/v2/sites/{quote(self.jw().site_id)}")
        return self._playlists

    def _tracks(self, mid: str) -> tuple[list[TrackInfo], str | None] | None:
        """The media's caption and subtitle tracks to carry and the note on those left behind (drafts, failed);
        None while one is still processing."""
        answer = self.call("GET", self._media(f"{quote(mid)}/text_tracks/"))
        if answer.status != 200:
            return [], None  # the media's tracks are lost, the media is not
        found: list[TrackInfo] = []
        left = {"draft": 0, "failed": 0}
        for track in entries(mapping(answer.body).get("text_tracks")):
            track, meta = mapping(track), mapping(mapping(track).get("metadata"))
            kind = TRACK_KINDS.get(text(track.get("track_kind")) or text(meta.get("track_kind")) or "")
            tid = text(track.get("id"))
            if not tid or not tid.isalnum() or kind is None:
                continue
            if track.get("status") not in (None, "ready"):
                if track.get("status") in ("processing", "created"):
                    return None
                left["draft" if track.get("status") == "draft" else "failed"] += 1
                continue
            fmt = text(track.get("format")) or text(meta.get("format")) or "vtt"
            fmt = fmt if fmt in ("vtt", "srt") else "vtt"
            found.append(
                TrackInfo(
                    self.ref(mid, "tracks", f"{tid}.{fmt}"), meta.get("srclang"), kind, meta.get("label"), format=fmt
                )
            )
        return found, tracks_note(left["draft"], left["failed"])

    # --- resolving --------------------------------------------------------------------------

    def resolve(self, ref: SourceRef) -> Resolution:
        creds = self.jw()
        if ref.is_track:
            return self._track(ref, creds)
        media = self.read("GET", self._media(f"{quote(ref.video_id)}/"), "the media")
        if media is None:
            return Resolution.unfetchable(gone("JW Player"))
        media = mapping(media)
        reason = why_unfetchable(media)
        if reason == STILL_PROCESSING:  # reprocessing (a replaced original): it will be ready
            return Resolution.preparing(reason, PROCESSING_RETRY_S)
        if reason:
            return Resolution.unfetchable(reason)
        privacy = privacy_of(media, creds.signing_secret is not None, self.clock())
        return self._delivered(ref.video_id, creds, privacy)

    def _delivered(self, mid: str, creds: Credentials, privacy: str) -> Resolution:
        """The widest MP4 the Delivery API lists for the media, on a request signed just now where it can be."""
        expires = int(self.clock() + SIGNED_TTL_S)
        params = {}
        if creds.signing_secret:
            params["token"] = hs256_jwt({"resource": f"/v2/media/{mid}", "exp": expires}, creds.signing_secret)
        try:
            answer = self._cdn().send("GET", f"{self.delivery}/v2/media/{quote(mid)}", params=params,
                                      max_body_bytes=DELIVERY_MAX_BYTES)  # fmt: skip
        except TransportError as exc:
            raise SourceError(f"jwplayer: the Delivery API: {exc.kind}") from None
        if answer.status == 403:
            if creds.signing_secret:
                return Resolution(ResolutionKind.DENIED, reason=REFUSED_SIGNED)
            return Resolution.unfetchable(SIGNING_NEEDED)
        if answer.status == 404:
            return Resolution.unfetchable(NOT_DELIVERED)
        if answer.status == 429 or answer.status >= 500:
            raise SourceError(f"jwplayer: the Delivery API answered HTTP {answer.status}", 30.0)
        if answer.status != 200:
            raise self.failure(answer, "the Delivery API")
        item = mapping((entries(mapping(answer.body).get("playlist")) or [{}])[0])
        chosen = widest_mp4(item.get("sources"))
        url = text(chosen.get("file")) if chosen else None
        if not url or not self._delivered_by_jw(url):
            return Resolution.unfetchable(NO_FILE)
        return Resolution.ready(url, expires_at=float(expires) if creds.signing_secret else None, privacy=privacy)

    def _track(self, ref: SourceRef, creds: Credentials) -> Resolution:
        if ref.kind == "poster":
            return self._poster(ref, creds)
        if ref.kind != "tracks" or not ref.item or "." not in ref.item:
            return Resolution.unfetchable(f"not a JW Player track reference: {ref}")
        tid, _, fmt = ref.item.partition(".")
        if not tid.isalnum() or fmt not in ("vtt", "srt"):
            return Resolution.unfetchable(f"not a JW Player track reference: {ref}")
        url = f"{self.delivery}/tracks/{quote(tid)}.{fmt}"
        if not creds.signing_secret:
            return Resolution.ready(url)
        expires = int(self.clock() + SIGNED_TTL_S)
        return Resolution.ready(signed_file_url(url, expires, creds.signing_secret), expires_at=float(expires))

    def _poster(self, ref: SourceRef, creds: Credentials) -> Resolution:
        """The media's poster at the Delivery API, its widest, signed with a JWT for that resource where the
        property's secret is given ("Protect your content with signed URLs"): no Management API call."""
        if ref.item != POSTER or not ref.video_id.isalnum() or len(ref.video_id) > 64:
            return Resolution.unfetchable(f"not a JW Player poster reference: {ref}")
        resource = f"/v2/media/{quote(ref.video_id)}/{POSTER}"
        url = f"{self.delivery}{resource}?width={POSTER_WIDTH}"
        if not creds.signing_secret:
            return Resolution.ready(url)
        expires = int(self.clock() + SIGNED_TTL_S)
        token = hs256_jwt({"resource": resource, "exp": expires}, creds.signing_secret)
        return Resolution.ready(f"{url}&token={token}", expires_at=float(expires))

    def _cdn(self) -> HttpTransport:
        """The Delivery API: the API's pool and timeouts, no credentials (the API secret stays with the API)."""
        connect, read = self.http.timeout
        return HttpTransport("", dict, self.http.session, connect, read)

    def _delivered_by_jw(self, url: str) -> bool:
        """A file URL at the delivery host, over https (or the simulator's own origin): untrusted text otherwise."""
        parts, home = urlsplit(url), urlsplit(self.delivery)
        if (parts.scheme, parts.netloc) == (home.scheme, home.netloc):
            return True
        return parts.scheme == "https" and bool(parts.netloc) and self.delivery == DELIVERY


def _hold(page: Page) -> Page:
    """The page's media still processing (or whose tracks are) moved to `pending`: asked for again, not written off."""
    waiting = (STILL_PROCESSING, CAPTIONS_PROCESSING)
    held = [e for e in page.entries if isinstance(e, Unfetchable) and e.reason in waiting]
    page.entries = [e for e in page.entries if not (isinstance(e, Unfetchable) and e.reason in waiting)]
    page.pending += held
    return page
