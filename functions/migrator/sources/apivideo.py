"""api.video as a source (its OpenAPI file, apivideo/api.video-api-client-generator `oas_apivideo.yaml`;
docs.api.video "Video download", "Private videos", "Private video session tokens"; api-video 1.4.7's
`VideosApi.list`, `get`, `get_status` and `CaptionsApi.list`).

- credentials: the API key, HTTP Basic with the key as user name; `{"api_key": "..."}` (the
  provider's format);
- list: `GET /videos?currentPage=&pageSize=100&sortBy=createdAt&sortOrder=asc`, `{data,
  pagination: {currentPage, pagesTotal, itemsTotal}}`; a delta sweep sorts by `updatedAt`, newest
  first, and stops at the first video older than the mark. Pages are numbered, so a video deleted
  while a sweep runs shifts every later one back a place and the first of the next page would be
  skipped: each page after the first is read together with the one before it, again (one more list
  request a hundred videos), reaching further back while the window starts past the last video taken,
  and only what comes after that video in the list's order is taken (the cursor carries its position
  and the ids at it: `<page>|<position>|<ids>`; a cursor of a page number alone, from before, reads as
  it did);
- a video: `videoId`, `title`, `description`, `tags`, `metadata [{key, value}]`, `createdAt`,
  `updatedAt`, `public` ("Defines if the content is publicly reachable or if a unique token is needed
  for each play session": only `true` is public; missing or not a boolean reads as private, noted in
  the row), `mp4Support`, `assets.mp4`: the MP4 exists only with mp4Support;
- its status: `GET /videos/{id}/status` (one request a video), `ingest.status` (uploading, uploaded,
  ingesting, ingested), `encoding.playable` and each quality's status (waiting, encoding, encoded,
  failed), `encoding.metadata.duration` in whole seconds (the row's duration). A video still uploading
  or encoding, or whose MP4 is, goes to the page's `pending` (the next sweep asks for it again:
  `video(id)`); one whose MP4 (or every quality) failed is unfetchable;
- captions: `GET /videos/{id}/captions` `{data: [{srclang, languageName, src}], pagination}` (WebVTT),
  paged like every list ("pageSize ... default is 25"): every page is read, and a page that repeats
  languages already read, an empty page under a total that says more follow, or more pages than a
  video could hold stops the listing with the reason (as a repeating video list does); one language
  at `GET /videos/{id}/captions/{language}`. Captions keep no status of their own;
- what a viewer sees first (issue 42): the thumbnail, `assets.thumbnail` ("A link to the thumbnail for your
  video": the image its owner uploaded or picked, else the frame api.video took), in the video's answer; a public
  video's is a lasting link carried as it is, a private video's carries a private token good for one request, so
  it is carried as `apivideo://<video>/thumbnail/assets` and resolved when it is set, inside a session as the MP4
  is. Chapters: `GET /videos/{id}/chapters` ("Retrieve a list of all chapters for by video id"; Chapter `{uri,
  src, language}`, `src` "The link to your VTT file, which contains your chapters information"), a WebVTT file a
  language, each a track of kind chapters (`apivideo://<video>/chapters/<language>`, resolved to its `src` with
  `GET /videos/{id}/chapters/{language}`), paged as the captions are, a request a video when tracks are.
  `publishedAt` ("The date and time the API created the video") is the row's `published_at`. api.video has no
  playlists or folders: `tags` and `metadata` stay as they are, no collection;
- resolve: `GET /videos/{id}` for its `assets.mp4`. A private video's links carry a private token good
  for one request, and a target may ask more than once (Cloudflare Stream: HEAD, then range GETs; any
  retry), so the MP4 of a private video is handed on inside a session: `GET
  .../vod/{id}/token/{private token}/session` (no credentials: the token is the credential) gives a
  session token, carried as `avh` on the link, good for 24 hours; the resolve says the privacy it read;
- rate limits: per minute (production: 500 reads), `X-RateLimit-Limit` / `-Remaining` /
  `-Retry-After`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ..link_life import LinkTerms
from ..providers.apivideo import (
    SESSION_TTL_S,
    SessionError,
    basic_auth,
    open_session,
    session_url,
    vod_allowed,
    vod_transport,
    with_session,
)
from ..providers.facts import entries, epoch_of, mapping, text
from ..providers.http import TransportError, quote
from .base import HttpSource, Page, Resolution, SourceError, SourceRef, Unfetchable, gone
from .rows import TrackInfo, make_row, unfetchable

PAGE_SIZE = 100
# A video holds a caption (and a chapters file) per language: past this many pages (of 100) the list is not ending.
MAX_CAPTION_PAGES = 10
THUMBNAIL_ITEM = "assets"  # apivideo://<video>/thumbnail/assets: the video's assets.thumbnail, read when it is set
# How many ids at the last position a cursor carries (videos made in the same second).
MAX_CURSOR_IDS = 200
NO_MP4 = (
    'no MP4: api.video makes one only with mp4Support (turn it on with PATCH /videos/{id} {"mp4Support": true}, '
    "wait for it to encode, then list again)"
)
PRIVACY_NOTE = "api.video's `public` was missing or not a boolean: read as private"
READY_INGEST = ("uploaded", "ingested")


def _changed(video: Mapping) -> float | None:
    return epoch_of(video.get("updatedAt")) or epoch_of(video.get("createdAt"))


def why_unfetchable(video: Mapping) -> str | None:
    if video.get("mp4Support") is False or not text(mapping(video.get("assets")).get("mp4")):
        return NO_MP4
    return None


def privacy_of(video: Mapping) -> tuple[str, str | None]:
    """The video's privacy and, where `public` is not a boolean, the note that says it was read as private."""
    public = video.get("public")
    if isinstance(public, bool):
        return ("public" if public else "private"), None
    return "private", PRIVACY_NOTE


