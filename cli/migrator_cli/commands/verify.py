"""`migrator verify`: its options and its run, the parity check of each ready asset's HLS against its source, and
of its thumbnail, chapters and places in collections against what the ledger says was set (verify_extras.py); with
--archive, every archived original's size and checksum in the owner's bucket against the ledger (verify_archive.py)."""

from __future__ import annotations

import sqlite3
import sys
import threading
from collections.abc import Iterable, Iterator

from migrator.ledger import Ledger
from migrator.states import State

from ..errors import CliError
from ..export_collections import is_collection_item
from ..options import (
    count_in,
    count_in_all,
    mux_host_options,
    mux_hosts,
    positive_int,
    print_json_line,
    resolve_target,
    seconds,
    stack_options,
)
from ..progress import Progress


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "verify",
        help="the parity check: each ready asset's HLS manifest, duration and resolution against its source's",
        description=(
            "For each ready asset, fetch its HLS manifest from the provider (master and top variant) and check it "
            "exists and is a finished playlist, that its duration matches the provider's and the source's "
            "(duration_s from the inventory or the probe), and that its top resolution reaches the source's "
            "(metadata width/height from the inventory, else what the provider read from the source). Its "
            "thumbnail, chapters and places in collections are read back from the provider where the ledger says "
            "they were set; a noted one (the provider cannot carry it) is counted apart, a missing or failed one is "
            "a mismatch, and an asset whose extras are still being worked is left for the next run. Each "
            "mismatch is listed with its numbers; exit 1 when any asset fails or got no answer. Bounded "
            "(--concurrency), paced (--rate requests a second) and resumable (--checkpoint FILE: a second run "
            "skips what passed; what failed, and signed videos not fetched for want of a token or signing key, "
            "are checked again). The fetches go from this machine to public addresses only, redirects included. "
            "Signed playback is fetched with tokens the stack makes; where it cannot sign, those are counted apart. "
            "With --archive, it checks the owner's archive of the originals instead (see --archive)."
        ),
    )
    p.add_argument("--tolerance", type=seconds, default=1.0, metavar="S", help="duration tolerance (default 1 s)")
    p.add_argument(
        "--resolution-tolerance", type=int, default=0, metavar="PX", help="pixels the target may fall short (0)"
    )
    p.add_argument(
        "--rate",
        type=float,
        default=None,
        metavar="N",
        help="requests a second at most: fetches and the provider's looks at the extras (default 10; with "
        f"--archive, HeadObjects: default {ARCHIVE_RATE:g})",
    )
    p.add_argument(
        "--concurrency",
        type=positive_int,
        default=None,
        metavar="N",
        help=f"assets at once (default 4; with --archive {ARCHIVE_WORKERS})",
    )
    p.add_argument(
        "--archive",
        action="store_true",
        help="check the archive instead: for every asset the ledger says is archived, S3's HeadObject (with its "
        "checksum) at its key in ArchiveBucketName must give the ledger's size (archive_bytes) and SHA-256 "
        "(archive_sha256, S3's composite 'base64-N'); each object that differs, is missing or got no answer is "
        "listed with why, and so is each ready asset not archived, with its archive state and error. Ends with "
        "'archived N of M, <bytes>, checksums verified' (M: the assets owed a copy: those the provider took, and "
        "those whose copy began); exit 1 when any object "
        "differs, is missing or got no answer. Reads only the ledger and the bucket (s3:GetObject on the prefix "
        "answers HeadObject); --id, --rate and --concurrency apply",
    )
    p.add_argument("--timeout", type=seconds, default=10.0, metavar="S", help="per fetch (default 10)")
    p.add_argument("--checkpoint", metavar="FILE", help="keep verdicts here; a later run resumes from it")
    p.add_argument("--limit", type=positive_int, metavar="N", help="check at most N assets this run")
    p.add_argument("--id", action="append", dest="ids", metavar="ID", help="only this asset (repeatable)")
    p.add_argument(
        "--allow-private-addresses",
        action="store_true",
        help="let the fetches reach private and local addresses too: for a local simulator only",
    )
    mux_host_options(p)
    stack_options(p)
    p.set_defaults(run=run)


