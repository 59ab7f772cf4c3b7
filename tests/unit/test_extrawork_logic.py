"""The tracks worker's pass on each extra (extrawork.py), with a provider, a fetch, a bucket and a ledger that are
fakes: what it looks at before it writes, what it sends each kind of target (an image, a frame time, nothing),
what it notes and keeps in the stack's bucket, and how a membership waits for its collection."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

import pytest
from migrator.extras import Extra, extras_of
from migrator.ledger import CollectionClaim, CollectionRefused
from migrator.ledger.table import WriteResult
from migrator.messages import AssetMessage, Track
from migrator.providers.extras import ChaptersLook, RemoteCollection, ThumbnailLook
from migrator.row_extras import Chapter, Collection
from migrator.trackfetch import Fetched, FetchFailed
from migrator.tracks import TrackOutcome, TrackResult, TrackState
from migrator.trackworker import InlineCaption, TracksWorker

from tests.unit.test_extras_logic import png

ATTACHED = TrackOutcome(TrackResult.ATTACHED)
IMAGE = png(64, 36)
VTT = b"WEBVTT\n\n00:00:00.000 --> 00:00:30.000\nOpening\n\n00:00:30.000 --> 00:01:00.000\nClosing\n"


@dataclass
class FakeProvider:
    name: str = "fake"
    takes_thumbnail: str | None = "image"
    thumbnail_by_url: bool = False
    thumbnail_max_bytes: int = 10 * 1024 * 1024
    poster_time_later: bool = False
    takes_chapters: bool = True
    chapters_by_url: bool = False
    takes_collections: bool = True
    one_collection_per_video: bool = False
    keeps_collection_order: bool = False
    collections_instead: str = "kept in the ledger only"
    look: object = field(default_factory=ThumbnailLook)
    chapters_look: object = field(default_factory=ChaptersLook)
    found: object = None
    made: TrackOutcome = field(default_factory=lambda: TrackOutcome(TrackResult.ATTACHED, remote_track_id="col-1"))
    placed: bool = False
    calls: list = field(default_factory=list)

    def thumbnail_state(self, remote_id):
        self.calls.append(("look", remote_id))
        return self.look

    def set_thumbnail(self, remote_id, image):
        self.calls.append(("image", remote_id, image.media_type, image.url, len(image.body)))
        return ATTACHED

    def set_thumbnail_time(self, remote_id, time_s):
        self.calls.append(("time", remote_id, time_s))
        return ATTACHED

    def chapters_of(self, remote_id, language):
        self.calls.append(("chapters?", remote_id, language))
        return self.chapters_look

    def chapters_file(self, upload):
        return "chapters.json", b"[]", "application/json"

    def set_chapters(self, remote_id, upload):
        self.calls.append(("chapters", remote_id, upload.language, [c.title for c in upload.chapters], upload.webvtt))
        self.handed = upload.url
        return ATTACHED

    def find_collection(self, name, ref):
        self.calls.append(("find", name, ref))
        return self.found

    def create_collection(self, name, kind, ref):
        self.calls.append(("create", name, kind))
        return self.made

    def placed_in(self, remote_id, collection_id):
        self.calls.append(("placed?", remote_id, collection_id))
        return self.placed

    def place(self, remote_id, collection_id, position):
        self.calls.append(("place", remote_id, collection_id, position))
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=collection_id)

    def order_collection(self, collection_id, ordered):
        self.calls.append(("order", collection_id, list(ordered)))
        return ATTACHED


@dataclass
class FakeCollections:
    """The collection items as ledger/collections.py keeps them, in memory: one claim at a time."""

    items: dict = field(default_factory=dict)
    held_by_other: bool = False
    writes: list = field(default_factory=list)

    def collection(self, key):
        return self.items.get(key)

    def claim_collection(self, key, source, token, now, lease_until):
        item = self.items.setdefault(key, {"state": "pending", "attempts": 0, "name": source.name})
        if self.held_by_other or item["state"] == "created":
            return CollectionRefused(dict(item))
        item.update(lease_token=token, attempts=item["attempts"] + 1)
        return CollectionClaim(token, dict(item))

    def record_collection(self, key, token, remote_id, now):
        self.writes.append(("record", key, remote_id))
        self.items[key].update(state="created", remote_collection_id=remote_id)
        return WriteResult(True, self.items[key])

    def release_collection(self, key, token, move, now):
        self.writes.append(("release", key, move.state.value, move.retry_at is not None))
        self.items[key]["state"] = "pending" if move.state is TrackState.PENDING else "failed"
        if move.retry_at is None:
            self.items[key].pop("retry_after", None)
        else:
            self.items[key]["retry_after"] = move.retry_at
        return WriteResult(True, self.items[key])

    def add_member(self, key, remote_id, position, now):
        self.items[key].setdefault("members", {})[remote_id] = position
        return WriteResult(True, self.items[key])

    def claim_order(self, key, token, now, lease_until):
        return dict(self.items[key])

    def release_order(self, key, token):
        return WriteResult(True)


def worker(provider, fetched=None, ledger=None, bucket=True):
    fetches, staged = [], []

    def fetch(url, policy):
        fetches.append((url, policy.max_bytes))
        return fetched if fetched is not None else Fetched(IMAGE, url)

    def stage(key, body, media_type):
        staged.append((key, media_type))
        return f"https://bucket.s3.example.com/{key}?X-Amz-Signature=s"

    made = TracksWorker(
        ledger=ledger or FakeCollections(),  # type: ignore[arg-type]
        provider=provider,  # type: ignore[arg-type]
        sqs=None,
        queue_url="q",
        presign=lambda url: "https://bucket.s3.example.com/signed?X-Amz-Signature=s",
        fetch=fetch,
        stage_extra=stage if bucket else None,
        rng=random.Random(7),
    )
    made.fetches, made.staged = fetches, staged  # type: ignore[attr-defined]
    return made


def only(row: AssetMessage, kind: str) -> Extra:
    return next(e for e in extras_of(row, poster_time_later=True) if e.kind == kind)


def run(made, extra, attempts=1, row=None):
    """One pass on `extra`, of an item holding `row`'s tracks (as the ledger keeps them) and a 60 s video."""
    item = {"duration_s": 60, "tracks": [t.as_dict() for t in row.tracks] if row else []}
    return made._extra_pass(extra, {"attempts": attempts}, "vid", item, 1e12)


