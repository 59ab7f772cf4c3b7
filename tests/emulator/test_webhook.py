"""The webhook receiver against the ledger and dedupe tables in the emulator."""

from __future__ import annotations

import base64
import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from migrator.ledger import Ledger
from migrator.messages import AssetMessage
from migrator.providers import build
from migrator.signatures import Scheme, sign
from migrator.webhook import MAX_BODY_BYTES, Receiver

pytestmark = pytest.mark.emulator
SECRET = "whsec_" + base64.b64encode(b"k" * 24).decode()
OLD_SECRET = "whsec_" + base64.b64encode(b"o" * 24).decode()


def make_receiver(aws, table, events_table, scheme=Scheme.STANDARD, secrets=(SECRET,)):
    return Receiver(
        ledger=Ledger(table, aws("dynamodb")),
        events_table=events_table,
        provider=build("generic", "https://provider.invalid", lambda: None, webhook_scheme=scheme.value),
        secrets=lambda: list(secrets),
    )


def request(doc, secret=SECRET, event_id="msg_1", scheme=Scheme.STANDARD, now=None, b64=False):
    body = json.dumps(doc).encode() if not isinstance(doc, bytes) else doc
    headers = sign(scheme, body, secret, now or time.time(), event_id)
    raw = base64.b64encode(body).decode() if b64 else body.decode("utf-8", "replace")
    return {"headers": headers, "body": raw, "isBase64Encoded": b64}


def ready(asset_id="a/1", remote="vid_1", duration=12.5):
    return {
        "type": "video.ready",
        "data": {"id": remote, "duration": duration, "metadata": {"migration_ref": asset_id}},
    }


def errored(asset_id="a/1", remote="vid_1"):
    return {
        "type": "video.errored",
        "data": {"id": remote, "error": {"message": "cannot ingest"}, "metadata": {"migration_ref": asset_id}},
    }


@pytest.fixture
def receiver(aws, table, events_table):
    return make_receiver(aws, table, events_table)


@pytest.fixture
def processing(receiver):
    """An asset the uploader has handed to the provider."""
    now = time.time()
    receiver.ledger.claim(AssetMessage("a/1", "https://h/a.mp4"), now, now + 60, "tok")
    receiver.ledger.mark_processing("a/1", "tok", "vid_1", now)
    return receiver.ledger


def test_ready_moves_the_asset_and_stores_the_duration(receiver, processing):
    answer = receiver.handle(request(ready()))
    assert answer["statusCode"] == 200
    item = processing.get("a/1")
    assert item["state"] == "ready" and float(item["provider_duration_s"]) == 12.5


def test_base64_bodies_verify_on_the_decoded_bytes(receiver, processing):
    assert receiver.handle(request(ready(), b64=True))["statusCode"] == 200
    assert processing.get("a/1")["state"] == "ready"


def test_forged_and_tampered_requests_change_nothing(receiver, processing):
    assert (
        receiver.handle(request(ready(), secret="whsec_" + base64.b64encode(b"x" * 24).decode()))["statusCode"] == 401
    )
    tampered = request(ready(duration=1.0))
    tampered["body"] = tampered["body"].replace("1.0", "9.0")
    assert receiver.handle(tampered)["statusCode"] == 401
    assert receiver.handle({"headers": {}, "body": json.dumps(ready())})["statusCode"] == 401
    stale = request(ready(), now=time.time() - 301)
    assert receiver.handle(stale)["statusCode"] == 401
    assert processing.get("a/1")["state"] == "processing"


def test_replayed_event_is_acknowledged_and_not_acted_on_twice(receiver, processing, aws, table):
    first = request(ready(), event_id="msg_replay")
    assert json.loads(receiver.handle(first)["body"])["result"] == "ready"
    # an operator resets the asset; a replay of the old event must not re-apply it
    aws("dynamodb").update_item(
        TableName=table,
        Key={"asset_id": {"S": "a/1"}},
        UpdateExpression="SET #s = :p",
        ExpressionAttributeNames={"#s": "state"},
        ExpressionAttributeValues={":p": {"S": "processing"}},
    )
    again = receiver.handle(request(ready(), event_id="msg_replay"))
    assert again["statusCode"] == 200 and json.loads(again["body"])["result"] == "duplicate"
    assert processing.get("a/1")["state"] == "processing"


