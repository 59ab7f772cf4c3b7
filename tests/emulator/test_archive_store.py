"""The archive bucket's adapter against the emulator's S3 (issue 43): a multipart upload of checked parts, what a
crash leaves open found again, a lying part refused, the object's composite checksum read back as the parts make
it, in the storage class asked for."""

from __future__ import annotations

import json
import uuid

import pytest
from botocore.exceptions import ClientError
from migrator.archive.plan import MiB, composite_sha256, sha256_b64
from migrator.archive.store import ArchiveStore

pytestmark = pytest.mark.emulator


@pytest.fixture
def store(aws):
    s3 = aws("s3")
    bucket = f"archive-{uuid.uuid4().hex[:10]}"
    s3.create_bucket(Bucket=bucket)
    return ArchiveStore(bucket, s3, storage_class="DEEP_ARCHIVE")


def test_an_original_is_sent_in_checked_parts_and_read_back_with_the_parts_checksum(store):
    key = "masters/vimeo/1/original.mp4"
    parts = [b"a" * (5 * MiB), b"b" * (5 * MiB), b"c" * 100]
    upload = store.start(key, "video/mp4")
    assert store.open_uploads(key) == [upload]  # found again after a crash that lost the ledger's write
    sent = [store.send_part(key, upload, n, body, sha256_b64(body)) for n, body in enumerate(parts, 1)]
    assert [p.number for p in store.sent_parts(key, upload)] == [1, 2, 3]
    assert [p.etag for p in store.sent_parts(key, upload)] == [p.etag for p in sent]
    checksum = store.complete(key, upload, list(reversed(sent)))  # joined in part order whatever the list's
    assert checksum == composite_sha256([sha256_b64(b) for b in parts])
    held = store.held(key)
    assert held is not None and held.size == sum(map(len, parts)) and held.sha256 == checksum
    assert held.storage_class == "DEEP_ARCHIVE" and store.open_uploads(key) == []


def test_a_part_whose_checksum_lies_is_refused_by_s3_and_nothing_is_joined(store):
    key = "masters/a/original.mp4"
    upload = store.start(key, "video/mp4")
    with pytest.raises(ClientError) as refused:
        store.send_part(key, upload, 1, b"x" * 100, sha256_b64(b"y" * 100))
    assert refused.value.response["Error"]["Code"] == "BadDigest"
    assert store.sent_parts(key, upload) == []
    store.abort(key, upload)
    assert store.open_uploads(key) == [] and store.held(key) is None


def test_the_rows_json_is_kept_beside_the_original_readable_whatever_the_originals_class(store):
    """An object in DEEP_ARCHIVE cannot be read without a restore (the emulator answers InvalidObjectState, as S3
    does): the row's JSON is kept in STANDARD so the archive says what each original was at a glance."""
    store.put_json("masters/a/row.json", {"asset_id": "a", "title": "Intro — café", "tags": ["x"]})
    body = store.s3.get_object(Bucket=store.bucket, Key="masters/a/row.json")["Body"].read()
    assert json.loads(body) == {"asset_id": "a", "tags": ["x"], "title": "Intro — café"}
    held = store.held("masters/a/row.json")
    assert held is not None and held.sha256 == sha256_b64(body) and held.storage_class == "STANDARD"
