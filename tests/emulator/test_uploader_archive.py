"""The uploader's hooks for the archive (issue 43): once the provider has a video, its original is owed to the
archive (the copy's item, pending, in reconcile's archive lane) and the archive worker is told; a refused video,
or a stack without an archive, owes and sends nothing; a repeated message owes nothing twice. With ArchiveFirst,
the original is archived before the create and the target is handed the archived copy."""

from __future__ import annotations

import json
import time
import urllib.parse
from dataclasses import replace

import pytest
import requests
from migrator.ledger import Ledger

from tests.conftest import unique
from tests.emulator.test_uploader import make_uploader, send_and_receive, videos_of
from tests.emulator.test_uploader_tracks import received

pytestmark = pytest.mark.emulator


def test_a_created_video_is_owed_to_the_archive_and_the_archive_worker_told(aws, table, queue, tracks_queue, sim):
    uploader = make_uploader(aws, table, queue, sim)
    uploader.settings = replace(uploader.settings, archive_queue_url=tracks_queue)  # any queue stands in
    made, refused = unique("made"), unique("bad")
    bodies = [
        json.dumps({"id": made, "source_url": "https://media.example.com/a.mp4"}),
        json.dumps({"id": refused, "source_url": "https://media.example.com/unsupported.mp4"}),
    ]
    uploader.handle_batch({"Records": send_and_receive(aws("sqs"), queue, bodies)}, lambda: 60.0)
    assert received(aws("sqs"), tracks_queue) == [{"id": made}]
    ledger = Ledger(table, aws("dynamodb"))
    owed = ledger.archive(made)
    assert owed["state"] == "pending" and owed["due_lane"].startswith("archive#")
    assert ledger.archive(refused) is None


def test_a_stack_without_an_archive_owes_nothing(aws, table, queue, sim):
    uploader = make_uploader(aws, table, queue, sim)
    assert uploader.settings.archive_queue_url == ""
    made = unique("plain")
    body = json.dumps({"id": made, "source_url": "https://media.example.com/a.mp4"})
    uploader.handle_batch({"Records": send_and_receive(aws("sqs"), queue, [body])}, lambda: 60.0)
    assert Ledger(table, aws("dynamodb")).archive(made) is None


# --- ArchiveFirst: the original archived before the create, the target handed the archived copy ---------------------

ORIGINAL = b"\x00\x00\x00\x18ftypmp42 the original's bytes"


def _archive_first(aws, table, queue, archive_queue, sim, clock):
    """An uploader that archives first, into a bucket of the emulator's S3 it presigns from (SigV4, as deployed)."""
    import boto3
    from migrator.presign import SIGV4, S3Presigner

    s3 = aws("s3")
    bucket = f"masters-{int(time.time() * 1000)}"
    s3.create_bucket(Bucket=bucket)
    signing = boto3.client(
        "s3", endpoint_url=s3.meta.endpoint_url, region_name="us-east-1", config=SIGV4,
        aws_access_key_id="test", aws_secret_access_key="test",
    )  # fmt: skip
    uploader = make_uploader(aws, table, queue, sim, clock=clock)
    uploader.settings = replace(
        uploader.settings,
        archive_queue_url=archive_queue,
        archive_first=True,
        archive_bucket=bucket,
        archive_prefix="masters",
    )
    uploader.presign = S3Presigner(
        uploader.settings.presign_expiry_s, client_for=lambda region: signing, region_of=lambda bucket: "us-east-1"
    )
    return uploader, bucket


def _first_pass(aws, uploader, queue, archive_queue, asset_id: str, source: str) -> list[dict]:
    body = json.dumps({"id": asset_id, "source_url": source})
    records = send_and_receive(aws("sqs"), queue, [body])
    result = uploader.handle_batch({"Records": records}, lambda: 60.0)
    assert result["batchItemFailures"] == [{"itemIdentifier": records[0]["messageId"]}]  # held, to come back
    assert _taken(aws("sqs"), archive_queue, 20) == [{"id": asset_id}]  # the archive worker told
    return records


def _comes_back(aws, queue, records: list[dict]) -> list[dict]:
    """The held message, brought back now (its hold, ~30 s, is what the uploader's clock is moved past)."""
    sqs = aws("sqs")
    sqs.change_message_visibility(QueueUrl=queue, ReceiptHandle=records[0]["receiptHandle"], VisibilityTimeout=0)
    return send_and_receive(sqs, queue, [], waiting=1)


def _taken(sqs, url: str, wait_s: int = 1) -> list[dict]:
    """The messages waiting in `url`, deleted as they are taken (none left to come back later in the test)."""
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=wait_s).get("Messages", [])
    for m in messages:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return [json.loads(m["Body"]) for m in messages]


