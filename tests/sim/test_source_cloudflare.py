"""Cloudflare Stream as a source: the "cloudflare" simulator's library side driven by cloudflare 5.9.0 (its
pydantic models: `stream.list`, `stream.get`, `stream.downloads.create/get`, `stream.token.create`,
`stream.captions.get`, `stream.captions.language.vtt.get`) and by migrator.sources.cloudflare, which lists
oldest first by creation time, moves signed videos with a downloadable token, keeps what is still processing
pending, and waits while Stream makes the MP4."""

from __future__ import annotations

import io
import json
import time

import cloudflare
import pytest
from migrator.messages import AssetMessage
from migrator.sources import ResolutionKind, Unfetchable, build, parse_ref
from migrator.sources import cloudflare as cf_source
from migrator.trackfetch import MAX_TRACK_BYTES
from migrator_cli.sweep import read_mark, sweep

from infra.sim.library import EPOCH, STEP_S
from infra.sim.platforms import cloudflare as cf_sim
from infra.sim.video import READY
from tests.sim.support import wait_for

TOKEN, ACCOUNT = "cf-src-token", "0123456789abcdef0123456789abcdef"


@pytest.fixture
def library(launch):
    def start(**config):
        sim = launch(
            "cloudflare", token=TOKEN, account_id=ACCOUNT, **{"library_size": 2300, "prepare_s": 0.4, **config}
        )
        creds = {"account_id": ACCOUNT, "api_token": TOKEN}
        return sim, build("cloudflare", lambda: creds, sim.url, patient=True, rate_per_s=0)

    return start


@pytest.fixture
def sdk(library):
    clients = []

    def start(**config):
        sim, source = library(**config)
        client = cloudflare.Cloudflare(api_token=TOKEN, base_url=sim.url, max_retries=0)
        clients.append(client)
        return sim, source, client

    yield start
    for client in clients:
        client.close()


def uid(index: int) -> str:
    return f"cf{index:030d}"


def ready_download(source, index: int):
    """Resolve video `index` until Stream's MP4 is ready: (the first answer, the ready one)."""
    ref = parse_ref(f"cloudflare://{uid(index)}")
    first = source.resolve(ref)
    deadline = time.monotonic() + 5
    while True:
        ready = source.resolve(ref)
        if ready.kind is not ResolutionKind.PREPARING or time.monotonic() > deadline:
            return first, ready
        time.sleep(0.1)


def test_the_sdk_lists_downloads_and_reads_captions(sdk, web):
    sim, _, client = sdk(library_size=12, library_captions_every=3)
    listed = list(client.stream.list(account_id=ACCOUNT, asc=True, limit=5))
    assert [v.uid for v in listed] == [uid(i) for i in range(5)] and listed[0].meta["name"] == "Library video 000000"
    assert listed[0].status.state == "ready" and listed[0].thumbnail_timestamp_pct == 0.25
    created = client.stream.downloads.create(identifier=uid(1), account_id=ACCOUNT)
    assert created.default.status == "inprogress"
    time.sleep(0.5)
    ready = client.stream.downloads.get(identifier=uid(1), account_id=ACCOUNT)
    # download-videos: "https://customer-<CODE>.cloudflarestream.com/<VIDEO_UID>/downloads/default.mp4"
    assert ready.default.status == "ready"
    assert ready.default.url == f"{sim.url}/_stream/{uid(1)}/downloads/default.mp4?duration=67.25"  # the sim's knob
    assert web.head(ready.default.url).status_code == 200
    assert web.get(ready.default.url, headers={"Range": "bytes=0-9"}).status_code == 206
    captions = list(client.stream.captions.get(identifier=uid(1), account_id=ACCOUNT))  # every third from video 1
    assert [(c.language, c.label, c.status) for c in captions] == [
        ("en", "English", "ready"),
        ("fr", "Français", "ready"),
    ]
    vtt = client.stream.captions.language.vtt.get("fr", account_id=ACCOUNT, identifier=uid(1))
    assert vtt.startswith("WEBVTT")


