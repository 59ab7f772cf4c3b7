"""What a Vimeo video shows besides its file (issue 42), on the "vimeo" simulator: our VimeoProvider sets the
thumbnail as the video's active picture, writes its chapters, makes folders and showcases and places videos in them
in source order; each read back from what the simulator holds and serves at the end (the picture's bytes at its link,
the chapters, the showcase's arrangement), with answers lost on the way and nothing made twice.

The passes are driven as the tracks worker drives them (extrawork.ExtraPasses): a first pass, then a look before each
pass after it; a collection is looked up, then made, its placements each ordering the members placed so far."""

from __future__ import annotations

import pytest
from migrator.messages import AssetMessage
from migrator.providers import AssetRef
from migrator.providers.extras import ChaptersUpload, ThumbnailUpload
from migrator.providers.vimeo import VimeoProvider
from migrator.row_extras import Chapter
from migrator.states import State
from migrator.tracks import TrackOutcome, TrackResult

from infra.accounts import account
from tests.sim.support import wait_for
from tests.sim.test_sdk_apivideo_extras import png

TRIES = 40


@pytest.fixture
def vimeo(launch):
    def start(**config):
        acct = account("vimeo")
        sim = launch("vimeo", **acct.sim, **{"processing_delay_s": 0.05, **config})
        provider = VimeoProvider(sim.url, lambda: acct.credentials)
        provider.http.session.trust_env = False
        return sim, provider

    return start


def made(sim, provider, n: int = 1) -> list[str]:
    """`n` ready videos."""
    ids = []
    for i in range(n):
        row = AssetMessage(f"lib/{i}", "https://media.example.com/a.mp4?duration=40", title=f"Video {i}")
        ids.append(provider.create(AssetRef(f"lib/{i}", row.title, 0, row), row.source_url).remote_id)

    def ready() -> bool:
        videos = [provider.poll(f"lib/{i}", v).video for i, v in enumerate(ids)]
        return all(video is not None and video.target is State.READY for video in videos)

    assert wait_for(ready, timeout=5)
    return ids


def held(sim, vid: str) -> dict:
    with sim._lock:
        return sim._store.videos[vid].extras


def worked(first, look=None) -> int:
    """Passes until settled, as the worker makes them (a look before every pass past the first); how many."""
    for attempt in range(1, TRIES + 1):
        if attempt > 1 and look is not None:
            seen = look()
            if isinstance(seen, TrackOutcome):
                assert seen.kind is TrackResult.TRANSIENT, seen
                continue
            if seen:
                return attempt
        outcome = first()
        if outcome.kind in (TrackResult.ATTACHED, TrackResult.NOTED):
            return attempt
        assert outcome.kind is TrackResult.TRANSIENT, outcome
    raise AssertionError(f"not settled in {TRIES} passes")


def test_a_thumbnail_is_the_videos_active_picture_served_at_its_link_once_despite_lost_answers(vimeo, web):
    sim, provider = vimeo(track_lose_rate=0.5, seed=7)
    vids = made(sim, provider, 3)
    image = png(8, 6)
    upload = ThumbnailUpload(image, "image/png", "png", "d")
    for vid in vids:

        def look(v=vid) -> bool | TrackOutcome:
            seen = provider.thumbnail_state(v)
            return seen if isinstance(seen, TrackOutcome) else seen.custom

        worked(lambda v=vid: provider.set_thumbnail(v, upload), look)
    assert sim.stats()["lost_track_responses"] > 0, "no answer was lost: the test would prove nothing"
    sim.patch_config({"track_lose_rate": 0.0})
    for vid in vids:
        pictures = held(sim, vid)["pictures"]
        assert [(p["active"], p["content"]) for p in pictures.values()] == [(True, image)]  # one picture, ours
        shown = provider.http.send("GET", f"/videos/{vid}").body["pictures"]
        assert shown["type"] == "custom" and shown["active"] is True
        served = web.get(shown["sizes"][0]["link"], timeout=5)
        assert served.status_code == 200 and served.content == image and served.headers["Content-Type"] == "image/png"
        look = provider.thumbnail_state(vid)
        assert look.custom is True and look.digest == shown["uri"].rsplit("/", 1)[1]


def test_a_picture_whose_image_never_came_cannot_be_made_active_and_the_look_deletes_it(vimeo):
    sim, provider = vimeo()
    [vid] = made(sim, provider)
    half = provider.http.send("POST", f"/videos/{vid}/pictures").body
    refused = provider.http.send("PATCH", half["uri"], json_body={"active": True})
    assert refused.status == 400
    assert provider.thumbnail_state(vid).custom is False
    assert held(sim, vid)["pictures"] == {}


