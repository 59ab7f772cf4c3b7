"""Brightcove's embed forms: the player iframe (alone or in Studio's responsive divs) and its bare URL, and the in-page
embed (`<video-js>` or the older `<video class="video-js">` with the player's `index.min.js`) (pure).

The id is the video id, as the source adapter writes `brightcove://<video id>` (functions/migrator/sources/
brightcove.py); the account and player (`<account>/<player>_<embed>`) are kept as `detail`. Platform facts:
- a player lives at `players.brightcove.net/<account>/<player>_<embed>/index.html` (its config beside it,
  player.support.brightcove.com/references/player-configuration-guide.html); the iframe embed names the video as
  `?videoId=<id>`, and Studio's responsive iframe embed wraps it in two divs (quoted from Studio in
  gist.github.com/vladimyr/7927ec068a5564577dd76606eec4c011); the embed dialog offers autoplay and mute, iframe or
  JavaScript (in-page) embed, responsive or fixed (apis.support.brightcove.com/player-management/guides/
  embedding-brightcove-players-cms.html);
- the in-page embed `<video-js data-account data-player data-embed data-video-id ... class="vjs-fluid"></video-js>`
  followed by `<script src=".../index.min.js">` (as Studio writes it; not seen verbatim in a Brightcove document here);
  player ids are a GUID, a short id or "default" (amp-brightcove's documentation).
A video named by its reference id (`videoId=ref:<id>`, `data-video-id="ref:<id>"`) is found with the video id
"ref:<id>": the map keys videos by their Brightcove id, so such an embed cannot be mapped, but it is listed in the
report rather than passed over in silence.
"""

from __future__ import annotations

import re

from .. import forms, markup
from ..model import IFRAME, PLAYER_URL, SCRIPT, Embed, Form

PLATFORM = "brightcove"
EMBED_DOC = "https://apis.support.brightcove.com/player-management/guides/embedding-brightcove-players-cms.html"
PLAYER_DOC = "https://player.support.brightcove.com/references/player-configuration-guide.html"

_TAIL = r"""(?:[?#][^\s"'<>()\[\]{}\\]*)?"""
_SCHEME = r"(?<![\w.+-])(?:https?:)?//"
_PLAYER_PATH = (
    _SCHEME + r"players\.brightcove\.net/(?P<account>\d{1,20})/(?P<player>[\w-]{1,64})_(?P<embed>[\w-]{1,64})"
)
_PLAYER_URL = _PLAYER_PATH + r"/index\.html(?![\w.-])" + _TAIL
_IFRAME = (
    r"(?P<wrap><div\b[^>]{0,300}>\s{0,200}<div\b[^>]{0,300}?padding-top[^>]{0,300}>\s{0,200})?"
    + r"<iframe\b(?=[^>]{0,2000}?\bsrc\s*=\s*[\"']?"
    + _SCHEME
    + r"players\.brightcove\.net/\d{1,20}/[\w-]{1,64}/index\.html)[^>]{0,2000}>[^<]{0,500}</iframe\s*>"
    + r"(?(wrap)\s{0,200}</div\s*>\s{0,200}</div\s*>)"
)
_IN_PAGE = (
    r"(?P<wrap><div\b[^>]{0,300}?max-width[^>]{0,300}>\s{0,200})?"
    + r"<(?P<tag>video-js|video)\b(?=[^>]{0,3000}?\bdata-account\s*=)[^>]{0,3000}>\s{0,200}</(?P=tag)\s*>"
    + r"(?(wrap)\s{0,200}</div\s*>)"
    + r"(?:\s{0,200}<script\b[^>]{0,300}?\bsrc\s*=\s*[\"']"
    + _SCHEME
    + r"players\.brightcove\.net/\d{1,20}/[\w-]{1,64}/index(?:\.min)?\.js[\"'][^>]{0,300}>\s{0,20}</script\s*>)?"
)
_VIDEO_ID = re.compile(r"\d{1,20}|ref:[^\s\"'<>&]{1,150}")
# Our words for the player's switches (the embed dialog's autoplay and mute; the element's media attributes).
_SWITCHES = {"autoplay": "autoplay", "muted": "muted", "loop": "loop", "playsinline": "playsinline"}
_STRUCTURAL = ("videoid",)
# The in-page element's own media attributes that say how it plays (the data-* ones say what plays).
_MEDIA_ATTRIBUTES = ("autoplay", "muted", "loop", "playsinline", "controls", "poster")


def _video_id(value: str | None) -> str | None:
    """A Brightcove id, or `ref:<reference id>` (kept so the report can list it: the map cannot know it)."""
    return value if value is not None and _VIDEO_ID.fullmatch(value) else None


