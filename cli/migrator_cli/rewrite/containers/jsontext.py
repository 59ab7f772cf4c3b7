"""JSON and JSON Lines files: the rewrite runs inside string values only, and a changed value keeps its file's style.

A string literal is decoded, rewritten and, when it changed, encoded again the way the file writes strings: "\\/" for
"/" where the file escapes slashes (PHP's json_encode), "\\uXXXX" for non-ASCII where it escapes those (Python's
ensure_ascii), "\\u003c" for "<", ">", "&", "'" where it escapes those (Rails, JSON_HEX_TAG), in the hex digits' case
it uses. The literal's own escapes decide first, then what the file showed before it. Keys (a literal followed by
":") are never rewritten, and every byte outside a changed literal is kept.

A literal never spans lines (JSON forbids a raw newline in one), so the file is streamed in records of whole lines,
about BATCH characters each, for a JSON document as for JSON Lines; a record never ends right after a literal, whose
being a key is only known from what follows it. A text that is not valid JSON is read the same way: a quote with no
closing quote on its line is not a literal, and the rest of that line is left alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TextIO

from . import Changed, TextRewrite, lines

BATCH = 1 << 20
BATCH_LIMIT = 16 * BATCH
# A string literal (and whether a ":" follows it: a key), or a quote its line never closes (the rest of the line).
_TOKEN = re.compile(r'(?P<literal>"[^"\\\n]*+(?:\\[^\n][^"\\\n]*+)*+")(?P<key>(?=[ \t\r\n]*+:))?|"[^\n]*+')
_NOT_SPACE = re.compile(r"[^ \t\r\n]")
_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_SPACE = " \t\r\n"
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_HTML_CHARACTERS = "<>&'="


@dataclass
class Style:
    """How a file writes its strings, as far as seen: each feature is None until a literal shows it."""

    slash: bool | None = None  # "\/" for "/"
    ascii: bool | None = None  # "\uXXXX" for non-ASCII
    upper_hex: bool | None = None
    escaped: set[str] = field(default_factory=set)  # ASCII characters written as "\u00XX" (<, >, &, ')
    raw: set[str] = field(default_factory=set)  # ... and those one literal writes as themselves

    def observe(self, literal: str) -> None:
        if "\\" not in literal:  # most literals: raw characters only, which count until an escape is seen
            if self.slash is None and "/" in literal:
                self.slash = False
            if self.ascii is None and not literal.isascii():
                self.ascii = False
            return
        own = style_of(literal)
        for name in ("slash", "ascii", "upper_hex"):
            if getattr(own, name) is not None:
                setattr(self, name, getattr(own, name))
        self.escaped |= own.escaped
        self.raw |= own.raw

    def over(self, base: Style) -> Style:
        """This literal's style where it shows one, the file's where it does not."""
        return Style(
            slash=base.slash if self.slash is None else self.slash,
            ascii=base.ascii if self.ascii is None else self.ascii,
            upper_hex=base.upper_hex if self.upper_hex is None else self.upper_hex,
            escaped=self.escaped | (base.escaped - self.raw),
            raw=self.raw,
        )


def style_of(literal: str) -> Style:
    """The style one literal (with its quotes) shows."""
    style = Style()
    body = literal[1:-1]
    if "/" in body:
        style.slash = "\\/" in body and "/" not in body.replace("\\/", "")
    if "\\u" in body:
        for code in _UNICODE_ESCAPE.findall(body):
            if any(c in "abcdef" for c in code):
                style.upper_hex = False
            elif any(c in "ABCDEF" for c in code):
                style.upper_hex = True
            value = int(code, 16)
            if value >= 0x80:
                style.ascii = True
            elif chr(value) in _HTML_CHARACTERS:
                style.escaped.add(chr(value))
    if not body.isascii() and style.ascii is None:
        style.ascii = False
    style.raw = {c for c in _HTML_CHARACTERS if c in body}
    return style


def encode(value: str, style: Style) -> str:
    """`value` as a JSON string literal in `style`."""
    hex_format = "\\u{:04X}" if style.upper_hex else "\\u{:04x}"
    out = ['"']
    for character in value:
        code = ord(character)
        if character in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[character])
        elif code < 0x20 or character in style.escaped:
            out.append(hex_format.format(code))
        elif character == "/" and style.slash:
            out.append("\\/")
        elif code >= 0x80 and style.ascii and not 0xDC80 <= code <= 0xDCFF:  # (a byte that was not UTF-8: kept)
            if code > 0xFFFF:
                code -= 0x10000
                out.append(hex_format.format(0xD800 + (code >> 10)) + hex_format.format(0xDC00 + (code & 0x3FF)))
            else:
                out.append(hex_format.format(code))
        else:
            out.append(character)
    out.append('"')
    return "".join(out)


def rewrite_literal(literal: str, rewrite: TextRewrite, style: Style) -> str:
    """A literal (with its quotes) rewritten, in its own style where it shows one and `style` where not."""
    if "\\" in literal:
        try:
            value = json.loads(literal, strict=False)  # (a raw tab in a string: not JSON, but common)
        except ValueError:  # an escape JSON does not have: not ours to touch
            return literal
    else:
        value = literal[1:-1]
    new = rewrite(value)
    if new == value:
        return literal
    return encode(new, style_of(literal).over(style))


def rewrite_strings(text: str, rewrite: TextRewrite, style: Style | None = None, last_is_key: bool = False) -> str:
    """`text` (JSON, or some of its lines) with every string value rewritten; `style` learns from each literal.
    A literal with nothing after it is a key when `last_is_key` (its record was cut there), a value otherwise."""
    style = style if style is not None else Style()
    out: list[str] = []
    kept = 0
    for match in _TOKEN.finditer(text):
        literal = match.group("literal")
        if literal is None:  # a quote not closed on its line: not JSON, left alone
            continue
        key = match.group("key") is not None
        if not key and last_is_key and not _NOT_SPACE.search(text, match.end()):
            key = True
        if not key:
            new = rewrite_literal(literal, rewrite, style)
            if new != literal:
                out.append(text[kept : match.start()])
                out.append(new)
                kept = match.end()
        style.observe(literal)
    if not out:
        return text
    out.append(text[kept:])
    return "".join(out)


def ends_in_literal(held: list[str]) -> bool:
    """Whether the last thing in these lines but blanks is a literal (a key or a value: what follows says)."""
    for text_line in reversed(held):
        if text_line.strip(_SPACE):
            return text_line.rstrip(_SPACE).endswith('"')
    return False


def run(src: TextIO, dst: TextIO, rewrite: TextRewrite, changed: Changed) -> None:
    style = Style()
    line = 1
    held: list[str] = []
    size = 0

    def flush(last_is_key: bool) -> None:
        nonlocal held, size, line
        record = "".join(held)
        new = rewrite_strings(record, rewrite, style, last_is_key)
        dst.write(new)
        if new != record:
            changed(line, record, new)
        line += len(held)
        held, size = [], 0

    for text_line in lines(src):
        held.append(text_line)
        size += len(text_line)
        if size >= BATCH and (not ends_in_literal(held) or size >= BATCH_LIMIT):
            flush(last_is_key=True)
    if held:
        flush(last_is_key=False)
