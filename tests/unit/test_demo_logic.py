"""The demo's own logic: how it waits on a local stack that stalls, and gives up with one line."""

from __future__ import annotations

from collections import Counter

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


def outcome(**given):
    from infra.demo import Outcome

    fields = dict(unresolved=0, duplicates=0, unsettled=0, verified=True, pending_tracks=0, tracks_waited_s=0.0)
    return Outcome(**{**fields, **given})


@pytest.mark.parametrize(
    "given, problem",
    [
        ({}, None),
        # A track the provider never confirmed is not known to have arrived: the result says so instead of OK
        # (the Stream -> Mux demo once ended "OK" with 24 of 24 tracks pending), with the wait it really made
        # (it once claimed a wait of 180 s that had returned at once).
        ({"pending_tracks": 24, "tracks_waited_s": 181.4}, "24 caption tracks still pending after a wait of 181 s"),
        ({"pending_tracks": 30, "tracks_waited_s": 0.2}, "30 caption tracks still pending after a wait of 0 s"),
        ({"unresolved": 3, "unsettled": 3, "pending_tracks": 24}, "3 unresolved"),  # the first reason to act on
        ({"duplicates": 1}, "1 duplicate videos, 0 assets never settled"),
        ({"verified": False}, "parity check failed"),
        ({"private_not_signed": 2, "verified": False}, "2 private rows not signed at the provider (privacy widened)"),
    ],
)
def test_the_demo_names_the_first_reason_it_is_not_ok(given, problem):
    from infra.demo import problems_of

    assert problems_of(outcome(**given)) == problem


def ready(asset: str, remote: str | None, tracks: int = 0, states: dict | None = None, video: str | None = None):
    """A ready ledger item: `tracks` caption tracks in its row, `states` armed for `video`."""
    item = {"asset_id": asset, "state": "ready", "remote_id": remote}
    if tracks:  # as the ledger keeps a row's tracks: a list of objects
        languages = ("en", "fr", "de")
        item["tracks"] = [{"url": f"https://c.example/{n}.vtt", "language": languages[n]} for n in range(tracks)]
    if states is not None:
        item["track_states"] = {key: {"state": state, "error": "not a caption file"} for key, state in states.items()}
        item["tracks_video"] = video or remote
    return item


EXTRAS_ROW = {
    "source_url": "https://m.example/a.mp4",
    "thumbnail_url": "https://i.example/p.jpg",
    "collections": [{"id": "f", "name": "F", "kind": "folder"}],
}


@pytest.mark.parametrize(
    "items, attached, failed, pending, unarmed",
    [
        ([], 0, 0, 0, 0),
        ([ready("a", "v1")], 0, 0, 0, 0),  # a video with no tracks waits for nothing
        # The vimeo -> Mux demo's case: 12 ready videos with tracks, none armed yet: 24 pending, not 0.
        ([ready(f"a{n}", f"v{n}", tracks=2) for n in range(12)], 0, 0, 24, 24),
        ([ready("a", "v1", tracks=2, states={"x": "attached", "y": "pending"})], 1, 0, 1, 0),
        ([ready("a", "v1", tracks=3, states={"x": "attached", "y": "failed", "z": "attached"})], 2, 1, 0, 0),
        # Armed for an earlier video (a retry made another): this video's tracks are not armed yet.
        ([ready("a", "v2", tracks=2, states={"x": "attached", "y": "attached"}, video="v1")], 0, 0, 2, 2),
        # A row whose tracks cannot be read names none the demo can wait for.
        ([{**ready("a", "v1"), "tracks": "not a list"}], 0, 0, 0, 0),
        # Extras are waited for as tracks are: a row's thumbnail and collection, not armed yet...
        ([{**ready("a", "v1"), **EXTRAS_ROW}], 0, 0, 2, 2),
        # ...and once armed, a noted one is settled: nothing pending.
        ([ready("a", "v1", states={"thumbnail": "noted", "collection:ab": "attached"})], 1, 0, 0, 0),
    ],
)
def test_the_tracks_tally_counts_the_tracks_of_unarmed_videos_as_pending(items, attached, failed, pending, unarmed):
    from infra.demo_tracks import tally_tracks

    tally = tally_tracks(items)
    assert (tally.states.get("attached", 0), tally.states.get("failed", 0)) == (attached, failed)
    assert (tally.pending, tally.unarmed) == (pending, unarmed)


