"""The stack's CloudFront signing key (migrator.cloudfront_keys, Custom::PlaybackKeyGroup) against the emulator's
CloudFront and Secrets Manager, answering CloudFormation through a ResponseURL served on 127.0.0.1.

Create makes a key, keeps it in the (empty) secret and puts its public half in a key group; a URL the secret's
key signs verifies with the public key CloudFront holds (GetPublicKey's EncodedKey). A Create that runs again,
after a first one that stopped half-way or whose answer was lost, makes no second public key or group. Update
renames the group in place. Delete removes the group and the key, and again once they are gone; a group a
distribution still trusts is FAILED, with the reason. A secret holding anything else is never overwritten.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from migrator.cloudfront_key_plan import FAILED, SUCCESS, holds, read_stored_key, signing_key_from_secret
from migrator.cloudfront_keys import PlaybackKeyGroup, answer
from migrator.cloudfront_signing import load_public_key, sign_canned_url, verify_signed_url

from infra.emulator import client
from tests.conftest import unique
from tests.emulator.test_local_edge import _behavior  # the distribution's behaviour that test builds

pytestmark = pytest.mark.emulator

STACK = "arn:aws:cloudformation:us-east-1:000000000000:stack/video/{}"


class _Responses(BaseHTTPRequestHandler):
    """What CloudFormation's presigned ResponseURL receives: each PUT's path, headers and JSON body."""

    received: ClassVar[list[dict]] = []

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        type(self).received.append({"path": self.path, "content_type": self.headers.get("Content-Type"), "body": body})
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def response_url():
    """A ResponseURL on 127.0.0.1 and the list of what was PUT to it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Responses)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Responses.received
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def services(endpoint):
    return client("cloudfront", endpoint), client("secretsmanager", endpoint)


class _Context:
    def get_remaining_time_in_millis(self) -> int:
        return 300_000


class Request:
    """One custom resource's requests, as CloudFormation sends them, answered and read back."""

    def __init__(self, services, response_url, name: str, secret_arn: str):
        self.cloudfront, self.secretsmanager = services
        self.base, self.received = response_url
        self.stack_id = STACK.format(uuid.uuid4())
        self.props = {"ServiceToken": "arn:aws:lambda:us-east-1:000000000000:function:keys", "SecretArn": secret_arn}
        self.props["Name"] = name

    def send(self, request_type: str, resource: PlaybackKeyGroup | None = None, **extra) -> dict:
        token = uuid.uuid4().hex
        event = {
            "RequestType": request_type,
            "RequestId": str(uuid.uuid4()),
            "ResponseURL": f"{self.base}/cfn-response/{token}?X-Amz-Signature=abc",
            "ResourceType": "Custom::PlaybackKeyGroup",
            "LogicalResourceId": "PlaybackKeyGroup",
            "StackId": self.stack_id,
            "ResourceProperties": self.props,
            **extra,
        }
        answer(event, _Context(), resource or PlaybackKeyGroup(self.cloudfront, self.secretsmanager))
        sent = [item for item in self.received if item["path"].startswith(f"/cfn-response/{token}")]
        assert len(sent) == 1, "every request is answered exactly once"
        assert sent[0]["content_type"] == ""  # as cfnresponse sends it to the presigned URL
        body = json.loads(sent[0]["body"])
        assert {body[field] for field in ("RequestId", "StackId", "LogicalResourceId")} == {
            event["RequestId"],
            event["StackId"],
            "PlaybackKeyGroup",
        }
        return body


@pytest.fixture
def request_for(services, response_url):
    def make(secret_string: str | None = None) -> Request:
        name = unique("keys")
        extra = {"SecretString": secret_string} if secret_string is not None else {}
        arn = services[1].create_secret(Name=f"{name}/cloudfront-signing-key", **extra)["ARN"]
        return Request(services, response_url, name, arn)

    return make


def _holding(cloudfront, key) -> list[str]:
    """The ids of every public key in the account holding `key`."""
    items = cloudfront.list_public_keys()["PublicKeyList"].get("Items", [])
    return [item["Id"] for item in items if holds(item["EncodedKey"], key)]


def _groups_named(cloudfront, name: str) -> list[dict]:
    items = cloudfront.list_key_groups()["KeyGroupList"].get("Items", [])
    return [item["KeyGroup"] for item in items if item["KeyGroup"]["KeyGroupConfig"]["Name"] == name]


def _secret(request: Request) -> str:
    return request.secretsmanager.get_secret_value(SecretId=request.props["SecretArn"])["SecretString"]


