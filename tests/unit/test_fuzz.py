"""Fuzzing the edges where untrusted input enters: messages, inventory rows, webhooks, provider answers.

Each property is the contract the code documents: a message is an AssetMessage or
Poison (and an accepted one can always be stored), an inventory yields rows or a
CliError, a signature check passes or raises SignatureError, a provider's answer is
classified. Hypothesis draws a bounded number of examples so the suite stays fast;
`HYPOTHESIS_PROFILE=long` draws many more when hunting.
"""

from __future__ import annotations

import json
import math
import os

import pytest
import requests
from boto3.dynamodb.types import TypeSerializer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from migrator.dynamo import typed
from migrator.fate import Outcome
from migrator.messages import AssetMessage, Poison, parse_message
from migrator.providers import (
    PROVIDERS,
    AssetRef,
    AwsTarget,
    EventError,
    ListingError,
    Poll,
    Video,
    WebhookEvent,
    apivideo,
    build,
    bunny,
    cloudflare,
    generic,
    mux,
    vimeo,
)
from migrator.providers.facts import MAX_DURATION_S
from migrator.providers.jwplayer import read_media as jw_read_media
from migrator.signatures import MAX_TOKEN_CHARS, Scheme, SignatureError, sign, verify
from migrator.states import State
from migrator_cli.errors import CliError
from migrator_cli.inventory import BadRow, Row, Skipped, read_inventory

settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=20_000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
NOW = 1_800_000_000.0

# Text with everything JSON can smuggle in: lone surrogates, controls, astral characters.
any_char = st.characters(exclude_categories=())
any_text = st.text(any_char, max_size=40)
numbers = st.one_of(
    st.integers(min_value=-(10**60), max_value=10**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e125, -1e125, 9.99e124, 10**38, 10**37, 5e-324]),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, any_text)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4), max_leaves=25
)
_FIELD_NAMES = st.sampled_from(["id", "data", "status", "duration", "created_at", "qualities", "uid", "meta"])
# What a hostile or broken provider can put in JSON: integers no float can hold (a 400-digit
# `duration`), every type where another is expected, and nesting.
absurd_numbers = st.one_of(
    numbers,
    st.integers(min_value=-(10**400), max_value=10**400),
    st.sampled_from([10**400, -(10**400), 10**308 * 10, 2**1024]),
)
garbage = st.recursive(
    st.one_of(st.none(), st.booleans(), absurd_numbers, any_text),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.one_of(any_text, _FIELD_NAMES), inner, max_size=5),
    max_leaves=30,
)


deep = st.integers(min_value=25, max_value=40).map(lambda n: json.loads('{"a":' * n + "1" + "}" * n))
messages = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(any_text, scalars),
        "source_url": st.one_of(st.sampled_from(["https://h/a.mp4", "s3://b/k.mp4", "ftp://x/y"]), any_text),
        "title": st.one_of(any_text, scalars),
        "duration_s": st.one_of(numbers, scalars),
        "metadata": st.one_of(json_values, deep),
        "extra": scalars,
    },
)


@given(doc=st.one_of(messages, json_values), ascii_only=st.booleans())
def test_a_message_is_accepted_storable_or_poison_never_an_error(doc, ascii_only):
    body = json.dumps(doc, ensure_ascii=ascii_only) if ascii_only else _dumps_lossy(doc)
    result = parse_message(body)
    assert isinstance(result, AssetMessage | Poison)
    if isinstance(result, AssetMessage):
        # What the claim writes must marshal: this is where a bad value would fail for days.
        values = {"id": result.asset_id, "src": result.source_url, "meta": result.metadata}
        if result.title is not None:
            values["title"] = result.title
        if result.duration_s is not None:
            values["duration"] = result.duration_s
        for value in typed(values).values():
            assert value
        TypeSerializer().serialize(typed({"m": result.metadata})["m"]["M"] if result.metadata else {})
        json.dumps(values, ensure_ascii=False).encode("utf-8")  # and travel as UTF-8


def _dumps_lossy(doc) -> str:
    try:
        return json.dumps(doc, ensure_ascii=False)
    except (ValueError, TypeError):
        return json.dumps(doc)


@given(raw=st.binary(max_size=300))
def test_raw_bytes_are_a_message_or_poison(raw):
    assert isinstance(parse_message(raw), AssetMessage | Poison)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(content=st.binary(max_size=600), fmt=st.sampled_from(["csv", "jsonl"]))
