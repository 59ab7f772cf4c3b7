"""What a viewer sees on a Vimeo target (issue 42), against Vimeo's documents (vimeo/openapi api.yaml, the API
reference's chapters, folders and showcases, PyVimeo's upload_picture): the pure readers and planners as tables, and
the requests VimeoProvider's extras build, answered by the canned session of test_providers (no network)."""

from __future__ import annotations

import pytest
from migrator.providers.extras import ChaptersUpload, ThumbnailUpload
from migrator.providers.vimeo_extras import (
    Picture,
    chapter_body,
    chapters_plan,
    from_zero,
    last_id,
    place_of,
    read_chapter,
    read_collection_id,
    read_picture,
    showcase_order,
    timecode,
    whole,
)
from migrator.row_extras import Chapter
from migrator.tracks import TrackResult

from tests.unit.test_provider_vimeo import SOURCE, VIDEO_ID, asset, vimeo

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
LINK = "https://i.cloud.vimeo.com/video/picture-upload?sig=abc"


@pytest.mark.parametrize(
    ("kind", "place"),
    [
        ("folder", "projects"),
        ("project", "projects"),
        ("showcase", "albums"),
        ("album", "albums"),
        ("playlist", "albums"),
        ("category", "albums"),
        ("channel", "albums"),
        ("group", None),  # no kind of the row's: refused, not guessed
    ],
)
def test_each_collection_kind_goes_to_a_folder_or_a_showcase(kind, place):
    assert place_of(kind) == place


@pytest.mark.parametrize(
    ("recorded", "parsed"),
    [
        ("projects/123", ("projects", "123")),
        ("albums/9", ("albums", "9")),
        ("albums/x9", None),
        ("channels/9", None),
        ("albums/9/videos", None),
        ("", None),
    ],
)
def test_a_recorded_collection_id_is_read_back_only_in_our_own_form(recorded, parsed):
    assert read_collection_id(recorded) == parsed


@pytest.mark.parametrize(
    ("uri", "collection", "found"),
    [
        ("/users/152184/projects/6789", "projects", "6789"),
        ("/users/152184/albums/3706071/", "albums", "3706071"),
        ("/videos/258684937/pictures/12345", "pictures", "12345"),
        ("/users/152184/albums/3706071", "projects", None),  # a showcase is no folder
        ("/videos/258684937/pictures/abc", "pictures", None),
        (None, "projects", None),
    ],
)
def test_the_id_a_uri_ends_with_is_read_only_under_its_collection(uri, collection, found):
    assert last_id(uri, collection) == found


@pytest.mark.parametrize(
    ("item", "picture"),
    [
        ({"uri": "/videos/1/pictures/7", "active": True, "type": "custom"}, Picture("7", True, "custom")),
        ({"uri": "/videos/1/pictures/8", "active": "true", "type": "default"}, Picture("8", False, "default")),
        ({"uri": "/users/1/pictures/8", "active": True, "type": "custom"}, None),  # a portrait, not a thumbnail
        ("not a picture", None),
    ],
)
def test_a_listed_picture_is_read_strictly(item, picture):
    assert read_picture(item) == picture


@pytest.mark.parametrize(("start_s", "sent"), [(0.0, 0), (12.0, 12), (12.5, 12.5), (61.0004, 61), (3.14159, 3.142)])
def test_a_chapter_timecode_is_whole_seconds_where_whole_else_to_the_millisecond(start_s, sent):
    assert timecode(start_s) == sent and type(timecode(start_s)) is type(sent)


def test_a_chapter_body_is_its_title_and_timecode():
    assert chapter_body(Chapter(90.0, "Q&A — « live »")) == {"title": "Q&A — « live »", "timecode": 90}


@pytest.mark.parametrize(
    ("item", "read"),
    [
        ({"uri": "/videos/1/chapters/5", "title": "Intro", "timecode": 0}, ("5", 0.0, "Intro")),
        ({"uri": "/videos/1/chapters/5", "title": "Intro"}, None),
        ({"uri": "/videos/1/chapters/x", "title": "Intro", "timecode": 3}, None),
    ],
)
def test_a_listed_chapter_is_read_with_its_id_and_timecode(item, read):
    assert read_chapter(item) == read


WANTED = (Chapter(0.0, "Intro"), Chapter(12.5, "Demo"), Chapter(30.0, "Questions"))
INTRO, DEMO, QUESTIONS = ({"title": c.title, "timecode": timecode(c.start_s)} for c in WANTED)


@pytest.mark.parametrize(
    ("held", "adds", "edits"),
    [
        ([], [QUESTIONS, DEMO, INTRO], []),  # latest first: a pass cut short leaves no chapter at 0
        ([("1", 30.0, "Questions")], [DEMO, INTRO], []),
        ([("1", 0.0, "Intro"), ("2", 12.5, "Demo"), ("3", 30.0, "Questions")], [], []),  # a retry writes nothing
        ([("1", 0.0, "Opening"), ("2", 12.5, "Demo"), ("3", 30.0, "Questions")], [], [("1", {"title": "Intro"})]),
        ([("9", 45.0, "Someone's")], [QUESTIONS, DEMO, INTRO], []),  # another timecode is left be
    ],
)
def test_chapters_are_written_only_where_missing_or_titled_otherwise(held, adds, edits):
    assert chapters_plan(WANTED, held) == (adds, edits)


