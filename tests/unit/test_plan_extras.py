"""`migrator plan` on what a viewer sees (issue 42): thumbnails, chapters, collections and publish dates counted from
the inventory as the tracks worker arms them, and per target how many are carried and how many noted, from the
provider classes' facts."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from migrator.messages import AssetMessage, Track
from migrator.providers import PROVIDERS
from migrator.row_extras import Chapter, Collection
from migrator_cli.plan_extras import Carried, ExtrasCount, TargetFacts, outlook

from tests.unit.test_plan import plan

INTRO = (Chapter(0.0, "Intro"), Chapter(30.0, "Demo"))
TALKS, DEMOS = Collection("f1", "Talks", "folder", 0), Collection("s9", "Demos", "showcase", 2)
CHAPTERS_FILE = Track("https://c.example/ch.vtt", "en", kind="chapters")
CAPTIONS = Track("https://c.example/en.vtt", "en")


def row(n: int, **fields) -> AssetMessage:
    return AssetMessage(f"lib/{n}", f"vimeo://{n}", **fields)


def counted(*rows: AssetMessage) -> ExtrasCount:
    count = ExtrasCount()
    for msg in rows:
        count.add(msg)
    return count


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([row(1)], dict(thumbnails=0, chapters=0, chapters_surplus=0, memberships=0, published=0, collections=0)),
        ([row(1, thumbnail_url="https://i.example/1.jpg")], dict(thumbnails=1)),
        # A poster time alone is no thumbnail image (it rides the create, or the pick after it).
        ([row(1, poster_time_s=3.0)], dict(thumbnails=0)),
        ([row(1, chapters=INTRO)], dict(chapters=1, chapters_surplus=0)),
        ([row(1, tracks=(CAPTIONS, CHAPTERS_FILE))], dict(chapters=1, chapters_surplus=0)),
        # The inline list is the one carried: the chapters track beside it is noted (one list a video).
        ([row(1, chapters=INTRO, tracks=(CHAPTERS_FILE,))], dict(chapters=1, chapters_surplus=1)),
        (
            [row(1, tracks=(CHAPTERS_FILE, replace(CHAPTERS_FILE, url="https://c.example/ch2.vtt")))],
            dict(chapters=1, chapters_surplus=1),
        ),
        # Two rows in the same collection: one collection, two places; a second collection of another kind.
        (
            [row(1, collections=(TALKS,)), row(2, collections=(TALKS, DEMOS))],
            dict(memberships=3, assets_in_collections=2, collections=2, by_kind={"folder": 1, "showcase": 1}),
        ),
        ([row(1, published_at="2020-05-01T10:00:00Z"), row(2)], dict(published=1)),
    ],
)
def test_the_inventorys_extras_are_counted_as_the_tracks_worker_arms_them(rows, expected):
    count = counted(*rows)
    seen = {name: getattr(count, name) for name in expected if name != "by_kind"}
    if "by_kind" in expected:
        seen["by_kind"] = count.by_kind()
    assert seen == expected


def test_a_collection_is_told_apart_by_its_source_platform():
    """Two platforms' collections with the same id are two collections (extras.collection_key)."""
    wistia = AssetMessage("w/1", "wistia://abc", collections=(TALKS,))
    assert counted(row(1, collections=(TALKS,)), wistia).collections == 2


SAMPLE = counted(
    row(1, thumbnail_url="https://i.example/1.jpg", chapters=INTRO, collections=(TALKS, DEMOS)),
    row(2, thumbnail_url="https://i.example/2.jpg", tracks=(CHAPTERS_FILE,), collections=(DEMOS,)),
    row(3, chapters=INTRO, tracks=(CHAPTERS_FILE,), published_at="2020-05-01T10:00:00Z"),
)  # 2 thumbnails; 3 rows with chapters and 1 surplus track; 3 places on 2 rows in 2 collections; 1 publish date


@pytest.mark.parametrize(
    ("facts", "thumbnails", "chapters", "places", "made", "published"),
    [
        (TargetFacts("generic"), (0, 2), (0, 4), (0, 3), 0, (0, 1)),
        (TargetFacts("mux", takes_thumbnail="time", takes_chapters=True), (0, 2), (3, 1), (0, 3), 0, (0, 1)),
        (TargetFacts("apivideo", takes_thumbnail="image", takes_chapters=True), (2, 0), (3, 1), (0, 3), 0, (0, 1)),
        # Bunny keeps a video in one collection: each row's first is carried (Talks for row 1, Demos for row 2).
        (
            TargetFacts("bunny", "image", True, takes_collections=True, one_collection_per_video=True),
            (2, 0),
            (3, 1),
            (2, 1),
            2,
            (0, 1),
        ),
        (
            TargetFacts("vimeo", "image", True, takes_collections=True, published_field="release_time"),
            (2, 0),
            (3, 1),
            (3, 0),
            2,
            (1, 0),
        ),
    ],
)
def test_each_target_carries_what_its_facts_say_and_notes_the_rest(
    facts, thumbnails, chapters, places, made, published
):
    seen = outlook(SAMPLE, facts)
    pairs = [(c.carried, c.noted) for c in (seen.thumbnails, seen.chapters, seen.memberships, seen.published)]
    assert pairs == [thumbnails, chapters, places, published]
    assert seen.collections_made == made


