"""Caption tracks end to end, per target provider: template.yaml deployed with `Provider=<p>` against the
simulator speaking that provider's API, caption files served by a local server (reached through the stack's
TrackFetchTestOrigins, its one exact origin; 127.0.0.1 on any other port stays refused), driven through the
real queues, the real uploader, webhook and tracks worker.

For each of Mux, Cloudflare Stream and api.video:
- rows with two caption tracks (one SRT, one WebVTT) arrive with both tracks attached once each, read back
  from what the simulator holds, after a worker that died holding a track (its upload had reached the
  provider) and lost answers in the middle (create answers for Mux, whose create carries the tracks; track
  uploads for the others);
- a track whose URL is unreachable, internal (127.0.0.1, 169.254.169.254, a private range), too large or not
  a caption file fails alone with its reason, its video ready; `migrator retry --tracks` re-arms those only;
- `migrator status`, `report` and `show` say so.
The cost of tracks (provider calls and DynamoDB writes per track) is measured by bench/tracks.py.
"""

from __future__ import annotations

import json
import time

import pytest
from migrator.captions import read_caption
from migrator.ledger import Ledger
from migrator.messages import AssetMessage, Track, track_key
from migrator.providers import AssetRef
from migrator.providers.facts import TrackUpload
from migrator.tracks import initial_states, tracks_message

from tests.conftest import unique
from tests.e2e.conftest import PROVIDERS, provider_stack
from tests.e2e.stacks import SETTLE_ROUND_S, settle_with_reconcile
from tests.e2e.test_uploader_stack import send_all
from tests.track_files import SRT

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module", params=PROVIDERS)
def deployed(request, stacks, sources, track_files):
    """The shared stack of each provider; its TrackFetchTestOrigins is the package's caption file server."""
    with provider_stack(request.param, stacks, sources, track_files) as stack:
        yield stack


@pytest.fixture
def cli(deployed, endpoint, capsys):
    from migrator_cli.main import main

    def run(*args: str) -> tuple[int, str, str]:
        code = main([*args, "--outputs", str(deployed.outputs_path), "--endpoint", endpoint])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def row(asset_id: str, tracks: list[Track]) -> str:
    doc = {"id": asset_id, "source_url": f"https://media.example.com/{asset_id}.mp4?duration=6"}
    return json.dumps({**doc, "tracks": [t.as_dict() for t in tracks]})


def all_ready(aws, table: str, ids: list[str], cli) -> dict:
    """Until every asset is ready. A webhook the emulator could not deliver (a Lambda's cold start past its
    10 s timeout on a busy machine) is made good by reconcile's poll every SETTLE_ROUND_S, as it would be on AWS
    (it was run once after 90 s: the apivideo case took 101 s in CI, its cold webhook's answers lost)."""

    def reconcile() -> None:
        code, out, err = cli("reconcile", "--poll-after", "0", "--json")
        assert code == 0, out + err

    return settle_with_reconcile(aws("dynamodb"), table, ids, {"ready"}, 150, reconcile)


def tracks_settled(dynamodb, table: str, ids: list[str], timeout_s: float = 180, reconcile=None) -> dict:
    """Poll the ledger until every asset's tracks are armed and none is pending (or failing with a retry time).
    With `reconcile`, it is run every SETTLE_ROUND_S as an operator runs it: an asset whose ready webhook the provider
    gave up on (a cold webhook Lambda on a loaded machine) is made ready, and its tracks armed, by the poll."""
    ledger, deadline = Ledger(table, dynamodb), time.time() + timeout_s
    items: dict = {}
    next_reconcile = time.time() + SETTLE_ROUND_S
    while time.time() < deadline:
        if reconcile is not None and time.time() >= next_reconcile:
            reconcile()
            next_reconcile = time.time() + SETTLE_ROUND_S
        items = ledger.get_many(ids)

        def done(item):
            states = item.get("track_states") or {}
            return states and all(
                e["state"] in ("attached", "noted") or (e["state"] == "failed" and "retry_after" not in e)
                for e in states.values()
            )

        if len(items) == len(ids) and all(done(i) for i in items.values()):
            return items
        time.sleep(1)
    left = {i: {k: e.get("state") for k, e in (items.get(i, {}).get("track_states") or {}).items()} for i in ids}
    raise AssertionError(f"tracks not settled after {timeout_s:.0f} s: {left}")


def captions_of(rows: list[dict]) -> dict[str, set[str]]:
    """{asset id: its caption languages} of the rows that have any: a chapters file rides `tracks` too, as its
    own kind (an extra, not a caption)."""
    languages = {r["id"]: {t["language"] for t in r.get("tracks", ()) if t.get("kind") != "chapters"} for r in rows}
    return {asset_id: found for asset_id, found in languages.items() if found}