class Ledger:
    """A local run whose ready items change with each read, as the tracks worker moves them."""

    def __init__(self, *reads):
        self.reads = list(reads)

    def items(self, state):
        assert state == "ready"
        return self.reads.pop(0) if len(self.reads) > 1 else self.reads[0]


def test_the_tracks_wait_outlasts_videos_not_yet_armed_and_says_what_it_waited(capsys):
    from infra.demo_tracks import settle_tracks

    clock = Clock()
    unarmed = [ready("a", "v1", tracks=2)]
    armed = [ready("a", "v1", tracks=2, states={"x": "pending", "y": "attached"})]
    done = [ready("a", "v1", tracks=2, states={"x": "failed", "y": "attached"})]
    tally, waited = settle_tracks(Ledger(unarmed, unarmed, armed, done), 180, sleep=clock.sleep, clock=clock)
    assert (tally.pending, tally.states["failed"], waited) == (0, 1, 6.0)
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "[demo] waiting for 2 caption tracks (2 not yet armed) (until none settles for 180 s)",
        "[demo] waiting for 1 caption tracks (until none settles for 180 s)",
    ]


def test_the_tracks_wait_gives_up_at_its_limit_and_reports_what_it_really_waited():
    from infra.demo_tracks import settle_tracks

    clock = Clock()
    tally, waited = settle_tracks(Ledger([ready("a", "v1", tracks=3)]), 10, sleep=clock.sleep, clock=clock)
    assert (tally.pending, tally.unarmed, waited) == (3, 3, 10.0)
    clock = Clock()
    tally, waited = settle_tracks(Ledger([ready("a", "v1")]), 10, sleep=clock.sleep, clock=clock)
    assert (tally.pending, waited) == (0, 0.0)  # nothing to wait for: no wait, and none claimed


def test_the_tracks_wait_goes_on_while_they_settle_and_stops_at_its_cap():
    """A library's extras settle at the target's pace, past any fixed wait: one settling every 8 s is waited
    for beyond the 10 s limit (the vimeo -> mux demo gave up on 571 settling steadily at 180 s), and the cap
    still ends a wait that never finishes."""
    from infra.demo_tracks import settle_tracks

    def falling(n: int) -> list:  # n entries pending, one fewer every four reads (a read every 2 s)
        def read(k: int) -> list:
            return [ready("a", "v1", tracks=1, states={f"t{i}": "pending" if i < k else "attached" for i in range(n)})]

        return [read(k) for k in range(n, -1, -1) for _ in range(4)]

    clock = Clock()
    tally, waited = settle_tracks(Ledger(*falling(5)), 10, sleep=clock.sleep, clock=clock)
    assert (tally.pending, waited) == (0, 40.0)  # 5 × 8 s, each under the 10 s limit
    clock = Clock()
    tally, waited = settle_tracks(Ledger(*falling(50)), 10, sleep=clock.sleep, clock=clock, cap_s=30)
    assert tally.pending > 0 and waited == 30.0


