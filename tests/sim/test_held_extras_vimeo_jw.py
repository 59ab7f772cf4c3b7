"""The end-to-end readers of what a Vimeo or JW Player target holds (tests/e2e/held: issue 42's "what the viewer
sees"), checked on the simulators: extras set through our own provider adapter (a thumbnail, chapters, collections
in a chosen order) are read back exactly, through the platform's API as a player or its own client reads them, and
a video with nothing set reads as nothing. A reader that read nothing fails here: every value is asserted."""

from __future__ import annotations

import struct

import pytest
from migrator.extras import chapters_webvtt, digest
from migrator.providers import build
from migrator.providers.extras import ChaptersUpload, ThumbnailUpload
from migrator.row_extras import Chapter
from migrator.tracks import TrackResult

from infra.accounts import account
from infra.sim import media
from tests.e2e.held import HeldCollection, HeldExtras, collections_of, extras_of
from tests.sim.support import wait_for
from tests.sim.test_jwplayer import ready, row
from tests.sim.test_vimeo_target_extras import made
from tests.track_files import FileServer, body

CHAPTERS = (Chapter(0.0, "Intro"), Chapter(12.5, "Demo"), Chapter(30.0, "Questions « Q&A »"))
HELD_CHAPTERS = ((0.0, "Intro"), (12.5, "Demo"), (30.0, "Questions « Q&A »"))


def jpeg(note: str) -> bytes:
    """A real JPEG (media.THUMBNAIL, 16x9) with a comment segment, so it is none of the simulators' own frames."""
    said = note.encode()
    return media.THUMBNAIL[:2] + b"\xff\xfe" + struct.pack(">H", len(said) + 2) + said + media.THUMBNAIL[2:]


def chapters_upload() -> ChaptersUpload:
    return ChaptersUpload(CHAPTERS, chapters_webvtt(CHAPTERS, 42.0), "en", 42.0)


@pytest.fixture
def target(launch):
    """target(name) -> (simulator, our provider adapter), on a made-up account of that platform (as the stacks'
    accounts are made: JW's property signs its URLs)."""

    def start(name: str):
        acct = account(name)
        sim = launch(name, **acct.sim)
        provider = build(name, sim.url, lambda: acct.credentials)
        provider.http.session.trust_env = False
        return sim, provider

    return start


@pytest.fixture
def files():
    with FileServer() as server:
        yield server


def placed_in_order(provider, collection_id: str, placements: list[tuple[int, str]]) -> None:
    """Each placement, then the order of those placed so far by position: as the tracks worker places them."""
    done: list[tuple[int, str]] = []
    for position, remote in placements:
        assert provider.place(remote, collection_id, position).kind is TrackResult.ATTACHED
        done.append((position, remote))
        ordered = [r for _, r in sorted(done)]
        assert provider.order_collection(collection_id, ordered).kind is TrackResult.ATTACHED


def test_vimeo_reads_the_active_picture_the_chapters_and_the_folders_and_showcases_in_order(target):
    sim, provider = target("vimeo")
    first, second, blank = made(sim, provider, 3)
    image = jpeg("vimeo picture")
    upload = ThumbnailUpload(image, "image/jpeg", "jpg", digest(image))
    assert provider.set_thumbnail(first, upload).kind is TrackResult.ATTACHED
    assert provider.set_chapters(first, chapters_upload()).kind is TrackResult.ATTACHED
    folder = provider.create_collection("Course folder", "folder", "k-folder").remote_track_id
    showcase = provider.create_collection("Best of « 2021 »", "showcase", "k-showcase").remote_track_id
    assert folder and showcase
    placed_in_order(provider, folder, [(0, first)])
    placed_in_order(provider, showcase, [(1, first), (0, second)])  # placed last, ordered first

    held = extras_of("vimeo", sim, first)
    assert held == HeldExtras(thumbnail=image, thumbnail_as_uploaded=True, chapters=HELD_CHAPTERS)
    assert held.thumbnail != media.THUMBNAIL  # the picture uploaded, not the video's own frame
    assert extras_of("vimeo", sim, blank) == HeldExtras()
    assert extras_of("vimeo", sim, second).thumbnail is None
    assert collections_of("vimeo", sim) == [
        HeldCollection(folder, "Course folder", (first,), ordered=False),
        HeldCollection(showcase, "Best of « 2021 »", (second, first), ordered=True),
    ]


def test_jwplayer_reads_the_delivered_poster_the_chapters_track_and_the_playlists_in_order(target, origin, files):
    sim, provider = target("jwplayer")
    assert sim.config.signing_secret  # the property signs: the reader signs its Delivery API reads
    media_ids = []
    for n in range(3):
        made = provider.create(row(f"lib/{n}", origin, privacy="public"), f"{origin.url}/ok.mp4").remote_id
        ready(provider, f"lib/{n}", made)
        media_ids.append(made)
    first, second, blank = media_ids
    image = jpeg("jw poster")
    url = files.route("/poster.jpg", body(image, headers={"Content-Type": "image/jpeg"}))
    upload = ThumbnailUpload(image, "image/jpeg", "jpg", digest(image), url)
    assert provider.set_thumbnail(first, upload).kind is TrackResult.ATTACHED
    assert provider.set_chapters(first, chapters_upload()).kind is TrackResult.SUBMITTED
    assert provider.chapters_of(first, "en").count == 1  # read by JW, published
    playlist = provider.create_collection("Course « 1 »", "playlist", "k1").remote_track_id
    assert playlist
    placed_in_order(provider, playlist, [(1, first), (0, second)])

    assert wait_for(lambda: extras_of("jwplayer", sim, first).thumbnail is not None, step=0.1)  # JW fetches it later
    held = extras_of("jwplayer", sim, first)
    assert held == HeldExtras(thumbnail=image, thumbnail_as_uploaded=True, chapters=HELD_CHAPTERS)
    assert extras_of("jwplayer", sim, blank) == HeldExtras()  # its poster is JW's own frame: no custom one
    assert collections_of("jwplayer", sim) == [HeldCollection(playlist, "Course « 1 »", (second, first), ordered=True)]
