"""Benchmark: what keeping the masters costs (issue 43): the archive worker copying originals to S3 in parts.

    bench/archive [--sizes 100,1000,5000] [--kill-size 5000]

Not a test: it prints figures. A local source serves files of the given sizes (MB, each byte made from its
offset, so nothing is held whole) answering byte ranges; the real archive worker (functions/migrator/archiver.py)
copies each to the emulator's S3 against the emulator's DynamoDB, in a child process of its own, so its peak
memory is its own (ru_maxrss).

Figures, per file:
  MB/s            the file's size over the copy's wall time, one invocation (one process) doing it all
  peak MB         the worker process's peak resident memory (flat: one part in memory at a time)
  requests / GB   the source's range GETs plus every S3 call (create, parts, complete, head, the row's JSON)
  parts           the multipart upload's parts
Then one copy of `--kill-size` MB killed (SIGKILL) after a few parts, and a second worker resuming it: the ranges
read twice (only the part in flight at the kill may be), and S3's composite checksum against the one the source's
bytes make.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import resource
import sys
import threading
import time
import uuid
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from migrator.archive.plan import MiB, composite_sha256, plan_parts, sha256_b64

from bench.tracks import counting, ledger_table
from infra.emulator import Emulator, free_port
from infra.emulator import client as aws_client

MB = 1000 * 1000
BLOCK = MiB


def block(index: int) -> bytes:
    """The source file's `index`-th MiB: a fixed pattern stamped with its index (every block differs)."""
    base = hashlib.sha256(b"archive-bench").digest() * (BLOCK // 32)
    return index.to_bytes(8, "big") + base[8:]


def file_bytes(first: int, last: int, size: int) -> bytes:
    """Bytes first..last (included) of a file of `size` made of `block`s."""
    last = min(last, size - 1)
    out = bytearray()
    at = first
    while at <= last:
        index, offset = divmod(at, BLOCK)
        take = min(BLOCK - offset, last - at + 1)
        out += block(index)[offset : offset + take]
        at += take
    return bytes(out)


class Source:
    """A loopback server of files by size (`/f/<bytes>.mp4`), answering byte ranges; it counts each range read."""

    def __init__(self):
        self.reads: Counter = Counter()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                size = int(self.path.split("/")[-1].split(".")[0])
                asked = self.headers.get("Range", "").removeprefix("bytes=")
                first, last = (int(x) for x in asked.split("-"))
                owner.reads[(self.path, first)] += 1
                part = file_bytes(first, last, size)
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {first}-{first + len(part) - 1}/{size}")
                self.send_header("Content-Length", str(len(part)))
                self.send_header("Content-Type", "video/mp4")
                self.end_headers()
                self.wfile.write(part)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, size: int) -> str:
        return f"{self.origin}/f/{size}.mp4"


def expected_checksum(size: int) -> str:
    plan = plan_parts(size)
    assert not isinstance(plan, str)
    return composite_sha256([sha256_b64(file_bytes(*plan.byte_range(n), size)) for n in range(1, plan.count + 1)])


