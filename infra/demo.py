"""The demo: migrate a sample library end to end on this machine, with live progress.

    infra/demo [--assets 500] [--provider-rate 20] [--keep]

It starts the emulator and a rate-limited provider simulator, deploys template.yaml,
pushes a sample inventory (with a few malformed rows and a few sources the provider
refuses) to the queue, shows counts by state, rate and ETA while it drains, and ends
with a summary. It exits non-zero if any asset is left unresolved or any asset got
two provider videos.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, deque

from .localrun import LocalRun

# Anything here when the drain ends is unresolved: webhooks carry processing on to ready or rejected.
UNSETTLED = {"pending", "inventoried", "uploading", "failed", "processing"}


def sample_inventory(count: int) -> tuple[list[str], list[str]]:
    """(message bodies, ids expected in the ledger). Every 100 assets, one source the
    provider refuses at create and one it fails to ingest; five malformed rows at the end."""
    bodies, ids = [], []
    for i in range(count):
        asset_id = f"library/{i:05d}"
        url = f"https://media.example.com/library/{i:05d}.mp4?duration={30 + (i * 7) % 600}.5"
        if i % 100 == 13:
            url = f"https://media.example.com/library/unsupported-{i:05d}.wmv"
        if i % 100 == 57:
            url = f"https://media.example.com/library/corrupt-{i:05d}.mp4"
        bodies.append(json.dumps({"id": asset_id, "source_url": url, "title": f"Episode {i}"}))
        ids.append(asset_id)
    bad_rows = [
        "this row is not JSON",
        json.dumps({"id": "library/ftp-only", "source_url": "ftp://old-nas.example.com/a.mp4"}),
        json.dumps({"id": "library/no-source"}),
        json.dumps({"id": "x" * 300, "source_url": "https://media.example.com/long.mp4"}),
        json.dumps({"id": "library/bad\u0007id", "source_url": "https://media.example.com/bell.mp4"}),
    ]
    ids += ["library/ftp-only", "library/no-source"]  # usable ids: recorded as rejected
    return bodies + bad_rows, ids


def progress_line(elapsed: float, counts: Counter, rate: float, eta: float | None, throttled: int) -> str:
    order = ["pending", "uploading", "failed", "processing", "ready", "rejected"]  # in the order assets move
    parts = " ".join(f"{s} {counts.get(s, 0):>4}" for s in order)
    eta_text = f"{eta:5.0f}s" if eta is not None else "    ?"
    return f"[{elapsed:6.1f}s] {parts} | {rate:5.1f}/s | ETA {eta_text} | 429s {throttled}"


def watch(run: LocalRun, expected: int, done_states: set[str], timeout_s: float) -> tuple[Counter, float]:
    started = time.time()
    window: deque[tuple[float, int]] = deque(maxlen=10)
    tty = sys.stdout.isatty()
    last_print = 0.0
    counts: Counter = Counter()
    while time.time() - started < timeout_s:
        counts = run.states()
        settled = sum(counts.get(s, 0) for s in done_states)
        now = time.time()
        window.append((now, settled))
        rate = (window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0]) if len(window) > 1 else 0.0
        eta = (expected - settled) / rate if rate > 0 else None
        line = progress_line(now - started, counts, rate, eta, run.sim.stats()["throttled"])
        if tty:
            print("\r" + line, end="", flush=True)
        elif now - last_print >= 5:
            print(line, flush=True)
            last_print = now
        if settled >= expected and sum(counts.get(s, 0) for s in UNSETTLED) == 0:
            break
        time.sleep(1)
    if tty:
        print()
    return counts, time.time() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="infra/demo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--assets", type=int, default=500, help="sample library size (default 500)")
    parser.add_argument(
        "--provider-rate", type=float, default=20, help="creates/s the simulated provider allows (default 20)"
    )
    parser.add_argument("--timeout", type=float, default=600, help="give up after this many seconds (default 600)")
    parser.add_argument(
        "--keep", action="store_true", help="leave the emulator, simulator and stack running at the end"
    )
    args = parser.parse_args(argv)
    if args.assets < 10:
        parser.error("--assets must be at least 10")

    bodies, ids = sample_inventory(args.assets)
    # The stack paces 10 % faster than the provider allows, so 429s really happen
    # and are absorbed: the point of the demo.
    sim_args = ["--rate", str(args.provider_rate), "--burst", "5", "--processing-delay-s", "2"]
    params = {
        "ProviderRateLimit": str(round(args.provider_rate * 1.1, 2)),
        "MaximumConcurrency": "5",
        "WebhookScheme": "standard",
    }
    run = LocalRun(sim_args, params, label="demo")
    wall_start = time.time()
    try:
        run.start()
        # Webhooks carry each asset from processing to ready (or rejected).
        done_states = {"ready", "rejected"}
        print(f"[demo] pushing {len(bodies)} messages ({len(bodies) - args.assets} malformed) to the queue")
        sent_at = time.time()
        calls = run.send(bodies)
        print(f"[demo] sent in {time.time() - sent_at:.1f} s with {calls} SendMessageBatch calls; draining...")
        counts, drain_s = watch(run, len(ids), done_states, args.timeout)
        stats = run.sim.stats()
        rejected = run.items("rejected")
        reasons = Counter(" ".join(item.get("last_error", "?").split())[:90] for item in rejected)
        unresolved = sum(counts.get(s, 0) for s in UNSETTLED)
        print("\n=== summary ===")
        print(
            f"assets in inventory   {len(ids)} (+{len(bodies) - len(ids)} rows with no usable id, logged and deleted)"
        )
        for state in ("ready", "processing", "rejected", "failed", "uploading", "pending"):
            if counts.get(state):
                print(f"{state:<21} {counts[state]}")
        print("rejected, by reason:")
        for reason, n in reasons.most_common():
            print(f"  {n:>4}  {reason}")
        print(f"429s absorbed         {stats['throttled']}")
        print(f"provider videos       {stats['videos']} (duplicate videos: {stats['duplicate_videos']})")
        print(f"dead-letter queue     {run.queue_depth('DeadLetterQueueUrl')}")
        print(f"drain time            {drain_s:.1f} s; wall time {time.time() - wall_start:.1f} s")
        ok = (
            unresolved == 0
            and stats["duplicate_videos"] == 0
            and sum(counts.get(s, 0) for s in done_states) >= len(ids)
        )
        print("result                " + ("OK: every asset resolved" if ok else f"NOT OK: {unresolved} unresolved"))
        return 0 if ok else 1
    except KeyboardInterrupt:
        print("\n[demo] interrupted")
        return 130
    finally:
        if args.keep:
            print(
                f"[demo] left running: stack {run.stack_name} on {run.endpoint},"
                f" simulator on {run.sim.url if run.sim else '-'}"
            )
        else:
            run.stop()


if __name__ == "__main__":
    sys.exit(main())
