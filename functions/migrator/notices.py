"""Done and stalled notices, decided: one when a load's last asset settles, one when nothing has moved for a set
time while work remains. Pure: functions of the tally's aggregates (`tally.Stats`), the `#notices` control item
as read, the clock and the working hours; `notify.py` reads, writes and publishes.

Both are looked at by reconcile, on its schedule (default every 15 minutes), from the aggregates it already reads
for the dashboard: the tally's stream batches would each have to read the 16 count shards to know the whole, and
a notice a few minutes late costs nothing. Exactly once, over retried and overlapping runs, by a conditional write
on the `#notices` item of the ledger before the notice is published:

- **done**: every asset the ledger counts is settled (ready, rejected, failed) and intake holds no message not yet
  recorded (`remaining` 0, as `migrator status` counts it), with at least one asset. Told once per load: the item
  keeps `done_total`, the number of assets when it was told, so a second load (more assets) is told again; a
  retry round (the same assets, work again after the notice) arms it (`armed`), so its end is told too.
- **stalled**: work remains and the counts (`fingerprint`) have not changed for StallAfterMinutes of open working
  hours (time outside the window is not a stall: the fleet is held on purpose). Told once per episode
  (`stall_told`), cleared when the counts move again. 0: off.

A publish that fails gives its write back (`armed` again, or `stall_told` false) so the next run tries again; a
crash between the write and the publish loses that notice. So each is sent at most once, save a publish that timed
out after SNS had taken it (then the next run sends it again).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum

from .states import State
from .tally import Stats
from .window import Window

NOTICES_ID = "#notices"
# The states whose assets are still to move, as `migrator status` counts what is left.
ACTIVE = (State.PENDING, State.INVENTORIED, State.UPLOADING, State.PROCESSING)
SETTLED = (State.READY, State.REJECTED, State.FAILED)
SUBJECT_MAX = 100  # SNS refuses a longer subject


def remaining_of(counts: Mapping[str, int], unrecorded: int) -> int:
    """Assets still to move: those the ledger counts in an active state, and messages intake has not recorded."""
    return sum(int(counts.get(s.value, 0)) for s in ACTIVE) + max(0, unrecorded)


@dataclass(frozen=True)
class Progress:
    """Where the migration stands, from the aggregates (what `migrator status --json` shows of it)."""

    counts: dict  # state -> assets
    total: int
    remaining: int
    tracks: dict
    extras: dict
    archive: dict

    @property
    def fingerprint(self) -> str:
        """Changes whenever an asset, a track, an extra or an archive copy changes state (the counts move)."""
        shown = json.dumps([self.counts, self.tracks, self.extras, self.archive], sort_keys=True, default=int)
        return hashlib.sha256(shown.encode()).hexdigest()[:16]

    def summary(self) -> dict:
        """The notice's summary: the fields `migrator status --json` gives for the same counts."""
        return {
            "counts": dict(self.counts),
            "total": self.total,
            "remaining": self.remaining,
            "ready": int(self.counts.get(State.READY.value, 0)),
            "rejected": int(self.counts.get(State.REJECTED.value, 0)),
            "failed": int(self.counts.get(State.FAILED.value, 0)),
            "tracks": dict(self.tracks),
            "extras": {kind: dict(states) for kind, states in self.extras.items()},
            "archive": dict(self.archive) if any(self.archive.values()) else None,
        }


def progress_of(stats: Stats, unrecorded: int) -> Progress:
    """The progress the tally's aggregates show, with intake's messages not yet recorded."""
    counts = {k: int(v) for k, v in stats.counts.items()}
    return Progress(
        counts=counts,
        total=sum(counts.values()),
        remaining=remaining_of(counts, unrecorded),
        tracks=dict(stats.tracks),
        extras={kind: dict(states) for kind, states in stats.extras.items()},
        archive=dict(stats.archive),
    )