def test_create_makes_a_key_whose_signed_urls_verify_with_the_key_cloudfront_holds(request_for):
    request = request_for()
    body = request.send("Create")
    assert body["Status"] == SUCCESS, body
    group_id, public_key_id = body["Data"]["KeyGroupId"], body["Data"]["PublicKeyId"]
    assert body["PhysicalResourceId"] == group_id
    cloudfront = request.cloudfront
    group = cloudfront.get_key_group(Id=group_id)["KeyGroup"]["KeyGroupConfig"]
    assert group["Items"] == [public_key_id] and group["Name"].startswith(f"{request.props['Name']}-")

    key = signing_key_from_secret(_secret(request))
    assert key.key_id == public_key_id
    held = cloudfront.get_public_key(Id=public_key_id)["PublicKey"]["PublicKeyConfig"]
    assert held["EncodedKey"].startswith("-----BEGIN PUBLIC KEY-----") and held["Name"] == group["Name"]
    now = int(time.time())
    url = sign_canned_url("https://d111111abcdef8.cloudfront.net/signed/a1/index.m3u8", key, now + 600)
    verdict = verify_signed_url(url, {public_key_id: load_public_key(held["EncodedKey"])}, now)
    assert verdict.allowed, verdict
    assert "PRIVATE" not in json.dumps(body)


class _StopsAfterThePublicKey:
    """CloudFront as a first try saw it: the try stopped (timed out, crashed) before CreateKeyGroup answered."""

    def __init__(self, cloudfront):
        self.cloudfront = cloudfront

    def __getattr__(self, name):
        return getattr(self.cloudfront, name)

    def create_key_group(self, **kwargs):
        raise TimeoutError("the function was stopped")


def test_a_create_run_again_makes_no_second_key_or_group(request_for):
    request = request_for()
    stopped = PlaybackKeyGroup(_StopsAfterThePublicKey(request.cloudfront), request.secretsmanager)
    first = request.send("Create", stopped)
    assert first["Status"] == FAILED and first["Reason"] == "TimeoutError (see the function's log)"
    stored = read_stored_key(_secret(request))
    assert stored is not None and stored.public_key_id is not None  # the key and its CloudFront id were kept
    key = stored.public_key()
    assert _holding(request.cloudfront, key) == [stored.public_key_id]

    second = request.send("Create")
    assert second["Status"] == SUCCESS, second
    assert second["Data"]["PublicKeyId"] == stored.public_key_id
    assert _holding(request.cloudfront, key) == [stored.public_key_id]
    third = request.send("Create")  # the second's answer lost: CloudFormation's retry finds the same group
    assert third["PhysicalResourceId"] == second["PhysicalResourceId"]
    assert third["Data"] == second["Data"]
    assert _holding(request.cloudfront, key) == [stored.public_key_id]
    name = request.cloudfront.get_key_group(Id=second["PhysicalResourceId"])["KeyGroup"]["KeyGroupConfig"]["Name"]
    assert len(_groups_named(request.cloudfront, name)) == 1


def test_a_key_put_in_the_secret_before_is_the_one_used(request_for):
    request = request_for()
    first = request.send("Create")
    kept = read_stored_key(_secret(request))
    other = request_for(json.dumps({"private_key_pem": kept.private_key_pem}))
    other.props["Name"] = request.props["Name"] + "-b"
    body = other.send("Create")  # the same key under another prefix: CloudFront's public key is reused
    assert body["Status"] == SUCCESS, body
    assert body["Data"]["PublicKeyId"] == first["Data"]["PublicKeyId"]
    assert read_stored_key(_secret(other)).private_key_pem == kept.private_key_pem


def test_update_renames_the_group_in_place_and_keeps_the_key(request_for):
    request = request_for()
    created = request.send("Create")
    old = dict(request.props)
    request.props["Name"] = request.props["Name"] + "-renamed"
    updated = request.send("Update", PhysicalResourceId=created["PhysicalResourceId"], OldResourceProperties=old)
    assert updated["Status"] == SUCCESS, updated
    assert updated["PhysicalResourceId"] == created["PhysicalResourceId"] and updated["Data"] == created["Data"]
    group = request.cloudfront.get_key_group(Id=created["PhysicalResourceId"])["KeyGroup"]["KeyGroupConfig"]
    assert group["Name"].startswith(request.props["Name"] + "-") and group["Items"] == [created["Data"]["PublicKeyId"]]
    again = request.send(
        "Update", PhysicalResourceId=created["PhysicalResourceId"], OldResourceProperties=request.props
    )
    assert again["PhysicalResourceId"] == created["PhysicalResourceId"] and again["Data"] == created["Data"]


