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
from migrator.sources import (
    HTTP_SOURCES,
    PLATFORMS,
    Page,
    Source,
    SourceError,
    Unfetchable,
    parse_ref,
)
from migrator.sources.paging import PagingGuard

from .errors import CliError
from .inventory import KNOWN_COLUMNS, Deduper
from .progress import Progress
from .source_credentials import ENV_CREDENTIALS

EXIT_INTERRUPTED = 130
MAX_SHOWN = 20  # unfetchable videos printed one by one; the rest are in their file
# A delta sweep starts this long before the mark: what changed in the same second, or on a clock a
# little behind, is listed again (loading it twice costs nothing) rather than missed.
MARK_OVERLAP_S = 60.0


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


def iso(epoch: float | None) -> str | None:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if epoch is not None else None


# --- where a sweep is (the state file) --------------------------------------------------------------------


@dataclass
class SweepState:
    platform: str
    cursor: str | None = None
    since: float | None = None
    rows: int = 0
    unfetchable: int = 0
    skipped: int = 0
    pages: int = 0
    lengths: dict = field(default_factory=dict)  # file path -> bytes written through the last saved page
    reasons: dict = field(default_factory=dict)  # reason -> count
    mark: float | None = None
    done: bool = False
    # When this sweep first began (epoch seconds), kept across resumes: the mark is never later than it,
    # so what changed while a long sweep ran (after it had listed it) is listed again by --since last.
    began: float | None = None
    # Videos the platform was still processing: those the previous sweep left (`carried`, asked for again
    # first, `rechecked` of them so far) and those this sweep leaves (`pending`), each asset id ->
    # {"ref": its source reference, "since": when first seen processing, "reason", "title"}.
    carried: dict = field(default_factory=dict)
    rechecked: int = 0
    pending: dict = field(default_factory=dict)
    # Where the next delta sweep starts, for a platform whose changes are read from a cursor (Dropbox's): the
    # first a page of this sweep handed on (Page.delta), recorded with the mark.
    delta: str | None = None

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
            return cls(**doc)
        except TypeError:
            raise CliError(f"the state file {path} is not a sweep's state: delete it to start over") from None

    def save(self, path: Path) -> None:
        """Atomically: a crash leaves the previous page's state, never half of one."""
        scratch = path.with_name(path.name + ".tmp")
        with open(scratch, "w", encoding="utf-8") as out:
            json.dump(asdict(self), out)
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


def read_pending(path: Path | None, platform: str) -> dict:
    """The videos the last recorded sweep of `platform` left still processing ({} when none, or no file)."""
    try:
        pending = json.loads(path.read_text(encoding="utf-8"))[platform].get("pending") if path else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    if not isinstance(pending, dict):
        return {}
    return {k: v for k, v in pending.items() if isinstance(v, dict) and isinstance(v.get("ref"), str)}


def read_delta(path: Path | None, platform: str, since: float | None) -> str | None:
    """The cursor the last recorded sweep of `platform` handed on for a delta (None: none, or `since` asks for
    more than the changes since that sweep: an earlier time than its mark)."""
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))[platform] if path and since is not None else {}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    delta, mark = (kept.get("delta"), kept.get("mark")) if isinstance(kept, dict) else (None, None)
    if since is None or not isinstance(delta, str) or not isinstance(mark, int | float):
        return None
    if since < mark - MARK_OVERLAP_S - 1:
        return None
    return delta


