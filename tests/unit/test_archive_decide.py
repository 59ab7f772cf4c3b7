"""The archiver's decisions (issue 43), as tables: how a range GET's answer is read, what follows it, and whether
a completed copy stands."""

from __future__ import annotations

import base64
import hashlib

import pytest
from migrator.archive.decide import (
    MAX_COPIES,
    MAX_MINTS_PER_PART,
    MAX_PART_ATTEMPTS,
    Next,
    Read,
    classify_read,
    completion_problems,
    normalised,
    part_fate,
)
from migrator.archive.plan import PartPlan, composite_sha256, sha256_b64

THREE = PartPlan(25, 10)  # parts of 10, 10 and 5 bytes
ONE = PartPlan(7, 16)


@pytest.mark.parametrize(
    ("plan", "status", "got", "number", "total", "read"),
    [
        (THREE, 206, 10, 1, 25, Read.OK),
        (THREE, 206, 5, 3, 25, Read.OK),  # the last part is shorter
        (THREE, 206, 10, 1, None, Read.OK),  # no Content-Range total: the bytes decide
        (THREE, 206, 9, 2, 25, Read.SHORT),
        (THREE, 206, 10, 2, 30, Read.CHANGED),  # the file grew since the copy was planned
        (THREE, 200, 25, 1, None, Read.NO_RANGE),  # the whole file for part 1 of 3: Range ignored
        (ONE, 200, 7, 1, None, Read.OK),  # a file of one part may come whole
        (ONE, 200, 8, 1, None, Read.CHANGED),
        (THREE, 416, 0, 3, None, Read.CHANGED),  # the range is past the end: it shrank
        (THREE, 403, 0, 2, None, Read.EXPIRED),
        (THREE, 410, 0, 2, None, Read.EXPIRED),
        (THREE, 401, 0, 2, None, Read.EXPIRED),
        (THREE, 429, 0, 2, None, Read.TRANSIENT),
        (THREE, 503, 0, 2, None, Read.TRANSIENT),
        (THREE, 0, 0, 2, None, Read.TRANSIENT),  # no answer at all
        (THREE, 404, 0, 2, None, Read.GONE),
        (THREE, 400, 0, 2, None, Read.GONE),
    ],
)
def test_a_range_gets_answer_is_read_by_its_status_bytes_and_total(plan, status, got, number, total, read):
    assert classify_read(status, got, plan, number, total) is read


@pytest.mark.parametrize(
    ("read", "status", "mints", "attempts", "copies", "next_", "words"),
    [
        (Read.OK, 206, 0, 1, 1, Next.SEND, ""),
        (Read.EXPIRED, 403, 0, 1, 1, Next.MINT, "minted again"),  # a link expired mid-file
        (Read.EXPIRED, 403, MAX_MINTS_PER_PART - 1, 1, 1, Next.MINT, "minted again"),
        (Read.EXPIRED, 403, MAX_MINTS_PER_PART, 1, 1, Next.FAIL, "fresh links in a row"),
        (Read.CHANGED, 206, 0, 1, 1, Next.RESTART, "from the start"),
        (Read.SHORT, 206, 0, 1, MAX_COPIES - 1, Next.RESTART, "came short"),
        (Read.CHANGED, 206, 0, 1, MAX_COPIES, Next.FAIL, "copies in a row"),
        (Read.RETAGGED, 206, 0, 1, 1, Next.RESTART, "its ETag is not the one it had"),  # same size, new file
        (Read.RETAGGED, 206, 0, 1, MAX_COPIES, Next.FAIL, "not the one it had), 2 copies in a row"),
        (Read.NO_RANGE, 200, 0, 1, 1, Next.FAIL, "ignores byte ranges"),
        (Read.TRANSIENT, 503, 0, 1, 1, Next.RETRY, "HTTP 503"),
        (Read.TRANSIENT, 0, 0, 1, 1, Next.RETRY, "did not answer"),
        (Read.TRANSIENT, 503, 0, MAX_PART_ATTEMPTS, 1, Next.FAIL, "times in a row"),
        (Read.GONE, 404, 0, 1, 1, Next.FAIL, "no longer serves the file (HTTP 404)"),
    ],
)
def test_what_follows_each_read(read, status, mints, attempts, copies, next_, words):
    fate = part_fate(read, status, mints, attempts, copies)
    assert fate.next is next_ and words in fate.reason


def parts_of(body: bytes, plan: PartPlan) -> list[str]:
    return [sha256_b64(body[a : b + 1]) for a, b in (plan.byte_range(n) for n in range(1, plan.count + 1))]


BODY = bytes(range(25))
PARTS = parts_of(BODY, THREE)
MD5 = hashlib.md5(BODY).hexdigest()


@pytest.mark.parametrize(
    ("parts", "s3_checksum", "s3_size", "source", "copied", "problems"),
    [
        (PARTS, composite_sha256(PARTS), 25, None, None, []),
        (PARTS, composite_sha256(PARTS), 25, {"md5": MD5}, {"md5": MD5}, []),  # the source's own checksum, equal
        (PARTS, composite_sha256(PARTS), 25, {"md5": base64.b64encode(bytes.fromhex(MD5)).decode()}, {"md5": MD5}, []),
        (PARTS, composite_sha256(PARTS), 25, {"md5": MD5}, None, []),  # resumed mid-file: not compared
        (PARTS[:2], None, 25, None, None, ["2 parts recorded of 3"]),
        (PARTS, composite_sha256(PARTS), 24, None, None, ["the archived object is 24 bytes, the source's file 25"]),
        (PARTS, composite_sha256(PARTS[::-1]), 25, None, None, ["S3's checksum of the object is not the one"]),
        (PARTS, composite_sha256(PARTS), 25, {"md5": "0" * 32}, {"md5": MD5}, ["the source's md5 is 000"]),
    ],
)
def test_a_completed_copy_stands_only_when_s3_the_parts_and_the_source_agree(
    parts, s3_checksum, s3_size, source, copied, problems
):
    found = completion_problems(THREE, parts, s3_checksum, s3_size, source, copied)
    assert len(found) == len(problems) and all(p in f for p, f in zip(problems, found, strict=True))


@pytest.mark.parametrize(
    ("stated", "hex_"),
    [
        ('"5d41402abc4b2a76b9719d911017c592"', "5d41402abc4b2a76b9719d911017c592"),  # an S3 ETag, quoted
        ("XUFAKrxLKna5cZ2REBfFkg==", "5d41402abc4b2a76b9719d911017c592"),  # GCS's md5Hash, base64
        ("5D41402ABC4B2A76B9719D911017C592", "5d41402abc4b2a76b9719d911017c592"),
    ],
)
def test_a_stated_checksum_is_compared_as_hex_whatever_its_dialect(stated, hex_):
    assert normalised(stated) == hex_
