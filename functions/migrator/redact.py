"""What we keep of a provider's text: credentials out of echoed URLs, terminal controls out of all of it.

A provider that cannot fetch a source often echoes the URL it was given, and for an
s3:// source that URL is presigned: its query string is a bearer credential until it
expires. It may come back as given, or percent-encoded (once or more, whole or only its
query) when the provider quotes it inside a parameter of its own. Anything the provider
says goes through `redact_credentials` before it reaches the ledger (`last_error`, the
index, the report) or a log line; the rest of the message (host, path, the provider's
reason) is kept, since that is what an operator needs to act on.

The same text is printed on the operator's terminal by `migrator report` and `status`, so
`strip_controls` takes out what a terminal would act on rather than print: escape
sequences (colours, cursor moves, OSC 8 links, window titles), the other C0 and C1
controls, and the bidirectional overrides that make text read other than it is stored.
"""

from __future__ import annotations

import re

REDACTED = "REDACTED"

# Query parameters that carry a credential in the URL schemes providers echo back:
# AWS SigV4 (X-Amz-*) and SigV2 (AWSAccessKeyId, Signature), STS session tokens, CloudFront
# signed URLs (Policy, Key-Pair-Id), Google Cloud Storage (X-Goog-*), Azure SAS (sig), the
# source platforms' link signatures (Vimeo's `s`, api.video's session token `avh`), and the
# generic token/access_token/api_key names.
_SECRET_PARAMS = (
    "x-amz-signature|x-amz-credential|x-amz-security-token|awsaccesskeyid|signature|security-token"
    "|policy|key-pair-id|x-goog-signature|x-goog-credential|sig|token|access_token|api_key|apikey|key"
    "|s|avh|ks"
)


def _encoded(hex_code: str) -> str:
    """A character percent-encoded once or more: %3D, %253D, %25253D..."""
    return f"%(?:25)*{hex_code}"


# What starts a parameter: ?, & or ; as they are, as their JSON escape \u0026, or percent-encoded.
_LEAD = rf"(?P<lead>[?&;]|\\u0026|{_encoded('(?:3F|26|3B)')})"
# `name=value`: the value runs to the next separator as it is.
_PARAM = re.compile(rf"{_LEAD}(?P<name>{_SECRET_PARAMS})(?P<eq>=)(?P<value>[^&;\s\"'<>\\]*)", re.IGNORECASE)
# `name%3Dvalue` (a query encoded once or more): the value runs to a separator, encoded or not.
_ENCODED_PARAM = re.compile(
    rf"{_LEAD}(?P<name>{_SECRET_PARAMS})(?P<eq>{_encoded('3D')})"
    rf"(?P<value>(?:(?!{_encoded('(?:26|3B)')})[^&;\s\"'<>\\])*)",
    re.IGNORECASE,
)
# user:password@ in a URL's authority, as it is or percent-encoded.
_USERINFO = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)[^/\s@\"'<>]+@", re.IGNORECASE)
_ENCODED_USERINFO = re.compile(
    rf"(?P<scheme>\b[a-z][a-z0-9+.-]*{_encoded('3A')}{_encoded('2F')}{_encoded('2F')})"
    rf"(?:(?!{_encoded('(?:2F|40)')})[^/\s@\"'<>])+(?P<at>{_encoded('40')})",
    re.IGNORECASE,
)

# Credentials a source platform mints into a link's path rather than its query:
# - an Akamai token segment, as Vimeo's CDN links carry (`/exp=1700000000~acl=%2F*~hmac=3f9a.../`):
#   the hmac value is the credential (its `~` may come percent-encoded as %7E);
# - api.video's private-video token (`https://vod.api.video/vod/{id}/token/{token}/mp4/source.mp4`);
# - a JSON Web Token anywhere (Cloudflare Stream's signed links put one where the video id goes,
#   Mux's signed playback passes one as `token=`): three base64url parts, the first `eyJ`.
_HMAC_SEGMENT = re.compile(rf"(?P<lead>~|{_encoded('7E')})hmac(?P<eq>=|{_encoded('3D')})[^/?#&;\s\"'<>~%]+", re.I)
_PATH_TOKEN = re.compile(rf"(?P<lead>/|{_encoded('2F')})token(?P<sep>/|{_encoded('2F')})[^/?#&;\s\"'<>%]+")
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}")
# Kaltura's KS as a path segment, `/ks/<KS>/` (flavorAsset.getUrl's download URLs and the documented playManifest
# form `.../playManifest/entryId/{id}/.../ks/{ks}/video.{ext}`): a session of that entry's download privileges.
_KALTURA_KS = re.compile(rf"(?P<lead>/|{_encoded('2F')})ks(?P<sep>/|{_encoded('2F')})[^/?#&;\s\"'<>%]+")
# Dropbox's temporary links carry their credential as a path segment: `https://uc….dl.dropboxusercontent.com/cd/0/
# get/<token>/file` (files/get_temporary_link's answers), and `https://dl.dropboxusercontent.com/apitl/1/<token>`
# (the HTTP documentation's example).
_SLASH = rf"(?:/|{_encoded('2F')})"
_DROPBOX_LINK = re.compile(rf"(?P<lead>{_SLASH}(?:cd{_SLASH}\d+{_SLASH}get|apitl{_SLASH}\d+){_SLASH})[^/?#&;\s\"'<>%]+")

# Punctuation that ends a sentence after a URL ("... failed: https://h/a?sig=x: 403").
_TRAILING = re.compile(r"[:,.)\]]+$")


def _param(match: re.Match) -> str:
    value = match["value"]
    if not value:
        return match[0]
    tail = _TRAILING.search(value)
    return f"{match['lead']}{match['name']}{match['eq']}{REDACTED}{tail[0] if tail else ''}"


def redact_credentials(text: str) -> str:
    """`text` with every credential-bearing query value, path token and URL password replaced by
    REDACTED, whether the URL is written out or percent-encoded."""
    if not text:
        return text
    text = _JWT.sub(REDACTED, text)
    text = _HMAC_SEGMENT.sub(lambda m: f"{m['lead']}hmac{m['eq']}{REDACTED}", text)
    text = _PATH_TOKEN.sub(lambda m: f"{m['lead']}token{m['sep']}{REDACTED}", text)
    text = _KALTURA_KS.sub(lambda m: f"{m['lead']}ks{m['sep']}{REDACTED}", text)
    text = _DROPBOX_LINK.sub(lambda m: f"{m['lead']}{REDACTED}", text)
    text = _PARAM.sub(_param, text)
    text = _ENCODED_PARAM.sub(_param, text)
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{REDACTED}@", text)
    return _ENCODED_USERINFO.sub(lambda m: f"{m['scheme']}{REDACTED}{m['at']}", text)


# ECMA-48 sequences a terminal acts on: CSI (ESC [ ... final byte), the strings OSC, DCS, SOS,
# PM and APC (ESC ] P X ^ _ ... up to BEL or ESC \, or to the end when unterminated), and the
# two- and three-byte escapes (ESC and an intermediate or final byte).
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[ -/]*[0-~]?"
)
# What is left to take out: C0 controls but the whitespace ones (which `excerpt` turns into
# spaces), DEL, C1 controls, and the bidirectional marks, embeddings, overrides and isolates.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def strip_controls(text: str) -> str:
    """`text` without anything a terminal would act on instead of print (escape sequences,
    control characters, bidi overrides); printable text of any script is kept."""
    if not text:
        return text
    return _CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text))
