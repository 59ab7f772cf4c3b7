"""Each provider adapter against its documentation: the requests it builds, and what it reads from
the documented answers, events and headers.

No network: a recording session answers with canned bodies. The bodies marked "documented"
are the providers' own examples (Mux's OpenAPI file, Cloudflare's Stream docs, api.video's
OpenAPI file and docs), so a misreading of a field name or a status fails here, before
any emulator run could hide it behind our own simulator's matching misreading.

Long (about 700 lines, 40 tests) as a table is long: each test is one documented behaviour of one
adapter and stands alone (the newer targets, Bunny and Vimeo, have modules of their own).
"""

from __future__ import annotations

import ast
import base64
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests
from migrator.fate import OutcomeKind
from migrator.providers import AssetRef, CredentialsError, EventError, build
from migrator.providers.keys import asset_tag, idempotency_key, passthrough_for
from migrator.signatures import SignatureError
from migrator.states import State

NOW = 1_800_000_000.0


class Session(requests.Session):
    """Records every request and answers with the next canned (status, body, headers)."""

    def __init__(self, *answers):
        super().__init__()
        self.answers = list(answers)
        self.sent: list[requests.PreparedRequest] = []

    def send(self, request, **kwargs):
        self.sent.append(request)
        status, body, headers = (*self.answers.pop(0), {})[:3] if self.answers else (200, {}, {})
        response = requests.Response()
        response.status_code = status
        response._content = json.dumps(body).encode() if not isinstance(body, bytes) else body
        response.headers.update(headers)
        return response

    def json(self, i=-1):
        return json.loads(self.sent[i].body)


MUX_SECRET = json.dumps({"token_id": "tok-id", "token_secret": "tok-secret"})
CF_SECRET = json.dumps({"account_id": "023e105f4ecef8ad9ca31a8372d0c353", "api_token": "cf-token"})
API_SECRET = json.dumps({"api_key": "api-key"})


def provider(name, *answers, secret="t", base=None):
    session = Session(*answers)
    made = build(name, base or ("https://p.example" if name == "generic" else None), lambda: secret, clock=lambda: NOW)
    made.http.session = session
    return made, session


ASSET = AssetRef("library/intro-2019", title="Intro", generation=0)
SOURCE = "https://media.example.com/intro.mp4"


# --- Mux ------------------------------------------------------------------------------------

# Documented: the 201 example of POST /video/v1/assets in Mux's OpenAPI file.
MUX_CREATED = {
    "data": {
        "status": "preparing",
        "playback_ids": [{"policy": "public", "id": "uNbxnGLKJ00yfbijDO8COxTOyVKT01xpxW"}],
        "mp4_support": "none",
        "master_access": "none",
        "id": "SqQnqz6s5MBuXGvJaUWdXuXM93J9Q2yv",
        "created_at": "1607452572",
    }
}


def test_mux_create_is_the_documented_request():
    mux, session = provider("mux", (201, MUX_CREATED), secret=MUX_SECRET)
    outcome = mux.create(ASSET, SOURCE)
    assert (outcome.kind, outcome.remote_id) == (OutcomeKind.CREATED, "SqQnqz6s5MBuXGvJaUWdXuXM93J9Q2yv")
    request = session.sent[0]
    assert (request.method, request.url) == ("POST", "https://api.mux.com/video/v1/assets")
    assert request.headers["Authorization"] == "Basic " + base64.b64encode(b"tok-id:tok-secret").decode()
    assert session.json() == {
        "inputs": [{"url": SOURCE}],
        "playback_policies": ["signed"],  # a row with no privacy: DefaultPlayback, signed unless set
        "passthrough": "library/intro-2019",
        "meta": {"external_id": idempotency_key("library/intro-2019"), "title": "Intro"},
    }
    assert "Idempotency-Key" not in request.headers  # Mux documents none


def test_mux_passthrough_carries_the_id_or_its_hash_when_too_long():
    assert passthrough_for("a" * 255) == "a" * 255
    long_astral = "🎬" * 128  # 128 characters, 256 UTF-16 units: over Mux's 255
    assert passthrough_for(long_astral).startswith("sha256:") and len(passthrough_for(long_astral)) <= 255


@pytest.mark.parametrize(
    ("status", "body", "headers", "kind", "retry_after"),
    [
        (429, {"error": {"type": "too_many_requests", "messages": ["Too many requests, retry later."]}}, {}, "t", None),
        (429, {"errors": ["Too many requests, retry later."]}, {"Retry-After": "2"}, "t", 2.0),
        (400, {"error": {"type": "invalid_parameters", "messages": ["input must be a URL"]}}, {}, "r", None),
        (401, {"error": {"type": "unauthorized", "messages": ["Unauthorized request"]}}, {}, "x", None),
        (500, {"error": {"type": "internal", "messages": []}}, {}, "x", None),
    ],
)
def test_mux_failures_are_classified(status, body, headers, kind, retry_after):
    mux, _ = provider("mux", (status, body, headers), secret=MUX_SECRET)
    outcome = mux.create(ASSET, SOURCE)
    expected = {"t": OutcomeKind.THROTTLED, "r": OutcomeKind.REJECTED, "x": OutcomeKind.TRANSIENT}[kind]
    assert outcome.kind is expected and outcome.retry_after == retry_after
    if expected is OutcomeKind.REJECTED:
        assert "input must be a URL" in outcome.error


