"""Bunny Stream as a target: the "bunny" simulator against a client written from Bunny's OpenAPI file (Bunny
publishes no Python SDK; its own clients are TypeScript, Kotlin and Swift, generated from that file), and our
BunnyProvider driven against it. Signatures and tokens are recomputed here with hmac/hashlib from Bunny's
documents, so a mistake shared by the simulator and the adapter would still show. Every test asserts on what
the simulator holds at the end."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

import pytest
from migrator.captions import read_caption
from migrator.fate import OutcomeKind
from migrator.messages import AssetMessage, Track
from migrator.providers import AssetRef, SigningUnavailable, build
from migrator.providers.bunny_formats import cdn_token, embed_token
from migrator.providers.facts import TrackUpload
from migrator.providers.fidelity import CreateDefaults
from migrator.signatures import SignatureError
from migrator.tracks import TrackResult
from migrator_cli.verify import Checker, Fetched, Pace, Tolerance

from infra.accounts import account
from tests.sim.support import wait_for

VTT = b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHello\n"
SRT = b"1\n00:00:01,000 --> 00:00:02,000\nHello\n"


class BunnyClient:
    """Bunny's Stream API (openapi.yml): `AccessKey` with the library's key, paths under /library/{libraryId}."""

    def __init__(self, web, base: str, library: str, key: str) -> None:
        self.web, self.base, self.library, self.headers = web, base, library, {"AccessKey": key}

    def url(self, rest: str) -> str:
        return f"{self.base}/library/{self.library}{rest}"

    def fetch(self, url: str, title: str | None = None, **query):
        body = {"url": url, **({"title": title} if title is not None else {})}
        return self.web.post(self.url("/videos/fetch"), json=body, params=query, headers=self.headers)

    def list(self, **params):
        return self.web.get(self.url("/videos"), params=params, headers=self.headers)

    def get(self, video: str):
        return self.web.get(self.url(f"/videos/{video}"), headers=self.headers)

    def update(self, video: str, body: dict):
        return self.web.post(self.url(f"/videos/{video}"), json=body, headers=self.headers)

    def play(self, video: str, **params):
        return self.web.get(self.url(f"/videos/{video}/play"), params=params)  # no AccessKey: none is declared


def setup(launch, web, protected: bool = True, **config):
    """A simulator for one made-up library, Bunny's client on it, and our provider (the stack saying whether
    the library is token-protected)."""
    acct = account("bunny")
    sim_config = {**acct.sim, **({} if protected else {"token_secret": None}), **config}
    sim = launch("bunny", **sim_config)
    creds = json.loads(acct.credentials)
    client = BunnyClient(web, sim.url, creds["library_id"], creds["api_key"])
    defaults = CreateDefaults("signed", {"bunny": {"tokenAuthentication": protected}})
    provider = build("bunny", sim.url, lambda: acct.credentials, create_defaults=defaults)
    provider.http.session.trust_env = False
    return sim, client, provider, creds


def row(asset_id: str, privacy: str | None = "private", **fields) -> AssetRef:
    message = AssetMessage(asset_id, f"https://m.example/{asset_id}.mp4?duration=20", privacy=privacy, **fields)
    return AssetRef(asset_id, fields.get("title"), details=message)


def held(client, remote_id: str) -> dict:
    answer = client.get(remote_id)
    assert answer.status_code == 200, answer.text
    return answer.json()


def ready(provider, asset_id: str, remote_id: str):
    assert wait_for(lambda: provider.poll(asset_id, remote_id).video.target is not None, timeout=5)
    return provider.poll(asset_id, remote_id).video


def test_a_fetch_answers_a_status_model_with_the_guid_and_the_video_goes_from_created_to_finished(launch, web):
    sim, client, _, creds = setup(launch, web, processing_delay_s=0.6)
    answer = client.fetch("https://m.example/a.mp4?duration=61.4", "A talk", thumbnailTime=5000)
    assert answer.status_code == 200
    body = answer.json()
    assert (body["success"], body["statusCode"]) == (True, 200) and set(body) == {
        "success",
        "message",
        "statusCode",
        "id",
    }
    first = held(client, body["id"])
    assert (first["guid"], first["title"], first["status"], first["length"]) == (body["id"], "A talk", 0, 0)
    assert first["videoLibraryId"] == int(creds["library_id"]) and first["metaTags"] == []
    assert "+" not in first["dateUploaded"] and not first["dateUploaded"].endswith("Z")  # UTC, no offset
    assert wait_for(lambda: held(client, body["id"])["status"] == 4, timeout=3)
    done = held(client, body["id"])
    assert done["length"] == 61 and done["encodeProgress"] == 100  # whole seconds
    assert done["availableResolutions"] == "360p,480p,720p,1080p" and (done["width"], done["height"]) == (1920, 1080)
    page = client.list(page=1, itemsPerPage=1000).json()
    assert (page["totalItems"], page["currentPage"], page["itemsPerPage"]) == (
        1,
        1,
        1000,
    ) and "hasMoreItems" not in page
    corrupt = client.fetch("https://m.example/corrupt.mp4").json()["id"]
    assert wait_for(lambda: held(client, corrupt)["status"] == 5, timeout=3)
    assert held(client, corrupt)["transcodingMessages"][0]["level"] == 3  # Severity.Error
    assert sim.stats()["videos"] == 2


def test_the_access_key_is_the_librarys_own(launch, web):
    sim, client, _, creds = setup(launch, web)
    wrong = BunnyClient(web, sim.url, creds["library_id"], "account-api-key")
    refused = wrong.fetch("https://m.example/a.mp4")
    assert refused.status_code == 401 and refused.json()["success"] is False
    other = BunnyClient(web, sim.url, "1", creds["api_key"])  # the key of one library, another's path
    assert other.list().status_code == 401
    bad = client.fetch("ftp://m.example/a.mp4")
    assert bad.status_code == 400 and bad.json()["message"]
    assert sim.stats()["videos"] == 0


def test_an_answer_without_the_id_is_indeterminate_and_the_video_is_found_by_its_tag_not_fetched_again(launch, web):
    sim, client, provider, _ = setup(launch, web)
    asset = AssetRef("lib/no-id", "Intro", details=AssetMessage("lib/no-id", "https://m.example/x.mp4?answer=no-id"))
    # The in-line look after the fetch is blind here (a listing that lags): nothing is fetched again either.
    real = provider._search
    provider._search = lambda *a, **k: real("never-this-asset", None)
    first = provider.create(asset, asset.details.source_url)
    assert first.kind is OutcomeKind.TRANSIENT and "looked for by its tag first" in first.error
    provider._search = real
    found = provider.find("lib/no-id", time.time() - 60)  # the uploader's next try looks before it creates
    assert found.kind is OutcomeKind.CREATED
    [video] = client.list().json()["items"]
    assert video["guid"] == found.remote_id and sim.stats()["create_requests"] == 1
    assert video["title"] == "Intro"  # the tag left the title once the video was tagged
    assert video["metaTags"] == [{"property": "migration_ref", "value": "lib/no-id"}]


def test_lost_answers_are_found_by_the_tag_before_any_retry(launch, web):
    sim, client, provider, _ = setup(launch, web, lose_rate=1.0)  # every fetch happens, no answer arrives
    assets = [row(f"lib/{i}", "public", title=f"T{i}", description="D", tags=("a", "b")) for i in range(3)]
    made = [provider.create(asset, asset.details.source_url) for asset in assets]
    assert all(m.kind is OutcomeKind.CREATED for m in made)
    stats = sim.stats()
    assert (stats["lost_responses"], stats["create_requests"], stats["videos"], stats["duplicate_videos"]) == (
        3,
        3,
        3,
        0,
    )
    for i, m in enumerate(made):  # each found by its tag and tagged whole, its title back as the row has it
        video = held(client, m.remote_id)
        assert video["title"] == f"T{i}"
        assert video["metaTags"] == [
            {"property": "migration_ref", "value": f"lib/{i}"},
            {"property": "description", "value": "D"},
            {"property": "keywords", "value": "a, b"},
        ]


def test_a_crash_after_the_create_is_found_and_never_made_twice(launch, web):
    sim, _client, provider, _ = setup(launch, web)
    asset = row("lib/crashed", title="Crashed")
    claimed = time.time()
    made = provider.create(asset, asset.details.source_url)  # the worker dies before its ledger write
    again = provider.find("lib/crashed", claimed)
    assert (again.kind, again.remote_id) == (OutcomeKind.CREATED, made.remote_id)
    assert provider.find("lib/other", claimed).kind is OutcomeKind.NOT_FOUND
    assert sim.stats()["videos"] == 1 and sim.stats()["create_requests"] == 1


def test_meta_tags_are_read_merged_and_written_and_a_private_rows_words_stay_out_of_them(launch, web):
    _sim, client, provider, _ = setup(launch, web, processing_delay_s=5)
    public = row("lib/pub", "public", title="Pub", description="Shown", tags=("x", "y"), metadata={"s3_key": "k"})
    made = provider.create(public, public.details.source_url)
    assert held(client, made.remote_id)["metaTags"] == [
        {"property": "migration_ref", "value": "lib/pub"},
        {"property": "description", "value": "Shown"},
        {"property": "keywords", "value": "x, y"},
    ]
    assert "metadata: not carried by bunny" in " ".join(made.notes)
    private = row("lib/priv", "private", title="Priv", description="Secret words", tags=("hidden",))
    made = provider.create(private, private.details.source_url)
    client.update(made.remote_id, {"metaTags": [{"property": "vendor", "value": "v"}]})  # someone else's tag
    assert client.update(made.remote_id, {"title": "Priv"}).json()["success"] is True  # title only: tags kept
    assert provider._tag(made.remote_id, "Priv", provider._our_tags(private))
    tags = held(client, made.remote_id)["metaTags"]
    assert tags == [{"property": "vendor", "value": "v"}, {"property": "migration_ref", "value": "lib/priv"}]
    assert "Secret words" not in json.dumps(tags) and "description: not carried" in " ".join(made.notes)
    client.update(made.remote_id, {"metaTags": []})  # an update replaces the list whole
    assert held(client, made.remote_id)["metaTags"] == []


def test_webhooks_are_signed_v1_over_the_raw_body_and_only_finished_or_failed_is_read_back(launch, web, hooks):
    read_only_key = "read-only-api-key"
    _sim, client, provider, creds = setup(launch, web, webhook_url=hooks.url, webhook_secret=read_only_key)
    vid = client.fetch("https://m.example/a.mp4", "A").json()["id"]
    bad = client.fetch("https://m.example/corrupt.mp4", "B").json()["id"]
    deliveries = hooks.wait(2 + 5 + 1)  # Queued each, 4 resolutions + Finished, Failed
    assert len(deliveries) == 8
    seen = []
    for d in deliveries:
        expected = hmac.new(read_only_key.encode(), d.body, hashlib.sha256).hexdigest()
        assert d.headers["x-bunnystream-signature"] == expected
        assert (d.headers["x-bunnystream-signature-version"], d.headers["x-bunnystream-signature-algorithm"]) == (
            "v1",
            "hmac-sha256",
        )
        event = json.loads(d.body)
        assert set(event) == {"VideoLibraryId", "VideoGuid", "Status"} and event["VideoLibraryId"] == int(
            creds["library_id"]
        )
        read = provider.read_webhook(d.body, d.headers, [read_only_key], time.time(), 300)
        seen.append((event["VideoGuid"], event["Status"], read.confirm))
    assert sorted(s for s in seen if s[2]) == sorted([(vid, 3, True), (bad, 5, True)])
    assert all(not confirm for _, status, confirm in seen if status in (0, 4))  # 4 is only "playable"
    assert (
        provider.poll("", vid).video.target.value == "ready" and provider.poll("", bad).video.target.value == "rejected"
    )


def test_forged_webhooks_are_refused_and_the_genuine_one_taken(launch, web, hooks):
    secret = "read-only-api-key"
    sim, client, provider, _ = setup(launch, web, webhook_url=hooks.url, webhook_secret=secret, webhook_forged_rate=1.0)
    client.fetch("https://m.example/corrupt.mp4")
    deliveries = hooks.wait(4)  # Queued and Failed, each preceded by a forged copy
    verdicts = []
    for d in deliveries:
        try:
            provider.read_webhook(d.body, d.headers, [secret], time.time(), 300)
            verdicts.append("taken")
        except SignatureError:
            verdicts.append("refused")
    assert verdicts.count("refused") == 2 and verdicts.count("taken") == 2
    d = deliveries[-1]
    for changed in ({**d.headers, "x-bunnystream-signature-version": "v2"}, {}):
        with pytest.raises(SignatureError):
            provider.read_webhook(d.body, changed, [secret], time.time(), 300)
    with pytest.raises(SignatureError):
        provider.read_webhook(d.body + b" ", d.headers, [secret], time.time(), 300)  # not the exact bytes
    assert sim.stats()["webhooks_forged_sent"] == 2


def test_a_429_carries_retry_after_and_a_throttled_fetch_made_nothing(launch, web):
    sim, client, provider, _ = setup(launch, web, rate=1, burst=1)
    assert client.fetch("https://m.example/a.mp4").status_code == 200
    throttled = client.fetch("https://m.example/b.mp4")
    assert throttled.status_code == 429 and int(throttled.headers["Retry-After"]) >= 1
    outcome = provider.create(row("lib/t", title="T"), "https://m.example/t.mp4")
    assert outcome.kind is OutcomeKind.THROTTLED and outcome.retry_after >= 1
    assert sim.stats()["videos"] == 1 and sim.stats()["throttled"] == 2  # no lookup, no second fetch


def test_a_private_row_on_a_library_without_token_authentication_is_refused_before_any_request(launch, web):
    sim, _client, provider, _ = setup(launch, web, protected=False)
    outcome = provider.create(row("lib/p", "private", title="P"), "https://m.example/p.mp4")
    assert outcome.kind is OutcomeKind.REJECTED and "BunnyTokenAuthentication" in outcome.error
    default = provider.create(row("lib/d", None, title="D"), "https://m.example/d.mp4")  # DefaultPlayback signed
    assert default.kind is OutcomeKind.REJECTED and "default-signed" in default.error
    public = provider.create(row("lib/pub", "public", title="Pub"), "https://m.example/pub.mp4")
    assert public.kind is OutcomeKind.CREATED
    video = ready(provider, "lib/pub", public.remote_id)
    assert video.privacy == "public" and video.playback["policy"] == "public"
    assert web.get(video.playback["hls"]).status_code == 200  # no token authentication: anyone plays it
    assert sim.stats()["videos"] == 1 and sim.stats()["create_requests"] == 1


def test_a_token_protected_library_plays_only_with_a_valid_token_and_verify_signs_its_own(launch, web):
    _sim, client, provider, creds = setup(launch, web)
    made = provider.create(row("lib/s", "private", title="S"), "https://m.example/s.mp4?duration=20")
    video = ready(provider, "lib/s", made.remote_id)
    assert video.privacy == "signed" and video.playback["policy"] == "signed"  # read from tokenAuthEnabled
    vid, key, hls = made.remote_id, creds["token_key"], video.playback["hls"]
    assert client.play(vid).status_code == 403
    expires = int(time.time()) + 60
    play = client.play(vid, token=embed_token(key, vid, expires), expires=expires)
    assert play.status_code == 200 and play.json()["tokenAuthEnabled"] is True
    assert web.get(hls).status_code == 403  # the playlist without a token
    late = int(time.time()) - 1
    stale = {
        "token": cdn_token(key, f"/{vid}/", late, {"token_path": f"/{vid}/"}),
        "token_path": f"/{vid}/",
        "expires": late,
    }
    assert web.get(hls, params=stale).status_code == 403
    forged = {
        "token": cdn_token("not-the-key", f"/{vid}/", expires, {"token_path": f"/{vid}/"}),
        "token_path": f"/{vid}/",
        "expires": expires,
    }
    assert web.get(hls, params=forged).status_code == 403
    signed = provider.signed_playback(video.playback, 600, None)
    assert web.get(signed.manifest_url).status_code == 200

    def fetch(url: str) -> Fetched:
        answer = web.get(url)
        return Fetched(answer.status_code, answer.content, answer.url)

    checker = Checker("bunny", Tolerance(), Pace(0), fetch, {}, lambda p: provider.signed_playback(p, 600, None))
    item = {
        "asset_id": "lib/s",
        "state": "ready",
        "playback_info": video.playback,
        "duration_s": 20,
        "provider_duration_s": 20,
    }
    verdict = checker(item)
    assert verdict.status == "passed", verdict


def test_signing_needs_the_token_key_and_says_so(launch, web):
    sim, _client, _provider, creds = setup(launch, web)
    keyless = json.dumps({k: v for k, v in creds.items() if k != "token_key"})
    other = build("bunny", sim.url, lambda: keyless)
    with pytest.raises(SigningUnavailable, match="token_key"):
        other.signed_playback({"playback_id": "v", "hls": f"{sim.url}/_play/bunny/v/playlist.m3u8"}, 60, None)


def test_captions_go_base64_one_per_language_and_the_simulator_holds_the_file(launch, web):
    sim, client, provider, _ = setup(launch, web)
    made = provider.create(row("lib/c", title="C"), "https://m.example/c.mp4")
    ready(provider, "lib/c", made.remote_id)
    track = Track("https://c.example/en.srt", "en")
    upload = TrackUpload(read_caption(SRT), track.url)
    assert provider.attach_track(made.remote_id, track, upload, "English").kind is TrackResult.ATTACHED
    assert provider.attach_track(made.remote_id, track, upload, "English").kind is TrackResult.ATTACHED
    listed = provider.track_list(made.remote_id)
    assert [t.language for t in listed.tracks] == ["en"]
    [holding] = sim.text_tracks()
    [en] = holding["tracks"]
    assert (en["language"], en["name"], en["format"], en["uploads"]) == ("en", "English", "vtt", 2)
    assert en["content"].startswith("WEBVTT")  # converted from the SRT before it went
    refused = web.post(
        client.url(f"/videos/{made.remote_id}/captions/fr"),
        json={"srclang": "fr", "label": "Français", "captionsFile": base64.b64encode(b"not a caption").decode()},
        headers=client.headers,
    )
    assert refused.status_code == 400 and refused.json()["success"] is False
    gone = provider.attach_track("00000000-0000-0000-0000-000000000000", track, upload, "English")
    assert gone.kind is TrackResult.VIDEO_GONE


@pytest.mark.parametrize("srclang", ["pt-BR", "und", "eng", "EN", "p"])
def test_the_simulator_refuses_a_srclang_that_is_no_iso_639_1_code(launch, web, srclang):
    """Video_AddCaption's srclang: "The ISO 639-1 language code for the caption (e.g., 'en', 'fr')"."""
    _sim, client, provider, _ = setup(launch, web)
    made = provider.create(row("lib/l", title="L"), "https://m.example/l.mp4")
    ready(provider, "lib/l", made.remote_id)
    body = {"srclang": srclang, "label": srclang, "captionsFile": base64.b64encode(SRT).decode()}
    refused = web.post(client.url(f"/videos/{made.remote_id}/captions/{srclang}"), json=body, headers=client.headers)
    assert refused.status_code == 400 and "ISO 639-1" in refused.json()["message"]


