"""Cloudflare Stream's embed forms: the Stream Player iframe and its URL, the HLS and DASH manifests, thumbnails, the
MP4 download and the watch page, on videodelivery.net or a customer-<code>.cloudflarestream.com subdomain, and the
legacy <stream> element with its embed script (pure; registered at import).

`video_id` is the video's uid (32 hex), as the Cloudflare source names a video. Documents:
- https://developers.cloudflare.com/stream/viewing-videos/using-the-stream-player/ (the iframe
  `https://customer-<CODE>.cloudflarestream.com/<VIDEO_UID>/iframe`, "the video UID (or signed token)"; its
  parameters autoplay, muted, loop, preload, controls, poster, startTime, defaultTextTrack, primaryColor,
  letterboxColor, adUrl: the first ones read as ours, the rest reported as unknown);
- https://developers.cloudflare.com/stream/viewing-videos/using-own-player/ (`/manifest/video.m3u8`,
  `/manifest/video.mpd`), .../displaying-thumbnails/ (`/thumbnails/thumbnail.jpg?time=1s&height=270`, and the
  animated `thumbnail.gif`), .../download-videos/ (`/downloads/default.mp4`);
- https://developers.cloudflare.com/stream/viewing-videos/securing-your-stream/ (a signed token "in place of the
  video id"; `/watch`). The older host iframe.videodelivery.net/<uid> and videodelivery.net/<uid>/... are the
  same paths without the customer subdomain;
- the legacy embed `<stream src="<uid>" controls></stream>` with
  `<script ... src="https://embed.cloudflarestream.com/embed/sdk.latest.js">` (the API's deprecated "Retrieve
  legacy embed code HTML", https://developers.cloudflare.com/api/resources/stream/subresources/embed/; the exact
  HTML not seen verbatim).
A signed token stands where the uid goes: a JWT whose payload's `sub` is the uid (Cloudflare's "Signed URLs /
Tokens"). The payload is read *unverified*, only to name the video for the map: nothing is granted by it, and a
token whose `sub` is not a well-formed uid (or that does not decode) names nothing, so the embed is left alone.
Such an embed is private, and the customer code travels in `detail` ("customer-<code>") for a Cloudflare target.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import replace

from .. import forms, markup
from ..model import (
    AUTOPLAY,
    CAPTIONS,
    CONTROLS,
    DASH,
    ELEMENT,
    HLS,
    IFRAME,
    LOOP,
    MP4,
    MUTED,
    PAGE,
    PLAYER_URL,
    POSTER,
    SCRIPT,
    START,
    THUMBNAIL,
    Embed,
    Form,
)
from ._pieces import SCHEME, URL_SCHEME, iframe_pattern, params_of, read_params, url_pattern

PLATFORM = "cloudflare"
UID = r"[0-9a-fA-F]{32}"
_UID = re.compile(UID + r"\Z")
TOKEN = r"[A-Za-z0-9_-]{8,2000}\.[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{8,2000}"
VIDEO = r"(?P<id>" + UID + r"(?![\w.-])|" + TOKEN + r")"
CUSTOMER = r"(?i:(?P<host>customer-(?P<code>[a-z0-9]{1,64})\.cloudflarestream\.com|videodelivery\.net))"
ON_HOST = SCHEME + CUSTOMER + r"/" + VIDEO
# The player: iframe.videodelivery.net/<uid>, or <uid>/iframe on a Stream host (the `/iframe` only there).
IFRAME_HOST = SCHEME + r"(?:(?i:iframe\.videodelivery\.net)|" + CUSTOMER + r")/" + VIDEO + r"(?(host)/iframe)"
OPTIONS = {
    "autoplay": AUTOPLAY,
    "muted": MUTED,
    "loop": LOOP,
    "controls": CONTROLS,
    "poster": POSTER,
    "startTime": START,
    "defaultTextTrack": CAPTIONS,
}

PLAYER_DOC = "https://developers.cloudflare.com/stream/viewing-videos/using-the-stream-player/"
OWN_PLAYER_DOC = "https://developers.cloudflare.com/stream/viewing-videos/using-own-player/"
THUMBNAIL_DOC = "https://developers.cloudflare.com/stream/viewing-videos/displaying-thumbnails/"
DOWNLOAD_DOC = "https://developers.cloudflare.com/stream/viewing-videos/download-videos/"
SECURE_DOC = "https://developers.cloudflare.com/stream/viewing-videos/securing-your-stream/"
LEGACY_DOC = "https://developers.cloudflare.com/api/resources/stream/subresources/embed/"
SAMPLE_HOST = "https://customer-f33zs165nr7gyfy4.cloudflarestream.com"


def uid_of(named: str) -> tuple[str, bool] | None:
    """The uid a path names and whether it was a signed token; None when a token's `sub` is no uid."""
    if _UID.match(named):
        return named.lower(), False
    try:
        payload = named.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError, binascii.Error, UnicodeDecodeError):
        return None
    sub = claims.get("sub") if isinstance(claims, dict) else None
    return (sub.lower(), True) if isinstance(sub, str) and _UID.match(sub) else None


