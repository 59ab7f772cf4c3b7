"""Vimeo as a target: our adapter (migrator.providers.vimeo) against the "vimeo" simulator profile, each
documented behaviour and pitfall read back from what the simulator holds at the end: one video per asset
despite lost answers and a search that does not show a new video yet, every field and the privacy in its
place (never public by accident, Basic's plan limit), the quota said and not retried, the lock-out waited
as a minute, text tracks made in two steps (and a half-made one made again), the audit's listing and
doctor's check."""

from __future__ import annotations

import time

import pytest
from migrator.captions import read_caption
from migrator.fate import OutcomeKind
from migrator.messages import AssetMessage, Track
from migrator.providers import AssetRef
from migrator.providers.facts import TrackUpload
from migrator.providers.vimeo import LOCKOUT_S, VimeoProvider, ref_line
from migrator.states import State
from migrator.tracks import TrackResult

from infra.accounts import account
from tests.sim.support import wait_for
from tests.track_files import SRT, VTT


@pytest.fixture
def vimeo(launch):
    def start(**config):
        acct = account("vimeo")
        sim = launch("vimeo", **acct.sim, **{"processing_delay_s": 0.2, **config})
        return sim, VimeoProvider(sim.url, lambda: acct.credentials)

    return start


def row(asset_id: str, **fields) -> AssetRef:
    message = AssetMessage(asset_id, "https://media.example.com/a.mp4", title=f"Title of {asset_id}", **fields)
    return AssetRef(asset_id, title=message.title, details=message)


def held(sim) -> dict:
    """{our asset id: [video request, ...]}, every video the simulator holds, by the reference it read."""
    with sim._lock:
        out: dict = {}
        for video in sim._store.videos.values():
            out.setdefault(video.ref, []).append(video)
        return out


def migrate(client, asset: AssetRef, source: str, created_after: float) -> str:
    """What the uploader does with a create whose answer may be lost: look first on a retry, create if not found."""
    outcome = client.create(asset, source)
    while outcome.kind is not OutcomeKind.CREATED:
        assert outcome.kind is OutcomeKind.TRANSIENT, outcome
        found = client.find(asset.asset_id, created_after)
        outcome = found if found.kind is OutcomeKind.CREATED else client.create(asset, source)
    return outcome.remote_id


def test_a_batch_is_made_once_despite_lost_answers_and_a_search_that_lags(vimeo):
    sim, client = vimeo(lose_rate=0.5, seed=3, search_lag_s=30)  # the search never shows them in time
    start = time.time()
    ids = [f"lib/{n}" for n in range(12)]
    made = {i: migrate(client, row(i), f"https://media.example.com/{n}.mp4", start) for n, i in enumerate(ids)}
    assert sim.stats()["lost_responses"] > 0, "no answer was lost: the test would prove nothing"
    videos = held(sim)
    assert {i: [v.id for v in videos[i]] for i in ids} == {i: [made[i]] for i in ids}
    assert sim.stats()["duplicate_videos"] == 0 and sim.stats()["videos"] == len(ids)
    refs = [r["ref"] for r in sim.requests_log(ops=["list"])]
    assert any(ref and ref.startswith("vm") for ref in refs) and None in refs  # searched, then scanned


def test_find_uses_the_search_once_it_shows_the_video(vimeo):
    sim, client = vimeo()
    made = client.create(row("lib/searched"), "https://media.example.com/s.mp4")
    found = client.find("lib/searched", None)
    assert (found.kind, found.remote_id) == (OutcomeKind.CREATED, made.remote_id)
    lists = sim.requests_log(ops=["list"])
    assert len(lists) == 1 and lists[0]["ref"].startswith("vm")  # one search, by the tag
    assert client.find("lib/never-made", None).kind is OutcomeKind.NOT_FOUND


def test_every_field_and_the_privacy_are_held_in_their_place_never_public_by_accident(vimeo):
    sim, client = vimeo()
    cases = {
        "lib/public": ("public", "anybody"),
        "lib/unlisted": ("unlisted", "unlisted"),
        "lib/private": ("private", "nobody"),
        "lib/signed": ("signed", "nobody"),
        "lib/default": (None, "nobody"),  # DefaultPlayback signed
    }
    for asset_id, (privacy, _view) in cases.items():
        outcome = client.create(
            row(asset_id, privacy=privacy, description="Line one.\nLine two."), "https://m.example/a.mp4"
        )
        assert outcome.kind is OutcomeKind.CREATED
    videos = held(sim)
    for asset_id, (_privacy, view) in cases.items():
        [video] = videos[asset_id]
        assert video.request["name"] == f"Title of {asset_id}"
        assert video.request["description"] == f"Line one.\nLine two.\n\n{ref_line(asset_id)}"
        assert video.request["privacy"] == {"view": view}, asset_id
        assert video.request["upload"] == {"approach": "pull", "link": "https://m.example/a.mp4"}


