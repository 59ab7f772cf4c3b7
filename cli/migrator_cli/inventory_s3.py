"""An S3 listing as inventory rows (s3://bucket/prefix): use it where `migrator load` or `plan` reads a bucket.

Each video object's sidecars (its poster image and chapters file beside it: migrator.sources.sidecars) and its
folder come with it, read from the same listing as the S3 source reads them (sources/s3.py): a page at a time,
a video whose stem crosses the page's first or last key looked up by that stem alone.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from urllib.parse import urlsplit

from migrator.messages import MAX_TITLE_LENGTH, AssetMessage, Track, encode_message
from migrator.row_extras import Collection
from migrator.sources.rows import collection_docs, track_docs
from migrator.sources.s3 import is_video_key, key_problem, s3_asset_id, sidecar_fields
from migrator.sources.sidecars import NO_SIDECARS, SidecarIndex, Sidecars, boundary_stems

from .errors import CliError
from .inventory_rows import BadRow, Record, Skipped, checked

MAX_KEYS = 1000


def parse_s3_source(source: str) -> tuple[str, str]:
    """(bucket, prefix) of s3://bucket/prefix."""
    parts = urlsplit(source)
    if parts.scheme != "s3" or not parts.netloc:
        raise CliError(f"{source}: expected s3://bucket or s3://bucket/prefix")
    return parts.netloc, parts.path.lstrip("/")


def s3_record(line: int, bucket: str, key: str, sidecars: Sidecars = NO_SIDECARS, prefix: str = "") -> Record:
    """What one listed object becomes: a message whose source is s3://bucket/key, or why not; with its poster
    image, chapters file and folder where `sidecars` and `prefix` (the listed one) name them."""
    if key.endswith("/"):
        return Skipped(line, "directory marker")
    if not is_video_key(key):
        return Skipped(line, "not a video (by extension)")
    source_url = f"s3://{bucket}/{key}"
    problem = key_problem(bucket, key)
    if problem:
        return BadRow(line, problem)
    thumbnail, tracks, collections = sidecar_fields(bucket, key, prefix, sidecars)
    message = AssetMessage(
        asset_id=s3_asset_id(bucket, key),
        source_url=source_url,
        title=posixpath.basename(key)[:MAX_TITLE_LENGTH],
        metadata={"s3_bucket": bucket, "s3_key": key},
        thumbnail_url=thumbnail,
        tracks=tuple(Track(**doc) for doc in track_docs(tracks)),
        collections=tuple(Collection(**doc) for doc in collection_docs(collections)),
    )
    return checked(line, encode_message(message))


def read_s3_listing(s3, bucket: str, prefix: str) -> Iterator[Record]:
    from botocore.exceptions import BotoCoreError, ClientError

    where = f"s3://{bucket}/{prefix}"
    line = 0
    try:
        for number, page in enumerate(s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)):
            keys = [obj["Key"] for obj in page.get("Contents", [])]
            index = SidecarIndex()
            index.add_all(keys)
            videos = [k for k in keys if is_video_key(k) and not k.endswith("/")]
            first, last = (keys[0], keys[-1]) if keys else (None, None)
            for stem in boundary_stems(videos, first, last, before=number > 0, after=bool(page.get("IsTruncated"))):
                found = s3.list_objects_v2(Bucket=bucket, Prefix=stem + ".", MaxKeys=MAX_KEYS)
                index.add_all(obj["Key"] for obj in found.get("Contents", []) if obj["Key"].startswith(prefix))
            for key in keys:
                line += 1
                yield s3_record(line, bucket, key, index.of(key), prefix)
    except ClientError as exc:
        error = exc.response.get("Error", {})
        raise CliError(f"cannot list {where}: {error.get('Code')}: {error.get('Message')}") from None
    except BotoCoreError as exc:
        raise CliError(f"cannot list {where}: {exc}") from None
