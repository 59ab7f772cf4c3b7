"""Sidecars beside a video in an object store (migrator.sources.sidecars), as tables: which names count as its poster
image and its chapters file, which do not, a sidecar without its video, the stems whose sidecars may lie on
another page of the listing, and a folder as a collection; then the S3 source and `migrator load s3://` reading
them from ListObjectsV2 (botocore's Stubber checks each request and answer against S3's service model)."""

from __future__ import annotations

import datetime

import boto3
import pytest
from botocore.stub import Stubber
from migrator.messages import AssetMessage
from migrator.sources import S3Source
from migrator.sources.s3 import sidecar_fields
from migrator.sources.sidecars import (
    Pairing,
    SidecarIndex,
    Sidecars,
    boundary_stems,
    folder_collection,
    sidecar_of,
    stem_of,
)
from migrator_cli.inventory_rows import Row, Skipped
from migrator_cli.inventory_s3 import read_s3_listing

WHEN = datetime.datetime(2024, 3, 1, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("v/talk.mp4", "v/talk"),
        ("v/talk.v2.mp4", "v/talk.v2"),
        ("talk.mp4", "talk"),
        ("v.d/movie", "v.d/movie"),  # no extension (a video by its Content-Type): the whole name
        ("v/.hidden", "v/.hidden"),
    ],
)
def test_the_stem_is_the_path_without_its_last_extension(name, stem):
    assert stem_of(name) == stem


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("v/talk.jpg", ("image", "v/talk", 0)),
        ("v/talk.JPEG", ("image", "v/talk", 1)),
        ("v/talk.png", ("image", "v/talk", 2)),
        ("v/talk.WebP", ("image", "v/talk", 3)),
        ("v/talk.chapters.vtt", ("chapters", "v/talk", 0)),
        ("v/talk.Chapters.VTT", ("chapters", "v/talk", 0)),
        ("v/talk.mp4.jpg", ("image", "v/talk.mp4", 0)),  # the stem of a video named talk.mp4.mp4, not talk.mp4's
        ("v/talk.vtt", None),  # a caption, not chapters
        ("v/talk.chapters.srt", None),
        ("v/talk.gif", None),
        ("v/talk.mp4", None),
        ("v/.jpg", None),  # the suffix alone belongs to no stem
        ("v/.chapters.vtt", None),
    ],
)
def test_a_sidecars_form_is_told_by_its_suffix(name, found):
    assert sidecar_of(name) == found


LISTED = ("v/talk.chapters.vtt", "v/talk.jpg", "v/talk.mp4", "v/talk.png", "v/other.jpg", "v/clip.mov")


@pytest.mark.parametrize(
    ("names", "video", "expected"),
    [
        (LISTED, "v/talk.mp4", Sidecars("v/talk.jpg", "v/talk.chapters.vtt")),  # jpg before png
        (("v/talk.webp", "v/talk.PNG"), "v/talk.mp4", Sidecars("v/talk.PNG")),
        (("v/talk.jpeg", "v/talk.jpg"), "v/talk.mov", Sidecars("v/talk.jpg")),  # two videos of a stem share it
        (LISTED, "v/clip.mov", Sidecars()),
        (("v/talk.mp4.jpg", "v/talk-thumb.jpg", "v/talk.en.jpg", "v/Talk.jpg"), "v/talk.mp4", Sidecars()),
        (("w/talk.jpg", "talk.jpg"), "v/talk.mp4", Sidecars()),  # another folder
        (("v/talk.v2.jpg", "v/talk.jpg"), "v/talk.v2.mp4", Sidecars("v/talk.v2.jpg")),
        (("v/movie.png",), "v/movie", Sidecars("v/movie.png")),
    ],
)
def test_which_names_beside_a_video_are_its_sidecars(names, video, expected):
    index = SidecarIndex()
    index.add_all(names)
    assert index.of(video) == expected


def test_without_case_where_the_store_compares_names_so():
    index = SidecarIndex(fold=True)
    index.add_all(["/V/Talk.JPG", "/v/talk.chapters.vtt"])
    assert index.of("/v/TALK.mp4") == Sidecars("/V/Talk.JPG", "/v/talk.chapters.vtt")
    assert SidecarIndex().of("/v/TALK.mp4") == Sidecars()


