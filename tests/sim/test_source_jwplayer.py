"""JW Player as a source: the "jwplayer" simulator's library driven by the official jwplatform 2.2.2 SDK and by
migrator.sources.jwplayer, which walks the library by date under the 10,000-result ceiling, names what it cannot
fetch, keeps what is still processing pending, signs its Delivery API requests with the property's secret just
before the create, carries text tracks, sweeps deltas by last_modified and keeps to 60 requests a minute."""

from __future__ import annotations

import http.client
import io
import json
import time

import jwt as pyjwt
import pytest
from jwplatform.client import JWPlatformClient
from jwplatform.errors import NotFoundError, TooManyRequestsError
from migrator.sources import ResolutionKind, build, parse_ref
from migrator.sources.jwplayer import (
    CAPTIONS_PROCESSING,
    NOT_DELIVERED,
    SIGNING_NEEDED,
    STILL_PROCESSING,
    tracks_note,
)
from migrator_cli.sweep import read_mark, sweep

from tests.sim.support import list_all

SITE, SECRET, PROPERTY_SECRET = "Site1234", "v2-api-secret", "property-secret-of-32-characters"
CREDS = {"site_id": SITE, "api_secret": SECRET}
SIGNED_CREDS = {**CREDS, "signing_secret": PROPERTY_SECRET}


@pytest.fixture
def library(launch):
    def start(creds=CREDS, **config):
        config = {"token": SECRET, "account_id": SITE, "library_size": 60, **config}
        sim = launch("jwplayer", **config)
        return sim, build("jwplayer", lambda: creds, sim.url, patient=True, rate_per_s=0)

    return start


def sdk(sim) -> JWPlatformClient:
    """The official client, its connection pointed at the simulator (it only ever opens HTTPS on port 443)."""
    client = JWPlatformClient(SECRET)
    host, port = sim.url.split("//")[1].rsplit(":", 1)
    client._connection = http.client.HTTPConnection(host, int(port), timeout=10)
    return client


def media(index: int) -> str:
    return f"J{index:07d}"


def test_a_page_number_walk_stops_silently_at_the_ceiling_and_the_date_walk_lists_25000_whole(library):
    sim, source = library(library_size=25_000)
    client = sdk(sim)
    tenth = client.Media.list(site_id=SITE, query_params={"page": 10, "page_length": 1000})
    past = client.Media.list(site_id=SITE, query_params={"page": 11, "page_length": 1000})
    assert len(tenth) == 1000 and len(past) == 0 and past.json_body["total"] == 25_000  # nothing says it stopped
    started = time.monotonic()
    entries, pages = list_all(source, tracks=False)
    ids = [e.asset_id for e in entries]
    assert len(ids) == 25_000 and len(set(ids)) == 25_000 and pages == 26
    assert ids[0] == "jwplayer/J0000000" and ids[-1] == "jwplayer/J0024999"  # oldest first, every one
    assert time.monotonic() - started < 30
    assert sim.stats()["source_reads"] == 2 + 26  # one request a page: each query read from its first page


def test_the_sdk_reads_the_library_media_and_text_tracks(library):
    sim, _ = library(library_captions_every=3)
    client = sdk(sim)
    got = client.Media.get(site_id=SITE, media_id=media(1)).json_body
    assert got["status"] == "ready" and got["metadata"]["title"] == "Library video 000001"
    tracks = list(client.Media.TextTrack.list(site_id=SITE, media_id=media(1)))  # every third from video 1
    assert [(t["metadata"]["srclang"], t["track_kind"], t["status"]) for t in tracks] == [
        ("en", "captions", "ready"),
        ("fr", "subtitles", "ready"),
        ("de", "captions", "draft"),  # its owner's, not published
    ]
    with pytest.raises(NotFoundError):
        client.Media.get(site_id=SITE, media_id="Jnothing")


def test_rows_carry_what_jw_holds_and_what_cannot_be_fetched_is_named_or_pending(library):
    _, source = library(library_unfetchable_every=5, library_captions_every=3)
    entries, pending, cursor = [], [], None
    while True:
        page = source.page(cursor)
        entries, pending, cursor = entries + page.entries, pending + page.pending, page.cursor
        if cursor is None:
            break
    reasons = {getattr(e, "reason", None) for e in entries} - {None}
    assert reasons == {
        "failed at the source (JW Player status failed: The source file could not be transcoded)",
        "not a video (JW Player media_type audio)",
    }
    assert {p.reason for p in pending} == {STILL_PROCESSING} and len(entries) + len(pending) == 60
    row = next(e for e in entries if e.asset_id == f"jwplayer/{media(1)}")
    assert (row.title, row.source_url, row.tags) == (
        "Library video 000001",
        f"jwplayer://{media(1)}",
        ("series-1", "library"),
    )
    assert row.created_at == "2020-01-01T00:01:00Z" and row.privacy == "public" and row.duration_s == 67.25
    assert row.metadata["external_id"] == "lib-1" and row.metadata["custom_params"] == {"series": "series-1"}
    assert [(t.language, t.kind, t.name) for t in row.tracks] == [
        ("en", "captions", "English"),
        ("fr", "subtitles", "Français"),
    ]
    # The draft is not carried (JW delivers it to no one: carried, a target would publish it), and the row says so.
    assert row.metadata["text_tracks_note"].startswith("1 draft text track(s) on JW Player, not published")
    plain = next(e for e in entries if e.asset_id == f"jwplayer/{media(2)}")  # no caption tracks: nothing to say
    assert plain.tracks == () and "text_tracks_note" not in plain.metadata


