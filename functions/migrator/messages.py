"""Validation of queue messages: one JSON object per asset, untrusted until checked.

The schema is also published as events/asset-message.schema.json; a unit test keeps
the two in agreement.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .platforms import REFERENCED_SOURCES
from .row_extras import Chapter, Collection, Refused, objects_of, parse_chapters, parse_collections
from .usage import Usage, parse_usage

MAX_ID_LENGTH = 255
MAX_URL_LENGTH = 4096
MAX_TITLE_LENGTH = 512
MAX_BODY_BYTES = 64 * 1024
# A duration past this (about 115 days) is a typo or garbage, and a huge number cannot
# be stored: DynamoDB numbers hold 38 significant digits, and a magnitude of zero or from
# 1e-130 to just under 1e126 (AWS DynamoDB developer guide, "Naming rules and data types",
# Number); from 1e125 up is refused here, one power of ten to spare.
MAX_DURATION_S = 10_000_000
# DynamoDB refuses nesting deeper than 32 levels; the item and `metadata` take two.
MAX_METADATA_DEPTH = 30
MAX_DYNAMO_DIGITS = 38
MAX_DYNAMO_MAGNITUDE = 1e125
MIN_DYNAMO_MAGNITUDE = 1e-130
# A source reference names a video on the platform it lives on (`vimeo://<video id>`): the
# uploader turns it into a fresh download URL just before the create, so no link expires in
# the queue (migrator.sources). The platforms are registered in platforms.py.
SOURCE_PLATFORMS = REFERENCED_SOURCES
ALLOWED_SCHEMES = ("https", "http", "s3", *SOURCE_PLATFORMS)
# Ids starting with '#' are reserved for the ledger's own control items (the pacer).
RESERVED_PREFIX = "#"
# What a video is, besides its bytes: carried to the provider's own fields (issue "Fidelity").
MAX_DESCRIPTION_LENGTH = 10_000
MAX_TAGS, MAX_TAG_LENGTH = 100, 255
MAX_FOLDER_LENGTH = 1024
MAX_TRACKS = 50
MAX_TRACK_NAME_LENGTH = 255
MAX_OPTIONS_BYTES = 4096
PRIVACY = ("public", "unlisted", "private", "signed")
# How far each privacy lets a video be seen, narrowest last. No privacy (the stack's DefaultPlayback
# decides) sits below private: an explicit private or signed always wins over it, and an explicit
# public or unlisted never replaces it (the default may be signed).
PRIVACY_WIDTH = {"public": 3, "unlisted": 2, None: 1, "private": 0, "signed": 0}


def narrowest_privacy(first: str | None, *others: str | None) -> str | None:
    """The narrowest of the privacies known of a video (what the ledger recorded, a later row, what the
    source says at the create): a privacy may narrow before the create, never widen. Ties keep `first`."""
    chosen = first
    for other in others:
        if PRIVACY_WIDTH.get(other, 1) < PRIVACY_WIDTH.get(chosen, 1):
            chosen = other
    return chosen


# A chapters track is a WebVTT file of chapter cues (Brightcove's and JW Player's text tracks of kind chapters): the
# tracks worker reads it into the row's `chapters`. Its language may go unsaid: then "und" (BCP 47, undetermined).
TRACK_KINDS = ("captions", "subtitles", "chapters")
CAPTION_KINDS = ("captions", "subtitles")
UNDETERMINED_LANGUAGE = "und"
TRACK_FORMATS = ("srt", "vtt")
TRACK_FIELDS = frozenset({"url", "language", "kind", "name", "closed_captions", "format"})
# BCP 47 language tags, loosely: letters, digits and hyphens ("en", "pt-BR", "zh-Hant-TW").
_LANGUAGE = re.compile(r"^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$")
FIELDS = frozenset(
    {
        "id",
        "source_url",
        "title",
        "duration_s",
        "metadata",
        "description",
        "tags",
        "privacy",
        "poster_time_s",
        "created_at",
        "folder",
        "size_bytes",
        "tracks",
        "options",
        "thumbnail_url",
        "chapters",
        "collections",
        "published_at",
        "usage",
    }
)
# Unicode category Cc is exactly U+0000-U+001F and U+007F-U+009F; `\s` in a str pattern is
# str.isspace(). One compiled search instead of a per-character loop: loads validate millions.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")
# A lone surrogate (what "\\ud800" in JSON becomes) cannot be encoded as UTF-8, so no store
# or HTTP header can carry it.
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Track:
    """A caption or subtitle file to attach once the video exists (or with its create), or a chapters file."""

    url: str  # https, s3:// or a source reference; fetched by the tracks worker, never trusted
    language: str
    kind: str = "captions"  # captions | subtitles | chapters
    name: str | None = None
    closed_captions: bool = False
    format: str | None = None  # srt | vtt; None: told by the content

    def as_dict(self) -> dict:
        doc: dict = {"url": self.url, "language": self.language, "kind": self.kind}
        if self.name is not None:
            doc["name"] = self.name
        if self.closed_captions:
            doc["closed_captions"] = True
        if self.format is not None:
            doc["format"] = self.format
        return doc


@dataclass(frozen=True)
class AssetMessage:
    asset_id: str
    source_url: str
    title: str | None = None
    duration_s: float | None = None
    metadata: dict = field(default_factory=dict)
    description: str | None = None
    tags: tuple[str, ...] = ()
    privacy: str | None = None  # public | unlisted | private | signed; None: the stack's DefaultPlayback
    poster_time_s: float | None = None
    created_at: str | None = None  # when the original was made, RFC 3339 UTC
    folder: str | None = None
    size_bytes: int | None = None
    tracks: tuple[Track, ...] = ()
    options: dict = field(default_factory=dict)  # per-row provider options (providers read their own keys)
    # What a viewer sees first (issue 42; row_extras.py): the poster image (https, s3:// or a source reference
    # resolved at use time, like a track's url), the chapters, the collections that hold the video at its source,
    # and when it was first published there (RFC 3339 UTC; created_at stays the creation time).
    thumbnail_url: str | None = None
    chapters: tuple[Chapter, ...] = ()
    collections: tuple[Collection, ...] = ()
    published_at: str | None = None
    # How much the video was watched at its source, and when that was read (issue 45; usage.py).
    usage: Usage | None = None


@dataclass(frozen=True)
class Poison:
    """A message that can never succeed. `asset_id` is set when the id itself is usable."""

    reason: str
    asset_id: str | None = None


def id_problem(value: object) -> str | None:
    """Why `value` cannot be an asset id, or None when it can."""
    if not isinstance(value, str):
        return f"id must be a string, got {type(value).__name__}"
    if not value:
        return "id is empty"
    if len(value) > MAX_ID_LENGTH:
        return f"id is {len(value)} characters, over {MAX_ID_LENGTH}"
    if _CONTROL.search(value):
        return "id contains control characters"
    if _SURROGATE.search(value):
        return "id contains a lone surrogate (not valid Unicode text)"
    if value.startswith(RESERVED_PREFIX):
        return f"id may not start with {RESERVED_PREFIX!r} (reserved)"
    return None


def id_message(asset_id: str) -> str:
    """A side lane's message (the tracks worker's, the archiver's): only the asset's id; the ledger holds the rest."""
    return json.dumps({"id": asset_id}, ensure_ascii=False, separators=(",", ":"))


def id_message_id(body: object) -> str | None:
    """The asset a side lane's message names, or None when it is not one (anything but `{"id": <an asset id>}`)."""
    try:
        doc = json.loads(body) if isinstance(body, (str, bytes)) else None
    except (ValueError, RecursionError):
        return None
    asset_id = doc.get("id") if isinstance(doc, dict) and set(doc) == {"id"} else None
    return asset_id if id_problem(asset_id) is None else None


