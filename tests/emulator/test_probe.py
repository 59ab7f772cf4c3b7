"""The inventory pass against the real ledger in the emulator, with real ffprobe on real media."""

from __future__ import annotations

import pytest
from migrator.ledger import Ledger
from migrator.messages import AssetMessage
from migrator.states import State
from migrator_cli.probe import run_probe

from tests.probe.media import VIDEO_S, MediaServer, make_media
from tests.unit.test_fate import NOW

pytestmark = pytest.mark.emulator

SECRET = "X-Amz-Credential=AKIAEXAMPLE%2F20261130&X-Amz-Signature=5ec4e7"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("media")
    make_media(directory)
    with MediaServer(directory) as running:
        yield running


@pytest.fixture
def ledger(aws, table):
    return Ledger(table, aws("dynamodb"))


@pytest.fixture
def staged(ledger, server):
    """One pending asset per fate, plus one the uploader claimed after the listing was taken."""
    sources = {
        "video": server.url("video.mp4"),
        "audio": server.url("audio.m4a"),
        "truncated": server.url("truncated.mp4"),
        "s3-video": "s3://media-bucket/video.mp4",
        "s3-missing": "s3://media-bucket/missing.mp4",
        # A presigner gone wrong: whatever it returns, only http(s) reaches ffprobe.
        "s3-to-file": "s3://media-bucket/etc/passwd",
        "claimed": server.url("video.mp4"),
    }
    for asset_id, url in sources.items():
        assert ledger.stage(AssetMessage(asset_id, url), NOW)
    stale = ledger.get("claimed")
    ledger.claim(AssetMessage("claimed", sources["claimed"]), NOW + 1, NOW + 600, "tok")
    # What the lead's code passes: the pending listing (no source_url in the index's
    # projection), and here also a candidate read before the uploader claimed it.
    candidates = [*ledger.iter_state(State.PENDING), stale]
    assert {c["asset_id"] for c in candidates} == set(sources)
    return candidates


def presign_with(server):
    def presign(url: str) -> str:
        key = url.removeprefix("s3://media-bucket/")
        if key == "etc/passwd":
            return "file:///etc/passwd"
        return f"{server.url(key)}?{SECRET}"

    return presign


def states(ledger, ids):
    return {asset_id: ledger.get(asset_id) for asset_id in ids}


def test_probe_moves_each_pending_asset_to_its_fate(ledger, staged, server, caplog):
    summary = run_probe(
        staged,
        ledger=ledger,
        presign=presign_with(server),
        concurrency=3,
        timeout_s=20,
        clock=lambda: NOW + 5,
        allow_private=True,  # the media server is on 127.0.0.1
    )

    items = states(ledger, [c["asset_id"] for c in staged])
    assert {asset_id: item["state"] for asset_id, item in items.items()} == {
        "video": "inventoried",
        "s3-video": "inventoried",
        "audio": "rejected",
        "truncated": "rejected",
        "s3-missing": "rejected",
        "s3-to-file": "pending",
        "claimed": "uploading",
    }
    for asset_id in ("video", "s3-video"):
        assert float(items[asset_id]["duration_s"]) == pytest.approx(VIDEO_S, abs=0.2)
        assert items[asset_id]["state_shard"].startswith("inventoried#")
        assert float(items[asset_id]["updated_at"]) == NOW + 5
    assert items["audio"]["last_error"] == "probe: no video stream (found: audio)"
    assert "moov atom not found" in items["truncated"]["last_error"]
    assert (
        items["s3-missing"]["last_error"] == "probe: ffprobe could not read the source: Server returned 404 Not Found"
    )
    assert items["audio"]["state_shard"].startswith("rejected#")
    # Untouched: the refused scheme, and the claimed asset (the probe's conditional write lost).
    assert float(items["s3-to-file"]["updated_at"]) == NOW
    assert items["claimed"]["lease_token"] == "tok" and "duration_s" not in items["claimed"]

    assert (summary.inventoried, summary.rejected, summary.skipped, summary.errors) == (2, 3, 2, 0)
    assert summary.skipped_reasons == {
        "scheme 'file' is never probed (only http, https)": 1,
        "moved on (now uploading)": 1,
    }
    assert summary.rejected_reasons["probe: no video stream (found: audio)"] == 1
    assert not summary.dry_run and not summary.stopped

    everything = caplog.text + repr(summary) + repr(items)
    assert "5ec4e7" not in everything and "AKIAEXAMPLE" not in everything

    # A second pass finds nothing left to do among the pending ones.
    again = run_probe(
        ledger.iter_state(State.PENDING), ledger=ledger, presign=presign_with(server), timeout_s=20, allow_private=True
    )
    assert (again.inventoried, again.rejected, again.skipped) == (0, 0, 1)


def test_dry_run_probes_but_writes_nothing(ledger, staged, server):
    before = states(ledger, [c["asset_id"] for c in staged])
    summary = run_probe(
        staged, ledger=ledger, presign=presign_with(server), timeout_s=20, dry_run=True, allow_private=True
    )
    assert states(ledger, before) == before
    # The stale candidate would have been probed; only the real write could tell it had moved on.
    assert (summary.inventoried, summary.rejected, summary.skipped, summary.errors) == (3, 3, 1, 0)
    assert summary.dry_run
