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

from boto3.dynamodb.types import TypeSerializer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from migrator.cli.errors import CliError
from migrator.cli.inventory import BadRow, Row, Skipped, read_inventory
from migrator.dynamo import typed
from migrator.fate import Outcome, classify_create, classify_lookup, classify_video
from migrator.messages import AssetMessage, Poison, parse_message
from migrator.retry import retry_after_from_headers
from migrator.signatures import Scheme, SignatureError, verify
from migrator.webhook import event_id_of, interpret

settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=20_000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

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


@given(event=json_values, body=st.binary(max_size=100), verified=st.one_of(st.none(), any_text))
def test_any_verified_event_is_interpreted_without_raising(event, body, verified):
    action = interpret(event)
    assert action.target is None or action.asset_id
    assert event_id_of(verified, event, body)


http_statuses = st.one_of(st.sampled_from([200, 201, 202, 204, 400, 401, 404, 409, 429, 500, 503]), st.integers(0, 999))
headers = st.dictionaries(
    st.sampled_from(["Retry-After", "retry-after", "X-RateLimit-Retry-After", "X-RateLimit-Reset", "Date"]) | any_text,
    any_text,
    max_size=4,
)


@given(status=http_statuses, body=json_values, text=st.one_of(st.none(), any_text), headers=headers)
def test_any_provider_answer_is_classified(status, body, text, headers):
    for classify in (classify_create, classify_lookup):
        assert isinstance(classify(status, body, text, headers, 1_800_000_000.0), Outcome)
    video = classify_video(body)
    assert video.target is None or video.status or video.remote_id is None or video.target
    wait = retry_after_from_headers(headers, 1_800_000_000.0)
    assert wait is None or wait >= 0
