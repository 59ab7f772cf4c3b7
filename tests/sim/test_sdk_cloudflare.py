"""The "cloudflare" profile driven by Cloudflare's official Python SDK (cloudflare 5.9.0, pinned in the dev extras).

The SDK parses every answer into its own models, so a simulator that drifts from the
real API's shapes fails here. Each test also checks one documented behaviour: the
per-user call budget and its 5-minute block, the cap on videos in progress, the storage
cap, the source fetch (HEAD and range GET), `input` over the deprecated `url`, the one
webhook per account and the rate-limit header forms. max_retries=0 everywhere: the SDK
would otherwise retry a 429 itself.
"""

from __future__ import annotations

import json
import time

import cloudflare
import pytest

from tests.sim.support import verify_cloudflare, wait_for

TOKEN, ACCOUNT = "cf-sdk-token", "023e105f4ecef8ad9ca31a8372d0c353"


@pytest.fixture
def stream(launch):
    """start(**config) -> (sim, SDK client) for a cloudflare simulator with the given knobs."""
    clients = []

    def start(**config):
        sim = launch("cloudflare", token=TOKEN, account_id=ACCOUNT, **config)
        client = cloudflare.Cloudflare(api_token=TOKEN, base_url=sim.url, max_retries=0)
        clients.append(client)
        return sim, client

    yield start
    for client in clients:
        client.close()


def _copy(client, source: str, ref: str = "lib/1", **extra):
    return client.stream.copy.create(
        account_id=ACCOUNT, input=source, creator=f"vm-{ref}", meta={"migration_ref": ref}, **extra
    )


def _state(client, uid: str) -> str:
    return client.stream.get(identifier=uid, account_id=ACCOUNT).status.state


def test_sdk_copies_by_input_or_url_then_gets_and_lists(stream):
    sim, client = stream(processing_delay_s=0.3)
    by_input = _copy(client, "https://media.example.com/a.mp4?duration=7.5", ref="lib/a", require_signed_urls=True)
    assert by_input.status.state == "downloading" and by_input.duration == -1 and by_input.require_signed_urls
    by_url = client.stream.copy.create(account_id=ACCOUNT, url="https://media.example.com/b.mp4", creator="vm-lib/b")
    assert by_url.uid != by_input.uid and by_url.creator == "vm-lib/b"
    # The simulator records which field carried the source: the adapter should send `input`.
    assert [entry["source_field"] for entry in sim.requests_log()] == ["input", "url"]

    assert wait_for(lambda: _state(client, by_input.uid) == "ready", timeout=3)
    ready = client.stream.get(identifier=by_input.uid, account_id=ACCOUNT)
    assert ready.ready_to_stream and ready.duration == 7.5 and ready.meta["migration_ref"] == "lib/a"
    listed = client.stream.list(account_id=ACCOUNT, creator="vm-lib/a")
    assert [video.uid for video in listed] == [by_input.uid]
    assert {video.uid for video in client.stream.list(account_id=ACCOUNT)} == {by_input.uid, by_url.uid}
    with pytest.raises(cloudflare.NotFoundError):
        client.stream.get(identifier="0" * 32, account_id=ACCOUNT)
    with pytest.raises(cloudflare.BadRequestError) as refused:
        client.stream.copy.create(account_id=ACCOUNT, input="not a url")
    assert refused.value.body["errors"][0]["code"] == 10010


def test_sdk_every_call_counts_against_the_budget_and_going_over_blocks_every_call(stream):
    sim, client = stream(budget_quota=4, budget_window_s=60, budget_block_s=2.0, rate_headers=True)
    uid = _copy(client, "https://media.example.com/a.mp4").uid  # 1: a create
    client.stream.list(account_id=ACCOUNT)  # 2: a list
    client.stream.get(identifier=uid, account_id=ACCOUNT)  # 3: a get
    raw = client.stream.with_raw_response.get(identifier=uid, account_id=ACCOUNT)  # 4: the last one allowed
    assert raw.headers["Ratelimit-Policy"] == '"burst";q=4;w=60'
    assert raw.headers["Ratelimit"].startswith('"default";r=0;t=')

    with pytest.raises(cloudflare.RateLimitError) as over:
        client.stream.list(account_id=ACCOUNT)  # 5: over the budget, and the block starts
    assert over.value.status_code == 429 and int(over.value.response.headers["retry-after"]) == 2
    assert over.value.body["errors"][0]["code"] == 971
    blocked_at = time.monotonic()
    # During the block every kind of call is refused, a create as much as a read.
    for call in (
        lambda: _copy(client, "https://media.example.com/b.mp4", ref="lib/b"),
        lambda: client.stream.get(identifier=uid, account_id=ACCOUNT),
        lambda: client.stream.list(account_id=ACCOUNT),
    ):
        with pytest.raises(cloudflare.RateLimitError):
            call()
    stats = sim.stats()
    assert stats["blocks"] == 1 and stats["budget_throttled"] == 4 and stats["videos"] == 1

    time.sleep(max(0.0, 2.1 - (time.monotonic() - blocked_at)))
    assert [v.uid for v in client.stream.list(account_id=ACCOUNT)] == [uid]  # a fresh window after the block
    assert sim.stats()["blocks"] == 1


