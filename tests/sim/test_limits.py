"""The documented limits as pure logic: the call budget and its block, the profiles' defaults, the hang convention.

No server here: the Budget runs on explicit times, SimConfig is built directly. The
behaviour over HTTP is in test_sdk_*.py.
"""

from __future__ import annotations

import pytest

from infra.provider_sim import ConfigError, SimConfig, build_parser
from infra.sim.bucket import Budget
from infra.sim.video import is_hang


def test_budget_allows_its_quota_then_blocks_every_call_for_the_block_then_opens_a_fresh_window():
    budget = Budget(quota=3, window_s=10.0, block_s=5.0)
    assert [budget.take(t) for t in (0.0, 1.0, 2.0)] == [None, None, None]
    assert budget.take(3.0) == 5.0  # over: the block starts now
    assert budget.take(4.0) == 4.0 and budget.take(7.5) == 0.5  # refused calls do not extend it
    blocked = budget.state(7.5)
    assert (blocked.remaining, blocked.next_in_s, blocked.kind) == (0, 0.5, "budget")
    assert budget.take(8.0) is None  # after the block: a fresh window, this call its first
    fresh = budget.state(8.0)
    assert (fresh.remaining, fresh.reset_in_s(), fresh.policy()) == (2, 10, (3, 10))
    assert budget.blocks == 1


def test_budget_windows_are_fixed_and_a_block_of_zero_lasts_to_the_window_end():
    budget = Budget(quota=2, window_s=10.0, block_s=0.0)
    assert [budget.take(t) for t in (0.0, 9.0)] == [None, None]
    assert budget.take(9.5) == 0.5  # refused until the window closes at 10
    assert budget.take(10.0) is None and budget.state(10.0).remaining == 1


def test_no_budget_allows_everything_and_reports_nothing():
    budget = Budget(quota=0, window_s=300.0, block_s=300.0)
    assert all(budget.take(float(t)) is None for t in range(5000)) and budget.state(0.0) is None


@pytest.mark.parametrize(
    "profile, expected",
    [
        ("generic", {"rate": 20.0, "burst": 20, "read_rate": 0.0, "budget_quota": 0, "max_in_flight": 0}),
        ("mux", {"rate": 1.0, "burst": 10, "read_rate": 5.0, "budget_quota": 0, "max_in_flight": 0}),
        ("cloudflare", {"rate": 20.0, "burst": 20, "read_rate": 0.0, "budget_quota": 1200, "max_in_flight": 120}),
        ("apivideo", {"rate": 20.0, "burst": 20, "read_rate": 0.0, "budget_quota": 0, "max_in_flight": 0}),
    ],
)
def test_each_profile_defaults_to_the_limits_its_provider_documents(profile, expected):
    config = SimConfig(profile=profile)
    assert {name: getattr(config, name) for name in expected} == expected


def test_limits_left_unset_follow_the_profile_and_given_ones_stay():
    config = SimConfig(rate=7.0)
    config.patch({"profile": "mux"})
    assert (config.rate, config.read_rate, config.burst) == (7.0, 5.0, 10)  # rate was given; the rest follow
    config.patch({"rate": None})
    assert config.rate == 1.0  # null: back to the profile's
    config.patch({"profile": "cloudflare", "budget_quota": 50})
    assert (config.rate, config.read_rate, config.budget_quota, config.max_in_flight) == (20.0, 0.0, 50, 120)


def test_the_command_line_leaves_limits_to_the_profile():
    args = vars(build_parser().parse_args(["--profile", "mux", "--read-rate", "2"]))
    args.pop("verbose")
    config = SimConfig(**args)
    assert (config.rate, config.burst, config.read_rate) == (1.0, 10, 2.0)


@pytest.mark.parametrize(
    "patch",
    [
        {"budget_window_s": 0},
        {"budget_quota": -1},
        {"budget_block_s": -1},
        {"read_burst": 0},
        {"read_rate": "fast"},
        {"max_in_flight": 1.5},
        {"in_flight_status": 500},
        {"in_flight_status": True},
        {"storage_minutes": -1},
        {"hang_rate": 2},
        {"check_source": "yes"},
        {"legacy_rate_headers": 1},
        {"rate_header_scale": 0},
    ],
)
def test_the_new_knobs_are_validated_and_a_bad_patch_changes_nothing(patch):
    config = SimConfig(profile="cloudflare")
    before = config.to_dict()
    with pytest.raises(ConfigError, match=next(iter(patch))):
        config.patch({"rate": 3, **patch})
    assert config.to_dict() == before


@pytest.mark.parametrize(
    "url, hangs",
    [
        ("https://media.example.com/hang.mp4", True),
        ("https://media.example.com/library/hang-00001.mp4", True),
        ("https://media.example.com/HANG/a.mp4", True),
        ("https://media.example.com/a.mp4?hang", True),
        ("https://media.example.com/change.mp4", False),
        ("https://media.example.com/shanghai.mp4", False),
        ("https://media.example.com/hanger.mp4", False),
    ],
)
def test_the_hang_convention_matches_the_word_only(url, hangs):
    assert is_hang(url) is hangs
