"""What a Bunny Stream video shows besides its file and captions (issue 42), for the "bunny" profile: its custom
thumbnail, its chapters and the library's collections. Each behaviour beside its document: the Stream API's
OpenAPI file (BunnyWay/bunny-stream-ios Sources/BunnyStreamAPI/openapi.yml) and docs.bunny.net.

- `POST /library/{lib}/videos/{id}/thumbnail?thumbnailUrl=`: "Sets or updates the thumbnail image for the specified
  video using the provided thumbnail URL" (Video_SetThumbnail), a StatusModel. Bunny fetches the URL: here over
  loopback only, before the state lock, like every fetch of the simulator; what it answers for a URL it cannot
  fetch, or a file that is no image, is not documented: the simulator's answer is a 400 StatusModel saying so.
  The video then names its thumbnail file (`thumbnailFileName`, a name of the simulator's choosing) and serves it
  at `{video}/{thumbnail_filename}`, the "Custom thumbnail URL" (docs.bunny.net/stream/storage-structure).
- chapters: the update's `chapters`, ChapterModel `{title (minLength 1), start, end}` in seconds (int32), listed
  back on the video (UpdateVideoModel, VideoModel) (checked in `read_chapters`, used by bunny.py's update).
- collections: `POST /library/{lib}/collections {name}` answers the CollectionModel `{videoLibraryId, guid, name,
  videoCount, totalSize, previewVideoIds, previewImageUrls}` (Collection_CreateCollection); `GET .../collections`
  (`page`, `itemsPerPage`, `search`: "filter collections by name", `orderBy`: Collection_List) and
  `GET .../collections/{collectionId}` (Collection_GetCollection) count the videos whose `collectionId` names it.
  A collection's members are read as a player's page would list them: `GET .../videos?collection=` (Video_List).
"""

from __future__ import annotations

import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import TYPE_CHECKING

from ..fetch import _OPENER, _on_loopback
from ..profile import ParamError, Reply, int_param
from .apivideo_extras import image_type

if TYPE_CHECKING:
    from ..profile import Store
    from ..video import Video

FETCH_TIMEOUT_S = 5.0
THUMBNAIL_MAX_BYTES = 10 * 1024 * 1024  # no limit is documented: the simulator's
COLLECTIONS = "bunny_collections"  # where the store keeps the library's collections (store.account)
# Video_List's and Collection_List's `itemsPerPage` default 100; "the listing endpoints' documented ceiling" is 1,000
# (BunnyWay/cli bunny-stream.ts).
PAGE_DEFAULT, PAGE_MAX = 100, 1000


def fetch_thumbnail(url: object) -> tuple[bytes, str] | str:
    """The image at `url` as Bunny fetches it (loopback only here): (bytes, media type), or why not."""
    if not isinstance(url, str) or not _on_loopback(url):
        return "The thumbnail URL could not be fetched."
    try:
        with _OPENER.open(urllib.request.Request(url), timeout=FETCH_TIMEOUT_S) as response:
            content = response.read(THUMBNAIL_MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        exc.close()
        return f"The thumbnail URL answered HTTP {exc.code}."
    except (OSError, ValueError):
        return "The thumbnail URL could not be fetched."
    kind = image_type(content)
    if kind is None or len(content) > THUMBNAIL_MAX_BYTES:
        return "The thumbnail is not a JPEG, PNG or WebP image."
    return content, kind


def read_chapters(value: object) -> list[dict] | str:
    """UpdateVideoModel `chapters`: ChapterModel `{title, start, end}`, a title of at least one character and whole
    seconds; or why not."""
    if not isinstance(value, list):
        return "chapters must be an array"
    chapters = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("title"), str) or not item["title"]:
            return "each chapter needs a title"
        times = [item.get("start", 0), item.get("end", 0)]
        if not all(isinstance(t, int) and not isinstance(t, bool) and 0 <= t < 2**31 for t in times):
            return "a chapter's start and end are whole seconds"
        chapters.append({"title": item["title"], "start": times[0], "end": times[1]})
    return chapters


