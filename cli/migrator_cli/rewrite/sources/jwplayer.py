"""JW Player's embed forms: the cloud-hosted player script and iframe, a player's setup block, and the Delivery API's
media URLs (HLS manifest, MP4 rendition, poster and thumbnail, preview page) (pure).

The id is the media id (8 letters and digits), as the source adapter writes `jwplayer://<media id>`
(functions/migrator/sources/jwplayer.py); the player id (8 letters and digits) is kept as `detail`. Platform facts:
- the Delivery API at cdn.jwplayer.com serves single-line embeds `/players/<media>-<player>.js`, player pages
  `/players/<media>-<player>.html`, HLS manifests `/manifests/<media>.m3u8`, renditions
  `/videos/<media>-<template>.mp4`, posters `/v2/media/<media>/poster.jpg`, thumbnails `/thumbs/<media>-<width>.jpg`
  and preview pages `/previews/<media>-<player>` (docs.jwplayer.com/platform/docs/embed-content-with-the-delivery-api,
  docs.jwplayer.com/platform/reference/get_previews-content-id-player-id); the older host content.jwplatform.com
  serves the same paths (wordpress.org/support/?p=5972341 quotes such an embed); a signed URL carries `exp` and `sig`
  or a JWT `token` (the same Delivery API page, "URL token signing");
- a player set up in the page, `jwplayer("<div>").setup({"playlist": "https://cdn.jwplayer.com/v2/media/<media>", ...})`
  (docs.jwplayer.com/players/reference/common-media-client-data, docs.jwplayer.com/players/docs/jw8-embed-a-player),
  its `autostart`, `mute` and `repeat` read as our options (JW Player's setup configuration, not seen verbatim here);
- the iframe embed of a player page with its responsive wrapper div (docs.jwplayer.com/players/docs/players-get-started,
  not seen verbatim).
"""

from __future__ import annotations

import re

from .. import forms, markup
from ..model import HLS, IFRAME, MP4, PAGE, PLAYER_URL, SCRIPT, THUMBNAIL, Embed, Form

PLATFORM = "jwplayer"
DELIVERY_DOC = "https://docs.jwplayer.com/platform/docs/embed-content-with-the-delivery-api"
EMBED_DOC = "https://docs.jwplayer.com/players/docs/players-get-started"
SETUP_DOC = "https://docs.jwplayer.com/players/reference/common-media-client-data"
PREVIEW_DOC = "https://docs.jwplayer.com/platform/reference/get_previews-content-id-player-id"

_TAIL = r"""(?:[?#][^\s"'<>()\[\]{}\\]*)?"""
_SCHEME = r"(?<![\w.+-])(?:https?:)?//"
_HOST = _SCHEME + r"(?:cdn\.jwplayer\.com|content\.jwplatform\.com)"
_ID = r"[A-Za-z0-9]{8}"
_END = r"(?![\w-]|\.[\w-])"  # no word character or continuing dot after it (a full stop may follow)
_PLAYER_PAGE = _HOST + r"/players/(?P<id>" + _ID + r")-(?P<player>" + _ID + r")\.html" + _END + _TAIL
_SCRIPT = (
    r"<script\b[^>]{0,300}?\bsrc\s*=\s*[\"']"
    + _HOST
    + r"/players/(?P<id>"
    + _ID
    + r")-(?P<player>"
    + _ID
    + r")\.js(?:\?[^\"'<>]{0,2000})?[\"'][^>]{0,300}>\s{0,20}</script\s*>"
)
_IFRAME = (
    r"(?P<wrap><div\b[^>]{0,300}?padding-bottom[^>]{0,300}>\s{0,200})?"
    + r"<iframe\b(?=[^>]{0,2000}?\bsrc\s*=\s*[\"']?"
    + _HOST
    + r"/players/"
    + _ID
    + "-"
    + _ID
    + r"\.html"
    + _END
    + r")[^>]{0,2000}>[^<]{0,500}</iframe\s*>"
    + r"(?(wrap)\s{0,200}</div\s*>)"
)
_HLS = _HOST + r"/manifests/(?P<id>" + _ID + r")\.m3u8" + _END + _TAIL
_MP4 = _HOST + r"/videos/(?P<id>" + _ID + r")(?:-(?P<template>" + _ID + r"))?\.mp4" + _END + _TAIL
_THUMBNAIL = (
    _HOST
    + r"/(?:v2/media/(?P<poster>"
    + _ID
    + r")/poster\.jpg|thumbs/(?P<thumb>"
    + _ID
    + r")(?:-\d{1,5})?\.jpg)"
    + _END
    + _TAIL
)
_PREVIEW = _HOST + r"/previews/(?P<id>" + _ID + r")(?:-(?P<player>" + _ID + r"))?" + _END + _TAIL
# A setup block: `jwplayer("div").setup({ ... "playlist": "<Delivery API media URL>" ... });`, its braces bounded.
# Its body never runs past a `;`, a `<` or the next `jwplayer(`, so no text is scanned twice by two openings.
_SETUP = (
    r"jwplayer\(\s{0,20}[\"'][^\"'<>]{1,200}[\"']\s{0,20}\)\s{0,20}\.setup\(\s{0,20}\{"
    + r"(?P<before>(?:(?!jwplayer\()[^;<]){0,2000}?)[\"']?playlist[\"']?\s{0,20}:\s{0,20}[\"']"
    + _HOST
    + r"/v2/media/(?P<id>"
    + _ID
    + r")"
    + _END
    + r"[^\"']{0,2000}[\"'](?P<after>(?:(?!jwplayer\()[^;<]){0,3000}?)\}\s{0,20}\)\s{0,20};?"
)

