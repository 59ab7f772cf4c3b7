"""Credentials a provider echoes back (presigned URLs above all) never reach the ledger or a log."""

from __future__ import annotations

import json
import urllib.parse

import pytest
from migrator.fate import classify_failure, excerpt
from migrator.providers.generic import read_video
from migrator.redact import redact_credentials, strip_controls

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


# --- a presigned URL echoed percent-encoded --------------------------------------------------------

BRIEF_EXAMPLE = "https%3A%2F%2Fb.s3.amazonaws.com%2Fk%3FX-Amz-Signature%3Dabc%26X-Amz-Security-Token%3Dxyz"


@pytest.mark.parametrize(
    "echoed",
    [
        pytest.param(urllib.parse.quote(SIGV4, safe=""), id="whole URL encoded once"),
        pytest.param(urllib.parse.quote(urllib.parse.quote(SIGV4, safe=""), safe=""), id="encoded twice"),
        pytest.param(SIGV4.split("?")[0] + "?" + urllib.parse.quote(SIGV4.split("?")[1], safe=""), id="query only"),
        pytest.param("https://p.example/fetch?src=" + urllib.parse.quote(SIGV2, safe=""), id="inside a parameter"),
        pytest.param(json.dumps({"input": urllib.parse.quote(SIGV4, safe="")}), id="encoded, in JSON"),
        pytest.param(urllib.parse.quote_plus(SIGV2), id="form-encoded"),
    ],
)
def test_a_presigned_url_echoed_percent_encoded_loses_its_credentials(echoed):
    clean = redact_credentials(f"cannot fetch {echoed}: 403")
    assert not any(secret in clean for secret in SECRETS), clean
    assert "amazonaws.com" in clean and clean.endswith(": 403")  # where it pointed stays readable


def test_the_encoded_signature_and_session_token_are_redacted_in_what_is_stored():
    outcome = classify_failure(400, f'{{"error": "download failed for {BRIEF_EXAMPLE}"}}', None)
    assert "abc" not in outcome.error and "xyz" not in outcome.error
    assert "X-Amz-Signature%3DREDACTED%26X-Amz-Security-Token%3DREDACTED" in outcome.error


def test_an_encoded_password_in_a_url_is_redacted():
    clean = redact_credentials("GET https%3A%2F%2Fdeploy%3Ahunter2%40media.example%2Fa.mp4 failed")
    assert "hunter2" not in clean and "deploy" not in clean
    assert "https%3A%2F%2FREDACTED%40media.example%2Fa.mp4" in clean


def test_encoded_text_without_credentials_is_left_alone():
    text = "see https%3A%2F%2Fh%2Fa.mp4%3Fw%3D1%26h%3D2 (HTTP 404)"
    assert redact_credentials(text) == text


# --- terminal controls in provider text ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("\x1b[31mred\x1b[0m alert", "red alert"),
        ("\x1b]8;;https://evil.example\x07click\x1b]8;;\x07 here", "click here"),
        ("\x1b]0;pwned title\x1b\\after", "after"),
        ("bell\x07 and NUL\x00 and DEL\x7f", "bell and NUL and DEL"),
        ("C1 \x9b31m CSI and \x90DCS", "C1 31m CSI and DCS"),
        ("invoice\u202efdp.exe", "invoicefdp.exe"),
        ("isolate \u2066x\u2069 and marks \u200e\u200f\u061c", "isolate x and marks"),
        ("cursor \x1b[2J\x1b[H home \x1b7 saved \x1b8", "cursor home saved"),
        ("unterminated \x1b]52;c;ZXZpbA==", "unterminated"),
        ("café 日本語 🎬 ok", "café 日本語 🎬 ok"),
    ],
)
def test_provider_text_keeps_no_terminal_controls(text, kept):
    assert excerpt(text) == kept
    assert strip_controls(text).split() == kept.split()


def test_a_control_inside_an_echoed_url_cannot_hide_its_signature():
    text = "fetch https://b/k.mp4?X-Amz-Signature=aeeed9bb\x1b[0mccd4d02ee5 failed"
    assert "ccd4d02ee5" not in excerpt(text) and "aeeed9bb" not in excerpt(text)


def test_provider_errors_and_statuses_are_stored_without_controls():
    from migrator.providers.mux import read_asset

    outcome = classify_failure(400, '{"error": "\x1b[2J\x1b[31mbad source\x1b[0m"}', None)
    assert outcome.error == 'HTTP 400: {"error": "bad source"}'
    errored = read_asset({"id": "a1", "status": "errored", "errors": {"messages": ["\x1b]0;x\x07no\u202e video"]}})
    assert errored.error == "provider: no video"
    working = read_asset({"id": "a1", "status": "prep\x1b[5maring"})
    assert working.status == "preparing"


