"""The "vimeo" profile's library, what a viewer sees first (issue 42): each video's pictures, chapters and release
time, and the account's showcases with their videos in order, computed from the video's index like the rest of
the library (infra/sim/library.py), so a library of a million costs nothing until asked.

Documents: Vimeo's API reference (developer.vimeo.com/api/reference), its OpenAPI as konfig-sdks/vimeo-python-sdk
generates it (2024-03-19: the schemas and the paths named below), and the help centre where the reference is
silent.

- The video (Video, vimeo.json 3.4): `pictures`, "The video's active picture"; `has_chapters`, "Whether the video
  has chapters"; `release_time`, "The time in ISO 8601 format when the video was released"; `parent_folder`,
  "Information about the folder that contains the video" (a Project: `uri`, `name`).
- A picture (Picture): `uri` /videos/{id}/pictures/{picture_id}, `active`, `type` ("custom - The picture is a
  custom video image", "default - The picture is the default video image"; "caution" is not modelled),
  `default_picture`, `base_link` and `sizes[]` of {width, height, link, link_with_play_button}, "the direct link
  to the image file". Every video here has its default frame; every other one (even index) a custom picture its
  owner chose, which is then the active one. `GET /videos/{id}/pictures` "returns all thumbnail images of the
  specified video", `GET /videos/{id}/pictures/{picture_id}` one. The links point at this simulator's delivery
  host, `/_stream/vimeo/video/<picture>-<hash>-d_<w>x<h>` (Vimeo's i.vimeocdn.com/video/... form), and serve a
  real PNG of that size (Vimeo serves JPEG or WebP; the format is not what is tested), unauthenticated as a CDN.
- Chapters (Chapter: `uri`, `title`, `timecode` "in seconds from the start of the video", `thumbnails`,
  `active_thumbnail_uri`): `GET /videos/{id}/chapters` "returns every chapter of the specified video", paged
  (page, per_page "up to a maximum of 100") as Vimeo's collections are ({total, page, per_page, paging, data}; the
  OpenAPI types the answer as the list alone). One video in three has chapters, at whole seconds; videos 100,
  400, 700, ... more than 100 (two pages).
- Showcases (Album: `uri` /users/{user}/albums/{id}, `name`, `sort` "arranged - Sort the showcase videos according
  to their custom arrangement", or newest, alphabetical, ...; `metadata.connections.videos.total`):
  `GET /me/albums`, `GET /users/{user_id}/albums` ("all the showcases of the user"); `GET
  /users/{user_id}/albums/{album_id}/videos` and `/me/albums/{album_id}/videos` with `sort` (manual: "Sort the
  results by their manual order"; default, date, ...) and `direction`; `GET /videos/{id}/albums`, "all the
  showcases that contain the specified video". SHOWCASES below: two arranged by hand, one sorted newest first.
"""

from __future__ import annotations

import functools
import hashlib
import struct
import urllib.parse
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..library import Item, Served, Shelf
from ..profile import Call, iso_offset
from .vimeo_target import SORTS, list_query, paging

PICTURE_BASE = 1_800_000_000
ALBUM_BASE = 10_000_000
CHAPTER_BASE = 5_000_000
# The sizes Vimeo lists for a 16:9 video's picture, smallest first.
SIZES = ((100, 75), (200, 150), (295, 166), (640, 360), (960, 540), (1280, 720), (1920, 1080))
CHAPTER_TITLES = ("Intro", "Q&A — « live »", "The demo", "Wrap-up", "Bonus: 日本語")
# A showcase's videos list's `sort` (the OpenAPI's enum): the video list's, but last_user_action_event_date, and
# manual; manual and default keep the showcase's own order.
ALBUM_VIDEO_SORTS = (*(sort for sort in SORTS if sort != "last_user_action_event_date"), "manual")