def mux_asset(asset_id, passthrough, created, status="preparing", **fields):
    return {"id": asset_id, "passthrough": passthrough, "created_at": str(created), "status": status, **fields}


def test_mux_find_pages_newest_first_back_to_the_claim_and_skips_errored():
    page1 = {
        "data": [mux_asset("a9", "other", NOW - 10), mux_asset("a8", "library/intro-2019", NOW - 20, "errored")],
        "next_cursor": "c2",
    }
    page2 = {"data": [mux_asset("a7", "library/intro-2019", NOW - 30)], "next_cursor": "c3"}
    mux, session = provider("mux", (200, page1), (200, page2), secret=MUX_SECRET)
    outcome = mux.find("library/intro-2019", created_after=NOW - 60)
    assert (outcome.kind, outcome.remote_id) == (OutcomeKind.CREATED, "a7")
    assert [r.url for r in session.sent] == [
        "https://api.mux.com/video/v1/assets?limit=100",
        "https://api.mux.com/video/v1/assets?limit=100&cursor=c2",
    ]


def test_mux_find_stops_once_a_page_reaches_before_the_claim():
    old_page = {"data": [mux_asset("a1", "other", NOW - 3600)], "next_cursor": "c2"}
    mux, session = provider("mux", (200, old_page), secret=MUX_SECRET)
    assert mux.find("library/intro-2019", created_after=NOW - 60).kind is OutcomeKind.NOT_FOUND
    assert len(session.sent) == 1  # the claim was a minute ago: nothing older can be ours


def test_mux_poll_reads_the_documented_asset():
    ready = {"data": mux_asset("a7", "library/intro-2019", NOW, "ready", duration=23.8)}
    errored = {
        "data": mux_asset(
            "a8", "x", NOW, "errored", errors={"type": "invalid_input", "messages": ["Failed to download"]}
        )
    }
    mux, session = provider("mux", (200, ready), (200, errored), (404, {}), secret=MUX_SECRET)
    poll = mux.poll("library/intro-2019", "a7")
    assert session.sent[0].url == "https://api.mux.com/video/v1/assets/a7"
    assert (poll.video.target, poll.video.duration_s, poll.video.ref) == (State.READY, 23.8, "library/intro-2019")
    poll = mux.poll("x", "a8")
    assert poll.video.target is State.REJECTED and poll.video.error == "provider: Failed to download"
    assert mux.poll("x", "gone").http_status == 404


# Mux's own SDK test (muxinc/mux-elixir, test/mux/webhooks_test.exs) and its docs' example header.
MUX_SDK_SECRET = "SuperSecret123"
MUX_SDK_BODY = b'{"test":"body"}'
MUX_VECTORS = [
    (1565125718, "t=1565125718,v1=854ece4c22acef7c66b57d4e504153bc512595e8e9c772ece2a68150548c19a7"),
    (1565220904, "t=1565220904,v1=20c75c1180c701ee8a796e81507cfd5c932fc17cf63a4a55566fd38da3a2d3d2"),
]


@pytest.mark.parametrize(("at", "header"), MUX_VECTORS)
def test_mux_signature_matches_the_published_examples(at, header):
    mux, _ = provider("mux", secret=MUX_SECRET)
    # The published body is not an event: the signature checks out, then the body is refused as one.
    with pytest.raises(EventError, match="event type"):
        mux.read_webhook(MUX_SDK_BODY, {"Mux-Signature": header}, [MUX_SDK_SECRET], at + 10, 300)
    with pytest.raises(SignatureError, match="tolerance"):  # as Mux's SDK: too old past 300 s
        mux.read_webhook(MUX_SDK_BODY, {"Mux-Signature": header}, [MUX_SDK_SECRET], at + 301, 300)
    with pytest.raises(SignatureError, match="no valid signature"):
        mux.read_webhook(MUX_SDK_BODY, {"Mux-Signature": header}, ["another-secret"], at, 300)