# The credential forms the source platforms mint into the links the uploader hands a provider, as their
# documents show them: a provider that echoes the link in an error must not store the credential.
VIMEO_PLAY = (
    "https://player.vimeo.com/play/1234567?s=1234567_1700000000_5f0a6b3c9d2e8f7a1b4c&loc=external&context=Vimeo"
)
VIMEO_CDN = (
    "https://vod-progressive.akamaized.net/exp=1700003600~acl=%2Fvimeo-prod-skyfire-std-us%2F01%2F*"
    "~hmac=3f9a1c7e5b2d8a6f4e0c9b7a5d3f1e8c6a4b2d0f9e7c5a3b1d8f6e4c2a0b9d7f/vimeo-prod-skyfire-std-us/01/1/file.mp4"
)
APIVIDEO_PRIVATE = (
    "https://vod.api.video/vod/vi4blUQJFrYWbaG44NChkH27/token/8fd70443-d9f0-45d2-b01c-12c8cfc707c9/mp4/source.mp4"
)
APIVIDEO_SESSION = "https://vod.api.video/vod/vi4blUQJFrYWbaG44NChkH27/mp4/source.mp4?avh=Ym9sZC1zZXNzaW9uLXRva2Vu"
STREAM_SIGNED = (
    "https://customer-f33zs165nr7gyfy4.cloudflarestream.com/eyJhbGciOiJSUzI1NiIsImtpZCI6ImE0In0"
    ".eyJzdWIiOiJlYTk1MTMyYzE1NzMyNDEyZDIyYzE0NzY0ZmEifQ.c2lnbmF0dXJlLWJ5dGVz/downloads/default.mp4"
)
PLATFORM_SECRETS = {
    VIMEO_PLAY: "5f0a6b3c9d2e8f7a1b4c",
    VIMEO_CDN: "3f9a1c7e5b2d8a6f4e0c",
    APIVIDEO_PRIVATE: "8fd70443-d9f0",
    APIVIDEO_SESSION: "Ym9sZC1zZXNzaW9u",
    STREAM_SIGNED: "eyJzdWIiOiJl",
}


@pytest.mark.parametrize("url", list(PLATFORM_SECRETS))
@pytest.mark.parametrize("quoted", [False, True])
def test_source_platform_link_credentials_are_redacted_as_written_and_percent_encoded(url, quoted):
    shown = urllib.parse.quote(url, safe="") if quoted else url
    clean = redact_credentials(f"cannot fetch {shown}: 403")
    assert PLATFORM_SECRETS[url] not in clean
    assert "REDACTED" in clean and clean.endswith(": 403")
    host = urllib.parse.urlsplit(url).hostname
    assert host in urllib.parse.unquote(clean)  # what the operator needs to act on stays


def test_the_path_around_a_path_token_is_kept():
    assert redact_credentials(APIVIDEO_PRIVATE) == (
        "https://vod.api.video/vod/vi4blUQJFrYWbaG44NChkH27/token/REDACTED/mp4/source.mp4"
    )
    cdn = redact_credentials(VIMEO_CDN)
    assert "/exp=1700003600~acl=" in cdn and "~hmac=REDACTED/vimeo-prod-skyfire-std-us/01/1/file.mp4" in cdn


def test_a_platform_credential_in_a_provider_error_never_reaches_the_stored_error():
    body = json.dumps({"error": f"could not download {VIMEO_CDN} nor {APIVIDEO_PRIVATE}"})
    outcome = classify_failure(400, body, None)
    assert "3f9a1c7e5b2d8a6f" not in outcome.error and "8fd70443" not in outcome.error


def test_every_reason_the_ledger_stores_is_redacted_whoever_wrote_it():
    from migrator.ledger.table import Update

    update = (
        Update()
        .set("last_error", f"source failed: {APIVIDEO_PRIVATE}")
        .set(("track_states", "t1", "error"), VIMEO_PLAY)
    )
    stored = " ".join(str(v) for v in update.values.values())
    assert "8fd70443" not in stored and "5f0a6b3c9d2e" not in stored and stored.count("REDACTED") == 2
    assert Update().set("source_url", VIMEO_PLAY).values == {":v0": VIMEO_PLAY}  # what is not a reason is kept


