"""Migrating from the platform a library lives on, end to end: template.yaml deployed with a target provider and
the sources' credentials, `migrator inventory --from` run against source simulators (one per platform, each on
its own port), `migrator load` of what it wrote, and the real queue, uploader, webhook and ledger.

Per pair (Vimeo → Mux, Cloudflare Stream → Mux, api.video → Mux, S3 → Mux, Wistia → api.video, Mux →
Cloudflare Stream): every fetchable asset ready, every unfetchable one reported with its reason and never
sent, no duplicate video, and the titles the source holds are the titles the target holds. The target
simulators fetch every link they are handed from the source simulator over loopback (check_source), so a
link that expired or a file that is not there fails the ingest as the real provider fails it. Then, side by
side, links that live 60 s minted at the create and minted at the inventory while the queue takes minutes to
drain; and files the source must prepare first (Stream's MP4, Mux's master), waited for without spending
attempts, one that never finishes failed with its reason.
"""

from __future__ import annotations

import json
import time

import pytest
import requests
from migrator.sources import build, parse_ref
from migrator_cli.main import main

from infra.sim import apivideo_library as sim_apivideo
from infra.sim import cloudflare as sim_cloudflare
from infra.sim import mux as sim_mux
from infra.sim import vimeo as sim_vimeo
from infra.sim import wistia as sim_wistia
from infra.sim.library import item
from tests.conftest import unique
from tests.e2e.conftest import SOURCE_BUCKET, provider_stack, wait_for_states
from tests.e2e.stacks import SOURCE_PREPARE_TIMEOUT_S as PREPARE_TIMEOUT_S

pytestmark = pytest.mark.e2e
INDEX_OF = {
    "vimeo": sim_vimeo.index_of,
    "wistia": sim_wistia.index_of,
    "mux": sim_mux.library_index,
    "cloudflare": sim_cloudflare.library_index,
    "apivideo": sim_apivideo.library_index,
}
FAULTS = {
    name: module.FAULTS
    for name, module in (
        ("vimeo", sim_vimeo),
        ("wistia", sim_wistia),
        ("mux", sim_mux),
        ("cloudflare", sim_cloudflare),
        ("apivideo", sim_apivideo),
    )
}
DONE = {"ready", "rejected", "failed"}


class Target:
    """A provider stack as the source pairs use it: the deployed stack, and the titles its simulator holds."""

    def __init__(self, deployed):
        self.name, self.sim, self.acct, self.outputs = deployed.name, deployed.sim, deployed.acct, deployed.outputs
        self.outputs_path, self.stack_name = deployed.outputs_path, deployed.stack_name

    def held(self, remote_id: str) -> dict:
        """The target's own object for one of its videos, as its simulator holds it (its API's wire form)."""
        creds = self.sim.config
        if self.name == "mux":
            url, auth, key = f"{self.sim.url}/video/v1/assets/{remote_id}", (creds.token_id, creds.token_secret), "data"
            return requests.get(url, auth=auth, timeout=10).json()[key]
        if self.name == "apivideo":
            return requests.get(f"{self.sim.url}/videos/{remote_id}", auth=(creds.api_key, ""), timeout=10).json()
        answer = requests.get(
            f"{self.sim.url}/accounts/{creds.account_id}/stream/{remote_id}",
            headers={"Authorization": f"Bearer {creds.token}"},
            timeout=10,
        )
        return answer.json()["result"]

    def title_of(self, remote_id: str) -> str:
        """The title the target stored for one of its videos, read through its own API."""
        creds = self.sim.config
        if self.name == "mux":
            answer = requests.get(
                f"{self.sim.url}/video/v1/assets/{remote_id}", auth=(creds.token_id, creds.token_secret), timeout=10
            )
            return answer.json()["data"]["meta"]["title"]
        if self.name == "apivideo":
            answer = requests.get(f"{self.sim.url}/videos/{remote_id}", auth=(creds.api_key, ""), timeout=10)
            return answer.json()["title"]
        answer = requests.get(
            f"{self.sim.url}/accounts/{creds.account_id}/stream/{remote_id}",
            headers={"Authorization": f"Bearer {creds.token}"},
            timeout=10,
        )
        return answer.json()["result"]["meta"]["name"]


