"""Migrating from an object store, end to end: Google Cloud Storage → api.video and Azure Blob Storage →
Cloudflare Stream, with template.yaml deployed (the stores' credentials in the stack's source secret, their
emulators' addresses in SourceBaseUrls), `migrator inventory --from gcs|azure` run against the real emulators
(fake-gcs-server, Azurite), `migrator load` of what it wrote, and the real queue, uploader, webhook and ledger.

The uploader resolves each `gcs://` or `azure://` reference just before the create (a V4 signed URL; a service
SAS, which Azurite checks), and the target simulator fetches what it is handed from the emulator over loopback
(check_source: Stream's HEAD then range GET), so a link that does not work fails the ingest. Per pair: every
fetchable object ready at the target with the title its metadata (or its name) gives, every unfetchable one
reported with its reason and never sent, no duplicate video. A bucket carries no caption tracks, so none are
expected at the target.
"""

from __future__ import annotations

import pytest
from azure.storage.blob import BlobServiceClient, ContentSettings

from tests.e2e.source_pairs import assert_never_sent
from tests.e2e.sources import STORE_NAME

pytestmark = pytest.mark.e2e
MEDIA = b"\x00\x00\x00\x18ftypmp42" * 64


def titled(i: int) -> dict | None:
    return {"title": f"Store video {i}"} if i % 2 == 0 else None


def fill_gcs(store, prefix: str) -> None:
    bucket = store.client().bucket(STORE_NAME)
    for i in range(6):
        blob = bucket.blob(f"{prefix}/ep{i}.mp4")
        blob.metadata = titled(i)
        blob.upload_from_string(MEDIA, content_type="video/mp4")
    bucket.blob(f"{prefix}/cover.jpg").upload_from_string(b"j", content_type="image/jpeg")
    bucket.blob(f"{prefix}/trailer.mp4").upload_from_string(b"j", content_type="image/gif")


def fill_azure(store, prefix: str) -> None:
    service = BlobServiceClient.from_connection_string(store.connection_string(), api_version="2025-11-05")
    container = service.get_container_client(STORE_NAME)
    video = ContentSettings(content_type="video/mp4")
    for i in range(6):
        container.upload_blob(f"{prefix}/ep{i}.mp4", MEDIA, metadata=titled(i), content_settings=video)
    container.upload_blob(f"{prefix}/cover.jpg", b"j", content_settings=ContentSettings(content_type="image/jpeg"))
    container.upload_blob(f"{prefix}/vault.mp4", MEDIA, content_settings=video).set_standard_blob_tier("Archive")


PAIRS = [
    ("gcs", "apivideo", fill_gcs, {"trailer.mp4": "not a video"}),
    ("azure", "cloudflare", fill_azure, {"vault.mp4": "in the Archive tier"}),
]


@pytest.mark.parametrize(("platform", "to", "fill", "named"), PAIRS)
def test_a_store_moves_with_its_titles_and_without_what_cannot_be_fetched(
    platform, to, fill, named, sources, aws, request
):
    target = request.getfixturevalue("targets")(to)  # the fixtures imported above
    fill(sources.stores[platform], "shows")
    rows, unfetchable, items = request.getfixturevalue("migrate")(platform, target)
    assert sorted(r["title"] for r in rows) == [
        "Store video 0", "Store video 2", "Store video 4", "ep1.mp4", "ep3.mp4", "ep5.mp4"
    ]  # fmt: skip
    assert {e["title"]: e["reason"] for e in unfetchable}.keys() == named.keys()
    for entry in unfetchable:
        assert named[entry["title"]] in entry["reason"]
    assert {items[r["id"]]["state"] for r in rows} == {"ready"}, [items[r["id"]] for r in rows]
    assert_never_sent(aws, target, unfetchable)
    for row in rows:
        assert row["source_url"].startswith(f"{platform}://") and row["privacy"] == "private"
        assert target.title_of(items[row["id"]]["remote_id"]) == row["title"]
    assert target.sim.stats()["duplicate_videos"] == 0
