"""JW Player as a target: migrator.providers.jwplayer against the "jwplayer" simulator, as the uploader, reconcile,
the webhook, the tracks worker, audit and verify use it. What is asserted is what the simulator holds at the end."""

from __future__ import annotations

import json
import time

import jwt as pyjwt
import pytest
import requests
from migrator.fate import OutcomeKind
from migrator.messages import AssetMessage, Track
from migrator.providers import AssetRef, SigningUnavailable, build
from migrator.providers import jwplayer as jw
from migrator.signatures import SignatureError
from migrator.states import State
from migrator.tracks import TrackResult

from tests.sim.support import Origin, wait_for

SITE, SECRET, PROPERTY = "Site1234", "v2-api-secret", "property-secret-of-32-characters"
PLAIN = json.dumps({"site_id": SITE, "api_secret": SECRET})
SIGNING = json.dumps({"site_id": SITE, "api_secret": SECRET, "signing_secret": PROPERTY, "url_signing": True})
HOOK = "webhook-secret-of-32-characters!"


@pytest.fixture
def target(launch, origin):
    def start(secret: str = PLAIN, **config):
        config = {"token": SECRET, "account_id": SITE, "webhook_secret": HOOK, **config}
        sim = launch("jwplayer", **config)
        provider = build("jwplayer", sim.url, lambda: secret)
        provider.http.session.trust_env = False
        return sim, provider

    return start


def row(asset_id: str, origin: Origin, **fields) -> AssetRef:
    details = AssetMessage(asset_id, f"{origin.url}/ok.mp4", **fields)
    return AssetRef(asset_id, details.title, 0, details)


def held(sim, remote_id: str) -> dict:
    return sim._store.videos[remote_id].request["metadata"]


def ready(provider, asset_id: str, remote_id: str):
    assert wait_for(lambda: provider.poll(asset_id, remote_id).video.target is not None)
    return provider.poll(asset_id, remote_id).video


def test_every_field_goes_to_its_place_and_the_media_is_ready(target, origin):
    sim, provider = target()
    asset = row(
        "library/intro-2019",
        origin,
        title="Intro",
        description="The first one.",
        tags=("intro", "2019"),
        metadata={"author": "Ada", "episode": 3},
        privacy="public",
        created_at="2019-05-01T10:00:00Z",
        folder="talks/2019",
        poster_time_s=30.0,
    )
    outcome = provider.create(asset, asset.details.source_url)
    assert outcome.kind is OutcomeKind.CREATED and len(outcome.remote_id) == 8
    assert outcome.notes == ("poster_time_s: kept in custom_params only (JW picks a thumbnail by a later call)",)
    metadata = held(sim, outcome.remote_id)
    assert (metadata["title"], metadata["description"], metadata["tags"]) == (
        "Intro",
        "The first one.",
        ["intro", "2019"],
    )
    assert metadata["external_id"] == "library/intro-2019" and "publish_start_date" not in metadata
    assert metadata["custom_params"] == {
        "author": "Ada",
        "episode": "3",
        "migration_ref": "library/intro-2019",
        "migration_key": outcome.notes and metadata["custom_params"]["migration_key"],
        "created_at": "2019-05-01T10:00:00Z",
        "folder": "talks/2019",
        "poster_time_s": "30.0",
    }
    video = ready(provider, asset.asset_id, outcome.remote_id)
    assert video.target is State.READY and video.ref == "library/intro-2019" and video.privacy == "public"
    assert video.playback["hls"] == f"{sim.url}/_play/jwplayer/{outcome.remote_id}/manifest.m3u8"
    assert requests.get(video.playback["hls"], timeout=5).text.startswith("#EXTM3U")


