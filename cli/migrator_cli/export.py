"""`migrator export`: the cut-over map, streamed from the ledger as CSV, JSON Lines or redirect maps.

Every asset is one row (cutover.row_of). The redirect maps turn each ready asset into an old URL
and a new one from templates the operator gives (`--old-url 'https://vimeo.com/{source_id}'
--new-url 'https://player.example/{playback_id}'`): an nginx `map` block, or a plain
old_url,new_url CSV. Nothing here holds the library in memory: rows stream from the scan to the
file, and the old URLs already written are remembered on disk (inventory.Deduper), so a million
rows export in flat memory and no old URL is written twice (nginx refuses a map with a repeated key).
Beside it, the collections map (`collections_out`: export_collections.py) takes the collections' own
ledger items out of the same stream.

Everything in a row is untrusted (ids and titles from the inventory, URLs from the provider), so:
template values are percent-encoded (ids keep their `/`), every URL written must be an absolute
http(s) URL of printable ASCII, CSV cells cannot run as formulas (report.csv_cell), and an nginx
entry is double-quoted with `\\` and `"` escaped and `$` percent-encoded (nginx would read it as a
variable in a value; a key is never one, but a key starting with `~` would be a regex, and no key
here can start with anything but `/` or a scheme).
"""

from __future__ import annotations

import csv
import json
import shutil
import string
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TextIO
from urllib.parse import quote, urlsplit

from migrator.providers.facts import playback_url

from .cutover import COLUMNS, SIGNED, row_of, tracks_text
from .errors import CliError
from .export_collections import CollectionMap, is_collection_item
from .inventory import Deduper
from .report import csv_cell

FORMATS = ("csv", "jsonl", "nginx", "redirects")
# Placeholders a URL template may use: ids are percent-encoded into it, URLs go in as they are.
ID_FIELDS = ("id", "source_id", "source_platform", "provider", "remote_id", "playback_id")
URL_FIELDS = ("source_url", "hls_url", "player_url", "thumbnail_url")
MAX_SHOWN = 50


@dataclass
class ExportSummary:
    format: str
    rows: int = 0  # assets read
    ready: int = 0
    written: int = 0  # rows (csv, jsonl) or map entries (nginx, redirects) written
    signed: int = 0  # ready assets whose playback needs a token
    no_playback: int = 0  # ready assets without playback recorded
    repeated: int = 0  # old URLs met again with the same new URL (written once)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (asset id, why it has no map entry)
    collections: int = 0  # rows of the collections map written (--collections)
    collections_made: int = 0  # of them, collections made at the target (the rest: not made yet, or failed)

    def as_dict(self) -> dict:
        return {
            "type": "summary",
            **{k: v for k, v in self.__dict__.items() if k != "problems"},
            "problems": len(self.problems),
        }

    def lines(self) -> list[str]:
        out = [
            f"assets          {self.rows:,} ({self.ready:,} ready)",
            f"written         {self.written:,} {'rows' if self.format in ('csv', 'jsonl') else 'redirects'}",
        ]
        if self.signed:
            out.append(f"signed          {self.signed:,} ready assets need a token to play ({SIGNED})")
        if self.no_playback:
            out.append(f"no playback     {self.no_playback:,} ready assets have no playback recorded")
        if self.repeated:
            out.append(f"repeated        {self.repeated:,} old URLs met twice with the same new URL (one entry)")
        if self.problems:
            out.append(f"not mapped      {len(self.problems):,} ready assets (listed above)")
        if self.collections:
            unmade = self.collections - self.collections_made
            out.append(
                f"collections     {self.collections:,} written, {self.collections_made:,} made at the target"
                + (f" ({unmade:,} not made: see their note)" if unmade else "")
            )
        return out