@pytest.mark.parametrize(
    "states, unarmed, line",
    [
        ({"attached": 20, "failed": 3}, 0, "20 attached, 3 failed"),
        ({"attached": 20, "failed": 3, "pending": 4}, 0, "20 attached, 3 failed, 4 pending"),
        ({"attached": 14, "failed": 2}, 11, "14 attached, 2 failed, 11 pending (11 not yet armed)"),
        ({"attached": 5, "failed": 0, "noted": 2}, 0, "5 attached, 0 failed, 2 noted"),  # noted: settled, apart
    ],
)
def test_the_summary_accounts_for_every_track_the_rows_name(states, unarmed, line):
    from infra.demo_tracks import TrackTally, track_line

    assert track_line(TrackTally(Counter(states), Counter(), unarmed)) == line


@pytest.mark.parametrize(
    "assets, simulated, documented, timeout",
    [
        (500, 20, None, 600.0),  # a fast provider: the floor
        (490, 20, 0.95, 2 * 490 / 0.95),  # JW Player's budget, not the simulator's 20/s, paces the drain
        (2000, 2, None, 2000.0),  # a slow simulated rate
        (500, 0, None, 600.0),  # no rate at all: the floor
    ],
)
def test_the_drain_is_watched_for_twice_what_it_takes_at_the_slower_rate(assets, simulated, documented, timeout):
    from infra.demo import drain_timeout

    assert drain_timeout(assets, simulated, documented) == pytest.approx(timeout)


def kinded(asset: str, remote: str, **entries: tuple[str, str]) -> dict:
    """A ready item whose entries are armed for its video: key=(kind, state)."""
    states = {key: {"kind": kind, "state": state} for key, (kind, state) in entries.items()}
    return {"asset_id": asset, "state": "ready", "remote_id": remote, "tracks_video": remote, "track_states": states}


def test_the_tally_tells_each_kind_of_entry_apart_armed_or_not():
    from infra.demo_tracks import tally_tracks

    armed = kinded(
        "a",
        "v1",
        en=("caption", "attached"),
        thumbnail=("thumbnail", "noted"),
        chapters=("chapters", "attached"),
        **{"collection:ab": ("collection", "pending")},
    )
    chapters_file = {"url": "https://c.example/ch.vtt", "language": "en", "kind": "chapters"}
    unarmed = {**ready("b", "v2", tracks=1), **EXTRAS_ROW}
    unarmed["tracks"] = [*unarmed["tracks"], chapters_file]  # armed as the chapters extra, not as a caption
    tally = tally_tracks([armed, unarmed])
    assert (tally.states["attached"], tally.states["noted"], tally.states["pending"], tally.unarmed) == (2, 1, 1, 4)
    of = {kind: tally.of(kind) for kind in ("caption", "thumbnail", "chapters", "collection")}
    assert {k: (dict(t.states), t.unarmed) for k, t in of.items()} == {
        "caption": ({"attached": 1}, 1),
        "thumbnail": ({"noted": 1}, 1),
        "chapters": ({"attached": 1}, 1),
        "collection": ({"pending": 1}, 1),
    }
    assert tally.pending == sum(t.pending for t in of.values()) == 5


def verify_lines() -> list[str]:
    """What `migrator verify` prints for a library with extras, made by verify's own summary (so a change of its
    wording fails here, not in a demo an hour long)."""
    from migrator_cli.verify import VerifySummary
    from migrator_cli.verify_collections import CollectionsSummary

    summary = VerifySummary(passed=20, extras_found=1_045, extras_noted=8)
    summary.extras_kinds = {"thumbnail": [12, 8], "chapters": [33, 0], "collection": [1_000, 0]}
    summary.collections_line = CollectionsSummary(named=3, made=3, ordered=2, in_order=2).line()
    return ["verifying…", *summary.lines()]


def test_the_demo_reads_what_verify_read_back_by_kind():
    from infra.demo_tracks import read_back

    found, collections = read_back(verify_lines())
    assert found == {"thumbnail": (12, 8), "chapters": (33, 0), "collection": (1_000, 0)}
    assert collections == "3 of 3 made at the target; 2 of 2 ordered ones hold their videos in the source's order"
    assert read_back(["result          NOT DONE: run again with the same --checkpoint"]) == ({}, None)