def test_mux_webhook_ready_and_errored_events():
    from migrator.signatures import Scheme, sign

    ready = {
        "type": "video.asset.ready",
        "id": "3a56ac3d-33da-4366-855b-f592d898409d",
        "created_at": "2026-11-30T10:00:00.000000Z",
        "object": {"type": "asset", "id": "a7"},
        "environment": {"id": "env", "name": "Production"},
        "data": mux_asset("a7", "library/intro-2019", NOW, "ready", duration=23.8),
        "attempts": [],
    }
    mux, _ = provider("mux", secret=MUX_SECRET)
    body = json.dumps(ready).encode()
    # Two v1 entries, as during a secret roll: either may match.
    headers = {"mux-signature": sign(Scheme.MUX, body, "new", NOW)["mux-signature"] + ",v1=" + "0" * 64}
    event = mux.read_webhook(body, headers, ["old", "new"], NOW, 300)
    assert (event.event_id, event.asset_id, event.remote_id) == (ready["id"], "library/intro-2019", "a7")
    assert (event.video.target, event.video.duration_s) == (State.READY, 23.8)
    errored = {**ready, "type": "video.asset.errored", "data": {**ready["data"], "status": "errored"}}
    errored["data"]["errors"] = {"type": "invalid_input", "messages": ["Unsupported codec"]}
    body = json.dumps(errored).encode()
    event = mux.read_webhook(body, sign(Scheme.MUX, body, "new", NOW), ["new"], NOW, 300)
    assert event.video.target is State.REJECTED and "Unsupported codec" in event.video.error
    created = {**ready, "type": "video.asset.created", "data": {**ready["data"], "status": "preparing"}}
    body = json.dumps(created).encode()
    assert mux.read_webhook(body, sign(Scheme.MUX, body, "new", NOW), ["new"], NOW, 300).video is None


# --- Cloudflare Stream -------------------------------------------------------------------

# Documented: the webhook body example in Cloudflare's "Use webhooks" page (a video object).
CF_VIDEO = {
    "uid": "6b9e68b07dfee8cc2d116e4c51d6a957",
    "creator": None,
    "thumbnail": "https://customer-f33zs165nr7gyfy4.cloudflarestream.com/6b9e68b07dfee8cc2d116e4c51d6a957/thumbnails/thumbnail.jpg",
    "thumbnailTimestampPct": 0,
    "readyToStream": True,
    "status": {"state": "ready", "pctComplete": "39.000000", "errorReasonCode": "", "errorReasonText": ""},
    "meta": {
        "filename": "small.mp4",
        "filetype": "video/mp4",
        "name": "small.mp4",
        "relativePath": "null",
        "type": "video/mp4",
    },
    "created": "2022-06-30T17:53:12.512033Z",
    "modified": "2022-06-30T17:53:21.774299Z",
    "size": 383631,
    "preview": "https://customer-f33zs165nr7gyfy4.cloudflarestream.com/6b9e68b07dfee8cc2d116e4c51d6a957/watch",
    "allowedOrigins": [],
    "requireSignedURLs": False,
    "uploaded": "2022-06-30T17:53:12.511981Z",
    "uploadExpiry": "2022-07-01T17:53:12.511973Z",
    "maxSizeBytes": None,
    "maxDurationSeconds": None,
    "duration": 5.5,
    "input": {"width": 560, "height": 320},
    "playback": {"hls": "https://x/manifest/video.m3u8", "dash": "https://x/manifest/video.mpd"},
    "watermark": None,
}


def cf_envelope(result, success=True, errors=()):
    return {"success": success, "errors": list(errors), "messages": [], "result": result}


def test_cloudflare_copy_is_the_documented_request():
    created = {**CF_VIDEO, "readyToStream": False, "status": {"state": "downloading"}, "duration": -1}
    cf, session = provider("cloudflare", (200, cf_envelope(created)), secret=CF_SECRET)
    outcome = cf.create(ASSET, SOURCE)
    assert (outcome.kind, outcome.remote_id) == (OutcomeKind.CREATED, "6b9e68b07dfee8cc2d116e4c51d6a957")
    request = session.sent[0]
    assert request.url == "https://api.cloudflare.com/client/v4/accounts/023e105f4ecef8ad9ca31a8372d0c353/stream/copy"
    assert request.headers["Authorization"] == "Bearer cf-token"
    body = session.json()
    assert body == {
        "input": SOURCE,  # `url` is deprecated in its favour
        "creator": asset_tag("library/intro-2019"),
        "meta": {
            "name": "Intro",
            "migration_ref": "library/intro-2019",
            "migration_key": idempotency_key(ASSET.asset_id),
        },
        "requireSignedURLs": True,  # a row with no privacy: DefaultPlayback, signed unless set
    }
    assert len(body["creator"]) <= 64  # the API's maxLength


def test_cloudflare_find_uses_the_exact_creator_filter_and_skips_errored():
    ours = {**CF_VIDEO, "uid": "v2", "meta": {"migration_ref": "library/intro-2019"}}
    errored = {**ours, "uid": "v1", "status": {"state": "error", "errorReasonCode": "ERR_NON_VIDEO"}}
    cf, session = provider("cloudflare", (200, cf_envelope([errored, ours])), secret=CF_SECRET)
    outcome = cf.find("library/intro-2019", created_after=NOW - 60)
    assert (outcome.kind, outcome.remote_id) == (OutcomeKind.CREATED, "v2")
    assert f"creator={asset_tag('library/intro-2019')}" in session.sent[0].url