def test_the_library_is_listed_a_thousand_at_a_time_with_the_count_left(library):
    _sim, source = library(library_private_every=50)
    first = source.page(None, tracks=False)
    assert len(first.entries) == 1000 and first.remaining == 1300 and first.cursor
    second = source.page(first.cursor, tracks=False)
    third = source.page(second.cursor, tracks=False)
    # Each page after the first starts a second before the last one's video, which is read again and dropped.
    assert third.cursor is None and len(second.entries) == 999 and len(third.entries) == 301
    everything = first.entries + second.entries + third.entries
    assert len({e.asset_id for e in everything}) == 2300 and all(isinstance(e, AssetMessage) for e in everything)
    video = everything[1]
    assert video.title == "Library video 000001" and video.duration_s == 67.25 and video.size_bytes == 1_007_919
    assert video.poster_time_s == 16.812 and video.privacy == "public"  # a quarter in, as thumbnailTimestampPct says
    # Every fiftieth is private: signed only, or limited to one site's embeds; none is public, none is left behind.
    assert [e.asset_id for e in everything if e.privacy == "signed"] == [
        f"cloudflare/{uid(i)}" for i in range(0, 2300, 50)
    ]


def test_a_signed_video_moves_with_a_downloadable_token_in_place_of_its_uid(sdk, web):
    """securing-your-stream / download-videos: with requireSignedURLs the MP4 is served only with a token made
    `downloadable`; the row says signed and the resolve hands the target the token's URL."""
    sim, source, client = sdk(library_size=10, library_private_every=4, prepare_s=0.2)
    # Private every fourth from 0: 0 and 8 require signed URLs, 4 is limited to one site's embeds.
    signed = client.stream.get(identifier=uid(8), account_id=ACCOUNT)
    assert signed.require_signed_urls is True and signed.allowed_origins == []
    [row] = [e for e in source.page(None, tracks=False).entries if e.asset_id == f"cloudflare/{uid(8)}"]
    assert isinstance(row, AssetMessage) and row.privacy == "signed" and "privacy_note" not in row.metadata

    first, ready = ready_download(source, 8)
    assert first.kind is ResolutionKind.PREPARING and ready.kind is ResolutionKind.READY
    assert ready.privacy == "signed" and uid(8) not in ready.url and "/downloads/default.mp4?duration=" in ready.url
    assert ready.expires_at == pytest.approx(time.time() + cf_source.DOWNLOAD_TOKEN_TTL_S, abs=60)
    plain = f"{sim.url}/_stream/{uid(8)}/downloads/default.mp4"
    before = sim.stats()
    assert web.head(plain).status_code == 403 and web.get(plain).status_code == 403  # its uid serves nothing
    assert web.head(ready.url).status_code == 200
    assert web.get(ready.url, headers={"Range": "bytes=0-9"}).status_code == 206
    after = sim.stats()
    assert (after["media_refused"] - before["media_refused"], after["media_served"] - before["media_served"]) == (2, 2)


def test_the_sdk_mints_tokens_a_signed_download_refuses_unless_downloadable_and_unexpired(sdk, web):
    sim, _, client = sdk(library_size=10, library_private_every=4, prepare_s=0)
    client.stream.downloads.create(identifier=uid(8), account_id=ACCOUNT)  # video 8 requires signed URLs
    watch = client.stream.token.create(uid(8), account_id=ACCOUNT)  # no body: an hour, not downloadable
    short = client.stream.token.create(uid(8), account_id=ACCOUNT, downloadable=True, exp=int(time.time()) + 2)
    for bad_exp in (int(time.time()) + 25 * 3600, int(time.time()) - 5):  # at most 24 h ahead
        with pytest.raises(cloudflare.BadRequestError):
            client.stream.token.create(uid(8), account_id=ACCOUNT, exp=bad_exp)
    with pytest.raises(cloudflare.NotFoundError):
        client.stream.token.create(uid(99), account_id=ACCOUNT)

    def at(token: str) -> int:
        return web.get(f"{sim.url}/_stream/{token}/downloads/default.mp4").status_code

    forged = short.token[:-4] + ("AAAA" if not short.token.endswith("AAAA") else "BBBB")
    assert (at(watch.token), at(short.token), at(forged)) == (403, 200, 403)
    time.sleep(3.1)
    assert at(short.token) == 403  # expired
    unsigned = client.stream.token.create(uid(1), account_id=ACCOUNT, downloadable=True)
    client.stream.downloads.create(identifier=uid(1), account_id=ACCOUNT)
    assert at(unsigned.token) == 200 and at(uid(1)) == 200  # a public video's MP4 is public, and takes a token too
    assert sim.stats()["media_refused"] == 3