# verify --archive's pace: HeadObjects against the owner's own bucket, which takes thousands a second per prefix.
ARCHIVE_RATE = 200.0
ARCHIVE_WORKERS = 16


# A provider's read limit met while signing (Vimeo answers 429 past its reads a minute): waited out with
# growing, jittered waits (about 31 s in all) rather than leaving the asset unchecked for the next run.
THROTTLED_WAITS_S = (1.0, 2.0, 4.0, 8.0, 16.0)


def through_throttles(call, waits=THROTTLED_WAITS_S, sleep=None, jitter=None):
    """`call()`, tried again after each wait while the provider answers 429 (a TransportError of kind
    "HTTP 429 ..."); any other failure, or a 429 after the last wait, is raised as it came."""
    import random
    import time

    from migrator.providers.http import TransportError

    sleep, jitter = sleep or time.sleep, jitter or (lambda: random.uniform(0.5, 1.5))
    for wait in waits:
        try:
            return call()
        except TransportError as exc:
            if not exc.kind.startswith("HTTP 429"):
                raise
            sleep(wait * jitter())
    return call()  # the last try: whatever it raises goes to the caller


def _signer(target, provider, hosts: dict[str, str]):
    """Signs a signed video's playback for verify's own fetches, through the stack's provider (its tokens,
    its signing key in Secrets Manager: playback_keys.py), on the host --mux-stream-url names if given."""
    from ..cutover import playback_links
    from ..playback_keys import StackPlaybackKeys
    from ..verify import TOKEN_TTL_S

    keys = StackPlaybackKeys(
        target.client("secretsmanager"),
        target.outputs.get("StackName") or target.name,
        provider,
        target.outputs.get("PlaybackKeySecretArn"),
    )

    def sign(playback):
        if provider.name == "mux" and hosts.get("hls"):  # the custom host, as the playback info names one
            playback = {**playback, "hls": playback_links("mux", playback, hosts)["hls"]}
        return through_throttles(lambda: provider.signed_playback(playback, TOKEN_TTL_S, keys))

    return sign


def run(args) -> int:
    if args.archive:
        return _verify_archive(args)
    args.rate = 10.0 if args.rate is None else args.rate
    args.concurrency = args.concurrency or 4
    from ..report import scan_ledger
    from ..verify import Checkpoint, Tolerance, checker, run_verify
    from ..verify_collections import CollectionsCheck
    from ..verify_extras import ExtrasChecker, WithExtras

    target = resolve_target(args)
    provider = target.outputs.get("Provider") or "generic"
    items: Iterable[dict]
    collections: list[dict] | None = None  # each collection's own item, checked after the videos (not with --id)
    if args.ids:
        ledger = Ledger(target.output("LedgerTableName"), target.client("dynamodb"))
        found = ledger.get_many(list(args.ids))
        items = [found[i] for i in args.ids if i in found and found[i].get("state") == State.READY.value]
    else:
        collections = []
        scanned = scan_ledger(
            target.client("dynamodb"), target.output("LedgerTableName"), [State.READY], with_collections=True
        )
        items = _assets(scanned, collections)
    stack_provider = target.provider()  # signs playback for the fetches, and reads the extras back
    if args.allow_private_addresses:  # a local simulator: no proxy from the environment between us and loopback
        stack_provider.http.session.trust_env = False
    video = checker(
        provider,
        Tolerance(args.tolerance, max(0, args.resolution_tolerance)),
        rate=args.rate,
        timeout_s=args.timeout,
        allow_private=args.allow_private_addresses,
        mux_hosts=mux_hosts(args),
        signer=_signer(target, stack_provider, mux_hosts(args)),
    )
    # The provider's looks go on the same pace as the manifest fetches: --rate requests a second in all.
    looks = ExtrasChecker(stack_provider, video.pace)
    check = WithExtras(video, looks, stack_provider.poster_time_later)
    progress = Progress(
        sys.stderr, len(items) if isinstance(items, list) else count_in(target, State.READY), "verified"
    )
    on_finding = Shown(args.json, progress)

    stop = threading.Event()
    try:
        checkpoint = Checkpoint(args.checkpoint)
    except sqlite3.Error as exc:
        raise CliError(f"cannot use the checkpoint {args.checkpoint}: {exc}") from None
    try:
        summary = run_verify(
            items,
            check,
            checkpoint=checkpoint,
            concurrency=args.concurrency,
            limit=args.limit,
            stop=stop,
            on_finding=on_finding,
            progress=progress.update,
        )
        if collections and not summary.stopped and args.limit is None:  # every collection item came with the scan
            made = CollectionsCheck(stack_provider, looks.ask).run(collections, on_finding)
            summary.collections_line, summary.collections_findings = made.line(), len(made.findings)
            summary.unchecked += made.unchecked
    finally:
        progress.close()
        checkpoint.close()
    if args.json:
        print_json_line(summary.as_dict())
    else:
        on_finding.more()
        print("\n".join(summary.lines()), file=sys.stderr)
    return 0 if summary.ok else 1


