"""An S3 listing as inventory rows (s3://bucket/prefix): use it where `migrator load` or `plan` reads a bucket."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from urllib.parse import urlsplit

from migrator.messages import MAX_TITLE_LENGTH, AssetMessage, encode_message
from migrator.sources.s3 import is_video_key, key_problem, s3_asset_id

from .errors import CliError
from .inventory_rows import BadRow, Record, Skipped, checked


def parse_s3_source(source: str) -> tuple[str, str]:
    """(bucket, prefix) of s3://bucket/prefix."""
    parts = urlsplit(source)
    if parts.scheme != "s3" or not parts.netloc:
        raise CliError(f"{source}: expected s3://bucket or s3://bucket/prefix")
    return parts.netloc, parts.path.lstrip("/")


def s3_record(line: int, bucket: str, key: str) -> Record:
    """What one listed object becomes: a message whose source is s3://bucket/key, or why not."""
    if key.endswith("/"):
        return Skipped(line, "directory marker")
    if not is_video_key(key):
        return Skipped(line, "not a video (by extension)")
    source_url = f"s3://{bucket}/{key}"
    problem = key_problem(bucket, key)
    if problem:
        return BadRow(line, problem)
    message = AssetMessage(
        asset_id=s3_asset_id(bucket, key),
        source_url=source_url,
        title=posixpath.basename(key)[:MAX_TITLE_LENGTH],
        metadata={"s3_bucket": bucket, "s3_key": key},
    )
    return checked(line, encode_message(message))


def read_s3_listing(s3, bucket: str, prefix: str) -> Iterator[Record]:
    from botocore.exceptions import BotoCoreError, ClientError

    where = f"s3://{bucket}/{prefix}"
    line = 0
    try:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for obj in page.get("Contents", []):
                line += 1
                yield s3_record(line, bucket, obj["Key"])
    except ClientError as exc:
        error = exc.response.get("Error", {})
        raise CliError(f"cannot list {where}: {error.get('Code')}: {error.get('Message')}") from None
    except BotoCoreError as exc:
        raise CliError(f"cannot list {where}: {exc}") from None