def test_on_a_basic_plan_an_unlisted_row_is_held_as_nobody_with_a_note(vimeo):
    sim, client = vimeo(plan="basic")
    outcome = client.create(row("lib/unlisted", privacy="unlisted"), "https://m.example/a.mp4")
    assert outcome.kind is OutcomeKind.CREATED
    assert any("Vimeo Basic cannot set unlisted" in note for note in outcome.notes)
    [video] = held(sim)["lib/unlisted"]
    assert video.request["privacy"] == {"view": "nobody"}
    assert client.poll("lib/unlisted", outcome.remote_id).video.privacy == "signed"


def test_poll_settles_ready_with_duration_and_playback_and_says_why_a_video_failed(vimeo):
    _sim, client = vimeo()
    ready = client.create(row("lib/ok", privacy="public"), "https://m.example/a.mp4?duration=61.4").remote_id
    corrupt = client.create(row("lib/bad"), "https://m.example/corrupt.mp4").remote_id
    over = client.create(row("lib/over"), "https://m.example/a.mp4?vimeo=quota_exceeded").remote_id
    assert wait_for(lambda: all(client.poll("x", i).video.target for i in (ready, corrupt, over)), timeout=5)
    video = client.poll("lib/ok", ready).video
    assert (video.target, video.duration_s, video.ref, video.privacy) == (State.READY, 61.0, "lib/ok", "public")
    assert video.playback["policy"] == "public" and video.playback["embed"].endswith("/embed")
    assert (video.playback["width"], video.playback["height"]) == (1920, 1080)
    assert (
        client.poll("lib/bad", corrupt).video.error == "provider: Vimeo could not ingest the source (transcoding_error)"
    )
    quota = client.poll("lib/over", over).video
    assert quota.target is State.REJECTED and "quota_exceeded" in quota.error
    assert client.poll("lib/gone", "1234567890").http_status == 404


def test_the_accounts_storage_is_a_rejection_with_its_reason(vimeo):
    sim, client = vimeo(storage_minutes=1.0)
    assert client.create(row("lib/1"), "https://m.example/a.mp4?duration=90").kind is OutcomeKind.CREATED
    refused = client.create(row("lib/2"), "https://m.example/b.mp4")
    assert refused.kind is OutcomeKind.REJECTED and "error 4101" in refused.error
    assert sim.stats()["videos"] == 1


@pytest.mark.parametrize("rate_headers", [False, True])
def test_the_lockout_is_waited_until_its_reset_at_most_a_minute(vimeo, rate_headers):
    """Past the minute's budget the 429 names no time of its own: a minute, or the X-RateLimit-Reset that every
    answer carries when the account sends the headers (the window's end, within the minute)."""
    sim, client = vimeo(budget_quota=1, rate_headers=rate_headers)
    assert client.create(row("lib/1"), "https://m.example/a.mp4").kind is OutcomeKind.CREATED
    throttled = client.create(row("lib/2"), "https://m.example/b.mp4")
    assert throttled.kind is OutcomeKind.THROTTLED
    if rate_headers:
        assert 1.0 <= throttled.retry_after <= LOCKOUT_S
        assert throttled.retry_after == pytest.approx(throttled.signal.reset_after, abs=1.0)
    else:
        assert throttled.retry_after == LOCKOUT_S
    assert sim.stats()["videos"] == 1 and sim.stats()["budget_throttled"] == 1


def test_the_audit_lists_every_video_and_doctor_reads_the_account(vimeo):
    _sim, client = vimeo()
    ids = {client.create(row(f"lib/{n}"), "https://m.example/a.mp4").remote_id for n in range(105)}
    listed = list(client.videos())
    assert {v.remote_id for v in listed} == ids and {v.ref for v in listed} == {f"lib/{n}" for n in range(105)}
    checked = client.check()
    assert checked.status == 200 and checked.body["account"] == "pro"


# --- caption tracks --------------------------------------------------------------------------------

TRACK = Track("https://captions.example.com/en.srt", "en", "captions", "English")


def upload(content=SRT) -> TrackUpload:
    return TrackUpload(read_caption(content), TRACK.url)


def tracks_of(sim, video_id: str) -> list[tuple[str, str, bool, bytes | None]]:
    """(name, status, active, content) of each text track the video holds."""
    with sim._lock:
        video = sim._store.videos[video_id]
        kept = video.extra.get("texttracks", {})
        return [(t.name, t.status, kept[t.id]["active"], t.content) for t in video.texts]


def attach_as_the_worker_does(client, remote_id: str, track: Track, label: str) -> TrackResult:
    """The tracks worker's passes: look (after the first try), attach, until the track is settled."""
    for attempt in range(1, 8):
        if attempt > 1:
            listed = client.track_list(remote_id)
            if any(client.track_matches(t, track, "") for t in listed.tracks):
                return TrackResult.ATTACHED
        outcome = client.attach_track(remote_id, track, upload(), label)
        if outcome.kind is not TrackResult.TRANSIENT:
            return outcome.kind
    raise AssertionError("never settled")


