"""Kaltura → api.video, end to end: template.yaml deployed with api.video as the target and every source's
credentials in its secret (Kaltura's an app token), `migrator inventory --from kaltura` against the Kaltura source
simulator (tests/e2e/sources.py), `migrator load` of what it wrote, and the real queue, uploader, webhook, tracks
worker and ledger. The api.video simulator fetches every download URL it is handed from the Kaltura simulator
over loopback (check_source), so a URL that lacks the KS its entry's access control asks for fails as it would.

Every fetchable entry ready at api.video with its title and its captions (read back from the target simulator),
every unfetchable or still converting one reported with its reason and never sent, no duplicate video.
"""

from __future__ import annotations

import pytest

from infra.sim.library import item
from infra.sim.platforms import kaltura_entries
from tests.e2e.source_pairs import Target, assert_never_sent
from tests.e2e.test_tracks_stack import assert_captions_attached_extras_settled, captions_of, tracks_settled

pytestmark = pytest.mark.e2e


def held_by(sources, row: dict):
    """The library entry a row names, as the Kaltura simulator holds it."""
    index = kaltura_entries.index_of(row["metadata"]["source_id"])
    return item(sources.sims["kaltura"].config, index, kaltura_entries.FAULTS)


def captions_at(target: Target) -> dict[str, set[str]]:
    """Our asset id -> the languages of the caption tracks the target simulator holds for it."""
    return {v["ref"]: {t["language"] for t in v["tracks"]} for v in target.sim.text_tracks()}


def test_a_kaltura_library_moves_to_apivideo_with_its_titles_and_captions(sources, targets, migrate, aws):
    sources.sims["kaltura"].patch_config({"library_private_every": 3})  # every category kind among 20 entries
    target = targets("apivideo")
    rows, held_back, items = migrate("kaltura", target)
    # Every fifth entry is held back in turn (kaltura_entries.FAULTS): converting (pending), failed, no content, audio.
    assert len(rows) + len(held_back) == 20 and len(held_back) == 4, held_back
    assert {r["reason"].split(" (")[0] for r in held_back} >= {"failed at the source", "an audio entry"}
    assert {items[r["id"]]["state"] for r in rows} == {"ready"}, {r["id"]: items[r["id"]] for r in rows}
    assert_never_sent(aws, target, held_back)
    for row in rows:
        assert row["title"] == held_by(sources, row).title
        assert target.title_of(items[row["id"]]["remote_id"]) == row["title"]
    privacies = {row["privacy"] for row in rows}
    assert {"public", "private", "signed"} <= privacies, privacies
    captioned = captions_of(rows)
    assert captioned, "no captions in the library: the test would prove nothing"
    settled = tracks_settled(aws("dynamodb"), target.outputs["LedgerTableName"], list(captioned))
    assert_captions_attached_extras_settled(settled)
    held = captions_at(target)
    for asset_id, languages in captioned.items():
        assert held.get(asset_id) == languages, (asset_id, held.get(asset_id))
    assert target.sim.stats()["duplicate_videos"] == 0
