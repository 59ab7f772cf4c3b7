"""Benchmark: the pacer against a provider whose limit is unknown, lowered, or hidden behind faults,
today's pacer beside the new one, every scenario measured in one run.

    bench/pacing [--assets 2000] [--limit 20] [--baseline REV] [--only SUBSTRING]

Not a test: it prints one table. Two versions of the stack: "today", built from the git
revision `--baseline` (the pacer before it learned rates: a fixed rate, a fleet hold on
every 429 or 503), and "new", this working tree. For each scenario each drains N assets in
turn, each on a fresh emulator and provider simulator (limit 20 creates/s, a token bucket
of 20) with one stack deployed, so no drain inherits what an earlier one left behind:

  configured = true limit, no faults        both paced at 20 (new: ceiling 20)
  2 % 503 (half with Retry-After), 1 % lost  the same, with those faults on every API request
  starts at 2x / 0.5x the true limit         today fixed at 40 / 10; new starts there, no ceiling
  limit unknown, headers sent                today at its default 10; new starts at 5, reads headers
  limit drops to 10/s for a third of the run today and new at 20 (new: ceiling 20)

and, for the new pacer only (their targets are absolute, or relative to the clean row):

  Cloudflare, 120 in flight, 20 s encode     the in-flight cap binds: ideal N x 20 / 120 s; no 5-min block
  Mux at 1 create/s, 1 % of creates crash    the worker dies right after the create; 0 duplicates
  Bunny, Vimeo at 5/s; JW Player at 60        1 % of create answers lost and 1 % of creates crash; JW's
    requests a minute                        budget counts every call: ideal N at 60 creates a minute
  headers state twice the true limit         the told ceiling must not undo the 429 cuts
  2 % of all requests 503 (1-3 s), 1 % lost  <= 1.10 of ideal and <= 1.05 of the clean row
  every fault at once                        the above, 10 % early, 20 % twice, forged webhooks, 2 %
                                             sources refused: <= 1.10 of the clean row

Figures: drain ratio (last create - first send) / the schedule's ideal; 429s per 100
creates; SQS requests per asset (loader batches, the uploader's ChangeMessageVisibility
calls, and the event source mapping's receive and delete, 2 per invocation: the emulator
counts no mapping calls, so that part is estimated); uploader invocations per asset;
duplicate videos; assets not terminal (not ready, rejected or failed for good); and, where
any, uploader invocations that died (the emulator's log), create answers the simulator lost,
and assets a lookup found again after either.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from migrator.dynamo import to_item, typed
from migrator.pacer import PACER_ID
from migrator.providers import PROVIDERS

from infra.accounts import account
from infra.emulator import Emulator, client, free_port
from infra.localrun import SimProcess, uploader_metrics
from infra.toolchain import ROOT, tool

from .pacing_scenarios import Scenario, ideal_for, scenarios

# The commit whose pacer is "today's": the last one before the pacer learned rates.
BASELINE = "a1b0fc8"
TERMINAL = {"ready", "rejected"}
POLLED = {"vimeo"}  # providers that send no webhooks: reconcile's poll settles their videos
POLL_EVERY_S = 10.0
WARM_UP, WARM_UP_S = 400, 60  # warm-up assets, and the longest a paced warm-up may take
EMULATOR_LOG = ROOT / ".local" / "bench-pacing-ministack.log"  # every drain's emulator appends here


class Stack:
    """One deployment (today's or the new pacer) on the shared emulator and simulator."""

    def __init__(
        self, label: str, tree: Path, endpoint: str, sim: SimProcess, acct, token_name, hook_name, extra: dict
    ):
        self.label, self.endpoint = label, endpoint
        self.name = f"pacing-{label}-{uuid.uuid4().hex[:6]}"
        outputs = ROOT / ".local" / f"{self.name}-outputs.json"
        command = [tool("sam", "python"), "-m", "infra.stack", "up", "--endpoint", endpoint, "--stack-name", self.name]
        params = {
            "Provider": acct.provider,
            "ProviderBaseUrl": sim.url,
            "ProviderTokenSecretName": token_name,
            "WebhookSecretName": hook_name,
            "WebhookScheme": acct.webhook_scheme,
            "MaximumConcurrency": "5",
            "UploaderTimeout": "120",
            "ReconcileScheduleEnabled": "false",
            **({"IntakeConcurrency": "2"} if label == "new" else {}),  # what drains the loader, on the emulator
            **acct.stack,  # what the provider's account needs (Bunny: its token-protected library)
            **extra,
        }
        command += ["--outputs", str(outputs)] + [f"--param={k}={v}" for k, v in params.items()]
        print(f"[pacing] deploying {label} ({tree.name}) as {self.name}", flush=True)
        subprocess.run(command, cwd=tree, check=True, capture_output=True)
        self.outputs, self.outputs_path = json.loads(outputs.read_text()), outputs
        self.polled = acct.provider in POLLED  # its videos settle only by reconcile's poll

    def aws(self, service: str):
        return client(service, self.endpoint)

    def configure(self, env: dict) -> None:
        """New pacer settings for the uploader, and a fresh pacer: nothing learned carries over."""
        if env:
            lam = self.aws("lambda")
            function = self.outputs["UploaderFunctionName"]
            current = lam.get_function_configuration(FunctionName=function)["Environment"]["Variables"]
            lam.update_function_configuration(FunctionName=function, Environment={"Variables": {**current, **env}})
        self.aws("dynamodb").delete_item(TableName=self.outputs["LedgerTableName"], Key=typed({"asset_id": PACER_ID}))
        time.sleep(1)

    def pacer(self) -> dict:
        """The shared pacer item, plain values (for --trace)."""
        table, key = self.outputs["LedgerTableName"], typed({"asset_id": PACER_ID})
        return to_item(self.aws("dynamodb").get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")) or {}

    def queue_depths(self) -> dict:
        """Messages waiting and in flight on the intake and work queues (for --trace)."""
        sqs, depths = self.aws("sqs"), {}
        for name in ("QueueUrl", "WorkQueueUrl"):
            names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
            attrs = sqs.get_queue_attributes(QueueUrl=self.outputs[name], AttributeNames=names)["Attributes"]
            depths[name] = [int(attrs.get(a, 0)) for a in names]
        return depths

    def send(self, bodies: list[str]) -> int:
        sqs, url, calls = self.aws("sqs"), self.outputs["QueueUrl"], 0
        for start in range(0, len(bodies), 10):
            entries = [{"Id": str(i), "MessageBody": b} for i, b in enumerate(bodies[start : start + 10])]
            while entries:
                calls += 1
                failed = {f["Id"] for f in sqs.send_message_batch(QueueUrl=url, Entries=entries).get("Failed", [])}
                entries = [e for e in entries if e["Id"] in failed]
        return calls

    def adopted(self, ids: list[str]) -> int:
        """Assets claimed more than once whose one video the provider already had: the crashes survived."""
        dynamodb, table, count = self.aws("dynamodb"), self.outputs["LedgerTableName"], 0
        for start in range(0, len(ids), 100):
            keys = [{"asset_id": {"S": i}} for i in ids[start : start + 100]]
            resp = dynamodb.batch_get_item(RequestItems={table: {"Keys": keys, "ConsistentRead": True}})
            count += sum(1 for item in resp["Responses"].get(table, []) if int(item["attempts"]["N"]) > 1)
        return count

    def reconcile(self) -> None:
        """One reconcile run, as the stack's schedule would make it: the poll lane settles what no webhook will."""
        from migrator_cli.main import main as cli

        with contextlib.redirect_stdout(sys.stderr):
            cli(["reconcile", "--poll-after", "0", "--outputs", str(self.outputs_path), "--endpoint", self.endpoint])

    def wait_terminal(self, ids: list[str], deadline: float, pause_s: float = 1.0, allowed: int = 0) -> int:
        """Until at most `allowed` assets are not terminal, or the deadline passes: the assets left. A provider
        with no webhooks (Vimeo) has reconcile's poll run every POLL_EVERY_S meanwhile."""
        next_poll = time.time() + POLL_EVERY_S
        while (left := self.not_terminal(ids)) > allowed and time.time() < deadline:
            if self.polled and time.time() >= next_poll:
                self.reconcile()
                next_poll = time.time() + POLL_EVERY_S
            time.sleep(pause_s)
        return left

    def not_terminal(self, ids: list[str]) -> int:
        dynamodb, table, left = self.aws("dynamodb"), self.outputs["LedgerTableName"], 0
        for start in range(0, len(ids), 100):
            keys = [{"asset_id": {"S": i}} for i in ids[start : start + 100]]
            resp = dynamodb.batch_get_item(RequestItems={table: {"Keys": keys, "ConsistentRead": True}})
            items = resp["Responses"].get(table, [])
            done = sum(
                1
                for item in items
                if item["state"]["S"] in TERMINAL or (item["state"]["S"] == "failed" and "retry_after" not in item)
            )
            left += len(keys) - done
        return left


def drain(
    stack: Stack, sim: SimProcess, scenario: Scenario, n: int, limit: float, timeout_s: float, trace: Path | None = None
) -> dict:
    n = scenario.assets or n
    env = pacer_env(stack.label, scenario)
    stack.configure(env)
    warm_up_paced(stack, sim, scenario, float(env["PROVIDER_RATE_LIMIT"]))
    arm_provider(stack, sim, scenario, limit)
    ids, refused, bodies = drain_bodies(scenario, n)
    metrics_before, invocations_before = uploader_metrics(stack.aws("logs"), stack.aws("lambda"), stack.outputs)
    started = time.time()
    batches, requests_log = send_and_watch(stack, sim, scenario, bodies, n - len(refused), started, timeout_s, trace)
    log = [r for r in requests_log if r["t"] >= started and r["status"] in (200, 201)]
    finished = max((r["t"] for r in log), default=time.time())
    settle(stack, scenario, ids)
    stats = sim.stats()
    metrics, invocations = uploader_metrics(stack.aws("logs"), stack.aws("lambda"), stack.outputs)
    created = stats["videos"]
    runs = invocations - invocations_before
    sqs_uploader = metrics["SQSCalls"] - metrics_before["SQSCalls"]
    return {
        "ratio": (finished - started) / ideal_for(scenario, n - len(refused), limit),
        "seconds": finished - started,
        "start_s": min((r["t"] for r in log), default=finished) - started,  # first send to first create
        "per100": 100 * stats["throttled"] / max(created, 1),
        "blocks": stats.get("blocks", 0),  # Cloudflare's 5-minute blocks of every call
        "crashed": stack.adopted(ids),  # assets whose video was found again after a crash, not made twice
        "deaths": worker_deaths(EMULATOR_LOG, stack.outputs["UploaderFunctionName"]),
        "lost": lost_answers(requests_log, started),
        "sqs": (batches + sqs_uploader + 2 * runs) / n,
        "invocations": runs / n,
        "duplicates": stats["duplicate_videos"],
        "not_terminal": stack.not_terminal(ids),
        "created": created,
    }


def pacer_env(label: str, scenario: Scenario) -> dict[str, str]:
    """The uploader's pacing environment for `label`'s stack: today's fixed rate, or the new ceiling and start."""
    env = {k: str(v) for k, v in {"PROVIDER_RATE_LIMIT": 0, "START_RATE": 0}.items()}
    if label == "today":
        if scenario.today is None:
            raise ValueError(f"{scenario.name} runs no stack of today's")
        env["PROVIDER_RATE_LIMIT"] = str(scenario.today["rate"])
    else:
        env.update(
            {
                "PROVIDER_RATE_LIMIT": str(scenario.new.get("ceiling", 0)),
                "START_RATE": str(scenario.new.get("start", 0)),
            }
        )
    return env


def warm_up_paced(stack: Stack, sim: SimProcess, scenario: Scenario, rate_limit: float) -> None:
    """The warm-up, on an unlimited simulator, then the stack's pacer reset."""
    requests_post_reset(sim)
    # The uploader's fault injection before the warm-up: a change of its configuration restarts every worker,
    # and ten cold starts inside the measured drain delayed a row's first create by 14 s (a warm-up asset
    # that crashes is the warm-up's own; its message may come back into the drain and be found).
    if scenario.env:
        stack.configure(scenario.env)
    # Unlimited, and none of the profile's documented limits: the warm-up leaves nothing queued behind.
    sim.configure(rate=0, read_rate=0, budget_quota=0, processing_delay_s=2.0)
    # Cold starts (after the configuration change too) are not billed to the drain. The warm-up is
    # paced like the drain (Mux: its documented 1/s when no ceiling is set): a minute of it at most.
    pace = rate_limit or PROVIDERS[scenario.provider].create_rate_per_s or 0.0
    count = WARM_UP if not pace else min(WARM_UP, max(20, int(WARM_UP_S * pace)))
    warm_up(stack, sim, count, crashes="CHAOS_CRASH_AFTER_CREATE" in scenario.env)
    stack.configure({})  # and the warm-up's create leaves nothing learned behind


def arm_provider(stack: Stack, sim: SimProcess, scenario: Scenario, limit: float) -> None:
    """The scenario's faults at the provider and its true limit, for the measured drain only."""
    requests_post_reset(sim)
    sim.configure(**{"rate": limit, "burst": int(limit), "read_rate": None, "budget_quota": None, **scenario.sim})
    sim.configure(processing_delay_s=scenario.sim.get("processing_delay_s", 2.0))


def drain_bodies(scenario: Scenario, n: int) -> tuple[list[str], set[str], list[str]]:
    """(the drain's ids, those whose source the provider refuses, the messages to send)."""
    run = uuid.uuid4().hex[:6]
    ids = [f"pacing/{run}/{i:05d}" for i in range(n)]
    refused = {i for k, i in enumerate(ids) if scenario.refused and k % round(1 / scenario.refused) == 7}
    bodies = [
        json.dumps(
            {
                "id": i,
                "source_url": f"https://media.example.com/{'unsupported-' if i in refused else ''}{i}.mp4?duration=30",
            }
        )
        for i in ids
    ]
    return ids, refused, bodies


def send_and_watch(
    stack: Stack,
    sim: SimProcess,
    scenario: Scenario,
    bodies: list[str],
    expected: int,
    started: float,
    timeout_s: float,
    trace: Path | None,
) -> tuple[int, list[dict]]:
    """Send the drain and wait for `expected` videos (the limit following the scenario's schedule meanwhile);
    (the loader's batch calls, the simulator's request log), the log written to `trace` too when given."""
    changes = threading.Thread(target=follow_schedule, args=(sim, scenario.schedule, started), daemon=True)
    changes.start()
    batches = stack.send(bodies)
    sent = time.time()
    pacer_samples = []
    while sim.stats()["videos"] < expected and time.time() - started < timeout_s:
        time.sleep(0.5)
        if trace:
            pacer_samples.append({"t": time.time(), **stack.pacer(), "queues": stack.queue_depths()})
    requests_log = sim.requests_log()
    if trace:
        trace.write_text(
            json.dumps(
                {"started": started, "sent": sent, "requests": requests_log, "pacer": pacer_samples}, default=float
            )
        )
    return batches, requests_log


def settle(stack: Stack, scenario: Scenario, ids: list[str]) -> None:
    """Wait for the drain's assets to end terminal (a crash's record to come back too), then for the metrics."""
    # A crashed worker's record comes back after the queue's visibility timeout (6 x UploaderTimeout).
    settle_deadline = time.time() + 120 + (6 * int(scenario.stack.get("UploaderTimeout", 0)) if scenario.env else 0)
    stack.wait_terminal(ids, settle_deadline, 2.0)
    time.sleep(3)  # the last invocations flush their metrics


def lost_answers(requests_log: list[dict], since: float) -> int:
    """Creates the simulator made and then dropped the answer to: each one survived without a duplicate."""
    return sum(1 for r in requests_log if r["t"] >= since and r.get("lost"))


def worker_deaths(log: Path, function: str) -> int:
    """Uploader invocations that died (the crash row's fault), as the emulator logs them. A crashed
    asset's webhook may still bring it to ready with no second attempt, so the ledger alone
    undercounts the crashes survived."""
    if not log.exists():
        return 0
    with log.open(errors="replace") as lines:
        return sum(1 for line in lines if "Worker process died" in line and function in line)


def warm_up(stack: Stack, sim: SimProcess, count: int = WARM_UP, crashes: bool = False) -> None:
    """A short unmetered drain before the measured one, so its cold starts are not billed to it.
    Each drain has a fresh emulator, which starts Lambda workers as load arrives: about 40 for
    the webhook function once callbacks come at 20/s, each a cold start of a few CPU seconds,
    enough to starve the uploader for half a minute on a small machine. Waiting until the
    warm-up assets are settled (their webhooks handled) leaves every pool at its working size."""
    run = uuid.uuid4().hex[:6]
    ids = [f"warm/{run}/{i}" for i in range(count)]
    stack.send([json.dumps({"id": i, "source_url": "https://m.example.com/w.mp4"}) for i in ids])
    # With crashes injected, a warm-up asset whose worker died waits out the queue's visibility (6 minutes): up to
    # 3 % may be left, their messages coming back into the measured drain (each found by a lookup there).
    allowed = math.ceil(0.03 * count) if crashes else 0
    left = stack.wait_terminal(ids, time.time() + 180, allowed=allowed)
    if left > allowed:  # its creates would share the measured drain's pace and be counted in it
        raise RuntimeError(f"the warm-up left {left} of {count} assets unsettled after 180 s")
    time.sleep(2)


def requests_post_reset(sim: SimProcess) -> None:
    import requests

    requests.post(f"{sim.url}/_sim/reset", timeout=10).raise_for_status()


def follow_schedule(sim: SimProcess, schedule: tuple, started: float) -> None:
    for at, rate in schedule:
        time.sleep(max(0.0, started + at - time.time()))
        sim.configure(rate=rate, burst=max(1, int(rate)))


def baseline_tree(rev: str) -> Path:
    tree = ROOT / ".local" / f"baseline-{rev}"
    if not tree.exists():
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(tree), rev], cwd=ROOT, check=True, capture_output=True
        )
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/pacing", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--assets", type=int, default=2000, help="N per scenario and pacer (default 2000)")
    parser.add_argument("--limit", type=float, default=20, help="the provider's true limit, creates/s (default 20)")
    parser.add_argument("--baseline", default=BASELINE, help=f"git revision of today's pacer (default {BASELINE})")
    parser.add_argument("--only", help="run only the scenarios whose name contains this")
    parser.add_argument("--pacers", default="today,new", help="which pacers to run (default today,new)")
    parser.add_argument(
        "--trace", type=Path, help="write each drain's request log, pacer samples and queue depths here"
    )
    parser.add_argument("--timeout", type=float, default=900, help="give up on one drain after this many seconds")
    args = parser.parse_args(argv)
    chosen = [s for s in scenarios(args.assets, args.limit) if not args.only or args.only in s.name]
    trees = {"today": lambda: baseline_tree(args.baseline), "new": lambda: ROOT}
    labels = [label for label in ("today", "new") if label in args.pacers.split(",")]
    if args.trace:
        args.trace.mkdir(parents=True, exist_ok=True)
    rows = []
    for scenario in chosen:
        for label in labels:
            if label == "today" and scenario.today is None:
                continue  # a scenario for the new pacer only
            print(f"[pacing] {scenario.name}: {label} ...", flush=True)
            trace = args.trace / f"{label}-{chosen.index(scenario)}.json" if args.trace else None
            with fresh_stack(label, trees[label](), scenario.provider, scenario.stack) as (stack, sim):
                result = drain(stack, sim, scenario, args.assets, args.limit, args.timeout, trace)
            rows.append((scenario, label, result))
            # one line per drain as it ends, so a run cut short still leaves its figures
            figures = json.dumps({k: round(v, 3) for k, v in result.items()})
            print(f"[pacing]   {label}: {figures}", flush=True)
    print_table(rows, args.assets, args.limit)
    return 0


