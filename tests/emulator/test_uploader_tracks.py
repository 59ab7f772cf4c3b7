"""The uploader's one hook for tracks: once the provider has a video with caption tracks, the tracks worker
is told (a message on its queue), whether the uploader's own processing write won or a webhook's settle beat
it, or the create's answer was lost and the webhook settled the video before the retry came (its claim refused
as a duplicate); a video without tracks, one refused, or one whose tracks the worker holds sends nothing."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest
from migrator.ledger import Ledger
from migrator.states import State

from tests.conftest import unique
from tests.emulator.test_uploader import make_uploader, send_and_receive, videos_of

pytestmark = pytest.mark.emulator


def received(sqs, url) -> list[dict]:
    # The uploader delays the message a little (the video must be ready first): wait it out.
    resp = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=20)
    return [json.loads(m["Body"]) for m in resp.get("Messages", [])]


def test_a_created_video_with_tracks_is_handed_to_the_tracks_worker_and_others_are_not(
    aws, table, queue, tracks_queue, sim
):
    uploader = make_uploader(aws, table, queue, sim)
    uploader.settings = replace(uploader.settings, tracks_queue_url=tracks_queue)
    with_tracks, without, refused = unique("cap"), unique("plain"), unique("bad")
    track = [{"url": "https://c.example.com/en.vtt", "language": "en"}]
    bodies = [
        json.dumps({"id": with_tracks, "source_url": "https://media.example.com/a.mp4", "tracks": track}),
        json.dumps({"id": without, "source_url": "https://media.example.com/b.mp4"}),
        json.dumps({"id": refused, "source_url": "https://media.example.com/unsupported.mp4", "tracks": track}),
    ]
    records = send_and_receive(aws("sqs"), queue, bodies)
    uploader.handle_batch({"Records": records}, lambda: 60.0)
    assert received(aws("sqs"), tracks_queue) == [{"id": with_tracks}]


def test_a_video_with_only_extras_a_thumbnail_or_collections_is_handed_to_the_tracks_worker_too(
    aws, table, queue, tracks_queue, sim
):
    """Issue 42: a thumbnail, chapters or a collection rides the tracks worker as a caption does; a row with a
    poster time alone does not here (the create carries it), only where the target picks the frame later."""
    uploader = make_uploader(aws, table, queue, sim)
    uploader.settings = replace(uploader.settings, tracks_queue_url=tracks_queue)
    poster, filed, timed = unique("poster"), unique("filed"), unique("timed")
    bodies = [
        json.dumps(
            {"id": poster, "source_url": "https://m.example.com/a.mp4", "thumbnail_url": "https://i.example/p.png"}
        ),
        json.dumps(
            {
                "id": filed,
                "source_url": "https://m.example.com/b.mp4",
                "collections": [{"id": "f1", "name": "Talks", "kind": "folder"}],
            }
        ),
        json.dumps({"id": timed, "source_url": "https://m.example.com/c.mp4", "poster_time_s": 3}),
    ]
    uploader.handle_batch({"Records": send_and_receive(aws("sqs"), queue, bodies)}, lambda: 60.0)
    got = received(aws("sqs"), tracks_queue)
    got += received(aws("sqs"), tracks_queue) if len(got) < 2 else []
    assert sorted(m["id"] for m in got) == sorted([poster, filed])
    ledger = Ledger(table, aws("dynamodb"))
    assert ledger.get(poster).get("tracks_lane") and not ledger.get(timed).get("tracks_lane")  # reconcile's backstop


def test_a_video_settled_before_the_retry_that_would_have_moved_it_still_gets_its_tracks_message(
    aws, table, queue, tracks_queue, sim
):
    uploader = make_uploader(aws, table, queue, sim)
    uploader.settings = replace(uploader.settings, tracks_queue_url=tracks_queue)
    ledger = Ledger(table, aws("dynamodb"))
    lost, armed = unique("lost"), unique("armed")
    track = [{"url": "https://c.example.com/en.vtt", "language": "en"}]
    bodies = [
        json.dumps({"id": i, "source_url": f"https://media.example.com/{i}.mp4", "tracks": track})
        for i in (lost, armed)
    ]
    sim.patch_config({"lose_rate": 1.0})  # both creates performed, both answers lost
    uploader.handle_batch({"Records": send_and_receive(aws("sqs"), queue, bodies)}, lambda: 60.0)
    sim.patch_config({"lose_rate": 0.0})
    for asset_id in (lost, armed):  # the webhook's settle comes first, before the retries
        [video] = videos_of(sim, asset_id)
        assert ledger.get(asset_id)["state"] == "failed"
        assert ledger.settle(asset_id, State.READY, video["id"], time.time()).won
    remote = ledger.get(armed)["remote_id"]  # this one's tracks the worker already holds
    assert ledger.arm_tracks(armed, remote, {"en..": {"state": "pending"}}, time.time()).won

    uploader.handle_batch({"Records": send_and_receive(aws("sqs"), queue, [], waiting=2)}, lambda: 60.0)
    assert received(aws("sqs"), tracks_queue) == [{"id": lost}]  # the retries' claims refused, one owed
