"""What a viewer sees on Vimeo besides the video (issue 42), read for the row: the picture, the chapters, the folder and
the showcases. The readers are pure over Vimeo's answers; the two that page (`read_chapters`, `ShowcaseIndex`) take
the source's own request function, so every request is paced and counted as the listing's are.

Documents: Vimeo's API reference (developer.vimeo.com/api/reference) and its OpenAPI (as konfig-sdks/vimeo-python-sdk
generates it, 2024-03-19), and the help centre:

- the picture: the video's `pictures`, "The video's active picture" (Picture: `uri` /videos/{id}/pictures/{picture},
  `active`, `type` custom | default | caution, `default_picture` "Whether the picture is Vimeo's default", `sizes[]`
  of {width, height, link}). Carried as the reference `vimeo://<video>/pictures/<picture>`, not as its link: the
  help centre asks apps not to keep thumbnail links ("We recommend implementing this regularly instead of caching
  the video thumbnail URLs", "Fix Video Thumbnails in Custom Applications",
  help.vimeo.com/hc/en-us/articles/12427892029585), so the link is read when the thumbnail is set
  (`GET /videos/{id}/pictures/{picture}`, the largest size; the one the video shows then if that one is gone). A
  `caution` picture ("isn't appropriate for all ages") and Vimeo's own default picture are not the video's;
- chapters: `GET /videos/{id}/chapters` ("returns every chapter of the specified video"; Chapter: `timecode` "in
  seconds from the start of the video", `title`), asked only where the video's `has_chapters` ("Whether the video
  has chapters") is true, 100 a page;
- the folder: `parent_folder` ("Information about the folder that contains the video": a Project, `uri`
  /users/{user}/projects/{id}, `name`), a collection of kind folder, `projects/<id>` (folders are projects in the
  API's paths);
- showcases: Vimeo names no showcase on the video and counts none, and `GET /videos/{id}/albums` ("all the
  showcases that contain the specified video") would cost a request a video and gives no place in the order. So
  the account's showcases are read once a sweep (`ShowcaseIndex`): `GET /me/albums` (or the team owner's
  `/users/{id}/albums`), 100 a page, then each one's videos, `GET <album uri>/videos`, 100 a page, only where its
  `metadata.connections.videos.total` says it has some. A showcase whose `sort` is `arranged` ("according to their
  custom arrangement") is read with `sort=manual` ("Sort the results by their manual order"): each video's place
  in it is its `position`; the others (newest, alphabetical, plays, ...) are ordered by Vimeo: no position. A
  collection of kind showcase, `albums/<id>` (showcases are albums in the API's paths).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping

from ..providers.facts import entries, finite_number, mapping, text
from ..providers.http import Answer
from .rows import ChapterInfo, CollectionInfo

PER_PAGE = 100
# Pages read at most: a row carries 500 chapters (row_extras.MAX_CHAPTERS); showcases and their videos are bounded
# so a listing ends (100,000 showcases; 100,000 videos in one).
MAX_CHAPTER_PAGES = 5
MAX_SHOWCASE_PAGES = 1000
USABLE_PICTURES = ("custom", "default")
ALBUM_FIELDS = "uri,name,sort,metadata.connections.videos.total"
_PICTURE_URI = re.compile(r"^/videos/(\d+)/pictures/(\d+)$")
_FOLDER_URI = re.compile(r"^/users/\d+/projects/(\d+)$")
_ALBUM_URI = re.compile(r"^/users/\d+/albums/(\d+)$")
_VIDEO_URI = re.compile(r"^/videos/(\d+)$")

Request = Callable[..., Answer]  # HttpSource.call: (method, path, params=...) -> Answer


def picture_id(video_id: str, picture: object) -> str | None:
    """The id of the picture the video shows, where it is one to carry: the owner's custom picture or the frame Vimeo
    chose, active; not a caution picture, nor Vimeo's own default picture."""
    found = mapping(picture)
    match = _PICTURE_URI.match(text(found.get("uri")) or "")
    if match is None or match.group(1) != video_id or found.get("active") is False:
        return None
    if found.get("type") not in USABLE_PICTURES or found.get("default_picture") is True:
        return None
    return match.group(2)