def encoding_state(status: object) -> tuple[str, str | None]:
    """("ready" | "pending" | "failed", why) from `GET /videos/{id}/status`."""
    status = mapping(status)
    if not status:
        return "pending", "api.video's status of it could not be read"
    ingest, encoding = mapping(status.get("ingest")), mapping(status.get("encoding"))
    word = text(ingest.get("status"))
    if word not in READY_INGEST:
        return "pending", f"still uploading to api.video (ingest: {(word or 'none')[:20]})"
    qualities = [q for q in entries(encoding.get("qualities")) if isinstance(q, dict)]
    if qualities and all(q.get("status") == "failed" for q in qualities):
        return "failed", "encoding failed at api.video (every quality failed)"
    mp4 = [q.get("status") for q in qualities if q.get("type") == "mp4"]
    if "failed" in mp4:
        return "failed", "its MP4 failed to encode at api.video"
    if encoding.get("playable") is not True:
        return "pending", "still encoding at api.video (not playable yet)"
    if mp4 and "encoded" not in mp4:
        return "pending", "its MP4 is still encoding at api.video"
    return "ready", None


@dataclass(frozen=True)
class Cursor:
    """Where the next page starts: its number, and the list position (createdAt, or -updatedAt newest first)
    of the last video taken with the ids taken at it; `after` None: a plain page number."""

    page: int
    after: float | None = None
    ids: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, raw: str | None) -> Cursor:
        number, _, rest = (raw or "").partition("|")
        if not number.isdigit() or int(number) < 1:
            return cls(1)
        after, _, ids = rest.partition("|")
        try:
            position = float(after) if after else None
        except ValueError:
            position = None
        if position is not None and not math.isfinite(position):
            position = None
        return cls(int(number), position, frozenset(i for i in ids.split(",") if i.isalnum()))

    def __str__(self) -> str:
        if self.after is None:
            return str(self.page)
        return f"{self.page}|{self.after!r}|{','.join(sorted(self.ids))}"


class _Pending(Unfetchable):
    """A listed video api.video is still uploading or encoding: the page's `pending`, not its entries."""


