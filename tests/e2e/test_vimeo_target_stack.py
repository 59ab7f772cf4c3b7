"""Vimeo as the target, end to end: template.yaml deployed with `Provider=vimeo` against the simulator speaking
Vimeo's API (pull uploads, no webhooks, text tracks in two steps), driven through the real queues, uploader,
tracks worker and reconcile, and read back from what the simulator holds at the end.

- a batch migrates once despite lost create answers, a search that does not show a new video yet and a worker
  that died after its create; Vimeo sends no webhook, so reconcile's poll settles every video;
- every field is held where Vimeo keeps it (name, description and our reference line, privacy.view), private
  rows and rows with no privacy are `nobody`, and on a Basic plan an unlisted row is `nobody` too, noted in
  the ledger and found by `migrator audit` as narrower than asked;
- caption tracks arrive once each, active, with their files, despite lost answers, and none is left half made;
- a Mux library is refused at the hand-off (`migrator inventory --from mux`, `migrator load`): Mux's master
  lives 24 hours from when Mux made it, less than the 24 hours Vimeo needs its pull's link for, so every
  fetchable video is rejected with why and what to do before any create, what cannot be fetched never sent;
- a Kaltura library arrives with what a viewer sees (issue 42): each entry's thumbnail, chapters and categories
  held by Vimeo as Kaltura holds them, despite lost answers.
"""

from __future__ import annotations

import json
import time
from unittest import mock

import pytest
from migrator.ledger import Claimed, Ledger
from migrator.messages import AssetMessage, Track
from migrator.providers import AssetRef
from migrator.providers.vimeo import ref_line
from migrator_cli.main import main

from tests.conftest import unique
from tests.e2e import stacks as stacks_module
from tests.e2e.conftest import wait_for_states
from tests.e2e.extras_pairs import SourceFiles, answers_lost, assert_entries_settled, assert_extras_held
from tests.e2e.test_tracks_stack import tracks_settled
from tests.e2e.test_uploader_stack import asset, send_all

pytestmark = pytest.mark.e2e
DONE = {"ready", "rejected", "failed"}


@pytest.fixture(scope="module")
def deployed(stacks, sources, track_files):
    """The Vimeo stack, as Stacks._provider makes a provider's (Vimeo takes no provider options), reset; a track
    has the template's default attempts (5), since each of Vimeo's is three calls, two of whose answers a
    fault may lose."""

    def make():
        with mock.patch.dict(stacks_module.PROVIDER_OPTIONS, {"vimeo": {"MaxTrackAttempts": "5"}}):
            return stacks._provider("vimeo", sources, track_files)

    made = stacks.get("provider:vimeo", make)
    stacks.reset(made)
    yield made


@pytest.fixture
def vimeo_sim(deployed):
    """The module's simulator with its faults off and its first configuration back."""
    deployed.sim.patch_config({**deployed.sim_baseline, "lose_rate": 0.0, "track_lose_rate": 0.0, "plan": "pro"})
    yield deployed.sim
    deployed.sim.patch_config({"search_lag_s": 0.0, "check_source": False, "plan": "pro"})


def settle(aws, deployed, cli, ids: list[str], done: set[str] = DONE, timeout_s: float = 240) -> dict:
    """Until every asset is done. Vimeo sends no webhook: reconcile's poll, run as an operator runs it (the
    schedule is off in the e2e stacks), is what settles each video."""
    table, deadline = deployed.outputs["LedgerTableName"], time.time() + timeout_s
    while True:
        try:
            return wait_for_states(aws("dynamodb"), table, ids, done, 10)
        except AssertionError:
            if time.time() >= deadline:
                raise
        code, out, err = cli("reconcile", "--poll-after", "0", "--json")
        assert code == 0, out + err


def held(sim) -> dict:
    """{our asset id: [the videos the simulator holds for it]} (the reference it read from the description)."""
    with sim._lock:
        out: dict = {}
        for video in sim._store.videos.values():
            out.setdefault(video.ref, []).append(video)
        return out