THUMB = AssetMessage("a", "vimeo://1", thumbnail_url="https://img.example/p.png", poster_time_s=12.0)


# --- thumbnails ----------------------------------------------------------------------------------------------


def test_a_first_pass_fetches_checks_and_uploads_the_image_without_looking():
    provider = FakeProvider()
    made = worker(provider)
    assert run(made, only(THUMB, "thumbnail")) == ATTACHED
    assert provider.calls == [("image", "vid", "image/png", None, len(IMAGE))]
    assert made.fetches == [("https://img.example/p.png", 10 * 1024 * 1024)]


def test_a_later_pass_looks_first_and_a_thumbnail_set_by_an_earlier_pass_is_never_set_twice():
    provider = FakeProvider(look=ThumbnailLook(custom=True, digest="abc"))
    made = worker(provider)
    got = run(made, only(THUMB, "thumbnail"), attempts=2)
    assert got == TrackOutcome(TrackResult.ATTACHED, remote_track_id="abc")
    assert provider.calls == [("look", "vid")] and made.fetches == []
    gone_video = TrackOutcome(TrackResult.VIDEO_GONE, error="provider: no such video (HTTP 404)")
    gone = run(worker(FakeProvider(look=gone_video)), only(THUMB, "thumbnail"), 2)
    assert gone.kind is TrackResult.VIDEO_GONE