def test_the_words_say_what_is_done_instead():
    mux = outlook(SAMPLE, TargetFacts("mux", takes_thumbnail="time"))
    assert mux.thumbnails == Carried(
        0,
        2,
        "mux takes a poster time only: the frame at the row's poster time is set, the image is kept in the"
        " stack's bucket",
    )
    api = outlook(SAMPLE, TargetFacts("apivideo", collections_instead="carried as a tag of its name"))
    assert api.memberships.how == "apivideo keeps no collections: carried as a tag of its name"
    assert (
        api.line() == "thumbnails 0 carried, 2 noted; chapters 0 carried, 4 noted; places 0 carried, 3 noted;"
        " publish dates 0 carried, 1 noted"
    )
    bunny = outlook(SAMPLE, TargetFacts("bunny", "image", True, True, True))
    assert (
        bunny.line() == "thumbnails 2 carried; chapters 3 carried, 1 noted; places 2 carried, 1 noted;"
        " collections 2 made; publish dates 0 carried, 1 noted"
    )
    assert bunny.notes()[0] == (
        "chapters noted: written as the video's chapters; 1 chapters tracks past a row's first (one list a video)"
    )


def test_the_facts_are_read_from_the_registered_provider_classes():
    for name, cls in PROVIDERS.items():
        facts = TargetFacts.of(name, cls)
        assert (facts.takes_thumbnail, facts.takes_chapters, facts.takes_collections) == (
            cls.takes_thumbnail,
            cls.takes_chapters,
            cls.takes_collections,
        )
        assert facts.published_field == cls.published_field
    assert TargetFacts.of("bunny", PROVIDERS["bunny"]).one_collection_per_video is True


EXTRAS_ROWS = [
    json.dumps(
        {
            "id": "a",
            "source_url": "vimeo://1",
            "duration_s": 60,
            "thumbnail_url": "https://i.example/a.jpg",
            "chapters": [{"start_s": 0, "title": "Intro"}, {"start_s": 20, "title": "Demo"}],
            "collections": [{"id": "f1", "name": "Talks", "kind": "folder", "position": 0}],
            "published_at": "2020-05-01T10:00:00Z",
        }
    ),
    json.dumps(
        {
            "id": "b",
            "source_url": "vimeo://2",
            "duration_s": 60,
            "tracks": [
                {"url": "https://c.example/b.vtt", "language": "en"},
                {"url": "https://c.example/b-ch.vtt", "language": "en", "kind": "chapters"},
            ],
            "collections": [
                {"id": "f1", "name": "Talks", "kind": "folder", "position": 1},
                {"id": "showcases/9", "name": "Best of", "kind": "showcase"},
            ],
        }
    ),
    json.dumps({"id": "c", "source_url": "vimeo://3", "duration_s": 60}),
]


def test_the_plan_counts_the_extras_and_says_per_target_what_is_carried_and_noted(tmp_path, capsys):
    code, out = plan(tmp_path, capsys, "--json", lines=EXTRAS_ROWS)
    doc = json.loads(out)
    assert code == 0
    assert (doc["thumbnails"], doc["chapters"], doc["memberships"], doc["published"]) == (1, 2, 3, 1)
    assert doc["collections"] == {"folder": 1, "showcase": 1}
    assert doc["tracks"] == 1 and doc["track_languages"] == {"en": 1}  # the chapters track is no caption
    bunny = doc["providers"]["bunny"]["extras"]
    assert bunny["thumbnails"] == {"carried": 1, "noted": 0, "how": "set as the video's poster image"}
    assert (bunny["memberships"]["carried"], bunny["memberships"]["noted"], bunny["collections_made"]) == (2, 1, 1)
    generic = doc["providers"]["generic"]["extras"]
    assert (generic["chapters"]["carried"], generic["chapters"]["noted"], generic["collections_made"]) == (0, 2, 0)

    code, text = plan(tmp_path, capsys, "--provider", "bunny", lines=EXTRAS_ROWS)
    assert "thumbnails      1 of 3 assets" in text and "chapters        2 of 3 assets" in text
    assert "collections     2 (1 folder, 1 showcase): 3 places on 2 assets" in text
    assert "published       1 of 3 assets say when they were first published" in text
    assert (
        "  bunny: extras: thumbnails 1 carried; chapters 2 carried; places 2 carried, 1 noted; collections 1 made;"
        " publish dates 0 carried, 1 noted" in text
    )
    assert "  bunny: places noted: bunny keeps a video in one collection only: it is placed in the row's first" in text


def test_an_inventory_without_extras_says_so_in_one_line(tmp_path, capsys):
    code, text = plan(tmp_path, capsys, "--provider", "mux", lines=[EXTRAS_ROWS[2]])
    assert code == 0
    assert "extras          none (no thumbnail, chapters, collection or publish date in the rows)" in text
    assert "mux: extras:" not in text
