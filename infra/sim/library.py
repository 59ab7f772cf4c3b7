"""A source library for the simulator: videos computed from their index, their media, and what changes.

A simulator started with `library_size` N is a *source*: its profile's list and get operations
show N videos (and the profile's own source operations: Vimeo's text tracks, Mux's master
access, Stream's downloads and captions, ...) instead of the videos created on it. Nothing is
stored per video: video i's title, tags, captions, privacy, faults and times come from i and
the knobs, so a library of a million lists in flat memory, and the few things that change (a
file asked to be prepared, a video deleted or made private) are kept in `LibraryState`.

Every link to a file (`media_url`) points at this simulator, `/_media/...`, carries its expiry
when `link_ttl_s` is set and a signature over both, and is served by `serve_media`: HEAD with
the size, range GETs answered 206, an expired or forged link or a deleted video refused 403/404
as a CDN refuses them. A target simulator fetching such a link over loopback (check_source)
sees exactly that.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .config import SimConfig

# Video i was created EPOCH + i * STEP_S (2020-01-01 onwards, a minute apart), and changed once, an hour later.
EPOCH = 1_577_836_800.0
STEP_S = 60.0
CHANGED_AFTER_S = 3600.0
CAPTIONS = (("en", "captions", "English"), ("fr", "subtitles", "Français"))
FOLDERS = ("Marketing", "Training/2021", "Webinars")
# A title with characters a naive pipeline would mangle, every seventh video.
ODD_TITLE = "Vidéo « spéciale » n°{i} — 日本語 🎬"
VTT = "WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nVideo {i}, {language}\n"


@dataclass(frozen=True)
class Item:
    """One library video, as every profile renders it."""

    index: int
    title: str
    description: str
    tags: tuple[str, ...]
    created: float
    modified: float
    duration: float
    size: int
    private: bool
    folder: str
    captions: tuple[tuple[str, str, str], ...]  # (language, kind, name)
    fault: str | None  # the profile's way of being unfetchable (see each profile's FAULTS), or None
    stuck: bool  # a file asked to be prepared never becomes ready
    captions_processing: bool = False  # its caption tracks are still being made (library_captions_processing)

    def media_query(self) -> dict:
        """What a target simulator reads back from a link: the true duration."""
        return {"duration": f"{self.duration:g}"}


def _every(n: int, i: int, offset: int = 0) -> bool:
    return n > 0 and i % n == (n - 1 + offset) % n


def fault_of(cfg: SimConfig, index: int, faults: tuple[str, ...]) -> str | None:
    """Why video `index` cannot be fetched (one of `faults`, in turn), or None: arithmetic, for a filter that
    must skip most of a large library without rendering it."""
    fault = None
    if faults and _every(cfg.library_unfetchable_every, index):
        fault = faults[(index // cfg.library_unfetchable_every) % len(faults)]
    if fault == "processing" and cfg.library_processing_done:  # it finished since the last sweep
        fault = None
    return fault


def private_from_start(cfg: SimConfig, index: int) -> bool:
    """Whether video `index` is private in the library as the config made it (before any change)."""
    return _every(cfg.library_private_every, index, offset=1)


def is_private(cfg: SimConfig, state: LibraryState, index: int) -> bool:
    """Whether video `index` is private now: from the start, or made private since (as `visible` renders it)."""
    return private_from_start(cfg, index) or index in state.made_private


def item(cfg: SimConfig, index: int, faults: tuple[str, ...]) -> Item:
    """Video `index` of the library the config describes; `faults`: the profile's unfetchable kinds, in turn."""
    i = index
    fault = fault_of(cfg, i, faults)
    captions = CAPTIONS if _every(cfg.library_captions_every, i, offset=2) else ()
    return Item(
        index=i,
        title=ODD_TITLE.format(i=i) if i % 7 == 3 else f"Library video {i:06d}",
        description=f"Description of video {i}.\nSecond line.",
        tags=(f"series-{i % 5}", "library") + (("featured",) if i % 11 == 0 else ()),
        created=EPOCH + i * STEP_S,
        modified=EPOCH + i * STEP_S + CHANGED_AFTER_S,
        # A real video served for every file (media_file) is what the library says it is: its duration and size.
        duration=_real_duration(cfg.media_file) if cfg.media_file else round(30 + (i * 37) % 600 + 0.25, 3),
        size=len(_real(cfg.media_file)) if cfg.media_file else 1_000_000 + (i * 7919) % 50_000_000,
        private=private_from_start(cfg, i),
        folder=FOLDERS[i % len(FOLDERS)],
        captions=captions,
        fault=fault,
        stuck=_every(cfg.library_stuck_every, i, offset=3),
        captions_processing=bool(captions) and cfg.library_captions_processing,
    )


