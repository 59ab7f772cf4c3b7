"""ProviderSim: the simulator's state, its request pipeline with fault injection, processing and webhook delivery.

Everything here is shared by the profiles. A request goes through the same steps in every
profile (route, auth, the call budget, injected 503, then for a create latency, injected
500, the create bucket, validation, the in-flight and storage caps, create; for anything
else the read bucket, then the read or account operation; lost response, rate-limit
headers, request log); the active profile (config.profile) only supplies the wire format
of each step and the limits it documents (config.PROFILE_LIMITS). Processing (with the
source fetch when check_source is on, and hung ingests that never finish) completes on
the shared scheduler, and every webhook, whatever its scheme, goes through one delivery
path with the same retries, duplicates, forgeries and early delivery.
"""

from __future__ import annotations

import copy
import itertools
import json
import random
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from . import media
from .apivideo import ApiVideo
from .bucket import Budget, RateState, TokenBucket
from .cloudflare import Cloudflare
from .config import PROFILES as PROFILE_NAMES
from .config import SimConfig
from .fetch import source_problem
from .generic import Generic
from .library import LibraryState, Served, Shelf, serve_media
from .mux import Mux
from .mux import playback_ids as mux_playback_ids
from .profile import Call, Event, Profile, Reply
from .scheduler import Scheduler
from .texttracks import fetch_caption, read_caption
from .video import ERRORED, IDLE, PROCESSING, READY, TextTrack, Video, is_hang, is_unsupported
from .vimeo import Vimeo
from .wistia import Wistia

PROFILES: dict[str, Profile] = {p.name: p for p in (Generic(), Mux(), Cloudflare(), ApiVideo(), Vimeo(), Wistia())}
assert tuple(PROFILES) == PROFILE_NAMES, "config.PROFILES and the profile classes must agree"

WEBHOOK_TIMEOUT_S = 5.0
REQUEST_LOG_MAX = 200_000
UNAVAILABLE_RETRY_AFTER_S = 1  # the Retry-After an injected 503 carries, when it carries one
OPS = ("create", "list", "get", "status", "auth", "refresh", "webhook", "track_add", "track_list")
_TRACK_OPS = ("track_add", "track_list")
_VIDEO_READS = ("list", "get", "status")
# Computed from the videos at read time; every other key is a counter.
_DERIVED = ("videos", "duplicate_videos", "errored_videos", "hung_videos")
STAT_KEYS = (
    "creates", "create_requests", "duplicate_creates_prevented", "throttled", "failed_injected", "rejected",
    "webhooks_delivered", "webhooks_failed", "videos", "duplicate_videos", "lookups",
    # added with the profiles and the new fault knobs
    "gets", "errored_videos", "unavailable_injected", "lost_responses", "webhooks_duplicated",
    "webhooks_forged_sent", "webhooks_forged_refused", "webhooks_forged_accepted",
    # added with the documented provider limits
    "read_throttled", "budget_throttled", "blocks", "in_flight_refused", "storage_refused",
    "source_checks_failed", "hung_videos", "account_calls",
    # added with caption tracks
    "track_requests", "track_uploads", "tracks_refused", "lost_track_responses", "track_lists",
    # added with the source side (a library: infra/sim/library.py)
    "source_reads", "prepares_asked", "media_served", "media_refused",
)  # fmt: skip


@dataclass
class ApiRequest:
    """An API request as the HTTP layer hands it over."""

    method: str
    path: str
    query: str
    headers: Mapping
    body: bytes
    base_url: str


@dataclass
class _Delivery:
    """One webhook event on its way, with the faults drawn for it."""

    cfg: SimConfig
    profile: Profile
    event: Event
    generation: int
    forged: bool  # precede the first attempt by a copy signed with a wrong secret
    duplicate: bool  # send it once more after it was accepted


