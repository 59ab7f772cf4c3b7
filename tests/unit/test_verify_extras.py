"""`migrator verify` beside the video (issue 42): each ready asset's thumbnail, chapters and places in collections,
read back from the target where the ledger says they were set; a noted one is no mismatch, a missing one is; an
asset whose extras are still being worked is left for the next run with nothing fetched for it."""

from __future__ import annotations

import sqlite3
from decimal import Decimal

import pytest
from migrator.extras import collection_key
from migrator.providers.extras import ChaptersLook, ThumbnailLook
from migrator.tracks import TrackOutcome, TrackResult
from migrator_cli.verify import Checker, Checkpoint, Pace, Tolerance, run_verify
from migrator_cli.verify_extras import ExtrasChecker, Look, WithExtras, judge, plan_extras

from tests.unit.test_verify import FakeOrigin, item, origin_for

TALKS = {"id": "f1", "name": "Talks", "kind": "folder", "position": Decimal(0)}
PLACE = "collection:" + collection_key("inventory", "f1")  # an https row's collections are the inventory's own
CHAPTERS = [{"start_s": Decimal(0), "title": "Intro"}, {"start_s": Decimal("7.5"), "title": "Demo"}]


def entry(kind: str, state: str = "attached", **fields) -> dict:
    return {"kind": kind, "state": state, "attempts": Decimal(1), **fields}


def with_extras(n: int, states: dict | None = None, **fields) -> dict:
    """A ready asset whose row has a thumbnail, chapters and one collection, its extras armed on its video."""
    armed = {
        "thumbnail": entry("thumbnail", remote_track_id="d1g3st"),
        "chapters": entry("chapters", remote_track_id="en"),
        PLACE: entry("collection", remote_track_id="col-1", collection=PLACE.split(":")[1]),
    }
    row = {
        "remote_id": f"v{n}",
        "tracks_video": f"v{n}",
        "thumbnail_url": f"https://i.example/{n}.jpg",
        "chapters": CHAPTERS,
        "collections": [TALKS],
        "track_states": {**armed, **(states or {})},
    }
    return item(n, **(row | fields))


def shown(plan) -> tuple:
    """A plan in short: its looks, its findings' kinds and first words, what it counts apart, why not yet."""
    return (
        [(look.kind, look.arg) for look in plan.looks],
        [(f.kind, f.detail.split(": ")[0]) for f in plan.findings],
        plan.noted,
        plan.taken,
        plan.unsettled,
    )


@pytest.mark.parametrize(
    ("the_item", "expected"),
    [
        (item(1), ([], [], 0, 0, "")),  # a row without extras: nothing to read back
        (
            with_extras(1),
            ([("thumbnail", ""), ("chapters", "en"), ("collection", "col-1")], [], 0, 0, ""),
        ),
        # The chapters are filed in the language of the row's first caption track.
        (
            with_extras(1, tracks=[{"url": "https://c.example/fr.vtt", "language": "fr"}]),
            ([("thumbnail", ""), ("chapters", "fr"), ("collection", "col-1")], [], 0, 0, ""),
        ),
        # Noted: settled, carried otherwise, counted apart; nothing asked of the target.
        (
            with_extras(1, {"thumbnail": entry("thumbnail", "noted", note="mux takes a poster time only")}),
            ([("chapters", "en"), ("collection", "col-1")], [], 1, 0, ""),
        ),
        # Failed for good: a mismatch from the ledger alone.
        (
            with_extras(1, {"chapters": entry("chapters", "failed", error="provider: HTTP 400: bad cue")}),
            ([("thumbnail", ""), ("collection", "col-1")], [("chapters", "the chapters (chapters) failed")], 0, 0, ""),
        ),
        # Still being worked: not judged yet.
        (
            with_extras(1, {"chapters": entry("chapters", "failed", error="HTTP 503", retry_after=Decimal(9))}),
            ([], [], 0, 0, "chapters failed, to be retried"),
        ),
        (
            with_extras(1, {PLACE: entry("collection", "pending")}),
            ([], [], 0, 0, f"{PLACE} pending"),
        ),
        (
            with_extras(1, tracks_video="v-older"),
            ([], [], 0, 0, "not yet armed on its video (the tracks worker takes them up; reconcile arms them)"),
        ),
        # The row has it, the ledger has no entry for it: missing, a mismatch.
        (
            {**with_extras(1), "track_states": {"thumbnail": entry("thumbnail"), PLACE: entry("collection", "noted")}},
            ([("thumbnail", "")], [("chapters", "the chapters (chapters)")], 1, 0, ""),
        ),
        (
            with_extras(1, {PLACE: entry("collection")}),  # attached, yet no collection id kept
            (
                [("thumbnail", ""), ("chapters", "en")],
                [("collection", f"the place in a collection ({PLACE}) is attached with no collection id recorded")],
                0,
                0,
                "",
            ),
        ),
    ],
)
def test_what_is_read_back_and_what_the_ledger_settles_alone(the_item, expected):
    assert shown(plan_extras(the_item)) == expected