def test_a_lost_answer_is_found_among_the_newest_media_and_never_created_twice(target, origin, monkeypatch):
    """The lookup reads the list newest first (sort=created:dsc) back to the earlier try, matching the whole id in
    custom_params.migration_ref: no `q` (the list documents no query on custom params, and an external_id longer
    than 15 characters "may not exactly match"), so ids sharing a long prefix never stand for each other."""
    sim, provider = target(lose_rate=1.0)
    monkeypatch.setattr(jw, "PAGE_LENGTH", 5)  # pages of five: the lost create lies three pages back
    asset = row("library/the-very-long-common-prefix-0001", origin, privacy="public")
    claimed = time.time()
    assert provider.create(asset, asset.details.source_url).kind is OutcomeKind.TRANSIENT  # performed, answer lost
    for n in range(2, 13):
        other = row(f"library/the-very-long-common-prefix-{n:04d}", origin, privacy="public")
        provider.create(other, other.details.source_url)
    before = len(sim.requests_log(["list"]))
    found = provider.find(asset.asset_id, claimed)
    assert found.kind is OutcomeKind.CREATED
    assert sim._store.videos[found.remote_id].request["metadata"]["external_id"] == asset.asset_id
    lookups = sim.requests_log(["list"])[before:]
    assert len(lookups) == 3 and {entry["ref"] for entry in lookups} == {None}  # three pages, never a q
    assert provider.find("library/never-made", claimed).kind is OutcomeKind.NOT_FOUND  # the list ends
    assert provider.find("library/never-made", None).kind is OutcomeKind.NOT_FOUND  # FIND_MAX_PAGES, then none
    assert sim.stats()["creates"] == 12  # one each: the find, not a second create, settled the lost answer


def test_a_lookup_stops_at_the_claim_and_says_so_when_the_ceiling_is_nearer(target, origin, monkeypatch):
    _sim, provider = target()
    monkeypatch.setattr(jw, "PAGE_LENGTH", 5)
    for n in range(12):
        made = row(f"lib/{n}", origin, privacy="public")
        provider.create(made, made.details.source_url)
    # The newest page already reaches back before a claim made now (less the clocks' margin): nothing more is read.
    assert provider.find("lib/elsewhere", time.time()).kind is OutcomeKind.NOT_FOUND
    monkeypatch.setattr(jw, "CEILING", 10)  # only the newest 10 can be read: a claim older than them is out of reach
    unreachable = provider.find("lib/elsewhere", time.time() - 86_400)
    assert unreachable.kind is OutcomeKind.TRANSIENT and "lookup window too long" in unreachable.error


def test_a_signed_row_on_a_property_without_url_signing_is_held_unpublished_and_never_public(target, origin):
    sim, provider = target()
    asset = row("lib/secret", origin, privacy="private")
    outcome = provider.create(asset, asset.details.source_url)
    assert jw.HELD_NOTE in outcome.notes and held(sim, outcome.remote_id)["publish_start_date"] == jw.HELD_UNTIL
    video = ready(provider, asset.asset_id, outcome.remote_id)
    assert video.target is State.READY and video.privacy == "signed" and video.playback["policy"] == "signed"
    assert requests.get(video.playback["hls"], timeout=5).status_code == 404  # delivered to no one
    with pytest.raises(SigningUnavailable):
        provider.signed_playback(video.playback, 600, None)


def test_on_a_property_with_url_signing_a_signed_row_plays_only_with_a_signature_of_ours(target, origin):
    sim, provider = target(secret=SIGNING, signing_secret=PROPERTY)
    asset = row("lib/members", origin, privacy="signed")
    outcome = provider.create(asset, asset.details.source_url)
    assert "publish_start_date" not in held(sim, outcome.remote_id) and not outcome.notes
    video = ready(provider, asset.asset_id, outcome.remote_id)
    assert video.privacy == "signed" and requests.get(video.playback["hls"], timeout=5).status_code == 403
    signed = provider.signed_playback(video.playback, 600, None)
    master = requests.get(signed.manifest_url, timeout=5)
    assert master.status_code == 200 and signed.query == ()
    variant = next(line for line in master.text.splitlines() if line.endswith("") and "p.m3u8" in line)
    base = signed.manifest_url.rsplit("/", 1)[0]
    assert requests.get(f"{base}/{variant}", timeout=5).text.startswith("#EXTM3U")  # signed in the manifest
    assert requests.get(f"{base}/{variant.split('?')[0]}", timeout=5).status_code == 403


