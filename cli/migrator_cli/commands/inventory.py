"""`migrator inventory`: its options and its run, a library listed on its platform (load and plan --from list here)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from ..options import positive_int, print_json_line, source_options, standalone_client
from ..triage import where_options


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "inventory",
        help="list a library on the platform it lives on into an inventory (JSONL, CSV on request)",
        description=(
            "Page through a library on one of --from's platforms (Vimeo, Wistia, Mux, Cloudflare Stream, api.video, "
            "JW Player, Brightcove, Kaltura, Dropbox, S3, Google Cloud Storage, Azure Blob) and write one row per "
            "video (title, description, tags, creation time, duration, size, privacy, folder, caption tracks, "
            "poster time; where the platform has them the thumbnail, chapters, collections and publish time) whose "
            "source_url is a source reference such as vimeo://123: the uploader resolves it "
            "to a fresh download link only when it creates the video, so no link expires in the queue. Videos "
            "that can never be fetched (no file access, no MP4, failed, archived, ...) "
            "are counted, kept out, and listed with their reason in <output>.unfetchable.jsonl. The listing "
            "keeps to the source's documented rate and waits out its 429s; after each page the cursor is saved, "
            "so the same command resumes an interrupted sweep. `migrator load` takes the output as it is. "
            "Needs no stack."
        ),
    )
    p.add_argument(
        "-o", "--output", metavar="FILE", help="the JSON Lines inventory (default <platform>-inventory.jsonl)"
    )
    p.add_argument("--csv", metavar="FILE", help="also write the rows as CSV")
    p.add_argument(
        "--unfetchable", metavar="FILE", help="where unfetchable videos go (default <output>.unfetchable.jsonl)"
    )
    p.add_argument("--limit", type=positive_int, metavar="N", help="stop after N rows (the same command goes on)")
    where_options(
        p.add_argument_group("triage (the whole library is listed into <output>.listed.jsonl, then filtered)"),
        "writes to the output",
    )
    source_options(p, required=True)
    group = p.add_argument_group("AWS, for --from s3 (as the AWS CLI reads them)")
    group.add_argument("--endpoint-url", "--endpoint", dest="endpoint", metavar="URL", help="an S3-compatible endpoint")
    group.add_argument("--region", help="AWS region")
    group.add_argument("--profile", help="a named profile from ~/.aws/config")
    group.add_argument("--json", action="store_true", help="the summary as one JSON object")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..select import selection_of
    from ..sweep import default_output
    from ..triage import inventory_where

    output = Path(args.output) if args.output else default_output(args.platform)
    selection = selection_of(args.where)
    if selection is not None:
        return inventory_where(args, output, selection, list_library)
    return list_library(args, output).exit_code


def mark_file(args) -> Path:
    return Path(args.mark_file or f"{args.platform}.mark.json")


def list_library(args, output: Path, record_mark: bool = True):
    """List the library `args` names into `output`; prints the summary and returns it (`SweepSummary`).
    `record_mark`: the finished sweep records its mark for `--since last`; without it, the caller records
    `next_mark` once what was listed is safe (`load --from`: every row sent), and a failure moves nothing."""
    from ..load import _ctrl_c_sets
    from ..source_credentials import source_credentials
    from ..sweep import MARK_OVERLAP_S, build_source, default_output, read_mark, sweep

    platform = args.platform
    credentials = None
    if platform != "s3":
        credentials = source_credentials(platform, args.credentials, args.source_profile)
    s3 = standalone_client("s3", args) if platform == "s3" else None
    source = build_source(
        platform, credentials=credentials, base_url=args.source_url, rate=args.source_rate, s3=s3, s3_url=args.s3
    )
    mark_path = mark_file(args)
    since = args.since
    if since == "last":
        since = read_mark(mark_path, platform) - MARK_OVERLAP_S
    output = output or default_output(platform)
    stop = threading.Event()
    with _ctrl_c_sets(stop):
        summary = sweep(
            source,
            output,
            unfetchable_output=Path(args.unfetchable) if getattr(args, "unfetchable", None) else None,
            csv_output=Path(args.csv) if getattr(args, "csv", None) else None,
            state_path=Path(args.state) if args.state else None,
            mark_path=mark_path if record_mark else None,
            pending_path=mark_path,  # what the last recorded sweep left processing is asked for again
            since=since,
            restart=args.restart,
            limit=getattr(args, "limit", None) if args.command == "inventory" else None,
            tracks=not args.no_tracks,
            out=sys.stderr,
            stop=stop,
        )
    if args.json and args.command == "inventory":
        print_json_line({"type": "summary", **summary.as_dict()})
    else:
        print("\n".join(summary.lines()), file=sys.stderr)
    return summary
