"""`migrator export`: its options and its run, the cut-over map (each asset's new playback URLs, or redirect maps),
and beside it the collections map (`--collections FILE`: each source collection's new one, export_collections.py)."""

from __future__ import annotations

import contextlib
import os
import sys

from ..cutover import SIGNED as SIGNED_TEXT
from ..errors import CliError
from ..export import ID_FIELDS as EXPORT_ID_FIELDS
from ..export import URL_FIELDS as EXPORT_URL_FIELDS
from ..export_left_behind import add_options as left_behind_options
from ..options import (
    count_in_all,
    mux_host_options,
    mux_hosts,
    output_to,
    print_json_line,
    resolve_target,
    stack_options,
    state_name,
)
from ..progress import Progress


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "export",
        help="the cut-over map: each asset's source and where it now plays, or redirect maps (old URL -> new)",
        description=(
            "One row per asset, streamed from the ledger: our id, the source platform and id, the source URL, "
            "the provider and its video id, the playback id, the HLS, player and thumbnail URLs the provider "
            "gave when the video was ready, privacy, state and tracks. A video that needs a token to play "
            f"(signed or private) says '{SIGNED_TEXT}' instead of a URL. --format nginx writes a `map` block "
            "and --format redirects an old_url,new_url CSV, from --old-url and --new-url templates with "
            "{placeholders}: ids (" + ", ".join(f"{{{n}}}" for n in EXPORT_ID_FIELDS) + ") are percent-encoded "
            "into the URL, URLs (" + ", ".join(f"{{{n}}}" for n in EXPORT_URL_FIELDS) + ") go in as they are. "
            "--collections FILE writes, in the same pass over the ledger, the old-collection to new-collection map: "
            "each collection a row named (its source platform, id, name and kind) and the provider's collection "
            "made for it, with its state; JSON Lines with --format jsonl (or --json), else CSV."
        ),
    )
    p.add_argument("--format", choices=["csv", "jsonl", "nginx", "redirects"], default="csv", help="default csv")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    p.add_argument(
        "--collections",
        metavar="FILE",
        help="also write the collections map here: each source collection and the one made for it at the provider",
    )
    p.add_argument("--old-url", metavar="TEMPLATE", help="e.g. 'https://vimeo.com/{source_id}'")
    p.add_argument("--new-url", metavar="TEMPLATE", help="e.g. 'https://player.example/{playback_id}'")
    p.add_argument(
        "--nginx-key",
        choices=["uri", "url"],
        default="uri",
        help="what the nginx map matches: $request_uri (the old URL's path and query; default) or the whole URL",
    )
    p.add_argument("--nginx-variable", default="migrator_new_url", metavar="NAME", help="the map's variable")
    p.add_argument(
        "--nginx-no-hash-sizes",
        action="store_true",
        help="leave out map_hash_max_size and map_hash_bucket_size (set elsewhere in http {}); a comment gives them",
    )
    p.add_argument(
        "--state", type=state_name, action="append", metavar="STATE", help="only assets in STATE (repeatable)"
    )
    mux_host_options(p)
    stack_options(p)
    left_behind_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..export import Template, export, show_problems
    from ..report import scan_ledger

    if args.left_behind:  # a --where's left-behind report as a redirect list: a local file, no stack
        from ..export_left_behind import run as run_left_behind

        return run_left_behind(args)
    old_url = Template(args.old_url, "--old-url") if args.old_url else None
    new_url = Template(args.new_url, "--new-url") if args.new_url else None
    if args.format in ("nginx", "redirects") and (old_url is None or new_url is None):
        raise CliError(f"--format {args.format} needs --old-url and --new-url templates")
    if args.collections and args.output and os.path.abspath(args.collections) == os.path.abspath(args.output):
        raise CliError("--collections needs a file of its own, not the --output file")
    target = resolve_target(args)
    provider = target.outputs.get("Provider") or "generic"
    fmt = args.format
    if args.json and not args.output:
        fmt = "jsonl"  # --json: one JSON object per asset, as report does
    items = scan_ledger(
        target.client("dynamodb"), target.output("LedgerTableName"), args.state, with_collections=bool(args.collections)
    )
    progress = Progress(sys.stderr, count_in_all(target) if not args.state else None, "exported")
    counted = _counting(items, progress)
    report = show_problems(progress.write, print_json_line if args.json and args.output else None)
    options = dict(
        mux_hosts=mux_hosts(args),
        old_url=old_url,
        new_url=new_url,
        nginx_key=args.nginx_key,
        nginx_variable=args.nginx_variable,
        nginx_sizes=not args.nginx_no_hash_sizes,
        report=report,
    )
    try:
        with output_to(args.output) as out, _collections_file(args.collections) as collections_out:
            summary = export(counted, out, fmt, provider, collections_out=collections_out, **options)
    finally:
        progress.close()
    if args.json and args.output:
        print_json_line({**summary.as_dict(), "output": args.output})
    else:
        print("\n".join(summary.lines()), file=sys.stderr)
        if args.collections and not summary.collections:
            print(f"collections     none in the ledger ({_collections_instead(provider)})", file=sys.stderr)
    return 1 if summary.problems else 0


@contextlib.contextmanager
def _collections_file(path: str | None):
    """The collections map's file, or None where none was asked for."""
    if not path:
        yield None
        return
    with output_to(path) as out:
        yield out


def _collections_instead(provider: str) -> str:
    """Why a ledger may hold no collection: what the target does instead where it keeps none."""
    from migrator.providers import PROVIDERS

    cls = PROVIDERS.get(provider)
    if cls is not None and not getattr(cls, "takes_collections", False):
        return f"{provider} keeps no collections: {cls.collections_instead}"
    return "no row named a collection, or none was made yet"


def _counting(items, progress: Progress):
    for n, item in enumerate(items, start=1):
        progress.update(n)
        yield item
