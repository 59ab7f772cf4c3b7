"""What a viewer sees first, read from Kaltura (issue 42): each entry's default thumb asset (its image behind its
reference), its chapters (thumb cue points of sub-type CHAPTER), its categories as collections, and its publish time,
on the "kaltura" simulator profile.

KalturaApiClient 23.10.0 (Kaltura's own client) reads what the simulator holds, as Kaltura documents it
(infra/sim/platforms/kaltura_extras.py cites the sources); migrator.sources.kaltura lists the library into rows, and
each test holds the rows to what the client read, and the calls to the budget: a list call a chunk of entries for
the thumbs and another for the chapters, with the captions, and none of them without tracks.
"""

from __future__ import annotations

import struct
import time
from collections import Counter

import pytest
from migrator.messages import AssetMessage
from migrator.sources import ResolutionKind, build, parse_ref

from infra.sim.platforms import kaltura_entries

KalturaClient = pytest.importorskip("KalturaClient")
from KalturaClient import KalturaClient as Client  # noqa: E402
from KalturaClient.Base import KalturaConfiguration  # noqa: E402
from KalturaClient.Plugins.Core import (  # noqa: E402
    KalturaCategoryEntryFilter,
    KalturaCategoryFilter,
    KalturaMediaEntryFilter,
    KalturaSessionType,
    KalturaThumbAssetFilter,
)
from KalturaClient.Plugins.CuePoint import KalturaCuePointType  # noqa: E402
from KalturaClient.Plugins.ThumbCuePoint import KalturaThumbCuePointFilter  # noqa: E402

PARTNER = 2_012_345
TOKEN_ID, TOKEN, SECRET = "0_apptoken", "app-token-secret", "admin-secret"
APP = {"partner_id": PARTNER, "app_token_id": TOKEN_ID, "app_token": TOKEN}
EXTRA_CALLS = ("thumbasset.list", "cuepoint_cuepoint.list", "thumbasset.geturl")


@pytest.fixture
def library(launch):
    def start(**config):
        sim = launch("kaltura", token=SECRET, token_id=TOKEN_ID, token_secret=TOKEN, **{"library_size": 60, **config})
        source = build("kaltura", lambda: APP, sim.url, patient=True, rate_per_s=0)
        return sim, source

    return start


def client_of(sim) -> Client:
    client = Client(KalturaConfiguration(serviceUrl=sim.url))
    client.setKs(client.session.start(SECRET, "", KalturaSessionType.ADMIN, PARTNER))
    return client


def rows_of(source, tracks: bool = True) -> list[AssetMessage]:
    entries, cursor = [], None
    while True:
        page = source.page(cursor, None, tracks)
        entries, cursor = entries + page.entries, page.cursor
        if cursor is None:
            return [e for e in entries if isinstance(e, AssetMessage)]


def calls(sim) -> Counter:
    return Counter(r.get("call") for r in sim.requests_log(ops=None))