@pytest.mark.parametrize("spelling", ["errorReason", "errReason"])  # the docs use both
def test_cloudflare_error_state_carries_its_reason(spelling):
    video = {
        **CF_VIDEO,
        "status": {"state": "error", f"{spelling}Code": "ERR_MALFORMED_VIDEO", f"{spelling}Text": "bad"},
    }
    cf, _ = provider("cloudflare", (200, cf_envelope(video)), secret=CF_SECRET)
    poll = cf.poll("x", "6b9e68b07dfee8cc2d116e4c51d6a957")
    assert poll.video.target is State.REJECTED and poll.video.error == "provider: ERR_MALFORMED_VIDEO: bad"


def test_cloudflare_duration_minus_one_means_unknown_while_it_works():
    video = {**CF_VIDEO, "readyToStream": False, "status": {"state": "inprogress", "pctComplete": "10"}, "duration": -1}
    cf, _ = provider("cloudflare", (200, cf_envelope(video)), secret=CF_SECRET)
    poll = cf.poll("x", "uid")
    assert (poll.video.target, poll.video.known, poll.video.duration_s) == (None, True, None)


def test_cloudflare_429_and_its_rate_limit_fields():
    headers = {"retry-after": "300", "Ratelimit": '"default";r=0;t=300', "Ratelimit-Policy": '"default";q=1200;w=300'}
    body = cf_envelope(
        None, False, [{"code": 971, "message": "Please wait and consider throttling your request speed"}]
    )
    cf, _ = provider("cloudflare", (429, body, headers), secret=CF_SECRET)
    outcome = cf.create(ASSET, SOURCE)
    assert outcome.kind is OutcomeKind.THROTTLED and outcome.retry_after == 300.0
    signal = cf.rate_signal(headers)
    assert (signal.limit_per_s, signal.remaining, signal.reset_after) == (4.0, 0.0, 300.0)


def test_cloudflare_rate_limit_429_is_the_rate_s_scope():
    body = cf_envelope(
        None, False, [{"code": 971, "message": "Please wait and consider throttling your request speed"}]
    )
    cf, _ = provider("cloudflare", (429, body, {"retry-after": "300"}), secret=CF_SECRET)
    assert cf.create(ASSET, SOURCE).scope == "rate"


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (413, "Storage capacity exceeded: purchase more minutes"),  # the account's storage minutes
        (413, ""),  # whatever the body says: a 413 is an account limit on Stream
        (429, "Too many videos queued or in progress"),  # the cap of 120 queued or encoding
        (429, "You have reached the limit of videos being encoded at once"),
    ],
)
def test_cloudflare_account_limits_hold_the_fleet_and_never_reject_the_asset(status, message):
    """developers.cloudflare.com/stream/faq: past 120 videos queued or encoding, or past the storage
    bought, uploads get a 429 or a 413. A 413 used to reject the asset for good: on a full account,
    every remaining asset."""
    body = cf_envelope(None, False, [{"code": 10000, "message": message}] if message else [])
    cf, _ = provider("cloudflare", (status, body), secret=CF_SECRET)
    outcome = cf.create(ASSET, SOURCE)
    assert (outcome.kind, outcome.scope) == (OutcomeKind.THROTTLED, "account")
    assert outcome.error.startswith(f"HTTP {status}")


def test_a_lookup_keeps_its_throttles_scope():
    """A lookup's 503 with Retry-After is about that request, its 429 about the fleet's rate: the
    pacer must tell them apart for lookups as for creates."""
    cf, _ = provider("cloudflare", (503, cf_envelope(None, False), {"retry-after": "2"}), secret=CF_SECRET)
    found = cf.find("library/intro-2019", None)
    assert (found.kind, found.scope, found.retry_after) == (OutcomeKind.THROTTLED, "request", 2.0)
    cf, _ = provider("cloudflare", (429, cf_envelope(None, False), {"retry-after": "300"}), secret=CF_SECRET)
    assert cf.find("library/intro-2019", None).scope == "rate"


@pytest.mark.parametrize(
    ("name", "headers", "limit_per_s"),
    [
        ("generic", {"X-RateLimit-Limit": "20"}, 20.0),  # the contract counts per second
        ("apivideo", {"X-RateLimit-Limit": "100"}, 100 / 60),  # per minute
        ("jwplayer", {"jw-request-limit": "60", "jw-request-remaining": "3"}, 1.0),  # 60 a minute (JW's names)
        ("mux", {"X-RateLimit-Limit": "5"}, None),  # no documented window: not a rate
        ("bunny", {"X-RateLimit-Limit": "5", "Retry-After": "30"}, None),  # no limit documented at all
        ("cloudflare", {"ratelimit-limit": "1200", "ratelimit-remaining": "5"}, None),  # the older form: no window
        ("cloudflare", {"Ratelimit-Policy": '"burst";q=1200;w=300'}, 4.0),  # the current form says its window
        ("generic", {"RateLimit-Limit": "10, 10;w=1, 50;w=60"}, 10.0),  # an older draft's quota policy
    ],
)
def test_a_stated_limit_is_read_as_a_rate_only_with_its_window(name, headers, limit_per_s):
    made, _ = provider(name, secret={"mux": MUX_SECRET, "cloudflare": CF_SECRET, "apivideo": API_SECRET}.get(name, "t"))
    signal = made.rate_signal(headers)
    assert signal.limit_per_s == (pytest.approx(limit_per_s) if limit_per_s is not None else None)


