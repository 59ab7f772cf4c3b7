"""The pure half of the stack's CloudFront signing key (cloudfront_keys, the custom resource's handler).

What the resource's properties and its secret hold, the key pair's public form and names, what each request
does in each state, and the response object CloudFormation reads: no I/O here (but `new_private_key_pem`'s
randomness), each decision a table in tests/unit/test_cloudfront_keys.py. The documents behind each rule
are cited in cloudfront_keys' docstring and beside the rule.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import rsa
import rsa.asn1
import rsa.pem
from botocore.exceptions import ClientError
from pyasn1.codec.der import encoder
from pyasn1.error import PyAsn1Error
from pyasn1.type import namedtype, univ

from migrator.cloudfront_signing import load_public_key
from migrator.playback_tokens import SigningKey, SigningKeyError

KEY_BITS = 2048  # "RSA 2048 or ECDSA 256" (AWS::CloudFront::PublicKey PublicKeyConfig); rsa makes RSA
NAME_MAX = 128
FINGERPRINT_HEX = 12
PREFIX_MAX = NAME_MAX - 1 - FINGERPRINT_HEX  # what of the Name goes in a name, leaving room for "-<fingerprint>"
CALLER_REFERENCE_MAX = 128  # the limit aws-cdk's PublicKey keeps its CallerReference within
RESPONSE_MAX_BYTES = 4096  # "The total size of the response body can't exceed 4096 bytes" (the responses page)
NOT_CREATED = "not-created/"  # a failed Create's PhysicalResourceId: never a key group's id (no "/")

_NAME_PREFIX = re.compile(rf"[A-Za-z0-9_-]{{1,{NAME_MAX}}}")
_RESOURCE_ID = re.compile(r"[A-Za-z0-9-]{1,128}")  # a key group's or public key's id, safe in a URL path
_SECRET_ARN = re.compile(r"arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]{1,512}")
_PEM_BLOCK = re.compile(r"-----BEGIN[^-]*-----.*?(?:-----END[^-]*-----|\Z)", re.DOTALL)
_RSA_ENCRYPTION = "1.2.840.113549.1.1.1"

SUCCESS, FAILED = "SUCCESS", "FAILED"
CREATE, UPDATE, DELETE = "Create", "Update", "Delete"


class KeyResourceError(Exception):
    """A request this resource refuses, or a state it will not touch: the message is the FAILED reason."""


# ---------------------------------------------------------------------------------------------------------------
# The properties and the secret (pure)
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Props:
    secret_arn: str
    name: str


def parse_props(raw: object) -> Props:
    """The resource's properties, checked: CloudFormation passes them as the template wrote them."""
    if not isinstance(raw, Mapping):
        raise KeyResourceError("the resource has no properties")
    secret_arn, name = raw.get("SecretArn"), raw.get("Name")
    if not isinstance(secret_arn, str) or not _SECRET_ARN.fullmatch(secret_arn):
        raise KeyResourceError("SecretArn is not a Secrets Manager secret's ARN")
    if not isinstance(name, str) or not _NAME_PREFIX.fullmatch(name):
        raise KeyResourceError(f"Name is 1 to {NAME_MAX} letters, digits, '-' or '_'")
    return Props(secret_arn, name)


@dataclass(frozen=True)
class StoredKey:
    """What the secret holds: the private key, and the CloudFront public key's id once there is one."""

    private_key_pem: str
    public_key_id: str | None = None

    def public_key(self) -> rsa.PublicKey:
        private = SigningKey(self.public_key_id or "-", self.private_key_pem).private()
        return rsa.PublicKey(private.n, private.e)

    def secret_string(self) -> str:
        doc = {"private_key_pem": self.private_key_pem}
        return json.dumps(doc | ({"public_key_id": self.public_key_id} if self.public_key_id else {}))


def read_stored_key(text: str | None) -> StoredKey | None:
    """The key in a secret's SecretString; None for an empty secret (no value, blank, or `{}`)."""
    if text is None or not text.strip():
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        raise KeyResourceError("the secret holds something other than a signing key (not JSON)") from None
    if doc == {}:
        return None
    pem = doc.get("private_key_pem") if isinstance(doc, dict) else None
    key_id = doc.get("public_key_id") if isinstance(doc, dict) else None
    if not isinstance(pem, str):
        raise KeyResourceError("the secret holds something other than a signing key (no private_key_pem)")
    if key_id is not None and (not isinstance(key_id, str) or not _RESOURCE_ID.fullmatch(key_id)):
        raise KeyResourceError("the secret's public_key_id is not a CloudFront public key id")
    stored = StoredKey(pem, key_id)
    try:
        stored.public_key()
    except SigningKeyError as exc:  # its message names no key
        raise KeyResourceError(f"the secret's private_key_pem: {exc}") from None
    except PyAsn1Error:  # SigningKey lets pyasn1's own error through, whose message may quote what it read
        raise KeyResourceError("the secret's private_key_pem does not parse (PyAsn1Error)") from None
    return stored


