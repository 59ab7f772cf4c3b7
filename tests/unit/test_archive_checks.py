"""The source's own word on its file (issue 43), as tables: which answer states a whole file's MD5, which ETag is
compared, what a copy carried across passes computes (Dropbox's content_hash, resumed part by part), and what the
archive item records of each check."""

from __future__ import annotations

import base64
import hashlib
import random

import pytest
from migrator.archive.checks import (
    DROPBOX_BLOCK,
    Sha256,
    Tally,
    stated_content_hash,
    stated_md5,
    strong_etag,
)

pytestmark = pytest.mark.unit

MD5 = hashlib.md5(b"hello").hexdigest()  # 5d41402abc4b2a76b9719d911017c592
MD5_B64 = base64.b64encode(bytes.fromhex(MD5)).decode()


def dropbox_content_hash(body: bytes) -> str:
    """Dropbox's reference algorithm, written out: SHA-256 over the SHA-256s of 4 MiB blocks."""
    blocks = [hashlib.sha256(body[i : i + DROPBOX_BLOCK]).digest() for i in range(0, len(body), DROPBOX_BLOCK)]
    return hashlib.sha256(b"".join(blocks)).hexdigest()


@pytest.mark.parametrize("length", [0, 1, 31, 32, 55, 56, 63, 64, 65, 119, 128, 1000, 4096 + 17])
def test_the_resumable_sha256_is_sha256_whatever_the_cuts_and_the_round_trips(length):
    data = random.Random(length).randbytes(length)
    running = Sha256()
    for at in range(0, length, 37):  # fed in uneven pieces, written down and read back between each
        running.update(data[at : at + 37])
        running = Sha256.of_item(running.as_item())
        assert running is not None
    assert running.hexdigest() == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(
    "doc",
    [None, {}, {"words": [1] * 7, "pending": "", "length": 0}, {"words": [-1] * 8, "pending": "", "length": 0}],
)
def test_a_tallys_hash_state_that_does_not_read_is_none(doc):
    assert Sha256.of_item(doc) is None


@pytest.mark.parametrize(
    ("url", "status", "headers", "md5"),
    [
        ("gcs://b/o", 206, {"x-goog-hash": f"crc32c=n03x6A==, md5={MD5_B64}"}, MD5),  # GCS: the whole object's
        ("gcs://b/o", 206, {"x-goog-hash": "crc32c=n03x6A=="}, None),  # a composite object: no MD5
        ("azure://a/c/b", 206, {"x-ms-blob-content-md5": MD5_B64}, MD5),  # Azure on a range: the whole blob's
        ("azure://a/c/b", 200, {"Content-MD5": MD5_B64}, MD5),  # the whole body's
        ("azure://a/c/b", 206, {"Content-MD5": MD5_B64}, None),  # a range's own MD5, not the file's
        ("s3://b/k.mp4", 206, {"ETag": f'"{MD5}"'}, MD5),  # a single PUT, plaintext
        ("s3://b/k.mp4", 206, {"ETag": f'"{MD5}"', "x-amz-server-side-encryption": "AES256"}, MD5),  # SSE-S3
        ("s3://b/k.mp4", 206, {"ETag": f'"{MD5}"', "x-amz-server-side-encryption": "aws:kms"}, None),
        ("s3://b/k.mp4", 206, {"ETag": f'"{MD5}"', "x-amz-server-side-encryption-customer-algorithm": "AES256"}, None),
        ("s3://b/k.mp4", 206, {"ETag": f'"{MD5}-3"'}, None),  # a multipart upload's ETag
        ("https://cdn.example/k.mp4", 206, {"ETag": f'"{MD5}"'}, None),  # another server's ETag means nothing
        ("s3://b/k.mp4", 206, {"x-goog-hash": "md5=not-base64"}, None),
    ],
)
def test_only_an_answer_that_documents_the_whole_files_md5_states_one(url, status, headers, md5):
    assert stated_md5(url, status, headers) == md5


@pytest.mark.parametrize(
    ("headers", "etag"),
    [({"ETag": '"abc"'}, '"abc"'), ({"ETag": 'W/"abc"'}, None), ({}, None), ({"ETag": '"' + "a" * 300 + '"'}, None)],
)
def test_only_a_strong_etag_is_compared(headers, etag):
    assert strong_etag(headers) == etag


