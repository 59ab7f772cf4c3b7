"""What a JW Player media made on the "jwplayer" profile shows besides its file and captions (issue 42): its
thumbnails and poster, its chapters track's direct upload, and the property's manual playlists with their media in
order. Mixed into JwPlayer (jwplayer.py) as its store ops; the library's side (a source's posters and playlists) is
jwplayer_extras.py's, whose playlist shape this one writes.

As JW Player documents them (docs.jwplayer.com unless said), each beside its code:
- thumbnails: "Manage a media poster" (platform/reference/vdh-manage-a-media-poster): every upload gets "An image
  (static) poster created from the 10th second of your video" (listed here as a thumbnail of the media, with
  `source_type` "video_frame": the value is the simulator's, not documented); "a new custom thumbnail must be created
  and promote[d]": `POST /v2/sites/{site_id}/thumbnails` with `relationships.media[{id}]` and `upload` (jwplatform-go
  thumbnails.go: method "fetch" with `download_url`, `thumbnail_type` static), listed with `source_type`
  "custom_upload" (thumbnails.go's fixture); JW fetches the image after the answer (here on a thread, loopback only,
  JPEG, PNG or WebP, as bunny_extras fetches: status processing, then ready or failed, our names: not documented);
  `PATCH .../thumbnails/{thumbnail_id}` with `relationships.media[{id, is_poster: true}]` promotes it: "For a media
  resource, you can only select one static poster", so the others of that media stop being its poster ("Previous
  posters remain associated to the media resource as thumbnails"). `GET .../thumbnails/` takes `q=media_id:<id>`
  (as peer code asks it; any other q is refused 400 here) and answers `{thumbnails, page, page_length, total}`. The
  poster a player reads (`/v2/media/{id}/poster.jpg` at the Delivery API, here the media's `poster.jpg`) is the
  promoted image once JW has it, else the frame; each thumbnail's own image is at its `delivery_url`;
- a text track's direct upload (jwplatform-go text_tracks.go: method "direct" (the default) with `file_format`;
  "Create responses may include an upload link if the 'direct' upload method is used"): the track is `created`
  until its file is PUT to `upload_link` (jwplatform-py upload.py `_upload_to_s3`: the bytes, no credentials; the
  answer's `ETag` is the md5 in quotes), then read as a fetched one is (ready, or draft without auto_publish;
  failed with why). `DELETE .../text_tracks/{track_id}/` removes a track (text_tracks.go);
- manual playlists: `POST /v2/sites/{site_id}/playlists/manual_playlist/` with `metadata` {title, description,
  custom_params, media_filter: {include: {values}}}, `GET` and `PATCH .../playlists/{playlist_id}/manual_playlist/`
  (jwplatform-py 2.2.2 `_ManualPlaylistClient`; the "Create a playlist" recipe; peer code's
  CreateManualPlaylistPayload), `GET .../playlists/` pages them all (`page`, `page_length`). A PATCH replaces each
  metadata field it names, whole (`media_filter` with it: our reading). Media ids the property does not hold are
  refused 400, and a playlist holds MAX_MANUAL media at most (both our choices: not documented).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
import urllib.parse
from typing import TYPE_CHECKING

from ..profile import Reply, alnum_id
from ..texttracks import read_caption
from ..video import READY
from .bunny_extras import fetch_thumbnail
from .jwplayer_extras import MAX_MANUAL
from .jwplayer_library import error, iso, paging

if TYPE_CHECKING:
    from ..profile import Call, Store
    from ..video import Video

THUMBNAILS, PLAYLISTS = "jw_thumbnails", "jw_playlists"  # in store.account
UPLOADS = "jw_uploads"  # in a media's extras: upload token -> track id
FRAME = "video_frame"  # the simulator's name for the poster JW makes from the 10th second
CUSTOM = "custom_upload"
_SUFFIX = {"image/png": "png", "image/webp": "webp"}


def _body(raw: bytes) -> dict | None:
    try:
        body = json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


# ----- thumbnails


def frame_id(media_id: str) -> str:
    return f"F{media_id}"


def thumbnails_of(held: dict, video: Video) -> list[dict]:
    """The media's thumbnails, its frame first (listed once the media is ready), then each one made for it."""
    frame = {"id": frame_id(video.id), "media": video.id, "source": FRAME, "status": "ready", "created": video.created}
    made = [t for t in held.values() if t["media"] == video.id]
    return ([frame] if video.state == READY else []) + made


def poster_id(held: dict, video: Video) -> str:
    """The thumbnail that is the media's poster: the last one promoted, else its frame."""
    promoted = [t for t in held.values() if t["media"] == video.id and t.get("poster")]
    return promoted[-1]["id"] if promoted else frame_id(video.id)


