"""Rewrite the string values inside a JSON text, keeping its formatting and escape style (pure).

A JSON document stored in a database column or a file (Gutenberg attributes, a page builder's layout, a theme's
settings) is rewritten string by string: only a string value whose text changed is re-encoded, everything else
(whitespace, key order, numbers, the other strings' escapes) stays byte for byte. The re-encoded string follows the
document's style: `\\/` where the document escapes slashes (PHP's json_encode does by default), `\\uXXXX` for
non-ASCII where the document escapes it (or, escaping slashes and holding no raw non-ASCII, is PHP's default
output), raw UTF-8 otherwise. Keys are names, not content: they stay.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

TextRewrite = Callable[[str], str]

# A JSON string token; outside strings JSON has no quotes, so in a valid document these are exactly its strings.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_KEY_AFTER = re.compile(r"\s*:")
_ESCAPED_NON_ASCII = re.compile(r"\\u(?:00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3})")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
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
    escapes_slash = "\\/" in text
    escapes_unicode = bool(_ESCAPED_NON_ASCII.search(text)) or (escapes_slash and not _NON_ASCII.search(text))
    out: list[str] = []
    copied = 0
    for token in _STRING.finditer(text):
        if _KEY_AFTER.match(text, token.end()):
            continue
        old = json.loads(token.group())
        new = rewrite(old)
        if new == old:
            continue
        encoded = json.dumps(new, ensure_ascii=escapes_unicode)
        if escapes_slash:
            encoded = encoded.replace("/", "\\/")
        out.append(text[copied : token.start()])
        out.append(encoded)
        copied = token.end()
    if not out:
        return text
    out.append(text[copied:])
    return "".join(out)
