"""Brightcove Video Cloud as a source (apis.support.brightcove.com: the CMS API reference, "Getting Access Tokens",
"CMS API Video Fields Reference", "Using the CMS API: Page Search Results", "Managing Text Tracks",
"Activate/Deactivate or Schedule Videos", "Adding Geo-Filtering", "Download Video Masters"). Brightcove ships no
official Python SDK.

- credentials: API client credentials with `video-cloud/video/read` and the account they serve;
  `{"account_id": "...", "client_id": "...", "client_secret": "..."}`. Every CMS request carries
  `Authorization: Bearer <access token>`, a token from `POST https://oauth.brightcove.com/v4/access_token`
  (`Authorization: Basic base64(client_id:client_secret)`, `grant_type=client_credentials`; answered 201 Created
  in the reference's example, 200 by OAuth 2: both taken), "only valid for 5 mins": one token serves the whole
  fleet of Lambdas, renewed once (brightcove_token.py says how and why); a CMS 401 drops it and the request is
  sent once more with a new one;
- list: `GET /v1/accounts/{a}/videos?q=updated_at:<time>..&sort=updated_at&limit=100&offset=` ("A maximum
  of 100 records will be returned from a single request"; the date range search). Oldest change first, each
  page starting at the last instant the one before reached (inclusive), the ids already listed at that
  instant dropped (`Window`): an offset counted over a live library would skip a video for every one deleted
  between two pages. A delta sweep starts the range at the mark; a video changed while a sweep runs moves
  to its end and is listed again (the sweep writes a repeat once). `GET /v1/accounts/{a}/counts/videos` gives
  the total at the first page; `GET .../folders` the folder names, once per source;
- a video: `id`, `name`, `description` (≤ 248), `long_description`, `tags`, `created_at`, `updated_at`,
  `duration` (milliseconds), `state` (ACTIVE, INACTIVE), `schedule {starts_at, ends_at}`, `complete` ("Whether
  processing is complete": false until a first rendition exists), `folder_id`, `text_tracks[]`. A video not
  yet complete goes to `page.pending`, and the next sweep asks for it (`video`, `GET .../videos/{id}`);
- privacy, never wider than Brightcove's: ACTIVE with no schedule is public; INACTIVE, or a schedule whose
  window is not open now, is private (not playable: the Playback API serves only ACTIVE videos within their
  schedule); ACTIVE inside a window that opens or closes is signed (no target keeps a schedule: a target's
  signed playback leaves the owner's backend to keep the window), with `privacy_note` and the schedule in
  the row's metadata. A video geo-restricted ("Adding Geo-Filtering": `geo.restricted` true, `geo.countries`,
  `geo.exclude_countries`) is never public: signed (no target keeps geo rules; the owner's backend, which signs
  playback, can), or private where its include list names no country, with `privacy_note` naming the countries
  and whether they are an include or an exclude list, and `geo` in the row's metadata for the operator to set the
  target's rules. The narrowest of state, schedule and geo wins. The resolve reads them again
  (`Resolution.privacy`);
- the file: "Studio and the CMS API do not provide a direct way" to download masters (only a Social
  Syndication MRSS feed does, and masters may not be kept at all): the resolve takes the widest HTTPS MP4
  rendition of `GET .../videos/{id}/sources` (`src`, `container`, `width`, `height`, `size`), and the row
  says so in its metadata (`source_file`, `source_note`). The listing reads each video's sources too, so a
  video with none (a Dynamic Delivery account that makes only HLS/DASH, a remote asset on plain http) is
  named unfetchable up front with that reason. Over an http API address (a simulator on loopback) plain
  http renditions count as well;
- text tracks: the video's `text_tracks[]` (`id`, `src`, `srclang`, `label`, `kind`, `mime_type`,
  `status` published | draft | null): captions, subtitles and chapters (a WebVTT file of chapter cues) that are
  published (or have no status) are carried, `brightcove://<id>/text_tracks/<track id>` resolved to the track's
  `src`; drafts are left out and counted in the row's metadata (`text_tracks_note`). Brightcove keeps no
  processing status for a track;
- what a viewer sees first (issue 42; brightcove_extras.py): the poster (`images.poster`, else `images.thumbnail`)
  as `brightcove://<id>/images/poster`, resolved to the image the video shows when it is set; the folder and the
  playlists that hold the video (the account's playlists read once a sweep: a manual one's order kept) as
  `collections`; `published_at`, the first activation (or the schedule's start, where later). The poster, the
  folder and the date come in the video's own answer; `tracks=False` (`--no-tracks`) leaves out the playlists;
- rate limits: "too many simultaneous requests or too many requests per second" answers 429
  TOO_MANY_REQUESTS (api-references-raml); about 20 at once and under 10 a second per account (secondary:
  api-evangelist's brightcove-rate-limits), shared with the account's live integrations, which the CMS API
  is "not appropriate for" at scale: a listing keeps to DOCUMENTED_RATE (pass a lower --rate to leave the
  live traffic more room), and a 429, which says nothing of when to come back, is waited out. Errors are a
  JSON array `[{"error_code", "message"}]`.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import ClassVar
from urllib.parse import urlsplit

from ..link_life import LinkTerms
from ..providers.facts import CredentialsError, entries, finite_number, mapping, text
from ..providers.http import HttpTransport, TransportError, quote
from .base import HttpSource, Page, Resolution, SourceDenied, SourceError, SourceRef, gone
from .brightcove_extras import IMAGE_KINDS, PlaylistIndex, folder_of, image_kind, image_src, published_of, when
from .brightcove_token import SharedToken, Token, TokenStore, default_store, seal_key
from .rows import TrackInfo, clean_text, make_row, unfetchable

OAUTH = "https://oauth.brightcove.com"
PAGE_SIZE = 100  # the list's maximum
TOKEN_TTL_S = 300.0  # "only valid for 5 mins", when the answer's expires_in says nothing usable
STILL_PROCESSING = "still processing at Brightcove (complete: false): asked for again at the next sweep"
NO_RENDITION = (
    "no downloadable rendition: Brightcove's CMS API serves no master, and this video has no HTTPS MP4 rendition"
    " (its sources are only HLS/DASH or plain http); add MP4 renditions (retranscode) or export the master"
    " through a Social Syndication MRSS feed"
)
RENDITION_NOTE = (
    "Brightcove's CMS API does not serve the master: this is its widest HTTPS MP4 rendition, not the file as uploaded"
)
CARRIED_KINDS = ("captions", "subtitles", "chapters")
# geo.countries: "An ISO 3166 list of 2-letter codes in lower-case" (Adding Geo-Filtering); "2- or 4-letter codes"
# in the reference's request fields (api-references-raml video.js). Some 250 countries exist.
COUNTRY = re.compile(r"[a-z]{2}(?:[a-z]{2})?")
MAX_COUNTRIES = 300
NARROWNESS = ("private", "signed", "public")  # the narrowest first
SCHEDULE = ("starts_at", "ends_at")
# "grant_type=client_credentials" goes "as the request body or as URL parameter": sent as a URL parameter.
GRANT = {"grant_type": "client_credentials"}
# The OAuth API reference's example answers "HTTP/1.1 201 Created" (api-references-raml
# oauth-api/v4/src/access_token.js); OAuth 2 (RFC 6749 5.1) says 200 OK. Either carries the token.
TOKEN_ISSUED = (200, 201)


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _vid(value: object) -> str | None:
    vid = text(value)
    return vid if vid and vid.isdigit() and len(vid) <= 24 else None


def _renditions(sources: object, schemes: tuple[str, ...]) -> list[dict]:
    found = []
    for source in entries(sources):
        source = mapping(source)
        src = text(source.get("src"))
        if not src or urlsplit(src).scheme not in schemes or not urlsplit(src).netloc:
            continue
        container = (text(source.get("container")) or "").upper()
        if container == "MP4" or (not container and (text(source.get("type")) or "") == "video/mp4"):
            found.append(source)
    return found


def best_rendition(sources: object, schemes: tuple[str, ...] = ("https",)) -> dict | None:
    """The widest MP4 rendition whose `src` has one of `schemes` (then the tallest, then the largest file)."""

    def size(source: Mapping) -> tuple[float, float, float]:
        width, height, size = (finite_number(source.get(k)) or 0.0 for k in ("width", "height", "size"))
        return width, height, size

    found = _renditions(sources, schemes)
    return max(found, key=size) if found else None


@dataclass(frozen=True)
class Geo:
    """A video's geo-filtering ("Adding Geo-Filtering": `geo.restricted`, `geo.countries`, `geo.exclude_countries`):
    `countries` the codes read (lower-case ISO 3166, 2 or 4 letters), `exclude` whether they are the countries it
    may not play in (else the only ones it plays in), `unread` the entries that were no country code."""

    countries: tuple[str, ...]
    exclude: bool
    unread: int = 0

    @classmethod
    def of(cls, video: Mapping) -> Geo | None:
        """None where the video plays wherever Brightcove serves it: `geo` null, or `restricted` false or absent.
        Any other `restricted` counts as on, and an `exclude_countries` other than true as false (the documented
        default: an include list), so a value we cannot read never widens where the video plays."""
        geo = mapping(video.get("geo"))
        if geo.get("restricted") in (None, False):
            return None
        found: list[str] = []
        unread = 0
        for code in entries(geo.get("countries")):
            code = code.strip().lower() if isinstance(code, str) else ""
            if not COUNTRY.fullmatch(code):
                unread += 1
            elif code not in found and len(found) < MAX_COUNTRIES:
                found.append(code)
        return cls(tuple(found), geo.get("exclude_countries") is True, unread)

    def privacy(self) -> str:
        """Signed: no target keeps Brightcove's geo rules, so playback goes through the owner's backend, which can
        keep them. Private where the include list names no country: Brightcove plays it nowhere."""
        return "private" if not self.exclude and not self.countries else "signed"

    def note(self) -> str:
        named = ", ".join(self.countries) or "no country"
        rule = (
            f"plays everywhere except {named} (an exclude list)"
            if self.exclude
            else f"plays only in {named} (an include list)"
        )
        unread = f"; entries of its list not read as country codes: {self.unread}" if self.unread else ""
        carried = (
            "not playable anywhere: carried as private"
            if self.privacy() == "private"
            else "no target keeps geo rules: carried as signed; set the target's (or the signing backend's) geo rules"
            " to these countries"
        )
        return f"Brightcove geo-restricts it: {rule}{unread}; {carried}"

    def metadata(self) -> dict:
        return {"restricted": True, "exclude_countries": self.exclude, "countries": list(self.countries)}


def privacy_of(video: Mapping, now: float) -> tuple[str, str | None]:
    """The row's privacy from `state`, `schedule` and `geo`, the narrowest of them, and the notes where Brightcove's
    could not be kept as it is."""
    privacy, note = _scheduled(video, now)
    geo = Geo.of(video)
    if geo is None:
        return privacy, note
    narrowest = min(privacy, geo.privacy(), key=NARROWNESS.index)
    return narrowest, "; ".join(n for n in (note, geo.note()) if n)


def _scheduled(video: Mapping, now: float) -> tuple[str, str | None]:
    """The privacy `state` and `schedule` give, and the note where Brightcove's could not be kept as it is."""
    state = text(video.get("state")) or ""
    schedule = mapping(video.get("schedule"))
    starts, ends = when(schedule.get("starts_at")), when(schedule.get("ends_at"))
    if state != "ACTIVE":
        return "private", None if state == "INACTIVE" else f"Brightcove state {clean_text(state, 20)!r}: not playable"
    if (starts is not None and starts > now) or (ends is not None and ends <= now):
        return "private", "Brightcove schedules it outside now (not playable): carried as private"
    if starts is not None or ends is not None:
        return "signed", (
            "Brightcove plays it only within its schedule (kept in schedule): no target keeps one, so it is"
            " carried as signed and the owner's backend, which signs playback, keeps the window"
        )
    return "public", None


