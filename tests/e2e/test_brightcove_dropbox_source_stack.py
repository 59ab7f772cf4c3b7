"""Brightcove → Mux and Dropbox → Mux, end to end: template.yaml deployed with the target and every
source's credentials in its secret (tests/e2e/sources.py), `migrator inventory --from` against the source
simulator, `migrator load` of what it wrote, and the real queue, uploader, webhook, tracks worker and ledger. The
target simulators fetch every URL they are handed from the source simulator over loopback (check_source).

Brightcove: the uploaders share one OAuth token through the ledger's `#brightcove-token` item (the Lambdas have
LEDGER_TABLE), so a whole drain asks Brightcove's OAuth API for one token, not one per worker; the widest MP4
rendition is what moves. Dropbox: each file's four-hour temporary link is minted at its create, and sidecar
captions come along. For both: every fetchable video ready at the target with its title and its captions (read
back from the target simulator), every unfetchable one reported with its reason and never sent, no duplicate.
Brightcove's chapters tracks arrive as Mux's chapters (issue 42), read back from the Mux simulator, while a share of
the tracks' answers are lost; its posters and playlists, which Mux has no place for, are noted in the ledger.
"""

from __future__ import annotations

import pytest

from infra.sim.library import item
from infra.sim.platforms import brightcove as sim_brightcove
from infra.sim.platforms import dropbox as sim_dropbox
from tests.e2e.extras_pairs import SourceFiles, answers_lost, assert_entries_settled, assert_extras_held
from tests.e2e.source_pairs import Target, assert_never_sent
from tests.e2e.test_tracks_stack import captions_of, tracks_settled

pytestmark = pytest.mark.e2e
PAIRS = {"brightcove": ("mux", sim_brightcove), "dropbox": ("mux", sim_dropbox)}


def held_by(sources, platform: str, row: dict):
    """The library video a row names, as the source simulator holds it."""
    module = PAIRS[platform][1]
    return item(sources.sims[platform].config, module.index_of(row["metadata"]["source_id"]), module.FAULTS)


def captions_at(target: Target) -> dict[str, set[str]]:
    """Our asset id -> the languages of the caption tracks the target simulator holds for it."""
    return {v["ref"]: {t["language"] for t in v["tracks"]} for v in target.sim.text_tracks()}


def assert_moved(sources, aws, platform: str, target: Target, rows: list[dict], items: dict) -> None:
    assert {items[r["id"]]["state"] for r in rows} == {"ready"}, {r["id"]: items[r["id"]] for r in rows}
    for row in rows:
        assert row["title"] == held_by(sources, platform, row).title
        assert target.title_of(items[row["id"]]["remote_id"]) == row["title"]
    captioned = captions_of(rows)
    assert captioned, "no captions in the library: the test would prove nothing"
    # Every row with work for the tracks worker, not only the captioned ones: a chapters file or a thumbnail on a row
    # without captions is settled after its video too, and the extras are read back right after this.
    worked = [r["id"] for r in rows if r.get("tracks") or r.get("thumbnail_url") or r.get("collections")]
    settled = tracks_settled(aws("dynamodb"), target.outputs["LedgerTableName"], worked)
    assert_entries_settled(settled)
    held = captions_at(target)
    for asset_id, languages in captioned.items():
        assert held.get(asset_id) == languages, (asset_id, held.get(asset_id))
    assert target.sim.stats()["duplicate_videos"] == 0


def test_a_brightcove_library_moves_to_mux_on_one_token_for_the_fleet_with_its_chapters(sources, targets, migrate, aws):
    source = sources.sims["brightcove"]
    source.patch_config({"library_chapters_every": 2})  # every other video a chapters track (a third of them drafts)
    target = targets("mux")
    with answers_lost(aws, target.stack_name, target.sim, 0.15, 5):
        rows, held_back, items = migrate("brightcove", target)
        assert_moved(sources, aws, "brightcove", target, rows, items)
    # Brightcove answers a token with 201 Created (its reference's example; the simulator does too), or 200.
    tokens = [r for r in source.requests_log(ops=None) if r["op"] == "src_token" and r["status"] in (200, 201)]
    # Every fifth video in turn (infra/sim/platforms/brightcove.FAULTS): still processing (pending, kept with the mark
    # for the next sweep), no MP4 rendition (unfetchable): each with its reason.
    reasons = sorted(u["reason"].split(" (")[0].split(":")[0] for u in held_back)
    assert len(rows) == 16 and reasons == ["no downloadable rendition"] * 2 + ["still processing at Brightcove"] * 2
    assert_never_sent(aws, target, held_back)
    assert {row["privacy"] for row in rows} >= {"public", "private", "signed"}
    assert all(row["metadata"]["source_file"] == "rendition 1920x1080 MP4" for row in rows)
    # The inventory's own (the operator's machine), and the fleet's one, kept in the ledger item.
    assert len(tokens) == 2, tokens
    table = target.outputs["LedgerTableName"]
    kept = aws("dynamodb").get_item(TableName=table, Key={"asset_id": {"S": "#brightcove-token"}})["Item"]
    assert "token" in kept and not kept["token"]["S"].startswith("bc.")  # sealed, not the token itself
    # What a viewer sees, read back from the Mux simulator (the check's own reads of Brightcove take a token of
    # their own, after the count above).
    carried = assert_extras_held(SourceFiles.of(sources), "brightcove", "mux", target.sim, table, aws("dynamodb"), rows)
    assert carried.chapters >= 3 and carried.thumbnails_noted >= 10, carried


def test_a_dropbox_folder_moves_to_mux_with_its_sidecar_captions(sources, targets, migrate, aws):
    target = targets("mux")
    rows, unfetchable, items = migrate("dropbox", target)  # Dropbox processes nothing: none is pending
    # Every fifth file in turn (infra/sim/platforms/dropbox.FAULTS): not downloadable, no link for its type, not
    # allowed.
    assert len(rows) == 16 and len(unfetchable) == 4
    assert {u["reason"].split(" (")[0] for u in unfetchable} >= {"Dropbox marks the file not downloadable"}
    assert_never_sent(aws, target, unfetchable)
    assert_moved(sources, aws, "dropbox", target, rows, items)
