"""A progress line for long CLI commands: a bar redrawn in place on a terminal, plain periodic lines otherwise.

It shows how far (a percentage of `total`, or a `fraction` the caller measures another
way, such as bytes read of a file), the rate, and the time left. Output that is not a
terminal (a log file, CI) gets no carriage returns: one line every `every_s` seconds,
so a log of a long load stays readable. Other lines (a bad row, a warning) go through
`write`, which keeps them from being tangled with the bar.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

BAR_WIDTH = 24


class Progress:
    def __init__(
        self,
        out: TextIO,
        total: int | None,
        label: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        every_s: float | None = None,
        measure: Callable[[], float | None] | None = None,
    ):
        self.out = out
        self.total = total
        self.label = label
        self.clock = clock
        self.tty = _isatty(out)
        # A terminal is redrawn a few times a second; a log gets a line every 10 s.
        self.every_s = every_s if every_s is not None else (0.1 if self.tty else 10.0)
        self.started = clock()
        self.last_shown = self.started
        self.done = 0
        self.fraction: float | None = None  # how far, when measured otherwise than done / total
        self.measure = measure  # asked at each update for that fraction (e.g. bytes read of a file)
        self.extra = ""
        self.drawn = False  # a bar is on the terminal's current line
        self.lines_shown = 0

    def update(self, done: int, extra: str = "", fraction: float | None = None) -> None:
        self.done, self.extra = done, extra
        if fraction is None and self.measure is not None:
            fraction = self.measure()
        if fraction is not None:
            self.fraction = max(0.0, min(1.0, fraction))
        now = self.clock()
        if now - self.last_shown < self.every_s:
            return
        self.last_shown = now
        self._show()

    def write(self, line: str) -> None:
        """Print a line of its own without tangling it with the bar."""
        if self.drawn:
            self.out.write("\r\x1b[K")
        self.out.write(line + "\n")
        if self.drawn:
            self.out.write(self.render())
        self.out.flush()

    def close(self) -> None:
        """Show the final figure; on a log only when a periodic line was shown before."""
        if self.tty:
            self._show()
            self.out.write("\n")
            self.drawn = False
        elif self.lines_shown:
            self._show()
        self.out.flush()

    def rate(self) -> float:
        elapsed = self.clock() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def how_far(self) -> float | None:
        """0..1: the caller's own measure, else done / total; None when neither is known."""
        if self.fraction is not None:
            return self.fraction
        return min(1.0, self.done / self.total) if self.total else None

    def eta_s(self) -> float | None:
        """Seconds left at the pace so far, when how far it is is known."""
        fraction = self.how_far()
        elapsed = self.clock() - self.started
        if not fraction or elapsed <= 0:
            return None
        return elapsed * (1 - fraction) / fraction

    def render(self) -> str:
        parts = [self.label]
        fraction = self.how_far()
        if fraction is not None:
            filled = int(fraction * BAR_WIDTH)
            count = f"{self.done:,}/{self.total:,}" if self.total and self.fraction is None else f"{self.done:,}"
            parts.append(f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {fraction:4.0%} {count}")
        else:
            parts.append(f"{self.done:,}")
        parts.append(f"{self.rate():,.0f}/s")
        eta = self.eta_s()
        if eta is not None and fraction is not None and fraction < 1:
            parts.append(f"ETA {clock_time(eta)}")
        if self.extra:
            parts.append(self.extra)
        return " ".join(parts)

    def _show(self) -> None:
        if self.tty:
            self.out.write("\r\x1b[K" + self.render())
            self.drawn = True
        else:
            self.out.write(self.render() + "\n")
            self.lines_shown += 1
        self.out.flush()


def clock_time(seconds: float) -> str:
    """m:ss, or h:mm:ss past an hour."""
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _isatty(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False
