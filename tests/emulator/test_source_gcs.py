"""migrator.sources.gcs against a real GCS emulator (fake-gcs-server, filled through google-cloud-storage, the
official SDK) and a stand-in for Google's token endpoint that checks the JWT grant's signature and claims.

fake-gcs-server accepts any signature, so the V4 signed URL is also checked byte for byte: against the
canonical request and string-to-sign Google's "V4 signing process with your own program" lays out (built
here from its description, not from our code), against the SDK's own `generate_signed_url_v4` for the same key
and instant, and its signature verified with the key's public half."""

from __future__ import annotations

import hashlib
import io
import json
import time
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, quote, urlsplit

import pytest
import requests
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from migrator.messages import AssetMessage
from migrator.sources import ResolutionKind, SourceDenied, Unfetchable, build, gcs, parse_ref
from migrator_cli.main import main
from migrator_cli.sweep import read_mark, sweep

from tests.conftest import unique


def every_page(source) -> list:
    """Each page of the listing, following its cursors to the end."""
    pages = [source.page(None)]
    while pages[-1].cursor is not None:
        pages.append(source.page(pages[-1].cursor))
    return pages


@pytest.fixture
def bucket(gcs_emulator):
    """A fresh bucket of 7 videos under v/ (titles in metadata for the even ones), a thumbnail, an object named
    as a video but stored as an image, and one outside the prefix; and the source that lists v/."""
    name = unique("lib").lower()
    store = gcs_emulator.client().create_bucket(name)
    for i in range(7):
        blob = store.blob(f"v/{'talks/' if i % 3 == 0 else ''}clip-{i}.mp4")
        if i % 2 == 0:
            blob.metadata = {"title": f"Clip number {i}", "description": "from GCS", "tags": "a, b"}
        blob.upload_from_string(b"\x00" * (100 + i), content_type="video/mp4")
    store.blob("v/poster.jpg").upload_from_string(b"j", content_type="image/jpeg")
    store.blob("v/not-a-video.mov").upload_from_string(b"j", content_type="image/png")
    store.blob("elsewhere/x.mp4").upload_from_string(b"x", content_type="video/mp4")
    source = build("gcs", lambda: gcs_emulator.credentials(name, "v/"), gcs_emulator.url, patient=True)
    return store, source


def test_the_bucket_is_listed_by_page_token_with_titles_and_the_wrong_type_named(bucket, gcs_emulator, monkeypatch):
    store, source = bucket
    monkeypatch.setattr(gcs, "PAGE_SIZE", 3)
    grants = len(gcs_emulator.tokens.grants)
    pages = every_page(source)
    entries = [e for p in pages for e in p.entries]
    rows = {e.title: e for e in entries if isinstance(e, AssetMessage)}
    assert len(pages) == 3 and len(rows) == 7 and sum(p.skipped for p in pages) == 1  # the poster
    assert rows["Clip number 0"].folder == "talks" and rows["Clip number 0"].tags == ("a", "b")
    assert rows["clip-1.mp4"].privacy == "private" and rows["clip-1.mp4"].size_bytes == 101
    assert rows["clip-1.mp4"].source_url == f"gcs://{store.name}/v/clip-1.mp4"
    (odd,) = [e for e in entries if isinstance(e, Unfetchable)]
    assert odd.title == "not-a-video.mov" and "Content-Type image/png, not a video" in odd.reason
    assert len(gcs_emulator.tokens.grants) - grants == 1  # one token for the whole listing
    grant = gcs_emulator.tokens.grants[-1]
    assert grant["scope"] == gcs.SCOPE and grant["exp"] - grant["iat"] == 3600