@pytest.fixture(scope="module")
def targets(stacks, sources, track_files):
    """target(name): the shared stack of provider `name` (every source's credentials in its secret), reset the
    first time this module asks for it, its simulator fetching what it is handed (check_source)."""
    made: dict[str, Target] = {}
    sources.reset()

    def target(name: str) -> Target:
        if name not in made:
            with provider_stack(name, stacks, sources, track_files) as deployed:
                deployed.sim.patch_config({"check_source": True})
                made[name] = Target(deployed)
        return made[name]

    yield target
    for target_stack in made.values():
        target_stack.sim.patch_config({"check_source": False})


@pytest.fixture
def migrate(sources, endpoint, aws, tmp_path, capsys):
    """migrate(platform, target) -> (rows, held back, ledger items): inventory, load, wait until all are done.
    Held back: what the inventory never wrote as a row, each with its reason: the unfetchable videos, and
    those the platform was still processing (carried in the mark file to the next sweep)."""
    credentials = tmp_path / "sources.json"
    credentials.write_text(json.dumps(sources.credentials))

    def run(platform: str, target: Target, timeout_s: float = 240, s3: str | None = None):
        out = tmp_path / f"{platform}-{target.name}.jsonl"
        argv = ["inventory", "--from", platform, "-o", str(out), "--mark-file", str(tmp_path / "marks.json")]
        argv += ["--s3", s3, "--endpoint-url", endpoint] if s3 else ["--source-url", sources.base(platform)]
        argv += ["--credentials", str(credentials), "--restart"]
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 0, err
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        unfetchable_file = out.with_name(out.name + ".unfetchable.jsonl")
        unfetchable = [json.loads(line) for line in unfetchable_file.read_text().splitlines()]
        pending = json.loads((tmp_path / "marks.json").read_text()).get(platform, {}).get("pending", {})
        unfetchable += [{"id": asset_id, **held} for asset_id, held in pending.items()]
        code = main(["load", str(out), "--outputs", str(target.outputs_path), "--endpoint", endpoint])
        assert code == 0, capsys.readouterr().err
        capsys.readouterr()
        ids = [row["id"] for row in rows]
        return rows, unfetchable, settle(target, ids, timeout_s)

    def settle(target: Target, ids: list[str], timeout_s: float) -> dict:
        """Until every asset is done; a webhook lost on the way (a cold webhook Lambda on a loaded machine
        times out) is made good by reconcile's poll, run as an operator runs it."""
        deadline = time.time() + timeout_s
        while True:
            try:
                table = target.outputs["LedgerTableName"]
                return wait_for_states(aws("dynamodb"), table, ids, DONE, min(45.0, deadline - time.time()))
            except AssertionError:
                if time.time() >= deadline:
                    raise
            main(["reconcile", "--poll-after", "10", "--outputs", str(target.outputs_path), "--endpoint", endpoint])
            capsys.readouterr()

    run.settle = settle
    return run


def held_by(sources, platform: str, row: dict):
    """The library video a row names, as the source simulator holds it."""
    index = INDEX_OF[platform](row["metadata"]["source_id"])
    return item(sources.sims[platform].config, index, FAULTS[platform])


def assert_never_sent(aws, target: Target, unfetchable: list[dict]) -> None:
    table = target.outputs["LedgerTableName"]
    for entry in unfetchable:
        assert entry["reason"], entry
        assert "Item" not in aws("dynamodb").get_item(TableName=table, Key={"asset_id": {"S": entry["id"]}})


def assert_titles_carried(sources, platform: str, target: Target, rows: list[dict], items: dict) -> None:
    """The title the source holds (its library's), the one the inventory wrote, the one the target stores."""
    for row in rows:
        held = held_by(sources, platform, row).title
        assert row["title"] == held
        if items[row["id"]]["state"] == "ready":
            assert target.title_of(items[row["id"]]["remote_id"]) == held


