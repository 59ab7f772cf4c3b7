"""Migrating from the platform a library lives on, end to end: template.yaml deployed with a target provider and
the sources' credentials, `migrator inventory --from` run against source simulators (one per platform, each on
its own port), `migrator load` of what it wrote, and the real queue, uploader, webhook and ledger.

Per pair (Vimeo → Mux, api.video → Mux, Wistia → api.video, S3 → Mux): every fetchable asset ready, every
unfetchable one reported with its reason and never sent, no duplicate video, and the titles the source holds
are the titles the target holds. Vimeo → api.video carries what a viewer sees (issue 42): each custom picture
and chapters list held by api.video as Vimeo holds them, read back from the api.video simulator, while a share
of the extras' answers are lost; its folders and showcases have no place there and are noted. The target
simulators fetch every link they are handed from the source simulator over loopback (check_source), so a link
that expired or a file that is not there fails the ingest as the real provider fails it. Links that expire,
files a source prepares and the platforms' documented behaviours have modules of their own
(test_source_links_stack, test_source_waits_stack, test_sources_behave_stack), so the package's workers run
them side by side.
"""

from __future__ import annotations

import pytest

from tests.conftest import unique
from tests.e2e.conftest import SOURCE_BUCKET
from tests.e2e.extras_pairs import SourceFiles, answers_lost, assert_entries_settled, assert_extras_held
from tests.e2e.source_pairs import assert_never_sent, assert_titles_carried
from tests.e2e.test_tracks_stack import tracks_settled

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("platform", ["vimeo", "apivideo"])
def test_a_library_moves_to_mux_with_its_titles_and_without_what_cannot_be_fetched(
    platform, sources, targets, migrate, aws
):
    target = targets("mux")
    rows, unfetchable, items = migrate(platform, target)
    assert len(rows) + len(unfetchable) == 20 and len(unfetchable) == 4  # every fifth: unfetchable or processing
    assert {items[r["id"]]["state"] for r in rows} == {"ready"}
    assert_never_sent(aws, target, unfetchable)
    assert_titles_carried(sources, platform, target, rows, items)
    assert target.sim.stats()["duplicate_videos"] == 0
    assert any(row.get("tracks") for row in rows) and any(row.get("privacy") == "private" for row in rows)


def test_wistia_moves_to_apivideo(sources, targets, migrate, aws):
    target = targets("apivideo")
    rows, unfetchable, items = migrate("wistia", target)
    assert len(unfetchable) == 4 and {items[r["id"]]["state"] for r in rows} == {"ready"}
    assert_never_sent(aws, target, unfetchable)
    assert_titles_carried(sources, "wistia", target, rows, items)
    assert target.sim.stats()["duplicate_videos"] == 0


def test_vimeo_moves_to_apivideo_with_its_pictures_and_chapters_despite_lost_answers(sources, targets, migrate, aws):
    target = targets("apivideo")
    # A share of the tracks' and extras' writes (a caption, a thumbnail upload, a chapters file) are performed and their
    # answers lost.
    with answers_lost(aws, target.stack_name, target.sim, 0.15, 42):
        rows, unfetchable, items = migrate("vimeo", target)
        assert {items[r["id"]]["state"] for r in rows} == {"ready"}
        assert_never_sent(aws, target, unfetchable)
        table = target.outputs["LedgerTableName"]
        settled = tracks_settled(aws("dynamodb"), table, [r["id"] for r in rows])
        # Vimeo's inactive English track besides the active one: api.video keeps one file a language.
        assert_entries_settled(settled, refused_by_design="apivideo keeps one caption file per language")
    carried = assert_extras_held(SourceFiles.of(sources), "vimeo", "apivideo", target.sim, table, aws("dynamodb"), rows)
    # Vimeo's library (infra/sim/platforms/vimeo_library.py): every other video a custom picture, one in three
    # chapters, every one in a folder; api.video keeps no collections (the places are noted in the ledger).
    assert carried.thumbnails >= 5 and carried.chapters >= 3 and carried.places_noted >= len(rows), carried
    assert target.sim.stats()["duplicate_videos"] == 0


def test_an_s3_prefix_moves_to_mux(targets, migrate, aws, sources):
    target = targets("mux")
    s3 = aws("s3")
    if SOURCE_BUCKET not in {b["Name"] for b in s3.list_buckets()["Buckets"]}:
        s3.create_bucket(Bucket=SOURCE_BUCKET)
    prefix = unique("shows")
    for key in ("ep1.mp4", "ep2.mov", "cover.jpg"):
        s3.put_object(Bucket=SOURCE_BUCKET, Key=f"{prefix}/{key}", Body=b"\x00\x00\x00\x18ftypmp42" * 64)
    rows, unfetchable, items = migrate("s3", target, s3=f"s3://{SOURCE_BUCKET}/{prefix}/")
    assert sorted(r["title"] for r in rows) == ["ep1.mp4", "ep2.mov"] and not unfetchable
    assert {items[r["id"]]["state"] for r in rows} == {"ready"}
    for row in rows:
        assert target.title_of(items[row["id"]]["remote_id"]) == row["title"]
