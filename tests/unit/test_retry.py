"""Retry-After parsing, backoff bounds and jitter ranges: pure timing rules."""

import random
from email.utils import formatdate

import pytest
from migrator.retry import (
    BACKOFF_BASE_S,
    BACKOFF_CAP_S,
    DEFAULT_THROTTLE_S,
    FIRST_PREPARE_WAIT_S,
    MAX_THROTTLE_S,
    SQS_MAX_VISIBILITY_S,
    backoff_delay,
    deferral_floor,
    parse_retry_after,
    prepare_wait,
    retry_after_from_headers,
    throttle_delay,
    visibility_for,
)

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", 0.0),
        ("7", 7.0),
        (" 12 ", 12.0),
        ("1.5", 1.5),
        ("86400", 86400.0),
        (formatdate(NOW + 30, usegmt=True), 30.0),
        (formatdate(NOW - 300, usegmt=True), 0.0),  # a past date means "now"
    ],
)
def test_retry_after_valid(value, expected):
    assert parse_retry_after(value, NOW) == pytest.approx(expected, abs=1.0)


@pytest.mark.parametrize(
    "value", [None, "", "soon", "-5", "nan", "inf", "12abc", "Mon, 99 Foo 2026", "Tue, 15 Nov 1994 08:12:31"]
)
def test_retry_after_unusable(value):
    assert parse_retry_after(value, NOW) is None


def test_headers_prefer_standard_then_vendor_header():
    assert retry_after_from_headers({"Retry-After": "3", "X-RateLimit-Retry-After": "9"}, NOW) == 3
    assert retry_after_from_headers({"x-ratelimit-retry-after": "9"}, NOW) == 9
    # a vendor header carrying an absolute epoch time
    assert retry_after_from_headers({"X-RateLimit-Retry-After": str(int(NOW + 42))}, NOW) == pytest.approx(42)
    assert retry_after_from_headers({"Retry-After": "garbage"}, NOW) is None
    assert retry_after_from_headers({}, NOW) is None


def test_throttle_delay_defaults_caps_and_jitters():
    rng = random.Random(1)
    absent = [throttle_delay(None, rng) for _ in range(500)]
    assert min(absent) >= DEFAULT_THROTTLE_S
    assert max(absent) <= DEFAULT_THROTTLE_S + 1.0
    huge = [throttle_delay(10**9, rng) for _ in range(500)]
    assert min(huge) >= MAX_THROTTLE_S
    assert max(huge) <= MAX_THROTTLE_S * 1.2
    told = [throttle_delay(10, rng) for _ in range(500)]
    assert min(told) >= 10  # never earlier than the provider asked
    assert max(told) <= 12
    assert max(told) - min(told) > 1.5  # really spread, not a constant


@pytest.mark.parametrize("attempt", [1, 2, 3, 5, 8, 12, 40])
def test_backoff_bounds(attempt):
    rng = random.Random(attempt)
    ceiling = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** (attempt - 1))
    values = [backoff_delay(attempt, rng) for _ in range(300)]
    assert min(values) >= ceiling / 2
    assert max(values) <= ceiling
    assert max(values) - min(values) > ceiling / 5  # jitter actually spreads retries


def test_backoff_grows_then_caps():
    rng = random.Random(0)
    assert backoff_delay(1, rng) <= BACKOFF_BASE_S
    assert backoff_delay(4, rng) >= BACKOFF_BASE_S * 4
    assert backoff_delay(99, rng) <= BACKOFF_CAP_S


def test_visibility_rounds_up_and_respects_the_12_hour_ceiling():
    assert visibility_for(0, None, NOW) == 0
    assert visibility_for(4.2, None, NOW) == 5  # never earlier than asked
    assert visibility_for(10**9, None, NOW) == SQS_MAX_VISIBILITY_S
    received = NOW - 40_000
    allowed = visibility_for(10_000, received, NOW)
    assert allowed <= SQS_MAX_VISIBILITY_S - 40_000
    assert allowed > 3_000
    assert visibility_for(10, NOW - 50_000, NOW) == 0  # past the ceiling: come back now


def test_deferral_floor_grows_to_its_cap():
    floors = [deferral_floor(n) for n in range(1, 40)]
    assert floors[:10] == [0.0] * 10  # a few bounces in a busy migration cost nothing extra
    assert floors[10] == 2
    assert floors == sorted(floors)
    assert max(floors) == 900
    # The queue's maxReceiveCount (1000, template.yaml) must outlast a long outage: after
    # the doubling phase every receive waits the full cap, over ten days in all.
    assert sum(deferral_floor(n) for n in range(1, 1001)) > 10 * 86_400


@pytest.mark.parametrize(
    ("poll_s", "waited_s", "left_s", "wait_s"),
    [
        (15.0, 0.0, 30.0, FIRST_PREPARE_WAIT_S),  # asked once: a short wait, not the source's 15 s
        (15.0, 6.0, 24.0, 6.0),  # then as long as it has waited: the whole about doubles
        (15.0, 12.0, 18.0, 12.0),
        (15.0, 40.0, 600.0, 15.0),  # a long preparation: the source's own interval
        (600.0, 0.0, 3600.0, FIRST_PREPARE_WAIT_S),  # Azure's rehydration: hours, still asked early once
        (600.0, 90.0, 3510.0, 90.0),
        (3.0, 0.0, 30.0, 3.0),  # a source that asks for less than the first wait is asked sooner
        (60.0, 25.0, 5.0, 6.0),  # 5 s left of the bound: a second past it, where the ask fails the asset
        (60.0, 35.0, -5.0, 0.0),  # past it already: at once
    ],
)
def test_prepare_wait(poll_s, waited_s, left_s, wait_s):
    assert prepare_wait(poll_s, waited_s, left_s) == wait_s
