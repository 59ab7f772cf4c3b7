"""The unified diff of a rewrite, written as records change (pure apart from the streams it is given).

`DiffWriter` takes each changed record (its first line, old text, new text) and writes hunks as `diff -u` makes them,
with 3 lines of context read from the original beside the container (a one-line record, a CSV row or a JSON line,
has none of its own, and `git apply` refuses a hunk without trailing context unless it ends the file). Hunks closer
than twice the context merge; a big hunk spills to a temporary file, so memory stays flat. `line_changes` aligns a
record's old and new lines, first on lines found once on each side (a long page with scattered changes is aligned in
linear time where plain difflib is quadratic), then with difflib between those anchors.
"""

from __future__ import annotations

import difflib
import shutil
import tempfile
from collections import Counter, deque
from typing import BinaryIO, TextIO

from .containers import lines

CONTEXT = 3
HUNK_IN_MEMORY = 1 << 22  # a hunk's bytes held in memory before they spill to a temporary file


def split_lines(text: str) -> list[str]:
    """`text`'s lines, each with its "\\n" (the last maybe without): lines as `patch` counts them."""
    pieces = text.split("\n")
    found = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        found.append(pieces[-1])
    return found


def line_changes(before: list[str], after: list[str]) -> list[tuple[bool, int, int, int, int]]:
    """How `after` differs from `before`: (equal, a1, a2, b1, b2) spans in order. Patience-style: the lines found
    once in each, in the same order, anchor the alignment and difflib aligns only the stretches between anchors;
    difflib over a whole record whose every tenth line changed took 10 s a megabyte (it is quadratic in the
    number of matching blocks), this takes milliseconds."""
    spans: list[tuple[bool, int, int, int, int]] = []
    start = 0
    while start < min(len(before), len(after)) and before[start] == after[start]:
        start += 1
    end_a, end_b = len(before), len(after)
    while end_a > start and end_b > start and before[end_a - 1] == after[end_b - 1]:
        end_a, end_b = end_a - 1, end_b - 1
    if start:
        spans.append((True, 0, start, 0, start))
    a, b = start, start
    for anchor_a, anchor_b in [*_anchors(before, after, start, end_a, end_b), (end_a, end_b)]:
        if (a, b) != (anchor_a, anchor_b):
            matcher = difflib.SequenceMatcher(None, before[a:anchor_a], after[b:anchor_b], autojunk=False)
            for tag, a1, a2, b1, b2 in matcher.get_opcodes():
                spans.append((tag == "equal", a + a1, a + a2, b + b1, b + b2))
        if anchor_a < end_a:
            spans.append((True, anchor_a, anchor_a + 1, anchor_b, anchor_b + 1))
        a, b = anchor_a + 1, anchor_b + 1
    if end_a < len(before):
        spans.append((True, end_a, len(before), end_b, len(after)))
    return spans


def _anchors(before: list[str], after: list[str], start: int, end_a: int, end_b: int) -> list[tuple[int, int]]:
    """The longest run, in order in both, of lines that occur once in before[start:end_a] and once in
    after[start:end_b] (longest increasing subsequence, O(n log n))."""
    once_a = Counter(before[start:end_a])
    once_b = Counter(after[start:end_b])
    where_b = {after[j]: j for j in range(start, end_b) if once_b[after[j]] == 1}
    pairs = [(i, where_b[before[i]]) for i in range(start, end_a) if once_a[before[i]] == 1 and before[i] in where_b]
    tails: list[int] = []  # tails[k]: index in pairs of the smallest last j of an increasing run of length k + 1
    previous: list[int] = []
    for index, (_, j) in enumerate(pairs):
        k = _bisect_tails(pairs, tails, j)
        previous.append(tails[k - 1] if k else -1)
        if k == len(tails):
            tails.append(index)
        else:
            tails[k] = index
    run: list[tuple[int, int]] = []
    index = tails[-1] if tails else -1
    while index >= 0:
        run.append(pairs[index])
        index = previous[index]
    return run[::-1]


def _bisect_tails(pairs: list[tuple[int, int]], tails: list[int], j: int) -> int:
    """The first k whose run's last j is not below `j`."""
    low, high = 0, len(tails)
    while low < high:
        middle = (low + high) // 2
        if pairs[tails[middle]][1] < j:
            low = middle + 1
        else:
            high = middle
    return low


def _range(start: int, count: int) -> str:
    """A hunk's range: 1-based first line and count; an empty range names the line before it (as diff -u does)."""
    if count == 1:
        return str(start)
    return f"{start if count else start - 1},{count}"


