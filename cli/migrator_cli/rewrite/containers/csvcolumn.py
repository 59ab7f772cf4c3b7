"""A CSV (or TSV) file whose one column holds site content: that column's cells rewritten, every other byte kept.

The dialect (delimiter, quote character, escape character) is sniffed from the file's head; a row is a record (a
quoted cell may hold newlines, so a row may be several lines). A row is split into its cells' raw spans rather than
read and written again by `csv`, so a cell that did not change keeps its exact quoting; a changed cell is quoted if
it was, or if its new value needs it, with the quote doubled (or escaped, where the file escapes).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from typing import TextIO

from . import Changed, ContainerError, Run, TextRewrite, lines

SNIFF_SIZE = 1 << 16
DELIMITERS = ",;\t|"


@dataclass(frozen=True)
class Dialect:
    delimiter: str = ","
    quote: str = '"'
    escape: str | None = None
    skip_space: bool = False


@dataclass(frozen=True)
class Cell:
    start: int
    end: int  # the raw span in its row
    quoted: bool
    value: str


def sniff(head: str) -> Dialect:
    """The dialect of a file starting with `head` (csv.Sniffer on its whole lines); the excel dialect if unsure.
    A doubled quote is taken as a quote unless the file has an escape character: the Sniffer says no doubling
    whenever its sample shows none, which a later row may."""
    sample = head[: head.rfind("\n") + 1] or head
    try:
        found = csv.Sniffer().sniff(sample, delimiters=DELIMITERS)
    except csv.Error:
        return Dialect()
    return Dialect(
        delimiter=found.delimiter,
        quote=found.quotechar or '"',
        escape=found.escapechar or None,
        skip_space=bool(found.skipinitialspace),
    )


@cache
def _cell_pattern(dialect: Dialect) -> re.Pattern[str]:
    """One cell at a position: spaces (if the dialect skips them), then a quoted value (quotes doubled, or escaped
    where the dialect escapes) and anything up to the delimiter, or an unquoted value (escapes allowed)."""
    q, d = re.escape(dialect.quote), re.escape(dialect.delimiter)
    e = re.escape(dialect.escape) if dialect.escape else None
    inner = rf"(?:[^{q}{e}]|{e}.)*+" if e else rf"(?:[^{q}]|{q}{q})*+"
    plain = rf"(?:[^{d}{e}]|{e}.)*+" if e else rf"[^{d}]*+"
    space = " *+" if dialect.skip_space else ""
    return re.compile(rf"{space}(?:(?P<quoted>{q}{inner}{q})(?P<after>[^{d}]*+)|(?P<plain>{plain}))", re.DOTALL)


def _unescape(text: str, dialect: Dialect) -> str:
    if dialect.escape:
        return re.sub(re.escape(dialect.escape) + "(.)", r"\1", text, flags=re.DOTALL)
    return text


def cells(row: str, dialect: Dialect, upto: int | None = None) -> list[Cell]:
    """A row's cells (the first `upto` + 1 of them when given), read as the csv module reads them."""
    body_end = len(row) - (2 if row.endswith("\r\n") else 1 if row.endswith("\n") else 0)
    pattern = _cell_pattern(dialect)
    found: list[Cell] = []
    at = 0
    while True:
        match = pattern.match(row, at, body_end)
        assert match is not None  # the unquoted alternative matches anywhere, if only the empty string
        quoted = match.group("quoted")
        if quoted is not None:
            inner = quoted[1:-1]
            if not dialect.escape:
                inner = inner.replace(dialect.quote * 2, dialect.quote)
            value = _unescape(inner, dialect) + match.group("after")
        else:
            value = _unescape(match.group("plain"), dialect)
        found.append(Cell(at, match.end(), quoted is not None, value))
        if match.end() >= body_end or (upto is not None and len(found) > upto):
            return found
        at = match.end() + 1


def whole(text: str, dialect: Dialect) -> bool:
    """Whether `text` leaves the quoting as it found it: the quotes it holds, less the escaped ones, are even."""
    text = text.replace(dialect.escape + dialect.quote, "") if dialect.escape else text
    return text.count(dialect.quote) % 2 == 0


def encode(value: str, was_quoted: bool, dialect: Dialect) -> str:
    needs = any(c in value for c in (dialect.delimiter, dialect.quote, "\n", "\r")) or (
        dialect.escape is not None and dialect.escape in value
    )
    if not was_quoted and not needs:
        return value
    if dialect.escape:
        inner = value.replace(dialect.escape, dialect.escape * 2).replace(dialect.quote, dialect.escape + dialect.quote)
    else:
        inner = value.replace(dialect.quote, dialect.quote * 2)
    return dialect.quote + inner + dialect.quote


def factory(column: str) -> Run:
    """A container rewriting `column` (by its header's name) of a CSV file."""

    def run(src: TextIO, dst: TextIO, rewrite: TextRewrite, changed: Changed) -> None:
        head = src.read(SNIFF_SIZE)
        dialect = sniff(head)
        source = _Joined(head, src)
        index: int | None = None
        line = 1
        held: list[str] = []
        open_quote = False
        for text_line in lines(source):
            held.append(text_line)
            open_quote ^= not whole(text_line, dialect)
            if open_quote and text_line.endswith("\n"):
                continue
            row, count = "".join(held), len(held)
            held, open_quote = [], False
            if index is None:
                names = [cell.value for cell in cells(row.removeprefix("\ufeff"), dialect)]  # (a BOM is no name)
                if column not in names:
                    raise ContainerError(f"no column {column!r}; the columns are: {', '.join(names)}")
                index = names.index(column)
                dst.write(row)
            else:
                new = rewrite_row(row, index, rewrite, dialect)
                dst.write(new)
                if new != row:
                    changed(line, row, new)
            line += count

    return run


def rewrite_row(row: str, index: int, rewrite: TextRewrite, dialect: Dialect) -> str:
    found = cells(row, dialect, upto=index)
    if index >= len(found):
        return row
    cell = found[index]
    new = rewrite(cell.value)
    if new == cell.value:
        return row
    raw = row[cell.start : cell.end]
    prefix = raw[: len(raw) - len(raw.lstrip(" "))] if dialect.skip_space else ""
    return row[: cell.start] + prefix + encode(new, cell.quoted, dialect) + row[cell.end :]


class _Joined:
    """A text stream that first gives back what was already read of another."""

    def __init__(self, head: str, rest: TextIO) -> None:
        self.head = head
        self.rest = rest

    def read(self, size: int = -1) -> str:
        if self.head:
            given, self.head = self.head, ""
            return given
        return self.rest.read(size)
