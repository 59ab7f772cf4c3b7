"""The "brightcove" profile's library, what a viewer sees first (issue 42): each video's images (poster and
thumbnail, a real PNG at each link), its chapters track, its publish time, and the account's playlists with their
order, computed from the video's index like the rest of the library (infra/sim/library.py).

Documents (apis.support.brightcove.com unless said): the CMS API reference (BrightcoveLearning/api-references-raml
`cms-api/v1/src/video.js`, `playlist.js`), "CMS API Video Fields Reference", "Images and the Dynamic Ingest API",
"Managing Playlists Using the CMS API", "Managing Text Tracks", and the Playback API's "JSON/MRSS Feed from a
Playlist" sample.

- `images` ("map of image maps"): `poster` and `thumbnail`, each `{asset_id, remote, src, sources[] of {src, width,
  height}}` (video.js's example). Transcoding captures both ("Capture images at the mid-point of the video during
  transcoding", "Images and the Dynamic Ingest API"): every complete video has them, but every eighth from the
  seventh, whose poster its owner removed (a thumbnail only); a video still processing has none yet (our choice).
  Sizes: the poster 1280x720, the thumbnail 320x180 (minimum widths 640 and 160, 16:9). "The URLs for videos and
  assets returned by Brightcove APIs are signed ... only good for a short time - usually a few hours" (the MRSS
  sample): each link here carries `exp` (with `link_ttl_s`) and `sig`, and serves a real PNG of its size while
  valid, 403 once expired or forged, 404 once the video is deleted (`serve`).
- `published_at`: "start date-time of first activation" (video.js): here up to three days after the upload.
- chapters: a text track of `kind` chapters (video.js: "captions", "chapters", "subtitles", "metadata"), `src` a
  WebVTT file of chapter cues (chapter_cues.py), on every `library_chapters_every`th video; every third of those
  is its owner's `draft` ("status": published | draft).
- playlists: `GET /v1/accounts/{a}/playlists` (`limit` default 20, here 1..100 as the CMS API's other lists;
  `offset`; `sort` name or updated_at, `-` descending, default `-updated_at`; `q` "Only search by type is currently
  supported for playlists - e.g. q=type:EXPLICIT"), each `{id, account_id, name, description, favorite,
  reference_id, type, created_at, updated_at}` with `video_ids` for an EXPLICIT one and `search` and `limit` for a
  smart one; `GET .../playlists/{id}/videos`: "the video objects for videos in a playlist", in its order.
  PLAYLISTS below: two EXPLICIT ones arranged by hand and one smart one (`ACTIVATED_NEWEST_TO_OLDEST` over
  `+tags:"featured"`, "ordered by activation date (descending)"). A deleted video leaves every playlist; an
  EXPLICIT playlist holds at most MAX_EXPLICIT videos here (our choice: a limit was not found).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass

from ..library import EPOCH, Item, Served, Shelf
from ..profile import iso_z
from . import chapter_cues
from .vimeo_library import png

ID_BASE = 6_300_000_000_000  # brightcove.ID_BASE: a video's id is ID_BASE + its index
IMAGE_SIZES = {"poster": (1280, 720), "thumbnail": (320, 180)}
MAX_EXPLICIT = 1000
PREFIX = "/_stream/brightcove/"
_IMAGE = re.compile(r"^image/(\d+)/(poster|thumbnail)/(\d+)x(\d+)/image\.png$")
_CHAPTERS = re.compile(r"^chapters/(\d+)\.vtt$")


@dataclass(frozen=True)
class Playlist:
    """A playlist of the account: an EXPLICIT one holds the videos i with i % every == offset (its first
    MAX_EXPLICIT), in `arrangement`; a smart one the videos its search finds, in its type's order."""

    id: str
    name: str
    type: str
    every: int = 0
    offset: int = 0
    arrangement: str = ""  # reversed | rotated (EXPLICIT): the order its owner gave
    search: str | None = None  # smart
    limit: int | None = None  # smart: "maximum number of videos to include"

    def explicit_ids(self, shelf: Shelf) -> list[str]:
        held = [i for i in range(self.offset, shelf.size, self.every)[:MAX_EXPLICIT] if shelf.video(i) is not None]
        if self.arrangement == "reversed":
            held = held[::-1]
        elif self.arrangement == "rotated":
            held = held[len(held) // 2 :] + held[: len(held) // 2]
        return [str(ID_BASE + i) for i in held]

    def videos(self, shelf: Shelf) -> list[Item]:
        """The videos the playlist holds, in its order."""
        if self.type == "EXPLICIT":
            found = (shelf.video(int(v) - ID_BASE) for v in self.explicit_ids(shelf))
            return [v for v in found if v is not None]
        featured = (v for i in range(0, shelf.size, 11) if (v := shelf.video(i)) is not None)  # tags "featured"
        newest = sorted(featured, key=lambda v: published(v), reverse=True)
        return newest[: self.limit]


PLAYLISTS = (
    Playlist("6300000000101", "Featured « launch »", "EXPLICIT", every=7, offset=0, arrangement="reversed"),
    Playlist("6300000000102", "Onboarding 2021", "EXPLICIT", every=5, offset=2, arrangement="rotated"),
    Playlist("6300000000103", "Newest featured", "ACTIVATED_NEWEST_TO_OLDEST", search='+tags:"featured"', limit=20),
)


def published(video: Item) -> float:
    """The video's first activation: up to three days after its upload (`published_at` apart from `created_at`)."""
    return video.created + (video.index % 4) * 86_400


def playlist_of(playlist_id: str) -> Playlist | None:
    return next((p for p in PLAYLISTS if p.id == playlist_id), None)


def render_playlist(playlist: Playlist, shelf: Shelf, account: str) -> dict:
    doc: dict = {
        "id": playlist.id,
        "account_id": account,
        "name": playlist.name,
        "description": None,
        "favorite": playlist.type == "EXPLICIT",
        "reference_id": None,
        "type": playlist.type,
        "created_at": iso_z(EPOCH),
        "updated_at": iso_z(EPOCH + 86_400),
    }
    if playlist.type == "EXPLICIT":
        doc["video_ids"] = playlist.explicit_ids(shelf)
    else:
        doc.update(search=playlist.search, limit=playlist.limit)
    return doc


def listed_playlists(query: dict[str, list[str]]) -> Sequence[Playlist] | str:
    """The account's playlists a list request selects and orders (before its limit and offset), or why the
    request is refused."""
    q = query.get("q", [""])[0].strip()
    found: Sequence[Playlist] = PLAYLISTS
    if q:
        name, _, value = q.partition(":")
        if name != "type" or not value:
            return "only a search by type is supported for playlists, e.g. q=type:EXPLICIT"
        found = [p for p in PLAYLISTS if p.type == value]
    sort = query.get("sort", ["-updated_at"])[0]
    if sort.lstrip("-") not in ("name", "updated_at"):
        return "sort must be name or updated_at, with - for descending"
    key = (lambda p: p.name) if sort.lstrip("-") == "name" else (lambda p: p.id)  # one updated_at: ties by id
    return sorted(found, key=key, reverse=sort.startswith("-"))


# ----- images and chapters files


def _sign(shelf: Shelf, path: str, expires: str) -> str:
    return hmac.new(shelf.state.secret, f"bc-asset|{path}|{expires}".encode(), hashlib.sha256).hexdigest()[:32]


def asset_url(shelf: Shelf, rest: str) -> str:
    """A link to one of a video's assets at this simulator's delivery host, signed, expiring with link_ttl_s."""
    path = PREFIX + rest
    expires = str(int(time.time() + shelf.cfg.link_ttl_s)) if shelf.cfg.link_ttl_s > 0 else ""
    query = {**({"exp": expires} if expires else {}), "sig": _sign(shelf, path, expires)}
    return f"{shelf.base_url}{path}?{urllib.parse.urlencode(query)}"


def image_kinds(video: Item) -> tuple[str, ...]:
    """The images the video has: none while processing, a thumbnail only on every eighth from the seventh."""
    if video.fault == "processing":
        return ()
    return ("thumbnail",) if video.index % 8 == 6 else ("poster", "thumbnail")


def images(shelf: Shelf, video: Item) -> dict:
    """The video's `images` map as the CMS API answers it."""
    found = {}
    for kind in image_kinds(video):
        width, height = IMAGE_SIZES[kind]
        src = asset_url(shelf, f"image/{ID_BASE + video.index}/{kind}/{width}x{height}/image.png")
        found[kind] = {
            "asset_id": str(ID_BASE + 500_000_000 + 2 * video.index + (kind == "thumbnail")),
            "remote": False,
            "sources": [{"src": src, "width": width, "height": height}],
            "src": src,
        }
    return found


def chapters_track(shelf: Shelf, video: Item) -> list[dict]:
    """The video's chapters text track, where it has one (published, or its owner's draft)."""
    if not chapter_cues.has_chapters(shelf.cfg, video.index) or video.fault == "processing":
        return []
    src = asset_url(shelf, f"chapters/{ID_BASE + video.index}.vtt")
    every = max(1, shelf.cfg.library_chapters_every)
    return [
        {
            "id": f"{video.index:08d}-chapters-en",
            "account_id": shelf.cfg.account_id or "1",
            "src": src,
            "srclang": "en",
            "label": "Chapters",
            "kind": "chapters",
            "mime_type": "text/vtt",
            "status": "draft" if (video.index // every) % 3 == 2 else "published",
            "default": False,
            "sources": [{"src": src}],
        }
    ]


def serve(shelf: Shelf, method: str, path: str, query: str) -> Served | None:
    """`/_stream/brightcove/...`: an image (a real PNG of its size) or a chapters file, as the CDN serves a signed
    link: 403 when forged or expired, 404 for a video deleted (or an asset it does not have). None: another path."""
    if not path.startswith(PREFIX):
        return None
    missing = Served(404, {"Content-Type": "text/plain"}, b"Not Found")
    params = urllib.parse.parse_qs(query)
    expires = params.get("exp", [""])[0]
    if not hmac.compare_digest(params.get("sig", [""])[0], _sign(shelf, path, expires)) or (
        expires and (not expires.isdigit() or int(expires) < time.time())
    ):
        return Served(403, {"Content-Type": "text/plain"}, b"Request has expired or is not signed")
    rest = path[len(PREFIX) :]
    if image := _IMAGE.match(rest):
        video = shelf.video(int(image.group(1)) - ID_BASE)
        kind, size = image.group(2), (int(image.group(3)), int(image.group(4)))
        if video is None or kind not in image_kinds(video) or IMAGE_SIZES[kind] != size:
            return missing
        body, kind_of = png(*size, _colour(video.index, kind)), "image/png"
    elif chapters := _CHAPTERS.match(rest):
        video = shelf.video(int(chapters.group(1)) - ID_BASE)
        if video is None or not chapters_track(shelf, video):
            return missing
        body, kind_of = chapter_cues.vtt(video), "text/vtt"
    else:
        return missing
    headers = {"Content-Type": kind_of, "Content-Length": str(len(body))}
    return Served(200, headers, b"" if method == "HEAD" else body)


def _colour(index: int, kind: str) -> tuple[int, int, int]:
    n = 2 * index + (kind == "thumbnail")
    return n * 37 % 256, n * 91 % 256, n * 53 % 256