def copy_in_child(endpoint: str, table: str, bucket: str, origin: str, asset_id: str, url: str, out, skew: float):
    """The archive worker in a process of its own: copy `asset_id` to the end, then report its counts."""
    from migrator.archive.store import ArchiveStore
    from migrator.archiver import Archiver, archive_message
    from migrator.fate import FateKind
    from migrator.ledger import Ledger
    from migrator.sources.base import Resolution
    from migrator.trackfetch import FetchPolicy

    calls: Counter = Counter()
    s3 = counting(aws_client("s3", endpoint), calls)
    archiver = Archiver(
        ledger=Ledger(table, aws_client("dynamodb", endpoint)),
        store=ArchiveStore(bucket, s3),
        prefix="masters",
        sqs=None,
        queue_url="q",
        locate=lambda ref: Resolution.ready(url),
        policy=FetchPolicy(max_bytes=256 * MiB, timeout_s=60, test_origins=frozenset({origin})),
        clock=lambda: time.time() + skew,
    )
    # Outside a handler the worker's metrics flush to stdout at every hundredth value (Powertools' own cap, which
    # POWERTOOLS_METRICS_DISABLED does not reach): this process's stdout is the table's, so they go nowhere.
    sys.stdout = open(os.devnull, "w")
    started = time.time()
    for _ in range(10_000):
        fate = archiver.process({"body": archive_message(asset_id)}, archiver.clock() + 900)
        if fate.kind is not FateKind.LATER:
            break
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out.put({"wall_s": time.time() - started, "peak_mb": peak_kb / 1024, "s3_calls": sum(calls.values())})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/archive", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100,1000,5000", help="file sizes in MB (default 100,1000,5000)")
    parser.add_argument("--kill-size", type=int, default=5000, help="the killed and resumed copy's size, MB")
    args = parser.parse_args(argv)
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")  # the workers' own lines would bury the table
    sizes = [int(s) * MB for s in args.sizes.split(",") if s.strip()]

    emulator = Emulator(port=free_port()).start()
    try:
        from migrator.ledger import Ledger
        from migrator.messages import AssetMessage

        endpoint = emulator.endpoint
        table = ledger_table(aws_client("dynamodb", endpoint), f"bench-archive-{uuid.uuid4().hex[:6]}")
        s3 = aws_client("s3", endpoint)
        bucket = f"bench-archive-{uuid.uuid4().hex[:6]}"
        s3.create_bucket(Bucket=bucket)
        ledger = Ledger(table, aws_client("dynamodb", endpoint))
        source = Source()
        ctx = multiprocessing.get_context("spawn")

        def asset(size: int) -> tuple[str, str]:
            asset_id, url = f"bench/{size}-{uuid.uuid4().hex[:6]}", source.url(size)
            now = time.time()
            ledger.claim(AssetMessage(asset_id, f"https://videos.example.com/{size}.mp4"), now, now + 60, "up")
            return asset_id, url

        print(f"{'file':>9} | {'MB/s':>6} | {'peak MB':>7} | {'requests / GB':>13} | {'parts':>5} | checksum")
        for size in sizes:
            asset_id, url = asset(size)
            before = sum(source.reads.values())
            out = ctx.Queue()
            child = ctx.Process(
                target=copy_in_child, args=(endpoint, table, bucket, source.origin, asset_id, url, out, 0.0)
            )
            child.start()
            got = out.get()
            child.join()
            item = ledger.get(asset_id) or {}
            plan = plan_parts(size)
            parts = plan.count if not isinstance(plan, str) else 0
            requests = got["s3_calls"] + sum(source.reads.values()) - before
            ok = item.get("archive_sha256") == expected_checksum(size)
            print(
                f"{size / MB:>6.0f} MB | {size / MB / got['wall_s']:>6.1f} | {got['peak_mb']:>7.0f} |"
                f" {requests / (size / 1e9):>13.1f} | {parts:>5} | {'equal' if ok else 'DIFFERENT'}"
            )
            s3.delete_object(Bucket=bucket, Key=str(item.get("archive_key")))  # the emulator holds objects in memory

        size = args.kill_size * MB
        asset_id, url = asset(size)
        earlier = Counter(source.reads)  # a size run above may have read the same file: only this copy's reads count
        out = ctx.Queue()
        child = ctx.Process(
            target=copy_in_child, args=(endpoint, table, bucket, source.origin, asset_id, url, out, 0.0)
        )
        child.start()
        while len((ledger.archive(asset_id) or {}).get("parts") or []) < 5:
            time.sleep(0.2)
        child.kill()  # SIGKILL: no cleanup, as a Lambda's end mid-part
        child.join()
        killed_at = len((ledger.archive(asset_id) or {}).get("parts") or [])
        resumed = ctx.Process(  # its clock past the dead worker's lease (its deadline plus the margin)
            target=copy_in_child, args=(endpoint, table, bucket, source.origin, asset_id, url, out, 1000.0)
        )
        resumed.start()
        got = out.get()
        resumed.join()
        item = ledger.get(asset_id) or {}
        mine = source.reads - earlier
        twice = sum(1 for (path, _), n in mine.items() if path.endswith(f"/{size}.mp4") and n > 1)
        ok = item.get("archive_sha256") == expected_checksum(size)
        print(
            f"\nkilled after {killed_at} parts recorded of {args.kill_size} MB; resumed: ranges read twice {twice}"
            f" (the part in flight at the kill: at most 1), {item.get('archive_state')}, checksum"
            f" {'equal to the source' if ok else 'DIFFERENT'}, resume took {got['wall_s']:.1f} s"
        )
        print(json.dumps({"killed_parts": killed_at, "read_twice": twice, "checksum_equal": ok}))
        return 0 if ok and twice <= 1 else 1
    finally:
        emulator.stop()


if __name__ == "__main__":
    raise SystemExit(main())
