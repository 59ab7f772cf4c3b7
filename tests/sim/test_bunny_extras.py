"""What a Bunny Stream video shows besides its file (issue 42), on the "bunny" simulator: a thumbnail Bunny fetches
by URL and serves under the video's own file name, chapters on the video, the library's collections; driven by
our BunnyProvider and checked with a client written from Bunny's OpenAPI file (test_bunny.py's: Bunny publishes no
Python SDK), on what the simulator holds and serves at the end."""

from __future__ import annotations

import pytest
from migrator.extras import chapters_webvtt, digest
from migrator.providers.bunny_formats import cdn_token
from migrator.providers.extras import ChaptersUpload, ThumbnailUpload
from migrator.row_extras import Chapter
from migrator.tracks import TrackResult

from infra.sim import media
from tests.sim.test_bunny import held, ready, row, setup
from tests.sim.test_sdk_apivideo_extras import png
from tests.track_files import FileServer, body


@pytest.fixture
def files():
    with FileServer() as server:
        yield server


def made(launch, web, **config):
    sim, client, provider, creds = setup(launch, web, protected=False, **config)
    remote_id = provider.create(row("lib/1", privacy="public"), "https://m.example/a.mp4?duration=42.6").remote_id
    assert ready(provider, "lib/1", remote_id).target is not None
    return sim, client, provider, creds, remote_id


def test_a_thumbnail_by_url_is_fetched_by_bunny_served_as_the_custom_thumbnail_and_found_by_the_look(
    launch, web, files
):
    _sim, client, provider, _, vid = made(launch, web)
    image = png()
    url = files.route("/poster.png", body(image, headers={"Content-Type": "image/png"}))
    assert provider.thumbnail_state(vid).custom is False  # thumbnail.jpg: Bunny's own frame
    upload = ThumbnailUpload(image, "image/png", "png", digest(image), url)
    assert provider.set_thumbnail(vid, upload).kind is TrackResult.ATTACHED
    name = held(client, vid)["thumbnailFileName"]
    assert name.endswith(".png") and name != "thumbnail.jpg"
    assert provider.thumbnail_state(vid).custom is True
    play = client.play(vid).json()
    assert play["thumbnailUrl"].endswith(f"/{vid}/{name}")
    served = web.get(play["thumbnailUrl"], timeout=5)
    assert served.status_code == 200 and served.content == image and files.seen[-1][0] == "/poster.png"


def test_a_thumbnail_url_bunny_cannot_fetch_or_that_is_no_image_is_refused_and_the_video_keeps_its_frame(
    launch, web, files
):
    _sim, client, provider, _, vid = made(launch, web)
    page = files.route("/page.html", body(b"<html>not an image</html>"))
    for url in (page, files.url("/missing.png")):
        got = provider.set_thumbnail(vid, ThumbnailUpload(b"", "image/png", "png", "d", url))
        assert got.kind is TrackResult.REFUSED, got
    assert held(client, vid)["thumbnailFileName"] == "thumbnail.jpg"


def test_a_token_protected_library_serves_the_custom_thumbnail_only_with_a_cdn_token(launch, web, files):
    sim, client, provider, creds = setup(launch, web, protected=True)
    vid = provider.create(row("lib/9"), "https://m.example/a.mp4?duration=10").remote_id
    image = png()
    url = files.route("/p.png", body(image))
    assert (
        provider.set_thumbnail(vid, ThumbnailUpload(image, "image/png", "png", "d", url)).kind is TrackResult.ATTACHED
    )
    name = held(client, vid)["thumbnailFileName"]
    at = f"{sim.url}{media.PREFIX}bunny/{vid}/{name}"
    assert web.get(at, timeout=5).status_code == 403
    expires = 4_000_000_000
    token = cdn_token(creds["token_key"], f"/{vid}/", expires, {"token_path": f"/{vid}/"})
    signed = web.get(at, params={"token": token, "token_path": f"/{vid}/", "expires": expires}, timeout=5)
    assert signed.status_code == 200 and signed.content == image


def test_chapters_are_written_on_the_video_in_whole_seconds_and_read_back(launch, web):
    _sim, client, provider, _, vid = made(launch, web)
    assert provider.chapters_of(vid, "en").count == 0
    chapters = (Chapter(0.0, "Intro"), Chapter(12.7, "Demo"), Chapter(30.2, "Questions"))
    upload = ChaptersUpload(chapters, chapters_webvtt(chapters, 42.6), "en", 42.6)
    assert provider.set_chapters(vid, upload).kind is TrackResult.ATTACHED
    assert held(client, vid)["chapters"] == [
        {"title": "Intro", "start": 0, "end": 12},
        {"title": "Demo", "start": 12, "end": 30},
        {"title": "Questions", "start": 30, "end": 43},
    ]
    assert provider.chapters_of(vid, "en").count == 3
    bad = client.update(vid, {"chapters": [{"title": "", "start": 0, "end": 1}]})
    assert bad.status_code == 400


def test_a_collection_is_created_found_again_by_its_name_and_holds_the_videos_placed_in_it(launch, web):
    _sim, client, provider, _creds, vid = made(launch, web)
    other = provider.create(row("lib/2", privacy="public"), "https://m.example/b.mp4?duration=5").remote_id
    assert provider.find_collection("Talks 2019", "k1") is None
    created = provider.create_collection("Talks 2019", "folder", "k1")
    assert created.kind is TrackResult.ATTACHED and created.remote_track_id
    cid = created.remote_track_id
    provider.create_collection("Talks 2019 extra", "folder", "k2")  # a name the search also matches
    found = provider.find_collection("Talks 2019", "k1")
    assert found is not None and found.remote_id == cid  # exactly that name, not the longer one
    assert provider.placed_in(vid, cid) is False
    for video in (vid, other):
        assert provider.place(video, cid, None).kind is TrackResult.ATTACHED
    assert provider.placed_in(vid, cid) is True
    assert sorted(provider.collection_members(cid)) == sorted([vid, other])
    listed = web.get(client.url(f"/collections/{cid}"), headers=client.headers, timeout=5).json()
    assert (listed["name"], listed["videoCount"]) == ("Talks 2019", 2)
    assert {v["guid"] for v in client.list(collection=cid).json()["items"]} == {vid, other}


def test_the_publish_time_has_no_field_at_bunny_and_is_noted_at_the_create(launch, web):
    _sim, _client, provider, _ = setup(launch, web, protected=False)
    made = provider.create(
        row("lib/p", privacy="public", published_at="2019-05-01T10:00:00Z"), "https://m.example/p.mp4"
    )
    assert "published_at: not carried by bunny (kept in the ledger)" in made.notes
