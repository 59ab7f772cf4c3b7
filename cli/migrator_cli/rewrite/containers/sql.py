"""The SQL dump container: the string values of a MySQL or PostgreSQL dump's rows, rewritten in place, streamed.

What is rewritten, and nothing else (comments, DDL, other statements and every byte outside a value pass through):
- `INSERT`/`REPLACE` statements starting a line (mysqldump's extended inserts, pg_dump --inserts): each quoted
  string literal. `_binary '...'`, `X'...'`, `B'...'`, `U&'...'` literals and 0x... numbers are left alone.
- pg_dump's `COPY ... FROM stdin;` blocks (text format, up to `\\.`): each tab-separated field but `\\N`.
The dialect comes from the content, not the file's name: pg_dump's header and `SET standard_conforming_strings`
say PostgreSQL (a literal then escapes only `''`, and `E'...'` takes backslash escapes); anything else is MySQL
(backslash escapes: https://dev.mysql.com/doc/refman/8.4/en/string-literals.html, Table 11.1), unless its
sql_mode sets NO_BACKSLASH_ESCAPES. COPY's escapes: https://www.postgresql.org/docs/current/sql-copy.html
("Text Format"); literals: https://www.postgresql.org/docs/current/sql-syntax-lexical.html.

Each value is unescaped, rewritten by its kind (containers/values.py: PHP-serialized, JSON or plain) and, if it
changed, escaped again the way its dump writes it (mysqldump's escapes, pg_dump's); an unchanged value keeps its
original bytes. A record is one line, or the lines a literal spans (pg --inserts writes newlines raw), so memory is
bounded by the longest record. `run` returns the Counts (values seen, changed, serialized fixed, malformed
serialized left).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TextIO

from . import lines as lines_of
from .phpserial import TextRewrite
from .values import Changed, Counts, rewrite_value

MYSQL = "mysql"  # backslash escapes and '' in literals
STANDARD = "standard"  # PostgreSQL's standard_conforming_strings (and MySQL's NO_BACKSLASH_ESCAPES): only ''

_INSERT = re.compile(r"(?:INSERT|REPLACE)\s", re.IGNORECASE)
_COPY = re.compile(r"COPY\s.*\sFROM\s+stdin;\s*$", re.IGNORECASE | re.DOTALL)
_PG_HINTS = re.compile(r"-- PostgreSQL database dump|SET standard_conforming_strings = on", re.IGNORECASE)
_PG_ESCAPING = re.compile(r"SET standard_conforming_strings = off", re.IGNORECASE)
_NO_BACKSLASH = re.compile(r".*SQL_MODE\s*=.*NO_BACKSLASH_ESCAPES", re.IGNORECASE)

# Inside a statement: a literal's opening quote with its prefix, an identifier's opening quote, the statement's end.
_TOKEN = re.compile(r"""(?P<prefix>(?<![\w$])(?:_\w+\s*|[EeXxBbNn]|[Uu]&))?'|(?P<ident>["`])|(?P<end>;)""")
# A literal's body, up to its closing quote (or up to the text's end while it is still open).
_BACKSLASH_BODY = re.compile(r"[^'\\]*(?:(?:\\.|'')[^'\\]*)*", re.DOTALL)
_STANDARD_BODY = re.compile(r"[^']*(?:''[^']*)*")
_IDENT_BODY = {'"': re.compile(r'[^"]*(?:""[^"]*)*'), "`": re.compile(r"[^`]*(?:``[^`]*)*")}
_UNTOUCHED_PREFIXES = ("_binary", "x", "b", "u&")

_MYSQL_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a", "%": "\\%", "_": "\\_"}
_MYSQL_UNESCAPE = re.compile(r"\\(.)|''", re.DOTALL)
# mysqldump's escaping (mysql_real_escape_string): NUL, newline, CR, backslash, both quotes, Ctrl-Z. Pairs in
# order, the backslash first (str.replace per pair beats str.translate on the long values of a dump).
_MYSQL_CONTROLS = (("\\", "\\\\"), ("\0", "\\0"), ("\n", "\\n"), ("\r", "\\r"), ("\x1a", "\\Z"))
_MYSQL_ESCAPE = (*_MYSQL_CONTROLS, ("'", "\\'"), ('"', '\\"'))
_MYSQL_ESCAPE_DOUBLING = (*_MYSQL_CONTROLS, ("'", "''"))  # a dump whose literals double their quotes

_PG_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_PG_UNESCAPE = re.compile(
    r"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))|''", re.DOTALL
)
_COPY_UNESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|(.))", re.DOTALL)
# pg_dump's COPY escaping (CopyAttributeOutText): backslash and the six control characters it names.
_COPY_ESCAPE = (
    ("\\", "\\\\"),
    ("\b", "\\b"),
    ("\f", "\\f"),
    ("\n", "\\n"),
    ("\r", "\\r"),
    ("\t", "\\t"),
    ("\v", "\\v"),
)


def run(src: TextIO, dst: TextIO, rewrite: TextRewrite, changed: Changed, counts: Counts | None = None) -> Counts:
    """Copy the dump `src` to `dst` with its values rewritten; `changed` hears each record that changed."""
    counts = counts if counts is not None else Counts()
    Dump(rewrite, changed, counts).run(src, dst)
    return counts


