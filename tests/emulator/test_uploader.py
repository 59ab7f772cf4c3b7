"""The uploader against real DynamoDB and SQS (emulator) and a real HTTP provider (simulator)."""

from __future__ import annotations

import decimal
import itertools
import json
import random
import threading
import time

import pytest
import requests
from migrator.ledger import Ledger
from migrator.pacer import Go, Hold, Pacer
from migrator.providers import AssetRef, build
from migrator.providers.keys import idempotency_key
from migrator.settings import Settings
from migrator.sources import Resolution, Resolver
from migrator.sources.dropbox import DropboxSource
from migrator.states import State
from migrator.uploader import Uploader

pytestmark = pytest.mark.emulator


def make_uploader(
    aws, table, queue, sim, rate=0.0, clock=time.time, max_attempts=5, read_timeout=5.0, inline_wait=15.0, start=0.0
) -> Uploader:
    settings = Settings(
        table_name=table,
        queue_url=queue,
        provider_base_url=sim.url,
        max_attempts=max_attempts,
        rate_per_s=rate,
        read_timeout_s=read_timeout,
    )
    dynamodb = aws("dynamodb")
    return Uploader(
        settings=settings,
        ledger=Ledger(table, dynamodb),
        pacer=Pacer(table, dynamodb, rate, start),
        provider=build("generic", sim.url, lambda: sim.config.token, read_timeout_s=read_timeout),
        sqs=aws("sqs"),
        presign=lambda url: url,
        clock=clock,
        rng=random.Random(3),
        inline_wait_max_s=inline_wait,
    )


def videos_of(sim, asset_id: str) -> list[dict]:
    """The simulator's videos for an asset, asked as any client would."""
    answer = requests.get(f"{sim.url}/videos", params={"metadata[migration_ref]": asset_id}, timeout=5)
    return answer.json()["data"]


def send_and_receive(sqs, queue, bodies: list[str], waiting: int = 0) -> list[dict]:
    """Push bodies and receive them back as Lambda-shaped SQS records (with `waiting` more already queued,
    such as messages a retry delay brings back)."""
    for body in bodies:
        sqs.send_message(QueueUrl=queue, MessageBody=body)
    records: list[dict] = []
    deadline = time.time() + 20
    while len(records) < len(bodies) + waiting and time.time() < deadline:
        resp = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, AttributeNames=["All"], WaitTimeSeconds=1)
        for m in resp.get("Messages", []):
            records.append(
                {
                    "messageId": m["MessageId"],
                    "receiptHandle": m["ReceiptHandle"],
                    "body": m["Body"],
                    "attributes": m.get("Attributes", {}),
                }
            )
    assert len(records) == len(bodies) + waiting
    return records


def body(asset_id: str, url: str | None = None) -> str:
    return json.dumps({"id": asset_id, "source_url": url or f"https://media.example.com/{asset_id}.mp4"})


def plenty() -> float:
    return 300.0


def test_batch_gives_each_record_its_fate(aws, table, queue, sim):
    uploader = make_uploader(aws, table, queue, sim)
    records = send_and_receive(
        aws("sqs"),
        queue,
        [
            body("new-1"),
            body("new-1"),
            "not json",
            json.dumps({"id": "bad-scheme", "source_url": "ftp://x/y.mp4"}),
            body("rej-1", "https://media.example.com/unsupported.mp4"),
        ],
    )
    result = uploader.handle_batch({"Records": records}, plenty)
    assert result == {"batchItemFailures": []}  # created, duplicate, poison x2, rejected: all finished
    ledger = uploader.ledger
    assert ledger.get("new-1")["state"] == "processing"
    assert ledger.get("bad-scheme")["state"] == "rejected"
    assert "scheme 'ftp'" in ledger.get("bad-scheme")["last_error"]
    rejected = ledger.get("rej-1")
    assert rejected["state"] == "rejected" and "unsupported source" in rejected["last_error"]
    stats = sim.stats()
    assert stats["videos"] == 1  # the duplicate never reached the provider
    assert stats["create_requests"] == 2  # new-1 and rej-1


