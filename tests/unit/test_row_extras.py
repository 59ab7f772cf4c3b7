"""What a viewer sees first (issue 42), the pure parts: a platform's thumbnail, chapters, collections and publish
time cleaned into a row (sources/rows.py make_row), and the row's copy in the ledger, read back whole."""

from __future__ import annotations

import pytest
from migrator.ledger import Ledger, message_of
from migrator.messages import MAX_BODY_BYTES, AssetMessage, encode_message, parse_message
from migrator.row_extras import Chapter, Collection
from migrator.sources.rows import ChapterInfo, CollectionInfo, TrackInfo, chapter_docs, collection_docs, make_row

from tests.unit.dynamo_fake import FakeDynamo

# (what the platform gave, the chapters the row carries): sorted, one a start, before the end, one line each.
CHAPTERS = [
    ([ChapterInfo(0, "Intro"), ChapterInfo(60, "Main")], [(0.0, "Intro"), (60.0, "Main")]),
    ([ChapterInfo(60, "Main"), ChapterInfo(0, "Intro")], [(0.0, "Intro"), (60.0, "Main")]),  # sorted
    ([ChapterInfo(5, "First"), ChapterInfo(5.0, "Same start")], [(5.0, "First")]),  # the first listed wins
    ([ChapterInfo(1.0001, "A"), ChapterInfo(1.0002, "B")], [(1.0, "A")]),  # to the millisecond, then one a start
    ([ChapterInfo("12.5", "As text")], []),  # a time is a number, as a duration is
    ([ChapterInfo(-1, "Before"), ChapterInfo(float("nan"), "NaN"), ChapterInfo(None, "None")], []),
    ([ChapterInfo(True, "A flag"), ChapterInfo([1], "A list")], []),
    ([ChapterInfo(3, "  two\nlines\t\u0007 "), ChapterInfo(4, "a --> b")], [(3.0, "two lines"), (4.0, "a -> b")]),
    ([ChapterInfo(3, ""), ChapterInfo(4, " \n "), ChapterInfo(5, 7), ChapterInfo(6, "\ud800")], []),
    ([ChapterInfo(0, "x" * 300)], [(0.0, "x" * 255)]),  # cut to the limit
    ([ChapterInfo(119.9, "Last"), ChapterInfo(120, "At the end"), ChapterInfo(500, "Past it")], [(119.9, "Last")]),
    ([ChapterInfo(i, f"C{i}") for i in range(600)], [(float(i), f"C{i}") for i in range(120)]),
]


@pytest.mark.parametrize(("given", "kept"), CHAPTERS)
def test_chapters_are_cleaned_into_what_a_row_can_carry(given, kept):
    row = make_row("vimeo", "1", "vimeo://1", duration_s=120, chapters=given)
    assert isinstance(row, AssetMessage)
    assert [(c.start_s, c.title) for c in row.chapters] == kept
    assert parse_message(encode_message(row)) == row


def test_at_most_500_chapters_are_kept_when_no_duration_bounds_them():
    docs = chapter_docs([ChapterInfo(i, f"C{i}") for i in range(600)])
    assert len(docs) == 500 and docs[-1] == {"start_s": 499.0, "title": "C499"}


S = "showcase"
# (what the platform gave, the collections the row carries as (id, name, kind, position)).
COLLECTIONS = [
    ([CollectionInfo("albums/9", "Best of", S, 3)], [("albums/9", "Best of", S, 3)]),
    ([CollectionInfo(9, "Best of", S)], [("9", "Best of", S, None)]),  # a number id is its text
    ([CollectionInfo("albums/9", "A", S, 0), CollectionInfo("albums/9", "B", S, 1)], [("albums/9", "A", S, 0)]),
    ([CollectionInfo("albums/9", "A", "shelf")], []),  # a kind no target knows
    ([CollectionInfo("albums/9", None, S), CollectionInfo("albums/8", "  ", S)], []),  # no name
    ([CollectionInfo(None, "A", S), CollectionInfo(True, "A", S), CollectionInfo(" ", "A", S)], []),  # no id
    ([CollectionInfo("x" * 256, "A", S), CollectionInfo("a\nb", "A", S)], []),  # an id is never cut or mended
    ([CollectionInfo("p/1", "Two\nlines", "folder", -1)], [("p/1", "Two lines", "folder", None)]),
    (
        [CollectionInfo("p/1", "A", "folder", 1.5), CollectionInfo("p/2", "B", "folder", "4")],
        [
            ("p/1", "A", "folder", None),
            ("p/2", "B", "folder", None),  # a place is a number, not text
        ],
    ),
    (
        [CollectionInfo(f"albums/{i}", f"S{i}", S, i) for i in range(60)],
        [(f"albums/{i}", f"S{i}", S, i) for i in range(50)],
    ),
]


