"""The duration-drift canary, and the provider durations it compares."""

from decimal import Decimal

import pytest
from migrator.canary import drifted, duration_drift
from migrator.providers.generic import read_video
from migrator.states import State


def test_drift_is_provider_minus_source():
    assert duration_drift(10, 12) == 2.0
    assert duration_drift(Decimal("10.5"), 10.3) == -0.2
    assert duration_drift(None, 12) is None
    assert duration_drift(10, "12") is None
    assert duration_drift(10, float("nan")) is None


@pytest.mark.parametrize(
    "source, provider, flagged",
    [(10, 12, True), (10, 10.2, False), (10, 9.4, True), (10, 10.5, False), (None, 30, False)],
)
def test_only_drift_over_the_tolerance_is_flagged(source, provider, flagged):
    item = {"duration_s": source, "provider_duration_s": provider}
    assert (drifted(item, 0.5) is not None) is flagged


def test_the_canary_reads_the_duration_a_provider_reports():
    ready = read_video({"id": "vid_1", "status": "ready", "duration": 61.5})
    assert (ready.target, ready.remote_id, ready.duration_s) == (State.READY, "vid_1", 61.5)
    errored = read_video({"id": "vid_1", "status": "errored", "error": {"message": "bad\nsource"}})
    assert errored.target is State.REJECTED and errored.error == "provider: bad source"
    working = read_video({"id": "vid_1", "status": "preparing"})
    assert working.target is None and working.status == "preparing"
    assert read_video("nope").target is None
    for duration in ("61", -1, True, float("inf"), None, 10**8):
        assert read_video({"status": "ready", "duration": duration}).duration_s is None
