"""The "vimeo" profile's target side, what a viewer sees (issue 42): a video's pictures (a custom thumbnail uploaded to
the link a new picture names, then made active), its chapters, and the account's folders and showcases with their
videos in order. Mixed into the `Vimeo` profile (platforms/vimeo.py), whose routes name these ops "store_*"; where a
path is the library's too (pictures, chapters, /me/albums), a library reads it through `source_ops`.

Documents: vimeo/openapi api.yaml (febb900, 2023-12-13) for pictures, folders (projects) and showcases (albums); the
API reference as konfig-sdks/vimeo-python-sdk generates it (2024-03-19) for chapters, folders and showcases where
api.yaml predates them; PyVimeo 1.1.2 (vimeo/upload.py, UploadPictureMixin.upload_picture) for the picture's three
steps as the official SDK sends them.

- Pictures: `POST /videos/{id}/pictures` ("This method adds a thumbnail image to the specified video", body optional:
  `active`, `time` "Creates an image of the video from the given time offset") answers 201 with the picture and its
  `link`, "The upload URL for the picture. This field appears when you create the picture resource for the first
  time". The image is PUT to that link (PyVimeo: `put(picture['link'], data=f)`, answered 200); here the link is
  signed, expires (an hour: the life is not documented) and takes one file, a JPEG, PNG or WebP told by its bytes
  (what another file gets is not documented: 400 here). `PATCH .../pictures/{picture} {active}` ("Whether this
  thumbnail is the default") makes it the video's active picture, the one the video's `pictures` shows ("The
  video's active picture"); activating a picture whose image never came is refused here (400; not documented).
  `GET .../pictures` "returns all the thumbnail images", `GET`/`DELETE .../pictures/{picture}` one (204). The
  video's own frame is picture 1, `type` default, active until a custom one is.
- Chapters (reference, Videos\\Chapters): `POST /videos/{id}/chapters {title, timecode}` "adds a chapter" (timecode
  "in seconds from the start of the video"), `GET` "returns every chapter" (paged, per_page up to 100), `GET`,
  `PATCH` ("edits the specified chapter") and `DELETE` one. Which timecodes Vimeo accepts (the first at 0, a least
  spacing, past the end) is not documented: here a title and a timecode >= 0 are required, nothing more, and two
  chapters at one timecode are both kept (so a test sees a chapter written twice).
- Folders (Projects): `POST /me/projects {name}` ("creates a new folder"; 201, the Project with its `uri`
  /users/{user}/projects/{id}), `GET /me/projects` (page, per_page, `query` "The search query to use to filter the
  results": matched here against the name, case-insensitive), `GET /me/projects/{id}`, `GET .../videos`,
  `PUT .../videos/{video}` ("adds a single video to the specified folder"; 204) and `DELETE` (204). A video is in
  one folder, its `parent_folder` ("Information about the folder that contains the video"): a second PUT moves it.
- Showcases (Albums): `POST /me/albums {name, description, sort, privacy, password}` (201; `sort` one of added_first,
  added_last, alphabetical, arranged "as arranged by the owner of the showcase", comments, likes, newest, oldest,
  plays; privacy anybody, embed_only, nobody, password, team, unlisted), `GET /me/albums` (`query` as above),
  `GET /me/albums/{id}`, `GET .../videos` (sort `manual` "Sort the results as the user has arranged them"),
  `PUT .../videos {videos}` ("replaces all the existing videos in an album", a comma-separated list of video URIs;
  201), `PUT .../videos/{video}` ("adds a single video"; 204), `GET .../videos/{video}` ("determine whether the album
  contains the specified video": 404 when not) and `DELETE` (204). The arrangement: a replace's list in its order,
  a single add placed last (neither is documented: the simulator's reading of "arranged").

What a player reads: the active picture's image at its `sizes[].link`, on the video's media host (`picture_file`),
unauthenticated as Vimeo's image CDN is.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
import struct
import time
import urllib.parse
from typing import TYPE_CHECKING

from .. import media
from ..profile import Call, Reply, derived_id, iso_offset
from .apivideo_extras import image_type
from .vimeo_library import ALBUM_VIDEO_SORTS, listed
from .vimeo_target import SORTS, USER_ID, filtered, refusal

if TYPE_CHECKING:
    from ..profile import Store
    from ..video import Video

PICTURE_LINK_TTL_S = 3600
PICTURE_MAX_BYTES = 10 * 1024 * 1024  # no limit is documented: the simulator's
DEFAULT_PICTURE = "1"  # the video's own frame
FOLDERS, ALBUMS = "vimeo_folders", "vimeo_albums"  # where store.account keeps them
FOLDER_BASE, ALBUM_BASE = 20_000_000, 30_000_000
FOLDER_SORTS = ("date", "default", "modified_time", "name", "pinned_on")
ALBUM_SORTS = ("alphabetical", "date", "default", "duration", "videos")
ALBUM_ORDERS = (
    "added_first",
    "added_last",
    "alphabetical",
    "arranged",
    "comments",
    "likes",
    "newest",
    "oldest",
    "plays",
)
ALBUM_PRIVACY = ("anybody", "embed_only", "nobody", "password", "team", "unlisted")
_SUFFIX = {"image/jpeg": "jpg", "image/png": "png", "image/webp": "webp"}
_KEY = secrets.token_bytes(16)  # signs the picture upload links this process hands out


def _sig(vid: str, pid: str, expires: int) -> str:
    return hmac.new(_KEY, f"picture/{vid}/{pid}/{expires}".encode(), hashlib.sha256).hexdigest()[:32]


def _body(raw: bytes) -> dict | None:
    """A JSON object body (an empty body is an empty object), or None when it is not one."""
    try:
        doc = json.loads(raw) if raw else {}
    except (ValueError, UnicodeDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


def _size(content: bytes) -> tuple[int, int]:
    """A PNG's size from its header; (0, 0) for another kind (the simulator reads no other header)."""
    if content[:8] == b"\x89PNG\r\n\x1a\n" and len(content) >= 24:
        width, height = struct.unpack(">II", content[16:24])
        return width, height
    return 0, 0