def render_thumbnail(held: dict, thumbnail: dict, video: Video, base: str) -> dict:
    poster = poster_id(held, video) == thumbnail["id"]
    suffix = _SUFFIX.get(thumbnail.get("type") or "", "jpg")
    return {
        "id": thumbnail["id"],
        "type": "thumbnail",
        "created": iso(thumbnail["created"]),
        "last_modified": iso(thumbnail.get("modified", thumbnail["created"])),
        "delivery_url": f"{base}/_play/jwplayer/{video.id}/thumbnails/{thumbnail['id']}.{suffix}",
        "thumbnail_type": "static",
        "source_type": thumbnail["source"],
        "status": thumbnail["status"],
        "error_message": thumbnail.get("error"),
        "metadata": {},
        "relationships": {"media": [{"id": video.id, "is_poster": poster}]},
    }


def poster_image(kept: dict, video: Video) -> tuple[str, bytes] | None:
    """The promoted image a player gets as the media's poster, once JW has it; None: the frame."""
    held = kept.get(THUMBNAILS, {})
    chosen = held.get(poster_id(held, video))
    if chosen is None or chosen.get("status") != "ready":
        return None
    return chosen["type"], chosen["content"]


def thumbnail_image(kept: dict, video: Video, name: str) -> tuple[str, bytes] | None:
    """A thumbnail's own image at its delivery URL (`thumbnails/<id>.<suffix>`)."""
    found = kept.get(THUMBNAILS, {}).get(name.rsplit(".", 1)[0])
    if found is None or found["media"] != video.id or found.get("status") != "ready":
        return None
    return found["type"], found["content"]


def _fetch_later(thumbnail: dict, url: str) -> None:
    """JW reads the image after its answer: a thread, outside the state lock (one dict's fields, set at once)."""

    def fetch() -> None:
        got = fetch_thumbnail(url)
        if isinstance(got, str):
            thumbnail.update(status="failed", error=got, modified=time.time())
        else:
            thumbnail.update(content=got[0], type=got[1], status="ready", modified=time.time())

    threading.Thread(target=fetch, daemon=True, name="jw-thumbnail").start()


# ----- the store ops


class TargetExtras:
    """The store ops of the "jwplayer" profile (mixed into JwPlayer)."""

    def store_op(self, cfg, op: str, store: Store, call: Call, raw: bytes, fetched: object, now: float) -> Reply:
        if op.startswith("store_thumbnail"):
            return self._thumbnails(op, store, call, raw)
        if op.startswith("store_playlist"):
            return self._playlists(op, store, call, raw)
        if op == "store_upload":
            return self._upload(store, call, raw)
        return error("no_route", "not found")

    def _thumbnails(self, op: str, store: Store, call: Call, raw: bytes) -> Reply:
        held: dict = store.account.setdefault(THUMBNAILS, {})
        if op == "store_thumbnails":
            params = urllib.parse.parse_qs(call.query)
            paged = paging(params)
            if isinstance(paged, Reply):
                return paged
            q = params.get("q", [""])[0].replace(" ", "")
            if not q.startswith("media_id:"):
                return error("invalid", "the simulator's q takes media_id:<id>")
            page, length = paged
            video = store.videos.get(q[len("media_id:") :])
            if video is None:  # a media the property does not hold has none
                return Reply(200, {"thumbnails": [], "page": page, "page_length": length, "total": 0})
            listed = thumbnails_of(held, video)
            shown = [render_thumbnail(held, t, video, call.base_url) for t in listed[(page - 1) * length :][:length]]
            return Reply(200, {"thumbnails": shown, "page": page, "page_length": length, "total": len(listed)})
        if op == "store_thumbnail_create":
            return self._thumbnail_create(held, store, call, raw)
        tid = call.params.get("thumb", "")
        found = held.get(tid)
        video = store.videos.get(found["media"]) if found else None
        if found is None or video is None:
            return error("not_found", "Thumbnail not found")
        if op == "store_thumbnail_update":
            body = _body(raw)
            related = body.get("relationships") if body is not None else None
            links = related.get("media") if isinstance(related, dict) else None
            if not isinstance(links, list) or not all(isinstance(m, dict) for m in links):
                return error("invalid", "relationships.media must be a list of {id, is_poster}")
            if any(link.get("id") != video.id for link in links):
                return error("invalid", "a thumbnail belongs to the media it was made for")
            if any(link.get("is_poster") is True for link in links):  # one static poster a media: this one only
                for other in held.values():
                    if other["media"] == video.id:
                        other["poster"] = other is found
            found["modified"] = time.time()
        return Reply(200, render_thumbnail(held, found, video, call.base_url))

    def _thumbnail_create(self, held: dict, store: Store, call: Call, raw: bytes) -> Reply:
        body = _body(raw)
        if body is None:
            return error("invalid", "the body must be a JSON object")
        links = body.get("relationships", {}).get("media") if isinstance(body.get("relationships"), dict) else None
        upload: dict = body["upload"] if isinstance(body.get("upload"), dict) else {}
        if not isinstance(links, list) or len(links) != 1 or not isinstance(links[0], dict):
            return error("invalid", "relationships.media must name the one media the thumbnail is for")
        video = store.videos.get(str(links[0].get("id")))
        if video is None:
            return error("not_found", "Media not found")
        if upload.get("method") != "fetch" or upload.get("thumbnail_type", "static") != "static":
            return error("invalid", "the simulator takes a static thumbnail by upload.method fetch")
        url = upload.get("download_url")
        if not isinstance(url, str) or urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            return error("invalid", "upload.download_url must be an http(s) URL")
        tid = alnum_id(8)
        now = time.time()
        # Every field the fetch sets is there from the start: the thread changes values, never the dict's size.
        held[tid] = {"id": tid, "media": video.id, "source": CUSTOM, "status": "processing", "created": now,
                     "modified": now, "content": None, "type": None, "error": None, "poster": False}  # fmt: skip
        answer = Reply(201, render_thumbnail(held, held[tid], video, call.base_url))  # processing, as answered
        _fetch_later(held[tid], url)
        return answer

    # ----- manual playlists

    def _playlists(self, op: str, store: Store, call: Call, raw: bytes) -> Reply:
        held: dict = store.account.setdefault(PLAYLISTS, {})
        if op == "store_playlists":
            paged = paging(urllib.parse.parse_qs(call.query))
            if isinstance(paged, Reply):
                return paged
            page, length = paged
            chosen = sorted(held.values(), key=lambda p: p["created"])
            shown = [render_playlist(p, False) for p in chosen[(page - 1) * length :][:length]]
            return Reply(200, {"playlists": shown, "page": page, "page_length": length, "total": len(held)})
        found: dict | None = None
        if op != "store_playlist_create":
            found = held.get(call.params.get("playlist", ""))
            if found is None:
                return error("not_found", "Manual playlist not found")
            if op == "store_playlist":
                return Reply(200, render_playlist(found, True))
        body = _body(raw)
        metadata = body.get("metadata") if body is not None else None
        if not isinstance(metadata, dict):
            return error("invalid", "metadata must be an object")
        changed = playlist_fields(metadata, store)
        if isinstance(changed, str):
            return error("invalid", changed)
        if found is None:
            pid = alnum_id(8)
            found = held[pid] = {"id": pid, "title": "", "description": None, "custom_params": {}, "values": []}
            found["created"] = time.time()
        found.update(changed, modified=time.time())
        return Reply(201 if op == "store_playlist_create" else 200, render_playlist(found, True))

    # ----- a text track's file, PUT to its upload link

    def _upload(self, store: Store, call: Call, raw: bytes) -> Reply:
        video = store.videos.get(call.params.get("id", ""))
        tid = video.extras.get(UPLOADS, {}).pop(call.params.get("token", ""), None) if video is not None else None
        track = next((t for t in video.texts if t.id == tid), None) if video is not None and tid else None
        if track is None or track.status != "created":
            return Reply(403, {"errors": [{"code": "forbidden", "description": "the upload link is not valid"}]})
        fmt, why = read_caption(raw, webvtt_only=False)
        track.content, track.format = raw, fmt
        track.status, track.error = (track.ready_as, None) if fmt else ("errored", why)
        return Reply(200, {}, headers={"ETag": f'"{hashlib.md5(raw).hexdigest()}"'})


