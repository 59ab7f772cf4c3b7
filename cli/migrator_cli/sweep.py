"""`migrator inventory --from PLATFORM`: a source library listed into an inventory `migrator load` takes as it is.

The source is listed page by page (migrator.sources: each platform's own paging, paced at its
documented rate, 429s and spent quotas waited out). Every fetchable video becomes one JSON
Lines row (and one CSV row on request) whose `source_url` is a source reference, resolved by
the uploader only at the create; every video that can never be fetched goes to a file of its
own with the reason, counted and never loaded. After each page the cursor and the byte length
of every file written are saved (`--state`), so an interrupted sweep resumes where it stopped
and rewrites nothing twice; a finished sweep records its mark (the newest change it saw), from
which `--since last` lists only what was added or changed after it. Memory stays flat: rows
stream to disk and repeats are remembered on disk (inventory.Deduper).

This module is the CLI's adapter over the sweep the stack's mirror runs too (migrator.sweeping): its
files (the outputs, the state file, the mark file) are one implementation of the sweep's sink and
checkpoint, and its words for the operator.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TextIO

from migrator.messages import AssetMessage, encode_message, message_doc
from migrator.sources import HTTP_SOURCES, PLATFORMS, Page, Source, Unfetchable
from migrator.sweeping import (
    MARK_OVERLAP_S,
    PENDING_MAX_S,
    RECHECK_BATCH,
    Failure,
    Lister,
    Stop,
    SweepFailed,
    delta_of,
    iso,
    next_mark,
    pending_of,
    recorded,
    sweep_mark,
)
from migrator.sweeping import SweepState as CoreSweepState

from .errors import CliError
from .inventory import KNOWN_COLUMNS, Deduper
from .progress import Progress
from .source_credentials import ENV_CREDENTIALS

EXIT_INTERRUPTED = 130
MAX_SHOWN = 20  # unfetchable videos printed one by one; the rest are in their file


def parse_since(text: str) -> float | str:
    """`--since`: an RFC 3339 time, epoch seconds, or "last" (the previous sweep's mark)."""
    if text == "last":
        return text
    try:
        return float(text)
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is not a time (RFC 3339, epoch seconds, or last)") from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


# --- where a sweep is (the state file) --------------------------------------------------------------------


class SweepState(CoreSweepState):
    """The sweep's state (migrator.sweeping.SweepState) kept in a JSON file beside the outputs (`--state`)."""

    @classmethod
    def load(cls, path: Path) -> SweepState | None:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, UnicodeDecodeError):
            raise CliError(
                f"the state file {path} cannot be read: delete it (or pass --restart) to start over"
            ) from None
        try:
            return cls.from_doc(doc)
        except TypeError:
            raise CliError(f"the state file {path} is not a sweep's state: delete it to start over") from None

    def save(self, path: Path) -> None:
        """Atomically: a crash leaves the previous page's state, never half of one."""
        scratch = path.with_name(path.name + ".tmp")
        with open(scratch, "w", encoding="utf-8") as out:
            json.dump(self.as_doc(), out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(scratch, path)


def read_mark(path: Path, platform: str) -> float:
    """The mark the last finished sweep of `platform` left in `path`."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        mark = doc[platform]["mark"]
    except FileNotFoundError:
        raise CliError(f"--since last: no earlier sweep of {platform} recorded in {path}") from None
    except (OSError, ValueError, KeyError, TypeError):
        raise CliError(f"--since last: {path} holds no mark for {platform}") from None
    if not isinstance(mark, int | float):
        raise CliError(f"--since last: {path} holds no mark for {platform}")
    return float(mark)


def _record(path: Path | None, platform: str) -> dict | None:
    """The mark record of `platform` in the mark file `path` (None: no file, no record, or not readable)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))[platform] if path else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record if isinstance(record, dict) else None


def read_pending(path: Path | None, platform: str) -> dict:
    """The videos the last recorded sweep of `platform` left still processing ({} when none, or no file)."""
    return pending_of(_record(path, platform))


def read_delta(path: Path | None, platform: str, since: float | None) -> str | None:
    """The cursor the last recorded sweep of `platform` handed on for a delta (None: none, or `since` asks for
    more than the changes since that sweep: an earlier time than its mark)."""
    return delta_of(_record(path, platform) if since is not None else None, since)


