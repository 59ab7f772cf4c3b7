"""What the archiver does next, as functions of what it saw (issue 43). Pure: no I/O.

A copy reads the source one part at a time (a range GET) and sends each part to S3 with its SHA-256. What a read
answered decides the part's fate (`part_fate`); once every part is in, what S3 answered for the whole object and
what the source says of its own file decide whether the copy stands (`completion_problems`). A copy that does not
stand is made again from its first part once, then failed with every reason, so a source that changed mid-copy or
an S3 that disagrees is never recorded as archived.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from .plan import PartPlan, composite_sha256

# Fresh links a part may ask the source for before the copy fails: a link that expires mid-file is minted again,
# one refused straight after minting says the source will not serve the file.
MAX_MINTS_PER_PART = 3
# Real failures (5xx, timeouts) a part may have before the copy waits for a retry (`retry --archive`).
MAX_PART_ATTEMPTS = 5
# Whole copies an archive may make: the first, and one more after a mismatch.
MAX_COPIES = 2


class ArchiveState(StrEnum):
    PENDING = "pending"  # nothing copied yet (or a copy to make again)
    COPYING = "copying"  # a multipart upload open, some parts in
    ARCHIVED = "archived"  # every part in, the object's size and checksums checked
    FAILED = "failed"  # with a reason; `retry_after` set while it will be tried again


class Read(StrEnum):
    """What one range GET of the source answered, as the archiver sorts it."""

    OK = "ok"  # 206 with exactly the bytes asked for (or a 200 with the whole file, when it is the only part)
    EXPIRED = "expired"  # 401, 403 or 410 from a link we minted: its time (or signature) ran out
    NO_RANGE = "no_range"  # 200 with the whole file for a part past the first: the source ignores Range
    CHANGED = "changed"  # the file's size (Content-Range total) is not the one the copy was planned for
    RETAGGED = "retagged"  # the file's strong ETag is not the one the copy's reads answered before (checks.Tally)
    SHORT = "short"  # fewer bytes than the range asked for
    TRANSIENT = "transient"  # 5xx, 429, a timeout, a connection that dropped
    GONE = "gone"  # 404, or another 4xx: the source will not serve this file


class Next(StrEnum):
    SEND = "send"  # upload the part
    MINT = "mint"  # ask the source for a fresh link, then read the part again
    RETRY = "retry"  # read the part again later (backed off)
    RESTART = "restart"  # abort the upload, plan again from the file's current size, copy from part 1
    FAIL = "fail"  # failed for good, with the reason


@dataclass(frozen=True)
class PartFate:
    next: Next
    reason: str = ""


def classify_read(status: int, got_bytes: int, plan: PartPlan, number: int, total: int | None) -> Read:
    """Sort a range GET's answer for part `number`: its status, how many bytes came, and the file's size its
    Content-Range gave (None when it gave none)."""
    if status == 206:
        if total is not None and total != plan.size:
            return Read.CHANGED
        return Read.OK if got_bytes == plan.length(number) else Read.SHORT
    if status == 200:  # the whole file, whatever the Range asked
        if plan.count > 1:
            return Read.NO_RANGE
        return Read.OK if got_bytes == plan.size else Read.CHANGED
    if status == 416:  # the range is past the file's end: the file shrank
        return Read.CHANGED
    if status in (401, 403, 410):
        return Read.EXPIRED
    if status == 429 or status >= 500 or status == 0:
        return Read.TRANSIENT
    return Read.GONE


def part_fate(read: Read, status: int, mints: int, attempts: int, copies: int) -> PartFate:
    """What follows a read: `mints` fresh links this part has had, `attempts` real failures it has had (this one
    included), `copies` whole copies made so far (this one included)."""
    if read is Read.OK:
        return PartFate(Next.SEND)
    if read is Read.EXPIRED:
        if mints < MAX_MINTS_PER_PART:
            return PartFate(Next.MINT, f"the source's link was refused (HTTP {status}): minted again")
        return PartFate(Next.FAIL, f"the source refused {mints} fresh links in a row (HTTP {status})")
    if read in (Read.CHANGED, Read.RETAGGED, Read.SHORT):
        why = {
            Read.CHANGED: "the source file changed size during the copy",
            Read.RETAGGED: "the source file changed during the copy (its ETag is not the one it had)",
        }.get(read, "a part came short")
        if copies < MAX_COPIES:
            return PartFate(Next.RESTART, f"{why}: copied again from the start")
        return PartFate(Next.FAIL, f"{why}, {copies} copies in a row")
    if read is Read.NO_RANGE:
        why = "the source ignores byte ranges (HTTP 200 with the whole file): a file of more than one part"
        return PartFate(Next.FAIL, f"{why} cannot be archived from it")
    if read is Read.TRANSIENT:
        if attempts < MAX_PART_ATTEMPTS:
            why = f"the source failed (HTTP {status})" if status else "the source did not answer"
            return PartFate(Next.RETRY, why)
        return PartFate(Next.FAIL, f"the source failed {attempts} times in a row (last: HTTP {status})")
    return PartFate(Next.FAIL, f"the source no longer serves the file (HTTP {status})")


def completion_problems(
    plan: PartPlan,
    part_checksums: Sequence[str],
    s3_checksum: str | None,
    s3_size: int | None,
    source: Mapping[str, str] | None = None,
    copied: Mapping[str, str] | None = None,
) -> list[str]:
    """Why a completed copy does not stand, or [] when it does: every part recorded, S3's object as large as the
    plan and its composite SHA-256 the one the recorded parts make; and where the source states a checksum of its
    file (`source`: algorithm -> value, e.g. {"md5": hex}) and the copy computed the same over the whole file
    (`copied`: checks.Tally, carried from pass to pass), the two equal. A checksum only one side has is not a
    problem: it is not compared (and `Tally.report` says so)."""
    problems = []
    if len(part_checksums) != plan.count:
        problems.append(f"{len(part_checksums)} parts recorded of {plan.count}")
    if s3_size != plan.size:
        problems.append(f"the archived object is {s3_size} bytes, the source's file {plan.size}")
    if len(part_checksums) == plan.count and s3_checksum != composite_sha256(part_checksums):
        problems.append("S3's checksum of the object is not the one its recorded parts make")
    for algorithm, stated in (source or {}).items():
        computed = (copied or {}).get(algorithm)
        if computed is not None and normalised(computed) != normalised(stated):
            problems.append(f"the source's {algorithm} is {stated[:48]}, the copy's {computed[:48]}")
    return problems


def normalised(checksum: str) -> str:
    """A checksum as lowercase hex, whether a source stated it in hex (GCS's md5 in its JSON API is base64; S3's
    ETag is quoted hex) or base64."""
    text = checksum.strip().strip('"')
    if len(text) in (32, 40, 64) and all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    try:
        return base64.b64decode(text, validate=True).hex()
    except (binascii.Error, ValueError):
        return text.lower()