@pytest.mark.parametrize(
    ("videos", "first", "last", "before", "after", "stems"),
    [
        (["v/b.mp4"], "v/a.mp4", "v/c.mp4", True, True, []),  # inside the page: its range is too
        (["v/a.mp4"], "v/a.mp4", "v/c.mp4", True, True, ["v/a"]),  # a.chapters.vtt may be on the page before
        (["v/a.mp4"], "v/a.mp4", "v/c.mp4", False, True, []),  # the first page: nothing before it
        (["v/c.mp4"], "v/a.mp4", "v/c.mp4", True, True, ["v/c"]),  # c.png may be on the next page
        (["v/c.mp4"], "v/a.mp4", "v/c.mp4", True, False, []),  # the last page
        (["v/c.mp4"], "v/a.mp4", "v/c.png", True, True, ["v/c"]),  # c.webp may be next
        (["v/c.mp4", "v/c.mov"], "v/c.jpg", "v/c.png", True, True, ["v/c"]),  # one lookup a stem
        (["v/movie"], "v/a.mp4", "v/movie", True, True, ["v/movie"]),  # movie.jpg sorts after movie
    ],
)
def test_the_stems_whose_sidecars_may_lie_on_another_page(videos, first, last, before, after, stems):
    assert boundary_stems(videos, first, last, before, after) == stems


@pytest.mark.parametrize(
    ("store", "name", "prefix", "expected"),
    [
        ("media", "v/2019/talk.mp4", "v/", ("media/v/2019", "2019")),
        ("media", "v/2019/q1/talk.mp4", "v/", ("media/v/2019/q1", "2019/q1")),
        ("media", "v/talk.mp4", "v/", None),  # at the top of the listing: no folder
        ("media", "talk.mp4", "", None),
        ("acct/box", "a/b/talk.mp4", "", ("acct/box/a/b", "a/b")),
        ("media", "v/2019/talk.mp4", "v/20", ("media/v/2019", "19")),  # a prefix that is no folder
    ],
)
def test_a_folder_is_a_collection_named_below_the_listing(store, name, prefix, expected):
    assert folder_collection(store, name, prefix) == expected


# --- S3 ---------------------------------------------------------------------------------------------------------


