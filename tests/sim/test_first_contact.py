"""`migrator doctor --source P` / `--target T` against every simulator: each simulator answers as the adapters
assume (the declarations of migrator.shapes), every read-only check passes (a target's extras' looks and its
collection lookup among them), and a simulator told to answer as a drifted platform would (the `drift` test knob)
fails the check, naming the field.

Object stores (S3, Cloud Storage, Azure Blob) need their emulators: tests/emulator/test_first_contact_stores.py.
"""

from __future__ import annotations

import json
import time

import pytest
from migrator.extras import chapters_webvtt
from migrator.messages import AssetMessage
from migrator.providers import AssetRef
from migrator.providers import build as build_provider
from migrator.providers.extras import ChaptersUpload
from migrator.row_extras import Chapter
from migrator.sources import build as build_source
from migrator.sources import parse_ref
from migrator.tracks import TrackResult
from migrator_cli.first_contact import FAIL, PASS, SKIP
from migrator_cli.first_contact_source import RESOLVE_TRIES, check_source
from migrator_cli.first_contact_target import check_target
from migrator_cli.main import main

from tests.sim.support import wait_for

KALTURA_APP = {"partner_id": 2_012_345, "app_token_id": "0_apptoken", "app_token": "app-token-secret"}
JW_SITE = "abcd1234"
# profile -> (the simulator's knobs, the source credentials, the API address's path below the simulator's)
SOURCES = {
    "vimeo": ({"token": "t", "link_ttl_s": 3600.0}, {"token": "t"}, ""),
    "wistia": ({"token": "t"}, {"token": "t"}, "/modern"),
    "mux": ({"token_id": "i", "token_secret": "s", "prepare_s": 0.05}, {"token_id": "i", "token_secret": "s"}, ""),
    "cloudflare": (
        {"token": "t", "account_id": "acc", "prepare_s": 0.05},
        {"account_id": "acc", "api_token": "t"},
        "",
    ),
    "apivideo": ({"api_key": "k"}, {"api_key": "k"}, ""),
    "jwplayer": ({"token": "t", "account_id": JW_SITE}, {"site_id": JW_SITE, "api_secret": "t"}, ""),
    "brightcove": ({}, {"account_id": "123", "client_id": "c", "client_secret": "s"}, ""),
    "kaltura": ({"token": "admin", "token_id": "0_apptoken", "token_secret": "app-token-secret"}, KALTURA_APP, ""),
    "dropbox": ({"token": "t"}, {"token": "t"}, ""),
}
# Platforms whose resolve makes the file first (a write doctor never sends): prepared here before the check.
PREPARED_FIRST = ("mux", "cloudflare")
# profile -> (the simulator's knobs, the provider's secret)
TARGETS = {
    "generic": ({"token": "t"}, "t"),
    "mux": ({"token_id": "i", "token_secret": "s"}, json.dumps({"token_id": "i", "token_secret": "s"})),
    "cloudflare": ({"token": "t", "account_id": "acc"}, json.dumps({"account_id": "acc", "api_token": "t"})),
    "apivideo": ({"api_key": "k"}, json.dumps({"api_key": "k"})),
    "bunny": ({"api_key": "k", "account_id": "123"}, json.dumps({"library_id": "123", "api_key": "k"})),
    "jwplayer": ({"token": "t", "account_id": JW_SITE}, json.dumps({"site_id": JW_SITE, "api_secret": "t"})),
    "vimeo": ({"token": "t"}, json.dumps({"token": "t"})),
}
HOOK = "https://hooks.example/live/webhook"
# profile -> the lines of what a viewer sees that PASS (first_contact_extras.py; the others say why they SKIP), and the
# declared answers those looks read, each asked and fitting its declaration.
EXTRAS = {
    "generic": ((), ()),
    "cloudflare": ((), ()),
    "mux": (("chapters look of one video",), ("the asset",)),
    "apivideo": (("thumbnail look of one video", "chapters look of one video"), ("the video", "the chapters")),
    "bunny": (
        ("thumbnail look of one video", "chapters look of one video", "collection lookup"),
        ("the video", "the collections"),
    ),
    "jwplayer": (
        ("thumbnail look of one video", "chapters look of one video", "collection lookup"),
        ("the thumbnails", "the text tracks", "the playlists"),
    ),
    "vimeo": (
        (
            "thumbnail look of one video",
            "chapters look of one video",
            "collection lookup, a folder",
            "collection lookup, a showcase",
        ),
        ("the pictures", "the chapters", "the folders", "the showcases"),
    ),
}


