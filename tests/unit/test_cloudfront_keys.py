"""The stack's CloudFront signing key (custom resource Custom::PlaybackKeyGroup): its pure decisions as tables,
the key's public form checked by `cryptography` (a second, independent implementation), and the handler's
promise to answer CloudFormation once, whatever happens, without the private key in what it says."""

from __future__ import annotations

import json
import threading
import time

import pytest
import rsa
from botocore.exceptions import ClientError
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa as crypto_rsa
from migrator.cloudfront_key_plan import (
    ENSURE,
    FAIL,
    FAILED,
    GONE,
    KEEP,
    LEAVE,
    MAKE,
    NOT_CREATED,
    PREFIX_MAX,
    RENAME,
    RESPONSE_MAX_BYTES,
    RETRY,
    SUCCESS,
    KeyGroupSeen,
    KeyResourceError,
    Outcome,
    Props,
    PublicKeySeen,
    StoredKey,
    Use,
    caller_reference,
    choose_key_group,
    choose_public_key,
    delete_outcome,
    failed_physical_id,
    failure_reason,
    holds,
    is_key_group_id,
    new_private_key_pem,
    parse_props,
    plan_update,
    public_key_pem,
    read_stored_key,
    resource_name,
    response_body,
    scrub,
    signing_key_from_secret,
)
from migrator.cloudfront_keys import Responder, answer

ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:stack/cloudfront-signing-key-AbCdEf"
STACK = "arn:aws:cloudformation:us-east-1:123456789012:stack/video/0a1b2c3d-0000-0000-0000-000000000000"


def _private(fmt=serialization.PrivateFormat.TraditionalOpenSSL):
    private = crypto_rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()
    return private, pem


@pytest.fixture(scope="module")
def made():
    """A key pair made by cryptography: its private PEM (PKCS#1) and its numbers as rsa holds them."""
    private, pem = _private()
    numbers = private.public_key().public_numbers()
    return private, pem, rsa.PublicKey(numbers.n, numbers.e)


@pytest.fixture(scope="module")
def other():
    private, _ = _private()
    numbers = private.public_key().public_numbers()
    return rsa.PublicKey(numbers.n, numbers.e)


# -- the properties ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"SecretArn": ARN, "Name": "video-playback"}, Props(ARN, "video-playback")),
        ({"SecretArn": ARN, "Name": "a_b-C9", "ServiceToken": "arn:..."}, Props(ARN, "a_b-C9")),
        ({"SecretArn": ARN, "Name": "x" * 128}, Props(ARN, "x" * 128)),  # a stack's name may be 128 long
        ({"SecretArn": ARN, "Name": "x" * 129}, "Name is"),
        ({"SecretArn": ARN, "Name": ""}, "Name is"),
        ({"SecretArn": ARN, "Name": "video playback"}, "Name is"),
        ({"SecretArn": ARN, "Name": "vidéo"}, "Name is"),
        ({"SecretArn": ARN}, "Name is"),
        ({"SecretArn": "my-secret", "Name": "video"}, "SecretArn"),
        ({"SecretArn": "arn:aws:ssm:us-east-1:123456789012:parameter/x", "Name": "video"}, "SecretArn"),
        ({"Name": "video"}, "SecretArn"),
        (None, "no properties"),
        (["SecretArn", ARN], "no properties"),
    ],
)
def test_properties_are_checked(raw, expected):
    if isinstance(expected, Props):
        assert parse_props(raw) == expected
    else:
        with pytest.raises(KeyResourceError, match=expected):
            parse_props(raw)


# -- the secret ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [None, "", "  \n", "{}"])
def test_an_empty_secret_holds_no_key(text):
    assert read_stored_key(text) is None


def test_a_secret_written_here_reads_back(made):
    _, pem, key = made
    for stored in (StoredKey(pem), StoredKey(pem, "K2JCJMDEHXQW5F")):
        back = read_stored_key(stored.secret_string())
        assert back == stored
        assert (back.public_key().n, back.public_key().e) == (key.n, key.e)
    assert json.loads(StoredKey(pem, "K1").secret_string()) == {"private_key_pem": pem, "public_key_id": "K1"}