def test_a_batch_migrates_once_despite_lost_answers_a_lagging_search_and_a_crash_after_create(
    deployed, vimeo_sim, aws, cli
):
    ledger = Ledger(deployed.outputs["LedgerTableName"], aws("dynamodb"))
    run = unique("vimeo")
    ids = [f"{run}/{i}" for i in range(12)]
    crashed = f"{run}/crashed"
    # What a worker leaves when it dies between Vimeo's answer and its ledger write: the video exists, the
    # ledger says uploading under a lease that has run out.
    url = f"https://media.example.com/{crashed}.mp4?duration=9"
    made = deployed.client().create(AssetRef(crashed), url)
    assert made.remote_id, made
    past = time.time() - 600
    assert isinstance(ledger.claim(AssetMessage(crashed, url), past, past + 60, "dead-worker"), Claimed)

    before = vimeo_sim.stats()
    # A third of create answers never arrive, and a search shows no new video for ten minutes: each retry's
    # lookup must page the newest videos back to its claim.
    vimeo_sim.patch_config({"lose_rate": 0.3, "seed": 11, "search_lag_s": 600})
    send_all(aws("sqs"), deployed.outputs["QueueUrl"], [asset(i) for i in ids] + [asset(crashed, url)])
    items = settle(aws, deployed, cli, [*ids, crashed], {"ready"})

    stats = {k: v - before.get(k, 0) for k, v in vimeo_sim.stats().items() if isinstance(v, int)}
    assert stats["lost_responses"] > 0, "the fault did not happen: the test would prove nothing"
    assert vimeo_sim.stats()["duplicate_videos"] == 0 and stats["videos"] == len(ids)
    assert items[crashed]["remote_id"] == made.remote_id  # found, not made again
    videos = held(vimeo_sim)
    assert all(len(videos[i]) == 1 and videos[i][0].id == items[i]["remote_id"] for i in ids)
    assert stats["webhooks_delivered"] == 0  # Vimeo sends none: the poll settled every one


PRIVACIES = {"public": "anybody", "unlisted": "nobody", "private": "nobody", "default": "nobody"}


def test_every_field_and_the_privacy_are_held_and_basic_plans_unlisted_is_nobody(
    deployed, vimeo_sim, aws, cli, tmp_path
):
    vimeo_sim.patch_config({"plan": "basic"})
    run = unique("vimeo-fields")
    rows = []
    for word in PRIVACIES:
        row = {
            "id": f"{run}/{word}",
            "source_url": f"https://media.example.com/{run}/{word}.mp4?duration=40",
            "title": f"Talk ({word}) « ünïcode » 🎬",
            "duration_s": 40,
            "description": f"A talk that is {word}.\nSecond line.",
            "tags": ["talks", word],
            "metadata": {"speaker": "Ada"},
            "poster_time_s": 10,
            "created_at": "2019-05-01T10:00:00Z",
        }
        rows.append({**row, "privacy": word} if word != "default" else row)
    inventory = tmp_path / "library.jsonl"
    inventory.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    code, out, err = cli("load", str(inventory))
    assert code == 0, out + err
    ids = [r["id"] for r in rows]
    settle(aws, deployed, cli, ids, {"ready"})
    ledger = Ledger(deployed.outputs["LedgerTableName"], aws("dynamodb"))
    videos = held(vimeo_sim)
    for r in rows:
        [video] = videos[r["id"]]
        word = r["id"].rsplit("/", 1)[1]
        assert video.request["name"] == r["title"]
        assert video.request["description"] == f"{r['description']}\n\n{ref_line(r['id'])}"
        assert video.request["privacy"] == {"view": PRIVACIES[word]}, word
        notes = ledger.get(r["id"]).get("fidelity_notes") or []
        assert "tags: not carried by vimeo (kept in the ledger; Vimeo's create takes none)" in notes
    unlisted = ledger.get(f"{run}/unlisted").get("fidelity_notes")
    assert "privacy: unlisted sent as nobody (Vimeo Basic cannot set unlisted; narrower)" in unlisted
    code, out, err = cli("audit", "--json")
    audited = json.loads(out)
    drift = [f for f in audited["findings"] if f["kind"] == "privacy" and f["asset_id"].startswith(run)]
    assert [f["asset_id"] for f in drift] == [f"{run}/unlisted"], out + err  # narrower than asked, and said


def test_caption_tracks_arrive_once_each_active_with_their_files_despite_lost_answers(deployed, vimeo_sim, aws, cli):
    files, table = deployed.files, deployed.outputs["LedgerTableName"]
    en = Track(files.url("/en.srt"), "en", "captions", name="English", format="srt")
    fr = Track(files.url("/fr.vtt"), "fr", "subtitles", name="Français", format="vtt")
    vimeo_sim.patch_config({"track_lose_rate": 0.2, "seed": 7})  # a fifth of the track calls' answers lost
    run = unique("vimeo-tracks")
    ids = [f"{run}/{n}" for n in range(6)]
    bodies = [
        json.dumps(
            {
                "id": i,
                "source_url": f"https://media.example.com/{i}.mp4?duration=6",
                "tracks": [en.as_dict(), fr.as_dict()],
            }
        )
        for i in ids
    ]
    send_all(aws("sqs"), deployed.outputs["QueueUrl"], bodies)
    settle(aws, deployed, cli, ids, {"ready"})
    ledger, deadline = Ledger(table, aws("dynamodb")), time.time() + 180
    while time.time() < deadline:
        states = [e["state"] for i in ids for e in (ledger.get(i).get("track_states") or {}).values()]
        if len(states) == 2 * len(ids) and set(states) == {"attached"}:
            break
        time.sleep(1)
    assert len(states) == 2 * len(ids) and set(states) == {"attached"}, states
    assert vimeo_sim.stats()["lost_track_responses"] > 0, "no answer was lost: the test would prove nothing"
    videos = held(vimeo_sim)
    for i in ids:
        [video] = videos[i]
        kept = video.extra["texttracks"]
        shown = sorted((t.language, t.name, t.status, kept[t.id]["active"], kept[t.id]["type"]) for t in video.texts)
        assert shown == [("en", "English", "ready", True, "captions"), ("fr", "Français", "ready", True, "subtitles")]
        assert all(t.content and t.content.startswith(b"WEBVTT") for t in video.texts)  # files, as WebVTT


