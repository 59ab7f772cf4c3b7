"""The file side of `migrator rewrite`: which files there are, each streamed through its container, the diff, --apply.

`plan(paths)` walks the inputs (sorted; a symlink inside a tree is never followed, so nothing outside it is read or
written and nothing is rewritten twice; .git and backup directories are passed over) and says what each file is.
`rewrite_file` streams one file through its container into a sink: on a dry run the sink only counts bytes (a 10 GB
dump needs no 10 GB of free disk to be looked at); with --apply it is a temporary file beside the original that is
synced, the original copied into the backup directory, and the temporary file moved over the original
(`os.replace`: a crash at any point leaves the original, or the whole new file). A file nothing changed in is neither
written nor backed up.

The diff is written as records change (`DiffWriter`: hunks as `diff -u` makes them, 3 lines of context read from the
original beside the container), in the form `patch -p1` and `git apply` take, run from the directory the names are
relative to (`display_name`: the working directory for files under it).

Limits: a file with several hard links is replaced by a new file under its name (its other names keep the old
text, as with any editor that saves by rename); its owner is kept only when we may (as root).
"""

from __future__ import annotations

import difflib
import io
import os
import shutil
import stat
import tempfile
from collections import Counter, deque
from collections.abc import Buffer, Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, NamedTuple, TextIO

from . import files
from .containers import TextRewrite, container, lines
from .containers.values import Counts

CONTEXT = 3
HUNK_IN_MEMORY = 1 << 22  # a hunk's bytes held in memory before they spill to a temporary file
SKIPPED_DIRECTORIES = frozenset({".git", ".hg", ".svn"})
BACKUP_MARK = ".migrator-rewrite-backup"  # a file in every backup directory: later runs pass the directory over
TEMPORARY_SUFFIX = ".migrator-rewrite.tmp"


class Planned(NamedTuple):
    path: Path
    kind: str | None  # the container's kind, None when skipped
    reason: str  # why it is skipped ("" when it is not)


@dataclass
class FileResult:
    path: Path
    name: str  # as the diff and the backup name it
    kind: str
    records_changed: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    backup: Path | None = None  # where the original was copied (applied files only)
    values: Counts | None = None  # a database container's figures (SQL dumps, WXR): values, serialized fixed, ...

    @property
    def changed(self) -> bool:
        return self.records_changed > 0


@dataclass
class Tally:
    """The summary's counts over a run."""

    files_seen: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)  # by reason
    files_changed: int = 0
    records_changed: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    values: Counts = field(default_factory=Counts)  # the database containers' figures, over every file

    def planned(self, item: Planned) -> None:
        self.files_seen += 1
        if item.kind is None:
            self.skipped[item.reason] += 1
        else:
            self.by_kind[item.kind] += 1

    def done(self, result: FileResult) -> None:
        self.files_changed += result.changed
        self.records_changed += result.records_changed
        self.bytes_in += result.bytes_in
        self.bytes_out += result.bytes_out
        if result.values is not None:
            self.values.add(result.values)


def plan(paths: Iterable[str | Path], column: str | None = None, skip: Iterable[Path] = ()) -> Iterator[Planned]:
    """Every file under `paths`, in order, with its kind or why it is skipped. A path named is followed even when
    it is a symlink (the operator chose it); inside a tree, none is. `skip` are directories to pass over (the
    backup directory); any directory holding BACKUP_MARK is passed over too."""
    roots = [Path(p) for p in paths]
    for root in roots:
        if not root.exists():
            raise FileNotFoundError(f"no such file or directory: {root}")
    passed = {p.resolve() for p in skip}
    for root in _outermost(roots):
        if root.is_dir():
            yield from _walk(root, column, passed)
        else:
            yield _classify(root.resolve() if root.is_symlink() else root, column)


def _outermost(roots: list[Path]) -> list[Path]:
    """The roots in the order given, less any named twice or inside another named directory (each file once)."""
    resolved = [root.resolve() for root in roots]
    directories = {r for r in resolved if r.is_dir()}
    kept: list[Path] = []
    seen: set[Path] = set()
    for root, real in zip(roots, resolved, strict=True):
        if real in seen or any(parent in directories for parent in real.parents):
            continue
        seen.add(real)
        kept.append(root)
    return kept


def _walk(directory: Path, column: str | None, passed: set[Path]) -> Iterator[Planned]:
    if directory.resolve() in passed or (directory / BACKUP_MARK).exists():
        return
    with os.scandir(directory) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
    for entry in entries:
        path = directory / entry.name
        if entry.is_symlink():
            yield Planned(path, None, files.SYMLINK)
        elif entry.is_dir(follow_symlinks=False):
            if entry.name not in SKIPPED_DIRECTORIES:
                yield from _walk(path, column, passed)
        elif entry.is_file(follow_symlinks=False):
            yield _classify(path, column)
        else:
            yield Planned(path, None, files.SPECIAL)