def test_a_frame_time_picked_in_place_of_an_image_is_taken_at_the_ledgers_word():
    picked = item(
        1, remote_id="v1", tracks_video="v1", poster_time_s=Decimal(4), track_states={"thumbnail": entry("thumbnail")}
    )
    assert shown(plan_extras(picked, poster_time_later=True)) == ([], [], 0, 1, "")
    assert shown(plan_extras(picked, poster_time_later=False)) == ([], [], 0, 0, "")  # no extra armed there


THUMB, CHAPS, IN = (
    Look("thumbnail", "thumbnail"),
    Look("chapters", "chapters", "en"),
    Look(PLACE, "collection", "col-1"),
)


@pytest.mark.parametrize(
    ("look", "answer", "expected"),
    [
        (THUMB, ThumbnailLook(custom=True, digest="d"), None),
        (THUMB, ThumbnailLook(custom=False), "thumbnail: the target's video shows no custom thumbnail"),
        (CHAPS, ChaptersLook(3), None),
        (CHAPS, ChaptersLook(0), "chapters: the target's video holds no chapters (en)"),
        (IN, True, None),
        (IN, False, "collection: the video is not in the collection col-1 at the target"),
        (THUMB, TrackOutcome(TrackResult.TRANSIENT, error="provider: timed out"), "no answer"),
        (IN, TrackOutcome(TrackResult.THROTTLED), "no answer"),
        (CHAPS, TrackOutcome(TrackResult.VIDEO_GONE, error="provider: no such video"), "chapters: the chapters"),
        (THUMB, TrackOutcome(TrackResult.REFUSED, error="provider: HTTP 403"), "thumbnail: the thumbnail"),
    ],
)
def test_the_targets_answer_judged(look, answer, expected):
    verdict = judge("lib/1", look, answer)
    if verdict is None or expected is None:
        assert verdict is expected
    elif isinstance(verdict, str):
        assert expected == "no answer" and "no answer from the target" in verdict
    else:
        assert f"{verdict.kind}: {verdict.detail}".startswith(expected) and verdict.numbers == {"key": look.key}


class FakeTarget:
    """The provider's looks, from what it holds; `script` answers a kind's next looks first (429s, timeouts)."""

    def __init__(self, thumbnails=(), chapters=None, placed=(), script=None):
        self.thumbnails, self.chapters, self.placed = set(thumbnails), dict(chapters or {}), set(placed)
        self.script = {kind: list(answers) for kind, answers in (script or {}).items()}
        self.asked: list[tuple] = []

    def _next(self, kind, otherwise):
        queued = self.script.get(kind)
        return queued.pop(0) if queued else otherwise

    def thumbnail_state(self, remote_id):
        self.asked.append(("thumbnail", remote_id))
        return self._next("thumbnail", ThumbnailLook(custom=remote_id in self.thumbnails))

    def chapters_of(self, remote_id, language):
        self.asked.append(("chapters", remote_id, language))
        return self._next("chapters", ChaptersLook(self.chapters.get((remote_id, language), 0)))

    def placed_in(self, remote_id, collection_id):
        self.asked.append(("collection", remote_id, collection_id))
        return self._next("collection", (remote_id, collection_id) in self.placed)


class CountingPace(Pace):
    """No wait at all; counts how many requests asked for their turn (from any thread)."""

    def __init__(self):
        super().__init__(0)
        self.waits = 0

    def wait(self) -> None:
        with self.lock:
            self.waits += 1


def test_a_429_is_waited_out_on_the_targets_word_then_given_up_as_no_answer():
    slept: list[float] = []
    throttled = TrackOutcome(TrackResult.THROTTLED, retry_after=90.0)
    target = FakeTarget(thumbnails={"v1"}, script={"thumbnail": [throttled, TrackOutcome(TrackResult.THROTTLED)]})
    pace = CountingPace()
    checker = ExtrasChecker(target, pace, sleep=slept.append, waits=(1.0, 2.0), jitter=lambda: 1.0)
    assert checker.check(with_extras(1), [THUMB]) == ([], ("thumbnail",), "")
    assert slept == [30.0, 2.0] and pace.waits == 3  # Retry-After capped at 30 s, then the schedule; each ask paced
    stuck = FakeTarget(script={"chapters": [TrackOutcome(TrackResult.THROTTLED)] * 3})
    findings, found, why = ExtrasChecker(stuck, CountingPace(), sleep=slept.append, waits=(1.0, 2.0)).check(
        with_extras(1), [CHAPS, IN]
    )
    assert (findings, found) == ([], ()) and why.startswith("the chapters (chapters): no answer from the target")
    assert [a[0] for a in stuck.asked] == ["chapters"] * 3  # the asset is left: its other looks wait for the next run