def iso(epoch: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def image_size(body: bytes) -> tuple[str, int, int]:
    """(kind, width, height) of a PNG (its IHDR) or a baseline JPEG (its SOF0)."""
    if body.startswith(b"\x89PNG\r\n\x1a\n"):
        return ("png", *struct.unpack(">II", body[16:24]))
    assert body[:2] == b"\xff\xd8"
    at = body.index(b"\xff\xc0")
    height, width = struct.unpack(">HH", body[at + 5 : at + 9])
    return "jpeg", width, height


def test_each_row_carries_the_default_thumb_chapters_categories_and_publish_time_kaltura_holds(library):
    sim, source = library(library_private_every=3, library_unfetchable_every=10)
    rows = rows_of(source)
    client = client_of(sim)
    assert len(rows) == 55  # 60, less 5 unfetchable (the purged one is carried from its tallest flavor)
    now = time.time()
    for row in rows:
        eid = row.metadata["source_id"]
        entry = client.media.list(KalturaMediaEntryFilter(idEqual=eid)).objects[0]
        thumbs = client.thumbAsset.list(KalturaThumbAssetFilter(entryIdEqual=eid)).objects
        default = [t.id for t in thumbs if "default_thumb" in t.tags.split(",") and t.status.getValue() == 2]
        assert row.thumbnail_url == f"kaltura://{eid}/thumb/{default[0] if default else 'default'}"
        assert default or entry.thumbnailUrl  # an entry with no thumb asset still shows its own image
        chapters = KalturaThumbCuePointFilter(entryIdEqual=eid, cuePointTypeEqual=KalturaCuePointType.THUMB)
        held = [p for p in client.cuePoint.cuePoint.list(chapters).objects if p.subType.getValue() == 2]
        assert [(c.start_s, c.title) for c in row.chapters] == [(p.startTime / 1000, p.title) for p in held]
        links = client.categoryEntry.list(KalturaCategoryEntryFilter(entryIdEqual=eid, statusEqual=2)).objects
        ids = sorted({link.categoryId for link in links})
        names = {
            c.id: c.fullName for c in client.category.list(KalturaCategoryFilter(idIn=",".join(map(str, ids)))).objects
        }
        assert sorted((c.id, c.name, c.kind, c.position) for c in row.collections) == sorted(
            (str(i), names[i], "category", None) for i in ids
        )
        start = entry.startDate if isinstance(entry.startDate, int) else None
        published = None if start and start > now else iso(start or entry.createdAt)
        assert row.published_at == published and row.created_at == iso(entry.createdAt)
    by_id = {r.metadata["source_id"]: r for r in rows}
    assert by_id["0_00000002"].published_at == "2020-01-02T00:00:00Z" != by_id["0_00000002"].created_at  # its sunrise
    assert by_id["0_00000005"].thumbnail_url == "kaltura://0_00000005/thumb/default"  # no thumb asset at all
    assert [c.title for c in by_id["0_00000001"].chapters] == ["Welcome", "Agenda — « Q3 »", "Demo"]  # not the slide
    assert kaltura_entries.PRIVATE_KINDS[(18 // 3) % 9] == "not_yet"
    assert by_id["0_0000000i"].published_at is None  # its sunrise is a month away: not published yet


def test_the_extras_cost_a_call_a_chunk_of_entries_and_none_without_tracks(library):
    """Thumbs and chapters are asked for a chunk (100) of entries at a time, beside the captions; categories are read
    for privacy anyway, so collections cost nothing; --no-tracks: no thumb or cue point call at all, and an entry's
    own thumbnailUrl stands for its thumbnail."""
    sim, source = library(library_size=250)
    rows = rows_of(source)
    asked = calls(sim)
    assert len(rows) == 250 and asked["caption_captionasset.list"] == 3
    assert asked["thumbasset.list"] == asked["cuepoint_cuepoint.list"] == 3 and asked["thumbasset.geturl"] == 0
    assert sum(1 for r in rows if r.chapters) == 63 and all(r.collections for r in rows)

    quiet, bare = library(library_size=250)
    rows = rows_of(bare, tracks=False)
    assert sum(calls(quiet)[c] for c in EXTRA_CALLS) == 0
    assert all(r.thumbnail_url == f"kaltura://{r.metadata['source_id']}/thumb/default" for r in rows)
    assert not any(r.chapters for r in rows) and all(r.collections and r.published_at for r in rows)


def test_a_thumb_reference_resolves_to_its_image_with_a_ks_only_where_access_control_asks(library, web):
    """thumbAsset.getUrl mints the link when the thumbnail is set: the owner's upload (a PNG), the captured frame (a
    JPEG), an entry's own thumbnailUrl where it has no thumb asset, a KS in the link of an entry whose access
    control profile has a rule (and the image refused without it), the default now where the asset named is gone."""
    sim, source = library(library_size=12, library_private_every=1)  # every entry private, each kind in turn

    def image(ref: str) -> tuple[str, int, int]:
        resolved = source.resolve(parse_ref(ref))
        assert resolved.kind is ResolutionKind.READY, resolved
        got = web.get(resolved.url)
        assert got.status_code == 200 and got.headers["Content-Type"].startswith("image/")
        return image_size(got.content)

    assert image("kaltura://0_00000000/thumb/3_00000001") == ("png", 1280, 720)  # uploaded by its owner
    assert image("kaltura://0_00000001/thumb/3_00000010") == ("jpeg", 16, 8)  # the frame Kaltura captured
    assert image("kaltura://0_00000005/thumb/default") == ("jpeg", 16, 8)  # thumbnailUrl: no thumb asset
    assert image("kaltura://0_00000006/thumb/3_00000069") == ("png", 1280, 720)  # gone: the default now
    restricted = source.resolve(parse_ref("kaltura://0_00000004/thumb/3_00000040"))  # PRIVATE_KINDS[4]
    assert kaltura_entries.PRIVATE_KINDS[4] == "restricted" and "/ks/" in restricted.url
    assert restricted.expires_at and restricted.expires_at > time.time() + 86_000
    assert web.get(restricted.url).status_code == 200
    assert web.get(restricted.url.split("/ks/")[0]).status_code == 403
    assert sum(1 for r in sim.requests_log(ops=None) if r.get("call") == "thumbasset.geturl") == 5
    web.post(f"{sim.url}/_sim/library", json={"delete": [3]}).raise_for_status()
    gone = source.resolve(parse_ref("kaltura://0_00000003/thumb/3_00000031"))
    assert gone.kind is ResolutionKind.UNFETCHABLE and gone.reason.startswith("not found at the source")
    wrong = source.resolve(parse_ref("kaltura://0_00000003/thumb/..%2Fx"))
    assert wrong.kind is ResolutionKind.UNFETCHABLE
