"""The create path of the request pipeline: admission, idempotency and conflicts, the account's caps, the new video."""

from __future__ import annotations

import copy
import time
from typing import NamedTuple

from .config import SimConfig
from .gate import Gate
from .processing import Processing
from .profile import Call, Draft, Event, Profile, Reply
from .request import parse_json
from .state import SimState
from .video import IDLE, PROCESSING, Video, is_hang, is_unsupported
from .webhooks import Webhooks, hooks_on


class _Created(NamedTuple):
    """What the locked part of a create made: the video, the answer, its events, under which generation."""

    video: Video
    reply: Reply
    events: list[Event]
    generation: int
    early: bool  # processing completes at once, its webhooks sent before the answer


class Creator:
    """Answers a create: through the gate, then a new video (or a replay, a conflict, a cap), then its processing."""

    def __init__(self, state: SimState, gate: Gate, processing: Processing, hooks: Webhooks) -> None:
        self._state = state
        self._gate = gate
        self._processing = processing
        self._hooks = hooks

    def create(self, cfg: SimConfig, profile: Profile, call: Call, raw: bytes, entry: dict) -> Reply:
        body, parse_error = parse_json(raw)
        entry["ref"] = profile.ref_of(body)
        with self._state.lock:
            self._state.counters["create_requests"] += 1
        refused = self._gate.admit(cfg, profile, call) or self._gate.admit_create(cfg, profile)
        if refused is not None:
            return refused

        draft = profile.parse_create(body, parse_error, call)
        if isinstance(draft, Reply):
            return draft
        entry.update(draft.log)
        if draft.source is not None and is_unsupported(draft.source):
            return profile.error("unsupported")

        made = self._store(cfg, profile, call, draft, entry["key"] if profile.honours_idempotency_key else None)
        if isinstance(made, Reply):
            return made
        video, generation = made.video, made.generation
        self._hooks.send(cfg, profile, made.events, generation, inline=made.early)
        for text in draft.texts:  # the create's caption files: fetched by the provider, as Mux does
            self._processing.ingest_later(video.id, text, generation, cfg.track_max_bytes)
        if video.state == PROCESSING and not video.hung:  # a hung ingest is never finished
            self._processing.process(cfg, video, generation, made.early)
        return made.reply

    def _store(self, cfg: SimConfig, profile: Profile, call: Call, draft: Draft, key: str | None) -> Reply | _Created:
        """In one critical section: a replay, a conflict or a cap's refusal, else the video stored and answered."""
        s = self._state
        with s.lock:
            now = time.monotonic()
            replay = s.store.by_key.get(key) if cfg.honour_idempotency and key is not None else None
            if replay is not None:
                s.counters["duplicate_creates_prevented"] += 1
                return profile.created(s.store.videos[replay], now, replay=True)
            duplicate = draft.ref is not None and bool(s.store.by_ref.get(draft.ref))
            if profile.honours_idempotency_key and cfg.conflict_on_duplicate and duplicate:
                s.counters["duplicate_creates_prevented"] += 1
                return profile.error("conflict")
            refused = self._account_limits(cfg, profile)
            if refused is not None:
                return refused
            # Early webhooks (all, or a share of the videos) mean processing completes at once.
            early = cfg.webhook_early or (cfg.webhook_early_rate > 0 and s.rng.random() < cfg.webhook_early_rate)
            video = self._new_video(cfg, profile, call, draft, key, now, early)
            s.counters["creates"] += 1
            # The answer is made now, as the provider makes it; early webhooks overtake it on the wire.
            reply = profile.created(video, now, replay=False)
            events = profile.events(video, "created", now) if hooks_on(cfg) else []
            if cfg.lose_rate > 0 and s.rng.random() < cfg.lose_rate:
                s.counters["lost_responses"] += 1
                reply.lost = True
            return _Created(video, reply, events, s.generation, early)

    def _new_video(
        self, cfg: SimConfig, profile: Profile, call: Call, draft: Draft, key: str | None, now: float, early: bool
    ) -> Video:
        """The video a create makes, stored with its caption tracks (under the lock)."""
        s = self._state
        processing = draft.source is not None
        hung = draft.source is not None and (
            is_hang(draft.source) or (cfg.hang_rate > 0 and s.rng.random() < cfg.hang_rate)
        )
        video = Video(
            id=profile.new_id(),
            seq=next(s.seq),
            ref=draft.ref,
            key=key,
            source=draft.source,
            request=copy.deepcopy(draft.request),
            created=time.time(),
            started=now,
            delay_s=0.0 if early else cfg.processing_delay_s,
            state=PROCESSING if processing else IDLE,
            extra={"media_base": call.base_url},  # where its playback URLs point (media.py)
            hung=hung,
        )
        s.store.add(video)
        for text in draft.texts:
            video.add_text(text, one_per_language=False)
        if processing:
            s.store.in_flight += 1
            s.store.stored_s += video.duration
        return video

    def _account_limits(self, cfg: SimConfig, profile: Profile) -> Reply | None:
        """The account's caps on a create (under the lock): videos processing at once, storage."""
        # Stream: "up to 120 videos queued or being encoded simultaneously ... Videos in the error, ready, or
        # pendingupload state do not count toward this limit"; "An account cannot upload videos if the total
        # video duration exceeds the video storage capacity purchased"; "Uploads over these limits will receive
        # a 429 (Too Many Requests) or 413 (Payload too large)" (https://developers.cloudflare.com/stream/faq/).
        store = self._state.store
        max_in_flight = cfg.limits().max_in_flight
        if max_in_flight > 0 and store.in_flight >= max_in_flight:
            self._state.counters["in_flight_refused"] += 1
            reply = profile.error("busy")
            reply.status = cfg.in_flight_status
            return reply
        if cfg.storage_minutes > 0 and store.stored_s >= cfg.storage_minutes * 60:
            self._state.counters["storage_refused"] += 1
            return profile.error("full")
        return None