class Template:
    """A URL template: `{field}` placeholders (ID_FIELDS encoded, URL_FIELDS as they are)."""

    def __init__(self, text: str, option: str):
        self.text, self.option = text, option
        try:
            names = [name for _, name, spec, conv in string.Formatter().parse(text) if name is not None]
        except ValueError as exc:
            raise CliError(f"{option}: {exc}") from None
        unknown = sorted(set(names) - set(ID_FIELDS) - set(URL_FIELDS))
        if unknown or any(not n for n in names):
            known = ", ".join(ID_FIELDS + URL_FIELDS)
            raise CliError(f"{option}: unknown placeholder {{{(unknown or [''])[0]}}} (known: {known})")
        self.names = tuple(dict.fromkeys(names))
        probe = {n: ("https://x.example/y" if n in URL_FIELDS else "x") for n in self.names}
        if playback_url(text.format(**probe)) is None:
            raise CliError(f"{option}: {text!r} does not make an absolute http(s) URL")

    def fill(self, row: Mapping) -> str:
        """The URL for `row`; ValueError saying why there is none."""
        values = {}
        for name in self.names:
            value = row.get(name)
            if value in (None, ""):
                if name in URL_FIELDS and row.get("note") == SIGNED:
                    raise ValueError(f"{name}: {SIGNED}")
                raise ValueError(f"no {name}")
            values[name] = str(value) if name in URL_FIELDS else quote(str(value), safe="/")
        url = self.text.format(**values)
        if playback_url(url) is None:
            raise ValueError(f"{self.option} makes {url[:80]!r}, not a URL (whitespace, control characters?)")
        return url


def export(
    items: Iterable[dict],
    out: TextIO,
    fmt: str,
    provider: str,
    *,
    mux_hosts: Mapping[str, str] | None = None,
    old_url: Template | None = None,
    new_url: Template | None = None,
    nginx_key: str = "uri",
    nginx_variable: str = "migrator_new_url",
    nginx_sizes: bool = True,
    report=None,
    collections_out: TextIO | None = None,
) -> ExportSummary:
    """Write the map of `items` (ledger items) to `out`; `report(asset_id, why)` hears each problem. The
    collections' own items among them go to `collections_out` (CSV, or JSON Lines where `fmt` is jsonl), or are
    passed over."""
    if fmt not in FORMATS:
        raise CliError(f"unknown export format {fmt!r}")
    summary = ExportSummary(fmt)
    collections = CollectionMap(collections_out, fmt, provider) if collections_out is not None else None
    rows = _rows(_assets(items, collections, summary), provider, mux_hosts, summary)
    if fmt == "csv":
        columns = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        columns.writeheader()
        for row in rows:
            columns.writerow({k: csv_cell(_cell(k, v)) for k, v in row.items()})
            summary.written += 1
    elif fmt == "jsonl":
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
            summary.written += 1
    else:
        if old_url is None or new_url is None:
            raise CliError(f"--format {fmt} needs --old-url and --new-url templates")
        pairs = _pairs(rows, old_url, new_url, summary, report)
        if fmt == "nginx":
            _write_nginx(pairs, out, summary, nginx_key, nginx_variable, nginx_sizes)
        else:
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(("old_url", "new_url"))
            for old, new in pairs:
                writer.writerow((old, new))  # both checked URLs: no cell can start a formula
                summary.written += 1
    return summary


def _assets(items: Iterable[dict], collections: CollectionMap | None, summary: ExportSummary) -> Iterator[dict]:
    """The asset items; each collection's item written to the collections map as it comes (or passed over)."""
    for item in items:
        if not is_collection_item(item):
            yield item
        elif collections is not None:
            collections.write(item)
            summary.collections, summary.collections_made = collections.written, collections.made


def _rows(items: Iterable[dict], provider: str, mux_hosts, summary: ExportSummary) -> Iterator[dict]:
    for item in items:
        row = row_of(item, provider, mux_hosts)
        summary.rows += 1
        if row["state"] == "ready":
            summary.ready += 1
            summary.signed += int(row["note"] == SIGNED)
            summary.no_playback += int(row["note"] is not None and row["note"] != SIGNED)
        yield row


def _pairs(rows, old_url: Template, new_url: Template, summary: ExportSummary, report) -> Iterator[tuple[str, str]]:
    """(old URL, new URL) of each ready row, each old URL once: a repeat with the same new URL is
    dropped quietly, one with another new URL is a problem (the first one stays)."""
    with Deduper() as seen:
        for row in rows:
            if row["state"] != "ready":
                continue
            try:
                old, new = old_url.fill(row), new_url.fill(row)
            except ValueError as exc:
                _problem(summary, report, row["id"], str(exc))
                continue
            verdict = seen.check(old, new)
            if verdict == Deduper.REPEAT:
                summary.repeated += 1
                continue
            if verdict == Deduper.CONFLICT:
                _problem(summary, report, row["id"], f"old URL {old} already maps to another asset's new URL")
                continue
            yield old, new


