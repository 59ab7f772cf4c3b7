"""Caption tracks at the simulators, each provider's way: Mux's text inputs at create and its tracks endpoint
(fetched by the provider, SRT or WebVTT), Cloudflare's multipart captions PUT (WebVTT, one per language) and
api.video's captions POST (VTT only). Driven through our own adapters and, once each, the official SDK, and
read back from what the simulator holds (`text_tracks`)."""

from __future__ import annotations

import base64
import io
import json

import cloudflare
import mux_python
import pytest
from apivideo.api_client import ApiClient
from apivideo.apis import CaptionsApi
from apivideo.configuration import Configuration
from migrator.captions import read_caption
from migrator.messages import AssetMessage, Track, track_key
from migrator.providers import AssetRef, build
from migrator.providers.facts import TrackUpload
from migrator.trackfetch import FetchPolicy
from migrator.tracks import TrackResult

from infra.accounts import account
from tests.sim.support import wait_for
from tests.track_files import SRT, VTT, FileServer, body, declared_huge


@pytest.fixture
def files():
    with FileServer() as server:
        yield server


def adapter(sim, acct, files=None):
    policy = FetchPolicy(test_origins=frozenset({files.origin})) if files else None
    return build(acct.provider, sim.url, lambda: acct.credentials, track_policy=policy)


def started(launch, name: str, **config):
    acct = account(name)
    return launch(name, **acct.sim, **config), acct


def held(sim, video_id: str) -> list[dict]:
    return next((v["tracks"] for v in sim.text_tracks() if v["video_id"] == video_id), [])


def upload(content: bytes, url: str = "https://captions.example.com/x") -> TrackUpload:
    caption = read_caption(content)
    assert not isinstance(caption, str), caption
    return TrackUpload(caption, url)


def ready_video(sim, client, ref: str) -> str:
    made = client.create(AssetRef(ref), "https://media.example.com/a.mp4?duration=5")
    assert wait_for(lambda: client.poll(ref, made.remote_id).video.target is not None, timeout=5)
    return made.remote_id


# --- Mux ----------------------------------------------------------------------------------------


def test_mux_fetches_the_creates_text_inputs_and_lists_them_ready_or_errored(launch, files):
    sim, acct = started(launch, "mux", processing_delay_s=0.2)
    srt_url = files.route("/en.srt", body(SRT))
    junk_url = files.route("/junk.vtt", body(b"<html>not captions</html>"))
    tracks = (Track(srt_url, "en", "captions", closed_captions=True), Track(junk_url, "fr", "subtitles"))
    client = adapter(sim, acct, files)
    ref = AssetRef("lib/mux-1", details=AssetMessage("lib/mux-1", "https://media.example.com/a.mp4", tracks=tracks))
    made = client.create(ref, "https://media.example.com/a.mp4?duration=5")
    assert made.remote_id

    def settled():
        listed = client.track_list(made.remote_id)
        return listed if listed.open_for_tracks and all(t.status != "preparing" for t in listed.tracks) else None

    assert wait_for(lambda: settled() is not None, timeout=5)
    by_ref = {t.ref: t for t in settled().tracks}
    assert by_ref[track_key(tracks[0])].status == "ready"
    assert (
        by_ref[track_key(tracks[1])].status == "errored"
        and "not a valid WebVTT or SRT" in by_ref[track_key(tracks[1])].error
    )
    stored = {t["ref"]: t for t in held(sim, made.remote_id)}
    assert stored[track_key(tracks[0])]["format"] == "srt" and stored[track_key(tracks[0])]["closed_captions"] is True


def test_mux_refuses_a_create_whose_text_inputs_are_malformed(launch):
    sim, acct = started(launch, "mux")
    client = adapter(sim, acct)
    text = {"url": "https://c.example.com/en.vtt", "type": "text", "language_code": "en", "name": "English"}
    for extra, why in (
        ({"text_type": "captions"}, "text_type must be subtitles"),
        ({"text_type": "subtitles", "language_code": "en_US"}, "BCP 47"),
    ):
        answer = client.http.send(
            "POST",
            "/video/v1/assets",
            json_body={
                "inputs": [{"url": "https://m.example.com/a.mp4"}, {**text, **extra}],
                "playback_policies": ["public"],
            },
        )
        assert answer.status == 400 and why in answer.text
    twice = [
        {**text, "text_type": "subtitles"},
        {**text, "text_type": "subtitles", "url": "https://c.example.com/b.vtt"},
    ]
    answer = client.http.send(
        "POST", "/video/v1/assets", json_body={"inputs": [{"url": "https://m.example.com/a.mp4"}, *twice]}
    )
    assert answer.status == 400 and "unique" in answer.text


