"""Processing: a new video completed on the scheduler (its source fetched first with check_source); caption fetches."""

from __future__ import annotations

import copy
import time

from . import catalog
from .config import SimConfig
from .fetch import source_problem
from .state import SimState
from .texttracks import fetch_caption, read_caption, read_chapters_json
from .threads import Threads
from .video import ERRORED, PROCESSING, READY, TextTrack, Video
from .webhooks import Webhooks, hooks_on


class Processing:
    """Ends each video ready or errored when its time comes, and sends the events that say so."""

    def __init__(self, state: SimState, threads: Threads, hooks: Webhooks) -> None:
        self._state = state
        self._threads = threads
        self._hooks = hooks

    def process(self, cfg: SimConfig, video: Video, generation: int, early: bool) -> None:
        """Schedule a new video's completion, fetching its source first when check_source is on.
        `early`: it completes at once, its webhooks sent before the create's answer."""
        vid, source = video.id, video.source
        if cfg.check_source and source is not None:  # a video processing has a source
            after_s = video.delay_s * catalog.profile(cfg.profile).fetch_after_share  # Vimeo's pull: later, not at once
            if early:
                self._check_source(vid, source, generation, inline=True)
            elif after_s > 0:
                self._threads.later(after_s, lambda: self._threads.fetch(self._check_source, vid, source, generation))
            else:
                self._threads.fetch(self._check_source, vid, source, generation)
        elif early:
            self._finish(vid, generation, inline=True)
        else:
            self._threads.later(video.delay_s, lambda: self._finish(vid, generation))

    def _check_source(self, vid: str, source: str, generation: int, inline: bool = False) -> None:
        """Fetch the source as Cloudflare does; a failure ends the video errored, else processing goes on."""
        state = self._state
        with state.lock:
            mode = catalog.profile(state.config.profile).fetch_mode
        problem = source_problem(source, mode)
        if problem is not None:
            with state.lock:
                if generation == state.generation:
                    state.counters["source_checks_failed"] += 1
            self._finish(vid, generation, inline, failure="fetch")
            return
        with state.lock:
            video = state.store.videos.get(vid)
            left = max(0.0, video.delay_s - (time.monotonic() - video.started)) if video else 0.0
        if inline:
            self._finish(vid, generation, inline=True)
        else:
            self._threads.later(left, lambda: self._finish(vid, generation))

    def _finish(self, vid: str, generation: int, inline: bool = False, failure: str | None = None) -> None:
        """Finish processing one video (scheduler thread, or the request's with early webhooks)."""
        state = self._state
        with state.lock:
            video = state.store.videos.get(vid)
            if generation != state.generation or video is None or video.state != PROCESSING:
                return
            failure = failure or ("corrupt" if video.corrupt else None)
            video.state, video.failure = (ERRORED, failure) if failure else (READY, None)
            video.finished = time.time()
            state.store.in_flight -= 1
            if failure:
                state.store.stored_s -= video.duration  # an errored video holds no storage
            cfg = copy.copy(state.config)
            profile = catalog.profile(cfg.profile)
            events = profile.events(video, "finished", time.monotonic()) if hooks_on(cfg) else []
        self._hooks.send(cfg, profile, events, generation, inline)

    def ingest_later(self, vid: str, track: TextTrack, generation: int, max_bytes: int) -> None:
        if track.status == "preparing":  # a file the provider fetches itself (Mux)
            self._threads.fetch(self._ingest_text, vid, track.id, generation, max_bytes)

    def _ingest_text(self, vid: str, tid: str, generation: int, max_bytes: int) -> None:
        """Fetch and read a caption file the provider was given a URL for: ready, or errored with why."""
        state = self._state
        with state.lock:
            video = state.store.videos.get(vid)
            track = next((t for t in video.texts if t.id == tid), None) if video else None
            url = track.url if track else None
        if track is None or url is None:
            return
        content, why = fetch_caption(url, max_bytes)
        fmt = None
        if content is not None:
            fmt, why = read_chapters_json(content) if track.kind == "chapters" else read_caption(content, False)
        with state.lock:
            if generation != state.generation or track.status != "preparing":
                return
            track.content, track.format = content, fmt
            track.status, track.error = (track.ready_as, None) if fmt else ("errored", why)
