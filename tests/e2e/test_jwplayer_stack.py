"""JW Player as a target end to end: template.yaml deployed with `Provider=jwplayer` against the JW Player simulator
(a property with URL signing on, its secret in the stack's credentials), driven through the real queue, uploader,
webhook route (JWT-signed events, forgeries among them), tracks worker, reconcile and CLI:
- a batch migrates once despite lost create answers and a worker that crashed after its create;
- every field of a row is held by the simulator in its own place, and privacy is never public by accident (a signed
  row's manifest refused without our signature, served with the one `migrator verify` makes);
- caption tracks attached (fetched by JW from their URL), and no duplicate anywhere;
- Brightcove → JW Player: a library migrated with its titles, what cannot be fetched never sent, and what a viewer
  sees (issue 42): each poster, chapters track and playlist held by JW as Brightcove holds them, the playlists'
  media in Brightcove's order, read back from the JW simulator, while a share of the extras' answers are lost.
"""

from __future__ import annotations

import json
import time

import pytest
import requests
from migrator.ledger import Claimed, Ledger
from migrator.messages import AssetMessage
from migrator.providers import AssetRef

from tests.conftest import unique
from tests.e2e import stacks as shared
from tests.e2e.conftest import wait_for_states
from tests.e2e.extras_pairs import SourceFiles, answers_lost, assert_entries_settled, assert_extras_held
from tests.e2e.source_pairs import assert_never_sent
from tests.e2e.test_tracks_stack import tracks_settled
from tests.e2e.test_uploader_stack import asset, send_all

pytestmark = pytest.mark.e2e
NAME = "jwplayer"
shared.PROVIDER_OPTIONS.setdefault(NAME, {})  # no create options of its own: the stack as _provider makes it


@pytest.fixture(scope="module")
def deployed(stacks, sources, track_files):
    made = stacks.get(f"provider:{NAME}", lambda: stacks._provider(NAME, sources, track_files))
    stacks.reset(made)
    made.sim.patch_config({"webhook_forged_rate": 0.5, "seed": 5})  # every other event preceded by a forgery
    return made


def held(deployed, remote_id: str) -> dict:
    with deployed.sim._lock:
        return json.loads(json.dumps(deployed.sim._store.videos[remote_id].request["metadata"]))


def test_a_batch_migrates_once_despite_lost_answers_and_a_crash_after_create(deployed, aws):
    sim, table = deployed.sim, deployed.outputs["LedgerTableName"]
    run = unique("jw")
    ids = [f"{run}/{i}" for i in range(10)]
    crashed = f"{run}/crashed"
    url = f"https://media.example.com/{crashed}.mp4?duration=9"
    made = deployed.client().create(AssetRef(crashed), url)
    past = time.time() - 600
    assert made.remote_id and isinstance(
        Ledger(table, aws("dynamodb")).claim(AssetMessage(crashed, url), past, past + 60, "dead-worker"), Claimed
    )
    before = sim.stats()
    sim.patch_config({"lose_rate": 0.3})
    send_all(aws("sqs"), deployed.outputs["QueueUrl"], [asset(i) for i in ids] + [asset(crashed, url)])
    items = wait_for_states(aws("dynamodb"), table, [*ids, crashed], {"ready"}, 180)
    sim.patch_config({"lose_rate": 0.0})
    grown = {k: v - before.get(k, 0) for k, v in sim.stats().items() if isinstance(v, int)}
    assert grown["lost_responses"] > 0 and sim.stats()["duplicate_videos"] == 0 and grown["videos"] == len(ids)
    assert items[crashed]["remote_id"] == made.remote_id  # found by its tag, not made again
    assert grown["webhooks_forged_sent"] > 0 and grown["webhooks_forged_accepted"] == 0