def _embed(match: re.Match[str], form: str, kind: str, params: dict[str, str], detail: str = "") -> Embed | None:
    named = uid_of(match.group("id"))
    if named is None:
        return None
    options, unknown = read_params(params, OPTIONS if kind in (IFRAME, PLAYER_URL, ELEMENT, SCRIPT) else {})
    groups = match.groupdict()
    code = f"customer-{groups['code'].lower()}" if groups.get("code") else ""
    return Embed(
        match.start(),
        match.end(),
        form,
        PLATFORM,
        kind,
        named[0],
        options=options,
        unknown=unknown,
        private=named[1],
        detail=detail or code,
    )


def _reader(form: str, kind: str):
    def read(match: re.Match[str]) -> Embed | None:
        return _embed(match, form, kind, params_of(match.group("src")))

    return read


def _read_iframe(match: re.Match[str]) -> Embed | None:
    embed = _embed(match, "cloudflare.player-iframe", IFRAME, params_of(match.group("src")))
    return (
        None if embed is None else replace(embed, attributes=markup.kept_attributes(markup.attributes(match.group(0))))
    )


# The legacy element: <stream src="<uid>" ...></stream>, alone or before its embed script.
STREAM_ELEMENT = r"<stream(?![\w:-])(?P<attrs>[^>]{0,2000})>[^<]{0,200}</stream\s*>"
LEGACY_SCRIPT = (
    r"\s*<script\b[^>]{0,500}?(?<![\w-])src\s*=\s*[\"']?" + URL_SCHEME
    + r"(?i:embed\.(?:cloudflarestream\.com|videodelivery\.net))/embed/[\w.-]{1,60}\.js(?:\?[^\s\"'<>]{0,200})?"
    r"[\"']?[^>]{0,500}>\s*</script\s*>"
)  # fmt: skip


def _read_element(form: str, kind: str):
    def read(match: re.Match[str]) -> Embed | None:
        attrs = markup.attributes("<x " + match.group("attrs") + ">")
        named = uid_of(attrs.get("src", ""))
        if named is None:
            return None
        rest = {k: v for k, v in attrs.items() if k not in markup.KEPT_ATTRIBUTES and k != "src"}
        options, unknown = read_params(rest, {**OPTIONS, "start-time": START, "current-time": START})
        return Embed(
            match.start(),
            match.end(),
            form,
            PLATFORM,
            kind,
            named[0],
            options=options,
            unknown=unknown,
            attributes=markup.kept_attributes(attrs),
            private=named[1],
        )

    return read


def _legacy(uid: str) -> str:
    return f'<stream src="{uid}" controls></stream>'