def _flag(body: dict, name: str) -> bool | None:
    """A boolean field, where PyVimeo sends its activation as the string "true" (upload_picture's `data={"active":
    "true"}`): taken as Vimeo must take it for its own SDK to work. None when absent; ValueError when not one."""
    value = body.get(name)
    if value is None or isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise ValueError(f"{name} must be a boolean")


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


# ----- pictures


def pictures_of(video: Video) -> dict[str, dict]:
    return video.extras.setdefault("pictures", {})


def active_custom(video: Video) -> str | None:
    return next((pid for pid, held in pictures_of(video).items() if held["active"]), None)


def picture_doc(video: Video, pid: str, at: str) -> dict:
    """A picture as api.yaml's `picture`: the video's frame (picture 1) or a custom one, its image's link once
    it came."""
    link: str | None
    if pid == DEFAULT_PICTURE:
        active, kind, link, size = active_custom(video) is None, "default", f"{at}/thumbnail.jpg", (1920, 1080)
    else:
        held = pictures_of(video)[pid]
        active, kind, size = held["active"], "custom", _size(held["content"] or b"")
        link = f"{at}/pictures/{pid}.{_SUFFIX.get(held['type'], 'jpg')}" if held["content"] else None
    doc = {
        "uri": f"/videos/{video.id}/pictures/{pid}",
        "active": active,
        "type": kind,
        "default_picture": False,
        "resource_key": derived_id(f"picture/{video.id}/{pid}", 40),
        "base_link": link,
        "sizes": [],
    }
    if link:
        doc["sizes"] = [{"width": size[0], "height": size[1], "link": link, "link_with_play_button": f"{link}?play=1"}]
    return doc


def _picture_ids(video: Video) -> list[str]:
    return [DEFAULT_PICTURE, *pictures_of(video)]


# ----- chapters


def chapter_doc(video: Video, cid: str, held: dict) -> dict:
    """A chapter as the reference's Chapter: `uri`, `title`, `timecode`, `thumbnails`, `active_thumbnail_uri`."""
    return {
        "uri": f"/videos/{video.id}/chapters/{cid}",
        "title": held["title"],
        "timecode": held["timecode"],
        "thumbnails": [],
        "active_thumbnail_uri": None,
    }


