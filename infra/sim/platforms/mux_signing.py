"""The "mux" profile's signing keys and the tokens its delivery hosts check (stream.mux.com, image.mux.com).

- Signing keys (docs.mux.com/api-reference/system/signing-keys; mux-python 5.1.2 `SigningKeysApi`, and the
  older `URLSigningKeysApi` at /video/v1/signing-keys, same shapes): `POST /system/v1/signing-keys` makes a
  RSA pair and answers 201 `{"data": {id, created_at, private_key}}`, the private key "a Base64
  encoded private key that can be used with the RS256 algorithm when creating a JWT ... only returned once
  when creating" (api-reference/video/url-signing-keys); "the public key will be stored at Mux to validate
  signed tokens" (docs.mux.com/docs/security-signed-urls), and that is all this keeps of it. `GET` lists
  `{"data": [{id, created_at}]}` or reads one, `DELETE` answers 204; a deleted key signs nothing any more.
- A signed (or DRM) playback id plays only with `?token=<JWT>` (api-reference/video/playback-id: "signed
  playback IDs should be used with tokens https://stream.mux.com/${PLAYBACK_ID}?token={TOKEN}"): RS256,
  `kid` naming one of the environment's keys (in the header, as Mux's SDKs put it), `sub` the playback id,
  `aud` what it plays (`v` video, and the subtitles and captions served beside it; `t` a thumbnail) and
  `exp` in the future (docs.mux.com/guides/secure-video-playback). Verified with `rsa` (pure Python).
- A signed manifest's renditions carry what authorises them in their own URLs, so a player follows them
  as they are (here: the same token on each relative rendition URL).
"""

from __future__ import annotations

import base64
import binascii
import json
import time
import urllib.parse
from collections.abc import Iterable, Mapping

import rsa

from .. import media
from ..profile import Account, Call, ParamError, Reply, alnum_id, int_param
from ..video import READY, Video

VIDEO, THUMBNAIL = "v", "t"  # the audiences this simulator serves (secure-video-playback, "aud")
KEYS = "signing_keys"  # where the profile's held account state keeps each key's public half
# "the API will generate a 2048-bit RSA key-pair" (security-signed-urls); this makes 1024-bit ones: pure-Python
# generation of 2048 bits takes seconds (up to ten on a busy machine) under the state lock, and no client reads
# the size (the PEM, the RS256 signature and its check are the same code either way).
KEY_BITS = 1024
SIGNED_POLICIES = ("signed", "drm")


# ----- the signing-keys API (an account operation: the core lends `held` under its lock) -------------------


def signing_keys(call: Call, held: dict, error) -> Account:
    """`call.op`: keys_create, keys_list (`limit`, default 25, and `page`), key_get, key_delete; `error(kind,
    message)` words a refusal in Mux's shape."""
    keys: dict = held.setdefault(KEYS, {})
    op, key_id = call.op, call.params.get("id")
    if op == "keys_create":
        public, private = rsa.newkeys(KEY_BITS)
        kid = alnum_id(43)  # Mux's ids are 43 letters and digits
        created = str(int(time.time()))
        keys[kid] = {"created_at": created, "public_pem": public.save_pkcs1("PEM").decode("ascii")}
        pem = private.save_pkcs1("PEM")  # PKCS#1, "BEGIN RSA PRIVATE KEY", as Mux's base64 decodes to
        data = {"id": kid, "created_at": created, "private_key": base64.b64encode(pem).decode("ascii")}
        return Account(Reply(201, {"data": data}))
    if op == "keys_list":
        query = urllib.parse.parse_qs(call.query, keep_blank_values=True)
        try:
            limit, page = int_param(query, "limit", 25, 1, None), int_param(query, "page", 1, 1, None)
        except ParamError as exc:
            return Account(error("invalid", str(exc)))
        shown = [_shown(k, v) for k, v in keys.items()][(page - 1) * limit : page * limit]
        return Account(Reply(200, {"data": shown}))
    if key_id is None or key_id not in keys:
        return Account(error("not_found"))
    if op == "key_delete":
        del keys[key_id]
        return Account(Reply(204, raw=b""))  # no body: a keep-alive connection stays in step
    return Account(Reply(200, {"data": _shown(key_id, keys[key_id])}))