def upload_link(video: Video, base_url: str, track_id: str) -> str:
    """A one-time link the track's file is PUT to (S3's pre-signed one, on the simulator's own host), kept with the
    media until the file comes."""
    token = secrets.token_urlsafe(16)
    video.extras.setdefault(UPLOADS, {})[token] = track_id
    return f"{base_url}/_upload/jwplayer/{video.id}/{token}"


def playlist_fields(metadata: dict, store: Store) -> dict | str:
    """The manual playlist fields a create or PATCH names, checked; or why not."""
    out: dict = {}
    for name in ("title", "description"):
        if name in metadata:
            if metadata[name] is not None and not isinstance(metadata[name], str):
                return f"metadata.{name} must be a string"
            out[name] = metadata[name] if name == "description" else (metadata[name] or "")
    if "custom_params" in metadata:
        custom = metadata["custom_params"]
        if not isinstance(custom, dict) or not all(isinstance(v, str) for v in custom.values()):
            return "metadata.custom_params must be an object of strings"
        out["custom_params"] = dict(custom)
    if "media_filter" in metadata:
        include = metadata["media_filter"].get("include") if isinstance(metadata["media_filter"], dict) else None
        values = include.get("values") if isinstance(include, dict) else None
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            return "metadata.media_filter.include.values must be a list of media ids"
        if len(values) > MAX_MANUAL:
            return f"a manual playlist holds {MAX_MANUAL} media at most"
        unknown = [v for v in values if v not in store.videos]
        if unknown:
            return f"no such media: {unknown[0]}"
        out["values"] = list(dict.fromkeys(values))
    return out


def render_playlist(playlist: dict, with_media: bool) -> dict:
    """A manual playlist as the list and its own read show it (jwplayer_extras.py's shape for the library's)."""
    metadata: dict = {
        "title": playlist["title"],
        "description": playlist["description"],
        "custom_params": dict(playlist["custom_params"]),
        "playlist_type": "manual",
    }
    if with_media:
        metadata["media_filter"] = {"include": {"values": list(playlist["values"])}}
    return {
        "id": playlist["id"],
        "type": "playlist",
        "created": iso(playlist["created"]),
        "last_modified": iso(playlist.get("modified", playlist["created"])),
        "relationships": {},
        "metadata": metadata,
    }
