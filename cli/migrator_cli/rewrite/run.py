"""One `migrator rewrite` run over the paths given: every file planned, streamed through the engine, counted.

The pipeline (pipeline.py) knows files and containers, the engine (engine.py) knows embeds; this joins them: it
names each file to the engine before its texts go through, writes the diff where asked, and puts the files' counts
into the engine's report, so one summary says both what was read and what was found.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TextIO

from ..errors import CliError
from .containers import ContainerError
from .engine import Engine
from .pipeline import Tally, default_backup_dir, display_name, plan, rewrite_file

PROGRESS_EVERY_S = 5.0


def run_paths(
    paths: list[str],
    engine: Engine,
    *,
    apply: bool = False,
    backup_dir: str | None = None,
    diff_path: str | None = None,
    csv_column: str | None = None,
    progress: TextIO | None = None,
) -> Tally:
    """Rewrite every file under `paths` (dry run unless `apply`); `diff_path` "-" is standard output, None no diff.
    Returns the files' tally; the embeds' outcomes are in `engine.report`."""
    backup = Path(backup_dir) if backup_dir else (default_backup_dir(Path(paths[0])) if apply else None)
    tally = Tally()
    last_shown = time.monotonic()
    try:
        planned = list(plan(paths, csv_column, skip=[backup] if backup else ()))
    except FileNotFoundError as exc:
        raise CliError(str(exc)) from None
    with _diff_stream(diff_path) as diff_out:
        for number, item in enumerate(planned, start=1):
            tally.planned(item)
            if item.kind is None:
                continue
            name = display_name(item.path)
            engine.at(name)
            try:
                result = rewrite_file(
                    item.path,
                    item.kind,
                    engine,
                    csv_column,
                    apply=apply,
                    backup_dir=backup,
                    diff_out=diff_out,
                    name=name,
                )
            except ContainerError as exc:  # e.g. a CSV without the column: this file is skipped, the rest go on
                tally.by_kind[item.kind] -= 1
                tally.skipped[f"{item.kind}: {exc}"] += 1
                continue
            except OSError as exc:
                raise CliError(f"{name}: {exc.strerror or exc}") from None
            tally.done(result)
            if progress is not None and time.monotonic() - last_shown >= PROGRESS_EVERY_S:
                last_shown = time.monotonic()
                found = sum(engine.report.found.values())
                print(f"[rewrite] {number} of {len(planned)} files, {found} embeds found", file=progress, flush=True)
    report = engine.report
    report.files.update({k: n for k, n in tally.by_kind.items() if n})
    report.skipped.update(tally.skipped)
    report.changed_files += tally.files_changed
    report.changed_records += tally.records_changed
    report.bytes_read += tally.bytes_in
    report.values.update({k: v for k, v in vars(tally.values).items() if v})
    if apply and backup is not None and tally.files_changed and progress is not None:
        print(f"[rewrite] originals of the {tally.files_changed} changed files kept in {backup}", file=progress)
    return tally


@contextlib.contextmanager
def _diff_stream(path: str | None) -> Iterator[BinaryIO | None]:
    if path is None:
        yield None
    elif path == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
    else:
        try:
            out = open(path, "wb")
        except OSError as exc:
            raise CliError(f"cannot write the diff to {path}: {exc.strerror}") from None
        with out:
            yield out
