"""How an original is laid out in the owner's archive bucket and cut into parts (issue 43). Pure: no I/O.

An asset's original goes to `{prefix}/{asset id}/original.{ext}`, beside `row.json` (everything its row carried)
and its caption, chapter and thumbnail files, by an S3 multipart upload whose parts are range GETs of the source:
each part is read into memory (one part at a time: memory is flat whatever the file's size), checked with
SHA-256, uploaded with that checksum (S3 refuses a part whose bytes do not match it) and recorded in the ledger,
so a copy spans as many invocations as it needs and a crash re-copies only the part in flight.

The part size grows with the file (in steps of PART_STEP) so that no copy has more than MAX_PARTS parts (their
record stays small in the ledger item), from MIN_PART_BYTES up to MAX_PART_BYTES (what one invocation holds in
memory); a file past MAX_PARTS parts of the largest size is refused with the way to copy it by hand.
"""

from __future__ import annotations

import base64
import hashlib
import math
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

MiB = 1024 * 1024
MIN_PART_BYTES = 16 * MiB  # S3's least is 5 MiB (but for the last part); fewer, larger requests per GB
MAX_PART_BYTES = 256 * MiB  # held in memory while it is checked and sent
MAX_PARTS = 1000  # S3 takes 10,000; a thousand keeps the ledger's record of them within its item
MAX_ARCHIVE_BYTES = MAX_PARTS * MAX_PART_BYTES  # 250 GiB
# Parts grow in steps of 4 MiB, so that every part starts on the edge of one of the 4 MiB blocks Dropbox's
# content_hash is made of (archive/checks.py): its block digests can be folded in a part at a time.
PART_STEP = 4 * MiB

# S3's storage classes an archive may use (PutObject's StorageClass), cheapest to read last.
STORAGE_CLASSES = (
    "STANDARD",
    "STANDARD_IA",
    "ONEZONE_IA",
    "INTELLIGENT_TIERING",
    "GLACIER_IR",
    "GLACIER",
    "DEEP_ARCHIVE",
)

ORIGINAL = "original"
SIDECAR = "row.json"
# A suffix taken from the source's name or type: letters and digits, short; anything else is `bin`.
_SUFFIX = re.compile(r"^[a-z0-9]{1,8}$")
_TYPES = {
    "video/mp4": "mp4",
    "video/quicktime": "mov",
    "video/x-matroska": "mkv",
    "video/webm": "webm",
    "video/x-msvideo": "avi",
    "video/mpeg": "mpg",
    "video/x-m4v": "m4v",
    "video/x-flv": "flv",
    "video/3gpp": "3gp",
}


def object_prefix(prefix: str, asset_id: str) -> str:
    """The asset's folder in the archive: the stack's prefix, then the asset id (`key_of_id`)."""
    base = prefix.strip("/")
    return f"{base}/{key_of_id(asset_id)}" if base else key_of_id(asset_id)


def key_of_id(asset_id: str) -> str:
    """An asset id as key segments a restore to disk reads back safely: each `/`-separated segment percent-encoded
    (RFC 3986 unreserved characters kept), and an id with an empty, `.` or `..` segment (`a//b`, `../x`: a path
    a sync to disk would walk out of its folder by) kept as one segment, its slashes encoded too. One id, one key:
    `%` is itself encoded, so no two ids meet."""
    segments = asset_id.split("/")
    if not any(s in ("", ".", "..") for s in segments):
        return "/".join(quote(s, safe="-_.~") for s in segments)
    whole = quote(asset_id, safe="-_.~")
    return whole.replace(".", "%2E") if not whole.strip(".") else whole  # an id of dots alone: never `.` or `..`


def original_key(prefix: str, asset_id: str, suffix: str) -> str:
    return f"{object_prefix(prefix, asset_id)}/{ORIGINAL}.{suffix}"