def _chapter_problem(body: dict, partial: bool) -> str | None:
    """A title (a non-empty string) and a timecode (seconds, >= 0): the simulator's reading, none is documented."""
    if not partial or "title" in body:
        if not isinstance(body.get("title"), str) or not body["title"].strip():
            return "title must be a non-empty string"
    if not partial or "timecode" in body:
        if not _number(body.get("timecode")) or body["timecode"] < 0:
            return "timecode must be a number of seconds from the start of the video"
    return None


# ----- folders and showcases


def folder_doc(store: Store, fid: str, held: dict) -> dict:
    uri = f"/users/{USER_ID}/projects/{fid}"
    total = sum(1 for v in store.videos.values() if v.extras.get("folder") == fid)
    return {
        "uri": uri,
        "name": held["name"],
        "created_time": iso_offset(held["created"]),
        "modified_time": iso_offset(held["created"]),
        "metadata": {"connections": {"videos": {"uri": f"{uri}/videos", "options": ["GET"], "total": total}}},
    }


def album_doc(aid: str, held: dict) -> dict:
    uri = f"/users/{USER_ID}/albums/{aid}"
    return {
        "uri": uri,
        "name": held["name"],
        "description": held["description"],
        "sort": held["sort"],
        "privacy": {"view": held["privacy"]},
        "link": f"https://vimeo.com/showcase/{aid}",
        "created_time": iso_offset(held["created"]),
        "modified_time": iso_offset(held["created"]),
        "metadata": {
            "connections": {"videos": {"uri": f"{uri}/videos", "options": ["GET"], "total": len(held["videos"])}}
        },
    }


def _named(items: dict, query: str) -> list[str]:
    """The ids of the folders or showcases a `query` finds (in their names, case-insensitive), oldest first."""
    wanted = query.lower()
    return [k for k, held in sorted(items.items(), key=lambda kv: kv[1]["created"]) if wanted in held["name"].lower()]


def _album_problem(body: dict) -> str | None:
    """api.yaml create_album: `name` required; `sort` and `privacy` from their enums; a password for `password`."""
    if not isinstance(body.get("name"), str) or not body["name"].strip():
        return "name is required"
    if body.get("description") is not None and not isinstance(body["description"], str):
        return "description must be a string"
    if body.get("sort", "arranged") not in ALBUM_ORDERS or body.get("privacy", "anybody") not in ALBUM_PRIVACY:
        return "sort or privacy is not one of the allowed values"
    if body.get("privacy") == "password" and not isinstance(body.get("password"), str):
        return "The album's password is required when privacy is password"
    return None


