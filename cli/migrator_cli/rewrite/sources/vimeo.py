"""Vimeo's embed forms: the player iframe and its bare URL, the video's page links and the oEmbed URL (pure).

The id is the numeric video id, as the source adapter writes `vimeo://<id>` (functions/migrator/sources/vimeo.py).
Platform facts:
- the player iframe `https://player.vimeo.com/video/<id>?h=<hash>` with `allow` and `allowfullscreen`, and its embed
  options in the query (github.com/vimeo/player.js README, "Pre-existing player" and "Embed Options"; the `h` hash
  is what an unlisted video needs to play);
- the SDK's embed: a `<div data-vimeo-id="<id>">` (or `data-vimeo-url="<player or page URL>"`) with the embed
  options as `data-vimeo-<option>` attributes, filled by `https://player.vimeo.com/api/player.js` (player.js README,
  "Automatically with HTML attributes");
- the start time as the fragment `#t=<time>` (`30s`, `1m30s`) on a player or page URL: not seen in a Vimeo document
  here, only in third-party code that carries `vimeo.com/<id>/<hash>#t=30s` over to the player URL as `#t=30s`;
- the page URLs `vimeo.com/*`, `vimeo.com/channels/*/*`, `vimeo.com/groups/*/videos/*` and the oEmbed endpoint
  `vimeo.com/api/oembed.<json|xml>?url=<encoded>` (developer.vimeo.com/apis/oembed); showcase and album video pages
  `vimeo.com/showcase/<id>/video/<id>`, `vimeo.com/album/<id>/video/<id>` (not seen verbatim: Vimeo's page URLs).
Not forms: thumbnails on i.vimeocdn.com/video/<image id> name an image, not the video, so no map can say where they
went; a showcase, channel or user page without a video names no video.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from .. import forms, markup
from ..model import IFRAME, OEMBED, PAGE, PLAYER_URL, SCRIPT, Embed, Form

PLATFORM = "vimeo"
PLAYER_DOC = "https://github.com/vimeo/player.js#pre-existing-player"
OEMBED_DOC = "https://developer.vimeo.com/apis/oembed"

# A URL runs to the first character that cannot be in it (an `&amp;` is part of it); an id ends where no word
# character follows, nor a dot that goes on (`/123.html`): a sentence's full stop after it is not part of it.
_TAIL = r"""[^\s"'<>()\[\]{}\\]*"""
_SCHEME = r"(?:https?:)?//"
_PLAYER = _SCHEME + r"player\.vimeo\.com/video/(?P<id>\d+)(?![\w-]|\.[\w-])" + r"(?:[/?#]" + _TAIL + ")?"
_PAGE = (
    _SCHEME
    + r"(?:www\.)?vimeo\.com/(?:"
    + r"(?P<plain>\d+)(?:/(?P<hash>[0-9a-f]{6,20}))?"
    + r"|channels/[\w-]{1,100}/(?P<channel>\d+)"
    + r"|groups/[\w-]{1,100}/videos/(?P<group>\d+)"
    + r"|(?:showcase|album)/\d+/video/(?P<showcase>\d+)"
    + r")/?(?![\w-]|\.[\w-])(?:[?#]"
    + _TAIL
    + ")?"
)
_OEMBED = _SCHEME + r"(?:www\.)?vimeo\.com/api/oembed\.(?:json|xml)\?" + _TAIL
_IFRAME = (
    r"<iframe\b(?=[^>]{0,2000}?\bsrc\s*=\s*[\"']?"
    + _SCHEME
    + r"player\.vimeo\.com/video/\d+(?![\w.-]))[^>]{0,2000}>(?:[^<]{0,500}</iframe\s*>)?"
)

_SDK = (
    r"<div\b(?=[^>]{0,2000}?\bdata-vimeo-(?:id|url)\s*=)[^>]{0,2000}>\s{0,200}</div\s*>"
    + r"(?:\s{0,200}<script\b[^>]{0,300}?\bsrc\s*=\s*[\"']"
    + _SCHEME
    + r"player\.vimeo\.com/api/player\.js[\"'][^>]{0,300}>\s{0,20}</script\s*>)?"
)

# Our words for Vimeo's embed options (player.js "Embed Options"): switches, and the text track as captions.
_SWITCHES = {name: name for name in ("autoplay", "muted", "loop", "controls", "playsinline")}
# Parameters that say which video plays, not how: never options.
_STRUCTURAL = ("h",)


def _options(url: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """The player options a Vimeo URL's query and `#t=` fragment set, and the parameters no target takes."""
    options: dict[str, str] = {}
    unknown: list[str] = []
    for name, value in markup.query(url).items():
        key = name.lower()
        if key in _STRUCTURAL:
            continue
        ours = _SWITCHES.get(key)
        switched = markup.switch(value) if ours else None
        if ours and switched is not None:
            options[ours] = switched
        elif key == "texttrack" and value:
            options["captions"] = value
        else:
            unknown.append(f"{name}={value}")
    fragment = markup.fragment(url)
    if fragment:
        key, _, value = fragment.partition("=")
        start = markup.seconds(value) if key == "t" else None
        if start is not None:
            options["start"] = start
        else:
            unknown.append(f"#{fragment}")
    return options, tuple(unknown)


def _player_embed(match: re.Match[str], url: str, kind: str, name: str, attributes: dict[str, str]) -> Embed | None:
    found = re.fullmatch(_PLAYER, url, re.IGNORECASE)
    if found is None:
        return None
    options, unknown = _options(url)
    secret = markup.query(url).get("h", "")
    return Embed(
        start=match.start(),
        end=match.end(),
        form=name,
        platform=PLATFORM,
        kind=kind,
        video_id=found.group("id"),
        options=options,
        unknown=unknown,
        attributes=attributes,
        private=bool(secret),
        detail=secret,
    )


def _read_iframe(match: re.Match[str]) -> Embed | None:
    attributes = markup.attributes(match.group(0))
    kept = markup.kept_attributes(attributes)
    return _player_embed(match, attributes.get("src", ""), IFRAME, "vimeo.player-iframe", kept)


def _read_player_url(match: re.Match[str]) -> Embed | None:
    return _player_embed(match, match.group(0), PLAYER_URL, "vimeo.player-url", {})


def _page(url: str) -> tuple[str, str] | None:
    """(video id, hash) of a Vimeo page URL, or None when it names no video."""
    found = re.fullmatch(_PAGE, url, re.IGNORECASE)
    if found is None:
        return None
    video = found.group("plain") or found.group("channel") or found.group("group") or found.group("showcase")
    return video, found.group("hash") or ""


def _read_page(match: re.Match[str]) -> Embed | None:
    url = match.group(0)
    page = _page(url)
    if page is None:
        return None
    options, unknown = _options(url)
    return Embed(
        start=match.start(),
        end=match.end(),
        form="vimeo.page-link",
        platform=PLATFORM,
        kind=PAGE,
        video_id=page[0],
        options=options,
        unknown=unknown,
        private=bool(page[1]),
        detail=page[1],
    )


def _read_oembed(match: re.Match[str]) -> Embed | None:
    url = match.group(0)
    params = markup.query(url)
    target = params.get("url", "").strip()  # parse_qsl has decoded it once, as the endpoint does
    parts = urlsplit(target)
    # The oEmbed URL names a page or a player URL; anything else (a user page, another site) is no video.
    base = f"//{parts.netloc}{parts.path}" + (f"#{parts.fragment}" if parts.fragment else "")
    page = _page(base)
    player = re.fullmatch(_PLAYER, f"//{parts.netloc}{parts.path}", re.IGNORECASE)
    if page is not None:
        video, secret = page
    elif player is not None:
        video, secret = player.group("id"), markup.query(target).get("h", "")
    else:
        return None
    options: dict[str, str] = {}
    unknown: list[str] = []
    for name, value in params.items():
        if name == "url":
            continue
        ours = _SWITCHES.get(name.lower())
        switched = markup.switch(value) if ours else None
        if ours and switched is not None:
            options[ours] = switched
        else:
            unknown.append(f"{name}={value}")
    return Embed(
        start=match.start(),
        end=match.end(),
        form="vimeo.oembed",
        platform=PLATFORM,
        kind=OEMBED,
        video_id=video,
        options=options,
        unknown=tuple(unknown),
        private=bool(secret),
        detail=secret,
    )


def _read_sdk(match: re.Match[str]) -> Embed | None:
    """The SDK's div: the video from `data-vimeo-id` or `data-vimeo-url`, the options from `data-vimeo-<option>`."""
    attributes = markup.attributes(match.group(0))
    url = attributes.get("data-vimeo-url", "")
    player = re.fullmatch(_PLAYER, url, re.IGNORECASE) if url else None
    page = _page(url) if url and player is None else None
    secret = markup.query(url).get("h", "") if player else page[1] if page else ""
    video = attributes.get("data-vimeo-id") or (player.group("id") if player else page[0] if page else "")
    if not video.isdigit():
        return None
    options, unknown = _options(url) if url else ({}, ())
    extra: list[str] = []
    for name, value in attributes.items():
        option = name.removeprefix("data-vimeo-")
        if option == name or option in ("id", "url"):
            continue
        ours = _SWITCHES.get(option)
        switched = markup.switch(value) if ours else None
        if ours and switched is not None:
            options[ours] = switched
        elif option == "texttrack" and value:
            options["captions"] = value
        else:
            extra.append(f"{option}={value}")
    return Embed(
        start=match.start(),
        end=match.end(),
        form="vimeo.sdk-embed",
        platform=PLATFORM,
        kind=SCRIPT,
        video_id=video,
        options=options,
        unknown=unknown + tuple(extra),
        attributes={k: v for k, v in attributes.items() if k in ("id", "class", "style", "title")},
        private=bool(secret),
        detail=secret,
    )


def _sample_iframe(video_id: str) -> str:
    return (
        f'<iframe src="https://player.vimeo.com/video/{video_id}?h=8272103f6e" width="640" height="360" '
        'frameborder="0" allowfullscreen allow="autoplay; encrypted-media"></iframe>'
    )


forms.register(
    Form(
        name="vimeo.player-iframe",
        platform=PLATFORM,
        kind=IFRAME,
        pattern=re.compile(_IFRAME, re.IGNORECASE),
        read=_read_iframe,
        cite=PLAYER_DOC,
        sample=_sample_iframe,
        hint="player.vimeo.com",
    ),
    Form(
        name="vimeo.sdk-embed",
        platform=PLATFORM,
        kind=SCRIPT,
        pattern=re.compile(_SDK, re.IGNORECASE),
        read=_read_sdk,
        cite="https://github.com/vimeo/player.js#automatically-with-html-attributes",
        sample=lambda video_id: (
            f'<div data-vimeo-id="{video_id}" data-vimeo-width="640" id="handstick"></div>\n'
            '<script src="https://player.vimeo.com/api/player.js"></script>'
        ),
        hint="data-vimeo-",
    ),
    Form(
        name="vimeo.player-url",
        platform=PLATFORM,
        kind=PLAYER_URL,
        pattern=re.compile(_PLAYER, re.IGNORECASE),
        read=_read_player_url,
        cite=PLAYER_DOC,
        sample=lambda video_id: f"https://player.vimeo.com/video/{video_id}?h=8272103f6e",
        hint="player.vimeo.com",
    ),
    Form(
        name="vimeo.page-link",
        platform=PLATFORM,
        kind=PAGE,
        pattern=re.compile(_PAGE, re.IGNORECASE),
        read=_read_page,
        cite=OEMBED_DOC,
        sample=lambda video_id: f"https://vimeo.com/{video_id}",
        hint="vimeo.com",
    ),
    Form(
        name="vimeo.oembed",
        platform=PLATFORM,
        kind=OEMBED,
        pattern=re.compile(_OEMBED, re.IGNORECASE),
        read=_read_oembed,
        cite=OEMBED_DOC,
        sample=lambda video_id: f"https://vimeo.com/api/oembed.json?url=https%3A%2F%2Fvimeo.com%2F{video_id}",
        hint="vimeo.com/api/oembed",
    ),
)