def _verify_archive(args) -> int:
    from botocore.config import Config
    from migrator.archive.store import ArchiveStore

    from ..report import scan_ledger
    from ..verify_archive import run_archive_verify

    if args.checkpoint or args.limit:
        raise CliError("verify --archive reads every archived object each run: it takes no --checkpoint or --limit")
    target = resolve_target(args)
    if not target.outputs.get("ArchiveBucketName"):
        raise CliError(
            f"stack {target.name} keeps no archive: deploy it with the ArchiveBucket parameter set to the bucket the "
            "originals go to, then verify --archive"
        )
    workers = args.concurrency or ARCHIVE_WORKERS
    s3 = target.client("s3", Config(max_pool_connections=workers + 2))
    store = ArchiveStore(target.output("ArchiveBucketName"), s3)
    items: Iterable[dict]
    if args.ids:
        found = Ledger(target.output("LedgerTableName"), target.client("dynamodb")).get_many(list(args.ids))
        items = [found[i] for i in args.ids if i in found]
    else:
        items = scan_ledger(target.client("dynamodb"), target.output("LedgerTableName"))
    progress = Progress(sys.stderr, count_in_all(target) if not args.ids else len(args.ids), "checked")
    on_finding = Shown(args.json, progress, _archive_words)

    try:
        report = run_archive_verify(
            items,
            store.held,
            workers=workers,
            rate=ARCHIVE_RATE if args.rate is None else args.rate,
            on_finding=on_finding,
            progress=progress.update,
        )
    finally:
        progress.close()
    if args.json:
        print_json_line(report.as_dict())
    else:
        on_finding.more()
        print("\n".join(report.lines()), file=sys.stderr)
    return 0 if report.ok else 1


class Shown:
    """Findings as they come: each one a JSON line with --json, else the first MAX_SHOWN in words above the
    progress bar; `more()` says how many more there were."""

    MAX_SHOWN = 50

    def __init__(self, as_json: bool, progress: Progress, words=None):
        self.as_json, self.progress, self.count = as_json, progress, 0
        self.words = words or (lambda doc: f"{doc['id']}: {doc.get('detail') or doc.get('reason')}")

    def __call__(self, doc: dict) -> None:
        if self.as_json:
            print_json_line(doc)
        elif self.count < self.MAX_SHOWN:
            self.progress.write(self.words(doc))
        self.count += 1

    def more(self) -> None:
        if self.count > self.MAX_SHOWN:
            print(f"… and {self.count - self.MAX_SHOWN:,} more (--json lists them all)", file=sys.stderr)


def _archive_words(doc: dict) -> str:
    """An archive finding in words; a ready asset not archived with its archive state and error."""
    why = doc.get("detail") or f"ready, archive {doc.get('archive_state') or 'not begun'}"
    return f"{doc['id']}: {why}" + (f": {doc['archive_error']}" if doc.get("archive_error") else "")


def _assets(items: Iterable[dict], collections: list[dict]) -> Iterator[dict]:
    """The asset items of one scan; each collection's own item kept aside in `collections` as it comes."""
    for item in items:
        if is_collection_item(item):
            collections.append(item)
        else:
            yield item