@pytest.mark.parametrize(
    ("chapters", "sent", "noted"),
    [
        (WANTED, WANTED, False),
        (
            (Chapter(4.0, "Cold open"), Chapter(10.0, "Intro")),
            (Chapter(0.0, "Cold open"), Chapter(10.0, "Intro")),
            True,
        ),
        ((), (), False),
    ],
)
def test_the_first_chapter_is_sent_at_0_and_noted_where_the_row_has_it_later(chapters, sent, noted):
    written, note = from_zero(chapters)
    assert written == sent and (note is not None) == noted
    assert note is None or "4 s in the row" in note


@pytest.mark.parametrize(
    ("held", "count"),
    [
        ([], 0),
        ([("3", 30.0, "Questions"), ("2", 12.5, "Demo")], 0),  # cut short: the chapter at 0 comes last
        ([("3", 30.0, "Questions"), ("2", 12.5, "Demo"), ("1", 0.0, "Intro")], 3),
    ],
)
def test_the_look_counts_a_list_only_once_it_holds_its_chapter_at_0(held, count):
    assert whole(held) == count


@pytest.mark.parametrize(
    ("ordered", "current", "written"),
    [
        (["a", "b", "c"], ["c", "a", "b"], ["a", "b", "c"]),
        (["a", "c"], ["c", "b", "a"], ["a", "c", "b"]),  # b, placed but not ordered yet, is kept after ours
        (["a", "b"], ["a"], ["a", "b"]),  # b, placed then dropped by a replace that raced it, is put back
        (["a", "a", "b"], [], ["a", "b"]),
    ],
)
def test_a_showcase_is_written_in_source_order_keeping_what_else_it_holds(ordered, current, written):
    assert showcase_order(ordered, current) == written


# --- the requests --------------------------------------------------------------------------------------------


def picture(pid: str, active: bool, kind: str = "custom", link: str | None = None) -> dict:
    doc = {"uri": f"/videos/{VIDEO_ID}/pictures/{pid}", "active": active, "type": kind, "sizes": []}
    return {**doc, "link": link} if link else doc


def test_a_thumbnail_is_a_new_picture_its_image_put_to_its_link_then_made_active():
    provider, session = vimeo((201, picture("77", False, link=LINK)), (200, {}), (200, picture("77", True)))
    image = ThumbnailUpload(PNG, "image/png", "png", "d1")
    outcome = provider.set_thumbnail(VIDEO_ID, image)
    assert (outcome.kind, outcome.remote_track_id) == (TrackResult.ATTACHED, "77")
    made, put, active = session.sent
    assert (made.method, made.url) == ("POST", f"https://api.vimeo.com/videos/{VIDEO_ID}/pictures")
    assert (put.method, put.url, put.body) == ("PUT", LINK, PNG)
    assert put.headers["Content-Type"] == "image/png" and put.headers["Authorization"].startswith("bearer ")
    assert (active.method, active.url) == ("PATCH", f"https://api.vimeo.com/videos/{VIDEO_ID}/pictures/77")
    assert session.json(2) == {"active": True}


@pytest.mark.parametrize(("status", "result"), [(400, TrackResult.REFUSED), (403, TrackResult.TRANSIENT)])
def test_an_image_the_link_refuses_fails_and_a_link_in_trouble_is_tried_again(status, result):
    provider, session = vimeo((201, picture("77", False, link=LINK)), (status, {"error": "no"}))
    assert provider.set_thumbnail(VIDEO_ID, ThumbnailUpload(PNG, "image/png", "png", "d")).kind is result
    assert [r.method for r in session.sent] == ["POST", "PUT"]  # never made active


def test_the_look_finds_an_active_custom_picture_and_deletes_a_half_made_one():
    listed = {"data": [picture("1", True, "default"), picture("5", False)]}
    provider, session = vimeo((200, listed), (204, b""))
    look = provider.thumbnail_state(VIDEO_ID)
    assert look.custom is False
    assert [(r.method, r.url.split("?")[0]) for r in session.sent] == [
        ("GET", f"https://api.vimeo.com/videos/{VIDEO_ID}/pictures"),
        ("DELETE", f"https://api.vimeo.com/videos/{VIDEO_ID}/pictures/5"),
    ]
    provider, session = vimeo((200, {"data": [picture("1", False, "default"), picture("6", True)]}))
    look = provider.thumbnail_state(VIDEO_ID)
    assert (look.custom, look.digest, len(session.sent)) == (True, "6", 1)


def test_chapters_are_listed_then_only_the_missing_ones_are_added():
    held = {"data": [{"uri": f"/videos/{VIDEO_ID}/chapters/1", "title": "Questions", "timecode": 30}], "paging": {}}
    provider, session = vimeo((200, held), (201, {}), (201, {}), (200, held))
    outcome = provider.set_chapters(VIDEO_ID, ChaptersUpload(WANTED, b"", "en"))
    assert outcome.kind is TrackResult.ATTACHED and outcome.note is None
    assert [r.method for r in session.sent] == ["GET", "POST", "POST"]
    assert [session.json(i) for i in (1, 2)] == [DEMO, INTRO]
    assert provider.chapters_of(VIDEO_ID, "en").count == 0  # one chapter held, none at 0: a list cut short