def test_a_sweep_resumes_from_its_page_token_and_a_delta_keeps_what_was_updated(bucket, tmp_path, monkeypatch):
    store, source = bucket
    monkeypatch.setattr(gcs, "PAGE_SIZE", 4)
    out, marks = tmp_path / "rows.jsonl", tmp_path / "marks.json"
    first = sweep(source, out, mark_path=marks, out=io.StringIO(), limit=3)
    assert first.limit_reached and not first.done
    rest = sweep(source, out, mark_path=marks, out=io.StringIO())
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert (
        rest.done
        and rest.resumed_at >= 3
        and len(ids) == len(set(ids)) == 7
        and rest.unfetchable + first.unfetchable == 1
    )
    mark = read_mark(marks, "gcs")
    time.sleep(0.2)
    blob = store.blob("v/clip-5.mp4")
    blob.metadata = {"title": "Renamed"}
    blob.upload_from_string(b"\x01" * 10, content_type="video/mp4")  # a new generation: `updated` moves
    delta = source.page(None, since=mark + 0.1)
    assert [e.title for e in delta.entries if isinstance(e, AssetMessage)] == ["Renamed"]


def test_resolve_heads_the_object_then_hands_a_v4_url_the_emulator_serves(bucket):
    store, source = bucket
    ref = parse_ref(f"gcs://{store.name}/v/clip-2.mp4")
    resolution = source.resolve(ref)
    assert resolution.kind is ResolutionKind.READY and resolution.privacy == "private"
    assert requests.get(resolution.url, timeout=10).content == b"\x00" * 102
    (one,) = source.video(f"{store.name}/v/clip-2.mp4").entries  # one object asked for by name
    assert one.title == "Clip number 2" and one.source_url == str(ref)
    store.blob("v/clip-2.mp4").delete()
    assert not source.video(f"{store.name}/v/clip-2.mp4").entries
    gone = source.resolve(ref)
    assert gone.kind is ResolutionKind.UNFETCHABLE and "not found at the source" in gone.reason
    outside = source.resolve(parse_ref(f"gcs://{store.name}/elsewhere/x.mp4"))
    assert outside.kind is ResolutionKind.UNFETCHABLE and "configured bucket" in outside.reason
    other = source.resolve(parse_ref("gcs://someone-elses-bucket/v/clip-1.mp4"))
    assert other.kind is ResolutionKind.UNFETCHABLE


def test_a_link_a_target_needs_for_longer_is_signed_for_that_long_and_served(bucket):
    """Issue 47, item 2.6: Vimeo needs its link for 24 hours; a Cloud Storage link is signed for 25 (V4: 7 days)."""
    store, source = bucket
    ref = parse_ref(f"gcs://{store.name}/v/clip-2.mp4")
    lasting = source.resolve_lasting(ref, 25 * 3600)
    assert parse_qs(urlsplit(lasting.url).query)["X-Goog-Expires"] == ["90000"]
    assert requests.get(lasting.url, timeout=10).content == b"\x00" * 102
    longest = source.resolve_lasting(ref, 30 * 24 * 3600)
    assert parse_qs(urlsplit(longest.url).query)["X-Goog-Expires"] == [str(gcs.SEVEN_DAYS_S)]
    assert source.link_terms.longest_s == gcs.SEVEN_DAYS_S


def test_an_object_with_a_customer_supplied_key_is_named_with_why(bucket):
    _, source = bucket
    creds = source.settings()
    item = {"name": "v/locked.mp4", "contentType": "video/mp4", "customerEncryption": {"keySha256": "x"}}
    entry = source.entry_of(creds, item)
    assert isinstance(entry, Unfetchable) and entry.reason == gcs.CSEK