@pytest.mark.parametrize("platform", ["vimeo", "apivideo"])
def test_a_library_moves_to_mux_with_its_titles_and_without_what_cannot_be_fetched(
    platform, sources, targets, migrate, aws
):
    target = targets("mux")
    rows, unfetchable, items = migrate(platform, target)
    assert len(rows) + len(unfetchable) == 20 and len(unfetchable) == 4  # every fifth: unfetchable or processing
    assert {items[r["id"]]["state"] for r in rows} == {"ready"}
    assert_never_sent(aws, target, unfetchable)
    assert_titles_carried(sources, platform, target, rows, items)
    assert target.sim.stats()["duplicate_videos"] == 0
    assert any(row.get("tracks") for row in rows) and any(row.get("privacy") == "private" for row in rows)


def test_wistia_moves_to_apivideo(sources, targets, migrate, aws):
    target = targets("apivideo")
    rows, unfetchable, items = migrate("wistia", target)
    assert len(unfetchable) == 4 and {items[r["id"]]["state"] for r in rows} == {"ready"}
    assert_never_sent(aws, target, unfetchable)
    assert_titles_carried(sources, "wistia", target, rows, items)
    assert target.sim.stats()["duplicate_videos"] == 0


PREPARED = [
    ("cloudflare", "mux", "Stream is preparing the MP4 download"),
    ("mux", "cloudflare", "Mux is preparing the master file"),
]


@pytest.mark.parametrize(("platform", "to", "preparing"), PREPARED)
def test_files_the_source_prepares_are_waited_for_without_attempts_and_one_that_never_is_fails(
    platform, to, preparing, sources, targets, migrate, aws
):
    sources.sims[platform].patch_config({"library_stuck_every": 7})
    target = targets(to)
    rows, unfetchable, items = migrate(platform, target, timeout_s=PREPARE_TIMEOUT_S + 200)
    stuck = {r["id"] for r in rows if held_by(sources, platform, r).stuck}
    assert stuck, "no stuck preparation in the library: the test would prove nothing"
    for row in rows:
        record = items[row["id"]]
        if row["id"] in stuck:
            assert record["state"] == "failed" and "retry_after" not in record
            assert f"(SourcePrepareTimeoutSeconds {PREPARE_TIMEOUT_S}): {preparing}" in record["last_error"]
        else:
            assert record["state"] == "ready", record
            assert int(record["holds"]) >= 1 and int(record["attempts"]) == 1  # waited, and no attempt spent on it
    assert_never_sent(aws, target, unfetchable)
    assert_titles_carried(sources, platform, target, rows, items)
    assert target.sim.stats()["duplicate_videos"] == 0


def test_an_s3_prefix_moves_to_mux(targets, migrate, aws, sources):
    target = targets("mux")
    s3 = aws("s3")
    if SOURCE_BUCKET not in {b["Name"] for b in s3.list_buckets()["Buckets"]}:
        s3.create_bucket(Bucket=SOURCE_BUCKET)
    prefix = unique("shows")
    for key in ("ep1.mp4", "ep2.mov", "cover.jpg"):
        s3.put_object(Bucket=SOURCE_BUCKET, Key=f"{prefix}/{key}", Body=b"\x00\x00\x00\x18ftypmp42" * 64)
    rows, unfetchable, items = migrate("s3", target, s3=f"s3://{SOURCE_BUCKET}/{prefix}/")
    assert sorted(r["title"] for r in rows) == ["ep1.mp4", "ep2.mov"] and not unfetchable
    assert {items[r["id"]]["state"] for r in rows} == {"ready"}
    for row in rows:
        assert target.title_of(items[row["id"]]["remote_id"]) == row["title"]


