"""What goes on the wire for any asset id, whatever text it holds, and the transport's failures."""

from __future__ import annotations

import json

import pytest
import requests
from migrator.fate import OutcomeKind
from migrator.providers import AssetRef, build
from migrator.providers.http import HttpTransport, TransportError
from migrator.providers.keys import idempotency_key

AWKWARD_IDS = ["library/日本語.mp4", "café", " leading space", "tab-free but ünïcödé", "emoji 🎬", "a" * 255]


@pytest.mark.parametrize("asset_id", AWKWARD_IDS)
def test_the_idempotency_key_is_header_safe_for_any_id(asset_id):
    key = idempotency_key(asset_id)
    assert key.isascii() and key.isprintable() and " " not in key and len(key) <= 64
    # requests accepts it as a header value (it refused the raw ' leading space' id).
    prepared = requests.Request("POST", "https://p.example/videos", headers={"Idempotency-Key": key}).prepare()
    assert prepared.headers["Idempotency-Key"] == key


def test_the_key_is_stable_per_id_and_generation_and_differs_otherwise():
    assert idempotency_key("café") == idempotency_key("café")
    assert idempotency_key("café") != idempotency_key("cafe")  # distinct ids never share a key
    assert idempotency_key("café", 1) != idempotency_key("café", 0)


class _Recorder(requests.Session):
    def __init__(self):
        super().__init__()
        self.sent: list[requests.PreparedRequest] = []

    def send(self, request, **kwargs):
        self.sent.append(request)
        response = requests.Response()
        response.status_code, response._content = 201, b'{"id": "vid_1"}'
        return response


@pytest.mark.parametrize("asset_id", AWKWARD_IDS)
def test_create_sends_the_exact_id_in_the_body_and_the_hash_in_the_header(asset_id):
    session = _Recorder()
    generic = build("generic", "https://p.example", lambda: "t", session=session)
    assert generic.create(AssetRef(asset_id), "https://h/a.mp4").kind is OutcomeKind.CREATED
    (request,) = session.sent
    assert json.loads(request.body)["metadata"]["migration_ref"] == asset_id
    assert request.headers["Idempotency-Key"] == idempotency_key(asset_id)


def test_a_request_that_cannot_be_encoded_is_a_transport_error_not_a_crash():
    class Refusing(requests.Session):
        def send(self, request, **kwargs):
            raise UnicodeEncodeError("latin-1", "日", 0, 1, "ordinal not in range(256)")

    transport = HttpTransport("https://p.example", lambda: {}, session=Refusing())
    with pytest.raises(TransportError, match="could not be encoded"):
        transport.send("GET", "/videos/vid_1")


def test_no_answer_is_a_transient_outcome_the_create_may_have_happened():
    class Down(requests.Session):
        def send(self, request, **kwargs):
            raise requests.ConnectTimeout("no route")

    generic = build("generic", "https://p.example", lambda: "t", session=Down())
    outcome = generic.create(AssetRef("a"), "https://h/a.mp4")
    assert (outcome.kind, outcome.error) == (OutcomeKind.TRANSIENT, "timeout")