def _options(pairs: list[tuple[str, str]]) -> tuple[dict[str, str], tuple[str, ...]]:
    options: dict[str, str] = {}
    unknown: list[str] = []
    for name, value in pairs:
        key = name.lower()
        ours = _SWITCHES.get(key)
        switched = markup.switch(value) if ours else None
        if ours and switched is not None:
            options[ours] = switched
            if key == "autoplay" and value.lower() == "muted":  # Brightcove's autoplay=muted plays muted
                options["muted"] = "1"
        elif key == "controls" and markup.switch(value) is not None:
            options["controls"] = markup.switch(value) or ""
        elif key == "poster" and value:
            options["poster"] = value
        elif key not in _STRUCTURAL:
            unknown.append(f"{name}={value}")
    return options, tuple(unknown)


def _player_embed(match: re.Match[str], url: str, name: str, kind: str, attributes: dict[str, str]) -> Embed | None:
    found = re.fullmatch(_PLAYER_URL, url, re.IGNORECASE)
    if found is None:
        return None
    params = markup.query(url)
    video_id = _video_id(params.get("videoId"))
    if video_id is None:  # a playlist player, or no video named
        return None
    options, unknown = _options(list(params.items()))
    return Embed(
        start=match.start(),
        end=match.end(),
        form=name,
        platform=PLATFORM,
        kind=kind,
        video_id=video_id,
        options=options,
        unknown=unknown,
        attributes=attributes,
        detail=f"{found.group('account')}/{found.group('player')}_{found.group('embed')}",
    )


def _read_iframe(match: re.Match[str]) -> Embed | None:
    tag = match.group(0)[match.group(0).lower().index("<iframe") :]
    attributes = markup.attributes(tag)
    kept = markup.kept_attributes(attributes)
    return _player_embed(match, attributes.get("src", ""), "brightcove.player-iframe", IFRAME, kept)


def _read_player_url(match: re.Match[str]) -> Embed | None:
    return _player_embed(match, match.group(0), "brightcove.player-url", PLAYER_URL, {})


def _read_in_page(match: re.Match[str]) -> Embed | None:
    text = match.group(0)
    element = markup.attributes(text[match.start("tag") - 1 - match.start() :])
    video_id = _video_id(element.get("data-video-id"))
    account = element.get("data-account", "")
    if video_id is None or not account.isdigit():
        return None
    if match.group("tag").lower() == "video" and "video-js" not in element.get("class", "").split():
        return None  # a plain <video> with a data-account is not Brightcove's
    player = element.get("data-player") or element.get("data-player-id") or "default"
    media = [
        (k, v) for k, v in element.items() if k in ("autoplay", "muted", "loop", "playsinline", "controls", "poster")
    ]
    options, unknown = _options(media)
    return Embed(
        start=match.start(),
        end=match.end(),
        form="brightcove.in-page",
        platform=PLATFORM,
        kind=SCRIPT,
        video_id=video_id,
        options=options,
        unknown=unknown,
        attributes={k: v for k, v in element.items() if k in ("class", "id", "style", "title")},
        detail=f"{account}/{player}_{element.get('data-embed') or 'default'}",
    )


def _sample_iframe(video_id: str) -> str:
    return (
        '<div style="position: relative; display: block; max-width: 960px;"><div style="padding-top: 56.25%;">'
        f'<iframe src="https://players.brightcove.net/6175969021001/SrrwvPcsoN_default/index.html?videoId={video_id}" '
        'allowfullscreen="" allow="encrypted-media" style="position: absolute; top: 0px; right: 0px; bottom: 0px; '
        'left: 0px; width: 100%; height: 100%;"></iframe></div></div>'
    )


def _sample_in_page(video_id: str) -> str:
    return (
        '<video-js data-account="1589608515001" data-player="HyJPGnaE" data-embed="default" controls="" '
        f'data-video-id="{video_id}" data-playlist-id="" data-application-id="" class="vjs-fluid"></video-js>'
        '<script src="https://players.brightcove.net/1589608515001/HyJPGnaE_default/index.min.js"></script>'
    )


forms.register(
    Form(
        name="brightcove.player-iframe",
        platform=PLATFORM,
        kind=IFRAME,
        pattern=re.compile(_IFRAME, re.IGNORECASE),
        read=_read_iframe,
        cite=EMBED_DOC,
        sample=_sample_iframe,
        hint="players.brightcove.net",
    ),
    Form(
        name="brightcove.player-url",
        platform=PLATFORM,
        kind=PLAYER_URL,
        pattern=re.compile(_PLAYER_URL, re.IGNORECASE),
        read=_read_player_url,
        cite=PLAYER_DOC,
        sample=lambda video_id: (
            f"https://players.brightcove.net/1507807800001/HJyMlHiuZ_default/index.html?videoId={video_id}"
        ),
        hint="players.brightcove.net",
    ),
    Form(
        name="brightcove.in-page",
        platform=PLATFORM,
        kind=SCRIPT,
        pattern=re.compile(_IN_PAGE, re.IGNORECASE),
        read=_read_in_page,
        cite=EMBED_DOC,
        sample=_sample_in_page,
        hint="data-account",
    ),
)
