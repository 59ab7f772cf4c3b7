"""`migrator doctor --source` against the object stores' emulators: S3 (ministack), Cloud Storage (fake-gcs-server
and its token stand-in), Azure Blob (Azurite). Each answers as the adapter assumes (migrator.shapes.stores), every
read-only check passes, and nothing is written: a bucket doctor has read holds what it held."""

from __future__ import annotations

from azure.storage.blob import BlobServiceClient, ContentSettings
from migrator.sources import S3Source, azure, build
from migrator_cli.first_contact import FAIL, PASS
from migrator_cli.first_contact_source import check_source

from tests.conftest import unique


def passed(report, platform: str) -> None:
    said = {each.name: each.result for each in report.lines}
    assert report.ok, [each.text() for each in report.lines if each.result == FAIL]
    for step in ("listing", "resolve to a download link", "link answers", "link lifetime"):
        assert said[f"{platform} {step}"] == PASS, report.text()


def test_s3_answers_as_its_adapter_assumes_and_is_only_read(aws):
    s3 = aws("s3")
    bucket = unique("first-contact")
    s3.create_bucket(Bucket=bucket)
    for key, storage in [("v/a.mp4", "STANDARD"), ("v/b.mp4", "INTELLIGENT_TIERING"), ("v/notes.txt", "STANDARD")]:
        s3.put_object(Bucket=bucket, Key=key, Body=b"\x00" * 16, StorageClass=storage)
    report = check_source(S3Source(s3, bucket, "v/"))
    passed(report, "s3")
    said = {each.name: each for each in report.lines}
    assert said["s3 the object list (AWS ListObjectsV2)"].result == PASS
    assert said["s3 the object's head (AWS HeadObject)"].result == PASS  # the Intelligent-Tiering object's tier
    listed = s3.list_objects_v2(Bucket=bucket)["Contents"]
    assert sorted(o["Key"] for o in listed) == ["v/a.mp4", "v/b.mp4", "v/notes.txt"]


def test_cloud_storage_answers_as_its_adapter_assumes(gcs_emulator):
    name = unique("fc").lower()
    store = gcs_emulator.client().create_bucket(name)
    for i in range(3):
        store.blob(f"v/clip-{i}.mp4").upload_from_string(b"\x00" * 64, content_type="video/mp4")
    source = build("gcs", lambda: gcs_emulator.credentials(name, "v/"), gcs_emulator.url, patient=True)
    report = check_source(source)
    passed(report, "gcs")
    said = {each.name.split(" (")[0]: each.result for each in report.lines}
    assert said["gcs the access token"] == said["gcs the object list"] == said["gcs the object's signed HEAD"] == PASS


def test_azure_blob_answers_as_its_adapter_assumes(azurite):
    name = unique("fc").lower().replace("_", "-")
    service = BlobServiceClient.from_connection_string(azurite.connection_string(), api_version=azure.SAS_VERSION)
    container = service.create_container(name)
    for i in range(3):
        meta = {"title": f"Clip {i}"}
        container.upload_blob(
            f"lib/clip-{i}.mp4", b"\x00" * 64, metadata=meta, content_settings=ContentSettings("video/mp4")
        )
    source = build("azure", lambda: azurite.credentials(name, "lib/"), azurite.endpoint, patient=True)
    report = check_source(source)
    passed(report, "azure")
    said = {each.name.split(" (")[0]: each.result for each in report.lines}
    assert said["azure the blob list"] == said["azure the blob's properties"] == PASS
