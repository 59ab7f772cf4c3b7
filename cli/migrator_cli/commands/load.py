"""`migrator load`: its options and its run, an inventory (file, S3 listing or --from) pushed to the queue."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from pathlib import Path

from migrator.ledger import Ledger

from ..errors import CliError
from ..options import (
    positive_int,
    print_json_line,
    resolve_target,
    source_options,
    stack_options,
    standalone_client,
)
from ..triage import where_options
from .inventory import list_library, mark_file


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "load",
        help="push an inventory (CSV, JSON Lines or an S3 listing) to the queue",
        description=(
            "Read an inventory and push one message per asset, 10 per SendMessageBatch call, in parallel. "
            "CSV needs a header with id and source_url, and may have title, metadata (a JSON object) and "
            "duration_s; JSON Lines has one object per line with the same fields. s3://bucket/prefix lists "
            "the video objects under the prefix: the id is derived from bucket and key, and the uploader "
            "hands the provider a presigned GET URL (stack parameter PresignExpirySeconds). Every s3:// "
            "source, listed or in a file, must be in the stack's bucket (stack parameter SourceBucketName), "
            "the only one the uploader can read. A row's options for the stack's provider (options.mux, "
            "options.cloudflare, options.apivideo) must be ones that provider takes. Bad rows are "
            "reported with their line numbers and the good rows still go; an id repeated with the same URL "
            "is dropped with a warning, with a different URL it is an error. The file is streamed. Loading "
            "the same file twice creates nothing twice: the ledger's claim refuses duplicates."
        ),
    )
    p.add_argument(
        "source",
        metavar="FILE",
        nargs="?",
        help="a .csv or .jsonl file, - for standard input, or s3://bucket/prefix (or --from PLATFORM)",
    )
    p.add_argument("--format", choices=["csv", "jsonl"], help="the file's format (default: from its extension)")
    p.add_argument("--dry-run", action="store_true", help="validate and count, send nothing")
    p.add_argument("--limit", type=positive_int, metavar="N", help="stop after N good rows")
    p.add_argument(
        "--stage",
        action="store_true",
        help="record the assets in the ledger as pending instead of enqueuing (probe first)",
    )
    p.add_argument("--workers", type=positive_int, default=8, metavar="N", help="parallel senders (default 8)")
    pilot = p.add_argument_group(
        "a pilot (a reproducible subset; a later full load sends the rest, and the stack drops what moved already)"
    )
    pilot.add_argument(
        "--sample",
        type=positive_int,
        metavar="N",
        help="send N rows chosen by a hash of their id and --seed: the same rows on every run, whatever their order",
    )
    pilot.add_argument("--seed", type=int, default=0, metavar="S", help="the sample's seed (default 0)")
    where_options(pilot, "sends")
    p.add_argument(
        "--inventory",
        metavar="FILE",
        help="with --from: where the listing is written before it is loaded (default <platform>-inventory.jsonl)",
    )
    source_options(p, required=False)
    stack_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    if bool(args.source) == bool(args.platform):
        raise CliError("load takes a FILE (or s3://bucket/prefix) or --from PLATFORM, one of the two")
    if args.platform:
        from ..sweep import default_output

        inventory = Path(args.inventory) if args.inventory else default_output(args.platform)
        # The mark moves only once the load has sent all it lists: a load that fails (the stack down, a
        # Ctrl-C, refused sends) leaves it where it was, and the next --since last lists the batch again.
        listed = list_library(args, inventory, record_mark=False)
        if listed.exit_code:
            return listed.exit_code
        args.source, args.format = str(inventory), "jsonl"

    # A dry run checks a file without any AWS: no stack, no credentials (the stack's source
    # bucket is checked too when one is named).
    named = args.stack or args.outputs or os.environ.get("MIGRATOR_STACK") or os.environ.get("MIGRATOR_OUTPUTS")
    target = resolve_target(args) if not args.dry_run or named else None
    listing = args.source.startswith("s3://")
    emit = print_json_line if args.json else None
    selection = _selection(args)
    with _left_behind(args, selection) as left_behind:
        summary = _load(args, target, listing, emit, selection, left_behind)
    if args.platform and not args.dry_run:
        _record_mark(args, listed, summary)
    if emit:
        emit({"type": "summary", **summary.as_dict()})
    else:
        print("\n".join(summary.lines()), file=sys.stderr)
    return summary.exit_code


def _load(args, target, listing: bool, emit, selection, left_behind):
    from ..load import SourceBucket, load_inventory
    from ..sender import SENDER_CLIENT_CONFIG

    return load_inventory(
        args.source,
        sqs=target.client("sqs", SENDER_CLIENT_CONFIG) if target and not args.dry_run else None,
        queue_url=target.output("QueueUrl") if target and not args.dry_run else None,
        s3=(target.client("s3") if target else standalone_client("s3", args)) if listing else None,
        ledger=(
            Ledger(target.output("LedgerTableName"), target.client("dynamodb"))
            if target and args.stage and not args.dry_run  # a dry run stages nothing
            else None
        ),
        fmt=args.format,
        dry_run=args.dry_run,
        limit=args.limit,
        stage=args.stage,
        workers=args.workers,
        out=sys.stderr,
        stop=threading.Event(),
        source_bucket=SourceBucket.of_outputs(target.outputs) if target else None,
        on_problem=(lambda fields: emit({"type": "problem", **fields})) if emit else None,
        selection=selection,
        left_behind=left_behind,
    )


@contextlib.contextmanager
def _left_behind(args, selection):
    """The left-behind report (--left-behind, else beside the input) when --where filters; else None."""
    if selection is None or not selection.filters:
        yield None
        return
    from ..left_behind import LeftBehindReport, default_path

    with LeftBehindReport(Path(args.left_behind) if args.left_behind else default_path(args.source)) as report:
        yield report


def _record_mark(args, listed, loaded) -> None:
    """After `load --from`: the sweep's mark recorded if every row it listed was sent, else left alone."""
    from ..sweep import iso, write_mark

    if not listed.done:
        return
    if loaded.complete:
        write_mark(
            mark_file(args), args.platform, listed.next_mark, time.time(), listed.next_pending, listed.next_delta
        )
        if listed.next_mark is not None:
            print(f"mark            {iso(listed.next_mark)}: the next --since last starts here", file=sys.stderr)
    else:
        print(
            "mark            not moved: not every row was sent, so the next --since last lists this batch again",
            file=sys.stderr,
        )


def _selection(args):
    """The pilot's --where and --sample, or None for a whole load."""
    from ..select import selection_of

    try:
        return selection_of(args.where, args.sample, args.seed)
    except ValueError as exc:
        raise CliError(str(exc)) from None
