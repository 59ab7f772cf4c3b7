"""Reconcile against real DynamoDB and SQS (emulator) and a real HTTP provider (simulator).

Time is moved by giving the reconciler a clock that runs ahead of the ledger's writes,
so "an hour later" costs nothing.
"""

from __future__ import annotations

import threading
import time

import pytest
from migrator.heal import RunLimits
from migrator.ledger import Claimed, Ledger
from migrator.messages import AssetMessage, parse_message
from migrator.providers import AssetRef, Poll, build
from migrator.reconcile import Reconciler
from migrator.states import State

from tests.conftest import unique

pytestmark = pytest.mark.emulator

LIMITS = RunLimits(heal_after_s=600, poll_after_s=600, max_items=2000, max_polls=50, drift_tolerance_s=0.5)


def reconciler(aws, table, queue, sim, ahead_s: float = 0.0) -> Reconciler:
    return Reconciler(
        ledger=Ledger(table, aws("dynamodb")),
        sqs=aws("sqs"),
        queue_url=queue,
        provider=build("generic", sim.url, lambda: sim.config.token),
        limits=LIMITS,
        clock=lambda: time.time() + ahead_s,
    )


def drain(sqs, queue) -> list[str]:
    """Every asset id in the queue (received and deleted)."""
    ids = []
    while True:
        resp = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        messages = resp.get("Messages", [])
        if not messages:
            return ids
        for m in messages:
            ids.append(parse_message(m["Body"]).asset_id)
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])


def claim(ledger: Ledger, asset_id: str, lease_s: float, **fields) -> Claimed:
    msg = AssetMessage(asset_id, f"https://media.example/{asset_id}.mp4", **fields)
    now = time.time()
    result = ledger.claim(msg, now, now + lease_s, unique("token"))
    assert isinstance(result, Claimed)
    return result


def test_a_lost_message_is_healed_once_and_a_live_lease_is_left_alone(aws, table, queue, sim):
    ledger = Ledger(table, aws("dynamodb"))
    dead = unique("dead")
    claim(ledger, dead, lease_s=1, title="lost")  # its worker died; its message is gone
    live = unique("live")
    claim(ledger, live, lease_s=7200)  # a worker still holds this one
    later = reconciler(aws, table, queue, sim, ahead_s=3600)

    summary = later.run()

    assert summary.healed == 1
    assert drain(aws("sqs"), queue) == [dead]
    item = ledger.get(dead)
    assert item["state"] == "uploading" and int(item["heals"]) == 1 and item["healed_at"] >= item["claimed_at"]
    assert ledger.get(live).get("heals") is None
    # The heal restarted the quiet period: a second run now enqueues nothing more.
    assert later.run().healed == 0
    assert drain(aws("sqs"), queue) == []