_SETUP_OPTIONS = {"autostart": "autoplay", "mute": "muted", "repeat": "loop"}
_SETUP_VALUE = re.compile(r"""["']?(autostart|mute|repeat)["']?\s{0,20}:\s{0,20}(true|false|["'][^"']{0,40}["'])""")


def _signed(url: str) -> bool:
    params = markup.query(url)
    return "sig" in params or "token" in params


def _url_embed(match: re.Match[str], name: str, kind: str, video_id: str, detail: str = "") -> Embed:
    """A Delivery API URL: its query is signing or sizing, never a player option (reported, not mapped)."""
    url = match.group(0)
    unknown = tuple(f"{k}={v}" for k, v in markup.query(url).items() if k not in ("exp", "sig", "token"))
    return Embed(
        start=match.start(),
        end=match.end(),
        form=name,
        platform=PLATFORM,
        kind=kind,
        video_id=video_id,
        unknown=unknown,
        private=_signed(url),
        detail=detail,
    )


def _read_script(match: re.Match[str]) -> Embed | None:
    src = markup.attributes(match.group(0)).get("src", "")
    unknown = tuple(f"{k}={v}" for k, v in markup.query(src).items() if k not in ("exp", "sig", "token"))
    return Embed(
        start=match.start(),
        end=match.end(),
        form="jwplayer.cloud-script",
        platform=PLATFORM,
        kind=SCRIPT,
        video_id=match.group("id"),
        unknown=unknown,
        private=_signed(src),
        detail=match.group("player"),
    )


def _read_iframe(match: re.Match[str]) -> Embed | None:
    tag = match.group(0)[match.group(0).lower().index("<iframe") :]
    attributes = markup.attributes(tag)
    src = attributes.get("src", "")
    found = re.fullmatch(_PLAYER_PAGE, src, re.IGNORECASE)
    if found is None:
        return None
    unknown = tuple(f"{k}={v}" for k, v in markup.query(src).items() if k not in ("exp", "sig", "token"))
    return Embed(
        start=match.start(),
        end=match.end(),
        form="jwplayer.player-iframe",
        platform=PLATFORM,
        kind=IFRAME,
        video_id=found.group("id"),
        unknown=unknown,
        attributes=markup.kept_attributes(attributes),
        private=_signed(src),
        detail=found.group("player"),
    )


def _read_setup(match: re.Match[str]) -> Embed | None:
    options: dict[str, str] = {}
    unknown: list[str] = []
    for name, value in _SETUP_VALUE.findall(match.group("before") + " " + match.group("after")):
        switched = markup.switch(value.strip("\"'"))
        if switched is not None:
            options[_SETUP_OPTIONS[name]] = switched
        else:
            unknown.append(f"{name}={value.strip(chr(34) + chr(39))}")  # e.g. autostart: "viewable"
    return Embed(
        start=match.start(),
        end=match.end(),
        form="jwplayer.setup",
        platform=PLATFORM,
        kind=SCRIPT,
        video_id=match.group("id"),
        options=options,
        unknown=tuple(unknown),
    )