@pytest.mark.parametrize(
    ("url", "handed", "staged"),
    [
        ("https://img.example/p.png", "https://img.example/p.png", []),  # public: Bunny fetches it itself
        (
            "https://img.example/p.png?Expires=1&Signature=x",
            "https://bucket.s3.example.com/handoff/vid/thumbnail.png",
            [("handoff/vid/thumbnail.png", "image/png")],
        ),
        (
            "s3://media/p.png",
            "https://bucket.s3.example.com/handoff/vid/thumbnail.png",
            [("handoff/vid/thumbnail.png", "image/png")],
        ),
    ],
)
def test_a_target_that_fetches_by_url_gets_the_public_link_or_a_staged_copy_of_a_private_one(url, handed, staged):
    provider = FakeProvider(thumbnail_by_url=True)
    made = worker(provider)
    row = AssetMessage("a", "vimeo://1", thumbnail_url=url)
    assert run(made, only(row, "thumbnail")) == ATTACHED
    assert provider.calls[0][3].split("?")[0] == handed and made.staged == staged


def test_a_private_image_for_a_by_url_target_on_a_stack_without_a_bucket_fails_saying_why():
    got = run(worker(FakeProvider(thumbnail_by_url=True), bucket=False), only(AssetMessage("a", "s3://m/a.mp4",
              thumbnail_url="s3://m/p.png"), "thumbnail"))  # fmt: skip
    assert got.kind is TrackResult.REFUSED and "no staging bucket" in got.error


def test_a_time_only_target_gets_the_rows_poster_time_and_the_image_is_kept_in_the_bucket_noted():
    provider = FakeProvider(takes_thumbnail="time")
    made = worker(provider)
    got = run(made, only(THUMB, "thumbnail"))
    assert got.kind is TrackResult.NOTED and provider.calls == [("time", "vid", 12.0)]
    assert got.note == (
        "fake takes a poster time only: set to 12 s; the image is kept in the stack's bucket: kept/vid/thumbnail.png"
    )
    assert made.staged == [("kept/vid/thumbnail.png", "image/png")]
    default = run(worker(provider), only(AssetMessage("a", "vimeo://1", thumbnail_url="https://i/p.png"), "thumbnail"))
    assert "set to 5 s" in default.note  # no poster time in the row: a default frame


def test_a_target_without_thumbnails_notes_the_image_kept_or_says_it_could_not_be():
    got = run(worker(FakeProvider(takes_thumbnail=None)), only(THUMB, "thumbnail"))
    assert got.kind is TrackResult.NOTED and got.note.endswith("kept in the stack's bucket: kept/vid/thumbnail.png")
    bare = run(worker(FakeProvider(takes_thumbnail=None), bucket=False), only(THUMB, "thumbnail"))
    assert bare.note == "fake takes no thumbnail image: the stack has no staging bucket, so the image is not kept"


@pytest.mark.parametrize(
    ("fetched", "provider", "kind", "why"),
    [
        (Fetched(b"<html>", "u"), FakeProvider(), TrackResult.REFUSED, "not a thumbnail: not a JPEG, PNG or WebP"),
        (Fetched(IMAGE, "u"), FakeProvider(thumbnail_max_bytes=50), TrackResult.REFUSED, "(fake's limit)"),
        (FetchFailed("took too long", retryable=True), FakeProvider(), TrackResult.TRANSIENT, "took too long"),
        (FetchFailed("the host resolves to 10.0.0.1"), FakeProvider(), TrackResult.REFUSED, "10.0.0.1"),
    ],
)
def test_an_image_that_cannot_be_fetched_or_is_no_poster_fails_alone_with_why_and_nothing_is_sent(
    fetched, provider, kind, why
):
    got = run(worker(provider, fetched=fetched), only(THUMB, "thumbnail"))
    assert got.kind is kind and why in got.error and provider.calls == []


def test_a_poster_time_alone_is_picked_at_a_target_that_picks_it_after_the_create():
    provider = FakeProvider(poster_time_later=True)
    made = worker(provider)
    assert run(made, only(AssetMessage("a", "vimeo://1", poster_time_s=7.5), "thumbnail")) == ATTACHED
    assert provider.calls == [("time", "vid", 7.5)] and made.fetches == []


# --- chapters ------------------------------------------------------------------------------------------------

CHAPTERED = AssetMessage(
    "a", "vimeo://1", chapters=(Chapter(0, "Intro"), Chapter(20, "Body")), tracks=(Track("https://c/fr.vtt", "fr"),)
)


