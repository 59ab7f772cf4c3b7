"""Benchmark: drain N assets through the deployed stack against a provider limited to R creates/s.

    bench/drain [--provider TARGET] [--assets 1000] [--rate 20] [--concurrency 5]

TARGET is any registered target (migrator.platforms.TARGETS; default generic). Not a test:
it prints figures. The ideal drain time is N / R (the provider's limit is the bottleneck by
design), so the headline is the ratio of the measured drain time to it. The stack paces itself
at exactly R; the simulator's bucket holds R tokens. With `--rate 0`, R is the platform's
documented limit as its simulator profile models it (JW Player: 60 requests a minute, every
call counted, refused to the minute's end), and the stack is left at its provider's own
documented pace (ProviderRateLimit 0), as an operator would.

Figures:
  drain ratio            (last create - first send) / (N / R)
  429s per 100 creates   throttled answers per 100 videos created
  provider calls/asset   creates + lookups + reads, per asset (the uploader's and the webhook's)
  DynamoDB calls/asset   counted by the uploader itself (a botocore hook -> metrics)
  SQS calls/asset        loader batches + uploader ChangeMessageVisibility, plus the
                         event source mapping's receive and delete (2 per invocation;
                         the emulator does not count them, so this part is estimated)
  duplicate videos       migration_refs with more than one provider video
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from migrator.platforms import TARGETS

from infra.localrun import LocalRun

WARM_PER_WORKER = 10  # warm-up messages per uploader the mapping may run
WARM_TIMEOUT_S = 120


def warm_up(run: LocalRun, warm: int) -> None:
    """Warm the intake and the uploaders first so cold starts are not billed to the drain: enough
    messages to start every worker the mappings allow (one message warms one of each)."""
    warm_from = time.time()
    run.send(
        [json.dumps({"id": f"bench/warm/{i}", "source_url": "https://media.example.com/warm.mp4"}) for i in range(warm)]
    )
    while (made := run.simulator.stats()["videos"]) < warm and time.time() - warm_from < WARM_TIMEOUT_S:
        time.sleep(0.2)
    if made < warm:  # the rest would be created inside the measured drain and counted in it
        raise RuntimeError(f"the warm-up made {made} of {warm} videos in {WARM_TIMEOUT_S} s")
    time.sleep(2)


def documented_rate(provider: str) -> float:
    """Creates per second the platform's documented limit allows, as its simulator profile models it: a budget
    of every call (JW Player's 60 a minute) read as a create rate, since nothing else calls it here."""
    from infra.sim.platforms import PROFILES

    limits = PROFILES[provider].limits
    if limits.get("budget_quota") and limits.get("budget_window_s"):
        return limits["budget_quota"] / limits["budget_window_s"]
    if limits.get("rate"):
        return float(limits["rate"])
    raise SystemExit(f"bench/drain: {provider} has no documented limit in its simulator profile; give --rate")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/drain", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--provider",
        choices=TARGETS,
        default="generic",
        help="default generic",
    )
    parser.add_argument("--assets", type=int, default=1000, help="N, assets to drain (default 1000)")
    parser.add_argument(
        "--rate",
        type=float,
        default=20,
        help="R, provider creates per second (default 20); 0: the platform's documented limit as its simulator"
        " profile models it (JW Player's 60 requests a minute), the stack left at its own documented pace",
    )
    parser.add_argument("--concurrency", default="5", help="uploader MaximumConcurrency (default 5)")
    parser.add_argument("--timeout", type=float, default=900, help="give up after this many seconds")
    args = parser.parse_args(argv)
    n, rate = args.assets, args.rate
    if rate > 0:  # a token bucket at R, and the stack told R, as an operator who knows the limit
        sim_args = ["--rate", str(rate), "--burst", str(max(1, int(rate))), "--processing-delay-s", "5"]
    else:  # the profile's documented budget alone, and the stack at its provider's documented pace
        rate = documented_rate(args.provider)
        sim_args = ["--processing-delay-s", "5"]  # the profile's own limits apply where none is given
    sim_args.append("--no-webhooks")
    told = str(args.rate) if args.rate > 0 else "0"
    params = {"ProviderRateLimit": told, "MaximumConcurrency": args.concurrency, "UploaderTimeout": "120"}
    # No webhooks here, so no video settles: a bound on videos in flight (Cloudflare's 120) would stop the
    # drain at the bound. This bench measures the create path; bench/pacing's Cloudflare row measures the bound.
    params["ProviderMaxInFlight"] = "0"
    bodies = [
        json.dumps({"id": f"bench/{i:07d}", "source_url": f"https://media.example.com/b/{i}.mp4"}) for i in range(n)
    ]
    with LocalRun(sim_args, params, label="bench", provider=args.provider) as run:
        warm_up(run, WARM_PER_WORKER * int(args.concurrency))
        baseline = run.simulator.stats()
        metrics_before, invocations_before = run.uploader_metrics()
        started = time.time()
        batches = run.send(bodies)
        sent = time.time()
        while run.simulator.stats()["videos"] - baseline["videos"] < n and time.time() - started < args.timeout:
            time.sleep(0.25)
        log = [r for r in run.simulator.requests_log() if r["t"] >= started and r["status"] in (200, 201)]
        finished = max(r["t"] for r in log) if log else time.time()
        first = min((r["t"] for r in log), default=finished)  # the log holds creates only
        time.sleep(3)  # let the last invocations flush their metrics
        stats = run.simulator.stats()
        metrics, invocations = run.uploader_metrics()
        created = stats["videos"] - baseline["videos"]
        throttled = stats["throttled"] - baseline["throttled"]
        provider_calls = sum(stats.get(k, 0) - baseline.get(k, 0) for k in ("create_requests", "lookups", "gets"))
        ddb = metrics["DynamoDBCalls"] - metrics_before["DynamoDBCalls"]
        sqs_uploader = metrics["SQSCalls"] - metrics_before["SQSCalls"]
        runs = invocations - invocations_before
        ideal = n / rate
        drain = finished - started
        print(
            f"\n=== bench/drain: provider={args.provider}, N={n} assets, R={rate:g} creates/s,"
            f" MaximumConcurrency={args.concurrency} ==="
        )
        print(f"load (SendMessageBatch)    {sent - started:.1f} s, {batches} calls")
        print(f"drain time                 {drain:.1f} s (ideal N/R = {ideal:.1f} s)")
        print(f"drain ratio                {drain / ideal:.3f}   (target <= 1.15)")
        print(
            f"first create after         {first - started:.1f} s;"
            f" first to last create {(finished - first) / ideal:.3f} x ideal"
        )
        print(f"429s per 100 creates       {100 * throttled / max(created, 1):.2f}   (target <= 5; {throttled} in all)")
        print(f"provider calls per asset   {provider_calls / n:.3f}")
        print(f"DynamoDB calls per asset   {ddb / n:.2f}   (uploader, counted)")
        print(
            f"SQS calls per asset        {(batches + sqs_uploader + 2 * runs) / n:.3f}   "
            f"(loader {batches} + uploader {sqs_uploader:.0f} + mapping ~2 x {runs} invocations)"
        )
        print(f"duplicate videos           {stats['duplicate_videos']}   (target 0)")
        print(f"assets created             {created} of {n}")
        return 0 if created == n and stats["duplicate_videos"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
