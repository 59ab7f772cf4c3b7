"""Pure verification (and test-side signing) of the video provider's webhook signatures over the exact bytes."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

# Bounds on the work one public request can cause: every header value we read is capped,
# and only the first few signature entries are tried against each secret.
MAX_HEADER_CHARS = 2048
# JW Player's token carries the whole event as its payload, so it may be as long as API Gateway lets a
# request's headers be (10,240 bytes in all, its documented REST API quota); past that no genuine one arrives.
MAX_TOKEN_CHARS = 10240
MAX_SIGNATURE_ENTRIES = 10
DEFAULT_TOLERANCE_S = 300

SEED_SIGNATURE_HEADER = "x-signature"
ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
SIGNATURE_HEADER = "webhook-signature"
SECRET_PREFIX = "whsec_"
SIGNATURE_VERSION = "v1"

# HTTP optional whitespace around a field value is not part of the value (RFC 9110 §5.5).
_OWS = " \t"
# A secret read from JSON may hold "\ud800", which no encoding can turn into key bytes.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class Scheme(StrEnum):
    SEED = "seed"  # x-signature: hex HMAC-SHA256 of the body (the seed contract)
    STANDARD = "standard"  # Standard Webhooks 1.0
    MUX = "mux"  # Mux-Signature: t=<unix>,v1=<hex HMAC of "<t>.<body>">
    CLOUDFLARE = "cloudflare"  # Webhook-Signature: time=<unix>,sig1=<hex HMAC of "<time>.<body>">
    APIVIDEO = "apivideo"  # X-Api-Video-Signature: hex HMAC of the body (no timestamp)
    JWPLAYER = "jwplayer"  # Authorization: Bearer <JWT, HS256 with the webhook secret, whose payload is the body>
    BUNNY = "bunny"  # X-BunnyStream-Signature: hex HMAC of the body, the library's Read-Only API key (v1)


# The timestamped hex schemes: (header, timestamp key, signature key).
_TIMESTAMPED = {
    Scheme.MUX: ("mux-signature", "t", "v1"),
    Scheme.CLOUDFLARE: ("webhook-signature", "time", "sig1"),
}
# The body-only hex schemes: the header that carries the signature.
_BODY_ONLY = {
    Scheme.SEED: SEED_SIGNATURE_HEADER,
    Scheme.APIVIDEO: "x-api-video-signature",
    Scheme.BUNNY: "x-bunnystream-signature",
}


@dataclass(frozen=True)
class Verified:
    event_id: str | None  # Standard Webhooks: the webhook-id header; seed: None
    timestamp: int | None  # Standard Webhooks: webhook-timestamp; seed: None


class SignatureError(Exception):
    """Why a request is refused; .reason is a short fixed phrase safe to log and return.

    Phrases never carry request data, secrets or signatures, so callers can echo them as-is.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SecretError(SignatureError):
    """The configured secrets cannot be used: our misconfiguration, not the sender's fault."""


def decode_body(body: str | None, is_base64: bool) -> bytes:
    """The exact bytes the sender signed, from an API Gateway proxy payload's body."""
    if body is None:
        return b""
    if not is_base64:
        return body.encode("utf-8")
    try:
        # validate=True: silently dropping stray characters would change the signed bytes.
        return base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        # ValueError covers non-ASCII text, which b64decode refuses before decoding.
        raise SignatureError("body is not valid base64") from None


def verify(
    scheme: Scheme,
    body: bytes,
    headers: Mapping[str, str],
    secrets: Sequence[str],
    now: float,
    tolerance_s: int = DEFAULT_TOLERANCE_S,
) -> Verified:
    """Accept the request if any configured secret signed `body`, else raise SignatureError.

    `secrets` holds the current secret and, during rotation, the previous one.
    """
    scheme = Scheme(scheme)
    keys = _keys(scheme, secrets)
    lowered = _Headers(headers)
    if scheme is Scheme.JWPLAYER:
        return _verify_jwt(body, lowered, keys)
    if scheme in _BODY_ONLY:
        return _verify_body_hex(body, lowered, keys, _BODY_ONLY[scheme])
    if scheme in _TIMESTAMPED:
        return _verify_timestamped_hex(body, lowered, keys, now, tolerance_s, *_TIMESTAMPED[scheme])
    return _verify_standard(body, lowered, keys, now, tolerance_s)


def sign(scheme: Scheme, body: bytes, secret: str, now: float, event_id: str | None = None) -> dict[str, str]:
    """The headers a sender would attach to `body` (for tests and the tool's own test client)."""
    scheme = Scheme(scheme)
    key = _key(scheme, secret)
    if not key:
        raise ValueError("secret is empty")
    if scheme is Scheme.JWPLAYER:
        return {"Authorization": f"Bearer {hs256_token(body, key)}"}
    if scheme in _BODY_ONLY:
        return {_BODY_ONLY[scheme]: hmac.new(key, body, hashlib.sha256).hexdigest()}
    if scheme in _TIMESTAMPED:
        header, ts_key, sig_key = _TIMESTAMPED[scheme]
        timestamp = str(int(now))
        return {header: f"{ts_key}={timestamp},{sig_key}={_timestamped_digest(key, timestamp, body)}"}
    if not event_id:
        raise ValueError("event_id is required for the standard scheme")
    timestamp = str(int(now))
    digest = _standard_digest(key, event_id, timestamp, body)
    return {
        ID_HEADER: event_id,
        TIMESTAMP_HEADER: timestamp,
        SIGNATURE_HEADER: f"{SIGNATURE_VERSION},{base64.b64encode(digest).decode('ascii')}",
    }


