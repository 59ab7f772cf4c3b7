"""What a Bunny Stream video shows a viewer at the end (issue 42), read from the "bunny" simulator through Bunny's own
Stream API and pull zone, as a player reads them (BunnyWay/bunny-stream-ios Sources/BunnyStreamAPI/openapi.yml, the
"Stream API"; docs.bunny.net):

- the video, `GET /library/{libraryId}/videos/{videoId}` (Video_GetVideo, `AccessKey` the library's key):
  `thumbnailFileName` names the image a player shows, served at `https://{pull_zone}/{video_id}/{thumbnail_file_name}`
  (docs.bunny.net/stream/storage-structure; the simulator's pull zone is `{sim}/_play/bunny`). Bunny's own frames are
  `thumbnail.jpg` and `thumbnail_1.jpg`..`thumbnail_5.jpg`: those read as no custom thumbnail. A custom one is the
  image Bunny fetched from the URL it was handed (Video_SetThumbnail), which the simulator serves byte for byte. With
  token authentication on, every pull zone file needs a CDN token ("CDN token authentication applies to all direct
  URLs — MP4 fallbacks, HLS playlists and segments, thumbnails", docs.bunny.net/stream/security): a directory token
  for `/{video_id}/` (docs.bunny.net/cdn/security/token-authentication/advanced). The fetch's `thumbnailTime` picks
  the default frame, but VideoModel lists no such field: `thumbnail_time_s` stays None.
- chapters: the video's `chapters`, ChapterModel `{title, start, end}` in whole seconds.
- collections: `GET /library/{libraryId}/collections` (Collection_List: `page`, `itemsPerPage`, `totalItems`), each
  one's videos by `GET /library/{libraryId}/videos?collection={collectionId}` (Video_List). A collection keeps no
  order of its own: Video_List orders by date or title (`orderBy`), and a video names its one collection only
  (VideoModel `collectionId`; "it can be automated using the Update Video API by passing the desired collectionId
  to each video", docs.bunny.net/stream/collections): `ordered` is False, the members as the list gives them.
"""

from __future__ import annotations

import time
import urllib.parse

import requests
from migrator.providers.bunny_formats import cdn_token

from infra.sim import media
from tests.e2e.held import HeldCollection, HeldExtras
from tests.e2e.held.reading import get, session

PAGE_SIZE = 100  # itemsPerPage's default (openapi.yml)
TOKEN_TTL_S = 600
DEFAULT_THUMBNAILS = frozenset({"thumbnail.jpg", *(f"thumbnail_{n}.jpg" for n in range(1, 6))})


def extras(sim, remote_id: str) -> HeldExtras:
    """The video's custom thumbnail as the pull zone serves it (None where it shows one of Bunny's frames) and its
    chapters, in start order."""
    with session() as web:
        video = _api(web, sim, f"/videos/{_quote(remote_id)}")
        name = video.get("thumbnailFileName") or ""
        thumbnail = None if name in DEFAULT_THUMBNAILS else _pull_zone(web, sim, remote_id, name)
    chapters = sorted((float(c["start"]), c["title"]) for c in video.get("chapters") or [])
    return HeldExtras(thumbnail=thumbnail, thumbnail_as_uploaded=True, chapters=tuple(chapters))


def collections(sim) -> list[HeldCollection]:
    """Every collection of the library (newest first, as Collection_List gives them), each with its videos."""
    with session() as web:
        found = _every(web, sim, "/collections", {})
        return [
            HeldCollection(
                remote_id=held["guid"],
                name=held["name"],
                members=tuple(v["guid"] for v in _every(web, sim, "/videos", {"collection": held["guid"]})),
                ordered=False,
            )
            for held in found
        ]


def _every(web: requests.Session, sim, path: str, params: dict) -> list[dict]:
    """Every item of a paged list (`page` from 1, `itemsPerPage`, `totalItems`)."""
    items, page = [], 1
    while True:
        answer = _api(web, sim, path, {**params, "page": str(page), "itemsPerPage": str(PAGE_SIZE)})
        listed = answer.get("items") or []
        items += listed
        if not listed or len(items) >= int(answer.get("totalItems") or 0):
            return items
        page += 1


def _pull_zone(web: requests.Session, sim, remote_id: str, name: str) -> bytes:
    """A file of the video at the library's pull zone, with a CDN directory token where the library asks for one."""
    directory = f"/{remote_id}/"
    params: dict[str, str] = {}
    key = sim.config.token_secret
    if key:
        expires = int(time.time()) + TOKEN_TTL_S
        token = cdn_token(key, directory, expires, {"token_path": directory})
        params = {"token": token, "token_path": directory, "expires": str(expires)}
    url = f"{sim.url}{media.PREFIX}bunny{directory}{_quote(name)}"
    return get(web, url, params=params).content


def _api(web: requests.Session, sim, path: str, params: dict | None = None) -> dict:
    url = f"{sim.url}/library/{sim.config.account_id}{path}"
    return get(web, url, params=params, headers={"AccessKey": sim.config.api_key or ""}).json()


def _quote(value: str) -> str:
    return urllib.parse.quote(value, safe="")
