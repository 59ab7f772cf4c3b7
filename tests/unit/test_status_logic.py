"""status and report, the pure parts: throughput, ETA and 429 rate from aggregates; report rows."""

import json
from decimal import Decimal

import pytest
from migrator.tally import Stats
from migrator_cli.report import COLUMNS, row_of
from migrator_cli.status import Oldest, Queues, Uploader, duration, eta_seconds, render, summarize

NOW = 1_800_000_030.0  # 30 s into a minute
MINUTE = int(NOW // 60)


def stats(counts, minutes):
    full = {s: 0 for s in ("pending", "inventoried", "uploading", "processing", "ready", "failed", "rejected")}
    return Stats({**full, **counts}, minutes)


def test_throughput_eta_and_429_rate():
    s = stats(
        {"ready": 900, "rejected": 10, "pending": 50, "processing": 40},
        {
            MINUTE - 1: {"ready": 60, "created": 70, "throttled": 30},
            MINUTE: {"ready": 30, "created": 30},
            MINUTE - 99: {"ready": 999},
        },
    )
    view = summarize(s, Queues(visible=10, in_flight=5, delayed=0, dead=2), None, NOW, window_minutes=1)
    # window: from the start of the previous minute to now = 90 s, 90 settled
    assert view.window_s == 90
    assert view.settled == 90 and view.rate_per_min == 60.0
    assert view.throttle_rate == 30 / 130
    assert view.remaining == 50 + 40 + 10  # active assets + messages not yet claimed (a stack without intake)
    with_intake = Queues(visible=10, in_flight=5, delayed=0, dead=2, intake=3)
    assert summarize(s, with_intake, None, NOW, window_minutes=1).remaining == 50 + 40 + 3  # the rest are counted
    assert view.eta_s == 90.0  # 100 left (60 to create, 40 processing) at the create rate, 100 in 90 s
    assert view.total == 1000


@pytest.mark.parametrize(
    ("to_create", "processing", "create_rate", "settle_rate", "eta"),
    [
        (400, 100, 10.0, 0.1, 50.0),  # a run's first minutes: nothing settled yet, the creates set the pace
        (400, 100, 10.0, 10.0, 50.0),  # steady: both rates agree
        (0, 100, 10.0, 4.0, 25.0),  # all created: what is processing settles at its own rate
        (400, 0, 0.0, 2.0, 200.0),  # creates stalled (held): the settling rate is all there is
        (400, 100, 0.0, 0.0, None),  # nothing moves: unknown, not infinite
        (0, 0, 0.0, 0.0, 0.0),  # nothing left: done
    ],
)
def test_eta_follows_the_creates_while_they_go_on_then_the_settling(
    to_create, processing, create_rate, settle_rate, eta
):
    assert eta_seconds(to_create, processing, create_rate, settle_rate) == eta


def test_eta_unknown_without_progress_and_done_when_nothing_is_left():
    idle = summarize(stats({"pending": 5}, {}), Queues(0, 0, 0, 0), None, NOW, 15)
    assert idle.eta_s is None and idle.throttle_rate is None
    done = summarize(stats({"ready": 5}, {}), Queues(0, 0, 0, 0), None, NOW, 15)
    assert done.remaining == 0 and "done" in render(done, "s")


def test_render_shows_every_figure():
    view = summarize(
        stats({"ready": 1234, "uploading": 3}, {MINUTE: {"ready": 6, "created": 6, "throttled": 2}}),
        Queues(visible=7, in_flight=3, delayed=0, dead=4),
        Oldest("asset-9", "uploading", NOW - 200),
        NOW,
        15,
    )
    text = render(view, "prod")
    for expected in ("1,234", "DLQ 4", "25.0% of create attempts (2 of 8)", "asset-9 uploading for 3 min 20 s", "ETA"):
        assert expected in text


def test_durations_read_naturally():
    assert [duration(s) for s in (5, 200, 7300, 200_000)] == ["5 s", "3 min 20 s", "2 h 01 min", "2 d 07 h"]


def test_report_rows_keep_numbers_and_blanks():
    row = row_of({"asset_id": "a", "state": "ready", "duration_s": Decimal("10.5"), "attempts": Decimal(1)})
    assert list(row) == list(COLUMNS)
    assert row["duration_s"] == 10.5 and row["attempts"] == 1 and isinstance(row["attempts"], int)
    assert row["remote_id"] is None


def test_a_migration_that_just_started_is_not_diluted_by_the_quiet_minutes_before_it():
    view = summarize(stats({"ready": 30, "pending": 300}, {MINUTE: {"ready": 30}}), Queues(0, 0, 0, 0), None, NOW, 15)
    assert view.window_s == 30  # from the start of its first minute
    assert view.rate_per_min == 60.0 and view.eta_s == 300.0


def test_a_run_that_began_late_in_its_first_minute_is_measured_from_its_first_event():
    began = (MINUTE - 1) * 60 + 50  # 10 s before the minute ended; now is 30 s into the next
    s = Stats(
        {"ready": 40, "pending": 400},
        {MINUTE - 1: {"ready": 10, "created": 200}, MINUTE: {"ready": 30, "created": 600}},
        {MINUTE - 1: began},
    )
    view = summarize(s, Queues(0, 0, 0, 0), None, NOW, 15)
    assert view.window_s == 40  # not 90: the run is 40 s old
    assert view.rate_per_min == 60.0 and view.eta_s == 400 / 20  # 800 creates in 40 s


def test_status_says_why_the_uploader_waits():
    def line(uploader):
        view = summarize(stats({"pending": 5}, {}), Queues(5, 0, 0, 0), None, NOW, 15, uploader)
        return next(text for text in render(view, "s").splitlines() if text.startswith("uploader"))

    assert "DISABLED" in line(Uploader("Disabled", None)) and "migrator resume" in line(Uploader("Disabled", None))
    held = line(Uploader("Enabled", NOW + 42, "rate", "HTTP 429: the provider asked for 42 s"))
    assert held.startswith("uploader    holding creates for 42 s: the provider is pacing us (429)")
    assert held.endswith("(HTTP 429: the provider asked for 42 s)")
    assert line(Uploader("Enabled", NOW - 1)) == "uploader    running"
    full = line(Uploader("Enabled", NOW + 8, "account", "HTTP 413: storage capacity exceeded"))
    assert "an account limit at the provider" in full and "HTTP 413" in full
    reason = "about 120 creates in flight at the provider; ProviderMaxInFlight is 120"
    bound = line(Uploader("Enabled", NOW - 1, bound_until=NOW + 0.5, bound_reason=reason))
    assert bound == f"uploader    waiting at the provider's bound on videos in progress ({reason})"


def test_status_says_when_the_counts_are_short_of_batches_the_tally_gave_up_on():
    healthy = summarize(stats({"ready": 5}, {}), Queues(0, 0, 0, 0), None, NOW, 15)
    assert "SHORT" not in render(healthy, "s")
    short = summarize(stats({"ready": 5}, {}), Queues(0, 0, 0, 0, tally_failed=3), None, NOW, 15)
    text = render(short, "s")
    assert "SHORT: the tally could not count 3 stream batches" in text and "--exact" in text


def test_status_says_the_pace_in_use_and_why_and_what_holds_the_fleet():
    held = Uploader("Enabled", NOW + 90, "errors", "breaker: 14 of the last requests failed", 12.5, "learned", None, 15)
    text = render(summarize(stats({"pending": 5}, {}), Queues(0, 0, 0, 0), None, NOW, 15, held), "s")
    assert "holding creates for 1 min 30 s: the breaker" in text and "14 of the last requests failed" in text
    assert "12.50 creates/s, learned from the provider's 429s (limit seen at 15.00/s); no ceiling" in text
    told = Uploader("Enabled", 0, "", "", 19.6, "told", 50.0, 20.0)
    text = render(summarize(stats({"pending": 5}, {}), Queues(0, 0, 0, 0), None, NOW, 15, told), "s")
    assert (
        "uploader    running" in text
        and "told by the provider's rate-limit headers" in text
        and "ceiling 50.00" in text
    )


def test_status_draws_the_migrations_shape_minute_by_minute():
    from migrator_cli.status import sparkline

    assert sparkline([0, 1, 2, 4, 8]) == "·▂▃▅█"
    assert sparkline([0, 0]) == "··" and sparkline([]) == ""
    minutes = {MINUTE - 3: {"ready": 10}, MINUTE - 2: {"ready": 40, "throttled": 3}, MINUTE: {"ready": 20}}
    view = summarize(stats({"ready": 70}, minutes), Queues(0, 0, 0, 0), None, NOW, 4)
    assert view.settled_per_minute == (10, 40, 0, 20) and view.throttled_per_minute == (0, 3, 0, 0)
    text = render(view, "s")
    assert "  per min   ▃█·▅  (peak 40/min, oldest minute first)" in text
    assert "  429s      ·█··  (3 in all)" in text
    assert json.loads(json.dumps(view.as_dict()))["settled_per_minute"] == [10, 40, 0, 20]


def test_status_shows_the_caption_tracks_per_state_and_where_failures_are_explained():
    from migrator.tally import Stats
    from migrator_cli.status import Queues, render, summarize

    stats = Stats({"ready": 3}, {}, tracks={"pending": 1, "attached": 4, "failed": 2})
    view = summarize(stats, Queues(0, 0, 0, 0), None, 1_800_000_000.0, 15)
    assert "tracks      7 captions: 4 attached, 1 pending, 2 failed (report says why; retry --tracks)" in render(
        view, "s"
    )
    quiet = summarize(Stats({"ready": 3}, {}), Queues(0, 0, 0, 0), None, 1_800_000_000.0, 15)
    assert "tracks " not in render(quiet, "s") and view.as_dict()["tracks"]["failed"] == 2


def test_status_shows_the_extras_per_kind_noted_apart_and_a_noted_caption_apart_too():
    from migrator.tally import Stats
    from migrator_cli.status import Queues, render, summarize

    extras = {
        "thumbnail": {"attached": 6, "noted": 1, "pending": 0, "failed": 1},
        "chapters": {"attached": 0, "noted": 3, "pending": 0, "failed": 0},
        "collection": {"attached": 0, "noted": 0, "pending": 0, "failed": 0},
    }
    stats = Stats({"ready": 8}, {}, tracks={"attached": 2, "noted": 1}, extras=extras)
    view = summarize(stats, Queues(0, 0, 0, 0), None, 1_800_000_000.0, 15)
    text = render(view, "s")
    assert "tracks      3 captions: 2 attached, 0 pending, 0 failed, 1 noted" in text
    assert (
        "extras      thumbnails 8: 6 attached, 1 noted, 1 failed; chapters 3: 3 noted (report says why; retry --tracks)"
    ) in text
    assert view.as_dict()["extras"]["thumbnail"]["noted"] == 1
    quiet = summarize(Stats({"ready": 3}, {}), Queues(0, 0, 0, 0), None, 1_800_000_000.0, 15)
    assert "extras " not in render(quiet, "s")


@pytest.mark.parametrize(
    ("archive", "line"),
    [
        (
            {"pending": 0, "copying": 3, "archived": 1_200, "failed": 2, "bytes": 3_400_000_000_000},
            "archive     1,200 archived (3.4 TB), 3 copying, 2 failed (verify --archive lists why; retry --archive)",
        ),
        (
            {"pending": 5, "copying": 0, "archived": 7, "failed": 0, "bytes": 950},
            "archive     7 archived (950 B), 0 copying, 5 waiting, 0 failed",
        ),
        # A shard's count the stream has not caught up with is never shown below nothing.
        ({"copying": -1, "archived": 0, "bytes": 0}, "archive     0 archived (0 B), 0 copying, 0 failed"),
    ],
)
def test_status_shows_the_archive_by_state_with_its_bytes_where_the_stack_keeps_one(archive, line):
    from migrator.tally import Stats
    from migrator_cli.status import Queues, render, summarize

    stats = Stats({"ready": 3}, {}, archive=archive)
    view = summarize(stats, Queues(0, 0, 0, 0), None, 1_800_000_000.0, 15, archive_on=True)
    assert line in render(view, "s").splitlines()
    assert json.loads(json.dumps(view.as_dict()))["archive"] == archive
    off = summarize(stats, Queues(0, 0, 0, 0), None, 1_800_000_000.0, 15)
    assert "archive " not in render(off, "s") and off.as_dict()["archive"] is None
