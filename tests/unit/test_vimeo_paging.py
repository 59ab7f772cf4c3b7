"""Vimeo's page-number windows that overlap, the cursor that carries where a listing stands, the lock-out
backoff and the privacy map (pure: no network)."""

from __future__ import annotations

import pytest
from migrator.providers.facts import CredentialsError
from migrator.sources.base import DEFAULT_THROTTLE_S, LOCKOUT_PATIENCE, Lockout
from migrator.sources.vimeo import OVERLAP, PER_PAGE, Cursor, privacy_of, team_of, window


@pytest.mark.parametrize("offset", [0, 1, 99, 100, 180, 255, 1_000, 99_991, 1_000_000])
def test_each_window_starts_at_least_the_overlap_back_and_always_moves_on(offset):
    page, size = window(offset, OVERLAP)
    first = (page - 1) * size
    assert PER_PAGE // 2 < size <= PER_PAGE and page >= 1
    assert first <= max(0, offset - OVERLAP) and first + size > offset


def test_a_million_videos_cost_a_fifth_more_pages_not_twice_as_many():
    offset, pages = 0, 0
    while offset < 1_000_000:
        page, size = window(offset, OVERLAP if offset else 0)
        offset, pages = (page - 1) * size + size, pages + 1
    assert pages < 1.25 * 1_000_000 / PER_PAGE


def test_the_cursor_carries_the_position_and_the_last_ids_and_reads_an_old_page_number():
    assert Cursor.parse(None) == Cursor() and Cursor.parse("garbage") == Cursor()
    assert Cursor.parse(str(Cursor(180, ("7", "8")))) == Cursor(180, ("7", "8"))
    assert Cursor.parse("3") == Cursor(200)  # a state saved before pages overlapped: page 3 of 100
    assert Cursor.parse("180:7,x,8") == Cursor(180, ("7", "8"))  # what is no id is dropped


def test_the_lockout_backoff_doubles_to_a_minute_with_jitter_for_five_minutes_in_all():
    backoff, waits = Lockout(60.0), []
    while (pause := backoff.next_pause()) is not None:
        waits.append(pause)
    assert DEFAULT_THROTTLE_S * 0.8 <= waits[0] <= DEFAULT_THROTTLE_S * 1.2
    assert all(w <= 72 for w in waits) and sum(waits) == pytest.approx(LOCKOUT_PATIENCE * 60)
    assert len(set(waits)) == len(waits)  # jittered


@pytest.mark.parametrize(
    ("view", "privacy", "noted"),
    [
        ("anybody", "public", False),
        ("unlisted", "unlisted", False),
        ("nobody", "private", False),
        ("password", "private", True),
        ("contacts", "private", True),
        ("users", "private", True),
        ("disable", "private", True),
        ("team", "private", True),  # a value Vimeo adds later is never wider
    ],
)
def test_privacy_never_widens(view, privacy, noted):
    got, note = privacy_of({"privacy": {"view": view}})
    assert got == privacy and (note is not None) == noted
    assert privacy_of({}) == (None, None) and privacy_of({"privacy": {"view": 3}}) == (None, None)


def test_a_team_is_named_by_its_owners_user_id():
    assert team_of("12345") == team_of("/users/12345") == team_of("user12345") == "12345"
    assert team_of(None) is None and team_of("") is None
    for bad in ("marketing", "/users/12/videos", 12345, "1" * 21):
        with pytest.raises(CredentialsError):
            team_of(bad)
