"""The "apivideo" profile driven by api.video's official Python SDK (api-video 1.4.7, pinned in the dev extras).

The SDK type-checks every field of every answer against its models, so a simulator that
drifts from oas_apivideo.yaml fails here. Its AuthenticatedApiClient exchanges the key
for a bearer token at POST /auth/api-key first; a plain ApiClient with a Basic header
works too. Also the documented behaviours: an ingest that hangs (no failed state, no
event) and the list's pageSize range.
"""

from __future__ import annotations

import base64
import json
import time

import pytest
from apivideo.api_client import ApiClient
from apivideo.apis import VideosApi
from apivideo.auth_api_client import AuthenticatedApiClient
from apivideo.configuration import Configuration
from apivideo.exceptions import ApiException, NotFoundException, UnauthorizedException
from apivideo.model.metadata import Metadata
from apivideo.model.video_creation_payload import VideoCreationPayload

from tests.sim.support import wait_for

API_KEY = "apivideo-sdk-key"


@pytest.fixture
def authenticated(launch):
    """start(**config) -> (sim, VideosApi) through the SDK's AuthenticatedApiClient (a bearer token)."""
    clients = []

    def start(**config):
        sim = launch("apivideo", api_key=API_KEY, **config)
        client = AuthenticatedApiClient(API_KEY)
        client.configuration.host = sim.url  # the SDK knows only production and sandbox
        client.__enter__()  # POST /auth/api-key, then a refresh thread
        clients.append(client)
        return sim, VideosApi(client)

    yield start
    for client in clients:
        client.__exit__(None, None, None)


def _basic(url: str, key: str = API_KEY) -> VideosApi:
    header = "Basic " + base64.b64encode(f"{key}:".encode()).decode()
    return VideosApi(ApiClient(Configuration(host=url), header_name="Authorization", header_value=header))


def _create(api: VideosApi, source: str, ref: str = "lib/1"):
    payload = VideoCreationPayload(title=ref, source=source, metadata=[Metadata(key="migration_ref", value=ref)])
    return api.create(payload)


def test_sdk_authenticates_with_a_bearer_token_then_creates_gets_and_lists(authenticated):
    sim, api = authenticated(processing_delay_s=0.3)
    video = _create(api, "https://media.example.com/a.mp4?duration=61.4", ref="lib/61")
    assert video.video_id.startswith("vi") and video.title == "lib/61"
    assert api.get(video.video_id).metadata == [Metadata(key="migration_ref", value="lib/61")]
    assert wait_for(lambda: api.get_status(video.video_id).encoding.playable, timeout=3)
    status = api.get_status(video.video_id)
    assert status.ingest.status == "ingested" and status.encoding.metadata.duration == 61
    listed = api.list(metadata={"migration_ref": "lib/61"}, sort_by="createdAt", sort_order="desc")
    assert [v.video_id for v in listed.data] == [video.video_id] and listed.pagination.items_total == 1
    with pytest.raises(NotFoundException):
        api.get("vi" + "0" * 22)
    assert [r["op"] for r in sim.requests_log(ops=None)][:2] == ["auth", "create"]


def test_sdk_with_a_basic_header_works_and_a_wrong_key_is_refused(launch):
    sim = launch("apivideo", api_key=API_KEY)
    assert _create(_basic(sim.url), "https://media.example.com/a.mp4").video_id
    with pytest.raises(UnauthorizedException):
        _basic(sim.url, "wrong").list()
    wrong = AuthenticatedApiClient("wrong")
    wrong.configuration.host = sim.url
    with pytest.raises(ApiException) as refused:
        wrong.connect()
    assert refused.value.status == 400  # "The user credentials were incorrect."
    forged = VideosApi(ApiClient(Configuration(host=sim.url), header_name="Authorization", header_value="Bearer x"))
    with pytest.raises(UnauthorizedException):
        forged.list()


def test_sdk_a_hung_ingest_stays_ingesting_and_sends_no_event(launch, hooks):
    sim = launch("apivideo", api_key=API_KEY, processing_delay_s=0.2, webhook_url=hooks.url, webhook_secret="s")
    api = _basic(sim.url)
    hung = _create(api, "https://media.example.com/library/hang-00001.mp4", ref="stuck")
    done = _create(api, "https://media.example.com/library/change-00002.mp4", ref="fine")  # "hang" inside a word
    assert wait_for(lambda: api.get_status(done.video_id).encoding.playable, timeout=3)
    deliveries = hooks.wait(5)  # one per quality of the finished video
    time.sleep(0.4)  # twice the processing time: the hung one would have finished by now
    status = api.get_status(hung.video_id)
    assert status.ingest.status == "ingesting" and not status.encoding.playable
    assert {q.status for q in status.encoding.qualities} == {"waiting"}
    assert all(b'"videoId":"' + done.video_id.encode() in d.body for d in hooks.deliveries) and len(deliveries) == 5
    assert sim.stats()["hung_videos"] == 1


