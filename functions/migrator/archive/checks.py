"""What the source says of its own file, checked against the copy (issue 43: "the source's own checksum or ETag where
it gives one"). Pure: no I/O.

A copy spans invocations, so nothing here keeps a hash object between parts: what a check needs from one part to
the next is a small `Tally` the archiver carries on the archive item at each pass's end (`as_item`/`of_item`),
bound to the upload it was made for. A pass that crashed carried nothing: the check it would have fed is then
reported as not made (never as passed).

- **ETag** (RFC 9110 8.8.3): every read of the copy must answer the strong ETag its first read answered; another
  one says the file changed under the copy (`Read.RETAGGED`: copied again once, then failed). A weak ETag (`W/`) or
  none is not compared. Compared, not sent as If-Match: a CDN that answers weak ETags would refuse every If-Match.
- **MD5**, where the source states one for the whole file: Google Cloud Storage's `x-goog-hash: md5=` (the hashes of
  a download "cover the complete object content", https://cloud.google.com/storage/docs/hashes-etags), Azure's
  `x-ms-blob-content-md5` on a range read ("the value of the whole blob's MD5",
  https://learn.microsoft.com/en-us/rest/api/storageservices/get-blob) or `Content-MD5` on a whole read, and an
  S3 object's ETag where S3 says it is the MD5 (a single PUT, plaintext or SSE-S3: no `-N`, no KMS or customer key;
  https://docs.aws.amazon.com/AmazonS3/latest/API/API_Object.html). MD5 cannot be resumed across invocations
  (hashlib's state does not serialise), so it is computed only for a file copied in one part; past one part the
  stated value is recorded and the check is reported as not made.
- **Dropbox's content_hash** (the row's `metadata.content_hash` from `files/list_folder`): the SHA-256 of the
  SHA-256s of the file's 4 MiB blocks (https://www.dropbox.com/developers/reference/content-hash). Parts are whole
  multiples of 4 MiB (`plan.plan_parts`), so each part's block digests fold into a SHA-256 whose state is eight
  words and at most one digest pending: `Sha256` below, resumable, carried in the Tally.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field

DROPBOX_BLOCK = 4 * 1024 * 1024
_HEX32 = re.compile(r"^[0-9a-fA-F]{32}$")
_GOOG_MD5 = re.compile(r"(?:^|,)\s*md5=([A-Za-z0-9+/]{22}==)\s*(?:,|$)")


# --- what the source states -------------------------------------------------------------------------------------


def strong_etag(headers: Mapping[str, str]) -> str | None:
    """The answer's ETag where it is strong (`"..."`, not `W/"..."`), quotes kept; None otherwise."""
    etag = (headers.get("ETag") or "").strip()
    if not etag or etag.startswith("W/") or len(etag) > 200:
        return None
    return etag


def stated_md5(source_url: str, status: int, headers: Mapping[str, str]) -> str | None:
    """The whole file's MD5 (hex) as this answer states it, or None where it states none we can trust."""
    goog = _GOOG_MD5.search(headers.get("x-goog-hash") or "")
    if goog:
        return _hex(goog.group(1))
    blob = headers.get("x-ms-blob-content-md5")
    if blob:
        return _hex(blob)
    if status == 200 and headers.get("Content-MD5"):
        return _hex(headers["Content-MD5"])
    etag = (headers.get("ETag") or "").strip().strip('"')
    encryption = (headers.get("x-amz-server-side-encryption") or "AES256").strip()
    if (
        source_url.lower().startswith("s3://")
        and _HEX32.match(etag)
        and encryption == "AES256"
        and not headers.get("x-amz-server-side-encryption-customer-algorithm")
    ):
        return etag.lower()
    return None


def stated_content_hash(source_url: str, row: Mapping) -> str | None:
    """Dropbox's content_hash of the file, as the row's inventory kept it (hex, 64 digits); None elsewhere."""
    if not source_url.lower().startswith("dropbox://"):
        return None
    metadata = row.get("metadata")
    value = metadata.get("content_hash") if isinstance(metadata, Mapping) else None
    return value.lower() if isinstance(value, str) and re.fullmatch(r"[0-9a-fA-F]{64}", value) else None


