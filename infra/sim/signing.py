"""Webhook signature schemes: the seed's and Standard Webhooks (generic), Mux's, Cloudflare's, api.video's.

All are HMAC-SHA256 keyed with the secret's UTF-8 bytes (Standard Webhooks: the decoded
`whsec_` key). They differ only in what is signed and how the header is written, which
the profiles decide.
"""

from __future__ import annotations

import base64
import hashlib
import hmac


def sign_seed(secret: str, body: bytes) -> str:
    """Return the hex HMAC-SHA256 of the raw body, the provider's own ("seed") scheme.

    api.video's X-Api-Video-Signature is this same computation.
    """
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def sign_timestamped(secret: str, timestamp: int, body: bytes) -> str:
    """Return the hex HMAC-SHA256 of "<timestamp>.<raw body>", as Mux (v1) and Cloudflare (sig1) sign."""
    return sign_seed(secret, f"{timestamp}.".encode() + body)


def standard_key(secret: str) -> bytes:
    """Return the HMAC key for a Standard Webhooks secret (`whsec_<base64>`, else raw utf-8)."""
    if secret.startswith("whsec_"):
        try:
            return base64.b64decode(secret[len("whsec_") :], validate=True)
        except ValueError:
            pass  # Not valid base64: fall through and use the text itself, as for unprefixed secrets.
    return secret.encode()


def sign_standard(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """Return the Standard Webhooks 1.0 `webhook-signature` value (`v1,<base64>`)."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(standard_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()
