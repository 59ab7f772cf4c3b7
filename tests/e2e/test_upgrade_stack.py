"""An upgrade in the middle of a migration, end to end: an earlier release's template and code deployed on
the emulator, 120 assets loaded, workers dying right after their create, then `sam deploy` of this release
over the same stack while the queue still drains, `migrator upgrade`, and the drain finished by this
release's code: every asset terminal, each video made once, nothing left where reconcile cannot reach it.

The earlier releases are CHANGELOG.md's, each taken from the repository's own history (`git archive`) and
built and deployed by this tree's local-stack command (`--source`), as an operator's checkout of the old
release would be. The suite runs UPGRADE_FROM: the oldest (0.1.0, an HTTP API where later releases have a
REST API, a ledger of schema 1) and the one before the newest; MIGRATOR_UPGRADE_FROM=all (or a list of
versions) runs others. The test deploys the old release with only the parameters its template declares.
"""

from __future__ import annotations

import os
import subprocess
import time

import pytest
import yaml
from migrator.ledger import Ledger
from migrator_cli.main import main
from migrator_cli.upgrade import schema_status

from tests.conftest import ROOT, unique
from tests.e2e.conftest import queue_depth, wait_for_states
from tests.e2e.stacks import delete, sam_up, stack_parameters
from tests.e2e.test_uploader_stack import asset, send_all
from tests.template.test_releases import releases

pytestmark = pytest.mark.e2e
UPGRADE_FROM = ("0.1.0", "0.2.0")
ASSETS = 120
CRASH_RATE = "0.12"
# Seconds without a ledger write after the pause that show the running invocations have finished: a warm one
# claims and creates within a second or two; a cold one under a loaded suite starts within about ten.
QUIET_S = 10.0  # of creates whose invocation dies right after the provider answered (migrator.chaos)


def upgrade_from() -> list[str]:
    """The release versions to upgrade from: MIGRATOR_UPGRADE_FROM (comma-separated, or "all"), else UPGRADE_FROM."""
    known = [version for version, _ in releases()]
    asked = os.environ.get("MIGRATOR_UPGRADE_FROM", ",".join(UPGRADE_FROM))
    chosen = known if asked.strip() == "all" else [v.strip() for v in asked.split(",") if v.strip()]
    unknown = sorted(set(chosen) - set(known))
    assert not unknown, f"MIGRATOR_UPGRADE_FROM names no release of CHANGELOG.md: {unknown} (releases: {known})"
    return chosen


@pytest.fixture(scope="module", params=upgrade_from())
def previous_tree(request, tmp_path_factory):
    """The release's tree, taken from this clone's history."""
    commit = dict(releases())[request.param]
    tree = tmp_path_factory.mktemp(f"release-{request.param}")
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True)
    assert archive.returncode == 0, f"release {request.param} is not in this clone's history: {archive.stderr[-300:]!r}"
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def declared_parameters(tree) -> set[str]:
    """The parameter names a tree's template declares (an older release refuses ones it does not know)."""
    loader = type("Loader", (yaml.SafeLoader,), {})
    loader.add_multi_constructor("!", lambda load, tag, node: None)
    return set(yaml.load((tree / "template.yaml").read_text(), Loader=loader)["Parameters"])


