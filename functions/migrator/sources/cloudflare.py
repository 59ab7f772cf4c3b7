"""Cloudflare Stream as a source (developers.cloudflare.com/stream: "List videos", "Download videos",
"Secure your Stream", "Captions"; the API reference "Create signed URL tokens for videos"; cloudflare-python
5.9.0: `stream.list`, `stream.get`, `stream.downloads.create/get`, `stream.token.create`,
`stream.captions.get`, `stream.captions.language.vtt.get`).

- credentials: the account id and an API token with Stream read and edit (a download, a token are edits),
  `Authorization: Bearer`; `{"account_id": "...", "api_token": "..."}` (the provider's format);
- list: `GET /accounts/{a}/stream?asc=true&limit=1000&include_counts=true` oldest first, `{result, total,
  range}`: `total` is what matches the query, so what remains after this page. `after=` is exclusive ("videos
  created after this date/time") and the list has no cursor, so videos that share the last one's instant could
  fall between two pages: the next page starts BOUNDARY_S before that instant and the cursor carries the uids
  already listed in that last second, dropped when they come again (`Boundary`). A delta sweep lists from the
  mark the same way. Only creation is filtered: a video still processing at a sweep is never listed again past
  the mark, so it goes to `page.pending` and the next sweep asks for it by uid (`video`);
- a video: `uid`, `meta.name`, `created`, `modified`, `duration`, `size`, `status.state` (pendingupload,
  downloading, queued, inprogress, ready, error with `errorReasonCode`; live-inprogress), `readyToStream`,
  `requireSignedURLs`, `allowedOrigins`, `thumbnailTimestampPct` (the poster, a fraction of the duration),
  `creator`; a video is a row once its state is ready, pending while it is in one of the working states;
- privacy never widens: `requireSignedURLs` ("it can no longer be accessed publicly with only the video id")
  is `signed`; a non-empty `allowedOrigins` ("limit the domains a video can be embedded on") is not public to
  everyone either, and no target keeps an origin list as such, so it is `signed` too (a signed video is
  played only by pages that ask their backend for a token: the nearest a target has to "only on these
  sites"; `private` would say no one may watch it), and the row's metadata keeps the origins and says what
  was not kept (`allowed_origins`, `privacy_note`). The resolve reads the video again and says its privacy
  then (`Resolution.privacy`);
- resolve: the MP4 download, made on request: `POST .../stream/{uid}/downloads`, then `GET` it until
  `result.default.status` is ready (inprogress meanwhile, `percentComplete`), when `result.default.url` is the
  file (`https://customer-<code>.cloudflarestream.com/<uid>/downloads/default.mp4`). A video that requires
  signed URLs serves it only with a token "with an additional flag called `downloadable` set to `true`" in
  place of the uid: `POST .../stream/{uid}/token {"downloadable": true, "exp": ...}` -> `result.token`, made
  once the download is ready, just before the create, living DOWNLOAD_TOKEN_TTL_S (at most 24 h);
- captions: `GET .../stream/{uid}/captions` `[{language (BCP 47), label, generated, status}]`; `status` is
  that of a generated caption (ready, inprogress, error): a caption still inprogress keeps the video pending,
  one in error is left out. One file at `GET .../captions/{language}/vtt` (the API serves the text itself),
  read up to the stack's caption cap (trackfetch.MAX_TRACK_BYTES) and refused past it, as the tracks
  worker's guarded fetch refuses a larger file;
- what a viewer sees first (issue 42): the poster frame, `thumbnailTimestampPct` ("The timestamp for a thumbnail
  image calculated as a percentage value of the video's duration ... If this value is not set, the default
  thumbnail image is taken from 0s of the video") times the duration as `poster_time_s`, and the video's
  `thumbnail` ("The media item's thumbnail URI. This field is omitted until encoding is complete",
  `.../<uid>/thumbnails/thumbnail.jpg`), the default thumbnail at that time, as `thumbnail_url`: as it is for a
  video without signed URLs (it lasts), else the reference `cloudflare://<uid>/thumbnail/default`, resolved to
  that link with a token (not downloadable) in place of the uid ("If signed URLs are required, you must use a
  signed URL instead of video UIDs", "Display thumbnails"). Stream has no chapters and no collections (`meta`
  keys stay metadata; the `creator` too), and no publish time (`scheduledDeletion` is a deletion's);
- rate limits: 1,200 requests per 5 minutes per user, then every call blocked for 5 minutes
  (developers.cloudflare.com/fundamentals/api/reference/limits); `retry-after` on a 429.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import ClassVar

from ..link_life import LinkTerms
from ..providers.cloudflare import WORKING, credentials, token_body, token_of, with_token
from ..providers.facts import CredentialsError, entries, epoch_of, finite_number, mapping, text
from ..providers.http import quote
from .base import HttpSource, Page, Resolution, SourceDenied, SourceRef, gone
from .rows import TrackInfo, clean_text, make_row, poster_from_pct, unfetchable

PAGE_SIZE = 1000  # the list's maximum
# How far before the last listed instant the next page starts: wide enough for whatever precision Stream
# compares `after` at (the times it prints carry microseconds; a second covers a coarser one).
BOUNDARY_S = 1.0
STILL_PROCESSING = "still processing at Stream (status.state {state}): asked for again at the next sweep"
CAPTION_PROCESSING = (
    "its caption track {language} is still being generated at Stream: asked for again at the next sweep"
)
SIGNED = "signed"  # Stream's requireSignedURLs, and allowedOrigins (module docstring)
DOWNLOAD_TOKEN_TTL_S = 6 * 3600.0  # the target's fetch may wait in its queue (Stream's own: 120 at a time)
MAX_ORIGINS = 20  # allowedOrigins kept in the row's metadata (Stream documents no maximum)
PREPARE_POLL_S = 15.0


def why_unfetchable(video: Mapping) -> str | None:
    """Why a listed video can never be fetched (its encoding failed, a state Stream does not document)."""
    status = mapping(video.get("status"))
    state = text(status.get("state")) or ""
    if state == "error":
        code = text(status.get("errorReasonCode")) or text(status.get("errReasonCode"))
        return "failed at the source (Stream state error" + (f", {code})" if code else ")")
    if state != "ready" and state not in WORKING:
        return f"Stream gives it no state this tool knows ({clean_text(state, 40) or 'none'})"
    return None


def processing(video: Mapping) -> str | None:
    """The pending reason of a video Stream is still working on (a working state), else None."""
    state = text(mapping(video.get("status")).get("state"))
    return STILL_PROCESSING.format(state=state) if state in WORKING else None


def privacy_of(video: Mapping) -> tuple[str, dict]:
    """The row's privacy from what the video says, and what its metadata keeps of what could not be carried."""
    origins = [o for o in entries(video.get("allowedOrigins")) if clean_text(o, 253) == o and o.isprintable()]
    if not origins:
        return (SIGNED if video.get("requireSignedURLs") is True else "public"), {}
    kept = origins[:MAX_ORIGINS]
    note = (
        "Stream plays it only on the sites its allowedOrigins names (kept in allowed_origins): no target keeps"
        " that list, so it is listed as signed and the target plays it only with a token"
    )
    return SIGNED, {"allowed_origins": kept, "privacy_note": note}


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Boundary:
    """Where a page of the list starts: `after` (exclusive, as Stream reads it), and the uids already listed
    at or after it, to drop when they come again. As a cursor: `<after>|<uid>,<uid>...` (a bare time, as
    cursors were before, is an `after` with nothing to drop)."""

    after: str | None = None
    seen: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, cursor: str | None, since: float | None) -> Boundary:
        if cursor is None:
            return cls(_iso(since - BOUNDARY_S) if since is not None else None)
        after, _, uids = cursor.partition("|")
        return cls(after or None, frozenset(u for u in uids.split(",") if u.isalnum()))

    def next(self, videos: list[dict], fresh: int) -> str | None:
        """The cursor of the page after `videos` (a full page, `fresh` of them new): the second before its last
        instant, with the uids listed in that second. A page of nothing new cannot go on that way (more than a
        page created within one second): it goes on after the last instant itself, and what else that second
        holds is not listed (the list has no finer cursor; 1,000 videos in a second is past the API's rate)."""
        last = text(videos[-1].get("created")) if videos else None
        at = epoch_of(last)
        if last is None or at is None:
            return None
        if not fresh:
            return last if last != self.after else None
        window = sorted({u for v in videos if (u := _uid(v)) and (epoch_of(v.get("created")) or 0) > at - BOUNDARY_S})
        return f"{_iso(at - BOUNDARY_S)}|{','.join(window)}"


