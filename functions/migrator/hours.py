"""Which working hours hold now: the stack's WorkingHours parameter (env WORKING_HOURS, `settings.py`), unless the
`#window` control item of the ledger overrides it (`migrator window set` / `clear`).

`Hours.current(now)` (or `closed_until`, or `window_hold`: the Hold it makes) is what the uploader, the tracks
worker, reconcile and the mirror's sweep ask; it reads the control item at
most once every REFRESH_S per container (a GetItem a minute, whatever the fleet does), so a change made at run
time holds everywhere within about a minute. The item's fields:

- `text`: the window's text form (`window.py`), validated by the CLI before it is written; "" or `always`: no
  window (open all the time) whatever the stack's parameter says. An item without one is no override.
- `set_at`: when it was written (for `migrator window show`).

A read that fails keeps the window this container last knew (the stack's, before any read); an override that
does not parse (written by hand) is logged and the stack's window holds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from .dynamo import to_item, typed
from .pacer_item import Hold
from .window import Window, parse_window

logger = logging.getLogger(__name__)

WINDOW_ID = "#window"
REFRESH_S = 60.0

# Messages held by the working hours come back over this long after the window opens, not all at once.
WINDOW_SPREAD_S = 60.0
WINDOW = "window"  # the kind of Hold the working hours make


def window_hold(hours: Hours | None, now: float) -> Hold | None:
    """The Hold the working hours make at `now`: until the window opens; None while it is open (or there is none)."""
    opens = hours.closed_until(now) if hours is not None else None
    if opens is None:
        return None
    when = datetime.fromtimestamp(opens, UTC).strftime("%Y-%m-%d %H:%M UTC") if opens != float("inf") else "never"
    return Hold(opens, f"outside working hours (opens {when})", WINDOW, WINDOW_SPREAD_S)


@dataclass(frozen=True)
class Override:
    """What the `#window` item says: None when there is no override."""

    text: str | None
    set_at: float | None = None


def override_of(item: dict | None) -> Override:
    """The override an item (as `dynamo.to_item` reads it) records."""
    if not item or not isinstance(item.get("text"), str):
        return Override(None)
    set_at = item.get("set_at")
    return Override(item["text"], float(set_at) if set_at is not None else None)


def effective(stack_text: str, override: Override) -> tuple[Window | None, str]:
    """The window in force and where it comes from ("override" or "stack"); ValueError for a stack's text that
    does not parse (settings refuse it first). An override that does not parse gives way to the stack's."""
    if override.text is not None:
        try:
            return parse_window(override.text), "override"
        except ValueError as exc:
            logger.warning("the #window override is not a window, the stack's holds: %s", exc)
    return parse_window(stack_text), "stack"


def read_override(client: Any, table: str) -> Override:
    resp = client.get_item(TableName=table, Key=typed({"asset_id": WINDOW_ID}), ConsistentRead=True)
    return override_of(to_item(resp.get("Item")))


def write_override(client: Any, table: str, text: str, now: float) -> Window | None:
    """Set the override to `text` (validated here first: ValueError, nothing written); the window it makes."""
    parsed = parse_window(text)
    stored = parsed.text if parsed is not None else "always"
    client.put_item(TableName=table, Item=typed({"asset_id": WINDOW_ID, "text": stored, "set_at": round(now, 3)}))
    return parsed


def clear_override(client: Any, table: str) -> None:
    """Remove the override: the stack's WorkingHours holds again."""
    client.delete_item(TableName=table, Key=typed({"asset_id": WINDOW_ID}))


@dataclass
class Hours:
    """The working hours as one container knows them: the stack's, or the ledger's override read at most once a
    REFRESH_S. `client` None: the stack's alone (no ledger to read)."""

    stack_text: str
    table_name: str = ""
    client: Any = None
    refresh_s: float = REFRESH_S
    clock: Callable[[], float] = time.time
    _window: Window | None = field(default=None, init=False)
    _read_at: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._window = parse_window(self.stack_text)

    def current(self, now: float | None = None) -> Window | None:
        """The window in force (None: always open)."""
        now = self.clock() if now is None else now
        if self.client is None or not self.table_name:
            return self._window
        if self._read_at is None or now - self._read_at >= self.refresh_s or now < self._read_at:
            self._read_at = now
            try:
                self._window, _ = effective(self.stack_text, read_override(self.client, self.table_name))
            except Exception as exc:  # the window last known holds until the next look
                logger.warning("could not read the working-hours override: %s", type(exc).__name__)
        return self._window

    def closed_until(self, now: float | None = None) -> float | None:
        """When the window opens again if it is closed at `now`; None while it is open (or there is none)."""
        now = self.clock() if now is None else now
        window = self.current(now)
        if window is None or window.is_open(now):
            return None
        return window.next_change(now)


# --- what status and `migrator window` show -------------------------------------------------------------


@dataclass(frozen=True)
class HoursView:
    """The working hours as an operator sees them at `at`."""

    text: str  # the window in force, in its canonical text; "": none (always open)
    source: str  # "override" (the ledger's #window, `migrator window set`) or "stack" (WorkingHours)
    open: bool
    until: float | None  # when it next closes (open) or opens (closed); None: never
    at: float
    stack_text: str = ""  # the stack's own WorkingHours, shown beside an override

    def as_dict(self) -> dict:
        return {
            "window": self.text or None,
            "source": self.source,
            "open": self.open,
            "until": self.until,
            "stack_window": self.stack_text or None,
        }


def hours_view(stack_text: str, override: Override, now: float) -> HoursView:
    """What the fleet holds to at `now`, and where it comes from (pure)."""
    window, source = effective(stack_text, override)
    stack = parse_window(stack_text)
    stack_text = stack.text if stack is not None else ""
    if window is None:
        return HoursView("", source, True, None, now, stack_text)
    change = window.next_change(now)
    return HoursView(
        window.text, source, window.is_open(now), change if change != float("inf") else None, now, stack_text
    )


def hours_words(view: HoursView) -> str:
    """'open until Mon 2026-12-07 18:00 Europe/Berlin (in 5 h 20 min); Mon-Fri 09:00-18:00 Europe/Berlin, set by
    `migrator window set`' and the like: one line for status."""
    where = "set by `migrator window set`" if view.source == "override" else "the stack's WorkingHours"
    if not view.text:
        return "always open: no working hours" + (", set by `migrator window set`" if view.source == "override" else "")
    zone = view.text.rsplit(" ", 1)[-1]
    if view.until is None:
        when = "for good"
    else:
        local = datetime.fromtimestamp(view.until, ZoneInfo(zone)).strftime("%a %Y-%m-%d %H:%M")
        when = f"until {local} {zone} (in {_span_words(view.until - view.at)})"
    state = "open" if view.open else "CLOSED: the fleet creates nothing"
    return f"{state} {when}; {view.text}, {where}"


def _span_words(seconds: float) -> str:
    minutes = max(0, round(seconds / 60))
    days, minutes = divmod(minutes, 1440)
    hours, minutes = divmod(minutes, 60)
    if days:
        return f"{days} d {hours:02d} h"
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min"
