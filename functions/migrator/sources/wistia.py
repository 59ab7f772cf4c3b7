"""Wistia as a source (its Data API's OpenAPI file, as published in wistia/wistia-typescript-sdk
`.speakeasy/out.openapi.yaml`, server https://api.wistia.com/modern; docs.wistia.com "Making API requests").

- credentials: an API token with "Read all folder and media data", `Authorization: Bearer <token>`;
  `{"token": "..."}`;
- list: `GET /medias?per_page=100&sort_by=created&sort_direction=1` with cursor paging
  (`cursor[enabled]=1` on the first page, then `cursor[after]=<the last media's cursor>`), a JSON
  array of medias; a delta sweep sorts by `updated`, newest first (`sort_direction=0`, which needs
  offset paging: `page=`) and stops at the first media older than the mark. No total is given;
- a media: `hashed_id`, `name`, `description`, `type` (Video, Audio, Image, PdfDocument, ...),
  `archived`, `created`, `updated`, `duration` (s), `status` (queued, processing, ready, failed),
  `folder.name` (the project), `subfolder.name`, `tags[].name`, `assets[]` `{url, file_size,
  content_type, type}`: type "OriginalFile" is the upload as it came (its `url` does not expire);
- captions: `GET /medias/{hashed_id}/captions`, `[{language (ISO 639-2), english_name, native_name,
  text (SRT), is_draft}]`; one language's file: `GET /medias/{hashed_id}/captions/{language}` with
  `Accept: text/vtt`, served only through the API (the tracks worker gets the text, not a link);
- rate limits: 600 requests a minute per account (docs.wistia.com, "Rate limit"), answered past it
  with a 503 and `Retry-After` in the older text and a 429 in the newer; both are waited out.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..providers.facts import CredentialsError, entries, epoch_of, mapping, text
from ..providers.http import quote
from .base import HttpSource, Page, Resolution, SourceRef, gone
from .rows import TrackInfo, make_row, unfetchable

PER_PAGE = 100
STILL_PROCESSING = "still processing at the source: list it again once Wistia has finished"
NO_ORIGINAL = "no original file among its assets (Wistia keeps no OriginalFile for it)"
ARCHIVED = "archived at the source: restore it in Wistia, then list it again"


def original_file(media: Mapping) -> Mapping | None:
    for asset in entries(media.get("assets")):
        if isinstance(asset, dict) and asset.get("type") == "OriginalFile" and text(asset.get("url")):
            return asset
    return None


def _changed(media: Mapping) -> float | None:
    return epoch_of(media.get("updated")) or epoch_of(media.get("created"))


def why_unfetchable(media: Mapping) -> str | None:
    kind = text(media.get("type")) or "unknown"
    if kind != "Video":
        return f"not a video (Wistia media type {kind})"
    if media.get("archived") is True:
        return ARCHIVED
    status = text(media.get("status")) or ""
    if status in ("queued", "processing"):
        return STILL_PROCESSING
    if status == "failed":
        return "failed processing at the source (Wistia status failed)"
    if original_file(media) is None:
        return NO_ORIGINAL
    return None


class WistiaSource(HttpSource):
    platform = "wistia"
    default_base_url = "https://api.wistia.com/modern"
    documented_rate_per_s = 10.0  # 600 requests a minute

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        token = creds.get("token")
        if not isinstance(token, str) or not token:
            raise CredentialsError('the wistia credentials need "token" (an API token)')
        return {"Authorization": f"Bearer {token}"}

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        params = {"per_page": str(PER_PAGE)}
        if since is not None:  # newest change first: offset paging only
            number = int(cursor) if cursor and cursor.isdigit() else 1
            params.update(sort_by="updated", sort_direction="0", page=str(number))
        else:
            params.update(sort_by="created", sort_direction="1")
            params.update({"cursor[after]": cursor} if cursor else {"cursor[enabled]": "1"})
        medias = entries(self.read("GET", "/medias", "the media list", gone_ok=False, params=params))
        page = Page()
        older_seen = self.take(page, medias, _changed, since, tracks)
        if len(medias) == PER_PAGE and not older_seen:
            page.cursor = str(int(cursor or "1") + 1) if since is not None else text(mapping(medias[-1]).get("cursor"))
        return page

    def entry(self, media: Mapping, tracks: bool):
        hid = text(media.get("hashed_id"))
        if not hid or not hid.isalnum():
            return None
        ref = self.ref(hid)
        reason = why_unfetchable(media)
        if reason:
            return unfetchable(self.platform, hid, ref, reason, media.get("name"))
        folder = text(mapping(media.get("folder")).get("name")) or text(mapping(media.get("project")).get("name"))
        subfolder = text(mapping(media.get("subfolder")).get("name"))
        return make_row(
            self.platform,
            hid,
            ref,
            title=media.get("name"),
            description=media.get("description"),
            tags=[mapping(t).get("name") for t in entries(media.get("tags"))],
            created_at=media.get("created"),
            duration_s=media.get("duration"),
            size_bytes=mapping(original_file(media)).get("file_size"),
            folder=f"{folder}/{subfolder}" if folder and subfolder else folder,
            tracks=self._captions(hid) if tracks else [],
            metadata={"wistia_id": media.get("id")} if isinstance(media.get("id"), int) else None,
        )

    def _captions(self, hid: str) -> list[TrackInfo]:
        answer = self.call("GET", f"/medias/{quote(hid)}/captions")
        if answer.status != 200:
            return []
        found = []
        for caption in entries(answer.body):
            caption = mapping(caption)
            language = text(caption.get("language"))
            if not language or caption.get("is_draft") is True:
                continue
            name = caption.get("english_name") or caption.get("native_name")
            found.append(TrackInfo(self.ref(hid, "captions", language), language, "captions", name, format="vtt"))
        return found

    def resolve(self, ref: SourceRef) -> Resolution:
        if ref.is_track:
            if ref.kind != "captions":
                return Resolution.unfetchable(f"not a Wistia caption reference: {ref}")
            path = f"/medias/{quote(ref.video_id)}/captions/{quote(ref.item or '')}"
            answer = self.call("GET", path, headers={"Accept": "text/vtt"}, max_body_bytes=4 * 1024 * 1024)
            if answer.status == 404:
                return Resolution.unfetchable(gone("Wistia"))
            if answer.status != 200 or answer.truncated:
                raise self.failure(answer, "the captions")
            return Resolution.ready_text(answer.text, "vtt")
        media = self.read("GET", f"/medias/{quote(ref.video_id)}", "the media")
        if media is None:
            return Resolution.unfetchable(gone("Wistia"))
        media = mapping(media)
        reason = why_unfetchable(media)
        if reason:
            return Resolution.unfetchable(reason)
        return Resolution.ready(original_file(media)["url"])
