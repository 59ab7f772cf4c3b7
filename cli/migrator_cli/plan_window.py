"""The plan's time under working hours: the fleet works only while the window is open (functions/migrator/window.py),
so the hours of work `migrator plan` estimates take longer on the calendar. Pure: `windowed_time` turns the plan's
estimate (seconds of work at the planned pace) into wall-clock time from a start, for the plan's report and JSON."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from migrator.window import Window, parse_window


@dataclass(frozen=True)
class WindowedTime:
    """`work_s` seconds of work, done only while `window` is open, from `start`: `wall_s` on the calendar."""

    work_s: float
    wall_s: float
    window: str  # the window's canonical text; "": none (the fleet works around the clock)
    start: float
    zone: str = "UTC"

    @property
    def finishes_at(self) -> float:
        return self.start + self.wall_s

    def as_dict(self) -> dict:
        return {
            "work_s": round(self.work_s, 1),
            "wall_s": round(self.wall_s, 1),
            "window": self.window or None,
            "finishes_at": round(self.finishes_at, 1),
        }

    def words(self) -> str:
        """'45.0 h of work inside Mon-Fri 09:00-18:00 Europe/Berlin: 4 d 06 h on the calendar, done about
        Fri 2026-12-11 18:00 Europe/Berlin if started Mon 2026-12-07 09:00'."""
        if not self.window:
            return f"{self.work_s / 3600:,.1f} h of work, around the clock (no working hours)"
        done = _local(self.finishes_at, self.zone)
        return (
            f"{self.work_s / 3600:,.1f} h of work inside {self.window}: {_calendar(self.wall_s)} on the calendar,"
            f" done about {done} {self.zone} if started {_local(self.start, self.zone)}"
        )


def windowed_time(work_s: float | None, window: Window | str | None, start: float) -> WindowedTime | None:
    """The plan's `work_s` (None: not timed) as calendar time from `start` under `window` (a Window, its text, or
    None/"" for none); ValueError for a text that is not a window."""
    if work_s is None:
        return None
    parsed = parse_window(window) if isinstance(window, str) or window is None else window
    if parsed is None:
        return WindowedTime(work_s, work_s, "", start)
    return WindowedTime(work_s, parsed.wall_time(start, work_s), parsed.text, start, parsed.zone)


def _local(epoch: float, zone: str) -> str:
    return datetime.fromtimestamp(epoch, ZoneInfo(zone)).strftime("%a %Y-%m-%d %H:%M")


def _calendar(seconds: float) -> str:
    hours = round(seconds / 3600)
    days, hours = divmod(hours, 24)
    return f"{days} d {hours:02d} h" if days else f"{hours} h"