@dataclass
class LibraryState:
    """What changes in a library: files asked to be prepared (when), videos deleted or made private."""

    secret: bytes = field(default_factory=lambda: secrets.token_bytes(16))
    prepared: dict[int, float] = field(default_factory=dict)  # index -> monotonic time it was asked for
    deleted: set[int] = field(default_factory=set)
    made_private: set[int] = field(default_factory=set)
    cdn: dict = field(default_factory=dict)  # what a profile's delivery host remembers (api.video's spent tokens)
    # Files the owner moved to another folder, in order: (index, path before, path after) (Dropbox's move_v2).
    moves: list[tuple[int, str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ask_prepare(self, index: int, now: float) -> None:
        with self.lock:
            self.prepared.setdefault(index, now)

    def preparation(self, cfg: SimConfig, video: Item, now: float) -> tuple[str, float]:
        """("none" | "preparing" | "ready", fraction done) of the file asked for `video`."""
        with self.lock:
            asked = self.prepared.get(video.index)
        if asked is None:
            return "none", 0.0
        if video.stuck:
            return "preparing", 0.5
        done = 1.0 if cfg.prepare_s <= 0 else min(1.0, (now - asked) / cfg.prepare_s)
        return ("ready", 1.0) if done >= 1.0 else ("preparing", done)

    def present(self, index: int) -> bool:
        return index not in self.deleted

    def change(self, delete: list[int], make_private: list[int]) -> None:
        with self.lock:
            self.deleted.update(delete)
            self.made_private.update(make_private)


def visible(cfg: SimConfig, state: LibraryState, index: int, faults: tuple[str, ...]) -> Item | None:
    """Video `index` as it stands now (None: outside the library, or deleted)."""
    if not 0 <= index < cfg.library_size or not state.present(index):
        return None
    video = item(cfg, index, faults)
    return replace(video, private=True) if index in state.made_private else video


# ----- links to files --------------------------------------------------------------------------------


def _signature(state: LibraryState, path: str, expires: str) -> str:
    return hmac.new(state.secret, f"{path}|{expires}".encode(), hashlib.sha256).hexdigest()[:32]


def media_url(cfg: SimConfig, state: LibraryState, base_url: str, profile: str, video: Item, name: str) -> str:
    """A link to one of `video`'s files, served by this simulator; it expires after link_ttl_s (0: never)."""
    path = f"/_media/{profile}/{video.index}/{name}"
    expires = str(int(time.time() + cfg.link_ttl_s)) if cfg.link_ttl_s > 0 else ""
    query = {**video.media_query(), **({"exp": expires} if expires else {}), "sig": _signature(state, path, expires)}
    return f"{base_url}{path}?{urllib.parse.urlencode(query)}"


def link_expiry(url: str) -> float | None:
    """The epoch second a link made by `media_url` dies, or None when it never does."""
    value = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("exp", [""])[0]
    return float(value) if value.isdigit() else None


MEDIA_HEADER = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"


def _file(video: Item, name: str, length: int, media_file: str | None = None) -> tuple[bytes, str]:
    if name.endswith(".vtt"):
        language = name.rsplit(".", 1)[0].rsplit("-", 1)[-1]
        return VTT.format(i=video.index, language=language).encode(), "text/vtt"
    if media_file:
        return _real(media_file), "video/mp4"
    body = (MEDIA_HEADER + hashlib.sha256(str(video.index).encode()).digest() * (length // 32 + 1))[:length]
    return body, "video/mp4"


@functools.lru_cache(maxsize=4)
def _real(path: str) -> bytes:
    """A real video's bytes (media_file), read once."""
    with open(path, "rb") as data:
        return data.read()


@functools.lru_cache(maxsize=4)
def _real_duration(path: str) -> float:
    """A real video's duration in seconds (media_file), read once with ffprobe."""
    import subprocess

    probed = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "default=nw=1:nk=1", path],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return round(float(probed.stdout.strip()), 3)


@dataclass
class Served:
    status: int
    headers: dict
    body: bytes


def serve_media(
    cfg: SimConfig,
    state: LibraryState,
    method: str,
    path: str,
    query: str,
    range_header: str | None,
    faults: tuple[str, ...],
    ready: Callable[[Item, str], bool],
) -> Served:
    """Answer a request for `/_media/<profile>/<index>/<name>` as a CDN would.

    `ready(video, name)` says whether the file exists yet (a master or a download being prepared)."""
    refused = Served(403, {"Content-Type": "text/plain"}, b"Request has expired or is not signed")
    parts = path.split("/")
    if len(parts) != 5 or not parts[3].isdigit():
        return Served(404, {"Content-Type": "text/plain"}, b"Not Found")
    params = urllib.parse.parse_qs(query)
    expires = params.get("exp", [""])[0]
    if not hmac.compare_digest(params.get("sig", [""])[0], _signature(state, path, expires)):
        return refused
    if expires and (not expires.isdigit() or int(expires) < time.time()):
        return refused
    video = visible(cfg, state, int(parts[3]), faults)
    if video is None or not ready(video, parts[4]):
        return Served(404, {"Content-Type": "text/plain"}, b"Not Found")
    body, kind = _file(video, parts[4], cfg.media_bytes, cfg.media_file)
    headers = {"Content-Type": kind, "Accept-Ranges": "bytes"}
    status = 200
    if range_header and range_header.startswith("bytes=") and not name_is_text(parts[4]):
        first, _, last = range_header[len("bytes=") :].partition("-")
        if first.isdigit():
            start = int(first)
            end = min(len(body) - 1, int(last)) if last.isdigit() else len(body) - 1
            if start >= len(body):
                return Served(416, {"Content-Range": f"bytes */{len(body)}"}, b"")
            headers["Content-Range"] = f"bytes {start}-{end}/{len(body)}"
            body, status = body[start : end + 1], 206
    headers["Content-Length"] = str(len(body))
    return Served(status, headers, b"" if method == "HEAD" else body)


def name_is_text(name: str) -> bool:
    return name.endswith(".vtt")


@dataclass
class Shelf:
    """The library as a profile sees it for one request: its videos, links to their files, preparations."""

    cfg: SimConfig
    state: LibraryState
    base_url: str
    profile: str
    faults: tuple[str, ...]

    @property
    def size(self) -> int:
        return self.cfg.library_size

    def video(self, index: int) -> Item | None:
        return visible(self.cfg, self.state, index, self.faults)

    def videos(self, start: int, count: int, newest_first: bool = False) -> tuple[list[Item], int]:
        """`count` videos from position `start` in creation order (or newest first), skipping deleted ones;
        and how many videos the library shows in all."""
        deleted = sorted(i for i in self.state.deleted if 0 <= i < self.size)
        total = self.size - len(deleted)
        found: list[Item] = []
        for index in self._positions(start, newest_first, deleted):
            video = self.video(index)
            if video is not None:
                found.append(video)
            if len(found) == count:
                break
        return found, total

    def _positions(self, start: int, newest_first: bool, deleted: list[int]) -> Iterator[int]:
        """Library indexes from visible position `start` on. Without deletions that is arithmetic (a page of a
        million-video library costs its own length); deletions, which only tests make, are walked past."""
        order = range(self.size - 1, -1, -1) if newest_first else range(self.size)
        if not deleted:
            yield from order[max(0, start) :]
            return
        skip, seen = set(deleted), 0
        for index in order:
            if index in skip:
                continue
            if seen >= start:
                yield index
            seen += 1

    def url(self, video: Item, name: str) -> str:
        return media_url(self.cfg, self.state, self.base_url, self.profile, video, name)

    def expiry(self) -> float | None:
        """When a link handed out now dies (epoch seconds), or None."""
        return time.time() + self.cfg.link_ttl_s if self.cfg.link_ttl_s > 0 else None

    def prepare(self, video: Item, now: float) -> None:
        self.state.ask_prepare(video.index, now)

    def preparation(self, video: Item, now: float) -> tuple[str, float]:
        return self.state.preparation(self.cfg, video, now)