def _shown(kid: str, key: Mapping) -> dict:
    return {"id": kid, "created_at": key["created_at"]}  # the private key is never shown again


# ----- a token, as the delivery hosts check it ------------------------------------------------------------


def token_problem(token: str | None, playback_id: str, audience: str, held: Mapping, now: float) -> str | None:
    """Why `token` does not let its bearer fetch `audience` of `playback_id` (None: it does)."""
    if not token:
        return "a signed playback id needs a token"
    parts = token.split(".")
    try:
        header, claims, signature = json.loads(_unb64(parts[0])), json.loads(_unb64(parts[1])), _unb64(parts[2])
    except (IndexError, ValueError, binascii.Error):
        return "the token is not a JWT"
    if len(parts) != 3 or not isinstance(header, dict) or not isinstance(claims, dict):
        return "the token is not a JWT"
    if header.get("alg") != "RS256":
        return "the token is not signed RS256"
    key = mapping(held.get(KEYS)).get(header.get("kid") or claims.get("kid"))
    if not isinstance(key, Mapping):
        return "the token names no signing key of this environment"
    try:
        method = rsa.verify(f"{parts[0]}.{parts[1]}".encode("ascii"), signature, _public(key))
    except (rsa.VerificationError, ValueError, UnicodeEncodeError):
        return "the token's signature does not verify"
    if method != "SHA-256":
        return "the token is not signed RS256"
    if claims.get("sub") != playback_id:
        return "the token is for another playback id"
    if claims.get("aud") != audience:
        return f"the token's audience is not {audience!r}"
    exp = claims.get("exp")
    if isinstance(exp, bool) or not isinstance(exp, int | float) or exp <= now:
        return "the token has expired"
    return None


def mapping(value: object) -> Mapping:
    return value if isinstance(value, Mapping) else {}


def _public(key: Mapping) -> rsa.PublicKey:
    return rsa.PublicKey.load_pkcs1(key["public_pem"].encode("ascii"), "PEM")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def token_of(query: str) -> str | None:
    return urllib.parse.parse_qs(query).get("token", [None])[0]


# ----- the playback of the videos made here (/_play/mux/..., media.py) ------------------------------------


def serve_playback(
    videos: Iterable[Video], policies, held: Mapping, key: str, rest: list[str], query: str
) -> media.Answer:
    """stream.mux.com's `{playback id}.m3u8` and renditions `{playback id}/{height}p.m3u8`, image.mux.com's
    `{playback id}/thumbnail.jpg`: a public id's as they are, a signed one's only with a token that verifies.
    `policies(video)` lists the video's playback ids ({policy, id})."""
    master = key.endswith(".m3u8") and not rest
    pid = key.removesuffix(".m3u8") if master else key
    video, policy = None, None
    for candidate in videos:
        for playback in policies(candidate):
            if playback["id"] == pid:
                video, policy = candidate, playback["policy"]
    signed = policy in SIGNED_POLICIES
    token = token_of(query)
    if signed and video is not None and video.state == READY:  # an unready one is 404 with or without a token
        audience = THUMBNAIL if rest and rest[-1].endswith(".jpg") else VIDEO
        problem = token_problem(token, pid, audience, held, time.time())
        if problem:
            return 403, media.TEXT, f"{problem}\n".encode()
    suffix = f"?token={urllib.parse.quote(token or '', safe='')}" if signed else ""

    def variant_uri(height: int) -> str:  # relative to the master, as Mux's carry their authorisation
        return f"{urllib.parse.quote(pid, safe='')}/{height}p.m3u8{suffix}"

    return media.answer(video, rest, query, signed, variant_uri, lambda path: master)


def mux_host_flags(sim_url: str) -> list[str]:
    """`migrator export`/`verify` flags that put Mux's playback hosts (stream.mux.com, image.mux.com,
    player.mux.com: Mux's video objects carry playback ids only) on the simulator at `sim_url`."""
    base = f"{sim_url}{media.PREFIX}mux"
    return ["--mux-stream-url", base, "--mux-image-url", base, "--mux-player-url", base]
