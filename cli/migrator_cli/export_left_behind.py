"""`migrator export --left-behind FILE`: what a `--where` left behind (left_behind.py), as a redirect list.

No new video exists for a video left behind, so each one's old URL goes to a page the operator names
(`--fallback-url`: an archive page, a search, a "this video was retired" page), which may use the same
{placeholders} as `--new-url` has for ids (`https://intranet.example/retired?video={source_id}`). The old URL
is the `--old-url` template filled from the row (a source reference such as kaltura://0_abc names the platform
and its id), or the row's own source_url where that is already an http(s) URL. `--format redirects` writes an
old_url,new_url CSV, `--format nginx` the same `map` block export writes for moved videos, so both lists can be
included side by side (an old URL in both is a mistake: the moved video's entry is the one to keep). Needs no
stack: the report is a local file.
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass, field

from migrator.providers.facts import playback_url

from .cutover import source_of
from .errors import CliError
from .export import ExportSummary, Template, _write_nginx
from .inventory import Deduper
from .left_behind import read_left_behind
from .options import output_to

FORMATS = ("redirects", "nginx")
MAX_SHOWN = 50


def add_options(parser) -> None:
    """export's options for the left-behind report (commands/export.py calls this)."""
    group = parser.add_argument_group("what a --where left behind (no stack needed)")
    group.add_argument(
        "--left-behind",
        metavar="FILE",
        help="turn a left-behind report (load or inventory --where) into a redirect list: --format redirects or nginx",
    )
    group.add_argument(
        "--fallback-url",
        metavar="TEMPLATE",
        help="with --left-behind: where each left-behind video's old URL goes (e.g. 'https://example.com/archive')",
    )


@dataclass
class LeftBehindSummary:
    source: str
    rows: int = 0
    written: int = 0
    repeated: int = 0
    problems: list[tuple[str, str]] = field(default_factory=list)  # (id or line, why it has no entry)

    def lines(self) -> list[str]:
        out = [
            f"left behind     {self.rows:,} rows in {self.source}",
            f"written         {self.written:,} redirects to the fallback page",
        ]
        if self.repeated:
            out.append(f"repeated        {self.repeated:,} old URLs met twice (one entry)")
        if self.problems:
            out.append(f"not mapped      {len(self.problems):,} (listed above)")
        return out


def pairs(path: str, old_url: Template | None, fallback: Template, summary: LeftBehindSummary, report):
    """(old URL, fallback URL) for each row of the report, each old URL once."""
    with Deduper() as seen:
        for line, row in read_left_behind(path):
            summary.rows += 1
            if isinstance(row, str):
                _problem(summary, report, f"line {line}", row)
                continue
            platform, source_id = source_of({"source_url": row["source_url"], "asset_id": row["id"]})
            values = {"id": row["id"], "source_id": source_id, "source_platform": platform}
            values["source_url"] = row["source_url"]
            try:
                old = old_url.fill(values) if old_url is not None else playback_url(row["source_url"])
                if old is None:
                    raise ValueError(
                        f"{row['source_url']} is not a web address: give --old-url (e.g. with {{source_id}})"
                    )
                new = fallback.fill(values)
            except ValueError as exc:
                _problem(summary, report, row["id"], str(exc))
                continue
            if seen.check(old, new) != Deduper.NEW:
                summary.repeated += 1
                continue
            yield old, new


def _problem(summary: LeftBehindSummary, report, where: str, why: str) -> None:
    summary.problems.append((where, why))
    report(where, why)


def run(args) -> int:
    """`export --left-behind FILE`: the redirect list, to --output or standard output; the summary to stderr."""
    if args.format not in FORMATS:
        raise CliError("--left-behind makes a redirect list: give --format redirects or --format nginx")
    if not args.fallback_url:
        raise CliError("--left-behind needs --fallback-url: no new video exists, so say where the old URLs go")
    fallback = Template(args.fallback_url, "--fallback-url")
    old_url = Template(args.old_url, "--old-url") if args.old_url else None
    summary = LeftBehindSummary(args.left_behind)
    shown = [0]

    def report(where: str, why: str) -> None:
        if shown[0] < MAX_SHOWN:
            print(f"not mapped: {where}: {why}", file=sys.stderr)
        shown[0] += 1

    with output_to(args.output) as out:
        entries = pairs(args.left_behind, old_url, fallback, summary, report)
        if args.format == "nginx":
            written = ExportSummary("nginx")
            _write_nginx(entries, out, written, args.nginx_key, args.nginx_variable, not args.nginx_no_hash_sizes)
            summary.written = written.written
        else:
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(("old_url", "new_url"))
            for old, new in entries:
                writer.writerow((old, new))  # both checked URLs: no cell can start a formula
                summary.written += 1
    print("\n".join(summary.lines()), file=sys.stderr)
    return 1 if summary.problems else 0