def test_the_providers_pacing_facts():
    cf = build("cloudflare", None, lambda: CF_SECRET)
    assert (cf.max_in_flight, cf.budget_covers_all_calls) == (120, True)
    for name in ("generic", "mux", "apivideo", "bunny"):
        made = build(name, "https://p.example", lambda: "t")
        assert (made.max_in_flight, made.budget_covers_all_calls) == (None, False)


def test_cloudflare_webhook_is_the_video_itself_signed_over_time_dot_body():
    import hashlib
    import hmac

    body = json.dumps({**CF_VIDEO, "meta": {**CF_VIDEO["meta"], "migration_ref": "library/intro-2019"}}).encode()
    secret = "85011ed3a913c6ad5f9cf6c5573cc0a7"  # the docs' example secret
    signature = hmac.new(secret.encode(), f"{int(NOW)}.".encode() + body, hashlib.sha256).hexdigest()
    cf, _ = provider("cloudflare", secret=CF_SECRET)
    event = cf.read_webhook(body, {"Webhook-Signature": f"time={int(NOW)},sig1={signature}"}, [secret], NOW, 300)
    assert (event.asset_id, event.remote_id, event.video.target, event.video.duration_s) == (
        "library/intro-2019",
        "6b9e68b07dfee8cc2d116e4c51d6a957",
        State.READY,
        5.5,
    )
    assert event.event_id.startswith("sha256:")  # Cloudflare sends no event id
    with pytest.raises(SignatureError):
        cf.read_webhook(body, {"Webhook-Signature": f"time={int(NOW)},sig1={signature}"}, [secret], NOW + 600, 300)


def test_cloudflare_credentials_are_checked_and_never_echoed():
    cf, _ = provider("cloudflare", secret='{"account_id": "../../evil", "api_token": "sekrit"}')
    with pytest.raises(CredentialsError) as caught:
        cf.create(ASSET, SOURCE)
    assert "sekrit" not in str(caught.value) and "evil" not in str(caught.value)


# --- api.video ----------------------------------------------------------------------------------

API_VIDEO = {
    "videoId": "vi4k0jvEUuaTdRAEjQ4Jfrgz",
    "createdAt": "2026-11-30T10:00:00+00:00",
    "title": "Intro",
    "metadata": [
        {"key": "migration_ref", "value": "library/intro-2019"},
        {"key": "migration_key", "value": "vm-x"},
    ],
    "source": {"uri": "/videos/vi4k0jvEUuaTdRAEjQ4Jfrgz/source"},
}


def test_apivideo_create_is_the_documented_request():
    api, session = provider("apivideo", (201, API_VIDEO), secret=API_SECRET)
    outcome = api.create(ASSET, SOURCE)
    assert (outcome.kind, outcome.remote_id) == (OutcomeKind.CREATED, "vi4k0jvEUuaTdRAEjQ4Jfrgz")
    request = session.sent[0]
    assert (request.method, request.url) == ("POST", "https://ws.api.video/videos")
    assert request.headers["Authorization"] == "Basic " + base64.b64encode(b"api-key:").decode()  # key, no password
    assert session.json() == {
        "title": "Intro",
        "source": SOURCE,
        "metadata": [
            {"key": "migration_ref", "value": "library/intro-2019"},
            {"key": "migration_key", "value": idempotency_key("library/intro-2019")},
        ],
        "public": False,  # a row with no privacy: DefaultPlayback, signed (private) unless set
    }


def test_apivideo_title_is_required_so_the_id_stands_in():
    api, session = provider("apivideo", (201, API_VIDEO), secret="plain-key")
    api.create(AssetRef("no-title"), SOURCE)
    assert session.json()["title"] == "no-title"
    assert session.sent[0].headers["Authorization"] == "Basic " + base64.b64encode(b"plain-key:").decode()


STATUS_PLAYABLE = {
    "ingest": {"status": "ingested", "filesize": 273579401, "receivedBytes": []},
    "encoding": {
        "playable": True,
        "qualities": [{"type": "hls", "quality": "720p", "status": "encoded"}],
        "metadata": {"width": 1280, "height": 720, "duration": 4176, "framerate": 60},
    },
}
STATUS_FAILED = {
    "ingest": {"status": "ingested"},
    "encoding": {"playable": False, "qualities": [{"type": "hls", "quality": "720p", "status": "failed"}]},
}


