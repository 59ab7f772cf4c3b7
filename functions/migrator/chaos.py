"""Fault injection for the benchmarks, off unless asked for: a worker that dies right after a create.

The hardest moment for the migration is a crash between the provider's answer and the ledger
write: the video exists, the ledger says uploading, and the message comes back only after the
queue's visibility timeout. `bench/pacing` sets `CHAOS_CRASH_AFTER_CREATE` (the probability that
a create's invocation dies right after the provider answered) on the uploader, to measure that no
second video is ever made; the template never sets it, and unset it costs one comparison.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Mapping


class Chaos:
    def __init__(self, crash_after_create: float = 0.0, rng: random.Random | None = None, die=None):
        self.probability = crash_after_create
        self.rng = rng or random.Random()
        self._die: Callable[[], None] = die or (lambda: os._exit(70))  # no cleanup, no flush: a crash

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Chaos:
        env = os.environ if env is None else env
        try:
            probability = float(env.get("CHAOS_CRASH_AFTER_CREATE", "0") or 0)
        except ValueError:
            probability = 0.0
        return cls(min(1.0, max(0.0, probability)))

    def after_create(self) -> None:
        """The provider has just made a video: die now, before any ledger write, this once in 1/p."""
        if self.probability > 0 and self.rng.random() < self.probability:
            self._die()
