"""`migrator rewrite`: its options and its run, the site's embeds and links pointed at the migrated videos.

The map comes from the ledger (as `migrator export` reads it) or from an export file (`--map`); the content is
walked, each file streamed through its container (rewrite/pipeline.py), and every text the containers take out goes
through the engine (rewrite/engine.py). A dry run (the default) writes the unified diff and the summary and changes
nothing; `--apply` replaces each changed file atomically, its original kept in the backup directory.
"""

from __future__ import annotations

import json
import sys

from ..errors import CliError
from ..options import mux_host_options, mux_hosts, resolve_target, stack_options


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "rewrite",
        help="the site's embeds and links pointed at the new videos (a dry run with a diff, then --apply)",
        description=(
            "Finds every documented embed and link of the source platforms (iframes, script embeds, player "
            "elements, page and oEmbed links, HLS, MP4 and thumbnail URLs of Vimeo, Wistia, JW Player, Brightcove, "
            "Kaltura, Mux, Cloudflare Stream, api.video, Bunny and object stores) in PATHs (directories of HTML, "
            "Markdown, JSON, YAML and templates; a WordPress WXR export; a MySQL or PostgreSQL dump, PHP-serialized "
            "values kept valid; a CSV column) and writes the target's equivalent of the same kind for each video the "
            "migration moved, keeping the player's options where the target has them. A video that needs a token "
            "at the target gets the marker MIGRATOR-TOKEN-REQUIRED where the token goes and is listed apart. A video "
            "left behind, rejected or not moved yet keeps its embed and is listed with the reason. Without --apply "
            "nothing is written: the unified diff goes to standard output (or --diff FILE) and the summary to "
            "standard error. Exit status 1 when any embed was left for a reason someone must act on."
        ),
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or directories of the site's content")
    p.add_argument(
        "--map",
        metavar="FILE",
        help="a `migrator export` file (CSV or JSON Lines) to read the map from instead of the stack's ledger",
    )
    p.add_argument(
        "--left-behind",
        metavar="FILE",
        action="append",
        default=[],
        help="a --where's left-behind report: those videos keep their embeds, listed as left behind (repeatable)",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="change nothing: the diff and the summary (the default)")
    mode.add_argument("--apply", action="store_true", help="write the changes, each file atomically, after a backup")
    p.add_argument(
        "--backup-dir",
        metavar="DIR",
        help="where --apply keeps each changed file's original (default: a timestamped directory beside PATH)",
    )
    p.add_argument("--diff", metavar="FILE", help="write the unified diff here (default: standard output)")
    p.add_argument("--no-diff", action="store_true", help="no diff, only the summary")
    p.add_argument(
        "--csv-column",
        metavar="NAME",
        help="CSV files: rewrite only this column (by its header); without it a CSV is read as plain text",
    )
    p.add_argument(
        "--target-setting",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help=(
            "what the target's embeds need that the map does not hold, e.g. player_id=abcd1234 (JW Player's player "
            "for script embeds), library_id=123 and cdn_host=vz-abc.b-cdn.net (Bunny), customer_code=xyz "
            "(Cloudflare's customer subdomain) (repeatable)"
        ),
    )
    p.add_argument("--provider", metavar="NAME", help="the target, for a --map file whose rows do not name it")
    mux_host_options(p)
    stack_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..rewrite.engine import Engine
    from ..rewrite.run import run_paths

    settings = _settings(args.target_setting)
    idmap = _load_map(args, settings)
    engine = Engine(idmap)
    if args.json and not args.diff:
        diff_out = None  # standard output holds the JSON report
    elif args.no_diff:
        diff_out = None
    else:
        diff_out = args.diff or "-"
    run_paths(
        args.paths,
        engine,
        apply=args.apply,
        backup_dir=args.backup_dir,
        diff_path=diff_out,
        csv_column=args.csv_column,
        progress=sys.stderr,
    )
    report = engine.report
    if args.json:
        doc = {"applied": bool(args.apply), "map_rows": len(idmap), **report.as_dict()}
        print(json.dumps(doc, ensure_ascii=False, default=str))
    else:
        print("\n".join(report.lines(applied=bool(args.apply))), file=sys.stderr)
    return 1 if report.problems else 0


def ledger_row(item: dict, provider: str, hosts: dict[str, str]) -> dict:
    """An asset's map row as export writes it, but for a signed video with the URLs its playback has: an export file
    leaves them out (they do not play without a token), and the rewrite puts the token's marker in them."""
    from ..cutover import SIGNED, playback_links, row_of

    row = row_of(item, provider, hosts)
    playback = item.get("playback_info")
    if row["note"] == SIGNED and isinstance(playback, dict):
        links = playback_links(provider, playback, hosts)
        row.update(hls_url=links["hls"], player_url=links["player"], thumbnail_url=links["thumbnail"])
    return row


def _settings(pairs: list[str]) -> dict[str, str]:
    settings = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise CliError(f"--target-setting takes KEY=VALUE, got {pair!r}")
        settings[key.strip()] = value.strip()
    return settings


def _load_map(args, settings: dict[str, str]):
    """The map: an export file (--map), else the stack's ledger, then the left-behind reports over it."""
    from ..left_behind import read_left_behind
    from ..rewrite.idmap import IdMap, read_export

    if args.map:
        idmap = IdMap(provider=args.provider or "", settings=settings)
        try:
            stream = open(args.map, encoding="utf-8", newline="")
        except OSError as exc:
            raise CliError(f"cannot read the map {args.map}: {exc.strerror}") from None
        with stream:
            for row in read_export(stream, args.map):
                idmap.add_row(row)
    else:
        from ..report import scan_ledger

        target = resolve_target(args)
        provider = args.provider or target.outputs.get("Provider") or "generic"
        idmap = IdMap(provider=provider, settings=settings)
        hosts = mux_hosts(args)
        for item in scan_ledger(target.client("dynamodb"), target.output("LedgerTableName")):
            idmap.add_row(ledger_row(item, provider, hosts))
    for path in args.left_behind:
        for number, found in read_left_behind(path):
            if isinstance(found, str):
                raise CliError(f"{path}: line {number}: {found}")
            idmap.add_left_behind(found)
    if not len(idmap):
        raise CliError("the map is empty: nothing was migrated yet, or --map names the wrong file")
    return idmap
