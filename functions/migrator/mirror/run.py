"""One invocation of the mirror: take the checkpoint's lease, go on with what is under way, give it back.

`Mirror.run(time_left)` reads the checkpoint item, asks `decide.next_action`, and if there is work takes the
lease (a conditional write: a second invocation that overlaps this one finds it held and returns). Then, while
the window stays open and time is left for a page:

1. a gone check under way (after a full sweep) goes on, page by page of the ledger's scan;
2. a sweep under way resumes from its saved state, or a new one starts (`decide.start_of`): the shared lister
   (migrator.sweeping) sends each row to intake (sink.IntakeSink) and saves the state in the item after every
   page (`CheckpointSaver`), fenced by the lease;
3. a finished sweep records its mark (the next is a delta from it) and, if full, starts its gone check.

A THROTTLED source (its budget spent: impatient mode never sleeps), a failure, the window closing or the time
running out end the invocation with its outcome recorded; the next scheduled one resumes where it stopped.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..sources import Source, SourceError
from ..sweeping import Lister, Stop, SweepFailed, SweepState, next_mark, recorded
from ..where import parse
from . import gone
from .checkpoint import LeaseLost, Store, scan_of, sweep_of, view_of
from .decide import PAGE_RESERVE_S, Action, Outcome, View, lease_for, next_action, outcome_of, start_of
from .sink import IntakeSink, SendFailed, stamper

logger = logging.getLogger(__name__)


@dataclass
class CheckpointSaver:
    """The lister's checkpoint: the state into the item after every page, with the rows the page sent."""

    store: Store
    token: str
    sink: IntakeSink
    full: bool
    generation: int

    def save(self, state: SweepState) -> None:
        self.store.save_sweep(self.token, state, self.full, self.generation, *self.sink.taken())


@dataclass
class Mirror:
    platform: str
    store: Store
    source: Callable[[], Source]  # built only when a listing starts
    sqs: Any
    queue_url: str
    closed_until: Callable[[float], float | None]  # the working-hours window: when it opens, None while open
    audit_every: int = 24
    clock: Callable[[], float] = time.time
    where: str = ""  # MirrorWhere: rows its expression (migrator.where) does not keep are not sent; "": all are

    def run(self, time_left: Callable[[], float]) -> dict:
        now = self.clock()
        item = self.store.read()
        view = view_of(item)
        action = next_action(view, now, self.closed_until(now), time_left())
        if action is Action.WAIT:
            return {"action": action.value, "outcome": Outcome.WAITING.value}
        if action in (Action.HELD, Action.SHORT):
            return {"action": action.value, "outcome": Outcome.HELD.value if action is Action.HELD else "short"}
        token = uuid.uuid4().hex
        taken = self.store.acquire(token, now, lease_for(now, time_left()))
        if taken is None:
            return {"action": Action.HELD.value, "outcome": Outcome.HELD.value}
        outcome, error = Outcome.PAUSED, None
        try:
            outcome, error = self._work(token, taken, time_left)
        except LeaseLost as exc:
            logger.warning("%s", exc)
            return {"action": action.value, "outcome": "lease lost"}
        except (SendFailed, ValueError) as exc:  # rows intake would not take; a state too large to checkpoint
            outcome, error = Outcome.FAILED, str(exc)
        finally:
            if error is None and outcome is Outcome.PAUSED and self.closed_until(self.clock()) is not None:
                outcome = Outcome.WAITING
        self.store.release(token, outcome.value, error)
        return {"action": action.value, "outcome": outcome.value, **({"error": error} if error else {})}

    def _go_on(self, time_left: Callable[[], float]) -> Callable[[], bool]:
        return lambda: time_left() > PAGE_RESERVE_S and self.closed_until(self.clock()) is None

    def _work(self, token: str, item: dict, time_left: Callable[[], float]) -> tuple[Outcome, str | None]:
        go_on = self._go_on(time_left)
        view = view_of(item)
        scan = scan_of(item)
        if scan is not None:
            if not self._check_gone(token, scan, go_on):
                return Outcome.PAUSED, None
            if not go_on():
                return Outcome.FINISHED, None
            item = self.store.read()
            view = view_of(item)
        return self._sweep(token, item, view, go_on)

    def _sweep(self, token: str, item: dict, view: View, go_on: Callable[[], bool]) -> tuple[Outcome, str | None]:
        state = sweep_of(item, self.platform)
        full = bool(item.get("full")) if state is not None else False
        generation = view.generation
        if state is None:
            start = start_of(view, self.audit_every)
            full = start.full
            generation = view.generation + 1 if full else view.generation
            state = SweepState(self.platform, cursor=start.cursor, since=start.since, carried=start.carried)
            state.began = self.clock()
        stamp = stamper(self.store.client, self.store.table, generation) if full else None
        keep = parse(self.where, self.clock()).matches if self.where.strip() else None  # ages from this run's now
        sink = IntakeSink(self.sqs, self.queue_url, stamp, keep)
        saver = CheckpointSaver(self.store, token, sink, full, generation)
        lister = Lister(self.source(), state, sink, saver, self.clock)
        stop: Stop | None = None
        failure: SweepFailed | None = None
        try:
            stop = lister.recheck(go_on)
            if stop is Stop.DONE:
                stop = lister.list_pages(go_on)
        except SweepFailed as exc:
            failure = exc
        except SourceError as exc:  # building the source (its credentials) counts as the listing's failure
            return Outcome.FAILED, exc.reason
        outcome = outcome_of(stop, failure)
        if state.done:
            now = self.clock()
            record = recorded(view.record, next_mark(state), now, state.pending, state.delta)
            scan = {"generation": generation, "began": state.began, "start_key": None} if full else None
            self.store.finish_sweep(token, record, scan, now)
            if scan is not None and go_on():
                if not self._check_gone(token, scan, go_on):
                    return Outcome.PAUSED, None
        return outcome, failure.reason if failure else None

    def _check_gone(self, token: str, scan: dict, go_on: Callable[[], bool]) -> bool:
        """The gone check's pages while time allows; True once it is done."""
        gone_so_far = int(scan.get("gone") or 0)
        while go_on():
            fresh, already, next_key = gone.scan_page(self.store.client, self.store.table, self.platform, scan)
            marked = gone.mark_gone(self.store.client, self.store.table, fresh, int(scan["generation"]), self.clock())
            gone_so_far += marked + already
            scan = {**scan, "start_key": next_key, "gone": gone_so_far}
            if next_key is None:
                self.store.finish_scan(token, gone_so_far, self.clock())
                return True
            self.store.save_scan(token, scan)
        return False
