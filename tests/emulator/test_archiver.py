"""The archive worker (issue 43) against the emulator's ledger and S3 and a local file server that answers byte
ranges: an original copied in checked parts and read back from the bucket; a copy spanning passes that never
sends a recorded part twice; a link that expires mid-file minted again; a file that changes mid-copy copied again
once, then failed; a file the source no longer serves failed with its reason and its upload aborted; the row's
caption, chapters and thumbnail files kept beside the original (a missing one named, never failing it); and the
source's own word on its file (its ETag across parts, a stated MD5, Dropbox's content_hash) checked."""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid

import pytest
from botocore.exceptions import ClientError
from migrator.archive.plan import MIN_PART_BYTES, MiB, composite_sha256, sha256_b64
from migrator.archive.store import ArchiveStore
from migrator.archiver import Archiver, archive_message
from migrator.fate import FateKind
from migrator.ledger import Ledger
from migrator.messages import AssetMessage, Track
from migrator.row_extras import Chapter
from migrator.sources.base import Resolution
from migrator.trackfetch import FetchPolicy

from tests.track_files import FileServer

pytestmark = pytest.mark.emulator


class Source:
    """A file server whose files answer Range (206 with Content-Range), and whose links may expire: a path with a
    `?v=N` query older than `fresh` is refused 403, as a signed link past its time is."""

    def __init__(self, server: FileServer):
        self.server, self.files, self.fresh, self.reads = server, {}, {}, []
        self.headers: dict[str, dict[str, str]] = {}  # a file's own headers (its ETag, a stated hash)

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
            self._send(handler, content, self.headers.get(name, {}))

        return answer

    @staticmethod
    def _send(handler, content: bytes, headers: dict[str, str]) -> None:
        """A Range asked: a 206 of those bytes with the file's size (RFC 9110 14.4); none: the whole file."""
        asked = handler.headers.get("Range", "")
        if asked:
            first, last = (int(x) for x in asked.removeprefix("bytes=").split("-"))
            body = content[first : last + 1]
            handler.send_response(206)
            handler.send_header("Content-Range", f"bytes {first}-{first + len(body) - 1}/{len(content)}")
        else:
            body = content
            handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(body)


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


def asset(archiver: Archiver, asset_id: str, name: str, source: str = "https://videos.example.com", **row) -> None:
    msg = AssetMessage(asset_id, f"{source}/{name}", title="A talk", **row)
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


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10" + b"\x00" * 40
VTT = b"WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nHello\n"


def with_files(archiver: Archiver, source: Source, asset_id: str) -> None:
    """An asset whose row carries a caption, a caption the source no longer serves, chapters and a thumbnail."""
    source.put("side.mp4", content(3 * MiB, b"s"))  # one part
    source.put("en.vtt", VTT)
    source.put("fr.vtt", None)
    source.put("poster.png", PNG)
    tracks = (
        Track("https://videos.example.com/en.vtt", "en"),
        Track("https://videos.example.com/fr.vtt", "fr", "subtitles", name="Director's"),
    )
    chapters = (Chapter(0.0, "Intro"), Chapter(42.5, "The talk"))
    thumbnail = "https://videos.example.com/poster.png"
    asset(archiver, asset_id, "side.mp4", tracks=tracks, chapters=chapters, thumbnail_url=thumbnail)


def test_the_rows_caption_chapters_and_thumbnail_files_stand_beside_the_original_and_a_missing_one_is_named(
    archiver, source
):
    with_files(archiver, source, "a/side")
    assert run(archiver, "a/side").kind is FateKind.FINISHED
    folder = "masters/a/side"
    assert held(archiver, f"{folder}/captions/en.captions.vtt") == VTT
    assert held(archiver, f"{folder}/thumbnail.png") == PNG
    assert json.loads(held(archiver, f"{folder}/chapters.json")) == [
        {"start_s": 0.0, "title": "Intro"},
        {"start_s": 42.5, "title": "The talk"},
    ]
    head = archiver.store.s3.head_object(Bucket=archiver.store.bucket, Key=f"{folder}/thumbnail.png")
    assert head["ContentType"] == "image/png"
    item = archiver.ledger.get("a/side")
    assert item["archive_state"] == "archived" and item["archive_files"] == 3
    assert item["archive_missing"] == ["captions/fr.subtitles.Director%27s: the track's server answered HTTP 404"]
    kept = archiver.ledger.archive("a/side")["side_files"]
    assert kept["thumbnail"]["key"] == f"{folder}/thumbnail.png" and kept["captions/en.captions"]["state"] == "kept"


def test_a_pass_that_stops_among_the_side_files_leaves_the_archive_unrecorded_and_the_next_goes_on(archiver, source):
    with_files(archiver, source, "a/slow")
    one_read_a_pass(archiver)  # each read, a side file's too, spends the pass's time
    assert one_pass(archiver, "a/slow").kind is FateKind.LATER  # the original's one part
    assert one_pass(archiver, "a/slow").kind is FateKind.LATER  # the first side file, then out of time
    item = archiver.ledger.get("a/slow")
    assert item["archive_state"] == "copying" and "archive_files" not in item  # not recorded without its files
    assert archiver.store.held("masters/a/slow/original.mp4") is None  # the upload still open, not joined
    assert archiver.ledger.archive("a/slow")["side_files"]["captions/en.captions"]["state"] == "kept"
    assert run(archiver, "a/slow").kind is FateKind.FINISHED
    assert archiver.ledger.get("a/slow")["archive_files"] == 3
    assert [r for r in source.reads if r[0] == "en.vtt"] == [("en.vtt", "")]  # kept once, never fetched again