def test_sdk_a_create_past_the_cap_on_videos_in_progress_is_refused(stream):
    # Stream: "up to 120 videos queued or being encoded simultaneously"; a cap of 2 shows the same.
    sim, client = stream(max_in_flight=2, processing_delay_s=2.0)
    _copy(client, "https://media.example.com/hang.mp4", ref="stuck")  # in progress for ever
    _copy(client, "https://media.example.com/corrupt.mp4", ref="bad")  # in progress, then errored
    with pytest.raises(cloudflare.RateLimitError) as busy:
        _copy(client, "https://media.example.com/c.mp4", ref="c")
    assert busy.value.body["errors"][0]["code"] == 10016 and "retry-after" not in busy.value.response.headers
    sim.patch_config({"in_flight_status": 413})  # the FAQ allows either status
    with pytest.raises(cloudflare.APIStatusError) as too_large:
        _copy(client, "https://media.example.com/c.mp4", ref="c")
    assert too_large.value.status_code == 413
    assert sim.stats()["in_flight_refused"] == 2 and sim.stats()["videos"] == 2
    # An errored video does not count: once it is done there is room for one more, and only one.
    assert wait_for(lambda: sim.stats()["errored_videos"] == 1, timeout=5)
    assert _copy(client, "https://media.example.com/c.mp4", ref="c").status.state == "downloading"
    with pytest.raises(cloudflare.APIStatusError):
        _copy(client, "https://media.example.com/d.mp4", ref="d")


def test_cloudflare_defaults_cap_120_in_progress_and_budget_1200_per_5_minutes(launch):
    sim = launch("cloudflare", max_in_flight=None, budget_quota=None)
    limits = {k: sim.config_dict()[k] for k in ("max_in_flight", "budget_quota", "budget_window_s", "budget_block_s")}
    assert limits == {"max_in_flight": 120, "budget_quota": 1200, "budget_window_s": 300.0, "budget_block_s": 300.0}


def test_sdk_a_create_once_the_storage_minutes_are_used_up_is_413(stream):
    sim, client = stream(storage_minutes=2, processing_delay_s=0.05)
    _copy(client, "https://media.example.com/a.mp4?duration=90", ref="a")
    broken = _copy(client, "https://media.example.com/corrupt.mp4?duration=600", ref="bad")  # 11.5 min held...
    with pytest.raises(cloudflare.APIStatusError) as full:
        _copy(client, "https://media.example.com/b.mp4?duration=1", ref="b")
    assert full.value.status_code == 413 and full.value.body["errors"][0]["code"] == 10011
    # ...until it errors: an errored video holds no storage. 90 s of the 120 are held then.
    assert wait_for(lambda: _state(client, broken.uid) == "error", timeout=3)
    _copy(client, "https://media.example.com/b.mp4?duration=60", ref="b")
    with pytest.raises(cloudflare.APIStatusError):
        _copy(client, "https://media.example.com/c.mp4?duration=1", ref="c")  # 150 s held: used up
    assert sim.stats()["storage_refused"] == 2