def test_a_showcase_is_made_arranged_after_no_showcase_of_its_name_is_found():
    near = {"data": [{"uri": "/users/1/albums/4", "name": "Talks 2019 extra"}], "paging": {"next": None}}
    provider, session = vimeo((200, near), (201, {"uri": "/users/1/albums/5", "name": "Talks 2019"}))
    outcome = provider.create_collection("Talks 2019", "playlist", "k1")
    assert (outcome.kind, outcome.remote_track_id) == (TrackResult.ATTACHED, "albums/5")
    assert session.sent[0].url.startswith("https://api.vimeo.com/me/albums?query=Talks+2019")
    assert session.json(1) == {"name": "Talks 2019", "sort": "arranged"}


def test_a_folder_of_the_name_is_adopted_not_made_twice():
    found = {"data": [{"uri": "/users/1/projects/12", "name": "Webinars"}], "paging": {}}
    provider, session = vimeo((200, found))
    outcome = provider.create_collection("Webinars", "folder", "k2")
    assert (outcome.kind, outcome.remote_track_id) == (TrackResult.ATTACHED, "projects/12")
    assert [r.method for r in session.sent] == ["GET"]
    assert provider.find_collection("Webinars", "k2") is None and len(session.sent) == 1  # the kind is needed


def test_a_video_already_in_another_folder_stays_there_and_the_second_is_noted():
    provider, session = vimeo((200, {"parent_folder": {"uri": "/users/1/projects/12"}}))
    outcome = provider.place(VIDEO_ID, "projects/13", 2)
    assert outcome.kind is TrackResult.NOTED and "one folder" in (outcome.note or "")
    assert [r.method for r in session.sent] == ["GET"]
    provider, session = vimeo((200, {"parent_folder": None}), (204, b""))
    assert provider.place(VIDEO_ID, "projects/13", 2).kind is TrackResult.ATTACHED
    assert session.sent[1].method == "PUT" and session.sent[1].url.endswith(f"/me/projects/13/videos/{VIDEO_ID}")


def test_a_showcase_in_order_already_is_not_written_again():
    members = {"data": [{"uri": "/videos/1"}, {"uri": "/videos/2"}], "paging": {}}
    provider, session = vimeo((200, members))
    assert provider.order_collection("albums/5", ["1", "2"]).kind is TrackResult.ATTACHED
    assert [r.method for r in session.sent] == ["GET"] and "sort=manual" in session.sent[0].url
    provider, session = vimeo((200, members), (201, b""))
    assert provider.order_collection("albums/5", ["2", "1"]).kind is TrackResult.ATTACHED
    assert session.json(1) == {"videos": "/videos/2,/videos/1"}
    provider, session = vimeo()
    assert provider.order_collection("projects/5", ["2", "1"]).kind is TrackResult.ATTACHED and not session.sent


def test_the_publish_time_has_no_field_at_vimeo_and_is_noted():
    provider, _ = vimeo((201, {"uri": f"/videos/{VIDEO_ID}"}))
    notes = provider.create(asset(published_at="2019-05-01T10:00:00Z"), SOURCE).notes
    assert any(n.startswith("published_at: not carried by vimeo") and "release_time" in n for n in notes)
    assert provider.published_field is None and provider.takes_thumbnail == "image"


@pytest.mark.parametrize(
    ("collection_id", "keeps"),
    [("albums/12", True), ("projects/12", False), ("albums/x", False), ("", False)],
)
def test_only_a_showcase_keeps_an_order_of_its_videos_for_verify_to_read_back(collection_id, keeps):
    provider, _ = vimeo()
    assert provider.keeps_order_of(collection_id) is keeps


def test_a_poster_time_is_a_picture_made_from_the_frame_and_made_active_in_one_call():
    listed = {"data": [picture("1", True, "default")]}
    provider, session = vimeo((200, listed), (201, picture("78", True)))
    outcome = provider.set_thumbnail_time(VIDEO_ID, 12.3456)
    assert (outcome.kind, outcome.remote_track_id) == (TrackResult.ATTACHED, "78")
    look, made = session.sent
    assert (look.method, made.method, made.url) == ("GET", "POST", f"https://api.vimeo.com/videos/{VIDEO_ID}/pictures")
    assert session.json(1) == {"time": 12.346, "active": True}


def test_a_poster_time_a_lost_answer_already_made_stands_and_no_second_picture_is_made():
    provider, session = vimeo((200, {"data": [picture("1", False, "default"), picture("78", True)]}))
    outcome = provider.set_thumbnail_time(VIDEO_ID, 4.0)
    assert (outcome.kind, outcome.remote_track_id) == (TrackResult.ATTACHED, "78")
    assert [r.method for r in session.sent] == ["GET"]