def _cell(column: str, value):
    """A CSV cell: tracks as text, aliases space-separated (no alias holds a space: ids), the rest as they are."""
    if column == "tracks":
        return tracks_text(value)
    if column == "source_aliases":
        return " ".join(value)
    return value


def _problem(summary: ExportSummary, report, asset_id: str, why: str) -> None:
    summary.problems.append((asset_id, why))
    if report is not None:
        report(asset_id, why)


def nginx_string(text: str, value: bool = False) -> str:
    """`text` as one double-quoted nginx token: backslash and quote escaped (ngx_conf_read_token
    reads `\\` and `\"` inside quotes); in a map's value (`value`) `$` is percent-encoded, since
    nginx reads `$name` there as a variable. Only printable ASCII reaches here (checked URLs)."""
    if not text.isascii() or not text.isprintable():
        raise ValueError("not printable ASCII")
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + (escaped.replace("$", "%24") if value else escaped) + '"'


def nginx_key_of(url: str, mode: str) -> str:
    """What nginx compares: `$request_uri` (path and query, as sent) or the whole URL."""
    if mode == "url":
        return url
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _write_nginx(pairs, out: TextIO, summary: ExportSummary, key_mode: str, variable: str, sizes: bool) -> None:
    """The map block, and before it (unless `sizes` is off) the two http-level directives nginx needs
    to build a hash of this many keys this long: the entries go to a scratch file first, since the
    sizes are known only at the end, and nginx refuses the block if they are too small."""
    if not variable.replace("_", "").isalnum() or not variable.isascii():
        raise CliError(f"--nginx-variable {variable!r}: letters, digits and _ only")
    source = "$request_uri" if key_mode == "uri" else "$scheme://$host$request_uri"
    longest = 0
    with tempfile.TemporaryFile("w+", encoding="utf-8", prefix="migrator-nginx-") as entries:
        for old, new in pairs:
            key = nginx_key_of(old, key_mode)
            entries.write(f"    {nginx_string(key)} {nginx_string(new, value=True)};\n")
            longest = max(longest, len(key))
            summary.written += 1
        out.write(
            "# migrator export --format nginx: old URL -> new URL. Include it in http {}, then in a server {}:\n"
            f"#   if (${variable}) {{ return 301 ${variable}; }}\n"
        )
        max_size, bucket = hash_sizes(summary.written, longest)
        if sizes:
            out.write(f"map_hash_max_size {max_size};\nmap_hash_bucket_size {bucket};\n")
        else:
            out.write(f"# this map needs in http {{}}: map_hash_max_size {max_size}; map_hash_bucket_size {bucket};\n")
        out.write(f"map {source} ${variable} {{\n" + '    default "";\n')
        entries.seek(0)
        shutil.copyfileobj(entries, out)
        out.write("}\n")


def hash_sizes(entries: int, longest_key: int) -> tuple[int, int]:
    """map_hash_max_size and map_hash_bucket_size for `entries` keys of at most `longest_key` bytes:
    a bucket holds one element (a pointer, the key and 2 bytes, pointer-aligned) and its end marker
    (ngx_hash.c, NGX_HASH_ELT_SIZE), rounded up to a power of two from the cache line (64)."""
    element = 8 + (longest_key + 2 + 7) // 8 * 8
    bucket = 64
    while bucket < element + 8:
        bucket *= 2
    return max(2048, 2 * entries), bucket


def show_problems(write, each=None):
    """A reporter that prints the first MAX_SHOWN problems and counts the rest; `each` hears them all."""
    shown = [0]

    def report(asset_id: str, why: str) -> None:
        if each is not None:
            each({"type": "problem", "id": asset_id, "reason": why})
        if shown[0] < MAX_SHOWN:
            write(f"not mapped: {asset_id}: {why}")
        shown[0] += 1

    return report