def test_hang_rate_one_hangs_every_ingest(launch):
    sim = launch("apivideo", processing_delay_s=0.05, hang_rate=1.0)
    api = _basic(sim.url)
    ids = [_create(api, f"https://media.example.com/{i}.mp4", ref=f"r{i}").video_id for i in range(3)]
    time.sleep(0.2)
    assert {api.get_status(i).ingest.status for i in ids} == {"ingesting"} and sim.stats()["hung_videos"] == 3


def test_sdk_page_size_is_one_to_a_hundred_as_the_parameter_defines(launch):
    sim = launch("apivideo")
    api = _basic(sim.url)
    for i in range(2):
        _create(api, f"https://media.example.com/{i}.mp4", ref=f"r{i}")
    assert len(api.list(page_size=1).data) == 1  # what `doctor` sends: inside "Allowed values 1-100"
    with pytest.raises(ApiException) as refused:
        api.list(page_size=101)
    problem = json.loads(refused.value.body)
    assert refused.value.status == 400 and problem["range"] == {"min": 1, "max": 100}
    assert problem["problems"] == [{"title": problem["title"], "name": "pageSize", "range": {"min": 1, "max": 100}}]


# --- what a create carries, held by the simulator as api.video holds it -----------------------------


def test_sdk_reads_back_what_our_create_carried_each_in_api_videos_own_field(launch):
    from migrator.messages import AssetMessage
    from migrator.providers import AssetRef, build

    sim = launch("apivideo", api_key=API_KEY)
    row = AssetMessage(
        "lib/full",
        "https://media.example.com/full.mp4?duration=40",
        title="A title",
        description="About it",
        tags=("a", "b"),
        metadata={"author": "Ada", "episode": 3},
        privacy="private",
        created_at="2019-05-01T10:00:00Z",
        options={"apivideo": {"mp4Support": False, "playerId": "pl45KFKdlddgk654dspkze"}},
    )
    api = build("apivideo", sim.url, lambda: API_KEY)
    api.http.session.trust_env = False
    outcome = api.create(AssetRef(row.asset_id, row.title, 0, row), row.source_url)
    held = _basic(sim.url).get(outcome.remote_id)  # the SDK type-checks every field of the answer
    assert (held.title, held.description, held.tags) == ("A title", "About it", ["a", "b"])
    assert held["public"] is False and held.mp4_support is False and held.player_id == "pl45KFKdlddgk654dspkze"
    pairs = {m.key: m.value for m in held.metadata}
    assert {k: pairs[k] for k in ("author", "episode", "migration_ref", "created_at")} == {
        "author": "Ada",
        "episode": "3",
        "migration_ref": "lib/full",
        "created_at": "2019-05-01T10:00:00Z",
    }
    listed = next(v for v in api.videos() if v.remote_id == outcome.remote_id)
    assert listed.privacy == "signed"  # our reader agrees


@pytest.mark.parametrize(
    ("field", "value"),
    [("public", "no"), ("mp4Support", 1), ("playerId", 7), ("tags", "a,b"), ("metadata", [{"key": "k", "value": 3}])],
)
def test_api_video_refuses_what_its_api_refuses(launch, web, field, value):
    sim = launch("apivideo", api_key=API_KEY)
    body = {"title": "t", "source": "https://media.example.com/a.mp4", field: value}
    answer = web.post(f"{sim.url}/videos", json=body, auth=(API_KEY, ""))
    assert answer.status_code == 400 and answer.json()["name"] == field, answer.text


# --- migrator verify of a private video: a session on a fresh private token -------------------------


