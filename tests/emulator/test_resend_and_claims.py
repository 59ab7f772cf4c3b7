"""What a third review found in the ledger and the uploader, against the real tables (emulator).

- a ledger record with numbers in its metadata, or one a poison message left without a
  source, must not stop `migrator retry` halfway (24.1);
- an unreadable provider secret, or any failure before a create was sent, must not spend
  the asset's attempts or leave its lease held (24.2);
- a lookup reaches back to the earliest try that may have created a video, whatever
  happened to the lookups in between (24.3).
"""

from __future__ import annotations

import json
import random
import time

import pytest
from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError
from migrator.fate import Outcome, OutcomeKind
from migrator.ledger import Claimed, Ledger
from migrator.messages import AssetMessage, parse_message
from migrator.pacer import Pacer
from migrator.providers import AssetRef, build
from migrator.providers.__init__ import readable
from migrator.providers.facts import Poll
from migrator.settings import Settings
from migrator.states import State
from migrator.uploader import Uploader
from migrator_cli.ops import retry

from tests.conftest import unique

pytestmark = pytest.mark.emulator


def record_for(asset_id: str, receives: int = 1, source_url: str | None = None) -> dict:
    source_url = source_url or f"https://media.example.com/{asset_id}.mp4"
    body = json.dumps({"id": asset_id, "source_url": source_url})
    return {"messageId": unique("m"), "receiptHandle": "r", "body": body, "attributes": {}}


def uploader_with(aws, table, queue, provider, clock=time.time, presign=lambda url: url) -> Uploader:
    settings = Settings(table_name=table, queue_url=queue, provider_base_url="https://provider.invalid")
    dynamodb = aws("dynamodb")
    return Uploader(
        settings=settings,
        ledger=Ledger(table, dynamodb),
        pacer=Pacer(table, dynamodb, 0.0, 100.0),
        provider=provider,
        sqs=aws("sqs"),
        presign=presign,
        clock=clock,
        rng=random.Random(7),
    )


# --- 24.1: every ledger record turns back into a valid message, or is said not to -------------------


def test_a_retry_goes_past_a_record_that_cannot_be_resent_and_keeps_numbers_exact(aws, table):
    ledger = Ledger(table, aws("dynamodb"))
    now = time.time()
    numeric = unique("numeric")
    metadata = {"lat": 51.5072178, "views": 12345678901234567890, "ratio": 0.1, "tags": ["a", 2]}
    claim = ledger.claim(
        AssetMessage(numeric, "https://media.example.com/n.mp4", metadata=metadata), now, now + 60, "t"
    )
    assert isinstance(claim, Claimed) and ledger.mark_failed(numeric, "t", "HTTP 500", None, now).won
    poisoned = unique("poisoned")  # a poison message recorded without a source: it can never be re-sent
    ledger.record_poison(poisoned, "id is fine, source_url is missing", None, now)
    after = unique("after")
    claim = ledger.claim(AssetMessage(after, "https://media.example.com/a.mp4"), now, now + 60, "t2")
    assert ledger.mark_rejected(after, "t2", "HTTP 400", now).won
    bodies: list[str] = []

    def send(messages):
        from migrator.messages import encode_message

        bodies.extend(encode_message(m) for m in messages)
        return len(bodies), []

    summary = retry(ledger, State.REJECTED, [poisoned, after], send)
    failed = retry(ledger, State.FAILED, [numeric], send)

    assert summary.not_retryable and summary.not_retryable[0][0] == poisoned
    assert "source_url is missing" in summary.not_retryable[0][1]
    assert ledger.get(poisoned)["state"] == "rejected"  # reported before anything was re-armed
    assert (summary.rearmed, failed.rearmed) == (1, 1)  # the run went on past it
    sent = {parse_message(b).asset_id: parse_message(b) for b in bodies}
    assert set(sent) == {after, numeric}
    assert sent[numeric].metadata == metadata  # numbers as numbers, exact
    assert json.loads(bodies[-1])["metadata"]["views"] == 12345678901234567890


# --- 24.2: an unreadable secret, or any failure before a create, holds without spending -------------


def test_an_unreadable_provider_secret_holds_the_asset_without_spending_its_attempts(aws, table, queue, sim):
    def access_denied():
        raise GetParameterError(
            "An error occurred (AccessDeniedException) when calling the GetSecretValue operation: "
            "not authorized to perform kms:Decrypt"
        )

    provider = build("generic", sim.url, readable(access_denied))
    uploader = uploader_with(aws, table, queue, provider)
    asset_id = unique("denied")

    fate = uploader.process(record_for(asset_id), deadline=time.time() + 60)

    item = uploader.ledger.get(asset_id)
    assert fate.kind.value == "later" and "could not be read (AccessDeniedException)" in fate.reason
    assert item["state"] == "pending" and int(item["attempts"]) == 0 and "lease_token" not in item
    assert sim.stats()["create_requests"] == 0


def test_a_worker_that_fails_before_any_create_gives_its_attempt_back(aws, table, queue, sim):
    def broken_presign(url: str) -> str:
        raise RuntimeError("a bug before the create")

    provider = build("generic", sim.url, lambda: sim.config.token)
    uploader = uploader_with(aws, table, queue, provider, presign=broken_presign)
    asset_id = unique("bug")

    for _ in range(7):  # more tries than the attempt budget: none of them is charged
        # an s3:// source is presigned just before the create; the presign is where the bug is
        record = record_for(asset_id, source_url=f"s3://library/{asset_id}.mp4")
        fate = uploader.process(record, deadline=time.time() + 60)
        assert fate.kind.value == "later"
        item = uploader.ledger.get(asset_id)
        assert item["state"] == "pending" and "lease_token" not in item and int(item["attempts"]) == 0
        uploader.ledger.client.update_item(  # its retry time passes
            TableName=table,
            Key={"asset_id": {"S": asset_id}},
            UpdateExpression="SET retry_after = :now",
            ExpressionAttributeValues={":now": {"N": str(time.time() - 1)}},
        )
    assert "before any create was sent: RuntimeError" in item["last_error"]
    assert sim.stats()["create_requests"] == 0