def test_an_inventory_yields_rows_or_one_clear_error(tmp_path_factory, content, fmt):
    path = tmp_path_factory.mktemp("inv") / f"inventory.{fmt}"
    path.write_bytes(content)
    try:
        records = list(read_inventory(str(path)))
    except CliError as exc:
        assert str(exc)
        return
    for record in records:
        assert isinstance(record, Row | BadRow | Skipped)
        if isinstance(record, BadRow):
            assert record.line >= 1 and record.reason


header_names = st.sampled_from(
    ["webhook-id", "webhook-timestamp", "webhook-signature", "Webhook-Signature", "x-signature", "X-Signature"]
)


@given(
    scheme=st.sampled_from(list(Scheme)),
    body=st.binary(max_size=200),
    headers=st.dictionaries(st.one_of(header_names, any_text), st.one_of(any_text, st.none()), max_size=6),
    secrets=st.lists(st.one_of(any_text, st.just("whsec_" + "A" * 32), st.just("whsec_!!")), max_size=3),
    now=st.one_of(st.floats(allow_nan=True), st.integers(min_value=0, max_value=2**40)),
)
def test_a_signature_check_passes_or_says_why(scheme, body, headers, secrets, now):
    try:
        verify(scheme, body, headers, secrets, now)
    except SignatureError as exc:
        assert exc.reason and "\n" not in exc.reason


EVENT_TYPES = [
    "video.ready",
    "video.errored",
    "video.asset.ready",
    "video.asset.errored",
    "video.encoding.quality.completed",
]
# The targets reached over HTTP of their own; the aws target's SDK answers and EventBridge events are fuzzed below.
HTTP_TARGETS = [name for name, cls in PROVIDERS.items() if cls.speaks_http]
EVENT_FIELDS = {"id": scalars, "data": json_values, "videoId": scalars, "status": json_values, "uid": scalars}


@given(
    name=st.sampled_from(HTTP_TARGETS),
    event=st.one_of(json_values, st.fixed_dictionaries({"type": st.sampled_from(EVENT_TYPES)}, optional=EVENT_FIELDS)),
)
def test_any_signed_event_is_read_or_refused_with_a_reason(name, event):
    """A correctly signed body of any shape: each provider reads it or says why (EventError), never crashes."""
    body = json.dumps(event).encode()
    provider = build(name, "https://p.example", lambda: None, clock=lambda: NOW)
    scheme = provider.webhook_scheme  # the scheme it verifies in (Vimeo sends none: the seed test of doctor)
    emitted = {"emittedAt": "2027-01-15T08:00:00Z"} if name == "apivideo" else {}
    try:
        result = provider.read_webhook(body, sign(scheme, body, "s", NOW), ["s"], NOW, 10**9 if emitted else 300)
    except EventError as exc:
        assert exc.reason
        return
    except SignatureError as exc:  # JW Player's token carries the body: past API Gateway's header quota, refused
        assert name == "jwplayer" and exc.reason == "header too long" and len(body) * 4 // 3 > MAX_TOKEN_CHARS
        return
    assert isinstance(result, WebhookEvent) and result.event_id
    assert result.video is None or result.video.target in (None, State.READY, State.REJECTED)


_CREDENTIALS = (
    '{"token_id": "i", "token_secret": "s", "account_id": "a1", "api_token": "t", "api_key": "k", "token": "t"'
    ', "library_id": "7", "site_id": "s1", "api_secret": "t"}'
)
http_statuses = st.one_of(st.sampled_from([200, 201, 202, 204, 400, 401, 404, 409, 429, 500, 503]), st.integers(0, 999))
headers = st.dictionaries(
    st.sampled_from(
        ["Retry-After", "retry-after", "X-RateLimit-Retry-After", "X-RateLimit-Limit", "Ratelimit", "Ratelimit-Policy"]
    )
    | any_text,
    any_text,
    max_size=4,
)