def test_every_field_is_held_in_its_place_and_a_signed_row_plays_only_with_our_signature(deployed, aws, cli):
    run = unique("jw-fields")
    rows = {
        f"{run}/public": {"privacy": "public"},
        f"{run}/private": {"privacy": "private"},
    }
    bodies = []
    for asset_id, extra in rows.items():
        doc = {"id": asset_id, "source_url": f"https://media.example.com/{asset_id}.mp4?duration=12", "title": "Talk"}
        doc |= {"description": "About it.", "tags": ["a", "b"], "metadata": {"speaker": "Ada"}, "folder": "talks"}
        bodies.append(json.dumps(doc | extra))
    send_all(aws("sqs"), deployed.outputs["QueueUrl"], bodies)
    items = wait_for_states(aws("dynamodb"), deployed.outputs["LedgerTableName"], list(rows), {"ready"}, 120)
    for asset_id, item in items.items():
        metadata = held(deployed, item["remote_id"])
        assert (metadata["title"], metadata["description"], metadata["tags"]) == ("Talk", "About it.", ["a", "b"])
        assert metadata["external_id"] == asset_id and metadata["custom_params"]["migration_ref"] == asset_id
        assert metadata["custom_params"]["speaker"] == "Ada" and metadata["custom_params"]["folder"] == "talks"
        assert "publish_start_date" not in metadata  # the property signs its URLs: published, and signed
    private = items[f"{run}/private"]
    playback = json.loads(private["playback_info"]) if isinstance(private.get("playback_info"), str) else None
    video = deployed.client().poll(f"{run}/private", private["remote_id"]).video
    assert video.privacy == "signed" and requests.get(video.playback["hls"], timeout=10).status_code == 403
    signed = deployed.client().signed_playback(playback or video.playback, 600, None)
    assert requests.get(signed.manifest_url, timeout=10).text.startswith("#EXTM3U")
    _code, out, err = cli("audit", "--json")
    report = json.loads(out)
    # JW signs a property's URLs for all its media: the public row is narrower there (never wider), and the
    # audit says so of it alone.
    assert report["duplicates"] == 0 and report["missing"] == 0, out + err
    drift = [f for f in report["findings"] if f["kind"] == "privacy"]
    assert [f["asset_id"] for f in drift] == [f"{run}/public"] and "signed at the provider" in drift[0]["detail"]


def test_caption_tracks_are_attached_once_each(deployed, aws, track_files):
    asset_id = unique("jw-tracks")
    tracks = [
        {"url": f"{track_files.origin}/fr.vtt", "language": "fr", "kind": "subtitles", "name": "Français"},
        {"url": f"{track_files.origin}/en.srt", "language": "en", "kind": "captions", "format": "srt"},
    ]
    doc = {"id": asset_id, "source_url": f"https://media.example.com/{asset_id}.mp4", "privacy": "public"}
    send_all(aws("sqs"), deployed.outputs["QueueUrl"], [json.dumps(doc | {"tracks": tracks})])
    table = deployed.outputs["LedgerTableName"]
    wait_for_states(aws("dynamodb"), table, [asset_id], {"ready"}, 120)
    item = tracks_settled(aws("dynamodb"), table, [asset_id])[asset_id]
    assert {e["state"] for e in item["track_states"].values()} == {"attached"}
    (video,) = [v for v in deployed.sim.text_tracks() if v["ref"] == asset_id]
    assert sorted((t["language"], t["status"], t["uploads"]) for t in video["tracks"]) == [
        ("en", "ready", 1),
        ("fr", "ready", 1),
    ]


def test_brightcove_moves_to_jwplayer_with_its_posters_chapters_and_playlists(sources, targets, migrate, aws, deployed):
    sources.sims["brightcove"].patch_config({"library_chapters_every": 2})  # every other video a chapters track
    target = targets(NAME)
    with answers_lost(aws, target.stack_name, target.sim, 0.15, 9):
        rows, unfetchable, items = migrate("brightcove", target, timeout_s=360)
        assert len(rows) + len(unfetchable) == 20 and unfetchable
        assert {items[r["id"]]["state"] for r in rows} == {"ready"}
        table = target.outputs["LedgerTableName"]
        assert_entries_settled(tracks_settled(aws("dynamodb"), table, [r["id"] for r in rows], timeout_s=360))
    carried = assert_extras_held(SourceFiles.of(sources), "brightcove", NAME, target.sim, table, aws("dynamodb"), rows)
    assert_never_sent(aws, target, unfetchable)
    for row in rows:
        assert held(deployed, items[row["id"]]["remote_id"])["title"] == row["title"]
    assert target.sim.stats()["duplicate_videos"] == 0
    # Brightcove's library (infra/sim/platforms/brightcove_library.py): a poster each, chapters on every other
    # video, playlists with their videos in order.
    assert carried.thumbnails >= len(rows) // 2 and carried.chapters >= 3, carried
    assert carried.places >= 2 and carried.ordered >= 1, carried
