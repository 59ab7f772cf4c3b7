"""The benchmarks' crash-after-create fault: off by default, a given share of creates when on."""

import random

from migrator.chaos import Chaos


def test_chaos_is_off_unless_asked_and_kills_a_share_of_creates_when_on():
    deaths = []
    assert Chaos.from_env({}).probability == 0 and Chaos.from_env({"CHAOS_CRASH_AFTER_CREATE": "x"}).probability == 0
    assert Chaos.from_env({"CHAOS_CRASH_AFTER_CREATE": "0.01"}).probability == 0.01
    chaos = Chaos(0.25, random.Random(3), die=lambda: deaths.append(1))
    for _ in range(400):
        chaos.after_create()
    assert 70 <= len(deaths) <= 130  # about a quarter
    quiet = Chaos(0.0, die=lambda: deaths.append(1))
    before = len(deaths)
    for _ in range(400):
        quiet.after_create()
    assert len(deaths) == before
