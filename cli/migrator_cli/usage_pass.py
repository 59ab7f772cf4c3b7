"""`migrator usage --from PLATFORM FILE -o OUT`: the usage pass, for the platforms whose analytics are read apart
from the listing (issue 45; the readers: migrator.sources.analytics.READERS, the model: migrator.usage).

The pass reads an inventory (JSON Lines, as `migrator inventory` writes it), hands the platform's reader the ids of
that platform's videos, page by page, and writes OUT: every input row, in input order, with `usage` set (merged
with any usage the row already had, `Usage.merged`); rows the reader had nothing for are written unchanged and
counted.

Resumable and flat in memory whatever the library's size:
- the videos' ids and the usage read so far are kept on disk, in SQLite beside the state (`<OUT>.usage.sqlite`):
  the reader sees the ids as a sequence read from there (`StoredIds`), the merge looks each row's up;
- the state (`<OUT>.usage-state.json`: the inventory it is for, the reader's cursor, pages, requests) is written
  after each page, once that page's usage is committed, so a pass stopped by Ctrl-C, a SourceError or a crash goes
  on from the page after the last one saved: a page is never lost, and one read twice merges to the same usage;
- once the reader is done the rows stream from the inventory to `<OUT>.tmp`, renamed to OUT at the end; then the
  state and the store are removed, so the next run reads the numbers afresh.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TextIO, overload

from migrator.row_extras import Refused
from migrator.sources import SourceError, parse_ref
from migrator.usage import Usage, UsageReader, absent, parse_usage, utc_text

from .errors import CliError
from .progress import Progress

STATE_VERSION = 1
BATCH = 10_000  # ids written to the store a transaction at a time


@dataclass
class PassState:
    """Where a pass is: the inventory it reads (path, size, modification time: a changed file starts afresh only
    when asked), the reader's next cursor, and what it cost so far."""

    platform: str
    inventory: str
    size: int
    mtime_ns: int
    cursor: str | None = None
    pages: int = 0
    requests: int = 0
    read_done: bool = False
    version: int = STATE_VERSION
    started_at: float | None = None  # when the pass began reading: the read time of what a breakdown never named

    def same_inventory(self, other: PassState) -> bool:
        return (self.platform, self.inventory, self.size, self.mtime_ns) == (
            other.platform,
            other.inventory,
            other.size,
            other.mtime_ns,
        )


@dataclass
class PassSummary:
    """What a pass did: rows written, those with usage (set by this pass), those of the platform it had nothing
    for, those of other platforms (unchanged), and what reading cost."""

    platform: str
    rows: int = 0
    with_usage: int = 0
    unplayed: int = 0  # of `with_usage`: never named by a complete account-wide breakdown, so no plays in its period
    without: int = 0
    other_platforms: int = 0
    videos: int = 0
    pages: int = 0
    requests: int = 0
    resumed: bool = False
    output: str = ""

    @property
    def requests_per_video(self) -> float:
        return self.requests / self.videos if self.videos else 0.0

    def as_dict(self) -> dict:
        return {**asdict(self), "requests_per_video": round(self.requests_per_video, 4)}

    def lines(self) -> list[str]:
        return [
            f"usage of {self.platform}: {self.rows:,} rows written to {self.output}"
            + (" (resumed)" if self.resumed else ""),
            f"  with usage        {self.with_usage:,}"
            + (f" ({self.unplayed:,} not played in the period: absent from the breakdown)" if self.unplayed else ""),
            f"  without (nothing read for them) {self.without:,}",
            f"  other platforms   {self.other_platforms:,} (unchanged)",
            f"  requests          {self.requests:,} in {self.pages:,} pages,"
            f" {self.requests_per_video:.3f} per video ({self.videos:,} videos)",
        ]


class Stopped(CliError):
    """The pass stopped between pages (Ctrl-C, the source failing): its state is saved, the same command resumes."""


# --- the store -----------------------------------------------------------------------------------------------