def test_a_crash_between_create_and_ledger_write_costs_no_second_video(aws, table, queue, sim):
    sim.patch_config({"honour_idempotency": False})  # like real providers: no Idempotency-Key support
    now = [time.time()]

    class Crash(BaseException):
        """Kills the worker between the provider's answer and the ledger write."""

    crashing = make_uploader(aws, table, queue, sim, clock=lambda: now[0])

    def crash(*args, **kwargs):
        raise Crash()

    crashing.ledger.mark_processing = crash
    [record] = send_and_receive(aws("sqs"), queue, [body("crash-1")])
    with pytest.raises(Crash):
        crashing.process(record, deadline=now[0] + 30)
    assert sim.stats()["videos"] == 1
    assert crashing.ledger.get("crash-1")["state"] == "uploading"

    now[0] += 60  # the dead worker's lease runs out; SQS redelivers the message
    survivor = make_uploader(aws, table, queue, sim, clock=lambda: now[0])
    fate = survivor.process(record, deadline=now[0] + 30)
    assert fate.kind.value == "finished"
    item = survivor.ledger.get("crash-1")
    assert item["state"] == "processing"
    stats = sim.stats()
    assert stats["videos"] == 1 and stats["duplicate_videos"] == 0
    assert stats["lookups"] == 1  # the survivor asked before creating
    assert [v["id"] for v in videos_of(sim, "crash-1")] == [
        item["remote_id"]
    ]  # the ledger points at the one video made


def test_without_the_lookup_the_crash_would_duplicate(aws, table, queue, sim):
    """The guard above is real: a blind re-create makes a second video."""
    sim.patch_config({"honour_idempotency": False})
    provider = build("generic", sim.url, lambda: None)
    provider.create(AssetRef("x-1"), "https://media.example.com/x.mp4")
    provider.create(AssetRef("x-1"), "https://media.example.com/x.mp4")
    assert sim.stats()["duplicate_videos"] == 1


def test_a_429d_message_is_not_redelivered_before_retry_after(aws, table, queue, sim):
    sim.patch_config({"rate": 0.25, "burst": 1, "retry_after_mode": "seconds"})
    uploader = make_uploader(aws, table, queue, sim, inline_wait=0)  # longer than it would wait in place
    sqs = aws("sqs")
    records = send_and_receive(sqs, queue, [body("first"), body("second")])
    t0 = time.time()
    result = uploader.handle_batch({"Records": records}, plenty)
    assert len(result["batchItemFailures"]) == 1
    throttled = [r for r in sim.requests_log() if r["status"] == 429]
    assert len(throttled) == 1
    told = throttled[0]["retry_after_s"]
    assert told >= 1
    held_id = throttled[0]["ref"]
    item = uploader.ledger.get(held_id)
    assert item["state"] == "pending"
    assert int(item["throttles"]) == 1 and int(item["attempts"]) == 0  # counted as a throttle only
    assert float(item["retry_after"]) >= throttled[0]["t"] + told

    seen_at = None
    while time.time() - t0 < told + 8:
        resp = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1, VisibilityTimeout=30)
        if resp.get("Messages"):
            seen_at = time.time()
            assert json.loads(resp["Messages"][0]["Body"])["id"] == held_id
            break
    assert seen_at is not None, "the throttled message never came back"
    assert seen_at >= throttled[0]["t"] + told  # not a moment before the provider said