def test_a_migration_upgraded_in_place_mid_way_finishes_every_asset_once(endpoint, aws, previous_tree, tmp_path):
    from infra.accounts import account
    from infra.provider_sim import ProviderSim, SimConfig

    acct = account("generic", "standard")
    # Signed as the stack verifies them (WebhookScheme): with the simulator's default scheme instead, every
    # callback was refused with a 401 and only reconcile's poll settled videos.
    sim = ProviderSim(
        SimConfig(port=0, rate=0, processing_delay_s=2.0, webhook_scheme=acct.webhook_scheme, **acct.sim)
    ).start()
    name, outputs_path = unique("e2e-upgrade"), tmp_path / "outputs.json"
    # One record an invocation: a worker that dies takes back to the queue only the record it died on (healed by
    # reconcile once its lease ends), not a batch of others that would wait out the queue's 6-minute visibility.
    params = stack_parameters(aws, sim, acct, UploaderTimeout="60", ReconcileScheduleEnabled="false", BatchSize="1")
    try:
        known = declared_parameters(previous_tree)
        old = sam_up(
            endpoint, name, {k: v for k, v in params.items() if k in known}, outputs_path, source=previous_tree
        )
        # The previous release reserves no concurrency for its webhook (its template predates WebhookConcurrency),
        # and the emulator runs each concurrent execution as a process on this machine: a burst of ready videos
        # started 64 cold webhook workers within two minutes, each timing out, a storm that starved this test and
        # the tests beside it. The old release's callbacks are left unsent, as if lost in the upgrade (reconcile's
        # poll settles those videos); they are turned on, for this release's bounded webhook, once it is deployed.
        sim.patch_config(
            {"webhook_url": old["WebhookUrl"], "webhook_secret": acct.webhook_secret, "webhooks_enabled": False}
        )
        if (previous_tree / "functions" / "migrator" / "chaos.py").exists():
            uploader = aws("lambda").get_function_configuration(FunctionName=old["UploaderFunctionName"])
            variables = {**uploader["Environment"]["Variables"], "CHAOS_CRASH_AFTER_CREATE": CRASH_RATE}
            aws("lambda").update_function_configuration(
                FunctionName=old["UploaderFunctionName"], Environment={"Variables": variables}
            )
        else:  # 0.1.0 has no chaos knob: the provider loses create answers instead, so tries are made again
            sim.patch_config({"lose_rate": float(CRASH_RATE)})
        ids = [f"{name}/{i:03d}" for i in range(ASSETS)]
        send_all(aws("sqs"), old["QueueUrl"], [asset(i, f"https://media.example.com/{i}.mp4?duration=5") for i in ids])
        deadline = time.time() + 300
        while sim.stats()["videos"] < ASSETS // 3 and time.time() < deadline:  # a third made by the old release
            time.sleep(1)
        assert sim.stats()["videos"] >= ASSETS // 3, "the old release never got going"

        cli = ["--outputs", str(outputs_path), "--endpoint", endpoint]
        # On AWS a code update lets running invocations finish on the old code (the runbook's "no need to pause
        # first"); the emulator kills them, and a worker started while the code is swapped dies before its claim.
        # Such a message has no ledger item to heal (it was pushed straight to SQS) and comes back only after the
        # queue's 6-minute visibility: runs took 460 to 531 s against 180 s. The uploader's trigger is paused across
        # the swap, once what was running has finished, so the emulator swaps the code as AWS does; the crashes
        # after the create (CHAOS) still leave their assets for reconcile.
        assert main(["pause", *cli]) == 0
        wait_for_quiet_ledger(aws("dynamodb"), old["LedgerTableName"])
        new = sam_up(endpoint, name, params, outputs_path)  # this release, over the same stack, mid-drain
        sim.patch_config({"lose_rate": 0.0})
        assert main(["resume", *cli]) == 0
        assert new["LedgerTableName"] == old["LedgerTableName"]
        assert (
            "CHAOS_CRASH_AFTER_CREATE"
            not in (
                aws("lambda").get_function_configuration(FunctionName=new["UploaderFunctionName"])["Environment"][
                    "Variables"
                ]
            )
        )  # the template's own configuration again: no more crashes
        # The releases up to 0.3.0 had their webhook under other logical ids: a new URL to give the provider.
        sim.patch_config({"webhook_url": new["WebhookUrl"], "webhooks_enabled": True})
        assert main(["upgrade", "--checkpoint", str(tmp_path / "upgrade.json"), "--rate", "0", *cli]) == 0
        assert schema_status(aws("dynamodb"), new["LedgerTableName"])[0]

        items = drain(aws, new, ids, cli)
        ledger = Ledger(new["LedgerTableName"], aws("dynamodb"))
        states = {i: items[i]["state"] for i in ids}
        assert set(states.values()) == {"ready"}, {s: list(states.values()).count(s) for s in set(states.values())}
        stats = sim.stats()
        assert stats["duplicate_videos"] == 0 and stats["videos"] == ASSETS
        healed = [i for i in ids if int(ledger.get(i).get("heals", 0) or 0) > 0]
        retried = [i for i in ids if int(items[i]["attempts"]) > 1]
        assert healed or retried, "no worker died: the test would prove nothing"
        assert queue_depth(aws("sqs"), new["DeadLetterQueueUrl"]) == 0
    finally:
        delete(endpoint, name)
        sim.stop()


def wait_for_quiet_ledger(dynamodb, table: str, quiet_s: float = QUIET_S, timeout_s: float = 90) -> float:
    """Until no ledger item has been written for `quiet_s` (the invocations that were running have finished, or
    died after their create), at most `timeout_s`; returns the seconds since the last write."""
    deadline = time.time() + timeout_s
    while True:
        items = dynamodb.scan(TableName=table, ProjectionExpression="updated_at", ConsistentRead=True)["Items"]
        latest = max((float(i["updated_at"]["N"]) for i in items if "updated_at" in i), default=0.0)
        silent = time.time() - latest
        if silent >= quiet_s or time.time() > deadline:
            return silent
        time.sleep(1)


def drain(aws, outputs: dict, ids: list[str], cli: list[str], timeout_s: float = 420) -> dict:
    """Until every asset is terminal, running reconcile as an operator would while it drains: what a dead
    worker left (its lease run out) is healed, a video whose webhook was lost is polled. Reconcile runs first:
    the old release's callbacks were never sent, so its videos wait for the poll whatever the drain does."""
    deadline = time.time() + timeout_s
    while True:
        assert main(["reconcile", "--heal-after", "5", "--poll-after", "5", "--json", *cli]) in (0, 1)
        try:
            return wait_for_states(aws("dynamodb"), outputs["LedgerTableName"], ids, {"ready", "rejected"}, 20)
        except AssertionError:
            if time.time() > deadline:
                raise