@pytest.mark.parametrize(("given", "kept"), COLLECTIONS)
def test_collections_are_cleaned_into_what_a_row_can_carry(given, kept):
    row = make_row("vimeo", "1", "vimeo://1", collections=given)
    assert isinstance(row, AssetMessage)
    assert [(c.id, c.name, c.kind, c.position) for c in row.collections] == kept
    assert collection_docs(given) == [c.as_dict() for c in row.collections]


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("vimeo://1/pictures/55", "vimeo://1/pictures/55"),
        ("https://i.example.com/a.jpg", "https://i.example.com/a.jpg"),
        ("s3://posters/a.png", "s3://posters/a.png"),
        ("ftp://i.example.com/a.jpg", None),
        ("https://i.example.com/a b.jpg", None),
        ("", None),
        (42, None),
    ],
)
def test_a_thumbnail_is_kept_only_as_a_link_or_reference_the_row_can_carry(given, kept):
    row = make_row("vimeo", "1", "vimeo://1", thumbnail_url=given)
    assert isinstance(row, AssetMessage) and row.thumbnail_url == kept


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("2021-03-04T05:06:07+01:00", "2021-03-04T04:06:07Z"),
        (1_600_000_000, "2020-09-13T12:26:40Z"),
        ("not a date", None),
        (None, None),
    ],
)
def test_the_publish_time_is_rfc3339_utc_apart_from_the_creation_time(given, kept):
    row = make_row("vimeo", "1", "vimeo://1", created_at="2020-01-01T00:00:00Z", published_at=given)
    assert isinstance(row, AssetMessage) and row.published_at == kept and row.created_at == "2020-01-01T00:00:00Z"


def test_a_chapters_track_without_a_language_is_kept_undetermined():
    row = make_row("jwplayer", "m1", "jwplayer://m1", tracks=[TrackInfo("jwplayer://m1/tracks/ch", None, "chapters")])
    assert isinstance(row, AssetMessage) and [(t.language, t.kind) for t in row.tracks] == [("und", "chapters")]


def test_a_row_too_large_for_a_message_leaves_its_chapters_out_and_says_so_rather_than_losing_the_video():
    """500 chapters of 255 characters are some 130 KB: the row was Unfetchable, the video never migrated."""
    long_titles = [ChapterInfo(i, f"{i} " + "x" * 250) for i in range(500)]
    shelves = [CollectionInfo(f"albums/{i}", f"Showcase {i}", S, i) for i in range(3)]
    row = make_row("vimeo", "1", "vimeo://1", title="Kept", chapters=long_titles, collections=shelves)
    assert isinstance(row, AssetMessage) and row.title == "Kept"
    assert row.chapters == () and row.metadata["chapters_note"].startswith("500 chapters left out")
    assert len(row.collections) == 3 and "collections_note" not in row.metadata
    assert len(encode_message(row).encode()) <= MAX_BODY_BYTES


ROW = AssetMessage(
    "vimeo/1",
    "vimeo://1",
    title="Intro",
    duration_s=90.0,
    created_at="2019-05-01T10:00:00Z",
    published_at="2019-05-02T08:00:00Z",
    thumbnail_url="vimeo://1/pictures/55",
    chapters=(Chapter(0.0, "Intro"), Chapter(61.25, "Part « deux »")),
    collections=(Collection("projects/7", "Marketing", "folder"), Collection("albums/9", "Best of", "showcase", 3)),
)


def test_the_ledger_item_holds_each_extra_under_its_own_name_and_gives_the_row_back_whole():
    """The tracks worker reads the item: `thumbnail_url`, `chapters`, `collections`, `published_at`."""
    ledger = Ledger("t", FakeDynamo())
    ledger.record_intake(ROW, 1.8e9)
    item = ledger.get(ROW.asset_id)
    assert item is not None
    assert item["thumbnail_url"] == "vimeo://1/pictures/55" and item["published_at"] == "2019-05-02T08:00:00Z"
    assert [(float(c["start_s"]), c["title"]) for c in item["chapters"]] == [(0.0, "Intro"), (61.25, "Part « deux »")]
    assert [c.get("position") for c in item["collections"]] == [None, 3]
    assert item["original_created_at"] == "2019-05-01T10:00:00Z"
    assert message_of(item) == ROW  # a retry or a heal sends the row as it came


class _Recorder:
    """Records each UpdateItem, answering as DynamoDB does to a write that wins."""

    def __init__(self):
        self.requests: list[dict] = []

    def update_item(self, **request):
        self.requests.append(request)
        return {}


def test_the_claim_keeps_the_extras_the_ledger_saw_first():
    """A later row (a retry's, a second load's) does not replace what the item holds: `if_not_exists`, as for every
    field of the row."""
    client = _Recorder()
    Ledger("t", client).claim(ROW, 1.8e9, 1.8e9 + 60, "tok")
    claim = client.requests[0]
    placeholders = {name: key for key, name in claim["ExpressionAttributeNames"].items()}
    for name in ("thumbnail_url", "chapters", "collections", "published_at"):
        key = placeholders[name]
        assert f"{key} = if_not_exists({key}, " in claim["UpdateExpression"], name