def test_webhooks_are_verified_forgeries_refused_and_media_available_never_comes_for_a_held_media(
    target, origin, hooks
):
    _sim, provider = target(webhook_url=hooks.url, webhook_forged_rate=1.0)
    public, private = row("lib/pub", origin, privacy="public"), row("lib/priv", origin, privacy="private")
    made = {a.asset_id: provider.create(a, a.details.source_url).remote_id for a in (public, private)}
    deliveries = hooks.wait(10)
    events, refused, genuine = [], 0, None
    for delivery in deliveries:
        try:
            event = provider.read_webhook(delivery.body, delivery.headers, [HOOK], time.time(), 300)
        except SignatureError:
            refused += 1
            continue
        genuine = delivery
        token = delivery.headers["authorization"].split(" ", 1)[1]
        assert pyjwt.decode(token, HOOK, algorithms=["HS256"]) == json.loads(delivery.body)  # the payload is the body
        events.append((json.loads(delivery.body)["event"], event.remote_id, event.says_ready))
    assert refused == 5 == len(events)  # each event preceded by a forged copy, every forgery refused
    assert sorted(events) == sorted(
        [
            ("media_created", made["lib/pub"], False),
            ("media_created", made["lib/priv"], False),
            ("conversions_complete", made["lib/pub"], True),
            ("conversions_complete", made["lib/priv"], True),
            ("media_available", made["lib/pub"], True),  # the held one is never available: its poll settles it
        ]
    )
    tampered = json.dumps({**json.loads(genuine.body), "media_id": "Someone1"}).encode()
    with pytest.raises(SignatureError):  # a body the token does not carry
        provider.read_webhook(tampered, genuine.headers, [HOOK], time.time(), 300)
    spaced = genuine.body.replace(b'","', b'", "')  # the same event written otherwise: its payload still matches
    assert provider.read_webhook(spaced, genuine.headers, [HOOK], time.time(), 300).remote_id


@pytest.mark.parametrize(
    ("secret", "privacy", "plays"),
    [(PLAIN, "public", "public"), (PLAIN, "private", "signed"), (SIGNING, "public", "signed")],
    ids=["public", "held", "signing-property"],
)
def test_a_ready_event_settles_from_the_ledger_as_a_read_of_the_media_would(target, origin, secret, privacy, plays):
    """conversions_complete and media_available say the media is ready: the webhook builds it from what the ledger
    holds instead of spending one of the 60 calls a minute on a read. What it builds is what the read gives (but
    the duration, which no event carries)."""
    sim, provider = target(secret=secret, signing_secret=PROPERTY)
    asset = row("lib/event", origin, privacy=privacy)
    remote_id = provider.create(asset, asset.details.source_url).remote_id
    read = ready(provider, asset.asset_id, remote_id)
    calls = len(sim.requests_log())
    built = provider.ready_video(remote_id, asset)
    assert len(sim.requests_log()) == calls  # asked nothing
    assert (built.remote_id, built.ref, built.target) == (remote_id, asset.asset_id, State.READY)
    assert built.privacy == read.privacy == plays and built.playback == read.playback
    assert built.duration_s is None and read.duration_s is not None


def test_a_failed_fetch_sends_no_event_and_the_poll_says_why(target, hooks):
    _sim, provider = target(webhook_url=hooks.url, check_source=True)
    asset = AssetRef("lib/gone", None, 0, AssetMessage("lib/gone", "http://127.0.0.1:9/gone.mp4", privacy="public"))
    outcome = provider.create(asset, asset.details.source_url)
    video = ready(provider, asset.asset_id, outcome.remote_id)
    assert video.target is State.REJECTED and "could not be fetched" in video.error
    assert [json.loads(d.body)["event"] for d in hooks.wait(1, timeout=1)] == ["media_created"]


def test_sixty_calls_a_minute_then_a_429_whose_headers_the_adapter_reads(target, origin):
    sim, provider = target(budget_quota=60, rate_headers=True)
    answers = [provider.check() for _ in range(61)]
    assert [a.status for a in answers[:60]] == [200] * 60 and answers[60].status == 429
    assert provider.rate_signal(answers[0].headers).limit_per_s == 1.0
    outcome = provider.create(row("lib/x", origin), f"{origin.url}/ok.mp4")
    assert outcome.kind is OutcomeKind.THROTTLED and sim.stats()["creates"] == 0
    # Paced under the 60 a minute, so a minute's window never holds a 61st call of ours.
    assert 0.9 <= jw.JwPlayerProvider.create_rate_per_s < 1.0 and jw.JwPlayerProvider.budget_covers_all_calls