def _verify_body_hex(body: bytes, headers: _Headers, keys: list[bytes], header: str) -> Verified:
    provided = headers.get(header)
    if provided is None:
        raise SignatureError("missing signature header")
    # Bytes, not str: compare_digest raises TypeError on non-ASCII str, and the value is untrusted.
    candidate = provided.lower().encode("utf-8")
    for key in keys:
        expected = hmac.new(key, body, hashlib.sha256).hexdigest().encode("ascii")
        if hmac.compare_digest(candidate, expected):
            return Verified(event_id=None, timestamp=None)
    raise SignatureError("no valid signature")


def _verify_timestamped_hex(
    body: bytes,
    headers: _Headers,
    keys: list[bytes],
    now: float,
    tolerance_s: int,
    header: str,
    ts_key: str,
    sig_key: str,
) -> Verified:
    """Mux and Cloudflare: `<ts_key>=<unix>,<sig_key>=<hex>[,<sig_key>=<hex>...]` over "<unix>.<body>"."""
    value = headers.get(header)
    if value is None:
        raise SignatureError("missing signature header")
    timestamps, candidates = [], []
    for part in value.split(",")[: MAX_SIGNATURE_ENTRIES + 1]:
        name, equals, item = part.strip(_OWS).partition("=")
        if not equals:
            continue
        if name == ts_key:
            timestamps.append(item)
        elif name == sig_key:
            candidates.append(item.lower().encode("utf-8"))
    if len(timestamps) != 1:
        raise SignatureError("missing timestamp" if not timestamps else "more than one timestamp")
    raw_timestamp = timestamps[0]
    timestamp = _checked_timestamp(raw_timestamp, now, tolerance_s)
    expected = [_timestamped_digest(key, raw_timestamp, body).encode("ascii") for key in keys]
    for candidate in candidates:
        for digest in expected:
            if hmac.compare_digest(candidate, digest):
                return Verified(event_id=None, timestamp=timestamp)
    raise SignatureError("no valid signature")


def _timestamped_digest(key: bytes, timestamp: str, body: bytes) -> str:
    return hmac.new(key, timestamp.encode("ascii") + b"." + body, hashlib.sha256).hexdigest()


def _checked_timestamp(raw_timestamp: str, now: float, tolerance_s: int) -> int:
    """The signed timestamp, refused when malformed or outside the tolerance in either direction.

    A stale or replayed request is refused before an HMAC is spent on it. isascii() too,
    because str.isdigit() accepts e.g. superscripts that int() rejects. Written as "not
    inside" so a NaN clock refuses; int/float comparison is exact, so a 2000-digit
    timestamp cannot overflow here.
    """
    if not (raw_timestamp.isascii() and raw_timestamp.isdigit()):
        raise SignatureError("malformed timestamp")
    timestamp = int(raw_timestamp)
    if not (now - tolerance_s <= timestamp <= now + tolerance_s):
        raise SignatureError("timestamp outside tolerance")
    return timestamp


def _verify_standard(body: bytes, headers: _Headers, keys: list[bytes], now: float, tolerance_s: int) -> Verified:
    event_id = headers.get(ID_HEADER)
    if event_id is None:
        raise SignatureError("missing webhook-id")
    raw_timestamp = headers.get(TIMESTAMP_HEADER)
    if raw_timestamp is None:
        raise SignatureError("missing webhook-timestamp")
    signatures = headers.get(SIGNATURE_HEADER)
    if signatures is None:
        raise SignatureError("missing signature header")

    timestamp = _checked_timestamp(raw_timestamp, now, tolerance_s)

    candidates = _v1_signatures(signatures)
    # The signed content uses the header strings as received, so leading zeros etc. must match.
    expected = [_standard_digest(key, event_id, raw_timestamp, body) for key in keys]
    for candidate in candidates:
        for digest in expected:
            if hmac.compare_digest(candidate, digest):
                return Verified(event_id=event_id, timestamp=timestamp)
    raise SignatureError("no valid signature")


def _v1_signatures(value: str) -> list[bytes]:
    """Decoded v1 signatures among the first MAX_SIGNATURE_ENTRIES entries; others are skipped."""
    entries = [entry for entry in value.split(" ") if entry][:MAX_SIGNATURE_ENTRIES]
    decoded = []
    for entry in entries:
        version, comma, encoded = entry.partition(",")
        # Unknown versions (e.g. v1a, asymmetric) are for other verifiers: ignore, don't refuse.
        if not comma or version != SIGNATURE_VERSION:
            continue
        try:
            decoded.append(base64.b64decode(encoded, validate=True))
        except (binascii.Error, ValueError):
            continue
    return decoded


