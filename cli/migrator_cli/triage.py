"""`--where` on `inventory`, `plan` and `load` (issue 45): the options, and the filter around each command's rows.

`load` filters as its rows stream (load.py, with the left-behind report); `plan` plans the rows a `--where`
keeps (`kept_records`, counting the rest); `inventory --where` lists the whole library as always (resumable, into
`<output>.listed.jsonl`) and then writes the rows kept to the output and the rest to the left-behind report, so
an interrupted listing resumes and its next run filters again what it then holds (`inventory_where`).
"""

from __future__ import annotations

import contextlib
import csv
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from migrator.messages import encode_message

from .inventory import BadRow, Record, Row, read_inventory
from .left_behind import LeftBehindReport, default_path
from .options import print_json_line
from .select import Selection, where_argument

WHERE_HELP = (
    'only the rows EXPRESSION keeps, e.g. "plays > 0", "last_played >= 24 months ago", "size < 2GB and tag = '
    'news" (columns plays, views, last_played, created, published, size, duration, privacy, folder, tag, '
    "collection, title; = != < <= > >= ~; and, or, not, parentheses; X is missing: docs/operator-guide.md, "
    "Triage); a value the row does not have never matches. The form FIELD=VALUE (folder, tag, privacy; a glob) "
    "works as before. Repeatable: each must hold ({verb})"
)


def where_options(group, verb: str, left_behind: bool = True) -> None:
    """`--where` (and, where rows are left behind, `--left-behind FILE`) on `group`."""
    group.add_argument(
        "--where",
        type=where_argument,
        action="append",
        metavar="EXPRESSION",
        help=WHERE_HELP.format(verb=verb),
    )
    if left_behind:
        group.add_argument(
            "--left-behind",
            metavar="FILE",
            help="with --where: where the rows not taken go, each with why and its usage (default: beside the "
            "input, <name>.left-behind.jsonl); `export --left-behind FILE` makes it a redirect list",
        )


def kept_records(records: Iterable[Record], selection: Selection | None, left_out: list[int]) -> Iterator[Record]:
    """`records` without the rows `selection` does not keep; `left_out[0]` counts those."""
    for record in records:
        if selection is not None and isinstance(record, Row) and not selection.matches(record.message):
            left_out[0] += 1
            continue
        yield record


@dataclass
class Filtered:
    """What `inventory --where` did with the listing."""

    where: list[str]
    listing: str
    output: str
    left_behind_file: str
    kept: int = 0
    left_behind: int = 0
    bad: int = 0

    def as_dict(self) -> dict:
        return {"type": "where", **self.__dict__}

    def lines(self) -> list[str]:
        return [
            f"where           {' and '.join(self.where)}",
            f"kept            {self.kept:,} rows in {self.output} (of the {self.kept + self.left_behind:,} listed in"
            f" {self.listing})",
            f"left behind     {self.left_behind:,} rows, each with why, in {self.left_behind_file}",
        ] + ([f"unreadable      {self.bad:,} rows of the listing"] if self.bad else [])


def filter_listing(
    listing: Path, output: Path, csv_path: Path | None, selection: Selection, report: LeftBehindReport
) -> Filtered:
    """The rows of `listing` that `selection` keeps written to `output` (and `csv_path`), the rest to `report`."""
    from .sweep import CSV_COLUMNS, csv_cells

    filtered = Filtered(selection.described(), str(listing), str(output), str(report.path))
    records = read_inventory(str(listing), fmt="jsonl") if listing.exists() else iter(())
    with open(output, "w", encoding="utf-8") as rows, _csv_file(csv_path) as table:
        if table is not None:
            table.writerow(CSV_COLUMNS)
        for record in records:
            if isinstance(record, BadRow):
                filtered.bad += 1
                continue
            if not isinstance(record, Row):
                continue
            msg = record.message
            why = selection.why_not(msg)
            if why is not None:
                report.add(msg, why)
                filtered.left_behind += 1
                continue
            rows.write(encode_message(msg) + "\n")
            if table is not None:
                table.writerow(csv_cells(msg))
            filtered.kept += 1
    return filtered


@contextlib.contextmanager
def _csv_file(path: Path | None) -> Iterator[Any]:
    """A CSV writer on `path`, or None."""
    if path is None:
        yield None
        return
    with open(path, "w", encoding="utf-8", newline="") as out:
        yield csv.writer(out)


def inventory_where(args, output: Path, selection: Selection, list_library: Callable) -> int:
    """`inventory --from P --where ...`: the whole listing (resumable) beside `output` by `list_library`
    (commands/inventory.py's), then the filter."""
    listing = output.with_name(output.name + ".listed.jsonl")
    # The unfetchable keep the name the output gives them; the listing's cursor is its own (<listing>.state.json).
    args.unfetchable = args.unfetchable or str(output.with_name(output.name + ".unfetchable.jsonl"))
    csv_path, args.csv = (Path(args.csv) if args.csv else None), None
    listed = list_library(args, listing)
    with LeftBehindReport(Path(args.left_behind) if args.left_behind else default_path(str(output))) as report:
        filtered = filter_listing(listing, output, csv_path, selection, report)
    if args.json:
        print_json_line(filtered.as_dict())
    else:
        print("\n".join(filtered.lines()), file=sys.stderr)
    return listed.exit_code
