"""What a Mux asset shows besides its file (issue 42), on the "mux" simulator as a target: the frame its default
thumbnail shows (`thumbnail_time`, PATCHed once the asset is ready: docs.mux.com "Set a default thumbnail for a
video") and its chapters, a text track of text_type chapters Mux fetches from a JSON file ("Add chapters"), read back
where a player reads them (stream.mux.com's `{playback id}/chapters/{track id}.json`). Driven by our MuxProvider,
and by mux-python 5.1.2 where it can be: its CreateTrackRequest and Track allow text_type "subtitles" only (the SDK
predates chapters) and its UpdateAssetRequest has no thumbnail_time, so the SDK adds a chapters track only with its
client-side validation off."""

from __future__ import annotations

import json
import threading
from dataclasses import replace

import mux_python
import pytest
from migrator.extras import chapters_webvtt
from migrator.messages import AssetMessage
from migrator.providers import AssetRef, build
from migrator.providers.extras import ChaptersLook, ChaptersUpload
from migrator.row_extras import Chapter
from migrator.sources.mux_extras import read_apple_chapters
from migrator.trackfetch import FetchPolicy
from migrator.tracks import TrackOutcome, TrackResult

from infra.sim import media
from tests.sim.support import wait_for
from tests.track_files import FileServer, body

TOKEN_ID, TOKEN_SECRET = "mux-extras-id", "mux-extras-secret"
SOURCE = "https://media.example.com/a.mp4?duration=42.5"
CHAPTERS = (Chapter(0.0, "Intro"), Chapter(12.5, "The demo — part 2"), Chapter(30.0, "Questions"))


@pytest.fixture
def files():
    with FileServer() as server:
        yield server


@pytest.fixture
def ready(launch, files):
    """(sim, our provider, a ready public asset's id)."""
    sim = launch("mux", token_id=TOKEN_ID, token_secret=TOKEN_SECRET)
    secret = json.dumps({"token_id": TOKEN_ID, "token_secret": TOKEN_SECRET})
    provider = build("mux", sim.url, lambda: secret, track_policy=FetchPolicy(test_origins=frozenset({files.origin})))
    provider.http.session.trust_env = False
    row = AssetMessage("lib/1", SOURCE, privacy="public")
    remote_id = provider.create(AssetRef("lib/1", details=row), SOURCE).remote_id
    assert wait_for(lambda: provider.poll("lib/1", remote_id).video.target is not None)
    return sim, provider, remote_id


def asset(provider, remote_id: str) -> dict:
    return provider.http.send("GET", f"/video/v1/assets/{remote_id}").body["data"]


def staged(files, provider, path: str = "/handoff/chapters.json") -> ChaptersUpload:
    """The chapters as the worker hands them to Mux: the provider's JSON file, served at a link of its own."""
    upload = ChaptersUpload(CHAPTERS, chapters_webvtt(CHAPTERS, 42.5), "en", 42.5)
    _name, content, media_type = provider.chapters_file(upload)
    return replace(upload, url=files.route(path, body(content, headers={"Content-Type": media_type})))


def test_the_poster_time_is_the_assets_thumbnail_time_and_a_time_past_its_end_is_refused(ready):
    _sim, provider, vid = ready
    assert "thumbnail_time" not in asset(provider, vid)  # "omitted entirely when no value is set"
    assert provider.set_thumbnail_time(vid, 12.25) == TrackOutcome(TrackResult.ATTACHED, remote_track_id="12.25")
    assert asset(provider, vid)["thumbnail_time"] == 12.25
    past = provider.set_thumbnail_time(vid, 42.5)  # "at or past the end of the asset is rejected with a 400"
    assert past.kind is TrackResult.REFUSED and "HTTP 400" in past.error
    assert asset(provider, vid)["thumbnail_time"] == 12.25
    gone = provider.set_thumbnail_time("no-such-asset", 1.0)
    assert gone.kind is TrackResult.VIDEO_GONE