def largest_link(picture: object) -> str | None:
    """The link of the picture's largest size (by width; the first of equals)."""
    best, widest = None, -1.0
    for size in entries(mapping(picture).get("sizes")):
        link, width = text(mapping(size).get("link")), finite_number(mapping(size).get("width")) or 0.0
        if link and width > widest:
            best, widest = link, width
    return best


def folder_of(video: Mapping) -> list[CollectionInfo]:
    """The folder that holds the video, as a collection (none where the video is in no folder)."""
    folder = mapping(video.get("parent_folder"))
    match = _FOLDER_URI.match(text(folder.get("uri")) or "")
    return [CollectionInfo(f"projects/{match.group(1)}", folder.get("name"), "folder")] if match else []


def collection_pages(call: Request, path: str, params: Mapping[str, str], most: int) -> Iterator[list[Mapping]]:
    """The items of a Vimeo collection, a page at a time, until it says there is no next page (or `most` pages). An
    answer other than 200 ends it: what it would have listed is lost, the listing is not."""
    for number in range(1, most + 1):
        answer = call("GET", path, params={**params, "page": str(number), "per_page": str(PER_PAGE)})
        if answer.status != 200:
            return
        body = answer.body
        # A collection ({total, paging, data}); the OpenAPI types some as the bare list.
        items = body if isinstance(body, list) else entries(mapping(body).get("data"))
        yield [mapping(item) for item in items]
        if isinstance(body, list) or not text(mapping(mapping(body).get("paging")).get("next")):
            return


def read_chapters(call: Request, video_id: str) -> list[ChapterInfo]:
    """The video's chapters as Vimeo lists them (make_row sorts and cleans them)."""
    pages = collection_pages(call, f"/videos/{video_id}/chapters", {}, MAX_CHAPTER_PAGES)
    return [ChapterInfo(item.get("timecode"), item.get("title")) for page in pages for item in page]


class ShowcaseIndex:
    """The showcases that hold each video of the library, read once (on the first `of`) and kept for the sweep."""

    def __init__(self, call: Request, albums_path: str):
        self.call, self.albums_path = call, albums_path
        self._held: dict[str, list[CollectionInfo]] | None = None

    def of(self, video_id: str) -> list[CollectionInfo]:
        if self._held is None:
            self._held = self._read()
        return self._held.get(video_id, [])

    def _read(self) -> dict[str, list[CollectionInfo]]:
        held: dict[str, list[CollectionInfo]] = {}
        params = {"fields": ALBUM_FIELDS}
        for page in collection_pages(self.call, self.albums_path, params, MAX_SHOWCASE_PAGES):
            for album in page:
                uri = text(album.get("uri")) or ""
                match = _ALBUM_URI.match(uri)
                total = mapping(mapping(mapping(album.get("metadata")).get("connections")).get("videos")).get("total")
                if match is None or (isinstance(total, int) and total <= 0):
                    continue
                arranged = album.get("sort") == "arranged"
                for video_id, position in self._videos(uri, arranged):
                    held.setdefault(video_id, []).append(
                        CollectionInfo(f"albums/{match.group(1)}", album.get("name"), "showcase", position)
                    )
        return held

    def _videos(self, album_uri: str, arranged: bool) -> Iterator[tuple[str, int | None]]:
        """Each video of the showcase with its place in the manual order (None where it is not arranged)."""
        order = {"sort": "manual"} if arranged else {"sort": "date", "direction": "asc"}
        pages = collection_pages(self.call, f"{album_uri}/videos", {"fields": "uri", **order}, MAX_SHOWCASE_PAGES)
        place = 0
        for page in pages:
            for video in page:
                match = _VIDEO_URI.match(text(video.get("uri")) or "")
                if match:
                    yield match.group(1), place if arranged else None
                place += 1
