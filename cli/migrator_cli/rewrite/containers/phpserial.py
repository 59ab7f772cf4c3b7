"""PHP's serialize() format: rewrite the strings inside a serialized value and keep it valid (pure).

WordPress stores options and post meta as PHP-serialized text (`a:1:{s:3:"url";s:39:"https://...";}`): each string
carries its length in bytes, so a plain rewrite that changes a URL's length breaks the whole value (unserialize()
fails and WordPress silently drops it). Here the value is parsed by the grammar php.net documents
(https://www.php.net/manual/en/function.serialize.php, https://www.php.net/manual/en/function.unserialize.php; the
token rules are php-src ext/standard/var_unserializer.re), `rewrite` is applied to every string *value* (keys are
names, not content: they stay), and the value is written back with each `s:` length recomputed as the string's UTF-8
byte length; every other byte (floats, ints, class names, `C:` payloads, references) is copied as it was.

A string value that is itself serialized (WordPress serializes twice when a plugin hands it an already serialized
string) is rewritten the same way, recursively. Texts are str as the containers read them (UTF-8 decoded with
surrogateescape), so a byte that is not UTF-8 counts as one byte, as it does for PHP.

Malformed input raises `MalformedSerialized` (a ValueError). The caller's documented choice (containers/values.py):
a value that looks serialized but does not parse is left exactly as it is and counted, never rewritten as plain text,
since a plain rewrite would change the bytes a length counts and corrupt it further.
"""

from __future__ import annotations

import re
from collections.abc import Callable

TextRewrite = Callable[[str], str]

# Nesting deeper than this is refused (untrusted input; PHP's own default unserialize_max_depth is 4096, but a
# WordPress value more than a few levels deep does not occur).
MAX_DEPTH = 256

# What PHP's trim() takes off, as WordPress's maybe_unserialize() does before unserialize()
# (https://developer.wordpress.org/reference/functions/maybe_unserialize/).
TRIM = " \t\n\r\0\x0b"

# What only a serialized value carrying a string starts with: a string, an array, an object, a custom object or an
# enum. Scalars (`i:5;`, `b:1;`, `d:0.5;`, `N;`) hold nothing to rewrite, so they need not be recognised.
_LOOKS = re.compile(r'(?:s:\d+:"|a:\d+:\{|O:\d+:"|C:\d+:"|E:\d+:")')

# One token of the grammar (php-src var_unserializer.re): a scalar whole, or the head of a counted value. Floats: iv,
# nv, nvexp, NAN and [-]INF.
_TOKEN = re.compile(
    rb"(?P<scalar>N;|b:[01];|d:(?:NAN|-?INF|[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?);|[rR]:\d+;)"
    rb"|(?P<int>i:[+-]?\d+;)"
    rb"|(?P<counted>[saOCE]):(?P<size>\d+):"
)
_MEMBERS = re.compile(rb":(\d+):\{")  # after an object's class name: its member count (O) or payload length (C)


class MalformedSerialized(ValueError):
    """The text looks PHP-serialized but does not follow the grammar; the offset says where it stops."""


def looks_serialized(text: str) -> bool:
    """Whether `text` is meant as a serialized value holding strings: its start and end say so (as WordPress's
    is_serialized() judges), not a parse; a text that looks so but does not parse is malformed, not plain."""
    core = text.strip(TRIM)
    return _LOOKS.match(core) is not None and core.endswith((";", "}"))


def rewrite_serialized(text: str, rewrite: TextRewrite, malformed_inside: Callable[[str], None] | None = None) -> str:
    """`text` with `rewrite` applied to each string value (recursively into serialized strings), lengths fixed.

    Raises MalformedSerialized if `text` is not one whole serialized value. A string value that looks serialized
    but is malformed is left as it is (it is a valid string of the outer value) and passed to `malformed_inside`.
    Whitespace around the value is kept as it was (WordPress trims it before unserialize())."""
    core = text.strip(TRIM)
    if len(core) != len(text):
        start = len(text) - len(text.lstrip(TRIM))
        new_core = rewrite_serialized(core, rewrite, malformed_inside)
        return text if new_core is core else text[:start] + new_core + text[start + len(core) :]
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as error:  # a lone surrogate that no byte decoded to: not from a file
        raise MalformedSerialized(f"not encodable as bytes: {error}") from None
    replaced = _Strings(data, rewrite, malformed_inside).walk()
    if not replaced:
        return text
    out: list[bytes] = []
    copied = 0
    for start, end, new in replaced:
        out += (data[copied:start], new)
        copied = end
    out.append(data[copied:])
    return b"".join(out).decode("utf-8", "surrogateescape")