@pytest.mark.parametrize(
    "path, fetched",
    [
        ("/no-head.mp4", [("HEAD", "/no-head.mp4", None)]),  # a presigned S3 GET URL answers HEAD with 403
        ("/no-size.mp4", [("HEAD", "/no-size.mp4", None)]),
        ("/no-range.mp4", [("HEAD", "/no-range.mp4", None), ("GET", "/no-range.mp4", "bytes=0-1023")]),
        ("/missing.mp4", [("HEAD", "/missing.mp4", None)]),
    ],
)
def test_sdk_a_source_without_head_and_range_gets_ends_in_fetch_error(stream, origin, path, fetched):
    sim, client = stream(check_source=True, processing_delay_s=0.1)
    video = _copy(client, origin.url + path)
    assert video.status.state == "downloading"  # the copy is accepted; the fetch fails after it
    assert wait_for(lambda: _state(client, video.uid) == "error", timeout=3)
    failed = client.stream.get(identifier=video.uid, account_id=ACCOUNT)
    assert failed.status.error_reason_code == "ERR_FETCH_ORIGIN_ERROR" and failed.duration == -1
    assert failed.status.error_reason_text == "The video failed to download from the URL"
    assert origin.requests == fetched
    assert sim.stats()["source_checks_failed"] == 1 and sim.stats()["errored_videos"] == 1


def test_sdk_a_source_that_answers_head_and_ranges_is_ingested(stream, origin):
    sim, client = stream(check_source=True, processing_delay_s=0.2)
    direct, moved = _copy(client, origin.url + "/ok.mp4", ref="a"), _copy(client, origin.url + "/moved.mp4", ref="b")
    assert wait_for(lambda: {_state(client, direct.uid), _state(client, moved.uid)} == {"ready"}, timeout=3)
    assert [r for r in origin.requests if r[1] == "/ok.mp4"].count(("GET", "/ok.mp4", "bytes=0-1023")) == 2
    assert sim.stats()["source_checks_failed"] == 0


def test_check_source_fetches_nothing_off_loopback(stream):
    _sim, client = stream(check_source=True)
    video = _copy(client, "https://media.example.com/a.mp4")
    assert wait_for(lambda: _state(client, video.uid) == "error", timeout=3)


def test_without_check_source_the_demo_sources_are_ingested(stream):
    _sim, client = stream()
    video = _copy(client, "https://media.example.com/a.mp4")
    assert wait_for(lambda: _state(client, video.uid) == "ready", timeout=3)


def test_sdk_one_webhook_per_account_and_a_second_put_rotates_the_secret(stream, hooks):
    sim, client = stream()
    first = client.stream.webhooks.update(account_id=ACCOUNT, body_notification_url_2=hooks.url + "?old")
    second = client.stream.webhooks.update(account_id=ACCOUNT, body_notification_url_1=hooks.url)
    assert first.secret and second.secret and first.secret != second.secret
    assert second.notification_url == hooks.url and second.modified is not None
    assert client.stream.webhooks.get(account_id=ACCOUNT).secret == second.secret
    config = sim.config_dict()
    assert (config["webhook_url"], config["webhook_secret"]) == (hooks.url, second.secret)  # the first is gone

    uid = _copy(client, "https://media.example.com/a.mp4?duration=3").uid
    [delivery] = hooks.wait(1)
    assert verify_cloudflare(second.secret, delivery.headers, delivery.body)
    assert not verify_cloudflare(first.secret, delivery.headers, delivery.body)
    assert json.loads(delivery.body)["uid"] == uid

    client.stream.webhooks.delete(account_id=ACCOUNT)
    assert sim.config_dict()["webhook_url"] is None
    with pytest.raises(cloudflare.NotFoundError):
        client.stream.webhooks.get(account_id=ACCOUNT)
    with pytest.raises(cloudflare.BadRequestError):
        client.stream.webhooks.update(account_id=ACCOUNT, body_notification_url_2="ftp://x")


def test_sdk_reads_the_older_rate_limit_header_form_behind_its_knob(stream):
    _sim, client = stream(budget_quota=1200, rate_headers=True, legacy_rate_headers=True)
    headers = client.stream.with_raw_response.list(account_id=ACCOUNT).headers
    assert headers["ratelimit-limit"] == "1200" and headers["ratelimit-remaining"] == "1199"
    assert 299 <= int(headers["ratelimit-reset"]) <= 300
    assert "Ratelimit-Policy" not in headers and "Ratelimit" not in headers


