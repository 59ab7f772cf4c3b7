"""Wistia's extras, the pure parts (sources/wistia_extras.py): the thumbnail as it was made (its resizing query
dropped), the chapters a player shows from the media's customizations, and each folder's order read once."""

from __future__ import annotations

import pytest
from migrator.providers.http import Answer
from migrator.sources.rows import ChapterInfo, CollectionInfo
from migrator.sources.wistia_extras import FolderOrder, chapters_of, thumbnail_link

DELIVERY = "https://embed-ssl.wistia.com/deliveries/8669acc30fdfe63a25ad9d32f5a9f664.jpg"


@pytest.mark.parametrize(
    ("thumbnail", "link"),
    [
        ({"url": f"{DELIVERY}?image_crop_resized=200x120", "width": 200}, DELIVERY),
        ({"url": DELIVERY}, DELIVERY),
        ({"url": f"{DELIVERY}#x"}, DELIVERY),
        ({"url": "https://embed-ssl.wistia.com/"}, None),  # no image named
        ({"url": "ftp://embed-ssl.wistia.com/deliveries/a.jpg"}, None),
        ({"url": "https://[::1/a.jpg"}, None),  # does not parse
        ({"url": 7}, None),
        ({}, None),
        (None, None),
    ],
)
def test_the_thumbnail_is_the_image_as_made_without_its_resizing_query(thumbnail, link):
    assert thumbnail_link({"thumbnail": thumbnail}) == link


def chapters(on: object = "true", *items: dict) -> dict:
    return {"plugin": {"chapters": {"on": on, "visibleOnLoad": "true", "chapterList": list(items)}}}


INTRO, DEMO = {"title": "Intro", "time": "0"}, {"title": "Demo", "time": "12.5"}
GONE, KEPT = {"title": "Gone", "time": "3", "deleted": "true"}, {"title": "Kept", "time": "4", "deleted": "false"}


@pytest.mark.parametrize(
    ("customizations", "found"),
    [
        (chapters("true", INTRO, DEMO), [ChapterInfo(0.0, "Intro"), ChapterInfo(12.5, "Demo")]),
        (chapters("true", GONE, KEPT), [ChapterInfo(4.0, "Kept")]),
        (chapters("false", INTRO), []),  # the player shows none
        (chapters(None, {"title": "A", "time": 7}), [ChapterInfo(7.0, "A")]),  # a number where a string is typed
        (chapters("true", {"title": "A", "time": "soon"}, {"title": "B", "time": "nan"}), []),
        ({"playerColor": "54bbff"}, []),  # no customization of chapters
        ({}, []),
        ("not an object", []),
    ],
)
def test_chapters_are_those_the_player_shows(customizations, found):
    assert chapters_of(customizations) == found


def test_each_folders_order_is_read_once_and_a_media_is_placed_in_it():
    pages = {
        "f1": [
            Answer(200, [{"hashed_id": f"m{i}"} for i in range(99, -1, -1)], ""),  # a full page: another follows
            Answer(200, [{"hashed_id": "m100"}], ""),
        ],
        "f2": [Answer(404, {"error": "Not Found"}, "")],
    }
    asked: list[dict] = []

    def call(method: str, path: str, params: dict) -> Answer:
        asked.append(params)
        return pages[params["folder_id"]].pop(0)

    order = FolderOrder(call)
    media = {"hashed_id": "m99", "folder": {"hashedId": "f1", "name": "Marketing"}}
    assert order.collection(media, ordered=True) == [CollectionInfo("f1", "Marketing", "folder", 0)]
    assert order.position("f1", "m0") == 99 and order.position("f1", "m100") == 100
    assert [(p["folder_id"], p["page"], p["sort_by"]) for p in asked] == [
        ("f1", "1", "position"),
        ("f1", "2", "position"),
    ]
    gone = {"hashed_id": "x", "folder": {"hashedId": "f2", "name": "Webinars"}}
    assert order.collection(gone, ordered=True) == [CollectionInfo("f2", "Webinars", "folder", None)]
    assert order.collection({"hashed_id": "y", "folder": None}, ordered=True) == []
    assert order.collection({**media, "folder": {"hashedId": "f/1"}}, ordered=True) == []
    assert len(asked) == 3  # each folder once
    unordered = FolderOrder(lambda *a, **k: pytest.fail("no order is read without tracks"))
    assert unordered.collection(media, ordered=False) == [CollectionInfo("f1", "Marketing", "folder", None)]