def test_mux_takes_a_track_later_only_once_the_asset_is_ready_and_fetches_it(launch, files):
    sim, acct = started(launch, "mux", processing_delay_s=0.3)
    client = adapter(sim, acct, files)
    made = client.create(AssetRef("lib/mux-2"), "https://media.example.com/a.mp4?duration=5")
    track = Track(files.route("/de.vtt", body(VTT)), "de", name="Deutsch")
    early = client.attach_track(made.remote_id, track, upload(VTT, track.url), "Deutsch")
    assert early.kind is TrackResult.REFUSED and "must be ready" in early.error
    assert wait_for(lambda: client.track_list(made.remote_id).open_for_tracks, timeout=5)
    later = client.attach_track(made.remote_id, track, upload(VTT, track.url), "Deutsch")
    assert later.kind is TrackResult.SUBMITTED and later.remote_track_id
    assert wait_for(lambda: [t.status for t in client.track_list(made.remote_id).tracks] == ["ready"], timeout=5)
    assert client.track_list("no-such-asset").video_gone


def test_mux_errors_a_track_too_large_or_unreachable(launch, files):
    sim, acct = started(launch, "mux", processing_delay_s=0.1, track_max_bytes=1024)
    client = adapter(sim, acct, files)
    made = client.create(AssetRef("lib/mux-3"), "https://media.example.com/a.mp4?duration=5")
    assert wait_for(lambda: client.track_list(made.remote_id).open_for_tracks, timeout=5)
    big = Track(files.route("/big.vtt", declared_huge(4096)), "en")
    gone = Track("http://127.0.0.1:1/none.vtt", "fr")
    for track, label in ((big, "English"), (gone, "French")):
        assert client.attach_track(made.remote_id, track, upload(VTT, track.url), label).kind is TrackResult.SUBMITTED
    assert wait_for(lambda: all(t.status == "errored" for t in client.track_list(made.remote_id).tracks), timeout=8)
    errors = sorted(t.error for t in client.track_list(made.remote_id).tracks)
    assert "larger than 1024 bytes" in errors[1] and "could not be downloaded" in errors[0]


def test_mux_sdk_adds_a_track_and_reads_it_in_the_asset(launch, files):
    sim, acct = started(launch, "mux", processing_delay_s=0.1)
    config = mux_python.Configuration(host=sim.url, username=acct.sim["token_id"], password=acct.sim["token_secret"])
    assets = mux_python.AssetsApi(mux_python.ApiClient(config))
    made = adapter(sim, acct).create(AssetRef("lib/mux-sdk"), "https://media.example.com/a.mp4?duration=5")
    assert wait_for(lambda: assets.get_asset(made.remote_id).data.status == "ready", timeout=5)
    request = mux_python.CreateTrackRequest(
        url=files.route("/en.vtt", body(VTT)),
        type="text",
        text_type="subtitles",
        language_code="en",
        name="English",
        passthrough="en.captions.",
    )
    created = assets.create_asset_track(made.remote_id, request).data
    assert created.status == "preparing" and created.passthrough == "en.captions."
    assert wait_for(
        lambda: [t.status for t in assets.get_asset(made.remote_id).data.tracks if t.type == "text"] == ["ready"],
        timeout=5,
    )


# --- Cloudflare Stream ------------------------------------------------------------------------------