def test_inline_chapters_are_written_as_webvtt_in_the_rows_first_caption_language():
    provider = FakeProvider()
    assert run(worker(provider), only(CHAPTERED, "chapters"), row=CHAPTERED) == ATTACHED
    (call,) = provider.calls
    assert call[:4] == ("chapters", "vid", "fr", ["Intro", "Body"])
    assert (
        call[4].startswith(b"WEBVTT\n\n00:00:00.000 --> 00:00:20.000\nIntro") and b"--> 00:01:00.000\nBody" in call[4]
    )


def test_a_chapters_track_is_fetched_and_read_in_its_own_language_and_a_bad_file_fails_alone():
    row = AssetMessage("a", "vimeo://1", tracks=(Track("https://c/ch.vtt", "de", "chapters"),))
    provider = FakeProvider()
    assert run(worker(provider, fetched=Fetched(VTT, "u")), only(row, "chapters")) == ATTACHED
    assert provider.calls[0][:4] == ("chapters", "vid", "de", ["Opening", "Closing"])
    bad = run(
        worker(FakeProvider(), fetched=Fetched(b"1\n00:00:01,000 --> 00:00:02,000\nx\n", "u")), only(row, "chapters")
    )
    assert bad.kind is TrackResult.REFUSED and "SubRip" in bad.error


def test_a_chapters_track_a_source_serves_as_text_is_read_and_an_image_served_as_text_is_refused():
    """Mux serves a chapters track as JSON, which its source resolves to WebVTT text (sources/mux_extras.py)."""
    row = AssetMessage(
        "a",
        "mux://A1",
        thumbnail_url="mux://A1/thumbnail/S1",
        tracks=(Track("mux://A1/chapters/T1", "en", "chapters"),),
    )
    provider = FakeProvider()
    made = worker(provider)
    made.resolve_source = lambda url: InlineCaption(VTT.decode(), "vtt")
    assert run(made, only(row, "chapters")) == ATTACHED and made.fetches == []
    assert provider.calls[0][:4] == ("chapters", "vid", "en", ["Opening", "Closing"])
    made.policy = replace(made.policy, max_bytes=len(VTT) - 1)
    over = run(made, only(row, "chapters"))
    assert over.kind is TrackResult.REFUSED and "over" in over.error  # the cap a fetched file has
    image = run(made, only(row, "thumbnail"))
    assert image.kind is TrackResult.REFUSED and image.error == "the source serves text here, not a file"


def test_a_later_pass_finds_the_chapters_written_and_writes_nothing():
    provider = FakeProvider(chapters_look=ChaptersLook(2))
    got = run(worker(provider), only(CHAPTERED, "chapters"), attempts=3, row=CHAPTERED)
    assert got == TrackOutcome(TrackResult.ATTACHED, remote_track_id="fr") and provider.calls == [
        ("chapters?", "vid", "fr")
    ]


def test_a_target_that_fetches_chapters_by_url_is_handed_a_staged_copy_in_its_own_format_or_why_not():
    """Mux fetches a chapters track itself, a JSON file: the worker stages the provider's file and hands its link."""
    provider = FakeProvider(chapters_by_url=True)
    made = worker(provider)
    assert run(made, only(CHAPTERED, "chapters"), row=CHAPTERED) == ATTACHED
    assert made.staged == [("handoff/vid/chapters.json", "application/json")]
    assert provider.handed == "https://bucket.s3.example.com/handoff/vid/chapters.json?X-Amz-Signature=s"
    bare = FakeProvider(chapters_by_url=True)
    got = run(worker(bare, bucket=False), only(CHAPTERED, "chapters"), row=CHAPTERED)
    assert got.kind is TrackResult.REFUSED and "no staging bucket" in got.error and bare.calls == []


def test_a_target_without_chapters_notes_them_and_keeps_the_webvtt_file_in_the_bucket():
    provider = FakeProvider(takes_chapters=False)
    made = worker(provider)
    got = run(made, only(CHAPTERED, "chapters"), attempts=2)  # no look: there is nothing to find there
    assert got == TrackOutcome(
        TrackResult.NOTED,
        note="fake takes no chapters: the chapters file (WebVTT) is kept in the stack's bucket: kept/vid/chapters.vtt",
    )
    assert made.staged == [("kept/vid/chapters.vtt", "text/vtt")] and provider.calls == []


