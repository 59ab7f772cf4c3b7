"""migrator.sources.azure against Azurite (filled through azure-storage-blob, the official SDK), which checks
every SAS signature it is handed: a wrong string-to-sign is refused here as Azure refuses it. The SAS is also
checked byte for byte against the string-to-sign "Create a service SAS" documents for version 2020-12-06 and
later (written here from its description) and against the SDK's own for the same key, version and expiry.

Azurite rehydrates an archived blob at once and copies synchronously, so a blob still being rehydrated (or
copied), as List Blobs documents it (`ArchiveStatus` rehydrate-pending-to-hot, `CopyStatus` pending), is put in
the listing's answer here, and the lookup that finds it done is Azurite's."""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
import time
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from azure.storage.blob import BlobServiceClient, ContentSettings
from migrator.messages import AssetMessage
from migrator.sources import ResolutionKind, SourceDenied, Unfetchable, azure, build, parse_ref
from migrator_cli.main import main
from migrator_cli.sweep import read_mark, sweep

from tests.conftest import unique
from tests.emulator.test_source_gcs import every_page

VIDEO = ContentSettings(content_type="video/mp4")


@pytest.fixture
def container(azurite):
    """A fresh container of 7 videos under lib/ (titles in metadata for the even ones), a poster, a blob named
    as a video but stored as an image, one archived, one outside the prefix; and the source that lists lib/."""
    name = unique("c").lower().replace("_", "-")
    service = BlobServiceClient.from_connection_string(azurite.connection_string(), api_version=azure.SAS_VERSION)
    client = service.create_container(name)
    for i in range(7):
        meta = {"title": f"Clip number {i}", "Description": "from Azure", "tags": "a, b"} if i % 2 == 0 else None
        blob = f"lib/{'talks/' if i % 3 == 0 else ''}clip-{i}.mp4"
        client.upload_blob(blob, b"\x00" * (100 + i), metadata=meta, content_settings=VIDEO)
    client.upload_blob("lib/poster.jpg", b"j", content_settings=ContentSettings(content_type="image/jpeg"))
    client.upload_blob("lib/not-a-video.mov", b"j", content_settings=ContentSettings(content_type="image/png"))
    client.upload_blob("lib/cold.mp4", b"c", content_settings=VIDEO).set_standard_blob_tier("Archive")
    client.upload_blob("elsewhere/x.mp4", b"x", content_settings=VIDEO)
    source = build("azure", lambda: azurite.credentials(name, "lib/"), azurite.endpoint, patient=True)
    return client, source


def test_the_container_is_listed_by_marker_with_titles_and_what_cannot_be_read_named(container, monkeypatch):
    client, source = container
    monkeypatch.setattr(azure, "PAGE_SIZE", 4)
    pages = every_page(source)
    entries = [e for p in pages for e in p.entries]
    rows = {e.title: e for e in entries if isinstance(e, AssetMessage)}
    assert len(pages) == 3 and len(rows) == 7 and sum(p.skipped for p in pages) == 1  # the poster
    assert rows["Clip number 0"].folder == "talks" and rows["Clip number 0"].description == "from Azure"
    assert rows["clip-1.mp4"].privacy == "private" and rows["clip-1.mp4"].size_bytes == 101
    assert (
        rows["clip-1.mp4"].source_url == f"azure://{source.settings().account}/{client.container_name}/lib/clip-1.mp4"
    )
    named = {e.title: e.reason for e in entries if isinstance(e, Unfetchable)}
    assert set(named) == {"not-a-video.mov", "cold.mp4"} and "not a video" in named["not-a-video.mov"]
    assert named["cold.mp4"].startswith("in the Archive tier") and "--rehydrate-priority" in named["cold.mp4"]


def test_a_sweep_resumes_from_its_marker_and_a_delta_keeps_what_was_modified(container, tmp_path, monkeypatch):
    client, source = container
    monkeypatch.setattr(azure, "PAGE_SIZE", 4)
    out, marks = tmp_path / "rows.jsonl", tmp_path / "marks.json"
    first = sweep(source, out, mark_path=marks, out=io.StringIO(), limit=3)
    rest = sweep(source, out, mark_path=marks, out=io.StringIO())
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert first.limit_reached and rest.done and len(ids) == len(set(ids)) == 7
    time.sleep(1.1)  # Last-Modified counts whole seconds
    client.upload_blob("lib/clip-5.mp4", b"\x01", overwrite=True, metadata={"title": "Renamed"}, content_settings=VIDEO)
    delta = source.page(None, since=read_mark(marks, "azure") + 1)
    assert [e.title for e in delta.entries] == ["Renamed"]


