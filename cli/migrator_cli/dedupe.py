"""Repeats within one inventory, caught in flat memory (its ids kept on disk): use it to check a file's ids."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import tempfile


class Deduper:
    """Remembers the ids of one file on disk (a temporary SQLite table), so memory stays flat.

    check() says whether an id is new, a repeat of the same source (drop it with a
    warning), or a conflict: the same id with another source_url (a bad row).
    """

    NEW, REPEAT, CONFLICT = "new", "repeat", "conflict"

    def __init__(self, directory: str | None = None, commit_every: int = 5000, cache_kib: int = 4096):
        fd, self.path = tempfile.mkstemp(prefix="migrator-load-", suffix=".sqlite", dir=directory)
        os.close(fd)
        self.db = sqlite3.connect(self.path, isolation_level=None)
        # A scratch table: no journal, no fsync; a bounded page cache keeps memory flat.
        self.db.execute("PRAGMA journal_mode=OFF")
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute(f"PRAGMA cache_size=-{cache_kib}")
        self.db.execute("CREATE TABLE seen (id TEXT PRIMARY KEY, url_hash BLOB NOT NULL, line INTEGER) WITHOUT ROWID")
        self.commit_every = commit_every
        self.pending = 0
        self.db.execute("BEGIN")

    def check(self, asset_id: str, source_url: str, line: int = 0) -> str:
        url_hash = hashlib.blake2b(source_url.encode("utf-8"), digest_size=16).digest()
        cursor = self.db.execute(
            "INSERT INTO seen (id, url_hash, line) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", (asset_id, url_hash, line)
        )
        if cursor.rowcount == 1:
            self.pending += 1
            if self.pending >= self.commit_every:
                self.db.execute("COMMIT")
                self.db.execute("BEGIN")
                self.pending = 0
            return self.NEW
        (first_hash,) = self.db.execute("SELECT url_hash FROM seen WHERE id = ?", (asset_id,)).fetchone()
        return self.REPEAT if first_hash == url_hash else self.CONFLICT

    def first_line(self, asset_id: str) -> int | None:
        """The line where `asset_id` was first seen."""
        row = self.db.execute("SELECT line FROM seen WHERE id = ?", (asset_id,)).fetchone()
        return row[0] if row else None

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None  # type: ignore[assignment]  # closed: nothing reads it after close()
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.path)

    def __enter__(self) -> Deduper:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