def test_the_v4_url_is_the_documented_form_byte_for_byte(gcs_emulator):
    from google.cloud.storage._signing import generate_signed_url_v4
    from google.oauth2 import service_account

    key = gcs_emulator.tokens.key()
    now = datetime(2026, 12, 2, 9, 30, 15, tzinfo=UTC).timestamp()
    name = "v/a clip (1)+é.mp4"
    signer = gcs.SigningKey(key["private_key_id"], key["private_key"])
    ours = gcs.v4_signed_url(
        "https://storage.googleapis.com", key["client_email"], signer, "lib", name, "GET", now, 86400
    )
    # The documented pieces, by hand: path-style resource percent-encoded, X-Goog-* sorted, host signed.
    credential = key["client_email"].replace("@", "%40") + "%2F20261202%2Fauto%2Fstorage%2Fgoog4_request"
    query = (
        f"X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential={credential}&X-Goog-Date=20261202T093015Z"
        "&X-Goog-Expires=86400&X-Goog-SignedHeaders=host"
    )
    path = "/lib/v/a%20clip%20%281%29%2B%C3%A9.mp4"
    canonical = f"GET\n{path}\n{query}\nhost:storage.googleapis.com\n\nhost\nUNSIGNED-PAYLOAD"
    string_to_sign = (
        "GOOG4-RSA-SHA256\n20261202T093015Z\n20261202/auto/storage/goog4_request\n"
        + hashlib.sha256(canonical.encode()).hexdigest()
    )
    assert ours.startswith(f"https://storage.googleapis.com{path}?{query}&X-Goog-Signature=")
    signature = bytes.fromhex(ours.rsplit("X-Goog-Signature=", 1)[1])
    gcs_emulator.tokens.public_key.verify(signature, string_to_sign.encode(), padding.PKCS1v15(), hashes.SHA256())
    sdk = generate_signed_url_v4(
        service_account.Credentials.from_service_account_info(key),
        "/lib/" + quote(name, safe="/~"),  # as Blob.generate_signed_url hands it the name
        timedelta(seconds=86400),
        _request_timestamp="20261202T093015Z",
    )
    assert ours == sdk


def test_an_expiry_past_seven_days_is_cut_to_seven(gcs_emulator):
    parts = gcs.v4_parts("https://storage.googleapis.com", "a@b", "lib", "x.mp4", "GET", 0, 30 * 86400)
    assert "X-Goog-Expires=604800&" in parts["query"]


def test_a_refused_grant_is_denied_naming_no_secret(gcs_emulator, tmp_path):
    key = gcs_emulator.tokens.key()
    key["client_email"] = "someone-else@example-project.iam.gserviceaccount.com"
    source = build("gcs", lambda: {"bucket": "lib", "service_account_key": key}, gcs_emulator.url)
    with pytest.raises(SourceDenied) as refused:
        source.page(None)
    assert "refused the service account key" in refused.value.reason and "PRIVATE" not in refused.value.reason


def test_googles_own_client_gets_a_token_from_the_stand_in_and_lists_the_bucket(bucket, gcs_emulator):
    """google-auth's service-account grant (google.oauth2.service_account) posts to the key's `token_uri` with
    `aud` https://oauth2.googleapis.com/token whatever that URI is ("When making an access token request this
    value is always https://oauth2.googleapis.com/token"), and google-cloud-storage lists with the token."""
    from google.auth.transport.requests import Request
    from google.cloud import storage
    from google.oauth2 import service_account

    store, _ = bucket
    key = gcs_emulator.tokens.key()
    creds = service_account.Credentials.from_service_account_info(key, scopes=[gcs.SCOPE])
    grants = len(gcs_emulator.tokens.grants)
    creds.refresh(Request())
    assert creds.valid and creds.token.startswith("ya29.")
    grant = gcs_emulator.tokens.grants[-1]
    assert len(gcs_emulator.tokens.grants) == grants + 1 and grant["aud"] == "https://oauth2.googleapis.com/token"
    client = storage.Client(
        project="example-project",
        credentials=service_account.Credentials.from_service_account_info(key, scopes=[gcs.SCOPE]),
        client_options={"api_endpoint": gcs_emulator.url},
    )
    names = [blob.name for blob in client.list_blobs(store.name, prefix="v/")]
    granted = gcs_emulator.tokens.grants[grants + 1 :]  # the client's own
    assert len(names) == 9 and granted and {g["aud"] for g in granted} == {"https://oauth2.googleapis.com/token"}
    for aud in ("https://oauth2.googleapis.com/token/", "https://evil.example/token"):
        assert gcs_emulator.tokens.check(_grant(gcs_emulator, aud)) is None  # no other audience


def _grant(gcs_emulator, aud: str) -> dict:
    """A JWT bearer grant for the stand-in's account with `aud`, signed with its key."""
    from google.auth import crypt, jwt

    signer = crypt.RSASigner.from_service_account_info(gcs_emulator.tokens.key())
    now = int(time.time())
    claims = {"iss": gcs_emulator.tokens.email, "scope": gcs.SCOPE, "aud": aud, "iat": now, "exp": now + 3600}
    assertion = jwt.encode(signer, claims).decode()
    return {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion}