def test_two_runs_at_once_enqueue_each_asset_once(aws, table, queue, sim):
    ledger = Ledger(table, aws("dynamodb"))
    ids = [unique("lost") for _ in range(12)]
    for asset_id in ids:
        claim(ledger, asset_id, lease_s=1)
    runs = [reconciler(aws, table, queue, sim, ahead_s=3600) for _ in range(3)]
    results = []
    barrier = threading.Barrier(len(runs))

    def go(run):
        barrier.wait()
        results.append(run.run())

    threads = [threading.Thread(target=go, args=(r,)) for r in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert sum(r.healed for r in results) == len(ids)
    enqueued = drain(aws("sqs"), queue)
    assert sorted(enqueued) == sorted(ids)  # each exactly once


def test_staged_and_failed_for_good_assets_wait_for_the_operator(aws, table, queue, sim):
    ledger = Ledger(table, aws("dynamodb"))
    staged = unique("staged")
    assert ledger.stage(AssetMessage(staged, "https://media.example/s.mp4"), time.time())
    gone = unique("gone")
    c = claim(ledger, gone, lease_s=60)
    ledger.mark_failed(gone, c.token, "HTTP 500", None, time.time())
    deferred = unique("deferred")
    c = claim(ledger, deferred, lease_s=60)
    ledger.release_throttled(deferred, c.token, State.PENDING, time.time() + 5, "HTTP 429", time.time())

    summary = reconciler(aws, table, queue, sim, ahead_s=3600).run()

    assert drain(aws("sqs"), queue) == [deferred]  # its deferred message was lost
    assert summary.healed == 1


def test_polling_settles_lost_webhooks_and_flags_drift(aws, table, queue, sim):
    sim.patch_config({"webhooks_enabled": False, "processing_delay_s": 0.0})
    provider = build("generic", sim.url, lambda: sim.config.token)
    ledger = Ledger(table, aws("dynamodb"))
    cases = {
        unique("drift2"): ("https://media.example/a.mp4?duration=10&drift=2", 10.0),
        unique("drift02"): ("https://media.example/b.mp4?duration=10&drift=0.2", 10.0),
        unique("corrupt"): ("https://media.example/corrupt.mp4?duration=10", 10.0),
    }
    for asset_id, (url, duration) in cases.items():
        c = ledger.claim(AssetMessage(asset_id, url, duration_s=duration), time.time(), time.time() + 60, "t")
        created = provider.create(AssetRef(asset_id), url)
        assert created.remote_id
        ledger.mark_processing(asset_id, c.token, created.remote_id, time.time())
    time.sleep(0.3)  # the simulator finishes processing, and tells nobody

    summary = reconciler(aws, table, queue, sim, ahead_s=3600).run()

    assert (summary.polled, summary.settled_ready, summary.settled_rejected, summary.drifted) == (3, 2, 1, 1)
    a, b, c = (ledger.get(i) for i in cases)
    assert a["state"] == "ready" and float(a["provider_duration_s"]) == 12.0 and float(a["drift_s"]) == 2.0
    assert b["state"] == "ready" and "drift_s" not in b
    assert c["state"] == "rejected" and "ingest" in c["last_error"]
    assert drain(aws("sqs"), queue) == []


def test_assets_the_provider_is_still_working_on_stay_and_are_counted(aws, table, queue, sim):
    sim.patch_config({"webhooks_enabled": False, "processing_delay_s": 3600.0})
    provider = build("generic", sim.url, lambda: sim.config.token)
    ledger = Ledger(table, aws("dynamodb"))
    asset_id = unique("slow")
    c = claim(ledger, asset_id, lease_s=60)
    created = provider.create(AssetRef(asset_id), "https://media.example/slow.mp4")
    ledger.mark_processing(asset_id, c.token, created.remote_id, time.time())

    summary = reconciler(aws, table, queue, sim, ahead_s=3600).run()

    assert (summary.polled, summary.still_processing) == (1, 1)
    item = ledger.get(asset_id)
    assert item["state"] == "processing" and "preparing" in item["poll_note"]


def test_a_bounded_run_leaves_the_rest_due_for_the_next_one(aws, table, queue, sim):
    ledger = Ledger(table, aws("dynamodb"))
    ids = [unique("many") for _ in range(40)]
    for asset_id in ids:
        claim(ledger, asset_id, lease_s=1)
    later = reconciler(aws, table, queue, sim, ahead_s=3600)
    small = RunLimits(**{**LIMITS.__dict__, "max_items": 10})

    runs = []
    while sum(r.healed for r in runs) < len(ids) and len(runs) < 20:
        runs.append(later.run(small))

    assert all(r.examined <= 10 for r in runs)
    assert len(runs) == 4  # bounded, and no run read an item it had already acted on
    assert sorted(drain(aws("sqs"), queue)) == sorted(ids)
    final = later.run()  # healed assets wait in the queued lane now: nothing is due
    assert (final.examined, final.healed, final.lanes_finished) == (0, 0, final.lanes)


def test_a_run_reads_up_to_its_budget_however_crowded_one_lane_is(aws, table, queue, sim):
    """ReconcileMaxItems above 8,000 did nothing: each of 80 lanes read one page of at most 100."""
    import migrator.due as due_module

    ledger = Ledger(table, aws("dynamodb"))
    crowded = [i for i in (unique("crowd") for _ in range(2000)) if due_module.shard_of(i) == 0][:150]
    for asset_id in crowded:  # 150 lost workers, every one in the same lane
        claim(ledger, asset_id, lease_s=1)

    summary = reconciler(aws, table, queue, sim, ahead_s=3600).run(
        RunLimits(**{**LIMITS.__dict__, "max_items": 10_000})
    )

    assert summary.healed == len(crowded)
    assert sorted(drain(aws("sqs"), queue)) == sorted(crowded)


def test_a_healable_asset_is_found_among_a_million_that_wait_for_the_operator(aws, table, queue, sim):
    """Staged and failed-for-good assets are in no lane: a run's budget goes to what can be healed."""
    ledger = Ledger(table, aws("dynamodb"))
    now = time.time()
    for _ in range(300):
        assert ledger.stage(AssetMessage(unique("staged"), "https://media.example/s.mp4"), now)
    for _ in range(100):
        gone = unique("gone")
        c = claim(ledger, gone, lease_s=60)
        ledger.mark_failed(gone, c.token, "HTTP 500", None, time.time())
    lost = unique("lost")  # deferred by a 429 after all of them; its message was lost
    c = claim(ledger, lost, lease_s=60)
    ledger.release_throttled(lost, c.token, State.PENDING, time.time() + 1, "HTTP 429", time.time())

    summary = reconciler(aws, table, queue, sim, ahead_s=3600).run(RunLimits(**{**LIMITS.__dict__, "max_items": 48}))

    assert summary.healed == 1 and summary.examined == 1
    assert drain(aws("sqs"), queue) == [lost]


def test_a_message_the_queue_dropped_is_sent_again_from_the_ledger(aws, table, queue, sim):
    ledger = Ledger(table, aws("dynamodb"))
    waiting = unique("waiting")
    assert ledger.record_intake(AssetMessage(waiting, "https://media.example/w.mp4", title="kept"), time.time()).new
    limits = RunLimits(**{**LIMITS.__dict__, "queued_after_s": 7200})

    assert reconciler(aws, table, queue, sim, ahead_s=3600).run(limits).healed == 0  # it may still be queued
    assert reconciler(aws, table, queue, sim, ahead_s=7300).run(limits).healed == 1  # past the queue's retention
    (body,) = drain_bodies(aws("sqs"), queue)
    assert parse_message(body) == AssetMessage(waiting, "https://media.example/w.mp4", title="kept")
    assert reconciler(aws, table, queue, sim, ahead_s=7400).run(limits).healed == 0  # once per retention


def drain_bodies(sqs, queue) -> list[str]:
    bodies = []
    while True:
        messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
        if not messages:
            return bodies
        for m in messages:
            bodies.append(m["Body"])
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])


