"""The "dropbox" profile: the Dropbox HTTP API v2 as a source of video files, as the official SDK (dropbox 12.2.4,
`dropbox/base.py`, `files.py`, `dropbox_client.py`) and dropbox.com/developers/documentation/http/documentation
describe it. Dropbox is no target here: creates are not routed.

- every route is an RPC: `POST /2/<route>` with a JSON body and `Authorization: Bearer <token>` (the config's
  token; a wrong one 401 `{"error_summary": "invalid_access_token/...", "error": {".tag":
  "invalid_access_token"}}`, which the SDK decodes as AuthError); answers are `application/json` (the SDK
  asserts that Content-Type); a route's own error is a 409 `{"error_summary", "error": {".tag": ...}}`;
- `files/list_folder {path, recursive, limit 1..2000, include_non_downloadable_files (default true)}` ->
  `{entries, cursor, has_more}`; `files/list_folder/continue {cursor}` (changes after the end: new files, and
  `deleted` entries for files deleted since the cursor was handed out); `files/list_folder/get_latest_cursor`
  (the folder's cursor as of now, no entries); `files/get_metadata {path}`; `files/get_temporary_link {path}`
  -> `{metadata, link}`, "This link will expire in four hours and afterwards you will get 410 Gone" (here
  link_ttl_s when set, else 4 hours; served at /_stream/dropbox/..., 410 once expired). Paths are looked up
  by the library's ids (`id:...`); any other path answers `path/not_found`;
- cursors are signed with the library's secret: after a reset of the simulator an old cursor answers 409
  `reset` ("the cursor has been invalidated. Call list_folder to obtain a new cursor");
- the owner moving a file: `files/move_v2 {from_path, to_path}` -> `{metadata}` (RelocationResult; "Move a file
  or folder to a different location in the user's Dropbox"), a video file by its id (`from_path` takes a path
  or an id) into another of the library's folders, its name kept (paths as `from_path`, renames and new
  folders are not simulated: 400, our choice); an id that is no video file answers 409
  `from_lookup/not_found`. The move keeps `server_modified` ("The last time the file was modified on
  Dropbox": a move changes no content) and `rev`. A cursor handed out before the move sees it at
  `list_folder/continue` ("Pass the cursor into list_folder/continue to see what's changed in the folder since
  your previous query"; developers.dropbox.com/detecting-changes-guide: "users may edit, move, and delete
  content at any time", and a cursor fetches "changes that occurred after the time the cursor value was
  issued"): the file at its new path where that is under the listed folder (with its old `server_modified`),
  a `deleted` entry at its old path where that was;
- the library: `/Videos` with README.txt and the folders (Marketing, Training/2021, Webinars); video i is
  `<title>.mp4` in its folder (FileMetadata: `id`, `name`, `path_lower`, `path_display`, `client_modified`,
  `server_modified` (the SDK's '%Y-%m-%dT%H:%M:%SZ'), `rev` (hex, 9 or more), `size`, `is_downloadable`,
  `content_hash` (64 hex)); a captioned video has sidecars `<title>.en.vtt` and `<title>.fr.srt` beside it;
  what a viewer sees first (issue 42; migrator.sources.sidecars): every third video (0, 3, ...) has a poster
  `<title>.jpg` beside it (a real JPEG, media.THUMBNAIL) and every fourth (0, 4, ...) a `<title>.chapters.vtt`
  (WebVTT chapter cues, CHAPTERS): files like any other, FileMetadata in the same listings (Dropbox has no
  thumbnail or chapters of its own for a file);
- faults in turn (library_unfetchable_every): "not_downloadable" (`is_downloadable: false`, left out of a
  listing with include_non_downloadable_files false), "unsupported" and "not_allowed" (get_temporary_link's
  409 `unsupported_file` / `not_allowed`, GetTemporaryLinkError). Dropbox processes nothing: no video is
  ever pending, library_processing_done and library_captions_processing change nothing; privacy has no
  meaning for a file here (library_private_every changes nothing);
- rate limits: none published; the profile's `limits`, 10 a second, are our choice. A 429 "can be JSON or plaintext":
  plain text here, with `Retry-After` in seconds, which the SDK reads as its backoff.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import secrets
import time
import urllib.parse
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import ClassVar

from ..bucket import RateState
from ..config import SimConfig
from ..library import FOLDERS, Item, Served, Shelf, media_url, serve_media
from ..media import THUMBNAIL
from ..profile import Call, MadeUp, Profile, Reply, same

ROOT = "/Videos"
FAULTS = ("not_downloadable", "unsupported", "not_allowed")
LINK_TTL_S = 4 * 3600.0
MAX_LIMIT = 2000
SIDECARS = (("en", "vtt"), ("fr", "srt"))
SRT = "1\n00:00:00,000 --> 00:00:02,000\nVideo {i}, {language}\n"
POSTER_EVERY, CHAPTERS_EVERY = 3, 4
# A chapters file's cues: where each chapter starts and its title (within the shortest library video, 30 s).
CHAPTERS = "WEBVTT\n\n00:00:00.000 --> 00:00:10.000\nIntro\n\n00:00:10.000 --> 00:00:20.000\nVideo {i}: the demo\n"


def file_id(index: int) -> str:
    return f"id:lib{index:010d}"


def sidecar_id(index: int, language: str) -> str:
    return f"id:cap{index:010d}{language}"


def index_of(fid: str) -> int:
    digits = fid[6:16] if fid.startswith(("id:lib", "id:cap")) else ""
    return int(digits) if digits.isdigit() else -1


def _folder_entries() -> list[dict]:
    paths = [ROOT]
    for folder in FOLDERS:
        parts = folder.split("/")
        for n in range(1, len(parts) + 1):
            path = f"{ROOT}/{'/'.join(parts[:n])}"
            if path not in paths:
                paths.append(path)
    found = [
        {
            ".tag": "folder",
            "name": p.rsplit("/", 1)[1],
            "id": f"id:dir{n:010d}",
            "path_lower": p.lower(),
            "path_display": p,
        }
        for n, p in enumerate(paths)
    ]
    return found


def _time(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def _error(summary: str, error: dict, status: int = 409) -> Reply:
    return Reply(status, {"error_summary": f"{summary}/..", "error": error})


def not_found() -> Reply:
    return _error("path/not_found", {".tag": "path", "path": {".tag": "not_found"}})


class Dropbox(Profile):
    name = "dropbox"
    # Dropbox publishes no number (its 429s carry Retry-After): 10 reads a second in bursts of 20 is our choice.
    limits: ClassVar[Mapping[str, float | int]] = {"read_rate": 10.0, "read_burst": 20}
    faults = FAULTS
    routes = (
        ("/2/files/list_folder", {"POST": "src_list_folder"}),
        ("/2/files/list_folder/continue", {"POST": "src_continue"}),
        ("/2/files/list_folder/get_latest_cursor", {"POST": "src_latest"}),
        ("/2/files/get_metadata", {"POST": "src_metadata"}),
        ("/2/files/get_temporary_link", {"POST": "src_link"}),
        ("/2/files/move_v2", {"POST": "src_move"}),
    )

    def made_up_source(self) -> MadeUp:
        """An OAuth 2 access token, and the folder to migrate."""
        token = secrets.token_urlsafe(32)
        return MadeUp({"token": token, "path": "/Videos"}, {"token": token})

    def authorize(self, cfg: SimConfig, call: Call) -> Reply | None:
        if cfg.token is None or same(call.headers.get("Authorization"), f"Bearer {cfg.token}"):
            return None
        return self.error("unauthorized")

    def error(self, kind: str, message: str | None = None, **detail: object) -> Reply:
        if kind in ("unauthorized", "forbidden"):
            return _error("invalid_access_token", {".tag": "invalid_access_token"}, 401)
        if kind == "throttled":  # "The Content-Type of the response can be JSON or plaintext"
            return Reply(429, raw=b"too_many_requests", headers={"Content-Type": "text/plain; charset=utf-8"})
        text = (message or kind).encode()
        status = {"not_found": 404, "no_route": 404, "method": 405, "invalid": 400}.get(kind, 500)
        return Reply(status, raw=b"Error in call to API function: " + text, headers={"Content-Type": "text/plain"})

    def new_id(self) -> str:  # pragma: no cover - Dropbox is no target
        raise NotImplementedError

    # ----- the library as files

    def file(self, shelf: Shelf, video: Item) -> dict:
        path = moved_to(shelf, video.index) or f"{ROOT}/{video.folder}/{video.title}.mp4"
        name = path.rsplit("/", 1)[1]
        out = {
            ".tag": "file",
            "name": name,
            "id": file_id(video.index),
            "client_modified": _time(video.created),
            "server_modified": _time(video.modified),
            "rev": f"{0x5A000000000 + video.index:x}",
            "size": video.size,
            "path_lower": path.lower(),
            "path_display": path,
            "is_downloadable": video.fault != "not_downloadable",
            "content_hash": hashlib.sha256(str(video.index).encode()).hexdigest(),
        }
        return out

    def sidecars(self, video: Item) -> list[dict]:
        found = []
        named = [
            (f"{video.title}.{language}.{ext}", language)
            for (language, _kind, _label), (_, ext) in zip(video.captions, SIDECARS, strict=False)
        ]
        if video.index % POSTER_EVERY == 0:
            named.append((f"{video.title}.jpg", "poster"))
        if video.index % CHAPTERS_EVERY == 0:
            named.append((f"{video.title}.chapters.vtt", "chapters"))
        for name, language in named:
            path = f"{ROOT}/{video.folder}/{name}"
            found.append(
                {
                    ".tag": "file",
                    "name": name,
                    "id": sidecar_id(video.index, language),
                    "client_modified": _time(video.created),
                    "server_modified": _time(video.modified),
                    "rev": f"{0x5B000000000 + video.index:x}",
                    "size": 64,
                    "path_lower": path.lower(),
                    "path_display": path,
                    "is_downloadable": True,
                    "content_hash": hashlib.sha256(name.encode()).hexdigest(),
                }
            )
        return found

    def _cursor(self, shelf: Shelf, at: dict) -> str:
        raw = json.dumps(at, separators=(",", ":")).encode()
        sig = hmac.new(shelf.state.secret, raw, hashlib.sha256).hexdigest()[:24]
        return base64.urlsafe_b64encode(raw).decode().rstrip("=") + "." + sig

    def _uncursor(self, shelf: Shelf, cursor: object) -> dict | None:
        if not isinstance(cursor, str) or "." not in cursor:
            return None
        body, _, sig = cursor.rpartition(".")
        try:
            raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        except (binascii.Error, ValueError):
            return None
        if not hmac.compare_digest(sig, hmac.new(shelf.state.secret, raw, hashlib.sha256).hexdigest()[:24]):
            return None
        return json.loads(raw)

    def _walk(self, shelf: Shelf, at: dict) -> Iterator[tuple[dict, dict]]:
        """(entry, the position after it) from position `at` on: the folders and README, then each video's
        file and sidecars, in index order; only what lies under the listed path (recursively or not)."""
        root, recursive, wanted = at["r"], at["rec"], at.get("nd", True)
        head = [*_folder_entries(), self._readme()]
        for h in range(at["h"], len(head)):
            yield head[h], {**at, "h": h + 1}
        for index in range(at["i"], shelf.size):
            video = shelf.video(index)
            block = [] if video is None else [self.file(shelf, video), *self.sidecars(video)]
            for k in range(at["k"] if index == at["i"] else 0, len(block)):
                entry = block[k]
                if not wanted and entry.get("is_downloadable") is False:
                    continue
                if _under(entry["path_lower"], root, recursive):
                    yield entry, {**at, "h": len(head), "i": index, "k": k + 1}
            at = {**at, "i": index + 1, "k": 0}

    def _readme(self) -> dict:
        path = f"{ROOT}/README.txt"
        return {
            ".tag": "file",
            "name": "README.txt",
            "id": "id:readme0000000",
            "client_modified": _time(1_577_836_800),
            "server_modified": _time(1_577_836_800),
            "rev": "5a00000000f",
            "size": 120,
            "path_lower": path.lower(),
            "path_display": path,
            "is_downloadable": True,
            "content_hash": hashlib.sha256(b"readme").hexdigest(),
        }

    def _page(self, shelf: Shelf, at: dict, limit: int) -> Reply:
        found, after = [], at
        for entry, position in self._walk(shelf, at):
            if _under(entry["path_lower"], at["r"], at["rec"]) and entry["path_lower"] != at["r"]:
                found.append(entry)
            after = position
            if len(found) >= limit:
                break
        else:
            after = {**at, "h": len(_folder_entries()) + 1, "i": shelf.size, "k": 0}
        gone = sorted(i for i in shelf.state.deleted if i < shelf.size)
        fresh = gone[at.get("d", 0) :] if after["i"] >= shelf.size else []
        for index in fresh:
            found.append({".tag": "deleted", "name": f"video {index}", "path_lower": f"{ROOT}/gone/{index}"})
        if fresh:
            after = {**after, "d": len(gone)}
        moves = shelf.state.moves[at.get("m", 0) :] if after["i"] >= shelf.size else []
        for index, before, now in moves:  # after the listing: a change since the cursor was handed out
            video = shelf.video(index)
            if _under(before.lower(), at["r"], at["rec"]):
                found.append({".tag": "deleted", "name": before.rsplit("/", 1)[1], "path_lower": before.lower()})
            if video is not None and _under(now.lower(), at["r"], at["rec"]) and moved_to(shelf, index) == now:
                found.append(self.file(shelf, video))
        if moves:
            after = {**after, "m": len(shelf.state.moves)}
        more = after["i"] < shelf.size or any(True for _ in self._walk(shelf, after))
        body = {"entries": found, "cursor": self._cursor(shelf, after), "has_more": more}
        return Reply(200, body)

    def source(self, op: str, shelf: Shelf, call: Call, body: object, now: float) -> Reply:
        arg = body if isinstance(body, dict) else {}
        if op in ("src_list_folder", "src_latest"):
            path = arg.get("path", "")
            if not isinstance(path, str) or (path and not path.startswith("/")):
                return self.error("invalid", "path: must be empty or start with '/'")
            root = path.rstrip("/").lower()
            if root and not _is_folder(root):
                return not_found()
            limit = arg.get("limit", MAX_LIMIT)
            if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
                return self.error("invalid", "limit: must be between 1 and 2000")
            at = {"r": root, "rec": arg.get("recursive") is True, "h": 0, "i": 0, "k": 0}
            at |= {"nd": arg.get("include_non_downloadable_files", True) is not False, "d": len(shelf.state.deleted)}
            at |= {"m": len(shelf.state.moves)}
            if op == "src_latest":
                end = {**at, "h": len(_folder_entries()) + 1, "i": shelf.size}
                return Reply(200, {"cursor": self._cursor(shelf, end)})
            return self._page(shelf, at, limit)
        if op == "src_continue":
            kept = self._uncursor(shelf, arg.get("cursor"))
            if kept is None:
                return _error("reset", {".tag": "reset"})
            return self._page(shelf, kept, MAX_LIMIT)
        if op == "src_move":
            return self._move(shelf, arg)
        return self._file_op(op, shelf, call, arg)

    def _move(self, shelf: Shelf, arg: dict) -> Reply:
        """files/move_v2 of a video file into another of the library's folders (the module's docstring)."""
        source, target = arg.get("from_path"), arg.get("to_path")
        if not isinstance(source, str) or not source.startswith("id:"):
            return self.error("invalid", "from_path: only a file's id is simulated (id:...)")
        if not isinstance(target, str) or not target.startswith("/"):
            return self.error("invalid", "to_path: must start with '/'")
        video = shelf.video(index_of(source))
        if video is None or source != file_id(video.index):
            return _error("from_lookup/not_found", {".tag": "from_lookup", "from_lookup": {".tag": "not_found"}})
        before = self.file(shelf, video)["path_display"]
        folder, _, name = target.rpartition("/")
        if name != before.rsplit("/", 1)[1] or not _is_folder(folder.lower()):
            return self.error(
                "invalid", "only a move into another of the library's folders, its name kept, is simulated"
            )
        if folder.lower() != before.rsplit("/", 1)[0].lower():
            with shelf.state.lock:
                shelf.state.moves.append((video.index, before, f"{_display(folder)}/{name}"))
        return Reply(200, {"metadata": self.file(shelf, video)})

    def _file_op(self, op: str, shelf: Shelf, call: Call, arg: dict) -> Reply:
        fid = arg.get("path")
        index = index_of(fid) if isinstance(fid, str) else -1
        video = shelf.video(index)
        if video is None:
            return not_found()
        entries = {e["id"]: e for e in (self.file(shelf, video), *self.sidecars(video))}
        entry = entries.get(fid)
        if entry is None:
            return not_found()
        if op == "src_metadata":
            return Reply(200, entry)
        if entry["id"] == file_id(index) and video.fault in ("unsupported", "not_allowed"):
            tag = "unsupported_file" if video.fault == "unsupported" else "not_allowed"
            return _error(tag, {".tag": tag})
        name = entry["name"] if entry["id"] != file_id(index) else "video.mp4"
        ttl = shelf.cfg.link_ttl_s if shelf.cfg.link_ttl_s > 0 else LINK_TTL_S
        link = media_url(replace(shelf.cfg, link_ttl_s=ttl), shelf.state, shelf.base_url, self.name, video, _safe(name))
        link = link.replace("/_media/", "/_stream/", 1)
        return Reply(200, {"metadata": entry, "link": link})

    def serve_delivery(
        self, shelf: Shelf, method: str, path: str, query: str, range_header: str | None
    ) -> Served | None:
        """A temporary link: 410 Gone once past its four hours, else the file as the library serves it."""
        expires = urllib.parse.parse_qs(query).get("exp", [""])[0]
        if expires.isdigit() and int(expires) < time.time():
            return Served(410, {"Content-Type": "text/plain"}, b"Gone")
        media = "/_media/" + path[len("/_stream/") :]
        served = serve_media(shelf.cfg, shelf.state, method, media, query, range_header, self.faults, lambda v, n: True)
        name = media.rsplit("/", 1)[1]
        if served.status != 200:
            return served
        video_index = int(media.split("/")[3])
        if name.endswith(".srt"):
            text = SRT.format(i=video_index, language=name.split(".")[-2]).encode()
            return Served(200, {"Content-Type": "application/x-subrip", "Content-Length": str(len(text))}, text)
        if name.endswith(".chapters.vtt"):
            text = CHAPTERS.format(i=video_index).encode()
            return Served(200, {"Content-Type": "text/vtt", "Content-Length": str(len(text))}, text)
        if name.endswith(".jpg"):
            return Served(200, {"Content-Type": "image/jpeg", "Content-Length": str(len(THUMBNAIL))}, THUMBNAIL)
        return served

    # ----- rate limits

    def rate_headers(self, cfg: SimConfig, state: RateState) -> dict:
        return {}  # Dropbox documents none

    def throttle_hint(self, cfg: SimConfig, wait_s: float, state: RateState) -> tuple[dict, float | None]:
        told = max(1, math.ceil(wait_s))
        return {"Retry-After": str(told)}, float(told)


def _under(path_lower: str, root: str, recursive: bool) -> bool:
    if not root:
        return recursive or path_lower.count("/") == 1
    if not path_lower.startswith(root + "/"):
        return False
    return recursive or "/" not in path_lower[len(root) + 1 :]


def _is_folder(root: str) -> bool:
    return any(e["path_lower"] == root for e in _folder_entries())


def _display(folder: str) -> str:
    """A folder of the library as it displays its path (the path asked for may be of any case)."""
    return next(e["path_display"] for e in _folder_entries() if e["path_lower"] == folder.lower())


def moved_to(shelf: Shelf, index: int) -> str | None:
    """Where video `index`'s file was last moved (its path_display), or None where it never was."""
    return next((now for i, _, now in reversed(shelf.state.moves) if i == index), None)


def _safe(name: str) -> str:
    """A file name as one path segment of a link: its language and extension kept (the sidecars' `.en.vtt`)."""
    tail = ".".join(name.split(".")[-2:]) if name.count(".") >= 2 else name.rsplit(".", 1)[-1]
    return f"file-{hashlib.sha256(name.encode()).hexdigest()[:8]}.{tail}"
