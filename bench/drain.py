"""Benchmark: drain N assets through the deployed stack against a provider limited to R creates/s.

    bench/drain [--provider TARGET] [--assets 1000] [--rate 20] [--concurrency 5] [--extras]
    bench/drain --provider aws [--assets 60] [--queue 4] [--encode-delay 5]   (bench/drain_aws.py)

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

With `--extras` (issue 42) the simulator sends webhooks, so each video gets ready and the tracks worker
does its part, and N assets are drained twice on one stack: plain rows, then rows with a thumbnail image
(a JPEG served by a local file server, the stack's one TrackFetchTestOrigins) and three chapters. Each phase is
counted until every video is ready and every extra settled; the figures are every provider call the
simulator logged in the phase (creates, lookups, webhook confirmations, polls, and the tracks worker's
looks and writes), per video, side by side, with the extras' calls by operation.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass

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


# What each row of the extras phase carries (a poster image, and chapters ending at the video's 60 s).
EXTRAS_CHAPTERS = [{"start_s": 0, "title": "Intro"}, {"start_s": 20, "title": "Demo"}, {"start_s": 40, "title": "End"}]


@dataclass
class Phase:
    """One drain of the extras comparison: its calls at the provider, by operation, and its create drain."""

    label: str
    assets: int
    calls: Counter
    drain_s: float
    creates_span_s: float

    def per_video(self) -> float:
        return sum(self.calls.values()) / max(self.assets, 1)


def all_requests(run: LocalRun, since: float) -> list[dict]:
    """Every request the simulator logged since `since` (not only the creates `SimProcess.requests_log` gives)."""
    import requests

    logged = requests.get(f"{run.simulator.url}/_sim/requests", params={"op": "all"}, timeout=60).json()
    return [r for r in logged if r["t"] >= since]


def settled_ids(run: LocalRun, ids: set[str]) -> int:
    """How many of `ids` are ready with every track and extra armed for their video and settled."""
    from migrator.tracks import settled

    done = 0
    for item in run.items("ready"):
        if item["asset_id"] not in ids:
            continue
        states = item.get("track_states") or {}
        armed = not item.get("thumbnail_url") or item.get("tracks_video") == item.get("remote_id")
        if armed and all(settled(entry) for entry in states.values()):
            done += 1
    return done


def quiet(run: LocalRun, for_s: float = 5.0, timeout: float = 300.0) -> None:
    """Wait until the simulator has logged no request for `for_s` (what the warm-up or an earlier phase set going,
    its webhooks' confirming reads above all, is not counted in the next phase)."""
    import requests

    started = time.time()
    while time.time() - started < timeout:
        logged = requests.get(f"{run.simulator.url}/_sim/requests", params={"op": "all"}, timeout=60).json()
        last = max((r["t"] for r in logged), default=0.0)
        if time.time() - last >= for_s:
            return
        time.sleep(1)


def drain_phase(run: LocalRun, label: str, bodies: list[str], ids: set[str], timeout: float) -> Phase:
    """Send `bodies`, wait until every one of `ids` is ready with its extras settled, and count the calls."""
    quiet(run)
    started = time.time()
    run.send(bodies)
    while settled_ids(run, ids) < len(ids) and time.time() - started < timeout:
        time.sleep(2)
    drained = time.time() - started
    time.sleep(3)  # answers in flight land in the log
    # This phase's own: the requests naming one of its assets (by id, or by the tag a Bunny title carries), and
    # those naming none (a listing); not the warm-up's or an earlier phase's late webhook confirmations.
    from migrator.providers.keys import asset_tag

    refs = ids | {asset_tag(i) for i in ids}
    logged = [r for r in all_requests(run, started) if r.get("ref") is None or r["ref"] in refs]
    creates = [r["t"] for r in logged if r["op"] == "create" and r["status"] in (200, 201)]
    span = (max(creates) - min(creates)) if creates else 0.0
    done = settled_ids(run, ids)
    if done < len(ids):
        print(f"[bench] {label}: {done} of {len(ids)} assets settled within {timeout:g} s")
    return Phase(label, len(ids), Counter(r["op"] for r in logged), drained, span)


def extras_comparison(args, n: int, rate: float, sim_args: list[str], params: dict) -> int:
    """Drain N plain rows, then N with a thumbnail and chapters, on one stack with webhooks; print both."""
    from infra.captions import FileServer, body
    from infra.sim.media import THUMBNAIL  # a JPEG, as a poster image is

    sim_args = [a for a in sim_args if a != "--no-webhooks"]
    with FileServer() as files:
        poster = files.route("/poster.jpg", body(THUMBNAIL, headers={"Content-Type": "image/jpeg"}))
        params = {**params, "TrackFetchTestOrigins": files.origin}
        with LocalRun(sim_args, params, label="bench", provider=args.provider) as run:
            warm_up(run, WARM_PER_WORKER * int(args.concurrency))
            phases = []
            for label, extra in (("plain", {}), ("thumbnail+chapters", {"thumbnail_url": poster})):
                ids = {f"bench/{label}/{i:07d}" for i in range(n)}
                rows: list[dict[str, object]] = [
                    {"id": i, "source_url": f"https://media.example.com/{i}.mp4?duration=60"} for i in sorted(ids)
                ]
                if extra:
                    rows = [{**row, **extra, "chapters": EXTRAS_CHAPTERS} for row in rows]
                phases.append(drain_phase(run, label, [json.dumps(r) for r in rows], ids, args.timeout))
            stats = run.simulator.stats()
    ideal = n / rate
    print(f"\n=== bench/drain --extras: provider={args.provider}, N={n} per phase, R={rate:g} creates/s ===")
    print(f"{'phase':<20} {'calls/video':>11} {'creates first->last':>20} {'settled in':>11}")
    for phase in phases:
        print(
            f"{phase.label:<20} {phase.per_video():>11.2f} {phase.creates_span_s / ideal:>19.3f}x"
            f" {phase.drain_s:>10.1f}s"
        )
    for phase in phases:
        ops = ", ".join(f"{op} {count / n:.2f}" for op, count in phase.calls.most_common())
        print(f"  {phase.label}: {ops}")
    plain, shown = phases
    own = shown.calls - plain.calls  # by operation, what the extras phase made beyond the plain one
    print(f"extras' calls          {sum(own.values()) / n:.2f} per video, by operation beyond the plain phase's:")
    for op, count in own.most_common():
        print(f"  {op:<28} {count / n:.2f} per video")
    print(f"difference in all      {shown.per_video() - plain.per_video():+.2f} per video (webhook reads vary)")
    print(f"duplicate videos       {stats['duplicate_videos']}   (target 0)")
    return 0 if stats["duplicate_videos"] == 0 else 1


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
    parser.add_argument("--queue", type=int, default=4, help="aws: the MediaConvert queue's concurrent jobs (4)")
    parser.add_argument(
        "--encode-delay", type=float, default=5.0, help="aws: seconds added to every job's encode (default 5)"
    )
    parser.add_argument("--timeout", type=float, default=900, help="give up after this many seconds")
    parser.add_argument(
        "--extras",
        action="store_true",
        help="drain N plain rows, then N with a thumbnail and chapters (webhooks on), and print the provider calls"
        " per video of each side by side",
    )
    args = parser.parse_args(argv)
    if args.provider == "aws":  # the queue is the bottleneck, not a create rate (bench/drain_aws.py)
        from bench.drain_aws import run as aws_drain

        if "--assets" not in (argv if argv is not None else sys.argv):
            args.assets = 60
        return aws_drain(args)
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
    if args.extras:
        return extras_comparison(args, n, rate, sim_args, params)
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
