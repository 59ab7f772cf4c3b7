"""What a JW Player media shows besides its file (issue 42), on the "jwplayer" simulator: a custom poster JW fetches
from a link and promotes, a chapters text track uploaded to its link, manual playlists holding their media in source
order, the original publish time; driven by our JwPlayerProvider and read back as a player would (the poster's
bytes, the chapters file's cues) or as the Management API holds it (a playlist's media in order), at the end.
A lost answer is retried through the look each operation has, and nothing is made twice."""

from __future__ import annotations

import io

import pytest
import requests
import webvtt
from migrator.extras import chapters_webvtt, digest
from migrator.providers.extras import ChaptersUpload, ThumbnailUpload
from migrator.row_extras import Chapter
from migrator.tracks import TrackResult

from tests.sim.support import wait_for
from tests.sim.test_jwplayer import held, ready, row, target  # noqa: F401 (target: the fixture)
from tests.sim.test_sdk_apivideo_extras import png
from tests.track_files import FileServer, body

CHAPTERS = (Chapter(0.0, "Intro"), Chapter(12.5, "Demo"), Chapter(30.0, "Questions « Q&A »"))


@pytest.fixture
def files():
    with FileServer() as server:
        yield server


def made(target, origin, asset_id: str = "lib/1", **config):  # noqa: F811 (the fixture's value)
    sim, provider = target(**config)
    remote = provider.create(row(asset_id, origin, privacy="public"), f"{origin.url}/ok.mp4").remote_id
    ready(provider, asset_id, remote)
    return sim, provider, remote


def poster(sim, remote: str) -> bytes:
    return requests.get(f"{sim.url}/_play/jwplayer/{remote}/poster.jpg", timeout=5).content


def customs(sim, remote: str) -> list[dict]:
    return [t for t in sim._store.account.get("jw_thumbnails", {}).values() if t["media"] == remote]


def test_a_poster_is_fetched_from_its_link_promoted_and_served_as_the_medias_poster(target, origin, files):  # noqa: F811
    sim, provider, remote = made(target, origin)
    frame = poster(sim, remote)
    assert provider.thumbnail_state(remote).custom is False  # JW's own frame is listed, and is not ours
    image = png(16, 9)
    url = files.route("/poster.png", body(image, headers={"Content-Type": "image/png"}))
    got = provider.set_thumbnail(remote, ThumbnailUpload(image, "image/png", "png", digest(image), url))
    assert got.kind is TrackResult.ATTACHED and got.remote_track_id
    assert wait_for(lambda: poster(sim, remote) == image)  # what a player gets, once JW has read the link
    assert frame != image and files.seen[-1][0] == "/poster.png"
    look = provider.thumbnail_state(remote)
    assert (look.custom, look.digest) == (True, got.remote_track_id)
    item = requests.get(f"{sim.url}/_play/jwplayer/{remote}/media.json", timeout=5).json()["playlist"][0]
    assert requests.get(item["image"], timeout=5).content == image  # the Delivery API's "Poster image URL"


def test_a_lost_answer_to_the_thumbnails_create_is_promoted_by_the_look_and_nothing_is_made_twice(
    target,  # noqa: F811
    origin,
    files,
):
    sim, provider, remote = made(target, origin)
    image = png(8, 8)
    url = files.route("/p.png", body(image))
    sim.patch_config({"track_lose_rate": 1.0})
    lost = provider.set_thumbnail(remote, ThumbnailUpload(image, "image/png", "png", digest(image), url))
    assert lost.kind is TrackResult.TRANSIENT  # made at JW; its answer never came, so it was never promoted
    sim.patch_config({"track_lose_rate": 0.0})
    assert [t["poster"] for t in customs(sim, remote)] == [False]
    look = provider.thumbnail_state(remote)  # the tracks worker's look on its next pass
    assert look.custom is True and [t["poster"] for t in customs(sim, remote)] == [True]
    assert wait_for(lambda: poster(sim, remote) == image) and len(customs(sim, remote)) == 1


