"""The simulator's threads: the HTTP server's, the scheduler processing and retries share, the two pools."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from .scheduler import Scheduler


class Server(Protocol):
    """What the threads ask of the HTTP server (server.Server): serve until shut down, then close every
    connection. A protocol, so this module needs nothing of the HTTP layer's."""

    def serve_forever(self, poll_interval: float = 0.5) -> None: ...

    def shutdown(self) -> None: ...

    def close_connections(self) -> None: ...

    def server_close(self) -> None: ...


class Threads:
    """Started and stopped together; work handed over before start or after stop is dropped."""

    def __init__(self) -> None:
        self.scheduler: Scheduler | None = None
        self._hook_pool: ThreadPoolExecutor | None = None
        self._fetch_pool: ThreadPoolExecutor | None = None
        self._server_thread: threading.Thread | None = None

    def start(self, server: Server) -> None:
        """Start the scheduler and the pools, then serve in a daemon thread."""
        self.scheduler = Scheduler()
        self.scheduler.start()
        self._hook_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="provider-sim-webhook")
        # Source fetches (check_source) apart from webhooks, so a slow source never delays an event.
        self._fetch_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="provider-sim-fetch")
        self._server_thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="provider-sim-server", daemon=True
        )
        self._server_thread.start()

    def stop(self, server: Server) -> None:
        """Stop serving, close open connections and stop the scheduler and the pools."""
        server.shutdown()
        server.close_connections()  # Otherwise idle keep-alive handler threads outlive the server.
        server.server_close()
        if self._server_thread is not None:
            self._server_thread.join(timeout=5)
        if self.scheduler is not None:
            self.scheduler.stop()
        # In-flight deliveries and fetches finish (bounded by the urllib timeout); queued ones are dropped.
        for pool in (self._hook_pool, self._fetch_pool):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

    def later(self, delay_s: float, fn: Callable[[], None]) -> None:
        """Run `fn` on the scheduler after `delay_s`; nothing before the first start."""
        scheduler = self.scheduler
        if scheduler is not None:
            scheduler.call_later(delay_s, fn)

    def clear(self) -> None:
        """Drop what the scheduler has pending (on reset)."""
        if self.scheduler is not None:
            self.scheduler.clear()

    def deliver(self, fn: Callable, *args: object) -> None:
        self._run(self._hook_pool, fn, *args)

    def fetch(self, fn: Callable, *args: object) -> None:
        self._run(self._fetch_pool, fn, *args)

    @staticmethod
    def _run(pool: ThreadPoolExecutor | None, fn: Callable, *args: object) -> None:
        if pool is None:
            return  # never started
        try:
            pool.submit(fn, *args)
        except RuntimeError:
            pass  # The pool is shut down: the simulator is stopping.
