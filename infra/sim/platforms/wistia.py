"""The "wistia" profile: Wistia's Data API as a source of media (its OpenAPI file in
wistia/wistia-typescript-sdk `.speakeasy/out.openapi.yaml`, version 2026.03.0, server
https://api.wistia.com/modern; docs.wistia.com "Making API requests" and "Migration Guide: API v1 to
API 2026-01").

Bearer API token; GET /modern/medias (per_page, sort_by created|updated|name|position,
sort_direction 0 desc | 1 asc, page; or cursor paging: cursor[enabled]=1, cursor[after],
cursor[before], each media then carrying its `cursor`; archived=true|false) -> a JSON array; GET
/modern/medias/{hashed_id}; GET /modern/medias/{hashed_id}/captions -> [{language (ISO 639-2),
english_name, native_name, text (SRT), is_draft, id}]; GET .../captions/{language} as JSON, or
as the file itself with `Accept: text/vtt` (or a .vtt / .srt ending); GET /modern/medias/{hashed_id}/customizations
and a folder's medias in their order (`folder_id`, `sort_by=position`), its thumbnail's image: wistia_extras.py. A
media's `assets[]` hold its OriginalFile, whose `url` points at this simulator's /_media. Each answer notes in the
request log the API release it was served as (`api_version`) and the one asked for
(`api_version_asked`, None when unversioned). Wistia is no target here: creates are not routed.

What each behaviour follows:
- the version (migration guide, "Modern API with Header-Based Versioning"): `X-Wistia-Api-Version:
  YYYY-MM` names a stable release; a date with no release of its own gets the release before it; a
  deprecated one (before the least recent still supported) gets the least recent still supported;
  an unversioned request gets the most recent stable release. Releases here: RELEASES (2026-01, the
  guide's; 2026-03, the OpenAPI file's). A value that is no YYYY-MM is answered 400: the guide says
  nothing of it, that is our choice, so a mistyped header shows in tests;
- archived medias (the list's `archived` parameter: "True will return only archived medias, while
  false will return only active medias"): filtered as said; without the parameter every media is
  listed, archived ones with `archived: true` (undocumented: our choice);
- processing (a media's `status`: queued, processing, ready, failed; `progress` 0..1): the videos whose
  fault is "processing" show status processing, no assets, until `library_processing_done` (then
  ready, with their files). `library_captions_processing` changes nothing: Wistia keeps no status of a
  caption being made (a caption is listed with `is_draft` only, a person's unpublished edit);
- rate limits ("Making API requests", Rate limit, docs.wistia.com/docs/making-api-requests#rate-limit):
  600 requests a minute per account (the profile's `limits`: a read bucket of 10/s), past it a 429 with
  `Retry-After` (seconds); the OpenAPI file's one 429 answers text/plain "Rate limit exceeded". The text
  before said 100 a minute answered with a 503 and `Retry-After`: `unavailable_rate` with
  `unavailable_retry_after_fraction` 1 answers so. No rate-limit headers otherwise (none documented).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import secrets
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import ClassVar

from ..bucket import RateState
from ..config import SimConfig
from ..library import Item, Served, Shelf
from ..profile import KIND_STATUS, Call, MadeUp, ParamError, Profile, Reply, int_param, iso_offset, same
from . import analytics
from . import wistia_extras as extras

# Unfetchable in turn: still processing, failed processing, not a video, archived, no original kept.
FAULTS = ("processing", "failed", "not_video", "archived", "no_original")
ISO639_2 = {"en": ("eng", "English", "English"), "fr": ("fre", "French", "Français")}
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
VERSION_HEADER = "X-Wistia-Api-Version"  # header names are case-insensitive; Wistia's SDK writes X-Wistia-API-Version
RELEASES = ("2026-01", "2026-03")  # stable releases, oldest first; none deprecated yet
_YEAR_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


def hashed_id(video: Item) -> str:
    n, chars = video.index, []
    for _ in range(9):
        n, r = divmod(n, 36)
        chars.append(_DIGITS[r])
    return "w" + "".join(reversed(chars))


def index_of(hid: str) -> int:
    if len(hid) != 10 or not hid.startswith("w"):
        return -1
    try:
        return int(hid[1:], 36)
    except ValueError:
        return -1


def _cursor(index: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"i": index}).encode()).decode().rstrip("=")


def _uncursor(text: str) -> int:
    try:
        value = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))["i"]
    except (binascii.Error, ValueError, TypeError, KeyError):
        raise ParamError("cursor", "cursor is not valid") from None
    if not isinstance(value, int):
        raise ParamError("cursor", "cursor is not valid")
    return value


def _srt(video: Item, language: str) -> str:
    return f"1\n00:00:00,000 --> 00:00:02,000\nVideo {video.index}, {language}\n"


def served_release(asked: str | None) -> str | None:
    """The release an `X-Wistia-Api-Version` value is served as (migration guide), None when it is no YYYY-MM."""
    if asked is None:
        return RELEASES[-1]  # "the most recent stable release"
    if not _YEAR_MONTH.match(asked):
        return None
    earlier = [r for r in RELEASES if r <= asked]  # "the version that comes before that date"
    return earlier[-1] if earlier else RELEASES[0]  # deprecated: "the least recent stable release"


def _archived_filter(query: dict) -> bool | None:
    """The list's `archived` parameter (a boolean), None when absent."""
    value = query.get("archived", [None])[0]
    if value is None:
        return None
    if value.lower() not in ("true", "false", "1", "0"):
        raise ParamError("archived", "archived must be true or false")
    return value.lower() in ("true", "1")