def test_out_of_order_errored_after_ready_does_not_move_it_back(receiver, processing):
    receiver.handle(request(ready(), event_id="m1"))
    answer = receiver.handle(request(errored(), event_id="m2"))
    assert answer["statusCode"] == 200
    assert processing.get("a/1")["state"] == "ready"


def test_ready_before_the_uploader_records_processing_still_lands(receiver):
    now = time.time()
    ledger = receiver.ledger
    ledger.claim(AssetMessage("a/2", "https://h/b.mp4"), now, now + 60, "tok")  # create in flight
    assert receiver.handle(request(ready("a/2", "vid_2"), event_id="early"))["statusCode"] == 200
    assert not ledger.mark_processing("a/2", "tok", "vid_2", now + 1).won  # the uploader's late write loses
    item = ledger.get("a/2")
    assert item["state"] == "ready" and item["remote_id"] == "vid_2"


def test_event_for_another_video_or_unknown_asset_is_not_a_fault(receiver, processing):
    other = receiver.handle(request(ready(remote="vid_stray"), event_id="s1"))
    assert other["statusCode"] == 200 and processing.get("a/1")["state"] == "processing"
    unknown = receiver.handle(request(ready("nobody/1"), event_id="s2"))
    assert unknown["statusCode"] == 200 and json.loads(unknown["body"])["result"] == "unknown asset"
    noise = receiver.handle(request({"type": "video.created", "data": {}}, event_id="s3"))
    assert noise["statusCode"] == 200


def test_bad_json_behind_a_valid_signature_is_400(receiver):
    assert receiver.handle(request(b"{not json"))["statusCode"] == 400


def test_oversize_body_is_413(receiver):
    big = {"type": "video.ready", "pad": "x" * (MAX_BODY_BYTES + 10)}
    assert receiver.handle(request(big))["statusCode"] == 413


def test_rotation_accepts_the_previous_secret(aws, table, events_table, processing):
    rotating = make_receiver(aws, table, events_table, secrets=(SECRET, OLD_SECRET))
    assert rotating.handle(request(ready(), secret=OLD_SECRET))["statusCode"] == 200
    assert processing.get("a/1")["state"] == "ready"


def test_ledger_outage_is_a_5xx_and_the_retry_is_not_swallowed(receiver, processing):
    real = receiver.ledger.settle_event

    def down(*args, **kwargs):
        raise RuntimeError("ledger unavailable")

    receiver.ledger.settle_event = down
    assert receiver.handle(request(ready(), event_id="retry-me"))["statusCode"] == 500
    receiver.ledger.settle_event = real
    assert receiver.handle(request(ready(), event_id="retry-me"))["statusCode"] == 200  # redelivery acts
    assert processing.get("a/1")["state"] == "ready"


class _Crash(BaseException):
    """The invocation dies (timeout, out of memory) in the middle of handling the event."""


class _DiesOnLedgerWrite:
    """A DynamoDB client whose process dies at the ledger's write; every other call goes through."""

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        if name in ("update_item", "transact_write_items"):

            def die(**kwargs):
                raise _Crash()

            return die
        return getattr(self._real, name)


def test_a_crash_between_recording_the_event_and_settling_cannot_lose_it(receiver, processing):
    real = receiver.ledger.client
    receiver.ledger.client = _DiesOnLedgerWrite(real)
    with pytest.raises(_Crash):
        receiver.handle(request(ready(), event_id="crash-me"))
    receiver.ledger.client = real
    answer = receiver.handle(request(ready(), event_id="crash-me"))  # the provider redelivers
    assert json.loads(answer["body"])["result"] == "ready"
    assert processing.get("a/1")["state"] == "ready"