def signing_key_from_secret(text: str) -> SigningKey:
    """The key that signs CloudFront URLs and cookies (cloudfront_signing), from the secret this resource fills."""
    stored = read_stored_key(text)
    if stored is None or stored.public_key_id is None:
        raise KeyResourceError("the secret holds no CloudFront signing key yet")
    return SigningKey(stored.public_key_id, stored.private_key_pem)


# ---------------------------------------------------------------------------------------------------------------
# Key material and names (pure, but for the key's random generation)
# ---------------------------------------------------------------------------------------------------------------


def new_private_key_pem() -> str:
    """A new 2048-bit RSA private key in PKCS#1 PEM (pure Python: the same on arm64 Lambda)."""
    _, private = rsa.newkeys(KEY_BITS)
    return private.save_pkcs1("PEM").decode("ascii")


class _SubjectPublicKeyInfo(univ.Sequence):
    """RFC 5280 4.1; the AlgorithmIdentifier is `rsa`'s own (rsaEncryption's OID, NULL parameters)."""

    componentType = namedtype.NamedTypes(
        namedtype.NamedType("algorithm", rsa.asn1.PubKeyHeader()),
        namedtype.NamedType("subjectPublicKey", univ.BitString()),
    )


def _public_key_der(key: rsa.PublicKey) -> bytes:
    """SubjectPublicKeyInfo (RFC 5280 4.1, RFC 3279 2.3.1: rsaEncryption, NULL parameters) of `key`."""
    info = _SubjectPublicKeyInfo()
    info["algorithm"]["oid"] = univ.ObjectIdentifier(_RSA_ENCRYPTION)
    info["algorithm"]["parameters"] = univ.Null("")
    info["subjectPublicKey"] = univ.BitString.fromOctetString(key.save_pkcs1("DER"))
    return encoder.encode(info)


def public_key_pem(key: rsa.PublicKey) -> str:
    """The EncodedKey CloudFront takes: a `-----BEGIN PUBLIC KEY-----` PEM, what `openssl rsa -pubout` writes
    (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/private-content-trusted-signers.html,
    "Create key pairs for your signers"; the CLI's create-public-key example sends one)."""
    return rsa.pem.save_pem(_public_key_der(key), "PUBLIC KEY").decode("ascii")


def fingerprint(key: rsa.PublicKey) -> str:
    return hashlib.sha256(_public_key_der(key)).hexdigest()


def resource_name(prefix: str, key: rsa.PublicKey) -> str:
    """The public key's and the key group's name: the prefix (its first 115 characters) and the key's fingerprint."""
    return f"{prefix[:PREFIX_MAX]}-{fingerprint(key)[:FINGERPRINT_HEX]}"


def caller_reference(stack_id: str, logical_id: str, key: rsa.PublicKey) -> str:
    """The same for every try of one resource's Create with one key, and for no other."""
    digest = hashlib.sha256(f"{stack_id}\n{logical_id}\n{fingerprint(key)}".encode()).hexdigest()[:40]
    readable = re.sub(r"[^A-Za-z0-9-]", "", logical_id)[: CALLER_REFERENCE_MAX - 41] or "key"
    return f"{readable}-{digest}"


def holds(encoded_key: str, key: rsa.PublicKey) -> bool:
    """Whether a public key's EncodedKey is `key`, however its PEM is wrapped."""
    try:
        seen = load_public_key(encoded_key)
    except SigningKeyError:
        return False
    return (seen.n, seen.e) == (key.n, key.e)


# ---------------------------------------------------------------------------------------------------------------
# Decisions (pure)
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublicKeySeen:
    """A public key as ListPublicKeys shows it."""

    id: str
    name: str
    encoded_key: str


@dataclass(frozen=True)
class KeyGroupSeen:
    """A key group as ListKeyGroups or GetKeyGroup shows it."""

    id: str
    name: str
    items: tuple[str, ...]


