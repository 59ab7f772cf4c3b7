"""Signed playback tokens (Mux's RS256 JWTs) checked by a second, independent implementation: PyJWT with
`cryptography` decodes and verifies what `migrator.playback_tokens` makes, with the public key alone."""

from __future__ import annotations

import base64
import json

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa as crypto_rsa
from migrator.playback_tokens import SigningKey, SigningKeyError, mux_playback_token, rs256_jwt

NOW = 1_800_000_000


@pytest.fixture(scope="module")
def keypair():
    private = crypto_rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return private, private.public_key()


def pem(private, fmt) -> str:
    return private.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()


@pytest.mark.parametrize(
    "fmt", [serialization.PrivateFormat.TraditionalOpenSSL, serialization.PrivateFormat.PKCS8], ids=["pkcs1", "pkcs8"]
)
def test_a_mux_token_verifies_with_the_public_key_and_carries_mux_claims(keypair, fmt):
    private, public = keypair
    key = SigningKey("key-0001", pem(private, fmt))
    token = mux_playback_token("pbk123", key, NOW + 600)
    claims = jwt.decode(token, public, algorithms=["RS256"], audience="v", options={"verify_exp": False})
    assert claims == {"sub": "pbk123", "aud": "v", "exp": NOW + 600, "kid": "key-0001"}
    assert jwt.get_unverified_header(token) == {"alg": "RS256", "typ": "JWT", "kid": "key-0001"}


def test_the_key_as_muxs_api_returns_it_base64_encoded_is_read(keypair):
    private, public = keypair
    encoded = base64.b64encode(pem(private, serialization.PrivateFormat.TraditionalOpenSSL).encode()).decode()
    token = rs256_jwt({"sub": "x"}, SigningKey.from_mux("k", encoded))
    assert jwt.decode(token, public, algorithms=["RS256"]) == {"sub": "x"}


def test_a_tampered_token_does_not_verify(keypair):
    private, public = keypair
    token = mux_playback_token("pbk123", SigningKey("k", pem(private, serialization.PrivateFormat.PKCS8)), NOW)
    head, _claims, signature = token.split(".")
    forged = base64.urlsafe_b64encode(json.dumps({"sub": "other", "aud": "v", "exp": NOW}).encode()).rstrip(b"=")
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(f"{head}.{forged.decode()}.{signature}", public, algorithms=["RS256"], audience="v")


@pytest.mark.parametrize("text", ["not a key", base64.b64encode(b"-----BEGIN RSA PRIVATE KEY-----\nAAAA\n").decode()])
def test_a_key_that_cannot_sign_says_so_without_showing_it(text):
    with pytest.raises(SigningKeyError) as caught:
        rs256_jwt({"sub": "x"}, SigningKey.from_mux("k", text))
    assert "AAAA" not in str(caught.value) and "not a key" not in str(caught.value)
