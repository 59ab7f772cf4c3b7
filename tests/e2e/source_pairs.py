"""The source pairs' shared parts for the end-to-end modules that migrate from a platform: each provider stack as a
target (`targets`, reset the first time a module asks for it, its simulator fetching what it is handed over
loopback), `migrate` (migrator inventory --from, load, wait until every asset is done, reconcile's poll making good
a webhook lost on a loaded machine), and the checks the pairs share (never sent, titles carried, tracks attached).
"""

from __future__ import annotations

import contextlib
import json
import time

import pytest
import requests
from migrator_cli.main import main

from infra.sim.library import item
from infra.sim.platforms import apivideo_library as sim_apivideo
from infra.sim.platforms import cloudflare as sim_cloudflare
from infra.sim.platforms import mux as sim_mux
from infra.sim.platforms import vimeo as sim_vimeo
from infra.sim.platforms import wistia as sim_wistia
from tests.e2e.stacks import provider_stack, set_environment, settle_with_reconcile

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

    @contextlib.contextmanager
    def uploader_environment(self, lambda_client, **variables: str):
        """The uploader run with `variables` set in its environment (as a stack parameter would set them) for
        the body, then as the shared stack had it: a test that needs a setting the others sharing it do not."""
        name = self.outputs["UploaderFunctionName"]
        before = lambda_client.get_function_configuration(FunctionName=name)["Environment"]["Variables"]
        set_environment(lambda_client, name, {**before, **variables})
        try:
            yield
        finally:
            set_environment(lambda_client, name, before)

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

        def reconcile() -> None:
            main(["reconcile", "--poll-after", "10", "--outputs", str(target.outputs_path), "--endpoint", endpoint])
            capsys.readouterr()

        table = target.outputs["LedgerTableName"]
        return settle_with_reconcile(aws("dynamodb"), table, ids, DONE, timeout_s, reconcile)

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


def track_errors(aws, target: Target, ids: list[str]) -> dict:
    """{asset id: {track key: its error}} of the tracks that did not attach: what an assertion shows."""
    from migrator.ledger import Ledger

    found = Ledger(target.outputs["LedgerTableName"], aws("dynamodb")).get_many(ids)
    errors = {
        i: {k: e.get("error") for k, e in (item.get("track_states") or {}).items() if e.get("state") != "attached"}
        for i, item in found.items()
    }
    return {i: entries for i, entries in errors.items() if entries}


# An entry's settled states: a caption or an extra attached or failed for good, or an extra the target noted.
SETTLED = {"attached", "failed", "noted"}


def tracks_attached(aws, target: Target, ids: list[str], timeout_s: float = 180) -> dict:
    """Until every asset's entries are settled (captions and the extras: a thumbnail, chapters, a collection
    place, which a target may note instead); {asset id: {caption track key: state}}, the captions only."""
    from migrator.ledger import Ledger

    ledger, deadline = Ledger(target.outputs["LedgerTableName"], aws("dynamodb")), time.time() + timeout_s
    while True:
        found = ledger.get_many(ids)
        entries = {i: (found.get(i, {}).get("track_states") or {}) for i in ids}
        settled = all(e and {s.get("state") for s in e.values()} <= SETTLED for e in entries.values())
        if settled or time.time() > deadline:
            return {
                i: {k: s.get("state") for k, s in e.items() if s.get("kind", "caption") == "caption"}
                for i, e in entries.items()
            }
        time.sleep(1)


def not_ready(items: dict, rows: list[dict]) -> dict:
    """{asset id: (state, last error)} of the rows not ready: what an assertion shows when one is not."""
    found = (items.get(r["id"], {}) for r in rows)
    return {i.get("asset_id"): (i.get("state"), i.get("last_error")) for i in found if i.get("state") != "ready"}
