"""Working hours against the emulator: `migrator window set / show / clear` write and drop the ledger's `#window`
item, and a worker's Hours reads that override (at most once a minute) over the stack's WorkingHours."""

from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from migrator.hours import Hours
from migrator_cli.main import main

pytestmark = pytest.mark.emulator

MONDAY_NOON = datetime(2026, 12, 7, 12, 0, tzinfo=ZoneInfo("UTC")).timestamp()


@pytest.fixture
def outputs(tmp_path, table, endpoint):
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps({"LedgerTableName": table, "WorkingHours": "Mon-Fri 09:00-18:00 UTC"}))
    return ["--outputs", str(path), "--endpoint-url", endpoint, "--json"]


def said(capsys) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_set_show_clear_and_the_worker_follows(aws, table, outputs, capsys, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    hours = Hours("Mon-Fri 09:00-18:00 UTC", table, aws("dynamodb"))
    assert hours.closed_until(MONDAY_NOON) is None  # the stack's window: open on a Monday at noon

    assert main(["window", "show", *outputs]) == 0
    shown = said(capsys)
    assert (shown["source"], shown["window"]) == ("stack", "Mon-Fri 09:00-18:00 UTC")

    assert main(["window", "set", "sat-sun 00:00-24:00", *outputs]) == 0
    set_ = said(capsys)
    assert (set_["source"], set_["window"], set_["stack_window"]) == (
        "override",
        "Sat-Sun 00:00-24:00 UTC",
        "Mon-Fri 09:00-18:00 UTC",
    )
    assert hours.closed_until(MONDAY_NOON + 30) is None  # read a minute ago: not yet
    weekend = datetime(2026, 12, 12, tzinfo=ZoneInfo("UTC")).timestamp()
    assert hours.closed_until(MONDAY_NOON + 60) == weekend  # re-read: closed until Saturday

    assert main(["window", "clear", *outputs]) == 0
    assert said(capsys)["source"] == "stack"
    assert hours.closed_until(MONDAY_NOON + 120) is None

    assert main(["window", "set", "Mon 25:00-26:00", *outputs]) == 2  # refused, nothing written
    assert "is not a time of day" in capsys.readouterr().err
    assert main(["window", "show", *outputs]) == 0 and said(capsys)["source"] == "stack"
