"""Benchmark: what caption tracks cost, per track and per provider: provider calls and DynamoDB calls.

    bench/tracks [--assets 40] [--lose 0.3] [--providers mux,cloudflare,apivideo]

Not a test: it prints figures. Each provider's simulator holds N ready videos whose rows carry
two caption tracks (one SRT, one WebVTT, served by a local file server); the real tracks worker
(functions/migrator/trackworker.py) works each asset's tracks message until it is done, against
the emulator's DynamoDB, once with nothing going wrong and once with a share of the worker's
upload answers lost (`--lose`). Time is skipped ahead to each retry time, so waits cost nothing.

Figures, per track attached:
  provider calls    every request the simulator logged from the worker (uploads, lists, Mux's asset reads)
  DynamoDB writes   UpdateItem calls by the worker (arm, claim, outcome, the lane's close)
  DynamoDB reads    GetItem calls (the asset, once a pass; the pacer's hold, once a pass)
  passes            tracks messages handled (each deferral brings the message back once)
Not counted here, and the same for every provider: the uploader's one SendMessage per asset with
tracks (its claim write carries the tracks lane: no extra write), and one by_tracks_due index write
per arm and per close.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import yaml
from migrator.fate import FateKind
from migrator.ledger import Ledger
from migrator.messages import AssetMessage, Track
from migrator.pacer import Pacer
from migrator.providers import PROVIDERS as REGISTERED_PROVIDERS
from migrator.providers import AssetRef, build
from migrator.states import State
from migrator.trackfetch import FetchPolicy
from migrator.tracks import tracks_message
from migrator.trackworker import TracksWorker

from infra.accounts import account
from infra.emulator import Emulator, free_port
from infra.emulator import client as aws_client
from infra.provider_sim import ProviderSim, SimConfig
from tests.track_files import SRT, VTT, FileServer, body

# Benchmarked by default: the three docs/benchmarks.md has figures for; --providers may name any registered target
# that takes tracks (TAKE_TRACKS).
PROVIDERS = ("mux", "cloudflare", "apivideo")
TAKE_TRACKS = tuple(name for name, cls in REGISTERED_PROVIDERS.items() if cls.takes_tracks)


class _CfnLoader(yaml.SafeLoader):
    pass


_CfnLoader.add_multi_constructor("!", lambda loader, suffix, node: None)


def ledger_table(dynamodb, name: str) -> str:
    """A table shaped like the template's LedgerTable."""
    with open("template.yaml") as f:
        props = yaml.load(f, Loader=_CfnLoader)["Resources"]["LedgerTable"]["Properties"]
    dynamodb.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=props["AttributeDefinitions"],
        KeySchema=props["KeySchema"],
        GlobalSecondaryIndexes=props["GlobalSecondaryIndexes"],
    )
    dynamodb.get_waiter("table_exists").wait(TableName=name)
    return name


def counting(client, calls: Counter):
    client.meta.events.register("before-call", lambda model, **_: calls.update([model.name]))
    return client


class Clock:
    def __init__(self):
        self.skipped = 0.0

    def __call__(self) -> float:
        return time.time() + self.skipped