def source_url_problem(value: object, name: str = "source_url") -> str | None:
    """Why `value` cannot be a source URL (or the URL field `name`: a track's, a thumbnail's), or None when it can."""
    problem = _url_problem(value)
    return problem.replace("source_url", name) if problem and name != "source_url" else problem


def _url_problem(value: object) -> str | None:
    if not isinstance(value, str):
        return "source_url must be a string" if value is not None else "source_url is missing"
    if not value:
        return "source_url is empty"
    if len(value) > MAX_URL_LENGTH:
        return f"source_url is over {MAX_URL_LENGTH} characters"
    if _SPACE_OR_CONTROL.search(value):
        return "source_url contains whitespace or control characters"
    if _SURROGATE.search(value):
        return "source_url contains a lone surrogate (not valid Unicode text)"
    try:
        parts = urlsplit(value)
    except ValueError as exc:
        return f"source_url does not parse: {exc}"
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        shown = scheme or "none"
        return f"source_url scheme {shown!r} is not one of {', '.join(ALLOWED_SCHEMES)}"
    if not parts.netloc:
        return "source_url has no host or bucket" if scheme in ("http", "https", "s3") else "source_url names no video"
    if scheme == "s3" and parts.path in ("", "/"):
        return "s3 source_url has no object key"
    return None


