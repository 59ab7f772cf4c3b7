"""What a database container does with one stored value: serialized, JSON or plain text, and what it counted (pure).

The SQL and WXR containers take each string value out of its escaping and hand it here: a value that looks
PHP-serialized is rewritten by phpserial (lengths fixed); a whole JSON object or array by jsonstrings (formatting
and escapes kept); anything else is plain text for the engine. A value that looks serialized but does not parse is
left exactly as it was and counted (`malformed_serialized`): a plain rewrite could change the bytes its lengths count
and corrupt it further, so leaving it is the safe choice, and the count tells the operator to look.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .jsonstrings import is_json_document, rewrite_json_strings
from .phpserial import MalformedSerialized, TextRewrite, looks_serialized, rewrite_serialized

Changed = Callable[[int, str, str], None]


@dataclass
class Counts:
    """A database container's figures for one file; `run` returns them (and fills the one it is given)."""

    values: int = 0  # string values seen (SQL literals, COPY fields, CDATA sections, XML text)
    changed: int = 0  # of those, values whose text the rewrite changed
    serialized_fixed: int = 0  # changed values that were PHP-serialized, written back with their lengths fixed
    malformed_serialized: int = 0  # values (or serialized strings inside one) that looked serialized, did not parse,
    # and were left as they were

    def add(self, other: Counts) -> None:
        self.values += other.values
        self.changed += other.changed
        self.serialized_fixed += other.serialized_fixed
        self.malformed_serialized += other.malformed_serialized


def rewrite_value(text: str, rewrite: TextRewrite, counts: Counts) -> str:
    """One stored value rewritten by its kind; `counts` updated. Returns `text` itself when nothing changed."""
    counts.values += 1
    new = _by_kind(text, rewrite, counts)
    if new == text:
        return text
    counts.changed += 1
    return new


def _by_kind(text: str, rewrite: TextRewrite, counts: Counts) -> str:
    def inside(value: str) -> str:  # a string inside a serialized value may be JSON too (a meta holding JSON)
        return rewrite_json_strings(value, rewrite) if is_json_document(value) else rewrite(value)

    def malformed_inside(_: str) -> None:
        counts.malformed_serialized += 1

    if looks_serialized(text):
        try:
            new = rewrite_serialized(text, inside, malformed_inside)
        except MalformedSerialized:
            counts.malformed_serialized += 1
            return text
        if new != text:
            counts.serialized_fixed += 1
        return new
    if is_json_document(text):
        return rewrite_json_strings(text, rewrite)
    return rewrite(text)