def assert_captions_attached_extras_settled(settled: dict) -> None:
    """Every caption entry attached; every extra (thumbnail, chapters, a collection place) attached or noted,
    as a target may note what it cannot carry."""
    entries = [e for item in settled.values() for e in item["track_states"].values()]
    captions = {e["state"] for e in entries if e.get("kind", "caption") == "caption"}
    extras = {e["state"] for e in entries if e.get("kind", "caption") != "caption"}
    states = {i: {k: e["state"] for k, e in item["track_states"].items()} for i, item in settled.items()}
    assert captions == {"attached"} and extras <= {"attached", "noted"}, states


def held(sim) -> dict[str, dict[str, dict]]:
    """What the provider holds: our asset id -> language -> the track as stored."""
    return {v["ref"]: {t["language"]: t for t in v["tracks"]} for v in sim.text_tracks()}


def tracks_mapping(aws, deployed) -> str:
    sqs = aws("sqs")
    arn = sqs.get_queue_attributes(QueueUrl=deployed.outputs["TracksQueueUrl"], AttributeNames=["QueueArn"])
    [mapping] = aws("lambda").list_event_source_mappings(EventSourceArn=arn["Attributes"]["QueueArn"])[
        "EventSourceMappings"
    ]
    return mapping["UUID"]


def set_worker(aws, uuid: str, enabled: bool) -> None:
    aws("lambda").update_event_source_mapping(UUID=uuid, Enabled=enabled)
    deadline = time.time() + 30
    while aws("lambda").get_event_source_mapping(UUID=uuid)["State"] != ("Enabled" if enabled else "Disabled"):
        assert time.time() < deadline
        time.sleep(0.5)


def test_two_caption_tracks_arrive_once_each_after_a_dead_pass_and_lost_answers(deployed, aws, cli):
    sim, files, table = deployed.sim, deployed.files, deployed.outputs["LedgerTableName"]
    en = Track(files.url("/en.srt"), "en", "captions", closed_captions=True, format="srt")
    fr = Track(files.url("/fr.vtt"), "fr", "subtitles", format="vtt")
    run = unique(deployed.name)
    ids = [f"{run}/{n}" for n in range(4)]
    mapping = tracks_mapping(aws, deployed)
    set_worker(aws, mapping, enabled=False)  # the tracks wait until the dead pass is in place
    before = sim.stats()
    sim.patch_config({"lose_rate": 0.3, "seed": 1})  # 2 of the 4 create answers lost: the uploader finds them
    send_all(aws("sqs"), deployed.outputs["QueueUrl"], [row(i, [en, fr]) for i in ids])
    items = all_ready(aws, table, ids, cli)
    sim.patch_config({"lose_rate": 0.0})

    # A pass that died holding the first asset's English track, after its upload reached the provider.
    ledger, client, crashed = Ledger(table, aws("dynamodb")), deployed.client(), ids[0]
    remote_id = items[crashed]["remote_id"]
    details = AssetMessage(crashed, "https://media.example.com/x.mp4", tracks=(en, fr))
    at_create = {track_key(t) for t in client.create_time_tracks(AssetRef(crashed, details=details))}
    entries = initial_states(
        (en, fr),
        takes_tracks=True,
        provider=deployed.name,
        at_create=at_create,
        one_per_language=client.one_track_per_language,
        now=time.time(),
    )
    assert ledger.arm_tracks(crashed, remote_id, entries, time.time()).won
    past = time.time() - 900
    assert ledger.claim_track(crashed, track_key(en), remote_id, "dead-pass", past, past + 60)
    if not at_create:  # Mux's create carried the files; elsewhere the dead pass had uploaded it
        client.attach_track(remote_id, en, TrackUpload(read_caption(SRT), en.url), "en")
    # The dead pass's message, back once its visibility ran out. Without it the planted pass could hold the one
    # message there was: a video settled by its webhook before the uploader's retry is told to the tracks
    # worker only by that retry, which finds the tracks armed (here, by the test) and sends nothing.
    aws("sqs").send_message(QueueUrl=deployed.outputs["TracksQueueUrl"], MessageBody=tracks_message(crashed))

    sim.patch_config({"track_lose_rate": 0.5, "seed": 9})  # half the worker's upload answers are lost
    set_worker(aws, mapping, enabled=True)

    # 240 s: a tracks message received while its video was still processing waits up to 120 s before it looks
    # again (trackworker.NOT_READY_CAP_S), then the lost answers' retries.
    def reconcile():
        return cli("reconcile", "--poll-after", "10")

    items = tracks_settled(aws("dynamodb"), table, ids, 240, reconcile=reconcile)
    sim.patch_config({"track_lose_rate": 0.0})

    grown = {k: v - before.get(k, 0) for k, v in sim.stats().items()}
    lost = grown["lost_responses"] + grown["lost_track_responses"]
    assert lost > 0, "no answer was lost: the test would prove nothing"
    for asset_id, item in items.items():
        states = {k: e["state"] for k, e in item["track_states"].items()}
        assert states == {track_key(en): "attached", track_key(fr): "attached"}, asset_id
    assert int(items[crashed]["track_states"][track_key(en)]["attempts"]) == 2  # the dead pass's, then a look
    at_provider = held(sim)
    for asset_id in ids:
        tracks = at_provider[asset_id]
        assert set(tracks) == {"en", "fr"}, asset_id
        assert {t["uploads"] for t in tracks.values()} == {1} and {t["status"] for t in tracks.values()} == {"ready"}
        assert "Hello from SubRip" in tracks["en"]["content"]
        # Cloudflare and api.video take WebVTT only: the SRT arrived converted; Mux fetched it as it is.
        assert tracks["en"]["format"] == ("srt" if deployed.name == "mux" else "vtt")
    assert sim.stats()["duplicate_videos"] == 0

    deadline = time.time() + 30  # the tally counts from the ledger's stream, a moment behind
    while True:
        code, out, err = cli("status", "--json")
        if json.loads(out)["tracks"]["attached"] >= 2 * len(ids) or time.time() > deadline:
            break
        time.sleep(1)
    assert code == 0 and json.loads(out)["tracks"]["attached"] >= 2 * len(ids), out + err
    code, out, _ = cli("show", crashed)
    assert code == 0 and "en.captions.                   attached, 2 attempts" in out