def test_doctor_says_where_the_accounts_one_webhook_points(stream, hooks):
    """Cloudflare keeps one webhook per account: pointing it at the stack takes it from any other
    integration, so doctor names where it points now (set by the official SDK here)."""
    from types import SimpleNamespace

    from migrator.providers import build
    from migrator_cli.doctor import _webhook_target

    sim, client = stream()
    adapter = build("cloudflare", sim.url, lambda: json.dumps({"account_id": ACCOUNT, "api_token": TOKEN}))
    ours = "https://hooks.example/live/webhook"
    target = SimpleNamespace(output=lambda key: ours, provider=lambda *a: adapter)

    (unset,) = _webhook_target(target, None)
    client.stream.webhooks.update(account_id=ACCOUNT, body_notification_url_1=hooks.url)
    (elsewhere,) = _webhook_target(target, None)
    client.stream.webhooks.update(account_id=ACCOUNT, body_notification_url_1=ours)
    (here,) = _webhook_target(target, None)

    assert not unset.ok and "no webhook" in unset.detail
    assert not elsewhere.ok and hooks.url in elsewhere.detail and "one webhook per account" in elsewhere.fix
    assert here.ok


# --- what a create carries, held by the simulator as Stream holds it ------------------------------


def test_sdk_reads_back_what_our_create_carried_each_in_streams_own_field(stream):
    from migrator.messages import AssetMessage
    from migrator.providers import AssetRef, CreateDefaults, build

    sim, client = stream()
    row = AssetMessage(
        "lib/full",
        "https://media.example.com/full.mp4?duration=40",
        title="A title",
        duration_s=40.0,
        description="About it",
        tags=("a", "b"),
        metadata={"author": "Ada"},
        privacy="signed",
        poster_time_s=10.0,
        created_at="2019-05-01T10:00:00Z",
        folder="talks",
    )
    defaults = CreateDefaults("signed", {"cloudflare": {"allowedOrigins": ["example.com"]}})
    cf = build(
        "cloudflare", sim.url, lambda: json.dumps({"account_id": ACCOUNT, "api_token": TOKEN}), create_defaults=defaults
    )
    cf.http.session.trust_env = False
    outcome = cf.create(AssetRef(row.asset_id, row.title, 0, row), row.source_url)
    assert outcome.notes == ()
    held = client.stream.get(identifier=outcome.remote_id, account_id=ACCOUNT)
    assert held.require_signed_urls is True and held.allowed_origins == ["example.com"]
    assert held.thumbnail_timestamp_pct == 0.25
    assert {k: held.meta[k] for k in ("name", "description", "tags", "author", "created_at", "folder")} == {
        "name": "A title",
        "description": "About it",
        "tags": ["a", "b"],
        "author": "Ada",
        "created_at": "2019-05-01T10:00:00Z",
        "folder": "talks",
    }
    assert cf.poll(row.asset_id, outcome.remote_id).video.privacy == "signed"  # our reader agrees


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("thumbnailTimestampPct", 1.5),
        ("thumbnailTimestampPct", "half"),
        ("requireSignedURLs", "yes"),
        ("allowedOrigins", "example.com"),
        ("meta", ["not", "a", "map"]),
        ("creator", "c" * 65),
    ],
)
def test_stream_refuses_what_its_api_refuses(stream, field, value):
    _, client = stream()
    with pytest.raises(cloudflare.BadRequestError) as refused:
        client.stream.copy.create(
            account_id=ACCOUNT, input="https://media.example.com/a.mp4", extra_body={field: value}
        )
    assert field in refused.value.body["errors"][0]["message"]


# --- signed playback: what `migrator verify` fetches of a video created with requireSignedURLs ---------------


def _signed_video(stream, duration: float = 12.0):
    """(sim, SDK client, adapter, the adapter's ready Video) for a video our create made with requireSignedURLs."""
    from migrator.messages import AssetMessage
    from migrator.providers import AssetRef, build

    sim, client = stream(processing_delay_s=0.05)
    cf = build("cloudflare", sim.url, lambda: json.dumps({"account_id": ACCOUNT, "api_token": TOKEN}))
    cf.http.session.trust_env = False
    row = AssetMessage("lib/signed", f"https://media.example.com/s.mp4?duration={duration:g}", privacy="signed")
    made = cf.create(AssetRef(row.asset_id, "S", 0, row), row.source_url)
    assert wait_for(lambda: cf.poll(row.asset_id, made.remote_id).video.target is not None, timeout=3)
    return sim, client, cf, cf.poll(row.asset_id, made.remote_id).video