def test_a_pkcs8_key_the_operator_put_there_is_used():
    private, pem = _private(serialization.PrivateFormat.PKCS8)
    stored = read_stored_key(json.dumps({"private_key_pem": pem}))
    assert stored is not None and stored.public_key().n == private.public_key().public_numbers().n


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("hunter2", "not JSON"),
        ('["a"]', "no private_key_pem"),
        ('{"password": "hunter2"}', "no private_key_pem"),
        ('{"private_key_pem": 7}', "no private_key_pem"),
        ('{"private_key_pem": "-----BEGIN RSA PRIVATE KEY-----\\nAAAA\\n-----END RSA PRIVATE KEY-----"}', "parse"),
        ('{"private_key_pem": "not a pem"}', "not an RSA private key"),
        ("PEM", "public_key_id"),  # filled in below with a good key and a bad id
    ],
)
def test_a_secret_holding_anything_else_is_refused_without_its_content(made, text, reason):
    _, pem, _ = made
    if text == "PEM":
        text = json.dumps({"private_key_pem": pem, "public_key_id": "K1/../x"})
    with pytest.raises(KeyResourceError, match=reason) as caught:
        read_stored_key(text)
    assert "hunter2" not in str(caught.value) and "AAAA" not in str(caught.value) and "PRIVATE" not in str(caught.value)


def test_the_signing_key_needs_the_public_key_id(made):
    _, pem, _ = made
    key = signing_key_from_secret(StoredKey(pem, "K2JCJMDEHXQW5F").secret_string())
    assert (key.key_id, key.private_key_pem) == ("K2JCJMDEHXQW5F", pem)
    with pytest.raises(KeyResourceError, match="no CloudFront signing key yet"):
        signing_key_from_secret(StoredKey(pem).secret_string())


# -- the key's public form and names --------------------------------------------------------------------------------


def test_the_public_pem_is_the_subject_public_key_info_cryptography_writes(made):
    private, _, key = made
    expected = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    assert public_key_pem(key) == expected.decode()  # byte for byte: "-----BEGIN PUBLIC KEY-----", 64-char lines
    assert public_key_pem(key).startswith("-----BEGIN PUBLIC KEY-----\n")


def test_a_made_key_is_2048_bit_pkcs1_and_loads_where_it_signs():
    pem = new_private_key_pem()
    assert pem.startswith("-----BEGIN RSA PRIVATE KEY-----")
    loaded = serialization.load_pem_private_key(pem.encode(), password=None)
    assert loaded.key_size == 2048 and loaded.public_key().public_numbers().e == 65537
    stored = read_stored_key(StoredKey(pem).secret_string())
    assert stored is not None and stored.public_key().n == loaded.public_key().public_numbers().n


def test_names_carry_the_prefix_and_the_keys_fingerprint(made, other):
    _, _, key = made
    name = resource_name("video", key)
    assert name.startswith("video-") and len(name) == len("video-") + 12
    assert resource_name("video", key) == name and resource_name("video", other) != name
    assert len(resource_name("x" * PREFIX_MAX, key)) == 128
    assert resource_name("x" * 128, key) == resource_name("x" * PREFIX_MAX, key)  # cut to leave the fingerprint


@pytest.mark.parametrize(
    ("stack", "logical", "same"),
    [
        (STACK, "PlaybackKeyGroup", True),
        (STACK + "x", "PlaybackKeyGroup", False),
        (STACK, "OtherKeyGroup", False),
    ],
)
def test_the_caller_reference_is_one_resources_with_one_key(made, other, stack, logical, same):
    _, _, key = made
    first = caller_reference(STACK, "PlaybackKeyGroup", key)
    assert (caller_reference(stack, logical, key) == first) is same
    assert caller_reference(STACK, "PlaybackKeyGroup", other) != first
    assert len(caller_reference(STACK, "L" * 255, key)) <= 128 and first.startswith("PlaybackKeyGroup-")


def test_holds_compares_the_key_not_its_wrapping(made, other):
    private, _, key = made
    pkcs1 = private.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.PKCS1)
    unwrapped = "".join(public_key_pem(key).split("\n")[1:-2])
    one_line = f"-----BEGIN PUBLIC KEY-----\n{unwrapped}\n-----END PUBLIC KEY-----"
    assert holds(public_key_pem(key), key) and holds(pkcs1.decode(), key) and holds(one_line, key)
    assert not holds(public_key_pem(other), key)
    assert not holds("not a key", key) and not holds("", key)


# -- the decisions -------------------------------------------------------------------------------------------------


def _seen_keys(key, other, name):
    return {
        "stored": PublicKeySeen("KSTORED", "video-old", public_key_pem(key)),
        "named": PublicKeySeen("KNAMED", name, public_key_pem(key)),
        "any": PublicKeySeen("KANY", "someone-else", public_key_pem(key)),
        "impostor": PublicKeySeen("KIMPOSTOR", name, public_key_pem(other)),
        "stranger": PublicKeySeen("KSTRANGER", "stranger", public_key_pem(other)),
    }