def storable_problem(value: object, where: str, depth: int = 0) -> str | None:
    """Why `value` (parsed JSON) cannot be stored in a DynamoDB item, or None when it can.

    Checked up front because a value that passes validation and fails later, when the
    ledger write marshals it, would be retried forever instead of refused once.
    """
    if depth > MAX_METADATA_DEPTH:
        return f"{where} nests deeper than {MAX_METADATA_DEPTH} levels"
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return f"{where} contains a lone surrogate (not valid Unicode text)" if _SURROGATE.search(value) else None
    if isinstance(value, int):
        if len(str(abs(value))) > MAX_DYNAMO_DIGITS:
            return f"{where} has an integer of more than {MAX_DYNAMO_DIGITS} digits"
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return f"{where} has a number that is not finite"
        if abs(value) >= MAX_DYNAMO_MAGNITUDE:
            return f"{where} has a number too large to store (at least 1e125)"
        if value and abs(value) < MIN_DYNAMO_MAGNITUDE:
            # A float holds it (down to 5e-324); DynamoDB does not, and rounding it to 0 would change it.
            return f"{where} has a number too small to store (not zero and under 1e-130 in size)"
        return None
    if isinstance(value, list):
        return next((p for v in value if (p := storable_problem(v, where, depth + 1))), None)
    if isinstance(value, dict):
        for key, item in value.items():
            if not key:
                return f"{where} has an empty key"
            if _SURROGATE.search(key):
                return f"{where} has a key with a lone surrogate (not valid Unicode text)"
            problem = storable_problem(item, where, depth + 1)
            if problem:
                return problem
        return None
    return f"{where} holds a {type(value).__name__}, which JSON does not make"


class _NotJson(ValueError):
    """A token Python's json accepts and JSON does not."""


def _refuse_constant(name: str) -> float:
    raise _NotJson(name)


def parse_message(body: str | bytes) -> AssetMessage | Poison:
    """Turn a raw SQS body into an AssetMessage, or say exactly why it is poison."""
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            return Poison("body is not UTF-8")
    if _SURROGATE.search(body):
        return Poison("body is not valid Unicode text (a lone surrogate)")
    if len(body.encode("utf-8")) > MAX_BODY_BYTES:
        return Poison(f"body is over {MAX_BODY_BYTES} bytes")
    try:
        # parse_constant: Python's json takes NaN and Infinity, which JSON (RFC 8259) does not.
        doc = json.loads(body, parse_constant=_refuse_constant)
    except _NotJson as exc:
        return Poison(f"body is not JSON: {exc} is not a JSON number")
    except (ValueError, RecursionError):
        return Poison("body is not JSON")
    if not isinstance(doc, dict):
        return Poison(f"body must be a JSON object, got {type(doc).__name__}")

    if "id" not in doc:
        return Poison("id is missing")
    problem = id_problem(doc["id"])
    if problem:
        return Poison(problem)
    asset_id = doc["id"]

    def poison(reason: str) -> Poison:
        return Poison(reason, asset_id)

    unknown = sorted(set(doc) - FIELDS)
    if unknown:
        return poison(f"unknown field(s): {', '.join(unknown)}")
    problem = source_url_problem(doc.get("source_url"))
    if problem:
        return poison(problem)

    title = doc.get("title")
    if title is not None and (not isinstance(title, str) or len(title) > MAX_TITLE_LENGTH):
        return poison(f"title must be a string of at most {MAX_TITLE_LENGTH} characters")
    problem = storable_problem(title, "title")
    if problem:
        return poison(problem)
    duration = doc.get("duration_s")
    if duration is not None:
        if isinstance(duration, bool) or not isinstance(duration, (int, float)):
            return poison("duration_s must be a number")
        # Compared before any float(): a 400-digit integer would overflow there.
        if not 0 <= duration <= MAX_DURATION_S:
            return poison(f"duration_s must be between 0 and {MAX_DURATION_S:,} seconds")
    metadata = doc.get("metadata", {})
    if not isinstance(metadata, dict):
        return poison("metadata must be an object")
    problem = storable_problem(metadata, "metadata")
    if problem:
        return poison(problem)
    fidelity = _fidelity(doc)
    if isinstance(fidelity, str):
        return poison(fidelity)
    return AssetMessage(
        asset_id=asset_id,
        source_url=doc["source_url"],
        title=title,
        duration_s=float(duration) if duration is not None else None,
        metadata=metadata,
        **fidelity,
    )