@dataclass(frozen=True)
class Showcase:
    """A showcase of the account: the videos i with i % every == offset, in `arrangement`."""

    id: int
    name: str
    sort: str  # the Album's `sort`: arranged (by hand) or one of Vimeo's automatic orders
    every: int
    offset: int
    arrangement: str  # reversed | rotated: the hand-made order of an arranged one; newest for `sort` newest

    def holds(self, index: int) -> bool:
        return index % self.every == self.offset

    def order(self, shelf: Shelf) -> list[Item]:
        """Its videos as the showcase shows them (deleted ones gone)."""
        found = [v for i in range(self.offset, shelf.size, self.every) if (v := shelf.video(i)) is not None]
        if self.arrangement in ("reversed", "newest"):
            return found[::-1]
        half = len(found) // 2
        return found[half:] + found[:half]  # rotated: the second half first, as its owner dragged them


SHOWCASES = (
    Showcase(ALBUM_BASE + 1, "Featured", "arranged", 11, 0, "reversed"),
    Showcase(ALBUM_BASE + 2, "Onboarding « 2021 »", "arranged", 6, 1, "rotated"),
    Showcase(ALBUM_BASE + 3, "Latest webinars", "newest", 9, 4, "newest"),
)


# ----- pictures


def picture_ids(index: int) -> tuple[str, str | None]:
    """(the default frame's id, the custom picture's id or None): every other video has one its owner chose."""
    custom = str(PICTURE_BASE + 2 * index + 1) if index % 2 == 0 else None
    return str(PICTURE_BASE + 2 * index), custom


def _picture_hash(pid: str) -> str:
    return hashlib.sha256(f"vimeo-picture-{pid}".encode()).hexdigest()[:40]


def picture(shelf: Shelf, vid: str, pid: str, custom: bool, active: bool) -> dict:
    base = f"{shelf.base_url}/_stream/vimeo/video/{pid}-{_picture_hash(pid)}"
    return {
        "uri": f"/videos/{vid}/pictures/{pid}",
        "active": active,
        "type": "custom" if custom else "default",
        "default_picture": False,
        "base_link": base,
        "resource_key": _picture_hash(pid)[:16],
        "sizes": [
            {
                "width": w,
                "height": h,
                "link": f"{base}-d_{w}x{h}?r=pad",
                "link_with_play_button": f"{base}-d_{w}x{h}?r=pad&play=1",
            }
            for w, h in SIZES
        ],
    }