def _standard_digest(key: bytes, event_id: str, timestamp: str, body: bytes) -> bytes:
    return hmac.new(key, f"{event_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def hs256_token(payload: bytes, key: bytes) -> str:
    """A compact JWS of `payload` (its exact bytes), HS256 with `key` (JW Player's webhooks and URL tokens)."""
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    signing_input = f"{header}.{_b64url(payload)}".encode("ascii")
    return f"{signing_input.decode('ascii')}.{_b64url(hmac.new(key, signing_input, hashlib.sha256).digest())}"


def _verify_jwt(body: bytes, headers: _Headers, keys: list[bytes]) -> Verified:
    """JW Player: `Authorization: Bearer <JWT>`, HS256, whose payload is the body: its exact bytes, or the same
    JSON value written otherwise (as peers check it: the decoded payload equal to the parsed body)."""
    value = headers.get("authorization", cap=MAX_TOKEN_CHARS)
    scheme, _, token = (value or "").partition(" ")
    parts = token.strip().split(".") if scheme.lower() == "bearer" else []
    if len(parts) != 3 or not parts[0] or not parts[2]:  # an empty body is an empty payload
        raise SignatureError("missing signature header")
    try:
        header = json.loads(_unb64url(parts[0]))
        payload, signature = _unb64url(parts[1]), _unb64url(parts[2])
    except (binascii.Error, ValueError, UnicodeDecodeError, RecursionError):
        raise SignatureError("malformed token") from None
    if not isinstance(header, dict) or header.get("alg") != "HS256":
        raise SignatureError("not an HS256 token")
    signing_input = f"{parts[0]}.{parts[1]}".encode("ascii")
    if not any(hmac.compare_digest(hmac.new(k, signing_input, hashlib.sha256).digest(), signature) for k in keys):
        raise SignatureError("no valid signature")
    if payload != body and not _same_json(payload, body):
        raise SignatureError("the token does not match the body")
    return Verified(event_id=None, timestamp=None)


def _unb64url(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _same_json(first: bytes, second: bytes) -> bool:
    try:
        return json.loads(first) == json.loads(second)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False


def _keys(scheme: Scheme, secrets: Sequence[str]) -> list[bytes]:
    # A bare str is a Sequence[str] too: iterating it would make each character a secret.
    if isinstance(secrets, (str, bytes)):
        raise TypeError("secrets must be a sequence of secrets, not a single string")
    # Empty keys are skipped: an HMAC under an empty key is forgeable by anyone.
    keys = [key for key in (_key(scheme, secret) for secret in secrets) if key]
    if not keys:
        raise SecretError("no secret configured")
    return keys


def _key(scheme: Scheme, secret: str) -> bytes:
    """HMAC key bytes for a configured secret.

    Seed: the secret's UTF-8 bytes. Standard: "whsec_<base64>" decodes the base64 part, as
    the spec says. Without the prefix, a secret that is valid base64 is decoded (providers
    often hand out the bare base64 part) and anything else is used as UTF-8 bytes. So a
    plain-text secret that happens to be valid base64 (e.g. "abcd") is decoded too: add
    the prefix, or pick a secret that is not base64, to remove the ambiguity.
    """
    if not isinstance(secret, str) or _LONE_SURROGATE.search(secret):
        raise SecretError("secret is not valid text")
    if scheme is not Scheme.STANDARD:
        return secret.encode("utf-8")  # Mux, Cloudflare and api.video key the HMAC with the secret's text
    if secret.startswith(SECRET_PREFIX):
        try:
            return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
        except (binascii.Error, ValueError):
            # Misconfiguration is loud rather than silently skipping the secret.
            raise SecretError("secret is not valid base64") from None
    try:
        return base64.b64decode(secret, validate=True)
    except (binascii.Error, ValueError):
        return secret.encode("utf-8")


class _Headers:
    """Case-insensitive view of the request headers, reading only the few names we need."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        self._values: dict[str, str] = {}
        # Names sent under two spellings (e.g. "X-Signature" and "x-signature"): which one
        # the sender meant is unknowable, so reading one of them is refused rather than guessed.
        self._ambiguous: set[str] = set()
        for name, value in headers.items():
            if not isinstance(name, str):
                continue
            key = name.lower()
            if key in self._values or (isinstance(value, list) and len(value) > 1):
                self._ambiguous.add(key)  # a second spelling, or the same name sent twice
            self._values[key] = value

    def get(self, name: str, cap: int = MAX_HEADER_CHARS) -> str | None:
        """The value without surrounding whitespace; None when absent or empty; refused past `cap` characters."""
        if name in self._ambiguous:
            raise SignatureError("duplicate header")
        value = self._values.get(name)
        if not isinstance(value, str):
            return None
        # Checked before stripping so padding cannot smuggle extra work past the cap.
        if len(value) > cap:
            raise SignatureError("header too long")
        value = value.strip(_OWS)
        return value or None