def _read_thumbnail(match: re.Match[str]) -> Embed | None:
    return _url_embed(match, "jwplayer.thumbnail", THUMBNAIL, match.group("poster") or match.group("thumb"))


forms.register(
    Form(
        name="jwplayer.cloud-script",
        platform=PLATFORM,
        kind=SCRIPT,
        pattern=re.compile(_SCRIPT, re.IGNORECASE),
        read=_read_script,
        cite=DELIVERY_DOC,
        sample=lambda media: f'<script src="https://cdn.jwplayer.com/players/{media}-BY292heq.js"></script>',
        hint="/players/",
    ),
    Form(
        name="jwplayer.player-iframe",
        platform=PLATFORM,
        kind=IFRAME,
        pattern=re.compile(_IFRAME, re.IGNORECASE),
        read=_read_iframe,
        cite=EMBED_DOC,
        sample=lambda media: (
            '<div style="position:relative; overflow:hidden; padding-bottom:56.25%">'
            f'<iframe src="https://cdn.jwplayer.com/players/{media}-BY292heq.html" width="100%" height="100%" '
            'frameborder="0" scrolling="auto" title="Our video" style="position:absolute;" allowfullscreen>'
            "</iframe></div>"
        ),
        hint="/players/",
    ),
    Form(
        name="jwplayer.player-url",
        platform=PLATFORM,
        kind=PLAYER_URL,
        pattern=re.compile(_PLAYER_PAGE, re.IGNORECASE),
        read=lambda m: _url_embed(m, "jwplayer.player-url", PLAYER_URL, m.group("id"), m.group("player")),
        cite=DELIVERY_DOC,
        sample=lambda media: f"https://cdn.jwplayer.com/players/{media}-BY292heq.html",
        hint="/players/",
    ),
    Form(
        name="jwplayer.setup",
        platform=PLATFORM,
        kind=SCRIPT,
        pattern=re.compile(_SETUP, re.IGNORECASE),
        read=_read_setup,
        cite=SETUP_DOC,
        sample=lambda media: (
            f'jwplayer("myElement").setup({{\n    "playlist": "https://cdn.jwplayer.com/v2/media/{media}"\n}});'
        ),
        hint=".setup(",
    ),
    Form(
        name="jwplayer.hls",
        platform=PLATFORM,
        kind=HLS,
        pattern=re.compile(_HLS, re.IGNORECASE),
        read=lambda m: _url_embed(m, "jwplayer.hls", HLS, m.group("id")),
        cite=DELIVERY_DOC,
        sample=lambda media: f"https://cdn.jwplayer.com/manifests/{media}.m3u8",
        hint="/manifests/",
    ),
    Form(
        name="jwplayer.mp4",
        platform=PLATFORM,
        kind=MP4,
        pattern=re.compile(_MP4, re.IGNORECASE),
        read=lambda m: _url_embed(m, "jwplayer.mp4", MP4, m.group("id"), m.group("template") or ""),
        cite=DELIVERY_DOC,
        sample=lambda media: f"https://cdn.jwplayer.com/videos/{media}-Zq6530MP.mp4",
        hint="/videos/",
    ),
    Form(
        name="jwplayer.thumbnail",
        platform=PLATFORM,
        kind=THUMBNAIL,
        pattern=re.compile(_THUMBNAIL, re.IGNORECASE),
        read=_read_thumbnail,
        cite=DELIVERY_DOC,
        sample=lambda media: f"https://cdn.jwplayer.com/v2/media/{media}/poster.jpg?width=720",
        hint=".jpg",
    ),
    Form(
        name="jwplayer.preview",
        platform=PLATFORM,
        kind=PAGE,
        pattern=re.compile(_PREVIEW, re.IGNORECASE),
        read=lambda m: _url_embed(m, "jwplayer.preview", PAGE, m.group("id"), m.group("player") or ""),
        cite=PREVIEW_DOC,
        sample=lambda media: f"https://cdn.jwplayer.com/previews/{media}-BY292heq",
        hint="/previews/",
    ),
)