def test_links_minted_at_the_create_outlive_a_slow_queue_where_links_minted_at_the_inventory_expire(
    sources, targets, migrate, aws, endpoint, tmp_path, capsys
):
    """Links that live 20 s and a drain of a minute (the clocks of a real run, days and weeks, shrunk alike): the
    same library, half loaded as references (the link made at the create), half with the links the inventory
    could have written instead (made at the inventory), the two interleaved so that both kinds are created all
    through the drain."""
    ttl_s = 20
    vimeo, target = sources.sims["vimeo"], targets("mux")
    vimeo.patch_config({"library_size": 80, "library_unfetchable_every": 0, "link_ttl_s": ttl_s})
    target.sim.patch_config({"rate": 1.0, "burst": 1})  # 60 creates at 1/s: three times the links' lifetime
    source = build("vimeo", lambda: sources.credentials["vimeo"], sources.base("vimeo"))
    rows, by_reference, minted, minted_at = [], [], [], time.time()
    for index in range(20, 80):
        ref = f"vimeo://{sim_vimeo.ID_BASE + index}"
        asset_id = f"vimeo/{sim_vimeo.ID_BASE + index}"
        if index % 2:
            row = {"id": asset_id, "source_url": ref}
            by_reference.append(row)
        else:  # what an exporter writing download links would have loaded
            row = {"id": asset_id, "source_url": source.resolve(parse_ref(ref)).url}
            minted.append(row)
        rows.append(row)
    inventory = tmp_path / "side-by-side.jsonl"
    inventory.write_text("".join(json.dumps(row) + "\n" for row in rows))
    try:
        assert main(["load", str(inventory), "--outputs", str(target.outputs_path), "--endpoint", endpoint]) == 0
        capsys.readouterr()
        items = migrate.settle(target, [row["id"] for row in rows], 300)
    finally:
        target.sim.patch_config({"rate": 0, "burst": 20})
    created = {r["ref"]: r["t"] for r in target.sim.requests_log() if r["status"] == 201}
    assert all(items[row["id"]]["state"] == "ready" for row in by_reference), not_ready(items, by_reference)
    late = [row for row in minted if created[row["id"]] > minted_at + ttl_s + 2]
    on_time = [row for row in minted if created[row["id"]] < minted_at + ttl_s - 2]
    assert len(late) >= len(minted) // 2, "the queue drained before the links expired: the test would prove nothing"
    for row in late:  # the target fetched an expired link: the ingest failed as Mux fails it
        assert items[row["id"]]["state"] == "rejected"
        assert "could not be downloaded" in items[row["id"]]["last_error"]
    assert all(items[row["id"]]["state"] == "ready" for row in on_time)
    assert max(created[row["id"]] for row in by_reference) > minted_at + ttl_s + 2  # references made late worked


def track_errors(aws, target: Target, ids: list[str]) -> dict:
    """{asset id: {track key: its error}} of the tracks that did not attach: what an assertion shows."""
    from migrator.ledger import Ledger

    found = Ledger(target.outputs["LedgerTableName"], aws("dynamodb")).get_many(ids)
    errors = {
        i: {k: e.get("error") for k, e in (item.get("track_states") or {}).items() if e.get("state") != "attached"}
        for i, item in found.items()
    }
    return {i: entries for i, entries in errors.items() if entries}


def tracks_attached(aws, target: Target, ids: list[str], timeout_s: float = 180) -> dict:
    """Until every asset's caption tracks are settled; {asset id: {track key: state}}."""
    from migrator.ledger import Ledger

    ledger, deadline = Ledger(target.outputs["LedgerTableName"], aws("dynamodb")), time.time() + timeout_s
    while True:
        found = ledger.get_many(ids)
        states = {i: {k: e.get("state") for k, e in (found.get(i, {}).get("track_states") or {}).items()} for i in ids}
        settled = all(entries and set(entries.values()) <= {"attached", "failed"} for entries in states.values())
        if settled or time.time() > deadline:
            return states
        time.sleep(1)


def not_ready(items: dict, rows: list[dict]) -> dict:
    """{asset id: (state, last error)} of the rows not ready: what an assertion shows when one is not."""
    found = (items.get(r["id"], {}) for r in rows)
    return {i.get("asset_id"): (i.get("state"), i.get("last_error")) for i in found if i.get("state") != "ready"}


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
