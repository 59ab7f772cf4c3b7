"""The e2e readers of what a target holds of a video's extras (tests/e2e/held: api.video, Bunny Stream, Mux), held to
what our own provider adapters set on each target's simulator: a thumbnail (a real JPEG), chapters and, where the
target keeps them, collections, each read back through the platform's own API and delivery URLs as a player reads
them. A video with nothing set reads as HeldExtras(), so a reader that returned nothing would fail here."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from migrator.extras import chapters_webvtt, digest
from migrator.messages import AssetMessage
from migrator.providers import AssetRef, build
from migrator.providers.extras import ChaptersLook, ChaptersUpload, ThumbnailUpload
from migrator.row_extras import Chapter, Collection
from migrator.trackfetch import FetchPolicy
from migrator.tracks import TrackResult

from infra.accounts import account
from infra.sim import media
from infra.sim.platforms.wistia_extras import named_jpeg
from tests.e2e.held import HeldExtras, collections_of, extras_of
from tests.e2e.held.apivideo import CollectionTags, collection_tags
from tests.sim.support import wait_for
from tests.sim.test_bunny import ready as bunny_ready
from tests.sim.test_bunny import row as bunny_row
from tests.sim.test_bunny import setup as bunny_setup
from tests.track_files import FileServer, body

CHAPTERS = (Chapter(0.0, "Intro"), Chapter(12.5, "The demo — part 2"), Chapter(30.0, "Questions"))
AS_SET = ((0.0, "Intro"), (12.5, "The demo — part 2"), (30.0, "Questions"))
DURATION_S = 42.5
SOURCE = f"https://media.example.com/a.mp4?duration={DURATION_S}"


@pytest.fixture
def files():
    with FileServer() as server:
        yield server


def poster() -> bytes:
    """A real JPEG of its own, not the simulators' default frame (media.THUMBNAIL), so a custom one shows."""
    image = named_jpeg("held-extras poster")
    assert image[:3] == b"\xff\xd8\xff" and image != media.THUMBNAIL
    return image


def upload(duration_s: float = DURATION_S) -> ChaptersUpload:
    return ChaptersUpload(CHAPTERS, chapters_webvtt(CHAPTERS, duration_s), "en", duration_s)


def made(provider, asset_id: str, source: str = SOURCE, **fields) -> str:
    """A video made by our adapter from a row, waited for until ready."""
    row = AssetMessage(asset_id, source, **fields)
    remote_id = provider.create(AssetRef(asset_id, details=row), source).remote_id
    assert remote_id, asset_id
    assert wait_for(lambda: provider.poll(asset_id, remote_id).video.target is not None, timeout=5)
    return remote_id


# --- api.video ------------------------------------------------------------------------------------------------


@pytest.fixture
def apivideo(launch):
    acct = account("apivideo")
    sim = launch("apivideo", **acct.sim)
    provider = build("apivideo", sim.url, lambda: acct.credentials)
    provider.http.session.trust_env = False
    return sim, provider


@pytest.mark.parametrize("privacy", ["public", "private"])  # a private video's links: a session, then `avh`
def test_apivideo_reads_the_uploaded_thumbnail_its_chapters_and_the_collections_as_tags(apivideo, privacy):
    sim, provider = apivideo
    folder = Collection("f1", "Talks 2019", "folder", 2)
    vid = made(provider, "lib/1", privacy=privacy, tags=("talks",), collections=(folder,))
    bare = made(provider, "lib/2", privacy=privacy)
    image = poster()
    assert provider.set_thumbnail(vid, ThumbnailUpload(image, "image/jpeg", "jpg", digest(image))).kind is (
        TrackResult.ATTACHED
    )
    assert provider.set_chapters(vid, upload()).kind is TrackResult.ATTACHED
    assert extras_of("apivideo", sim, vid) == HeldExtras(thumbnail=image, thumbnail_as_uploaded=True, chapters=AS_SET)
    assert extras_of("apivideo", sim, bare) == HeldExtras()
    assert collections_of("apivideo", sim) == []  # no folders or playlists: tags and metadata instead
    assert collection_tags(sim, vid) == CollectionTags(("talks", "Talks 2019"), (folder.as_dict(),))
    assert collection_tags(sim, bare) == CollectionTags((), ())


def test_apivideo_a_picked_frame_replaces_the_image_and_reads_as_no_custom_thumbnail(apivideo):
    sim, provider = apivideo
    vid = made(provider, "lib/3", privacy="public")
    image = poster()
    provider.set_thumbnail(vid, ThumbnailUpload(image, "image/jpeg", "jpg", digest(image)))
    assert extras_of("apivideo", sim, vid).thumbnail == image
    assert provider.set_thumbnail_time(vid, 12.5).kind is TrackResult.ATTACHED
    # The video object names no picked time: the frame shows, and no time can be read back.
    assert extras_of("apivideo", sim, vid) == HeldExtras()


