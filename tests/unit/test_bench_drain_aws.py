"""bench/drain --provider aws's own arithmetic: the drain and the ideal read from the jobs MediaConvert reports."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bench.drain_aws import jobs_timing

pytestmark = pytest.mark.unit


def job(status: str, submit: float, start: float | None, finish: float | None) -> dict:
    timing = {"SubmitTime": datetime.fromtimestamp(submit, UTC)}
    if start is not None:
        timing["StartTime"] = datetime.fromtimestamp(start, UTC)
    if finish is not None:
        timing["FinishTime"] = datetime.fromtimestamp(finish, UTC)
    return {"Status": status, "Timing": timing}


@pytest.mark.parametrize(
    ("jobs", "expected"),
    [
        ([], (0.0, 0.0, 0.0)),
        ([job("COMPLETE", 100, 101, 106)], (100.0, 106.0, 5.0)),
        # Two at once on a queue of two, then one: the summed encode time, whatever waited SUBMITTED.
        (
            [job("COMPLETE", 100, 100, 105), job("COMPLETE", 100, 100, 106), job("COMPLETE", 101, 105, 110)],
            (100.0, 110.0, 16.0),
        ),
        # An errored or unfinished job is no part of the drain.
        (
            [job("COMPLETE", 100, 100, 105), job("ERROR", 90, 91, 92), job("PROGRESSING", 99, 100, None)],
            (100.0, 105.0, 5.0),
        ),
    ],
)
def test_the_drain_runs_from_the_first_submit_to_the_last_finish_over_completed_jobs(jobs, expected):
    assert jobs_timing(jobs) == pytest.approx(expected)
