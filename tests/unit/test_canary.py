"""The duration-drift canary and the provider video classification it reads from."""

from decimal import Decimal

import pytest
from migrator.canary import drifted, duration_drift
from migrator.fate import classify_video
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


def test_classify_video():
    ready = classify_video({"id": "vid_1", "status": "ready", "duration": 61.5})
    assert (ready.target, ready.remote_id, ready.duration_s) == (State.READY, "vid_1", 61.5)
    errored = classify_video({"id": "vid_1", "status": "errored", "error": {"message": "bad\nsource"}})
    assert errored.target is State.REJECTED and errored.error == "provider: bad source"
    working = classify_video({"id": "vid_1", "status": "preparing"})
    assert working.target is None and working.status == "preparing"
    assert classify_video("nope").target is None
    assert classify_video({"status": "ready", "duration": True}).duration_s is None
