"""migrator.sources.s3 against the S3 API as documented: the requests it builds (ListObjectsV2 asking for
RestoreStatus, a HeadObject for each Intelligent-Tiering video object) and its reading of the documented
answers (RestoreStatus, x-amz-archive-status, x-amz-restore), through botocore's Stubber, which checks
both against S3's own service model. The emulator (ministack) models no Intelligent-Tiering access tier
and lists no RestoreStatus, so these answers are recorded here rather than asked of it
(tests/emulator/test_source_s3.py lists a real bucket there).
"""

from __future__ import annotations

import datetime

import boto3
import pytest
from botocore.stub import Stubber
from migrator.messages import AssetMessage
from migrator.sources import S3Source, SourceError, Unfetchable

WHEN = datetime.datetime(2024, 3, 1, tzinfo=datetime.UTC)
LISTED = {"Bucket": "media", "Prefix": "v/", "MaxKeys": 1000, "OptionalObjectAttributes": ["RestoreStatus"]}


def client():
    return boto3.client("s3", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")


def obj(key: str, storage: str, restore: dict | None = None) -> dict:
    found = {"Key": f"v/{key}", "Size": 10, "LastModified": WHEN, "StorageClass": storage}
    return {**found, "RestoreStatus": restore} if restore is not None else found


def listing(stub: Stubber, *objects: dict) -> None:
    stub.add_response("list_objects_v2", {"Contents": list(objects), "IsTruncated": False}, LISTED)


def head(stub: Stubber, key: str, **answer) -> None:
    stub.add_response("head_object", {"StorageClass": "INTELLIGENT_TIERING", **answer}, {"Bucket": "media", "Key": key})


def by_key(entries) -> dict:
    return {e.source_url.rsplit("/", 1)[1]: e for e in entries}


def test_intelligent_tiering_objects_in_an_archive_tier_are_named_unfetchable_with_how_to_restore_them():
    s3 = client()
    with Stubber(s3) as stub:
        listing(
            stub,
            obj("standard.mp4", "STANDARD"),
            obj("frequent.mp4", "INTELLIGENT_TIERING"),
            obj("archive.mp4", "INTELLIGENT_TIERING"),
            obj("deep.mp4", "INTELLIGENT_TIERING"),
            obj("deep-restoring.mp4", "INTELLIGENT_TIERING"),
            obj("deep-restored.mp4", "INTELLIGENT_TIERING"),
            obj("instant.mp4", "GLACIER_IR"),
        )
        head(stub, "v/frequent.mp4")  # Frequent, Infrequent or Archive Instant Access: no x-amz-archive-status
        head(stub, "v/archive.mp4", ArchiveStatus="ARCHIVE_ACCESS")
        head(stub, "v/deep.mp4", ArchiveStatus="DEEP_ARCHIVE_ACCESS")
        head(stub, "v/deep-restoring.mp4", ArchiveStatus="DEEP_ARCHIVE_ACCESS", Restore='ongoing-request="true"')
        head(stub, "v/deep-restored.mp4", Restore='ongoing-request="false"')
        source = S3Source(s3, "media", "v/", head_workers=1)
        page = source.page(None)
        stub.assert_no_pending_responses()
    found = by_key(page.entries)
    rows = {k for k, e in found.items() if isinstance(e, AssetMessage)}
    assert rows == {"standard.mp4", "frequent.mp4", "deep-restored.mp4", "instant.mp4"}
    archive, deep, restoring = found["archive.mp4"], found["deep.mp4"], found["deep-restoring.mp4"]
    assert isinstance(archive, Unfetchable) and "Intelligent-Tiering Archive Access tier" in archive.reason
    assert "--restore-request '{}'" in archive.reason and "3-5 hours" in archive.reason  # no Days for these
    assert "Deep Archive Access tier" in deep.reason and "up to 12 hours" in deep.reason
    assert restoring.reason.startswith("being restored from the S3 Intelligent-Tiering Deep Archive Access tier")
    assert "archive.mp4" not in archive.reason  # one reason for every such object: the summary counts by reason
    assert "without --since" in archive.reason and source.requests == 6  # one listing, five HeadObjects


def test_the_listings_restore_status_decides_without_a_head_and_glacier_objects_need_a_restored_copy():
    s3 = client()
    with Stubber(s3) as stub:
        listing(
            stub,
            obj("it-restoring.mp4", "INTELLIGENT_TIERING", {"IsRestoreInProgress": True}),
            obj("it-restored.mp4", "INTELLIGENT_TIERING", {"IsRestoreInProgress": False}),
            obj("glacier.mov", "GLACIER"),
            obj("glacier-restoring.mov", "GLACIER", {"IsRestoreInProgress": True}),
            obj("deep-copy.mov", "DEEP_ARCHIVE", {"IsRestoreInProgress": False, "RestoreExpiryDate": WHEN}),
            obj("deep.mov", "DEEP_ARCHIVE"),
        )
        source = S3Source(s3, "media", "v/")
        page = source.page(None)
        stub.assert_no_pending_responses()  # no HeadObject: the listing said all there was to say
    found = by_key(page.entries)
    assert {k for k, e in found.items() if isinstance(e, AssetMessage)} == {"it-restored.mp4", "deep-copy.mov"}
    assert found["it-restoring.mp4"].reason.startswith("being restored from an S3 Intelligent-Tiering archive tier")
    assert found["glacier.mov"].reason.startswith("archived in S3 GLACIER: restore a copy first")
    assert "--restore-request Days=7" in found["glacier.mov"].reason
    assert found["glacier-restoring.mov"].reason.startswith("being restored from S3 GLACIER")
    assert "DEEP_ARCHIVE" in found["deep.mov"].reason and source.requests == 1


def test_an_object_deleted_since_the_listing_is_named_gone_and_a_refused_head_stops_the_listing():
    s3 = client()
    with Stubber(s3) as stub:
        listing(stub, obj("gone.mp4", "INTELLIGENT_TIERING"))
        stub.add_client_error(
            "head_object", "404", http_status_code=404, expected_params={"Bucket": "media", "Key": "v/gone.mp4"}
        )
        [gone] = S3Source(s3, "media", "v/").page(None).entries
        assert gone.reason.startswith("not found at the source: deleted from S3")
        listing(stub, obj("secret.mp4", "INTELLIGENT_TIERING"))
        stub.add_client_error("head_object", "403", http_status_code=403)
        with pytest.raises(SourceError, match="needs s3:GetObject on the object"):
            S3Source(s3, "media", "v/").page(None)


def test_heads_run_side_by_side_and_each_object_keeps_its_own_answer():
    class Client:
        """A client whose HeadObject says each object's tier from its key (any order of calls)."""

        def list_objects_v2(self, **kwargs):
            return {"Contents": [obj(f"{i}.mp4", "INTELLIGENT_TIERING") for i in range(40)], "IsTruncated": False}

        def head_object(self, Bucket, Key):
            return {"ArchiveStatus": "ARCHIVE_ACCESS"} if int(Key[2:-4]) % 2 else {}

    source = S3Source(Client(), "media", "v/", head_workers=8)
    found = by_key(source.page(None).entries)
    archived = sorted(int(k[:-4]) for k, e in found.items() if isinstance(e, Unfetchable))
    assert archived == list(range(1, 40, 2)) and source.requests == 41


def test_a_delta_page_of_objects_unchanged_since_the_mark_is_no_empty_page():
    """Review 47, item 3: S3 lists by key, so a delta sweep (--since) reads pages of objects unchanged since the
    mark; each writes nothing, but the platform's page held them, and the listing guard must follow it."""
    from migrator.sources.paging import held_nothing

    s3 = client()
    older = [obj(f"old{n}.mp4", "STANDARD") for n in range(3)]
    with Stubber(s3) as stub:
        stub.add_response(
            "list_objects_v2", {"Contents": older, "IsTruncated": True, "NextContinuationToken": "t2"}, LISTED
        )
        page = S3Source(s3, "media", "v/", head_workers=1).page(None, since=WHEN.timestamp() + 1)
    assert (page.entries, page.cursor, page.listed) == ([], "t2", 3)
    assert not held_nothing(page)
