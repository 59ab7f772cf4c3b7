"""ProviderSim: the simulator every caller starts, its shared state and its collaborators wired behind one interface.

Everything here is shared by the profiles, and each part lives in its own module: the
state under one lock (state.py), the request pipeline (pipeline.py) with its fault and
limit gate (gate.py) and its create path (create.py), the source side (sources.py),
processing and its completions on the shared scheduler (processing.py), one webhook
delivery path with the same retries, duplicates, forgeries and early delivery whatever
the scheme (webhooks.py), the counters and what they report (stats.py), and the threads
that serve it all (threads.py).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence

from . import media
from . import stats as report
from .config import SimConfig
from .create import Creator
from .gate import Gate
from .library import Served
from .pipeline import Pipeline
from .processing import Processing
from .profile import Reply
from .request import ApiRequest
from .server import Server
from .sources import Sources
from .state import STAT_KEYS, SimState, Store
from .threads import Threads
from .webhooks import Webhooks

__all__ = ["STAT_KEYS", "ProviderSim"]


class ProviderSim:
    """The simulator's state and behaviour, plus the HTTP server and threads that expose it."""

    def __init__(self, config: SimConfig | None = None, verbose: bool = False) -> None:
        self.verbose = verbose
        self._state = SimState(config or SimConfig())
        self._server: Server | None = None
        self._playback_lock = threading.Lock()
        self._playback_log: deque[dict] = deque(maxlen=10_000)
        self._threads = Threads()
        hooks = Webhooks(self._state, self._threads)
        processing = Processing(self._state, self._threads, hooks)
        gate = Gate(self._state)
        self._sources = Sources(self._state, gate)
        creator = Creator(self._state, gate, processing, hooks)
        self._pipeline = Pipeline(self._state, gate, creator, processing, self._sources)

    @property
    def config(self) -> SimConfig:
        return self._state.config

    @property
    def _lock(self) -> threading.Lock:
        return self._state.lock  # tests take it to change a stored video

    @property
    def _store(self) -> Store:
        return self._state.store

    def start(self) -> ProviderSim:
        """Bind the socket and serve in daemon threads; returns self for chaining."""
        if self._server is not None:
            raise RuntimeError("already started")
        self._server = Server(self)
        self._threads.start(self._server)
        return self

    def stop(self) -> None:
        """Stop serving, close open connections and stop the scheduler and delivery pool."""
        server, self._server = self._server, None
        if server is not None:
            self._threads.stop(server)

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
        host = host.decode() if isinstance(host, bytes) else host  # typeshed's address may be bytes: an IP's is not
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def reset(self, keep_account: bool = False) -> None:
        """Forget videos, counters and logs, refill the bucket and drop pending work; with `keep_account`, keep
        what account operations made (signing keys an account's credentials name, its webhook)."""
        with self._state.lock:
            self._state.reset(keep_account)
        self._threads.clear()

    def stats(self) -> dict:
        return report.stats(self._state)

    def text_tracks(self) -> list[dict]:
        """The caption tracks held, per video (stats.text_tracks)."""
        return report.text_tracks(self._state)

    def requests_log(self, ops: Sequence[str] | None = ("create",)) -> list[dict]:
        """The request log: creates only by default, as it always was; `ops=None` for every op."""
        return report.requests_log(self._state, ops)

    def config_dict(self) -> dict:
        return self._state.config_dict()

    def patch_config(self, changes: dict) -> dict:
        """Apply a validated patch under the state lock and return the new config."""
        return self._state.patch_config(changes)

    def handle(self, request: ApiRequest) -> Reply:
        """Answer one API request in the active profile's wire format."""
        return self._pipeline.handle(request)

    def playback_media(self, path: str, query: str) -> media.Answer:
        answer = self._sources.playback_media(path, query)
        with self._playback_lock:  # what a browser was served (the rewrite's browser test reads it)
            self._playback_log.append({"path": path, "status": answer[0], "type": answer[1]})
        return answer

    def playback_log(self) -> list[dict]:
        """Every playback request served (`/_play/...`): path, status and content type, oldest first."""
        with self._playback_lock:
            return list(self._playback_log)

    def media(self, method: str, path: str, query: str, range_header: str | None) -> Served:
        return self._sources.media(method, path, query, range_header, self.url if self._server else "")

    def change_library(self, delete: list[int], make_private: list[int]) -> None:
        self._sources.change_library(delete, make_private)