def test_a_signed_videos_playback_refuses_its_plain_url_and_plays_at_a_token_in_place_of_its_uid(stream, web):
    """securing-your-stream: requireSignedURLs "will prevent any public links ... from working"; the player's
    manifest is `https://customer-<CODE>.cloudflarestream.com/<TOKEN>/manifest/video.m3u8`."""
    from urllib.parse import urljoin

    _sim, client, _cf, video = _signed_video(stream)
    assert client.stream.get(identifier=video.remote_id, account_id=ACCOUNT).require_signed_urls is True
    plain = video.playback["hls"]
    assert video.playback["policy"] == "signed" and f"/{video.remote_id}/manifest/video.m3u8" in plain
    assert web.get(plain).status_code == 403
    assert web.get(plain + "?token=anything").status_code == 404  # Stream reads no token from the query

    token = client.stream.token.create(video.remote_id, account_id=ACCOUNT).token  # no body: valid an hour
    master = web.get(plain.replace(video.remote_id, token))
    assert master.status_code == 200 and master.text.startswith("#EXTM3U")
    variant = urljoin(master.url, master.text.splitlines()[-1])  # relative: it keeps the token's path
    assert token in variant and web.get(variant).status_code == 200
    forged = token[:-2] + ("xx" if not token.endswith("xx") else "yy")
    assert web.get(plain.replace(video.remote_id, forged)).status_code == 403
    short = client.stream.token.create(video.remote_id, account_id=ACCOUNT, exp=int(time.time()) + 2).token
    assert web.get(plain.replace(video.remote_id, short)).status_code == 200
    time.sleep(3.1)
    assert web.get(plain.replace(video.remote_id, short)).status_code == 403  # expired
    other = _copy(client, "https://media.example.com/o.mp4", ref="other").uid
    assert wait_for(lambda: _state(client, other) == "ready", timeout=3)
    assert web.get(plain.replace(video.remote_id, other)).status_code == 200  # a public video's plain URL plays


def test_verify_checks_a_signed_video_through_a_token_stream_makes_for_it(stream):
    """`migrator verify` of a Stream video made with requireSignedURLs: CloudflareProvider.signed_playback asks
    /token for one (an `exp` of the verify's TTL) and the checker fetches the manifest and its variant with it."""
    from decimal import Decimal

    from migrator_cli.verify import TOKEN_TTL_S, Checkpoint, Tolerance, checker, run_verify

    sim, _client, cf, video = _signed_video(stream, duration=12.0)
    signed = cf.signed_playback(video.playback, TOKEN_TTL_S, None)
    assert signed.query == () and video.remote_id not in signed.manifest_url
    [asked] = [e for e in sim.requests_log(None) if e["op"] == "token"]
    assert asked["status"] == 200
    item = {
        "asset_id": "lib/signed",
        "state": "ready",
        "remote_id": video.remote_id,
        "duration_s": Decimal("12"),
        "provider_duration_s": Decimal(str(video.duration_s)),
        "playback_info": video.playback,
    }
    check = checker(
        "cloudflare",
        Tolerance(1.0),
        rate=0,
        timeout_s=5,
        allow_private=True,
        mux_hosts={},
        signer=lambda playback: cf.signed_playback(playback, TOKEN_TTL_S, None),
    )
    summary = run_verify([item], check, checkpoint=Checkpoint(None))
    assert (summary.passed, summary.signed, summary.failed) == (1, 0, 0), summary.lines()
    assert len([e for e in sim.requests_log(None) if e["op"] == "token"]) == 2


def test_signing_is_unavailable_without_a_uid_and_hls_or_a_token_and_a_failed_token_is_checked_next_run(stream):
    from migrator.providers import SigningUnavailable, build
    from migrator.providers.http import TransportError

    sim, _client, cf, video = _signed_video(stream)
    with pytest.raises(SigningUnavailable, match="no Stream uid and HLS URL"):
        cf.signed_playback({"policy": "signed"}, 900, None)
    refused = build("cloudflare", sim.url, lambda: json.dumps({"account_id": ACCOUNT, "api_token": "wrong"}))
    refused.http.session.trust_env = False
    with pytest.raises(SigningUnavailable, match="HTTP 401"):
        refused.signed_playback(video.playback, 900, None)
    sim.patch_config({"unavailable_rate": 1.0})
    with pytest.raises(TransportError):
        cf.signed_playback(video.playback, 900, None)
