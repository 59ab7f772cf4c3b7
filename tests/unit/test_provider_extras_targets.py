"""What a viewer sees (issue 42) at the targets that take a poster time only, or nothing: Mux, Cloudflare Stream and
the seed's contract ("generic"). Tables of what each carries and what it notes, per row shape: the entries a row
arms with each target's facts, what the tracks worker's pass makes of each entry given those facts (a frame time
set and the image kept, chapters handed by URL, a file kept), and what each create carries of the collections and
the publish time. The passes against the simulators and the ledger: tests/sim/test_sdk_*_target_extras.py and
tests/emulator/test_trackworker_time_targets.py."""

from __future__ import annotations

import json

import pytest
from migrator.extrawork import extras_facts
from migrator.messages import AssetMessage, Track
from migrator.providers import build
from migrator.providers.cloudflare import CloudflareProvider
from migrator.providers.extras import ChaptersUpload
from migrator.providers.generic import GenericProvider
from migrator.providers.mux import MuxProvider
from migrator.row_extras import Chapter, Collection
from migrator.sources.mux_extras import read_apple_chapters
from migrator.tracks import initial_states

from tests.unit.test_extrawork_logic import FakeProvider, only, run, worker
from tests.unit.test_fidelity import SOURCE, body_of
from tests.unit.test_providers import MUX_SECRET

TARGETS = {"mux": MuxProvider, "cloudflare": CloudflareProvider, "generic": GenericProvider}
IMAGE_URL = "https://img.example/p.png"
TALKS = Collection("folders/1", "Talks", "folder", 2)
CHAPTERS = (Chapter(0.0, "Intro"), Chapter(12.5, "Demo"))


FACTS = ("takes_thumbnail", "poster_time_later", "takes_chapters", "chapters_by_url", "takes_collections")


def like(name: str) -> FakeProvider:
    """A fake target with the real provider's facts (base.py "--- extras"): the worker decides on those alone."""
    real = TARGETS[name]
    facts = {fact: getattr(real, fact) for fact in (*FACTS, "collections_instead")}
    return FakeProvider(name=name, **facts)


def armed(name: str, row: AssetMessage) -> dict[str, tuple[str, str]]:
    facts = extras_facts(like(name))  # type: ignore[arg-type]
    states = initial_states(
        row.tracks, takes_tracks=True, provider=name, at_create=set(), one_per_language=False, now=1.0, details=row,
        extras=facts,
    )  # fmt: skip
    return {key.split(":")[0]: (entry["state"], entry.get("note", "")) for key, entry in states.items()}


# --- the facts, and the entries a row arms with them ----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "thumbnail", "later", "chapters", "by_url", "collections"),
    [
        # Mux: `thumbnail_time`, PATCHed once ready (set-a-default-thumbnail); a chapters text track fetched by URL.
        ("mux", "time", True, True, True, False),
        # Stream: thumbnailTimestampPct at the create or by "Edit video details"; no chapters, no collections.
        ("cloudflare", "time", False, False, False, False),
        # The seed's contract: `input` and `metadata` only.
        ("generic", None, False, False, False, False),
    ],
)
def test_each_target_says_what_it_takes(name, thumbnail, later, chapters, by_url, collections):
    real = TARGETS[name]
    assert (real.takes_thumbnail, real.poster_time_later, real.takes_chapters, real.chapters_by_url) == (
        thumbnail, later, chapters, by_url,
    )  # fmt: skip
    assert real.takes_collections is collections


@pytest.mark.parametrize(
    ("name", "row", "expected"),
    [
        # A poster time alone: Mux sets it after the create (an entry); Stream's create carries it; generic's metadata.
        ("mux", AssetMessage("a", SOURCE, poster_time_s=12.0), {"thumbnail": ("pending", "")}),
        ("cloudflare", AssetMessage("a", SOURCE, poster_time_s=12.0), {}),
        ("generic", AssetMessage("a", SOURCE, poster_time_s=12.0), {}),
        # An image: an entry everywhere (set as a time and kept, or kept), worked by the tracks worker.
        ("mux", AssetMessage("a", SOURCE, thumbnail_url=IMAGE_URL), {"thumbnail": ("pending", "")}),
        ("cloudflare", AssetMessage("a", SOURCE, thumbnail_url=IMAGE_URL), {"thumbnail": ("pending", "")}),
        ("generic", AssetMessage("a", SOURCE, thumbnail_url=IMAGE_URL), {"thumbnail": ("pending", "")}),
        # Chapters: written at Mux, kept in the bucket elsewhere: pending until the pass keeps the file.
        ("mux", AssetMessage("a", SOURCE, chapters=CHAPTERS), {"chapters": ("pending", "")}),
        ("cloudflare", AssetMessage("a", SOURCE, chapters=CHAPTERS), {"chapters": ("pending", "")}),
        # A collection: noted at arming, with what each does instead.
        (
            "mux",
            AssetMessage("a", SOURCE, collections=(TALKS,)),
            {
                "collection": (
                    "noted",
                    "mux keeps no collections: kept in the ledger only (Mux has no folders or playlists)",
                )
            },
        ),
        (
            "cloudflare",
            AssetMessage("a", SOURCE, collections=(TALKS,)),
            {
                "collection": (
                    "noted",
                    "cloudflare keeps no collections: carried in meta.collections at the create (Stream has no"
                    " folders or playlists)",
                )
            },
        ),
        (
            "generic",
            AssetMessage("a", SOURCE, collections=(TALKS,)),
            {
                "collection": (
                    "noted",
                    "generic keeps no collections: carried in metadata.collections at the create (the seed contract"
                    " has no collections)",
                )
            },
        ),
    ],
)
def test_a_row_arms_at_each_target_what_it_will_work_and_notes_what_it_cannot_carry(name, row, expected):
    assert armed(name, row) == expected


