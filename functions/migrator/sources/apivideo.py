"""api.video as a source (its OpenAPI file, apivideo/api.video-api-client-generator `oas_apivideo.yaml`;
docs.api.video "Video download", "Private videos"; api-video 1.4.7's `VideosApi.list`, `get` and
`CaptionsApi.list`).

- credentials: the API key, HTTP Basic with the key as user name; `{"api_key": "..."}` (the
  provider's format);
- list: `GET /videos?currentPage=&pageSize=100&sortBy=createdAt&sortOrder=asc`, `{data,
  pagination: {currentPage, pagesTotal, itemsTotal}}`; a delta sweep sorts by `updatedAt`, newest
  first, and stops at the first video older than the mark;
- a video: `videoId`, `title`, `description`, `tags`, `metadata [{key, value}]`, `createdAt`,
  `updatedAt`, `public` (false: a private video), `mp4Support`, `assets.mp4`: the MP4 exists only
  with mp4Support. A private video's asset links carry a private token that is good for one
  session, so the link is read afresh, at the create, from `GET /videos/{id}`. The listing gives no
  duration (it lives in `/videos/{id}/status`): rows carry none, and the drift canary compares
  nothing for them;
- captions: `GET /videos/{id}/captions` `{data: [{srclang, languageName, src}]}` (WebVTT), and one
  language at `GET /videos/{id}/captions/{language}`;
- rate limits: per minute (production: 500 reads), `X-RateLimit-Limit` / `-Remaining` /
  `-Retry-After`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ..providers.apivideo import basic_auth
from ..providers.facts import entries, epoch_of, mapping, text
from ..providers.http import quote
from .base import HttpSource, Page, Resolution, SourceRef, gone
from .rows import TrackInfo, make_row, unfetchable

PAGE_SIZE = 100
NO_MP4 = (
    'no MP4: api.video makes one only with mp4Support (turn it on with PATCH /videos/{id} {"mp4Support": true}, '
    "wait for it to encode, then list again)"
)


def _changed(video: Mapping) -> float | None:
    return epoch_of(video.get("updatedAt")) or epoch_of(video.get("createdAt"))


def why_unfetchable(video: Mapping) -> str | None:
    if video.get("mp4Support") is False or not text(mapping(video.get("assets")).get("mp4")):
        return NO_MP4
    return None


class ApiVideoSource(HttpSource):
    platform = "apivideo"
    default_base_url = "https://ws.api.video"
    documented_rate_per_s = 500 / 60  # reads, production
    rate_window_s = 60.0

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        return basic_auth(json.dumps(dict(creds)))

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        number = int(cursor) if cursor and cursor.isdigit() else 1
        order = ("updatedAt", "desc") if since is not None else ("createdAt", "asc")
        params = {"currentPage": str(number), "pageSize": str(PAGE_SIZE), "sortBy": order[0], "sortOrder": order[1]}
        body = mapping(self.read("GET", "/videos", "the video list", gone_ok=False, params=params))
        page = Page()
        older_seen = self.take(page, body.get("data"), _changed, since, tracks)
        pagination = mapping(body.get("pagination"))
        pages, items = pagination.get("pagesTotal"), pagination.get("itemsTotal")
        if isinstance(items, int) and since is None:
            page.remaining = max(0, items - number * PAGE_SIZE)
        if isinstance(pages, int) and number < pages and not older_seen:
            page.cursor = str(number + 1)
        return page

    def entry(self, video: Mapping, tracks: bool):
        vid = text(video.get("videoId"))
        if not vid or not vid.isalnum():
            return None
        ref = self.ref(vid)
        reason = why_unfetchable(video)
        if reason:
            return unfetchable(self.platform, vid, ref, reason, video.get("title"))
        pairs = {
            m["key"]: m["value"]
            for m in entries(video.get("metadata"))
            if isinstance(m, dict) and isinstance(m.get("key"), str) and isinstance(m.get("value"), str)
        }
        return make_row(
            self.platform,
            vid,
            ref,
            title=video.get("title"),
            description=video.get("description"),
            tags=entries(video.get("tags")),
            created_at=video.get("createdAt"),
            privacy="private" if video.get("public") is False else "public",
            tracks=self._captions(vid) if tracks else [],
            metadata={"apivideo_metadata": pairs} if pairs else None,
        )

    def _captions(self, vid: str) -> list[TrackInfo]:
        answer = self.call("GET", f"/videos/{quote(vid)}/captions")
        if answer.status != 200:
            return []
        found = []
        for caption in entries(mapping(answer.body).get("data")):
            caption = mapping(caption)
            language = text(caption.get("srclang"))
            if language:
                name = caption.get("languageName")
                found.append(TrackInfo(self.ref(vid, "captions", language), language, "captions", name, format="vtt"))
        return found

    def resolve(self, ref: SourceRef) -> Resolution:
        if ref.is_track:
            if ref.kind != "captions":
                return Resolution.unfetchable(f"not an api.video caption reference: {ref}")
            caption = self.read("GET", f"/videos/{quote(ref.video_id)}/captions/{quote(ref.item or '')}", "the caption")
            if caption is None:
                return Resolution.unfetchable(gone("api.video"))
            src = text(mapping(caption).get("src"))
            return Resolution.ready(src) if src else Resolution.unfetchable("the caption has no file link")
        video = self.read("GET", f"/videos/{quote(ref.video_id)}", "the video")
        if video is None:
            return Resolution.unfetchable(gone("api.video"))
        video = mapping(video)
        reason = why_unfetchable(video)
        if reason:
            return Resolution.unfetchable(reason)
        return Resolution.ready(mapping(video.get("assets"))["mp4"])
