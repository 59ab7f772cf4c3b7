"""The WordPress export (WXR) container: an RSS file's CDATA sections and escaped text, rewritten, streamed.

WordPress's exporter (wp-admin/includes/export.php, wxr_cdata()) writes each post's content:encoded and
excerpt:encoded, each wp:meta_value and wp:comment_content in a CDATA section, and splits a `]]>` inside the content
as `]]]]><![CDATA[>`: adjacent sections are one value here, joined, rewritten and split the same way again. A
wp:meta_value that is PHP-serialized is fixed by phpserial, JSON keeps its style (containers/values.py rules every
value). Text outside CDATA (a title, a description holding entity-escaped HTML such as `&lt;iframe ...`) is
unescaped, rewritten and escaped again; tags, attributes and comments are never touched.

Records are the lines of one <item>...</item>, or a line outside items (with the lines an open CDATA section or
comment needs), never the whole file, so memory is bounded by the largest item. `run` returns the Counts.
"""

from __future__ import annotations

import html
import re
from typing import TextIO

from . import lines
from .phpserial import TextRewrite
from .values import Changed, Counts, rewrite_value

CDATA_OPEN, CDATA_CLOSE = "<![CDATA[", "]]>"
SPLIT_CLOSE = "]]]]><![CDATA[>"  # how wxr_cdata() writes a "]]>" inside a value
JUNCTION = "]]><![CDATA["  # between two adjacent sections of one value (the split is "]]" JUNCTION ">")

# The markers a line can change the record's state with (an item opens or closes, a CDATA section or comment opens).
_STATE = re.compile(r"<!\[CDATA\[|<!--|<item[\s>]|</item\s*>")
# One record's parts: a run of adjacent CDATA sections, a comment, a tag (or declaration), or text.
_PART = re.compile(
    r"(?P<cdata>(?:<!\[CDATA\[.*?\]\]>)+)|(?P<comment><!--.*?-->)|(?P<tag><[^>]*>)|(?P<text>[^<]+)", re.DOTALL
)
_QUOTE_ENTITIES = (('"', "&quot;"), ("'", "&#039;"), ("'", "&#39;"))
_ENTITY = re.compile(r"&(?:#\d+|#[xX][0-9a-fA-F]+|\w+);")


def run(src: TextIO, dst: TextIO, rewrite: TextRewrite, changed: Changed, counts: Counts | None = None) -> Counts:
    """Copy the WXR `src` to `dst` with its values rewritten; `changed` hears each record (item or line) that did."""
    counts = counts if counts is not None else Counts()
    record: list[str] = []
    first = number = 0
    state = _Scan()
    for line in lines(src):  # split at "\n" only, as the diff counts lines
        number += 1
        if not record:
            first = number
        record.append(line)
        if state.feed(line):
            continue
        old = "".join(record)
        new = rewrite_record(old, rewrite, counts)
        if new != old:
            changed(first, old, new)
        dst.write(new)
        record = []
    if record:  # the file ends inside an item or a section: written as it was
        dst.write("".join(record))
    return counts


class _Scan:
    """Whether the lines so far leave an item, a CDATA section or a comment open (the record goes on)."""

    def __init__(self) -> None:
        self.in_item = False
        self.closing = ""  # the marker an open CDATA section or comment waits for

    def feed(self, line: str) -> bool:
        position = 0
        while True:
            if self.closing:
                end = line.find(self.closing, position)
                if end < 0:
                    return True
                position, self.closing = end + len(self.closing), ""
            marker = _STATE.search(line, position)
            if not marker:
                return self.in_item
            found = marker.group()
            position = marker.end()
            if found == CDATA_OPEN:
                self.closing = CDATA_CLOSE
            elif found == "<!--":
                self.closing = "-->"
            else:
                self.in_item = not found.startswith("</")


def rewrite_record(text: str, rewrite: TextRewrite, counts: Counts) -> str:
    """One record with its CDATA values and text rewritten; `text` itself if none changed."""
    out: list[str] = []
    copied = 0
    for part in _PART.finditer(text):
        kind, whole = part.lastgroup, part.group()
        if kind == "cdata":
            new = _cdata(whole, rewrite, counts)
        elif kind == "text" and not whole.isspace():
            new = _text(whole, rewrite, counts)
        else:
            continue
        if new is not whole:
            out.append(text[copied : part.start()])
            out.append(new)
            copied = part.end()
    if not out:
        return text
    out.append(text[copied:])
    return "".join(out)


def _cdata(sections: str, rewrite: TextRewrite, counts: Counts) -> str:
    value = sections[len(CDATA_OPEN) : -len(CDATA_CLOSE)].replace(JUNCTION, "")
    new = rewrite_value(value, rewrite, counts)
    if new is value:
        return sections
    return CDATA_OPEN + new.replace(CDATA_CLOSE, SPLIT_CLOSE) + CDATA_CLOSE


def _text(escaped: str, rewrite: TextRewrite, counts: Counts) -> str:
    value = html.unescape(escaped) if _ENTITY.search(escaped) else escaped
    new = rewrite_value(value, rewrite, counts)
    if new is value:
        return escaped
    new = new.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for character, entity in _QUOTE_ENTITIES:  # quotes as the text wrote them (esc_html() writes both)
        if entity in escaped:
            new = new.replace(character, entity)
    return new