@contextlib.contextmanager
def fresh_stack(label: str, tree: Path, provider: str = "generic", extra: dict | None = None):
    """A new emulator and simulator for one drain, with one stack deployed on it. The emulator
    keeps every log line, stream record and item in memory and slows down as they pile up, so
    drains that shared one would be measured on machines of different ages."""
    emulator = Emulator(free_port(), log_path=EMULATOR_LOG).start()
    acct = account(provider, "standard")
    sim = SimProcess(["--profile", provider], ROOT / ".local" / "bench-pacing-sim.log", acct.sim)
    try:
        manager = client("secretsmanager", emulator.endpoint)
        token_name, hook_name = "pacing/token", "pacing/hook"
        manager.create_secret(Name=token_name, SecretString=acct.credentials)
        manager.create_secret(Name=hook_name, SecretString=acct.webhook_secret_json)
        stack = Stack(label, tree, emulator.endpoint, sim, acct, token_name, hook_name, extra or {})
        sim.configure(
            webhook_url=stack.outputs["WebhookUrl"],
            webhook_secret=acct.webhook_secret,
            webhook_scheme=acct.webhook_scheme,
        )
        yield stack, sim
    finally:
        sim.stop()
        emulator.stop()


def print_table(rows: list, n: int, limit: float) -> None:
    print(
        f"\n=== bench/pacing: N={n} assets per run (unless the row says), true limit {limit:g} creates/s,"
        " MaximumConcurrency 5 ==="
    )
    columns = f"{'drain ratio':>11} {'429s/100':>9} {'SQS/asset':>9} {'inv/asset':>9} {'dups':>5} {'left':>5}"
    print(f"{'scenario':<96} {'pacer':<6} {columns}  target")
    by_name: dict = {}
    for scenario, label, r in rows:
        by_name.setdefault(scenario.name, {})[label] = r
    for scenario, label, r in rows:
        ratio_target, per100_target = scenario.targets
        ok = r["ratio"] <= ratio_target and r["per100"] <= per100_target and not r["duplicates"] and not r["blocks"]
        target = ", ".join(
            part
            for part in (
                f"<= {ratio_target:.2f}" if math.isfinite(ratio_target) else "",
                f"<= {per100_target:g}" if math.isfinite(per100_target) else "",
            )
            if part
        )
        clean = by_name.get(scenario.versus or "", {}).get(label)
        if clean:
            versus = r["seconds"] / clean["seconds"]
            ok = ok and versus <= scenario.versus_target
            target += f"; {versus:.3f} of the clean row (<= {scenario.versus_target:.2f})"
        extras = []
        if r["blocks"]:
            extras.append(f"{r['blocks']} 5-minute blocks")
        if r.get("deaths"):
            extras.append(f"{r['deaths']} uploader invocations died")
        if r.get("lost"):
            extras.append(f"{r['lost']} create answers lost")
        if r["crashed"]:
            extras.append(f"{r['crashed']} assets found again after a crash")
        if scenario.assets:
            extras.append(f"N={scenario.assets}")
        verdict = "" if label == "today" else ("  ok" if ok else "  MISSED")
        print(
            f"{scenario.name:<96} {label:<6} {r['ratio']:>11.3f} {r['per100']:>9.2f} {r['sqs']:>9.2f}"
            f" {r['invocations']:>9.3f} {r['duplicates']:>5} {r['not_terminal']:>5}  {target}{verdict}"
            + (f"  ({'; '.join(extras)})" if extras else "")
        )
    print("\ngain (today's drain ratio / the new one's), measured side by side:")
    for name, pair in by_name.items():
        if "today" in pair and "new" in pair:
            print(f"  {name:<96} {pair['today']['ratio'] / pair['new']['ratio']:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