def test_a_blob_being_rehydrated_is_pending_and_the_next_sweep_finds_it_online(container, tmp_path, monkeypatch):
    _, source = container
    listed = azure.blob_of_xml

    def rehydrating(node):  # what List Blobs says of a blob whose Set Blob Tier to Hot is under way
        blob = listed(node)
        if blob["name"] == "lib/clip-5.mp4":
            blob["properties"].update({"AccessTier": "Archive", "ArchiveStatus": "rehydrate-pending-to-hot"})
        return blob

    monkeypatch.setattr(azure, "blob_of_xml", rehydrating)
    marks = tmp_path / "marks.json"
    first = sweep(source, tmp_path / "all.jsonl", mark_path=marks, out=io.StringIO())
    assert first.pending == 1 and first.rows == 6
    monkeypatch.setattr(azure, "blob_of_xml", listed)  # rehydrated since (Azurite's blob is Hot)
    again = sweep(source, tmp_path / "delta.jsonl", mark_path=marks, since=read_mark(marks, "azure") + 1)
    rows = [json.loads(line) for line in (tmp_path / "delta.jsonl").read_text().splitlines()]
    assert [r["title"] for r in rows] == ["clip-5.mp4"] and again.pending == 0


def test_what_list_blobs_says_of_copies_and_customer_keys_is_read(container):
    pending = {"name": "a.mp4", "properties": {"CopyStatus": "pending"}, "metadata": {}}
    assert azure.blob_problem(pending) == ("pending", azure.COPYING)
    failed = {"name": "a.mp4", "properties": {"CopyStatus": "failed"}, "metadata": {}}
    assert azure.blob_problem(failed)[0] == "unfetchable"
    keyed = {"name": "a.mp4", "properties": {"CustomerProvidedKeySha256": "abc="}, "metadata": {}}
    assert azure.blob_problem(keyed) == ("unfetchable", azure.CPK)


def test_resolve_hands_a_sas_azurite_accepts_and_refuses_when_tampered(container):
    client, source = container
    settings = source.settings()
    ref = parse_ref(f"azure://{settings.account}/{client.container_name}/lib/clip-2.mp4")
    resolution = source.resolve(ref)
    assert resolution.kind is ResolutionKind.READY and resolution.privacy == "private"
    assert requests.get(resolution.url, timeout=10).content == b"\x00" * 102
    query = parse_qs(urlsplit(resolution.url).query)
    assert query["sp"] == ["r"] and query["sr"] == ["b"] and query["sv"] == [azure.SAS_VERSION] and "st" not in query
    tampered = resolution.url.replace("sp=r", "sp=rw")
    assert requests.get(tampered, timeout=10).status_code == 403  # Azurite checks the signature
    client.get_blob_client("lib/clip-2.mp4").delete_blob()
    gone = source.resolve(ref)
    assert gone.kind is ResolutionKind.UNFETCHABLE and "not found at the source" in gone.reason
    archived = source.resolve(parse_ref(f"azure://{settings.account}/{client.container_name}/lib/cold.mp4"))
    assert archived.kind is ResolutionKind.UNFETCHABLE and archived.reason.startswith("in the Archive tier")
    outside = source.resolve(parse_ref(f"azure://{settings.account}/{client.container_name}/elsewhere/x.mp4"))
    assert outside.kind is ResolutionKind.UNFETCHABLE and "configured container" in outside.reason


def test_a_link_a_target_needs_for_longer_is_signed_for_that_long_and_served(container):
    """Issue 47, item 2.6: Vimeo needs its link for 24 hours; an Azure SAS is signed for 25 (7 days at most)."""
    client, source = container
    settings = source.settings()
    ref = parse_ref(f"azure://{settings.account}/{client.container_name}/lib/clip-2.mp4")
    now = time.time()
    lasting = source.resolve_lasting(ref, 25 * 3600)
    assert 25 * 3600 - 5 <= lasting.expires_at - now <= 25 * 3600 + 5
    assert requests.get(lasting.url, timeout=10).content == b"\x00" * 102
    assert source.resolve_lasting(ref, 30 * 24 * 3600).expires_at - now <= azure.LONGEST_SAS_S + 5


def test_the_service_sas_is_the_documented_string_to_sign_byte_for_byte():
    from azure.storage.blob._shared_access_signature import BlobSharedAccessSignature

    key = base64.b64encode(b"k" * 64).decode()
    expiry = "2026-12-03T09:30:15Z"
    query, string_to_sign = azure.service_sas("acct", base64.b64decode(key), "videos", "lib/a b.mp4", "r", expiry, True)
    documented = "\n".join(
        ["r", "", expiry, "/blob/acct/videos/lib/a b.mp4", "", "", "https", azure.SAS_VERSION, "b"] + [""] * 7
    )  # sp st se resource si sip spr sv sr snapshot-time ses rscc rscd rsce rscl rsct
    assert string_to_sign == documented
    expected = base64.b64encode(hmac.new(base64.b64decode(key), documented.encode(), hashlib.sha256).digest())
    assert query["sig"] == expected.decode()
    sdk, seen = BlobSharedAccessSignature("acct", key), []
    sdk.x_ms_version = azure.SAS_VERSION
    token = sdk.generate_blob(
        "videos", "lib/a b.mp4", permission="r", expiry=expiry, protocol="https", sts_hook=seen.append
    )
    assert seen == [documented] and parse_qs(token)["sig"] == [query["sig"]]