def _text(doc: dict, name: str, limit: int) -> str | None:
    value = doc.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise Refused(f"{name} must be a string of at most {limit:,} characters")
    if _SURROGATE.search(value):
        raise Refused(f"{name} contains a lone surrogate (not valid Unicode text)")
    return value


def _number(doc: dict, name: str, high: float) -> float | None:
    value = doc.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= high:
        raise Refused(f"{name} must be a number between 0 and {high:,g}")
    return float(value)


def _fidelity(doc: dict) -> dict | str:
    """The fields that say what a video is besides its bytes, checked; or why they cannot be."""
    try:
        out: dict = {
            "description": _text(doc, "description", MAX_DESCRIPTION_LENGTH),
            "folder": _text(doc, "folder", MAX_FOLDER_LENGTH),
            "poster_time_s": _number(doc, "poster_time_s", MAX_DURATION_S),
            "tags": _tags(doc.get("tags")),
            "tracks": _tracks(doc.get("tracks")),
        }
        privacy = doc.get("privacy")
        if privacy is not None and privacy not in PRIVACY:
            raise Refused(f"privacy must be one of {', '.join(PRIVACY)}")
        out["privacy"] = privacy
        out["created_at"] = _timestamp(doc, "created_at")
        out["published_at"] = _timestamp(doc, "published_at")
        out["thumbnail_url"] = _thumbnail(doc.get("thumbnail_url"))
        out["chapters"] = parse_chapters(doc.get("chapters"), MAX_DURATION_S)
        out["collections"] = parse_collections(doc.get("collections"))
        out["usage"] = parse_usage(doc["usage"]) if doc.get("usage") is not None else None
        size = doc.get("size_bytes")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or not 0 <= size < 2**63):
            raise Refused("size_bytes must be a whole number of bytes")
        out["size_bytes"] = size
        options = doc.get("options", {})
        if not isinstance(options, dict):
            raise Refused("options must be an object")
        problem = storable_problem(options, "options")
        if problem:
            raise Refused(problem)
        if len(json.dumps(options)) > MAX_OPTIONS_BYTES:
            raise Refused(f"options is over {MAX_OPTIONS_BYTES} bytes as JSON")
        out["options"] = options
    except Refused as exc:
        return str(exc)
    return out