def run(endpoint: str, name: str, n: int, lose: float, files: FileServer) -> dict:
    acct = account(name)
    sim = ProviderSim(
        SimConfig(port=0, profile=name, rate=0, read_rate=0, budget_quota=0, processing_delay_s=0.05, **acct.sim)
    ).start()
    try:
        plain = aws_client("dynamodb", endpoint)
        table = ledger_table(plain, f"bench-tracks-{name}-{int(time.time() * 1000)}")
        policy = FetchPolicy(test_origins=frozenset({files.origin}))
        provider = build(name, sim.url, lambda: acct.credentials, track_policy=policy)
        tracks = (Track(files.url("/en.srt"), "en", format="srt"), Track(files.url("/fr.vtt"), "fr", "subtitles"))
        setup = Ledger(table, plain)
        ids = [f"bench/{name}/{i}" for i in range(n)]
        for asset_id in ids:  # the uploader's and the webhook's part, not counted
            msg = AssetMessage(asset_id, f"https://media.example.com/{asset_id}.mp4?duration=5", tracks=tracks)
            setup.claim(msg, time.time(), time.time() + 60, "up")
            made = provider.create(AssetRef(asset_id, details=msg), msg.source_url)
            if made.remote_id is None:
                raise RuntimeError(f"{name}: the create made no video ({made.kind.value}: {made.error})")
            setup.mark_processing(asset_id, "up", made.remote_id, time.time())
            setup.settle(asset_id, State.READY, made.remote_id, time.time())
        time.sleep(0.5)  # Mux fetches the create's text tracks
        calls: Counter = Counter()
        clock = Clock()
        counted = counting(aws_client("dynamodb", endpoint), calls)
        worker = TracksWorker(
            ledger=Ledger(table, counted),
            pacer=Pacer(table, counted),
            provider=provider,
            sqs=None,
            queue_url="",
            policy=policy,
            clock=clock,
        )
        before = len(sim.requests_log(ops=None))
        sim.patch_config({"track_lose_rate": lose, "seed": 3})
        passes = 0
        for asset_id in ids:
            record = {"body": tracks_message(asset_id), "messageId": "m", "attributes": {}}
            for _ in range(50):
                passes += 1
                fate = worker.process(record, clock() + 120)
                if fate.kind is not FateKind.LATER:
                    break
                clock.skipped += fate.delay_s + 0.01
                time.sleep(0.05)
        requests = Counter(entry["op"] for entry in sim.requests_log(ops=None)[before:])
        states = [(setup.get(i) or {}).get("track_states", {}) for i in ids]  # none for an asset gone from the ledger
        attached = sum(e["state"] == "attached" for s in states for e in s.values())
        held = sum(t["uploads"] for v in sim.text_tracks() for t in v["tracks"])
        return {
            "provider": name,
            "lose": lose,
            "tracks": 2 * n,
            "attached": attached,
            "held": held,
            "lost": sim.stats()["lost_track_responses"],
            "provider_calls": sum(requests.values()),
            "by_op": dict(requests),
            "writes": calls["UpdateItem"] + calls["PutItem"],
            "reads": calls["GetItem"],
            "passes": passes,
        }
    finally:
        sim.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/tracks", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--assets", type=int, default=40, help="N assets, two tracks each (default 40)")
    parser.add_argument("--lose", type=float, default=0.3, help="share of upload answers lost in the second run")
    parser.add_argument("--providers", default=",".join(PROVIDERS), help=f"any of {','.join(TAKE_TRACKS)}")
    args = parser.parse_args(argv)
    unknown = set(args.providers.split(",")) - set(TAKE_TRACKS)
    if unknown:
        parser.error(f"no provider that takes tracks: {', '.join(sorted(unknown))}")
    emulator = Emulator(port=free_port()).start()
    rows = []
    try:
        with FileServer() as files:
            files.route("/en.srt", body(SRT))
            files.route("/fr.vtt", body(VTT))
            for name in args.providers.split(","):
                for lose in (0.0, args.lose) if name != "mux" else (0.0,):  # Mux's create carries them
                    rows.append(run(emulator.endpoint, name, args.assets, lose, files))
    finally:
        emulator.stop()
    print(f"N = {args.assets} assets x 2 tracks (one SRT, one WebVTT) per provider\n")
    head = ["provider", "lost answers", "tracks attached", "held at provider (uploads)", "provider calls / track"]
    head += ["DynamoDB writes / track", "DynamoDB reads / track", "passes / asset", "calls by kind"]
    print("| " + " | ".join(head) + " |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        t = r["tracks"]
        print(
            f"| {r['provider']} | {r['lost']} of the uploads | {r['attached']} / {t} | {r['held']} |"
            f" {r['provider_calls'] / t:.2f} | {r['writes'] / t:.2f} | {r['reads'] / t:.2f} |"
            f" {r['passes'] / (t / 2):.2f} | {r['by_op']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