def inventory(platform: str, sources, tmp_path, capsys) -> tuple:
    """`migrator inventory --from platform` of the source simulator's library, as it began: (the file, its rows, the
    unfetchable ones, those the platform was still preparing)."""
    sources.reset()
    credentials = tmp_path / "sources.json"
    credentials.write_text(json.dumps(sources.credentials))
    out = tmp_path / f"{platform}-vimeo.jsonl"
    argv = ["inventory", "--from", platform, "-o", str(out), "--mark-file", str(tmp_path / "marks.json")]
    argv += ["--source-url", sources.base(platform), "--credentials", str(credentials), "--restart"]
    assert main(argv) == 0, capsys.readouterr().err
    capsys.readouterr()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    unfetchable = [json.loads(line) for line in out.with_name(out.name + ".unfetchable.jsonl").read_text().splitlines()]
    pending = json.loads((tmp_path / "marks.json").read_text()).get(platform, {}).get("pending", {})
    return out, rows, unfetchable, pending


def test_a_mux_library_is_refused_at_the_hand_off_since_its_masters_cannot_live_vimeos_24_hours(
    deployed, vimeo_sim, sources, aws, cli, endpoint, tmp_path, capsys
):
    """Issue 47, item 2.6: Mux's master lives 24 hours from when Mux made it ready, and Vimeo needs the link it pulls
    "valid for at least 24 hours": each fetchable video is rejected at the hand-off, after its master was
    prepared, with why and what to do; no create reaches Vimeo, and what cannot be fetched is never sent."""
    out, rows, unfetchable, pending = inventory("mux", sources, tmp_path, capsys)
    assert rows and len(rows) + len(unfetchable) + len(pending) == 20
    code, _out, err = cli("load", str(out))
    assert code == 0, err
    items = settle(aws, deployed, cli, [r["id"] for r in rows], DONE, 300)
    assert {items[r["id"]]["state"] for r in rows} == {"rejected"}, {r["id"]: items[r["id"]]["state"] for r in rows}
    for r in rows:
        error = items[r["id"]].get("last_error") or ""
        assert error.startswith("Mux's master file lives 24 hours from when Mux made it ready"), error
        assert "vimeo needs one valid for 24 h" in error and "migrate from there" in error
    videos = held(vimeo_sim)
    assert not [r["id"] for r in rows if r["id"] in videos]  # not one create was spent
    table = deployed.outputs["LedgerTableName"]
    for entry in [*unfetchable, *({"id": i} for i in pending)]:
        assert "Item" not in aws("dynamodb").get_item(TableName=table, Key={"asset_id": {"S": entry["id"]}})


def test_a_kaltura_library_arrives_with_its_thumbnails_chapters_and_categories_despite_lost_answers(
    deployed, vimeo_sim, sources, aws, cli, tmp_path, capsys
):
    """Issue 42: each Kaltura entry's default thumb asset, its chapter cue points and its categories are held by Vimeo
    (a new active picture, chapters, folders and showcases), read back from the Vimeo simulator, while a tenth of the
    extras' answers are lost: no collection made twice, no chapter written twice."""
    out, rows, _, _ = inventory("kaltura", sources, tmp_path, capsys)
    assert rows and any(row.get("collections") for row in rows)
    table, ids = deployed.outputs["LedgerTableName"], [row["id"] for row in rows]
    # Vimeo pulls Kaltura's links (check_source)
    with answers_lost(aws, deployed.stack_name, vimeo_sim, 0.1, 13, check_source=True):
        code, _out, err = cli("load", str(out))
        assert code == 0, err
        items = settle(aws, deployed, cli, ids, DONE, 300)
        assert {items[i]["state"] for i in ids} == {"ready"}, {i: items[i].get("last_error") for i in ids}
        assert_entries_settled(tracks_settled(aws("dynamodb"), table, ids, timeout_s=300))
    carried = assert_extras_held(SourceFiles.of(sources), "kaltura", "vimeo", vimeo_sim, table, aws("dynamodb"), rows)
    assert vimeo_sim.stats()["duplicate_videos"] == 0
    # Kaltura's library (infra/sim/platforms/kaltura_extras.py): an image for every entry, chapters on one in four;
    # its categories become folders (one a video: a second is noted) and showcases, in the source's order.
    assert carried.thumbnails >= len(rows) // 2 and carried.chapters >= 2 and carried.places >= 2, carried