# --- Bunny Stream ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("protected", [True, False])  # token authentication on: the pull zone wants a CDN token
def test_bunny_reads_the_fetched_thumbnail_whole_second_chapters_and_every_collection(launch, web, files, protected):
    sim, _client, provider, _creds = bunny_setup(launch, web, protected=protected)
    vid = provider.create(bunny_row("lib/1", privacy="public"), SOURCE).remote_id
    other = provider.create(bunny_row("lib/2", privacy="public"), SOURCE).remote_id
    bare = provider.create(bunny_row("lib/3", privacy="public"), SOURCE).remote_id
    for asset_id, remote_id in (("lib/1", vid), ("lib/2", other), ("lib/3", bare)):
        assert bunny_ready(provider, asset_id, remote_id).target is not None
    image = poster()
    url = files.route("/poster.jpg", body(image, headers={"Content-Type": "image/jpeg"}))
    set_image = provider.set_thumbnail(vid, ThumbnailUpload(image, "image/jpeg", "jpg", digest(image), url))
    assert set_image.kind is TrackResult.ATTACHED
    chapters = (Chapter(0.0, "Intro"), Chapter(12.7, "Demo"), Chapter(30.2, "Questions"))
    written = ChaptersUpload(chapters, chapters_webvtt(chapters, DURATION_S), "en", DURATION_S)
    assert provider.set_chapters(vid, written).kind is TrackResult.ATTACHED
    talks = provider.create_collection("Talks 2019", "folder", "k1").remote_track_id
    again = provider.create_collection("Talks 2019", "folder", "k2").remote_track_id  # a duplicate shows
    empty = provider.create_collection("Empty", "folder", "k3").remote_track_id
    for video in (vid, other):
        assert provider.place(video, talks, None).kind is TrackResult.ATTACHED
    held = extras_of("bunny", sim, vid)
    assert held == HeldExtras(thumbnail=image, chapters=((0.0, "Intro"), (12.0, "Demo"), (30.0, "Questions")))
    assert extras_of("bunny", sim, bare) == HeldExtras()
    found = collections_of("bunny", sim)
    shown = sorted((c.remote_id, c.name, frozenset(c.members), c.ordered) for c in found)
    assert shown == sorted(
        [
            (talks, "Talks 2019", frozenset({vid, other}), False),
            (again, "Talks 2019", frozenset(), False),
            (empty, "Empty", frozenset(), False),
        ]
    )
    assert len(next(c for c in found if c.remote_id == talks).members) == 2  # each once


def test_bunny_reads_every_page_of_collections_and_members(launch, web, monkeypatch):
    from tests.e2e.held import bunny as held_bunny

    sim, _client, provider, _creds = bunny_setup(launch, web, protected=False)
    monkeypatch.setattr(held_bunny, "PAGE_SIZE", 1)  # one item a page: every list takes several
    vids = [provider.create(bunny_row(f"lib/{n}", privacy="public"), SOURCE).remote_id for n in range(3)]
    made_ids = [provider.create_collection(f"C{n}", "folder", f"k{n}").remote_track_id for n in range(3)]
    for video in vids:
        assert provider.place(video, made_ids[0], None).kind is TrackResult.ATTACHED
    found = {c.remote_id: set(c.members) for c in collections_of("bunny", sim)}
    assert found == {made_ids[0]: set(vids), made_ids[1]: set(), made_ids[2]: set()}


# --- Mux ------------------------------------------------------------------------------------------------------


@pytest.fixture
def mux(launch, files):
    acct = account("mux")
    sim = launch("mux", **acct.sim)
    policy = FetchPolicy(test_origins=frozenset({files.origin}))
    provider = build("mux", sim.url, lambda: acct.credentials, track_policy=policy)
    provider.http.session.trust_env = False
    return sim, provider


@pytest.mark.parametrize("privacy", ["public", "private"])  # a signed playback id's chapters: with a token
def test_mux_reads_the_poster_time_and_the_chapters_track_mux_fetched(mux, files, privacy):
    sim, provider = mux
    vid = made(provider, "lib/1", privacy=privacy)
    bare = made(provider, "lib/2", privacy=privacy)
    policies = {p["policy"] for p in provider.http.send("GET", f"/video/v1/assets/{vid}").body["data"]["playback_ids"]}
    assert policies == {"public" if privacy == "public" else "signed"}
    assert provider.set_thumbnail_time(vid, 12.25).kind is TrackResult.ATTACHED
    handed = upload()
    _name, content, media_type = provider.chapters_file(handed)
    url = files.route("/handoff/chapters.json", body(content, headers={"Content-Type": media_type}))
    assert json.loads(content)[1]["start-time"] == 12.5  # the file Mux fetches: Apple's HLS chapter notation
    assert provider.set_chapters(vid, replace(handed, url=url)).kind is TrackResult.SUBMITTED
    assert wait_for(lambda: provider.chapters_of(vid, "en") == ChaptersLook(1))
    assert extras_of("mux", sim, vid) == HeldExtras(thumbnail=None, thumbnail_time_s=12.25, chapters=AS_SET)
    assert extras_of("mux", sim, bare) == HeldExtras()
    assert collections_of("mux", sim) == []  # no folders or playlists: kept in the ledger only