def test_a_run_out_of_time_mid_page_resumes_after_the_last_asset_it_did(aws, table, queue, sim):
    ledger = Ledger(table, aws("dynamodb"))
    ids = [unique("slow") for _ in range(48)]  # about three per uploading shard
    for asset_id in ids:
        claim(ledger, asset_id, lease_s=1)
    later = reconciler(aws, table, queue, sim, ahead_s=3600)
    later.workers = 1  # lanes one after another, so "time left" runs out at a known point
    calls = {"n": 0}

    def remaining() -> float:  # plenty for the first 20 checks, then the invocation is nearly over
        calls["n"] += 1
        return 600.0 if calls["n"] <= 20 else 1.0

    late_heals = []
    mark = later.ledger.mark_healed

    def mark_healed(seen, now):  # a heal started after the time ran out is one the Lambda would not finish
        late_heals.append(calls["n"] > 20)
        return mark(seen, now)

    later.ledger.mark_healed = mark_healed
    first = later.run(remaining_s=remaining)
    assert 0 < first.healed < len(ids)
    assert not any(late_heals)  # it stopped mid-page, not at the end of the page
    rest = later.run()
    assert first.healed + rest.healed == len(ids)
    assert sorted(drain(aws("sqs"), queue)) == sorted(ids)  # each once: the cursor pointed past what was done