def test_delete_removes_the_group_and_the_key_and_leaves_the_secret(request_for):
    request = request_for()
    created = request.send("Create")
    group_id, public_key_id = created["Data"]["KeyGroupId"], created["Data"]["PublicKeyId"]
    for _ in range(2):  # the second finds both gone, and is as successful
        deleted = request.send("Delete", PhysicalResourceId=group_id)
        assert deleted["Status"] == SUCCESS and deleted["PhysicalResourceId"] == group_id, deleted
        for call, code in (
            (request.cloudfront.get_key_group, "NoSuchResource"),
            (request.cloudfront.get_public_key, "NoSuchPublicKey"),
        ):
            with pytest.raises(request.cloudfront.exceptions.ClientError) as gone:
                call(Id=group_id if code == "NoSuchResource" else public_key_id)
            assert gone.value.response["Error"]["Code"] == code
    assert read_stored_key(_secret(request)).public_key_id == public_key_id  # CloudFormation's to delete


def test_delete_after_a_create_that_stopped_half_way_removes_the_public_key(request_for):
    request = request_for()
    stopped = PlaybackKeyGroup(_StopsAfterThePublicKey(request.cloudfront), request.secretsmanager)
    failed = request.send("Create", stopped)
    key = read_stored_key(_secret(request)).public_key()
    assert len(_holding(request.cloudfront, key)) == 1
    deleted = request.send("Delete", PhysicalResourceId=failed["PhysicalResourceId"])
    assert deleted["Status"] == SUCCESS, deleted
    assert _holding(request.cloudfront, key) == []


def test_a_group_a_distribution_trusts_is_not_deleted_and_says_why(request_for):
    request = request_for()
    created = request.send("Create")
    group_id = created["Data"]["KeyGroupId"]
    origin = {"Id": "output", "DomainName": "out.s3.us-east-1.amazonaws.com"}
    request.cloudfront.create_distribution(
        DistributionConfig={
            "CallerReference": request.props["Name"],
            "Comment": "",
            "Enabled": True,
            "Origins": {"Quantity": 1, "Items": [origin | {"S3OriginConfig": {"OriginAccessIdentity": ""}}]},
            "DefaultCacheBehavior": _behavior(TrustedKeyGroups={"Enabled": True, "Quantity": 1, "Items": [group_id]}),
        }
    )
    deleted = request.send("Delete", PhysicalResourceId=group_id)
    assert deleted["Status"] == FAILED and deleted["PhysicalResourceId"] == group_id
    assert "ResourceInUse" in deleted["Reason"] and group_id in deleted["Reason"]
    assert request.cloudfront.get_key_group(Id=group_id)["KeyGroup"]["Id"] == group_id
    assert request.cloudfront.get_public_key(Id=created["Data"]["PublicKeyId"])


def test_a_secret_holding_something_else_is_refused_and_left_as_it_was(request_for):
    request = request_for(json.dumps({"password": "hunter2"}))
    body = request.send("Create")
    assert body["Status"] == FAILED and "no private_key_pem" in body["Reason"] and "hunter2" not in body["Reason"]
    assert body["PhysicalResourceId"] == "not-created/PlaybackKeyGroup"
    assert _secret(request) == json.dumps({"password": "hunter2"})
    assert request.send("Delete", PhysicalResourceId=body["PhysicalResourceId"])["Status"] == SUCCESS


class _LambdaContext(_Context):
    function_name = "PlaybackKeysFunction"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:000000000000:function:PlaybackKeysFunction"
    aws_request_id = "0f0e0d0c-0000-0000-0000-000000000000"


def test_the_lambda_entry_point_answers_with_its_own_clients(request_for, endpoint, monkeypatch):
    """`handler`, as Lambda calls it: boto3's clients from the environment (the emulator's endpoint here)."""
    from migrator import cloudfront_keys

    for name, value in {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
    }.items():
        monkeypatch.setenv(name, value)
    request = request_for()
    sent_before = len(request.received)
    event = {
        "RequestType": "Create",
        "RequestId": str(uuid.uuid4()),
        "ResponseURL": f"{request.base}/cfn-response/{uuid.uuid4().hex}",
        "ResourceType": "Custom::PlaybackKeyGroup",
        "LogicalResourceId": "PlaybackKeyGroup",
        "StackId": request.stack_id,
        "ResourceProperties": request.props,
    }
    assert cloudfront_keys.handler(event, _LambdaContext()) is None
    body = json.loads(request.received[sent_before]["body"])
    assert body["Status"] == SUCCESS, body
    delete = event | {
        "RequestType": "Delete",
        "RequestId": str(uuid.uuid4()),
        "PhysicalResourceId": body["PhysicalResourceId"],
    }
    cloudfront_keys.handler(delete, _LambdaContext())
    assert json.loads(request.received[sent_before + 1]["body"])["Status"] == SUCCESS
    assert _holding(request.cloudfront, read_stored_key(_secret(request)).public_key()) == []
