"""Mux as a source, what a viewer sees first (issue 42): migrator.sources.mux against the "mux" simulator's library
(infra/sim/platforms/mux_library.py). The poster is the frame Mux shows, its `thumbnail_time` or the middle; the
thumbnail a public playback id's link as it is, a signed one's a reference signed at the fetch with a token of
audience `t`; a chapters text track is a chapters track, never a caption, resolved from Mux's JSON to WebVTT
chapter cues the tracks worker reads. mux-python 5.1.2 reads the chapters track only with its client-side
validation off: its Track allows `text_type` subtitles only (the SDK predates chapters)."""

from __future__ import annotations

import mux_python
import pytest
from migrator.extras import read_chapters
from migrator.sources import ResolutionKind, build, parse_ref
from migrator.sources.mux import NO_SIGNING_KEY

from infra.sim.library import item
from infra.sim.platforms import chapter_cues, mux_library
from infra.sim.platforms.mux import FAULTS
from tests.sim.support import list_all

ID, SECRET = "mux-src-id", "mux-src-secret"
# Chapters on every other video from the second (1, 3, 5, ...); signed playback on 0, 3, 6, ...
CONFIG = {"library_size": 8, "library_chapters_every": 2, "library_private_every": 3, "library_captions_every": 2}


def asset(index: int) -> str:
    return "MuxAsset" + str(index).zfill(24)


@pytest.fixture
def library(launch):
    sim = launch("mux", token_id=ID, token_secret=SECRET, **CONFIG)
    source = build("mux", lambda: {"token_id": ID, "token_secret": SECRET}, sim.url, patient=True, rate_per_s=0)
    return sim, source


def signed_source(sim):
    configuration = mux_python.Configuration(host=sim.url)
    configuration.username, configuration.password = ID, SECRET
    key = mux_python.SigningKeysApi(mux_python.ApiClient(configuration)).create_signing_key().data
    creds = {"token_id": ID, "token_secret": SECRET, "signing_key_id": key.id, "signing_private_key": key.private_key}
    return build("mux", lambda: creds, sim.url, patient=True, rate_per_s=0)


def test_the_poster_is_the_frame_mux_shows_and_a_public_thumbnail_is_its_lasting_link(library, web):
    sim, source = library
    rows = {e.asset_id.split("/")[1]: e for e in list_all(source)[0]}
    one, two = rows[asset(1)], rows[asset(2)]  # public: one with no thumbnail_time, two with one
    assert one.poster_time_s == round(item(sim.config, 1, FAULTS).duration / 2, 3)  # "from the middle"
    assert two.poster_time_s == mux_library.thumbnail_time(item(sim.config, 2, FAULTS))  # the asset's own
    assert one.thumbnail_url == f"{sim.url}/_play/mux/PB{1:030d}/thumbnail.jpg"  # no time in it: Mux's default
    image = web.get(one.thumbnail_url)
    assert image.status_code == 200 and image.content[:3] == b"\xff\xd8\xff"
    assert not one.collections and one.published_at is None  # Mux has neither


def test_a_signed_assets_thumbnail_is_a_reference_signed_for_a_thumbnail_when_it_is_fetched(library, web):
    sim, keyless = library
    rows = {e.asset_id.split("/")[1]: e for e in list_all(keyless)[0]}
    ref = rows[asset(3)].thumbnail_url
    assert ref == f"mux://{asset(3)}/thumbnail/SG{3:030d}"
    refused = keyless.resolve(parse_ref(ref))
    assert refused.kind is ResolutionKind.UNFETCHABLE and refused.reason == NO_SIGNING_KEY
    signed = signed_source(sim).resolve(parse_ref(ref))
    assert signed.kind is ResolutionKind.READY and "token=" in signed.url and signed.expires_at
    assert web.get(signed.url).content[:3] == b"\xff\xd8\xff"
    assert web.get(signed.url.split("?")[0]).status_code == 403  # without the token
    video_token = signed_source(sim).resolve(parse_ref(rows[asset(3)].tracks[0].url)).url.split("?")[1]
    assert web.get(f"{signed.url.split('?')[0]}?{video_token}").status_code == 403  # audience v is not t
    gone = keyless.resolve(parse_ref(f"mux://{asset(3)}/thumbnail/SG{4:030d}"))
    assert gone.kind is ResolutionKind.UNFETCHABLE and "no longer the asset's" in gone.reason


def test_a_chapters_text_track_is_a_chapters_track_read_from_muxs_json_as_webvtt_cues(library):
    sim, source = library
    rows = {e.asset_id.split("/")[1]: e for e in list_all(source)[0]}
    one = rows[asset(1)]
    kinds = sorted(t.kind for t in one.tracks)
    assert kinds == ["captions", "chapters", "subtitles"]  # never taken for a caption
    [chapters] = [t for t in one.tracks if t.kind == "chapters"]
    assert chapters.url == f"mux://{asset(1)}/chapters/{mux_library.chapters_track_id(item(sim.config, 1, FAULTS))}"
    assert (chapters.language, chapters.format) == ("en", "vtt")
    resolved = source.resolve(parse_ref(chapters.url))
    assert resolved.kind is ResolutionKind.READY and resolved.text_format == "vtt"
    read = read_chapters(resolved.text.encode())
    expected = [(start, title) for start, _end, title in chapter_cues.cues(item(sim.config, 1, FAULTS))]
    assert [(c.start_s, c.title) for c in read] == expected
    assert not any(t.kind == "chapters" for t in rows[asset(2)].tracks)


def test_a_signed_assets_chapters_are_read_with_a_video_token(library):
    sim, keyless = library
    track = parse_ref(f"mux://{asset(3)}/chapters/{mux_library.chapters_track_id(item(sim.config, 3, FAULTS))}")
    assert keyless.resolve(track).reason == NO_SIGNING_KEY
    resolved = signed_source(sim).resolve(track)
    assert resolved.kind is ResolutionKind.READY and read_chapters(resolved.text.encode())[0].start_s == 0


def test_the_sdk_reads_the_chapters_track_and_the_thumbnail_time_only_past_its_own_checks(library, monkeypatch):
    sim, _ = library
    configuration = mux_python.Configuration(host=sim.url)
    configuration.username, configuration.password = ID, SECRET
    api = mux_python.AssetsApi(mux_python.ApiClient(configuration))
    with pytest.raises(ValueError, match="text_type"):  # 5.1.2's Track: text_type "subtitles" only
        api.get_asset(asset(1))
    lenient = mux_python.Configuration()
    lenient.client_side_validation = False  # the models' own configuration: the default one
    monkeypatch.setattr(mux_python.Configuration, "_default", lenient)
    tracks = api.get_asset(asset(1)).data.tracks
    assert [(t.type, t.text_type, t.status) for t in tracks if t.text_type == "chapters"] == [
        ("text", "chapters", "ready")
    ]
    raw = api.get_asset(asset(2), _preload_content=False)  # thumbnail_time: past 5.1.2's Asset model
    assert '"thumbnail_time"' in raw.data.decode()