def test_chapters_are_a_text_track_of_their_kind_delivered_to_players_and_no_caption(target, origin):  # noqa: F811
    sim, provider, remote = made(target, origin)
    assert provider.chapters_of(remote, "en").count == 0
    upload = ChaptersUpload(CHAPTERS, chapters_webvtt(CHAPTERS, 42.0), "en", 42.0)
    submitted = provider.set_chapters(remote, upload)
    assert submitted.kind is TrackResult.SUBMITTED and submitted.remote_track_id
    assert provider.chapters_of(remote, "en").count == 1  # published once read (auto_publish)
    assert provider.chapters_of(remote, "fr").count == 0
    assert provider.track_list(remote).tracks == ()  # not a caption: an English caption still goes up
    item = requests.get(f"{sim.url}/_play/jwplayer/{remote}/media.json", timeout=5).json()["playlist"][0]
    (track,) = item["tracks"]
    assert track["kind"] == "chapters" and track["label"] == "Chapters"
    served = requests.get(track["file"], timeout=5).content.decode("utf-8")  # WebVTT is UTF-8, whatever the type says
    cues = webvtt.from_buffer(io.StringIO(served)).captions
    assert [(c.start, c.text) for c in cues] == [
        ("00:00:00.000", "Intro"),
        ("00:00:12.500", "Demo"),
        ("00:00:30.000", "Questions « Q&A »"),
    ]


def test_a_lost_chapters_create_leaves_one_track_in_the_end(target, origin):  # noqa: F811
    sim, provider, remote = made(target, origin)
    upload = ChaptersUpload(CHAPTERS, chapters_webvtt(CHAPTERS, 42.0), "en", 42.0)
    sim.patch_config({"track_lose_rate": 1.0})
    assert provider.set_chapters(remote, upload).kind is TrackResult.TRANSIENT  # made, no link to put the file to
    sim.patch_config({"track_lose_rate": 0.0})
    assert [t.status for t in sim._store.videos[remote].texts] == ["created"]
    assert provider.chapters_of(remote, "en").count == 0  # the look clears the track its file never reached
    assert provider.set_chapters(remote, upload).kind is TrackResult.SUBMITTED
    assert provider.chapters_of(remote, "en").count == 1
    assert [t.status for t in sim._store.videos[remote].texts] == ["ready"]


def test_a_playlist_is_made_once_and_holds_its_media_in_source_order(target, origin):  # noqa: F811
    sim, provider = target()
    remotes = []
    for n in range(3):
        remote = provider.create(row(f"lib/{n}", origin, privacy="public"), f"{origin.url}/ok.mp4").remote_id
        remotes.append(remote)
    sim.patch_config({"track_lose_rate": 1.0})
    assert provider.create_collection("Course « 1 »", "playlist", "k1").kind is TrackResult.TRANSIENT
    sim.patch_config({"track_lose_rate": 0.0})
    found = provider.find_collection("Course « 1 »", "k1")  # the lost create, found by our reference
    assert found is not None and len(sim._store.account["jw_playlists"]) == 1
    pid = found.remote_id
    placed = []
    for position, remote in ((2, remotes[0]), (0, remotes[1]), (1, remotes[2])):  # placed in another order
        assert provider.place(remote, pid, position).kind is TrackResult.ATTACHED
        placed.append((position, remote))
        ordered = [r for _, r in sorted(placed)]
        assert provider.order_collection(pid, ordered).kind is TrackResult.ATTACHED
    assert provider.collection_members(pid) == (remotes[1], remotes[2], remotes[0])
    assert provider.placed_in(remotes[0], pid) is True
    assert provider.place(remotes[0], pid, 2).kind is TrackResult.ATTACHED  # again: still once
    assert sim._store.account["jw_playlists"][pid]["values"] == [remotes[1], remotes[2], remotes[0]]


def test_the_original_publish_time_is_the_medias_publish_start_date(target, origin):  # noqa: F811
    sim, provider = target()
    asset = row("lib/p", origin, privacy="public", published_at="2019-05-01T10:00:00Z")
    made_ = provider.create(asset, asset.details.source_url)
    assert held(sim, made_.remote_id)["publish_start_date"] == "2019-05-01T10:00:00Z"
    assert not any(n.startswith("published_at") for n in made_.notes)
    video = ready(provider, "lib/p", made_.remote_id)
    assert video.privacy == "public"  # a start in the past holds nothing back