def _tags(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_TAGS:
        raise Refused(f"tags must be a list of at most {MAX_TAGS} strings")
    tags = []
    for tag in value:
        if not isinstance(tag, str) or not tag.strip() or len(tag) > MAX_TAG_LENGTH or _CONTROL.search(tag):
            raise Refused(f"each tag must be text of 1 to {MAX_TAG_LENGTH} characters without control characters")
        if _SURROGATE.search(tag):
            raise Refused("a tag contains a lone surrogate (not valid Unicode text)")
        tags.append(tag)
    return tuple(dict.fromkeys(tags))  # a tag repeated is one tag


def _thumbnail(value: object) -> str | None:
    if value is None:
        return None
    problem = source_url_problem(value, "thumbnail_url")
    if problem:
        raise Refused(problem)
    return value if isinstance(value, str) else None


def _timestamp(doc: dict, name: str) -> str | None:
    """`doc[name]`, RFC 3339 text (or epoch seconds), as RFC 3339 UTC, to the second."""
    value = doc.get(name)
    if value is None:
        return None
    from datetime import UTC, datetime

    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            when = datetime.fromtimestamp(float(value), UTC)
        elif isinstance(value, str) and len(value) <= 40:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
            if when.tzinfo is None:
                raise ValueError("no time zone")
        else:
            raise ValueError(value)
    except (ValueError, OverflowError, OSError):
        raise Refused(f"{name} must be an RFC 3339 date-time with a time zone, or epoch seconds") from None
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _tracks(value: object) -> tuple[Track, ...]:
    if value is None:
        return ()
    tracks = []
    for where, raw in objects_of(value, "tracks", "track", MAX_TRACKS, TRACK_FIELDS):
        problem = source_url_problem(raw.get("url"), "url")
        if problem:
            raise Refused(f"{where}: {problem}")
        kind = raw.get("kind", "captions")
        if kind not in TRACK_KINDS:
            raise Refused(f"{where}: kind must be one of {', '.join(TRACK_KINDS)}")
        language = raw.get("language", UNDETERMINED_LANGUAGE if kind == "chapters" else None)
        if not isinstance(language, str) or not _LANGUAGE.match(language) or len(language) > 35:
            raise Refused(f"{where}: language must be a BCP 47 tag such as en or pt-BR")
        fmt = raw.get("format")
        if fmt is not None and fmt not in TRACK_FORMATS:
            raise Refused(f"{where}: format must be one of {', '.join(TRACK_FORMATS)}")
        if kind == "chapters" and fmt == "srt":
            raise Refused(f"{where}: a chapters track is WebVTT (format vtt), not srt")
        closed = raw.get("closed_captions", False)
        if not isinstance(closed, bool):
            raise Refused(f"{where}: closed_captions must be true or false")
        name = _text(raw, "name", MAX_TRACK_NAME_LENGTH)
        tracks.append(Track(raw["url"], language, kind, name, closed, fmt))
    keys = [track_key(t) for t in tracks]
    if len(set(keys)) != len(keys):
        raise Refused("two tracks share a language, kind and name: each track must be told apart")
    return tuple(tracks)


def parse_tracks(value: object) -> tuple[Track, ...] | str:
    """A `tracks` list (a message's, or the ledger's copy of it) as Tracks, or why it is not one."""
    try:
        return _tracks(value)
    except Refused as exc:
        return str(exc)


def track_key(track: Track) -> str:
    """A track's stable name in the ledger: the same track in a later message is the same entry."""
    return f"{track.language}.{track.kind}.{track.name or ''}"


# The fields a message carries as one value each, in the order message_doc writes them.
SCALAR_FIELDS = (
    "title",
    "duration_s",
    "description",
    "privacy",
    "poster_time_s",
    "created_at",
    "folder",
    "thumbnail_url",
    "published_at",
)


def message_doc(msg: AssetMessage) -> dict:
    """`msg` as the JSON object a message carries (only what it holds)."""
    doc: dict = {"id": msg.asset_id, "source_url": msg.source_url}
    for name in SCALAR_FIELDS:
        if getattr(msg, name) is not None:
            doc[name] = getattr(msg, name)
    if msg.size_bytes is not None:
        doc["size_bytes"] = msg.size_bytes
    if msg.metadata:
        doc["metadata"] = msg.metadata
    if msg.tags:
        doc["tags"] = list(msg.tags)
    if msg.tracks:
        doc["tracks"] = [t.as_dict() for t in msg.tracks]
    if msg.options:
        doc["options"] = msg.options
    if msg.chapters:
        doc["chapters"] = [c.as_dict() for c in msg.chapters]
    if msg.collections:
        doc["collections"] = [c.as_dict() for c in msg.collections]
    if msg.usage is not None:
        doc["usage"] = msg.usage.as_dict()
    return doc


def encode_message(msg: AssetMessage) -> str:
    """The body a loader sends for `msg`; the inverse of parse_message."""
    return json.dumps(message_doc(msg), separators=(",", ":"), ensure_ascii=False)
