"""The uploader's one hook for tracks: once the provider has a video with caption tracks, the tracks worker
is told (a message on its queue), whether the uploader's own processing write won or a webhook's settle beat
it; a video without tracks, or one refused, sends nothing."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.conftest import unique
from tests.emulator.test_uploader import make_uploader, send_and_receive

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
