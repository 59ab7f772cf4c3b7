"""The plan's time under working hours (cli/migrator_cli/plan_window.py): hours of work become calendar time."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from migrator.window import parse_window
from migrator_cli.plan_window import windowed_time

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY_9 = datetime(2026, 12, 7, 9, 0, tzinfo=BERLIN).timestamp()
OFFICE = "Mon-Fri 09:00-18:00 Europe/Berlin"
H = 3600.0


@pytest.mark.parametrize(
    ("work_h", "window", "wall_h"),
    [
        (45, OFFICE, 4 * 24 + 9),  # a working week: Monday 09:00 to Friday 18:00
        (46, OFFICE, 7 * 24 + 1),  # an hour more: the next Monday at 10:00
        (10, "", 10),  # no window: around the clock
        (10, None, 10),
        (10, parse_window("Mon-Fri 19:00-07:00; Sat-Sun 00:00-24:00 Europe/Berlin"), 20),  # nights: 19:00-05:00
        (0, OFFICE, 0),
    ],
)
def test_work_becomes_calendar_time_under_the_window(work_h, window, wall_h):
    found = windowed_time(work_h * H, window, MONDAY_9)
    assert found is not None and found.wall_s == pytest.approx(wall_h * H)
    assert found.finishes_at == pytest.approx(MONDAY_9 + wall_h * H)


def test_the_plan_says_it_in_words_and_json():
    found = windowed_time(45 * H, OFFICE, MONDAY_9)
    assert found is not None
    assert found.words() == (
        "45.0 h of work inside Mon-Fri 09:00-18:00 Europe/Berlin: 4 d 09 h on the calendar,"
        " done about Fri 2026-12-11 18:00 Europe/Berlin if started Mon 2026-12-07 09:00"
    )
    assert found.as_dict()["window"] == OFFICE and found.as_dict()["wall_s"] == (4 * 24 + 9) * H
    assert windowed_time(None, OFFICE, MONDAY_9) is None  # not timed (no rate): nothing to spread
    with pytest.raises(ValueError, match="working hours"):
        windowed_time(H, "Mon-Fri nine to five", MONDAY_9)
