"""The stack's CloudFront signing key: the handler of the custom resource `Custom::PlaybackKeyGroup`.

The `aws` target (issue 44) plays private and signed rows only through CloudFront signed URLs and cookies,
checked against a key group the distribution trusts. CloudFormation's own AWS::CloudFront::PublicKey wants
the public key's PEM in the template, so the operator would have to make a key pair by hand; this resource
makes the pair itself, keeps the private half in a Secrets Manager secret the template makes (empty at
first), and gives CloudFront the public half in a key group. Its properties:

- `SecretArn`: the secret. Its SecretString, once made here, is JSON
  `{"private_key_pem": "<PEM>", "public_key_id": "<CloudFront public key id>"}`: the PEM is PKCS#1
  (`BEGIN RSA PRIVATE KEY`, what `rsa` writes) or PKCS#8, as `playback_tokens.SigningKey` loads it, and
  `public_key_id` is the Key-Pair-Id a signed URL names (`signing_key_from_secret` reads both). A secret
  that already holds a private key (a re-run, or a key the operator put there) is used as it is; one
  that holds anything else is refused, never overwritten.
- `Name` (up to 128 letters, digits, `-` and `_`): the prefix of the public key's and the key group's names,
  `<Name, cut to 115>-<12 hex of the key's SHA-256>`, 128 at most: the rule Terraform's provider checks
  (hashicorp/terraform-provider-aws internal/service/cloudfront validPublicKeyName; the API reference states
  none). The key's fingerprint in the names lets a new key (a replaced secret) get new names while the old
  ones still exist, and lets a re-run find its own.

What each request does (CloudFormation's requests and the response object:
https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/crpg-ref-requesttypes-create.html and
https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/crpg-ref-responses.html):
- Create (`ensure`): the secret's key, else a new 2048-bit RSA key written to the secret before CloudFront
  sees it (a crash after never leaves a public key whose private half is lost); then the public key that
  holds it (ListPublicKeys: its id in the secret, else one with our name, else any holding the same key),
  else CreatePublicKey with a CallerReference made from the stack, the logical id and the key; the id is
  written to the secret; then the key group named ours (ListKeyGroups), else CreateKeyGroup. A retried
  Create finds what the first made and makes nothing twice. Data: KeyGroupId, PublicKeyId;
  PhysicalResourceId: the key group's id.
- Update: a new SecretArn, a key group gone, or a secret whose key the group does not hold run `ensure`
  (a new group is a new PhysicalResourceId: CloudFormation then deletes the old one). A new Name renames
  the key group in place (UpdateKeyGroup with its ETag); the public key keeps its name, since "the only
  value you can change is the comment" (UpdatePublicKey, CloudFront API reference). Otherwise nothing
  changes. The key is kept in every case.
- Delete: the key group (GetKeyGroup for its ETag, DeleteKeyGroup with If-Match), then its public keys and
  any other public key holding the secret's key (what a Create that failed half-way left), each with its
  ETag. Gone already (NoSuchResource, NoSuchPublicKey) is done; a key group a distribution still uses
  (ResourceInUse) is FAILED with that reason; a public key another key group holds (PublicKeyInUse) is
  left to that group. The secret is CloudFormation's to delete.

Every request is answered by a PUT of the response object to ResponseURL, whatever happens: an error is
FAILED with a reason built from the error's code and AWS's message, scrubbed of any PEM, never the key; a
watchdog answers FAILED shortly before the function's time runs out. The event's ResponseURL is a
presigned URL (a credential) and is never logged. CloudFront's actions here name no resource type, so
their IAM statement is on "*" (https://docs.aws.amazon.com/service-authorization/latest/reference/
list_amazoncloudfront.html); the secret's on the one secret. The decisions, the key's forms and the response
object are pure, in cloudfront_key_plan; this module is their I/O and the Lambda entry point.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

import boto3
import requests
import rsa
from aws_lambda_powertools import Logger
from botocore.exceptions import ClientError

from migrator.cloudfront_key_plan import (
    CREATE,
    DELETE,
    ENSURE,
    FAIL,
    FAILED,
    GONE,
    LEAVE,
    RENAME,
    SUCCESS,
    UPDATE,
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
)

logger = Logger(service="playback-keys")

WATCHDOG_MARGIN_S = 5.0  # the watchdog answers this long before the function's time runs out


# ---------------------------------------------------------------------------------------------------------------
# The resource (I/O: CloudFront and Secrets Manager through boto3)
# ---------------------------------------------------------------------------------------------------------------


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


class PlaybackKeyGroup:
    def __init__(self, cloudfront, secretsmanager, new_key: Callable[[], str] = new_private_key_pem):
        self.cloudfront, self.secretsmanager, self.new_key = cloudfront, secretsmanager, new_key

    def handle(self, event: Mapping) -> Outcome:
        request = event.get("RequestType")
        if request == DELETE:  # before the properties: a Create refused for its properties is still deleted
            return self.delete(event)
        props = parse_props(event.get("ResourceProperties"))
        if request == CREATE:
            return self.ensure(props, event)
        if request == UPDATE:
            return self.update(props, event)
        raise KeyResourceError("RequestType is Create, Update or Delete")

    # -- the secret --

    def stored_key(self, secret_arn: str) -> StoredKey | None:
        try:
            answer = self.secretsmanager.get_secret_value(SecretId=secret_arn)
        except ClientError as exc:
            if _code(exc) == "ResourceNotFoundException":  # also a secret with no value yet (made empty)
                return None
            raise
        if "SecretBinary" in answer and "SecretString" not in answer:
            raise KeyResourceError("the secret holds binary data, not a signing key")
        return read_stored_key(answer.get("SecretString"))  # no value at all: an empty secret, as made

    def store(self, secret_arn: str, stored: StoredKey) -> None:
        self.secretsmanager.put_secret_value(SecretId=secret_arn, SecretString=stored.secret_string())

    # -- CloudFront's lists --

    def public_keys(self) -> list[PublicKeySeen]:
        seen, marker = [], None
        while True:
            page = self.cloudfront.list_public_keys(**({"Marker": marker} if marker else {}))["PublicKeyList"]
            for item in page.get("Items", []):
                seen.append(PublicKeySeen(item["Id"], item.get("Name", ""), item.get("EncodedKey", "")))
            marker = page.get("NextMarker")
            if not marker:
                return seen

    def key_groups(self) -> list[KeyGroupSeen]:
        seen, marker = [], None
        while True:
            page = self.cloudfront.list_key_groups(**({"Marker": marker} if marker else {}))["KeyGroupList"]
            for item in page.get("Items", []):
                seen.append(_key_group_seen(item["KeyGroup"]))
            marker = page.get("NextMarker")
            if not marker:
                return seen

    def key_group(self, group_id: str) -> tuple[KeyGroupSeen, str] | None:
        """The key group and its ETag, None when there is none by that id."""
        if not is_key_group_id(group_id):
            return None
        try:
            answer = self.cloudfront.get_key_group(Id=group_id)
        except ClientError as exc:
            if _code(exc) == "NoSuchResource":
                return None
            raise
        return _key_group_seen(answer["KeyGroup"]), answer["ETag"]

    # -- the requests --

    def ensure(self, props: Props, event: Mapping) -> Outcome:
        stored = self.stored_key(props.secret_arn)
        if stored is None:
            stored = StoredKey(self.new_key())
            self.store(props.secret_arn, stored)  # before CloudFront sees its public half
            logger.info("made a new signing key and kept it in the secret")
        key = stored.public_key()
        name = resource_name(props.name, key)
        public_key_id = choose_public_key(key, name, stored.public_key_id, self.public_keys())
        if public_key_id is None:
            public_key_id = self.create_public_key(key, name, event)
        if stored.public_key_id != public_key_id:
            self.store(props.secret_arn, StoredKey(stored.private_key_pem, public_key_id))
        choice = choose_key_group(name, public_key_id, self.key_groups())
        group_id = choice.key_group_id if isinstance(choice, Use) else self.create_key_group(name, public_key_id)
        logger.info("key group ready", extra={"key_group_id": group_id, "public_key_id": public_key_id})
        return Outcome(SUCCESS, group_id, {"KeyGroupId": group_id, "PublicKeyId": public_key_id})

    def create_public_key(self, key: rsa.PublicKey, name: str, event: Mapping) -> str:
        config = {
            "CallerReference": caller_reference(
                str(event.get("StackId", "")), str(event.get("LogicalResourceId")), key
            ),
            "Name": name,
            "EncodedKey": public_key_pem(key),
            "Comment": "Signs the stack's private playback URLs; the private key is in the stack's secret",
        }
        try:
            return self.cloudfront.create_public_key(PublicKeyConfig=config)["PublicKey"]["Id"]
        except ClientError as exc:
            if _code(exc) != "PublicKeyAlreadyExists":
                raise
        # A try before this one made it (its answer lost): it is ours if it holds our key.
        found = choose_public_key(key, name, None, self.public_keys())
        if found is None:
            raise KeyResourceError(f"CloudFront has a public key like {name} that does not hold the secret's key")
        return found

    def create_key_group(self, name: str, public_key_id: str) -> str:
        config = {"Name": name, "Items": [public_key_id], "Comment": "The stack's playback signing key"}
        try:
            return self.cloudfront.create_key_group(KeyGroupConfig=config)["KeyGroup"]["Id"]
        except ClientError as exc:
            if _code(exc) != "KeyGroupAlreadyExists":
                raise
        choice = choose_key_group(name, public_key_id, self.key_groups())
        if not isinstance(choice, Use):
            raise KeyResourceError(f"CloudFront refused the key group {name} as existing, and lists none")
        return choice.key_group_id

    def update(self, props: Props, event: Mapping) -> Outcome:
        old = event.get("OldResourceProperties")
        secret_changed = not isinstance(old, Mapping) or old.get("SecretArn") != props.secret_arn
        stored = None if secret_changed else self.stored_key(props.secret_arn)
        found = None if secret_changed else self.key_group(str(event.get("PhysicalResourceId", "")))
        group, etag = found if found else (None, "")
        name = resource_name(props.name, stored.public_key()) if stored else ""
        action = plan_update(secret_changed, stored, group, name)
        if action == ENSURE or group is None or stored is None or stored.public_key_id is None:  # (the same test)
            return self.ensure(props, event)
        if action == RENAME:
            config = {"Name": name, "Items": list(group.items), "Comment": "The stack's playback signing key"}
            self.cloudfront.update_key_group(KeyGroupConfig=config, Id=group.id, IfMatch=etag)
            logger.info("renamed the key group", extra={"key_group_id": group.id})
        return Outcome(SUCCESS, group.id, {"KeyGroupId": group.id, "PublicKeyId": stored.public_key_id})

    def delete(self, event: Mapping) -> Outcome:
        physical_id = str(event.get("PhysicalResourceId", ""))
        public_key_ids = self.delete_key_group(physical_id)
        stored = self._stored_for_delete(event.get("ResourceProperties"))
        if stored is not None:  # what a Create that failed half-way made: public keys holding the secret's key
            key = stored.public_key()
            public_key_ids += [seen.id for seen in self.public_keys() if holds(seen.encoded_key, key)]
        for key_id in dict.fromkeys(public_key_ids):
            self.delete_public_key(key_id)
        return Outcome(SUCCESS, physical_id or failed_physical_id(event))

    def delete_key_group(self, group_id: str) -> list[str]:
        """Delete the key group if there is one; the ids of the public keys it held."""
        for _ in range(3):
            found = self.key_group(group_id)
            if found is None:
                return []
            group, etag = found
            try:
                self.cloudfront.delete_key_group(Id=group.id, IfMatch=etag)
                return list(group.items)
            except ClientError as exc:
                outcome = delete_outcome("key-group", _code(exc))
                if outcome == GONE:
                    return list(group.items)
                if outcome == FAIL:
                    raise KeyResourceError(f"the key group {group.id} was not deleted: {failure_reason(exc)}") from None
        raise KeyResourceError(f"the key group {group_id} kept changing while it was being deleted")

    def _stored_for_delete(self, raw_props: object) -> StoredKey | None:
        try:
            return self.stored_key(parse_props(raw_props).secret_arn)
        except (ClientError, KeyResourceError) as exc:  # the group is deleted; leftovers are only looked for
            logger.warning("the secret was not read for leftovers", extra={"error": failure_reason(exc)})
            return None

    def delete_public_key(self, key_id: str) -> None:
        for _ in range(3):
            try:
                etag = self.cloudfront.get_public_key(Id=key_id)["ETag"]
                self.cloudfront.delete_public_key(Id=key_id, IfMatch=etag)
                return
            except ClientError as exc:
                outcome = delete_outcome("public-key", _code(exc))
                if outcome in (GONE, LEAVE):
                    if outcome == LEAVE:
                        logger.info("left a public key another key group holds", extra={"public_key_id": key_id})
                    return
                if outcome == FAIL:
                    raise KeyResourceError(f"the public key {key_id} was not deleted: {failure_reason(exc)}") from None
        raise KeyResourceError(f"the public key {key_id} kept changing while it was being deleted")


def _key_group_seen(group: Mapping) -> KeyGroupSeen:
    config = group.get("KeyGroupConfig", {})
    return KeyGroupSeen(group["Id"], config.get("Name", ""), tuple(config.get("Items", [])))


# ---------------------------------------------------------------------------------------------------------------
# Answering CloudFormation
# ---------------------------------------------------------------------------------------------------------------


class Responder:
    """Sends the one response a request gets: the handler's, or the watchdog's if time runs out first."""

    def __init__(self, event: Mapping, put: Callable[[str, bytes], int] | None = None):
        self.event, self.put = event, put or _put
        self._lock, self._sent = threading.Lock(), False

    def send(self, outcome: Outcome) -> bool:
        with self._lock:
            if self._sent:
                return False
            self._sent = True
        url = self.event.get("ResponseURL")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            logger.error("the request has no ResponseURL: CloudFormation cannot be answered")
            return False
        body = response_body(self.event, outcome)
        for attempt in range(4):
            try:
                status = self.put(url, body)
            except requests.RequestException as exc:
                logger.warning("the response was not sent", extra={"error": type(exc).__name__, "try": attempt})
            else:
                if status < 300:
                    logger.info("answered CloudFormation", extra={"status": outcome.status})
                    return True
                logger.warning("the response was refused", extra={"http_status": status, "try": attempt})
                if status < 500:
                    return False
            time.sleep(min(8.0, 0.5 * 2**attempt))
        return False

    def watchdog(self, context) -> threading.Timer | None:
        """A timer that answers FAILED a little before the function's time runs out."""
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        if remaining is None:
            return None
        outcome = Outcome(FAILED, failed_physical_id(self.event), reason="the function ran out of time")
        timer = threading.Timer(max(0.0, remaining() / 1000 - WATCHDOG_MARGIN_S), self.send, args=(outcome,))
        timer.daemon = True
        timer.start()
        return timer


def _put(url: str, body: bytes) -> int:
    # An empty Content-Type, as AWS's own cfnresponse sends: the presigned URL was signed without one.
    return requests.put(url, data=body, headers={"Content-Type": ""}, timeout=30).status_code


def answer(
    event: Mapping, context, resource: PlaybackKeyGroup, put: Callable[[str, bytes], int] | None = None
) -> Outcome:
    """Handle one request and answer it, whatever happens; the outcome is returned for the log and tests."""
    responder = Responder(event, put)
    timer = responder.watchdog(context)
    try:
        outcome = resource.handle(event)
    except Exception as exc:  # every failure is answered: none may leave the stack waiting
        outcome = Outcome(FAILED, failed_physical_id(event), reason=failure_reason(exc))
        logger.error("the request failed", extra={"error": outcome.reason, "error_type": type(exc).__name__})
    finally:
        if timer is not None:
            timer.cancel()
    responder.send(outcome)
    return outcome


@logger.inject_lambda_context(clear_state=True)
def handler(event, context):
    logger.append_keys(request_type=event.get("RequestType"), logical_id=event.get("LogicalResourceId"))
    resource = PlaybackKeyGroup(boto3.client("cloudfront"), boto3.client("secretsmanager"))
    answer(event, context, resource)
