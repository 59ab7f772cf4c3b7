"""Benchmark: `migrator load` throughput against one call per row, and its memory on a large file.

    bench/load [--rows 10000] [--big-rows 1000000] [--small-rows 100000] [--workers 8] [--rtt-ms 0]

Not a test: it prints figures. It starts its own emulator on a free port and stops it.

  load N        the same N-row CSV loaded into two fresh queues on one emulator:
                load_inventory (SendMessageBatch, 10 per call, calls in parallel) and the
                naive way (read the same rows, one SendMessage per row, in sequence).
                Both include reading and validating the file. Target ratio >= 10x.
                Both queues must then hold N messages. The emulator answers on 127.0.0.1
                in under a millisecond, so both sides are CPU-bound here (the CPU per
                message is printed); --rtt-ms adds a simulated network round trip to
                every call, where the parallel calls start to count.
  dry run       `--dry-run` of a generated CSV of --big-rows rows, and of --small-rows rows,
                each in a subprocess: rows/s and the subprocess's own peak RSS (bench.peak).
                Streaming means the two peaks are about the same: memory does not grow
                with the file.
  send memory   a real load (sending) of --send-rows rows and of a tenth as many, each in a
                subprocess into a fresh queue: the sending path's peak RSS, which must not
                grow with the file either (in-flight batches are bounded).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.peak import own_peak_kib
from infra.emulator import Emulator, client, free_port
from infra.toolchain import ROOT


def count_label(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1_000 and n % 1_000 == 0:
        return f"{n // 1_000}k"
    return str(n)


def write_inventory(path: Path, rows: int, flaws: bool = False) -> None:
    """A CSV of `rows` assets; ids in hash order so the repeat check sees no sorted input.

    With `flaws`, one row in 10,000 is bad and one in 5,000 repeats the row before it,
    so those paths are part of the measured run.
    """
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "source_url", "title", "duration_s", "metadata"])
        previous = None
        for i in range(rows):
            if flaws and i and i % 5_000 == 0 and previous:
                writer.writerow(previous)
                continue
            key = hashlib.blake2b(str(i).encode(), digest_size=8).hexdigest()
            scheme = "ftp" if flaws and i % 10_000 == 9_999 else "https"
            metadata = json.dumps({"batch": i // 1000}) if i % 3 == 0 else ""
            previous = [
                f"library/{key}",
                f"{scheme}://media.example.com/v/{key}.mp4",
                f"Clip {i}",
                f"{i % 3600}.5",
                metadata,
            ]
            writer.writerow(previous)


def queue_depth(sqs, url: str) -> int:
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attrs["Attributes"]["ApproximateNumberOfMessages"])


def cpu_s(pid: int | None = None) -> float:
    """CPU seconds used so far by this process, or by process `pid` (the emulator)."""
    if pid is None:
        times = os.times()
        return times.user + times.system
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_throughput(emulator: Emulator, path: Path, workers: int, rtt_ms: float = 0) -> tuple[dict, dict]:
    """The same file into two fresh queues: load_inventory, then one SendMessage per row in sequence.

    `rtt_ms` adds that much wait to every call, as a network round trip would: the emulator on
    127.0.0.1 answers in well under a millisecond, which AWS across a network does not.
    """
    from migrator.messages import encode_message
    from migrator_cli.inventory import Row, read_inventory
    from migrator_cli.load import load_inventory

    sqs = client("sqs", emulator.endpoint)
    if rtt_ms:
        sqs.meta.events.register("before-send.sqs", lambda **_: time.sleep(rtt_ms / 1000))
    emulator_pid = emulator.process.pid if emulator.process else None
    batch_queue = sqs.create_queue(QueueName=f"bench-load-batch-{free_port()}")["QueueUrl"]
    single_queue = sqs.create_queue(QueueName=f"bench-load-single-{free_port()}")["QueueUrl"]

    def measured(run) -> dict:
        cpu, emulator_cpu, started = cpu_s(), cpu_s(emulator_pid), time.perf_counter()
        sent, calls = run()
        return {
            "sent": sent,
            "calls": calls,
            "s": time.perf_counter() - started,
            "cpu_s": cpu_s() - cpu,
            "emulator_cpu_s": cpu_s(emulator_pid) - emulator_cpu,
        }

    def batched() -> tuple[int, int]:
        summary = load_inventory(str(path), sqs=sqs, queue_url=batch_queue, workers=workers, out=io.StringIO())
        return summary.sent, summary.calls

    def one_by_one() -> tuple[int, int]:
        sent = 0
        for record in read_inventory(str(path)):
            if isinstance(record, Row):
                sqs.send_message(QueueUrl=single_queue, MessageBody=encode_message(record.message))
                sent += 1
        return sent, sent

    batch, single = measured(batched), measured(one_by_one)
    batch["depth"], single["depth"] = queue_depth(sqs, batch_queue), queue_depth(sqs, single_queue)
    return batch, single


def send_in_child(path: Path, endpoint: str) -> dict:
    """A real load of `path` into a fresh queue, in a subprocess: its figures and peak RSS."""
    return dry_run_in_child(path, ["--send-child", str(path), "--endpoint", endpoint])


def send_child(path: str, endpoint: str) -> int:
    """Runs in the subprocess: load `path` into a new queue on `endpoint`, then its figures as JSON."""
    from migrator_cli.load import load_inventory

    sqs = client("sqs", endpoint)
    queue = sqs.create_queue(QueueName=f"bench-load-send-{os.getpid()}-{free_port()}")["QueueUrl"]
    summary = load_inventory(path, sqs=sqs, queue_url=queue, out=io.StringIO())
    figures = {
        "rows": summary.rows_read,
        "sent": summary.sent,
        "elapsed_s": summary.elapsed_s,
        "rate": summary.rate,
        "bad": summary.bad,
        "repeats": summary.repeats,
        "maxrss_kib": own_peak_kib(),
    }
    sqs.delete_queue(QueueUrl=queue)
    print(json.dumps(figures))
    return 0


def dry_run_in_child(path: Path, child_args: list[str] | None = None) -> dict:
    """A dry run of `path` in a fresh interpreter: its own figures, with its own peak RSS (bench.peak)."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", *(child_args or ["--dry-run-child", str(path)])],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the dry run of {path} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def dry_run_child(path: str) -> int:
    """Runs in the subprocess: a dry run of `path`, then its own figures as JSON on stdout."""
    from migrator_cli.load import load_inventory

    summary = load_inventory(path, dry_run=True, out=io.StringIO())
    figures = {
        "rows": summary.rows_read,
        "good": summary.good,
        "bad": summary.bad,
        "repeats": summary.repeats,
        "elapsed_s": summary.elapsed_s,
        "rate": summary.rate,
        "maxrss_kib": own_peak_kib(),
    }
    print(json.dumps(figures))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.dry_run_child:
        return dry_run_child(args.dry_run_child)
    if args.send_child:
        return send_child(args.send_child, args.endpoint)
    runs = measure(args)
    print_figures(args, runs)
    return 0 if all_rows_arrived(args, runs) else 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/load", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=10_000, help="rows for the throughput comparison (default 10000)")
    parser.add_argument("--big-rows", type=int, default=1_000_000, help="rows of the large dry run (default 1000000)")
    parser.add_argument("--small-rows", type=int, default=100_000, help="rows of the small dry run (default 100000)")
    parser.add_argument("--workers", type=int, default=8, help="parallel SendMessageBatch calls (default 8)")
    parser.add_argument(
        "--rtt-ms", type=float, default=0, help="simulated network round trip added to every SQS call (default 0)"
    )
    parser.add_argument(
        "--send-rows", type=int, default=100_000, help="rows of the larger real load for memory (default 100000)"
    )
    parser.add_argument("--dry-run-child", metavar="CSV", help=argparse.SUPPRESS)
    parser.add_argument("--send-child", metavar="CSV", help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


@dataclass(frozen=True)
class Runs:
    """The figures of each run: the throughput pair, the two dry runs and the two real loads."""

    batch: dict
    single: dict
    small: dict
    big: dict
    send_small: dict
    send_big: dict


def measure(args: argparse.Namespace) -> Runs:
    """Every run, on generated files in a temporary directory and one emulator of its own."""
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        tmp_path = Path(tmp)
        # Memory first, so the emulator is not competing for the CPU during the dry runs.
        small_csv, big_csv = tmp_path / "small.csv", tmp_path / "big.csv"
        write_inventory(small_csv, args.small_rows, flaws=True)
        write_inventory(big_csv, args.big_rows, flaws=True)
        small = dry_run_in_child(small_csv)
        big = dry_run_in_child(big_csv)

        rows_csv = tmp_path / "rows.csv"
        write_inventory(rows_csv, args.rows)
        emulator = Emulator(port=free_port(), log_path=ROOT / ".local" / "bench-load-ministack.log").start()
        try:
            batch, single = bench_throughput(emulator, rows_csv, args.workers, args.rtt_ms)
            send_small_csv, send_big_csv = tmp_path / "send-small.csv", tmp_path / "send-big.csv"
            write_inventory(send_small_csv, max(1, args.send_rows // 10))
            write_inventory(send_big_csv, args.send_rows)
            send_small = send_in_child(send_small_csv, emulator.endpoint)
            send_big = send_in_child(send_big_csv, emulator.endpoint)
        finally:
            emulator.stop()
    return Runs(batch, single, small, big, send_small, send_big)


def print_figures(args: argparse.Namespace, runs: Runs) -> None:
    batch, single, small, big = runs.batch, runs.single, runs.small, runs.big
    send_small, send_big = runs.send_small, runs.send_big
    batch_rate, single_rate = batch["sent"] / batch["s"], single["sent"] / single["s"]
    label = count_label(args.rows)
    rtt = f", simulated round trip {args.rtt_ms:g} ms per call" if args.rtt_ms else ""
    print(f"\n=== bench/load: {args.rows:,} rows, {args.workers} workers{rtt} ===")
    print(
        f"load {label}: batch {batch_rate:,.0f} msg/s, single {single_rate:,.0f} msg/s, "
        f"ratio {batch_rate / single_rate:.1f}x   (target >= 10x)"
    )
    print(
        f"load {label} detail: batch {batch['s']:.2f} s in {batch['calls']:,} SendMessageBatch calls; "
        f"single {single['s']:.2f} s in {single['calls']:,} SendMessage calls"
    )
    per_msg = {name: 1000 / figures["sent"] for name, figures in (("batch", batch), ("single", single))}
    print(
        f"load {label} CPU per message: batch {batch['cpu_s'] * per_msg['batch']:.3f} ms here "
        f"+ {batch['emulator_cpu_s'] * per_msg['batch']:.3f} ms emulator; "
        f"single {single['cpu_s'] * per_msg['single']:.3f} ms here + "
        f"{single['emulator_cpu_s'] * per_msg['single']:.3f} ms emulator   (os.cpu_count() = {os.cpu_count()})"
    )
    print(f"queues hold: batch {batch['depth']:,}, single {single['depth']:,}   (expected {args.rows:,} each)")
    for name, figures in ((count_label(args.big_rows), big), (count_label(args.small_rows), small)):
        print(
            f"dry run {name}: {figures['rate']:,.0f} rows/s ({figures['rows']:,} rows in {figures['elapsed_s']:.1f} s; "
            f"{figures['bad']} bad, {figures['repeats']} repeats), peak RSS {figures['maxrss_kib'] / 1024:.1f} MiB"
        )
    print(
        f"memory: peak RSS {count_label(args.big_rows)} / {count_label(args.small_rows)} = "
        f"{big['maxrss_kib'] / small['maxrss_kib']:.2f}   (flat: about 1)"
    )
    for name, figures in ((count_label(args.send_rows), send_big), (count_label(args.send_rows // 10), send_small)):
        print(
            f"real load {name}: {figures['sent']:,} sent at {figures['rate']:,.0f} msg/s, "
            f"peak RSS {figures['maxrss_kib'] / 1024:.1f} MiB"
        )
    print(
        f"memory while sending: peak RSS {count_label(args.send_rows)} / {count_label(args.send_rows // 10)} = "
        f"{send_big['maxrss_kib'] / send_small['maxrss_kib']:.2f}   (flat: about 1)"
    )


def all_rows_arrived(args: argparse.Namespace, runs: Runs) -> bool:
    """Whether every run handled every row; a FAIL line for each that did not."""
    batch, single, small, big = runs.batch, runs.single, runs.small, runs.big
    send_small, send_big = runs.send_small, runs.send_big
    ok = True
    if send_big["sent"] != args.send_rows or send_small["sent"] != max(1, args.send_rows // 10):
        print("FAIL: a real load did not send every row")
        ok = False
    if batch["depth"] != args.rows or single["depth"] != args.rows:
        print("FAIL: a queue does not hold every row")
        ok = False
    if big["rows"] != args.big_rows or small["rows"] != args.small_rows:
        print("FAIL: a dry run did not read every row")
        ok = False
    return ok


if __name__ == "__main__":
    sys.exit(main())
