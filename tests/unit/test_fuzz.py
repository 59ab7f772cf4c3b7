"""Fuzzing the edges where untrusted input enters: messages, inventory rows, webhooks, provider answers.

Each property is the contract the code documents: a message is an AssetMessage or
Poison (and an accepted one can always be stored), an inventory yields rows or a
CliError, a signature check passes or raises SignatureError, a provider's answer is
classified. Hypothesis draws a bounded number of examples so the suite stays fast;
`HYPOTHESIS_PROFILE=long` draws many more when hunting.
"""

from __future__ import annotations

import json
import os

import requests
from boto3.dynamodb.types import TypeSerializer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from migrator.dynamo import typed
from migrator.fate import Outcome
from migrator.messages import AssetMessage, Poison, parse_message
from migrator.providers import PROVIDERS, AssetRef, EventError, Poll, WebhookEvent, build
from migrator.signatures import Scheme, SignatureError, sign, verify
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
EVENT_FIELDS = {"id": scalars, "data": json_values, "videoId": scalars, "status": json_values, "uid": scalars}


@given(
    name=st.sampled_from(list(PROVIDERS)),
    event=st.one_of(json_values, st.fixed_dictionaries({"type": st.sampled_from(EVENT_TYPES)}, optional=EVENT_FIELDS)),
)
def test_any_signed_event_is_read_or_refused_with_a_reason(name, event):
    """A correctly signed body of any shape: each provider reads it or says why (EventError), never crashes."""
    body = json.dumps(event).encode()
    scheme = Scheme.SEED if name == "generic" else Scheme(name)
    provider = build(name, "https://p.example", lambda: None, clock=lambda: NOW)
    emitted = {"emittedAt": "2027-01-15T08:00:00Z"} if name == "apivideo" else {}
    try:
        result = provider.read_webhook(body, sign(scheme, body, "s", NOW), ["s"], NOW, 10**9 if emitted else 300)
    except EventError as exc:
        assert exc.reason
        return
    assert isinstance(result, WebhookEvent) and result.event_id
    assert result.video is None or result.video.target in (None, State.READY, State.REJECTED)


http_statuses = st.one_of(st.sampled_from([200, 201, 202, 204, 400, 401, 404, 409, 429, 500, 503]), st.integers(0, 999))
headers = st.dictionaries(
    st.sampled_from(
        ["Retry-After", "retry-after", "X-RateLimit-Retry-After", "X-RateLimit-Limit", "Ratelimit", "Ratelimit-Policy"]
    )
    | any_text,
    any_text,
    max_size=4,
)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(list(PROVIDERS)),
    answers=st.lists(st.tuples(http_statuses, json_values, headers), min_size=1, max_size=4),
)
def test_any_provider_answer_is_classified(name, answers):
    """Whatever a provider answers, create, find and poll return their documented types."""
    provider = build(
        name,
        "https://p.example",
        lambda: (
            '{"token_id": "i", "token_secret": "s", "account_id": "a1", "api_token": "t", "api_key": "k", "token": "t"}'
        ),
        clock=lambda: NOW,
    )
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