def verify(items, target, origin_table, checkpoint=None):
    origin = FakeOrigin(origin_table)
    pace = CountingPace()
    video = Checker("bunny", Tolerance(1.0), pace, origin, {})
    check = WithExtras(video, ExtrasChecker(target, pace))
    found: list[dict] = []
    summary = run_verify(items, check, checkpoint=checkpoint or Checkpoint(None), on_finding=found.append)
    return summary, found, origin, pace


def test_each_extra_is_read_back_a_noted_one_counted_apart_and_a_missing_one_named():
    whole = with_extras(1)
    noted = with_extras(2, {"thumbnail": entry("thumbnail", "noted", note="kept in the stack's bucket")})
    lost = with_extras(3)  # the target shows no custom thumbnail on v3
    working = with_extras(4, {"chapters": entry("chapters", "pending")})
    target = FakeTarget(
        thumbnails={"v1", "v2"},
        chapters={(f"v{n}", "en"): 2 for n in (1, 2, 3)},
        placed={(f"v{n}", "col-1") for n in (1, 2, 3)},
    )
    table = {**origin_for(1), **origin_for(2), **origin_for(3), **origin_for(4)}
    summary, found, origin, pace = verify([whole, noted, lost, working], target, table)
    assert (summary.passed, summary.failed, summary.unchecked) == (2, 1, 1)
    assert (summary.extras_found, summary.extras_noted) == (7, 1)  # 3 + 2 + 2 read back; v2's thumbnail noted
    mismatches = [doc for doc in found if doc["type"] == "mismatch"]
    assert mismatches == [
        {
            "type": "mismatch",
            "id": "lib/3",
            "kind": "thumbnail",
            "detail": "the target's video shows no custom thumbnail; the ledger says one was set",
            "key": "thumbnail",
        }
    ]
    assert {"type": "unchecked", "id": "lib/4", "reason": "its extras are not settled yet: chapters pending"} in found
    assert not any("/4/" in url for url in origin.asked) and not any(a[1] == "v4" for a in target.asked)
    assert ("thumbnail", "v2") not in target.asked  # noted: nothing to read back
    assert pace.waits == len(origin.asked) + len(target.asked)  # manifests and looks on the one pace
    assert summary.by_kind == {"thumbnail": 1}
    lines = summary.lines()
    at = lines.index("extras          7 found at the target, 1 noted (carried otherwise: report's extras_notes)")
    assert lines[at + 1 : at + 4] == [  # the same by kind: what the demo's summary reads
        "  chapters      3 found",
        "  places        3 found",
        "  thumbnails    1 found, 1 noted",
    ]
    assert summary.extras_kinds == {"thumbnail": [1, 1], "chapters": [3, 0], "collection": [3, 0]}


def test_all_there_says_so_in_the_result():
    target = FakeTarget(thumbnails={"v1"}, chapters={("v1", "en"): 2}, placed={("v1", "col-1")})
    summary, found, _, _ = verify([with_extras(1)], target, origin_for(1))
    assert found == [] and summary.ok
    assert summary.result() == "OK: every ready asset checked (1) and matched; extras 3 found, 0 noted"


def test_a_passed_verdict_from_before_the_extras_were_checked_does_not_stand_for_an_asset_with_extras(tmp_path):
    path = tmp_path / "verify.sqlite"
    old = sqlite3.connect(path)  # a checkpoint as the CLI wrote it before this change
    old.execute("CREATE TABLE verdicts (id TEXT PRIMARY KEY, status TEXT, findings TEXT, remote_id TEXT, run TEXT)")
    old.executemany("INSERT INTO verdicts VALUES (?, 'passed', '[]', ?, 'then')", [("lib/1", "v1"), ("lib/2", "v2")])
    old.commit()
    old.close()
    target = FakeTarget(thumbnails={"v1"}, chapters={("v1", "en"): 2}, placed={("v1", "col-1")})
    plain = item(2, remote_id="v2")
    summary, _, origin, _ = verify([with_extras(1), plain], target, origin_for(1), Checkpoint(str(path)))
    assert summary.skipped_done == 1 and summary.checked == 1  # lib/2 (no extras) stands; lib/1 is checked again
    assert target.asked and all(url.startswith("https://cdn.example/v/1/") for url in origin.asked)
    again, _, origin, _ = verify([with_extras(1), plain], target, {}, Checkpoint(str(path)))
    assert again.skipped_done == 2 and origin.asked == [] and (again.extras_found, again.passed) == (3, 2)
