"""`migrator verify`: its options and its run, the parity check of each ready asset's HLS against its source, and
of its thumbnail, chapters and places in collections against what the ledger says was set (verify_extras.py)."""

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
            "Signed playback is fetched with tokens the stack makes; where it cannot sign, those are counted apart."
        ),
    )
    p.add_argument("--tolerance", type=seconds, default=1.0, metavar="S", help="duration tolerance (default 1 s)")
    p.add_argument(
        "--resolution-tolerance", type=int, default=0, metavar="PX", help="pixels the target may fall short (0)"
    )
    p.add_argument(
        "--rate",
        type=float,
        default=10.0,
        metavar="N",
        help="requests a second at most: fetches and the provider's looks at the extras (default 10)",
    )
    p.add_argument("--concurrency", type=positive_int, default=4, metavar="N", help="assets at once (default 4)")
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

    keys = StackPlaybackKeys(target.client("secretsmanager"), target.outputs.get("StackName") or target.name, provider)

    def sign(playback):
        if provider.name == "mux" and hosts.get("hls"):  # the custom host, as the playback info names one
            playback = {**playback, "hls": playback_links("mux", playback, hosts)["hls"]}
        return through_throttles(lambda: provider.signed_playback(playback, TOKEN_TTL_S, keys))

    return sign


def run(args) -> int:
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
    shown = [0]

    def on_finding(doc: dict) -> None:
        if args.json:
            print_json_line(doc)
        elif shown[0] < 50:
            progress.write(f"{doc['id']}: {doc.get('detail') or doc.get('reason')}")
        shown[0] += 1

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
        if shown[0] > 50:
            print(f"… and {shown[0] - 50:,} more (--json lists them all)", file=sys.stderr)
        print("\n".join(summary.lines()), file=sys.stderr)
    return 0 if summary.ok else 1


def _assets(items: Iterable[dict], collections: list[dict]) -> Iterator[dict]:
    """The asset items of one scan; each collection's own item kept aside in `collections` as it comes."""
    for item in items:
        if is_collection_item(item):
            collections.append(item)
        else:
            yield item