def test_a_draft_text_track_is_neither_delivered_nor_carried_and_the_note_counts_what_is_left(library, web):
    sim, source = library(library_captions_every=3)
    playlist = web.get(f"{sim.url}/_stream/jwplayer/v2/media/{media(1)}").json()["playlist"][0]
    assert [t["label"] for t in playlist["tracks"]] == ["English", "Français"]  # the published ones only
    assert web.get(f"{sim.url}/_stream/jwplayer/tracks/T0000012.vtt").status_code == 404  # the draft's file
    (row,) = source.video(media(1)).entries
    assert [t.language for t in row.tracks] == ["en", "fr"] and "1 draft" in row.metadata["text_tracks_note"]
    assert tracks_note(0, 0) is None
    assert tracks_note(2, 1) == (
        "2 draft text track(s) on JW Player, not published (delivered to no one): not carried; publish them at"
        " JW Player and list the media again to carry them; 1 text track(s) JW Player failed to make, or holds"
        " undelivered: not carried"
    )


def test_a_media_still_processing_waits_for_the_next_sweep_which_asks_for_it_by_id(library, tmp_path):
    sim, source = library(library_size=20, library_unfetchable_every=5)  # 9 is still processing
    marks = tmp_path / "marks.json"
    first = sweep(source, tmp_path / "all.jsonl", mark_path=marks, out=io.StringIO())
    assert first.pending == 1 and source.video(media(9)).pending[0].reason == STILL_PROCESSING
    sim.patch_config({"library_processing_done": True})
    delta = sweep(source, tmp_path / "delta.jsonl", mark_path=marks, since=read_mark(marks, "jwplayer") + 1)
    rows = [json.loads(line)["id"] for line in (tmp_path / "delta.jsonl").read_text().splitlines()]
    assert rows == [f"jwplayer/{media(9)}"] and delta.pending == 0 and source.video("Jmissing").entries == []


def test_a_text_track_still_processing_holds_its_media_pending(library):
    sim, source = library(library_size=6, library_captions_every=3, library_captions_processing=True)
    assert source.video(media(1)).pending[0].reason == CAPTIONS_PROCESSING
    assert source.video(media(1), tracks=False).entries[0].tracks == ()
    sim.patch_config({"library_captions_processing": False})
    assert [t.language for t in source.video(media(1)).entries[0].tracks] == ["en", "fr"]


def test_a_delta_walks_last_modified_from_the_mark(library):
    _, source = library()
    mark = 1_577_836_800 + 3600 + 55 * 60  # video 55's last change
    changed, pages = list_all(source, since=mark, tracks=False)
    assert [e.asset_id for e in changed] == [f"jwplayer/{media(i)}" for i in range(55, 60)] and pages == 1


def test_the_file_is_handed_from_the_delivery_api_and_a_target_can_fetch_it(library, web):
    sim, source = library()
    ready = source.resolve(parse_ref(f"jwplayer://{media(4)}"))
    assert ready.kind is ResolutionKind.READY and ready.privacy == "public"
    assert ready.url.startswith(f"{sim.url}/_stream/jwplayer/videos/{media(4)}-ynRk0MiN.mp4")  # the widest MP4
    assert web.get(ready.url, headers={"Range": "bytes=0-1023"}).status_code == 206


def test_a_library_of_one_real_video_says_its_true_duration_and_serves_its_bytes(library, web, tmp_path):
    """`media_file` (the aws target's local runs: MediaConvert really transcodes what it is handed): every file is
    that video, and the library says what it is (its duration, read with ffprobe), so the row a source lists agrees
    with what the target makes of it. Before, every media kept its made-up 30 to 630 s."""
    from infra.localrun_aws import SAMPLE_VIDEO_S, sample_video

    video = sample_video(tmp_path)
    sim, source = library(media_file=str(video))
    got = sdk(sim).Media.get(site_id=SITE, media_id=media(4)).json_body
    assert got["duration"] == SAMPLE_VIDEO_S
    ready = source.resolve(parse_ref(f"jwplayer://{media(4)}"))
    assert web.get(ready.url).content == video.read_bytes()


