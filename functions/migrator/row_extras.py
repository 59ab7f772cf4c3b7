"""What a viewer sees besides the video, as a row carries it (issue 42): chapters and collections, checked.

A row (a queue message, messages.py) may say where the video's chapters begin and which collections (folders,
projects, showcases, playlists, categories, channels) hold it at the source; the thumbnail and the publish time
are plain fields checked in messages.py. Each check here returns the parsed value, or raises `Refused` with
the reason the message is poison, in the words an operator reads in the report. Pure: no I/O.

- `chapters`: `[{"start_s": 0, "title": "Intro"}, ...]`, at most MAX_CHAPTERS, `start_s` from 0 and strictly
  increasing, titles of 1 to MAX_CHAPTER_TITLE_LENGTH characters without control characters, nor the `-->`
  that ends a WebVTT cue's timing line (the chapters are written as WebVTT for most targets).
- `collections`: `[{"id": "...", "name": "...", "kind": "showcase", "position": 3}, ...]`, at most
  MAX_COLLECTIONS, `id` the collection's id at the source (unique within the row: a source whose kinds of
  collection share one id space prefixes them, as Vimeo's `albums/123`), `position` (optional, from 0) the
  video's place in the collection's own order at the source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CHAPTERS = 500
MAX_CHAPTER_TITLE_LENGTH = 255
MAX_COLLECTIONS = 50
MAX_COLLECTION_ID_LENGTH = 255
MAX_COLLECTION_NAME_LENGTH = 255
MAX_POSITION = 2**31 - 1
# Where a video is filed at its source, in the platform's own word: folder (Vimeo), project (Wistia; Vimeo's folders
# in older API versions), showcase (Vimeo), album (a showcase by its API name), playlist (JW Player, Brightcove,
# api.video), category (Kaltura), channel (Kaltura, Vimeo).
COLLECTION_KINDS = ("folder", "project", "showcase", "album", "playlist", "category", "channel")
CHAPTER_FIELDS = frozenset({"start_s", "title"})
COLLECTION_FIELDS = frozenset({"id", "name", "kind", "position"})
CUE_ARROW = "-->"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class Refused(ValueError):
    """One field that makes the message poison; its text is the reason."""


@dataclass(frozen=True)
class Chapter:
    """Where a chapter of the video begins (seconds from the start), and its title."""

    start_s: float
    title: str

    def as_dict(self) -> dict:
        return {"start_s": self.start_s, "title": self.title}


@dataclass(frozen=True)
class Collection:
    """A collection that holds the video at its source, and the video's place in it (None: not known)."""

    id: str
    name: str
    kind: str
    position: int | None = None

    def as_dict(self) -> dict:
        doc: dict = {"id": self.id, "name": self.name, "kind": self.kind}
        if self.position is not None:
            doc["position"] = self.position
        return doc


def _line(value: object, where: str, limit: int) -> str:
    """One line of text: 1 to `limit` characters, not only spaces, no control characters or lone surrogates."""
    if not isinstance(value, str) or not value.strip() or len(value) > limit or _CONTROL.search(value):
        raise Refused(f"{where} must be text of 1 to {limit} characters on one line (no control characters)")
    if _SURROGATE.search(value):
        raise Refused(f"{where} contains a lone surrogate (not valid Unicode text)")
    return value


def objects_of(value: object, name: str, each: str, limit: int, known: frozenset[str]) -> list[tuple[str, dict]]:
    """The list `name` as (where, object) pairs, each object of only the `known` fields."""
    if not isinstance(value, list) or len(value) > limit:
        raise Refused(f"{name} must be a list of at most {limit} objects")
    found = []
    for n, raw in enumerate(value, start=1):
        where = f"{each} {n}"
        if not isinstance(raw, dict):
            raise Refused(f"{where} must be an object")
        unknown = sorted(set(raw) - known)
        if unknown:
            raise Refused(f"{where} has unknown field(s): {', '.join(unknown)}")
        found.append((where, raw))
    return found


def parse_chapters(value: object, max_start_s: float) -> tuple[Chapter, ...]:
    """A message's `chapters` (None: none); `max_start_s` bounds a start (the messages' duration bound)."""
    if value is None:
        return ()
    chapters: list[Chapter] = []
    for where, doc in objects_of(value, "chapters", "chapter", MAX_CHAPTERS, CHAPTER_FIELDS):
        start = doc.get("start_s")
        if isinstance(start, bool) or not isinstance(start, int | float) or not 0 <= start <= max_start_s:
            raise Refused(f"{where}: start_s must be a number of seconds between 0 and {max_start_s:,g}")
        title = _line(doc.get("title"), f"{where}: title", MAX_CHAPTER_TITLE_LENGTH)
        if CUE_ARROW in title:
            raise Refused(f"{where}: title may not contain '{CUE_ARROW}' (it ends a WebVTT cue's timing)")
        if chapters and not start > chapters[-1].start_s:
            raise Refused(f"{where}: start_s must be later than the chapter before it (strictly increasing)")
        chapters.append(Chapter(float(start), title))
    return tuple(chapters)


def parse_collections(value: object) -> tuple[Collection, ...]:
    """A message's `collections` (None: none)."""
    if value is None:
        return ()
    found: list[Collection] = []
    for where, doc in objects_of(value, "collections", "collection", MAX_COLLECTIONS, COLLECTION_FIELDS):
        cid = _line(doc.get("id"), f"{where}: id", MAX_COLLECTION_ID_LENGTH)
        name = _line(doc.get("name"), f"{where}: name", MAX_COLLECTION_NAME_LENGTH)
        kind = doc.get("kind")
        if kind not in COLLECTION_KINDS:
            raise Refused(f"{where}: kind must be one of {', '.join(COLLECTION_KINDS)}")
        position = doc.get("position")
        if position is not None and (
            isinstance(position, bool) or not isinstance(position, int) or not 0 <= position <= MAX_POSITION
        ):
            raise Refused(f"{where}: position must be a whole number from 0 to {MAX_POSITION:,}")
        if any(c.id == cid for c in found):
            raise Refused(f"{where}: id {cid[:40]!r} is given twice (each collection once, its id unique in the row)")
        found.append(Collection(cid, name, kind, position))
    return tuple(found)