def sidecar_key(prefix: str, asset_id: str) -> str:
    return f"{object_prefix(prefix, asset_id)}/{SIDECAR}"


def file_key(prefix: str, asset_id: str, name: str) -> str:
    """A caption, chapters or thumbnail file beside the original: `name` a path under the asset's folder
    (`captions/en.captions.vtt`), each segment percent-encoded as an id's are, and an empty, `.` or `..` segment
    dropped, so no name from a row reaches outside the asset's folder."""
    segments = [quote(s, safe="-_.~") for s in name.split("/") if s not in ("", ".", "..")]
    return f"{object_prefix(prefix, asset_id)}/{'/'.join(segments) or 'file'}"


def suffix_of(url: str, content_type: str | None = None) -> str:
    """The original's file suffix: its name's (`.../talk.MOV` -> `mov`), else its media type's, else `bin`."""
    ext = posixpath.splitext(unquote(urlsplit(url).path))[1].lstrip(".").lower()
    if _SUFFIX.match(ext):
        return ext
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    return _TYPES.get(kind, "bin")


# --- parts ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PartPlan:
    """A file of `size` bytes cut into `count` parts of `part_bytes` (the last one shorter)."""

    size: int
    part_bytes: int

    @property
    def count(self) -> int:
        return max(1, math.ceil(self.size / self.part_bytes))

    def byte_range(self, number: int) -> tuple[int, int]:
        """Part `number`'s bytes (first, last: an HTTP Range, both included); parts count from 1, as S3's do."""
        if not 1 <= number <= self.count:
            raise ValueError(f"part {number} of {self.count}")
        first = (number - 1) * self.part_bytes
        return first, min(self.size, first + self.part_bytes) - 1

    def length(self, number: int) -> int:
        first, last = self.byte_range(number)
        return last - first + 1


def plan_parts(size: int) -> PartPlan | str:
    """The parts a file of `size` bytes is copied in, or why it cannot be: empty, or past MAX_ARCHIVE_BYTES."""
    if size <= 0:
        return "the source file is empty"
    if size > MAX_ARCHIVE_BYTES:
        return (
            f"the file is {size:,} bytes, over the {MAX_ARCHIVE_BYTES:,} one archive copy takes ({MAX_PARTS} parts"
            f" of {MAX_PART_BYTES // MiB} MiB): copy it to the archive by hand (aws s3 cp)"
        )
    needed = math.ceil(size / MAX_PARTS)
    part = max(MIN_PART_BYTES, math.ceil(needed / PART_STEP) * PART_STEP)
    return PartPlan(size, part)


def content_range_total(header: str | None) -> int | None:
    """The file's whole size from a 206's `Content-Range: bytes 0-99/1234` (RFC 9110 14.4); None when absent or
    unknown (`*`)."""
    match = re.fullmatch(r"\s*bytes\s+\d+-\d+/(\d+)\s*", header or "")
    return int(match.group(1)) if match else None


# --- checksums --------------------------------------------------------------------------------------------------


def sha256_b64(body: bytes) -> str:
    """A part's SHA-256 as S3 takes and answers it (`ChecksumSHA256`: base64 of the digest)."""
    return base64.b64encode(hashlib.sha256(body).digest()).decode("ascii")


def composite_sha256(parts: Sequence[str]) -> str:
    """The checksum S3 gives a multipart object uploaded with SHA-256 part checksums: the SHA-256 of the parts'
    digests one after another, base64, then `-` and the number of parts ("checksum of checksums")."""
    joined = b"".join(base64.b64decode(p, validate=True) for p in parts)
    return f"{base64.b64encode(hashlib.sha256(joined).digest()).decode('ascii')}-{len(parts)}"


def parts_in_order(recorded: Iterable[int], count: int) -> int:
    """The next part to copy: the first of 1..count not recorded (count + 1 when all are)."""
    done = set(recorded)
    return next((n for n in range(1, count + 1) if n not in done), count + 1)