class Store:
    """The pass's ids and the usage read so far, in SQLite: nothing of either is held in memory."""

    def __init__(self, path: Path):
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS ids (pos INTEGER PRIMARY KEY, video_id TEXT NOT NULL UNIQUE)")
        self.db.execute("CREATE TABLE IF NOT EXISTS usage (video_id TEXT PRIMARY KEY, doc TEXT NOT NULL)")
        self.db.commit()

    def close(self) -> None:
        self.db.close()

    def fill_ids(self, ids: Iterator[str]) -> None:
        self.db.execute("DELETE FROM ids")
        self.db.execute("DELETE FROM usage")
        batch: list[tuple[str]] = []
        for video_id in ids:
            batch.append((video_id,))
            if len(batch) >= BATCH:
                self.db.executemany("INSERT OR IGNORE INTO ids (video_id) VALUES (?)", batch)
                batch = []
        self.db.executemany("INSERT OR IGNORE INTO ids (video_id) VALUES (?)", batch)
        self.db.commit()

    def count_ids(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM ids").fetchone()[0])

    def count_usage(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM usage").fetchone()[0])

    def any_usage(self) -> Usage | None:
        """One video's usage as read (an account-wide reader's period is the same for every video it names)."""
        row = self.db.execute("SELECT doc FROM usage LIMIT 1").fetchone()
        return parse_usage(json.loads(row[0])) if row else None

    def add_usage(self, found: Mapping[str, Usage]) -> None:
        """One page's usage, merged with what an earlier page (or the same page, read again) said of a video;
        only for the videos the pass holds (a bulk reader answers the whole account)."""
        for video_id, usage in found.items():
            if self.db.execute("SELECT 1 FROM ids WHERE video_id = ?", (video_id,)).fetchone() is None:
                continue
            before = self.usage_of(video_id)
            merged = before.merged(usage) if before is not None else usage
            self.db.execute(
                "INSERT OR REPLACE INTO usage (video_id, doc) VALUES (?, ?)", (video_id, json.dumps(merged.as_dict()))
            )
        self.db.commit()

    def usage_of(self, video_id: str) -> Usage | None:
        row = self.db.execute("SELECT doc FROM usage WHERE video_id = ?", (video_id,)).fetchone()
        return parse_usage(json.loads(row[0])) if row else None


class StoredIds(Sequence[str]):
    """The pass's video ids in inventory order, as the reader's `video_ids`: read from the store when asked."""

    def __init__(self, store: Store):
        self.store = store
        self.length = store.count_ids()

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self.length)
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            rows = self.store.db.execute(
                "SELECT video_id FROM ids WHERE pos > ? AND pos <= ? ORDER BY pos", (start, stop)
            ).fetchall()
            return [r[0] for r in rows]
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            raise IndexError(index)
        return str(self.store.db.execute("SELECT video_id FROM ids WHERE pos = ?", (index + 1,)).fetchone()[0])


# --- the rows ------------------------------------------------------------------------------------------------


def video_id_of(row: Mapping, platform: str) -> str | None:
    """The row's video id on `platform`: its source reference's, else the id after `<platform>/` in its asset id;
    None for a row of another platform."""
    source_url = row.get("source_url")
    ref = parse_ref(source_url) if isinstance(source_url, str) else None
    if ref is not None:
        return ref.video_id if ref.platform == platform and not ref.kind else None
    asset_id = row.get("id")
    if isinstance(asset_id, str) and asset_id.startswith(f"{platform}/") and len(asset_id) > len(platform) + 1:
        return asset_id[len(platform) + 1 :]
    return None


def read_rows(inventory: Path) -> Iterator[tuple[int, str, dict]]:
    """Each line of the inventory: its number, its text, the row (a JSON object, else a CliError naming the line)."""
    try:
        handle = open(inventory, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {inventory}: {exc.strerror or exc}") from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                row = None
            if not isinstance(row, dict):
                raise CliError(f"line {number:,} of {inventory} is not a JSON object: is it a JSONL inventory?")
            yield number, line, row


def _ids_of(inventory: Path, platform: str) -> Iterator[str]:
    for _number, _line, row in read_rows(inventory):
        video_id = video_id_of(row, platform)
        if video_id:
            yield video_id


# --- the pass ------------------------------------------------------------------------------------------------


@dataclass
class UsagePass:
    """One pass over `inventory` with `reader`, writing `output`; `state_path` and the store beside it."""

    reader: UsageReader
    inventory: Path
    output: Path
    state_path: Path | None = None
    out: TextIO | None = None
    stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self):
        self.state_path = self.state_path or Path(f"{self.output}.usage-state.json")
        self.store_path = Path(f"{self.state_path}.sqlite")

    def run(self, restart: bool = False) -> PassSummary:
        platform = self.reader.platform
        fresh = self._fresh_state()
        state = None if restart else self._saved_state()
        if state is not None and not state.same_inventory(fresh):
            raise CliError(
                f"{self.state_path} is a pass over another inventory (or {self.inventory} changed since):"
                " pass --restart to read usage afresh"
            )
        summary = PassSummary(platform, resumed=state is not None, output=str(self.output))
        fresh.started_at = time.time()
        store = Store(self.store_path)
        try:
            if state is None:
                store.fill_ids(_ids_of(self.inventory, platform))
                state = fresh
                self._save(state)
            ids = StoredIds(store)
            summary.videos = len(ids)
            if not state.read_done:
                self._read(state, store, ids)
            summary.pages, summary.requests = state.pages, state.requests
            self._merge(store, summary, state.started_at)
        finally:
            store.close()
        self._clean_up()
        return summary

    def _read(self, state: PassState, store: Store, ids: StoredIds) -> None:
        progress = Progress(self.out, len(ids) or None, f"usage of {state.platform}") if self.out else None
        try:
            while not state.read_done:
                if self.stop.is_set():
                    raise Stopped(f"stopped after page {state.pages:,}: {self._resume_hint()}", exit_code=130)
                try:
                    page = self.reader.page(state.cursor, ids)
                except SourceError as exc:
                    raise Stopped(f"{exc}; stopped after page {state.pages:,}: {self._resume_hint()}", 1) from None
                store.add_usage(page.usage)  # committed before the state moves on: a page is never lost
                state.cursor, state.read_done = page.cursor, page.cursor is None
                state.pages, state.requests = state.pages + 1, state.requests + page.requests
                self._save(state)
                if progress:
                    progress.update(store.count_usage(), f"page {state.pages:,}, {state.requests:,} requests")
        finally:
            if progress:
                progress.close()

    def _merge(self, store: Store, summary: PassSummary, started_at: float | None) -> None:
        """Every row of the inventory, in order, to OUT: with its usage merged where the pass read some."""
        platform = summary.platform
        unplayed = self._unplayed(store, started_at)
        partial = Path(f"{self.output}.tmp")
        try:
            with open(partial, "w", encoding="utf-8") as written:
                for number, line, row in read_rows(self.inventory):
                    summary.rows += 1
                    video_id = video_id_of(row, platform)
                    found = store.usage_of(video_id) if video_id else None
                    if video_id is not None and found is None and unplayed is not None:
                        found, summary.unplayed = unplayed, summary.unplayed + 1
                    if video_id is None:
                        summary.other_platforms += 1
                    elif found is None:
                        summary.without += 1
                    if found is None:
                        written.write(line if line.endswith("\n") else line + "\n")
                        continue
                    summary.with_usage += 1
                    row["usage"] = _merged(row.get("usage"), found, number, self.inventory).as_dict()
                    written.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
            os.replace(partial, self.output)
        except OSError as exc:
            raise CliError(f"cannot write {self.output}: {exc.strerror or exc}") from None
        finally:
            partial.unlink(missing_ok=True)

    def _unplayed(self, store: Store, started_at: float | None) -> Usage | None:
        """What a complete account-wide breakdown says of a video it never named: not played in its period (the
        period of the videos it named; None when it named none: its period is then unknown). None for a per-video
        reader, whose silence says nothing."""
        if not self.reader.account_wide:
            return None
        named = store.any_usage()
        if named is None:
            return None
        return absent(self.reader.counted_by, utc_text(started_at or time.time()), named.since)

    # --- the state file --------------------------------------------------------------------------------------

    def _fresh_state(self) -> PassState:
        try:
            stat = self.inventory.stat()
        except OSError as exc:
            raise CliError(f"cannot read {self.inventory}: {exc.strerror or exc}") from None
        return PassState(self.reader.platform, str(self.inventory.resolve()), stat.st_size, stat.st_mtime_ns)

    def _saved_state(self) -> PassState | None:
        assert self.state_path is not None
        if not self.state_path.exists() or not self.store_path.exists():
            return None
        try:
            doc = json.loads(self.state_path.read_text())
            state = PassState(**doc)
        except (OSError, ValueError, TypeError):
            raise CliError(f"{self.state_path} is not a usage pass's state: remove it, or pass --restart") from None
        if state.version != STATE_VERSION:
            raise CliError(f"{self.state_path} was written by another release: pass --restart")
        return state

    def _save(self, state: PassState) -> None:
        assert self.state_path is not None
        partial = Path(f"{self.state_path}.tmp")
        partial.write_text(json.dumps(asdict(state)))
        os.replace(partial, self.state_path)

    def _clean_up(self) -> None:
        assert self.state_path is not None
        self.state_path.unlink(missing_ok=True)
        self.store_path.unlink(missing_ok=True)

    def _resume_hint(self) -> str:
        return f"the same command resumes from there ({self.state_path})"


def _merged(before: object, found: Usage, number: int, inventory: Path) -> Usage:
    if before is None:
        return found
    try:
        return parse_usage(before).merged(found)
    except Refused as exc:
        raise CliError(f"line {number:,} of {inventory}: {exc}") from None