def header_name(name: str) -> str:
    """A name as a diff header writes it so that `patch` and `git apply` read it back: C-quoted when it holds a
    quote, a backslash or a control character (as git writes it), followed by a tab when it holds a space."""
    if any(c in name for c in '"\\') or any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        escapes = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
        quoted = "".join(escapes.get(c, f"\\{ord(c):03o}" if ord(c) < 0x20 or ord(c) == 0x7F else c) for c in name)
        return f'"{quoted}"'
    return f"{name}\t" if " " in name else name


class DiffWriter:
    """A file's unified diff, written as its changed records come (in order).

    A record may be one line (a CSV row, a JSON line) and a hunk needs context around it (`git apply` anchors a hunk
    without trailing context to the end of the file), so the context comes from the original file itself, read
    forward beside the container: the lines between records are the equal lines, hunks closer than twice the context
    merge, as `diff -u` makes them. A hunk's lines wait in a spooled file until it closes and its counts are known,
    so a file changed on every line is still diffed in flat memory."""

    def __init__(self, out: BinaryIO, name: str, original: TextIO) -> None:
        self.out = out
        self.name = name
        self.original = lines(original)
        self.old_line = 0  # lines of the original passed
        self.new_line = 0  # lines of the new file passed
        self.recent: deque[str] = deque(maxlen=CONTEXT)  # equal lines before the next change
        self.tail: list[str] = []  # equal lines after the open hunk's last change
        self.hunk: _Hunk | None = None
        self.started = False

    def record(self, first_line: int, old: str, new: str) -> None:
        while self.old_line < first_line - 1:
            self._equal(next(self.original))
        before, after = split_lines(old), split_lines(new)
        if [next(self.original, "") for _ in before] != before:  # a container's bug: say so rather than misplace hunks
            raise RuntimeError(
                f"{self.name}: the record said to start at line {first_line} is not the file's text there"
            )
        for equal, a1, a2, b1, b2 in line_changes(before, after):
            if equal:
                for line in before[a1:a2]:
                    self._equal(line)
                continue
            for line in before[a1:a2]:
                self._change("-", line)
            for line in after[b1:b2]:
                self._change("+", line)

    def finish(self) -> None:
        """Close the last hunk with the lines after it."""
        while self.hunk is not None:
            line = next(self.original, None) if len(self.tail) < CONTEXT else None
            if line is None:
                self._close(self.tail)
                break
            self._equal(line)

    def _equal(self, line: str) -> None:
        self.old_line += 1
        self.new_line += 1
        if self.hunk is None:
            self.recent.append(line)
            return
        self.tail.append(line)
        if len(self.tail) > 2 * CONTEXT:
            self._close(self.tail[:CONTEXT])
            self.recent.extend(self.tail[-CONTEXT:])
            self.tail = []

    def _change(self, mark: str, line: str) -> None:
        if self.hunk is None:
            self.hunk = _Hunk(self.old_line + 1 - len(self.recent), self.new_line + 1 - len(self.recent))
            for context in self.recent:
                self.hunk.add(" ", context)
            self.recent.clear()
        for context in self.tail:
            self.hunk.add(" ", context)
        self.tail = []
        self.hunk.add(mark, line)
        if mark == "-":
            self.old_line += 1
        else:
            self.new_line += 1

    def _close(self, trailing: list[str]) -> None:
        assert self.hunk is not None
        for context in trailing:
            self.hunk.add(" ", context)
        if not self.started:
            self._write(f"--- {header_name('a/' + self.name)}\n+++ {header_name('b/' + self.name)}\n")
            self.started = True
        hunk, self.hunk, self.tail = self.hunk, None, []
        self._write(f"@@ -{_range(hunk.old_start, hunk.old_count)} +{_range(hunk.new_start, hunk.new_count)} @@\n")
        hunk.body.seek(0)
        shutil.copyfileobj(hunk.body, self.out)
        hunk.body.close()

    def _write(self, text: str) -> None:
        self.out.write(text.encode("utf-8", "surrogateescape"))


class _Hunk:
    def __init__(self, old_start: int, new_start: int) -> None:
        self.old_start, self.new_start = old_start, new_start
        self.old_count = self.new_count = 0
        self.body = tempfile.SpooledTemporaryFile(max_size=HUNK_IN_MEMORY)

    def add(self, mark: str, line: str) -> None:
        self.old_count += mark != "+"
        self.new_count += mark != "-"
        text = mark + line if line.endswith("\n") else f"{mark}{line}\n\\ No newline at end of file\n"
        self.body.write(text.encode("utf-8", "surrogateescape"))
