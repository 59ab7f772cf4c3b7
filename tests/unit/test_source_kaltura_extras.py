"""Kaltura's extras, the pure parts (sources/kaltura_extras.py): which thumb asset is the entry's own, the chapters
read from thumb cue points (and an answer that ignored its filter refused whole), the categories as collections,
the publish time from the scheduling window, and the thumbnail reference an entry carries."""

from __future__ import annotations

import pytest
from migrator.sources.kaltura_extras import (
    DEFAULT_ITEM,
    chapters_by_entry,
    collections_of,
    default_thumbs,
    published_at,
    thumb_ref_item,
)
from migrator.sources.rows import ChapterInfo, CollectionInfo

THUMB = {"id": "3_abc", "entryId": "0_e1", "tags": "default_thumb", "status": 2}
NOW = 1_800_000_000


@pytest.mark.parametrize(
    ("thumbs", "chosen"),
    [
        ([THUMB], {"0_e1": "3_abc"}),
        ([{**THUMB, "tags": "other, default_thumb"}], {"0_e1": "3_abc"}),  # tags are a comma-separated list
        ([{**THUMB, "tags": "default_thumbnail"}], {}),  # another tag, however alike
        ([{**THUMB, "tags": ""}], {}),  # a thumb of the entry's, not the one it shows
        ([{**THUMB, "status": 1}], {}),  # CAPTURING: no image yet
        ([{**THUMB, "status": "2"}], {"0_e1": "3_abc"}),  # an enum as its string value
        ([{**THUMB, "id": "3_abc/../x"}], {}),
        ([{**THUMB, "entryId": None}], {}),
        ([THUMB, {**THUMB, "id": "3_def"}], {"0_e1": "3_abc"}),  # two tagged: the first listed
        ([THUMB, {**THUMB, "id": "3_xyz", "entryId": "0_e2"}], {"0_e1": "3_abc", "0_e2": "3_xyz"}),
    ],
)
def test_the_thumbnail_carried_is_the_ready_asset_tagged_default_thumb(thumbs, chosen):
    assert default_thumbs(thumbs) == chosen


CHAPTER = {"entryId": "0_e1", "cuePointType": "thumbCuePoint.Thumb", "subType": 2, "status": 1, "startTime": 1500}


@pytest.mark.parametrize(
    ("points", "chapters"),
    [
        ([CHAPTER | {"title": "Intro"}], {"0_e1": [ChapterInfo(1.5, "Intro")]}),  # startTime in milliseconds
        ([CHAPTER | {"subType": "2", "title": "A"}], {"0_e1": [ChapterInfo(1.5, "A")]}),
        ([CHAPTER | {"subType": 1, "title": "Slide"}], {}),  # SLIDE: not a chapter
        ([CHAPTER | {"cuePointType": "adCuePoint.Ad"}], {}),
        ([CHAPTER | {"status": 2}], {}),  # DELETED
        ([CHAPTER | {"startTime": -5}], {}),
        ([CHAPTER | {"startTime": None}], {}),
        ([CHAPTER | {"entryId": "0_other"}], None),  # entryIdIn ignored: the answer is not this chunk's
        ([], {}),
    ],
)
def test_chapters_are_the_ready_thumb_cue_points_of_sub_type_chapter(points, chapters):
    assert chapters_by_entry(points, ["0_e1", "0_e2"]) == chapters


def test_a_category_these_credentials_cannot_read_is_no_collection():
    categories = {10: {"fullName": "Library>Marketing"}, 2: {"name": "Members"}, 3: None, 4: {"fullName": ""}}
    assert collections_of([10, 2, 3, 4, 99], categories) == [
        CollectionInfo("10", "Library>Marketing", "category"),
        CollectionInfo("2", "Members", "category"),
    ]


@pytest.mark.parametrize(
    ("entry", "published"),
    [
        ({"createdAt": 1_600_000_000}, 1_600_000_000),  # no window: published when made
        ({"createdAt": 1_600_000_000, "startDate": None}, 1_600_000_000),
        ({"createdAt": 1_600_000_000, "startDate": 1_600_086_400}, 1_600_086_400),  # its sunrise, passed
        ({"createdAt": 1_600_000_000, "startDate": NOW + 60}, None),  # not published yet
        ({"createdAt": 1_600_000_000, "startDate": -1}, 1_600_000_000),  # -1: "remove", no date
        ({"createdAt": 1_600_000_000, "startDate": "soon"}, None),  # a window this tool cannot read
        ({"createdAt": "1600000000"}, 1_600_000_000),
    ],
)
def test_the_publish_time_is_the_windows_start_once_passed_else_the_creation(entry, published):
    assert published_at(entry, NOW) == published


@pytest.mark.parametrize(
    ("entry", "thumb", "item"),
    [
        ({"thumbnailUrl": "https://cfvod.kaltura.com/p/1/thumbnail/entry_id/0_e1"}, "3_abc", "3_abc"),
        ({"thumbnailUrl": "https://cfvod.kaltura.com/p/1/thumbnail/entry_id/0_e1"}, None, DEFAULT_ITEM),
        ({"thumbnailUrl": "javascript:alert(1)"}, None, None),
        ({}, None, None),
    ],
)
def test_an_entry_carries_its_default_thumb_asset_else_its_own_thumbnail_where_it_has_one(entry, thumb, item):
    assert thumb_ref_item(entry, thumb) == item
