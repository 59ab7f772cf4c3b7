"""The working-hours window (functions/migrator/window.py): its text, is_open, next_change, open_seconds and
wall_time, on ordinary weeks and on the days daylight saving starts and ends."""

from __future__ import annotations

import math
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from migrator.window import Window, parse_window

BERLIN, NEW_YORK, UTC = ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York"), ZoneInfo("UTC")
H = 3600.0


def at(text: str, tz: ZoneInfo = UTC) -> float:
    """'2026-12-07 09:00' in `tz` as epoch seconds (fold=0: the first of a repeated hour)."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=tz).timestamp()


def window(text: str) -> Window:
    parsed = parse_window(text)
    assert parsed is not None
    return parsed


# 2026-12-07 is a Monday. Berlin: summer time starts 2026-03-29 (02:00 CET -> 03:00 CEST) and ends
# 2026-10-25 (03:00 CEST -> 02:00 CET). New York: starts 2026-03-08, ends 2026-11-01.


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("Mon-Fri 09:00-18:00 Europe/Berlin", "Mon-Fri 09:00-18:00 Europe/Berlin"),
        ("mon-fri 9:00-18:00", "Mon-Fri 09:00-18:00 UTC"),
        ("Mon-Fri 19:00-07:00; Sat-Sun 00:00-24:00 UTC", "Mon-Fri 19:00-07:00; Sat-Sun 00:00-24:00 UTC"),
        ("Fri-Mon 22:00-06:00 America/New_York", "Fri-Mon 22:00-06:00 America/New_York"),
        ("Monday,Wed,Fri 08:00-12:00", "Mon,Wed,Fri 08:00-12:00 UTC"),
        ("daily 00:00-24:00", "daily 00:00-24:00 UTC"),
        ("Sat,Sun 10:00-11:00 utc", "Sat-Sun 10:00-11:00 UTC"),
    ],
)
def test_text_parses_to_its_canonical_form_and_back(text, canonical):
    parsed = window(text)
    assert parsed.text == canonical
    assert window(parsed.text) == parsed


@pytest.mark.parametrize("text", [None, "", "   ", "always", "Always"])
def test_no_window_is_always_open(text):
    assert parse_window(text) is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Mon-Fri", "expected DAYS START-END"),
        ("Mon-Fri 09:00", "is not START-END"),
        ("Mon-Fri 9-18", "is not a time HH:MM"),
        ("Mox 09:00-10:00", "'Mox' is not a day"),
        ("Mon-Fro 09:00-10:00", "'Fro' is not a day"),
        ("Mon 09:00-09:00", "starts and ends at 09:00"),
        ("Mon 00:00-00:00", "for a whole day use 00:00-24:00"),
        ("Mon 24:00-10:00", "00:00 to 23:59"),
        ("Mon 09:00-24:30", "00:00 to 24:00"),
        ("Mon 09:60-10:00", "is not a time of day"),
        ("Mon 09:00-10:00 Mars/Olympus", "not an IANA time zone"),
        ("Mon 09:00-10:00 /etc/localtime", "not an IANA time zone"),
        ("Mon 09:00-10:00 localtime", "not an IANA time zone"),
        ("Mon 09:00-10:00 UTC; Tue 10:00-11:00", "a time zone goes once, after the last span"),
        ("Mon 09:00-10:00;", "an empty span"),
        ("Mon 09:00-10:00;; Tue 09:00-10:00", "an empty span"),
        ("Mon 09:00-10:00 " + "x" * 600, "longer than 500"),
    ],
)
def test_bad_text_is_refused_with_its_reason(text, reason):
    with pytest.raises(ValueError, match="working hours") as caught:
        parse_window(text)
    assert reason in str(caught.value)


@pytest.mark.parametrize(
    ("text", "when", "tz", "is_open", "change", "change_tz"),
    [
        # Office hours in Berlin (winter: UTC+1).
        ("Mon-Fri 09:00-18:00 Europe/Berlin", "2026-12-07 08:59", BERLIN, False, "2026-12-07 09:00", BERLIN),
        ("Mon-Fri 09:00-18:00 Europe/Berlin", "2026-12-07 09:00", BERLIN, True, "2026-12-07 18:00", BERLIN),
        ("Mon-Fri 09:00-18:00 Europe/Berlin", "2026-12-07 18:00", BERLIN, False, "2026-12-08 09:00", BERLIN),
        ("Mon-Fri 09:00-18:00 Europe/Berlin", "2026-12-11 18:30", BERLIN, False, "2026-12-14 09:00", BERLIN),
        ("Mon-Fri 09:00-18:00 Europe/Berlin", "2026-12-12 12:00", BERLIN, False, "2026-12-14 09:00", BERLIN),
        # Nights and weekends: overnight spans join the weekend's whole days.
        ("Mon-Fri 19:00-07:00; Sat-Sun 00:00-24:00", "2026-12-08 06:59", UTC, True, "2026-12-08 07:00", UTC),
        ("Mon-Fri 19:00-07:00; Sat-Sun 00:00-24:00", "2026-12-08 12:00", UTC, False, "2026-12-08 19:00", UTC),
        ("Mon-Fri 19:00-07:00; Sat-Sun 00:00-24:00", "2026-12-11 20:00", UTC, True, "2026-12-14 00:00", UTC),
        ("Mon-Fri 19:00-07:00; Sat-Sun 00:00-24:00", "2026-12-07 03:00", UTC, False, "2026-12-07 19:00", UTC),
        # A range across the week's end.
        ("Fri-Mon 22:00-06:00", "2026-12-08 01:00", UTC, True, "2026-12-08 06:00", UTC),
        ("Fri-Mon 22:00-06:00", "2026-12-09 01:00", UTC, False, "2026-12-11 22:00", UTC),
        # Spring forward in Berlin (Sunday 2026-03-29, 02:00 -> 03:00): nights keep their local hours.
        ("daily 22:00-06:00 Europe/Berlin", "2026-03-29 01:30", BERLIN, True, "2026-03-29 06:00", BERLIN),
        ("daily 22:00-06:00 Europe/Berlin", "2026-03-29 05:59", BERLIN, True, "2026-03-29 06:00", BERLIN),
        ("daily 22:00-06:00 Europe/Berlin", "2026-03-29 06:00", BERLIN, False, "2026-03-29 22:00", BERLIN),
        # A start in the skipped hour takes the offset before the change: 02:30 is 03:30 summer time.
        ("Sun 02:30-05:00 Europe/Berlin", "2026-03-29 03:29", BERLIN, False, "2026-03-29 03:30", BERLIN),
        # Fall back in Berlin (Sunday 2026-10-25, 03:00 -> 02:00).
        ("daily 22:00-06:00 Europe/Berlin", "2026-10-25 05:59", BERLIN, True, "2026-10-25 06:00", BERLIN),
        ("Sun 00:00-24:00 Europe/Berlin", "2026-10-25 23:59", BERLIN, True, "2026-10-26 00:00", BERLIN),
        # New York's changes (2026-03-08, 2026-11-01).
        ("Sun 01:00-04:00 America/New_York", "2026-03-08 01:30", NEW_YORK, True, "2026-03-08 04:00", NEW_YORK),
        ("Sun 01:00-04:00 America/New_York", "2026-11-01 03:59", NEW_YORK, True, "2026-11-01 04:00", NEW_YORK),
    ],
)
def test_is_open_and_next_change(text, when, tz, is_open, change, change_tz):
    w, t = window(text), at(when, tz)
    assert w.is_open(t) is is_open
    assert w.next_change(t) == at(change, change_tz)
    assert w.is_open(w.next_change(t)) is not is_open  # it changes there


@pytest.mark.parametrize(
    ("text", "start", "end", "tz", "hours"),
    [
        # A whole local day lasts 23 h when the clocks spring forward, 25 h when they fall back.
        ("Sun 00:00-24:00 Europe/Berlin", "2026-03-28 00:00", "2026-03-31 00:00", BERLIN, 23),
        ("Sun 00:00-24:00 Europe/Berlin", "2026-10-24 00:00", "2026-10-27 00:00", BERLIN, 25),
        ("Sun 00:00-24:00 Europe/Berlin", "2026-12-05 00:00", "2026-12-08 00:00", BERLIN, 24),
        # The night across each change: 22:00-06:00 is 7 h, then 9 h of real time.
        ("Sat 22:00-06:00 Europe/Berlin", "2026-03-28 00:00", "2026-03-30 00:00", BERLIN, 7),
        ("Sat 22:00-06:00 Europe/Berlin", "2026-10-24 00:00", "2026-10-26 00:00", BERLIN, 9),
        ("Sun 01:00-04:00 America/New_York", "2026-03-08 00:00", "2026-03-09 00:00", NEW_YORK, 2),
        ("Sun 01:00-04:00 America/New_York", "2026-11-01 00:00", "2026-11-02 00:00", NEW_YORK, 4),
        # An office week, and a part of a day.
        ("Mon-Fri 09:00-18:00 Europe/Berlin", "2026-12-07 00:00", "2026-12-14 00:00", BERLIN, 45),
        ("Mon-Fri 09:00-18:00 Europe/Berlin", "2026-12-07 12:00", "2026-12-07 13:30", BERLIN, 1.5),
        ("Mon-Fri 09:00-18:00 Europe/Berlin", "2026-12-12 00:00", "2026-12-13 00:00", BERLIN, 0),
        # Spans that overlap count once.
        ("Mon 08:00-12:00; Mon 10:00-14:00", "2026-12-07 00:00", "2026-12-08 00:00", UTC, 6),
    ],
)
def test_open_seconds(text, start, end, tz, hours):
    assert window(text).open_seconds(at(start, tz), at(end, tz)) == pytest.approx(hours * H)


@pytest.mark.parametrize(
    ("text", "start", "tz", "needed_h", "wall_h"),
    [
        ("Mon-Fri 09:00-18:00 Europe/Berlin", "2026-12-07 09:00", BERLIN, 9, 9),  # Monday's hours
        ("Mon-Fri 09:00-18:00 Europe/Berlin", "2026-12-07 09:00", BERLIN, 10, 25),  # into Tuesday
        ("Mon-Fri 09:00-18:00 Europe/Berlin", "2026-12-11 17:00", BERLIN, 2, 65),  # across the weekend
        ("Mon-Fri 09:00-18:00 Europe/Berlin", "2026-12-12 12:00", BERLIN, 10, 70),  # from a closed Saturday
        (
            "Mon-Fri 09:00-18:00 Europe/Berlin",
            "2026-12-07 09:00",
            BERLIN,
            45 * 3,
            18 * 24 + 9,
        ),  # to Friday 18:00 in week 3
        ("Mon-Fri 09:00-18:00 Europe/Berlin", "2026-12-07 09:00", BERLIN, 0, 0),
        ("Sun 00:00-24:00 Europe/Berlin", "2026-03-29 00:00", BERLIN, 23, 23),  # the short day
        ("Sun 00:00-24:00 Europe/Berlin", "2026-03-29 00:00", BERLIN, 24, 7 * 24),  # and an hour of the next
        ("daily 00:00-24:00", "2026-12-07 00:00", UTC, 1000, 1000),
    ],
)
def test_wall_time(text, start, tz, needed_h, wall_h):
    w, t = window(text), at(start, tz)
    wall = w.wall_time(t, needed_h * H)
    assert wall == pytest.approx(wall_h * H)
    assert w.open_seconds(t, t + wall) == pytest.approx(needed_h * H)  # the two agree


def test_a_window_that_never_closes_never_changes():
    assert window("daily 00:00-24:00").next_change(at("2026-12-07 12:00")) == math.inf
    assert window("Mon-Sun 12:00-12:01; daily 00:00-24:00").next_change(at("2026-12-07 12:00")) == math.inf


def test_a_window_open_but_for_an_hour_a_week_closes_within_the_week():
    w = window("Mon 01:00-24:00; Tue-Sun 00:00-24:00")
    assert w.next_change(at("2026-12-07 12:00")) == at("2026-12-14 00:00")
    assert w.next_change(at("2026-12-14 00:30")) == at("2026-12-14 01:00")
