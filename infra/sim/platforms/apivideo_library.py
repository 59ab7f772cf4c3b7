"""The "apivideo" profile as a source library, and the wire pieces both of its sides share (paging, encodings).

As api.video's OpenAPI file (apivideo/api.video-api-client-generator `oas_apivideo.yaml`) and docs describe it:
- every list (`GET /videos`, `GET /videos/{id}/captions`) pages by number: `currentPage` (from 1) and
  `pageSize`, "Results per page. Allowed values 1-100, default is 25." (components/parameters/page-size),
  answered with `pagination {currentPage, pageSize, pagesTotal, itemsTotal, currentPageItems, links}`;
- `GET /videos/{id}/status` (VideoStatus): `ingest.status` one of uploading, uploaded, ingesting, ingested;
  `encoding.playable`, and per quality (type hls or mp4) waiting, encoding, encoded or failed; `metadata`
  with the duration in whole seconds once known. A video still processing (`library_unfetchable_every`'s
  "processing" fault) shows it there: some still uploading, the others uploaded and encoding; with
  `library_processing_done` they have finished;
- a private video (`public: false`) renders a fresh private token in every link each time it is read, on
  the delivery host (here `/_stream/apivideo/vod/{id}/token/{token}/...`, api.video's
  `https://vod.api.video/vod/{id}/token/{token}/...`), whose rules are apivideo_vod's;
- captions (Caption `{uri, src, srclang, languageName, default}`) keep no status of their own, so
  `library_captions_processing` has nothing to render here;
- what a viewer sees first (issue 42): the thumbnail's image at `assets.thumbnail`, a public video's at this
  simulator's delivery host too, and chapters (`GET /videos/{id}/chapters`, `.../chapters/{language}`, the file at
  its `src`), each documented in apivideo_source_extras.py.
"""

from __future__ import annotations

import math
import urllib.parse
from typing import TYPE_CHECKING

from ..library import Item, Served, Shelf, serve_media
from ..profile import Call, ParamError, Reply, int_param, iso_offset
from . import analytics
from . import apivideo_source_extras as extras
from .apivideo_vod import REFUSED, admit, private_token, session_ttl

# The encodings a 1080p source gets: each HLS rendition, and one MP4 when mp4Support is on.
HLS_QUALITIES = ("360p", "480p", "720p", "1080p")
MP4_QUALITY = "1080p"
SORT_FIELDS = ("title", "createdAt", "publishedAt", "updatedAt")
# What every encoded source reports in encoding.metadata (a 1080p H.264 file), besides its duration.
MEDIA = {
    "width": 1920,
    "height": 1080,
    "bitrate": 4000.0,
    "duration": None,
    "framerate": 30,
    "samplerate": 48000,
    "videoCodec": "h264",
    "audioCodec": "aac",
    "aspectRatio": "16/9",
}
# "Results per page. Allowed values 1-100, default is 25." (oas_apivideo.yaml, components/parameters/page-size).
# The same file's 400 example for GET /videos gives pageSize {min: 10, max: 100}, but names the page parameter
# `page` where the parameter is `currentPage`: an example out of step with the definition, which is what holds.
PAGE_SIZE_MIN, PAGE_SIZE_MAX, PAGE_SIZE_DEFAULT = 1, 100, 25
# As a source: a video made without mp4Support has no MP4 to fetch; one still uploading or encoding.
FAULTS = ("no_mp4", "processing")
TEXT = {"Content-Type": "text/plain"}


def library_id(video: Item) -> str:
    return f"vi{video.index:020d}"


def library_index(vid: str) -> int:
    return int(vid[2:]) if len(vid) == 22 and vid.startswith("vi") and vid[2:].isdigit() else -1


def page_of(query: dict[str, list[str]]) -> tuple[int, int] | Reply:
    """(currentPage, pageSize) of a list request, or the 400 api.video answers for one out of range."""
    try:
        return int_param(query, "currentPage", 1, 1, None), int_param(
            query, "pageSize", PAGE_SIZE_DEFAULT, PAGE_SIZE_MIN, PAGE_SIZE_MAX
        )
    except ParamError as exc:
        rng = {"min": exc.low} if exc.high is None else {"min": exc.low, "max": exc.high}
        problem = {"title": "This parameter is out of the allowed range of values.", "name": exc.name, "range": rng}
        return Reply(400, {**problem, "status": 400, "problems": [problem]})


def pagination(uri: str, kept: list[tuple[str, str]], page: int, size: int, total: int, count: int) -> dict:
    """A list's `pagination`, its links (self, first, previous, next, last) keeping the request's other
    parameters, as the OpenAPI's examples show them."""
    pages = max(1, math.ceil(total / size))

    def link(rel: str, n: int) -> dict:
        return {"rel": rel, "uri": f"{uri}?{urllib.parse.urlencode([*kept, ('currentPage', n), ('pageSize', size)])}"}

    links = [link("self", page), link("first", 1)]
    if page > 1:
        links.append(link("previous", page - 1))
    if page < pages:
        links.append(link("next", page + 1))
    links.append(link("last", pages))
    return {
        "currentPage": page,
        "pageSize": size,
        "pagesTotal": pages,
        "itemsTotal": total,
        "currentPageItems": count,
        "links": links,
    }