def test_a_video_limited_to_some_sites_is_never_listed_public_and_says_what_was_not_kept(sdk, web):
    """securing-your-stream, "Hotlinking Protection": allowedOrigins limits where a video plays; the row is
    signed (never public) with the origins and a note in its metadata, and its MP4 needs no token."""
    _sim, source, client = sdk(library_size=10, library_private_every=4, prepare_s=0)
    held = client.stream.get(identifier=uid(4), account_id=ACCOUNT)  # private video 4 is limited to a site
    assert held.allowed_origins == [cf_sim.LIBRARY_ORIGIN] and held.require_signed_urls is False
    [row] = [e for e in source.page(None, tracks=False).entries if e.asset_id == f"cloudflare/{uid(4)}"]
    assert row.privacy == "signed" and row.metadata["allowed_origins"] == [cf_sim.LIBRARY_ORIGIN]
    assert "no target keeps that list" in row.metadata["privacy_note"]
    _, ready = ready_download(source, 4)
    assert ready.kind is ResolutionKind.READY and ready.privacy == "signed" and uid(4) in ready.url
    assert web.get(ready.url).status_code == 200


def test_the_resolve_says_the_privacy_the_video_has_then(library, web):
    sim, source = library(library_size=10, prepare_s=0)
    [row] = [e for e in source.page(None, tracks=False).entries if e.asset_id == f"cloudflare/{uid(6)}"]
    assert row.privacy == "public"
    sim.change_library(delete=[], make_private=[6])  # made private after the inventory (6 // 1 is even: signed)
    _, ready = ready_download(source, 6)
    assert ready.privacy == "signed" and uid(6) not in ready.url and web.get(ready.url).status_code == 200
    sim.change_library(delete=[6], make_private=[])
    gone = source.resolve(parse_ref(f"cloudflare://{uid(6)}"))
    assert gone.kind is ResolutionKind.UNFETCHABLE and gone.reason.startswith("not found at the source")


def test_a_video_still_processing_is_pending_and_asked_for_by_uid_once_ready(sdk):
    """Stream lists by creation time only: a video in progress goes to page.pending, and `video(uid)` (GET the
    video) answers it once ready; one whose encoding failed is unfetchable with its reason."""
    sim, source, client = sdk(library_size=30, library_unfetchable_every=10)
    assert client.stream.get(identifier=uid(9), account_id=ACCOUNT).status.state == "inprogress"  # faults in turn
    page = source.page(None, tracks=False)
    assert [(p.asset_id, p.reason) for p in page.pending] == [
        (f"cloudflare/{uid(9)}", cf_source.STILL_PROCESSING.format(state="inprogress")),
        (f"cloudflare/{uid(29)}", cf_source.STILL_PROCESSING.format(state="inprogress")),
    ]
    [failed] = [e for e in page.entries if isinstance(e, Unfetchable)]
    assert (failed.asset_id, failed.reason) == (
        f"cloudflare/{uid(19)}",
        "failed at the source (Stream state error, ERR_MALFORMED_VIDEO)",
    )
    assert len(page.entries) == 28 and source.video(uid(9)).pending  # still in progress
    sim.patch_config({"library_processing_done": True})
    assert client.stream.get(identifier=uid(9), account_id=ACCOUNT).status.state == "ready"
    [now_ready] = source.video(uid(9)).entries
    assert isinstance(now_ready, AssetMessage) and now_ready.asset_id == f"cloudflare/{uid(9)}"
    assert isinstance(source.video(uid(19)).entries[0], Unfetchable)
    sim.change_library(delete=[9], make_private=[])
    assert source.video(uid(9)) == type(page)()  # gone: an empty page


def test_a_caption_still_being_generated_keeps_its_video_pending(sdk):
    sim, source, client = sdk(library_size=10, library_captions_every=3, library_captions_processing=True)
    [caption, _] = client.stream.captions.get(identifier=uid(1), account_id=ACCOUNT)
    assert (caption.status, caption.generated) == ("inprogress", True)
    page = source.page(None)
    assert [p.asset_id for p in page.pending] == [f"cloudflare/{uid(i)}" for i in (1, 4, 7)]
    assert page.pending[0].reason == cf_source.CAPTION_PROCESSING.format(language="en")
    sim.patch_config({"library_captions_processing": False})
    [row] = source.video(uid(4)).entries
    assert [t.url for t in row.tracks] == [f"cloudflare://{uid(4)}/captions/en", f"cloudflare://{uid(4)}/captions/fr"]