@pytest.mark.parametrize("secrets", [(), ("whsec_not!base64",), ("\ud800",)], ids=["none", "bad-base64", "not-text"])
def test_no_usable_secret_is_a_5xx_so_the_provider_keeps_the_event(aws, table, events_table, processing, secrets):
    unconfigured = make_receiver(aws, table, events_table, secrets=secrets)
    answer = unconfigured.handle(request(ready()))
    assert answer["statusCode"] == 503, "a 401 tells the provider to drop the event for good"
    assert processing.get("a/1")["state"] == "processing"
    configured = make_receiver(aws, table, events_table)
    assert configured.handle(request(ready()))["statusCode"] == 200  # the retry, once the secret is set


@pytest.mark.parametrize("kind", [["video.ready"], {"video.ready": 1}, 7, None])
def test_a_signed_event_whose_type_is_not_a_string_is_400_not_500(receiver, processing, kind):
    answer = receiver.handle(request({**ready(), "type": kind}))
    assert answer["statusCode"] == 400
    assert processing.get("a/1")["state"] == "processing"


def test_the_same_signature_header_twice_in_different_case_is_refused(aws, table, events_table, processing):
    seed = make_receiver(aws, table, events_table, scheme=Scheme.SEED, secrets=("seed-secret",))
    good = request(ready(), secret="seed-secret", scheme=Scheme.SEED)
    # The forged spelling first: collapsing names case-insensitively would keep the genuine one last.
    forged = {**good, "headers": {"X-Signature": "0" * 64, **good["headers"]}}
    assert seed.handle(forged)["statusCode"] == 401
    assert processing.get("a/1")["state"] == "processing"
    assert seed.handle(good)["statusCode"] == 200


