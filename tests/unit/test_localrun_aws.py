"""The aws target's local run (infra/localrun_aws.py, infra/demo_aws.py): its parameters, its jobs' tally, and the
sample rows that point at one real video."""

from __future__ import annotations

from collections import Counter

import pytest

from infra.localrun_aws import EVENT_SOURCE, QUEUE_CONCURRENCY, job_tally, jobs_by_asset, stack_params


def _job(asset, status="COMPLETE", stack="demo-1"):
    metadata = {"migrator_stack": stack} | ({"migrator_asset": asset} if asset is not None else {})
    return {"Id": f"job-{asset}", "Status": status, "UserMetadata": metadata}


@pytest.mark.parametrize(
    "jobs, per_asset, duplicates, not_ours",
    [
        ([], {}, 0, 0),
        ([_job("a"), _job("b")], {"a": 1, "b": 1}, 0, 0),
        # a lost CreateJob answer answered by a second job: a duplicate transcode, whatever the first job's status
        ([_job("a", "ERROR"), _job("a"), _job("b")], {"a": 2, "b": 1}, 1, 0),
        ([_job("a"), _job("a"), _job("a"), _job("b"), _job("b")], {"a": 3, "b": 2}, 2, 0),
        # a job with no asset in its metadata (or none at all) is not the stack's: counted apart, never a duplicate
        ([_job(None), _job(None), {"Id": "x", "Status": "COMPLETE"}, _job("a")], {"a": 1}, 0, 3),
        ([_job("")], {}, 0, 1),
    ],
)
def test_the_jobs_are_tallied_by_asset(jobs, per_asset, duplicates, not_ours):
    tally = job_tally(jobs)
    assert {k: v for k, v in jobs_by_asset(jobs).items() if k is not None} == per_asset
    assert (tally.jobs, tally.assets, tally.duplicate_assets, tally.not_ours) == (
        len(jobs),
        len(per_asset),
        duplicates,
        not_ours,
    )


def test_the_tally_line_names_jobs_assets_duplicates_and_statuses():
    tally = job_tally([_job("a"), _job("a", "ERROR"), _job("b", "PROGRESSING")])
    assert tally.by_status == Counter({"COMPLETE": 1, "ERROR": 1, "PROGRESSING": 1})
    assert tally.line() == ("3 for 2 assets (assets with more than one job: 1); COMPLETE 1, ERROR 1, PROGRESSING 1")


def test_the_stack_transcodes_the_archive_sends_its_own_events_and_plays_at_the_edge():
    params = stack_params("http://127.0.0.1:4000", "masters", 4100)
    assert params == {
        "ProviderBaseUrl": "http://127.0.0.1:4000",
        "ArchiveBucket": "masters",
        "ArchiveFirst": "true",  # the template's AwsTranscodesTheArchive refuses a stack without both
        "JobEventSource": EVENT_SOURCE,
        "PlaybackBaseUrl": "http://127.0.0.1:4100",
        "ProviderMaxInFlight": str(2 * QUEUE_CONCURRENCY),
    }
    assert not EVENT_SOURCE.startswith("aws.")  # EventBridge refuses an aws. source from anyone but AWS


def test_the_aws_sample_points_every_row_at_the_served_video_with_its_true_duration(tmp_path):
    import csv

    from infra.demo import sample_media_path, write_inventory

    path = tmp_path / "inventory.csv"
    ids = write_inventory(path, 200, media="http://127.0.0.1:9", duration_s=2.0)
    rows = list(csv.DictReader(path.open(encoding="utf-8")))[:200]  # the bad rows after them are never sent
    assert [r["id"] for r in rows] == ids
    served = {"http://127.0.0.1:9" + sample_media_path(i) for i in range(200)}
    assert {r["source_url"].split("?")[0] for r in rows} <= served
    assert {r["duration_s"] for r in rows} == {"2.0"}
    broken = [r["source_url"] for r in rows if "/unsupported-" in r["source_url"] or "/corrupt-" in r["source_url"]]
    assert len(broken) == 4  # two a hundred, as on any target


def test_the_default_sample_is_unchanged(tmp_path):
    from infra.demo import write_inventory

    path = tmp_path / "inventory.csv"
    write_inventory(path, 60)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[1].startswith("library/00000,https://media.example.com/library/00000.mp4?duration=30.5,Episode 0,")
    assert lines[58].startswith("library/00057,https://media.example.com/library/corrupt-00057.mp4,")
    assert lines[14].startswith("library/00013,https://media.example.com/library/unsupported-00013.wmv,")


@pytest.mark.parametrize(
    "master, variants",
    [
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=64x64\nindex_1080p.m3u8\n", ["index_1080p.m3u8"]),
        (
            '#EXTM3U\n#EXT-X-MEDIA:TYPE=SUBTITLES,URI="en.m3u8"\n#EXT-X-STREAM-INF:BANDWIDTH=2\r\na.m3u8\r\n'
            "#EXT-X-STREAM-INF:BANDWIDTH=1\nb.m3u8",
            ["a.m3u8", "b.m3u8"],  # a subtitles rendition is no variant; CRLF lines read as LF ones
        ),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n", []),  # a tag with no URI after it
        ("<Error><Code>AccessDenied</Code></Error>", []),
    ],
)
def test_a_master_playlist_lists_its_variants(master, variants):
    from infra.demo_aws import variants_of

    assert variants_of(master) == variants


@pytest.mark.parametrize(
    "counts, problem",
    [
        ({}, None),
        ({"checked": 98, "played": 98, "private": 34, "refused_unsigned": 34}, None),
        ({"checked": 98, "played": 97, "private": 34, "refused_unsigned": 34}, "1 ready videos not playable"),
        # privacy widened comes first: a private video anyone plays is worse than one nobody does
        ({"checked": 98, "played": 97, "private": 34, "refused_unsigned": 32}, "2 private videos served unsigned"),
    ],
)
def test_playback_is_ok_only_when_every_video_plays_and_every_private_one_is_refused_unsigned(counts, problem):
    from infra.demo_aws import PlayTally

    found = PlayTally(**counts).problem()
    assert found == problem if problem is None else (found or "").startswith(problem)


def test_a_playback_problem_makes_the_demo_not_ok():
    from infra.demo import Outcome, problems_of

    fields = dict(unresolved=0, duplicates=0, unsettled=0, verified=True, pending_tracks=0, tracks_waited_s=0.0)
    assert problems_of(Outcome(**fields)) is None
    unplayable = "3 ready videos not playable through CloudFront (above)"
    assert problems_of(Outcome(**fields, playback_problem=unplayable)) == unplayable
    assert problems_of(Outcome(**{**fields, "verified": False}, playback_problem=unplayable)) == "parity check failed"