def pictures(shelf: Shelf, vid: str, video: Item) -> list[dict]:
    """The video's pictures, the active first: its custom picture where it has one, then its default frame."""
    frame, custom = picture_ids(video.index)
    found = [picture(shelf, vid, custom, True, True)] if custom else []
    return [*found, picture(shelf, vid, frame, False, custom is None)]


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A real PNG of one colour: what a test reads back as the image (its size in the IHDR chunk)."""
    return _png(width, height, rgb)


@functools.lru_cache(maxsize=32)
def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    row = b"\x00" + bytes(rgb) * width  # filter byte 0, then RGB pixels

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def colour_of(pid: str) -> tuple[int, int, int]:
    n = int(pid)
    return n * 37 % 256, n * 91 % 256, n * 53 % 256


def serve_picture(shelf: Shelf, method: str, path: str, index_of_id: Callable[[str], int]) -> Served | None:
    """`/_stream/vimeo/video/<picture>-<hash>-d_<w>x<h>`: the image, as Vimeo's image CDN serves it (no token);
    None for a path of another kind."""
    prefix = "/_stream/vimeo/video/"
    if not path.startswith(prefix):
        return None
    missing = Served(404, {"Content-Type": "text/plain"}, b"Not Found")
    name, _, size = path[len(prefix) :].rpartition("-d_")
    pid, _, given_hash = name.partition("-")
    width, _, height = size.partition("x")
    if not (pid.isdigit() and width.isdigit() and height.isdigit()) or given_hash != _picture_hash(pid):
        return missing
    index = (int(pid) - PICTURE_BASE) // 2
    if (int(width), int(height)) not in SIZES or shelf.video(index) is None or pid not in picture_ids(index):
        return missing
    body = png(int(width), int(height), colour_of(pid))
    headers = {"Content-Type": "image/png", "Content-Length": str(len(body)), "Cache-Control": "max-age=31536000"}
    return Served(200, headers, b"" if method == "HEAD" else body)


# ----- chapters


def chapter_count(video: Item) -> int:
    if video.index % 3 != 1:
        return 0
    return min(150, int(video.duration)) if video.index % 300 == 100 else 2 + video.index % 4


def chapters(vid: str, video: Item) -> list[dict]:
    """The video's chapters in timecode order: the first at 0, the others spread over whole seconds."""
    n = chapter_count(video)
    return [
        {
            "uri": f"/videos/{vid}/chapters/{CHAPTER_BASE + video.index * 1000 + k}",
            "title": CHAPTER_TITLES[k % len(CHAPTER_TITLES)] + (f" {k}" if k >= len(CHAPTER_TITLES) else ""),
            "timecode": int(k * video.duration // n),
            "thumbnails": [],
            "active_thumbnail_uri": None,
        }
        for k in range(n)
    ]


# ----- showcases


def album(showcase: Showcase, shelf: Shelf, user: str) -> dict:
    uri = f"/users/{user}/albums/{showcase.id}"
    count = len(range(showcase.offset, shelf.size, showcase.every))
    return {
        "uri": uri,
        "name": showcase.name,
        "description": None,
        "sort": showcase.sort,
        "link": f"https://vimeo.com/showcase/{showcase.id}",
        "layout": "grid",
        "created_time": iso_offset(1_577_836_800),
        "modified_time": iso_offset(1_577_836_800),
        "privacy": {"view": "anybody"},
        "metadata": {
            "connections": {
                "videos": {"uri": f"{uri}/videos", "options": ["GET"], "total": count - _deleted_in(showcase, shelf)}
            }
        },
    }


def _deleted_in(showcase: Showcase, shelf: Shelf) -> int:
    return sum(1 for i in shelf.state.deleted if 0 <= i < shelf.size and showcase.holds(i))


def showcase_of(album_id: str) -> Showcase | None:
    return next((s for s in SHOWCASES if str(s.id) == album_id), None)


def album_videos(showcase: Showcase, shelf: Shelf, call: Call) -> list[Item] | str:
    """The showcase's videos in the order the query asks, or why the query is invalid."""
    query = urllib.parse.parse_qs(call.query)
    sort = query.get("sort", ["default"])[0]
    direction = query.get("direction", [""])[0]  # none given: the sort's own way (the showcase's, oldest first)
    if sort not in ALBUM_VIDEO_SORTS or direction not in ("", "asc", "desc"):
        return "sort or direction is not one of the allowed values"
    found = showcase.order(shelf)
    if sort in ("date", "modified_time"):
        found = sorted(found, key=lambda v: v.index, reverse=direction != "asc")
    elif sort == "alphabetical":
        found = sorted(found, key=lambda v: v.title, reverse=direction == "desc")
    elif direction == "desc":
        found = found[::-1]
    return found


def listed[T](
    path: str, call: Call, items: Sequence[T], render: Callable[[T], dict], sorts: tuple[str, ...] = ("default",)
) -> dict | str:
    """A Vimeo collection ({total, page, per_page, paging, data}) of the page of `items` the query asks, each
    rendered (only those of the page); or why page, per_page or sort is invalid."""
    asked = list_query(call, sorts)
    if isinstance(asked, str):
        return asked
    page, per_page, _sort, _direction = asked
    start = (page - 1) * per_page
    data = [render(item) for item in items[start : start + per_page]]
    return {
        "total": len(items),
        "page": page,
        "per_page": per_page,
        "paging": paging(path, call, page, per_page, len(items)),
        "data": data,
    }
