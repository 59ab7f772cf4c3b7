"""The archive worker (issue 43) against the emulator's ledger and S3 and a local file server that answers byte
ranges: an original copied in checked parts and read back from the bucket; a copy spanning passes that never
sends a recorded part twice; a link that expires mid-file minted again; a file that changes mid-copy copied again
once, then failed; a file the source no longer serves failed with its reason and its upload aborted."""

from __future__ import annotations

import hashlib
import json
import time
import uuid

import pytest
from migrator.archive.plan import MIN_PART_BYTES, MiB, composite_sha256, sha256_b64
from migrator.archive.store import ArchiveStore
from migrator.archiver import Archiver, archive_message
from migrator.fate import FateKind
from migrator.ledger import Ledger
from migrator.messages import AssetMessage
from migrator.sources.base import Resolution
from migrator.trackfetch import FetchPolicy

from tests.track_files import FileServer, range_answer

pytestmark = pytest.mark.emulator


class Source:
    """A file server whose files answer Range (206 with Content-Range), and whose links may expire: a path with a
    `?v=N` query older than `fresh` is refused 403, as a signed link past its time is."""

    def __init__(self, server: FileServer):
        self.server, self.files, self.fresh, self.reads = server, {}, {}, []

    def put(self, name: str, content: bytes) -> None:
        self.files[name] = content
        self.fresh.setdefault(name, 0)
        self.server.route(f"/{name}", self._answer(name))

    def link(self, name: str) -> str:
        return self.server.url(f"/{name}") + f"?v={self.fresh[name]}"

    def _answer(self, name):
        def answer(handler):
            version = int(handler.path.split("?v=")[-1]) if "?v=" in handler.path else -1
            asked = handler.headers.get("Range", "")
            self.reads.append((name, asked))
            if version < self.fresh[name]:
                handler.send_response(403)
                handler.send_header("Content-Length", "0")
                handler.end_headers()
                return
            content = self.files[name]
            if content is None:
                handler.send_response(404)
                handler.send_header("Content-Length", "0")
                handler.end_headers()
                return
            range_answer(handler, content)

        return answer


@pytest.fixture
def source():
    with FileServer() as server:
        yield Source(server)


@pytest.fixture
def archiver(aws, table, source):
    s3 = aws("s3")
    bucket = f"owner-archive-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket)
    ledger = Ledger(table, aws("dynamodb"))

    def locate(url: str) -> Resolution:
        return Resolution.ready(source.link(url.rsplit("/", 1)[-1]))

    made = Archiver(
        ledger=ledger,
        store=ArchiveStore(bucket, s3),  # STANDARD: the tests read the originals back
        prefix="masters",
        sqs=None,
        queue_url="q",
        locate=locate,
        policy=FetchPolicy(max_bytes=64 * MiB, timeout_s=30, test_origins=frozenset({source.server.origin})),
        clock=Clock(),
    )
    fetch = made.fetch

    def timed_fetch(*args, **kwargs):  # each read takes `per_read` of the pass's time
        made.clock.now += made.clock.per_read
        return fetch(*args, **kwargs)

    made.fetch = timed_fetch
    return made


class Clock:
    """The worker's time: a read takes `per_read` seconds of it (0: reads are free, a pass copies everything)."""

    def __init__(self):
        self.now, self.per_read = time.time(), 0.0

    def __call__(self) -> float:
        return self.now


def one_read_a_pass(archiver: Archiver) -> None:
    """A pass has 700 s and a part needs 120: each read (700 s) leaves no time for another."""
    archiver.clock.per_read = 700.0


def one_pass(archiver: Archiver, asset_id: str):
    return archiver.process({"body": archive_message(asset_id)}, archiver.clock() + 700.0)


