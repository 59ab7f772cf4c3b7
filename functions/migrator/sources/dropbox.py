"""A Dropbox folder as a source: its video files (the Dropbox HTTP API v2 as the official SDK, dropbox 12.2.4, calls
it: `files_list_folder`, `files_list_folder_continue`, `files_list_folder_get_latest_cursor`,
`files_get_temporary_link`, `files_get_metadata`; dropbox.com/developers/documentation/http/documentation).

- credentials: an OAuth 2 access token with `files.metadata.read` and `files.content.read` (the temporary
  link's scope), `Authorization: Bearer`; `{"token": "..."}`, and `"path": "/Videos"` for the folder to
  migrate (the whole Dropbox when absent). Every call is an RPC: `POST https://api.dropboxapi.com/2/<route>`
  with a JSON body;
- list: `files/list_folder {path, recursive: true, limit: 2000, include_non_downloadable_files: true}` ->
  `{entries, cursor, has_more}`, then `files/list_folder/continue {cursor}` while `has_more` ("limit" is
  "an approximate number", 1..2000). The platform's cursor is the sweep's cursor, so a sweep resumes where
  Dropbox left it; one source asks one cursor at a time (a lock: "RateLimitError may be returned if multiple
  list_folder or list_folder/continue calls with same parameters are made simultaneously by same API app for
  same user", the SDK's docstring), and a fleet that wanted more would split by folder, never share a cursor;
- delta by the cursor: the last page of a sweep (`has_more` false) hands its cursor on (`Page.delta`), the
  sweep keeps it with its mark, and the next `--since last` continues from it (`list_folder/continue`: "Pass
  the cursor into list_folder/continue to see what's changed in the folder since your previous query",
  `DeletedMetadata` for what went: skipped). Every file such a page gives is a change and is listed whatever
  its `server_modified`: a file moved into the folder keeps the time its content last changed ("The last time
  the file was modified on Dropbox"), often before the mark. A cursor Dropbox has reset (409 `reset`) starts
  the listing again from the folder, keeping what changed since the time asked for (`server_modified`);
  without a kept cursor a delta does the same, and the pages of such a listing carry the mark LISTING on
  their cursor so that they are filtered too. A full sweep's first page also asks
  `files/list_folder/get_latest_cursor` for the folder as it is at the start, the delta point it keeps: what
  changes while a long sweep runs is listed again by the next one (as the sweep's mark is never later than
  its start);
- files: `FileMetadata` (`.tag` file): `id` ("id:..."), `name`, `path_display`, `client_modified`,
  `server_modified`, `size`, `is_downloadable`, `content_hash`. A video is a file with a video extension (as
  the S3 source reads keys); folders, sidecars and other files are skipped. The row: `dropbox://<id>` (the id
  survives a rename or a move), the name without its extension as the title (the full name in
  `file_name`), `client_modified` as the creation time (Dropbox keeps no other), the size, the folder the file
  is in (below the migrated path). Dropbox has no playback privacy for a file: none is set, the stack's
  DefaultPlayback decides, as for an S3 object;
- what cannot be downloaded is named up front with its reason: `is_downloadable: false` (listed because of
  `include_non_downloadable_files`, which defaults to true), and the temporary link's errors (`unsupported_file`
  "Cannot get temporary link to this file type", `not_allowed` "the file is restricted or ... the user's links
  are banned"), asked once per video at the listing (the link is thrown away); `email_not_verified` is the
  account's, DENIED;
- resolve: `files/get_temporary_link {path: id}` -> `{metadata, link}`, minted just before the create: "This
  link will expire in four hours and afterwards you will get 410 Gone" (`Resolution.expires_at`);
- captions: a sidecar next to the video carries its caption track when its name matches (`sidecars`): the
  video's name without its extension, then optionally `.<language>` (a BCP 47 tag), then `.vtt` or `.srt`,
  compared without case (`Talk.mp4`: `Talk.vtt`, `talk.en.srt`, `Talk.pt-BR.vtt`). A sidecar with no language
  in its name is `und` (undetermined), named "Captions"; `dropbox://<video id>/sidecar/<file id>` resolves to
  the sidecar's own temporary link. The video's folder is listed (not recursively) once to find them, and the
  last few folders are remembered;
- what a viewer sees first (issue 42; sidecars.py): from the same folder listing, a poster image beside the video
  (`Talk.jpg`, `.jpeg`, `.png` or `.webp` by `Talk.mp4`, compared without case) is its `thumbnail_url` and a
  `Talk.chapters.vtt` its chapters track, each `dropbox://<video id>/sidecar/<file id>` as captions are (only
  with `tracks`: the folder listing is a request of its own); the folder the file is in, below the migrated
  path, is a collection of kind folder (its id the folder's `path_lower`, read from the file's own path: no
  request). Dropbox keeps no publish time (`client_modified` is the creation time already);
- rate limits: no numbers are published; a 429 carries `Retry-After` (or a JSON RateLimitError's
  `retry_after`), waited out. Errors are `{"error_summary", "error": {".tag": ...}}`, a route's own on 409.
"""

