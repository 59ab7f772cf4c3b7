"""Signed playback tokens: the RS256 JSON Web Tokens Mux's signed playback ids take, made from a signing key.

Mux plays a signed playback id only with a `token` (a JWT signed with one of the environment's
signing keys, RS256): header `{"alg": "RS256", "typ": "JWT", "kid": <signing key id>}`, claims
`sub` (the playback id), `aud` (`v` for the video's HLS, `t` for a thumbnail, `s` for a storyboard)
and `exp` (epoch seconds), docs.mux.com/guides/secure-video-playback. The key is made through Mux's
API (`POST /system/v1/signing-keys`), which returns its private key once, a base64-encoded PEM.
The signature is PKCS#1 v1.5 over SHA-256 (RFC 7518, section 3.3), made with `rsa`, a pure-Python
implementation, so the same code runs on the operator's machine and on arm64 Lambda. A second,
independent implementation (PyJWT with `cryptography`) checks what this makes in the tests.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

import rsa

# Mux's audiences: what the token lets the bearer play.
VIDEO, THUMBNAIL, STORYBOARD = "v", "t", "s"


class SigningKeyError(ValueError):
    """A signing key that cannot sign: its private key is not an RSA key in PEM (the reason names no key)."""


@dataclass(frozen=True)
class SigningKey:
    key_id: str
    private_key_pem: str  # PKCS#1 ("BEGIN RSA PRIVATE KEY") or PKCS#8 ("BEGIN PRIVATE KEY")

    @classmethod
    def from_mux(cls, key_id: str, private_key: str) -> SigningKey:
        """A key as Mux's API returns it: the PEM base64-encoded (a plain PEM is taken as it is)."""
        text = private_key.strip()
        if "-----BEGIN" not in text:
            try:
                text = base64.b64decode(text, validate=True).decode("ascii")
            except (binascii.Error, UnicodeDecodeError):
                raise SigningKeyError("the signing key's private key is neither a PEM nor a base64 PEM") from None
        return cls(key_id, text)

    def private(self) -> rsa.PrivateKey:
        pem = self.private_key_pem.encode("ascii", errors="replace")
        try:
            if b"BEGIN RSA PRIVATE KEY" in pem:
                return rsa.PrivateKey.load_pkcs1(pem, "PEM")
            if b"BEGIN PRIVATE KEY" in pem:
                return rsa.PrivateKey.load_pkcs1(_pkcs8_to_pkcs1(pem), "DER")
        except (ValueError, IndexError, TypeError) as exc:
            raise SigningKeyError(f"the signing key's private key does not parse ({type(exc).__name__})") from None
        raise SigningKeyError("the signing key's private key is not an RSA private key in PEM")


def rs256_jwt(claims: dict, key: SigningKey) -> str:
    """`claims` as a compact JWS signed with `key` (RS256, its id in the header's `kid`)."""
    header = {"alg": "RS256", "typ": "JWT", "kid": key.key_id}
    signing_input = f"{_b64(_json(header))}.{_b64(_json(claims))}".encode("ascii")
    signature = rsa.sign(signing_input, key.private(), "SHA-256")
    return f"{signing_input.decode('ascii')}.{_b64(signature)}"


def mux_playback_token(playback_id: str, key: SigningKey, expires_at: float, audience: str = VIDEO) -> str:
    """The token that plays Mux's signed `playback_id` until `expires_at`."""
    return rs256_jwt({"sub": playback_id, "aud": audience, "exp": int(expires_at), "kid": key.key_id}, key)


def _json(doc: dict) -> bytes:
    return json.dumps(doc, separators=(",", ":"), sort_keys=True).encode("utf-8")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _pkcs8_to_pkcs1(pem: bytes) -> bytes:
    """The RSAPrivateKey inside a PKCS#8 PrivateKeyInfo (RFC 5208): `rsa` reads PKCS#1 only."""
    from pyasn1.codec.der import decoder
    from pyasn1.type import namedtype, univ

    class AlgorithmIdentifier(univ.Sequence):
        componentType = namedtype.NamedTypes(
            namedtype.NamedType("algorithm", univ.ObjectIdentifier()),
            namedtype.OptionalNamedType("parameters", univ.Any()),
        )

    class PrivateKeyInfo(univ.Sequence):
        componentType = namedtype.NamedTypes(
            namedtype.NamedType("version", univ.Integer()),
            namedtype.NamedType("privateKeyAlgorithm", AlgorithmIdentifier()),
            namedtype.NamedType("privateKey", univ.OctetString()),
        )

    body = b"".join(line for line in pem.splitlines() if line and not line.startswith(b"-----"))
    info, _ = decoder.decode(base64.b64decode(body), asn1Spec=PrivateKeyInfo())
    if str(info["privateKeyAlgorithm"]["algorithm"]) != "1.2.840.113549.1.1.1":  # rsaEncryption
        raise ValueError("not an RSA key")
    return bytes(info["privateKey"])
