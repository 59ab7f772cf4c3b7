"""Source and target as two simulators: the target fetches the link it is handed from the source over
loopback, and fails the ingest the way the real provider does when the link expired or the source
refuses it; and `migrator inventory --from` / `load --from --dry-run` against a source simulator."""

from __future__ import annotations

import json
import time

import pytest
from migrator.sources import build, parse_ref
from migrator_cli.main import main

from tests.sim.support import wait_for

TOKEN = "vimeo-pat"


def _mux_create(web, sim, url: str, ref: str) -> str:
    body = {"inputs": [{"url": url}], "playback_policies": ["public"], "passthrough": ref}
    answer = web.post(f"{sim.url}/video/v1/assets", json=body)
    assert answer.status_code == 201
    return answer.json()["data"]["id"]


def _mux_status(web, sim, asset: str) -> dict:
    return web.get(f"{sim.url}/video/v1/assets/{asset}").json()["data"]


def test_a_target_fetches_a_fresh_link_and_fails_an_expired_one_as_mux_does(launch, web):
    source_sim = launch("vimeo", token=TOKEN, library_size=5, link_ttl_s=1)
    target = launch("mux", check_source=True, processing_delay_s=0.1)
    source = build("vimeo", lambda: {"token": TOKEN}, source_sim.url)
    minted_early = source.resolve(parse_ref("vimeo://700000001")).url
    time.sleep(1.5)  # the queue took longer than the link lives
    fresh = source.resolve(parse_ref("vimeo://700000002")).url  # minted at the create
    late = _mux_create(web, target, minted_early, "vimeo/700000001")
    on_time = _mux_create(web, target, fresh, "vimeo/700000002")
    assert wait_for(lambda: _mux_status(web, target, late)["status"] == "errored", timeout=5)
    assert _mux_status(web, target, late)["errors"]["messages"] == ["The input URL could not be downloaded"]
    assert wait_for(lambda: _mux_status(web, target, on_time)["status"] == "ready", timeout=5)
    # The source's own duration (video 2: 30 + 2 x 37 + 0.25 s), read back from the link by the target.
    assert _mux_status(web, target, on_time)["duration"] == 104.25
    assert source_sim.stats()["media_refused"] >= 1 and target.stats()["source_checks_failed"] == 1


def test_cloudflare_asks_with_head_and_a_range_and_a_deleted_source_fails_its_ingest(launch, web):
    source_sim = launch("wistia", token="w", library_size=5)
    target = launch("cloudflare", check_source=True, processing_delay_s=0.1)
    source = build("wistia", lambda: {"token": "w"}, source_sim.url + "/modern")
    link = source.resolve(parse_ref("wistia://w000000003")).url
    web.post(f"{source_sim.url}/_sim/library", json={"delete": [3]}).raise_for_status()
    answer = web.post(f"{target.url}/accounts/a/stream/copy", json={"input": link, "meta": {"name": "x"}})
    uid = answer.json()["result"]["uid"]

    def state():
        return web.get(f"{target.url}/accounts/a/stream/{uid}").json()["result"]["status"]

    assert wait_for(lambda: state()["state"] == "error", timeout=5)
    assert state()["errorReasonCode"] == "ERR_FETCH_ORIGIN_ERROR"


@pytest.fixture
def vimeo_library(launch, tmp_path, monkeypatch):
    sim = launch("vimeo", token=TOKEN, library_size=120, library_unfetchable_every=10, library_captions_every=6)
    monkeypatch.setenv("VIMEO_TOKEN", TOKEN)
    monkeypatch.delenv("MIGRATOR_SOURCE_CREDENTIALS", raising=False)
    monkeypatch.chdir(tmp_path)
    return sim


def test_migrator_inventory_lists_a_platform_and_load_takes_the_file_as_it_is(vimeo_library, tmp_path, capsys):
    out = tmp_path / "vimeo.jsonl"
    code = main(["inventory", "--from", "vimeo", "--source-url", vimeo_library.url, "-o", str(out), "--csv", "v.csv"])
    err = capsys.readouterr().err
    assert code == 0, err
    # Of the 12 faults, the 4 still transcoding are not written off: the next sweep asks for them again.
    assert "rows            108 written" in err and "unfetchable     8 (kept out" in err and "pending         4" in err
    assert "mark            " in err and (tmp_path / "vimeo.mark.json").exists()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 108 and all(r["source_url"].startswith("vimeo://") for r in rows)
    assert main(["load", str(out), "--dry-run"]) == 0
    assert "dry run         108 rows would be sent" in capsys.readouterr().err
    assert main(["load", "v.csv", "--dry-run"]) == 0
    assert "dry run         108 rows would be sent" in capsys.readouterr().err


def test_load_from_a_platform_lists_then_loads_in_one_go(vimeo_library, capsys):
    code = main(["load", "--from", "vimeo", "--source-url", vimeo_library.url, "--dry-run", "--no-tracks"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "rows            108 written to vimeo-inventory.jsonl" in err
    assert "dry run         108 rows would be sent" in err


def test_a_delta_sweep_from_the_last_mark_lists_only_the_new_uploads(vimeo_library, web, capsys):
    assert main(["inventory", "--from", "vimeo", "--source-url", vimeo_library.url, "--no-tracks"]) == 0
    capsys.readouterr()
    web.post(f"{vimeo_library.url}/_sim/config", json={"library_size": 125}).raise_for_status()  # 5 uploads since
    code = main(
        ["inventory", "--from", "vimeo", "--source-url", vimeo_library.url, "--since", "last", "-o", "new.jsonl"]
    )
    err = capsys.readouterr().err
    assert code == 0, err
    ids = [json.loads(line)["id"] for line in open("new.jsonl")]
    # The five new ones, and what changed in the minute of overlap before the mark (loading it again is free).
    assert ids[:5] == [f"vimeo/{700000000 + i}" for i in range(124, 119, -1)] and len(ids) <= 7


def test_migrator_plan_from_a_platform_lists_it_and_plans_what_can_go(vimeo_library, capsys):
    """`plan --from PLATFORM`: the listing, then the plan, with no AWS at all; what the source can never
    serve is counted by its reason, never sent."""
    code = main(["plan", "--from", "vimeo", "--source-url", vimeo_library.url, "--no-tracks", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    doc = json.loads(captured.out)
    assert doc["assets"] == 108
    mux = doc["providers"]["mux"]
    assert mux["assets_to_send"] == 108
    at_source = {reason: n for reason, n in mux["unfetchable"].items() if reason.startswith("at the source: ")}
    # The simulator's faults, each by its reason (the 4 videos still transcoding are pending, not unfetchable).
    assert sum(at_source.values()) == 8 and len(at_source) >= 2
