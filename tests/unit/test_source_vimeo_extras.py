"""Vimeo's extras, the pure parts (sources/vimeo_extras.py): which picture a row carries, the image a picture resolves
to, the folder as a collection, and the showcases read once a sweep from answers given here."""

from __future__ import annotations

import pytest
from migrator.providers.http import Answer
from migrator.sources.rows import CollectionInfo
from migrator.sources.vimeo_extras import ShowcaseIndex, folder_of, largest_link, picture_id

CUSTOM = {"uri": "/videos/7/pictures/55", "active": True, "type": "custom", "default_picture": False}


@pytest.mark.parametrize(
    ("picture", "carried"),
    [
        (CUSTOM, "55"),
        ({**CUSTOM, "type": "default"}, "55"),  # the frame Vimeo chose, where the owner chose none
        ({**CUSTOM, "type": "caution"}, None),  # "isn't appropriate for all ages": not the video's image
        ({**CUSTOM, "default_picture": True}, None),  # Vimeo's own placeholder
        ({**CUSTOM, "active": False}, None),
        ({**CUSTOM, "uri": "/videos/8/pictures/55"}, None),  # another video's picture
        ({**CUSTOM, "uri": "/videos/7/pictures/55/../1"}, None),
        ({**CUSTOM, "type": None}, None),
        (None, None),
        ("a picture", None),
    ],
)
def test_the_picture_carried_is_the_videos_own_active_one(picture, carried):
    assert picture_id("7", picture) == carried


@pytest.mark.parametrize(
    ("sizes", "link"),
    [
        ([{"width": 100, "link": "https://i/a"}, {"width": 1920, "link": "https://i/b"}], "https://i/b"),
        ([{"width": 1920, "link": "https://i/b"}, {"width": 1920, "link": "https://i/c"}], "https://i/b"),
        ([{"width": "1920", "link": "https://i/a"}, {"width": 200, "link": "https://i/b"}], "https://i/b"),
        ([{"width": 3000}, {"width": 100, "link": "https://i/a"}], "https://i/a"),  # no link: not a size
        ([], None),
        ("sizes", None),
    ],
)
def test_a_picture_resolves_to_its_largest_size(sizes, link):
    assert largest_link({"sizes": sizes}) == link


@pytest.mark.parametrize(
    ("folder", "collections"),
    [
        ({"uri": "/users/1/projects/42", "name": "Marketing"}, [CollectionInfo("projects/42", "Marketing", "folder")]),
        ({"uri": "/users/1/projects/x", "name": "Marketing"}, []),
        ({"name": "Marketing"}, []),
        (None, []),
    ],
)
def test_the_folder_is_a_collection_named_by_its_project_id(folder, collections):
    assert folder_of({"parent_folder": folder}) == collections


def page(data: list, more: bool = False) -> Answer:
    return Answer(200, {"data": data, "paging": {"next": "/next" if more else None}}, "")


def test_the_showcases_are_read_once_with_the_place_of_each_video_where_arranged_by_hand():
    albums = [
        {
            "uri": "/users/1/albums/9",
            "name": "Hand",
            "sort": "arranged",
            "metadata": {"connections": {"videos": {"total": 3}}},
        },
        {
            "uri": "/users/1/albums/8",
            "name": "Newest",
            "sort": "newest",
            "metadata": {"connections": {"videos": {"total": 1}}},
        },
        {
            "uri": "/users/1/albums/7",
            "name": "Empty",
            "sort": "arranged",
            "metadata": {"connections": {"videos": {"total": 0}}},
        },
        {"uri": "/channels/3", "name": "Not a showcase"},
    ]
    answers = {
        "/me/albums": [page(albums)],
        "/users/1/albums/9/videos": [
            page([{"uri": "/videos/30"}, {"uri": "/videos/10"}], more=True),
            page([{"uri": "/videos/20"}]),
        ],
        "/users/1/albums/8/videos": [page([{"uri": "/videos/10"}])],
    }
    asked: list[tuple[str, dict]] = []

    def call(method: str, path: str, params: dict) -> Answer:
        asked.append((path, params))
        return answers[path].pop(0)

    index = ShowcaseIndex(call, "/me/albums")
    assert index.of("10") == [
        CollectionInfo("albums/9", "Hand", "showcase", 1),
        CollectionInfo("albums/8", "Newest", "showcase", None),
    ]
    assert index.of("20") == [CollectionInfo("albums/9", "Hand", "showcase", 2)] and index.of("99") == []
    assert [path for path, _ in asked] == [
        "/me/albums",
        "/users/1/albums/9/videos",
        "/users/1/albums/9/videos",
        "/users/1/albums/8/videos",
    ]  # once, the empty showcase never asked
    assert asked[1][1]["sort"] == "manual" and asked[3][1]["sort"] == "date"


def test_a_showcase_listing_vimeo_refuses_leaves_the_showcases_out_not_the_library():
    index = ShowcaseIndex(lambda method, path, params: Answer(404, {"error": "no"}, ""), "/users/2/albums")
    assert index.of("10") == []