def _nothing_in(sqs, url: str) -> bool:
    return _taken(sqs, url) == []


def test_archive_first_creates_from_the_archived_copy_once_it_is_archived(aws, table, queue, tracks_queue, sim):
    """ArchiveFirst: the first pass owes the copy, tells the archive worker and creates nothing, its attempt not
    spent; once the copy is archived, the next pass creates the video from a link presigned for the archived object
    (the ledger keeps the row's own link), and owes no second copy."""
    from migrator.archive.decide import ArchiveState
    from migrator.ledger import ArchiveEnd

    now = [time.time()]
    uploader, bucket = _archive_first(aws, table, queue, tracks_queue, sim, lambda: now[0])
    made, source = unique("first"), "https://one-use.example.com/a.mp4?token=once"
    records = _first_pass(aws, uploader, queue, tracks_queue, made, source)

    ledger = Ledger(table, aws("dynamodb"))
    assert videos_of(sim, made) == []  # nothing created at the provider
    held = ledger.get(made)
    assert held["state"] == "pending" and int(held["attempts"]) == 0 and int(held["holds"]) == 1
    assert held["last_error"] == "archive first: the original is being archived"
    assert 30 <= float(held["retry_after"]) - now[0] <= 36  # back in about 30 s
    assert ledger.archive(made)["state"] == "pending"

    # A pass held again while the copy is under way creates nothing and sends no second archive message.
    now[0] += 40
    records = _comes_back(aws, queue, records)
    uploader.handle_batch({"Records": records}, lambda: 60.0)
    assert videos_of(sim, made) == [] and _nothing_in(aws("sqs"), tracks_queue)
    assert int(ledger.get(made)["attempts"]) == 0 and int(ledger.get(made)["holds"]) == 2

    # The archive worker's end, as it writes it: the object in the bucket, the copy's item archived with its key.
    key = f"masters/{made}/original.mp4"
    aws("s3").put_object(Bucket=bucket, Key=key, Body=ORIGINAL)
    claimed = ledger.claim_archive(made, "archiver", time.time(), time.time() + 60)
    assert claimed.token == "archiver"
    end = ArchiveEnd(ArchiveState.ARCHIVED, fields={"key": key, "bytes": len(ORIGINAL), "sha256": "c2hh"})
    assert ledger.finish_archive(made, "archiver", end, time.time()).won

    now[0] += 700
    records = _comes_back(aws, queue, records)
    result = uploader.handle_batch({"Records": records}, lambda: 60.0)
    assert result["batchItemFailures"] == []
    (video,) = videos_of(sim, made)
    handed = video["input"]
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(handed).query)
    assert bucket in handed and urllib.parse.urlsplit(handed).path.endswith(f"/{key}")
    assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]
    assert query["X-Amz-Expires"] == [str(uploader.settings.presign_expiry_s)]
    assert requests.get(handed, timeout=10).content == ORIGINAL  # the target can fetch the archived copy
    item = ledger.get(made)
    assert item["state"] == "processing" and item["source_url"] == source  # the ledger keeps the row's link
    assert "X-Amz" not in json.dumps(item, default=str)  # the presigned link is never stored
    assert _nothing_in(aws("sqs"), tracks_queue)  # no second copy owed


def test_archive_first_fails_the_asset_when_the_archive_failed_for_good(aws, table, queue, tracks_queue, sim):
    from migrator.archive.decide import ArchiveState
    from migrator.ledger import ArchiveEnd

    now = [time.time()]
    uploader, _ = _archive_first(aws, table, queue, tracks_queue, sim, lambda: now[0])
    lost = unique("lost")
    records = _first_pass(aws, uploader, queue, tracks_queue, lost, "https://one-use.example.com/gone.mp4")

    ledger = Ledger(table, aws("dynamodb"))
    ledger.claim_archive(lost, "archiver", time.time(), time.time() + 60)
    why = "the source cannot serve the file: 404"
    assert ledger.finish_archive(lost, "archiver", ArchiveEnd(ArchiveState.FAILED, why), time.time()).won

    now[0] += 40
    records = _comes_back(aws, queue, records)
    result = uploader.handle_batch({"Records": records}, lambda: 60.0)
    assert result["batchItemFailures"] == []  # finished: the operator's retry decides
    assert videos_of(sim, lost) == []
    item = ledger.get(lost)
    assert item["state"] == "failed" and "retry_after" not in item
    assert item["last_error"] == f"archived first, and the archive failed: {why}"