def _hex(b64: str) -> str | None:
    try:
        raw = base64.b64decode(b64.strip(), validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.hex() if len(raw) == 16 else None


# --- a SHA-256 whose state can be written down ------------------------------------------------------------------

_K = (
    0x428A2F98, 0x71374491, 0xB5C0FBCF, 0xE9B5DBA5, 0x3956C25B, 0x59F111F1, 0x923F82A4, 0xAB1C5ED5,
    0xD807AA98, 0x12835B01, 0x243185BE, 0x550C7DC3, 0x72BE5D74, 0x80DEB1FE, 0x9BDC06A7, 0xC19BF174,
    0xE49B69C1, 0xEFBE4786, 0x0FC19DC6, 0x240CA1CC, 0x2DE92C6F, 0x4A7484AA, 0x5CB0A9DC, 0x76F988DA,
    0x983E5152, 0xA831C66D, 0xB00327C8, 0xBF597FC7, 0xC6E00BF3, 0xD5A79147, 0x06CA6351, 0x14292967,
    0x27B70A85, 0x2E1B2138, 0x4D2C6DFC, 0x53380D13, 0x650A7354, 0x766A0ABB, 0x81C2C92E, 0x92722C85,
    0xA2BFE8A1, 0xA81A664B, 0xC24B8B70, 0xC76C51A3, 0xD192E819, 0xD6990624, 0xF40E3585, 0x106AA070,
    0x19A4C116, 0x1E376C08, 0x2748774C, 0x34B0BCB5, 0x391C0CB3, 0x4ED8AA4A, 0x5B9CCA4F, 0x682E6FF3,
    0x748F82EE, 0x78A5636F, 0x84C87814, 0x8CC70208, 0x90BEFFFA, 0xA4506CEB, 0xBEF9A3F7, 0xC67178F2,
)  # fmt: skip
_H0 = (0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19)
_M = 0xFFFFFFFF


def _rotr(x: int, n: int) -> int:
    return ((x >> n) | (x << (32 - n))) & _M


def _compress(state: tuple[int, ...], block: bytes) -> tuple[int, ...]:
    """FIPS 180-4 6.2.2: one 64-byte block into the eight words."""
    w = list(struct.unpack(">16I", block))
    for t in range(16, 64):
        s0 = _rotr(w[t - 15], 7) ^ _rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
        s1 = _rotr(w[t - 2], 17) ^ _rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
        w.append((w[t - 16] + s0 + w[t - 7] + s1) & _M)
    a, b, c, d, e, f, g, h = state
    for t in range(64):
        t1 = (h + (_rotr(e, 6) ^ _rotr(e, 11) ^ _rotr(e, 25)) + ((e & f) ^ (~e & g)) + _K[t] + w[t]) & _M
        t2 = ((_rotr(a, 2) ^ _rotr(a, 13) ^ _rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) & _M
        a, b, c, d, e, f, g, h = (t1 + t2) & _M, a, b, c, (d + t1) & _M, e, f, g
    return tuple((x + y) & _M for x, y in zip(state, (a, b, c, d, e, f, g, h), strict=True))


@dataclass
class Sha256:
    """SHA-256 over a short stream (block digests: 32 bytes per 4 MiB of file), its state plain numbers and bytes."""

    words: tuple[int, ...] = _H0
    pending: bytes = b""
    length: int = 0

    def update(self, data: bytes) -> None:
        self.length += len(data)
        buffer = self.pending + data
        whole = len(buffer) - len(buffer) % 64
        for at in range(0, whole, 64):
            self.words = _compress(self.words, buffer[at : at + 64])
        self.pending = buffer[whole:]

    def hexdigest(self) -> str:
        tail = self.pending + b"\x80" + b"\x00" * ((55 - len(self.pending)) % 64) + struct.pack(">Q", self.length * 8)
        words = self.words
        for at in range(0, len(tail), 64):
            words = _compress(words, tail[at : at + 64])
        return struct.pack(">8I", *words).hex()

    def as_item(self) -> dict:
        return {"words": list(self.words), "pending": base64.b64encode(self.pending).decode(), "length": self.length}

    @classmethod
    def of_item(cls, doc: object) -> Sha256 | None:
        try:
            assert isinstance(doc, Mapping)
            words = tuple(int(w) for w in doc["words"])
            pending = base64.b64decode(str(doc["pending"]), validate=True)
            length = int(doc["length"])
        except (AssertionError, KeyError, TypeError, ValueError, binascii.Error):
            return None
        if len(words) != 8 or not all(0 <= w <= _M for w in words) or len(pending) >= 64 or length < 0:
            return None
        return cls(words, pending, length)


def block_digests(body: bytes) -> bytes:
    """The SHA-256 of each 4 MiB block of `body`, one after another (a part starts on a block's edge)."""
    return b"".join(hashlib.sha256(body[at : at + DROPBOX_BLOCK]).digest() for at in range(0, len(body), DROPBOX_BLOCK))


# --- the tally a copy carries -----------------------------------------------------------------------------------


@dataclass
class Tally:
    """What this copy has seen of the source, for one upload: the ETag its reads answered (and from which part it
    was known), the MD5 the source stated and the one computed (a one-part file), and Dropbox's block hash so far
    (`blocks` over `blocks_parts` parts; None once it cannot be completed)."""

    upload_id: str
    etag: str | None = None
    etag_from: int = 1
    stated: dict[str, str] = field(default_factory=dict)
    copied: dict[str, str] = field(default_factory=dict)
    blocks: Sha256 | None = None
    blocks_parts: int = 0

    def seen(self, number: int, headers: Mapping[str, str]) -> bool:
        """A read of part `number` answered `headers`: False when its strong ETag is not the one the copy's reads
        answered before (the file changed), True otherwise (the first ETag seen becomes the reference)."""
        etag = strong_etag(headers)
        if etag is None:
            return True
        if self.etag is None:
            self.etag, self.etag_from = etag, number
            return True
        return etag == self.etag

    def fold(self, number: int, body: bytes, count: int, source_url: str, status: int, headers: Mapping) -> None:
        """Part `number` of `count`, read and checked, goes in: what the source states, and what can be computed."""
        md5 = stated_md5(source_url, status, headers)
        if md5:
            self.stated.setdefault("md5", md5)
        if count == 1:
            self.copied["md5"] = hashlib.md5(body, usedforsecurity=False).hexdigest()
        if self.blocks is not None and self.blocks_parts == number - 1:
            self.blocks.update(block_digests(body))
            self.blocks_parts = number
        else:
            self.blocks = None

    def finish(self, count: int) -> None:
        """Every part is in: the block hash, where it covers them all, is the copy's content_hash."""
        if self.blocks is not None and self.blocks_parts == count:
            self.copied["content_hash"] = self.blocks.hexdigest()

    def report(self, count: int) -> dict[str, str]:
        """What was compared, for the archive item's `source_checks`: per check `equal`/`same`, `differs`, or why it
        was not made."""
        out: dict[str, str] = {}
        if self.etag is None:
            out["etag"] = "none given"
        else:
            out["etag"] = "same" if self.etag_from == 1 else f"same from part {self.etag_from} (a pass was lost)"
        for name in ("md5", "content_hash"):
            stated, copied = self.stated.get(name), self.copied.get(name)
            if stated is None:
                continue
            if copied is None:
                why = f"{count} parts" if name == "md5" and count > 1 else "a pass was lost mid-copy"
                out[name] = f"not compared ({why})"
            else:
                out[name] = "equal" if stated.lower() == copied.lower() else "differs"
        return out

    def as_item(self) -> dict:
        doc: dict = {"upload_id": self.upload_id, "etag_from": self.etag_from, "blocks_parts": self.blocks_parts}
        if self.etag is not None:
            doc["etag"] = self.etag
        doc["stated"], doc["copied"] = dict(self.stated), dict(self.copied)
        if self.blocks is not None:
            doc["blocks"] = self.blocks.as_item()
        return doc

    @classmethod
    def of_item(cls, doc: object, upload_id: str, next_part: int) -> Tally:
        """The tally the item carries for `upload_id`; a fresh one (checks from `next_part` on) where it carries
        none for this upload (a pass that crashed, or another copy's)."""
        if not isinstance(doc, Mapping) or doc.get("upload_id") != upload_id:
            return cls(upload_id, etag_from=next_part, blocks=None)
        etag = doc.get("etag")
        return cls(
            upload_id,
            etag if isinstance(etag, str) else None,
            int(doc.get("etag_from") or 1),
            {str(k): str(v) for k, v in dict(doc.get("stated") or {}).items()},
            {str(k): str(v) for k, v in dict(doc.get("copied") or {}).items()},
            Sha256.of_item(doc.get("blocks")) if "blocks" in doc else None,
            int(doc.get("blocks_parts") or 0),
        )