def test_pacer_spaces_concurrent_creates(aws, table):
    rate = 20.0
    pacer = Pacer(table, aws("dynamodb"), rate)
    slots: list[float] = []
    lock = threading.Lock()

    def reserve():
        for _ in range(5):
            slot = pacer.reserve(time.time())
            assert isinstance(slot, Go)
            with lock:
                slots.append(slot.at)

    threads = [threading.Thread(target=reserve) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    slots.sort()
    gaps = [b - a for a, b in itertools.pairwise(slots)]
    assert len(slots) == 30
    assert min(gaps) >= 1 / rate - 0.002  # never two creates closer than 1/rate
    assert slots[-1] - slots[0] >= 29 / rate - 0.01


def test_pacer_hold_stops_everyone_until_it_passes(aws, table):
    pacer = Pacer(table, aws("dynamodb"), 10.0)
    now = time.time()
    pacer.hold(now + 30)
    pacer.hold(now + 5)  # an earlier hold never shortens a later one
    held = pacer.reserve(now + 1)
    assert isinstance(held, Hold) and held.until == pytest.approx(now + 30, abs=0.01)
    assert isinstance(pacer.reserve(now + 31), Go)


def test_cluster_hold_keeps_other_workers_from_calling(aws, table, queue, sim):
    """Once one worker saw a 429, another holds its create instead of provoking its own."""
    sim.patch_config({"rate": 0.1, "burst": 1})
    first = make_uploader(aws, table, queue, sim, inline_wait=0)
    other = make_uploader(aws, table, queue, sim, inline_wait=0)
    records = send_and_receive(aws("sqs"), queue, [body("h-1"), body("h-2"), body("h-3")])
    first.handle_batch({"Records": records[:2]}, plenty)  # h-1 created, h-2 gets the 429
    assert sim.stats()["throttled"] == 1
    result = other.handle_batch({"Records": records[2:]}, plenty)
    assert len(result["batchItemFailures"]) == 1
    assert sim.stats()["throttled"] == 1  # no second 429: the other worker never called
    item = other.ledger.get(json.loads(records[2]["body"])["id"])
    assert item["state"] == "pending" and int(item["throttles"]) == 0 and int(item["attempts"]) == 0


def test_transient_failures_back_off_then_fail_for_good(aws, table, queue, sim):
    sim.patch_config({"fail_rate": 1.0})
    now = [time.time()]
    uploader = make_uploader(aws, table, queue, sim, clock=lambda: now[0], max_attempts=3)
    [record] = send_and_receive(aws("sqs"), queue, [body("flaky")])
    for attempt in (1, 2):
        fate = uploader.process(record, deadline=now[0] + 60)
        assert fate.kind.value == "later"
        item = uploader.ledger.get("flaky")
        assert item["state"] == "failed" and int(item["attempts"]) == attempt
        assert "HTTP 500" in item["last_error"]
        now[0] = float(item["retry_after"]) + 0.1
    fate = uploader.process(record, deadline=now[0] + 60)
    assert fate.kind.value == "finished"
    item = uploader.ledger.get("flaky")
    assert item["state"] == "failed" and "retry_after" not in item


def test_after_an_operator_retry_one_5xx_does_not_fail_the_asset_for_good(aws, table, queue, sim):
    sim.patch_config({"fail_rate": 1.0})
    now = [time.time()]
    uploader = make_uploader(aws, table, queue, sim, clock=lambda: now[0], max_attempts=2)
    [record] = send_and_receive(aws("sqs"), queue, [body("budget")])
    for _ in range(2):
        uploader.process(record, deadline=now[0] + 60)
        now[0] = float(uploader.ledger.get("budget").get("retry_after", now[0])) + 0.1
    assert "retry_after" not in uploader.ledger.get("budget")  # failed for good after 2 tries
    assert uploader.ledger.rearm("budget", State.FAILED, now[0]).won  # the operator's retry
    fate = uploader.process(record, deadline=now[0] + 60)
    item = uploader.ledger.get("budget")
    assert fate.kind.value == "later", "one 5xx after a retry must not end the fresh budget"
    assert item["state"] == "failed" and "retry_after" in item


def test_ids_that_are_not_latin1_upload_with_the_exact_id_as_reference(aws, table, queue, sim):
    ids = ["library/日本語.mp4", "café", " leading space"]
    uploader = make_uploader(aws, table, queue, sim)
    records = send_and_receive(aws("sqs"), queue, [body(i, "https://media.example.com/x.mp4") for i in ids])
    assert uploader.handle_batch({"Records": records}, plenty) == {"batchItemFailures": []}
    for asset_id in ids:
        assert uploader.ledger.get(asset_id)["state"] == "processing", asset_id
        [video] = videos_of(sim, asset_id)
        assert video["metadata"]["migration_ref"] == asset_id
    keys = {r["key"] for r in sim.requests_log()}
    assert keys == {idempotency_key(i) for i in ids}


def test_a_retried_rejected_asset_gets_a_new_video_not_the_errored_one(aws, table, queue, sim):
    now = [time.time()]
    uploader = make_uploader(aws, table, queue, sim, clock=lambda: now[0])
    url = "https://media.example.com/corrupt-once.mp4"  # the simulator errors sources named "corrupt"
    [record] = send_and_receive(aws("sqs"), queue, [body("rej", url)])
    uploader.process(record, deadline=now[0] + 60)
    first = uploader.ledger.get("rej")["remote_id"]
    deadline = time.time() + 5
    while requests.get(f"{sim.url}/videos/{first}", timeout=5).json()["status"] != "errored" and time.time() < deadline:
        time.sleep(0.05)
    assert uploader.ledger.settle("rej", State.REJECTED, first, now[0], error="provider: errored").won
    assert uploader.ledger.rearm("rej", State.REJECTED, now[0]).won  # retry --state rejected
    fate = uploader.process(record, deadline=now[0] + 60)
    item = uploader.ledger.get("rej")
    assert fate.kind.value == "finished" and item["state"] == "processing"
    assert item["remote_id"] != first, "the errored video was adopted again"
    assert sim.stats()["lookups"] == 1  # it still looked first, and passed over the errored video
    keys = [r["key"] for r in sim.requests_log()]
    assert len(keys) == 2 and keys[0] != keys[1]


@pytest.mark.parametrize(
    "raw",
    [
        '{"id": "m-1", "source_url": "https://h/a.mp4", "metadata": {"n": 1e300}}',
        '{"id": "m-2", "source_url": "https://h/a.mp4", "duration_s": NaN}',
        '{"id": "m-3\\ud800", "source_url": "https://h/a.mp4"}',
    ],
)
def test_unstorable_messages_are_poison_at_once_not_deferred_for_days(aws, table, queue, sim, raw):
    uploader = make_uploader(aws, table, queue, sim)
    [record] = send_and_receive(aws("sqs"), queue, [raw])
    assert uploader.handle_batch({"Records": [record]}, plenty) == {"batchItemFailures": []}
    assert sim.stats()["create_requests"] == 0


def test_a_marshalling_error_on_the_uploader_path_is_poison(aws, table, queue, sim):
    """Whatever slips past validation and cannot be marshalled is finished with, never deferred."""
    uploader = make_uploader(aws, table, queue, sim)
    [record] = send_and_receive(aws("sqs"), queue, [body("m-4")])

    def unstorable(*args, **kwargs):
        raise decimal.Overflow("above Emax")

    uploader.ledger.claim = unstorable
    assert uploader.handle_batch({"Records": [record]}, plenty) == {"batchItemFailures": []}


def test_a_video_the_provider_finished_before_its_adoption_is_settled_at_once(aws, table, queue, sim):
    """Its webhook came while the ledger did not know the video yet (lost for a provider whose events
    name only the video): the worker that adopts the video reads its state instead of waiting for a poll."""
    sim.patch_config({"honour_idempotency": False, "processing_delay_s": 0.0, "webhooks_enabled": False})
    now = [time.time()]
    crashing = make_uploader(aws, table, queue, sim, clock=lambda: now[0])

    class Crash(BaseException):
        pass

    def crash(*args, **kwargs):
        raise Crash()

    crashing.ledger.mark_processing = crash
    [record] = send_and_receive(aws("sqs"), queue, [body("done-early", "https://m.example.com/d.mp4?duration=4")])
    with pytest.raises(Crash):
        crashing.process(record, deadline=now[0] + 30)
    time.sleep(0.2)  # the provider finishes; nobody hears of it
    now[0] += 60
    survivor = make_uploader(aws, table, queue, sim, clock=lambda: now[0])
    assert survivor.process(record, deadline=now[0] + 30).kind.value == "finished"
    item = survivor.ledger.get("done-early")
    assert item["state"] == "ready" and float(item["provider_duration_s"]) == 4.0
    assert sim.stats()["videos"] == 1


def test_an_s3_source_a_provider_cannot_fetch_is_rejected_before_any_request(aws, table, queue, sim):
    """Cloudflare fetches with HEAD and range GETs, which a URL presigned for GET refuses: the asset is
    rejected with the fix before the provider is called, whoever pushed the message."""
    uploader = make_uploader(aws, table, queue, sim)
    uploader.provider = build("cloudflare", sim.url, lambda: '{"account_id": "abc", "api_token": "t"}')
    [record] = send_and_receive(aws("sqs"), queue, [body("s3-cf", "s3://masters/a.mp4")])

    fate = uploader.process(record, deadline=time.time() + 60)

    item = uploader.ledger.get("s3-cf")
    assert fate.kind.value == "finished" and item["state"] == "rejected"
    assert "HEAD and range GETs" in item["last_error"]
    assert sim.requests_log(ops=None) == []  # not one request reached the provider


class FourHourLinks:
    """Dropbox's source as the uploader meets it: a temporary link that lives four hours, and Dropbox's terms."""

    link_terms = DropboxSource.link_terms

    def resolve(self, ref):
        return Resolution.ready("https://dl.dropboxusercontent.com/x.mp4", expires_at=time.time() + 4 * 3600)


def test_a_link_that_cannot_live_as_long_as_vimeo_needs_is_rejected_with_why_before_any_request(aws, table, queue, sim):
    """Issue 47, item 2.6: Vimeo's pull needs a link "valid for at least 24 hours", and a Dropbox link lives 4:
    the asset is rejected at the hand-off, the reason and its fix in the ledger, and Vimeo is never asked."""
    uploader = make_uploader(aws, table, queue, sim)
    uploader.provider = build("vimeo", sim.url, lambda: "vimeo-token")
    uploader.sources = Resolver(lambda platform: FourHourLinks(), lambda url: url)
    [record] = send_and_receive(aws("sqs"), queue, [body("dropbox/id:abc", "dropbox://id:abc")])

    fate = uploader.process(record, deadline=time.time() + 60)

    item = uploader.ledger.get("dropbox/id:abc")
    assert fate.kind.value == "finished" and item["state"] == "rejected"
    assert item["last_error"].startswith("Dropbox's temporary links live 4 hours")
    assert "vimeo needs one valid for 24 h" in item["last_error"] and "migrate from there" in item["last_error"]
    assert sim.requests_log(ops=None) == []  # not one request reached the provider