def results(report) -> dict[str, str]:
    return {each.name: each.result for each in report.lines}


def shape_result(report, profile: str, declared: str) -> str | None:
    """The result of the line holding the answers of `declared` to its declaration (`<p> <name> (<METHOD> <path>)`)."""
    return next((each.result for each in report.lines if each.name.startswith(f"{profile} {declared} (")), None)


def failures(report) -> list[str]:
    return [each.text() for each in report.lines if each.result == FAIL]


@pytest.fixture
def source_sim(launch):
    def start(profile: str, **extra):
        knobs, creds, prefix = SOURCES[profile]
        # Every kind of video the profile serves: private ones, unfetchable ones in each of its ways, captioned ones.
        shelf = {"library_size": 12, "library_captions_every": 2, "library_private_every": 3}
        sim = launch(profile, library_unfetchable_every=4, **shelf, **{**knobs, **extra})
        source = build_source(profile, lambda: creds, sim.url + prefix, patient=True, rate_per_s=0)
        if profile in PREPARED_FIRST:  # the first videos' files asked for (a write), so doctor's resolve needs none
            rows = [e for e in source.page(None).entries if isinstance(e, AssetMessage)][:RESOLVE_TRIES]
            refs = [parse_ref(row.source_url) for row in rows]
            for ref in refs:
                source.resolve(ref)
            assert wait_for(lambda: all(source.resolve(ref).url for ref in refs), timeout=5)
        return sim, source

    return start


@pytest.mark.parametrize("profile", sorted(SOURCES))
def test_every_source_simulator_answers_as_its_adapter_assumes(source_sim, profile):
    _sim, source = source_sim(profile)
    report = check_source(source)
    said = results(report)
    assert report.ok, failures(report)
    for step in ("listing", "one video read by id", "resolve to a download link", "link answers", "one caption track"):
        assert said[f"{profile} {step}"] == PASS, report.text()
    shapes = [each for each in report.lines if "(" in each.name and each.name.endswith(")")]
    assert sum(each.result == PASS for each in shapes) >= 2, report.text()


def made(provider, n: int) -> list[str]:
    """`n` videos made through the adapter's own create (the test's setup, not doctor's: doctor writes nothing)."""
    ids = []
    for i in range(n):
        row = AssetMessage(f"lib/{i}", f"https://m.example/{i}.mp4", privacy="public")
        asset = AssetRef(row.asset_id, f"Clip {i}", details=row)
        outcome = provider.create(asset, f"https://m.example/{i}.mp4")
        assert outcome.remote_id, outcome
        ids.append(outcome.remote_id)
        time.sleep(1.05 if provider.name == "jwplayer" else 0)  # two creation seconds: the walk's order is seen
    return ids


@pytest.mark.parametrize("profile", sorted(TARGETS))
def test_every_target_simulator_answers_as_its_adapter_assumes(launch, profile):
    knobs, secret = TARGETS[profile]
    sim = launch(profile, webhook_url=HOOK, webhook_secret="s" * 32, **knobs)
    provider = build_provider(profile, sim.url, lambda: secret)
    ids = made(provider, 2)
    working = check_target(provider)  # the videos still processing: their answers in that state
    assert working.ok, failures(working)
    assert wait_for(lambda: all(provider.poll("x", i).video.target for i in ids), timeout=5)
    report = check_target(provider)  # and once ready
    said = results(report)
    assert report.ok, failures(report)
    for step in ("credentials", "listing", "one video read", "lost-create lookup"):
        assert said[f"{profile} {step}"] == PASS, report.text()
    if provider.takes_tracks:
        assert said[f"{profile} text tracks of one video"] == PASS, report.text()
    if profile in ("apivideo", "jwplayer", "cloudflare"):  # the providers whose API says where webhooks point
        assert said[f"{profile} webhooks"] == PASS and HOOK in report.text(), report.text()
    looks, answers = EXTRAS[profile]
    for step in looks:  # the extras' looks the tracks worker makes, and the lookup for a collection no one has
        assert said[f"{profile} {step}"] == PASS, report.text()
    for declared in answers:
        assert shape_result(report, profile, declared) == PASS, report.text()
    extras = [n for n in said if " look of one video" in n or " collection lookup" in n]
    assert all(said[n] == SKIP for n in extras if n.removeprefix(f"{profile} ") not in looks), report.text()
    assert len(extras) == (4 if profile == "vimeo" else 3), report.text()  # a lookup a place at Vimeo