class _Store:
    """The videos and their indexes; only touched under ProviderSim's lock."""

    def __init__(self) -> None:
        self.videos: dict[str, Video] = {}  # in creation order
        self.by_ref: dict[str, list[str]] = {}
        self.by_key: dict[str, str] = {}
        self.in_flight = 0  # videos processing (neither ready nor errored)
        self.stored_s = 0.0  # durations of the videos held, errored ones excepted
        self.account: dict = {}  # what a profile keeps of account operations (a webhook's modified time)

    def add(self, video: Video) -> None:
        self.videos[video.id] = video
        if video.ref is not None:
            self.by_ref.setdefault(video.ref, []).append(video.id)
        if video.key is not None:
            self.by_key[video.key] = video.id

    def newest_first(self) -> Sequence[Video]:
        return list(reversed(self.videos.values()))

    def with_ref(self, ref: str) -> Sequence[Video]:
        return [self.videos[i] for i in self.by_ref.get(ref, [])]


def parse_json(raw: bytes) -> tuple[object, str | None]:
    if not raw:
        return None, "request body must be a JSON object"
    try:
        return json.loads(raw), None
    except (ValueError, UnicodeDecodeError):
        return None, "request body is not valid JSON"


class ProviderSim:
    """The simulator's state and behaviour, plus the HTTP server and threads that expose it."""

    def __init__(self, config: SimConfig | None = None, verbose: bool = False) -> None:
        self.config = config or SimConfig()
        self.verbose = verbose
        self._lock = threading.Lock()
        # Separate streams for request faults and webhook faults, so a seeded run draws the
        # same request faults whatever the webhook threads do meanwhile.
        self._rng = random.Random()
        self._hook_rng = random.Random()
        self._server = None
        self._server_thread: threading.Thread | None = None
        self._scheduler: Scheduler | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._fetch_pool: ThreadPoolExecutor | None = None
        # Webhooks need an opener that ignores *_proxy variables: receivers are on loopback.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self._generation = 0
        self._reset_state()

    # ----- lifecycle -------------------------------------------------------------------

    def start(self) -> ProviderSim:
        """Bind the socket and serve in daemon threads; returns self for chaining."""
        from .server import Server  # The HTTP layer depends on this module, not the reverse.

        if self._server is not None:
            raise RuntimeError("already started")
        self._server = Server(self)
        self._scheduler = Scheduler()
        self._scheduler.start()
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="provider-sim-webhook")
        # Source fetches (check_source) apart from webhooks, so a slow source never delays an event.
        self._fetch_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="provider-sim-fetch")
        self._server_thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="provider-sim-server", daemon=True
        )
        self._server_thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close open connections and stop the scheduler and delivery pool."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.close_connections()  # Otherwise idle keep-alive handler threads outlive the server.
        server.server_close()
        if self._server_thread is not None:
            self._server_thread.join(timeout=5)
        self._scheduler.stop()
        # In-flight deliveries and fetches finish (bounded by the urllib timeout); queued ones are dropped.
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._fetch_pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> ProviderSim:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Base URL of the running server, with the real port when port 0 was asked for."""
        if self._server is None:
            raise RuntimeError("not started")
        host, port = self._server.server_address[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    # ----- state -----------------------------------------------------------------------

    def _reset_state(self) -> None:
        self._store = _Store()
        self._seq = itertools.count()
        self._requests: deque[dict] = deque(maxlen=REQUEST_LOG_MAX)
        self._counters = dict.fromkeys((k for k in STAT_KEYS if k not in _DERIVED), 0)
        cfg, now = self.config, time.monotonic()
        self._bucket = TokenBucket(cfg.rate, cfg.burst, now)  # creates
        self._read_bucket = TokenBucket(cfg.read_rate, cfg.read_burst, now)  # every other request
        self._budget = Budget(cfg.budget_quota, cfg.budget_window_s, cfg.budget_block_s)  # every call
        self._library = LibraryState()  # a source's library: what changed in it (library.py)
        # Bumped on reset so completions and deliveries scheduled before it become no-ops.
        self._generation += 1
        self._seed_rngs()

    def _seed_rngs(self) -> None:
        seed = self.config.seed
        self._rng.seed(seed)
        self._hook_rng.seed(None if seed is None else seed + 1)

    def reset(self) -> None:
        """Forget videos, counters and logs, refill the bucket and drop pending work."""
        with self._lock:
            self._reset_state()
        if self._scheduler is not None:
            self._scheduler.clear()

    def stats(self) -> dict:
        with self._lock:
            out = dict(self._counters)
            videos = self._store.videos
            out["videos"] = len(videos)
            out["errored_videos"] = sum(1 for v in videos.values() if v.state == ERRORED)
            out["hung_videos"] = sum(1 for v in videos.values() if v.hung and v.state == PROCESSING)
            # A duplicate is a second video for one reference that is not errored: an errored
            # video is expected to be replaced by a retry.
            out["duplicate_videos"] = sum(
                1 for ids in self._store.by_ref.values() if sum(1 for i in ids if videos[i].state != ERRORED) > 1
            )
            return {k: out[k] for k in STAT_KEYS}

    def text_tracks(self) -> list[dict]:
        """What the provider holds of caption tracks: per video with any, its id, our reference, and each
        track as stored (language, name, status, error, format, how many times it was sent, its content)."""
        with self._lock:
            return [
                {
                    "video_id": video.id,
                    "ref": video.ref,
                    "tracks": [
                        {
                            "id": t.id,
                            "language": t.language,
                            "name": t.name,
                            "closed_captions": t.closed_captions,
                            "ref": t.ref,
                            "status": t.status,
                            "error": t.error,
                            "format": t.format,
                            "uploads": t.uploads,
                            "content": t.content.decode("utf-8", "replace") if t.content is not None else None,
                        }
                        for t in video.texts
                    ],
                }
                for video in self._store.videos.values()
                if video.texts
            ]

    def requests_log(self, ops: Sequence[str] | None = ("create",)) -> list[dict]:
        """The request log: creates only by default, as it always was; `ops=None` for every op."""
        with self._lock:
            return [r for r in self._requests if ops is None or r["op"] in ops]

    def config_dict(self) -> dict:
        with self._lock:
            return self.config.to_dict()

    def patch_config(self, changes: dict) -> dict:
        """Apply a validated patch under the state lock and return the new config."""
        # host and port are accepted but only take effect on the next start().
        with self._lock:
            self.config.patch(changes)
            self._configure_limits()
            if "seed" in changes:
                self._seed_rngs()
            return self.config.to_dict()

    def _configure_limits(self) -> None:
        """Limits act at once, not from a bucket's next refill (under the lock)."""
        cfg, now = self.config, time.monotonic()
        self._bucket.configure(cfg.rate, cfg.burst, now)
        self._read_bucket.configure(cfg.read_rate, cfg.read_burst, now)
        self._budget.configure(cfg.budget_quota, cfg.budget_window_s, cfg.budget_block_s)

    # ----- the request pipeline ----------------------------------------------------------

    def handle(self, request: ApiRequest) -> Reply:
        """Answer one API request in the active profile's wire format."""
        with self._lock:
            cfg = copy.copy(self.config)
        profile = PROFILES[cfg.profile]
        routed = profile.route(request.method, request.path)
        if isinstance(routed, Reply):
            return routed  # Unknown path or method: not an API operation, not logged.
        op, params = routed
        if cfg.library_size > 0:
            op = profile.source_ops.get(op, op)
        call = Call(request.query, params, request.headers, request.base_url, op=op, method=request.method)
        entry = {
            "t": time.time(),
            "method": request.method,
            "op": op,
            "key": request.headers.get("Idempotency-Key"),
            "ref": None,
        }
        if op.startswith("src_") or (cfg.library_size > 0 and op in _VIDEO_READS):
            reply = self._source(cfg, profile, call, op, request.body)
        elif op == "create":
            reply = self._create(cfg, profile, call, request.body, entry)
        elif op in _VIDEO_READS:
            reply = self._read(cfg, profile, call, op, entry)
        elif op in _TRACK_OPS:
            reply = self._track(cfg, profile, call, op, request.body, entry)
        else:
            reply = self._account(cfg, profile, call, request.body)
        if cfg.rate_headers:
            with self._lock:
                state = self._header_state(op, time.monotonic())
            if state is not None:
                state = state.stated(cfg.rate_header_scale)
                # A 429's own hint headers win over the general ones.
                reply.headers = {**profile.rate_headers(cfg, state), **reply.headers}
        entry.update(status=reply.status, retry_after_s=reply.told, lost=reply.lost)
        with self._lock:
            self._requests.append(entry)
            if op == "create" and reply.status == 400:
                self._counters["rejected"] += 1
        return reply

    def _header_state(self, op: str, now: float) -> RateState | None:
        """What rate-limit headers report: the budget when there is one (it covers every call), else
        the bucket the request draws from (the create bucket for a read that no bucket limits)."""
        if self._budget.on:
            return self._budget.state(now)
        if op != "create" and self._read_bucket.rate > 0:
            return self._read_bucket.state(now)
        return self._bucket.state(now)

    @staticmethod
    def _throttled(cfg: SimConfig, profile: Profile, wait_s: float, state: RateState) -> Reply:
        hint, told = profile.throttle_hint(cfg, wait_s, state)
        reply = profile.error("throttled")
        reply.headers.update(hint)
        reply.told = told
        return reply

    def _gate(self, cfg: SimConfig, profile: Profile, call: Call) -> Reply | None:
        """Auth, the call budget, then the injected 503: None if the request may go on."""
        denied = profile.authorize(cfg, call)
        if denied is not None:
            return denied
        with self._lock:
            now = time.monotonic()
            blocks = self._budget.blocks
            wait = self._budget.take(now)
            if wait is not None:
                self._counters["budget_throttled"] += 1
                self._counters["blocks"] += self._budget.blocks - blocks
                state = self._budget.state(now)
        if wait is not None:
            return self._throttled(cfg, profile, wait, state)
        if cfg.unavailable_rate <= 0:
            return None
        with self._lock:
            if self._rng.random() >= cfg.unavailable_rate:
                return None
            self._counters["unavailable_injected"] += 1
            hinted = self._rng.random() < cfg.unavailable_retry_after_fraction
            told = self._rng.randint(UNAVAILABLE_RETRY_AFTER_S, max(1, cfg.unavailable_retry_after_max_s))
        reply = profile.error("unavailable")
        if hinted:
            reply.headers["Retry-After"] = str(told)
            reply.told = float(told)
        return reply

    def _take_read(self, cfg: SimConfig, profile: Profile) -> Reply | None:
        """The bucket every request but a create draws from: None, or the 429."""
        with self._lock:
            now = time.monotonic()
            wait = self._read_bucket.take(now)
            if wait is None:
                return None
            self._counters["read_throttled"] += 1
            state = self._read_bucket.state(now)
        return self._throttled(cfg, profile, wait, state)

    def _create(self, cfg: SimConfig, profile: Profile, call: Call, raw: bytes, entry: dict) -> Reply:
        body, parse_error = parse_json(raw)
        entry["ref"] = profile.ref_of(body)
        with self._lock:
            self._counters["create_requests"] += 1
        refused = self._gate(cfg, profile, call)
        if refused is not None:
            return refused

        delay_ms = cfg.latency_ms + (self._rng.uniform(0, cfg.latency_jitter_ms) if cfg.latency_jitter_ms else 0)
        if delay_ms > 0:
            time.sleep(delay_ms / 1000.0)  # Outside the lock: slow requests must not serialise others.

        injected, wait, state = False, None, None
        with self._lock:
            if cfg.fail_rate > 0 and self._rng.random() < cfg.fail_rate:
                self._counters["failed_injected"] += 1
                injected = True
            else:
                now = time.monotonic()
                wait = self._bucket.take(now)
                if wait is not None:
                    self._counters["throttled"] += 1
                    state = self._bucket.state(now)
        if injected:
            return profile.error("failed")
        if wait is not None:
            return self._throttled(cfg, profile, wait, state)

        draft = profile.parse_create(body, parse_error, call)
        if isinstance(draft, Reply):
            return draft
        entry.update(draft.log)
        if draft.source is not None and is_unsupported(draft.source):
            return profile.error("unsupported")

        key = entry["key"] if profile.honours_idempotency_key else None
        with self._lock:
            now = time.monotonic()
            replay = self._store.by_key.get(key) if cfg.honour_idempotency and key is not None else None
            if replay is not None:
                self._counters["duplicate_creates_prevented"] += 1
                return profile.created(self._store.videos[replay], now, replay=True)
            if profile.honours_idempotency_key and cfg.conflict_on_duplicate and self._store.by_ref.get(draft.ref):
                self._counters["duplicate_creates_prevented"] += 1
                return profile.error("conflict")
            refused = self._account_limits(cfg, profile)
            if refused is not None:
                return refused
            processing = draft.source is not None
            # Early webhooks (all, or a share of the videos) mean processing completes at once.
            early = cfg.webhook_early or (cfg.webhook_early_rate > 0 and self._rng.random() < cfg.webhook_early_rate)
            video = Video(
                id=profile.new_id(),
                seq=next(self._seq),
                ref=draft.ref,
                key=key,
                source=draft.source,
                request=copy.deepcopy(draft.request),
                created=time.time(),
                started=now,
                delay_s=0.0 if early else cfg.processing_delay_s,
                state=PROCESSING if processing else IDLE,
                extra={"media_base": call.base_url},  # where its playback URLs point (media.py)
                hung=processing
                and (is_hang(draft.source) or (cfg.hang_rate > 0 and self._rng.random() < cfg.hang_rate)),
            )
            self._store.add(video)
            for text in draft.texts:
                video.add_text(text, one_per_language=False)
            if processing:
                self._store.in_flight += 1
                self._store.stored_s += video.duration
            self._counters["creates"] += 1
            generation = self._generation
            # The answer is made now, as the provider makes it; early webhooks overtake it on the wire.
            reply = profile.created(video, now, replay=False)
            created_events = profile.events(video, "created", now) if self._hooks_on(cfg) else []
            if cfg.lose_rate > 0 and self._rng.random() < cfg.lose_rate:
                self._counters["lost_responses"] += 1
                reply.lost = True

        self._send_events(cfg, profile, created_events, generation, inline=early)
        for text in draft.texts:  # the create's caption files: fetched by the provider, as Mux does
            self._ingest_later(video.id, text, generation, cfg.track_max_bytes)
        if video.state == PROCESSING and not video.hung:  # a hung ingest is never finished
            self._process(cfg, video, generation, early)
        return reply

    def _account_limits(self, cfg: SimConfig, profile: Profile) -> Reply | None:
        """The account's caps on a create (under the lock): videos processing at once, storage."""
        # Stream: "up to 120 videos queued or being encoded simultaneously ... Videos in the error, ready, or
        # pendingupload state do not count toward this limit"; "An account cannot upload videos if the total
        # video duration exceeds the video storage capacity purchased"; "Uploads over these limits will receive
        # a 429 (Too Many Requests) or 413 (Payload too large)" (https://developers.cloudflare.com/stream/faq/).
        if cfg.max_in_flight > 0 and self._store.in_flight >= cfg.max_in_flight:
            self._counters["in_flight_refused"] += 1
            reply = profile.error("busy")
            reply.status = cfg.in_flight_status
            return reply
        if cfg.storage_minutes > 0 and self._store.stored_s >= cfg.storage_minutes * 60:
            self._counters["storage_refused"] += 1
            return profile.error("full")
        return None

    def _read(self, cfg: SimConfig, profile: Profile, call: Call, op: str, entry: dict) -> Reply:
        with self._lock:
            video = self._store.videos.get(call.params.get("id", ""))
        entry["ref"] = profile.list_ref(call) if op == "list" else (video.ref if video else None)
        refused = self._gate(cfg, profile, call) or self._take_read(cfg, profile)
        if refused is not None:
            return refused
        with self._lock:
            now = time.monotonic()
            if op == "list":
                self._counters["lookups"] += 1
                return profile.list(self._store, call, now)
            self._counters["gets"] += 1
            video = self._store.videos.get(call.params["id"])
            return profile.get(video, now) if op == "get" else profile.status(video, now)

    def _track(self, cfg: SimConfig, profile: Profile, call: Call, op: str, raw: bytes, entry: dict) -> Reply:
        """A caption track's upload or a video's list of them, in the profile's way; an upload's answer may be lost."""
        with self._lock:
            video = self._store.videos.get(call.params.get("id", ""))
        entry["ref"] = video.ref if video else None
        refused = self._gate(cfg, profile, call) or self._take_read(cfg, profile)
        if refused is not None:
            return refused
        with self._lock:
            video = self._store.videos.get(call.params.get("id", ""))
            now = time.monotonic()
            if op == "track_list":
                self._counters["track_lists"] += 1
                return profile.list_tracks(video, call, now)
            self._counters["track_requests"] += 1
            taken = profile.take_track(video, call, raw, cfg)
            if isinstance(taken, Reply):
                self._counters["tracks_refused"] += 1
                return taken
            held = video.add_text(taken, profile.one_track_per_language)
            self._counters["track_uploads"] += 1
            reply = profile.track_taken(video, held, now)
            if cfg.track_lose_rate > 0 and self._rng.random() < cfg.track_lose_rate:
                self._counters["lost_track_responses"] += 1
                reply.lost = True
            generation = self._generation
        self._ingest_later(video.id, held, generation, cfg.track_max_bytes)
        return reply

    def _ingest_later(self, vid: str, track: TextTrack, generation: int, max_bytes: int) -> None:
        if track.status == "preparing":  # a file the provider fetches itself (Mux)
            self._run(self._fetch_pool, self._ingest_text, vid, track.id, generation, max_bytes)

    def _ingest_text(self, vid: str, tid: str, generation: int, max_bytes: int) -> None:
        """Fetch and read a caption file the provider was given a URL for: ready, or errored with why."""
        with self._lock:
            video = self._store.videos.get(vid)
            track = next((t for t in video.texts if t.id == tid), None) if video else None
            url = track.url if track else None
        if url is None:
            return
        content, why = fetch_caption(url, max_bytes)
        fmt = None
        if content is not None:
            fmt, why = read_caption(content, webvtt_only=False)
        with self._lock:
            if generation != self._generation or track.status != "preparing":
                return
            track.content, track.format = content, fmt
            track.status, track.error = ("ready", None) if fmt else ("errored", why)

    def playback_media(self, path: str, query: str) -> media.Answer:
        """A ready video's playlists, thumbnail, player page (media.py): what its playback URLs serve.
        Not an API operation: no auth, no bucket, not logged, as a CDN answers apart from the API."""
        parsed = media.split(path)
        if parsed is None:
            return 404, media.TEXT, b"not found\n"

        def find(profile: str, key: str) -> tuple[Video | None, bool]:
            with self._lock:
                if profile == "mux":  # a Mux URL names a playback id, never the asset
                    for video in self._store.videos.values():
                        for pid in mux_playback_ids(video):
                            if pid["id"] == key:
                                return video, pid["policy"] != "public"
                    return None, False
                video = self._store.videos.get(key)
            if video is None:
                return None, False
            if profile == "cloudflare":
                return video, video.request.get("requireSignedURLs") is True
            return video, profile == "apivideo" and video.request.get("public") is False

        return media.serve(*parsed, query, find)

    def _source(self, cfg: SimConfig, profile: Profile, call: Call, op: str, raw: bytes) -> Reply:
        """A read (or a file asked to be prepared) on the library of a source simulator."""
        refused = self._gate(cfg, profile, call) or self._take_read(cfg, profile)
        if refused is not None:
            return refused
        body, _ = parse_json(raw) if raw else (None, None)
        shelf = Shelf(cfg, self._library, call.base_url, profile.name, profile.faults)
        prepared = len(self._library.prepared)
        reply = profile.source(op, shelf, call, body, time.monotonic())
        with self._lock:
            self._counters["source_reads"] += 1
            self._counters["prepares_asked"] += len(self._library.prepared) - prepared
        return reply

    def media(self, method: str, path: str, query: str, range_header: str | None) -> Served:
        """A file of the library (`/_media/<profile>/<index>/<name>`, `/_stream/...`), as its CDN serves it."""
        with self._lock:
            cfg = copy.copy(self.config)
        profile = PROFILES[cfg.profile]
        shelf = Shelf(cfg, self._library, self.url if self._server else "", profile.name, profile.faults)
        now = time.monotonic()
        if path.startswith("/_stream/"):
            served = profile.serve_stream(shelf, method, path) or Served(404, {}, b"Not Found")
        else:
            served = serve_media(
                cfg,
                self._library,
                method,
                path,
                query,
                range_header,
                profile.faults,
                lambda video, name: profile.media_ready(shelf, video, name, now),
            )
        with self._lock:
            self._counters["media_served" if served.status < 300 else "media_refused"] += 1
        return served

    def change_library(self, delete: list[int], make_private: list[int]) -> None:
        """Videos deleted or made private at the source after they were listed."""
        self._library.change(delete, make_private)

    def _account(self, cfg: SimConfig, profile: Profile, call: Call, raw: bytes) -> Reply:
        """An operation on the account (tokens, the webhook subscription); its config changes apply at once."""
        refused = self._gate(cfg, profile, call) or self._take_read(cfg, profile)
        if refused is not None:
            return refused
        body, parse_error = parse_json(raw) if raw else (None, None)
        with self._lock:
            self._counters["account_calls"] += 1
            answer = profile.account(cfg, call, body, parse_error, self._store.account)
            if answer.changes:
                self.config.patch(answer.changes)
        return answer.reply

    # ----- processing and webhooks -----------------------------------------------------

    def _process(self, cfg: SimConfig, video: Video, generation: int, early: bool) -> None:
        """Schedule a new video's completion, fetching its source first when check_source is on.
        `early`: it completes at once, its webhooks sent before the create's answer."""
        vid = video.id
        if cfg.check_source:
            if early:
                self._check_source(vid, video.source, generation, inline=True)
            else:
                self._run(self._fetch_pool, self._check_source, vid, video.source, generation)
        elif early:
            self._finish(vid, generation, inline=True)
        elif self._scheduler is not None:
            self._scheduler.call_later(video.delay_s, lambda: self._finish(vid, generation))

    @staticmethod
    def _run(pool: ThreadPoolExecutor | None, fn, *args) -> None:
        try:
            pool.submit(fn, *args)
        except (RuntimeError, AttributeError):
            pass  # The pool is shut down (or never started): the simulator is stopping.

    def _check_source(self, vid: str, source: str, generation: int, inline: bool = False) -> None:
        """Fetch the source as Cloudflare does; a failure ends the video errored, else processing goes on."""
        with self._lock:
            mode = PROFILES[self.config.profile].fetch_mode
        problem = source_problem(source, mode)
        if problem is not None:
            with self._lock:
                if generation == self._generation:
                    self._counters["source_checks_failed"] += 1
            self._finish(vid, generation, inline, failure="fetch")
            return
        with self._lock:
            video = self._store.videos.get(vid)
            left = max(0.0, video.delay_s - (time.monotonic() - video.started)) if video else 0.0
        if inline:
            self._finish(vid, generation, inline=True)
        elif self._scheduler is not None:
            self._scheduler.call_later(left, lambda: self._finish(vid, generation))

    def _finish(self, vid: str, generation: int, inline: bool = False, failure: str | None = None) -> None:
        """Finish processing one video (scheduler thread, or the request's with early webhooks)."""
        with self._lock:
            video = self._store.videos.get(vid)
            if generation != self._generation or video is None or video.state != PROCESSING:
                return
            failure = failure or ("corrupt" if video.corrupt else None)
            video.state, video.failure = (ERRORED, failure) if failure else (READY, None)
            video.finished = time.time()
            self._store.in_flight -= 1
            if failure:
                self._store.stored_s -= video.duration  # an errored video holds no storage
            cfg = copy.copy(self.config)
            profile = PROFILES[cfg.profile]
            events = profile.events(video, "finished", time.monotonic()) if self._hooks_on(cfg) else []
        self._send_events(cfg, profile, events, generation, inline)

    @staticmethod
    def _hooks_on(cfg: SimConfig) -> bool:
        return cfg.webhooks_enabled and bool(cfg.webhook_url)

    def _send_events(self, cfg: SimConfig, profile: Profile, events: list[Event], generation: int, inline: bool):
        """Draw each event's webhook faults, then deliver it now (inline) or on the pool."""
        if not self._hooks_on(cfg):
            return
        for event in events:
            with self._lock:
                forged = cfg.webhook_forged_rate > 0 and self._hook_rng.random() < cfg.webhook_forged_rate
                duplicate = cfg.webhook_duplicate_rate > 0 and self._hook_rng.random() < cfg.webhook_duplicate_rate
            job = _Delivery(cfg, profile, event, generation, forged, duplicate)
            if inline:
                self._deliver(job, 0)
            else:
                self._submit(job, 0)

    def _submit(self, job: _Delivery, attempt: int) -> None:
        self._run(self._pool, self._deliver, job, attempt)

    def _post(self, job: _Delivery, secret: str | None) -> int | None:
        """POST the event once; the receiver's status, or None if it did not answer."""
        cfg = job.cfg
        headers = {"Content-Type": "application/json", "User-Agent": "provider-sim"}
        headers.update(job.profile.signature_headers(cfg, job.event, secret, int(time.time())))
        request = urllib.request.Request(cfg.webhook_url, data=job.event.body, headers=headers, method="POST")
        try:
            with self._opener.open(request, timeout=WEBHOOK_TIMEOUT_S) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            exc.close()
            return exc.code
        except (OSError, ValueError):  # URLError, refused, timeout, malformed URL.
            return None

    def _deliver(self, job: _Delivery, attempt: int) -> None:
        """Make one delivery attempt; on failure schedule the next or give up."""
        if job.generation != self._generation:
            return
        if attempt == 0 and job.forged:
            # Same body, signed with a secret the receiver does not have: it must refuse it.
            answer = self._post(job, (job.cfg.webhook_secret or "") + "-forged")
            with self._lock:
                self._counters["webhooks_forged_sent"] += 1
                accepted = answer is not None and 200 <= answer < 300
                self._counters["webhooks_forged_accepted" if accepted else "webhooks_forged_refused"] += 1
        answer = self._post(job, job.cfg.webhook_secret)
        ok = answer is not None and 200 <= answer < 300
        with self._lock:
            if job.generation != self._generation:
                return
            if ok:
                self._counters["webhooks_delivered"] += 1
            elif attempt >= len(job.profile.webhook_backoff_s):
                self._counters["webhooks_failed"] += 1
                return
        if ok:
            if job.duplicate:
                self._post(job, job.cfg.webhook_secret)  # The same delivery again, as providers may.
                with self._lock:
                    self._counters["webhooks_duplicated"] += 1
            return
        scheduler = self._scheduler
        if scheduler is not None:
            scheduler.call_later(job.profile.webhook_backoff_s[attempt], lambda: self._submit(job, attempt + 1))