def paging(query: dict[str, list[str]]) -> tuple[int, int] | str:
    """A list's `page` (from 1) and `itemsPerPage` (default 100; past 1,000 the ceiling: the simulator's reading of
    "documented ceiling"), or why not (videos' and collections' lists alike)."""
    try:
        page = int_param(query, "page", 1, 1, None)
        return page, min(PAGE_MAX, int_param(query, "itemsPerPage", PAGE_DEFAULT, 1, None))
    except ParamError as exc:
        return str(exc)


def collection_model(store: Store, library: int, guid: str, held: dict) -> dict:
    members = [v for v in store.videos.values() if v.request.get("collectionId") == guid]
    return {
        "videoLibraryId": library,
        "guid": guid,
        "name": held["name"],
        "videoCount": len(members),
        "totalSize": sum(int(v.duration * 500_000) for v in members),
        "previewVideoIds": ",".join(v.id for v in members[:3]) or None,
        "previewImageUrls": [],
    }


class Extras:
    """The store ops of the "bunny" profile (mixed into Bunny)."""

    if TYPE_CHECKING:  # what the profile it is mixed into gives it

        def error(self, kind: str, message: str | None = None, **detail: object) -> Reply: ...

    def store_prefetch(self, cfg, op: str, call) -> object:
        if op != "store_thumbnail":
            return None
        return fetch_thumbnail(urllib.parse.parse_qs(call.query).get("thumbnailUrl", [None])[0])

    def store_op(self, cfg, op: str, store: Store, call, raw: bytes, fetched: object, now: float) -> Reply:
        library = int(call.params.get("lib") or 0)
        held: dict = store.account.setdefault(COLLECTIONS, {})
        if op == "store_thumbnail":
            return self._thumbnail(store.videos.get(call.params.get("id", "")), fetched)
        if op == "store_collection_create":
            return self._create(raw, held, library, store)
        if op == "store_collection":
            guid = call.params.get("cid", "")
            found = held.get(guid)
            return Reply(200, collection_model(store, library, guid, found)) if found else self.error("not_found")
        query = urllib.parse.parse_qs(call.query)
        asked = paging(query)
        if isinstance(asked, str):
            return self.error("invalid", asked)
        page, size = asked
        search = query.get("search", [""])[0].lower()
        chosen = [g for g, c in sorted(held.items(), key=lambda gc: -gc[1]["created"]) if search in c["name"].lower()]
        items = [collection_model(store, library, g, held[g]) for g in chosen[(page - 1) * size : page * size]]
        return Reply(200, {"totalItems": len(chosen), "currentPage": page, "itemsPerPage": size, "items": items})

    def _thumbnail(self, video: Video | None, fetched: object) -> Reply:
        if video is None:
            return self.error("not_found")
        if isinstance(fetched, str) or not isinstance(fetched, tuple):
            message = fetched if isinstance(fetched, str) else "No thumbnail URL was given."
            return Reply(400, {"success": False, "message": message, "statusCode": 400})
        content, kind = fetched
        suffix = {"image/png": "png", "image/webp": "webp"}.get(kind, "jpg")
        video.extras["thumbnail"] = {"content": content, "type": kind, "name": f"{secrets.token_hex(4)}.{suffix}"}
        return Reply(200, {"success": True, "message": "OK", "statusCode": 200})

    def _create(self, raw: bytes, held: dict, library: int, store: Store) -> Reply:
        import json

        try:
            body = json.loads(raw or b"null")
        except (ValueError, UnicodeDecodeError):
            body = None
        name = body.get("name") if isinstance(body, dict) else None
        if not isinstance(name, str) or not name:
            return self.error("invalid", "The collection needs a name.")
        guid = str(uuid.uuid4())
        held[guid] = {"name": name, "created": time.time()}
        return Reply(200, collection_model(store, library, guid, held[guid]))


def thumbnail_name(video: Video) -> str:
    """The video's `thumbnailFileName`: its custom thumbnail's, else Bunny's default frame's."""
    held = video.extras.get("thumbnail")
    return held["name"] if held else "thumbnail.jpg"


def serve(video: Video, rest: list[str]) -> tuple[int, str, bytes] | None:
    """The custom thumbnail at `{video}/{thumbnail_filename}`; None: the common rules."""
    held = video.extras.get("thumbnail")
    if held and rest == [held["name"]]:
        return 200, held["type"], held["content"]
    return None
