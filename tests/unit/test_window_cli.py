"""`migrator window` and the working hours in `migrator status`: what the operator reads (hours.hours_view and
hours_words, pure), a bad window refused before any AWS call, and the status line."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from migrator.hours import Override, hours_view, hours_words
from migrator_cli.main import main
from migrator_cli.status import Queues, render, summarize

from tests.unit.test_cli_conventions import no_api_calls, no_aws  # noqa: F401 - fixtures
from tests.unit.test_status_logic import stats

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY_NOON_BERLIN = datetime(2026, 12, 7, 12, 0, tzinfo=BERLIN).timestamp()
OFFICE = "Mon-Fri 09:00-18:00 Europe/Berlin"


@pytest.mark.parametrize(
    ("stack", "override", "words"),
    [
        (OFFICE, None, f"open until Mon 2026-12-07 18:00 Europe/Berlin (in 6 h 00 min); {OFFICE}, the stack's"),
        (
            OFFICE,
            "Sat-Sun 00:00-24:00 Europe/Berlin",
            "CLOSED: the fleet creates nothing until Sat 2026-12-12 00:00 Europe/Berlin (in 4 d 12 h);"
            " Sat-Sun 00:00-24:00 Europe/Berlin, set by `migrator window set`",
        ),
        ("", None, "always open: no working hours"),
        (OFFICE, "always", "always open: no working hours, set by `migrator window set`"),
        ("daily 00:00-24:00", None, "open for good; daily 00:00-24:00 UTC, the stack's WorkingHours"),
    ],
)
def test_the_window_as_the_operator_reads_it(stack, override, words):
    view = hours_view(stack, Override(override), MONDAY_NOON_BERLIN)
    assert hours_words(view).startswith(words)


def test_the_json_form_says_open_until_and_where_it_comes_from():
    view = hours_view(OFFICE, Override("Sat-Sun 00:00-24:00 Europe/Berlin"), MONDAY_NOON_BERLIN)
    assert view.as_dict() == {
        "window": "Sat-Sun 00:00-24:00 Europe/Berlin",
        "source": "override",
        "open": False,
        "until": datetime(2026, 12, 12, tzinfo=BERLIN).timestamp(),
        "stack_window": OFFICE,
    }


def test_status_shows_the_hours_beside_the_uploader():
    view = summarize(stats({"pending": 5}, {}), Queues(5, 0, 0, 0), None, MONDAY_NOON_BERLIN, 15)
    assert not any(line.startswith("hours") for line in render(view, "s").splitlines())  # no window: no line
    shown = hours_view(OFFICE, Override(None), MONDAY_NOON_BERLIN)
    with_hours = type(view)(**{**view.__dict__, "hours": {**shown.as_dict(), "words": hours_words(shown)}})
    line = next(text for text in render(with_hours, "s").splitlines() if text.startswith("hours"))
    assert line.startswith("hours       open until Mon 2026-12-07 18:00 Europe/Berlin")
    assert with_hours.as_dict()["hours"]["open"] is True


@pytest.mark.usefixtures("no_aws", "no_api_calls")
def test_a_window_that_does_not_parse_is_refused_before_any_aws_call(capsys, tmp_path):
    outputs = tmp_path / "outputs.json"
    outputs.write_text('{"LedgerTableName": "ledger"}')
    assert main(["window", "set", "Mon-Fri 9-18", "--outputs", str(outputs)]) == 2
    assert "migrator window: working hours, span 1: '9' is not a time HH:MM" in capsys.readouterr().err