# --- the tracks worker's pass, on each target's facts --------------------------------------------------------

THUMB = AssetMessage("a", "vimeo://1", thumbnail_url=IMAGE_URL, poster_time_s=12.0)
NO_TIME = AssetMessage("a", "vimeo://1", thumbnail_url=IMAGE_URL)
KEPT_IMAGE = "the image is kept in the stack's bucket: kept/vid/thumbnail.png"


@pytest.mark.parametrize(
    ("name", "row", "calls", "note"),
    [
        ("mux", THUMB, [("time", "vid", 12.0)], f"mux takes a poster time only: set to 12 s; {KEPT_IMAGE}"),
        (
            "cloudflare",
            THUMB,
            [("time", "vid", 12.0)],
            f"cloudflare takes a poster time only: set to 12 s; {KEPT_IMAGE}",
        ),
        # An image with no time: the default frame (a few seconds in), and the image still kept, noted.
        ("mux", NO_TIME, [("time", "vid", 5.0)], f"mux takes a poster time only: set to 5 s; {KEPT_IMAGE}"),
        (
            "cloudflare",
            NO_TIME,
            [("time", "vid", 5.0)],
            f"cloudflare takes a poster time only: set to 5 s; {KEPT_IMAGE}",
        ),
        ("generic", THUMB, [], f"generic takes no thumbnail image: {KEPT_IMAGE}"),
    ],
)
def test_a_thumbnail_image_is_kept_in_the_bucket_and_noted_with_the_frame_set_where_a_time_is_taken(
    name, row, calls, note
):
    provider = like(name)
    made = worker(provider)
    got = run(made, only(row, "thumbnail"))
    assert (got.kind.value, got.note) == ("noted", note)
    assert provider.calls == calls and made.staged == [("kept/vid/thumbnail.png", "image/png")]


CHAPTERED = AssetMessage("a", "vimeo://1", chapters=CHAPTERS)


@pytest.mark.parametrize(
    ("name", "outcome", "staged"),
    [
        ("mux", ("attached", None), [("handoff/vid/chapters.json", "application/json")]),  # handed, Mux's JSON
        (
            "cloudflare",
            (
                "noted",
                "cloudflare takes no chapters: the chapters file (WebVTT) is kept in the stack's bucket:"
                " kept/vid/chapters.vtt",
            ),
            [("kept/vid/chapters.vtt", "text/vtt")],
        ),
        (
            "generic",
            (
                "noted",
                "generic takes no chapters: the chapters file (WebVTT) is kept in the stack's bucket:"
                " kept/vid/chapters.vtt",
            ),
            [("kept/vid/chapters.vtt", "text/vtt")],
        ),
    ],
)
def test_chapters_are_handed_to_mux_as_a_staged_file_and_kept_in_the_bucket_elsewhere(name, outcome, staged):
    made = worker(like(name))
    got = run(made, only(CHAPTERED, "chapters"))
    assert (got.kind.value, got.note) == outcome and made.staged == staged


# --- what the providers send -----------------------------------------------------------------------------------


def mux() -> MuxProvider:
    return build("mux", "https://api.mux.example", lambda: MUX_SECRET)  # type: ignore[return-value]


def test_mux_chapters_file_is_apples_hls_chapter_notation_that_muxs_own_reader_gives_back():
    upload = ChaptersUpload((*CHAPTERS, Chapter(40.0, "Q & A — « live »")), b"WEBVTT\n", "fr", 61.0)
    name, body, media_type = mux().chapters_file(upload)
    assert (name, media_type) == ("chapters.json", "application/json")
    doc = json.loads(body)
    assert doc[0] == {"chapter": 1, "start-time": 0.0, "titles": [{"language": "fr", "title": "Intro"}]}
    read = read_apple_chapters(doc, "fr")  # the reader of a Mux source's chapters (sources/mux_extras.py)
    assert [(c.start_s, c.title) for c in read] == [(0.0, "Intro"), (12.5, "Demo"), (40.0, "Q & A — « live »")]


def test_mux_never_sends_a_chapters_track_at_the_create_as_subtitles():
    """A row's WebVTT chapters track is the worker's (Mux takes chapters as JSON): before, the create listed it as a
    subtitles input, and the label lookup of a track it had not labelled failed the create."""
    chapters = Track("https://files.example/ch.vtt", "en", "chapters")
    captions = Track("https://files.example/en.vtt", "en", "captions")
    row = AssetMessage("a", SOURCE, tracks=(chapters, captions))
    body, _ = body_of("mux", row)
    assert [i.get("text_type") for i in body["inputs"]] == [None, "subtitles"]


@pytest.mark.parametrize(
    ("name", "notes"),
    [
        ("mux", ["published_at: not carried by mux (kept in the ledger)"]),  # the poster time: the worker's, no note
        ("cloudflare", ["poster_time_s: kept in meta only (thumbnailTimestampPct needs the duration, not known)"]),
        ("generic", []),
    ],
)
def test_the_publish_time_and_collections_ride_in_the_free_map_where_there_is_one_and_are_noted_at_mux(name, notes):
    row = AssetMessage("a", SOURCE, poster_time_s=3.0, published_at="2019-05-01T10:00:00Z", collections=(TALKS,))
    body, got = body_of(name, row)
    assert got == notes
    free = {"mux": None, "cloudflare": "meta", "generic": "metadata"}[name]
    if free is None:
        assert "published_at" not in json.dumps(body) and "Talks" not in json.dumps(body)
    else:
        assert body[free]["published_at"] == "2019-05-01T10:00:00Z"
        assert body[free]["collections"] == [{"id": "folders/1", "name": "Talks", "kind": "folder", "position": 2}]