def test_a_wrong_key_is_denied_naming_no_secret(azurite, container):
    client, _ = container
    creds = {**azurite.credentials(client.container_name), "account_key": base64.b64encode(b"w" * 64).decode()}
    source = build("azure", lambda: creds, azurite.endpoint)
    with pytest.raises(SourceDenied) as refused:
        source.page(None)
    assert "HTTP 403" in refused.value.reason and creds["account_key"] not in refused.value.reason


def test_migrator_inventory_from_azure(container, azurite, tmp_path, monkeypatch):
    client, _ = container
    creds = tmp_path / "creds.json"
    creds.write_text(json.dumps({"azure": azurite.credentials(client.container_name, "lib/")}))
    monkeypatch.chdir(tmp_path)
    base = ["--from", "azure", "--source-url", azurite.endpoint, "--credentials", str(creds)]
    assert main(["inventory", *base, "-o", "rows.jsonl", "--mark-file", "m.json"]) == 0
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert len(rows) == 7 and all(r["metadata"]["source_platform"] == "azure" for r in rows)
    named = [json.loads(line) for line in (tmp_path / "rows.jsonl.unfetchable.jsonl").read_text().splitlines()]
    assert sorted(n["title"] for n in named) == ["cold.mp4", "not-a-video.mov"]


def test_inventory_with_the_az_cli_variables_then_plan_times_the_source_at_its_documented_rate(
    container, azurite, tmp_path, monkeypatch, capsys
):
    client, _ = container
    monkeypatch.chdir(tmp_path)  # the sweep records its mark in the working directory (azure.mark.json)
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT", azurite.account)
    monkeypatch.setenv("AZURE_STORAGE_KEY", azurite.key)
    monkeypatch.setenv("AZURE_STORAGE_CONTAINER", client.container_name)
    out = tmp_path / "azure.jsonl"
    assert main(["inventory", "--from", "azure", "--source-url", azurite.endpoint, "-o", str(out), "--restart"]) == 0
    assert azurite.key not in capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 8  # the whole container: lib/'s seven and elsewhere/x.mp4
    assert main(["plan", str(out), "--provider", "mux", "--rate", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    mux = doc["providers"]["mux"]
    assert list(mux["source_time_s"]) == ["azure"] and mux["source_time_s"]["azure"] < 1  # 8 at 20,000 a second
    assert not any("azure" in w for w in doc.get("warnings", []) + mux.get("warnings", []))


def test_sidecars_beside_a_blob_come_from_the_streamed_listing_across_pages_and_resolve(azurite, monkeypatch):
    from tests.emulator.test_source_gcs import SIDECARS

    name = unique("side").lower().replace("_", "-")
    service = BlobServiceClient.from_connection_string(azurite.connection_string(), api_version=azure.SAS_VERSION)
    client = service.create_container(name)
    for key, body in SIDECARS.items():
        settings = VIDEO if key.endswith(".mp4") else ContentSettings(content_type="application/octet-stream")
        client.upload_blob(key.replace("v/", "lib/", 1), body, content_settings=settings)
    source = build("azure", lambda: azurite.credentials(name, "lib/"), azurite.endpoint, patient=True)
    monkeypatch.setattr(azure, "PAGE_SIZE", 2)
    pages = every_page(source)
    rows = {e.source_url.rsplit("/lib/", 1)[1]: e for p in pages for e in p.entries}
    account = source.settings().account
    assert {k: r.thumbnail_url for k, r in rows.items()} == {
        "a.mp4": f"azure://{account}/{name}/lib/a.jpg",
        "b.mp4": f"azure://{account}/{name}/lib/b.png",
        "c.mp4": None,
        "d/e.mp4": f"azure://{account}/{name}/lib/d/e.webp",
        "g.mp4": None,
    }
    [chapters] = rows["a.mp4"].tracks
    assert (chapters.url, chapters.kind) == (f"azure://{account}/{name}/lib/a.chapters.vtt", "chapters")
    assert [(c.id, c.name) for c in rows["d/e.mp4"].collections] == [(f"{account}/{name}/lib/d", "d")]
    assert source.requests <= 3 * len(pages)  # a page and at most two lookups a page: none per blob
    image = source.resolve(parse_ref(rows["b.mp4"].thumbnail_url))
    assert requests.get(image.url, timeout=10).content == SIDECARS["v/b.png"]
    vtt = source.resolve(parse_ref(chapters.url))
    assert requests.get(vtt.url, timeout=10).content == SIDECARS["v/a.chapters.vtt"]