@pytest.mark.parametrize(
    ("language", "result", "filed"),
    [
        ("pt-BR", TrackResult.ATTACHED, "pt"),  # its language subtag; the label keeps the tag
        ("zh-Hant-TW", TrackResult.ATTACHED, "zh"),
        ("iw", TrackResult.ATTACHED, "he"),  # a withdrawn code BCP 47 still reads
        ("und", TrackResult.REFUSED, None),  # no language to file it under: refused, never a guess
        ("fil", TrackResult.REFUSED, None),  # ISO 639-1 has no Filipino
    ],
)
def test_a_track_is_filed_under_its_iso_639_1_code_or_refused_with_why(launch, web, language, result, filed):
    sim, _client, provider, _ = setup(launch, web)
    made = provider.create(row("lib/t", title="T"), "https://m.example/t.mp4")
    ready(provider, "lib/t", made.remote_id)
    track = Track(f"https://c.example/{language}.srt", language)
    outcome = provider.attach_track(made.remote_id, track, TrackUpload(read_caption(SRT), track.url), language)
    assert outcome.kind is result
    held = [t["language"] for h in sim.text_tracks() for t in h["tracks"]]
    if filed:
        assert outcome.remote_track_id == filed and held == [filed]
        (listed,) = provider.track_list(made.remote_id).tracks
        assert provider.track_matches(listed, track, "")  # the look after a lost answer finds it
    else:
        assert "ISO 639-1" in outcome.error and held == []
