"""Done and stalled notices, decided (functions/migrator/notices.py): tables of what the aggregates and the
`#notices` item call for, and what the notices say."""

from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from migrator.notices import (
    DoneStep,
    Progress,
    Seen,
    StallStep,
    done_notice,
    done_step,
    progress_of,
    remaining_of,
    seen_of,
    stall_notice,
    stall_step,
)
from migrator.tally import Stats
from migrator.window import parse_window

UTC = ZoneInfo("UTC")
NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC).timestamp()  # a Monday
HOUR = 3600.0


def progress(unrecorded: int = 0, **counts: int) -> Progress:
    return progress_of(Stats(counts, {}), unrecorded)


DONE_10 = progress(ready=8, rejected=1, failed=1)
MOVING = progress(ready=4, processing=6)


@pytest.mark.parametrize(
    ("now", "seen", "step"),
    [
        (progress(), Seen(), DoneStep.NONE),  # nothing loaded yet
        (MOVING, Seen(), DoneStep.NONE),  # not done yet
        (progress(unrecorded=3, ready=10), Seen(), DoneStep.NONE),  # intake still holds messages not recorded
        (progress(pending=2, ready=8), Seen(), DoneStep.NONE),
        (DONE_10, Seen(), DoneStep.TELL),  # done now, not yet told
        (DONE_10, Seen(done_total=10), DoneStep.NONE),  # told already
        (progress(ready=25), Seen(done_total=10), DoneStep.TELL),  # a second load: 15 more assets, done
        (progress(ready=10, pending=15), Seen(done_total=10), DoneStep.ARM),  # a second load under way arms too
        (progress(ready=9, pending=1), Seen(done_total=10), DoneStep.ARM),  # a retry round after the notice
        (progress(ready=9, pending=1), Seen(done_total=10, armed=True), DoneStep.NONE),  # armed once
        (progress(ready=10), Seen(done_total=10, armed=True), DoneStep.TELL),  # the retry round ended
    ],
)
def test_done_is_told_once_per_load(now, seen, step):
    assert done_step(now, seen) is step


OFFICE = parse_window("Mon-Fri 09:00-18:00 UTC")


@pytest.mark.parametrize(
    ("now_progress", "seen", "stall_after_s", "window", "step"),
    [
        (MOVING, Seen(), 3600, None, StallStep.MOVED),  # never looked: note the counts
        (MOVING, Seen(fingerprint="other", moved_at=NOW - 9 * HOUR), 3600, None, StallStep.MOVED),  # moving
        (MOVING, Seen(fingerprint=MOVING.fingerprint, moved_at=NOW - 0.5 * HOUR), 3600, None, StallStep.NONE),
        (MOVING, Seen(fingerprint=MOVING.fingerprint, moved_at=NOW - HOUR), 3600, None, StallStep.TELL),  # stalled
        (  # told already: once per episode
            MOVING,
            Seen(fingerprint=MOVING.fingerprint, moved_at=NOW - 5 * HOUR, stall_told=True),
            3600,
            None,
            StallStep.NONE,
        ),
        (  # moving again after a told stall: the episode ends (stall_told cleared by the MOVED write)
            MOVING,
            Seen(fingerprint="before", moved_at=NOW - 5 * HOUR, stall_told=True),
            3600,
            None,
            StallStep.MOVED,
        ),
        (MOVING, Seen(fingerprint=MOVING.fingerprint, moved_at=NOW - 5 * HOUR), 0, None, StallStep.NONE),  # off
        (DONE_10, Seen(fingerprint=DONE_10.fingerprint, moved_at=NOW - 5 * HOUR), 3600, None, StallStep.NONE),
        # Outside the working hours nothing moves on purpose: since Friday 17:30, only 3.5 h of open time by
        # Monday noon; by Monday 12:00 from Friday 18:00 only 3 h.
        (MOVING, Seen(fingerprint=MOVING.fingerprint, moved_at=NOW - 66.5 * HOUR), 4 * HOUR, OFFICE, StallStep.NONE),
        (MOVING, Seen(fingerprint=MOVING.fingerprint, moved_at=NOW - 66.5 * HOUR), 3 * HOUR, OFFICE, StallStep.TELL),
    ],
)
def test_a_stall_is_told_once_per_episode_and_counted_in_open_hours(now_progress, seen, stall_after_s, window, step):
    assert stall_step(now_progress, seen, NOW, stall_after_s, window) is step


def test_the_fingerprint_moves_with_any_count():
    assert progress(ready=4, processing=6).fingerprint == MOVING.fingerprint
    assert progress(ready=5, processing=5).fingerprint != MOVING.fingerprint
    with_track = progress_of(Stats({"ready": 4, "processing": 6}, {}, tracks={"attached": 1}), 0)
    assert with_track.fingerprint != MOVING.fingerprint


def test_remaining_counts_as_status_does():
    assert remaining_of({"pending": 1, "inventoried": 2, "uploading": 3, "processing": 4, "ready": 9}, 5) == 15


def test_the_item_reads_back():
    item = {"done_total": 10, "armed": False, "fingerprint": "f", "moved_at": NOW, "stall_told": True}
    assert seen_of(item) == Seen(10, False, "f", NOW, True)
    assert seen_of(None) == Seen()


def test_the_done_notice_carries_the_status_summary():
    notice = done_notice("video-migration", DONE_10, NOW)
    assert notice.subject == "video-migration: migration done, 10 assets (8 ready, 1 rejected, 1 failed)"
    assert len(notice.subject) <= 100 and notice.subject.isascii()
    summary = json.loads(notice.message.rsplit("\n\n", 1)[1])
    assert summary["counts"] == {"ready": 8, "rejected": 1, "failed": 1}
    assert (summary["total"], summary["remaining"], summary["ready"], summary["failed"]) == (10, 0, 8, 1)
    assert "migrator report" in notice.message


def test_the_stall_notice_says_since_when_and_what_is_left():
    seen = Seen(fingerprint=MOVING.fingerprint, moved_at=NOW - HOUR)
    notice = stall_notice("s" * 120, MOVING, seen, NOW)
    assert len(notice.subject) == 100  # SNS takes 100 characters at most
    assert "since 2026-12-07 11:00 UTC" in notice.message and "6 assets left" in notice.message