def _classify(path: Path, column: str | None) -> Planned:
    if path.name.endswith(TEMPORARY_SUFFIX):
        return Planned(path, None, files.LEFTOVER)
    if not path.is_file():
        return Planned(path, None, files.SPECIAL)
    try:
        with path.open("rb") as f:
            head = f.read(files.HEAD_SIZE)
    except OSError:
        return Planned(path, None, files.UNREADABLE)
    kind, reason = files.classify(path, head, column)
    return Planned(path, kind, reason)


def display_name(path: Path, base: Path | None = None) -> str:
    """The name a file has in the diff and in the backup directory: relative to `base` (the working directory) when
    under it, else its absolute path without the leading "/" (then apply the diff from "/")."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path(os.path.abspath(base or Path.cwd()))).as_posix()
    except ValueError:
        return absolute.relative_to(absolute.anchor).as_posix()


def default_backup_dir(root: Path, now: datetime | None = None) -> Path:
    """A new directory beside `root` (the first input), named for it and the time: site.backup-20261206T180000Z."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    absolute = Path(os.path.abspath(root))
    return absolute.parent / f"{absolute.name or 'root'}.backup-{stamp}"


class _Counter(io.RawIOBase):
    """A sink that keeps nothing and counts the bytes written to it (the dry run's output)."""

    def __init__(self) -> None:
        self.count = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Buffer, /) -> int:
        size = memoryview(data).nbytes
        self.count += size
        return size


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


def rewrite_file(
    path: Path,
    kind: str,
    rewrite: TextRewrite,
    column: str | None = None,
    apply: bool = False,
    backup_dir: Path | None = None,
    diff_out: BinaryIO | None = None,
    name: str | None = None,
) -> FileResult:
    """Stream `path` through its kind's container; write the diff of what changed to `diff_out` (bytes: e.g.
    sys.stdout.buffer); with `apply`, put the result in place atomically, the original copied to `backup_dir`/`name`
    first. `name` is the file's name in the diff and the backup (`display_name` by default)."""
    run = container(kind, column)
    name = name or display_name(path)
    result = FileResult(path=path, name=name, kind=kind, bytes_in=path.stat().st_size)
    if apply and backup_dir is None:
        raise ValueError("--apply needs a backup directory")
    with ExitStack() as stack:
        src = stack.enter_context(open_text(path))
        diff = None
        if diff_out is not None:
            diff = DiffWriter(diff_out, name, stack.enter_context(open_text(path)))

        def changed(first_line: int, old: str, new: str) -> None:
            result.records_changed += 1
            if diff is not None:
                diff.record(first_line, old, new)

        def stream(dst: TextIO) -> None:
            figures = run(src, dst, rewrite, changed)
            if isinstance(figures, Counts):
                result.values = figures
            dst.flush()
            if diff is not None:
                diff.finish()

        if not apply:
            sink = _Counter()
            with io.TextIOWrapper(
                io.BufferedWriter(sink), encoding="utf-8", errors="surrogateescape", newline=""
            ) as out:
                stream(out)
                result.bytes_out = sink.count
            return result
        assert backup_dir is not None
        original = os.fstat(src.fileno())
        descriptor, temporary_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMPORARY_SUFFIX)
        temporary = Path(temporary_name)
        try:
            with open(descriptor, "w", encoding="utf-8", errors="surrogateescape", newline="") as written:
                stream(written)
                if result.changed:
                    os.fsync(written.fileno())
            result.bytes_out = temporary.stat().st_size
            if not result.changed:
                temporary.unlink()
                return result
            _keep_owner_and_mode(temporary, original)
            result.backup = _back_up(path, backup_dir, name)
            os.replace(temporary, path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
    _sync_directory(path.parent)
    return result


def open_text(path: Path) -> TextIO:
    """`path` for reading as containers read: UTF-8, any byte kept (surrogateescape), line ends untouched."""
    return path.open(encoding="utf-8", errors="surrogateescape", newline="")


def _keep_owner_and_mode(path: Path, original: os.stat_result) -> None:
    os.chmod(path, stat.S_IMODE(original.st_mode))
    if (original.st_uid, original.st_gid) != (os.getuid(), os.getgid()):
        try:
            os.chown(path, original.st_uid, original.st_gid)
        except PermissionError:  # only root may give a file away; the mode is kept regardless
            pass


def _back_up(path: Path, backup_dir: Path, name: str) -> Path:
    if not backup_dir.exists():
        backup_dir.mkdir(parents=True)
        (backup_dir / BACKUP_MARK).write_text("The originals of files `migrator rewrite --apply` changed.\n")
    target = backup_dir / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(path, target)
    with target.open("rb") as copy:  # on disk before the original is replaced
        os.fsync(copy.fileno())
    _sync_directory(target.parent)
    return target


def _sync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