def write_mark(
    path: Path,
    platform: str,
    mark: float | None,
    swept_at: float,
    pending: dict | None = None,
    delta: str | None = None,
) -> None:
    """Record a finished sweep of `platform`: its mark (None: it saw nothing new, the last mark stays) and
    the videos it left still processing (sweeping.recorded)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError):
        doc = {}
    doc = doc if isinstance(doc, dict) else {}
    doc[platform] = recorded(doc.get(platform), mark, swept_at, pending, delta)
    scratch = path.with_name(path.name + ".tmp")
    scratch.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    os.replace(scratch, path)


# --- the outputs --------------------------------------------------------------------------------------------


CSV_COLUMNS = KNOWN_COLUMNS


def csv_cells(msg: AssetMessage) -> list[str]:
    """One message as the CSV `migrator load` reads (inventory._csv_row): JSON for lists and objects."""
    doc = message_doc(msg)
    cells = []
    for column in CSV_COLUMNS:
        value = doc.get("id" if column == "id" else column)
        if value is None:
            cells.append("")
        elif isinstance(value, dict | list):
            cells.append(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
        else:
            cells.append(str(value))
    return cells


class Outputs:
    """The files a sweep writes, each truncated on resume to what the saved state counted."""

    def __init__(self, rows: Path, unfetchable: Path, csv_path: Path | None, lengths: Mapping[str, int], fresh: bool):
        self.paths = {"rows": rows, "unfetchable": unfetchable, **({"csv": csv_path} if csv_path else {})}
        self.files: dict[str, IO[str]] = {}
        for name, path in self.paths.items():
            known = lengths.get(str(path))
            if fresh or known is None:
                out = open(path, "w", encoding="utf-8", newline="")
            else:
                out = open(path, "r+", encoding="utf-8", newline="")
                out.seek(known)
                out.truncate()
            self.files[name] = out
        self.csv = csv.writer(self.files["csv"]) if "csv" in self.files else None
        if self.csv is not None and self.files["csv"].tell() == 0:
            self.csv.writerow(CSV_COLUMNS)

    def row(self, msg: AssetMessage) -> None:
        self.files["rows"].write(encode_message(msg) + "\n")
        if self.csv is not None:
            self.csv.writerow(csv_cells(msg))

    def unfetchable(self, entry: Unfetchable) -> None:
        self.files["unfetchable"].write(json.dumps(entry.as_dict(), ensure_ascii=False) + "\n")

    def lengths(self) -> dict[str, int]:
        for out in self.files.values():
            out.flush()
        return {str(self.paths[name]): out.tell() for name, out in self.files.items()}

    def close(self) -> None:
        for out in self.files.values():
            out.close()


def _seen_ids(path: Path, deduper: Deduper) -> None:
    """A resumed sweep remembers the ids it wrote already (streamed, on disk)."""
    with contextlib.suppress(FileNotFoundError), open(path, encoding="utf-8") as rows:
        for line in rows:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                doc = json.loads(line)
                deduper.check(doc["id"], doc["source_url"])


# --- the sweep ---------------------------------------------------------------------------------------------


@dataclass
class SweepSummary:
    platform: str
    output: str
    unfetchable_output: str
    csv_output: str | None = None
    rows: int = 0
    unfetchable: int = 0
    skipped: int = 0
    repeats: int = 0
    pages: int = 0
    requests: int = 0
    throttled: int = 0
    elapsed_s: float = 0.0
    resumed_at: int = 0  # rows an earlier run had written already
    since: float | None = None
    mark: float | None = None
    done: bool = False
    limit_reached: bool = False
    interrupted: bool = False
    reasons: Counter = field(default_factory=Counter)
    # Where the next `--since last` starts once what this sweep listed is recorded (None: nothing to record):
    # written by the sweep itself when it is given a mark file, else by its caller (`load --from`, after the
    # load has sent every row).
    next_mark: float | None = None
    mark_recorded: bool = False
    # Videos the platform was still processing at the end (not written): the next sweep asks for each again.
    pending: int = 0
    next_pending: dict = field(default_factory=dict)
    next_delta: str | None = None  # the cursor a delta of a platform read from one starts at (Dropbox)

    @property
    def listed(self) -> int:
        return self.rows + self.unfetchable

    @property
    def exit_code(self) -> int:
        return EXIT_INTERRUPTED if self.interrupted else 0

    def as_dict(self) -> dict:
        doc = {k: v for k, v in asdict(self).items() if k not in ("reasons", "next_pending")}
        return {**doc, "reasons": dict(self.reasons), "since_time": iso(self.since), "mark_time": iso(self.mark)}

    def lines(self) -> list[str]:
        took = f"{self.elapsed_s:.1f} s"
        rate = self.listed / self.elapsed_s if self.elapsed_s > 0 else 0.0
        out = [f"source          {self.platform}" + (f", changed since {iso(self.since)}" if self.since else "")]
        if self.resumed_at:
            out.append(f"resumed         after {self.resumed_at:,} rows written by an earlier run")
        out.append(f"listed          {self.listed:,} videos in {self.pages:,} pages, {took} ({rate:,.0f} videos/s)")
        out.append(
            f"rows            {self.rows:,} written to {self.output}"
            + (f" and {self.csv_output}" if self.csv_output else "")
        )
        out.append(
            f"unfetchable     {self.unfetchable:,}"
            + (f" (kept out; listed in {self.unfetchable_output})" if self.unfetchable else "")
        )
        for reason, count in self.reasons.most_common():
            out.append(f"  {count:>6,}  {reason}")
        if self.skipped:
            out.append(f"skipped         {self.skipped:,} objects that are not videos")
        if self.repeats:
            out.append(f"repeats         {self.repeats:,} videos listed twice (written once)")
        if self.pending:
            out.append(
                f"pending         {self.pending:,} still processing at the source: not written; the next sweep"
                " (--since last) asks for each again"
            )
        out.append(f"requests        {self.requests:,} ({self.throttled:,} waits for the source's rate limit)")
        if self.done and self.mark_recorded:
            out.append(f"mark            {iso(self.next_mark)}: the next --since last starts here")
        elif self.done:
            out.append(
                f"mark            {iso(self.next_mark) or 'none (nothing listed)'}: not recorded by the listing itself"
            )
        elif self.limit_reached:
            out.append("limit           stopped at --limit; run the same command again to go on")
        elif self.interrupted:
            out.append("interrupted     run the same command again to resume where this one stopped")
        return out


def sweep(
    source: Source,
    output: Path,
    *,
    unfetchable_output: Path | None = None,
    csv_output: Path | None = None,
    state_path: Path | None = None,
    mark_path: Path | None = None,  # None: the caller records `next_mark` when what was listed is safe
    pending_path: Path | None = None,  # where the last sweep left its videos still processing (the mark file)
    since: float | None = None,
    restart: bool = False,
    limit: int | None = None,
    tracks: bool = True,
    out: TextIO = sys.stderr,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.time,
) -> SweepSummary:
    """List `source` into `output` (JSON Lines), resuming from `state_path` when it holds an unfinished
    sweep of the same platform and `since`; see the module's description. The videos the last sweep left
    still processing (`pending_path`, else `mark_path`) are asked for again first, one by one."""
    unfetchable_output = unfetchable_output or output.with_name(output.name + ".unfetchable.jsonl")
    state_path = state_path or output.with_name(output.name + ".state.json")
    stop = stop or threading.Event()
    state = None if restart else SweepState.load(state_path)
    resumable = state is not None and not state.done and state.platform == source.platform and state.since == since
    if state is None or not resumable:  # state is None: not resumable
        carried = read_pending(pending_path or mark_path, source.platform)
        state = SweepState(source.platform, since=since, carried=carried)
        state.cursor = read_delta(pending_path or mark_path, source.platform, since)
    if state.began is None:  # a new sweep, or one a release before this began (its start unknown: now)
        state.began = clock()
    summary = SweepSummary(
        source.platform, str(output), str(unfetchable_output), str(csv_output) if csv_output else None, since=since
    )
    summary.resumed_at = state.rows if resumable else 0
    outputs = Outputs(output, unfetchable_output, csv_output, state.lengths, fresh=not resumable)
    files = _Files(outputs, Progress(out, None, f"listing {source.platform}"), state_path, state)
    if hasattr(source, "notice"):  # what the source waits for (a rate limit's lock-out) is said beside the bar
        source.notice = files.progress.write
    started = clock()
    lister = None
    try:
        with Deduper() as deduper:
            files.deduper = deduper
            if resumable:
                _seen_ids(output, deduper)
            lister = Lister(source, state, files, files, clock, tracks)
            listed = lister.recheck(lambda: not stop.is_set())
            if listed is Stop.DONE:
                listed = lister.list_pages(
                    lambda: not stop.is_set(),
                    lambda: limit is not None and state.rows - summary.resumed_at >= limit,
                )
    except SweepFailed as exc:
        raise CliError(_failure_words(exc, source.platform, state, state_path)) from None
    finally:
        outputs.close()
        files.progress.close()
        summary.elapsed_s = clock() - started
        summary.requests, summary.throttled = source.requests, source.throttled
        summary.rows, summary.unfetchable, summary.skipped = state.rows, state.unfetchable, state.skipped
        summary.pages, summary.mark, summary.reasons = state.pages, state.mark, Counter(state.reasons)
        summary.repeats = lister.repeats if lister else 0
    summary.limit_reached, summary.interrupted = listed is Stop.ENOUGH, listed is Stop.STOPPED
    if summary.unfetchable > files.shown:
        print(f"… {summary.unfetchable - files.shown:,} more unfetchable listed in {unfetchable_output}", file=out)
    summary.done, summary.pending = state.done, len(state.pending)
    summary.next_pending, summary.next_delta = dict(state.pending), state.delta
    if state.done:
        summary.next_mark = next_mark(state)
        if mark_path is not None:  # the pending videos always; the mark where this sweep saw something
            write_mark(mark_path, source.platform, summary.next_mark, started, summary.next_pending, state.delta)
            summary.mark_recorded = summary.next_mark is not None
    return summary


def _failure_words(exc: SweepFailed, platform: str, state: SweepState, state_path: Path) -> str:
    """A sweep that cannot go on, as the operator reads it: why, and where the same command resumes."""
    if exc.failure is Failure.RECHECK:
        return (
            f"asking {platform} for a video the last sweep left processing failed: {exc.reason};"
            f" the same command resumes after the {state.rechecked:,} asked already"
        )
    if exc.failure is Failure.STUCK:
        return (
            f"listing {platform} stopped: {exc.reason}; the {state.pages:,} pages before it are saved"
            f" in {state_path}, and the same command resumes there"
        )
    return (
        f"listing {platform} failed: {exc.reason}; the same command resumes after the "
        f"{state.pages:,} pages saved in {state_path}"
    )


@dataclass
class _Files:
    """The CLI's sink and checkpoint for the shared sweep (migrator.sweeping): rows to the JSON Lines (and CSV)
    output once each, unfetchable ones to their file (the first MAX_SHOWN said beside the progress bar), and
    the state file saved after every page with the byte length of every file written through it."""

    outputs: Outputs
    progress: Progress
    state_path: Path
    state: SweepState
    deduper: Deduper | None = None
    shown: int = 0

    def row(self, msg: AssetMessage) -> bool:
        assert self.deduper is not None
        if self.deduper.check(msg.asset_id, msg.source_url) != Deduper.NEW:
            return False
        self.outputs.row(msg)
        return True

    def unfetchable(self, entry: Unfetchable) -> None:
        self.outputs.unfetchable(entry)
        if self.shown < MAX_SHOWN:
            self.progress.write(f"unfetchable: {entry.asset_id}: {entry.reason}")
            self.shown += 1

    def pending(self, entry: Unfetchable) -> None:
        pass  # carried in the state, and counted in the summary

    def flush(self, page: Page) -> None:
        state = self.state
        if page.remaining is not None:
            self.progress.total = state.rows + state.unfetchable + page.remaining
        self.progress.update(
            state.rows + state.unfetchable, f"{state.unfetchable:,} unfetchable, {state.pages:,} pages"
        )

    def save(self, state: CoreSweepState) -> None:  # `state` is self.state, the file's
        self.state.lengths = self.outputs.lengths()
        self.state.save(self.state_path)


def build_source(
    platform: str,
    *,
    credentials: dict | None,
    base_url: str | None,
    rate: float | None,
    s3=None,
    s3_url: str | None = None,
) -> Source:
    """The source to list: an HTTP platform with the operator's credentials, or an S3 prefix."""
    from migrator.sources import S3Source, build

    if platform not in PLATFORMS:
        raise CliError(f"unknown source {platform!r}: one of {', '.join(PLATFORMS)}")
    if platform == "s3":
        from .inventory import parse_s3_source

        if not s3_url:
            raise CliError("--from s3 needs --s3 s3://bucket/prefix")
        bucket, prefix = parse_s3_source(s3_url)
        return S3Source(s3, bucket, prefix)
    if not credentials:
        names = " and ".join(ENV_CREDENTIALS[platform].values())
        raise CliError(
            f"no {platform} credentials: pass --credentials FILE or --source-profile NAME, or set {names}"
            " (docs/sources.md has each platform's)"
        )
    return build(platform, lambda: credentials, base_url, patient=True, rate_per_s=rate)


def default_output(platform: str) -> Path:
    return Path(f"{platform}-inventory.jsonl")


__all__ = [
    "HTTP_SOURCES",
    "MARK_OVERLAP_S",
    "PENDING_MAX_S",
    "RECHECK_BATCH",
    "SweepState",
    "SweepSummary",
    "build_source",
    "iso",
    "parse_since",
    "sweep",
    "sweep_mark",
]
