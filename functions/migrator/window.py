"""Working hours: the weekly window, in one time zone, outside which the fleet creates nothing.

Pure: a parsed `Window` answers from an epoch time alone; the uploader, reconcile's stall notice,
`migrator status`, `migrator plan` and the mirror's sweep all ask the same object.

The text form (the stack's WorkingHours parameter, `migrator window set`):

    Mon-Fri 09:00-18:00 Europe/Berlin
    Mon-Fri 19:00-07:00; Sat-Sun 00:00-24:00 UTC

- spans separated by `;`, each `DAYS START-END`: DAYS a day (`Mon`), a range (`Mon-Fri`, `Fri-Mon`
  wraps the week), a comma list of those (`Mon,Wed,Fri-Sat`), or `daily`; START and END `HH:MM`
  (24-hour, END may be `24:00`, the day's end).
- an END earlier than START runs overnight: `Mon-Fri 19:00-07:00` opens Monday 19:00 and closes
  Tuesday 07:00, ..., opens Friday 19:00 and closes Saturday 07:00 (DAYS name the day a span starts).
- one IANA time zone (`Europe/Berlin`, `America/New_York`, `UTC`) after the last span, for every
  span; without one, UTC. Times are wall-clock times there: a span keeps its local hours through a
  daylight-saving change (`00:00-24:00` lasts 23 h on a spring-forward day, 25 h on a fall-back day).
  A START that falls in the skipped hour of a spring-forward day takes the offset before the change
  (02:30 in Berlin is read as 03:30 summer time); one in the repeated hour of a fall-back day, the
  first of the two (Python's `fold=0`).
- spans that overlap or touch join: `Mon-Fri 19:00-07:00; Sat-Sun 00:00-24:00` is open from Friday
  19:00 to Monday 00:00 without a break (and closed Monday 00:00-19:00: no span starts on Sunday night).
- empty text, or `always`: no window (open all the time; `parse_window` returns None).

Bad text raises ValueError saying what is wrong and where.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DAY_S = 86_400.0
WEEK_S = 7 * DAY_S
# The longest text accepted: a stack parameter or a control item's field, not a document.
TEXT_MAX = 500
ALWAYS = "always"
_TIME = re.compile(r"^(\d{1,2}):(\d{2})$")
# How far around a time its open stretch is looked for: a merged stretch is shorter than a week unless the
# window never closes, and an overnight span reaches a day past the day it starts.
_REACH_S = 9 * DAY_S


@dataclass(frozen=True)
class Span:
    """Open from `start` to `end` (minutes after local midnight; `end` <= `start`: overnight, to the next day)
    on each of `days` (0 = Monday)."""

    days: frozenset[int]
    start: int
    end: int

    @property
    def overnight(self) -> bool:
        return self.end <= self.start


@dataclass(frozen=True)
class Window:
    """The parsed working hours: `spans` in the wall-clock time of `zone` (an IANA key). `text` is the
    canonical text form (what `status` shows, what parses back to this window)."""

    spans: tuple[Span, ...]
    zone: str = "UTC"

    @property
    def text(self) -> str:
        parts = [f"{_days_text(s.days)} {_hhmm(s.start)}-{_hhmm(s.end, end=True)}" for s in self.spans]
        return "; ".join(parts) + f" {self.zone}"

    def _tz(self) -> ZoneInfo:
        return ZoneInfo(self.zone)

    def intervals(self, start: float, end: float) -> list[tuple[float, float]]:
        """The open stretches (epoch seconds, [from, to)) that overlap [start, end), joined where they
        overlap or touch, in order; the first may begin before `start`, the last end after `end`."""
        tz = self._tz()
        first = datetime.fromtimestamp(start, tz).date() - timedelta(days=2)
        last = datetime.fromtimestamp(end, tz).date() + timedelta(days=1)
        raw: list[tuple[float, float]] = []
        day = first
        while day <= last:
            weekday = day.weekday()
            for span in self.spans:
                if weekday in span.days:
                    opens = _epoch(day, span.start, tz)
                    closes = _epoch(day + timedelta(days=1 if span.overnight else 0), span.end, tz)
                    if closes > opens:  # a span wholly inside a skipped hour opens nothing
                        raw.append((opens, closes))
            day += timedelta(days=1)
        raw.sort()
        joined: list[tuple[float, float]] = []
        for opens, closes in raw:
            if joined and opens <= joined[-1][1]:
                joined[-1] = (joined[-1][0], max(joined[-1][1], closes))
            else:
                joined.append((opens, closes))
        return [(a, b) for a, b in joined if b > start and a < end]

    def always_open(self) -> bool:
        """Whether the spans cover the whole week (a window that never closes)."""
        return self.open_seconds(0.0, WEEK_S + 2 * DAY_S) >= WEEK_S + 2 * DAY_S

    def is_open(self, epoch: float) -> bool:
        """Whether the window is open at `epoch` (a span's start is open, its end closed)."""
        return any(a <= epoch < b for a, b in self.intervals(epoch, epoch + 1))

    def next_change(self, epoch: float) -> float:
        """When the window next opens (it is closed at `epoch`) or closes (it is open); math.inf for a
        window that never closes."""
        stretches = self.intervals(epoch, epoch + _REACH_S)
        for opens, closes in stretches:
            if opens <= epoch < closes:
                if closes >= epoch + _REACH_S - DAY_S and self.always_open():
                    return math.inf
                return closes
            if opens > epoch:
                return opens
        return math.inf  # unreachable for a parsed window: every span opens some time each week

    def open_seconds(self, start: float, end: float) -> float:
        """Seconds of [start, end) the window is open."""
        if end <= start:
            return 0.0
        return sum(min(b, end) - max(a, start) for a, b in self.intervals(start, end))

    def wall_time(self, start: float, open_seconds_needed: float) -> float:
        """Wall-clock seconds from `start` until the window has been open `open_seconds_needed` seconds
        (work that takes that long and runs only while it is open); math.inf for a need that is not finite."""
        if open_seconds_needed <= 0:
            return 0.0
        if not math.isfinite(open_seconds_needed):
            return math.inf
        left, at = open_seconds_needed, start
        while True:  # a week at a time: each holds some open time
            for opens, closes in self.intervals(at, at + WEEK_S):
                usable = min(closes, at + WEEK_S) - max(opens, at)
                if usable >= left:
                    return max(opens, at) + left - start
                left -= max(0.0, usable)
            at += WEEK_S


def parse_window(text: str | None) -> Window | None:
    """The Window the text says; None for empty text or `always` (open all the time). ValueError
    with the reason for text that is not a window."""
    if text is None:
        return None
    text = text.strip()
    if not text or text.lower() == ALWAYS:
        return None
    if len(text) > TEXT_MAX:
        raise ValueError(f"working hours: the text is longer than {TEXT_MAX} characters")
    parts = [p.strip() for p in text.split(";")]
    if any(not p for p in parts):
        raise ValueError("working hours: an empty span (two `;` in a row, or one at the end)")
    zone = "UTC"
    last = parts[-1].split()
    if len(last) == 3:
        zone = _zone(last[2])
        parts[-1] = " ".join(last[:2])
    spans = tuple(_span(p, i + 1) for i, p in enumerate(parts))
    return Window(spans, zone)


def _span(text: str, n: int) -> Span:
    words = text.split()
    if len(words) != 2:
        raise ValueError(
            f"working hours, span {n} {text!r}: expected DAYS START-END (e.g. Mon-Fri 09:00-18:00);"
            " a time zone goes once, after the last span"
        )
    days = _days(words[0], n)
    start_text, dash, end_text = words[1].partition("-")
    if not dash:
        raise ValueError(f"working hours, span {n}: {words[1]!r} is not START-END (e.g. 09:00-18:00)")
    start, end = _minutes(start_text, n, may_be_24=False), _minutes(end_text, n, may_be_24=True)
    if start == end:
        whole = "for a whole day use 00:00-24:00"
        raise ValueError(f"working hours, span {n}: it starts and ends at {_hhmm(start)}; {whole}")
    return Span(days, start, end)


def _days(text: str, n: int) -> frozenset[int]:
    if text.lower() in ("daily", "mon-sun"):
        return frozenset(range(7))
    found: set[int] = set()
    for part in text.split(","):
        first, dash, last = part.partition("-")
        a = _day(first, n)
        if not dash:
            found.add(a)
            continue
        b = _day(last, n)
        found.update((a + i) % 7 for i in range((b - a) % 7 + 1))
    return frozenset(found)


FULL_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _day(text: str, n: int) -> int:
    """A day by its three letters or its English name (`Mon`, `monday`), any case; 0 = Monday."""
    word = text.strip().lower()
    for names in (DAYS, FULL_DAYS):
        if word in names:
            return names.index(word)
    raise ValueError(f"working hours, span {n}: {text!r} is not a day (Mon, Tue, Wed, Thu, Fri, Sat, Sun)")


def _minutes(text: str, n: int, may_be_24: bool) -> int:
    match = _TIME.match(text)
    if not match:
        raise ValueError(f"working hours, span {n}: {text!r} is not a time HH:MM")
    hours, minutes = int(match[1]), int(match[2])
    if hours == 24 and minutes == 0 and may_be_24:
        return 24 * 60
    if hours > 23 or minutes > 59:
        limit = "00:00 to 24:00" if may_be_24 else "00:00 to 23:59"
        raise ValueError(f"working hours, span {n}: {text!r} is not a time of day ({limit})")
    return hours * 60 + minutes


def _zone(text: str) -> str:
    if text.upper() == "UTC":
        return "UTC"
    # A key of the database, not a file path that happens to load, nor the machine's own zone.
    known = text in available_timezones() and text not in ("localtime", "posixrules", "Factory")
    try:
        known = known and ZoneInfo(text) is not None
    except (ZoneInfoNotFoundError, ValueError):
        known = False
    if not known:
        raise ValueError(
            f"working hours: {text!r} is not an IANA time zone (e.g. Europe/Berlin, America/New_York, UTC)"
        )
    return text


def _epoch(day: date, minutes: int, tz: ZoneInfo) -> float:
    """The epoch time of local `minutes` after midnight on `day` in `tz` (24:00: the next midnight)."""
    extra, minutes = divmod(minutes, 24 * 60)
    day += timedelta(days=extra)
    return datetime(day.year, day.month, day.day, minutes // 60, minutes % 60, tzinfo=tz).timestamp()


def _hhmm(minutes: int, end: bool = False) -> str:
    if end and minutes == 24 * 60:
        return "24:00"
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _days_text(days: frozenset[int]) -> str:
    """The days as the shortest list of ranges (`Mon-Fri`, `Mon,Wed`, `daily`)."""
    if len(days) == 7:
        return "daily"
    names = []
    run: list[int] = []
    for d in range(7):
        if d in days:
            run.append(d)
        elif run:
            names.append(_run_text(run))
            run = []
    if run:
        names.append(_run_text(run))
    # A run that ends on Sunday and one that starts on Monday are one range across the week's end.
    if len(names) > 1 and 0 in days and 6 in days:
        tail, head = names.pop(), names.pop(0)
        names.append(f"{tail.split('-')[0]}-{head.split('-')[-1]}")
    return ",".join(names)


def _run_text(run: list[int]) -> str:
    first, last = DAYS[run[0]].title(), DAYS[run[-1]].title()
    return first if len(run) == 1 else f"{first}-{last}"