def test_text_tracks_are_fetched_by_jw_and_listed_ready_or_failed_with_why(target, origin):
    from migrator.captions import read_caption
    from migrator.providers.facts import TrackUpload

    from tests.track_files import VTT, FileServer, body

    sim, provider = target()
    remote = provider.create(row("lib/captioned", origin, privacy="public"), f"{origin.url}/ok.mp4").remote_id
    with FileServer() as files:
        files.route("/en.vtt", body(VTT))
        caption = read_caption(VTT)
        good = provider.attach_track(
            remote, Track(f"{files.origin}/en.vtt", "en"), TrackUpload(caption, f"{files.origin}/en.vtt"), "English"
        )
        bad = provider.attach_track(
            remote, Track(f"{origin.url}/ok.mp4", "fr"), TrackUpload(caption, f"{origin.url}/ok.mp4"), "Français"
        )
        assert good.kind is bad.kind is TrackResult.SUBMITTED and good.remote_track_id
        assert wait_for(lambda: all(t.status != "preparing" for t in provider.track_list(remote).tracks))
    listed = {t.language: t for t in provider.track_list(remote).tracks}
    # Ready, not a draft: the create asked JW to publish it once read (upload.auto_publish).
    assert (listed["en"].status, listed["en"].remote_id) == ("ready", good.remote_track_id)
    assert listed["fr"].status == "errored" and listed["fr"].error.startswith("provider: ")
    assert [t["language"] for t in sim.text_tracks()[0]["tracks"] if t["status"] == "ready"] == ["en"]
    delivered = requests.get(f"{sim.url}/_play/jwplayer/{remote}/media.json", timeout=5).json()["playlist"][0]
    assert [t["label"] for t in delivered["tracks"]] == ["English"]  # what a viewer's player gets
    assert provider.track_list("Jmissing").video_gone


def test_a_track_jw_holds_as_a_draft_is_published_once_and_never_made_again(target, origin):
    """A track created without auto_publish (as this adapter did before) ends in draft, delivered to no one: the
    tracks worker's look finds it there and `publish_track` makes it ready, by a PUT that a retry repeats safely."""
    from migrator.providers.facts import RemoteTrack

    from tests.track_files import VTT, FileServer, body

    sim, provider = target()
    remote = provider.create(row("lib/drafted", origin, privacy="public"), f"{origin.url}/ok.mp4").remote_id
    with FileServer() as files:
        made = {"upload": {"method": "fetch", "download_url": files.route("/en.vtt", body(VTT))}}
        made["metadata"] = {"srclang": "en", "label": "English"}
        answer = provider.http.send("POST", provider._media(f"{remote}/text_tracks/"), json_body=made)
        assert answer.status == 201
        assert wait_for(lambda: provider.track_list(remote).tracks[0].status == "draft")
    (draft,) = provider.track_list(remote).tracks
    assert draft.remote_id == answer.body["id"]
    published = provider.publish_track(remote, draft)
    assert published.kind is TrackResult.ATTACHED and published.remote_track_id == draft.remote_id
    assert provider.publish_track(remote, draft).kind is TrackResult.ATTACHED  # again: the same track, still ready
    assert [(t["status"], t["uploads"]) for t in sim.text_tracks()[0]["tracks"]] == [("ready", 1)]
    gone = provider.publish_track(remote, RemoteTrack("en", "draft", remote_id="Tmissing"))
    assert gone.kind is TrackResult.TRANSIENT  # the track, not the media, is gone: the next look uploads it again


def test_the_audit_lists_every_media_even_many_in_one_second(target, origin, monkeypatch):
    _sim, provider = target()
    made = {provider.create(row(f"lib/{i}", origin), f"{origin.url}/ok.mp4").remote_id for i in range(12)}
    monkeypatch.setattr(jw, "PAGE_LENGTH", 5)  # pages of five: the same second spans pages
    listed = [v.remote_id for v in provider.videos()]
    assert sorted(listed) == sorted(made) and len(listed) == 12
