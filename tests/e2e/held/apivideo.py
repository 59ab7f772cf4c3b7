"""What an api.video video shows a viewer at the end (issue 42), read from the "apivideo" simulator through api.video's
own API and delivery URLs, as a player reads them (oas_apivideo.yaml, apivideo/api.video-api-specification; the
official client api-video 1.4.7):

- the video, `GET /videos/{videoId}` (HTTP Basic, the API key as user name): its `assets.thumbnail` is the image a
  player shows before the video plays. api.video serves either the uploaded image (`POST /videos/{id}/thumbnail`) or
  a frame of the video (its default, or one picked with `PATCH /videos/{id}/thumbnail {"timecode"}`); the video object
  names neither the picked time nor whether the image is custom, so a frame (the simulator's, media.THUMBNAIL) reads
  as no custom thumbnail and `thumbnail_time_s` stays None. The simulator serves an uploaded image byte for byte.
- chapters: `GET /videos/{videoId}/chapters` (ChaptersApi.list, paginated: `currentPage`, `pageSize` at most 100,
  `pagination.pagesTotal`), each Chapter's `src` a WebVTT file whose cues are the chapters (start, title).
- a private video (`public: false`): its links carry a private token good for one request, so a player opens a
  session first, `GET .../vod/{videoId}/token/{private token}/session` -> `{"session_token"}`, and adds it as `avh`
  to every later request (docs.api.video, "Private video session tokens"); the chapters' `src` are read so too.
- collections: api.video has no folders or playlists, and our adapter (providers/apivideo.py `collections_instead`)
  carries a row's collections as a tag of each name and `metadata.collections` (JSON) at the create: `collections`
  is always [], and `collection_tags` reads what the video holds there instead.
"""

from __future__ import annotations

import io
import json
import re
import urllib.parse
from dataclasses import dataclass

import requests
import webvtt

from infra.sim import media
from tests.e2e.held import HeldCollection, HeldExtras
from tests.e2e.held.reading import get, session

PAGE_SIZE = 100  # pageSize's maximum (oas_apivideo.yaml)
_STAMP = re.compile(r"(?:(\d+):)?(\d{2}):(\d{2})\.(\d{3})")


@dataclass(frozen=True)
class CollectionTags:
    """Where api.video keeps a row's collections: the video's tags, and the list in `metadata.collections`."""

    tags: tuple[str, ...]
    collections: tuple[dict, ...]  # each {"id", "name", "kind", "position"?} as the create wrote it


def extras(sim, remote_id: str) -> HeldExtras:
    """The video's custom thumbnail (None where it shows a frame) and its chapters, as a player reads them."""
    with session() as web:
        video = _api(web, sim, f"/videos/{_quote(remote_id)}")
        player = _Player(web, video, remote_id)
        image = player.read(video["assets"]["thumbnail"])
        chapters: list[tuple[float, str]] = []  # every file's: a second file shows as doubles
        for listed in _chapter_files(web, sim, remote_id):
            chapters.extend(read_cues(player.read(listed["src"])))
    thumbnail = None if image == media.THUMBNAIL else image
    return HeldExtras(thumbnail=thumbnail, thumbnail_as_uploaded=True, chapters=tuple(sorted(chapters)))


def collections(sim) -> list[HeldCollection]:
    """None: api.video keeps no collections (no folders or playlists in its API); see `collection_tags`."""
    return []


def collection_tags(sim, remote_id: str) -> CollectionTags:
    """The video's tags and the collections its `metadata.collections` lists (our adapter's stand-in for them)."""
    with session() as web:
        video = _api(web, sim, f"/videos/{_quote(remote_id)}")
    tags = tuple(t for t in video.get("tags") or [] if isinstance(t, str))
    pairs = {m.get("key"): m.get("value") for m in video.get("metadata") or [] if isinstance(m, dict)}
    listed = json.loads(pairs["collections"]) if isinstance(pairs.get("collections"), str) else []
    return CollectionTags(tags, tuple(c for c in listed if isinstance(c, dict)))


def read_cues(content: bytes) -> list[tuple[float, str]]:
    """(start in seconds, title) of each cue of a WebVTT chapters file, its text lines joined."""
    cues = webvtt.from_buffer(io.StringIO(content.decode("utf-8-sig"))).captions
    return [
        (_seconds(cue.start), " ".join(line.strip() for line in cue.text.splitlines() if line.strip())) for cue in cues
    ]


def _seconds(stamp: str) -> float:
    found = _STAMP.fullmatch(stamp.strip())
    if found is None:
        raise ValueError(f"not a WebVTT timestamp: {stamp!r}")
    hours, minutes, seconds, millis = (int(part or 0) for part in found.groups())
    return hours * 3600 + minutes * 60 + seconds + millis / 1000


def _chapter_files(web: requests.Session, sim, remote_id: str) -> list[dict]:
    """Every Chapter of the video, page after page."""
    found, page = [], 1
    while True:
        params = {"currentPage": str(page), "pageSize": str(PAGE_SIZE)}
        answer = _api(web, sim, f"/videos/{_quote(remote_id)}/chapters", params)
        found += answer.get("data") or []
        if page >= int(answer.get("pagination", {}).get("pagesTotal") or 1):
            return found
        page += 1


class _Player:
    """Reads the video's delivery URLs as a player does: a public video's as they are, a private one's in a session
    opened with the private token its object gave (every later URL under that token, with the session's `avh`)."""

    def __init__(self, web: requests.Session, video: dict, remote_id: str) -> None:
        self.web, self.remote_id, self.prefix, self.avh = web, remote_id, "", ""
        if video.get("public") is False:
            link = video["assets"]["thumbnail"]
            at, marker, rest = link.partition(f"/{remote_id}/token/")
            assert marker, f"a private video's link without its private token: {link}"
            self.prefix = f"{at}/{remote_id}/token/{rest.split('/', 1)[0]}/"
            self.avh = get(web, self.prefix + "session").json()["session_token"]

    def read(self, url: str) -> bytes:
        if not self.prefix:
            return get(self.web, url).content
        path = urllib.parse.urlsplit(url).path
        _, marker, tail = path.partition(f"/{self.remote_id}/")
        assert marker, f"a delivery URL of another video: {url}"
        tail = re.sub(r"^token/[^/]+/", "", tail)  # the one-request token in the link: the session's serves it
        return get(self.web, self.prefix + tail, params={"avh": self.avh}).content


def _api(web: requests.Session, sim, path: str, params: dict | None = None) -> dict:
    return get(web, f"{sim.url}{path}", params=params, auth=(sim.config.api_key or "", "")).json()


def _quote(value: str) -> str:
    return urllib.parse.quote(value, safe="")
