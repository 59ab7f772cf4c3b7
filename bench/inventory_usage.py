"""Benchmark: what usage costs (issue 45), `bench/inventory --usage`: requests per video, and the pass's memory.

    bench/inventory --usage [--rows 1000] [--usage-platforms wistia,...] [--usage-memory-rows 10000,100000,1000000]

Not a test: it prints figures.

  cost      for each platform in READERS (migrator.sources.analytics, as it is when the benchmark runs), a library
            of --rows videos on its simulator (its own process, on 127.0.0.1, no rate limit: the figure counts
            requests, not waits), listed into an inventory by the CLI's sweep, then the usage pass
            (migrator_cli.usage_pass) run over it with the platform's reader: the pass's requests per video of
            the inventory, its pages, and how many rows came out with usage. Kaltura and Vimeo read usage in the
            listing itself: their row shows the listing's own requests per video, 0 extra, and the rows that
            carry usage. A platform whose simulator does not answer its reader is said FAILED, the others go on.
  memory    the pass over a synthetic inventory of each of --usage-memory-rows rows, in a child process of its
            own, with a FAKE per-id reader (100 ids a page, no network: the figure is the pass's own memory, the
            ids and usage kept in SQLite on disk and the rows streamed), its peak RSS (VmHWM, bench.peak).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.peak import own_peak_kib
from infra.toolchain import ROOT

INLINE = ("kaltura", "vimeo")  # usage in the listing itself (sources/inline_usage.py)
FAKE_PAGE = 100
FAST = ["--read-rate", "0", "--budget-quota", "0"]


def readers() -> list[str]:
    from migrator.sources.analytics import READERS

    return sorted(READERS)


def cost(platform: str, rows: int, scratch: Path) -> dict:
    """The listing's requests, then (for a READERS platform) the pass's, against the platform's simulator."""
    from migrator.sources.analytics import READERS
    from migrator_cli.usage_pass import UsagePass

    from bench.inventory import start_library, sweep_once

    sim, credentials, base = start_library(platform, rows, FAST, scratch)
    try:
        inventory = scratch / f"{platform}.jsonl"
        listed = sweep_once(platform, base, credentials, inventory, False, 0)
        carried = sum(1 for line in open(inventory) if '"usage":' in line)
        figures = {"platform": platform, "videos": listed["rows"], "listing_requests": listed["requests"]}
        if platform in INLINE:
            return {**figures, "pass_requests": 0, "pages": 0, "with_usage": carried, "mode": "inline"}
        reader = READERS[platform](lambda: credentials[platform], base, patient=True, rate_per_s=0)
        summary = UsagePass(reader, inventory, scratch / f"{platform}.usage.jsonl").run(restart=True)
        return {
            **figures,
            "pass_requests": summary.requests,
            "pages": summary.pages,
            "with_usage": summary.with_usage,
            "mode": "pass",
        }
    finally:
        sim.stop()


class FakeReader:
    """Reads FAKE_PAGE ids a page from its cursor and makes up their counts: no network, for the memory figure."""

    platform = "wistia"
    counted_by = "bench fake reader"
    account_wide = False

    def page(self, cursor: str | None, video_ids: Sequence[str]):
        from migrator.usage import Usage, UsagePage

        start = int(cursor or 0)
        batch = video_ids[start : start + FAKE_PAGE]
        found = {v: Usage("2026-12-06T12:00:00Z", self.counted_by, plays=len(v)) for v in batch}
        following = start + FAKE_PAGE
        return UsagePage(found, str(following) if following < len(video_ids) else None, requests=1)


def memory_child(rows: int) -> None:
    """One pass over a synthetic inventory of `rows` rows, then its figures and peak RSS as one JSON line."""
    from migrator_cli.usage_pass import UsagePass

    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        inventory = scratch / "inventory.jsonl"
        with open(inventory, "w") as out:
            for i in range(rows):
                doc = {"id": f"wistia/m{i:07d}", "source_url": f"wistia://m{i:07d}", "title": f"Video {i}"}
                out.write(json.dumps(doc) + "\n")
        started = time.monotonic()
        summary = UsagePass(FakeReader(), inventory, scratch / "out.jsonl").run()
        elapsed = time.monotonic() - started
    figures = {"rows": summary.rows, "with_usage": summary.with_usage, "pages": summary.pages, "elapsed_s": elapsed}
    print(json.dumps({**figures, "maxrss_kib": own_peak_kib()}))


def memory(sizes: list[int]) -> list[dict]:
    results = []
    for rows in sizes:
        command = [sys.executable, "-m", "bench.inventory", "--usage-child", str(rows)]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"[bench] usage pass memory, {rows:,} rows: FAILED\n{done.stderr[-2000:]}", flush=True)
            continue
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        results.append(figures)
        print(f"[bench] usage pass memory, {rows:,} rows: {figures['maxrss_kib'] / 1024:.0f} MiB peak", flush=True)
    return results


def run(rows: int, platforms: list[str], sizes: list[int], skip_memory: bool) -> int:
    results, failed = [], []
    with tempfile.TemporaryDirectory() as scratch_dir:
        for platform in platforms:
            try:
                results.append(cost(platform, rows, Path(scratch_dir)))
            except Exception as exc:  # said, and the other platforms' figures kept
                failed.append(platform)
                print(f"[bench] usage of {platform}: FAILED: {type(exc).__name__}: {exc}", flush=True)
    figures = [] if skip_memory else memory(sizes)
    print()
    print(f"usage's cost in requests ({rows:,} videos a library; simulators on 127.0.0.1, no rate limit)")
    print(
        "| source | how | videos | listing requests/video | usage pass requests | pages | extra requests/video"
        " | rows with usage |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        videos = max(1, r["videos"])
        print(
            f"| {r['platform']} | {r['mode']} | {r['videos']:,} | {r['listing_requests'] / videos:.3f}"
            f" | {r['pass_requests']:,} | {r['pages']:,} | {r['pass_requests'] / videos:.3f} | {r['with_usage']:,} |"
        )
    for platform in failed:
        print(f"| {platform} | FAILED | | | | | | |")
    if figures:
        print()
        print(f"memory of the usage pass (a FAKE per-id reader, {FAKE_PAGE} ids a page, no network)")
        print("| rows | pages | time (s) | rows/s | peak RSS (MiB) | ratio to the smallest |")
        print("|---|---|---|---|---|---|")
        for m in figures:
            rate = m["rows"] / max(m["elapsed_s"], 1e-9)
            print(
                f"| {m['rows']:,} | {m['pages']:,} | {m['elapsed_s']:.1f} | {rate:,.0f}"
                f" | {m['maxrss_kib'] / 1024:.1f} | {m['maxrss_kib'] / figures[0]['maxrss_kib']:.2f} |"
            )
    return 1 if failed or (not skip_memory and len(figures) != len(sizes)) else 0