# --- 24.3: the lookup reaches back to the earliest try that may have created a video -----------------


class RecordingProvider:
    """A provider whose first create's answer is lost, whose next lookup is throttled, and which
    remembers every `created_after` it is asked to search from."""

    name = "recording"

    def __init__(self):
        self.searched_from: list[float | None] = []
        self.creates = 0
        self.lookups = 0

    def source_problem(self, source_url):
        return None

    def create(self, asset, source_url):
        self.creates += 1
        return Outcome(OutcomeKind.TRANSIENT, error="timeout")  # it may have made a video

    def find(self, asset_id, created_after):
        self.lookups += 1
        self.searched_from.append(created_after)
        if self.lookups == 1:
            return Outcome(OutcomeKind.THROTTLED, retry_after=1.0, error="lookup HTTP 429")
        return Outcome(OutcomeKind.CREATED, remote_id="vid-first")

    def poll(self, asset_id, remote_id):
        return Poll(200)

    def create_notes(self, asset, source_url):
        return ()

    def playback(self, asset):
        return "signed"


def test_a_lookup_after_a_throttled_one_still_reaches_the_first_try(aws, table, queue):
    now = [time.time()]
    provider = RecordingProvider()
    uploader = uploader_with(aws, table, queue, provider, clock=lambda: now[0])
    asset_id = unique("lookback")
    first_try = now[0]

    uploader.process(record_for(asset_id), deadline=now[0] + 60)  # try 1: the create's answer is lost
    now[0] += 900  # past its retry time and its lease
    uploader.process(record_for(asset_id), deadline=now[0] + 60)  # try 2: its lookup is throttled
    now[0] += 900
    fate = uploader.process(record_for(asset_id), deadline=now[0] + 60)  # try 3

    assert provider.creates == 1 and fate.kind.value == "finished"
    assert provider.searched_from == [pytest.approx(first_try, abs=0.01)] * 2
    assert uploader.ledger.get(asset_id)["remote_id"] == "vid-first"


# --- lookups and polls are paced like creates, and their 429 holds the fleet ------------------------


class ThrottledLookups(RecordingProvider):
    """Every lookup is answered 429."""

    def find(self, asset_id, created_after):
        self.lookups += 1
        return Outcome(OutcomeKind.THROTTLED, retry_after=30.0, error="lookup HTTP 429", scope="rate")


def test_the_uploaders_lookup_takes_a_slot_and_its_429_holds_the_creates(aws, table, queue):
    from migrator.pacer import Hold

    now = [time.time()]
    provider = ThrottledLookups()
    uploader = uploader_with(aws, table, queue, provider, clock=lambda: now[0])
    asset_id = unique("throttled-lookup")
    uploader.process(record_for(asset_id), deadline=now[0] + 60)  # try 1: its answer is lost
    now[0] += 900
    before = float(uploader.pacer.state()["next_slot"])

    fate = uploader.process(record_for(asset_id), deadline=now[0] + 60)  # try 2 looks first: a 429

    state = uploader.pacer.state()
    assert provider.lookups == 1 and provider.creates == 1  # the lookup was answered 429: no create
    assert float(state["next_slot"]) > before  # the lookup took a slot of the pace
    held = uploader.pacer.reserve(now[0] + 1)
    assert isinstance(held, Hold) and held.kind == "rate" and "429" in held.reason
    assert fate.kind.value == "later" and uploader.ledger.get(asset_id)["state"] == "pending"


def test_reconciles_polls_take_slots_and_a_throttled_poll_holds_the_fleet(aws, table, queue, sim):
    from migrator.heal import RunLimits
    from migrator.pacer import Hold
    from migrator.reconcile import PollPace, Reconciler

    sim.patch_config({"webhooks_enabled": False, "processing_delay_s": 3600.0})
    provider = build("generic", sim.url, lambda: sim.config.token)
    ledger = Ledger(table, aws("dynamodb"))
    for _ in range(3):
        asset_id = unique("polled")
        claim = ledger.claim(AssetMessage(asset_id, "https://m.example/p.mp4"), time.time(), time.time() + 60, "t")
        remote = provider.create(AssetRef(asset_id), "https://m.example/p.mp4").remote_id
        ledger.mark_processing(asset_id, claim.token, remote, time.time())
    pacer = Pacer(table, aws("dynamodb"), 0.0, 50.0)
    later = time.time() + 3600
    reconciler = Reconciler(ledger, aws("sqs"), queue, provider, RunLimits(poll_after_s=600), clock=lambda: later)
    reconciler.pace = PollPace(pacer, clock=lambda: later, sleep=lambda s: None)
    reconciler.workers = 1

    first = reconciler.run()
    slots = float(pacer.state()["next_slot"])
    assert first.polled == 3 and slots >= later + 2 / 50.0  # each poll took a slot of the fleet's pace

    for item in list(ledger.iter_state(State.PROCESSING)):  # due again
        ledger.client.update_item(
            TableName=table,
            Key={"asset_id": {"S": item["asset_id"]}},
            UpdateExpression="SET due_at = :t",
            ExpressionAttributeValues={":t": {"N": str(time.time() - 7200)}},
        )
    reconciler.provider.poll = lambda asset_id, remote_id: Poll(429, retry_after=20.0)  # the provider's limit
    second = reconciler.run()
    held = pacer.reserve(later + 1)
    assert second.polled == 1 and isinstance(held, Hold) and held.kind == "rate"
