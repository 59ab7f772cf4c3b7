"""Wistia as a source (its Data API's OpenAPI file, as published in wistia/wistia-typescript-sdk
`.speakeasy/out.openapi.yaml`, version 2026.03.0, server https://api.wistia.com/modern;
docs.wistia.com "Making API requests" and "Migration Guide: API v1 to API 2026-01").

- credentials: an API token with "Read all folder and media data", `Authorization: Bearer <token>`;
  `{"token": "..."}`;
- the version: every request names the release it was written against, `X-Wistia-API-Version:
  2026-03` (API_VERSION), as Wistia's own SDK does on every request (its AddVersionHeaderHook, the
  version taken from the OpenAPI file it was generated from). The migration guide: an unversioned
  request gets "the most recent stable release", and "it is generally safer though to always set"
  the header; a date with no release gets the one before it, a deprecated one the least recent
  still supported. So an answer's shape is that of the file this module reads, not whatever
  Wistia releases next;
- list: `GET /medias?per_page=100&sort_by=created&sort_direction=1&archived=false` with cursor paging
  (`cursor[enabled]=1` on the first page, then `cursor[after]=<the last media's cursor>`), a JSON
  array of medias; a delta sweep sorts by `updated`, newest first (`sort_direction=0`, which needs
  offset paging: `page=`) and stops at the first media older than the mark. No total is given;
- archived medias: the list's `archived` filter is documented ("True will return only archived
  medias, while false will return only active medias"); what the list does without it is not. So
  the active medias are listed with `archived=false`, then the archived ones with `archived=true`
  (the cursor then starts with ARCHIVED_PASS), each named unfetchable with how to restore it: the
  API refuses to copy an archived media (405, "trying to copy archived media"), and whether its
  OriginalFile can be fetched is not documented;
- a media: `hashed_id`, `name`, `description`, `type` (Video, Audio, Image, PdfDocument, ...),
  `archived`, `created`, `updated`, `duration` (s), `status` (queued, processing, ready, failed),
  `folder.name` (the folder), `subfolder.name`, `tags[].name`, `assets[]` `{url, file_size,
  content_type, type}`: type "OriginalFile" is the upload as it came (its `url` does not expire).
  A media queued or processing goes to the page's `pending`, and `video(id)` asks for it again
  (the next sweep): Wistia lists a delta by `updated`, but nothing documents that the end of
  processing moves it. A media says nothing of privacy (no field; a password lives in the player's
  customizations, another request), so `Resolution.privacy` stays None: the stack's DefaultPlayback;
- captions: `GET /medias/{hashed_id}/captions`, `[{language (ISO 639-2), english_name, native_name,
  text (SRT), is_draft}]`; one language's file: `GET /medias/{hashed_id}/captions/{language}` with
  `Accept: text/vtt`, served only through the API (the tracks worker gets the text, not a link), and
  read up to the stack's cap on a caption (`trackfetch.MAX_TRACK_BYTES`): a longer one is refused
  with that reason. Wistia keeps no status of a caption being made: a draft (`is_draft`) is one
  nobody has published, and is not carried;
- what a viewer sees first (issue 42; wistia_extras.py): the thumbnail (`thumbnail.url` without its resizing query,
  in the media's answer), the chapters (the player's customizations, a request a media), the folder as a collection
  with the media's place in the folder's order (read once a sweep a folder). Wistia keeps no publish time of a
  media (`created` is "The date when the media was originally uploaded", the row's `created_at`): no
  `published_at`. `tracks=False` (`--no-tracks`) leaves out the requests of their own: chapters, the folders' order;
- rate limits: 600 requests a minute per account ("Making API requests", Rate limit: docs.wistia.com
  /docs/making-api-requests#rate-limit, earlier wistia.com/support/developers/data-api#rate, as
  quoted by the wystia client and by api-evangelist/wistia in 2026), past it a 429 with
  `Retry-After`; the text before said 100 a minute, answered with a 503 and `Retry-After`. The
  listing paces at 10 a second; a 429, or a 503 that says when to come back, is waited out (a
  listing) or THROTTLED (the uploader): a pause, never a failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from ..providers.facts import CredentialsError, entries, epoch_of, mapping, text
from ..providers.http import quote
from .base import HttpSource, Page, Resolution, SourceRef, Unfetchable, gone
from .rows import ChapterInfo, TrackInfo, make_row, unfetchable
from .wistia_extras import FolderOrder, chapters_of, thumbnail_link

API_VERSION = "2026-03"  # the release of the OpenAPI file this module reads (2026.03.0)
VERSION_HEADER = "X-Wistia-API-Version"
PER_PAGE = 100
ARCHIVED_PASS = "archived:"  # a cursor of the second pass, over the archived medias
PROCESSING_RETRY_S = 60.0
STILL_PROCESSING = "still processing at the source: list it again once Wistia has finished"
NO_ORIGINAL = "no original file among its assets (Wistia keeps no OriginalFile for it)"
ARCHIVED = (
    "archived in Wistia, which will not copy an archived media: restore it (the media's Restore, or"
    " PUT /medias/restore with its hashed id), then list it again"
)


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


def hold_processing(page: Page) -> Page:
    """The page's medias still processing moved to `pending`: listed again by the next sweep, not written off."""
    held = [e for e in page.entries if isinstance(e, Unfetchable) and e.reason == STILL_PROCESSING]
    if held:
        page.entries = [e for e in page.entries if not any(e is h for h in held)]
        page.pending += held
    return page