def test_a_track_is_made_its_file_put_and_it_is_made_active(vimeo):
    sim, client = vimeo()
    remote_id = client.create(row("lib/t"), "https://m.example/a.mp4").remote_id
    outcome = client.attach_track(remote_id, TRACK, upload(), "English")
    assert outcome.kind is TrackResult.ATTACHED
    [(name, status, active, content)] = tracks_of(sim, remote_id)
    assert (name, status, active) == ("English", "ready", True)
    assert content.startswith(b"WEBVTT")  # SRT sent as WebVTT
    listed = client.track_list(remote_id)
    assert [t.remote_id for t in listed.tracks] == [outcome.remote_track_id]


def test_lost_track_answers_leave_one_active_track_with_its_file_and_nothing_half_made(vimeo):
    sim, client = vimeo(track_lose_rate=0.5, seed=5)
    remote_ids = [client.create(row(f"lib/t{n}"), "https://m.example/a.mp4").remote_id for n in range(6)]
    for remote_id in remote_ids:
        assert attach_as_the_worker_does(client, remote_id, TRACK, "English") is TrackResult.ATTACHED
    assert sim.stats()["lost_track_responses"] > 0, "no answer was lost: the test would prove nothing"
    for remote_id in remote_ids:
        [(name, status, active, content)] = tracks_of(sim, remote_id)
        assert (name, status, active) == ("English", "ready", True) and content


def test_an_expired_link_is_never_used_and_the_retry_makes_the_track_again(vimeo):
    sim, client = vimeo(link_ttl_s=10.0)  # within the adapter's margin: as good as expired
    remote_id = client.create(row("lib/late"), "https://m.example/a.mp4").remote_id
    first = client.attach_track(remote_id, TRACK, upload(), "English")
    assert first.kind is TrackResult.TRANSIENT and "expired" in first.error
    assert tracks_of(sim, remote_id) == [("English", "created", False, None)]  # half made
    sim.patch_config({"link_ttl_s": 0})
    assert client.attach_track(remote_id, TRACK, upload(VTT), "English").kind is TrackResult.ATTACHED
    assert [t[:3] for t in tracks_of(sim, remote_id)] == [("English", "ready", True)]


def test_a_second_track_of_a_language_and_type_is_refused_with_its_reason(vimeo):
    sim, client = vimeo()
    remote_id = client.create(row("lib/two"), "https://m.example/a.mp4").remote_id
    assert client.attach_track(remote_id, TRACK, upload(), "English").kind is TrackResult.ATTACHED
    sdh = Track("https://captions.example.com/sdh.srt", "en", "captions", "English SDH")
    refused = client.attach_track(remote_id, sdh, upload(), "English SDH")
    assert refused.kind is TrackResult.REFUSED and "one active text track" in refused.error
    french = Track("https://captions.example.com/fr.srt", "fr", "subtitles", "Français")
    assert client.attach_track(remote_id, french, upload(), "Français").kind is TrackResult.ATTACHED
    assert [(t[0], t[2]) for t in tracks_of(sim, remote_id)] == [("English", True), ("Français", True)]


def test_verify_checks_public_and_private_videos_through_a_fresh_play_link(vimeo):
    """Vimeo's HLS link (`play.hls.link`) expires within hours, so the ledger keeps none: verify asks the video for
    a fresh one, public or private, and checks its manifest; the private video's page refuses anyone else."""
    import requests
    from migrator_cli.fetch import guarded_get
    from migrator_cli.verify import Checker, Pace, Tolerance

    _sim, client = vimeo()
    made = {
        asset_id: client.create(row(asset_id, privacy=privacy), "https://m.example/a.mp4?duration=42").remote_id
        for asset_id, privacy in (("lib/public", "public"), ("lib/private", "private"))
    }
    assert wait_for(lambda: all(client.poll(a, r).video.target for a, r in made.items()), timeout=5)
    items = {}
    for asset_id, remote_id in made.items():
        video = client.poll(asset_id, remote_id).video
        assert "hls" not in video.playback  # an expiring link is never kept
        items[asset_id] = {"asset_id": asset_id, "remote_id": remote_id, "playback_info": video.playback}
        items[asset_id] |= {"duration_s": 42, "provider_duration_s": video.duration_s, "state": "ready"}
    assert requests.get(items["lib/private"]["playback_info"]["player"], timeout=5).status_code == 403

    def fetch(url):
        return guarded_get(url, allow_private=True, timeout_s=5)

    check = Checker("vimeo", Tolerance(1.0), Pace(0), fetch, {}, lambda p: client.signed_playback(p, 600))
    verdicts = {asset_id: check(item) for asset_id, item in items.items()}
    assert {a: v.status for a, v in verdicts.items()} == {"lib/public": "passed", "lib/private": "passed"}, verdicts
    # Without the provider's help the public video has nothing to check, and says why.
    bare = Checker("vimeo", Tolerance(1.0), Pace(0), fetch, {})(items["lib/public"])
    assert bare.status == "failed" and bare.findings[0].kind == "no_playback"
