"""One sweep's work over a source library, whoever runs it: the CLI's `inventory --from` and the stack's mirror.

`Lister` asks again first for the videos the last sweep left still processing (`SweepState.carried`, in
batches of RECHECK_BATCH), then follows the platform's pages from the state's cursor. Each page's entries go
to a `Sink` (rows, unfetchable videos with their reason, videos still processing, which the state carries to
the next sweep or, past PENDING_MAX_S, writes off as unfetchable); then the sink makes them durable (`flush`)
and the state is saved (`Checkpoint.save`), so the resume point never passes an entry not yet kept. A page
the paging guard finds stuck (sources.paging) ends the sweep before it is saved.

The caller says when to stop (`go_on`, asked before every request: a Ctrl-C, the time an invocation has
left, a working-hours window), and a source's failure is raised as `SweepFailed` with what was saved, for
the caller to word (the CLI) or to end the invocation on (the mirror: THROTTLED resumes next time).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from ..messages import AssetMessage
from ..sources import Page, Source, SourceError, Unfetchable, parse_ref
from ..sources.paging import PagingGuard
from .state import PENDING_MAX_S, RECHECK_BATCH, SweepState


class Sink(Protocol):
    """Where a sweep's entries go."""

    def row(self, msg: AssetMessage) -> bool:
        """Take a fetchable video; False when it is a repeat of one taken already (not counted again)."""
        ...

    def unfetchable(self, entry: Unfetchable) -> None:
        """Take a video that can never be fetched (counted by the lister), with its reason."""
        ...

    def pending(self, entry: Unfetchable) -> None:
        """Note a video still processing at the platform (the state carries it to the next sweep)."""
        ...

    def flush(self, page: Page) -> None:
        """Make everything taken so far durable: the state is saved next, past these entries."""
        ...


class Checkpoint(Protocol):
    """Where a sweep's state is kept between pages (and between runs)."""

    def save(self, state: SweepState) -> None: ...


class Stop(StrEnum):
    """Why `Lister.recheck` or `Lister.list_pages` returned."""

    DONE = "done"  # nothing left: the carried all asked for, or the library's last page saved
    ENOUGH = "enough"  # the caller's `enough` said so after a saved page (`--limit`)
    STOPPED = "stopped"  # the caller's `go_on` said no before a request


class Failure(StrEnum):
    RECHECK = "recheck"  # asking again for a video the last sweep left processing
    LISTING = "listing"  # a page of the library
    STUCK = "stuck"  # the platform's paging repeats itself (sources.paging)


class SweepFailed(Exception):
    """The sweep cannot go on now; the state saved before it is the resume point. `error` is the source's
    (SourceThrottled for a spent budget), None for a stuck listing. `reason` is safe to log and store."""

    def __init__(self, failure: Failure, reason: str, error: SourceError | None = None):
        super().__init__(reason)
        self.failure, self.reason, self.error = failure, reason, error


@dataclass
class Lister:
    source: Source
    state: SweepState
    sink: Sink
    checkpoint: Checkpoint
    clock: Callable[[], float] = time.time
    tracks: bool = True
    repeats: int = 0  # rows listed twice in this run (taken once)
    guard: PagingGuard = field(default_factory=PagingGuard)

    def recheck(self, go_on: Callable[[], bool] = lambda: True) -> Stop:
        """Ask again for each video the last sweep left processing, a batch between two saves."""
        carried = sorted(self.state.carried.items())
        while self.state.rechecked < len(carried):
            if not go_on():
                return Stop.STOPPED
            batch = carried[self.state.rechecked : self.state.rechecked + RECHECK_BATCH]
            page = Page()
            for _asset_id, held in batch:
                ref = parse_ref(held["ref"])
                found = self._ask(ref.video_id) if ref else Page()  # gone since: an empty page
                page.entries += found.entries
                page.pending += found.pending
            self.take(page, carried=dict(batch))
            self.state.rechecked += len(batch)
            self._save(page)
        return Stop.DONE

    def _ask(self, video_id: str) -> Page:
        try:
            return self.source.video(video_id, self.tracks)
        except SourceError as exc:
            raise SweepFailed(Failure.RECHECK, exc.reason, exc) from None

    def list_pages(self, go_on: Callable[[], bool] = lambda: True, enough: Callable[[], bool] = lambda: False) -> Stop:
        """Follow the library's pages from the state's cursor until its last, or until the caller stops it."""
        state = self.state
        while go_on():
            try:
                page = self.source.page(state.cursor, state.since, self.tracks)
            except SourceError as exc:
                raise SweepFailed(Failure.LISTING, exc.reason, exc) from None
            stuck = self.guard.check(state.cursor, page)
            if stuck:  # before the page is saved: the resume point stays at the last sound page
                raise SweepFailed(Failure.STUCK, stuck)
            self.take(page)
            state.pages += 1
            if page.newest is not None:
                state.mark = max(state.mark or page.newest, page.newest)
            state.cursor = page.cursor
            state.delta = state.delta or page.delta
            state.done = page.cursor is None
            self._save(page)
            if state.done:
                return Stop.DONE
            if enough():
                return Stop.ENOUGH
        return Stop.STOPPED

    def take(self, page: Page, carried: dict | None = None) -> None:
        """Hand `page`'s entries to the sink: rows, unfetchable ones with their reason, and those still
        processing kept for the next sweep (from when first seen so; past PENDING_MAX_S, written off)."""
        state, now = self.state, self.clock()
        for waiting in page.pending:
            first = (carried or state.carried).get(waiting.asset_id, {}).get("since", now)
            if now - float(first) >= PENDING_MAX_S:
                days = (now - float(first)) / 86_400
                self._unfetchable(
                    Unfetchable(waiting.asset_id, waiting.source_url, f"{waiting.reason} for {days:.0f} days")
                )
                continue
            held = {"ref": waiting.source_url, "since": first, "reason": waiting.reason}
            state.pending[waiting.asset_id] = {**held, **({"title": waiting.title} if waiting.title else {})}
            self.sink.pending(waiting)
        for entry in page.entries:
            state.pending.pop(entry.asset_id, None)
            if isinstance(entry, Unfetchable):
                self._unfetchable(entry)
            elif self.sink.row(entry):
                state.rows += 1
            else:
                self.repeats += 1
        state.skipped += page.skipped

    def _unfetchable(self, entry: Unfetchable) -> None:
        self.state.unfetchable += 1
        self.state.reasons[entry.reason] = self.state.reasons.get(entry.reason, 0) + 1
        self.sink.unfetchable(entry)

    def _save(self, page: Page) -> None:
        self.sink.flush(page)
        self.checkpoint.save(self.state)