def test_verify_checks_a_private_video_through_a_session_the_provider_opens(launch, web):
    """Review item: `signed_playback` read nothing, so verify counted every private api.video video as not
    fetched. Now the video is read again (a fresh private token in `assets.hls`), a session opened on it,
    and the manifest and its variants fetched with `avh`, as the simulator's delivery host demands."""
    from migrator.messages import AssetMessage
    from migrator.providers import AssetRef, SigningUnavailable, build
    from migrator_cli.verify import Checker, Pace, Tolerance, guarded_get

    sim = launch("apivideo", api_key=API_KEY, processing_delay_s=0.1)
    row = AssetMessage("lib/p", "https://media.example.com/p.mp4?duration=20", title="P", privacy="private")
    provider = build("apivideo", sim.url, lambda: API_KEY)
    provider.http.session.trust_env = False
    made = provider.create(AssetRef(row.asset_id, row.title, 0, row), row.source_url).remote_id
    sdk = _basic(sim.url)
    assert wait_for(lambda: sdk.get_status(made).encoding.playable, timeout=3)
    assert sdk.get(made)["public"] is False  # the row stays private at the provider
    playback = provider.poll(row.asset_id, made).video.playback
    assert playback["policy"] == "private" and "/token/" in playback["hls"]

    signed = provider.signed_playback(playback, 900, None)
    [(name, session)] = signed.query
    assert name == "avh" and signed.manifest_url.endswith(f"?avh={session}") and "/token/" in signed.manifest_url
    variant = signed.manifest_url.replace("/hls/manifest.m3u8?", "/hls/1080p.m3u8?")
    assert [web.get(variant).status_code for _ in range(2)] == [200, 200]  # the session holds
    assert web.get(variant.split("?")[0]).status_code == 404  # its private token is spent: avh or nothing
    assert web.get(sdk.get(made).assets.hls.replace("/token/", "/token/0")).status_code == 404  # forged

    item = {"asset_id": row.asset_id, "state": "ready", "duration_s": 20, "provider_duration_s": 20}
    item |= {"metadata": {"width": 1920, "height": 1080}, "playback_info": playback}
    check = Checker(
        "apivideo",
        Tolerance(1.0),
        Pace(0),
        lambda url: guarded_get(url, allow_private=True, timeout_s=5),
        {},
        lambda pb: provider.signed_playback(pb, 900, None),
    )
    verdict = check(item)
    assert verdict.status == "passed", verdict
    with pytest.raises(SigningUnavailable):
        provider.signed_playback({"policy": "private", "playback_id": "vi" + "0" * 22}, 900, None)


def test_a_public_video_needs_no_session(launch):
    from migrator.providers import build

    sim = launch("apivideo", api_key=API_KEY)
    video = _create(_basic(sim.url), "https://media.example.com/a.mp4")
    provider = build("apivideo", sim.url, lambda: API_KEY)
    provider.http.session.trust_env = False
    signed = provider.signed_playback({"policy": "private", "playback_id": video.video_id}, 900, None)
    assert signed.query == () and "/token/" not in signed.manifest_url


# --- the webhook subscriptions doctor reads ----------------------------------------------------------------------


def test_sdk_lists_the_webhook_subscriptions_and_doctor_says_where_they_point(launch, hooks):
    """`GET /webhooks` ("List all webhooks") as the SDK's WebhooksApi reads it: a subscription made before (the
    knob's, at the URL an earlier release's stack had) and one made with `POST /webhooks`, with its
    signatureSecret. The adapter reads the same list, and the stack's doctor says whether one points at it."""
    from types import SimpleNamespace

    from apivideo.apis import WebhooksApi
    from apivideo.model.webhooks_creation_payload import WebhooksCreationPayload
    from migrator.providers import build
    from migrator_cli.doctor import _webhook_target

    old = "https://abc123.execute-api.eu-west-1.amazonaws.com/live/webhook"  # before an upgrade moved it
    sim = launch("apivideo", api_key=API_KEY, webhook_url=old, webhook_secret="s")
    header = "Basic " + base64.b64encode(f"{API_KEY}:".encode()).decode()
    api = WebhooksApi(ApiClient(Configuration(host=sim.url), header_name="Authorization", header_value=header))
    adapter = build("apivideo", sim.url, lambda: API_KEY)
    target = SimpleNamespace(output=lambda key: hooks.url, provider=lambda *a: adapter)

    (before,) = _webhook_target(target, None)
    made = api.create(WebhooksCreationPayload(events=["video.encoding.quality.completed"], url=hooks.url))
    listed = api.list()
    (after,) = _webhook_target(target, None)

    assert made.signature_secret and made.webhook_id.startswith("webhook_") and made.url == hooks.url
    assert [w.url for w in listed.data] == [old, hooks.url] and listed.pagination.items_total == 2
    assert listed.data[0].events == ["video.encoding.quality.completed"]
    assert adapter.webhook_urls() == [old, hooks.url]
    assert not before.ok and old in before.detail and "none at this stack's" in before.detail
    assert f"subscribe {hooks.url}" in before.fix
    assert after.ok and "a subscription points at this stack" in after.detail and old in after.detail