@pytest.mark.slow  # seconds of real time or work: `make unit` and CI run it, `make quick` does not
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(HTTP_TARGETS),
    answers=st.lists(st.tuples(http_statuses, st.one_of(json_values, garbage), headers), min_size=1, max_size=4),
)
def test_any_provider_answer_is_classified(name, answers):
    """Whatever a provider answers, create, find and poll return their documented types."""
    provider = build(name, "https://p.example", lambda: _CREDENTIALS, clock=lambda: NOW)
    for operation in (
        lambda: provider.create(AssetRef("a/1"), "https://h/a.mp4"),
        lambda: provider.find("a/1", NOW - 60),
        lambda: provider.poll("a/1", "v1"),
        lambda: provider.poll("a/1", None),
    ):
        provider.http.session = _Canned(answers)
        result = operation()
        assert isinstance(result, Outcome | Poll)
    signal = provider.rate_signal(answers[0][2])
    assert signal.retry_after is None or signal.retry_after >= 0


class _Canned(requests.Session):
    def __init__(self, answers):
        super().__init__()
        self.answers = list(answers)

    def send(self, request, **kwargs):
        status, body, headers = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        response = requests.Response()
        response.status_code = status
        response._content = json.dumps(body).encode()
        response.headers.update({k: v for k, v in headers.items() if v.isascii() and v.isprintable()})
        return response


# --- every reader of a provider's answer is total: garbage reads as unknown, never as an exception ---


def _shaped(fields: dict) -> st.SearchStrategy:
    """A provider's object with its own field names, each holding anything at all."""
    return st.fixed_dictionaries({}, optional={name: st.one_of(garbage, shape) for name, shape in fields.items()})


_TIMES = st.sampled_from(["1607452572", "2026-11-30T10:00:00Z", "0001-01-01T00:00:00+01:00", "9" * 40])
MUX_ASSET = _shaped(
    {
        "id": any_text,
        "passthrough": any_text,
        "status": st.sampled_from(["preparing", "ready", "errored"]),
        "duration": absurd_numbers,
        "created_at": st.one_of(_TIMES, absurd_numbers),
        "errors": st.fixed_dictionaries({}, optional={"type": garbage, "messages": garbage}),
    }
)
STREAM_VIDEO = _shaped(
    {
        "uid": any_text,
        "meta": st.fixed_dictionaries({}, optional={"migration_ref": garbage}),
        "status": st.fixed_dictionaries(
            {}, optional={"state": st.sampled_from(["ready", "error", "queued"]), "errorReasonCode": garbage}
        ),
        "duration": absurd_numbers,
        "created": st.one_of(_TIMES, absurd_numbers),
    }
)
APIVIDEO_STATUS = _shaped(
    {
        "ingest": st.fixed_dictionaries({}, optional={"status": garbage}),
        "encoding": st.fixed_dictionaries(
            {},
            optional={
                "playable": st.one_of(st.booleans(), garbage),
                "qualities": st.one_of(absurd_numbers, st.lists(st.one_of(garbage, _shaped({"status": garbage})))),
                "metadata": st.fixed_dictionaries({}, optional={"duration": absurd_numbers}),
            },
        ),
    }
)
APIVIDEO_VIDEO = _shaped(
    {
        "videoId": any_text,
        "metadata": st.lists(st.one_of(garbage, _shaped({"key": st.just("migration_ref"), "value": garbage}))),
        "createdAt": st.one_of(_TIMES, absurd_numbers),
    }
)
GENERIC_VIDEO = _shaped(
    {
        "id": any_text,
        "data": garbage,
        "metadata": st.fixed_dictionaries({}, optional={"migration_ref": garbage}),
        "status": st.sampled_from(["ready", "errored", "preparing"]),
        "duration": absurd_numbers,
        "created_at": st.one_of(_TIMES, absurd_numbers),
        "error": garbage,
    }
)
VIMEO_VIDEO = _shaped(
    {
        "uri": st.one_of(any_text, st.just("/videos/123")),
        "description": st.one_of(any_text, st.just("migration-ref vm0123456789abcdef0123456789abcdef a/1")),
        "status": st.sampled_from(["available", "transcoding", "quota_exceeded", "transcoding_error"]),
        "upload": st.fixed_dictionaries({}, optional={"status": garbage}),
        "transcode": st.fixed_dictionaries(
            {}, optional={"status": st.sampled_from(["complete", "error", "in_progress"])}
        ),
        "privacy": st.fixed_dictionaries({}, optional={"view": garbage}),
        "duration": absurd_numbers,
        "created_time": st.one_of(_TIMES, absurd_numbers),
    }
)
JW_MEDIA = _shaped(
    {
        "id": any_text,
        "status": st.sampled_from(["ready", "failed", "processing"]),
        "duration": absurd_numbers,
        "created": st.one_of(_TIMES, absurd_numbers),
        "metadata": st.fixed_dictionaries(
            {}, optional={"custom_params": garbage, "publish_start_date": garbage, "publish_end_date": garbage}
        ),
        "error_message": garbage,
    }
)
READERS = {
    "mux.read_asset": (mux.read_asset, MUX_ASSET),
    "vimeo.read_video": (vimeo.read_video, VIMEO_VIDEO),
    "cloudflare.read_stream_video": (cloudflare.read_stream_video, STREAM_VIDEO),
    "apivideo.read_status": (lambda doc: apivideo.read_status("vi1", doc, "a/1"), APIVIDEO_STATUS),
    "apivideo.read_listed": (apivideo.read_listed, APIVIDEO_VIDEO),
    "generic.read_video": (generic.read_video, GENERIC_VIDEO),
    "jwplayer.read_media": (lambda doc: jw_read_media(doc, NOW, False), JW_MEDIA),
}