@dataclass(frozen=True)
class Seen:
    """The `#notices` item as read (`seen_of`)."""

    done_total: int | None = None  # assets when the last done notice was told; None: never told
    armed: bool = False  # work came back after that notice (a retry round): its end is told too
    fingerprint: str | None = None  # the counts as the last run saw them
    moved_at: float | None = None  # when they last changed
    stall_told: bool = False  # this stall episode was told


def seen_of(item: Mapping | None) -> Seen:
    item = item or {}
    done = item.get("done_total")
    moved = item.get("moved_at")
    return Seen(
        done_total=int(done) if done is not None else None,
        armed=bool(item.get("armed", False)),
        fingerprint=str(item["fingerprint"]) if item.get("fingerprint") is not None else None,
        moved_at=float(moved) if moved is not None else None,
        stall_told=bool(item.get("stall_told", False)),
    )


class DoneStep(Enum):
    NONE = "none"
    ARM = "arm"  # work again after a done notice: its end will be told
    TELL = "tell"


def done_step(progress: Progress, seen: Seen) -> DoneStep:
    """What the done notice calls for: not done yet, done now and not yet told, told already, a second load."""
    if progress.total <= 0:
        return DoneStep.NONE
    if progress.remaining > 0:
        return DoneStep.ARM if seen.done_total is not None and not seen.armed else DoneStep.NONE
    if seen.done_total != progress.total or seen.armed:
        return DoneStep.TELL
    return DoneStep.NONE


class StallStep(Enum):
    NONE = "none"
    MOVED = "moved"  # the counts changed (or were never seen): note them, and end a stall episode
    TELL = "tell"


def stall_step(progress: Progress, seen: Seen, now: float, stall_after_s: float, window: Window | None) -> StallStep:
    """What the stall notice calls for: moving, not stalled long enough, stalled now, told already."""
    if seen.fingerprint != progress.fingerprint or seen.moved_at is None:
        return StallStep.MOVED
    if stall_after_s <= 0 or progress.remaining <= 0 or seen.stall_told:
        return StallStep.NONE
    still = window.open_seconds(seen.moved_at, now) if window is not None else now - seen.moved_at
    return StallStep.TELL if still >= stall_after_s else StallStep.NONE


# --- what the notices say ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Notice:
    subject: str
    message: str


def done_notice(stack: str, progress: Progress, now: float) -> Notice:
    s = progress.summary()
    subject = f"{stack}: migration done, {_assets(s['total'])} ({s['ready']:,} ready"
    subject += f", {s['rejected']:,} rejected, {s['failed']:,} failed)"
    lines = [
        f"The migration on stack {stack} has settled every asset it was given ({_stamp(now)}).",
        f"{_assets(s['total'])}: {s['ready']:,} ready, {s['rejected']:,} rejected, {s['failed']:,} failed.",
    ]
    if s["failed"] or s["rejected"]:
        lines.append("`migrator report` says why each failed or was rejected; `migrator retry` tries the failed again.")
    lines.append("`migrator export` writes the cut-over map. The summary, as `migrator status --json` gives it:")
    return Notice(subject[:SUBJECT_MAX], "\n".join(lines) + "\n\n" + json.dumps(s, sort_keys=True))


def stall_notice(stack: str, progress: Progress, seen: Seen, now: float) -> Notice:
    s = progress.summary()
    since = _stamp(seen.moved_at) if seen.moved_at is not None else "unknown"
    subject = f"{stack}: migration stalled, {_assets(s['remaining'])} left"
    lines = [
        f"Nothing has moved on stack {stack} since {since} (time outside the working hours not counted),"
        f" with {_assets(s['remaining'])} left to move.",
        "Look at `migrator status` (paused? held? the DLQ?), the uploader's log, and `migrator doctor`."
        " You are told once per stall; the next notice comes after things move again.",
        "The summary, as `migrator status --json` gives it:",
    ]
    return Notice(subject[:SUBJECT_MAX], "\n".join(lines) + "\n\n" + json.dumps(s, sort_keys=True))


def _assets(n: int) -> str:
    return f"{n:,} asset" if n == 1 else f"{n:,} assets"


def _stamp(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")