class ApiVideoSource(HttpSource):
    platform = "apivideo"
    credential_env: ClassVar[Mapping[str, str]] = {"api_key": "APIVIDEO_API_KEY"}
    default_base_url = "https://ws.api.video"
    documented_rate_per_s = 500 / 60  # reads, production
    rate_window_s = 60.0
    caption_page_size = PAGE_SIZE
    # A public video's MP4 has no end said; a private one's is handed inside a session: "The session token TTL
    # is 24 hours." (docs.api.video, "Private video session tokens").
    link_terms = LinkTerms("a private video's session token lives 24 hours")

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        return basic_auth(json.dumps(dict(creds)))

    # --- the listing -------------------------------------------------------------------------------

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        at = Cursor.parse(cursor)
        newest_first = since is not None
        order = ("updatedAt", "desc") if newest_first else ("createdAt", "asc")

        def position(video: Mapping) -> float | None:
            when = _changed(video) if newest_first else epoch_of(video.get("createdAt"))
            return None if when is None else (-when if newest_first else when)

        def read(number: int) -> tuple[list[Mapping], Mapping]:
            params = {"currentPage": str(number), "pageSize": str(PAGE_SIZE), "sortBy": order[0], "sortOrder": order[1]}
            body = mapping(self.read("GET", "/videos", "the video list", gone_ok=False, params=params))
            return [mapping(v) for v in entries(body.get("data"))], mapping(body.get("pagination"))

        window, pagination = read(at.page)
        first = at.page
        while at.after is not None and first > 1:  # the page before again, and further while it starts past
            earlier, _ = read(first - 1)
            window, first = earlier + window, first - 1
            start = position(window[0]) if window else None
            if start is None or start <= at.after or text(window[0].get("videoId")) in at.ids:
                break
        fresh = [v for v in window if self._after(at, position(v), text(v.get("videoId")))]
        page = Page()
        older_seen = self.take(page, fresh, _changed, since, tracks)
        self._set_aside(page)
        pages, items = pagination.get("pagesTotal"), pagination.get("itemsTotal")
        if isinstance(items, int) and since is None:
            page.remaining = max(0, items - at.page * PAGE_SIZE)
        if isinstance(pages, int) and at.page < pages and not older_seen:
            page.cursor = str(self._next(at, window, position))
        return page

    @staticmethod
    def _after(at: Cursor, where: float | None, vid: str | None) -> bool:
        """Whether a video of the window comes after the last one taken (a repeat otherwise, dropped by id)."""
        if vid in at.ids:
            return False
        return at.after is None or where is None or where >= at.after

    @staticmethod
    def _next(at: Cursor, window: list[Mapping], position) -> Cursor:
        """The next page's cursor: the last position the window reached, the ids at it, and those of videos
        without a readable position (taken now, never again)."""
        placed = [(position(v), text(v.get("videoId"))) for v in window]
        known = [p for p, _ in placed if p is not None]
        last = max(known) if known else at.after
        if last is None or (at.after is not None and last < at.after):
            last = at.after
        ids = {vid for p, vid in placed if (p is None or p == last) and vid and vid.isalnum()}
        if last == at.after:
            ids |= at.ids
        return Cursor(at.page + 1, last, frozenset(sorted(ids)[:MAX_CURSOR_IDS]))

    def video(self, video_id: str, tracks: bool = True) -> Page:
        page = Page()
        if not video_id.isalnum():
            return page
        found = self.read("GET", f"/videos/{quote(video_id)}", "the video")
        if found is not None:
            self.take(page, [found], _changed, None, tracks)
            self._set_aside(page)
        return page

    @staticmethod
    def _set_aside(page: Page) -> None:
        """The videos still processing out of the entries, into `pending`."""
        held = [e for e in page.entries if isinstance(e, _Pending)]
        page.entries = [e for e in page.entries if not isinstance(e, _Pending)]
        page.pending += [Unfetchable(e.asset_id, e.source_url, e.reason, e.title) for e in held]

    def entry(self, video: Mapping, tracks: bool):
        vid = text(video.get("videoId"))
        if not vid or not vid.isalnum():
            return None
        ref = self.ref(vid)
        reason = why_unfetchable(video)
        if reason:
            return unfetchable(self.platform, vid, ref, reason, video.get("title"))
        status = self.read("GET", f"/videos/{quote(vid)}/status", "the video's status")
        if status is None:
            return None  # deleted since it was listed
        state, why = encoding_state(status)
        if state != "ready":
            held = unfetchable(self.platform, vid, ref, why or state, video.get("title"))
            return _Pending(held.asset_id, held.source_url, held.reason, held.title) if state == "pending" else held
        privacy, note = privacy_of(video)
        pairs = {
            m["key"]: m["value"]
            for m in entries(video.get("metadata"))
            if isinstance(m, dict) and isinstance(m.get("key"), str) and isinstance(m.get("value"), str)
        }
        metadata: dict[str, object] = {"apivideo_metadata": pairs} if pairs else {}
        if note:
            metadata["privacy_note"] = note
        thumbnail = text(mapping(video.get("assets")).get("thumbnail"))
        if thumbnail and session_url(thumbnail) is not None:  # a private token: good for one request only
            thumbnail = self.ref(vid, "thumbnail", THUMBNAIL_ITEM)
        found = self._captions(vid) + self._chapters(vid) if tracks else []
        return make_row(
            self.platform,
            vid,
            ref,
            title=video.get("title"),
            description=video.get("description"),
            tags=entries(video.get("tags")),
            created_at=video.get("createdAt"),
            duration_s=mapping(mapping(mapping(status).get("encoding")).get("metadata")).get("duration"),
            privacy=privacy,
            tracks=found,
            metadata=metadata or None,
            thumbnail_url=thumbnail,
            published_at=video.get("publishedAt"),
        )

    def _captions(self, vid: str) -> list[TrackInfo]:
        """Every page of the video's captions (see the module's docstring for where it stops)."""
        return [
            TrackInfo(self.ref(vid, "captions", language), language, "captions", item.get("languageName"), format="vtt")
            for item, language in self._by_language(vid, "captions", "srclang")
        ]

    def _chapters(self, vid: str) -> list[TrackInfo]:
        """The video's chapters files, one a language: each a track of kind chapters."""
        return [
            TrackInfo(self.ref(vid, "chapters", language), language, "chapters", format="vtt")
            for _item, language in self._by_language(vid, "chapters", "language")
        ]

    def _by_language(self, vid: str, what: str, key: str) -> list[tuple[Mapping, str]]:
        """Every page of a video's list of files a language (captions, chapters), each language once; an answer
        other than 200 ends it, and a list that does not end stops the listing with the reason."""
        found: list[tuple[Mapping, str]] = []
        seen: set[str] = set()
        for number in range(1, MAX_CAPTION_PAGES + 1):
            params = {"currentPage": str(number), "pageSize": str(self.caption_page_size)}
            answer = self.call("GET", f"/videos/{quote(vid)}/{what}", params=params)
            if answer.status != 200:
                return found
            body = mapping(answer.body)
            listed = [mapping(c) for c in entries(body.get("data"))]
            pages = mapping(body.get("pagination")).get("pagesTotal")
            more = isinstance(pages, int) and number < pages
            languages = [language for c in listed if (language := text(c.get(key)))]
            if not listed and more:
                raise self._list_stop(vid, what, f"page {number} is empty while the list says {pages} pages")
            if languages and all(language in seen for language in languages):
                raise self._list_stop(vid, what, f"page {number} repeats {what} already read")
            for item, language in ((c, text(c.get(key))) for c in listed):
                if language and language not in seen:
                    seen.add(language)
                    found.append((item, language))
            if not more:
                return found
        raise self._list_stop(vid, what, f"it runs past {MAX_CAPTION_PAGES} pages")

    def _list_stop(self, vid: str, what: str, why: str) -> SourceError:
        noun = "caption" if what == "captions" else what
        return SourceError(f"{self.platform}: the {noun} list of video {vid} does not end: {why}")

    # --- resolving --------------------------------------------------------------------------------

    def resolve(self, ref: SourceRef) -> Resolution:
        if ref.kind == "thumbnail":
            return self._thumbnail(ref)
        if ref.is_track:
            if ref.kind not in ("captions", "chapters"):
                return Resolution.unfetchable(f"not an api.video caption or chapters reference: {ref}")
            what = "the caption" if ref.kind == "captions" else "the chapters"
            path = f"/videos/{quote(ref.video_id)}/{ref.kind}/{quote(ref.item or '')}"
            found = self.read("GET", path, what)
            if found is None:
                return Resolution.unfetchable(gone("api.video"))
            src = text(mapping(found).get("src"))
            return Resolution.ready(src) if src else Resolution.unfetchable(f"{what} has no file link")
        video = self.read("GET", f"/videos/{quote(ref.video_id)}", "the video")
        if video is None:
            return Resolution.unfetchable(gone("api.video"))
        video = mapping(video)
        reason = why_unfetchable(video)
        if reason:
            return Resolution.unfetchable(reason)
        link = mapping(video.get("assets"))["mp4"]
        privacy, _ = privacy_of(video)
        if session_url(link) is None:
            return Resolution.ready(link, privacy=privacy)
        session = self._session(link)
        return Resolution.ready(with_session(link, session), self.clock() + SESSION_TTL_S, privacy=privacy)

    def _thumbnail(self, ref: SourceRef) -> Resolution:
        """The video's thumbnail as it is now (`assets.thumbnail`); a private video's inside a session, so the
        fetch may ask for it more than once."""
        if ref.item != THUMBNAIL_ITEM:
            return Resolution.unfetchable(f"not an api.video thumbnail reference: {ref}")
        video = self.read("GET", f"/videos/{quote(ref.video_id)}", "the video")
        if video is None:
            return Resolution.unfetchable(gone("api.video"))
        link = text(mapping(mapping(video).get("assets")).get("thumbnail"))
        if not link:
            return Resolution.unfetchable("the video has no thumbnail at api.video")
        if session_url(link) is None:
            return Resolution.ready(link)
        return Resolution.ready(with_session(link, self._session(link)), self.clock() + SESSION_TTL_S)

    def _session(self, link: str) -> str:
        """A session on the private token `link` carries, so the target may ask for the file many times."""
        if not vod_allowed(link, self.base_url):
            raise SourceError(f"{self.platform}: the private video's MP4 link is not https")
        self.requests += 1
        try:
            return open_session(vod_transport(self.http), link)
        except TransportError as exc:
            raise SourceError(f"{self.platform}: the private video's session: {exc.kind}") from None
        except SessionError as exc:
            raise SourceError(f"{self.platform}: {exc}") from None