from __future__ import annotations

import posixpath
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import ClassVar

from ..link_life import LinkTerms
from ..providers.facts import CredentialsError, entries, epoch_of, mapping, text
from .base import HttpSource, Page, Resolution, ResolutionKind, SourceDenied, SourceError, SourceRef, gone
from .rows import CollectionInfo, TrackInfo, clean_text, language_tag, make_row, unfetchable
from .s3 import is_video_key
from .sidecars import SidecarIndex, sidecar_of

PAGE_LIMIT = 2000  # files/list_folder's `limit` maximum (the SDK's validator: UInt32, max 2000)
LINK_TTL_S = 4 * 3600.0  # "This link will expire in four hours"
FOLDERS_KEPT = 8  # folders whose sidecars are remembered
# Marks the sweep's cursor of a listing from the folder's start (its pages filtered by `since`), as against a
# cursor of changes (Dropbox's own, as handed on for a delta). Dropbox's cursors are opaque (url-safe base64 in
# its examples): a cursor from before this mark existed is read as one of changes, which lists more, never less.
LISTING = "listing:"
NOT_DOWNLOADABLE = (
    "Dropbox marks the file not downloadable (is_downloadable: false; a file Dropbox serves only by export)"
)
UNSUPPORTED = "Dropbox gives no temporary link to this file type (get_temporary_link: unsupported_file)"
NOT_ALLOWED = (
    "Dropbox does not allow a temporary link to this file (get_temporary_link: not_allowed: the file is restricted"
    " or the account's links are banned)"
)
UNVERIFIED = "the Dropbox account's email address is not verified: Dropbox gives it no temporary links"
_SIDECAR = re.compile(
    r"^(?P<stem>.+?)(?:\.(?P<lang>[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*))?\.(?P<ext>vtt|srt)$", re.IGNORECASE
)


def video_stem(name: str) -> str:
    return name.rpartition(".")[0] or name


def sidecars(video_name: str, names: Mapping[str, str]) -> list[tuple[str, str | None, str]]:
    """The sidecars of `video_name` among `names` ({file name: file id}): (id, language or None, format), the
    language-less first, then by name. A name matches when it is the video's without its extension, then
    optionally `.<language>`, then `.vtt` or `.srt`, without case."""
    stem = video_stem(video_name).lower()
    found: list[tuple[str, str | None, str, str]] = []
    for name, file_id in names.items():
        match = _SIDECAR.match(name)
        if not match:
            continue
        whole = name.rpartition(".")[0].lower()
        if whole == stem:  # Talk.vtt; or Talk.en.vtt of a video named Talk.en.mp4
            found.append((file_id, None, match["ext"].lower(), name))
        elif match["stem"].lower() == stem and match["lang"] and language_tag(match["lang"]):
            found.append((file_id, language_tag(match["lang"]), match["ext"].lower(), name))
    found.sort(key=lambda s: (s[1] is not None, s[3].lower()))
    return [(f, lang, ext) for f, lang, ext, _ in found]