def test_a_source_that_drifted_fails_naming_the_field(source_sim):
    _sim, source = source_sim("vimeo", drift=('set data.*.status "published"', "rename transcode encoding"))
    report = check_source(source)
    failed = failures(report)
    assert not report.ok
    assert any("the video list" in f and "data[0].status: expected one of available/" in f for f in failed), failed
    assert any("got 'published'" in f for f in failed), failed


def test_a_target_that_drifted_fails_naming_the_field(launch):
    knobs, secret = TARGETS["jwplayer"]
    sim = launch("jwplayer", drift=['set media.*.status "published"', "rename webhooks hooks"], **knobs)
    provider = build_provider("jwplayer", sim.url, lambda: secret)
    made(provider, 1)
    report = check_target(provider)
    failed = failures(report)
    assert any("media[0].status: expected one of created/processing/updating/ready/failed/error" in f for f in failed)
    assert any("the webhooks" in f and "webhooks: missing" in f for f in failed), failed
    assert not report.ok


def chapters_on(provider, ids: list[str]) -> None:
    """Chapters written on each video through the adapter's own write (the test's setup: doctor writes nothing)."""
    chapters = (Chapter(0.0, "Intro"), Chapter(5.0, "Part two"))
    upload = ChaptersUpload(chapters, chapters_webvtt(chapters, 10.0), "en", 10.0)
    for remote_id in ids:
        assert provider.set_chapters(remote_id, upload).kind is TrackResult.ATTACHED


@pytest.mark.parametrize(
    ("profile", "rule", "declared", "said"),
    [
        # api.video's chapters each name their language, which the look counts by
        ("apivideo", "rename data.*.language lang", "the chapters", "data[0].language: missing"),
        # Bunny's custom thumbnail is the file the video names
        ("bunny", "set thumbnailFileName 7", "the video", "thumbnailFileName: expected string or null, got number 7"),
        # JW Player's playlists, where a lost create's playlist is found again
        ("jwplayer", "rename playlists lists", "the playlists", "playlists: missing"),
    ],
)
def test_an_extras_answer_in_another_shape_fails_naming_the_field(launch, profile, rule, declared, said):
    knobs, secret = TARGETS[profile]
    sim = launch(profile, **knobs)
    provider = build_provider(profile, sim.url, lambda: secret)
    ids = made(provider, 1)
    if declared == "the chapters":
        chapters_on(provider, ids)
    sim.patch_config({"drift": [rule]})
    report = check_target(provider)
    failed = failures(report)
    assert shape_result(report, profile, declared) == FAIL, report.text()
    assert any(f"{profile} {declared} (" in f and said in f for f in failed), failed
    assert not report.ok


def test_the_command_speaks_json_and_exits_1_on_a_failure(launch, tmp_path, capsys, monkeypatch):
    knobs, secret = TARGETS["apivideo"]
    sim = launch("apivideo", **knobs)
    (tmp_path / "provider.json").write_text(secret)
    argv = ["doctor", "--target", "apivideo", "--provider-url", sim.url, "--json"]
    assert main([*argv, "--provider-credentials", str(tmp_path / "provider.json")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and doc["side"] == "target" and doc["platform"] == "apivideo" and doc["failed"] == 0
    assert {c["result"] for c in doc["checks"]} <= {"PASS", "SKIP"}
    sim.patch_config({"drift": ["rename data videos"]})
    monkeypatch.setenv("MIGRATOR_PROVIDER_CREDENTIALS", secret)
    assert main(argv) == 1
    doc = json.loads(capsys.readouterr().out)
    assert not doc["ok"] and any("data: missing" in c["detail"] for c in doc["checks"] if c["result"] == "FAIL")


def test_the_source_side_takes_credentials_as_inventory_does(launch, capsys, monkeypatch):
    sim = launch("dropbox", token="t", library_size=3)
    monkeypatch.setenv("DROPBOX_TOKEN", "t")
    assert main(["doctor", "--source", "dropbox", "--source-url", sim.url, "--rate", "0"]) == 0
    out = capsys.readouterr().out
    assert "PASS  dropbox listing: 3 videos" in out and out.strip().splitlines()[-1].startswith("first contact with")
    assert "/cd/0/get/" not in out  # a temporary link's token is never printed
