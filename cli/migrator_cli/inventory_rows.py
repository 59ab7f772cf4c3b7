"""What an inventory reader yields (Row, BadRow, Skipped) and the queue's checks a row passes: use it to write a reader.

A row is checked with the queue's own validation (messages.parse_message, so a row that
loads is a message the uploader accepts) and with what SQS takes in a message body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from migrator.messages import MAX_BODY_BYTES, AssetMessage, Poison, encode_message, parse_message

# Characters SQS accepts in a message body; anything else fails the send for good.
# Lone surrogates are what undecodable bytes become (errors="surrogateescape").
_NOT_SQS_TEXT = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True)
class Row:
    """A valid row: `line` is where it starts in the file (its ordinal in an S3 listing)."""

    line: int
    message: AssetMessage


@dataclass(frozen=True)
class BadRow:
    """A row that cannot be loaded, and why; `asset_id` is set when its id was usable."""

    line: int
    reason: str
    asset_id: str | None = None


@dataclass(frozen=True)
class Skipped:
    """An S3 object that is not a video (or a "directory" marker): counted, not loaded."""

    line: int
    reason: str


Record = Row | BadRow | Skipped


def body_problem(body: str) -> str | None:
    """Why `body` cannot travel as an SQS message, or None when it can."""
    match = _NOT_SQS_TEXT.search(body)
    if match:
        char = match.group()
        if "\udc80" <= char <= "\udcff":
            return "row is not valid UTF-8"
        return f"row contains a character SQS does not accept (U+{ord(char):04X})"
    size = len(body.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        return f"row is {size} bytes as a message, over the {MAX_BODY_BYTES}-byte limit"
    return None


def poison_reason(poison: Poison) -> str:
    # parse_message speaks of an SQS body; here the body is a row of the file.
    reason = poison.reason
    return "row " + reason[len("body ") :] if reason.startswith("body ") else reason


def checked(line: int, body: str) -> Row | BadRow:
    """Validate a candidate message body with the queue's own rules."""
    parsed = parse_message(body)
    if isinstance(parsed, Poison):
        return BadRow(line, poison_reason(parsed), parsed.asset_id)
    problem = body_problem(encode_message(parsed))
    if problem:
        return BadRow(line, problem, printable(parsed.asset_id))
    return Row(line, parsed)


def printable(asset_id: str | None) -> str | None:
    """The id, unless it holds what cannot be printed or sent (a lone surrogate)."""
    return asset_id if asset_id and not _NOT_SQS_TEXT.search(asset_id) else None
