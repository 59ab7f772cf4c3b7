"""JW Player → Mux end to end: template.yaml deployed with Mux as the target and every source's credentials, `migrator
inventory --from jwplayer` against the JW Player simulator's library (a property with URL signing on: every Delivery
API request and file signed with its secret just before the create), `migrator load`, and the real queue, uploader,
tracks worker, webhook and ledger. Every fetchable media ready at Mux with its title and captions (read back from the
Mux simulator), every unfetchable one reported with its reason and never sent, a media still processing left for the
next sweep, no duplicate video."""

from __future__ import annotations

import time

import pytest
import requests

from infra.sim.library import item
from infra.sim.platforms.jwplayer_library import FAULTS, library_index
from tests.e2e.source_pairs import Target, assert_never_sent

pytestmark = pytest.mark.e2e


def held(sources, row: dict):
    """The library media a row names, as the JW Player simulator holds it."""
    return item(sources.sims["jwplayer"].config, library_index(row["metadata"]["source_id"]), FAULTS)


def mux_asset(target: Target, remote_id: str) -> dict:
    creds = target.sim.config
    answer = requests.get(
        f"{target.sim.url}/video/v1/assets/{remote_id}", auth=(creds.token_id, creds.token_secret), timeout=10
    )
    return answer.json()["data"]


def both_ready(tracks: list[dict]) -> bool:
    return sorted(t["language"] for t in tracks) == ["en", "fr"] and all(t["status"] == "ready" for t in tracks)


def test_a_jwplayer_library_moves_to_mux_with_titles_captions_and_privacy(sources, targets, migrate, aws):
    target = targets("mux")
    rows, unfetchable, items = migrate("jwplayer", target)
    # 20 media: every fifth unfetchable in turn (failed, still processing, audio): 3 named, 1 left pending.
    assert len(rows) == 16 and len(unfetchable) == 4
    reasons = {u["reason"].split(" (")[0].split(":")[0] for u in unfetchable}
    assert reasons == {"failed at the source", "not a video", "still processing at the source"}
    assert {items[r["id"]]["state"] for r in rows} == {"ready"}
    assert_never_sent(aws, target, unfetchable)
    assert target.sim.stats()["duplicate_videos"] == 0
    for row in rows:
        assert row["title"] == held(sources, row).title
        assert mux_asset(target, items[row["id"]]["remote_id"])["meta"]["title"] == held(sources, row).title
    # Privacy: the property signs its URLs, so nothing it held is public at Mux; a closed window is private.
    assert {row["privacy"] for row in rows} == {"signed", "private"}
    for row in rows:
        policies = {p["policy"] for p in mux_asset(target, items[row["id"]]["remote_id"])["playback_ids"]}
        assert policies == {"signed"}, row["id"]
    captioned = [row for row in rows if row.get("tracks")]
    assert captioned, "no captioned media: the test would prove nothing"
    deadline = time.time() + 120
    while time.time() < deadline:
        held_tracks = {t["video_id"]: t["tracks"] for t in target.sim.text_tracks()}
        # Both languages there and ready: a video whose first track is ready and second not yet made is not done.
        ready = [r for r in captioned if both_ready(held_tracks.get(items[r["id"]]["remote_id"], []))]
        if len(ready) == len(captioned):
            break
        time.sleep(2)
    for row in captioned:
        tracks = held_tracks[items[row["id"]]["remote_id"]]
        assert both_ready(tracks), tracks
        assert all(t["content"].startswith("WEBVTT") for t in tracks)