BUNNY_VIDEO = _shaped(
    {
        "guid": any_text,
        "title": any_text,
        "status": st.one_of(st.integers(0, 10), absurd_numbers),
        "length": absurd_numbers,
        "dateUploaded": st.one_of(_TIMES, st.just("2026-11-30T10:00:00.123"), absurd_numbers),
        "metaTags": st.lists(st.one_of(garbage, _shaped({"property": st.just("migration_ref"), "value": garbage}))),
        "transcodingMessages": st.lists(st.one_of(garbage, _shaped({"level": garbage, "message": garbage}))),
    }
)
READERS["bunny.read_video"] = (bunny.read_video, BUNNY_VIDEO)


@given(reader=st.sampled_from(sorted(READERS)), data=st.data())
def test_every_reader_of_a_providers_answer_is_total(reader, data):
    read, shape = READERS[reader]
    doc = data.draw(st.one_of(shape, garbage, deep))
    video = read(doc)
    assert isinstance(video, Video)
    assert video.duration_s is None or 0 <= video.duration_s < MAX_DURATION_S
    assert video.created_at is None or math.isfinite(video.created_at)
    assert video.error is None or isinstance(video.error, str)


WEBHOOK_BODIES = {
    "generic": st.fixed_dictionaries(
        {"type": st.sampled_from(["video.ready", "video.errored", "video.created"])},
        optional={"id": garbage, "data": st.one_of(GENERIC_VIDEO, garbage)},
    ),
    "mux": st.fixed_dictionaries(
        {"type": st.sampled_from(["video.asset.ready", "video.asset.errored", "video.asset.created"])},
        optional={"id": st.one_of(any_text, garbage), "data": st.one_of(MUX_ASSET, garbage), "object": garbage},
    ),
    "cloudflare": STREAM_VIDEO,
    "apivideo": st.fixed_dictionaries(
        {"type": st.sampled_from(["video.encoding.quality.completed", "video.source.recorded"])},
        optional={"emittedAt": st.one_of(_TIMES, absurd_numbers, garbage), "videoId": garbage},
    ),
    "vimeo": st.fixed_dictionaries({"type": st.sampled_from(["migrator.doctor"])}, optional={"data": garbage}),
}

WEBHOOK_BODIES["bunny"] = _shaped({"VideoLibraryId": st.one_of(st.just(7), garbage), "VideoGuid": any_text})


WEBHOOK_BODIES["jwplayer"] = st.fixed_dictionaries(
    {"event": st.sampled_from(["conversions_complete", "media_available", "media_created"])},
    optional={"media_id": garbage, "event_time": st.one_of(_TIMES, absurd_numbers, garbage), "site_id": garbage},
)


@given(name=st.sampled_from(HTTP_TARGETS), data=st.data())
def test_every_signed_webhook_body_is_read_or_refused_with_a_reason(name, data):
    event = data.draw(st.one_of(WEBHOOK_BODIES[name], garbage))
    body = json.dumps(event).encode()
    provider = build(name, "https://p.example", lambda: None, clock=lambda: NOW)
    scheme = provider.webhook_scheme  # the scheme it verifies in (Vimeo sends none: the seed test of doctor)
    try:
        result = provider.read_webhook(body, sign(scheme, body, "s", NOW), ["s"], NOW, 300)
    except EventError as exc:
        assert exc.reason
        return
    except SignatureError as exc:  # api.video's emittedAt outside the replay window
        # (JW Player's token carries the body: one past API Gateway's header quota is refused before any HMAC)
        assert (name in ("apivideo", "jwplayer") and "tolerance" in exc.reason) or (
            name == "jwplayer" and exc.reason == "header too long" and len(body) * 4 // 3 > MAX_TOKEN_CHARS
        )
        return
    assert isinstance(result, WebhookEvent) and result.event_id
    assert result.video is None or isinstance(result.video, Video)


