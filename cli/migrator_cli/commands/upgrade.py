"""`migrator upgrade`: its options and its run, which brings the ledger items an earlier release wrote to this one's."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from migrator.ledger import Ledger

from ..options import print_json_line, resolve_target, stack_options
from ..progress import Progress


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "upgrade",
        help="after `sam deploy` of a new release: fill in what the ledger's older items lack",
        description=(
            "Walk the ledger once and bring every item an earlier release wrote to this release's schema: the "
            "fields the new code reads that the old code never wrote (reconcile's due lanes, the lookup bound "
            "after a crash, the tracks lane) are derived from what the item holds. Run it right after `sam "
            "deploy` while the migration goes on: each write is conditional (an item that moved meanwhile is "
            "read again), the writes are paced (--rate), nothing is written twice (an item at the version is "
            "skipped), and an interrupted run resumes from its --checkpoint. `migrator doctor` says when it is due."
        ),
    )
    p.add_argument("--rate", type=float, default=50.0, help="item writes a second at most (default 50)")
    p.add_argument(
        "--checkpoint",
        metavar="FILE",
        default="migrator-upgrade.json",
        help=(
            "where each scan segment's position is kept, with the ledger table and schema version it is for "
            "(default migrator-upgrade.json). The same run's is resumed; a finished one of another table or "
            "version is started over, with a warning; an unfinished one of another is refused (pass another "
            "file, or delete it to give that run up)"
        ),
    )
    stack_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..load import _ctrl_c_sets
    from ..upgrade import Checkpoint, run_upgrade

    target = resolve_target(args)
    ledger = Ledger(target.output("LedgerTableName"), target.client("dynamodb"))
    progress, stop = Progress(sys.stderr, None, "items below the schema"), threading.Event()
    try:
        with _ctrl_c_sets(stop):
            summary = run_upgrade(
                ledger,
                checkpoint=Checkpoint(Path(args.checkpoint)),
                rate=args.rate,
                stop=stop,
                progress=progress.update,
            )
    finally:
        progress.close()
    if args.json:
        print_json_line(summary.as_dict())
    else:
        print("\n".join(summary.lines()), file=sys.stderr)
    return 0 if summary.done else 130 if summary.interrupted else 1
