"""`migrator probe`: its options and its run, which ffprobes each pending source before any upload."""

from __future__ import annotations

import sys
import threading

from migrator.ledger import Ledger
from migrator.states import State

from ..options import count_in, positive_int, print_json_line, resolve_target, seconds, stack_options
from ..progress import Progress


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "probe",
        help="ffprobe each pending source: inventoried with its duration, or rejected with a reason",
        description=(
            "The inventory pass. For each pending asset, ffprobe (Debian's ffmpeg) reads the source's duration "
            "and checks it has a video stream. A source with no video stream, or one ffprobe cannot read, "
            "becomes rejected with the reason; the others become inventoried with duration_s (the drift "
            "canary compares it with the provider's later). Only http(s) sources are probed (s3:// ones "
            "through a presigned URL); an asset the uploader claims meanwhile is left to it. ffprobe reaches "
            "public addresses only, redirects included: a source that leads to a private, loopback or "
            "link-local address (cloud metadata, localhost, the internal network) is rejected."
        ),
    )
    p.add_argument("--concurrency", type=positive_int, default=8, metavar="N", help="probes at once (default 8)")
    p.add_argument("--timeout", type=seconds, default=60.0, metavar="S", help="per source (default 60)")
    p.add_argument("--dry-run", action="store_true", help="probe and report, change nothing")
    p.add_argument("--ffprobe", default="ffprobe", metavar="PATH", help="the ffprobe binary (default: on PATH)")
    p.add_argument(
        "--allow-private-addresses",
        action="store_true",
        help="let ffprobe reach private and local addresses too: for local test servers only, never a real library",
    )
    stack_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..probe import run_probe

    target = resolve_target(args)
    ledger = Ledger(target.output("LedgerTableName"), target.client("dynamodb"))
    presign = target.presigner(3600)

    progress = Progress(sys.stderr, count_in(target, State.PENDING), "probed")
    stop = threading.Event()
    try:
        summary = run_probe(
            ledger.iter_state(State.PENDING),
            ledger=ledger,
            presign=presign,
            concurrency=args.concurrency,
            timeout_s=args.timeout,
            ffprobe=args.ffprobe,
            progress=lambda counts: progress.update(
                counts.done, f"{counts.inventoried} inventoried, {counts.rejected} rejected"
            ),
            stop=stop,
            dry_run=args.dry_run,
            allow_private=args.allow_private_addresses,
        )
    finally:
        progress.close()
    if args.json:
        print_json_line({"type": "summary", **summary.__dict__, "done": summary.done})
    else:
        print(summary.render(), file=sys.stderr)
    if summary.inventoried and not args.dry_run and not args.json:
        print("next: migrator retry --state inventoried   (enqueues them)", file=sys.stderr)
    return 0 if not summary.errors else 1