def test_a_delta_sweep_misses_nothing_the_last_one_saw_still_processing(library, tmp_path):
    sim, source = library(library_size=40, library_unfetchable_every=10, library_captions_every=7)
    marks = tmp_path / "marks.json"
    sim.patch_config({"library_captions_processing": True})
    first = sweep(source, tmp_path / "all.jsonl", mark_path=marks, out=io.StringIO())
    listed = [json.loads(line)["id"] for line in (tmp_path / "all.jsonl").read_text().splitlines()]
    # Still encoding: 9 and 29 (19 and 39 failed); captions being generated: every seventh from 1.
    waiting = {f"cloudflare/{uid(i)}" for i in (9, 29, 1, 8, 15, 22, 36)}
    assert first.pending == len(waiting) and not waiting & set(listed)
    sim.patch_config({"library_processing_done": True, "library_captions_processing": False})
    since = read_mark(marks, "cloudflare")
    delta = sweep(source, tmp_path / "delta.jsonl", mark_path=marks, since=since, out=io.StringIO())
    again = {json.loads(line)["id"] for line in (tmp_path / "delta.jsonl").read_text().splitlines()}
    assert waiting <= again and delta.pending == 0


def test_resolve_asks_for_the_mp4_waits_while_it_is_made_then_hands_it(library, web):
    sim, source = library(library_size=10, prepare_s=0.3)
    first = source.resolve(parse_ref(f"cloudflare://{uid(4)}"))
    assert first.kind is ResolutionKind.PREPARING and first.reason.startswith("Stream is preparing the MP4 download")
    assert sim.stats()["prepares_asked"] == 1
    time.sleep(0.4)
    ready = source.resolve(parse_ref(f"cloudflare://{uid(4)}"))
    assert ready.kind is ResolutionKind.READY and sim.stats()["prepares_asked"] == 1  # asked for once
    assert ready.privacy == "public"
    assert (
        web.head(ready.url).status_code == 200 and web.get(ready.url, headers={"Range": "bytes=0-9"}).status_code == 206
    )


def test_a_download_that_never_finishes_stays_preparing(library, web):
    _sim, source = library(library_size=10, library_stuck_every=5, prepare_s=0.1)
    ref = parse_ref(f"cloudflare://{uid(2)}")  # every fifth from video 2 is stuck
    source.resolve(ref)
    time.sleep(0.2)
    still = source.resolve(ref)
    assert still.kind is ResolutionKind.PREPARING and "50% done" in still.reason
    assert web.get(f"{_sim.url}/_stream/{uid(2)}/downloads/default.mp4").status_code == 404  # not made yet


def test_captions_are_listed_and_resolve_to_their_text(library):
    _sim, source = library(library_size=10, library_captions_every=3)
    entries = source.page(None).entries
    captioned = [e for e in entries if e.tracks]
    assert [e.asset_id for e in captioned] == [f"cloudflare/{uid(i)}" for i in (1, 4, 7)]
    assert captioned[0].tracks[0].url == f"cloudflare://{uid(1)}/captions/en"
    text = source.resolve(parse_ref(f"cloudflare://{uid(1)}/captions/fr"))
    assert text.kind is ResolutionKind.READY and text.text.startswith("WEBVTT") and text.text_format == "vtt"


def test_a_caption_is_read_up_to_the_caption_cap_and_refused_past_it(sdk, monkeypatch):
    """Stream serves a caption's text through its API; the stack takes at most MAX_TRACK_BYTES of it, as the
    tracks worker's guarded fetch does, and says why it refused a larger one."""
    _sim, source, client = sdk(library_size=10, library_captions_every=3)
    size = {"en": MAX_TRACK_BYTES + 1, "fr": MAX_TRACK_BYTES}

    def caption(video, language):
        head = f"WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nVideo {video.index}\n\nNOTE "
        return head + "x" * (size[language] - len(head))

    monkeypatch.setattr(cf_sim, "library_caption", caption)
    served = client.stream.captions.language.vtt.get("en", account_id=ACCOUNT, identifier=uid(1))
    assert len(served.encode()) == MAX_TRACK_BYTES + 1  # the simulator serves it whole
    big = source.resolve(parse_ref(f"cloudflare://{uid(1)}/captions/en"))
    assert big.kind is ResolutionKind.UNFETCHABLE
    assert big.reason == f"the track file is {MAX_TRACK_BYTES + 1:,} bytes, over the {MAX_TRACK_BYTES:,} allowed"
    at_cap = source.resolve(parse_ref(f"cloudflare://{uid(1)}/captions/fr"))
    assert at_cap.kind is ResolutionKind.READY and len(at_cap.text.encode()) == MAX_TRACK_BYTES