@given(name=st.sampled_from(HTTP_TARGETS), headers=st.dictionaries(st.one_of(header_names, any_text), any_text))
def test_every_rate_signal_reads_any_headers(name, headers):
    rate_names = ["Retry-After", "X-RateLimit-Limit", "X-RateLimit-Reset", "Ratelimit", "Ratelimit-Policy"]
    headers = {**headers, **{k: v for k, v in zip(rate_names, headers.values(), strict=False)}}
    provider = build(name, "https://p.example", lambda: None, clock=lambda: NOW)
    signal = provider.rate_signal(headers)
    assert signal.retry_after is None or signal.retry_after >= 0


LIST_KEYS = {"generic": "data", "mux": "data", "cloudflare": "result", "apivideo": "data", "vimeo": "data"}
ITEMS = {
    "generic": GENERIC_VIDEO,
    "mux": MUX_ASSET,
    "cloudflare": STREAM_VIDEO,
    "apivideo": APIVIDEO_VIDEO,
    "vimeo": VIMEO_VIDEO,
}

LIST_KEYS["bunny"], ITEMS["bunny"] = "items", BUNNY_VIDEO


LIST_KEYS["jwplayer"], ITEMS["jwplayer"] = "media", JW_MEDIA


@pytest.mark.slow  # seconds of real time or work: `make unit` and CI run it, `make quick` does not
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(HTTP_TARGETS), data=st.data())
def test_any_listing_is_read_to_its_end_or_stops_with_a_listing_error(name, data):
    """`audit`'s listing, page after page of anything: Videos, or the ListingError that says why."""
    pages = data.draw(
        st.lists(
            st.one_of(
                garbage,
                st.fixed_dictionaries(
                    {LIST_KEYS[name]: st.one_of(st.lists(st.one_of(ITEMS[name], garbage), max_size=4), garbage)},
                    optional={"next_cursor": garbage, "pagination": garbage},
                ),
            ),
            min_size=1,
            max_size=4,
        )
    )
    provider = build(name, "https://p.example", lambda: _CREDENTIALS, clock=lambda: NOW)
    provider.http.session = _Canned([(200, page, {}) for page in pages])
    try:
        for count, video in enumerate(provider.videos()):
            assert isinstance(video, Video)
            assert count < 10_000  # a listing that repeats itself must end
    except ListingError as exc:
        assert str(exc)


AWS_TARGET = AwsTarget("arn:role", "Default", "out", "https://d.cloudfront.net", "stack", archive_bucket="archive")
JOB_FIELDS = {
    "jobId": scalars,
    "status": st.one_of(st.sampled_from(["SUBMITTED", "PROGRESSING", "COMPLETE", "ERROR", "CANCELED"]), garbage),
    "userMetadata": st.one_of(
        st.fixed_dictionaries({"migrator_stack": st.just("stack")}, optional={"migrator_asset": scalars}), garbage
    ),
    "outputGroupDetails": json_values,
    "errorMessage": scalars,
    "errorCode": scalars,
}


@given(
    event=st.one_of(
        json_values,
        st.fixed_dictionaries(
            {"source": st.just("aws.mediaconvert"), "detail-type": st.just("MediaConvert Job State Change")},
            optional={"id": scalars, "detail": st.one_of(st.fixed_dictionaries({}, optional=JOB_FIELDS), garbage)},
        ),
    )
)
def test_any_job_event_is_read_or_refused_with_a_reason(event):
    """The aws target's EventBridge events (AWS vouches for the sender, not for the job's fields): read, or
    refused with a reason (EventError), never a crash that would have EventBridge retry it for a day."""
    provider = build("aws", None, lambda: None, target=AWS_TARGET, mediaconvert=object(), clock=lambda: NOW)
    try:
        read = provider.read_job_event(event if isinstance(event, dict) else {"detail": event})
    except EventError as exc:
        assert exc.reason
        return
    assert read.event_id and (
        read.video is None or read.video.remote_id is None or isinstance(read.video.remote_id, str)
    )