def test_the_summary_says_per_kind_how_many_verify_found_of_what_the_rows_name():
    from collections import Counter

    from infra.demo_tracks import TrackTally, extras_lines

    by_kind = {
        "caption": Counter(attached=40),
        "thumbnail": Counter(attached=12, noted=8),
        "chapters": Counter(attached=33, failed=1),
        "collection": Counter(attached=999, unarmed=1),
    }
    tally = TrackTally(Counter(), Counter(), 1, by_kind)
    assert extras_lines(tally, verify_lines()) == [
        "thumbnails            12 of 20 set at the target (read back by verify), 8 noted (carried otherwise)",
        "chapters              33 of 34 written at the target (read back by verify); ledger: 33 attached, 1 failed",
        "collection places     1000 of 1000 made at the target (read back by verify); ledger: 999 attached, 0 failed,"
        " 1 pending (1 not yet armed)",
        "collections           3 of 3 made at the target; 2 of 2 ordered ones hold their videos in the source's order",
    ]
    plain = [
        "verified        4 of 4 ready assets checked",
        "result          OK: every ready asset checked (4) and matched",
    ]
    assert extras_lines(TrackTally(Counter(), Counter(), 0, {"caption": Counter(attached=4)}), plain) == []


@pytest.mark.parametrize(
    ("provider", "rate", "expected"),
    [
        ("mux", 20, ["--read-rate", "20", "--read-burst", "10"]),  # Mux documents reads at 5/s
        ("vimeo", 20, ["--read-rate", "20", "--read-burst", "20"]),  # 10/s, bursts of 20 kept
        ("cloudflare", 20, ["--budget-quota", "6000"]),  # 1,200 calls in 5 minutes: 20/s over the window
        ("jwplayer", 20, ["--budget-quota", "1200"]),  # 60 a minute
        ("jwplayer", 0.5, []),  # a demo slower than the documented budget keeps it
        ("mux", 4, []),  # ... and the documented read rate
        ("apivideo", 20, []),  # documents no limit the simulator keeps: none added
        ("generic", 20, []),
    ],
)
def test_the_demo_raises_a_targets_other_limits_to_its_create_rate_and_never_lowers_one(provider, rate, expected):
    from infra.demo import demo_limits

    assert demo_limits(provider, rate) == expected


@pytest.mark.parametrize(
    ("elapsed", "quiet", "timeout", "over"),
    [
        (100, 100, 600, False),  # within the timeout: watched, moving or not
        (600, 5, 600, False),  # past it, but an asset moved 5 s ago: a slow drain is waited for
        (700, 59, 600, False),
        (700, 60, 600, True),  # past it and nothing moved for a minute: stopped
        (1799, 1, 600, False),
        (1800, 1, 600, True),  # three times the timeout: stopped whatever moves
    ],
)
def test_the_drain_watch_waits_on_while_assets_move_and_stops_once_they_do_not(elapsed, quiet, timeout, over):
    from infra.demo import watch_end, watch_over

    assert watch_over(elapsed, quiet, timeout) is over
    if over:  # its words name the wait it made
        said = watch_end(elapsed, quiet, timeout)
        assert f"{elapsed} s" in said and (f"nothing moved for {quiet} s" in said or "still moving" in said)


def test_the_tracks_wait_names_each_kind_it_waits_for():
    from infra.demo_tracks import TrackTally, tracks_waiting

    captions_only = TrackTally(Counter(pending=3), Counter(), 2, {"caption": Counter(pending=3, unarmed=2)})
    assert tracks_waiting(captions_only) == "5 caption tracks (2 not yet armed)"
    mixed = {"caption": Counter(pending=2), "thumbnail": Counter(pending=1, unarmed=4), "chapters": Counter(attached=3)}
    tally = TrackTally(Counter(pending=3, attached=3), Counter(), 4, mixed)
    assert tracks_waiting(tally) == "7 tracks and extras: 2 caption tracks, 5 thumbnails (4 not yet armed)"
    thumbnails = TrackTally(Counter(pending=1), Counter(), 0, {"thumbnail": Counter(pending=1)})
    assert tracks_waiting(thumbnails) == "1 thumbnails"