def test_a_delta_sweep_lists_what_was_created_from_the_mark_on(library):
    _sim, source = library(library_size=50)
    page = source.page(None, since=EPOCH + 44 * STEP_S, tracks=False)
    # Re-read from a second before the mark: the video created at the mark itself is listed again.
    assert [e.asset_id for e in page.entries] == [f"cloudflare/{uid(i)}" for i in range(44, 50)]


# --- `after=` is exclusive: pages re-read their boundary (videos made on the target side, times set alike) ----


@pytest.fixture
def shared_instants(launch, monkeypatch):
    """start(groups) -> (sim, source, uids): a Stream account holding one video per entry of `groups`, each
    created at EPOCH + 10 s x its group (so videos of one group share an instant), listed 3 to a page."""
    monkeypatch.setattr(cf_source, "PAGE_SIZE", 3)

    def start(groups: list[int]):
        sim = launch("cloudflare", token=TOKEN, account_id=ACCOUNT, processing_delay_s=0.0)
        client = cloudflare.Cloudflare(api_token=TOKEN, base_url=sim.url, max_retries=0)
        uids = [client.stream.copy.create(account_id=ACCOUNT, input=f"https://m.example/{n}.mp4").uid for n in groups]
        client.close()
        with sim._lock:
            for video_uid, group in zip(uids, groups, strict=True):
                sim._store.videos[video_uid].created = EPOCH + 10 * group
        assert wait_for(lambda: all(sim._store.videos[u].state == READY for u in uids), timeout=5)
        creds = {"account_id": ACCOUNT, "api_token": TOKEN}
        return sim, build("cloudflare", lambda: creds, sim.url, patient=True, rate_per_s=0), uids

    return start


def listed(source) -> list[str]:
    ids, cursor = [], None
    for _ in range(20):
        page = source.page(cursor, tracks=False)
        ids += [e.asset_id.removeprefix("cloudflare/") for e in page.entries]
        if page.cursor is None:
            return ids
        assert page.cursor != cursor
        cursor = page.cursor
    raise AssertionError("the listing never ended")


def test_videos_that_share_the_last_instant_of_a_page_are_listed_once_each(shared_instants):
    _sim, source, uids = shared_instants([0, 1, 2, 2, 3, 4, 5])  # the first page ends inside group 2
    assert listed(source) == uids


def test_a_page_wholly_inside_one_second_still_goes_on(shared_instants):
    _sim, source, uids = shared_instants([0, 1, 1, 1, 1, 2])
    ids = listed(source)
    assert ids[:3] == uids[:3] and ids[-1] == uids[-1] and len(ids) == len(set(ids))


def test_a_target_ingests_the_signed_download_it_is_handed_and_fails_the_plain_one(library, launch, web):
    """Source and target as two simulators: Mux (check_source) fetches what the resolve handed it over loopback,
    reads back the library's true duration, and fails the ingest of the signed video's plain uid URL."""
    _sim, source = library(library_size=10, library_private_every=4, prepare_s=0)
    target = launch("mux", check_source=True, processing_delay_s=0.1)
    _, ready = ready_download(source, 8)  # requires signed URLs
    plain = ready.url.replace(ready.url.split("/")[-3], uid(8))

    def create(url: str) -> str:
        body = {"inputs": [{"url": url}], "playback_policies": ["signed"], "passthrough": url[-12:]}
        return web.post(f"{target.url}/video/v1/assets", json=body).json()["data"]["id"]

    def status(asset: str) -> dict:
        return web.get(f"{target.url}/video/v1/assets/{asset}").json()["data"]

    signed, refused = create(ready.url), create(plain)
    assert wait_for(lambda: {status(signed)["status"], status(refused)["status"]} == {"ready", "errored"}, timeout=5)
    assert status(signed)["status"] == "ready" and status(signed)["duration"] == 30 + (8 * 37) % 600 + 0.25
    assert target.stats()["source_checks_failed"] == 1
