"""What a `--where` left behind (issue 45): one JSON Lines row per video a load or an inventory did not take.

Leaving a video behind is a decision someone will be asked about after the old platform is gone, so each row
says what the video was and why it stayed:

    {"id": "lib/1", "title": "Town hall 2019", "source_url": "kaltura://0_abc",
     "why": "plays > 0 is false: plays is 0", "usage": {"plays": 0, "read_at": "...", "counted_by": "..."}}

`usage` is the row's usage as read (usage.py), or null where none was read. `migrator export --left-behind FILE
--format redirects --fallback-url URL` turns the report into a redirect list (export_left_behind.py). The file
is written by the CLI, but read back as untrusted input: `read_left_behind` checks every line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from migrator.messages import AssetMessage, id_problem, source_url_problem

from .errors import CliError

SUFFIX = ".left-behind.jsonl"


def default_path(source: str) -> Path:
    """Beside the input: `lib.jsonl` -> `lib.left-behind.jsonl`; standard input or an S3 listing: in the working
    directory (`left-behind.jsonl`, `<bucket>.left-behind.jsonl`)."""
    if source == "-":
        return Path("left-behind.jsonl")
    if source.startswith("s3://"):
        bucket = source[len("s3://") :].split("/", 1)[0] or "s3"
        return Path(bucket + SUFFIX)
    path = Path(source)
    stem = path.name
    for ext in (".gz", ".jsonl", ".ndjson", ".json-lines", ".csv"):
        stem = stem.removesuffix(ext)
    return path.with_name((stem or path.name) + SUFFIX)


def entry(msg: AssetMessage, why: str) -> dict:
    return {
        "id": msg.asset_id,
        "title": msg.title,
        "source_url": msg.source_url,
        "why": why,
        "usage": msg.usage.as_dict() if msg.usage is not None else None,
    }


class LeftBehindReport:
    """The report's file, written a row at a time (a library of millions leaves memory flat)."""

    def __init__(self, path: Path):
        self.path = path
        self.rows = 0
        try:
            self._out: IO[str] | None = open(path, "w", encoding="utf-8")
        except OSError as exc:
            raise CliError(f"cannot write the left-behind report {path}: {exc.strerror}") from None

    def add(self, msg: AssetMessage, why: str) -> None:
        if self._out is None:
            raise ValueError("the left-behind report is closed")
        self._out.write(json.dumps(entry(msg, why), ensure_ascii=False, separators=(",", ":")) + "\n")
        self.rows += 1

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None

    def __enter__(self) -> LeftBehindReport:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_left_behind(path: str) -> Iterator[tuple[int, dict | str]]:
    """Each line of a left-behind report: (line, the row) or (line, why it is not one)."""
    try:
        stream = open(path, encoding="utf-8", errors="replace")
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None
    with stream:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except ValueError:
                yield number, "not JSON"
                continue
            if not isinstance(doc, dict):
                yield number, "not a JSON object"
                continue
            problem = id_problem(doc.get("id")) or source_url_problem(doc.get("source_url"))
            yield number, (problem if problem else doc)