def test_chapters_are_a_chapters_track_mux_fetches_and_serves_back_as_a_player_reads_them(ready, files, web):
    sim, provider, vid = ready
    assert provider.chapters_of(vid, "en") == ChaptersLook()
    upload = staged(files, provider)
    submitted = provider.set_chapters(vid, upload)
    assert submitted.kind is TrackResult.SUBMITTED and submitted.remote_track_id
    assert wait_for(lambda: provider.chapters_of(vid, "en") == ChaptersLook(1))
    (track,) = [t for t in asset(provider, vid)["tracks"] if t["type"] == "text"]
    assert (track["text_type"], track["name"], track["passthrough"], track["status"]) == (
        "chapters", "Chapters", "migration-chapters", "ready",
    )  # fmt: skip
    assert files.seen[-1][0] == "/handoff/chapters.json"  # fetched by Mux from the staged link
    pid = asset(provider, vid)["playback_ids"][0]["id"]
    served = web.get(f"{sim.url}{media.PREFIX}mux/{pid}/chapters/{track['id']}.json", timeout=5)
    assert served.status_code == 200
    assert [(c.start_s, c.title) for c in read_apple_chapters(served.json(), "en")] == [
        (c.start_s, c.title) for c in CHAPTERS
    ]
    missing = web.get(f"{sim.url}{media.PREFIX}mux/{pid}/chapters/nope.json", timeout=5)
    assert missing.status_code == 404


def test_a_chapters_file_mux_cannot_read_errors_its_track_and_the_look_refuses_it_with_why(ready, files):
    _sim, provider, vid = ready
    upload = replace(staged(files, provider), url=files.route("/bad.json", body(b"WEBVTT\n\nnot json")))
    assert provider.set_chapters(vid, upload).kind is TrackResult.SUBMITTED
    # While Mux is still fetching the file the look answers WAITING (a TrackOutcome too): wait for the refusal itself.
    assert wait_for(lambda: getattr(provider.chapters_of(vid, "en"), "kind", None) is TrackResult.REFUSED)
    refused = provider.chapters_of(vid, "en")
    assert isinstance(refused, TrackOutcome)
    assert refused.kind is TrackResult.REFUSED and "not JSON" in refused.error


def test_a_chapters_track_mux_is_still_fetching_is_waited_for_then_found(ready, files):
    _sim, provider, vid = ready
    gate = threading.Event()
    upload = staged(files, provider)
    served = files.routes[upload.url.removeprefix(files.origin)]

    def slow(handler):  # the file answers once the test has looked while Mux was still fetching it
        gate.wait(5)
        served(handler)

    files.route("/slow.json", slow)
    assert provider.set_chapters(vid, replace(upload, url=files.url("/slow.json"))).kind is TrackResult.SUBMITTED
    waiting = provider.chapters_of(vid, "en")
    assert waiting.kind is TrackResult.WAITING and "still fetching" in waiting.error
    gate.set()
    assert wait_for(lambda: provider.chapters_of(vid, "en") == ChaptersLook(1))
    assert sum(1 for t in asset(provider, vid)["tracks"] if t["type"] == "text") == 1


def test_sdk_adds_a_chapters_track_past_its_own_checks_and_the_asset_lists_it_ready(ready, files, monkeypatch):
    sim, provider, vid = ready
    configuration = mux_python.Configuration(host=sim.url)
    configuration.username, configuration.password = TOKEN_ID, TOKEN_SECRET
    api = mux_python.AssetsApi(mux_python.ApiClient(configuration))
    url = staged(files, provider, "/sdk.json").url
    with pytest.raises(ValueError, match="text_type"):  # 5.1.2's CreateTrackRequest: text_type "subtitles" only
        mux_python.CreateTrackRequest(url=url, type="text", text_type="chapters", language_code="en")
    lenient = mux_python.Configuration()
    lenient.client_side_validation = False  # the models' own configuration: the default one
    monkeypatch.setattr(mux_python.Configuration, "_default", lenient)
    request = mux_python.CreateTrackRequest(url=url, type="text", text_type="chapters", language_code="en", name="Ch")
    made = api.create_asset_track(vid, request).data
    assert (made.type, made.text_type, made.status) == ("text", "chapters", "preparing")
    assert wait_for(lambda: [t.status for t in api.get_asset(vid).data.tracks if t.type == "text"] == ["ready"])
    refused = mux_python.CreateTrackRequest(url=url, type="text", text_type="chapters", language_code="en", name="Ch")
    with pytest.raises(mux_python.exceptions.ApiException) as caught:  # "must be unique within each group"
        api.create_asset_track(vid, refused)
    assert caught.value.status == 400
