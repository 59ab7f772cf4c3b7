"""The webhook's pure parts: the signing secrets it accepts during a rotation, and how soon.

How each provider's events become ledger actions is in test_providers.py.
"""

import base64
import json

import pytest
from aws_lambda_powertools.utilities import parameters
from migrator.signatures import Scheme, sign
from migrator.webhook import SECRET_REREAD_EVERY_S, build, parse_secrets

NOW = 1_800_000_000.0
OLD = "whsec_" + base64.b64encode(b"o" * 24).decode()
NEW = "whsec_" + base64.b64encode(b"n" * 24).decode()


def test_secrets_for_rotation():
    assert parse_secrets('{"current": "new", "previous": "old"}') == ["new", "old"]
    assert parse_secrets('{"current": "new"}') == ["new"]
    assert parse_secrets("plain-secret\n") == ["plain-secret"]
    assert parse_secrets("") == []


class SecretsManager:
    """Secrets Manager as Powertools serves it: the first read is cached (for max_age), and a
    read with force_fetch goes to the store and refreshes the cache."""

    def __init__(self, value: str):
        self.value, self.cached, self.fetches, self.down = value, None, 0, False

    def get_secret(self, name, max_age=None, force_fetch=False, **_):
        assert name == "webhook-secret" and max_age == 300
        if self.cached is None or force_fetch:
            self.fetches += 1
            if self.down:
                raise ConnectionError("Secrets Manager unreachable")
            self.cached = self.value
        return self.cached


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(monkeypatch):
    store = SecretsManager(OLD)
    monkeypatch.setattr(parameters, "get_secret", store.get_secret)
    return store


@pytest.fixture
def receiver(monkeypatch, store):
    """The webhook as its handler builds it (the stack's env), its secret behind the fake store."""
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    env = {
        "LEDGER_TABLE": "ledger",
        "WEBHOOK_EVENTS_TABLE": "events",
        "PROVIDER": "generic",
        "PROVIDER_BASE_URL": "https://provider.invalid",
        "WEBHOOK_SCHEME": Scheme.STANDARD.value,
        "WEBHOOK_SECRET_NAME": "webhook-secret",
    }
    receiver = build(env)
    receiver.clock, receiver.monotonic = lambda: NOW, Clock()
    return receiver


def request(secret: str, event_id: str = "msg_1") -> dict:
    # An event that is no outcome: verified and acknowledged, nothing for the ledger to do.
    body = json.dumps({"type": "video.created", "data": {"id": "vid_1"}}).encode()
    return {"headers": sign(Scheme.STANDARD, body, secret, NOW, event_id), "body": body.decode()}


def test_a_secret_rotated_as_the_runbook_says_is_accepted_on_the_first_request_after(receiver, store):
    assert receiver.handle(request(OLD))["statusCode"] == 200  # the old secret is now cached
    store.value = json.dumps({"current": NEW, "previous": OLD})  # the runbook's first step
    receiver.monotonic.now += 1
    assert receiver.handle(request(NEW, "msg_2"))["statusCode"] == 200  # signed at the provider with the new one
    assert store.fetches == 2
    receiver.monotonic.now += 1
    assert receiver.handle(request(NEW, "msg_3"))["statusCode"] == 200  # from the refreshed cache
    assert receiver.handle(request(OLD, "msg_4"))["statusCode"] == 200  # deliveries still signed with the old
    assert store.fetches == 2


def test_a_flood_of_forgeries_reads_the_secret_again_at_most_once_a_window(receiver, store):
    forged = "whsec_" + base64.b64encode(b"f" * 24).decode()
    answers = []
    for second in range(int(SECRET_REREAD_EVERY_S) * 3):
        receiver.monotonic.now = second + 0.5
        answers += [receiver.handle(request(forged, f"forged_{second}_{n}"))["statusCode"] for n in range(10)]
    assert set(answers) == {401}
    assert store.fetches == 1 + 3  # the first read, then one re-read in each 30 s window


def test_a_secret_that_cannot_be_read_again_answers_503_so_a_genuine_event_is_retried(receiver, store):
    assert receiver.handle(request(OLD))["statusCode"] == 200
    store.value, store.down = NEW, True
    answer = receiver.handle(request(NEW, "msg_2"))
    assert answer["statusCode"] == 503 and NEW not in answer["body"]
    receiver.monotonic.now += SECRET_REREAD_EVERY_S
    store.down = False
    assert receiver.handle(request(NEW, "msg_3"))["statusCode"] == 200


def test_the_rest_payload_keeps_a_header_sent_twice_so_it_is_refused():
    """API Gateway's REST proxy payload keeps only the last value in `headers`; `multiValueHeaders`
    has both, and a signature header sent twice must be refused, not one of them believed."""
    from migrator.signatures import Scheme, SignatureError, sign, verify
    from migrator.webhook import request_headers

    body, secret = b'{"type": "video.ready"}', "s3cret"
    good = sign(Scheme.SEED, body, secret, 1_700_000_000)
    ((name, value),) = good.items()
    twice = {"headers": {name: value}, "multiValueHeaders": {name: ["00" * 32, value]}}
    once = {"headers": {name: value}, "multiValueHeaders": {name: [value]}}

    assert verify(Scheme.SEED, body, request_headers(once), [secret], 1_700_000_000)
    import pytest

    with pytest.raises(SignatureError, match="duplicate header"):
        verify(Scheme.SEED, body, request_headers(twice), [secret], 1_700_000_000)
    assert request_headers({"headers": {"a": "b"}}) == {"a": "b"}  # the HTTP API payload, as before