def test_a_property_with_url_signing_moves_only_with_its_secret_signed_just_before_the_create(library, web):
    sim, unsigned = library(signing_secret=PROPERTY_SECRET, library_captions_every=3)
    ref = parse_ref(f"jwplayer://{media(1)}")
    refused = unsigned.resolve(ref)
    assert refused.kind is ResolutionKind.UNFETCHABLE and refused.reason == SIGNING_NEEDED
    signed_source = build("jwplayer", lambda: SIGNED_CREDS, sim.url, patient=True, rate_per_s=0)
    ready = signed_source.resolve(ref)
    assert ready.kind is ResolutionKind.READY and ready.privacy == "signed"
    assert time.time() + 5 * 3600 < ready.expires_at <= time.time() + 6 * 3600
    assert web.get(ready.url).status_code == 200 and web.get(ready.url.split("?")[0]).status_code == 403
    # The token the request carried: HS256 with the property's secret, its resource the Delivery API path.
    delivery = [r for r in sim.requests_log(ops=None) if r["op"] == "get"]
    assert delivery  # the management read came first (status and window), then the delivery request
    token = pyjwt.encode({"resource": f"/v2/media/{media(1)}", "exp": int(time.time()) + 60}, PROPERTY_SECRET)
    served = web.get(f"{sim.url}/_stream/jwplayer/v2/media/{media(1)}", params={"token": token})
    assert served.status_code == 200 and "exp=" in served.json()["playlist"][0]["sources"][1]["file"]
    wrong = pyjwt.encode({"resource": f"/v2/media/{media(3)}", "exp": int(time.time()) + 60}, PROPERTY_SECRET)
    assert web.get(f"{sim.url}/_stream/jwplayer/v2/media/{media(1)}", params={"token": wrong}).status_code == 403
    (row,) = signed_source.video(media(1)).entries
    assert row.privacy == "signed"
    track = signed_source.resolve(parse_ref(row.tracks[0].url))
    assert web.get(track.url).text.startswith("WEBVTT") and web.get(track.url.split("?")[0]).status_code == 403


def test_a_media_outside_its_publish_window_is_private_and_moves_only_with_the_propertys_secret(library):
    sim, source = library(library_private_every=4)  # video 4's window closed a day after its creation
    (row,) = source.video(media(4)).entries
    assert row.privacy == "private"
    assert source.resolve(parse_ref(f"jwplayer://{media(4)}")).reason == NOT_DELIVERED
    sim.patch_config({"signing_secret": PROPERTY_SECRET})  # a property whose secret the migration holds
    signed = build("jwplayer", lambda: SIGNED_CREDS, sim.url, patient=True, rate_per_s=0)
    ready = signed.resolve(parse_ref(f"jwplayer://{media(4)}"))
    assert ready.kind is ResolutionKind.READY and ready.privacy == "private"  # never wider than JW's


def test_sixty_requests_a_minute_are_kept_to_and_a_429_is_waited_out(library):
    sim, _ = library(library_size=30, budget_quota=4, budget_window_s=1.0, budget_block_s=0.0)
    with pytest.raises(TooManyRequestsError):
        client = sdk(sim)
        for _ in range(5):
            client.Media.list(site_id=SITE, query_params={"page_length": 1})
    slept: list[float] = []
    source = build(
        "jwplayer", lambda: CREDS, sim.url, patient=True, rate_per_s=0, sleep=lambda s: (slept.append(s), time.sleep(s))
    )
    source.lockout_s = 1.0  # JW's minute, shrunk to the test's window
    entries = [source.video(media(i)).entries[0] for i in range(8)]
    assert len(entries) == 8 and source.throttled >= 1 and 0 < max(slept) <= 1.2  # waited, never past the lock-out
    assert build("jwplayer", lambda: CREDS, sim.url, patient=True).interval_s == 1.0  # paced at 60 a minute


def test_a_paced_lambda_listing_keeps_the_documented_rate_and_ends_on_a_429_rather_than_wait(library):
    from migrator.sources.base import SourceThrottled

    sim, _ = library(library_size=30, budget_quota=6, budget_window_s=60.0, budget_block_s=60.0)
    slept: list[float] = []
    clock = [1000.0]

    def sleep(seconds: float) -> None:  # the paced wait, on a clock of the test's own
        slept.append(seconds)
        clock[0] += seconds

    paced = build("jwplayer", lambda: CREDS, sim.url, paced=True, sleep=sleep, clock=lambda: clock[0])
    with pytest.raises(SourceThrottled):  # the quota spent: said at once, never waited (the next run resumes)
        for i in range(30):
            paced.video(media(i))
    assert paced.requests == 7 and paced.patient is False
    assert slept == [1.0] * 6  # JW's 60 a minute between the seven requests; no wait for the 429
    unpaced = build("jwplayer", lambda: CREDS, sim.url, sleep=sleep)  # the uploader's resolves: unpaced
    assert unpaced.paced is False
