"""The fault and limit gate of the request pipeline: auth, budget, injected 503s and 500s, latency, the buckets."""

from __future__ import annotations

import time

from .bucket import RateState
from .config import SimConfig
from .profile import Call, Profile, Reply
from .state import SimState

UNAVAILABLE_RETRY_AFTER_S = 1  # the Retry-After an injected 503 carries, when it carries one


def throttled(cfg: SimConfig, profile: Profile, wait_s: float, state: RateState) -> Reply:
    """The profile's 429, with its hint of how long to wait."""
    hint, told = profile.throttle_hint(cfg, wait_s, state)
    reply = profile.error("throttled")
    reply.headers.update(hint)
    reply.told = told
    return reply


class Gate:
    """Decides whether a request goes on, drawing request faults from the request RNG stream; None means it may."""

    def __init__(self, state: SimState) -> None:
        self._state = state

    def admit(self, cfg: SimConfig, profile: Profile, call: Call) -> Reply | None:
        """Auth, the call budget, then the injected 503: None if the request may go on."""
        denied = profile.authorize(cfg, call)
        if denied is not None:
            return denied
        s = self._state
        with s.lock:
            now = time.monotonic()
            blocks = s.budget.blocks
            wait = s.budget.take(now)
            if wait is not None:
                s.counters["budget_throttled"] += 1
                s.counters["blocks"] += s.budget.blocks - blocks
                state = s.budget.state(now)
        if wait is not None and state is not None:  # a budget that makes one wait is on: it has a state
            return throttled(cfg, profile, wait, state)
        if cfg.unavailable_rate <= 0:
            return None
        with s.lock:
            if s.rng.random() >= cfg.unavailable_rate:
                return None
            s.counters["unavailable_injected"] += 1
            hinted = s.rng.random() < cfg.unavailable_retry_after_fraction
            told = s.rng.randint(UNAVAILABLE_RETRY_AFTER_S, max(1, cfg.unavailable_retry_after_max_s))
        reply = profile.error("unavailable")
        if hinted:
            reply.headers["Retry-After"] = str(told)
            reply.told = float(told)
        return reply

    def admit_read(self, cfg: SimConfig, profile: Profile, call: Call) -> Reply | None:
        """What every request but a create passes: admit, then the read bucket."""
        refused = self.admit(cfg, profile, call)
        if refused is not None:
            return refused
        s = self._state
        with s.lock:
            now = time.monotonic()
            wait = s.read_bucket.take(now)
            if wait is None:
                return None
            s.counters["read_throttled"] += 1
            state = s.read_bucket.state(now)
        return throttled(cfg, profile, wait, state) if state is not None else None  # a bucket that waits has one

    def admit_create(self, cfg: SimConfig, profile: Profile) -> Reply | None:
        """After admit, a create's latency, then the injected 500 or the create bucket."""
        s = self._state
        delay_ms = cfg.latency_ms + (s.rng.uniform(0, cfg.latency_jitter_ms) if cfg.latency_jitter_ms else 0)
        if delay_ms > 0:
            time.sleep(delay_ms / 1000.0)  # Outside the lock: slow requests must not serialise others.

        injected, wait, state = False, None, None
        with s.lock:
            if cfg.fail_rate > 0 and s.rng.random() < cfg.fail_rate:
                s.counters["failed_injected"] += 1
                injected = True
            else:
                now = time.monotonic()
                if s.config.others_take > 0 and s.bucket.rate > 0:  # the live config: `cfg` is this request's copy
                    s.config.others_take -= 1
                    s.bucket.empty(now)
                wait = s.bucket.take(now)
                if wait is not None:
                    s.counters["throttled"] += 1
                    state = s.bucket.state(now)
        if injected:
            return profile.error("failed")
        if wait is not None and state is not None:  # a bucket that makes one wait is limited: it has a state
            return throttled(cfg, profile, wait, state)
        return None

    def add_rate_headers(self, cfg: SimConfig, profile: Profile, op: str, reply: Reply) -> None:
        """The rate-limit headers the profile sends, when rate_headers is on."""
        if not cfg.rate_headers:
            return
        with self._state.lock:
            state = self._header_state(op, time.monotonic())
        if state is not None:
            state = state.stated(cfg.rate_header_scale)
            # A 429's own hint headers win over the general ones.
            reply.headers = {**profile.rate_headers(cfg, state), **reply.headers}

    def _header_state(self, op: str, now: float) -> RateState | None:
        """What rate-limit headers report: the budget when there is one (it covers every call), else
        the bucket the request draws from (the create bucket for a read that no bucket limits)."""
        s = self._state
        if s.budget.on:
            return s.budget.state(now)
        if op != "create" and s.read_bucket.rate > 0:
            return s.read_bucket.state(now)
        return s.bucket.state(now)
