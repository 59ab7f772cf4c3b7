"""What a viewer sees first, read from JW Player (issue 42): each media's poster, its chapters track, the manual
playlists that hold it in their order, and its publish date, on the "jwplayer" simulator profile.

JW Player's official SDK (jwplatform 2.2.2) reads what the simulator holds (infra/sim/platforms/jwplayer_extras.py
and jwplayer_library.py cite the pages); migrator.sources.jwplayer lists the library into rows, and each test holds
the rows to what the SDK read, and the requests to the budget of 60 a minute that the property's live site shares:
the poster costs no request, the chapters come with the text tracks already asked for, the playlists once a sweep.
"""

from __future__ import annotations

from collections import Counter

import pytest
from jwplatform.client import JWPlatformClient
from migrator.extras import image_kind, read_chapters
from migrator.messages import AssetMessage
from migrator.sources import ResolutionKind, build, parse_ref

from infra.sim.library import item
from infra.sim.platforms import chapter_cues
from infra.sim.platforms.jwplayer_library import FAULTS
from tests.sim.support import list_all
from tests.sim.test_source_jwplayer import CREDS, PROPERTY_SECRET, SECRET, SITE, media, sdk


@pytest.fixture
def library(launch):
    def start(creds=CREDS, **config):
        config = {"token": SECRET, "account_id": SITE, "library_size": 60, "library_chapters_every": 3, **config}
        sim = launch("jwplayer", **config)
        return sim, build("jwplayer", lambda: creds, sim.url, patient=True, rate_per_s=0)

    return start


def manual_playlists(client: JWPlatformClient) -> dict[str, list[tuple[str, str, int]]]:
    """Each media's manual playlists and its place in each, as the SDK reads them."""
    listed = client.request("GET", f"/v2/sites/{SITE}/playlists/", query_params={"page_length": 100}).json_body
    held: dict[str, list[tuple[str, str, int]]] = {}
    for playlist in listed["playlists"]:
        if playlist["metadata"]["playlist_type"] != "manual":
            continue
        got = client.Playlist.ManualPlaylist.get(site_id=SITE, playlist_id=playlist["id"]).json_body
        for place, mid in enumerate(got["metadata"]["media_filter"]["include"]["values"]):
            held.setdefault(mid, []).append((f"playlists/{playlist['id']}", got["metadata"]["title"], place))
    return held


def test_each_row_carries_the_poster_chapters_playlists_and_publish_date_jw_holds(library):
    sim, source = library(library_unfetchable_every=10, library_captions_every=4)
    rows = [e for e in list_all(source)[0] if isinstance(e, AssetMessage)]
    client = sdk(sim)
    playlists = manual_playlists(client)
    assert len(rows) == 54 and playlists  # 60, every tenth unfetchable (failed, processing, audio) in turn
    for row in rows:
        mid = row.metadata["source_id"]
        got = client.Media.get(site_id=SITE, media_id=mid).json_body
        assert row.thumbnail_url == f"jwplayer://{mid}/poster/poster.jpg"  # every media has a poster
        assert row.published_at == got["metadata"]["publish_start_date"][:19] + "Z"
        tracks = list(client.Media.TextTrack.list(site_id=SITE, media_id=mid))
        chapters = [t["id"] for t in tracks if t["track_kind"] == "chapters" and t["status"] == "ready"]
        assert [t.url for t in row.tracks if t.kind == "chapters"] == [
            f"jwplayer://{mid}/tracks/{c}.vtt" for c in chapters
        ]
        assert [(c.id, c.name, c.position) for c in row.collections] == playlists.get(mid, [])
        assert all(c.kind == "playlist" for c in row.collections) and "playlists_note" not in row.metadata
    by_id = {r.metadata["source_id"]: r for r in rows}
    assert by_id[media(1)].published_at == "2020-01-01T01:01:00Z" != by_id[media(1)].created_at
    assert [(c.name, c.position) for c in by_id[media(1)].collections] == [("Top picks « 2021 »", 9)]  # 55, ..., 1
    assert "1 draft text track(s)" in by_id[media(7)].metadata["text_tracks_note"]  # its chapters held back
    assert not any(c.id == "playlists/PLdyn003" for r in rows for c in r.collections)  # filled by rule: not carried


def test_the_extras_cost_the_playlists_once_a_sweep_and_nothing_a_media(library):
    sim, source = library(library_size=120)
    before = Counter(entry["op"] for entry in sim.requests_log(ops=None))
    rows = list_all(source)[0]
    asked = Counter(entry["op"] for entry in sim.requests_log(ops=None)) - before
    # A page of playlists, the two manual ones read; the text tracks one a media as they were; no media read again.
    assert asked["src_playlists"] == 1 and asked["src_manual_playlist"] == 2
    assert asked["src_tracks"] == len(rows) and asked["get"] == 0
    quiet, bare = library(library_size=120)
    rows = [e for e in list_all(bare, tracks=False)[0] if isinstance(e, AssetMessage)]
    asked = Counter(entry["op"] for entry in quiet.requests_log(ops=None))
    assert asked["src_playlists"] == asked["src_manual_playlist"] == asked["src_tracks"] == 0
    assert all(r.thumbnail_url and r.published_at and not r.collections for r in rows)


def test_a_poster_reference_resolves_to_the_delivery_apis_poster_signed_where_the_property_signs(library, web):
    sim, source = library(library_private_every=4)
    before = len(sim.requests_log(ops=None))
    ready = source.resolve(parse_ref(f"jwplayer://{media(1)}/poster/poster.jpg"))
    image = web.get(ready.url)
    assert len(sim.requests_log(ops=None)) == before  # no Management API request: the 60 a minute are spared
    assert image_kind(image.content).media_type == "image/jpeg" and b"poster of J0000001, width 1920" in image.content
    private = source.resolve(parse_ref(f"jwplayer://{media(4)}/poster/poster.jpg"))  # its publish window closed
    assert web.get(private.url).status_code == 404  # delivered to no one but a signed request
    sim.patch_config({"signing_secret": PROPERTY_SECRET})
    assert web.get(ready.url).status_code == 403  # a property with URL signing: unsigned, refused
    signed = build("jwplayer", lambda: {**CREDS, "signing_secret": PROPERTY_SECRET}, sim.url, patient=True)
    for index in (1, 4):
        resolved = signed.resolve(parse_ref(f"jwplayer://{media(index)}/poster/poster.jpg"))
        assert resolved.kind is ResolutionKind.READY and resolved.expires_at
        assert web.get(resolved.url).headers["Content-Type"] == "image/jpeg"


def test_a_chapters_track_resolves_to_the_webvtt_the_tracks_worker_reads_as_chapters(library, web):
    sim, source = library()
    (row,) = source.video(media(4)).entries
    (track,) = [t for t in row.tracks if t.kind == "chapters"]
    assert (track.language, track.name, track.format) == ("en", "Chapters", "vtt")
    file = web.get(source.resolve(parse_ref(track.url)).url).content
    held = item(sim.config, 4, FAULTS)
    assert [(c.start_s, c.title) for c in read_chapters(file)] == [(s, t) for s, _, t in chapter_cues.cues(held)]
