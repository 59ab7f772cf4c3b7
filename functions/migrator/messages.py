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
ALLOWED_SCHEMES = ("https", "http", "s3")
# Ids starting with '#' are reserved for the ledger's own control items (the pacer).
RESERVED_PREFIX = "#"
FIELDS = frozenset({"id", "source_url", "title", "duration_s", "metadata"})
# Unicode category Cc is exactly U+0000-U+001F and U+007F-U+009F; `\s` in a str pattern is
# str.isspace(). One compiled search instead of a per-character loop: loads validate millions.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")
# A lone surrogate (what "\\ud800" in JSON becomes) cannot be encoded as UTF-8, so no store
# or HTTP header can carry it.
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class AssetMessage:
    asset_id: str
    source_url: str
    title: str | None = None
    duration_s: float | None = None
    metadata: dict = field(default_factory=dict)


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


def source_url_problem(value: object) -> str | None:
    """Why `value` cannot be a source URL, or None when it can."""
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
        return "source_url has no host or bucket"
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
    return AssetMessage(
        asset_id=asset_id,
        source_url=doc["source_url"],
        title=title,
        duration_s=float(duration) if duration is not None else None,
        metadata=metadata,
    )


def encode_message(msg: AssetMessage) -> str:
    """The body a loader sends for `msg`; the inverse of parse_message."""
    doc: dict = {"id": msg.asset_id, "source_url": msg.source_url}
    if msg.title is not None:
        doc["title"] = msg.title
    if msg.duration_s is not None:
        doc["duration_s"] = msg.duration_s
    if msg.metadata:
        doc["metadata"] = msg.metadata
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
