"""The request pipeline: an API request routed, handed to its operation, given rate-limit headers and logged.

A request goes through the same steps in every profile (route, auth, the call budget,
injected 503, then for a create latency, injected 500, the create bucket, validation, the
in-flight and storage caps, create: create.py; for anything else the read bucket, then the
read, track, source or account operation; lost response, rate-limit headers, request log);
the active profile (config.profile) only supplies the wire format of each step and the
limits it documents (each profile's `limits`). The gate's steps are in gate.py.
"""

from __future__ import annotations

import time

from . import catalog, drift
from .config import SimConfig
from .create import Creator
from .gate import Gate
from .processing import Processing
from .profile import Call, Profile, Reply
from .request import ApiRequest, parse_json
from .sources import Sources
from .state import SimState

_TRACK_OPS = ("track_add", "track_list")
_VIDEO_READS = ("list", "get", "status")


class Pipeline:
    """Answers API requests in the active profile's wire format."""

    def __init__(self, state: SimState, gate: Gate, creator: Creator, processing: Processing, sources: Sources):
        self._state = state
        self._gate = gate
        self._creator = creator
        self._processing = processing
        self._sources = sources

    def handle(self, request: ApiRequest) -> Reply:
        """Answer one API request in the active profile's wire format."""
        cfg = self._state.config_copy()
        profile = catalog.profile(cfg.profile)
        routed = profile.route(request.method, request.path)
        if isinstance(routed, Reply):
            return routed  # Unknown path or method: not an API operation, not logged.
        op, params = routed
        if cfg.library_size > 0:
            op = profile.source_ops.get(op, op)
        call = Call(request.query, params, request.headers, request.base_url, op=op, method=request.method, config=cfg)
        entry = {
            "t": time.time(),
            "method": request.method,
            "op": op,
            "key": request.headers.get("Idempotency-Key"),
            "ref": None,
        }
        if op.startswith("src_") or (cfg.library_size > 0 and op in _VIDEO_READS):
            reply = self._sources.read(cfg, profile, call, op, request.body)
        elif op == "create":
            reply = self._creator.create(cfg, profile, call, request.body, entry)
        elif op in _VIDEO_READS:
            reply = self._read(cfg, profile, call, op, entry)
        elif op in _TRACK_OPS:
            reply = self._track(cfg, profile, call, op, request.body, entry)
        elif op.startswith("video_"):
            reply = self._video_op(cfg, profile, call, op, request.body, entry)
        elif op.startswith("store_"):
            reply = self._store_op(cfg, profile, call, op, request.body, entry)
        else:
            reply = self._account(cfg, profile, call, request.body)
        if cfg.drift and reply.raw is None:  # a test knob: the answer as a drifted platform would send it
            reply.body = drift.apply(list(cfg.drift), reply.body)
        self._gate.add_rate_headers(cfg, profile, op, reply)
        entry.update(reply.log)
        entry.update(status=reply.status, retry_after_s=reply.told, lost=reply.lost)
        with self._state.lock:
            self._state.requests.append(entry)
            if op == "create" and reply.status == 400:
                self._state.counters["rejected"] += 1
        return reply

    def _read(self, cfg: SimConfig, profile: Profile, call: Call, op: str, entry: dict) -> Reply:
        s = self._state
        with s.lock:
            video = s.store.videos.get(call.params.get("id", ""))
        entry["ref"] = profile.list_ref(call) if op == "list" else (video.ref if video else None)
        refused = self._gate.admit_read(cfg, profile, call)
        if refused is not None:
            return refused
        with s.lock:
            now = time.monotonic()
            if op == "list":
                s.counters["lookups"] += 1
                return profile.list(s.store, call, now)
            s.counters["gets"] += 1
            video = s.store.videos.get(call.params["id"])
            return profile.get(video, now) if op == "get" else profile.status(video, now)

    def _track(self, cfg: SimConfig, profile: Profile, call: Call, op: str, raw: bytes, entry: dict) -> Reply:
        """A caption track's upload or a video's list of them, in the profile's way; an upload's answer may be lost."""
        s = self._state
        with s.lock:
            video = s.store.videos.get(call.params.get("id", ""))
        entry["ref"] = video.ref if video else None
        refused = self._gate.admit_read(cfg, profile, call)
        if refused is not None:
            return refused
        with s.lock:
            video = s.store.videos.get(call.params.get("id", ""))
            now = time.monotonic()
            if op == "track_list":
                s.counters["track_lists"] += 1
                return profile.list_tracks(video, call, now)
            s.counters["track_requests"] += 1
            taken = profile.take_track(video, call, raw, cfg)
            if isinstance(taken, Reply):
                # A refusal; a 2xx is an edit the profile made in place (Vimeo's text-track PATCH and DELETE).
                s.counters["tracks_refused"] += int(taken.status >= 400)
                return taken
            if video is None:  # never: take_track refuses a track for no video
                return profile.error("not_found")
            # A track the video holds already was given its file in place (Vimeo's PUT to the track's link).
            held = taken
            if all(t is not taken for t in video.texts):
                held = video.add_text(taken, profile.one_track_per_language)
            s.counters["track_uploads"] += 1
            reply = profile.track_taken(video, held, now)
            if cfg.track_lose_rate > 0 and s.rng.random() < cfg.track_lose_rate:
                s.counters["lost_track_responses"] += 1
                reply.lost = True
            generation = s.generation
        self._processing.ingest_later(video.id, held, generation, cfg.track_max_bytes)
        return reply

    def _video_op(self, cfg: SimConfig, profile: Profile, call: Call, op: str, raw: bytes, entry: dict) -> Reply:
        """An operation on one video that the profile answers in full (an op named "video_...": Bunny's update
        and play data), with the request's configuration, under the state lock."""
        refused = self._gate.admit_read(cfg, profile, call)
        if refused is not None:
            return refused
        body, parse_error = parse_json(raw) if raw else (None, None)
        s = self._state
        with s.lock:
            video = s.store.videos.get(call.params.get("id", ""))
            entry["ref"] = video.ref if video else None
            return profile.video_op(cfg, op, video, call, body, parse_error, time.monotonic())

    def _store_op(self, cfg: SimConfig, profile: Profile, call: Call, op: str, raw: bytes, entry: dict) -> Reply:
        """An operation the profile answers with the whole store in hand (an op named "store_..."): what a video holds
        besides its file and tracks (a thumbnail, chapters) and what a library keeps apart from its videos
        (collections), with the request's raw body. What the profile must fetch first (a thumbnail Bunny takes by
        URL) is fetched before the state lock is taken; a write's answer may be lost (`track_lose_rate`)."""
        refused = self._gate.admit_read(cfg, profile, call)
        if refused is not None:
            return refused
        fetched = profile.store_prefetch(cfg, op, call)
        s = self._state
        with s.lock:
            video = s.store.videos.get(call.params.get("id", ""))
            entry["ref"] = video.ref if video else None
            reply = profile.store_op(cfg, op, s.store, call, raw, fetched, time.monotonic())
            written = call.method != "GET" and reply.status < 300
            if written and cfg.track_lose_rate > 0 and s.rng.random() < cfg.track_lose_rate:
                s.counters["lost_track_responses"] += 1
                reply.lost = True
        return reply

    def _account(self, cfg: SimConfig, profile: Profile, call: Call, raw: bytes) -> Reply:
        """An operation on the account (tokens, the webhook subscription); its config changes apply at once."""
        refused = self._gate.admit_read(cfg, profile, call)
        if refused is not None:
            return refused
        body, parse_error = parse_json(raw) if raw else (None, None)
        s = self._state
        with s.lock:
            s.counters["account_calls"] += 1
            answer = profile.account(cfg, call, body, parse_error, s.store.account)
            if answer.changes:
                s.config.patch(answer.changes)
        return answer.reply
