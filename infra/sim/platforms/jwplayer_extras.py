"""The "jwplayer" profile's library, what a viewer sees first (issue 42): each media's poster at the Delivery API (a
real JPEG) and the property's playlists, manual ones with their media in order. The media's chapters tracks and
publish date are jwplayer_library.py's, with the rest of a media.

Documents (docs.jwplayer.com unless said):
- the poster: "Manage a media poster" ("An image (static) poster created from the 10th second of your video",
  replaced by a custom one its owner uploads), at the Delivery API's `/v2/media/{media_id}/poster.jpg` (its media
  answer's `image` and `images[].src`, `width` 320 to 1920). "Protect your content with signed URLs": on a property
  with URL signing, `/v2/media/{media_id}/poster.jpg` takes a JWT (`resource` that path, `exp`) as `token`, and an
  unsigned request is refused 403; a media outside its publish window is delivered to no one but a signed request
  (404, as its media answer). Served here as a real JPEG (media.THUMBNAIL, 16x9) carrying a JPEG comment that names
  the media and the width asked, so a test can tell whose poster it read (the pixels are not what is tested);
- playlists: `GET /v2/sites/{site_id}/playlists/` (a collection: `page`, `page_length` as "Building a request" has
  them; `{playlists, page, page_length, total}` as the media list's envelope) and `GET .../playlists/{playlist_id}/
  manual_playlist/` (jwplatform-java's PlaylistsClient and jwplatform-py's ManualPlaylist client call these paths).
  A playlist: `{id, type, created, last_modified, metadata: {title, description, custom_params, playlist_type}}`;
  a manual one's media, in order, are `metadata.media_filter.include.values` (the form peer code reads and writes:
  a GetManualPlaylistResponse; the reference's schema was not readable, nor whether the list names each
  playlist's type: `playlist_type` here is our reading). "Manual playlists are populated & ordered by dragging &
  dropping videos into a playlist"; dynamic ones "automatically include or exclude videos that match content
  filtering rules" ("Building & Managing Playlists"): PLAYLISTS below has two manual and one dynamic, whose
  `manual_playlist` read is answered 404 (our choice: what JW answers is not documented). A deleted media leaves
  every playlist; a manual playlist holds its first MAX_MANUAL media here (our choice).
"""

from __future__ import annotations

import re
import struct
import urllib.parse
from dataclasses import dataclass

from .. import media
from ..library import EPOCH, Served, Shelf
from ..profile import Call, Reply
from .jwplayer_library import delivered, error, iso, library_id, library_index, paging

MAX_MANUAL = 500
_POSTER = re.compile(r"^v2/media/(J\d{7})/poster\.jpg$")


@dataclass(frozen=True)
class Playlist:
    """A playlist of the property: a manual one holds the media i with i % every == offset (its first MAX_MANUAL),
    in `arrangement`; a dynamic one a rule."""

    id: str
    title: str
    kind: str  # manual | dynamic
    every: int = 0
    offset: int = 0
    arrangement: str = ""  # reversed | rotated

    def media(self, shelf: Shelf) -> list[str]:
        held = [i for i in range(self.offset, shelf.size, self.every)[:MAX_MANUAL] if shelf.video(i) is not None]
        if self.arrangement == "reversed":
            held = held[::-1]
        elif self.arrangement == "rotated":
            held = held[len(held) // 2 :] + held[: len(held) // 2]
        return [library_id(i) for i in held]


PLAYLISTS = (
    Playlist("PLman001", "Top picks « 2021 »", "manual", every=6, offset=1, arrangement="reversed"),
    Playlist("PLman002", "Course: getting started", "manual", every=4, offset=3, arrangement="rotated"),
    Playlist("PLdyn003", "Latest uploads", "dynamic"),
)


def _render(playlist: Playlist, shelf: Shelf, with_media: bool) -> dict:
    metadata: dict = {
        "title": playlist.title,
        "description": None,
        "custom_params": {},
        "playlist_type": playlist.kind,
    }
    if with_media:
        metadata["media_filter"] = {"include": {"values": playlist.media(shelf)}}
    elif playlist.kind == "dynamic":
        metadata["media_filter"] = {"sort": "publish_start_date:dsc", "limit": 25}
    return {
        "id": playlist.id,
        "type": "playlist",
        "created": iso(EPOCH),
        "last_modified": iso(EPOCH + 86_400),
        "relationships": {},
        "metadata": metadata,
    }


def playlists_reply(op: str, shelf: Shelf, call: Call) -> Reply:
    """`src_playlists`: a page of the property's playlists; `src_manual_playlist`: one manual playlist."""
    if op == "src_manual_playlist":
        found = next((p for p in PLAYLISTS if p.id == call.params.get("playlist")), None)
        if found is None or found.kind != "manual":
            return error("not_found", "Manual playlist not found")
        return Reply(200, _render(found, shelf, with_media=True))
    paged = paging(urllib.parse.parse_qs(call.query))
    if isinstance(paged, Reply):
        return paged
    page, length = paged
    shown = [_render(p, shelf, with_media=False) for p in PLAYLISTS[(page - 1) * length : page * length]]
    return Reply(200, {"playlists": shown, "page": page, "page_length": length, "total": len(PLAYLISTS)})


# ----- the poster at the Delivery API


def poster(media_id: str, width: int) -> bytes:
    """A real JPEG (media.THUMBNAIL) with a comment segment (COM, 0xFFFE) naming the media and the width asked."""
    note = f"poster of {media_id}, width {width}".encode()
    return media.THUMBNAIL[:2] + b"\xff\xfe" + struct.pack(">H", len(note) + 2) + note + media.THUMBNAIL[2:]


def serve_poster(shelf: Shelf, method: str, rest: str, query: str) -> Served | None:
    """`v2/media/{id}/poster.jpg` below the delivery host (None: another path): signed with a JWT for that resource
    where the property signs its URLs, refused 403 without; 404 for a media delivered to no one or gone."""
    found = _POSTER.match(rest)
    if found is None:
        return None
    text = {"Content-Type": "text/plain"}
    video = shelf.video(library_index(found.group(1)))
    if video is None or video.fault is not None:
        return Served(404, text, b"Not Found")
    params = urllib.parse.parse_qs(query)
    refused = delivered(shelf.cfg, video, params.get("token", [None])[0], f"/v2/media/{found.group(1)}/poster.jpg")
    if refused:
        return Served(int(refused), text, b"Forbidden: a signed URL is required" if refused == "403" else b"")
    width = params.get("width", ["720"])[0]
    body = poster(found.group(1), int(width) if width.isdigit() else 720)
    headers = {"Content-Type": "image/jpeg", "Content-Length": str(len(body))}
    return Served(200, headers, b"" if method == "HEAD" else body)