def test_an_event_for_a_video_no_asset_records_asks_the_provider_nothing(aws, table, events_table):
    """A media the ledger does not record (a lost create's, before the uploader's retry finds it) cannot be
    settled whatever a read says: none is made. JW Player's every call counts against 60 a minute."""
    creds = json.dumps({"site_id": "Site1234", "api_secret": "s3cret"})
    provider = build("jwplayer", "https://provider.invalid", lambda: creds)
    asked: list[str] = []
    provider.poll = lambda asset_id, remote_id: asked.append(remote_id)  # type: ignore[method-assign]
    receiver = Receiver(
        ledger=Ledger(table, aws("dynamodb")), events_table=events_table, provider=provider, secrets=lambda: [SECRET]
    )
    for kind in ("conversions_complete", "media_reuploaded"):  # one settled from the ledger, one read
        doc = {"event": kind, "media_id": "Unknown1", "webhook_id": "Hook0001", "site_id": "Site1234",
               "event_time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}  # fmt: skip
        answer = receiver.handle(request(doc, scheme=Scheme.JWPLAYER, event_id=kind))
        assert (answer["statusCode"], json.loads(answer["body"])["result"]) == (200, "unknown asset"), answer
    assert asked == []


header_names = st.sampled_from(["webhook-id", "webhook-timestamp", "webhook-signature", "x-signature", "content-type"])


def test_a_jwplayer_ready_event_settles_from_the_ledger_without_a_read(aws, table, events_table):
    """JW Player's every call counts against 60 a minute, so its conversions_complete settles from what the
    ledger holds. The provider here cannot be reached: had the webhook asked it, nothing would have settled."""
    creds = json.dumps({"site_id": "Site1234", "api_secret": "s3cret"})
    receiver = Receiver(
        ledger=Ledger(table, aws("dynamodb")),
        events_table=events_table,
        provider=build("jwplayer", "https://provider.invalid", lambda: creds),
        secrets=lambda: [SECRET],
    )
    now, ledger = time.time(), receiver.ledger
    for asset_id, remote, privacy in (("jw/public", "Media001", "public"), ("jw/held", "Media002", "private")):
        ledger.claim(AssetMessage(asset_id, "https://h/a.mp4", privacy=privacy), now, now + 60, "tok")
        ledger.mark_processing(asset_id, "tok", remote, now)
    for remote in ("Media001", "Media002", "Media003"):  # the third: a media the ledger does not record
        doc = {"event": "conversions_complete", "media_id": remote, "webhook_id": "Hook0001", "site_id": "Site1234",
               "event_time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}  # fmt: skip
        answer = receiver.handle(request(doc, scheme=Scheme.JWPLAYER, event_id=remote))
        assert answer["statusCode"] == 200, answer
        if remote == "Media003":
            assert json.loads(answer["body"])["result"] == "unknown asset", answer
    public, held = ledger.get("jw/public"), ledger.get("jw/held")
    assert public["state"] == held["state"] == "ready", (public, held)
    assert public["playback_info"]["policy"] == "public" and held["playback_info"]["policy"] == "signed"  # held
    assert public["playback_info"]["hls"].endswith("/Media001/manifest.m3u8") and "provider_duration_s" not in public


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.one_of(st.binary(max_size=400), st.builds(lambda d: json.dumps(d).encode(), st.just(ready()))),
    headers=st.dictionaries(st.one_of(header_names, st.text(max_size=20)), st.text(max_size=120), max_size=6),
    b64=st.booleans(),
)
def test_fuzz_never_5xx_and_never_a_change_without_a_valid_signature(receiver, processing, body, headers, b64):
    raw = base64.b64encode(body).decode() if b64 else body.decode("utf-8", "replace")
    answer = receiver.handle({"headers": headers, "body": raw, "isBase64Encoded": b64})
    assert answer["statusCode"] < 500
    assert answer["statusCode"] in (400, 401, 413)
    assert processing.get("a/1")["state"] == "processing"


def test_a_ready_video_with_tracks_or_extras_is_handed_to_the_tracks_worker_at_once_and_once(receiver):
    """The uploader's tracks message met the video processing and comes back only after up to 2 minutes; the
    webhook that turns it ready tells the tracks worker now. A video with nothing for it, a rejected one, and a
    replayed event send nothing."""
    from migrator.messages import Track

    told: list[str] = []
    receiver.tracks_now = told.append
    now, ledger = time.time(), receiver.ledger
    rows = {
        "t/captions": AssetMessage("t/captions", "https://h/a.mp4", tracks=(Track("https://h/en.vtt", "en"),)),
        "t/thumbnail": AssetMessage("t/thumbnail", "https://h/b.mp4", thumbnail_url="https://h/b.jpg"),
        "t/plain": AssetMessage("t/plain", "https://h/c.mp4"),
        "t/refused": AssetMessage("t/refused", "https://h/d.mp4", tracks=(Track("https://h/en.vtt", "en"),)),
    }
    for n, msg in enumerate(rows.values()):
        ledger.claim(msg, now, now + 60, "tok")
        ledger.mark_processing(msg.asset_id, "tok", f"vid_{n}", now)
    for n, asset_id in enumerate(rows):
        event = errored(asset_id, f"vid_{n}") if asset_id == "t/refused" else ready(asset_id, f"vid_{n}")
        assert receiver.handle(request(event, event_id=f"e{n}"))["statusCode"] == 200
    assert receiver.handle(request(ready("t/captions", "vid_0"), event_id="e0"))["statusCode"] == 200  # replayed
    assert told == ["t/captions", "t/thumbnail"]
    assert ledger.get("t/captions")["state"] == "ready" and ledger.get("t/refused")["state"] == "rejected"


def test_a_tracks_queue_that_cannot_be_reached_leaves_the_ready_answer_as_it_is(receiver):
    def unreachable(asset_id):
        raise ConnectionError("SQS unreachable")

    receiver.tracks_now = unreachable
    now, msg = time.time(), AssetMessage("t/down", "https://h/a.mp4", thumbnail_url="https://h/a.jpg")
    receiver.ledger.claim(msg, now, now + 60, "tok")
    receiver.ledger.mark_processing("t/down", "tok", "vid_down", now)
    answer = receiver.handle(request(ready("t/down", "vid_down"), event_id="down"))
    assert answer["statusCode"] == 200 and json.loads(answer["body"])["result"] == "ready"
    assert receiver.ledger.get("t/down")["state"] == "ready"