LEGACY_SCRIPT_SAMPLE = (
    '<script data-cfasync="false" defer type="text/javascript" '
    'src="https://embed.cloudflarestream.com/embed/sdk.latest.js"></script>'
)

forms.register(
    Form(
        "cloudflare.player-iframe",
        PLATFORM,
        IFRAME,
        iframe_pattern(IFRAME_HOST),
        _read_iframe,
        PLAYER_DOC,
        lambda uid: (
            f'<iframe\n  src="{SAMPLE_HOST}/{uid}/iframe"\n  style="border: none"\n  height="720"\n  width="1280"\n'
            '  allow="accelerometer; gyroscope; autoplay; encrypted-media; picture-in-picture;"\n'
            '  allowfullscreen="true"\n></iframe>'
        ),
        "<iframe",
    ),
    Form(
        "cloudflare.player-url",
        PLATFORM,
        PLAYER_URL,
        url_pattern(IFRAME_HOST),
        _reader("cloudflare.player-url", PLAYER_URL),
        PLAYER_DOC,
        lambda uid: f"{SAMPLE_HOST}/{uid}/iframe?autoplay=true&muted=true",
        "",  # on iframe.videodelivery.net or a customer's host: no one literal
    ),
    Form(
        "cloudflare.hls",
        PLATFORM,
        HLS,
        url_pattern(ON_HOST + r"/manifest/video\.m3u8"),
        _reader("cloudflare.hls", HLS),
        OWN_PLAYER_DOC,
        lambda uid: f"{SAMPLE_HOST}/{uid}/manifest/video.m3u8",
        "/manifest/video.m3u8",
    ),
    Form(
        "cloudflare.dash",
        PLATFORM,
        DASH,
        url_pattern(ON_HOST + r"/manifest/video\.mpd"),
        _reader("cloudflare.dash", DASH),
        OWN_PLAYER_DOC,
        lambda uid: f"{SAMPLE_HOST}/{uid}/manifest/video.mpd",
        "/manifest/video.mpd",
    ),
    Form(
        "cloudflare.thumbnail",
        PLATFORM,
        THUMBNAIL,
        url_pattern(ON_HOST + r"/thumbnails/thumbnail\.(?:jpg|gif)"),
        _reader("cloudflare.thumbnail", THUMBNAIL),
        THUMBNAIL_DOC,
        lambda uid: f"{SAMPLE_HOST}/{uid}/thumbnails/thumbnail.jpg?time=1s&height=270",
        "/thumbnails/thumbnail.",
    ),
    Form(
        "cloudflare.download",
        PLATFORM,
        MP4,
        url_pattern(ON_HOST + r"/downloads/default\.mp4"),
        _reader("cloudflare.download", MP4),
        DOWNLOAD_DOC,
        lambda uid: f"{SAMPLE_HOST}/{uid}/downloads/default.mp4",
        "/downloads/default.mp4",
    ),
    Form(
        "cloudflare.watch-page",
        PLATFORM,
        PAGE,
        url_pattern(ON_HOST + r"/watch"),
        _reader("cloudflare.watch-page", PAGE),
        SECURE_DOC,
        lambda uid: f"{SAMPLE_HOST}/{uid}/watch",
        "/watch",
    ),
    Form(
        "cloudflare.stream-element",
        PLATFORM,
        ELEMENT,
        re.compile(STREAM_ELEMENT, re.IGNORECASE),
        _read_element("cloudflare.stream-element", ELEMENT),
        LEGACY_DOC,
        _legacy,
        "<stream",
    ),
    Form(
        "cloudflare.stream-script",
        PLATFORM,
        SCRIPT,
        re.compile(STREAM_ELEMENT + LEGACY_SCRIPT, re.IGNORECASE),
        _read_element("cloudflare.stream-script", SCRIPT),
        LEGACY_DOC,
        lambda uid: _legacy(uid) + "\n" + LEGACY_SCRIPT_SAMPLE,
        "<stream",
    ),
)
