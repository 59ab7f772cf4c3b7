"""api.video's delivery host (vod.api.video) as it serves a private video: private tokens and session tokens.

What docs.api.video says, and what this module does with it:
- "A private video is a video object secured by a private token and can be consumed only once";
  "Private videos will generate a new private token each time a request is made for that video id"
  (docs.api.video, "Get started with private videos"): every read of a private video renders a fresh
  token, and the first request that uses it spends it.
- A private video's links carry the token in the path, `/vod/{videoId}/token/{privateToken}/hls/manifest.m3u8`
  ("the HLS manifest has the token in the url path"), the embed's as a query string, `?token=`
  (docs.api.video, "Video privacy access management").
- "GET https://vod.api.video/vod/{video_id}/token/{private_token}/session" answers
  `{"session_token": "..."}`; the session token "is then added to the query string ... as avh parameter",
  `.../token/{private token}/thumbnail.jpg?avh={session token}`, on every later request; "The session token TTL
  is 24 hours. Once the session token has expired, you will have to get a new private token and create a new
  session" (docs.api.video, "Private video session tokens").
- Two requests with one private token and no session: "it will not work, you will get a 404 error"
  (docs.api.video, "Private videos with custom players: session retention"). Every refusal here is a 404.

Tokens are derived (an HMAC over the video id and a nonce), so a forged one is refused without a lookup;
what is remembered is the set of tokens spent. A session token names its expiry and is an HMAC over the
video, the private token and that expiry. The simulator's knob `link_ttl_s` shortens the 24 hours.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
import urllib.parse
from dataclasses import dataclass

SESSION_TTL_S = 86_400.0  # "The session token TTL is 24 hours."
REFUSED = b"Not Found\n"


def session_ttl(link_ttl_s: float) -> float:
    return link_ttl_s if link_ttl_s > 0 else SESSION_TTL_S


def _mac(secret: bytes, *parts: str) -> str:
    return hmac.new(secret, "|".join(parts).encode(), hashlib.sha256).hexdigest()


def private_token(secret: bytes, video_id: str) -> str:
    """A fresh private token for `video_id`, shaped as api.video's (a UUID: `4dfe3225-55b1-4cf3-9671-...`)."""
    nonce = secrets.token_hex(8)
    raw = nonce + _mac(secret, "private", video_id, nonce)[:16]
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:32]}"


def _token_valid(secret: bytes, video_id: str, token: str) -> bool:
    raw = token.replace("-", "")
    if len(raw) != 32 or len(token) != 36:
        return False
    return hmac.compare_digest(raw[16:], _mac(secret, "private", video_id, raw[:16])[:16])


def _session_token(secret: bytes, video_id: str, token: str, expires: int) -> str:
    return f"{expires}-{_mac(secret, 'session', video_id, token, str(expires))[:24]}"


def _session_valid(secret: bytes, video_id: str, token: str, avh: str, now: float) -> bool:
    expires, _, _ = avh.partition("-")
    if not expires.isdigit() or int(expires) < now:
        return False
    return hmac.compare_digest(avh, _session_token(secret, video_id, token, int(expires)))


@dataclass(frozen=True)
class Admitted:
    """What the delivery host does with one request for a private video: serve `rest` (the path after the
    token), answer `session` (a new session's body), or refuse (neither)."""

    rest: list[str] | None = None
    session: bytes | None = None

    @property
    def refused(self) -> bool:
        return self.rest is None and self.session is None


def admit(
    secret: bytes, spent: set[str], video_id: str, token: str, rest: list[str], query: str, ttl_s: float
) -> Admitted:
    """One request for `video_id` under the private `token`, then `rest` (`["session"]`, or a file's path).
    `spent`: the tokens used already (the caller holds the lock that guards it)."""
    if not _token_valid(secret, video_id, token):
        return Admitted()  # forged, or another video's
    avh = urllib.parse.parse_qs(query).get("avh", [""])[0]
    if rest == ["session"]:
        if token in spent:
            return Admitted()
        spent.add(token)
        session = _session_token(secret, video_id, token, int(time.time() + ttl_s))
        return Admitted(session=json.dumps({"session_token": session}).encode())
    if avh:
        return Admitted(rest=rest) if _session_valid(secret, video_id, token, avh, time.time()) else Admitted()
    if token in spent:
        return Admitted()  # the one request the token was good for is made
    spent.add(token)
    return Admitted(rest=rest)