def test_chapters_are_written_once_each_in_timecode_order_despite_lost_answers(vimeo):
    sim, provider = vimeo(track_lose_rate=0.5, seed=3)
    [vid] = made(sim, provider)
    chapters = (Chapter(0.0, "Intro"), Chapter(12.5, "Demo « live »"), Chapter(30.0, "Questions"), Chapter(38, "End"))
    upload = ChaptersUpload(chapters, b"", "en", 40.0)

    def look() -> bool | TrackOutcome:  # a list cut short has no chapter at 0 yet: not taken for a whole one
        seen = provider.chapters_of(vid, "en")
        return seen if isinstance(seen, TrackOutcome) else seen.count > 0

    worked(lambda: provider.set_chapters(vid, upload), look)
    assert sim.stats()["lost_track_responses"] > 0, "no answer was lost: the test would prove nothing"
    sim.patch_config({"track_lose_rate": 0.0})
    listed = provider.http.send("GET", f"/videos/{vid}/chapters", params={"per_page": "100"}).body["data"]
    expected = [(0, "Intro"), (12.5, "Demo « live »"), (30, "Questions"), (38, "End")]
    assert [(c["timecode"], c["title"]) for c in listed] == expected
    assert provider.set_chapters(vid, upload).kind is TrackResult.ATTACHED  # a pass again writes nothing
    assert len(held(sim, vid)["chapters"]) == 4 and provider.chapters_of(vid, "en").count == 4


def place_all(provider, cid: str, placements: list[tuple[str, int]]) -> None:
    """Each placement as the worker makes it: placed (a look first on a pass past the first), then the members
    placed so far ordered by their source positions."""
    members: dict[str, int] = {}
    for vid, position in placements:
        worked(lambda v=vid, p=position: provider.place(v, cid, p), lambda v=vid: provider.placed_in(v, cid))
        members[vid] = position
        ordered = [v for v, _ in sorted(members.items(), key=lambda pair: pair[1])]
        worked(lambda o=ordered: provider.order_collection(cid, o))


def test_a_showcase_is_made_once_and_holds_its_videos_in_source_order_despite_lost_answers(vimeo):
    sim, provider = vimeo(track_lose_rate=0.5, seed=11)
    a, b, c = made(sim, provider, 3)
    made_ids: list[str] = []

    def make() -> TrackOutcome:
        outcome = provider.create_collection("Onboarding « 2021 »", "showcase", "k1")
        made_ids.append(outcome.remote_track_id or "")
        return outcome

    assert provider.find_collection("Onboarding « 2021 »", "k1") is None
    worked(make)
    cid = made_ids[-1]
    assert cid.startswith("albums/")
    place_all(provider, cid, [(c, 2), (a, 0), (b, 1)])  # placed as they came, ordered as the source had them
    assert sim.stats()["lost_track_responses"] > 0
    sim.patch_config({"track_lose_rate": 0.0})
    with sim._lock:
        albums = sim._store.account["vimeo_albums"]
    assert [(s["name"], s["sort"]) for s in albums.values()] == [("Onboarding « 2021 »", "arranged")]  # one
    assert albums[cid.split("/")[1]]["videos"] == [a, b, c]
    assert provider.collection_members(cid) == (a, b, c)  # as a player reads it: sort=manual
    assert provider.create_collection("Onboarding « 2021 »", "album", "k1").remote_track_id == cid


def test_a_folder_holds_its_videos_and_a_video_stays_in_the_first_folder_it_was_placed_in(vimeo):
    sim, provider = vimeo()
    a, b = made(sim, provider, 2)
    first = provider.create_collection("Webinars", "folder", "f1").remote_track_id
    second = provider.create_collection("Webinars", "project", "f2").remote_track_id
    assert first == second and first.startswith("projects/")  # one folder of a name: the second adopts it
    other = provider.create_collection("Webinars", "showcase", "s1").remote_track_id
    assert other.startswith("albums/")  # a showcase of the same name is another collection
    archive = provider.create_collection("Archive", "folder", "f3").remote_track_id
    assert provider.placed_in(a, first) is False
    for vid in (a, b):
        assert provider.place(vid, first, None).kind is TrackResult.ATTACHED
    assert provider.placed_in(a, first) is True
    noted = provider.place(a, archive, None)
    assert noted.kind is TrackResult.NOTED and "one folder" in noted.note
    assert sorted(provider.collection_members(first)) == sorted([a, b])
    assert provider.collection_members(archive) == ()
    assert held(sim, a)["folder"] == first.split("/")[1]
    assert provider.order_collection(first, [b, a]).kind is TrackResult.ATTACHED  # a folder keeps no order
