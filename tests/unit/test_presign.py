"""Presigned source URLs, checked against AWS's own published example byte for byte.

The emulator accepts any signature, so only this test can tell a URL S3 would refuse.
The example is from the S3 API reference, "Authenticating Requests: Using Query
Parameters (AWS Signature Version 4)": bucket examplebucket, key test.txt, the
documentation's example credentials, 24 May 2013 00:00:00 UTC, 86400 s.
"""

from __future__ import annotations

import datetime
from urllib.parse import parse_qs, urlsplit

import boto3
import botocore.auth
import pytest
from migrator.presign import S3Presigner, split_s3_url

ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
AWS_EXAMPLE_URL = (
    "https://examplebucket.s3.amazonaws.com/test.txt"
    "?X-Amz-Algorithm=AWS4-HMAC-SHA256"
    "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
    "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
    "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
)


@pytest.fixture
def frozen(monkeypatch):
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: datetime.datetime(2013, 5, 24, 0, 0, 0))


def session(region="us-east-1"):
    return boto3.session.Session(aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY, region_name=region)


def test_presigned_source_is_the_aws_documented_sigv4_url(frozen):
    presign = S3Presigner(86400, session=session(), region_of=lambda bucket: "us-east-1")
    assert presign("s3://examplebucket/test.txt") == AWS_EXAMPLE_URL


def test_plain_boto3_would_have_signed_with_version_2(frozen):
    """Why the presigner exists: the default client in us-east-1 makes a SigV2 URL new buckets refuse."""
    url = (
        session()
        .client("s3")
        .generate_presigned_url("get_object", Params={"Bucket": "examplebucket", "Key": "test.txt"}, ExpiresIn=86400)
    )
    assert "AWSAccessKeyId=" in url and "X-Amz-Algorithm" not in url


@pytest.mark.parametrize("stack_region", ["us-east-1", "us-west-2", "eu-west-1"])
def test_the_credential_scope_is_the_buckets_region_not_the_stacks(frozen, stack_region):
    presign = S3Presigner(3600, session=session(stack_region), region_of=lambda bucket: "eu-central-1")
    query = parse_qs(urlsplit(presign("s3://media-archive/2019/intro.mp4")).query)
    assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]
    assert query["X-Amz-Credential"][0].split("/")[2] == "eu-central-1"
    assert query["X-Amz-Expires"] == ["3600"]
    assert "AWSAccessKeyId" not in query and "Signature" not in query


def test_the_bucket_region_is_asked_once_per_bucket(frozen):
    asked: list[str] = []

    def region_of(bucket):
        asked.append(bucket)
        return "us-west-2"

    presign = S3Presigner(60, session=session(), region_of=region_of)
    for key in ("a.mp4", "b.mp4", "c.mp4"):
        presign(f"s3://one/{key}")
    presign("s3://two/a.mp4")
    assert asked == ["one", "two"]


def test_http_sources_pass_through_untouched():
    presign = S3Presigner(60, session=session(), region_of=lambda bucket: pytest.fail("no lookup for http"))
    url = "https://media.example.com/a.mp4?token=abc"
    assert presign(url) == url


@pytest.mark.parametrize("expiry", [0, 604_801])
def test_expiry_outside_what_sigv4_allows_is_refused(expiry):
    with pytest.raises(ValueError):
        S3Presigner(expiry, session=session())


@pytest.mark.parametrize("url", ["s3://bucket", "s3://bucket/", "https://bucket/key"])
def test_split_refuses_what_is_not_an_object(url):
    with pytest.raises(ValueError):
        split_s3_url(url)


@pytest.mark.parametrize(("asked", "signed"), [(None, "3600"), (90_000, "90000"), (604_800, "604800")])
def test_a_link_is_signed_for_as_long_as_a_target_needs_up_to_sigv4s_seven_days(frozen, asked, signed):
    """Issue 47, item 2.6: Vimeo needs its pull's link for 24 hours, so an s3:// source is signed for that long
    where PresignExpirySeconds is shorter; SigV4's seven days are the most."""
    presign = S3Presigner(3600, session=session(), region_of=lambda bucket: "us-east-1")
    url = presign("s3://examplebucket/test.txt", expiry_s=asked)
    assert parse_qs(urlsplit(url).query)["X-Amz-Expires"] == [signed]
    with pytest.raises(ValueError):
        presign("s3://examplebucket/test.txt", expiry_s=604_801)