def test_apivideo_find_filters_by_metadata_newest_first_and_never_adopts_a_failed_encoding():
    failed = {**API_VIDEO, "videoId": "vi_failed"}
    good = {**API_VIDEO, "videoId": "vi_good"}
    api, session = provider(
        "apivideo",
        (200, {"data": [failed, good], "pagination": {"pagesTotal": 1}}),
        (200, STATUS_FAILED),
        (200, {**STATUS_PLAYABLE}),
        secret=API_SECRET,
    )
    outcome = api.find("library/intro-2019", created_after=None)
    assert (outcome.kind, outcome.remote_id) == (OutcomeKind.CREATED, "vi_good")
    assert session.sent[0].url == (
        "https://ws.api.video/videos?metadata%5Bmigration_ref%5D=library%2Fintro-2019"
        "&sortBy=createdAt&sortOrder=desc&pageSize=100"
    )
    assert session.sent[1].url == "https://ws.api.video/videos/vi_failed/status"


def test_apivideo_poll_reads_the_status_endpoint():
    api, _ = provider(
        "apivideo", (200, STATUS_PLAYABLE), (200, {"videoId": "vi_good"}), (200, STATUS_FAILED), secret=API_SECRET
    )
    ready = api.poll("library/intro-2019", "vi_good").video
    assert (ready.target, ready.duration_s) == (State.READY, 4176.0)
    assert api.poll("x", "vi_failed").video.target is State.REJECTED


def test_apivideo_rate_limit_headers_count_per_minute():
    headers = {"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "0", "X-RateLimit-Retry-After": "17"}
    body = {"type": "https://docs.api.video/reference/too-many-requests", "title": "Too many requests.", "status": 429}
    api, _ = provider("apivideo", (429, body, headers), secret=API_SECRET)
    outcome = api.create(ASSET, SOURCE)
    assert outcome.kind is OutcomeKind.THROTTLED and outcome.retry_after == 17.0
    signal = api.rate_signal(headers)
    assert signal.limit_per_s == pytest.approx(100 / 60) and signal.remaining == 0


# Documented: the curl sample in api.video's webhooks guide, signed with the example subscription's secret.
API_WEBHOOK_SECRET = "sig_sec_0000000000000000000000"
API_WEBHOOK_BODY = (
    b'{"type":"video.encoding.quality.completed","emittedAt":"2021-01-29T15:46:25.217Z",'
    b'"videoId":"vi0000000000000000000000","liveStreamId":"li0000000000000000000000",'
    b'"encoding":"hls","quality":"720p"}'
)
API_WEBHOOK_SIGNATURE = "27a77d3a7fc626854886b5dbfae4e32c8b0170c1ea1b714c91ba77f1e7774e8c"
EMITTED = 1611935185.217


def test_apivideo_signature_matches_the_published_example():
    api, _ = provider("apivideo", secret=API_SECRET)
    headers = {"X-Api-Video-Signature": API_WEBHOOK_SIGNATURE, "X-Api-Video-WebhookID": "webhook_XXXXXXXXXXXXXXX"}
    event = api.read_webhook(API_WEBHOOK_BODY, headers, [API_WEBHOOK_SECRET], EMITTED + 1, 300)
    # The event names only the video: it is a prompt to read its status, not an outcome.
    assert (event.confirm, event.remote_id, event.asset_id, event.video) == (
        True,
        "vi0000000000000000000000",
        None,
        None,
    )
    with pytest.raises(SignatureError, match="no valid signature"):
        api.read_webhook(API_WEBHOOK_BODY + b" ", headers, [API_WEBHOOK_SECRET], EMITTED, 300)


def test_apivideo_replay_is_bounded_by_the_bodys_emitted_at():
    api, _ = provider("apivideo", secret=API_SECRET)
    headers = {"X-Api-Video-Signature": API_WEBHOOK_SIGNATURE}
    with pytest.raises(SignatureError, match="tolerance"):  # the same genuine bytes, 15 days later
        api.read_webhook(API_WEBHOOK_BODY, headers, [API_WEBHOOK_SECRET], EMITTED + 15 * 86_400, 300)


def signed_apivideo_event(emitted: float) -> tuple[bytes, dict]:
    from migrator.signatures import Scheme, sign

    at = datetime.fromtimestamp(emitted, UTC).isoformat()
    body = json.dumps({"type": "video.encoding.quality.completed", "emittedAt": at, "videoId": "vi1"}).encode()
    return body, sign(Scheme.APIVIDEO, body, "s", NOW)


def test_apivideo_a_late_genuine_delivery_is_accepted():
    # emittedAt is when the encoding finished; the delivery came 10 minutes later (retries, a queue).
    api, _ = provider("apivideo", secret=API_SECRET)
    body, headers = signed_apivideo_event(NOW - 600)
    assert api.read_webhook(body, headers, ["s"], NOW, 300).confirm


@pytest.mark.parametrize("tolerance_s", [300, 30])
def test_apivideo_emitted_at_window_edges_follow_the_event_memory_and_the_clock_tolerance(tolerance_s):
    from migrator.providers.apivideo import EVENT_MEMORY_S

    api, _ = provider("apivideo", secret=API_SECRET)
    oldest = NOW - (EVENT_MEMORY_S - tolerance_s)  # a copy first seen as early as possible is still remembered
    for emitted, accepted in [
        (oldest, True),
        (oldest - 1, False),
        (NOW + tolerance_s, True),
        (NOW + tolerance_s + 1, False),
    ]:
        body, headers = signed_apivideo_event(emitted)
        if accepted:
            assert api.read_webhook(body, headers, ["s"], NOW, tolerance_s).confirm
        else:
            with pytest.raises(SignatureError, match="tolerance"):
                api.read_webhook(body, headers, ["s"], NOW, tolerance_s)


def test_apivideo_replay_window_never_outlasts_the_events_tables_memory():
    from migrator.providers.apivideo import EVENT_MEMORY_S
    from migrator.webhook import DEDUPE_TTL_S

    # A copy accepted after the table forgot the body's hash would be acted on twice.
    assert EVENT_MEMORY_S <= DEDUPE_TTL_S


def test_apivideo_doctor_asks_for_a_page_size_inside_the_documented_range():
    api, session = provider("apivideo", (200, {"data": [], "pagination": {}}), secret=API_SECRET)
    assert api.check().status == 200
    assert session.sent[0].url == "https://ws.api.video/videos?pageSize=10"  # its 400 says 10-100


# --- the generic provider (the seed contract) -----------------------------------------------------


def test_generic_create_sends_the_hashed_key_and_the_exact_reference():
    generic, session = provider("generic", (201, {"id": "vid_1", "status": "preparing"}))
    assert generic.create(AssetRef("café"), SOURCE).remote_id == "vid_1"
    request = session.sent[0]
    assert request.url == "https://p.example/videos" and request.headers["Authorization"] == "Bearer t"
    assert request.headers["Idempotency-Key"] == idempotency_key("café")
    assert session.json() == {"input": SOURCE, "metadata": {"migration_ref": "café", "privacy": "signed"}}


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (201, {"id": "vid_1"}, OutcomeKind.CREATED),
        (200, {"data": {"id": "vid_2"}}, OutcomeKind.CREATED),  # the seed reads body.id ?? body.data?.id
        (201, b"<html>oops</html>", OutcomeKind.TRANSIENT),
        (201, {"status": "ok"}, OutcomeKind.TRANSIENT),
        (201, {"id": "bad\nid"}, OutcomeKind.TRANSIENT),
        (409, {"error": "exists"}, OutcomeKind.CONFLICT),
        (400, {"error": "bad input"}, OutcomeKind.REJECTED),
        (403, {}, OutcomeKind.TRANSIENT),
    ],
)
def test_generic_create_answers(status, body, kind):
    generic, _ = provider("generic", (status, body))
    assert generic.create(ASSET, SOURCE).kind is kind


