"""The operator's view of caption tracks: `migrator show` (one asset, its tracks) and `retry --tracks`
(failed tracks only, re-armed in one conditional write each, then sent to the tracks worker)."""

from __future__ import annotations

import json
from decimal import Decimal

from migrator.ledger import WriteResult
from migrator_cli.ops import TracksDue, retry_tracks
from migrator_cli.show import asset_view, render_asset

ITEM = {
    "asset_id": "lib/a",
    "state": "ready",
    "state_shard": "ready#3",
    "remote_id": "vid-1",
    "attempts": Decimal("1"),
    "updated_at": Decimal("1800000000"),
    "lease_token": "secret-ish",
    "tracks": [
        {"url": "https://c.example.com/en.srt", "language": "en", "kind": "captions"},
        {"url": "https://c.example.com/fr.vtt", "language": "fr"},
    ],
    "track_states": {
        "en.captions.": {"state": "attached", "attempts": Decimal("1"), "updated_at": Decimal("1800000001")},
        "fr.captions.": {"state": "failed", "attempts": Decimal("5"), "error": "the track's server answered HTTP 404"},
    },
}


def test_show_prints_the_asset_and_each_track_with_its_state_and_reason():
    text = render_asset(ITEM)
    assert "state                ready" in text and "remote_id            vid-1" in text
    assert "updated_at           2027-01-15 08:00:00 UTC" in text
    assert "en.captions.                   attached, 1 attempts" in text
    assert "fr.captions.                   failed, 5 attempts: the track's server answered HTTP 404" in text
    assert "secret-ish" not in text and "ready#3" not in text


def test_show_json_is_plain_json_without_the_ledgers_plumbing():
    doc = json.loads(json.dumps(asset_view(ITEM)))
    assert doc["attempts"] == 1 and [t["state"] for t in doc["tracks"]] == ["attached", "failed"]
    assert not {"lease_token", "state_shard", "track_states"} & set(doc)


class FakeLedger:
    def __init__(self, refuse=()):
        self.refuse, self.rearmed = set(refuse), []

    def rearm_failed_tracks(self, seen, now):
        if seen["asset_id"] in self.refuse:
            return WriteResult(False, seen)
        self.rearmed.append(seen["asset_id"])
        return WriteResult(True, seen)


def test_retry_tracks_rearms_only_assets_with_failed_tracks_and_sends_each_once():
    items = [
        ITEM,
        {"asset_id": "lib/all-good", "track_states": {"en.captions.": {"state": "attached"}}},
        {"asset_id": "lib/none"},
        {**ITEM, "asset_id": "lib/moved"},
    ]
    ledger, sent = FakeLedger(refuse={"lib/moved"}), []

    def send(due):
        sent.extend(due)
        return len(sent), []

    summary = retry_tracks(ledger, items, send, clock=lambda: 5.0)
    assert ledger.rearmed == ["lib/a"] and sent == [TracksDue("lib/a")]
    assert (summary.listed, summary.assets, summary.tracks, summary.sent) == (4, 1, 1, 1)
    assert summary.moved_on == [("lib/moved", "its tracks moved since they were read")]


def test_retry_tracks_dry_run_writes_and_sends_nothing():
    ledger, sent = FakeLedger(), []
    summary = retry_tracks(ledger, [ITEM], lambda due: (len(list(due)), []), dry_run=True)
    assert ledger.rearmed == [] and sent == [] and (summary.assets, summary.tracks, summary.sent) == (1, 1, 0)
