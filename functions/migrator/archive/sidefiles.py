"""The asset's other files beside its original in the archive (issue 43: "next to a JSON sidecar of everything its
row carried, and its caption, chapter and thumbnail files").

What the row carries besides the video: its caption and subtitle tracks and its chapters tracks (`tracks`, each a
URL, an s3:// object or a source reference resolved at its platform, `sources.resolve`, which may answer the
caption's text itself), its inline `chapters` (data, not a file: written as JSON) and its `thumbnail_url`. Each is
fetched through the same guard as a caption (`trackfetch.fetch`: https or a test origin, public addresses only,
its size capped: a caption's MAX_TRACK_BYTES, an image's MAX_IMAGE_BYTES) and put whole, in STANDARD, under the
asset's folder with a name made of the row's words, each segment percent-encoded (`plan.file_key`):

    captions/{language}.{kind}[.{name}].{vtt|srt|txt}    chapters/{language}[.{name}].vtt
    chapters.json                                         thumbnail.{jpg|png|webp|bin}

The file is kept as the source served it (a caption that does not parse is still the source's file: its suffix
says `txt`). A file that cannot be had never fails the original's archive: it is `missing`, with the reason, after
MAX_SIDE_ATTEMPTS tries where a later try could succeed (its copy waits between them, its parts kept). The state of
each (`entries`: name -> kept with its key, waiting, or missing with why) is carried on the archive item from pass
to pass, so a crash re-fetches only what was not recorded, and the archive is recorded complete only after all of
them are settled. A copy made again (a mismatch, `retry --archive`) tries the missing ones again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ..captions import SRT_MEDIA_TYPE, WEBVTT_MEDIA_TYPE, read_caption
from ..dynamo import plain
from ..extras import MAX_IMAGE_BYTES, image_kind
from ..fate import excerpt
from ..messages import Track, parse_tracks
from ..retry import backoff_delay
from ..row_extras import Refused, parse_chapters
from ..sources.base import Resolution, ResolutionKind
from ..trackfetch import FETCH_TIMEOUT_S, MAX_TRACK_BYTES, Fetched, FetchPolicy
from .plan import file_key

MAX_SIDE_ATTEMPTS = 3
# A name from the row longer than this (percent-encoded) is written as its digest: keys stay short.
MAX_NAME_SEGMENT = 80
KEPT, WAITING, MISSING = "kept", "waiting", "missing"
# Least time one more file needs: its resolution, its fetch (FETCH_TIMEOUT_S) and its put.
SIDE_BUDGET_S = 30.0


@dataclass(frozen=True)
class SideFile:
    """One file the row carries besides the video: its stable name (the entry's, and its key without the suffix),
    what it is, where it is fetched from, or the data itself (inline chapters)."""

    name: str
    kind: str  # caption | chapters | thumbnail
    url: str | None = None
    data: bytes | None = None
    max_bytes: int = MAX_TRACK_BYTES


def segment(text: str) -> str:
    """A word of the row as one safe part of a file name: percent-encoded (no `/`), or its digest when long."""
    encoded = quote(text, safe="-_~")
    return encoded if len(encoded) <= MAX_NAME_SEGMENT else hashlib.sha256(text.encode()).hexdigest()[:16]


def track_name(track: Track) -> str:
    if track.kind == "chapters":
        base = f"chapters/{segment(track.language)}"
    else:
        base = f"captions/{segment(track.language)}.{segment(track.kind)}"
    return f"{base}.{segment(track.name)}" if track.name else base


def side_files_of(row: Mapping) -> list[SideFile] | str:
    """The files a ledger item's row carries besides the video, in a stable order; or why its tracks or chapters
    do not read (the row.json beside the original still holds them as they are)."""
    found: list[SideFile] = []
    tracks = parse_tracks(plain(row["tracks"])) if row.get("tracks") else ()
    if isinstance(tracks, str):
        return f"the row's tracks do not read: {tracks}"
    for track in tracks:
        found.append(SideFile(track_name(track), "chapters" if track.kind == "chapters" else "caption", track.url))
    if row.get("chapters"):
        try:
            chapters = parse_chapters(plain(row["chapters"]), 10_000_000)
        except Refused as exc:
            return f"the row's chapters do not read: {exc}"
        doc = [c.as_dict() for c in chapters]
        data = json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8")
        found.append(SideFile("chapters.json", "chapters", data=data))
    thumbnail = row.get("thumbnail_url")
    if isinstance(thumbnail, str) and thumbnail:
        found.append(SideFile("thumbnail", "thumbnail", thumbnail, max_bytes=MAX_IMAGE_BYTES))
    return found


def file_name(side: SideFile, body: bytes) -> tuple[str, str]:
    """(the file's name under the asset's folder, its media type): the suffix from what the body is."""
    if side.data is not None:
        return side.name, "application/json"
    if side.kind == "thumbnail":
        image = image_kind(body, side.max_bytes)
        if isinstance(image, str):
            return f"{side.name}.bin", "application/octet-stream"
        return f"{side.name}.{image.suffix}", image.media_type
    caption = read_caption(body)
    if isinstance(caption, str):
        return f"{side.name}.txt", "text/plain"
    if caption.format == "vtt":
        return f"{side.name}.vtt", WEBVTT_MEDIA_TYPE
    return f"{side.name}.srt", SRT_MEDIA_TYPE


def after_failure(entry: Mapping | None, reason: str, retryable: bool) -> dict:
    """A file's entry after a try that failed: waiting (tried again later) while a later try could succeed and its
    tries last, else missing with the reason (redacted, cut short)."""
    attempts = int((entry or {}).get("attempts") or 0) + 1
    why = excerpt(reason, 200)
    if retryable and attempts < MAX_SIDE_ATTEMPTS:
        return {"state": WAITING, "attempts": attempts, "reason": why}
    return {"state": MISSING, "attempts": attempts, "reason": why}


def kept_and_missing(entries: Mapping[str, Mapping]) -> tuple[int, list[str]]:
    """How many files are kept, and `name: why` for each missing one (the asset's archive_files, archive_missing)."""
    kept = sum(1 for e in entries.values() if e.get("state") == KEPT)
    missing = [
        f"{name}: {e.get('reason') or 'no reason given'}"
        for name, e in sorted(entries.items())
        if e.get("state") == MISSING
    ]
    return kept, missing


def retried(entries: Mapping[str, Mapping]) -> dict[str, dict]:
    """The entries a new copy starts from: the kept ones (missing files are tried again)."""
    return {name: dict(e) for name, e in entries.items() if e.get("state") == KEPT}


# --- the fetch and the put --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SidePass:
    """How a pass over the side files ended: all settled, out of the invocation's time, or a file to wait for."""

    done: bool
    wait_until: float | None = None
    why: str = ""


@dataclass
class SideFiles:
    store: Any  # ArchiveStore
    prefix: str
    locate: Callable[[str], Resolution]
    fetch: Callable
    test_origins: frozenset[str]
    clock: Callable[[], float]
    rng: Any

    def keep(self, asset_id: str, files: list[SideFile], entries: dict, deadline: float) -> SidePass:
        """Fetch and put every file not yet settled in `entries` (updated in place, in order)."""
        for side in files:
            entry = entries.get(side.name)
            if entry and entry.get("state") in (KEPT, MISSING):
                continue
            if deadline - self.clock() < SIDE_BUDGET_S:
                return SidePass(False, why="the invocation's time: the next pass keeps the other files")
            outcome = self._one(asset_id, side)
            if isinstance(outcome, dict):
                entries[side.name] = outcome
                continue
            reason, retryable, retry_after = outcome
            entries[side.name] = after_failure(entry, reason, retryable)
            if entries[side.name]["state"] == WAITING:
                attempts = int(entries[side.name]["attempts"])
                wait = retry_after if retry_after is not None else backoff_delay(attempts, self.rng)
                return SidePass(False, self.clock() + wait, f"{side.name}: {entries[side.name]['reason']}")
        return SidePass(True)

    def _one(self, asset_id: str, side: SideFile) -> dict | tuple[str, bool, float | None]:
        """The file kept (its entry), or (why not, whether a later try could succeed, when to try)."""
        body = side.data
        if body is None:
            got = self._read(side)
            if not isinstance(got, bytes):
                return got
            body = got
        name, media_type = file_name(side, body)
        key = file_key(self.prefix, asset_id, name)
        try:
            self.store.put(key, body, media_type)
        except Exception as exc:  # the bucket's weather: the file's retry, not the worker's crash
            return f"could not be written to the archive ({type(exc).__name__})", True, None
        return {"state": KEPT, "key": key, "bytes": len(body)}

    def _read(self, side: SideFile) -> bytes | tuple[str, bool, float | None]:
        try:
            resolved = self.locate(str(side.url))
        except Exception as exc:  # a platform's (or our settings') failure is the file's, not the worker's
            return f"the source could not be asked ({type(exc).__name__})", True, None
        if resolved.kind is not ResolutionKind.READY:
            why = f"the source: {resolved.reason or resolved.kind.value}"
            final = resolved.kind in (ResolutionKind.UNFETCHABLE, ResolutionKind.DENIED)
            return why, not final, resolved.retry_after
        if resolved.text is not None:  # a caption the platform serves only as text through its API
            text = resolved.text.encode("utf-8")
            if len(text) > side.max_bytes:
                return f"the file is {len(text):,} bytes, over the {side.max_bytes:,} allowed", False, None
            return text
        if not resolved.url:
            return "the source named no file", False, None
        policy = FetchPolicy(max_bytes=side.max_bytes, timeout_s=FETCH_TIMEOUT_S, test_origins=self.test_origins)
        fetched = self.fetch(resolved.url, policy)
        if isinstance(fetched, Fetched):
            return fetched.body
        return fetched.reason, fetched.retryable, None