def test_generic_reads_a_video_wrapped_in_data_wherever_a_video_comes():
    from migrator.signatures import Scheme, sign

    wrapped = {"data": {"id": "vid_2", "status": "ready", "duration": 12.5, "metadata": {"migration_ref": "café"}}}
    generic, _ = provider("generic", (200, wrapped), (200, {"data": [wrapped]}), (200, wrapped))
    assert generic.create(AssetRef("café"), SOURCE).remote_id == "vid_2"
    found = generic.find("café", None)
    assert (found.kind, found.remote_id) == (OutcomeKind.CREATED, "vid_2")
    polled = generic.poll("café", "vid_2").video
    assert (polled.remote_id, polled.target, polled.duration_s, polled.ref) == ("vid_2", State.READY, 12.5, "café")
    body = json.dumps({"type": "video.ready", "id": "evt_1", "data": wrapped}).encode()
    event = generic.read_webhook(body, sign(Scheme.SEED, body, "s", NOW), ["s"], NOW, 300)
    assert (event.asset_id, event.remote_id, event.video.target) == ("café", "vid_2", State.READY)


def test_generic_credentials_from_json_or_plain_text():
    generic, session = provider("generic", (201, {"id": "v"}), secret='{"token": "from-json"}')
    generic.create(ASSET, SOURCE)
    assert session.sent[0].headers["Authorization"] == "Bearer from-json"
    with pytest.raises(CredentialsError, match='"token"'):
        provider("generic", secret='{"tok": "x"}')[0].create(ASSET, SOURCE)


HUGE = 10**400  # json.loads reads it; float() of it overflows