# Kaltura's KS in a link's path: flavorAsset.getUrl puts one there when access control asks for it (asset.php
# getDownloadUrlWithExpiry), as does the documented playManifest form `.../playManifest/entryId/{id}/.../ks/{ks}/
# video.{ext}` (knowledge.kaltura.com, "How to retrieve the download or streaming URL using API calls").
KALTURA_KS = "djJ8MjAxMjM0NXzA1b2C3d4E5f6G7h8I9j0Kl-_mNoPqRsTuVwXyZ0123456789abcdefABCDEF"
KALTURA_DOWNLOAD = (
    "https://cdnapisec.kaltura.com/p/2012345/sp/201234500/playManifest/entryId/0_abcd1234/flavorId/1_efgh5678"
    f"/format/download/protocol/https/ks/{KALTURA_KS}/a.mp4"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (KALTURA_DOWNLOAD, KALTURA_DOWNLOAD.replace(KALTURA_KS, "REDACTED")),  # the path around it kept
        (
            f"https://www.kaltura.com/p/309/sp/0/playManifest/entryId/1_rcit0qgs/ks/{KALTURA_KS}",  # at the end
            "https://www.kaltura.com/p/309/sp/0/playManifest/entryId/1_rcit0qgs/ks/REDACTED",
        ),
        (
            f"fetch failed: https://h/p/1/sp/100/playManifest/ks/{KALTURA_KS}?referrer=x: 403",
            "fetch failed: https://h/p/1/sp/100/playManifest/ks/REDACTED?referrer=x: 403",
        ),
        (urllib.parse.quote(KALTURA_DOWNLOAD, safe=""), None),  # percent-encoded, as echoed inside a parameter
        (urllib.parse.quote(urllib.parse.quote(KALTURA_DOWNLOAD, safe=""), safe=""), None),  # twice
        ("https://h/videos/ks/", "https://h/videos/ks/"),  # no value: nothing to take out
        # The query form Kaltura's API and playManifest also take (`?ks=...`, `&ks=...`).
        (
            f"https://www.kaltura.com/api_v3/service/media/action/list?ks={KALTURA_KS}&format=1",
            "https://www.kaltura.com/api_v3/service/media/action/list?ks=REDACTED&format=1",
        ),
        ("https://h/tasks/abc/books/x.mp4", "https://h/tasks/abc/books/x.mp4"),  # `ks/` inside a word is no KS
    ],
)
def test_a_kaltura_ks_in_a_link_path_is_redacted(text, expected):
    clean = redact_credentials(text)
    assert KALTURA_KS[:24] not in clean
    if expected is None:
        assert "REDACTED" in clean and "cdnapisec.kaltura.com" in urllib.parse.unquote(urllib.parse.unquote(clean))
    else:
        assert clean == expected


# Dropbox's temporary links (files/get_temporary_link, four hours) hold their credential in the path:
# `https://uc….dl.dropboxusercontent.com/cd/0/get/<token>/file`, and the HTTP documentation's example
# `https://dl.dropboxusercontent.com/apitl/1/<token>`.
DROPBOX_TOKEN = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKlMnOpQrStUvWxYz"
DROPBOX_LINK = f"https://uc4f2a9b1c.dl.dropboxusercontent.com/cd/0/get/{DROPBOX_TOKEN}/file"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (DROPBOX_LINK, DROPBOX_LINK.replace(DROPBOX_TOKEN, "REDACTED")),  # the host and `/file` kept
        (
            f"fetch failed: {DROPBOX_LINK}?dl=1: 410 Gone",
            "fetch failed: https://uc4f2a9b1c.dl.dropboxusercontent.com/cd/0/get/REDACTED/file?dl=1: 410 Gone",
        ),
        (
            f"https://dl.dropboxusercontent.com/cd/0/get/{DROPBOX_TOKEN}",  # at the end
            "https://dl.dropboxusercontent.com/cd/0/get/REDACTED",
        ),
        (
            f"https://dl.dropboxusercontent.com/apitl/1/{DROPBOX_TOKEN}",
            "https://dl.dropboxusercontent.com/apitl/1/REDACTED",
        ),
        (urllib.parse.quote(DROPBOX_LINK, safe=""), None),  # percent-encoded, as echoed inside a parameter
        (urllib.parse.quote(urllib.parse.quote(DROPBOX_LINK, safe=""), safe=""), None),  # twice
        (f'{{"url": "{DROPBOX_LINK}"}}', f'{{"url": "{DROPBOX_LINK.replace(DROPBOX_TOKEN, "REDACTED")}"}}'),
        ("https://h/cd/0/get/", "https://h/cd/0/get/"),  # no value: nothing to take out
        ("https://h/abcd/0/get/x/file", "https://h/abcd/0/get/x/file"),  # `cd/` inside a word is not Dropbox's
        ("https://h/cd/x/get/abc/file", "https://h/cd/x/get/abc/file"),  # not /cd/<number>/get/
    ],
)
def test_a_dropbox_temporary_link_token_in_the_path_is_redacted(text, expected):
    clean = redact_credentials(text)
    assert DROPBOX_TOKEN[:24] not in clean
    if expected is None:
        assert "REDACTED" in clean and "dl.dropboxusercontent.com" in urllib.parse.unquote(urllib.parse.unquote(clean))
    else:
        assert clean == expected