def _uid(video: Mapping) -> str | None:
    uid = text(video.get("uid"))
    return uid if uid and uid.isalnum() and len(uid) <= 64 else None


class CloudflareSource(HttpSource):
    platform = "cloudflare"
    credential_env: ClassVar[Mapping[str, str]] = {
        "account_id": "CLOUDFLARE_ACCOUNT_ID",
        "api_token": "CLOUDFLARE_API_TOKEN",
    }
    default_base_url = "https://api.cloudflare.com/client/v4"
    documented_rate_per_s = 4.0  # 1,200 per 5 minutes
    # The video and its downloads read, the download requested; once ready, both read again (a signed video's
    # token is one more).
    requests_per_video = 5
    # A public video's download lives as long as the download; a signed one's token is made here for
    # DOWNLOAD_TOKEN_TTL_S ("The maximum time specification is 24 hours from issuing time").
    link_terms = LinkTerms("Stream's signed downloads carry a token made here for 6 hours (24 hours at most)")

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        return {"Authorization": f"Bearer {credentials(json.dumps(dict(creds)))[1]}"}

    def _stream(self) -> str:
        try:
            account = credentials(json.dumps(dict(self.credentials() or {})))[0]
        except CredentialsError as exc:
            raise SourceDenied(str(exc)) from None
        return f"/accounts/{quote(account)}/stream"

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        boundary = Boundary.of(cursor, since)
        params = {"asc": "true", "limit": str(PAGE_SIZE), "include_counts": "true"}
        if boundary.after:
            params["after"] = boundary.after
        body = mapping(self.read("GET", self._stream(), "the video list", gone_ok=False, params=params))
        videos = [mapping(v) for v in entries(body.get("result"))]
        page, fresh = Page(), 0
        for video in videos:
            page.saw(epoch_of(video.get("created")))
            if _uid(video) not in boundary.seen:
                fresh += 1
                self._place(page, video, tracks)
        total = body.get("total")
        if isinstance(total, int) and not isinstance(total, bool):
            page.remaining = max(0, total - len(videos))
        if len(videos) == PAGE_SIZE:
            page.cursor = boundary.next(videos, fresh)
        return page

    def video(self, video_id: str, tracks: bool = True) -> Page:
        """One video by uid (`GET .../stream/{uid}`, its captions): its row, why it is unfetchable, pending
        again, or an empty page when Stream no longer has it."""
        page = Page()
        if not video_id.isalnum():
            return page
        body = self.read("GET", f"{self._stream()}/{quote(video_id)}", "the video")
        if body is not None:
            self._place(page, mapping(mapping(body).get("result")), tracks)
        return page

    def _place(self, page: Page, video: dict, tracks: bool) -> None:
        """A listed video onto `page`: a row, an unfetchable entry, or pending (it, or one of its captions, is
        still being made); nothing for what names no video."""
        uid = _uid(video)
        if uid is None:
            return
        ref, title = self.ref(uid), mapping(video.get("meta")).get("name")
        reason = why_unfetchable(video)
        if reason:
            page.entries.append(unfetchable(self.platform, uid, ref, reason, title))
            return
        waiting = processing(video)
        captions, busy = self._captions(uid) if tracks and not waiting else ([], None)
        if waiting or busy:
            page.pending.append(unfetchable(self.platform, uid, ref, waiting or busy or "", title))
            return
        privacy, kept = privacy_of(video)
        extra = {"creator": video["creator"]} if isinstance(video.get("creator"), str) else {}
        page.entries.append(
            make_row(
                self.platform,
                uid,
                ref,
                title=title,
                created_at=video.get("created"),
                duration_s=video.get("duration"),
                size_bytes=video.get("size"),
                privacy=privacy,
                poster_time_s=poster_from_pct(video.get("thumbnailTimestampPct"), video.get("duration")),
                tracks=captions,
                metadata={**extra, **kept},
                thumbnail_url=self._thumbnail(uid, video),
            )
        )

    def _thumbnail(self, uid: str, video: Mapping) -> str | None:
        """The default thumbnail a viewer sees: Stream's link as it is, or a signed video's reference."""
        link = text(video.get("thumbnail"))
        if not link or not link.startswith(("https://", "http://")):
            return None  # none until encoding is complete
        return self.ref(uid, "thumbnail", "default") if video.get("requireSignedURLs") is True else link

    def _captions(self, uid: str) -> tuple[list[TrackInfo], str | None]:
        """The video's captions, or why it must wait: one still being generated (`status` inprogress)."""
        answer = self.call("GET", f"{self._stream()}/{quote(uid)}/captions")
        if answer.status != 200:
            return [], None
        found = []
        for caption in entries(mapping(answer.body).get("result")):
            caption = mapping(caption)
            language = text(caption.get("language"))
            if not language:
                continue
            if caption.get("status") == "inprogress":
                return [], CAPTION_PROCESSING.format(language=clean_text(language, 35))
            if caption.get("status") not in (None, "ready"):
                continue  # a generated caption that failed: there is no file to carry
            found.append(
                TrackInfo(self.ref(uid, "captions", language), language, "captions", caption.get("label"), format="vtt")
            )
        return found, None

    def resolve(self, ref: SourceRef) -> Resolution:
        video_path = f"{self._stream()}/{quote(ref.video_id)}"
        if ref.kind == "thumbnail":
            return self._thumbnail_image(video_path, ref.video_id)
        if ref.is_track:
            return self._caption_text(ref, video_path)
        body = self.read("GET", video_path, "the video")
        if body is None:
            return Resolution.unfetchable(gone("Stream"))
        video = mapping(mapping(body).get("result"))
        reason = why_unfetchable(video)
        if reason:
            return Resolution.unfetchable(reason)
        if processing(video):
            state = text(mapping(video.get("status")).get("state"))
            return Resolution.preparing(f"Stream is still processing the video (status.state {state})", PREPARE_POLL_S)
        answer = self.call("GET", f"{video_path}/downloads")
        download = mapping(mapping(answer.body).get("result")).get("default") if answer.status == 200 else None
        if not isinstance(download, dict):
            answer = self.call("POST", f"{video_path}/downloads")
            if answer.status not in (200, 201):
                raise self.failure(answer, "the download request")
            download = mapping(mapping(answer.body).get("result")).get("default")
        made, privacy = self._download(mapping(download)), privacy_of(video)[0]
        if made.url is None:
            return made
        if video.get("requireSignedURLs") is not True:
            return Resolution.ready(made.url, privacy=privacy)
        return self._signed(video_path, ref.video_id, made.url, privacy)

    def _thumbnail_image(self, video_path: str, uid: str) -> Resolution:
        """A signed video's default thumbnail: its `thumbnail` link read again, a token in place of its uid."""
        body = self.read("GET", video_path, "the video")
        if body is None:
            return Resolution.unfetchable(gone("Stream"))
        video = mapping(mapping(body).get("result"))
        link = text(video.get("thumbnail"))
        if not link:
            return Resolution.unfetchable("Stream gives the video no thumbnail (its encoding is not complete)")
        if video.get("requireSignedURLs") is not True:
            return Resolution.ready(link)
        return self._signed(video_path, uid, link, None, downloadable=False)

    def _signed(
        self, video_path: str, uid: str, url: str, privacy: str | None, downloadable: bool = True
    ) -> Resolution:
        """The ready download (or thumbnail: not `downloadable`) of a video that requires signed URLs, with a token
        in place of its uid."""
        now = self.clock()
        body = token_body(DOWNLOAD_TOKEN_TTL_S, now, downloadable=downloadable)
        answer = self.call("POST", f"{video_path}/token", json_body=body)
        if answer.status == 404:
            return Resolution.unfetchable(gone("Stream"))
        if answer.status != 200:
            raise self.failure(answer, "the signed URL token")
        token = token_of(answer.body)
        signed = with_token(url, uid, token) if token else None
        if signed is None:
            return Resolution.unfetchable("Stream's token or download URL cannot make a signed download URL")
        return Resolution.ready(signed, expires_at=float(body["exp"]), privacy=privacy)

    def _caption_text(self, ref: SourceRef, video_path: str) -> Resolution:
        """A caption's WebVTT as the API serves it, up to the stack's caption cap."""
        if ref.kind != "captions":
            return Resolution.unfetchable(f"not a Stream caption reference: {ref}")
        return self.api_caption(f"{video_path}/captions/{quote(ref.item or '')}/vtt", "Stream")

    @staticmethod
    def _download(download: Mapping) -> Resolution:
        status = text(download.get("status"))
        if status == "ready" and text(download.get("url")):
            return Resolution.ready(download["url"])
        if status == "error":
            return Resolution.unfetchable("Stream could not make the MP4 download (download status error)")
        pct = finite_number(download.get("percentComplete"))
        done = f", {pct:.0f}% done" if pct is not None else ""
        return Resolution.preparing(f"Stream is preparing the MP4 download{done}", PREPARE_POLL_S)
