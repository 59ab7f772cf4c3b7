"""What a container is: a stream of a file's records, each rewritten in place, and the map of containers by kind.

A container reads `src` and writes `dst` (both opened with encoding="utf-8", errors="surrogateescape", newline="",
so any bytes round-trip), finds the plain texts its format holds (a text file's lines, a JSON string's value, a CSV
cell, a SQL string literal, a WXR post's content), runs the rewrite over each and writes them back in the format's
own escaping. It calls `changed(first line, old record, new record)` for each record that changed, in order: a record
is one or more whole consecutive lines (the diff is made of them), so memory stays flat however large the file.

The modules are imported when their kind is first used (`import_module`), so a container written later (sql, wxr)
is picked up without this module importing it, and no container imports this one back in a circle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib import import_module
from typing import Protocol, TextIO

TextRewrite = Callable[[str], str]  # the engine: a plain (unescaped) text in, the rewritten text out
Changed = Callable[[int, str, str], None]  # (1-based first line number of a record, old record, new record)
# A run returns None, or (the database containers) the figures it kept: values.Counts.
Run = Callable[[TextIO, TextIO, TextRewrite, Changed], object]

# kind -> the module that streams it (its `run`); "csv" needs a column, so its module has `factory(column) -> run`.
MODULES = {"text": "text", "json": "jsontext", "sql": "sql", "wxr": "wxr"}
COLUMN_MODULES = {"csv": "csvcolumn"}
READ_SIZE = 1 << 16


class ContainerError(ValueError):
    """A file is not what its kind needs (a CSV without the column asked for): said with what it has instead."""


def _deferred(module: str) -> Run:
    def run(src: TextIO, dst: TextIO, rewrite: TextRewrite, changed: Changed) -> object:
        return import_module(f"{__name__}.{module}").run(src, dst, rewrite, changed)

    return run


def _deferred_factory(module: str) -> Callable[[str], Run]:
    def factory(column: str) -> Run:
        made: Run = import_module(f"{__name__}.{module}").factory(column)
        return made

    return factory


CONTAINERS: dict[str, Run | Callable[[str], Run]] = {
    **{kind: _deferred(module) for kind, module in MODULES.items()},
    **{kind: _deferred_factory(module) for kind, module in COLUMN_MODULES.items()},
}


def container(kind: str, column: str | None = None) -> Run:
    """The container that streams a file of `kind` (one of CONTAINERS; "csv" rewrites `column`, which it needs)."""
    if kind in COLUMN_MODULES:
        if not column:
            raise ContainerError(f"a {kind} file is rewritten by column: name the column")
        return _deferred_factory(COLUMN_MODULES[kind])(column)
    if kind not in MODULES:
        raise ContainerError(f"no container for {kind!r}: one of {', '.join(sorted(CONTAINERS))}")
    return _deferred(MODULES[kind])


class Readable(Protocol):
    def read(self, size: int = -1, /) -> str: ...


def lines(src: Readable, size: int = READ_SIZE) -> Iterator[str]:
    """`src`'s lines, each ending in "\\n" but the last maybe: a line ends at "\\n" only (a lone "\\r" is not an end,
    as for `patch` and `diff`; Python's own line reading with newline="" would also split there)."""
    held: list[str] = []
    while block := src.read(size):
        cut = block.rfind("\n") + 1
        if not cut:
            held.append(block)
            continue
        head = "".join([*held, block[:cut]])
        held = [block[cut:]] if cut < len(block) else []
        pieces = head.split("\n")
        for piece in pieces[:-1]:
            yield piece + "\n"
    tail = "".join(held)
    if tail:
        yield tail