# --- collections ---------------------------------------------------------------------------------------------

FILED = AssetMessage("a", "vimeo://1", collections=(Collection("f1", "Talks", "folder", 4),))


def test_the_first_membership_makes_the_collection_once_records_it_and_places_the_video():
    provider, ledger = FakeProvider(), FakeCollections()
    extra = only(FILED, "collection")
    assert run(worker(provider, ledger=ledger), extra) == TrackOutcome(TrackResult.ATTACHED, remote_track_id="col-1")
    assert provider.calls == [("find", "Talks", extra.collection_key), ("create", "Talks", "folder"),
                              ("place", "vid", "col-1", 4)]  # fmt: skip
    assert ledger.writes == [("record", extra.collection_key, "col-1")]
    provider.calls.clear()
    assert run(worker(provider, ledger=ledger), extra).kind is TrackResult.ATTACHED  # the next video: placed only
    assert provider.calls == [("place", "vid", "col-1", 4)]


def test_a_collection_a_lost_answer_made_is_found_by_its_name_and_never_made_twice():
    provider, ledger = FakeProvider(found=RemoteCollection("col-9", "Talks")), FakeCollections()
    assert run(worker(provider, ledger=ledger), only(FILED, "collection")).remote_track_id == "col-9"
    assert [c[0] for c in provider.calls] == ["find", "place"]


def test_a_membership_waits_while_another_pass_makes_its_collection_and_fails_once_it_failed_for_good():
    ledger = FakeCollections(held_by_other=True)
    got = run(worker(FakeProvider(), ledger=ledger), only(FILED, "collection"))
    assert got.kind is TrackResult.WAITING and "being made by another pass" in got.error
    key = only(FILED, "collection").collection_key
    ledger = FakeCollections({key: {"state": "failed", "error": "provider: HTTP 400: bad name"}})
    got = run(worker(FakeProvider(), ledger=ledger), only(FILED, "collection"))
    assert got.kind is TrackResult.REFUSED and "could not be made: provider: HTTP 400: bad name" in got.error


@pytest.mark.parametrize(
    ("made", "kind", "item_state", "retry"),
    [
        (TrackOutcome(TrackResult.TRANSIENT, error="provider: HTTP 503"), TrackResult.WAITING, "failed", True),
        (TrackOutcome(TrackResult.THROTTLED, retry_after=3.0), TrackResult.THROTTLED, "pending", True),
        (TrackOutcome(TrackResult.REFUSED, error="provider: HTTP 400"), TrackResult.REFUSED, "failed", False),
    ],
)
def test_a_create_that_made_nothing_releases_the_collection_with_its_fate_and_the_membership_follows(
    made, kind, item_state, retry
):
    ledger = FakeCollections()
    got = run(worker(FakeProvider(made=made), ledger=ledger), only(FILED, "collection"))
    assert got.kind is kind
    assert ledger.writes[-1][2:] == (item_state, retry)


def test_a_later_pass_finds_the_video_placed_and_places_it_no_second_time():
    provider = FakeProvider(placed=True)
    ledger = FakeCollections(
        {only(FILED, "collection").collection_key: {"state": "created", "remote_collection_id": "c"}}
    )
    assert run(worker(provider, ledger=ledger), only(FILED, "collection"), attempts=2).kind is TrackResult.ATTACHED
    assert provider.calls == [("placed?", "vid", "c")]


def test_where_the_target_keeps_an_order_each_placement_orders_every_member_placed_so_far_by_source_position():
    provider, ledger = FakeProvider(keeps_collection_order=True), FakeCollections()
    key = only(FILED, "collection").collection_key
    ledger.items[key] = {"state": "created", "remote_collection_id": "c", "members": {"v-late": 9, "v-first": 0}}
    assert run(worker(provider, ledger=ledger), only(FILED, "collection")).kind is TrackResult.ATTACHED
    assert provider.calls[-1] == ("order", "c", ["v-first", "vid", "v-late"])  # positions 0, 4, 9