def test_a_bad_track_fails_alone_with_its_reason_and_its_video_is_ready(deployed, aws, cli):
    files, table = deployed.files, deployed.outputs["LedgerTableName"]
    good = Track(files.url("/fr.vtt"), "fr")
    bad = {
        "unreachable": Track("https://captions.nowhere.invalid/it.vtt", "it"),
        "loopback": Track(files.url("/fr.vtt").replace(f":{files.port}/", f":{files.port + 1}/"), "de"),
        "metadata": Track("https://169.254.169.254/latest/meta-data/iam/security-credentials/", "es"),
        "private": Track("https://10.20.30.40/captions.vtt", "nl"),
        "too large": Track(files.url("/big.vtt"), "pt"),
        "not a caption": Track(files.url("/page.html"), "sv"),
    }
    asset_id = unique(f"{deployed.name}/bad")
    send_all(aws("sqs"), deployed.outputs["QueueUrl"], [row(asset_id, [good, *bad.values()])])
    all_ready(aws, table, [asset_id], cli)
    item = tracks_settled(aws("dynamodb"), table, [asset_id])[asset_id]
    states = item["track_states"]
    assert item["state"] == "ready" and states[track_key(good)]["state"] == "attached"
    reasons = {what: states[track_key(t)]["error"] for what, t in bad.items()}
    assert all(states[track_key(t)]["state"] == "failed" for t in bad.values()), reasons
    assert "only https" in reasons["loopback"]
    assert "169.254.169.254 is link-local" in reasons["metadata"]
    assert "10.20.30.40 is private" in reasons["private"]
    if deployed.name == "mux":  # these went with the create, and Mux's fetch said why
        assert "could not be downloaded" in reasons["unreachable"]
        assert "larger than" in reasons["too large"]
        assert "not a valid WebVTT or SRT" in reasons["not a caption"]
    else:
        assert "does not resolve" in reasons["unreachable"] and "(after 2 attempts)" in reasons["unreachable"]
        assert "over the 2,097,152 allowed" in reasons["too large"]
        assert reasons["not a caption"].startswith("not a caption file: neither WebVTT")
    at_provider = held(deployed.sim)[asset_id]
    assert at_provider["fr"]["status"] == "ready" and "de" not in at_provider and "es" not in at_provider

    code, out, err = cli("report", "--format", "jsonl")
    [line] = [json.loads(x) for x in out.splitlines() if json.loads(x)["id"] == asset_id]
    assert code == 0 and (line["tracks_attached"], line["tracks_failed"]) == (1, 6), err
    assert "169.254.169.254 is link-local" in line["track_failures"]

    code, out, err = cli("retry", "--tracks", "--id", asset_id, "--json")
    summary = json.loads(out.splitlines()[-1])
    assert code == 0 and (summary["assets"], summary["tracks"], summary["sent"]) == (1, 6, 1), out + err
    again = tracks_settled(aws("dynamodb"), table, [asset_id])[asset_id]["track_states"]
    assert again[track_key(good)] == states[track_key(good)]  # an attached track is never touched
    assert all(int(again[track_key(t)].get("retries", 0)) == 1 for t in bad.values())
    assert {again[track_key(t)]["error"] for t in bad.values()} == set(reasons.values())
