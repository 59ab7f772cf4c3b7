"""Credentials a provider echoes back (presigned URLs above all) never reach the ledger or a log."""

from __future__ import annotations

import pytest
from migrator.fate import classify_failure, excerpt
from migrator.providers.generic import read_video
from migrator.redact import redact_credentials

SIGV4 = (
    "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
    "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
    "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
    "&X-Amz-Security-Token=FQoGZXIvYXdzEJr%2F%2F%2F%2F%2Fsession"
    "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
)
SIGV2 = "https://s3.amazonaws.com/b/k.mp4?AWSAccessKeyId=AKIAEXAMPLE&Signature=MbvI3B%2BwZ2IO2Jg13F1dD8l%3D&Expires=1796078177"
SECRETS = (
    "AKIAIOSFODNN7EXAMPLE",
    "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
    "FQoGZXIvYXdzEJr",
    "AKIAEXAMPLE",
    "MbvI3B",
)


@pytest.mark.parametrize("url", [SIGV4, SIGV2])
def test_presigned_query_credentials_are_redacted_and_the_rest_kept(url):
    text = f"could not fetch {url}: 403 Forbidden"
    clean = redact_credentials(text)
    assert not any(secret in clean for secret in SECRETS)
    assert clean.startswith("could not fetch https://") and clean.endswith(": 403 Forbidden")
    assert "X-Amz-Date=20130524T000000Z" in clean or "Expires=1796078177" in clean  # harmless parts stay


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see https://h/a.mp4?token=abc123&w=1", "see https://h/a.mp4?token=REDACTED&w=1"),
        ("https://user:hunter2@h/a.mp4", "https://REDACTED@h/a.mp4"),
        ('{"input": "https://h/a?sig=xyz\\u0026se=2030"}', '{"input": "https://h/a?sig=REDACTED\\u0026se=2030"}'),
        ("https://d111.cloudfront.net/a.mp4?Policy=eyJ&Signature=abc&Key-Pair-Id=K2", None),
        ("nothing secret here: HTTP 500", "nothing secret here: HTTP 500"),
    ],
)
def test_other_url_credentials_are_redacted(text, expected):
    clean = redact_credentials(text)
    if expected is None:
        assert "eyJ" not in clean and "abc" not in clean and "K2" not in clean
    else:
        assert clean == expected


def test_provider_errors_are_stored_redacted():
    body = f'{{"error": "cannot download {SIGV4}"}}'
    outcome = classify_failure(400, body, None)
    assert outcome.error.startswith("HTTP 400: ")
    assert not any(secret in outcome.error for secret in SECRETS)
    video = read_video({"id": "v1", "status": "errored", "error": {"message": f"fetch failed: {SIGV2}"}})
    assert not any(secret in video.error for secret in SECRETS)


def test_a_cut_never_leaves_half_a_signature():
    text = "x" * 250 + " " + SIGV4
    assert not any(secret[:12] in excerpt(text, 300) for secret in SECRETS)
