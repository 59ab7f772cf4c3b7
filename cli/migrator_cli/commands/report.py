"""`migrator report`: its options and its run, the mapping as CSV or JSON Lines, or one HTML summary page."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ..errors import CliError
from ..options import count_in_all, output_to, print_json_line, resolve_target, stack_options, state_name
from ..progress import Progress


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report",
        help="export the mapping (our id, source, state, provider id, durations, attempts, last error, privacy,"
        " what did not fit)",
        description="One line per asset, as CSV or JSON Lines, streamed from a parallel scan of the ledger.",
    )
    p.add_argument("--format", choices=["csv", "jsonl"], default="csv", help="default csv")
    p.add_argument(
        "--state", type=state_name, action="append", metavar="STATE", help="only assets in STATE (repeatable)"
    )
    p.add_argument("--drift", action="store_true", help="only assets the duration-drift canary flagged")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    p.add_argument(
        "--html",
        metavar="FILE",
        help="write one self-contained page instead: counts, throughput over time, why assets failed or were "
        "rejected, the largest drifts (no server, nothing loaded from the network)",
    )
    stack_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..report import scan_ledger, write_report

    if args.html:
        if args.output or args.state or args.drift:
            raise CliError("--html summarises every asset: it takes no --output, --state or --drift")
        return _report_html(args)
    target = resolve_target(args)
    if args.json:
        args.format = "jsonl"  # --json: one JSON object per asset
    items = scan_ledger(target.client("dynamodb"), target.output("LedgerTableName"), args.state, args.drift)
    with output_to(args.output) as out:
        count = write_report(items, out, args.format)
    if args.output:
        print(f"{count:,} assets written to {args.output}", file=sys.stderr)
    return 0


def _report_html(args) -> int:
    from ..report import scan_ledger
    from ..report_html import ReportSummary, render_html

    target = resolve_target(args)
    summary = ReportSummary()
    progress = Progress(sys.stderr, count_in_all(target), "read")
    try:
        for item in scan_ledger(target.client("dynamodb"), target.output("LedgerTableName")):
            summary.add(item)
            progress.update(summary.total)
    finally:
        progress.close()
    page = render_html(summary, target.name, time.time())
    try:
        Path(args.html).write_text(page, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {args.html}: {exc.strerror}") from None
    if args.json:
        print_json_line({"type": "summary", "html": args.html, "assets": summary.total, "counts": dict(summary.counts)})
    else:
        print(f"{summary.total:,} assets summarised in {args.html}", file=sys.stderr)
    return 0