def client():
    return boto3.client("s3", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")


def objects(*keys: str) -> list[dict]:
    return [{"Key": key, "Size": 10, "LastModified": WHEN, "StorageClass": "STANDARD"} for key in keys]


def listing(stub: Stubber, keys, token: str | None = None, following: str | None = None) -> None:
    expected = {"Bucket": "media", "Prefix": "v/", "MaxKeys": 1000, "OptionalObjectAttributes": ["RestoreStatus"]}
    answer: dict = {"Contents": objects(*keys), "IsTruncated": following is not None}
    if token:
        expected["ContinuationToken"] = token
    if following:
        answer["NextContinuationToken"] = following
    stub.add_response("list_objects_v2", answer, expected)


def lookup(stub: Stubber, prefix: str, *keys: str) -> None:
    expected = {"Bucket": "media", "Prefix": prefix, "MaxKeys": 1000}
    stub.add_response("list_objects_v2", {"Contents": objects(*keys), "IsTruncated": False}, expected)


def test_s3_rows_carry_their_sidecar_image_chapters_and_folder_from_the_listing():
    s3 = client()
    with Stubber(s3) as stub:
        listing(stub, ["v/2019/talk.chapters.vtt", "v/2019/talk.jpg", "v/2019/talk.mp4", "v/intro.mp4", "v/x.png"])
        source = S3Source(s3, "media", "v/")
        page = source.page(None)
        stub.assert_no_pending_responses()
    rows = {e.source_url: e for e in page.entries}
    talk, intro = rows["s3://media/v/2019/talk.mp4"], rows["s3://media/v/intro.mp4"]
    assert isinstance(talk, AssetMessage) and talk.thumbnail_url == "s3://media/v/2019/talk.jpg"
    [chapters] = talk.tracks
    assert (chapters.url, chapters.kind, chapters.language, chapters.format) == (
        "s3://media/v/2019/talk.chapters.vtt",
        "chapters",
        "und",
        "vtt",
    )
    assert [(c.id, c.name, c.kind, c.position) for c in talk.collections] == [("media/v/2019", "2019", "folder", None)]
    assert isinstance(intro, AssetMessage) and intro.thumbnail_url is None and not intro.tracks
    assert not intro.collections and talk.published_at is None
    assert page.skipped == 3 and source.requests == 1  # the sidecars and x.png (one without its video) skipped


def test_s3_a_stem_across_a_page_boundary_is_looked_up_by_that_stem_alone():
    s3 = client()
    with Stubber(s3) as stub:
        listing(stub, ["v/a.mp4", "v/b.chapters.vtt", "v/b.mp4"], following="t1")
        lookup(stub, "v/b.", "v/b.chapters.vtt", "v/b.mp4", "v/b.png")  # b.png is on the next page
        listing(stub, ["v/b.png", "v/c.jpg", "v/c.mp4", "v/d.mp4"], token="t1")  # the last page: d needs nothing
        source = S3Source(s3, "media", "v/")
        first = source.page(None)
        second = source.page(first.cursor)
        stub.assert_no_pending_responses()
    rows = {e.source_url.rsplit("/", 1)[1]: e for e in first.entries + second.entries}
    assert rows["b.mp4"].thumbnail_url == "s3://media/v/b.png" and rows["b.mp4"].tracks[0].kind == "chapters"
    assert rows["c.mp4"].thumbnail_url == "s3://media/v/c.jpg" and rows["a.mp4"].thumbnail_url is None
    assert source.requests == 3  # two pages and one lookup: none per object


def test_s3_a_sidecar_whose_key_cannot_travel_as_an_s3_url_is_left_out():
    thumbnail, tracks, _ = sidecar_fields("media", "v/a.mp4", "v/", Sidecars("v/a?.jpg", "v/a#.chapters.vtt"))
    assert thumbnail is None and tracks == []  # '?' and '#' would be read back as another key
    thumbnail, tracks, _ = sidecar_fields("media", "v/a.mp4", "v/", Sidecars("v/a.jpg", "v/a.chapters.vtt"))
    assert thumbnail == "s3://media/v/a.jpg" and [t.ref for t in tracks] == ["s3://media/v/a.chapters.vtt"]


def test_migrator_load_reads_sidecars_from_the_listing_pages_and_looks_up_a_crossing_stem():
    s3 = client()
    with Stubber(s3) as stub:
        stub.add_response(
            "list_objects_v2",
            {"Contents": objects("v/a.jpg", "v/a.mp4"), "IsTruncated": True, "NextContinuationToken": "t1"},
            {"Bucket": "media", "Prefix": "v/"},
        )
        lookup(stub, "v/a.", "v/a.jpg", "v/a.mp4", "v/a.webp")
        stub.add_response(
            "list_objects_v2",
            {"Contents": objects("v/a.webp", "v/sub/b.mp4", "v/sub/b.png"), "IsTruncated": False},
            {"Bucket": "media", "Prefix": "v/", "ContinuationToken": "t1"},
        )
        records = list(read_s3_listing(s3, "media", "v/"))
        stub.assert_no_pending_responses()
    assert [type(r) for r in records] == [Skipped, Row, Skipped, Row, Skipped]
    a, b = records[1].message, records[3].message
    assert a.thumbnail_url == "s3://media/v/a.jpg" and not a.collections
    assert b.thumbnail_url == "s3://media/v/sub/b.png"
    assert [(c.id, c.name) for c in b.collections] == [("media/v/sub", "sub")]


def test_a_streamed_page_hands_each_video_on_in_order_once_its_stretch_is_passed():
    looked: list[str] = []
    elsewhere = {"v/a.": ["v/a.chapters.vtt", "v/a.jpg", "v/a.mp4"], "v/d.": ["v/d.mp4", "v/d.png"]}
    pairing = Pairing(lambda prefix: looked.append(prefix) or elsewhere.get(prefix, []), before=True)
    out: list[tuple[str, Sidecars]] = []
    held_most = 0
    for name in ["v/a.mp4", "v/b.jpg", "v/b.mp4", "v/b.mp4.txt", "v/bad.mp4", "v/c.mp4", "v/d.mp4"]:
        pairing.see(name)
        if name.endswith(".mp4"):
            pairing.hold(name, lambda sidecars, name=name: out.append((name, sidecars)))
        elif name.endswith(".txt"):
            pairing.hold(None, lambda _, name=name: out.append((name, Sidecars())))  # an unfetchable: in its place
        held_most = max(held_most, len(pairing._held))
    assert [n for n, _ in out] == ["v/a.mp4", "v/b.mp4", "v/b.mp4.txt", "v/bad.mp4", "v/c.mp4"]  # d.mp4 still open
    pairing.end(after=True)
    assert dict(out) == {
        "v/a.mp4": Sidecars("v/a.jpg", "v/a.chapters.vtt"),  # from the page before: looked up
        "v/b.mp4": Sidecars("v/b.jpg"),
        "v/b.mp4.txt": Sidecars(),
        "v/bad.mp4": Sidecars(),
        "v/c.mp4": Sidecars(),
        "v/d.mp4": Sidecars("v/d.png"),  # from the page after: looked up
    }
    assert looked == ["v/a.", "v/d."] and held_most <= 3  # memory: the open stretch only
