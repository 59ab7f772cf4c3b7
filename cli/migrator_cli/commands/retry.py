"""`migrator retry`: its options and its run, which re-arms and re-enqueues assets (or their failed caption tracks,
or their failed archive copies)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from migrator.ledger import REARMABLE, Ledger
from migrator.states import State

from ..errors import CliError
from ..options import count_in, print_json_line, resolve_target, stack_options, state_name
from ..progress import Progress


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "retry",
        help="re-enqueue the assets in a state (default: failed)",
        description=(
            "Re-arm and re-enqueue assets. failed (and rejected, if you ask) get a fresh attempt budget; the "
            "uploader still asks the provider first whether an earlier try created the video, so a retry "
            "never makes a second copy. pending and inventoried assets (staged, probed) are simply enqueued. "
            "--tracks re-arms failed caption tracks and extras instead, --archive failed archive copies."
        ),
    )
    p.add_argument(
        "--state", type=state_name, default=State.FAILED, help="failed (default), rejected, pending or inventoried"
    )
    p.add_argument("--id", action="append", dest="ids", metavar="ID", help="only this asset (repeatable)")
    p.add_argument("--ids-file", metavar="FILE", help="only the ids in FILE, one per line")
    p.add_argument("--dry-run", action="store_true", help="list what would be retried")
    p.add_argument(
        "--tracks",
        action="store_true",
        help="re-arm the failed caption tracks of ready assets instead (only those; the others are left as they "
        "are) and send them to the tracks worker; --state does not apply",
    )
    p.add_argument(
        "--archive",
        action="store_true",
        help="re-arm the archive copies that failed for good (their reason is in `verify --archive` and `show`) "
        "with a fresh budget of copies, and send them to the archive worker, which copies each original again "
        "from its first part; found by a scan of the ledger, or named by --id/--ids-file; a copy still under way "
        "or archived is left alone; --state does not apply. Needs a stack deployed with ArchiveBucket",
    )
    stack_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..ops import retry
    from ..sender import SENDER_CLIENT_CONFIG, BatchSender

    if args.tracks and args.archive:
        raise CliError("retry takes --tracks or --archive, one at a time")
    if args.tracks:
        return _retry_tracks(args, _ids(args), resolve_target(args))
    if args.archive:
        return _retry_archive(args, _ids(args), resolve_target(args))
    if args.state not in REARMABLE:
        raise CliError(f"retry takes failed, rejected, pending or inventoried assets, not {args.state.value}")
    ids = _ids(args)
    target = resolve_target(args)
    ledger = Ledger(target.output("LedgerTableName"), target.client("dynamodb"))
    # Straight to the paced queue: the ledger already has these assets (older stacks had one queue).
    queue = target.outputs.get("WorkQueueUrl") or target.output("QueueUrl")
    sender = BatchSender(target.client("sqs", SENDER_CLIENT_CONFIG), queue)
    progress = Progress(sys.stderr, len(ids) if ids else count_in(target, args.state), "re-enqueued")

    def send(messages):
        result = sender.send(messages, on_progress=lambda sent, failed: progress.update(sent, f"({failed} failed)"))
        if result.fatal:  # what was re-armed but not sent is pending: reconcile heals it
            raise CliError(result.fatal)
        return result.sent, result.failed

    try:
        summary = retry(ledger, args.state, ids or None, send, dry_run=args.dry_run)
    finally:
        progress.close()
    trouble = bool(summary.failed or summary.not_retryable)
    if args.json:
        print_json_line({"type": "summary", "state": args.state.value, "dry_run": args.dry_run, **summary.__dict__})
        return 1 if trouble else 0
    verb = "would re-enqueue" if args.dry_run else "re-enqueued"
    count = summary.listed - len(summary.moved_on) if args.dry_run else summary.sent
    print(f"{verb} {count:,} {args.state.value} assets", file=sys.stderr)
    _show([(asset_id, f"now {state}") for asset_id, state in summary.moved_on], "skipped", "skipped")
    _show(summary.not_retryable, "not retryable", "not retryable (--json lists them)")
    for asset_id, reason in summary.failed[:20]:
        print(f"  not sent {asset_id}: {reason} (reconcile will heal it)", file=sys.stderr)
    return 1 if trouble else 0


def _retry_tracks(args, ids: list[str], target) -> int:
    from migrator.tracks import tracks_message

    from ..ops import retry_tracks
    from ..report import scan_ledger

    ledger, items, send = _worker_lane(
        target,
        ids,
        target.output("TracksQueueUrl"),
        lambda due: tracks_message(due.asset_id),
        lambda ledger: scan_ledger(ledger.client, ledger.table, [State.READY], with_tracks=True),
    )
    summary = retry_tracks(ledger, items, send, dry_run=args.dry_run)
    if args.json:
        print_json_line({"type": "summary", "retried": "tracks", "dry_run": args.dry_run, **summary.__dict__})
    else:
        verb = "would re-arm" if args.dry_run else "re-armed"
        print(f"{verb} {summary.tracks:,} failed tracks on {summary.assets:,} assets", file=sys.stderr)
        for asset_id, why in summary.moved_on[:20] + summary.failed[:20]:
            print(f"  {asset_id}: {why}", file=sys.stderr)
    return 1 if summary.failed else 0


def _retry_archive(args, ids: list[str], target) -> int:
    from migrator.archiver import archive_message

    from ..ops import checked_ids, retry_archive
    from ..report import scan_ledger

    ledger, items, send = _worker_lane(
        target,
        checked_ids(ids),
        archive_queue(target.outputs, target.name),
        lambda due: archive_message(due.asset_id),
        lambda ledger: scan_ledger(ledger.client, ledger.table, archive_states=["failed"]),
    )
    summary = retry_archive(ledger, items, send, dry_run=args.dry_run)
    if args.json:
        print_json_line({"type": "summary", "retried": "archive", "dry_run": args.dry_run, **summary.__dict__})
    else:
        verb = "would re-arm" if args.dry_run else "re-armed"
        print(f"{verb} {summary.rearmed:,} failed archive copies", file=sys.stderr)
        _show(summary.moved_on, "skipped", "skipped (--json lists them)")
        for asset_id, why in summary.failed[:20]:
            print(f"  not sent {asset_id}: {why} (reconcile will send it)", file=sys.stderr)
    return 1 if summary.failed else 0


def _show(pairs: list, label: str, more: str, shown: int = 20) -> None:
    """The first `shown` (asset id, why) pairs a line each, then how many more."""
    for asset_id, why in pairs[:shown]:
        print(f"  {label} {asset_id}: {why}", file=sys.stderr)
    if len(pairs) > shown:
        print(f"  … and {len(pairs) - shown} more {more}", file=sys.stderr)


def _worker_lane(target, ids: list[str], queue: str, encode, scan) -> tuple[Ledger, Iterable[dict], Callable]:
    """What retry --tracks and --archive share: the ledger, its items (the named ones, else `scan(ledger)`), and
    the send of the re-armed ones to the worker's `queue`. A send that cannot go on raises: what was re-armed but
    not sent waits in reconcile's lane, which sends it after its quiet period."""
    from ..sender import SENDER_CLIENT_CONFIG, BatchSender

    ledger = Ledger(target.output("LedgerTableName"), target.client("dynamodb"))
    sender = BatchSender(target.client("sqs", SENDER_CLIENT_CONFIG), queue, encode=encode)
    items: Iterable[dict]
    if ids:
        found = ledger.get_many(ids)
        items = [found.get(i) or {"asset_id": i} for i in ids]
    else:
        items = scan(ledger)

    def send(due):
        result = sender.send(due)
        if result.fatal:
            raise CliError(result.fatal)
        return result.sent, result.failed

    return ledger, items, send


def archive_queue(outputs: dict, stack: str) -> str:
    """The archive worker's queue, or the error that says the stack keeps no archive and how to turn it on."""
    if not outputs.get("ArchiveBucketName"):
        raise CliError(
            f"stack {stack} keeps no archive: deploy it with the ArchiveBucket parameter set to the bucket the "
            "originals go to (ArchivePrefix and ArchiveStorageClass are optional)"
        )
    queue = outputs.get("ArchiveQueueUrl")
    if not queue:
        raise CliError(f"stack {stack} has no output ArchiveQueueUrl: redeploy it from the current template.yaml")
    return str(queue)


def _ids(args) -> list[str]:
    """The ids of --id and --ids-file, in order."""
    ids = list(args.ids or [])
    if args.ids_file:
        try:
            ids += [
                line.strip() for line in Path(args.ids_file).read_text(encoding="utf-8").splitlines() if line.strip()
            ]
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"cannot read {args.ids_file}: {getattr(exc, 'strerror', None) or exc}") from None
    return ids
