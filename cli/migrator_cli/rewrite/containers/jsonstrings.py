"""Rewrite the string values inside one JSON value held whole (a database column, a serialized string) (pure).

A JSON document stored in a column (a page builder's layout, a theme's settings, a meta value) is rewritten string
by string with the JSON file container's own literal rewriting (jsontext.rewrite_strings: keys stay, only a changed
value is re-encoded, every other byte kept), in the style the whole document shows: `\\/` where it escapes slashes,
`\\uXXXX` where it escapes non-ASCII, `\\u003c` where it escapes HTML characters. A document that escapes slashes
and shows nothing about non-ASCII is taken as PHP's json_encode() default output, which escapes both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from .jsontext import Style, rewrite_strings

TextRewrite = Callable[[str], str]

# A JSON string token; outside strings JSON has no quotes, so in a valid document these are exactly its strings.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_DOCUMENT_START = re.compile(r"[ \t\r\n]*[\[{]")


def is_json_document(text: str) -> bool:
    """Whether `text` is a whole JSON object or array (what a container rewrites as JSON, not as plain text)."""
    if not _DOCUMENT_START.match(text):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def rewrite_json_strings(text: str, rewrite: TextRewrite) -> str:
    """`text` (a valid JSON document) with `rewrite` applied to each string value, all else as it was."""
    style = Style()
    for literal in _STRING.finditer(text):  # the whole document's style first: it is all in memory
        style.observe(literal.group())
    if style.slash and style.ascii is None:  # PHP's json_encode() default escapes both
        style.ascii = True
    return rewrite_strings(text, rewrite, style)