def test_a_throttled_poll_ends_the_runs_polling(aws, table, queue, sim):
    """Unpaced (no fleet pacer): with one, the next poll waits out the 429's hold instead (test_poll_pace.py)."""
    sim.patch_config({"webhooks_enabled": False, "processing_delay_s": 3600.0})
    provider = build("generic", sim.url, lambda: sim.config.token)
    ledger = Ledger(table, aws("dynamodb"))
    for _ in range(5):
        asset_id = unique("thr")
        c = claim(ledger, asset_id, lease_s=60)
        created = provider.create(AssetRef(asset_id), "https://m.example/a.mp4")
        ledger.mark_processing(asset_id, c.token, created.remote_id, time.time())
    later = reconciler(aws, table, queue, sim, ahead_s=3600)
    answers = []
    poll = later.provider.poll

    def throttled_poll(asset_id, remote_id):  # the provider is at its limit: every GET is a 429
        answers.append(remote_id)
        poll(asset_id, remote_id)
        return Poll(429, retry_after=5.0)

    later.provider.poll = throttled_poll
    later.workers = 1  # one lane at a time: polls already started in parallel lanes would also finish
    summary = later.run()

    assert len(answers) == 1 and summary.polled == 1
    assert summary.skipped["provider throttled the poll"] == 1
    unasked = [i for i in ledger.iter_state(State.PROCESSING) if "polled_at" not in (ledger.get(i["asset_id"]) or {})]
    assert len(unasked) == 5  # a throttled poll learns nothing: all five stay due for the next run


def test_a_processing_asset_the_provider_does_not_know_stops_taking_the_poll_budget(aws, table, queue, sim):
    """A 404 (or a status we cannot read) on every poll: after MAX_POLL_MISSES the asset is failed for good."""
    from migrator.heal import MAX_POLL_MISSES

    ledger = Ledger(table, aws("dynamodb"))
    gone, slow = unique("gone"), unique("slow")
    sim.patch_config({"webhooks_enabled": False, "processing_delay_s": 3600.0})
    for asset_id in (gone, slow):
        c = claim(ledger, asset_id, lease_s=60)
        remote = (
            "vid_never_made"
            if asset_id == gone
            else build("generic", sim.url, lambda: None).create(AssetRef(asset_id), "https://m.example/s.mp4").remote_id
        )
        ledger.mark_processing(asset_id, c.token, remote, time.time())

    for run in range(1, MAX_POLL_MISSES + 1):
        summary = reconciler(aws, table, queue, sim, ahead_s=3600 * run).run()
        assert summary.polled == 2
        expected = "failed" if run == MAX_POLL_MISSES else "processing"
        assert ledger.get(gone)["state"] == expected, f"run {run}"
    item = ledger.get(gone)
    assert "no such video" in item["last_error"] and "retry_after" not in item
    assert summary.failed_unfound == 1
    assert ledger.get(slow)["state"] == "processing"  # still working: polled, never given up on
    summary = reconciler(aws, table, queue, sim, ahead_s=3600 * (MAX_POLL_MISSES + 1)).run()
    assert summary.polled == 1  # the budget now goes to assets that can still move


