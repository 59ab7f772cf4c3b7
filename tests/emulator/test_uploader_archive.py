"""The uploader's one hook for the archive (issue 43): once the provider has a video, its original is owed to the
archive (the copy's item, pending, in reconcile's archive lane) and the archive worker is told; a refused video,
or a stack without an archive, owes and sends nothing; a repeated message owes nothing twice."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from migrator.ledger import Ledger

from tests.conftest import unique
from tests.emulator.test_uploader import make_uploader, send_and_receive
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