@pytest.mark.parametrize(
    ("listed", "stored_id", "expected"),
    [
        ([], None, None),
        (["stranger"], None, None),
        (["impostor"], None, None),  # our name, another key: not ours
        (["impostor"], "KIMPOSTOR", None),  # the secret's id, another key: not ours either
        (["any"], None, "KANY"),
        (["any", "named"], None, "KNAMED"),
        (["any", "named", "stored"], "KSTORED", "KSTORED"),
        (["named", "stored"], "KGONE", "KNAMED"),
        (["stranger", "any"], None, "KANY"),
    ],
)
def test_the_public_key_holding_the_secrets_key_is_found(made, other, listed, stored_id, expected):
    _, _, key = made
    name = resource_name("video", key)
    seen = _seen_keys(key, other, name)
    assert choose_public_key(key, name, stored_id, [seen[label] for label in listed]) == expected


@pytest.mark.parametrize(
    ("listed", "expected"),
    [
        ([], MAKE),
        ([KeyGroupSeen("G1", "other", ("K1",))], MAKE),
        ([KeyGroupSeen("G1", "video-abc", ("K1",))], Use("G1")),
        ([KeyGroupSeen("G1", "other", ("K1",)), KeyGroupSeen("G2", "video-abc", ("K0", "K1"))], Use("G2")),
        ([KeyGroupSeen("G1", "video-abc", ("K9",))], "without the public key K1"),
    ],
)
def test_the_key_group_named_ours_is_used_made_or_refused(listed, expected):
    if isinstance(expected, str) and expected != MAKE:
        with pytest.raises(KeyResourceError, match=expected):
            choose_key_group("video-abc", "K1", listed)
    else:
        assert choose_key_group("video-abc", "K1", listed) == expected


@pytest.mark.parametrize(
    ("secret_changed", "stored_id", "group", "expected"),
    [
        (False, "K1", KeyGroupSeen("G1", "video-abc", ("K1",)), KEEP),
        (False, "K1", KeyGroupSeen("G1", "old-abc", ("K1",)), RENAME),
        (True, "K1", KeyGroupSeen("G1", "video-abc", ("K1",)), ENSURE),  # a new secret: its key, maybe a new group
        (False, "K1", None, ENSURE),  # the group is gone: made again
        (False, None, KeyGroupSeen("G1", "video-abc", ("K1",)), ENSURE),  # the id never reached the secret
        (False, "K2", KeyGroupSeen("G1", "video-abc", ("K1",)), ENSURE),  # the group does not hold the key
        (False, "EMPTY", KeyGroupSeen("G1", "video-abc", ("K1",)), ENSURE),  # the secret was emptied
    ],
)
def test_what_an_update_does(made, secret_changed, stored_id, group, expected):
    _, pem, _ = made
    stored = None if stored_id == "EMPTY" else StoredKey(pem, stored_id)
    assert plan_update(secret_changed, stored, group, "video-abc") == expected


@pytest.mark.parametrize(
    ("kind", "code", "expected"),
    [
        ("key-group", "NoSuchResource", GONE),
        ("key-group", "ResourceInUse", FAIL),
        ("key-group", "PreconditionFailed", RETRY),
        ("key-group", "InvalidIfMatchVersion", FAIL),
        ("key-group", "AccessDenied", FAIL),
        ("public-key", "NoSuchPublicKey", GONE),
        ("public-key", "PublicKeyInUse", LEAVE),
        ("public-key", "PreconditionFailed", RETRY),
        ("public-key", "NoSuchResource", FAIL),  # not the public key's "gone"
        ("public-key", "AccessDenied", FAIL),
    ],
)
def test_what_a_delete_does_with_each_error(kind, code, expected):
    assert delete_outcome(kind, code) == expected


@pytest.mark.parametrize(
    ("physical_id", "expected"),
    [("K2JCJMDEHXQW5F", True), ("0a1b2c3d-aaaa-bbbb", True), (f"{NOT_CREATED}Keys", False), ("", False), (None, False)],
)
def test_only_a_key_groups_id_is_looked_up(physical_id, expected):
    assert is_key_group_id(physical_id) is expected


# -- the response --------------------------------------------------------------------------------------------------

EVENT = {
    "RequestType": "Create",
    "RequestId": "req-1",
    "StackId": STACK,
    "LogicalResourceId": "PlaybackKeys",
    "ResponseURL": "https://cloudformation-custom-resource-response.s3.amazonaws.com/x?X-Amz-Signature=s",
    "ResourceProperties": {"SecretArn": ARN, "Name": "video"},
}


def test_the_response_object_has_every_field_copied_from_the_request():
    body = json.loads(response_body(EVENT, Outcome(SUCCESS, "G1", {"KeyGroupId": "G1", "PublicKeyId": "K1"})))
    assert body == {
        "Status": "SUCCESS",
        "Reason": "SUCCESS",
        "PhysicalResourceId": "G1",
        "StackId": STACK,
        "RequestId": "req-1",
        "LogicalResourceId": "PlaybackKeys",
        "Data": {"KeyGroupId": "G1", "PublicKeyId": "K1"},
    }