class TargetExtras:
    """The store ops of the "vimeo" profile's target side (mixed into Vimeo)."""

    if TYPE_CHECKING:  # what the profile it is mixed into gives it

        def error(self, kind: str, message: str | None = None, **detail: object) -> Reply: ...

        def render_video(self, video: Video, now: float) -> dict: ...

    def viewer_fields(self, video: Video, at: str, ready: bool) -> dict:
        """What render_video shows of this: the active picture (once transcoded, or once a custom one is active),
        the folder, and the pictures' connection (PyVimeo reads `metadata.connections.pictures.uri`)."""
        folder = video.extras.get("folder")
        out: dict = {
            "parent_folder": (
                {"uri": f"/users/{USER_ID}/projects/{folder}", "name": video.extras.get("folder_name")}
                if folder
                else None
            ),
            "connections": {
                "pictures": {
                    "uri": f"/videos/{video.id}/pictures",
                    "options": ["GET", "POST"],
                    "total": len(_picture_ids(video)),
                }
            },
        }
        custom = active_custom(video)
        if ready or custom:
            out["pictures"] = picture_doc(video, custom or DEFAULT_PICTURE, at)
        return out

    def picture_file(self, video: Video, rest: list[str]) -> tuple[int, str, bytes] | None:
        """A custom picture's image at `pictures/<id>.<suffix>` under the video's media key; None: another path."""
        if len(rest) != 2 or rest[0] != "pictures":
            return None
        held = pictures_of(video).get(rest[1].rpartition(".")[0])
        if not held or not held["content"]:
            return 404, media.TEXT, b"no such picture\n"
        return 200, held["type"], held["content"]

    def store_op(self, cfg, op: str, store: Store, call: Call, raw: bytes, fetched: object, now: float) -> Reply:
        if op.startswith("store_project"):
            return self._folders(op, store, call, raw, now)
        if op.startswith("store_album"):
            return self._albums(op, store, call, raw, now)
        video = store.videos.get(call.params.get("id", ""))
        if video is None:
            return self.error("not_found")
        if op.startswith("store_picture"):
            return self._pictures(op, video, call, raw)
        if op.startswith("store_chapter"):
            return self._chapters(op, video, call, raw)
        return self.error("no_route", "not found")

    # ----- pictures

    def _pictures(self, op: str, video: Video, call: Call, raw: bytes) -> Reply:
        at = f"{media.base(video, 'vimeo')}/{video.id}"
        held = pictures_of(video)
        if op == "store_pictures":
            answer = listed(
                f"/videos/{video.id}/pictures", call, _picture_ids(video), lambda p: picture_doc(video, p, at)
            )
            return Reply(200, answer) if isinstance(answer, dict) else self.error("invalid", answer)
        if op == "store_picture_add":
            return self._new_picture(video, call, raw, at)
        pid = call.params.get("picture", "")
        if pid != DEFAULT_PICTURE and pid not in held:
            return refusal(404, 5000, "The requested picture couldn't be found.")
        if op == "store_picture_upload":
            return self._upload(video, pid, call, raw)
        if op == "store_picture":
            return Reply(200, picture_doc(video, pid, at))
        if op == "store_picture_delete":
            if pid == DEFAULT_PICTURE:
                return refusal(400, 2204, "The video's own frame cannot be deleted.")
            del held[pid]
            return Reply(204, raw=b"")
        body = _body(raw)
        try:
            active = _flag(body, "active") if body is not None else False
        except ValueError:
            body = None
        if body is None:
            return refusal(400, 2204, "active must be a boolean")
        if active is True and pid != DEFAULT_PICTURE:
            if not held[pid]["content"]:
                return refusal(400, 2204, "The picture has no image yet: upload it to its link first.")
            for other in held.values():
                other["active"] = False
            held[pid]["active"] = True
        elif active is True:  # the frame made active again: no custom picture is
            for other in held.values():
                other["active"] = False
        elif active is False and pid != DEFAULT_PICTURE:
            held[pid]["active"] = False
        return Reply(200, picture_doc(video, pid, at))

    def _new_picture(self, video: Video, call: Call, raw: bytes, at: str) -> Reply:
        body = _body(raw)
        if body is None:
            return refusal(400, 2205, "The body of the request isn't formatted properly.")
        try:
            active = _flag(body, "active")
        except ValueError:
            return refusal(400, 2204, "active must be a boolean")
        if "time" in body and (not _number(body["time"]) or body["time"] < 0):
            return refusal(400, 2204, "time must be a number of seconds")
        seq = video.extras.get("picture_seq", 1) + 1
        video.extras["picture_seq"] = seq
        pid, expires = str(seq), int(time.time() + PICTURE_LINK_TTL_S)
        made: dict = {"active": False, "type": None, "content": None, "expires": expires}
        pictures_of(video)[pid] = made
        if "time" in body:  # "Creates an image of the video from the given time offset": a frame, no upload
            made.update(type="image/jpeg", content=media.THUMBNAIL)
            if active:
                for other in pictures_of(video).values():
                    other["active"] = False
                made["active"] = True
            return Reply(201, picture_doc(video, pid, at))
        query = urllib.parse.urlencode({"expires": expires, "sig": _sig(video.id, pid, expires)})
        link = f"{call.base_url}/picture-uploads/{video.id}/{pid}?{query}"
        return Reply(201, {**picture_doc(video, pid, at), "link": link})

    def _upload(self, video: Video, pid: str, call: Call, raw: bytes) -> Reply:
        """The image PUT to a new picture's link: signed here, before it expires, once."""
        held = pictures_of(video).get(pid)
        query = urllib.parse.parse_qs(call.query)
        try:
            expires = int(query.get("expires", [""])[0])
        except ValueError:
            expires = 0
        if held is None or not hmac.compare_digest(query.get("sig", [""])[0], _sig(video.id, pid, expires)):
            return refusal(403, 8003, "The upload link is not valid.")
        if time.time() > expires:
            return refusal(403, 8003, "The upload link has expired.")
        if held["content"] is not None:
            return refusal(403, 8003, "The upload link was used already.")
        kind = image_type(raw)
        if kind is None or len(raw) > PICTURE_MAX_BYTES:
            return refusal(400, 2204, "The picture must be a JPEG, PNG or WebP image.")
        held.update(content=raw, type=kind)
        return Reply(200, {})

    # ----- chapters

    def _chapters(self, op: str, video: Video, call: Call, raw: bytes) -> Reply:
        held: dict = video.extras.setdefault("chapters", {})
        if op == "store_chapters":
            ordered = sorted(held, key=lambda c: (held[c]["timecode"], int(c)))
            answer = listed(f"/videos/{video.id}/chapters", call, ordered, lambda c: chapter_doc(video, c, held[c]))
            return Reply(200, answer) if isinstance(answer, dict) else self.error("invalid", answer)
        body = _body(raw) if op in ("store_chapter_add", "store_chapter_edit") else {}
        if body is None:
            return refusal(400, 2205, "The body of the request isn't formatted properly.")
        if op == "store_chapter_add":
            problem = _chapter_problem(body, partial=False)
            if problem:
                return refusal(400, 2204, problem)
            seq = video.extras.get("chapter_seq", 0) + 1
            video.extras["chapter_seq"] = seq
            held[str(seq)] = {"title": body["title"], "timecode": body["timecode"]}
            return Reply(201, chapter_doc(video, str(seq), held[str(seq)]))
        cid = call.params.get("chapter", "")
        if cid not in held:
            return refusal(404, 5000, "The requested chapter couldn't be found.")
        if op == "store_chapter_delete":
            del held[cid]
            return Reply(204, raw=b"")
        if op == "store_chapter_edit":
            problem = _chapter_problem(body, partial=True)
            if problem:
                return refusal(400, 2204, problem)
            held[cid].update({k: body[k] for k in ("title", "timecode") if k in body})
        return Reply(200, chapter_doc(video, cid, held[cid]))

    # ----- folders

    def _folders(self, op: str, store: Store, call: Call, raw: bytes, now: float) -> Reply:
        folders: dict = store.account.setdefault(FOLDERS, {})
        if op == "store_projects":
            query = urllib.parse.parse_qs(call.query).get("query", [""])[0]
            chosen = _named(folders, query)
            answer = listed("/me/projects", call, chosen, lambda f: folder_doc(store, f, folders[f]), FOLDER_SORTS)
            return Reply(200, answer) if isinstance(answer, dict) else self.error("invalid", answer)
        if op == "store_project_create":
            body = _body(raw)
            if body is None or not isinstance(body.get("name"), str) or not body["name"].strip():
                return refusal(400, 2204, "name is required")
            fid = str(FOLDER_BASE + len(folders) + 1)
            folders[fid] = {"name": body["name"], "created": time.time()}
            return Reply(201, folder_doc(store, fid, folders[fid]))
        fid = call.params.get("project", "")
        if fid not in folders:
            return refusal(404, 5000, "The requested folder couldn't be found.")
        if op == "store_project":
            return Reply(200, folder_doc(store, fid, folders[fid]))
        if op == "store_project_videos":
            inside = [v for v in store.videos.values() if v.extras.get("folder") == fid]
            answer = listed(f"/me/projects/{fid}/videos", call, inside, lambda v: self._video_doc(v, call, now), SORTS)
            return Reply(200, answer) if isinstance(answer, dict) else self.error("invalid", answer)
        video = store.videos.get(call.params.get("id", ""))
        if video is None:
            return self.error("not_found")
        if op == "store_project_add":
            # A video is in one folder: put here, it leaves another.
            video.extras.update(folder=fid, folder_name=folders[fid]["name"])
        elif video.extras.get("folder") == fid:
            video.extras.pop("folder", None)
        return Reply(204, raw=b"")

    # ----- showcases

    def _albums(self, op: str, store: Store, call: Call, raw: bytes, now: float) -> Reply:
        albums: dict = store.account.setdefault(ALBUMS, {})
        if op == "store_albums":
            query = urllib.parse.parse_qs(call.query).get("query", [""])[0]
            chosen = _named(albums, query)

            def render(aid: str) -> dict:
                doc = filtered(album_doc(aid, albums[aid]), _fields(call))
                return doc if isinstance(doc, dict) else {}

            answer = listed("/me/albums", call, chosen, render, ALBUM_SORTS)
            return Reply(200, answer) if isinstance(answer, dict) else self.error("invalid", answer)
        if op == "store_album_create":
            body = _body(raw)
            if body is None:
                return refusal(400, 2205, "The body of the request isn't formatted properly.")
            problem = _album_problem(body)
            if problem:
                return refusal(400, 2204, problem)
            aid = str(ALBUM_BASE + len(albums) + 1)
            albums[aid] = {
                "name": body["name"],
                "description": body.get("description"),
                "sort": body.get("sort", "arranged"),
                "privacy": body.get("privacy", "anybody"),
                "created": time.time(),
                "videos": [],
            }
            return Reply(201, album_doc(aid, albums[aid]))
        aid = call.params.get("album", "")
        if aid not in albums:
            return refusal(404, 5000, "The requested showcase couldn't be found.")
        held = albums[aid]
        if op == "store_album":
            return Reply(200, album_doc(aid, held))
        if op == "store_album_videos":
            return self._album_videos(store, aid, held, call, now)
        if op == "store_album_replace":
            return self._replace(store, held, raw)
        video = store.videos.get(call.params.get("id", ""))
        if op == "store_album_video":
            if video is None or video.id not in held["videos"]:
                return refusal(404, 5000, "No such album exists, or the video wasn't found in it.")
            return Reply(200, self._video_doc(video, call, now))
        if video is None:
            return self.error("not_found")
        if op == "store_album_add" and video.id not in held["videos"]:
            held["videos"].append(video.id)  # a single add goes last in the arrangement (not documented)
        elif op == "store_album_remove" and video.id in held["videos"]:
            held["videos"].remove(video.id)
        return Reply(204, raw=b"")

    def _album_videos(self, store: Store, aid: str, held: dict, call: Call, now: float) -> Reply:
        """The showcase's videos: `manual` (and `default` on an arranged showcase) in its arrangement; `date` and
        `alphabetical` as they say."""
        query = urllib.parse.parse_qs(call.query)
        sort, direction = query.get("sort", ["default"])[0], query.get("direction", [""])[0]
        videos = [store.videos[v] for v in held["videos"] if v in store.videos]
        if sort == "date":
            videos.sort(key=lambda v: v.seq, reverse=direction != "asc")
        elif sort == "alphabetical":
            videos.sort(key=lambda v: (v.request.get("name") or "").lower(), reverse=direction == "desc")
        elif sort == "default" and held["sort"] in ("newest", "added_first"):
            videos.reverse()
        elif direction == "desc":
            videos.reverse()
        path = f"/me/albums/{aid}/videos"
        answer = listed(path, call, videos, lambda v: self._video_doc(v, call, now), ALBUM_VIDEO_SORTS)
        return Reply(200, answer) if isinstance(answer, dict) else self.error("invalid", answer)

    def _replace(self, store: Store, held: dict, raw: bytes) -> Reply:
        """`PUT .../videos {videos}`: "replaces all the existing videos in an album", in the list's order."""
        body = _body(raw)
        given = body.get("videos") if body is not None else None
        if not isinstance(given, str) or not given.strip():
            return refusal(400, 2204, "videos must be a comma-separated list of video URIs")
        ids = [uri.strip().removeprefix("/videos/") for uri in given.split(",") if uri.strip()]
        unknown = [i for i in ids if i not in store.videos]
        if unknown:
            return refusal(400, 2204, f"No such video: /videos/{unknown[0]}")
        held["videos"] = list(dict.fromkeys(ids))
        return Reply(201, raw=b"")

    def _video_doc(self, video: Video, call: Call, now: float) -> dict:
        doc = filtered(self.render_video(video, now), _fields(call))
        return doc if isinstance(doc, dict) else {}


def _fields(call: Call) -> str | None:
    return urllib.parse.parse_qs(call.query).get("fields", [None])[0]