def test_cloudflare_takes_webvtt_once_per_language_and_refuses_srt(launch):
    sim, acct = started(launch, "cloudflare", processing_delay_s=0.05)
    client = adapter(sim, acct)
    remote_id = ready_video(sim, client, "lib/cf-1")
    english = Track("https://c.example.com/en.srt", "en")
    assert client.attach_track(remote_id, english, upload(SRT), "English").kind is TrackResult.ATTACHED
    assert [t.language for t in client.track_list(remote_id).tracks] == ["en"]
    [stored] = held(sim, remote_id)
    assert (
        stored["format"] == "vtt"
        and stored["content"].startswith("WEBVTT")
        and "Hello from SubRip" in stored["content"]
    )
    # A second file in the same language replaces the first: one per language, the uploads counted.
    assert client.attach_track(remote_id, english, upload(VTT), "English").kind is TrackResult.ATTACHED
    [stored] = held(sim, remote_id)
    assert stored["uploads"] == 2 and "Bonjour" in stored["content"]
    # What the API refuses: a file that is not WebVTT (the adapter always converts; sent raw here).
    raw = client.http.send(
        "PUT",
        f"/accounts/{acct.sim['account_id']}/stream/{remote_id}/captions/fr",
        files={"file": ("fr.srt", SRT, "application/x-subrip")},
    )
    assert raw.status == 400 and "only WebVTT" in raw.text
    gone = client.attach_track("0" * 32, english, upload(VTT), "English")
    assert gone.kind is TrackResult.VIDEO_GONE


def test_cloudflare_sdk_uploads_and_lists_captions(launch):
    sim, acct = started(launch, "cloudflare", processing_delay_s=0.05)
    remote_id = ready_video(sim, adapter(sim, acct), "lib/cf-sdk")
    sdk = cloudflare.Cloudflare(api_token=acct.sim["token"], base_url=sim.url, max_retries=0)
    # The SDK types `file` as a string: the WebVTT text itself, sent as the multipart's `file` part.
    caption = sdk.stream.captions.language.update(
        "tr", account_id=acct.sim["account_id"], identifier=remote_id, file=VTT.decode()
    )
    assert caption.language == "tr"
    listed = sdk.stream.captions.get(remote_id, account_id=acct.sim["account_id"])
    assert [c.language for c in listed] == ["tr"]
    sdk.close()


# --- api.video -------------------------------------------------------------------------------------------


def test_apivideo_takes_vtt_only_and_lists_captions(launch):
    sim, acct = started(launch, "apivideo", processing_delay_s=0.05)
    client = adapter(sim, acct)
    remote_id = ready_video(sim, client, "lib/av-1")
    french = Track("https://c.example.com/fr.srt", "fr")
    done = client.attach_track(remote_id, french, upload(SRT), "Français")
    assert done.kind is TrackResult.ATTACHED and done.remote_track_id == f"/videos/{remote_id}/captions/fr"
    assert [t.language for t in client.track_list(remote_id).tracks] == ["fr"]
    [stored] = held(sim, remote_id)
    assert stored["format"] == "vtt" and "Hello from SubRip" in stored["content"]
    raw = client.http.send(
        "POST", f"/videos/{remote_id}/captions/en", files={"file": ("en.srt", SRT, "application/x-subrip")}
    )
    assert raw.status == 400 and json.loads(raw.text)["name"] == "file" and "only WebVTT" in raw.text
    assert client.track_list("vi-none").video_gone


def test_apivideo_sdk_uploads_a_caption(launch):
    sim, acct = started(launch, "apivideo", processing_delay_s=0.05)
    remote_id = ready_video(sim, adapter(sim, acct), "lib/av-sdk")
    header = "Basic " + base64.b64encode(f"{acct.sim['api_key']}:".encode()).decode()
    api = CaptionsApi(ApiClient(Configuration(host=sim.url), header_name="Authorization", header_value=header))
    file = io.BytesIO(VTT)
    file.name = "en.vtt"
    caption = api.upload(remote_id, "en", file)
    assert caption.srclang == "en" and caption.uri.endswith("/captions/en")
    assert [c.srclang for c in api.list(remote_id).data] == ["en"]


def test_a_lost_track_answer_leaves_the_track_held(launch):
    sim, acct = started(launch, "cloudflare", processing_delay_s=0.05, track_lose_rate=1.0)
    client = adapter(sim, acct)
    remote_id = ready_video(sim, client, "lib/cf-lost")
    lost = client.attach_track(remote_id, Track("https://c.example.com/en.vtt", "en"), upload(VTT), "English")
    assert lost.kind is TrackResult.TRANSIENT
    assert sim.stats()["lost_track_responses"] == 1 and [t["language"] for t in held(sim, remote_id)] == ["en"]