def test_a_long_reason_is_cut_to_the_documents_4096_bytes():
    raw = response_body(EVENT, Outcome(FAILED, "G1", reason="é" * 5000))  # 6 bytes each as JSON writes it
    assert RESPONSE_MAX_BYTES - 6 < len(raw) <= RESPONSE_MAX_BYTES  # as much of the reason as fits
    assert set(json.loads(raw)["Reason"]) == {"é"}


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (EVENT, f"{NOT_CREATED}PlaybackKeys"),
        (EVENT | {"RequestType": "Update", "PhysicalResourceId": "G1"}, "G1"),
        (
            EVENT | {"RequestType": "Delete", "PhysicalResourceId": f"{NOT_CREATED}PlaybackKeys"},
            f"{NOT_CREATED}PlaybackKeys",
        ),
    ],
)
def test_a_failed_answer_names_the_resource_as_before(event, expected):
    assert failed_physical_id(event) == expected


def test_reasons_never_carry_a_pem(made):
    _, pem, _ = made
    assert "PRIVATE" not in scrub(f"oops {pem} after") and scrub(f"a {pem}").startswith("a [PEM removed]")
    cut = pem[: len(pem) // 2]  # a key cut short, as a truncated message would carry it
    assert cut.splitlines()[3] not in scrub(f"before {cut}")
    error = ClientError({"Error": {"Code": "InvalidArgument", "Message": f"bad key {pem}"}}, "CreatePublicKey")
    assert failure_reason(error) == "CreatePublicKey: InvalidArgument: bad key [PEM removed]"
    assert failure_reason(ValueError(pem)) == "ValueError (see the function's log)"


# -- answering, whatever happens ------------------------------------------------------------------------------------


class _Context:
    def __init__(self, seconds: float):
        self.deadline = time.monotonic() + seconds

    def get_remaining_time_in_millis(self) -> int:
        return int((self.deadline - time.monotonic()) * 1000)


class _Raises:
    def __init__(self, exc: BaseException):
        self.exc = exc

    def handle(self, event):
        raise self.exc


def test_an_error_is_answered_failed_without_the_key(made):
    _, pem, _ = made
    sent: list[tuple[str, bytes]] = []
    outcome = answer(
        EVENT, _Context(60), _Raises(RuntimeError(pem)), put=lambda url, body: sent.append((url, body)) or 200
    )
    assert outcome.status == FAILED and len(sent) == 1
    url, raw = sent[0]
    body = json.loads(raw)
    assert (
        url == EVENT["ResponseURL"]
        and body["Status"] == "FAILED"
        and body["PhysicalResourceId"] == f"{NOT_CREATED}PlaybackKeys"
    )
    assert "PRIVATE" not in raw.decode() and pem.splitlines()[1] not in raw.decode()


def test_a_refused_request_is_answered_failed_with_its_reason():
    sent: list[bytes] = []
    event = EVENT | {"ResourceProperties": {"SecretArn": ARN, "Name": "bad name"}}
    from migrator.cloudfront_keys import PlaybackKeyGroup

    answer(event, _Context(60), PlaybackKeyGroup(None, None), put=lambda url, body: sent.append(body) or 200)
    assert json.loads(sent[0])["Reason"].startswith("Name is 1 to")


class _Slow:
    def __init__(self):
        self.release = threading.Event()

    def handle(self, event):
        self.release.wait(10)
        return Outcome(SUCCESS, "G1", {"KeyGroupId": "G1", "PublicKeyId": "K1"})


def test_the_watchdog_answers_before_the_time_runs_out_and_only_once(monkeypatch):
    import migrator.cloudfront_keys as module

    monkeypatch.setattr(module, "WATCHDOG_MARGIN_S", 0.0)
    sent: list[bytes] = []
    slow = _Slow()
    threading.Timer(1.0, slow.release.set).start()
    answer(EVENT, _Context(0.2), slow, put=lambda url, body: sent.append(body) or 200)
    assert [json.loads(body)["Status"] for body in sent] == ["FAILED"]
    assert json.loads(sent[0])["Reason"] == "the function ran out of time"


def test_a_put_refused_for_good_is_not_retried_and_a_server_error_is():
    calls: list[int] = []

    def put(url, body):
        calls.append(1)
        return 403

    assert Responder(EVENT, put).send(Outcome(SUCCESS, "G1")) is False and len(calls) == 1
    answers = iter([503, 200])
    assert Responder(EVENT, lambda url, body: next(answers)).send(Outcome(SUCCESS, "G1")) is True
