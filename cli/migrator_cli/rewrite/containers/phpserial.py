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

# What only a serialized value carrying a string starts with: a string, an array, an object, a custom object or an
# enum. Scalars (`i:5;`, `b:1;`, `d:0.5;`, `N;`) hold nothing to rewrite, so they need not be recognised.
_LOOKS = re.compile(r'(?:s:\d+:"|a:\d+:\{|O:\d+:"|C:\d+:"|E:\d+:")')

_INT = re.compile(rb"i:[+-]?\d+;")
_BOOL = re.compile(rb"b:[01];")
# php-src var_unserializer.re: iv, nv, nvexp, NAN and [-]INF.
_FLOAT = re.compile(rb"d:(?:NAN|-?INF|[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?);")
_REF = re.compile(rb"[rR]:\d+;")
_COUNTED = re.compile(rb"([saOCE]):(\d+):")  # a type with a length (s, O, C, E) or a count (a)
_MEMBERS = re.compile(rb":(\d+):\{")  # after an object's class name: its member count (O) or payload length (C)


class MalformedSerialized(ValueError):
    """The text looks PHP-serialized but does not follow the grammar; the offset says where it stops."""


def looks_serialized(text: str) -> bool:
    """Whether `text` is meant as a serialized value holding strings: its start and end say so (as WordPress's
    is_serialized() judges), not a parse; a text that looks so but does not parse is malformed, not plain."""
    return _LOOKS.match(text) is not None and text.endswith((";", "}"))


def rewrite_serialized(text: str, rewrite: TextRewrite, malformed_inside: Callable[[str], None] | None = None) -> str:
    """`text` with `rewrite` applied to each string value (recursively into serialized strings), lengths fixed.

    Raises MalformedSerialized if `text` is not one whole serialized value. A string value that looks serialized
    but is malformed is left as it is (it is a valid string of the outer value) and passed to `malformed_inside`."""
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as error:  # a lone surrogate that no byte decoded to: not from a file
        raise MalformedSerialized(f"not encodable as bytes: {error}") from None
    writer = _Writer(data, rewrite, malformed_inside)
    end = writer.value(0, 0)
    if end != len(data):
        raise MalformedSerialized(f"trailing bytes after the value at offset {end}")
    if not writer.changed:
        return text
    return b"".join(writer.out).decode("utf-8", "surrogateescape")


class _Writer:
    """One pass over the bytes: each value is parsed and written to `out` as it goes."""

    def __init__(self, data: bytes, rewrite: TextRewrite, malformed_inside: Callable[[str], None] | None) -> None:
        self.data = data
        self.rewrite = rewrite
        self.malformed_inside = malformed_inside
        self.out: list[bytes] = []
        self.changed = False

    def fail(self, at: int, what: str) -> MalformedSerialized:
        return MalformedSerialized(f"{what} at offset {at}")

    def copy(self, start: int, end: int) -> int:
        self.out.append(self.data[start:end])
        return end

    def value(self, at: int, depth: int, key: bool = False) -> int:
        """Parse the value at `at`, write it, return where it ends. A key is an int or a string, copied as is."""
        data = self.data
        if depth > MAX_DEPTH:
            raise self.fail(at, f"nested deeper than {MAX_DEPTH}")
        kind = data[at : at + 1]
        if key and kind not in (b"i", b"s"):
            raise self.fail(at, "an array key that is neither an int nor a string")
        if kind == b"N":
            if data[at : at + 2] != b"N;":
                raise self.fail(at, "a bad null")
            return self.copy(at, at + 2)
        for pattern in (_INT, _BOOL, _FLOAT, _REF):
            scalar = pattern.match(data, at)
            if scalar:
                return self.copy(at, scalar.end())
        counted = _COUNTED.match(data, at)
        if not counted:
            raise self.fail(at, f"an unknown value {data[at : at + 12]!r}")
        letter, size = counted.group(1), int(counted.group(2))
        body = counted.end()
        if letter == b"s":
            return self.string(at, body, size, key)
        if letter == b"a":
            return self.members(at, body, size, depth)
        name_end = self.quoted(body, size)  # O, C and E name a class (E: "Class:Case") in a quoted, counted string
        if letter == b"E":
            if data[name_end : name_end + 1] != b";":
                raise self.fail(name_end, "an enum without its ';'")
            return self.copy(at, name_end + 1)
        count = _MEMBERS.match(data, name_end)
        if not count:
            raise self.fail(name_end, "an object without its member count")
        if letter == b"O":
            return self.members(at, count.end() - 1, int(count.group(1)), depth)
        payload_end = count.end() + int(count.group(1))  # C: an opaque payload of that many bytes, copied
        if data[payload_end : payload_end + 1] != b"}":
            raise self.fail(payload_end, "a custom object's payload whose length is wrong")
        return self.copy(at, payload_end + 1)

    def quoted(self, at: int, size: int) -> int:
        """The end (after the closing quote) of `"<size bytes>"` at `at`."""
        end = at + 1 + size
        if self.data[at : at + 1] != b'"' or self.data[end : end + 1] != b'"' or end > len(self.data):
            raise self.fail(at, f"a string whose length {size} does not match its quotes")
        return end + 1

    def string(self, at: int, body: int, size: int, key: bool) -> int:
        end = self.quoted(body, size)
        if self.data[end : end + 1] != b";":
            raise self.fail(end, "a string without its ';'")
        if key:
            return self.copy(at, end + 1)
        old = self.data[body + 1 : end - 1].decode("utf-8", "surrogateescape")
        new = self.inner(old)
        if new == old:
            return self.copy(at, end + 1)
        encoded = new.encode("utf-8", "surrogateescape")
        self.out.append(b's:%d:"%s";' % (len(encoded), encoded))
        self.changed = True
        return end + 1

    def inner(self, text: str) -> str:
        if looks_serialized(text):
            try:
                return rewrite_serialized(text, self.rewrite, self.malformed_inside)
            except MalformedSerialized:
                if self.malformed_inside:
                    self.malformed_inside(text)
                return text
        return self.rewrite(text)

    def members(self, at: int, brace: int, count: int, depth: int) -> int:
        """An array's or object's `{<key><value>...}` of `count` pairs: the header is copied, members written."""
        if self.data[brace : brace + 1] != b"{":
            raise self.fail(brace, "a missing '{'")
        self.copy(at, brace + 1)
        position = brace + 1
        for _ in range(count):
            position = self.value(position, depth + 1, key=True)
            position = self.value(position, depth + 1)
        if self.data[position : position + 1] != b"}":
            raise self.fail(position, f"more members than the count {count}")
        return self.copy(position, position + 1)