ARCHIVED_LINE = "archived 3 of 3, 12.3 KB, checksums verified"


@pytest.mark.parametrize(
    "states, verified, line, problem",
    [
        (["archived"] * 3, True, ARCHIVED_LINE, None),
        (["archived", None, "copying"], True, ARCHIVED_LINE, "2 originals not archived after a wait of 121 s"),
        (["archived", "failed", "failed"], True, ARCHIVED_LINE, "2 originals failed to archive (migrator status"),
        (
            ["archived"] * 3,
            False,
            "archived 3 of 3, 12.3 KB, 1 checksums differ",
            "the archive's check failed: archived 3",
        ),
        (["archived"] * 3, True, None, "the archive's check failed: verify --archive said nothing (above)"),
    ],
)
def test_the_demo_says_why_its_archive_is_not_ok(states, verified, line, problem):
    from infra.demo_archive import archive_problem, archive_tally

    tally = archive_tally(
        [{"asset_id": str(n), "archive_state": s} if s else {"asset_id": str(n)} for n, s in enumerate(states)]
    )
    said = archive_problem(tally, verified, line, 121.4)
    assert said == problem if problem is None else said.startswith(problem)


def test_the_demo_quotes_verify_archive_s_own_last_line_and_fails_on_an_archive_problem():
    from infra.demo import problems_of
    from infra.demo_archive import archive_line

    lines = ("checking 3 archived originals", "  x: size 1 != 2", "archived 2 of 3, 8 KB, 1 checksums differ")
    assert archive_line(lines) == "archived 2 of 3, 8 KB, 1 checksums differ"
    assert archive_line(("result OK",)) is None
    assert problems_of(outcome(archive_problem="1 originals failed to archive")) == "1 originals failed to archive"
    assert problems_of(outcome(unresolved=1, archive_problem="x")) == "1 unresolved"  # the first reason to act on


def test_the_archive_wait_goes_on_while_copies_settle_and_says_so(capsys):
    from infra.demo_archive import settle_archive

    clock = Clock()
    owed = [{"asset_id": "a"}, {"asset_id": "b"}]
    half = [{"asset_id": "a", "archive_state": "archived"}, {"asset_id": "b", "archive_state": "copying"}]
    done = [{"asset_id": "a", "archive_state": "archived"}, {"asset_id": "b", "archive_state": "archived"}]
    tally, waited = settle_archive(Ledger(owed, half, done), sleep=clock.sleep, clock=clock, quiet_s=60)
    assert (tally["archived"], waited) == (2, 4.0)
    assert capsys.readouterr().out.splitlines() == [
        "[demo] waiting for 2 originals to be archived (until none is for 60 s)",
        "[demo] waiting for 1 originals to be archived (until none is for 60 s)",
    ]
    clock = Clock()
    tally, waited = settle_archive(Ledger(owed), sleep=clock.sleep, clock=clock, quiet_s=10)
    assert (tally["owed"], waited) == (2, 10.0)


def test_a_poster_time_alone_is_waited_for_where_the_target_sets_it_after_the_create():
    """sample -> apivideo ended NOT OK once: a row with a poster time alone owes api.video's tracks worker a
    thumbnail, which the demo's wait did not count, so verify met it not yet armed."""
    from infra.demo_tracks import tally_tracks

    posed = {**ready("a", "v1"), "source_url": "https://m.example/a.mp4", "poster_time_s": 3}
    assert tally_tracks([posed], poster_time_later=True).unarmed == 1
    assert tally_tracks([posed]).unarmed == 0  # a target whose create carries the poster time owes nothing
