"""What a viewer sees (issue 42) at the targets that take a poster time only, or nothing of it: Mux, Cloudflare Stream
and the seed's contract. A row with a thumbnail image, a poster time, chapters and two collections goes through the
tracks worker against the emulator's ledger and each target's simulator; what the target holds at the end is read
back from the simulator (the frame set, Mux's chapters served as a player reads them, the collections in the free
map), and the ledger's entries say what was carried and what was noted instead, nothing failed. The stack's bucket
is a file server here: the worker keeps and hands files through `stage_extra` as it does through S3."""

from __future__ import annotations

import pytest
from migrator.extras import collection_entry_key, collection_key
from migrator.fate import FateKind
from migrator.messages import AssetMessage
from migrator.sources.mux_extras import read_apple_chapters

from infra.sim import media
from tests.emulator.test_trackworker import CHAPTERED, FOLDERS, IMAGE, drive, extras_setup, ready_row, states
from tests.track_files import FileServer, body

pytestmark = pytest.mark.emulator

SOURCE = "https://media.example.com/a.mp4?duration=61"
NO_COLLECTIONS = {
    "mux": "mux keeps no collections: kept in the ledger only (Mux has no folders or playlists)",
    "cloudflare": "cloudflare keeps no collections: carried in meta.collections at the create (Stream has no folders"
    " or playlists)",
    "generic": "generic keeps no collections: carried in metadata.collections at the create (the seed contract has"
    " no collections)",
}


@pytest.fixture
def files():
    with FileServer() as server:
        yield server


def bucket(files) -> tuple[dict, object]:
    """The stack's bucket as the worker sees it: (what was put, by key; the put, answering a link to the file)."""
    held: dict[str, tuple[bytes, str]] = {}

    def put(key: str, content: bytes, media_type: str) -> str:
        held[key] = (content, media_type)
        return files.route(f"/bucket/{key}", body(content, headers={"Content-Type": media_type}))

    return held, put


@pytest.mark.parametrize("name", ["mux", "cloudflare", "generic"])
def test_a_thumbnail_chapters_and_collections_are_carried_where_documented_and_noted_elsewhere_nothing_failed(
    name, aws, table, files
):
    sim, provider, worker, clock = extras_setup(name, aws, table, files)
    held, worker.stage_extra = bucket(files)
    try:
        poster = files.route("/poster.png", body(IMAGE, headers={"Content-Type": "image/png"}))
        msg = AssetMessage(
            f"{name}/shown", SOURCE, privacy="public", thumbnail_url=poster, poster_time_s=12.25, chapters=CHAPTERED,
            collections=FOLDERS,
        )  # fmt: skip
        remote_id = ready_row(worker, provider, msg)
        assert drive(worker, clock, msg.asset_id).kind is FateKind.FINISHED
        entries = states(worker, msg.asset_id)
        first, second = (collection_entry_key(collection_key("inventory", c.id)) for c in FOLDERS)
        kept_image = f"the image is kept in the stack's bucket: kept/{remote_id}/thumbnail.png"
        kept_chapters = f"the chapters file (WebVTT) is kept in the stack's bucket: kept/{remote_id}/chapters.vtt"
        thumbnail = {
            "mux": f"mux takes a poster time only: set to 12.25 s; {kept_image}",
            "cloudflare": f"cloudflare takes a poster time only: set to 12.25 s; {kept_image}",
            "generic": f"generic takes no thumbnail image: {kept_image}",
        }[name]
        chapters = None if name == "mux" else f"{name} takes no chapters: {kept_chapters}"
        got = {key: (e["kind"], e["state"], e.get("note")) for key, e in entries.items()}
        assert got == {
            "thumbnail": ("thumbnail", "noted", thumbnail),
            "chapters": ("chapters", "attached" if name == "mux" else "noted", chapters),
            first: ("collection", "noted", NO_COLLECTIONS[name]),
            second: ("collection", "noted", NO_COLLECTIONS[name]),
        }
        assert "tracks_lane" not in worker.ledger.get(msg.asset_id)
        assert held[f"kept/{remote_id}/thumbnail.png"] == (IMAGE, "image/png")
        listed = [{"id": c.id, "name": c.name, "kind": c.kind, "position": c.position} for c in FOLDERS]
        if name == "mux":
            asset = provider.http.send("GET", f"/video/v1/assets/{remote_id}").body["data"]
            assert asset["thumbnail_time"] == 12.25
            (track,) = [t for t in asset["tracks"] if t["type"] == "text"]
            assert (track["text_type"], track["status"]) == ("chapters", "ready")
            assert held[f"handoff/{remote_id}/chapters.json"][1] == "application/json"
            pid = asset["playback_ids"][0]["id"]
            served = provider.http.session.get(f"{sim.url}{media.PREFIX}mux/{pid}/chapters/{track['id']}.json")
            assert [(c.start_s, c.title) for c in read_apple_chapters(served.json(), "en")] == [
                (c.start_s, c.title) for c in CHAPTERED
            ]
            adds = [r for r in sim.requests_log(ops=None) if r["op"] == "track_add"]
            assert len(adds) == 1  # the chapters track, once: the look found it ready
        elif name == "cloudflare":
            video = provider.http.send("GET", f"{provider._stream()}/{remote_id}").body["result"]
            assert video["thumbnailTimestampPct"] == round(12.25 / 61, 6)
            assert video["meta"]["collections"] == listed
            assert held[f"kept/{remote_id}/chapters.vtt"][0].startswith(b"WEBVTT")
        else:
            video = provider.http.send("GET", f"/videos/{remote_id}").body
            assert video["metadata"]["collections"] == listed
            assert held[f"kept/{remote_id}/chapters.vtt"][0].startswith(b"WEBVTT")
    finally:
        sim.stop()


def test_at_mux_a_poster_time_alone_is_set_once_the_asset_is_ready(aws, table, files):
    sim, provider, worker, clock = extras_setup("mux", aws, table, files)
    try:
        msg = AssetMessage("mux/timed", SOURCE, poster_time_s=30.5)
        remote_id = ready_row(worker, provider, msg)
        assert drive(worker, clock, msg.asset_id).kind is FateKind.FINISHED
        entry = states(worker, msg.asset_id)["thumbnail"]
        assert (entry["state"], entry["remote_track_id"]) == ("attached", "30.5")
        assert provider.http.send("GET", f"/video/v1/assets/{remote_id}").body["data"]["thumbnail_time"] == 30.5
    finally:
        sim.stop()