def write_mark(
    path: Path,
    platform: str,
    mark: float | None,
    swept_at: float,
    pending: dict | None = None,
    delta: str | None = None,
) -> None:
    """Record a finished sweep of `platform`: its mark (None: it saw nothing new, the last mark stays) and
    the videos it left still processing."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError):
        doc = {}
    doc = doc if isinstance(doc, dict) else {}
    before = said if isinstance(said := doc.get(platform), dict) else {}
    mark = mark if mark is not None else before.get("mark")
    doc[platform] = {"mark": mark, "mark_time": iso(mark), "swept_at": iso(swept_at), "pending": pending or {}}
    delta = delta or before.get("delta")  # a platform read from a cursor (Dropbox): where the next delta starts
    if isinstance(delta, str):
        doc[platform]["delta"] = delta
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
    summary.rows, summary.unfetchable, summary.skipped = state.rows, state.unfetchable, state.skipped
    summary.pages, summary.mark, summary.reasons = state.pages, state.mark, Counter(state.reasons)
    outputs = Outputs(output, unfetchable_output, csv_output, state.lengths, fresh=not resumable)
    lister = _Lister(source, state, summary, outputs, Progress(out, None, f"listing {source.platform}"), state_path)
    if hasattr(source, "notice"):  # what the source waits for (a rate limit's lock-out) is said beside the bar
        source.notice = lister.progress.write
    started = clock()
    try:
        with Deduper() as deduper:
            if resumable:
                _seen_ids(output, deduper)
            lister.recheck(deduper, tracks, stop, clock)
            lister.list_pages(deduper, since, tracks, limit, stop, clock)
    finally:
        outputs.close()
        lister.progress.close()
        summary.elapsed_s = clock() - started
        summary.requests, summary.throttled = source.requests, source.throttled
    if summary.unfetchable > lister.shown:
        print(f"… {summary.unfetchable - lister.shown:,} more unfetchable listed in {unfetchable_output}", file=out)
    summary.done, summary.pending = state.done, len(state.pending)
    summary.next_pending, summary.next_delta = dict(state.pending), state.delta
    if state.done:
        summary.next_mark = sweep_mark(summary.mark, state.began) if summary.mark is not None else None
        if mark_path is not None:  # the pending videos always; the mark where this sweep saw something
            write_mark(mark_path, source.platform, summary.next_mark, started, summary.next_pending, state.delta)
            summary.mark_recorded = summary.next_mark is not None
    return summary


# A video still processing at its platform this long after it was first seen so is written off: it goes to
# the unfetchable file with the reason, and no later sweep asks for it again.
PENDING_MAX_S = 7 * 86_400.0
RECHECK_BATCH = 50  # carried videos asked for again between two saves of the state


@dataclass
class _Lister:
    """One sweep's work: what the last sweep left processing asked for again, then the library's pages,
    each page's entries written (rows, unfetchable, still processing) and the state saved after it."""

    source: Source
    state: SweepState
    summary: SweepSummary
    outputs: Outputs
    progress: Progress
    state_path: Path
    shown: int = 0
    guard: PagingGuard = field(default_factory=PagingGuard)

    def recheck(self, deduper: Deduper, tracks: bool, stop: threading.Event, clock: Callable[[], float]) -> None:
        carried = sorted(self.state.carried.items())
        while self.state.rechecked < len(carried) and not stop.is_set():
            batch = carried[self.state.rechecked : self.state.rechecked + RECHECK_BATCH]
            page = Page()
            for _asset_id, held in batch:
                ref = parse_ref(held["ref"])
                found = self._ask(ref.video_id, tracks) if ref else Page()  # gone since: an empty page
                page.entries += found.entries
                page.pending += found.pending
            self._take(page, deduper, clock, carried=dict(batch))
            self.state.rechecked += len(batch)
            self._save(page)
        if self.state.rechecked < len(carried):
            self.summary.interrupted = True

    def _ask(self, video_id: str, tracks: bool) -> Page:
        try:
            return self.source.video(video_id, tracks)
        except SourceError as exc:
            raise CliError(
                f"asking {self.source.platform} for a video the last sweep left processing failed: {exc.reason};"
                f" the same command resumes after the {self.state.rechecked:,} asked already"
            ) from None

    def list_pages(
        self, deduper: Deduper, since, tracks: bool, limit, stop: threading.Event, clock: Callable[[], float]
    ) -> None:
        if self.summary.interrupted:
            return
        state, summary = self.state, self.summary
        while not stop.is_set():
            try:
                page = self.source.page(state.cursor, since, tracks)
            except SourceError as exc:
                raise CliError(
                    f"listing {self.source.platform} failed: {exc.reason}; the same command resumes after the "
                    f"{state.pages:,} pages saved in {self.state_path}"
                ) from None
            stuck = self.guard.check(state.cursor, page)
            if stuck:  # before the page is saved: the resume point stays at the last sound page
                raise CliError(
                    f"listing {self.source.platform} stopped: {stuck}; the {state.pages:,} pages before it are saved"
                    f" in {self.state_path}, and the same command resumes there"
                )
            self._take(page, deduper, clock)
            summary.pages += 1
            if page.newest is not None:
                summary.mark = max(summary.mark or page.newest, page.newest)
            state.cursor = page.cursor
            state.delta = state.delta or page.delta
            state.done = page.cursor is None
            self._save(page)
            if state.done:
                return
            if limit is not None and summary.rows - summary.resumed_at >= limit:
                summary.limit_reached = True
                return
        summary.interrupted = True

    def _take(self, page: Page, deduper: Deduper, clock: Callable[[], float], carried: dict | None = None) -> None:
        """Write `page`'s entries: rows (once each), unfetchable ones with their reason, and those still
        processing kept for the next sweep (from when first seen so; past PENDING_MAX_S, written off)."""
        summary, now = self.summary, clock()
        for waiting in page.pending:
            first = (carried or self.state.carried).get(waiting.asset_id, {}).get("since", now)
            if now - float(first) >= PENDING_MAX_S:
                days = (now - float(first)) / 86_400
                self._unfetchable(
                    Unfetchable(waiting.asset_id, waiting.source_url, f"{waiting.reason} for {days:.0f} days")
                )
                continue
            held = {"ref": waiting.source_url, "since": first, "reason": waiting.reason}
            self.state.pending[waiting.asset_id] = {**held, **({"title": waiting.title} if waiting.title else {})}
        for entry in page.entries:
            self.state.pending.pop(entry.asset_id, None)
            if isinstance(entry, Unfetchable):
                self._unfetchable(entry)
            elif deduper.check(entry.asset_id, entry.source_url) == Deduper.NEW:
                summary.rows += 1
                self.outputs.row(entry)
            else:
                summary.repeats += 1
        summary.skipped += page.skipped

    def _unfetchable(self, entry: Unfetchable) -> None:
        self.summary.unfetchable += 1
        self.summary.reasons[entry.reason] += 1
        self.outputs.unfetchable(entry)
        if self.shown < MAX_SHOWN:
            self.progress.write(f"unfetchable: {entry.asset_id}: {entry.reason}")
            self.shown += 1

    def _save(self, page: Page) -> None:
        state, summary = self.state, self.summary
        state.rows, state.unfetchable, state.skipped = summary.rows, summary.unfetchable, summary.skipped
        state.pages, state.mark, state.reasons = summary.pages, summary.mark, dict(summary.reasons)
        state.lengths = self.outputs.lengths()
        state.save(self.state_path)
        if page.remaining is not None:
            self.progress.total = summary.listed + page.remaining
        self.progress.update(summary.listed, f"{summary.unfetchable:,} unfetchable, {summary.pages:,} pages")


def sweep_mark(newest_seen: float, began: float) -> float:
    """Where the next `--since last` starts: the newest change this sweep saw, but never later than the
    moment it began, since a video listed early and changed before a long sweep ended was not seen changed."""
    return min(newest_seen, began)


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


__all__ = ["HTTP_SOURCES", "SweepState", "SweepSummary", "build_source", "parse_since", "sweep"]