class Dump:
    """The state carried from line to line: the dialect, and whether a statement or a COPY block is open."""

    def __init__(self, rewrite: TextRewrite, changed: Changed, counts: Counts) -> None:
        self.rewrite = rewrite
        self.changed = changed
        self.counts = counts
        self.literals = MYSQL
        self.pg = False  # a PostgreSQL dump: E'' literals take pg's escapes; MySQL's otherwise
        self.in_insert = False
        self.in_copy = False

    def run(self, src: TextIO, dst: TextIO) -> None:
        lines = lines_of(src)  # split at "\n" only, as the diff counts lines
        number = 0
        for line in lines:
            first = number + 1
            old, new, used = self.record(line, lines)
            number += used
            if new != old:
                self.changed(first, old, new)
            dst.write(new)

    def record(self, line: str, lines: Iterator[str]) -> tuple[str, str, int]:
        """One record from `line` (and the lines an open literal needs): (old text, new text, lines used)."""
        if self.in_copy:
            if line.rstrip("\r\n") == "\\.":
                self.in_copy = False
                return line, line, 1
            return line, self.copy_row(line), 1
        if not self.in_insert:
            if _INSERT.match(line):
                self.in_insert = True
            elif _COPY.match(line):
                self.in_copy = True
                self.pg = True
                return line, line, 1
            else:
                self.sniff(line)
                return line, line, 1
        return self.statement(line, lines)

    def sniff(self, line: str) -> None:
        if _PG_HINTS.search(line):
            self.pg, self.literals = True, STANDARD
        elif _PG_ESCAPING.search(line):
            self.pg, self.literals = True, MYSQL
        elif _NO_BACKSLASH.match(line):
            self.literals = STANDARD

    def copy_row(self, line: str) -> str:
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        fields = body.split("\t")
        new_fields = [field if field == "\\N" else self.copy_field(field) for field in fields]
        return line if new_fields == fields else "\t".join(new_fields) + ending

    def copy_field(self, field: str) -> str:
        value = _COPY_UNESCAPE.sub(_copy_unescape, field) if "\\" in field else field
        new = rewrite_value(value, self.rewrite, self.counts)
        return field if new is value else _escape(new, _COPY_ESCAPE)

    def statement(self, line: str, lines: Iterator[str]) -> tuple[str, str, int]:
        """An INSERT's line, its string literals rewritten; more lines while a literal is open at its end."""
        text, used = line, 1
        out: list[str] = []
        copied = position = 0
        while True:
            token = _TOKEN.search(text, position)
            if not token:
                break
            if token.group("end"):
                self.in_insert = False
                position = token.end()
                if _INSERT.match(text[position:].lstrip()):  # a second statement on the same line
                    continue
                break  # what follows the statement on its line (a comment) is not SQL we read
            self.in_insert = True
            quote = token.group("ident")
            prefix = (token.group("prefix") or "").strip().lower()
            escaped = self.literals == MYSQL or (prefix == "e" and self.pg)
            body = _IDENT_BODY[quote] if quote else _BACKSLASH_BODY if escaped else _STANDARD_BODY
            start = end = token.end()
            while True:  # the body up to its closing quote, reading lines while it is still open
                end = body.match(text, end).end()  # type: ignore[union-attr]  # a body matches the empty text
                if end < len(text):
                    break
                more = next(lines, None)
                if more is None:  # the file ends inside a literal: leave it as it is
                    break
                text, used = text + more, used + 1
            position = end + 1
            if quote or prefix in _UNTOUCHED_PREFIXES or end >= len(text):
                continue
            raw = text[start:end]
            new = self.literal(raw, escaped)
            if new is not raw:
                out.append(text[copied:start])
                out.append(new)
                copied = end
        if not out:
            return text, text, used
        out.append(text[copied:])
        return text, "".join(out), used

    def literal(self, raw: str, escaped: bool) -> str:
        """A literal's body rewritten and escaped again in its own style; `raw` itself if its value did not change."""
        if not escaped:
            value = raw.replace("''", "'")
            new = rewrite_value(value, self.rewrite, self.counts)
            return raw if new is value else new.replace("'", "''")
        if self.pg:
            value = _PG_UNESCAPE.sub(_pg_unescape, raw)
            new = rewrite_value(value, self.rewrite, self.counts)
            return raw if new is value else new.replace("\\", "\\\\").replace("'", "''")
        value = _MYSQL_UNESCAPE.sub(_mysql_unescape, raw)
        new = rewrite_value(value, self.rewrite, self.counts)
        if new is value:
            return raw
        doubling = "''" in raw and "\\'" not in raw
        return _escape(new, _MYSQL_ESCAPE_DOUBLING if doubling else _MYSQL_ESCAPE)


def _escape(text: str, pairs: tuple[tuple[str, str], ...]) -> str:
    for plain, escaped in pairs:
        if plain in text:
            text = text.replace(plain, escaped)
    return text


def _byte(code: int) -> str:
    """An escaped byte as the file's decoding would give it: ASCII as itself, any other byte surrogate-escaped."""
    return chr(code) if code < 0x80 else chr(0xDC00 + code)


def _mysql_unescape(match: re.Match[str]) -> str:
    escaped = match.group(1)
    if escaped is None:
        return "'"
    return _MYSQL_ESCAPES.get(escaped, escaped)


def _pg_unescape(match: re.Match[str]) -> str:
    octal, hexa, short, long, other = match.groups()
    if match.group() == "''":
        return "'"
    if octal:
        return _byte(int(octal, 8) & 0xFF)
    if hexa:
        return _byte(int(hexa, 16))
    if short or long:
        return chr(int(short or long, 16))
    return _PG_ESCAPES.get(other, other)


def _copy_unescape(match: re.Match[str]) -> str:
    octal, hexa, other = match.groups()
    if octal:
        return _byte(int(octal, 8) & 0xFF)
    if hexa:
        return _byte(int(hexa, 16))
    return _PG_ESCAPES.get(other, other)
