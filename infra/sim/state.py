"""The state the collaborators share: config, the one lock, the fault RNG streams, videos, counters, limits, log."""

from __future__ import annotations

import copy
import itertools
import random
import threading
import time
from collections import deque
from collections.abc import Sequence

from .bucket import Budget, TokenBucket
from .config import SimConfig
from .library import LibraryState
from .video import Video

REQUEST_LOG_MAX = 200_000
# What the simulator reports of itself, in this order (stats.py): counters kept here, and figures stats.py computes
# from the videos at read time (_DERIVED).
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
# Computed from the videos at read time; every other key is a counter.
_DERIVED = ("videos", "duplicate_videos", "errored_videos", "hung_videos")
COUNTERS = tuple(k for k in STAT_KEYS if k not in _DERIVED)


class Store:
    """The videos and their indexes; only touched under the state lock."""

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


class SimState:
    """Everything a request, a completion or a delivery reads or changes; `lock` guards all of it."""

    store: Store  # made anew by reset()

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.lock = threading.Lock()
        # Separate streams for request faults and webhook faults, so a seeded run draws the
        # same request faults whatever the webhook threads do meanwhile.
        self.rng = random.Random()
        self.hook_rng = random.Random()
        self.generation = 0
        self.reset()

    def reset(self, keep_account: bool = False) -> None:
        """Forget videos, counters and log, refill the limits and reseed (under the lock once shared); with
        `keep_account`, what account operations made (Mux's signing keys, Stream's webhook) stays."""
        account = self.store.account if keep_account else {}
        self.store = Store()
        self.store.account = account
        self.seq = itertools.count()
        self.requests: deque[dict] = deque(maxlen=REQUEST_LOG_MAX)
        self.counters = dict.fromkeys(COUNTERS, 0)
        cfg, now = self.config.limits(), time.monotonic()
        self.bucket = TokenBucket(cfg.rate, cfg.burst, now)  # creates
        self.read_bucket = TokenBucket(cfg.read_rate, cfg.read_burst, now)  # every other request
        self.budget = Budget(cfg.budget_quota, cfg.budget_window_s, cfg.budget_block_s)  # every call
        self.config.others_take = 0  # what the account's other clients would still take is forgotten too
        self.library = LibraryState()  # a source's library: what changed in it (library.py)
        # Bumped on reset so completions and deliveries scheduled before it become no-ops.
        self.generation += 1
        self._seed_rngs()

    def _seed_rngs(self) -> None:
        seed = self.config.seed
        self.rng.seed(seed)
        self.hook_rng.seed(None if seed is None else seed + 1)

    def config_copy(self) -> SimConfig:
        """The config one request goes by, copied under the lock so a concurrent patch never shows half-done."""
        with self.lock:
            return copy.copy(self.config)

    def config_dict(self) -> dict:
        with self.lock:
            return self.config.to_dict()

    def patch_config(self, changes: dict) -> dict:
        """Apply a validated patch under the lock and return the new config."""
        # host and port are accepted but only take effect on the next start().
        with self.lock:
            self.config.patch(changes)
            self._configure_limits()
            if "seed" in changes:
                self._seed_rngs()
            return self.config.to_dict()

    def _configure_limits(self) -> None:
        """Limits act at once, not from a bucket's next refill (under the lock)."""
        cfg, now = self.config.limits(), time.monotonic()
        self.bucket.configure(cfg.rate, cfg.burst, now)
        self.read_bucket.configure(cfg.read_rate, cfg.read_burst, now)
        self.budget.configure(cfg.budget_quota, cfg.budget_window_s, cfg.budget_block_s)
