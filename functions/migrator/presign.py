"""Presigned GET URLs for s3:// sources, signed the way every S3 bucket accepts: Signature Version 4.

boto3 without a signature setting still presigns with Signature Version 2 in us-east-1
and most other regions, and buckets created since mid-2020 (and SSE-KMS objects)
refuse such URLs, so the provider could never fetch the source. Here every URL is
SigV4 (`X-Amz-Algorithm=AWS4-HMAC-SHA256`), scoped to the bucket's own region, which
S3 reports in the `x-amz-bucket-region` header of HeadBucket (read once per bucket).

A URL signed with temporary credentials (a Lambda role's, an SSO session's) stops
working when those credentials expire, whatever its `ExpiresIn` ("If you created a presigned
URL using a temporary token, then the URL expires when the token expires"; and "Services that
assume a role, such as the AWS Lambda execution role, don't necessarily comply with the role's
session duration settings": AWS Knowledge Center, presigned-url-s3-bucket-expiration). So the
uploader signs at hand-off, never earlier, and `PresignExpirySeconds` is an upper bound, not a
promise: most providers fetch the source as soon as the create is accepted; one that fetches it
later (Vimeo's pull, 24 hours) is handed a link signed for what it needs (`expiry_s`), still
bounded by the role's credentials, which the Lambda is not told the end of.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from urllib.parse import urlsplit

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

SIGV4 = Config(signature_version="s3v4")
# SigV4 presigned URLs are valid for at most seven days.
MAX_EXPIRY_S = 604_800


def split_s3_url(url: str) -> tuple[str, str]:
    """(bucket, key) of s3://bucket/key."""
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc or parts.path in ("", "/"):
        raise ValueError("not an s3://bucket/key URL")
    return parts.netloc, parts.path.lstrip("/")


class S3Presigner:
    """Turns s3://bucket/key into a SigV4 presigned GET URL; other URLs pass through unchanged.

    `client_for(region)` makes an S3 client for a region (tests inject one with fixed
    credentials); `region_of(bucket)` says where a bucket lives (default: HeadBucket).
    """

    def __init__(
        self,
        expiry_s: int,
        client_for: Callable[[str | None], object] | None = None,
        region_of: Callable[[str], str | None] | None = None,
        session: boto3.session.Session | None = None,
    ):
        if not 1 <= expiry_s <= MAX_EXPIRY_S:
            raise ValueError(f"expiry must be between 1 and {MAX_EXPIRY_S} seconds")
        self.expiry_s = expiry_s
        self._session = session or boto3.session.Session()
        self._client_for = client_for or self._default_client
        self._region_of = region_of or self._head_bucket_region
        self._clients: dict[str | None, object] = {}
        self._regions: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def __call__(self, url: str, expiry_s: int | None = None) -> str:
        """`url` presigned for `expiry_s` seconds (default: the presigner's own; at most seven days)."""
        if urlsplit(url).scheme != "s3":
            return url
        lasting = self.expiry_s if expiry_s is None else int(expiry_s)
        if not 1 <= lasting <= MAX_EXPIRY_S:
            raise ValueError(f"expiry must be between 1 and {MAX_EXPIRY_S} seconds")
        bucket, key = split_s3_url(url)
        client = self._client(self._region(bucket))
        return client.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=lasting)

    def _region(self, bucket: str) -> str | None:
        with self._lock:
            if bucket in self._regions:
                return self._regions[bucket]
        region = self._region_of(bucket)
        with self._lock:
            self._regions[bucket] = region
        return region

    def _client(self, region: str | None):
        with self._lock:
            if region not in self._clients:
                self._clients[region] = self._client_for(region)
            return self._clients[region]

    def _default_client(self, region: str | None):
        return self._session.client("s3", region_name=region or self._session.region_name, config=SIGV4)

    def _head_bucket_region(self, bucket: str) -> str | None:
        """The bucket's region from HeadBucket's header; S3 sends it on 200, 301 and 403 alike."""
        try:
            resp = self._client(None).head_bucket(Bucket=bucket)
            headers = resp.get("ResponseMetadata", {}).get("HTTPHeaders", {})
        except ClientError as exc:
            headers = exc.response.get("ResponseMetadata", {}).get("HTTPHeaders", {})
        return headers.get("x-amz-bucket-region") or None
