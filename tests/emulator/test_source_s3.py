"""migrator.sources.s3 against the emulator's S3 (ministack): a real bucket listed with the requests the
adapter builds. ministack keeps each object's storage class and answers HeadObject, but models no
Intelligent-Tiering access tier (no x-amz-archive-status) and lists no RestoreStatus: the archive tiers
and restores are tried in tests/unit/test_source_s3.py on S3's documented answers instead."""

from __future__ import annotations

from migrator.messages import AssetMessage
from migrator.sources import S3Source, Unfetchable

from tests.conftest import unique


def test_a_bucket_is_listed_with_a_head_for_each_intelligent_tiering_video_and_glacier_named(aws):
    s3 = aws("s3")
    bucket = unique("source-s3")
    s3.create_bucket(Bucket=bucket)
    for key, storage in [
        ("v/standard.mp4", "STANDARD"),
        ("v/tiered.mp4", "INTELLIGENT_TIERING"),
        ("v/tiered-notes.txt", "INTELLIGENT_TIERING"),
        ("v/cold.mov", "GLACIER"),
        ("v/instant.mp4", "GLACIER_IR"),
    ]:
        s3.put_object(Bucket=bucket, Key=key, Body=b"\x00" * 16, StorageClass=storage)
    source = S3Source(s3, bucket, "v/")
    page = source.page(None)
    found = {e.source_url.rsplit("/", 1)[1]: e for e in page.entries}
    assert {k for k, e in found.items() if isinstance(e, AssetMessage)} == {"standard.mp4", "tiered.mp4", "instant.mp4"}
    assert isinstance(found["cold.mov"], Unfetchable) and found["cold.mov"].reason.startswith("archived in S3 GLACIER")
    assert page.skipped == 1 and source.requests == 2  # the listing, and one HeadObject (the tiered video)