def test_a_file_whose_etag_changes_mid_copy_is_copied_again_once_then_failed(archiver, source):
    source.put("tagged.mp4", content(2 * MIN_PART_BYTES, b"t"))
    source.headers["tagged.mp4"] = {"ETag": '"v1"'}
    asset(archiver, "a/tagged", "tagged.mp4")
    one_read_a_pass(archiver)
    assert one_pass(archiver, "a/tagged").kind is FateKind.LATER
    source.files["tagged.mp4"] = content(2 * MIN_PART_BYTES, b"u")  # replaced by a file of the same size
    source.headers["tagged.mp4"] = {"ETag": '"v2"'}
    assert run(archiver, "a/tagged").kind is FateKind.FINISHED
    assert held(archiver, "masters/a/tagged/original.mp4") == source.files["tagged.mp4"]
    record = archiver.ledger.archive("a/tagged")
    assert record["copies"] == 2 and record["source_checks"] == {"etag": "same"}

    source.put("retagged.mp4", content(2 * MIN_PART_BYTES, b"r"))
    asset(archiver, "a/retagged", "retagged.mp4")
    for n in range(3):  # a new version under each copy
        source.headers["retagged.mp4"] = {"ETag": f'"r{n}"'}
        one_pass(archiver, "a/retagged")
    source.headers["retagged.mp4"] = {"ETag": '"r9"'}
    run(archiver, "a/retagged")
    item = archiver.ledger.get("a/retagged")
    assert item["archive_state"] == "failed" and "its ETag is not the one it had" in item["archive_error"]
    assert archiver.store.open_uploads("masters/a/retagged/original.mp4") == []


@pytest.mark.parametrize(("stated_ok", "state"), [(True, "archived"), (False, "failed")])
def test_a_one_part_file_is_checked_against_the_md5_its_source_states(archiver, source, stated_ok, state):
    body = content(3 * MiB, b"m")
    md5 = hashlib.md5(body if stated_ok else b"another file").digest()
    source.put("one.mp4", body)
    source.headers["one.mp4"] = {"x-goog-hash": f"crc32c=AAAAAA==,md5={base64.b64encode(md5).decode()}"}
    asset(archiver, "a/one", "one.mp4")
    run(archiver, "a/one")
    item, record = archiver.ledger.get("a/one"), archiver.ledger.archive("a/one")
    assert item["archive_state"] == state
    if stated_ok:
        assert record["source_checks"] == {"etag": "none given", "md5": "equal"}
        assert item["archive_checks"] == {"etag": "none given", "md5": "equal"}
    else:
        assert "the source's md5 is" in item["archive_error"] and record["copies"] == 2  # copied again, then failed


@pytest.mark.parametrize(("stated_ok", "state"), [(True, "archived"), (False, "failed")])
def test_dropboxs_content_hash_is_checked_across_passes(archiver, source, stated_ok, state):
    body = content(2 * MIN_PART_BYTES + 5 * MiB, b"d")
    blocks = b"".join(hashlib.sha256(body[i : i + 4 * MiB]).digest() for i in range(0, len(body), 4 * MiB))
    stated = hashlib.sha256(blocks).hexdigest() if stated_ok else "0" * 64
    source.put("db.mp4", body)
    asset(archiver, "a/db", "db.mp4", source="dropbox://files", metadata={"content_hash": stated})
    one_read_a_pass(archiver)  # each part in a pass of its own: the hash is carried on the item between them
    run(archiver, "a/db")
    item, record = archiver.ledger.get("a/db"), archiver.ledger.archive("a/db")
    assert item["archive_state"] == state
    if stated_ok:
        assert record["source_checks"]["content_hash"] == "equal" and record["passes"] >= 3
    else:
        assert "the source's content_hash is 0000" in item["archive_error"]


def test_a_pass_that_stopped_after_joining_the_upload_is_finished_by_the_next_from_what_s3_holds(archiver, source):
    body = content(3 * MiB, b"j")
    source.put("joined.mp4", body)
    asset(archiver, "a/joined", "joined.mp4")
    put_json = archiver.store.put_json

    def crash(*args, **kwargs):  # the pass ends between S3's join and the record: the upload id is spent
        raise RuntimeError("the invocation ended")

    archiver.store.put_json = crash
    with pytest.raises(RuntimeError):
        one_pass(archiver, "a/joined")
    archiver.store.put_json = put_json
    s3 = archiver.store.s3

    class Joined:  # S3 may refuse a second join of the same upload: "aborted or completed" (NoSuchUpload,
        # https://docs.aws.amazon.com/AmazonS3/latest/API/API_CompleteMultipartUpload.html); the emulator joins again
        def __getattr__(self, name):
            return getattr(s3, name)

        def complete_multipart_upload(self, **kwargs):
            error = {"Error": {"Code": "NoSuchUpload", "Message": "The specified upload does not exist."}}
            raise ClientError(error, "CompleteMultipartUpload")

    archiver.store.s3 = Joined()
    archiver.clock.now += 1000  # past the dead pass's lease
    assert run(archiver, "a/joined").kind is FateKind.FINISHED
    item = archiver.ledger.get("a/joined")
    assert item["archive_state"] == "archived" and item["archive_sha256"] == composite_sha256([sha256_b64(body)])
    assert held(archiver, "masters/a/joined/original.mp4") == body
