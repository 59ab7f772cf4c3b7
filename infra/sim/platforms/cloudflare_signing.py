"""Stream's signed URL tokens, as the "cloudflare" profile mints and checks them (pure functions).

"Create signed URL tokens for videos" (POST /accounts/{a}/stream/{uid}/token; cloudflare-python 5.9.0
`stream.token.create`, TokenCreateParams) answers `{"token"}`, a JWT put "in place of the video id" in a
delivery URL (developers.cloudflare.com/stream/viewing-videos/securing-your-stream/). Its claims are those
of Stream's example payload (download-videos/, "Secure video downloads"): `sub` the uid, `kid`, `exp`, `nbf`,
`downloadable`. Stream signs it RS256 with its own key; the simulator signs HS256 with a secret of its own
(a token is opaque to its users: they only put it where the uid goes).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json

TOKEN_DEFAULT_S = 3600  # exp: "If this field is not set, the default is one hour after issuing."
TOKEN_MAX_S = 86_400  # exp: "The maximum time specification is 24 hours from issuing time."
TOKEN_NBF_S = 3600  # nbf: "If this field is not set, the default is one hour before issuing."
TOKEN_KID = "5157000000000000000000000000000d"  # the id of the key Stream signs /token's tokens with (ours)
TOKEN_SECRET = "token_secret"  # where a target keeps its signing secret, in the account state


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _token_signature(secret: bytes, signed_part: str) -> str:
    return _b64(hmac.new(secret, signed_part.encode(), hashlib.sha256).digest())


def token_problem(body: object, now: float) -> str | None:
    """What a /token body breaks of its documented fields (TokenCreateParams): `exp` and `nbf` unix seconds,
    `exp` at most 24 hours ahead (a past one is refused too: our choice), `downloadable` a boolean."""
    if body is None:
        return None  # "If a body is not provided in the request, a token is created with default values."
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    for name in ("exp", "nbf"):
        value = body.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{name} must be a unix timestamp (an integer)"
    if "exp" in body and not now < body["exp"] <= now + TOKEN_MAX_S:
        return "exp must be in the next 24 hours"
    if not isinstance(body.get("downloadable", False), bool):
        return "downloadable must be a boolean"
    return None


def mint_token(secret: bytes, uid: str, body: object, now: float) -> str:
    """A token as /token makes one for `uid`, from the request's body (None: the defaults)."""
    asked = body if isinstance(body, dict) else {}
    claims = {
        "sub": uid,
        "kid": TOKEN_KID,
        "exp": asked.get("exp", int(now) + TOKEN_DEFAULT_S),
        "nbf": asked.get("nbf", int(now) - TOKEN_NBF_S),
        "downloadable": asked.get("downloadable", False),
    }
    head = _b64(json.dumps({"alg": "HS256", "kid": TOKEN_KID}).encode())
    signed_part = f"{head}.{_b64(json.dumps(claims, separators=(',', ':')).encode())}"
    return f"{signed_part}.{_token_signature(secret, signed_part)}"


def token_claims(token: str) -> dict | None:
    """A token's claims as it states them (unverified), or None when it is no JWT at all."""
    parts = token.split(".")
    if len(parts) != 3 or len(token) > 4096:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (binascii.Error, ValueError):
        return None
    return claims if isinstance(claims, dict) and isinstance(claims.get("sub"), str) else None


def token_holds(secret: bytes | None, token: str, now: float, download: bool = False) -> bool:
    """A token this simulator made, between its nbf and exp; for a download, one made `downloadable`."""
    claims = token_claims(token)
    if secret is None or claims is None:
        return False
    signed_part, _, signature = token.rpartition(".")
    if not hmac.compare_digest(signature, _token_signature(secret, signed_part)):
        return False
    exp, nbf = claims.get("exp"), claims.get("nbf")
    if not isinstance(exp, int) or not isinstance(nbf, int) or not nbf <= now <= exp:
        return False
    return claims.get("downloadable") is True or not download
