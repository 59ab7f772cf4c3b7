"""Cloudflare Stream as a source (developers.cloudflare.com/stream: "List videos", "Download videos",
"Captions"; cloudflare-python 5.9.0: `stream.list`, `stream.get`, `stream.downloads.create/get`,
`stream.captions.get`, `stream.captions.language.vtt.get`).

- credentials: the account id and an API token with Stream read and edit (a download is an edit),
  `Authorization: Bearer`; `{"account_id": "...", "api_token": "..."}` (the provider's format);
- list: `GET /accounts/{a}/stream?asc=true&limit=1000&include_counts=true` oldest first, the next
  page `after=` the last video's `created` (exclusive), `{result, total, range}`: `total` is what
  matches the query, so what remains after this page; a delta sweep lists `after=` the mark. Only
  creation is filtered: a video whose metadata changed later is not listed again;
- a video: `uid`, `meta.name`, `created`, `modified`, `duration`, `size`, `status.state`
  (pendingupload, downloading, queued, inprogress, ready, error, `errorReasonCode`),
  `readyToStream`, `requireSignedURLs`, `thumbnailTimestampPct` (the poster, as a fraction of the
  duration), `creator`;
- resolve: the MP4 download, made on request: `POST /accounts/{a}/stream/{uid}/downloads`, then
  `GET` it until `result.default.status` is ready (inprogress meanwhile, `percentComplete`), when
  `result.default.url` is the file. A video that requires signed URLs serves its download only with
  a signed token, which this tool does not mint: such videos are unfetchable;
- captions: `GET .../stream/{uid}/captions` `[{language (BCP 47), label, generated, status}]`, and
  one file at `GET .../stream/{uid}/captions/{language}/vtt` (the API, so the text itself);
- rate limits: 1,200 requests per 5 minutes per user, then every call blocked for 5 minutes
  (developers.cloudflare.com/fundamentals/api/reference/limits); `retry-after` on a 429.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ..providers.cloudflare import credentials
from ..providers.facts import CredentialsError, entries, epoch_of, finite_number, mapping, text
from ..providers.http import quote
from .base import HttpSource, Page, Resolution, SourceDenied, SourceRef, gone
from .rows import TrackInfo, make_row, poster_from_pct, rfc3339, unfetchable

PAGE_SIZE = 1000  # the list's maximum
STILL_PROCESSING = "still processing at the source: list it again once Stream has finished"
SIGNED = (
    "requires signed URLs: Stream serves its MP4 download only with a signed token, which this tool does not "
    "mint (turn requireSignedURLs off for the migration, or serve the file another way)"
)
PREPARE_POLL_S = 15.0


def why_unfetchable(video: Mapping) -> str | None:
    status = mapping(video.get("status"))
    state = text(status.get("state")) or ""
    if state == "error":
        code = text(status.get("errorReasonCode")) or text(status.get("errReasonCode"))
        return "failed at the source (Stream state error" + (f", {code})" if code else ")")
    if state != "ready":
        return STILL_PROCESSING
    if video.get("requireSignedURLs") is True:
        return SIGNED
    return None


class CloudflareSource(HttpSource):
    platform = "cloudflare"
    default_base_url = "https://api.cloudflare.com/client/v4"
    documented_rate_per_s = 4.0  # 1,200 per 5 minutes
    requests_per_video = 5  # the video and its downloads read, the download requested; once ready, both read again

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        return {"Authorization": f"Bearer {credentials(json.dumps(dict(creds)))[1]}"}

    def _stream(self) -> str:
        try:
            account = credentials(json.dumps(dict(self.credentials() or {})))[0]
        except CredentialsError as exc:
            raise SourceDenied(str(exc)) from None
        return f"/accounts/{quote(account)}/stream"

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        params = {"asc": "true", "limit": str(PAGE_SIZE), "include_counts": "true"}
        after = cursor if cursor is not None else (rfc3339(since) if since is not None else None)
        if after:
            params["after"] = after
        body = mapping(self.read("GET", self._stream(), "the video list", gone_ok=False, params=params))
        videos = entries(body.get("result"))
        page = Page()
        self.take(page, videos, lambda video: epoch_of(video.get("created")), None, tracks)
        total = body.get("total")
        if isinstance(total, int) and not isinstance(total, bool):
            page.remaining = max(0, total - len(videos))
        last = text(mapping(videos[-1]).get("created")) if videos else None
        if len(videos) == PAGE_SIZE and last and last != cursor:
            page.cursor = last
        return page

    def entry(self, video: Mapping, tracks: bool):
        uid = text(video.get("uid"))
        if not uid or not uid.isalnum():
            return None
        ref = self.ref(uid)
        meta = mapping(video.get("meta"))
        reason = why_unfetchable(video)
        if reason:
            return unfetchable(self.platform, uid, ref, reason, meta.get("name"))
        extra = {"creator": video["creator"]} if isinstance(video.get("creator"), str) else {}
        return make_row(
            self.platform,
            uid,
            ref,
            title=meta.get("name"),
            created_at=video.get("created"),
            duration_s=video.get("duration"),
            size_bytes=video.get("size"),
            privacy="public",  # a video that requires signed URLs is unfetchable, above
            poster_time_s=poster_from_pct(video.get("thumbnailTimestampPct"), video.get("duration")),
            tracks=self._captions(uid) if tracks else [],
            metadata=extra,
        )

    def _captions(self, uid: str) -> list[TrackInfo]:
        answer = self.call("GET", f"{self._stream()}/{quote(uid)}/captions")
        if answer.status != 200:
            return []
        found = []
        for caption in entries(mapping(answer.body).get("result")):
            caption = mapping(caption)
            language = text(caption.get("language"))
            if not language or caption.get("status") not in (None, "ready"):
                continue
            found.append(
                TrackInfo(self.ref(uid, "captions", language), language, "captions", caption.get("label"), format="vtt")
            )
        return found

    def resolve(self, ref: SourceRef) -> Resolution:
        video_path = f"{self._stream()}/{quote(ref.video_id)}"
        if ref.is_track:
            if ref.kind != "captions":
                return Resolution.unfetchable(f"not a Stream caption reference: {ref}")
            answer = self.call(
                "GET", f"{video_path}/captions/{quote(ref.item or '')}/vtt", headers={"Accept": "text/vtt"}
            )
            if answer.status == 404:
                return Resolution.unfetchable(gone("Stream"))
            if answer.status != 200 or answer.truncated:
                raise self.failure(answer, "the captions")
            return Resolution.ready_text(answer.text, "vtt")
        video = self.read("GET", video_path, "the video")
        if video is None:
            return Resolution.unfetchable(gone("Stream"))
        reason = why_unfetchable(mapping(mapping(video).get("result")))
        if reason:
            return Resolution.unfetchable(reason)
        answer = self.call("GET", f"{video_path}/downloads")
        download = mapping(mapping(answer.body).get("result")).get("default") if answer.status == 200 else None
        if not isinstance(download, dict):
            answer = self.call("POST", f"{video_path}/downloads")
            if answer.status not in (200, 201):
                raise self.failure(answer, "the download request")
            download = mapping(mapping(answer.body).get("result")).get("default")
        return self._download(mapping(download))

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
