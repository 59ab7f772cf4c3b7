"""What a viewer sees of a Wistia media besides its files (issue 42), for the "wistia" profile: its thumbnail (and the
image at its link), its chapters (a player customization), and each folder's medias in their order. Computed from
the media's index like the rest of the library (infra/sim/library.py).

Documents: Wistia's Data API OpenAPI file (wistia/wistia-typescript-sdk `.speakeasy/out.openapi.yaml`, 2026.03.0)
and docs.wistia.com:

- a media's `thumbnail` `{url, width, height}`: the link points at Wistia's delivery host (here the simulator's,
  `/_stream/wistia/deliveries/<hash>.jpg`, Wistia's `https://embed-ssl.wistia.com/deliveries/<hash>.jpg`) with its
  resizing parameters (`?image_crop_resized=200x120`; "By just adjusting a few query string parameters on an
  image's URL, you can resize, crop, and rotate it", docs.wistia.com/docs/working-with-images). The image is a real
  JPEG, the media's own (a comment in it names the media), unauthenticated as a CDN serves it; the resizing is not
  modelled (the same image is served whatever the query);
- `GET /medias/{hashed_id}/customizations` ("Fetches explicitly defined customizations for the video"): one media in
  three has chapters, `plugin.chapters {on, visibleOnLoad, chapterList: [{id, title, time, deleted}]}`, every value
  a string as the schema types it; one of each such media's chapters is `deleted` "true", and one media in nine
  has its chapters turned off (`on` "false"). The others have no customization: `{}`;
- `GET /medias?folder_id=<hashed id>` lists that folder's medias, in the order `sort_by` asks (`position`: the
  folder's own order, "require offset pagination"): Marketing's newest first, Training/2021's as uploaded,
  Webinars' second half first, as their owners arranged them. A media's `folder` names its folder `{id, name,
  hashedId}`.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Iterator

from ..library import FOLDERS, Item, Served, Shelf
from ..media import THUMBNAIL as FRAME_JPEG

THUMB_QUERY = "image_crop_resized=200x120"
CHAPTER_TITLES = ("Intro", "Setting up — « step 1 »", "Results", "Next steps: 日本語")


def folder_hashed_id(name: str) -> str:
    return f"f{len(name):09d}"


def folder(video: Item) -> dict:
    return {"id": 10 + len(video.folder), "name": video.folder, "hashedId": folder_hashed_id(video.folder)}


# ----- the thumbnail


def _delivery(index: int) -> str:
    """A delivery's hash (32 hex, as Wistia's): the media's index, and a digest that makes it no guess."""
    return f"{index:08x}" + hashlib.sha256(f"wistia-thumbnail-{index}".encode()).hexdigest()[:24]


def thumbnail(shelf: Shelf, video: Item) -> dict:
    url = f"{shelf.base_url}/_stream/wistia/deliveries/{_delivery(video.index)}.jpg?{THUMB_QUERY}"
    return {"url": url, "width": 200, "height": 120}


def named_jpeg(name: str) -> bytes:
    """A real JPEG of its own: a comment segment (COM) naming it, then the frame (media.THUMBNAIL)."""
    note = name.encode()[:200]
    return FRAME_JPEG[:2] + b"\xff\xfe" + struct.pack(">H", len(note) + 2) + note + FRAME_JPEG[2:]


def serve_thumbnail(shelf: Shelf, method: str, path: str, hashed_id: Callable[[Item], str]) -> Served | None:
    """`/_stream/wistia/deliveries/<hash>.jpg`: the media's thumbnail; None for another path."""
    prefix = "/_stream/wistia/deliveries/"
    if not path.startswith(prefix):
        return None
    name = path[len(prefix) :]
    missing = Served(404, {"Content-Type": "text/plain"}, b"Not Found")
    if not name.endswith(".jpg") or len(name) != 36:
        return missing
    try:
        index = int(name[:8], 16)
    except ValueError:
        return missing
    video = shelf.video(index)
    if video is None or name[:-4] != _delivery(index):
        return missing
    body = named_jpeg(f"wistia media {hashed_id(video)}")
    headers = {"Content-Type": "image/jpeg", "Content-Length": str(len(body)), "Cache-Control": "max-age=31536000"}
    return Served(200, headers, b"" if method == "HEAD" else body)


# ----- chapters


def customizations(video: Item) -> dict:
    """The media's explicitly defined customizations: its chapters where it has some, else none."""
    if video.index % 3 != 2:
        return {}
    n = 3 + video.index % 2
    chapter_list = [
        {
            "id": f"chapter_{k}",
            "title": CHAPTER_TITLES[k % len(CHAPTER_TITLES)],
            "time": f"{k * video.duration / n:g}",
            "deleted": "true" if k == 1 else "false",
        }
        for k in range(n)
    ]
    on = "false" if video.index % 9 == 8 else "true"
    return {
        "playerColor": "54bbff",
        "plugin": {"chapters": {"on": on, "visibleOnLoad": "true", "chapterList": chapter_list}},
    }


def chapters_shown(video: Item) -> list[tuple[float, str]]:
    """What a player shows of the media's chapters: (start, title), in start order."""
    found = customizations(video).get("plugin", {}).get("chapters", {})
    if found.get("on") != "true":
        return []
    return [(float(c["time"]), c["title"]) for c in found["chapterList"] if c["deleted"] != "true"]


# ----- each folder's order


def folder_videos(shelf: Shelf, hashed: str, sort_by: str, newest_first: bool) -> Iterator[Item]:
    """The folder's medias in the order asked: `position` its owner's arrangement, else by time (or name)."""
    names = [name for name in FOLDERS if folder_hashed_id(name) == hashed]
    if not names:
        return iter(())
    slot = FOLDERS.index(names[0])
    found = [v for i in range(slot, shelf.size, len(FOLDERS)) if (v := shelf.video(i)) is not None]
    if sort_by == "position":
        found = arranged(names[0], found)
    elif sort_by == "name":
        found = sorted(found, key=lambda v: v.title)
    return iter(found[::-1] if newest_first else found)


def arranged(name: str, videos: list[Item]) -> list[Item]:
    """A folder's medias as its owner arranged them."""
    if name == "Marketing":
        return videos[::-1]
    if name == "Webinars":
        half = len(videos) // 2
        return videos[half:] + videos[:half]
    return videos
