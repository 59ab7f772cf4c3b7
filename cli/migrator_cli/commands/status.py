"""`migrator status`: its options and its run, one screen on the migration (or a refreshed one with --watch)."""

from __future__ import annotations

import json
import sys
import time

from ..options import positive_int, resolve_target, stack_options


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "status",
        help="counts by state, throughput, ETA, 429 rate, DLQ depth, oldest in flight",
        description=(
            "One screen on the migration. Counts come from aggregates the tally Lambda keeps from the "
            "ledger's stream, so each refresh reads a few dozen items whatever the size of the table."
        ),
    )
    p.add_argument(
        "--watch",
        nargs="?",
        type=float,
        const=5.0,
        metavar="SECONDS",
        help="refresh every SECONDS (default 5) until Ctrl-C",
    )
    p.add_argument("--count", type=positive_int, metavar="N", help="with --watch: stop after N refreshes")
    p.add_argument(
        "--window", type=positive_int, default=15, metavar="MIN", help="minutes of throughput history (default 15)"
    )
    p.add_argument(
        "--exact", action="store_true", help="count through the ledger's index instead (reads every entry: an audit)"
    )
    stack_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..status import gather, render

    target = resolve_target(args)
    shown = 0
    while True:
        view = gather(target, args.window, exact=args.exact)
        shown += 1
        if args.json:  # one object on one line; one a line under --watch (JSON Lines)
            text = json.dumps(view.as_dict(), ensure_ascii=False)
        else:
            text = render(view, target.name)
        if args.watch and sys.stdout.isatty() and not args.json:
            sys.stdout.write("\x1b[H\x1b[2J")  # home and clear: redraw in place
        print(text, flush=True)
        if not args.watch or (args.count and shown >= args.count):
            return 0
        time.sleep(max(1.0, args.watch))
        if not sys.stdout.isatty() and not args.json:
            print(flush=True)
