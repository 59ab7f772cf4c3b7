"""What a viewer sees on Wistia besides the media (issue 42), read for the row: the thumbnail, the chapters and the
folder as a collection in its order. The readers are pure over Wistia's answers; `FolderOrder` pages with the
source's own request function, so its requests are paced and counted as the listing's are.

Documents: Wistia's Data API OpenAPI file (wistia/wistia-typescript-sdk `.speakeasy/out.openapi.yaml`, 2026.03.0) and
docs.wistia.com (earlier wistia.com/support/developers):

- the thumbnail: the media's `thumbnail` `{url, width, height}`, in the media's own answer. Its `url` is an image at
  Wistia's delivery host (`https://embed-ssl.wistia.com/deliveries/<hash>.jpg`) with resizing parameters in its query
  (`image_crop_resized=200x120`); without them it is the image as it was made ("By just adjusting a few query string
  parameters on an image's URL, you can resize, crop, and rotate it", "Working With Images", docs.wistia.com/docs/
  working-with-images). So the row carries the link without its query: a public link that needs no credentials
  and names no expiry, which a target may fetch as it is. A thumbnail replaced at Wistia gets another delivery (its
  hash is in the path): the row keeps the one listed;
- chapters: a player customization, `GET /medias/{hashed_id}/customizations` ("Fetches explicitly defined
  customizations for the video"): `plugin.chapters` `{on, visibleOnLoad, chapterList: [{id, title, time,
  deleted}]}`, every value a string (the OpenAPI file's schema). A chapter `deleted` "true" is not carried, nor
  the list where `on` is "false" (the player shows none). One request a media, only when tracks are: the media's
  answer does not say whether it has any;
- the folder (previously a project: "Lists folders (previously called projects)"): the media's `folder` `{id, name,
  hashedId}`, a collection of kind folder, its hashed id the collection's id. Its order: the media list of that
  folder, `GET /medias?folder_id=<hashed id>&sort_by=position` ("All other sort_by options (`name`, `updated`,
  `position`) require offset pagination"), its active medias (`archived=false`, as the listing's), read once a sweep
  for each folder met (`FolderOrder`), each media's place in it its `position`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from urllib.parse import urlsplit, urlunsplit

from ..providers.facts import entries, finite_number, mapping, text
from ..providers.http import Answer
from .rows import ChapterInfo, CollectionInfo

PER_PAGE = 100
MAX_FOLDER_PAGES = 1000  # 100,000 medias in one folder: a listing ends
Request = Callable[..., Answer]  # HttpSource.call: (method, path, params=...) -> Answer


def thumbnail_link(media: Mapping) -> str | None:
    """The media's thumbnail image as it was made: its `thumbnail.url` without the resizing query."""
    url = text(mapping(media.get("thumbnail")).get("url"))
    if not url:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("https", "http") or not parts.netloc or parts.path in ("", "/"):
        return None
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _seconds(value: object) -> float | None:
    """A chapter's `time`: a string of seconds ("90", "12.5"), or a number."""
    if isinstance(value, str):
        try:
            return finite_number(float(value.strip()))
        except ValueError:
            return None
    return finite_number(value)


def chapters_of(customizations: object) -> list[ChapterInfo]:
    """The chapters a player shows, from the media's customizations (make_row sorts and cleans them)."""
    chapters = mapping(mapping(mapping(customizations).get("plugin")).get("chapters"))
    if str(chapters.get("on", "true")).lower() == "false":
        return []
    found = []
    for item in entries(chapters.get("chapterList")):
        item = mapping(item)
        if str(item.get("deleted", "false")).lower() == "true":
            continue
        start = _seconds(item.get("time"))
        if start is not None:
            found.append(ChapterInfo(start, item.get("title")))
    return found


def folder_of(media: Mapping) -> tuple[str, object] | None:
    """(the folder's hashed id, its name) of the folder that holds the media, or None."""
    folder = mapping(media.get("folder"))
    hashed = text(folder.get("hashedId")) or text(folder.get("hashed_id"))
    return (hashed, folder.get("name")) if hashed and hashed.isalnum() else None


class FolderOrder:
    """Each folder's medias in their order (`sort_by=position`), read once a folder (on the first media of it asked)
    and kept for the sweep."""

    def __init__(self, call: Request):
        self.call = call
        self._places: dict[str, dict[str, int]] = {}

    def collection(self, media: Mapping, ordered: bool) -> list[CollectionInfo]:
        """The media's folder as a collection, with the media's place in it where `ordered` (its order read)."""
        found = folder_of(media)
        if found is None:
            return []
        hashed, name = found
        position = self.position(hashed, text(media.get("hashed_id")) or "") if ordered else None
        return [CollectionInfo(hashed, name, "folder", position)]

    def position(self, folder: str, media: str) -> int | None:
        if folder not in self._places:
            self._places[folder] = {hid: place for place, hid in enumerate(self._medias(folder))}
        return self._places[folder].get(media)

    def _medias(self, folder: str) -> Iterator[str]:
        """The folder's medias' hashed ids in position order; an answer other than 200 ends it (what it would have
        listed keeps no position, the listing goes on)."""
        params = {"folder_id": folder, "sort_by": "position", "sort_direction": "1", "archived": "false"}
        params["per_page"] = str(PER_PAGE)
        for number in range(1, MAX_FOLDER_PAGES + 1):
            answer = self.call("GET", "/medias", params={**params, "page": str(number)})
            if answer.status != 200:
                return
            medias = entries(answer.body)
            for media in medias:
                yield text(mapping(media).get("hashed_id")) or ""
            if len(medias) < PER_PAGE:
                return