class DropboxSource(HttpSource):
    platform = "dropbox"
    credential_env: ClassVar[Mapping[str, str]] = {"token": "DROPBOX_TOKEN"}
    default_base_url = "https://api.dropboxapi.com"
    documented_rate_per_s = None  # Dropbox publishes no number; its 429s say when to come back
    # The temporary link, one request (the file read with it: the link's answer carries the metadata).
    requests_per_video = 1
    link_terms = LinkTerms('Dropbox\'s temporary links live 4 hours ("This link will expire in four hours")')

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._cursor_lock = threading.Lock()  # one call at a time on a cursor
        self._folders: OrderedDict[str, dict[str, str]] = OrderedDict()

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        token = creds.get("token")
        if not isinstance(token, str) or not token:
            raise CredentialsError('the dropbox credentials need "token" (an OAuth 2 access token)')
        return {"Authorization": f"Bearer {token}"}

    def root(self) -> str:
        """The folder to migrate ("" for the whole Dropbox), from the credentials' "path"."""
        path = mapping(self.credentials() or {}).get("path") or ""
        if not isinstance(path, str) or (path and not path.startswith("/")):
            raise CredentialsError('the dropbox "path" must be a folder path starting with "/" (or absent: all)')
        return path.rstrip("/")

    # --- one RPC ---------------------------------------------------------------------------------

    def rpc(self, route: str, arg: Mapping, what: str) -> tuple[dict | None, str | None]:
        """(the result, None), or (None, the error's `.tag` path: "path/not_found", "reset") for a 409."""
        answer = self.call("POST", f"/2/{route}", json_body=dict(arg))
        if answer.status == 409:
            return None, _error_tags(answer.body) or "unknown"
        if answer.status != 200:
            raise self.failure(answer, what)
        return mapping(self.json_of(answer, what)), None

    # --- listing ---------------------------------------------------------------------------------

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        """A page of the folder from the start (`cursor` None, or one this source marked LISTING), where `since`
        keeps what changed since by `server_modified`; or a page of changes from a cursor Dropbox handed on
        (the kept delta cursor and its next pages), where every file is a change and `since` is not read: a
        file moved into the folder keeps its old `server_modified` (module docstring)."""
        listing = cursor is None or cursor.startswith(LISTING)
        with self._cursor_lock:
            body, delta = self._list(cursor.removeprefix(LISTING) if cursor else None)
            if body is None:  # the kept cursor was reset by Dropbox: the folder again, what changed since kept
                body, delta = self._list(None)
                listing = True
        body = mapping(body)  # a dict: only a continued cursor is reset (None), never the folder from its start
        page = Page()
        if delta:
            page.delta = delta
        for item in entries(body.get("entries")):
            self._take(page, mapping(item), since if listing else None, tracks)
        following = text(body.get("cursor"))
        if body.get("has_more") is True and following:
            page.cursor = LISTING + following if listing else following
        elif following:
            page.delta = page.delta or following
        return page

    def _list(self, cursor: str | None) -> tuple[dict | None, str | None]:
        try:
            root = self.root()
        except CredentialsError as exc:
            raise SourceDenied(str(exc)) from None
        if cursor:
            body, error = self.rpc("files/list_folder/continue", {"cursor": cursor}, "the folder's next page")
            if error and error.startswith("reset"):
                return None, None
            if error:
                raise SourceError(f"dropbox: the folder's next page answered 409 {error}")
            return body, None
        arg = {"path": root, "recursive": True, "include_non_downloadable_files": True}
        latest, _ = self.rpc("files/list_folder/get_latest_cursor", arg, "the folder's latest cursor")
        body, error = self.rpc("files/list_folder", {**arg, "limit": PAGE_LIMIT}, "the folder listing")
        if error:
            raise SourceError(f"dropbox: listing {root or 'the Dropbox'} answered 409 {error}")
        return body, text(mapping(latest).get("cursor"))

    def _take(self, page: Page, item: Mapping, since: float | None, tracks: bool) -> None:
        page.listed += 1
        if item.get(".tag") != "file":
            return  # a folder, or DeletedMetadata in a delta
        name, fid = text(item.get("name")), _file_id(item.get("id"))
        if not name or not fid:
            return
        if not is_video_key(name):
            page.skipped += 1
            return
        changed = epoch_of(item.get("server_modified"))
        page.saw(changed)
        if since is not None and changed is not None and changed < since:
            return
        page.entries.append(self._entry(item, fid, name, tracks))

    def _entry(self, item: Mapping, fid: str, name: str, tracks: bool):
        ref, title = self.ref(fid), clean_text(video_stem(name), 512)
        if item.get("is_downloadable") is False:
            return unfetchable(self.platform, fid, ref, NOT_DOWNLOADABLE, title)
        link = self._link(fid)
        if link.kind is ResolutionKind.UNFETCHABLE:
            return unfetchable(self.platform, fid, ref, link.reason or UNSUPPORTED, title)
        path = text(item.get("path_display")) or ""
        beside = self._sidecar_names(posixpath.dirname(path)) if tracks and path else {}
        found = self._tracks(fid, name, beside)
        index = SidecarIndex(fold=True)
        index.add_all(beside)
        extras = index.of(name)
        if extras.chapters:
            chapters = self.ref(fid, "sidecar", beside[extras.chapters])
            found.append(TrackInfo(chapters, None, "chapters", "Chapters", format="vtt"))
        folder = self._folder_of(path)
        held = posixpath.dirname(text(item.get("path_lower")) or path.lower())
        return make_row(
            self.platform,
            fid,
            ref,
            title=title,
            created_at=item.get("client_modified"),
            size_bytes=item.get("size"),
            folder=folder,
            tracks=found,
            metadata={"file_name": name, **_kept(item, "content_hash")},
            thumbnail_url=self.ref(fid, "sidecar", beside[extras.image]) if extras.image else None,
            collections=[CollectionInfo(held, folder, "folder")] if folder else (),
        )

    def _folder_of(self, path: str) -> str | None:
        parent = posixpath.dirname(path)
        root = self.root()
        if root and parent.lower().startswith(root.lower()):
            parent = parent[len(root) :]
        return parent.strip("/") or None

    def _tracks(self, fid: str, name: str, beside: Mapping[str, str]) -> list[TrackInfo]:
        found = []
        for sid, language, form in sidecars(name, beside):
            label = None if language else "Captions"
            found.append(TrackInfo(self.ref(fid, "sidecar", sid), language or "und", "captions", label, format=form))
        return found

    def _sidecar_names(self, folder: str) -> dict[str, str]:
        """{name: id} of the caption files (.vtt, .srt) and the posters and chapters files (sidecars.py) directly in
        `folder` (listed once, the last few kept)."""
        key = folder.lower()
        if key in self._folders:
            self._folders.move_to_end(key)
            return self._folders[key]
        names: dict[str, str] = {}
        arg = {"path": folder, "recursive": False, "limit": PAGE_LIMIT}
        body, error = self.rpc("files/list_folder", arg, "the video's folder")
        while body is not None and not error:
            for item in (mapping(e) for e in entries(body.get("entries"))):
                name, fid = text(item.get("name")), _file_id(item.get("id"))
                if item.get(".tag") == "file" and name and fid and (_SIDECAR.match(name) or sidecar_of(name)):
                    names[name] = fid
            following = text(body.get("cursor"))
            if body.get("has_more") is not True or not following:
                break
            body, error = self.rpc("files/list_folder/continue", {"cursor": following}, "the video's folder")
        self._folders[key] = names
        while len(self._folders) > FOLDERS_KEPT:
            self._folders.popitem(last=False)
        return names

    def video(self, video_id: str, tracks: bool = True) -> Page:
        """One file by id (`files/get_metadata`): its row, why it is unfetchable, or an empty page when gone."""
        page = Page()
        if _file_id(video_id) is None:
            return page
        body, _ = self.rpc("files/get_metadata", {"path": video_id}, "the file")
        if body is not None:
            self._take(page, body, None, tracks)
        return page

    # --- resolving -------------------------------------------------------------------------------

    def _link(self, fid: str) -> Resolution:
        body, error = self.rpc("files/get_temporary_link", {"path": fid}, "the temporary link")
        if error:
            if error.startswith("path"):
                return Resolution.unfetchable(gone("Dropbox"))
            if error.startswith("email_not_verified"):
                return Resolution(ResolutionKind.DENIED, reason=UNVERIFIED)
            return Resolution.unfetchable(NOT_ALLOWED if error.startswith("not_allowed") else UNSUPPORTED)
        link = text(mapping(body).get("link"))
        if not link or not link.startswith(("https://", "http://")):
            raise SourceError("dropbox: the temporary link answer holds no link")
        return Resolution.ready(link, expires_at=self.clock() + LINK_TTL_S)

    def resolve(self, ref: SourceRef) -> Resolution:
        if ref.is_track:
            if ref.kind != "sidecar" or _file_id(ref.item) is None:
                return Resolution.unfetchable(f"not a Dropbox sidecar reference: {ref}")
            return self._link(ref.item or "")
        if _file_id(ref.video_id) is None:
            return Resolution.unfetchable(f"not a Dropbox file id: {clean_text(ref.video_id, 60)!r}")
        return self._link(ref.video_id)


_FILE_ID = re.compile(r"^id:[A-Za-z0-9_-]{1,80}$")


def _file_id(value: object) -> str | None:
    """A Dropbox file id ("id:" and letters, digits, "_" or "-"), or None."""
    fid = text(value)
    return fid if fid and _FILE_ID.match(fid) else None


def _kept(item: Mapping, *names: str) -> dict:
    return {name: item[name] for name in names if text(item.get(name))}


def _error_tags(body: object) -> str | None:
    """A route error's tags as a path ("path/not_found"), from `error` (nested `.tag`s), else `error_summary`."""
    error = mapping(mapping(body).get("error"))
    tags: list[str] = []
    while error and isinstance(error.get(".tag"), str) and len(tags) < 4:
        tag = error[".tag"]
        tags.append(tag)
        error = mapping(error.get(tag))
    if tags:
        return "/".join(tags)
    summary = text(mapping(body).get("error_summary"))
    return summary.strip("/.") if summary else None