class Wistia(Profile):
    name = "wistia"
    # "a rate limit of 600 requests per minute" (https://docs.wistia.com/docs/making-api-requests): 10 reads a
    # second; the burst of 20 is our choice.
    limits: ClassVar[Mapping[str, float | int]] = {"read_rate": 10.0, "read_burst": 20}
    api_path = "/modern"  # the source's base URL, https://api.wistia.com/modern
    faults = FAULTS
    routes = (
        ("/modern/medias", {"GET": "list"}),
        ("/modern/medias/{id}", {"GET": "get"}),
        ("/modern/medias/{id}/captions", {"GET": "src_captions"}),
        ("/modern/medias/{id}/captions/{language}", {"GET": "src_caption"}),
        ("/modern/medias/{id}/customizations", {"GET": "src_customizations"}),
        ("/modern/stats/medias/{id}", {"GET": "src_usage"}),  # the Stats API (analytics.py)
    )

    def made_up_source(self) -> MadeUp:
        """An API token."""
        token = secrets.token_urlsafe(24)
        return MadeUp({"token": token}, {"token": token})

    def authorize(self, cfg: SimConfig, call: Call) -> Reply | None:
        if cfg.token is None or same(call.headers.get("Authorization"), f"Bearer {cfg.token}"):
            return None
        return self.error("unauthorized")

    def error(self, kind: str, message: str | None = None, **detail: object) -> Reply:
        if kind == "throttled":  # the OpenAPI file's 429: text/plain "Rate limit exceeded"
            return Reply(429, raw=b"Rate limit exceeded", headers={"Content-Type": "text/plain"})
        texts = {"unauthorized": "Invalid credentials.", "not_found": "Not Found"}
        return Reply(KIND_STATUS[kind], {"error": texts.get(kind, message or kind)})

    def new_id(self) -> str:  # pragma: no cover - Wistia is no target
        raise NotImplementedError

    def render_library(self, shelf: Shelf, video: Item, cursor: bool = False) -> dict:
        fault = video.fault
        out = {
            "id": 1000 + video.index,
            "name": video.title,
            "type": "Image" if fault == "not_video" else "Video",
            "archived": fault == "archived",
            "created": iso_offset(video.created),
            "updated": iso_offset(video.modified),
            "duration": video.duration,
            "hashed_id": hashed_id(video),
            "description": video.description,
            "progress": 0.5 if fault == "processing" else 1.0,
            "status": {"processing": "processing", "failed": "failed"}.get(fault or "", "ready"),
            "thumbnail": extras.thumbnail(shelf, video),
            "folder": extras.folder(video),
            "subfolder": None,
            "tags": [{"name": t} for t in video.tags],
            "assets": [] if fault in ("processing", "failed") else self._assets(shelf, video),
        }
        if cursor:
            out["cursor"] = _cursor(video.index)
        return out

    def _assets(self, shelf: Shelf, video: Item) -> list[dict]:
        found = [
            {
                "url": shelf.url(video, "iphone.mp4"),
                "width": 640,
                "height": 360,
                "file_size": video.size // 5,
                "content_type": "video/mp4",
                "type": "IphoneVideoFile",
            }
        ]
        if video.fault != "no_original":
            original = {"url": shelf.url(video, "original.bin"), "width": 1920, "height": 1080}
            found.insert(0, {**original, "file_size": video.size, "content_type": "video/mp4", "type": "OriginalFile"})
        return found

    def _captions(self, video: Item) -> list[dict]:
        found = []
        for language, _kind, _name in video.captions:
            code, english, native = ISO639_2[language]
            found.append(
                {
                    "english_name": english,
                    "native_name": native,
                    "language": code,
                    "text": _srt(video, language),
                    "is_draft": False,
                    "id": f"c{video.index}{code}",
                }
            )
        return found

    def source(self, op: str, shelf: Shelf, call: Call, body: object, now: float) -> Reply:
        asked = call.headers.get(VERSION_HEADER)
        served = served_release(asked)
        if served is None:
            reply = Reply(400, {"error": f"{VERSION_HEADER} must be a release date, YYYY-MM"})
        else:
            reply = self._answer(op, shelf, call)
        reply.log = {"api_version": served, "api_version_asked": asked}
        return reply

    def _answer(self, op: str, shelf: Shelf, call: Call) -> Reply:
        if op == "list":
            return self._list(shelf, call)
        video = shelf.video(index_of(call.params.get("id", "")))
        if op == "src_usage":
            return analytics.wistia_stats(video)
        if video is None:
            return self.error("not_found")
        if op == "get":
            return Reply(200, self.render_library(shelf, video))
        if op == "src_customizations":
            return Reply(200, extras.customizations(video))
        captions = self._captions(video)
        if op == "src_captions":
            return Reply(200, captions)
        language, _, ending = call.params.get("language", "").partition(".")
        found = next((c for c in captions if c["language"] == language), None)
        if found is None:
            return self.error("not_found")
        accept = call.headers.get("Accept") or ""
        if ending == "vtt" or (not ending and "text/vtt" in accept):
            two = next(k for k, v in ISO639_2.items() if v[0] == language)
            vtt = f"WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nVideo {video.index}, {two}\n"
            return Reply(200, raw=vtt.encode(), headers={"Content-Type": "text/vtt"})
        if ending == "srt":
            return Reply(200, raw=found["text"].encode(), headers={"Content-Type": "text/plain"})
        return Reply(200, found)

    def _list(self, shelf: Shelf, call: Call) -> Reply:
        query = urllib.parse.parse_qs(call.query, keep_blank_values=True)
        try:
            per_page = int_param(query, "per_page", 100, 1, 100)
            page = int_param(query, "page", 1, 1, None)
            after = query.get("cursor[after]", [None])[0]
            before = query.get("cursor[before]", [None])[0]
            cursor_on = after is not None or before is not None or query.get("cursor[enabled]", ["0"])[0] == "1"
            start_after = _uncursor(after) if after else None
            start_before = _uncursor(before) if before else None
            archived = _archived_filter(query)
        except ParamError as exc:
            return Reply(400, {"error": str(exc)})
        sort_by = query.get("sort_by", ["created"])[0]
        if sort_by not in ("name", "created", "updated", "position", "id"):
            return Reply(400, {"error": "sort_by must be one of name, created, updated, position"})
        if cursor_on and sort_by not in ("id", "created"):
            return Reply(400, {"error": "cursor pagination supports sort_by id and created only"})
        newest_first = query.get("sort_direction", ["1"])[0] == "0"
        folder = query.get("folder_id", [None])[0]
        if folder is not None and not cursor_on:  # a folder's medias, in the order asked (wistia_extras.py)
            found = extras.folder_videos(shelf, folder, sort_by, newest_first)
            kept = [v for v in found if archived is None or (v.fault == "archived") == archived]
            chosen = kept[(page - 1) * per_page : page * per_page]
            return Reply(200, [self.render_library(shelf, v) for v in chosen])
        if archived is not None:
            skip = 0 if cursor_on else (page - 1) * per_page
            videos = self._filtered(shelf, archived, newest_first, start_after, start_before, skip, per_page)
            return Reply(200, [self.render_library(shelf, v, cursor=cursor_on) for v in videos])
        # Times grow with the index: created, updated, id and position order alike (name falls back to them).
        if start_after is not None:
            start = (shelf.size - start_after) if newest_first else start_after + 1
        elif start_before is not None:
            start = max(0, (start_before - per_page) if not newest_first else shelf.size - start_before - per_page)
        else:
            start = 0 if cursor_on else (page - 1) * per_page
        videos, _total = shelf.videos(start, per_page, newest_first)
        return Reply(200, [self.render_library(shelf, v, cursor=cursor_on) for v in videos])

    def _filtered(
        self,
        shelf: Shelf,
        archived: bool,
        newest_first: bool,
        after: int | None,
        before: int | None,
        skip: int,
        count: int,
    ) -> list[Item]:
        """`count` medias archived (or not) in the list's order, after cursor `after` (or just before
        `before`), past the first `skip` of them (offset paging). Walked: a filter has no arithmetic."""
        if archived and shelf.cfg.library_unfetchable_every <= 0:
            return []  # no video of this library is ever archived
        backwards = before is not None  # the records before the cursor, nearest first, then put in order
        descending = newest_first != backwards
        mark = before if backwards else after
        found = []
        for video in self._walk(shelf, descending, mark):
            if (video.fault == "archived") != archived:
                continue
            if skip:
                skip -= 1
                continue
            found.append(video)
            if len(found) == count:
                break
        return found[::-1] if backwards else found

    def _walk(self, shelf: Shelf, descending: bool, mark: int | None) -> Iterator[Item]:
        """The library's videos one by one, from just past index `mark` (None: from the start)."""
        if descending:
            indexes = range((shelf.size if mark is None else mark) - 1, -1, -1)
        else:
            indexes = range(0 if mark is None else mark + 1, shelf.size)
        for index in indexes:
            video = shelf.video(index)
            if video is not None:
                yield video

    def serve_delivery(
        self, shelf: Shelf, method: str, path: str, query: str, range_header: str | None
    ) -> Served | None:
        """A thumbnail at Wistia's delivery host (wistia_extras.serve_thumbnail)."""
        return extras.serve_thumbnail(shelf, method, path, hashed_id)

    # ----- rate limits

    def rate_headers(self, cfg: SimConfig, state: RateState) -> dict:
        return {}  # Wistia documents none

    def throttle_hint(self, cfg: SimConfig, wait_s: float, state: RateState) -> tuple[dict, float | None]:
        told = max(1, math.ceil(wait_s))
        return {"Retry-After": str(told)}, float(told)