@pytest.mark.parametrize(
    ("name", "answer", "remote_id"),
    [
        ("mux", {"data": {**MUX_CREATED["data"], "created_at": HUGE, "duration": HUGE}}, MUX_CREATED["data"]["id"]),
        ("cloudflare", cf_envelope({"uid": "v1", "created": HUGE, "duration": HUGE, "status": {"state": 7}}), "v1"),
        ("apivideo", {**API_VIDEO, "createdAt": HUGE, "metadata": {"migration_ref": "x"}}, API_VIDEO["videoId"]),
        ("generic", {"id": "vid_1", "created_at": HUGE, "duration": HUGE, "error": {"message": {"x": 1}}}, "vid_1"),
    ],
)
def test_a_create_answer_with_absurd_fields_is_still_the_video_it_names(name, answer, remote_id):
    # Raising here (OverflowError) once made the uploader drop the message as poison after the create.
    secret = {"mux": MUX_SECRET, "cloudflare": CF_SECRET, "apivideo": API_SECRET}.get(name, "t")
    made, _ = provider(name, (201, answer), secret=secret)
    outcome = made.create(ASSET, SOURCE)
    assert (outcome.kind, outcome.remote_id) == (OutcomeKind.CREATED, remote_id)


@pytest.mark.parametrize(
    ("name", "body", "expected"),
    [
        ("mux", {"data": mux_asset("a1", "x", 0, "ready", duration=HUGE, created_at=HUGE)}, (State.READY, None, None)),
        ("cloudflare", cf_envelope({**CF_VIDEO, "duration": HUGE, "created": HUGE}), (State.READY, None, None)),
        ("apivideo", {"encoding": {"playable": True, "metadata": {"duration": HUGE}}}, (State.READY, None, None)),
        ("apivideo", {"encoding": {"playable": False, "qualities": 4}, "ingest": {"status": 9}}, (None, None, None)),
        (
            "generic",
            {"id": "v1", "status": "errored", "error": {"message": ["a", {"b": 2}]}},
            (State.REJECTED, None, None),
        ),
        ("generic", {"id": "v1", "status": {"nested": ["garbage"]}, "created_at": HUGE}, (None, None, None)),
    ],
)
def test_absurd_numbers_and_wrong_types_in_a_poll_read_as_unknown(name, body, expected):
    secret = {"mux": MUX_SECRET, "cloudflare": CF_SECRET, "apivideo": API_SECRET}.get(name, "t")
    made, _ = provider(name, (200, body), secret=secret)
    video = made.poll("x", "v1").video
    assert (video.target, video.duration_s, video.created_at) == expected
    if video.target is None:
        assert not video.known  # garbage says nothing about progress
    if video.target is State.REJECTED:
        assert video.error == "provider: the provider could not ingest the source"


def test_a_webhook_with_absurd_numbers_is_read_not_answered_500():
    from migrator.signatures import Scheme, sign

    mux, _ = provider("mux", secret=MUX_SECRET)
    data = mux_asset("a7", "library/intro-2019", 0, "ready", duration=HUGE, created_at=HUGE)
    body = json.dumps({"type": "video.asset.ready", "id": "evt", "data": data}).encode()
    event = mux.read_webhook(body, sign(Scheme.MUX, body, "s", NOW), ["s"], NOW, 300)
    assert (event.asset_id, event.video.target, event.video.duration_s) == ("library/intro-2019", State.READY, None)
    api, _ = provider("apivideo", secret=API_SECRET)
    body = json.dumps({"type": "video.encoding.quality.completed", "emittedAt": HUGE, "videoId": "vi1"}).encode()
    assert api.read_webhook(body, sign(Scheme.APIVIDEO, body, "s", NOW), ["s"], NOW, 300).confirm


def test_every_provider_refuses_an_unknown_name_and_the_generic_one_needs_an_address():
    with pytest.raises(CredentialsError, match="unknown provider"):
        build("nonesuch", None, lambda: None)
    with pytest.raises(CredentialsError, match="base URL"):
        build("generic", None, lambda: None)


def test_the_functions_call_only_the_provider_interface():
    # No `if provider == ...` outside the providers' package: the handlers and their decisions
    # never name a provider, so a new one is a new module and nothing else.
    package = Path(__file__).resolve().parents[2] / "functions" / "migrator"
    callers = [
        "uploader.py",
        "webhook.py",
        "reconcile.py",
        "fate.py",
        "settle.py",
        "heal.py",
        "pacer.py",
        "pacer_item.py",
        "intake.py",
    ]
    callers += [str(p.relative_to(package)) for p in (package / "ledger").glob("*.py")]
    callers += [str(p.relative_to(package)) for p in (package / "upload").glob("*.py")]
    for name in callers:
        tree = ast.parse((package / name).read_text())
        literals = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)}
        named = literals & {"mux", "cloudflare", "apivideo", "generic", "vimeo"}
        assert not named, f"{name} names {named}"
