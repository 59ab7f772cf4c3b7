"""Benchmark: `migrator inventory --from` against each source simulator at its documented rate, and its memory.

    bench/inventory [--rows 1000] [--tracks] [--platforms vimeo,wistia,mux,cloudflare,apivideo,...]
                    [--memory-rows 10000,1000000] [--memory-platforms cloudflare,...] [--store-stand-ins]
                    [--skip-rate] [--skip-memory]
    bench/inventory --usage [--rows 1000] [--usage-platforms ...] [--usage-memory-rows 10000,100000,1000000]

Not a test: it prints figures. Each simulator runs in a process of its own (its own interpreter),
on loopback; the sweep is the CLI's own (migrator_cli.sweep), writing to a scratch directory.

  rate      a library of --rows videos on each platform's simulator, with the limits the platform
            documents (Wistia 600 requests a minute; Mux 5 reads a second; Cloudflare 1,200 requests
            per 5 minutes, then a 5-minute block; api.video 500 reads a minute, with its
            X-RateLimit-* headers; Vimeo publishes no number: the simulator's own 10 a second with
            X-RateLimit-* and an ISO reset, which the listing reads), listed by the source at its own
            documented pace. Figures: pages per second, rows per second, requests per row (the
            listing's requests, retries and caption look-ups included, over the videos listed), and
            the waits the source's limit imposed (429s, spent quotas). --tracks also looks up caption
            tracks (one request per video on Wistia, Stream and api.video; per captioned video on
            Vimeo; none on Mux, which carries them in the asset).
  memory    the sweep of --memory-rows videos in a subprocess, each against a fresh simulator, for
            each of --memory-platforms (default Cloudflare, whose 1,000 videos a page is the largest
            page of any source), on the fast path: no rate limit at the simulator, no pacing, no
            track look-ups. The figure is the
            subprocess's own peak RSS (bench.peak): rows stream to disk and repeats are remembered on
            disk, so it must not grow with the library. GCS and Azure libraries are the real emulators
            filled through the SDKs (about 100 and 200 objects a second); --store-stand-ins lists
            them from bench.store_listings instead, for the sizes no emulator fills in a session.
  usage     --usage: what usage costs instead (issue 45; bench/inventory_usage.py): the usage pass's requests
            per video for each platform with a reader, Kaltura's and Vimeo's in the listing (0 extra), and the
            pass's memory at each of --usage-memory-rows rows.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from migrator.platforms import REFERENCED_SOURCES

from bench.peak import own_peak_kib
from infra.accounts import source_account
from infra.localrun import SimProcess, SourceSide
from infra.sim import catalog
from infra.toolchain import ROOT

# Every source listed by reference (migrator.platforms), each on its simulator or, for the object stores, in its
# emulator (infra/storage_emulators.py), listed at the documented rate: GCS's 5,000 object reads a second per
# bucket, an Azure account's 20,000 requests a second (sources/gcs.py, azure.py).
PLATFORMS = REFERENCED_SOURCES
# The simulator flags a platform needs beyond its profile's own limits (each profile's documented ones, or its
# own where none is published: Kaltura's, Dropbox's, Brightcove's 10 a second) to list at its documented read
# limit: rate headers where the platform sends them, and api.video's read limit as a source (its profile's
# limits are the target's).
DOCUMENTED = {
    "vimeo": ["--rate-headers"],
    "apivideo": ["--read-rate", str(500 / 60), "--read-burst", "10", "--rate-headers"],
    "jwplayer": ["--rate-headers"],  # 60 requests a minute per token: the profile's budget
}
FAST = ["--read-rate", "0", "--budget-quota", "0"]


def start_library(
    platform: str, rows: int, extra: list[str], log_dir: Path, stand_in: bool = False
) -> tuple[SourceSide, dict, str]:
    from infra.storage_emulators import STORE_PLATFORMS, StoreLibrary

    if platform in STORE_PLATFORMS and stand_in:  # list pages only: what a memory run asks (bench.store_listings)
        from bench.store_listings import StoreListing

        listing = StoreListing(platform, rows).start()
        return listing, {platform: listing.credentials}, listing.url
    if platform in STORE_PLATFORMS:
        store = StoreLibrary(platform, rows).start()
        return store, {platform: store.credentials}, store.url
    creds, sim_config = source_account(platform)
    args = ["--profile", platform, "--library-size", str(rows), "--library-captions-every", "10", *extra]
    sim = SimProcess(args, log_dir / f"bench-inventory-{platform}.log", sim_config)
    base = sim.url + catalog.profile(platform).api_path  # below it, as below the platform's (Wistia's /modern)
    return sim, {platform: creds}, base


def sweep_once(platform: str, base: str, credentials: dict, out: Path, tracks: bool, rate: float | None) -> dict:
    from migrator_cli.sweep import build_source, sweep

    source = build_source(platform, credentials=credentials[platform], base_url=base, rate=rate)
    with open(out.with_suffix(".log"), "w") as log:
        summary = sweep(source, out, tracks=tracks, out=log, restart=True)
    return {
        "rows": summary.rows,
        "unfetchable": summary.unfetchable,
        "listed": summary.listed,
        "pages": summary.pages,
        "requests": summary.requests,
        "waits": summary.throttled,
        "elapsed_s": summary.elapsed_s,
    }


def bench_rate(platforms: list[str], rows: int, tracks: bool, scratch: Path) -> list[dict]:
    results = []
    for platform in platforms:
        sim, credentials, base = start_library(platform, rows, DOCUMENTED.get(platform, []), scratch)
        try:
            figures = sweep_once(platform, base, credentials, scratch / f"{platform}.jsonl", tracks, None)
        finally:
            sim.stop()
        figures["platform"] = platform
        results.append(figures)
        print(f"[bench] {platform}: {figures['listed']:,} videos in {figures['elapsed_s']:.1f} s", flush=True)
    return results


def child(platform: str, base: str, credentials: str, rows: int) -> None:
    """The memory case, in its own process: one sweep, then its figures and peak RSS as one JSON line."""
    with tempfile.TemporaryDirectory() as scratch:
        figures = sweep_once(platform, base, json.loads(credentials), Path(scratch) / "rows.jsonl", False, 0)
    figures["maxrss_kib"] = own_peak_kib()
    print(json.dumps(figures))


def bench_memory(sizes: list[int], scratch: Path, platform: str = "cloudflare", stand_in: bool = False) -> list[dict]:
    results = []
    for rows in sizes:
        sim, credentials, base = start_library(platform, rows, FAST, scratch, stand_in)
        try:
            command = [sys.executable, "-m", "bench.inventory", "--child", platform, base, json.dumps(credentials)]
            done = subprocess.run([*command, str(rows)], cwd=ROOT, capture_output=True, text=True)
        finally:
            sim.stop()
        if done.returncode != 0:  # said, and the other runs' figures kept
            print(f"[bench] memory, {platform}, {rows:,} videos: FAILED\n{done.stderr[-2000:]}", flush=True)
            continue
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        figures["size"], figures["platform"] = rows, platform
        results.append(figures)
        print(f"[bench] memory, {platform}, {rows:,} videos: {figures['maxrss_kib'] / 1024:.0f} MiB peak", flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/inventory", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1000, help="videos per library in the rate runs (default 1000)")
    parser.add_argument("--tracks", action="store_true", help="look up caption tracks too in the rate runs")
    parser.add_argument("--platforms", default=",".join(PLATFORMS), help="comma list (default every source)")
    parser.add_argument("--memory-rows", default="10000,1000000", help="library sizes of the memory runs")
    parser.add_argument(
        "--memory-platforms", default="cloudflare", help="sources whose sweep's memory is measured (default cloudflare)"
    )
    parser.add_argument(
        "--store-stand-ins",
        action="store_true",
        help="memory runs of gcs and azure list pages from bench.store_listings, not the emulators (which take"
        " hours to fill with a million objects)",
    )
    parser.add_argument("--skip-rate", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--usage", action="store_true", help="usage's cost and the usage pass's memory instead")
    parser.add_argument(
        "--usage-platforms", help="with --usage: comma list (default every platform in READERS, and kaltura, vimeo)"
    )
    parser.add_argument("--usage-memory-rows", default="10000,100000,1000000", help="with --usage: inventory sizes")
    parser.add_argument("--usage-child", type=int, metavar="ROWS", help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs=4, metavar=("PLATFORM", "URL", "CREDENTIALS", "ROWS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.usage_child or args.usage:
        from bench import inventory_usage

        if args.usage_child:
            inventory_usage.memory_child(args.usage_child)
            return 0
        chosen = args.usage_platforms or ",".join([*inventory_usage.readers(), *inventory_usage.INLINE])
        sizes = [int(n) for n in args.usage_memory_rows.split(",") if n]
        return inventory_usage.run(args.rows, [p for p in chosen.split(",") if p], sizes, args.skip_memory)
    if args.child:
        platform, base, credentials, rows = args.child
        child(platform, base, credentials, int(rows))
        return 0
    platforms = [p for p in args.platforms.split(",") if p]
    unknown = set(platforms) - set(PLATFORMS)
    if unknown:
        parser.error(f"unknown platforms: {', '.join(sorted(unknown))}")
    started = time.time()
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        rate = [] if args.skip_rate else bench_rate(platforms, args.rows, args.tracks, scratch)
        sizes = [int(n) for n in args.memory_rows.split(",")]
        memory_platforms = [p for p in args.memory_platforms.split(",") if p]
        memory = []
        for platform in [] if args.skip_memory else memory_platforms:
            memory += bench_memory(sizes, scratch, platform, args.store_stand_ins)
    print()
    if rate:
        tracks = "on" if args.tracks else "off"
        print(f"listing at each platform's documented limit ({args.rows:,} videos, tracks {tracks})")
        print("| source | videos | pages | time (s) | pages/s | rows/s | requests/row | waits for the limit |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rate:
            elapsed = max(r["elapsed_s"], 1e-9)
            print(
                f"| {r['platform']} | {r['listed']:,} | {r['pages']:,} | {r['elapsed_s']:.1f}"
                f" | {r['pages'] / elapsed:.2f} | {r['listed'] / elapsed:,.0f}"
                f" | {r['requests'] / max(1, r['listed']):.3f} | {r['waits']} |"
            )
    if memory:
        print()
        print("memory of a sweep (fast path: no limits, no tracks, each source's largest page)")
        print("| source | videos | pages | time (s) | rows/s | peak RSS (MiB) | ratio to its smallest |")
        print("|---|---|---|---|---|---|---|")
        for m in memory:
            rows_per_s = m["listed"] / max(m["elapsed_s"], 1e-9)
            peak, smallest = m["maxrss_kib"] / 1024, next(s for s in memory if s["platform"] == m["platform"])
            print(
                f"| {m['platform']} | {m['size']:,} | {m['pages']:,} | {m['elapsed_s']:.1f} | {rows_per_s:,.0f}"
                f" | {peak:.1f} | {m['maxrss_kib'] / smallest['maxrss_kib']:.2f} |"
            )
    print(f"\n(wall time {time.time() - started:.0f} s)")
    return 0 if args.skip_memory or len(memory) == len(sizes) * len(memory_platforms) else 1


if __name__ == "__main__":
    sys.exit(main())