@pytest.mark.parametrize(
    ("url", "row", "stated"),
    [
        ("dropbox://files/id:abc", {"metadata": {"content_hash": "AB" * 32}}, "ab" * 32),
        ("dropbox://files/id:abc", {"metadata": {"content_hash": "short"}}, None),
        ("dropbox://files/id:abc", {"metadata": None}, None),
        ("https://h/x.mp4", {"metadata": {"content_hash": "ab" * 32}}, None),  # a row's word, not Dropbox's
    ],
)
def test_dropboxs_content_hash_is_taken_from_a_dropbox_rows_inventory_only(url, row, stated):
    assert stated_content_hash(url, row) == stated


@pytest.mark.parametrize(
    ("etags", "same", "report"),
    [
        (['"a"', '"a"', '"a"'], [True, True, True], "same"),
        (['"a"', '"b"'], [True, False], None),  # the file changed under the copy
        ([None, 'W/"x"', '"a"', '"a"'], [True, True, True, True], "same from part 3 (a pass was lost)"),
        ([None, None], [True, True], "none given"),
    ],
)
def test_every_read_of_a_copy_must_answer_the_etag_its_first_did(etags, same, report):
    tally = Tally("u1")
    seen = [tally.seen(n, {"ETag": e} if e else {}) for n, e in enumerate(etags, 1)]
    assert seen == same
    if report is not None:
        assert tally.report(len(etags))["etag"] == report


def test_dropboxs_content_hash_is_folded_a_part_at_a_time_across_passes():
    body = random.Random(7).randbytes(2 * 8 * 1024 * 1024 + 3 * 1024 * 1024 + 5)  # parts of 8, 8 and 3 MiB
    part = 8 * 1024 * 1024
    stated = dropbox_content_hash(body)
    tally = Tally("u1", stated={"content_hash": stated}, blocks=Sha256())
    for n, at in enumerate(range(0, len(body), part), 1):
        tally.fold(n, body[at : at + part], 3, "dropbox://files/id:abc", 206, {})
        tally = Tally.of_item(tally.as_item(), "u1", n + 1)  # each part in a pass of its own
    tally.finish(3)
    assert tally.copied["content_hash"] == stated
    assert tally.report(3) == {"etag": "none given", "content_hash": "equal"}


@pytest.mark.parametrize(
    ("lost_after", "upload_id", "report"),
    [
        (1, "u1", "not compared (a pass was lost mid-copy)"),  # the tally of part 2's pass never written
        (0, "u2", "not compared (a pass was lost mid-copy)"),  # another upload's tally: not this copy's
    ],
)
def test_a_hash_a_lost_pass_fed_is_reported_not_compared_never_equal(lost_after, upload_id, report):
    body = random.Random(1).randbytes(3 * 4 * 1024 * 1024)
    part = 4 * 1024 * 1024
    tally = Tally("u1", stated={"content_hash": dropbox_content_hash(body)}, blocks=Sha256())
    carried = tally.as_item()
    for n, at in enumerate(range(0, len(body), part), 1):
        tally.fold(n, body[at : at + part], 3, "dropbox://x", 206, {})
        if n == lost_after:
            carried = tally.as_item()
    resumed = Tally.of_item(carried, upload_id, 3)
    resumed.stated.setdefault("content_hash", dropbox_content_hash(body))
    resumed.fold(3, body[2 * part :], 3, "dropbox://x", 206, {})
    resumed.finish(3)
    assert resumed.report(3)["content_hash"] == report


@pytest.mark.parametrize(
    ("count", "headers", "report"),
    [
        (1, {"x-goog-hash": f"md5={MD5_B64}"}, {"etag": "none given", "md5": "equal"}),
        (1, {"x-goog-hash": f"md5={base64.b64encode(bytes(16)).decode()}"}, {"etag": "none given", "md5": "differs"}),
        (2, {"x-goog-hash": f"md5={MD5_B64}"}, {"etag": "none given", "md5": "not compared (2 parts)"}),
        (1, {"ETag": '"e1"'}, {"etag": "same"}),  # no MD5 stated: none compared
    ],
)
def test_an_md5_is_compared_only_for_a_file_of_one_part(count, headers, report):
    tally = Tally("u1")
    tally.seen(1, headers)
    tally.fold(1, b"hello", count, "gcs://b/o", 206, headers)
    tally.finish(count)
    assert tally.report(count) == report