class _Strings:
    """One pass over the bytes, checking the grammar: the string values that changed, as (start, end, new token)."""

    def __init__(self, data: bytes, rewrite: TextRewrite, malformed_inside: Callable[[str], None] | None) -> None:
        self.data = data
        self.rewrite = rewrite
        self.malformed_inside = malformed_inside

    def walk(self) -> list[tuple[int, int, bytes]]:
        data = self.data
        replaced: list[tuple[int, int, bytes]] = []
        # Items (keys and values) left in each open array or object; a key is due when an even number is left.
        left: list[int] = []
        position = 0
        while True:
            while left and left[-1] == 0:
                if data[position : position + 1] != b"}":
                    raise MalformedSerialized(f"more members than the count, at offset {position}")
                position += 1
                left.pop()
            if not left and position:
                break
            key = bool(left) and left[-1] % 2 == 0
            if left:
                left[-1] -= 1
            token = _TOKEN.match(data, position)
            if not token:
                raise MalformedSerialized(f"an unknown value {data[position : position + 12]!r} at offset {position}")
            kind = token.group("counted")
            if key and not (token.group("int") or kind == b"s"):
                raise MalformedSerialized(f"a key that is neither an int nor a string, at offset {position}")
            if not kind:
                position = token.end()
                if not left:
                    break
                continue
            size, body = int(token.group("size")), token.end()
            if kind == b"s":
                end = self.quoted(body, size)
                if data[end : end + 1] != b";":
                    raise MalformedSerialized(f"a string without its ';', at offset {end}")
                if not key:
                    new = self.string(data[body + 1 : end - 1])
                    if new is not None:
                        replaced.append((position, end + 1, b's:%d:"%s";' % (len(new), new)))
                position = end + 1
            elif kind == b"a":
                if data[body : body + 1] != b"{":
                    raise MalformedSerialized(f"an array without its '{{', at offset {body}")
                position = body + 1
                left.append(2 * size)
            else:  # O, C and E name a class (E: "Class:Case") in a quoted, counted string
                name_end = self.quoted(body, size)
                if kind == b"E":
                    if data[name_end : name_end + 1] != b";":
                        raise MalformedSerialized(f"an enum without its ';', at offset {name_end}")
                    position = name_end + 1
                else:
                    count = _MEMBERS.match(data, name_end)
                    if not count:
                        raise MalformedSerialized(f"an object without its member count, at offset {name_end}")
                    if kind == b"O":
                        position = count.end()
                        left.append(2 * int(count.group(1)))
                    else:  # C: an opaque payload of that many bytes, copied
                        payload_end = count.end() + int(count.group(1))
                        if data[payload_end : payload_end + 1] != b"}":
                            raise MalformedSerialized(f"a custom object's payload ends wrong, at offset {payload_end}")
                        position = payload_end + 1
            if len(left) > MAX_DEPTH:
                raise MalformedSerialized(f"nested deeper than {MAX_DEPTH}")
            if not left:
                break
        if position != len(data):
            raise MalformedSerialized(f"trailing bytes after the value, at offset {position}")
        return replaced

    def quoted(self, at: int, size: int) -> int:
        """The end (after the closing quote) of `"<size bytes>"` at `at`."""
        end = at + 1 + size
        if end >= len(self.data) or self.data[at : at + 1] != b'"' or self.data[end : end + 1] != b'"':
            raise MalformedSerialized(f"a string whose length {size} does not match its quotes, at offset {at}")
        return end + 1

    def string(self, raw: bytes) -> bytes | None:
        """A string value's new bytes, or None if it did not change."""
        old = raw.decode("utf-8", "surrogateescape")
        if looks_serialized(old):
            try:
                new = rewrite_serialized(old, self.rewrite, self.malformed_inside)
            except MalformedSerialized:
                if self.malformed_inside:
                    self.malformed_inside(old)
                return None
        else:
            new = self.rewrite(old)
        return None if new == old else new.encode("utf-8", "surrogateescape")
