"""One background thread running callables at due times: video processing and webhook retries share it."""

from __future__ import annotations

import heapq
import itertools
import sys
import threading
import time
from collections.abc import Callable


class Scheduler:
    """One background thread running callables at due times, shared by processing and webhook retries."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()  # Tie-breaker so callables are never compared.
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="provider-sim-scheduler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def call_later(self, delay_s: float, fn: Callable[[], None]) -> None:
        with self._cond:
            heapq.heappush(self._heap, (time.monotonic() + max(0.0, delay_s), next(self._seq), fn))
            self._cond.notify()

    def clear(self) -> None:
        with self._cond:
            self._heap.clear()

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._stopped:
                        return
                    now = time.monotonic()
                    if self._heap and self._heap[0][0] <= now:
                        fn = heapq.heappop(self._heap)[2]
                        break
                    self._cond.wait(self._heap[0][0] - now if self._heap else None)
            try:
                fn()  # Outside the condition so a task may schedule further tasks.
            except Exception as exc:  # A bad task must not kill the only scheduler thread.
                print(f"provider-sim: scheduled task failed: {exc!r}", file=sys.stderr, flush=True)
