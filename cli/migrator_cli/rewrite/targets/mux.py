"""Mux as a rewrite target: player.mux.com's iframe, <mux-player>, stream.mux.com's HLS and MP4, image.mux.com (pure).

Platform facts:
- the iframe `https://player.mux.com/{PLAYBACK_ID}` with its `allow` ("Keep the allow attribute: it lets the player
  autoplay, play DRM-protected video, and use picture-in-picture"), options in the query, boolean ones "on when
  present (?muted or ?muted=true)" (https://www.mux.com/docs/guides/player-mux-com); a signed playback id's token as
  `playback-token` (https://www.mux.com/docs/guides/player-mux-com-reference); `start-time`, the player's attribute
  (https://www.mux.com/docs/changelog/muxelements-mux-video-v020), as a parameter: "In the HTML embed, you can add
  most supported attributes to the URL as query parameters" (Mux Player's metadata guide; start-time itself not
  seen in player.mux.com's parameter table, which the library holds only in part);
- <mux-player playback-id=...> with its script `https://cdn.jsdelivr.net/npm/@mux/mux-player`, attributes autoplay,
  muted, loop, poster (https://mux.com/docs/guides/player-api-reference/html); a signed id's `playback-token`;
- HLS `https://stream.mux.com/{PLAYBACK_ID}.m3u8`, a signed one `?token={TOKEN}`
  (https://mux.com/docs/guides/modify-playback-behavior); the thumbnail on image.mux.com (providers/mux.py);
- MP4: a static rendition `https://stream.mux.com/{PLAYBACK_ID}/highest.mp4`, only where the asset has static
  renditions (https://www.mux.com/docs/api-reference/video/assets/create-asset-static-rendition: `highest.mp4`);
- no DASH, no watch page, no oEmbed URL we could confirm (the reference names an oEmbed without its endpoint).
"""

from __future__ import annotations

from migrator.providers.mux import playback_urls

from .. import markup
from ..model import (
    AUTOPLAY,
    DASH,
    ELEMENT,
    HLS,
    LOOP,
    MP4,
    MUTED,
    POSTER,
    SCRIPT,
    START,
    THUMBNAIL,
    TOKEN_MARKER,
    Destination,
    Embed,
    NoEquivalent,
    Player,
    Rendered,
)
from .common import Params, Target, done, first, kept, none, on, render, responsive, start, text, translate

CITE = "https://www.mux.com/docs/guides/player-mux-com"
ALLOW = "accelerometer; gyroscope; autoplay; encrypted-media; picture-in-picture;"
RESPONSIVE_STYLE = "aspect-ratio: 16/9; width: 100%; border: 0;"  # player-mux-com: "Set aspect-ratio to your video's"
SCRIPT_SRC = "https://cdn.jsdelivr.net/npm/@mux/mux-player"
STATIC_MP4 = "a static rendition: plays only where the asset has static renditions (highest.mp4)"
NAME = "Mux"

_IFRAME_PARAMS = {AUTOPLAY: on("autoplay"), MUTED: on("muted"), LOOP: on("loop"), START: start("start-time")}
_ELEMENT_PARAMS = {**_IFRAME_PARAMS, POSTER: text("poster")}


def _playback_id(destination: Destination) -> str:
    pid = destination.playback_id
    if not pid:
        raise NoEquivalent("Mux has no URL for this video: the map has no playback id")
    return pid


def _documented(destination: Destination) -> dict[str, str]:
    return playback_urls(_playback_id(destination))


def player(destination: Destination, params: Params) -> str:
    if destination.signed:  # a signed row's map holds no URL: Mux's own host, the token marked
        url = _documented(destination)["player"]
        return markup.with_query(url, {**params.query, "playback-token": TOKEN_MARKER})
    url = first(destination.player_url) or _documented(destination)["player"]
    return markup.with_query(url, params.query)


def media(kind: str, destination: Destination) -> tuple[str, tuple[str, ...]]:
    token = {"token": TOKEN_MARKER} if destination.signed else {}
    if kind == HLS:
        url = (not token and destination.hls_url) or _documented(destination)["hls"]
        return markup.with_query(url, token), ()
    if kind == THUMBNAIL:
        url = (not token and destination.thumbnail_url) or _documented(destination)["thumbnail"]
        return markup.with_query(url, token), ()
    if kind == MP4:
        hls = (not token and destination.hls_url) or _documented(destination)["hls"]
        return markup.with_query(hls.removesuffix(".m3u8") + "/highest.mp4", token), (STATIC_MP4,)
    if kind == DASH:
        raise none(NAME, kind, "Mux streams HLS only")
    raise none(NAME, kind, "not a media kind")


def _element(embed: Embed, destination: Destination, params: Params) -> Rendered:
    """<mux-player> with its script, for a script embed or a player element."""
    attributes = {"playback-id": _playback_id(destination)}
    for name, value in params.query.items():
        attributes[name] = "" if value == "true" else value
    if destination.signed:
        attributes["playback-token"] = TOKEN_MARKER
    for name in ("title", "style", "class", "id"):
        if name in embed.attributes:
            attributes[name] = embed.attributes[name]
    if responsive(embed):  # its wrapper is gone with the span: the element sizes itself
        attributes["style"] = RESPONSIVE_STYLE
    element = f"<mux-player{markup.write_attributes(attributes)}></mux-player>"
    dropped = tuple(f"{k}={v}" for k, v in kept(embed).items() if k in ("width", "height", "allow"))
    # A Mux element found alone has its script elsewhere on the page; any other platform's needs Mux's.
    same_script = embed.kind == ELEMENT and embed.platform == "mux"
    script = "" if same_script else f'<script src="{SCRIPT_SRC}"></script>'
    return done(script + element, embed.kind, (*params.dropped, *dropped))


def _params(embed: Embed) -> Params:
    return translate(embed, _ELEMENT_PARAMS if embed.kind in (SCRIPT, ELEMENT) else _IFRAME_PARAMS)


TARGET = Target(
    NAME, player, _params, media, allow=ALLOW, responsive_style=RESPONSIVE_STYLE, script=_element, element=_element
)
PLAYER = Player(
    "mux",
    lambda embed, destination, original: render(TARGET, embed, destination, original),
    CITE,
    options=(AUTOPLAY, MUTED, LOOP, START, POSTER),
)