@dataclass(frozen=True)
class Window:
    """Where a page starts: changes at or after `after` (ISO text), `skip` of them passed over (more than a
    page that share one instant), the ids already listed at `after` dropped. As a cursor `<after>|<skip>|<ids>`."""

    after: str | None = None
    skip: int = 0
    seen: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, cursor: str | None, since: float | None) -> Window:
        if not cursor:
            return cls(_iso(since) if since is not None else None)
        after, _, rest = cursor.partition("|")
        skip, _, ids = rest.partition("|")
        return cls(after or None, int(skip) if skip.isdigit() else 0, frozenset(i for i in ids.split(",") if _vid(i)))

    def next(self, videos: list[dict]) -> str | None:
        last = text(videos[-1].get("updated_at")) if videos else None
        at = when(last)
        if last is None or at is None:
            return None
        same = {v for video in videos if (v := _vid(video.get("id"))) and when(video.get("updated_at")) == at}
        if len(same) == len(videos) and last == self.after:  # a whole page at one instant: count past it
            return f"{last}|{self.skip + len(videos)}|{','.join(sorted(same | self.seen))}"
        return f"{last}|0|{','.join(sorted(same))}"


class BrightcoveSource(HttpSource):
    platform = "brightcove"
    credential_env: ClassVar[Mapping[str, str]] = {
        "account_id": "BRIGHTCOVE_ACCOUNT_ID",
        "client_id": "BRIGHTCOVE_CLIENT_ID",
        "client_secret": "BRIGHTCOVE_CLIENT_SECRET",
    }
    default_base_url = "https://cms.api.brightcove.com"
    # Under 10 requests a second per account (secondary), shared with the account's live integrations.
    documented_rate_per_s = 10.0
    # The video read (its state and privacy now), its sources; the fleet's token costs one request per 5 minutes.
    requests_per_video = 2
    # "the URLs for videos and assets returned by Brightcove APIs are signed ... only good for a short time -
    # usually a few hours, but this can vary depending on the account configuration" (CMS API sample, MRSS
    # Generator): when a rendition's URL ends is not said to the API.
    link_terms = LinkTerms('Brightcove signs its rendition URLs for "a few hours", per account', expires_unsaid=True)

    def __init__(self, *args, tokens: TokenStore | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        oauth = OAUTH if self.base_url == self.default_base_url else self.base_url
        self._oauth = HttpTransport(oauth, dict, None, *self.http.timeout)
        self.token = SharedToken(tokens or default_store(), self._mint, clock=self.clock)
        self._folders: dict[str, str] | None = None
        self._playlists: PlaylistIndex | None = None  # read on the first video that asks, kept for the sweep
        secure = urlsplit(self.base_url).scheme == "https"
        self.schemes = ("https",) if secure else ("https", "http")

    # --- credentials ---------------------------------------------------------------------------------

    def _client(self) -> tuple[str, str, str]:
        creds = mapping(self.credentials())
        account_id, client_id, secret = (creds.get(k) for k in ("account_id", "client_id", "client_secret"))
        strings = isinstance(account_id, str) and isinstance(client_id, str) and isinstance(secret, str)
        if not strings or not (account_id and client_id and secret):
            raise CredentialsError('the brightcove credentials need "account_id", "client_id" and "client_secret"')
        if not account_id.isdigit():
            raise CredentialsError('the brightcove "account_id" must be the Video Cloud account id (digits)')
        return account_id, client_id, secret

    def _key(self) -> bytes:
        _, client_id, client_secret = self._client()
        return seal_key(client_id, client_secret)

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token.get(self._key()).value}"}

    def _mint(self) -> Token:
        """A new access token for the client credentials (one request to Brightcove's OAuth API)."""
        _, client_id, client_secret = self._client()
        basic = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
        headers = {"Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"}
        self.requests += 1
        try:
            answer = self._oauth.send("POST", "/v4/access_token", params=GRANT, headers=headers, data=b"")
        except TransportError as exc:
            raise SourceError(f"brightcove: the access token request failed ({exc.kind})") from None
        if answer.status in (400, 401, 403):
            error = clean_text(mapping(answer.body).get("error"), 60) or f"HTTP {answer.status}"
            raise SourceDenied(f"brightcove refused the client credentials at its OAuth API: {error}")
        body = mapping(answer.body)
        token = text(body.get("access_token"))
        if answer.status not in TOKEN_ISSUED or not token:
            raise SourceError(f"brightcove: the access token request answered HTTP {answer.status}")
        lifetime = finite_number(body.get("expires_in"))
        lifetime = lifetime if lifetime is not None and 0 < lifetime <= 86_400 else TOKEN_TTL_S
        return Token(token, self.clock() + lifetime)

    def call(self, method: str, path: str, *args, **kwargs):
        """HttpSource.call, once more with a new token when Brightcove refuses the one sent (401)."""
        try:
            return super().call(method, path, *args, **kwargs)
        except SourceDenied as exc:
            if "HTTP 401" not in exc.reason:
                raise
            key = self._key()
            self.token.refused(key, self.token.get(key))
            return super().call(method, path, *args, **kwargs)

    def _account(self) -> str:
        try:
            return f"/v1/accounts/{quote(self._client()[0])}"
        except CredentialsError as exc:
            raise SourceDenied(str(exc)) from None

    # --- listing -------------------------------------------------------------------------------------

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        window = Window.of(cursor, since)
        params = {"sort": "updated_at", "limit": str(PAGE_SIZE), "offset": str(window.skip)}
        if window.after:
            params["q"] = f"updated_at:{window.after}.."
        account = self._account()
        body = self.read("GET", f"{account}/videos", "the video list", gone_ok=False, params=params)
        videos = [mapping(v) for v in entries(body)]
        page = Page()
        for video in videos:
            page.saw(when(video.get("updated_at")))
            if _vid(video.get("id")) not in window.seen:
                self._place(page, video, tracks)
        if cursor is None:
            counted = {"q": params["q"]} if "q" in params else None
            count = self.read("GET", f"{account}/counts/videos", "the video count", gone_ok=False, params=counted)
            total = mapping(count).get("count")
            if isinstance(total, int) and not isinstance(total, bool):
                page.remaining = max(0, total - len(videos))
        if len(videos) == PAGE_SIZE:
            page.cursor = window.next(videos)
        return page

    def video(self, video_id: str, tracks: bool = True) -> Page:
        """One video by id (a video the last sweep saw still processing): its row, why it is unfetchable, pending
        again, or an empty page when Brightcove no longer has it."""
        page = Page()
        if _vid(video_id) is None:
            return page
        found = self.read("GET", f"{self._account()}/videos/{quote(video_id)}", "the video")
        if found is not None:
            self._place(page, mapping(found), tracks)
        return page

    def _place(self, page: Page, video: dict, tracks: bool) -> None:
        vid = _vid(video.get("id"))
        if vid is None:
            return
        ref, title = self.ref(vid), video.get("name")
        if video.get("complete") is not True:
            page.pending.append(unfetchable(self.platform, vid, ref, STILL_PROCESSING, title))
            return
        sources = self.read("GET", f"{self._account()}/videos/{quote(vid)}/sources", "the video's sources")
        if sources is None:
            return  # deleted between the list and this read
        chosen = best_rendition(sources, self.schemes)
        if chosen is None:
            page.entries.append(unfetchable(self.platform, vid, ref, NO_RENDITION, title))
            return
        privacy, note = privacy_of(video, self.clock())
        found, drafts = self._tracks(vid, video) if tracks else ([], 0)
        metadata: dict = {"source_file": _shape(chosen), "source_note": RENDITION_NOTE}
        if note:
            metadata["privacy_note"] = note
        geo = Geo.of(video)
        if geo is not None:
            metadata["geo"] = geo.metadata()
        schedule = {
            k: v for k, v in mapping(video.get("schedule")).items() if k in ("starts_at", "ends_at") and text(v)
        }
        if schedule:
            metadata["schedule"] = schedule
        if drafts:
            metadata["text_tracks_note"] = f"{drafts} draft text track(s) on Brightcove, not published: not carried"
        extra = {k: video[k] for k in ("reference_id", "delivery_type") if isinstance(video.get(k), str)}
        duration = finite_number(video.get("duration"))
        description = text(video.get("long_description")) or video.get("description")
        folder = self._folder(text(video.get("folder_id")))
        seen_first = self._seen_first(vid, video, folder, tracks, metadata)
        page.entries.append(
            make_row(
                self.platform,
                vid,
                ref,
                title=title,
                description=description,
                tags=entries(video.get("tags")),
                created_at=when(video.get("created_at")),
                duration_s=duration / 1000.0 if duration is not None else None,
                size_bytes=chosen.get("size"),
                privacy=privacy,
                folder=folder,
                tracks=found,
                metadata={**extra, **metadata},
                **seen_first,
            )
        )

    def _seen_first(self, vid: str, video: Mapping, folder: str | None, tracks: bool, metadata: dict) -> dict:
        """What a viewer sees first, as make_row takes it (brightcove_extras.py): the poster as a reference, the
        folder and (with tracks) the playlists, the publish time; a refused playlist read said in `metadata`."""
        image = image_kind(video, self.schemes)
        collections = folder_of(text(video.get("folder_id")), folder)
        if tracks:
            collections += self.playlists().of(vid)
            if self.playlists().refused:
                metadata["playlists_note"] = self.playlists().refused
        return {
            "thumbnail_url": self.ref(vid, "images", image) if image else None,
            "collections": collections,
            "published_at": published_of(video, self.clock()),
        }

    def playlists(self) -> PlaylistIndex:
        """The account's playlists, read once a sweep (brightcove_extras.PlaylistIndex)."""
        if self._playlists is None:
            self._playlists = PlaylistIndex(self.call, self._account())
        return self._playlists

    def _tracks(self, vid: str, video: Mapping) -> tuple[list[TrackInfo], int]:
        found, drafts = [], 0
        for track in entries(video.get("text_tracks")):
            track = mapping(track)
            tid, kind = text(track.get("id")), text(track.get("kind"))
            if not tid or kind not in CARRIED_KINDS or not text(track.get("src")):
                continue
            if track.get("status") == "draft":
                drafts += 1
                continue
            form = "vtt" if (text(track.get("mime_type")) or "text/vtt") == "text/vtt" else None
            ref = self.ref(vid, "text_tracks", tid)
            found.append(TrackInfo(ref, track.get("srclang"), kind, track.get("label"), format=form))
        return found, drafts

    def _folder(self, folder_id: str | None) -> str | None:
        if folder_id is None:
            return None
        if self._folders is None:
            body = self.read("GET", f"{self._account()}/folders", "the folders", gone_ok=False)
            self._folders = {
                f["id"]: f["name"]
                for f in (mapping(x) for x in entries(body))
                if isinstance(f.get("id"), str) and isinstance(f.get("name"), str)
            }
        return self._folders.get(folder_id)

    # --- resolving -----------------------------------------------------------------------------------

    def resolve(self, ref: SourceRef) -> Resolution:
        if _vid(ref.video_id) is None:
            return Resolution.unfetchable(f"not a Brightcove video id: {clean_text(ref.video_id, 40)!r}")
        path = f"{self._account()}/videos/{quote(ref.video_id)}"
        video = self.read("GET", path, "the video")
        if video is None:
            return Resolution.unfetchable(gone("Brightcove"))
        video = mapping(video)
        if ref.is_track:
            return self._track(video, ref)
        if video.get("complete") is not True:
            return Resolution.preparing("Brightcove is still processing the video (complete: false)", 60.0)
        sources = self.read("GET", f"{path}/sources", "the video's sources")
        if sources is None:
            return Resolution.unfetchable(gone("Brightcove"))
        chosen = best_rendition(sources, self.schemes)
        if chosen is None:
            return Resolution.unfetchable(NO_RENDITION)
        return Resolution.ready(chosen["src"], privacy=privacy_of(video, self.clock())[0])

    def _track(self, video: Mapping, ref: SourceRef) -> Resolution:
        if ref.kind == "images":
            return self._image(video, ref)
        if ref.kind != "text_tracks":
            return Resolution.unfetchable(f"not a Brightcove text track reference: {ref}")
        track = next((mapping(t) for t in entries(video.get("text_tracks")) if mapping(t).get("id") == ref.item), None)
        src = text(track.get("src")) if track else None
        if not src or urlsplit(src).scheme not in self.schemes:
            return Resolution.unfetchable("the text track is no longer on the video (or has no file)")
        return Resolution.ready(src)

    def _image(self, video: Mapping, ref: SourceRef) -> Resolution:
        """The image the video shows now: the one named (its poster), else the other where that one was removed
        since the inventory. Its link's life is Brightcove's account setting, told to no one (link_terms)."""
        if ref.item not in IMAGE_KINDS:
            return Resolution.unfetchable(f"not a Brightcove image reference: {ref}")
        images = mapping(video.get("images"))
        shown = [ref.item, *(kind for kind in IMAGE_KINDS if kind != ref.item)]
        src = next((found for kind in shown if (found := image_src(images.get(kind), self.schemes))), None)
        return Resolution.ready(src) if src else Resolution.unfetchable("the video shows no poster on Brightcove now")


def _shape(rendition: Mapping) -> str:
    width, height = finite_number(rendition.get("width")), finite_number(rendition.get("height"))
    return f"rendition {int(width)}x{int(height)} MP4" if width and height else "rendition MP4"
