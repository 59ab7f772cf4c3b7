"""The demo's own logic: how it waits on a local stack that stalls, and gives up with one line."""

from __future__ import annotations

import pytest
from botocore.exceptions import EndpointConnectionError, ReadTimeoutError

from infra.demo import answered


class Clock:
    def __init__(self):
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def __call__(self) -> float:
        return self.now


def test_a_stall_is_waited_out_with_backoff_and_says_what_it_waits_for(capsys):
    clock = Clock()
    failures = [ReadTimeoutError(endpoint_url="http://127.0.0.1:4566"), EndpointConnectionError(endpoint_url="x")]

    def status():
        if failures:
            raise failures.pop(0)
        return "counts"

    assert answered("migrator status", status, limit_s=60, sleep=clock.sleep, clock=clock) == "counts"
    assert clock.slept == [1.0, 2.0]
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert all(line.startswith("[demo] waiting for the local stack (migrator status: ") for line in lines)
    assert "Read timeout" in lines[0] and "asking again in 1 s" in lines[0]


def test_a_stack_that_never_answers_ends_the_demo_with_one_line_reason():
    clock = Clock()

    def status():
        raise ReadTimeoutError(endpoint_url="http://127.0.0.1:4566")

    with pytest.raises(SystemExit) as ended:
        answered("migrator status", status, limit_s=100, sleep=clock.sleep, clock=clock)
    message = str(ended.value)
    assert message.startswith("[demo] gave up: migrator status got no answer for ") and "\n" not in message
    assert clock.slept == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]  # doubling, capped at 30 s
    assert clock.now >= 100


def test_what_is_not_the_stack_failing_is_not_retried():
    def broken():
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        answered("migrator status", broken, sleep=lambda s: pytest.fail("slept"), clock=lambda: 0.0)


def test_the_result_line_says_every_only_when_verify_checked_every_asset_and_names_failed_tracks():
    from infra.demo import result_line

    assert result_line(True, "", "OK: every ready asset checked (118) and matched", 0) == (
        "OK: every asset resolved and verified"
    )
    partial = "OK: 101 of 118 checked and matched; 17 signed not fetched (no token)"
    assert result_line(True, "", partial, 0) == (
        "OK: every asset resolved; verify: 101 of 118 checked and matched; 17 signed not fetched (no token)"
    )
    assert result_line(True, "", "OK: every ready asset checked (20) and matched", 4).endswith(
        "; 4 caption tracks failed (above)"
    )
    assert result_line(False, "3 unresolved", "", 0) == "NOT OK: 3 unresolved"


def test_the_demo_is_not_ok_while_a_caption_track_is_still_pending():
    """A track the provider never confirmed is not known to have arrived: the result says so instead of OK
    (the Stream -> Mux demo once ended "OK" with 24 of 24 tracks pending)."""
    from infra.demo import TRACKS_SETTLE_S, problems_of

    assert problems_of(0, 0, 0, True, 0) is None
    assert problems_of(0, 0, 0, True, 24) == f"24 caption tracks still pending after {TRACKS_SETTLE_S} s"
    assert problems_of(3, 0, 3, True, 24) == "3 unresolved"  # the first reason to act on comes first
    assert problems_of(0, 1, 0, True, 0) == "1 duplicate videos, 0 assets never settled"
    assert problems_of(0, 0, 0, False, 0) == "parity check failed"
