"""Streaming readers for `migrator load`: a CSV, JSON Lines or S3 listing becomes validated rows, one at a time.

Nothing here holds a file in memory: rows are read, checked with the queue's own
validation (messages.parse_message, so a row that loads is a message the uploader
accepts) and handed on. Each bad row carries the physical line number where it
starts, so the operator can find it. `Deduper` remembers ids on disk, not in memory,
so a file of a million rows is checked for repeats in flat memory.

This module reads files (CSV, JSON Lines) and is the one entry point, read_inventory;
the rows and their checks are in inventory_rows.py, the S3 listing in inventory_s3.py and
the Deduper in dedupe.py, all still importable from here.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import gzip
import io
import json
import math
import os
import re
import sys
import zlib
from collections.abc import Iterator
from typing import IO, Any

from migrator.messages import MAX_BODY_BYTES, Poison, parse_message

# The S3 source's rules for a key, shared with load's own S3 listing (and named here still, for its callers).
from migrator.sources.s3 import VIDEO_EXTENSIONS, is_video_key, key_problem, s3_asset_id  # noqa: F401

# Deduper, Skipped and s3_record live in their own modules now, and are named here still for their callers.
from .dedupe import Deduper  # noqa: F401
from .errors import CliError
from .inventory_rows import BadRow, Record, Row, Skipped, body_problem, checked, poison_reason, printable  # noqa: F401
from .inventory_s3 import parse_s3_source, read_s3_listing, s3_record  # noqa: F401

REQUIRED_COLUMNS = ("id", "source_url")
KNOWN_COLUMNS = (
    "id",
    "source_url",
    "title",
    "metadata",
    "duration_s",
    "description",
    "tags",
    "privacy",
    "poster_time_s",
    "created_at",
    "folder",
    "size_bytes",
    "tracks",
    "options",
    # What a viewer sees first (issue 42): the poster image's URL or source reference, the original publish time,
    # and JSON lists of the chapters ([{"start_s", "title"}]) and collections ([{"id", "name", "kind", "position"}]).
    "thumbnail_url",
    "published_at",
    "chapters",
    "collections",
)
# Cells that hold JSON (an object or a list); `tags` may also be a plain list split on ";".
JSON_COLUMNS = ("metadata", "tracks", "options", "chapters", "collections")
# Cells that are text as they are.
TEXT_COLUMNS = ("title", "description", "privacy", "created_at", "folder", "thumbnail_url", "published_at")
NUMBER_COLUMNS = ("duration_s", "poster_time_s")
FORMATS = ("csv", "jsonl")
EXTENSIONS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json-lines": "jsonl"}
# A row of the file may be longer than the body it becomes (JSON whitespace and \u escapes,
# CSV's doubled quotes); past this a JSON Lines line, or a CSV row (all its lines), is refused
# unread, so one endless line cannot fill memory.
MAX_LINE_BYTES = 4 * MAX_BODY_BYTES


# --- entry point ---------------------------------------------------------------------------


class Meter:
    """How far through its source a reader is: the bytes of a file read so far (compressed
    bytes, for a .gz) against its size. A listing or stdin has no known end: `fraction` is None."""

    def __init__(self) -> None:
        self.total: int | None = None
        self._position: Any = None

    def watch(self, raw: IO[bytes], total: int) -> None:
        self.total, self._position = total, raw.tell

    def fraction(self) -> float | None:
        if not self.total or self._position is None:
            return None
        try:
            return min(1.0, self._position() / self.total)
        except (OSError, ValueError):  # the file was closed at the end
            return 1.0


def read_inventory(
    source: str, *, fmt: str | None = None, s3: Any = None, meter: Meter | None = None
) -> Iterator[Record]:
    """The rows of `source` (a path, `-` for stdin, or s3://bucket/prefix), in order.

    Problems with the source as a whole (unreadable, unknown format, bad header) raise
    CliError here, before the first row; problems with one row are BadRows. `meter`, when
    given, follows how far through a file the reading is (for a progress percentage).
    """
    if source.startswith("s3://"):
        bucket, prefix = parse_s3_source(source)
        if s3 is None:
            import boto3

            s3 = boto3.client("s3")
        return read_s3_listing(s3, bucket, prefix)
    fmt = fmt or format_of(source)
    if fmt not in FORMATS:
        raise CliError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    stream = _open_binary(source, meter)
    if fmt == "csv":
        return _read_csv(stream, source)
    return _read_jsonl(stream, source)


def format_of(source: str) -> str:
    """The format named by `source`'s extension (a trailing .gz is looked through)."""
    if source == "-":
        raise CliError("reading stdin needs --format csv or --format jsonl")
    name = source.lower().removesuffix(".gz")
    for ext, fmt in EXTENSIONS.items():
        if name.endswith(ext):
            return fmt
    known = ", ".join(EXTENSIONS)
    raise CliError(f"{source}: cannot tell the format from the name (known: {known}); pass --format csv or jsonl")


def _open_binary(source: str, meter: Meter | None = None) -> IO[bytes]:
    if source == "-":
        return open(sys.stdin.fileno(), "rb", closefd=False)  # closing the reader leaves stdin open
    try:
        raw = open(source, "rb")  # the reader generator closes it (through the gzip wrapper, if any)
        if meter is not None:
            meter.watch(raw, os.fstat(raw.fileno()).st_size)
        if source.lower().endswith(".gz"):
            stream = gzip.GzipFile(fileobj=raw, mode="rb")
            try:
                stream.peek(1)  # a file that is not gzip fails here, not mid-load
            except BaseException:
                stream.close()
                raw.close()
                raise
            return _Closing(stream, raw)
        return raw
    except (OSError, EOFError) as exc:
        raise CliError(f"cannot read {source}: {getattr(exc, 'strerror', None) or exc}") from None


class _Closing(io.BufferedReader):
    """A gzip stream that closes the file under it too (GzipFile given a fileobj does not)."""

    def __init__(self, stream: gzip.GzipFile, raw: IO[bytes]):
        super().__init__(stream)
        self._raw_file = raw

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw_file.close()


# A file that turns unreadable part-way: a truncated or corrupt .gz, an I/O error.
READ_ERRORS = (OSError, EOFError, zlib.error)


def _unreadable(source: str, line: int, exc: BaseException) -> CliError:
    return CliError(f"cannot read {source} at line {line}: {getattr(exc, 'strerror', None) or exc}")


# --- CSV -----------------------------------------------------------------------------------


def _read_csv(stream: IO[bytes], source: str) -> Iterator[Record]:
    lines = CsvLines(stream)
    # strict: a quote left open at the end of the file, or text after a closing quote, is an
    # error; left lenient, the csv module takes either as a good row, stray quote and all.
    reader = csv.reader(lines, strict=True)
    try:
        columns = _read_header(reader, lines, source)
    except READ_ERRORS as exc:
        lines.close()
        raise _unreadable(source, lines.count + 1, exc) from None
    except csv.Error as exc:
        lines.close()
        raise CliError(f"{source}: the header is not CSV: {_csv_problem(exc)}") from None
    except RowTooLong as exc:
        lines.close()
        raise CliError(f"{source}: the header cannot be read: {exc.reason}") from None
    except BaseException:
        lines.close()
        raise
    return _csv_rows(lines, reader, source, columns)


class RowTooLong(Exception):
    """A CSV row over MAX_LINE_BYTES: its lines were skipped unread, up to the end of the line
    where it crossed the bound."""

    def __init__(self, first: int, last: int, limit: int):
        super().__init__(first, last, limit)
        self.first, self.last, self.limit = first, last, limit

    @property
    def reason(self) -> str:
        if self.first == self.last:
            return f"line {self.last} is over {self.limit} bytes"
        # A quote opened on `first` ran on: the lines up to `last` are one row, and none loaded.
        return (
            f"lines {self.first}-{self.last} are over {self.limit} bytes together"
            f" (read as one row: a quote that opens on line {self.first} is still open), none of them loaded"
        )


# A physical line ends at \n, \r\n or a lone \r: the csv module's own rule for a file opened
# with newline="" (universal newlines, untranslated), so line numbers count the same lines.
_LINE_END = re.compile(rb"\r\n?|\n")


class CsvLines:
    """The physical lines of a CSV file as text, for csv.reader, holding at most MAX_LINE_BYTES
    of one row (and one read chunk) in memory.

    csv.reader over a text file reads each physical line whole before any field limit applies,
    so one endless line would fill memory. Here a row whose lines pass MAX_LINE_BYTES raises
    RowTooLong, after the rest of its last line is skipped unread; csv.reader starts afresh on
    its next call, so the rows after it still load. `count` is the physical lines consumed
    (csv.reader's line_num misses the skipped ones); `start_row` marks where a row begins.
    Undecodable bytes become lone surrogates (surrogateescape) that fail their row only.
    """

    def __init__(self, stream: IO[bytes], limit: int = MAX_LINE_BYTES, chunk: int = 64 * 1024):
        self._stream, self.limit, self._chunk = stream, limit, chunk
        self._buffer = b""
        self._at = 0  # where the unread part of _buffer starts
        self._eof = False
        self.count = 0
        self._row_first = 1
        self._row_bytes = 0

    def __iter__(self) -> CsvLines:
        return self

    def start_row(self) -> None:
        self._row_first, self._row_bytes = self.count + 1, 0

    def __next__(self) -> str:
        line = self._take(self.limit - self._row_bytes)
        if line is None:
            raise StopIteration
        self.count += 1
        if self.count == 1 and line.startswith(codecs.BOM_UTF8):
            line = line[len(codecs.BOM_UTF8) :]
        self._row_bytes += len(line)
        return line.decode("utf-8", errors="surrogateescape")

    def _take(self, budget: int) -> bytes | None:
        """The next physical line with its ending (None at the end of the file). A line whose
        text (its ending aside) is over `budget` bytes is skipped to its end: RowTooLong."""
        while True:
            text_end, line_end = self._next_end()
            if text_end - self._at > budget:
                self._skip_line()
                self._too_long()
            if line_end is not None:
                line, self._at = self._buffer[self._at : line_end], line_end
                return line
            if self._eof:
                if self._at == len(self._buffer):
                    return None
                line, self._buffer, self._at = self._buffer[self._at :], b"", 0  # the last line has no ending
                return line
            self._fill()

    def _skip_line(self) -> None:
        """Drop the rest of the current line, a chunk at a time, without holding it."""
        while True:
            _, line_end = self._next_end()
            if line_end is not None:
                self._at = line_end
                return
            if self._eof:
                self._buffer, self._at = b"", 0
                return
            self._at = len(self._buffer) - self._buffer.endswith(b"\r")  # a \r may pair with the next \n
            self._fill()

    def _next_end(self) -> tuple[int, int | None]:
        """Where the current line's text ends in the buffer, and where its line ending ends: None
        until the buffer holds all of it (a \r at the end of what was read may begin a \r\n)."""
        match = _LINE_END.search(self._buffer, self._at)
        if not match:
            return len(self._buffer), None
        complete = match.group() != b"\r" or match.end() < len(self._buffer) or self._eof
        return match.start(), match.end() if complete else None

    def _fill(self) -> None:
        chunk = self._stream.read(self._chunk)
        self._buffer, self._at = self._buffer[self._at :] + chunk, 0
        self._eof = not chunk

    def _too_long(self) -> None:
        self.count += 1
        first, last = self._row_first, self.count
        self.start_row()
        raise RowTooLong(first, last, self.limit)

    def close(self) -> None:
        self._stream.close()


def _read_header(reader, lines: CsvLines, source: str) -> list[str]:
    while True:
        lines.start_row()
        cells = next(reader, None)
        if cells is None or any(cell.strip() for cell in cells):
            break
    if cells is None:
        raise CliError(f"{source}: the file is empty; expected a header row naming {', '.join(REQUIRED_COLUMNS)}")
    columns = [cell.strip().lower() for cell in cells]
    known = ", ".join(KNOWN_COLUMNS)
    for position, name in enumerate(columns, start=1):
        if not name:
            raise CliError(f"{source}: column {position} of the header has no name (known columns: {known})")
        if name not in KNOWN_COLUMNS:
            raise CliError(f"{source}: unknown column {name!r} in the header (known columns: {known})")
        if columns.count(name) > 1:
            raise CliError(f"{source}: column {name!r} appears twice in the header")
    missing = [name for name in REQUIRED_COLUMNS if name not in columns]
    if missing:
        raise CliError(f"{source}: the header has no {' or '.join(missing)} column (known columns: {known})")
    return columns


def _csv_rows(lines: CsvLines, reader, source: str, columns: list[str]) -> Iterator[Record]:
    width = len(columns)
    with contextlib.closing(lines):
        previous = lines.count
        while True:
            lines.start_row()
            try:
                cells = next(reader)
            except StopIteration:
                return
            except READ_ERRORS as exc:
                raise _unreadable(source, previous + 1, exc) from None
            except csv.Error as exc:
                # The reader resumes at the next line, so the good rows after this one still load.
                yield BadRow(previous + 1, _csv_error_reason(exc, previous + 1, lines.count))
                previous = lines.count
                continue
            except RowTooLong as exc:
                # Skipped unread; csv.reader starts afresh on the line after it.
                yield BadRow(exc.first, exc.reason)
                previous = lines.count
                continue
            line, previous = previous + 1, lines.count
            if not "".join(cells).strip():
                continue  # a blank line
            if len(cells) > width:
                yield BadRow(line, f"row has {len(cells)} cells, the header has {width}")
                continue
            yield _csv_row(line, dict(zip(columns, cells, strict=False)))


def _csv_problem(exc: csv.Error) -> str:
    """The csv module's complaint, in the operator's words."""
    message = str(exc)
    if message == "unexpected end of data":
        return "unclosed quote (the file ends inside a quoted cell)"
    if "expected after" in message:
        return f"text after a closing quote ({message})"
    return message


def _csv_error_reason(exc: csv.Error, first: int, last: int) -> str:
    """Why the row on lines first..last cannot be read, saying which lines it took with it."""
    reason = f"CSV cannot be read here: {_csv_problem(exc)}"
    if last <= first:
        return reason
    # A quote opened on `first` ran on over the following lines: they are part of this bad
    # row, not rows of their own, and the operator must know they were not loaded.
    if "expected after" in str(exc):
        how = f" (a quote that opens on line {first} closes only on line {last})"
    else:
        how = ""
    return f"{reason}; lines {first}-{last} were read as one row{how}, none of them loaded"


def _csv_row(line: int, cells: dict[str, str]) -> Row | BadRow:
    doc: dict[str, Any] = {}
    # Same field order as encode_message, so the size checked here is the size sent (or more).
    for name in ("id", "source_url"):
        if name in cells:
            doc[name] = cells[name]
    asset_id = cells.get("id") or None
    for name in TEXT_COLUMNS:
        if cells.get(name):
            doc[name] = cells[name]
    for name in NUMBER_COLUMNS:
        if cells.get(name):
            try:
                doc[name] = float(cells[name])
            except ValueError:
                doc[name] = math.nan
            if not math.isfinite(doc[name]):  # float() also reads "nan" and "inf"
                return BadRow(line, f"{name} {_excerpt(cells[name])} is not a number", asset_id)
    if cells.get("size_bytes"):
        if not cells["size_bytes"].strip().isdigit():
            return BadRow(line, f"size_bytes {_excerpt(cells['size_bytes'])} is not a whole number", asset_id)
        doc["size_bytes"] = int(cells["size_bytes"])
    tags = cells.get("tags", "").strip()
    if tags and not tags.startswith("["):  # a plain list: "news; sport; 2024"
        doc["tags"] = [t.strip() for t in tags.split(";") if t.strip()]
    for name in (*JSON_COLUMNS, "tags"):
        if cells.get(name) and name not in doc:
            try:
                doc[name] = json.loads(cells[name])
            except (ValueError, RecursionError):
                return BadRow(line, f"{name} {_excerpt(cells[name])} is not valid JSON", asset_id)
    body = json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
    problem = body_problem(body)
    if problem:
        return BadRow(line, problem, printable(asset_id))
    parsed = parse_message(body)
    if isinstance(parsed, Poison):
        return BadRow(line, poison_reason(parsed), parsed.asset_id)
    return Row(line, parsed)


def _excerpt(value: str, limit: int = 40) -> str:
    return repr(value if len(value) <= limit else value[:limit] + "…")


# --- JSON Lines ----------------------------------------------------------------------------


def _read_jsonl(stream: IO[bytes], source: str) -> Iterator[Record]:
    with contextlib.closing(stream):
        line = 0
        while True:
            try:
                raw = stream.readline(MAX_LINE_BYTES + 1)
            except READ_ERRORS as exc:
                raise _unreadable(source, line + 1, exc) from None
            if not raw:
                return
            line += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                try:
                    while raw and not raw.endswith(b"\n"):  # skip the rest of the overlong line
                        raw = stream.readline(MAX_LINE_BYTES)
                except READ_ERRORS as exc:
                    raise _unreadable(source, line, exc) from None
                yield BadRow(line, f"row is over {MAX_LINE_BYTES} bytes")
                continue
            if line == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8) :]
            try:
                text = raw.decode("utf-8").strip()
            except UnicodeDecodeError:
                yield BadRow(line, "row is not valid UTF-8")
                continue
            if not text:
                continue
            if len(text) > MAX_BODY_BYTES // 4 and len(text.encode("utf-8")) > MAX_BODY_BYTES:
                text = _compact(text)  # whitespace or escapes may be all that makes it long
            yield checked(line, text)


def _compact(text: str) -> str:
    try:
        return json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    except (ValueError, RecursionError):
        return text  # parse_message will say why
