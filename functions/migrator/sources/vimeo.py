"""Vimeo as a source (developer.vimeo.com/api/reference, its OpenAPI file vimeo.json 3.4; PyVimeo 1.1.2
sends the same requests).

- credentials: a personal access token, `Authorization: bearer <token>`, with the `private` and
  `video_files` scopes; `{"token": "..."}`. File links are given only to such a token on a plan that
  allows downloads (Standard or higher); a token without them sees no `download` field at all;
- list: `GET /me/videos?page=&per_page=100&sort=date&direction=asc` (per_page "up to a maximum of
  100"), a collection `{total, page, per_page, paging: {next}, data}`; a delta sweep sorts by
  `modified_time`, newest first, and stops at the first video older than the mark. `fields` trims
  each video to what is carried (the API's JSON filter);
- a video: `uri` "/videos/{id}", `name`, `description`, `tags[].name`, `created_time`,
  `modified_time` (ISO 8601), `duration` (s), `privacy.view` (anybody, unlisted, disable, nobody,
  contacts, users, password), `parent_folder.name`, `status` / `transcode.status`, `type`, and
  `download[]`: `{quality, rendition, link, expires, size, width, height}`, quality "source" being
  the file as it was uploaded; the links expire after 24 hours (Vimeo help centre, "Download
  links");
- text tracks: `GET /videos/{id}/texttracks`, `{data: [{uri, active, type, language, link,
  link_expires_time, name}]}`, type captions or subtitles; how many a video has is in
  `metadata.connections.texttracks.total`, so they are asked for only where there are some;
- rate limits: `X-RateLimit-Limit` / `-Remaining` / `-Reset`, the reset an ISO 8601 time
  ("2016-08-30T11:41:40+00:00"), per plan, no published number; a 429 past them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from urllib.parse import parse_qs, urlsplit

from ..pacing import RateSignal
from ..providers.facts import CredentialsError, entries, epoch_of, mapping, text
from ..providers.http import quote
from ..providers.ratelimit import read_rate_headers
from .base import HttpSource, Page, Resolution, SourceRef, gone
from .rows import TrackInfo, make_row, unfetchable

PER_PAGE = 100
VIDEO_FIELDS = (
    "uri,name,description,tags.name,created_time,modified_time,duration,privacy.view,parent_folder.name,"
    "status,transcode.status,type,download,metadata.connections.texttracks.total"
)
ACCEPT = "application/vnd.vimeo.*+json;version=3.4"  # the version pinned, as Vimeo asks
PRIVACY = {
    "anybody": "public",
    "unlisted": "unlisted",
    "disable": "unlisted",  # hidden from vimeo.com, playable where embedded
    "nobody": "private",
    "contacts": "private",
    "users": "private",
    "password": "private",
}
WORKING = frozenset({"uploading", "transcode_starting", "transcoding"})
NO_FILES = (
    "no file access: Vimeo gives download links only to a token with the video_files scope, on a plan "
    "that allows downloads (Standard or higher)"
)
STILL_PROCESSING = "still processing at the source: list it again once Vimeo has finished"


def video_id_of(video: Mapping) -> str | None:
    """ "/videos/123" -> "123"."""
    uri = text(video.get("uri")) or ""
    tail = uri.rstrip("/").rpartition("/")[2]
    return tail if tail.isdigit() else None


def source_file(video: Mapping) -> Mapping | None:
    """The file to migrate: the original as uploaded (quality "source"), else the largest rendition."""
    files = [f for f in entries(video.get("download")) if isinstance(f, dict) and text(f.get("link"))]
    for f in files:
        if f.get("quality") == "source" or f.get("rendition") == "source":
            return f
    sized = [f for f in files if isinstance(f.get("size"), int | float) and not isinstance(f.get("size"), bool)]
    return max(sized, key=lambda f: f["size"]) if sized else (files[0] if files else None)


def _changed(video: Mapping) -> float | None:
    return epoch_of(video.get("modified_time")) or epoch_of(video.get("created_time"))


def why_unfetchable(video: Mapping) -> str | None:
    """The reason this video can never be fetched now, in the words the inventory and the uploader share."""
    status = text(video.get("status")) or ""
    transcode = text(mapping(video.get("transcode")).get("status")) or ""
    if status in WORKING or transcode == "in_progress":
        return STILL_PROCESSING
    if status.endswith("_error") or transcode == "error" or status in ("quota_exceeded", "total_cap_exceeded"):
        return f"failed at the source (Vimeo status {status or transcode})"
    if status == "unavailable":
        return "unavailable at the source (Vimeo status unavailable)"
    if source_file(video) is None:
        return NO_FILES
    return None


class VimeoSource(HttpSource):
    platform = "vimeo"
    default_base_url = "https://api.vimeo.com"
    # Vimeo publishes no number (limits vary by plan and are told in the headers); this pace keeps a
    # listing well inside what its headers have shown, and the headers slow it further when they say so.
    documented_rate_per_s = None

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        token = creds.get("token")
        if not isinstance(token, str) or not token:
            raise CredentialsError('the vimeo credentials need "token" (a personal access token)')
        return {"Authorization": f"bearer {token}", "Accept": ACCEPT}

    def rate_signal(self, headers: Mapping[str, str]) -> RateSignal:
        signal = read_rate_headers(headers, self.clock(), self.rate_window_s)
        lowered = {str(k).lower(): v for k, v in headers.items()}
        reset = epoch_of(lowered.get("x-ratelimit-reset"))  # an ISO 8601 time, unlike most
        if reset is not None and reset > 1_000_000_000:
            signal = replace(signal, reset_after=max(0.0, reset - self.clock()))
        # The limit counts over a window Vimeo does not state: it is not read as a rate.
        return replace(signal, limit_per_s=None)

    # --- listing ---------------------------------------------------------------------------------

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        number = int(cursor) if cursor and cursor.isdigit() else 1
        params = {"page": str(number), "per_page": str(PER_PAGE), "fields": VIDEO_FIELDS}
        params.update(
            {"sort": "modified_time", "direction": "desc"}
            if since is not None
            else {"sort": "date", "direction": "asc"}
        )
        body = mapping(self.read("GET", "/me/videos", "the video list", gone_ok=False, params=params))
        page = Page()
        older_seen = self.take(page, body.get("data"), _changed, since, tracks)
        total = body.get("total")
        if isinstance(total, int) and not isinstance(total, bool) and since is None:
            page.remaining = max(0, total - number * PER_PAGE)
        following = text(mapping(body.get("paging")).get("next"))
        if following and not older_seen:
            page.cursor = parse_qs(urlsplit(following).query).get("page", [str(number + 1)])[0]
        return page

    def entry(self, video: Mapping, tracks: bool):
        vid = video_id_of(video)
        if vid is None:
            return None  # not a video we could ever name again
        ref = self.ref(vid)
        reason = why_unfetchable(video)
        if reason:
            return unfetchable(self.platform, vid, ref, reason, video.get("name"))
        chosen = source_file(video) or {}
        count = mapping(mapping(mapping(video.get("metadata")).get("connections")).get("texttracks")).get("total")
        found = self._tracks(vid) if tracks and isinstance(count, int) and count > 0 else []
        return make_row(
            self.platform,
            vid,
            ref,
            title=video.get("name"),
            description=video.get("description"),
            tags=[mapping(t).get("name") for t in entries(video.get("tags"))],
            created_at=video.get("created_time"),
            duration_s=video.get("duration"),
            size_bytes=chosen.get("size"),
            privacy=PRIVACY.get(text(mapping(video.get("privacy")).get("view")) or ""),
            folder=mapping(video.get("parent_folder")).get("name"),
            tracks=found,
            metadata={"source_file": text(chosen.get("quality")) or text(chosen.get("rendition")) or "unknown"},
        )

    def _tracks(self, vid: str) -> list[TrackInfo]:
        answer = self.call("GET", f"/videos/{quote(vid)}/texttracks")
        if answer.status != 200:
            return []  # the video's tracks are lost, the video is not
        found = []
        for track in entries(mapping(answer.body).get("data")):
            track = mapping(track)
            tid = (text(track.get("uri")) or "").rstrip("/").rpartition("/")[2]
            if not tid or track.get("active") is False or track.get("type") not in ("captions", "subtitles"):
                continue
            found.append(
                TrackInfo(self.ref(vid, "texttracks", tid), track.get("language"), track["type"], track.get("name"))
            )
        return found

    # --- resolving ---------------------------------------------------------------------------------

    def resolve(self, ref: SourceRef) -> Resolution:
        if ref.is_track:
            return self._resolve_track(ref)
        video = self.read("GET", f"/videos/{quote(ref.video_id)}", "the video", params={"fields": VIDEO_FIELDS})
        if video is None:
            return Resolution.unfetchable(gone("Vimeo"))
        video = mapping(video)
        reason = why_unfetchable(video)
        if reason:
            return Resolution.unfetchable(reason)
        chosen = source_file(video) or {}
        return Resolution.ready(chosen["link"], epoch_of(chosen.get("expires")))

    def _resolve_track(self, ref: SourceRef) -> Resolution:
        if ref.kind != "texttracks":
            return Resolution.unfetchable(f"not a Vimeo track reference: {ref}")
        track = self.read("GET", f"/videos/{quote(ref.video_id)}/texttracks/{quote(ref.item or '')}", "the text track")
        if track is None:
            return Resolution.unfetchable(gone("Vimeo"))
        track = mapping(track)
        link = text(track.get("link"))
        if not link:
            return Resolution.unfetchable("the text track has no file link")
        return Resolution.ready(link, epoch_of(track.get("link_expires_time")))
