"""The source side: reads on a source's library, its files as its CDN serves them, a ready video's playback media."""

from __future__ import annotations

import copy
import time

from . import catalog
from . import media as playback
from .config import SimConfig
from .gate import Gate
from .library import Served, Shelf, serve_media
from .profile import Call, Profile, Reply
from .request import form_fields, is_form, parse_json
from .state import SimState
from .video import Video


class Sources:
    """What a migration reads from a source simulator, and what any video's playback URLs serve."""

    def __init__(self, state: SimState, gate: Gate) -> None:
        self._state = state
        self._gate = gate

    def read(self, cfg: SimConfig, profile: Profile, call: Call, op: str, raw: bytes) -> Reply:
        """A read (or a file asked to be prepared) on the library of a source simulator."""
        refused = self._gate.admit_read(cfg, profile, call)
        if refused is not None:
            return refused
        s = self._state
        body: object = form_fields(raw) if is_form(call.headers.get("Content-Type")) else None
        if body is None:
            body, _ = parse_json(raw) if raw else (None, None)
        shelf = Shelf(cfg, s.library, call.base_url, profile.name, profile.faults)
        prepared = len(s.library.prepared)
        reply = profile.source(op, shelf, call, body, time.monotonic())
        with s.lock:
            s.counters["source_reads"] += 1
            s.counters["prepares_asked"] += len(s.library.prepared) - prepared
        return reply

    def media(self, method: str, path: str, query: str, range_header: str | None, base_url: str) -> Served:
        """A file of the library (`/_media/<profile>/<index>/<name>`, `/_stream/...`), as its CDN serves it."""
        s = self._state
        cfg = s.config_copy()
        profile = catalog.profile(cfg.profile)
        shelf = Shelf(cfg, s.library, base_url, profile.name, profile.faults)
        now = time.monotonic()
        if path.startswith("/_stream/"):
            served = profile.serve_delivery(shelf, method, path, query, range_header) or Served(404, {}, b"Not Found")
        else:
            served = serve_media(
                cfg,
                s.library,
                method,
                path,
                query,
                range_header,
                profile.faults,
                lambda video, name: profile.media_ready(shelf, video, name, now),
            )
        with s.lock:
            s.counters["media_served" if served.status < 300 else "media_refused"] += 1
        return served

    def change_library(self, delete: list[int], make_private: list[int]) -> None:
        """Videos deleted or made private at the source after they were listed."""
        self._state.library.change(delete, make_private)

    def playback_media(self, path: str, query: str) -> playback.Answer:
        """A ready video's playlists, thumbnail, player page (media.py): what its playback URLs serve.
        Not an API operation: no auth, no bucket, not logged, as a CDN answers apart from the API."""
        parsed = playback.split(path)
        if parsed is None:
            return 404, playback.TEXT, b"not found\n"
        s = self._state
        owner = catalog.profile(parsed[0]) if catalog.has(parsed[0]) else None
        if owner is not None and owner.owns_playback:  # its own delivery host's rules (Mux's playback ids)
            cfg = s.config_copy()
            shelf = Shelf(cfg, s.library, "", owner.name, owner.faults)
            with s.lock:
                videos, held = list(s.store.videos.values()), copy.deepcopy(s.store.account)
            return owner.serve_playback(videos, held, shelf, *parsed[1:], query)
        opened = None
        if owner is not None:  # a profile's own rules first (api.video's private and session tokens)
            with s.lock:
                video = s.store.videos.get(parsed[1])
                if video is not None:
                    opened = owner.open_playback(s.config, s.store.account, video, parsed[2], query)
            if isinstance(opened, tuple):
                return opened
            if opened is not None:
                parsed = (parsed[0], parsed[1], opened)

        def find(key: str) -> tuple[Video | None, bool]:
            with s.lock:
                own = owner.playback_video(s.store, key, query) if owner is not None else None
                if own is not None:  # the profile reads its keys its own way (Stream's signed tokens)
                    return own
                video = s.store.videos.get(key)
            if video is None:
                return None, False
            return video, opened is None and owner is not None and owner.playback_needs_token(video)

        master = owner.hls_master if owner is not None else ()
        return playback.serve(master, *parsed[1:], query, find)