def test_every_due_poll_is_made_within_a_few_runs_however_the_budget_falls(aws, table, queue, sim):
    """The poll budget once went to the first shards every run, re-polling assets still being encoded,
    while the later shards' lost webhooks were never made up."""
    provider = build("generic", sim.url, lambda: sim.config.token)
    ledger = Ledger(table, aws("dynamodb"))
    sim.patch_config({"webhooks_enabled": False, "processing_delay_s": 3600.0})
    slow = [unique("slow") for _ in range(40)]
    for asset_id in slow:  # still encoding at the provider: each poll says so
        c = claim(ledger, asset_id, lease_s=60)
        ledger.mark_processing(
            asset_id, c.token, provider.create(AssetRef(asset_id), "https://m.example/s.mp4").remote_id, time.time()
        )
    sim.patch_config({"processing_delay_s": 0.0})
    lost = [unique("lost") for _ in range(10)]
    for asset_id in lost:  # ready at the provider; its webhook was lost
        c = claim(ledger, asset_id, lease_s=60)
        ledger.mark_processing(
            asset_id, c.token, provider.create(AssetRef(asset_id), "https://m.example/l.mp4").remote_id, time.time()
        )
    time.sleep(0.3)
    few = RunLimits(**{**LIMITS.__dict__, "max_polls": 10})

    runs = [reconciler(aws, table, queue, sim, ahead_s=3600 + 60 * k).run(few) for k in range(5)]

    assert all(r.polled <= 10 for r in runs)
    assert {ledger.get(i)["state"] for i in lost} == {"ready"}
    assert sum(r.settled_ready for r in runs) == len(lost)


def test_a_video_processing_past_the_longest_allowed_is_failed_with_the_reason(aws, table, queue, sim):
    """api.video has no failed-ingest state and no failure webhook: a source it cannot fetch may stay
    processing forever. MaxProcessingSeconds bounds it, for every provider."""
    sim.patch_config({"webhooks_enabled": False, "processing_delay_s": 10**6})
    provider = build("generic", sim.url, lambda: sim.config.token)
    ledger = Ledger(table, aws("dynamodb"))
    stuck, young = unique("stuck"), unique("young")
    for asset_id in (stuck, young):
        c = claim(ledger, asset_id, lease_s=60)
        remote = provider.create(AssetRef(asset_id), "https://m.example/h.mp4").remote_id
        ledger.mark_processing(asset_id, c.token, remote, time.time() - (90_000 if asset_id == stuck else 0))
    limits = RunLimits(**{**LIMITS.__dict__, "max_processing_s": 86_400})

    summary = reconciler(aws, table, queue, sim, ahead_s=3600).run(limits)

    assert (summary.polled, summary.failed_stuck, summary.still_processing) == (2, 1, 1)
    item = ledger.get(stuck)
    assert item["state"] == "failed" and "MaxProcessingSeconds" in item["last_error"] and "retry_after" not in item
    assert ledger.get(young)["state"] == "processing"


def test_a_video_a_poll_finds_ready_is_handed_to_the_tracks_worker_at_once(aws, table, queue, sim):
    """A target without webhooks (Vimeo) turns ready by polls alone; the uploader's tracks message met the video
    processing and comes back only after up to 2 minutes, so the poll that settles it tells the tracks worker."""
    from migrator.messages import Track
    from migrator.tracks import tracks_message_id

    sim.patch_config({"webhooks_enabled": False, "processing_delay_s": 0.0})
    provider = build("generic", sim.url, lambda: sim.config.token)
    ledger = Ledger(table, aws("dynamodb"))
    sqs = aws("sqs")
    tracks_queue = sqs.create_queue(QueueName=unique("tracks"))["QueueUrl"]
    with_tracks, plain = unique("captioned"), unique("plain")
    for asset_id, fields in ((with_tracks, {"tracks": (Track("https://h/en.vtt", "en"),)}), (plain, {})):
        c = claim(ledger, asset_id, lease_s=60, **fields)
        created = provider.create(AssetRef(asset_id), f"https://media.example/{asset_id}.mp4")
        ledger.mark_processing(asset_id, c.token, created.remote_id, time.time())
    time.sleep(0.3)
    later = reconciler(aws, table, queue, sim, ahead_s=3600)
    later.tracks_queue_url = tracks_queue

    summary = later.run()

    assert summary.settled_ready == 2
    told = sqs.receive_message(QueueUrl=tracks_queue, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
    assert [tracks_message_id(m["Body"]) for m in told] == [with_tracks]
    sqs.delete_queue(QueueUrl=tracks_queue)