def content(size: int, seed: bytes = b"x") -> bytes:
    block = hashlib.sha256(seed).digest() * (MiB // 32)
    return (block * (size // len(block) + 1))[:size]


def asset(archiver: Archiver, asset_id: str, name: str) -> None:
    msg = AssetMessage(asset_id, f"https://videos.example.com/{name}", title="A talk")
    now = archiver.clock()
    archiver.ledger.claim(msg, now, now + 60, "up")


def run(archiver: Archiver, asset_id: str, passes: int = 10):
    for _ in range(passes):
        fate = one_pass(archiver, asset_id)
        if fate.kind is not FateKind.LATER:
            return fate
        archiver.ledger.client.update_item(  # a wait skipped: its retry time is now
            TableName=archiver.ledger.table,
            Key={"asset_id": {"S": f"#archive#{asset_id}"}},
            UpdateExpression="REMOVE retry_after",
        )
    raise AssertionError(f"{asset_id}: not done after {passes} passes")


def held(archiver: Archiver, key: str) -> bytes:
    return archiver.store.s3.get_object(Bucket=archiver.store.bucket, Key=key)["Body"].read()


def test_an_original_is_copied_in_checked_parts_and_read_back_as_it_left(archiver, source):
    body = content(2 * MIN_PART_BYTES + 5 * MiB)  # three parts: 16, 16 and 5 MiB
    source.put("talk.mp4", body)
    asset(archiver, "vimeo/1", "talk.mp4")
    archiver.store.storage_class = "DEEP_ARCHIVE"  # the owner's choice: read back by HeadObject, not GetObject
    assert run(archiver, "vimeo/1").kind is FateKind.FINISHED
    item = archiver.ledger.get("vimeo/1")
    key = "masters/vimeo/1/original.mp4"
    parts = [sha256_b64(body[i : i + MIN_PART_BYTES]) for i in range(0, len(body), MIN_PART_BYTES)]
    assert item["archive_state"] == "archived" and item["archive_key"] == key
    assert item["archive_bytes"] == len(body) and item["archive_sha256"] == composite_sha256(parts)
    stored = archiver.store.held(key)
    assert stored.size == len(body) and stored.sha256 == composite_sha256(parts)
    assert stored.storage_class == "DEEP_ARCHIVE"
    row = json.loads(held(archiver, "masters/vimeo/1/row.json"))
    assert row["asset_id"] == "vimeo/1" and row["title"] == "A talk" and "lease_token" not in row
    assert len(source.reads) == 3  # the first read planned the copy and was part 1: each byte read once


def test_a_copy_spans_passes_and_never_sends_a_recorded_part_twice(archiver, source):
    body = content(3 * MIN_PART_BYTES, b"y")
    source.put("long.mov", body)
    asset(archiver, "a/long", "long.mov")
    one_read_a_pass(archiver)
    fates = [one_pass(archiver, "a/long") for _ in range(3)]
    assert [f.kind for f in fates] == [FateKind.LATER, FateKind.LATER, FateKind.FINISHED]
    assert [r[1] for r in source.reads] == [  # each range once, in order, one a pass
        f"bytes={n * MIN_PART_BYTES}-{(n + 1) * MIN_PART_BYTES - 1}" for n in range(3)
    ]
    assert held(archiver, "masters/a/long/original.mov") == body


def test_a_link_that_expires_mid_file_is_minted_again_and_the_copy_goes_on(archiver, source):
    body = content(2 * MIN_PART_BYTES, b"z")
    source.put("exp.mp4", body)
    asset(archiver, "a/exp", "exp.mp4")
    one_read_a_pass(archiver)
    assert one_pass(archiver, "a/exp").kind is FateKind.LATER  # part 1, then the pass's time is spent
    source.fresh["exp.mp4"] += 1  # the link the copy holds expires; the next pass is handed it once more
    stale = source.link("exp.mp4").replace("v=1", "v=0")
    handed = [Resolution.ready(stale), Resolution.ready(source.link("exp.mp4"))]
    archiver.locate = lambda url: handed.pop(0)
    archiver.clock.per_read = 0.0
    assert run(archiver, "a/exp").kind is FateKind.FINISHED
    assert held(archiver, "masters/a/exp/original.mp4") == body
    second = [r for r in source.reads if r[1].startswith(f"bytes={MIN_PART_BYTES}-")]
    assert len(second) == 2  # refused (403), then read with the link minted again
    assert archiver.ledger.archive("a/exp")["copies"] == 1  # not copied again: only the link was new


def test_a_file_that_changes_mid_copy_is_copied_again_once_then_failed(archiver, source):
    source.put("moving.mp4", content(2 * MIN_PART_BYTES, b"1"))
    asset(archiver, "a/moving", "moving.mp4")
    one_read_a_pass(archiver)
    assert one_pass(archiver, "a/moving").kind is FateKind.LATER
    source.files["moving.mp4"] = content(2 * MIN_PART_BYTES + 10, b"2")  # re-uploaded at the source
    assert run(archiver, "a/moving").kind is FateKind.FINISHED
    assert held(archiver, "masters/a/moving/original.mp4") == source.files["moving.mp4"]
    assert archiver.ledger.archive("a/moving")["copies"] == 2

    source.put("restless.mp4", content(2 * MIN_PART_BYTES, b"3"))
    asset(archiver, "a/restless", "restless.mp4")
    for n in range(3):  # it changes under each copy
        one_pass(archiver, "a/restless")
        source.files["restless.mp4"] = content(2 * MIN_PART_BYTES + n + 1, b"4")
    fate = run(archiver, "a/restless")
    item = archiver.ledger.get("a/restless")
    assert fate.kind is FateKind.FINISHED and item["archive_state"] == "failed"
    assert "changed size during the copy" in item["archive_error"]
    assert archiver.store.open_uploads("masters/a/restless/original.mp4") == []


def test_a_file_the_source_no_longer_serves_fails_with_its_reason_and_leaves_no_upload_open(archiver, source):
    source.put("gone.mp4", content(2 * MIN_PART_BYTES, b"g"))
    asset(archiver, "a/gone", "gone.mp4")
    one_read_a_pass(archiver)
    assert one_pass(archiver, "a/gone").kind is FateKind.LATER
    source.files["gone.mp4"] = None
    assert run(archiver, "a/gone").kind is FateKind.FINISHED
    item = archiver.ledger.get("a/gone")
    assert item["archive_state"] == "failed" and "no longer serves the file (HTTP 404)" in item["archive_error"]
    assert archiver.store.open_uploads("masters/a/gone/original.mp4") == []
    assert archiver.store.held("masters/a/gone/original.mp4") is None
