"""An S3 bucket (a prefix of it) as a source: its video objects, listed with ListObjectsV2.

- list: `ListObjectsV2(Bucket, Prefix, ContinuationToken, MaxKeys=1000)`; the continuation token
  is the cursor. S3 filters nothing by time, so a delta sweep lists everything and keeps what was
  modified since the mark (`LastModified`);
- a row: the id is `s3-` and a hash of bucket and key (the id `migrator load s3://...` has always
  given, so both ways of loading a bucket name an object alike), the key's file name as the title,
  `LastModified` as the creation time, `Size`; the source is `s3://bucket/key`, presigned by the
  uploader at hand-off (`presign.py`), so nothing can expire in the queue;
- unfetchable: an object in an archive storage class (GLACIER, DEEP_ARCHIVE) cannot be read until it
  is restored; a key that does not survive the trip through an s3:// URL ('?', '#', whitespace).
  Objects that are not videos (by extension) and "directory" markers are skipped, not counted.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from urllib.parse import urlsplit

from ..messages import MAX_TITLE_LENGTH
from .base import Page, Resolution, Source, SourceError, SourceRef, Unfetchable
from .rows import make_row

VIDEO_EXTENSIONS = frozenset(
    ("mp4", "mov", "m4v", "mkv", "webm", "avi", "mpg", "mpeg", "ts", "mts", "m2ts", "mxf", "flv", "wmv", "3gp", "ogv")
)
ARCHIVED_CLASSES = frozenset({"GLACIER", "DEEP_ARCHIVE"})
MAX_KEYS = 1000
_NOT_TEXT = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def s3_asset_id(bucket: str, key: str) -> str:
    """A stable asset id for an S3 object: the same bucket and key always give the same id."""
    return "s3-" + hashlib.sha256(f"{bucket}/{key}".encode()).hexdigest()[:32]


def is_video_key(key: str) -> bool:
    name = posixpath.basename(key)
    _, dot, ext = name.rpartition(".")
    return bool(dot) and ext.lower() in VIDEO_EXTENSIONS


def key_problem(bucket: str, key: str) -> str | None:
    """Why `key` cannot travel as s3://bucket/key: the uploader reads the key back as the URL's path, and
    a key that does not survive that trip (a '?' or '#', a leading '/', whitespace) would be presigned as
    another object."""
    parts = urlsplit(f"s3://{bucket}/{key}")
    if parts.netloc != bucket or parts.path.lstrip("/") != key or _NOT_TEXT.search(key) or re.search(r"\s", key):
        shown = repr(key if len(key) <= 80 else key[:80] + "…")
        return f"key {shown} cannot be carried as an s3:// source_url ('?', '#', whitespace)"
    return None


class S3Source(Source):
    """`s3://bucket/prefix`, read with `client` (boto3's S3 client, the operator's credentials)."""

    platform = "s3"

    def __init__(self, client, bucket: str, prefix: str = ""):
        super().__init__()
        self.client, self.bucket, self.prefix = client, bucket, prefix

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        from botocore.exceptions import BotoCoreError, ClientError

        # RestoreStatus is listed only when asked for: whether an archived object has been restored.
        kwargs = {"Bucket": self.bucket, "Prefix": self.prefix, "MaxKeys": MAX_KEYS}
        kwargs["OptionalObjectAttributes"] = ["RestoreStatus"]
        if cursor:
            kwargs["ContinuationToken"] = cursor
        self.requests += 1
        try:
            answer = self.client.list_objects_v2(**kwargs)
        except ClientError as exc:
            error = exc.response.get("Error", {})
            raise SourceError(f"s3: cannot list s3://{self.bucket}/{self.prefix}: {error.get('Code')}") from None
        except BotoCoreError as exc:
            raise SourceError(f"s3: cannot list s3://{self.bucket}/{self.prefix}: {type(exc).__name__}") from None
        page = Page()
        for obj in answer.get("Contents", []):
            key = obj.get("Key", "")
            if key.endswith("/") or not is_video_key(key):
                page.skipped += 1
                continue
            modified = obj.get("LastModified")
            when = modified.timestamp() if hasattr(modified, "timestamp") else None
            if since is not None and when is not None and when < since:
                continue
            page.saw(when)
            page.entries.append(self.entry(key, obj, when))
        if answer.get("IsTruncated") and answer.get("NextContinuationToken"):
            page.cursor = answer["NextContinuationToken"]
        return page

    def entry(self, key: str, obj: dict | None = None, modified: float | None = None):
        """The row (or Unfetchable) for one video object."""
        obj = obj or {}
        source_url = f"s3://{self.bucket}/{key}"
        asset_id = s3_asset_id(self.bucket, key)
        title = posixpath.basename(key)[:MAX_TITLE_LENGTH]
        problem = key_problem(self.bucket, key)
        if problem:
            return Unfetchable(asset_id, source_url, problem, title if not _NOT_TEXT.search(title) else None)
        if obj.get("StorageClass") in ARCHIVED_CLASSES and not _restored(obj):
            reason = f"archived in S3 {obj['StorageClass']}: restore the object first, then list it again"
            return Unfetchable(asset_id, source_url, reason, title)
        return make_row(
            "s3",
            key,
            source_url,
            title=title,
            created_at=modified,
            size_bytes=obj.get("Size"),
            metadata={"s3_bucket": self.bucket, "s3_key": key},
            asset_id=asset_id,
        )

    def resolve(self, ref: SourceRef) -> Resolution:
        # s3:// sources are no source references: the uploader presigns them (presign.S3Presigner).
        return Resolution.unfetchable(f"not an s3 source reference: {ref}")


def _restored(obj: dict) -> bool:
    status = obj.get("RestoreStatus") or {}
    return bool(status) and status.get("IsRestoreInProgress") is False