def choose_public_key(
    key: rsa.PublicKey, name: str, stored_id: str | None, listed: Iterable[PublicKeySeen]
) -> str | None:
    """The id of a public key holding `key` (the secret's id first, then ours by name, then any), else None."""
    holding = [seen for seen in listed if holds(seen.encoded_key, key)]
    for preferred in (lambda seen: seen.id == stored_id, lambda seen: seen.name == name, lambda seen: True):
        for seen in holding:
            if preferred(seen):
                return seen.id
    return None


@dataclass(frozen=True)
class Use:
    key_group_id: str


MAKE = "make"


def choose_key_group(name: str, public_key_id: str, listed: Iterable[KeyGroupSeen]) -> Use | str:
    """The key group named ours when it holds the key (Use), MAKE when there is none; else refused."""
    named = [group for group in listed if group.name == name]
    if not named:
        return MAKE
    if public_key_id in named[0].items:
        return Use(named[0].id)
    raise KeyResourceError(f"a key group named {name} exists without the public key {public_key_id}")


ENSURE, RENAME, KEEP = "ensure", "rename", "keep"


def plan_update(secret_changed: bool, stored: StoredKey | None, group: KeyGroupSeen | None, name: str) -> str:
    """What an Update does: ENSURE (make or find the key and group, maybe a new group), RENAME, or KEEP."""
    if secret_changed or stored is None or group is None:
        return ENSURE
    if stored.public_key_id is None or stored.public_key_id not in group.items:
        return ENSURE
    return RENAME if group.name != name else KEEP


GONE, RETRY, LEAVE, FAIL = "gone", "retry", "leave", "fail"

# What a Delete does with each error of DeleteKeyGroup and DeletePublicKey (their errors: the API reference).
_DELETE_OUTCOMES = {
    ("key-group", "NoSuchResource"): GONE,
    ("key-group", "ResourceInUse"): FAIL,  # a distribution's cache behaviour still trusts it
    ("key-group", "PreconditionFailed"): RETRY,  # changed since its ETag was read
    ("public-key", "NoSuchPublicKey"): GONE,
    ("public-key", "PublicKeyInUse"): LEAVE,  # another key group holds it: that group owns it
    ("public-key", "PreconditionFailed"): RETRY,
}


def delete_outcome(kind: str, error_code: str) -> str:
    return _DELETE_OUTCOMES.get((kind, error_code), FAIL)


def is_key_group_id(physical_id: object) -> bool:
    return isinstance(physical_id, str) and bool(_RESOURCE_ID.fullmatch(physical_id))


# ---------------------------------------------------------------------------------------------------------------
# The response (pure)
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    status: str
    physical_id: str
    data: Mapping[str, str] | None = None
    reason: str = ""


def scrub(text: str) -> str:
    """Text fit for a reason or a log line: no PEM block (a key, whole or cut), one line, bounded."""
    return " ".join(_PEM_BLOCK.sub("[PEM removed]", text).split())[:1000]


def failure_reason(exc: BaseException) -> str:
    if isinstance(exc, KeyResourceError):
        return scrub(str(exc))
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        return scrub(f"{exc.operation_name}: {error.get('Code', 'error')}: {error.get('Message', '')}")
    return f"{type(exc).__name__} (see the function's log)"


def response_body(event: Mapping, outcome: Outcome) -> bytes:
    """The response object CloudFormation reads, within its 4096 bytes (the reason is cut to fit)."""
    body = {
        "Status": outcome.status,
        "Reason": outcome.reason or outcome.status,
        "PhysicalResourceId": outcome.physical_id,
        "StackId": event.get("StackId", ""),
        "RequestId": event.get("RequestId", ""),
        "LogicalResourceId": event.get("LogicalResourceId", ""),
    }
    if outcome.data:
        body["Data"] = dict(outcome.data)

    def encoded(reason: str) -> bytes:
        return json.dumps(body | {"Reason": reason}).encode("utf-8")

    reason = body["Reason"]
    shortest, longest = 0, len(reason)  # the longest prefix of the reason that fits
    while shortest < longest:
        middle = (shortest + longest + 1) // 2
        shortest, longest = (
            (middle, longest) if len(encoded(reason[:middle])) <= RESPONSE_MAX_BYTES else (shortest, middle - 1)
        )
    return encoded(reason[:shortest])


def failed_physical_id(event: Mapping) -> str:
    """What a FAILED answer names: the request's own id (Update, Delete), else a placeholder no group has."""
    given = event.get("PhysicalResourceId")
    if isinstance(given, str) and given:
        return given
    return f"{NOT_CREATED}{event.get('LogicalResourceId', 'resource')}"[:1024]