def paged(call: Call, path: str, items: list) -> tuple[list, dict] | Reply:
    """The page of `items` the request asks for, and its pagination."""
    query = urllib.parse.parse_qs(call.query, keep_blank_values=True)
    asked = page_of(query)
    if isinstance(asked, Reply):
        return asked
    page, size = asked
    kept = [(k, v) for k, v in urllib.parse.parse_qsl(call.query) if k not in ("currentPage", "pageSize")]
    chosen = items[(page - 1) * size : page * size]
    return chosen, pagination(f"{call.base_url}{path}", kept, page, size, len(items), len(chosen))


def encodings(mp4: bool) -> list[tuple[str, str]]:
    return [("hls", q) for q in HLS_QUALITIES] + ([("mp4", MP4_QUALITY)] if mp4 else [])


class Library:
    """The library side of the "apivideo" profile (mixed into ApiVideo, whose `error` it uses)."""

    if TYPE_CHECKING:  # what the profile it is mixed into gives it

        def error(self, kind: str, message: str | None = None, **detail: object) -> Reply: ...

    def render_library(self, shelf: Shelf, video: Item) -> dict:
        vid = library_id(video)
        at = iso_offset(video.created)
        mp4 = video.fault != "no_mp4"
        embed = f"https://embed.api.video/vod/{vid}"
        if video.private:  # a fresh private token in every link, each time the video is read
            token = private_token(shelf.state.secret, vid)
            base, embed = f"{shelf.base_url}/_stream/apivideo/vod/{vid}/token/{token}", f"{embed}?token={token}"
        else:  # the delivery host (cdn.api.video's), here the simulator's: it serves the thumbnail's image
            base = f"{shelf.base_url}/_stream/apivideo/vod/{vid}"
        assets = {
            "iframe": f'<iframe src="{embed}" width="100%" height="100%"></iframe>',
            "player": embed,
            "hls": f"{base}/hls/manifest.m3u8",
            "thumbnail": f"{base}/thumbnail.jpg",
        }
        if mp4:  # a link carries what a target simulator reads back from it (the true duration: Item.media_query)
            own = f"{base}/mp4/source.mp4?{urllib.parse.urlencode(video.media_query())}"
            assets["mp4"] = own if video.private else shelf.url(video, "source.mp4")
        return {
            "videoId": vid,
            "createdAt": at,
            "title": video.title,
            "description": video.description,
            "publishedAt": at,
            "updatedAt": iso_offset(video.modified),
            "discarded": False,
            "discardedAt": None,
            "deletesAt": None,
            "tags": list(video.tags),
            "metadata": [{"key": "series", "value": str(video.index % 5)}],
            "source": {"uri": f"/videos/{vid}/source", "type": "upload"},
            "assets": assets,
            "public": not video.private,
            "panoramic": False,
            "mp4Support": mp4,
        }

    def _library_captions(self, shelf: Shelf, video: Item) -> list[dict]:
        vid = library_id(video)
        return [
            {
                "uri": f"/videos/{vid}/captions/{language}",
                "src": shelf.url(video, f"caption-{language}.vtt"),
                "srclang": language,
                "languageName": name,
                "default": n == 0,
            }
            for n, (language, _kind, name) in enumerate(video.captions)
        ]

    def _library_status(self, video: Item) -> dict:
        """VideoStatus of a library video: ready, or (the "processing" fault) still uploading or encoding."""
        qualities = encodings(video.fault != "no_mp4")
        uploaded = {"status": "uploaded", "filesize": video.size, "receivedBytes": []}
        if video.fault == "processing" and video.index % 40 < 20:  # still uploading; the others encoding
            part = {"from": 0, "to": video.size // 2 - 1, "total": video.size}
            ingest = {"status": "uploading", "filesize": video.size, "receivedBytes": [part]}
            return {"ingest": ingest, "encoding": {"playable": False, "qualities": [], "metadata": dict(MEDIA)}}
        word = "encoding" if video.fault == "processing" else "encoded"
        encoding = {
            "playable": word == "encoded",
            "qualities": [{"type": t, "quality": q, "status": word} for t, q in qualities],
            "metadata": {**MEDIA, "duration": round(video.duration)},  # whole seconds
        }
        return {"ingest": uploaded, "encoding": encoding}

    def source(self, op: str, shelf: Shelf, call: Call, body: object, now: float) -> Reply:
        if op == "src_usage":
            metric, breakdown = call.params.get("metric", ""), call.params.get("breakdown", "")
            return analytics.apivideo_buckets(shelf, metric, breakdown, call.query, library_id)
        if op == "list":
            query = urllib.parse.parse_qs(call.query, keep_blank_values=True)
            asked = page_of(query)
            if isinstance(asked, Reply):
                return asked
            page, size = asked
            order = query.get("sortOrder", ["asc"])[0]
            if query.get("sortBy", ["createdAt"])[0] not in SORT_FIELDS or order not in ("asc", "desc"):
                return self.error("invalid", "sortBy or sortOrder is not one of the allowed values")
            videos, total = shelf.videos((page - 1) * size, size, newest_first=order == "desc")
            kept = [(k, v) for k, v in urllib.parse.parse_qsl(call.query) if k not in ("currentPage", "pageSize")]
            listed = pagination(f"{call.base_url}/videos", kept, page, size, total, len(videos))
            return Reply(200, {"data": [self.render_library(shelf, v) for v in videos], "pagination": listed})
        video = shelf.video(library_index(call.params.get("id", "")))
        if video is None:
            return self.error("not_found")
        if op == "get":
            return Reply(200, self.render_library(shelf, video))
        if op == "status":
            return Reply(200, self._library_status(video))
        if op in ("src_chapters", "src_chapter"):
            held = extras.chapters(shelf, library_id(video), video)
            if op == "src_chapters":
                chosen = paged(call, f"/videos/{library_id(video)}/chapters", held)
                return chosen if isinstance(chosen, Reply) else Reply(200, {"data": chosen[0], "pagination": chosen[1]})
            one = next((c for c in held if c["language"] == call.params.get("language")), None)
            return Reply(200, one) if one else self.error("not_found")
        captions = self._library_captions(shelf, video)
        if op == "src_captions":
            chosen = paged(call, f"/videos/{library_id(video)}/captions", captions)
            return chosen if isinstance(chosen, Reply) else Reply(200, {"data": chosen[0], "pagination": chosen[1]})
        found = next((c for c in captions if c["srclang"] == call.params.get("language")), None)
        return Reply(200, found) if found else self.error("not_found")

    def serve_delivery(
        self, shelf: Shelf, method: str, path: str, query: str, range_header: str | None
    ) -> Served | None:
        """A private library video at its delivery host: `/_stream/apivideo/vod/{id}/token/{token}/...`, the
        session route, the MP4 (`mp4/source.mp4`) and the thumbnail, under apivideo_vod's rules; a public video's
        thumbnail and any video's chapters files (`_public`); anything else 404."""
        parts = [urllib.parse.unquote(p) for p in path.split("/")]
        if len(parts) in (6, 7) and parts[2:4] == ["apivideo", "vod"]:
            return self._public(shelf, method, parts[4], parts[5:])
        if len(parts) < 8 or parts[2:4] != ["apivideo", "vod"] or parts[5] != "token":
            return None
        video = shelf.video(library_index(parts[4]))
        if video is None or not video.private:
            return Served(404, TEXT, REFUSED)
        with shelf.state.lock:
            spent = shelf.state.cdn.setdefault("apivideo_spent", set())
            ttl = session_ttl(shelf.cfg.link_ttl_s)
            admitted = admit(shelf.state.secret, spent, parts[4], parts[6], parts[7:], query, ttl)
        if admitted.session is not None:
            return Served(200, {"Content-Type": "application/json"}, admitted.session)
        if admitted.rest == ["thumbnail.jpg"]:
            return _image(method, extras.thumbnail(parts[4]))
        if admitted.rest != ["mp4", "source.mp4"] or video.fault == "no_mp4":
            return Served(404, TEXT, REFUSED)
        # The file itself, as the library serves it (HEAD with its size, ranges answered 206).
        link = urllib.parse.urlsplit(shelf.url(video, "source.mp4"))
        return serve_media(
            shelf.cfg, shelf.state, method, link.path, link.query, range_header, shelf.faults, lambda v, n: True
        )

    def _public(self, shelf: Shelf, method: str, vid: str, rest: list[str]) -> Served:
        """A public video's thumbnail (`thumbnail.jpg`), or a video's chapters file (`chapters/{language}.vtt`)."""
        video = shelf.video(library_index(vid))
        if video is not None and rest == ["thumbnail.jpg"] and not video.private:
            return _image(method, extras.thumbnail(vid))
        if video is not None and len(rest) == 2 and rest[0] == "chapters" and rest[1].endswith(".vtt"):
            body = extras.chapters_vtt(video, rest[1].removesuffix(".vtt"))
            if body is not None:
                headers = {"Content-Type": "text/vtt; charset=utf-8", "Content-Length": str(len(body))}
                return Served(200, headers, b"" if method == "HEAD" else body)
        return Served(404, TEXT, REFUSED)


def _image(method: str, body: bytes) -> Served:
    headers = {"Content-Type": "image/jpeg", "Content-Length": str(len(body))}
    return Served(200, headers, b"" if method == "HEAD" else body)
