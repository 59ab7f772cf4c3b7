"""`migrator usage`: its options and its run, the usage pass over an inventory (usage_pass.py; issue 45)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from ..errors import CliError
from ..options import print_json_line

# The platforms whose listing gives usage itself (sources/inline_usage.py): their rows have it from `inventory`.
INLINE = {"kaltura": "each entry's plays, views and lastPlayedAt", "vimeo": "each video's stats.plays"}


def register(subparsers) -> None:
    from migrator.sources import PLATFORMS

    p = subparsers.add_parser(
        "usage",
        help="read how much each video of an inventory was watched, where the platform's analytics are apart",
        description=(
            "Add each video's usage (plays, views, last play, and when they were read) to an inventory written by "
            "`migrator inventory`, for a platform whose analytics are read apart from its listing (priced or "
            "paced apart). The platform's analytics are read page by page, within its budget, for the videos of "
            "FILE on that platform; OUT gets every row of FILE, in order, with `usage` set (merged with any the "
            "row had), and the rows nothing was read for unchanged (counted in the summary). Kaltura and Vimeo "
            "need no pass: their listing carries usage, so `migrator inventory` writes it. The pass saves its "
            "place after every page (OUT.usage-state.json, with the usage read so far beside it), so the same "
            "command resumes a pass stopped by Ctrl-C or a failing source; --restart reads afresh. Needs no stack. "
            "docs/sources.md says which platforms give usage, and how."
        ),
    )
    p.add_argument("inventory", metavar="FILE", help="the JSONL inventory (`migrator inventory`'s output)")
    p.add_argument("-o", "--output", metavar="OUT", required=True, help="the inventory with usage, JSONL")
    group = p.add_argument_group("the source library (docs/sources.md)")
    group.add_argument(
        "--from", dest="platform", required=True, metavar="PLATFORM", help=f"one of: {', '.join(PLATFORMS)}"
    )
    group.add_argument(
        "--credentials", metavar="FILE", help='JSON {"<platform>": {...}}, as `migrator inventory` reads it'
    )
    group.add_argument(
        "--source-profile", metavar="NAME", help="a profile of ~/.config/video-migrator/sources.json holding them"
    )
    group.add_argument("--source-url", metavar="URL", help="the platform's API address, if not its own (a simulator)")
    group.add_argument(
        "--rate", dest="source_rate", type=float, metavar="R", help="requests per second (default: its budget)"
    )
    p.add_argument("--state", metavar="FILE", help="the resumable state (default OUT.usage-state.json)")
    p.add_argument("--restart", action="store_true", help="ignore a saved state and read all usage afresh")
    p.add_argument("--json", action="store_true", help="the summary as one JSON object on standard output")
    p.set_defaults(run=run)


def reader_for(platform: str, credentials: dict | None, base_url: str | None, rate: float | None):
    """The platform's usage reader, or a CliError saying why there is none (its usage comes with the inventory, or
    it exposes none this tool reads) or that its credentials are missing (worded as `migrator inventory` does)."""
    factory = reader_factory(platform)
    if not credentials:
        from ..source_credentials import ENV_CREDENTIALS

        names = " and ".join(ENV_CREDENTIALS.get(platform, {}).values()) or "its variables"
        raise CliError(
            f"no {platform} credentials: pass --credentials FILE or --source-profile NAME, or set {names}"
            " (docs/sources.md has each platform's)"
        )
    return factory(lambda: credentials, base_url, patient=True, rate_per_s=rate)


def reader_factory(platform: str):
    """READERS' factory for `platform`, or the CliError saying why it has none."""
    from migrator.sources import PLATFORMS
    from migrator.sources.analytics import READERS

    if platform not in PLATFORMS:
        raise CliError(f"unknown source {platform!r}: one of {', '.join(PLATFORMS)}")
    if platform in INLINE:
        raise CliError(
            f"{platform} needs no usage pass: its listing carries usage ({INLINE[platform]}), so `migrator inventory"
            f" --from {platform}` writes it in every row"
        )
    factory = READERS.get(platform)
    if factory is None:
        readers = ", ".join(sorted(READERS)) or "none yet"
        raise CliError(
            f"no usage reader for {platform}: it exposes no usage this tool reads (usage passes: {readers};"
            " in the listing: kaltura, vimeo)"
        )
    return factory


def run(args) -> int:
    from ..load import _ctrl_c_sets
    from ..source_credentials import source_credentials
    from ..usage_pass import UsagePass

    reader_factory(args.platform)  # an unknown platform, or one without a reader, is said before any file is read
    credentials = source_credentials(args.platform, args.credentials, args.source_profile)
    reader = reader_for(args.platform, credentials, args.source_url, args.source_rate)
    inventory, output = Path(args.inventory), Path(args.output)
    if inventory.resolve() == output.resolve():
        raise CliError("OUT must be another file than FILE: the pass reads FILE again as it writes OUT")
    stop = threading.Event()
    state = Path(args.state) if args.state else None
    with _ctrl_c_sets(stop):
        summary = UsagePass(reader, inventory, output, state, out=sys.stderr, stop=stop).run(restart=args.restart)
    if args.json:
        print_json_line({"type": "summary", **summary.as_dict()})
    else:
        print("\n".join(summary.lines()), file=sys.stderr)
    return 0
