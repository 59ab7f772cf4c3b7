"""Sources as the platforms behave, end to end: a Stream library of signed videos moves to Mux signed with every
caption, an api.video private library moves to Stream (which fetches with HEAD and range GETs), and a delta
after the platform finished processing lists what the last sweep left and moves it with its captions.
"""

from __future__ import annotations

import json

import pytest
from migrator_cli.main import main

from tests.e2e.source_pairs import assert_titles_carried, not_ready, track_errors, tracks_attached

pytestmark = pytest.mark.e2e


def test_a_stream_library_of_signed_videos_moves_to_mux_signed_with_every_caption(sources, targets, migrate, aws):
    """Sources, item 1: every Stream video that requires signed URLs was written off as unfetchable, so a private
    library did not move at all. Now each is listed signed, resolved with a downloadable token at the create,
    arrives signed at Mux, and its captions (text Stream serves through its API) reach Mux through the stack's
    staging bucket."""
    sources.sims["cloudflare"].patch_config(
        {"library_private_every": 1, "library_captions_every": 2, "library_unfetchable_every": 0}
    )
    target = targets("mux")
    rows, held_back, items = migrate("cloudflare", target)
    assert len(rows) == 20 and held_back == [] and {row["privacy"] for row in rows} == {"signed"}
    assert {items[r["id"]]["state"] for r in rows} == {"ready"}, not_ready(items, rows)
    for row in rows:
        policies = [p["policy"] for p in target.held(items[row["id"]]["remote_id"])["playback_ids"]]
        assert policies == ["signed"], (row["id"], policies)
    captioned = [row["id"] for row in rows if row.get("tracks")]
    assert captioned, "no captions in the library: the test would prove nothing"
    states = tracks_attached(aws, target, captioned)
    assert {state for entries in states.values() for state in entries.values()} == {"attached"}, states
    assert_titles_carried(sources, "cloudflare", target, rows, items)
    assert target.sim.stats()["duplicate_videos"] == 0


def test_an_apivideo_private_library_moves_to_stream_which_fetches_with_head_and_range_gets(
    sources, targets, migrate, aws
):
    """Sources, item 2: a private video's link served one request, and Stream asks several (HEAD, then ranges):
    each link is resolved through a session token, every video arrives, and arrives private."""
    sources.sims["apivideo"].patch_config({"library_private_every": 1, "library_unfetchable_every": 0})
    target = targets("cloudflare")
    rows, held_back, items = migrate("apivideo", target)
    assert len(rows) == 20 and held_back == [] and {row["privacy"] for row in rows} == {"private"}
    assert {items[r["id"]]["state"] for r in rows} == {"ready"}
    assert all(target.held(items[r["id"]]["remote_id"])["requireSignedURLs"] is True for r in rows)
    assert target.sim.stats()["duplicate_videos"] == 0


def test_a_delta_after_processing_finished_lists_exactly_those_videos_and_their_captions_and_moves_them(
    sources, targets, migrate, aws, endpoint, tmp_path, capsys
):
    """Sources, item 3: Mux lists by creation time only, so `--since last` never listed again a video still
    processing at the previous sweep, nor one whose captions were. The sweep carries them; once the platform
    has finished, the delta lists exactly those, and they move with their captions."""
    mux = sources.sims["mux"]
    mux.patch_config({"library_captions_processing": True})
    target = targets("cloudflare")
    rows, held_back, items = migrate("mux", target)
    waiting = {entry["id"] for entry in held_back if "reason" in entry and "ref" in entry}  # the pending ones
    assert waiting, "nothing was still processing: the test would prove nothing"
    assert {items[r["id"]]["state"] for r in rows} <= {"ready", "rejected", "failed"}

    mux.patch_config({"library_processing_done": True, "library_captions_processing": False})
    credentials, marks = tmp_path / "sources.json", tmp_path / "marks.json"
    delta = tmp_path / "delta.jsonl"
    argv = ["inventory", "--from", "mux", "--since", "last", "-o", str(delta), "--mark-file", str(marks)]
    assert main([*argv, "--source-url", sources.base("mux"), "--credentials", str(credentials)]) == 0
    capsys.readouterr()
    listed = [json.loads(line) for line in delta.read_text().splitlines()]
    # Every video the last sweep left, and beside them only videos it had listed already: a delta starts
    # MARK_OVERLAP_S before the mark (what changed in the same minute is listed again, never missed).
    again = {row["id"] for row in listed} - waiting
    assert waiting <= {row["id"] for row in listed} and again <= {row["id"] for row in rows}, (waiting, again)
    assert json.loads(marks.read_text())["mux"]["pending"] == {}
    assert main(["load", str(delta), "--outputs", str(target.outputs_path), "--endpoint", endpoint]) == 0
    capsys.readouterr()
    moved = migrate.settle(target, sorted(waiting), 240)
    assert {moved[i]["state"] for i in waiting} == {"ready"}, {i: moved[i].get("last_error") for i in waiting}
    captioned = [row["id"] for row in listed if row.get("tracks")]
    assert captioned, "no caption was waited for: the test would prove nothing"
    states = tracks_attached(aws, target, captioned)
    assert {state for entries in states.values() for state in entries.values()} == {"attached"}, track_errors(
        aws, target, captioned
    )
    assert target.sim.stats()["duplicate_videos"] == 0