def test_migrator_inventory_and_load_from_gcs(bucket, gcs_emulator, tmp_path, monkeypatch, capsys):
    store, _ = bucket
    creds = tmp_path / "creds.json"
    creds.write_text(json.dumps({"gcs": gcs_emulator.credentials(store.name, "v/")}))
    monkeypatch.chdir(tmp_path)
    base = ["--from", "gcs", "--source-url", gcs_emulator.url, "--credentials", str(creds)]
    assert main(["inventory", *base, "-o", "rows.jsonl", "--mark-file", "m.json"]) == 0
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert len(rows) == 7 and all(r["source_url"].startswith(f"gcs://{store.name}/v/") for r in rows)
    (named,) = [json.loads(line) for line in (tmp_path / "rows.jsonl.unfetchable.jsonl").read_text().splitlines()]
    assert named["title"] == "not-a-video.mov" and "not a video" in named["reason"]


SIDECARS = {
    "v/a.chapters.vtt": b"WEBVTT\n\n00:00.000 --> 00:05.000\nIntro\n",
    "v/a.jpg": b"\xff\xd8\xff-a",
    "v/a.mp4": b"\x00",
    "v/b.mp4": b"\x00",
    "v/b.png": b"\x89PNG-b",
    "v/c.mp4": b"\x00",
    "v/d/e.mp4": b"\x00",
    "v/d/e.webp": b"RIFF-e",
    "v/f.jpg": b"\xff\xd8\xff-f",  # a sidecar without its video
    "v/g.mp4.jpg": b"\xff\xd8\xff-g",  # not g.mp4's: the video's whole name and .jpg does not count
    "v/g.mp4": b"\x00",
}


def test_sidecars_beside_a_video_come_from_the_same_listing_across_pages_and_resolve(gcs_emulator, monkeypatch):
    name = unique("side").lower()
    store = gcs_emulator.client().create_bucket(name)
    for key, body in SIDECARS.items():
        store.blob(key).upload_from_string(body, content_type="video/mp4" if key.endswith(".mp4") else None)
    source = build("gcs", lambda: gcs_emulator.credentials(name, "v/"), gcs_emulator.url, patient=True)
    monkeypatch.setattr(gcs, "PAGE_SIZE", 2)  # a.jpg | a.mp4 ... : every stem crosses a page
    pages = every_page(source)
    rows = {e.source_url.rsplit("/v/", 1)[1]: e for p in pages for e in p.entries}
    assert set(rows) == {"a.mp4", "b.mp4", "c.mp4", "d/e.mp4", "g.mp4"}
    assert {k: r.thumbnail_url for k, r in rows.items()} == {
        "a.mp4": f"gcs://{name}/v/a.jpg",
        "b.mp4": f"gcs://{name}/v/b.png",
        "c.mp4": None,
        "d/e.mp4": f"gcs://{name}/v/d/e.webp",
        "g.mp4": None,
    }
    [chapters] = rows["a.mp4"].tracks
    assert (chapters.url, chapters.kind, chapters.format) == (f"gcs://{name}/v/a.chapters.vtt", "chapters", "vtt")
    assert [(c.id, c.name, c.kind) for c in rows["d/e.mp4"].collections] == [(f"{name}/v/d", "d", "folder")]
    assert not rows["a.mp4"].collections and rows["a.mp4"].published_at is None
    assert source.requests <= 3 * len(pages) + 1  # a page, at most two lookups a page, and a token
    image = source.resolve(parse_ref(rows["a.mp4"].thumbnail_url))
    assert requests.get(image.url, timeout=10).content == SIDECARS["v/a.jpg"]
    vtt = source.resolve(parse_ref(chapters.url))
    assert requests.get(vtt.url, timeout=10).content == SIDECARS["v/a.chapters.vtt"]
    (one,) = source.video(f"{name}/v/b.mp4").entries  # one object asked for: its stem looked up
    assert one.thumbnail_url == f"gcs://{name}/v/b.png"