class WistiaSource(HttpSource):
    platform = "wistia"
    credential_env: ClassVar[Mapping[str, str]] = {"token": "WISTIA_TOKEN"}
    default_base_url = "https://api.wistia.com/modern"
    documented_rate_per_s = 10.0  # 600 requests a minute per account

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.folders = FolderOrder(self.call)  # each folder's order, read once a sweep

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        token = creds.get("token")
        if not isinstance(token, str) or not token:
            raise CredentialsError('the wistia credentials need "token" (an API token)')
        # The transport asks for these on every request: the release this module reads goes with each.
        return {"Authorization": f"Bearer {token}", VERSION_HEADER: API_VERSION}

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        archived = cursor is not None and cursor.startswith(ARCHIVED_PASS)
        at = cursor.removeprefix(ARCHIVED_PASS) if cursor is not None else None
        params = {"per_page": str(PER_PAGE), "archived": "true" if archived else "false"}
        if since is not None:  # newest change first: offset paging only
            number = int(at) if at and at.isdigit() else 1
            params.update(sort_by="updated", sort_direction="0", page=str(number))
        else:
            params.update(sort_by="created", sort_direction="1")
            params.update({"cursor[after]": at} if at else {"cursor[enabled]": "1"})
        medias = entries(self.read("GET", "/medias", "the media list", gone_ok=False, params=params))
        page = Page()
        older_seen = self.take(page, medias, _changed, since, tracks)
        following = None
        if len(medias) == PER_PAGE and not older_seen:
            following = str(int(at or "1") + 1) if since is not None else text(mapping(medias[-1]).get("cursor"))
        if following:
            page.cursor = ARCHIVED_PASS + following if archived else following
        elif not archived:  # the active medias are done: the archived ones next, to name them
            page.cursor = ARCHIVED_PASS
        return hold_processing(page)

    def video(self, video_id: str, tracks: bool = True) -> Page:
        """One media, as a page lists it (the next sweep asks for those a sweep saw processing)."""
        media = self.read("GET", f"/medias/{quote(video_id)}", "the media")
        page = Page()
        entry = self.entry(mapping(media), tracks) if media is not None else None
        if entry is not None:
            page.entries.append(entry)
        return hold_processing(page)

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
            thumbnail_url=thumbnail_link(media),
            chapters=self._chapters(hid) if tracks else [],
            collections=self.folders.collection(media, ordered=tracks),
        )

    def _chapters(self, hid: str) -> list[ChapterInfo]:
        """The chapters of the media's player (its customizations); none where Wistia answers otherwise than 200."""
        answer = self.call("GET", f"/medias/{quote(hid)}/customizations")
        return chapters_of(answer.body) if answer.status == 200 else []

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
            return self._caption(ref)
        media = self.read("GET", f"/medias/{quote(ref.video_id)}", "the media")
        if media is None:
            return Resolution.unfetchable(gone("Wistia"))
        media = mapping(media)
        reason = why_unfetchable(media)
        if reason == STILL_PROCESSING:  # processing again (a replaced video): it will be ready
            return Resolution.preparing(reason, PROCESSING_RETRY_S)
        original = original_file(media)
        if reason or original is None:  # no reason: there is an original (why_unfetchable)
            return Resolution.unfetchable(reason or NO_ORIGINAL)
        # No privacy: a Wistia media has no privacy field (see the module's description).
        return Resolution.ready(original["url"])

    def _caption(self, ref: SourceRef) -> Resolution:
        """One caption's text, at most the stack's cap on a caption file (HttpSource.api_caption)."""
        if ref.kind != "captions":
            return Resolution.unfetchable(f"not a Wistia caption reference: {ref}")
        return self.api_caption(f"/medias/{quote(ref.video_id)}/captions/{quote(ref.item or '')}", "Wistia")
