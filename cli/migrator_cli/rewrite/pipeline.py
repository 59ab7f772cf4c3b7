"""The file side of `migrator rewrite`: which files there are, each streamed through its container, the diff, --apply.

`plan(paths)` walks the inputs (sorted; a symlink inside a tree is never followed, so nothing outside it is read or
written and nothing is rewritten twice; .git and backup directories are passed over) and says what each file is.
`rewrite_file` streams one file through its container into a sink: on a dry run the sink only counts bytes (a 10 GB
dump needs no 10 GB of free disk to be looked at); with --apply it is a temporary file beside the original that is
synced, the original copied into the backup directory, and the temporary file moved over the original
(`os.replace`: a crash at any point leaves the original, or the whole new file). A file nothing changed in is neither
written nor backed up.

The diff is written as records change (diff.py's `DiffWriter`: hunks as `diff -u` makes them), in the form
`patch -p1` and `git apply` take, run from the directory the names are relative to (`display_name`: the working
directory for files under it).

Limits: a file with several hard links is replaced by a new file under its name (its other names keep the old
text, as with any editor that saves by rename); its owner is kept only when we may (as root).
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import tempfile
from collections import Counter
from collections.abc import Buffer, Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, NamedTuple, TextIO

from . import files
from .containers import TextRewrite, container
from .containers.values import Counts
from .diff import DiffWriter

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
