"""Vimeo as a rewrite target: the player iframe on player.vimeo.com, the video's page, its oEmbed URL (pure).

Platform facts:
- the player `https://player.vimeo.com/video/{id}` (`?h=<hash>` for an unlisted video), options in the query:
  autoplay, muted, loop, controls, playsinline, texttrack (github.com/vimeo/player.js "Embed Options"); the start as
  `#t=<seconds>s` (help.vimeo.com, as rewrite/sources/vimeo.py reads it; not seen verbatim);
- the page `https://vimeo.com/{id}` (`/{hash}` when unlisted): the video's `link`, the map's player URL
  (providers/vimeo.py `read_playback`); the oEmbed endpoint `https://vimeo.com/api/oembed.json?url=<page>`
  (https://developer.vimeo.com/apis/oembed);
- no stable HLS, DASH or MP4 URL (the API's play links expire), and no token: a video that is not public plays for
  the account alone ("Vimeo signs no playback URL", providers/vimeo.py).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .. import markup
from ..model import (
    AUTOPLAY,
    CAPTIONS,
    CONTROLS,
    LOOP,
    MUTED,
    PLAYSINLINE,
    START,
    THUMBNAIL,
    Destination,
    Embed,
    NoEquivalent,
    Player,
)
from .common import Params, Target, first, none, off, on, render, segment, start, switch, text, translate, with_params

CITE = "https://github.com/vimeo/player.js#embed-options"
NAME = "Vimeo"
PLAYER_HOST = "https://player.vimeo.com/video"
PAGE_HOST = "https://vimeo.com"
OEMBED = "https://vimeo.com/api/oembed.json"

_QUERY = {
    AUTOPLAY: on("autoplay", "1"),
    MUTED: on("muted", "1"),
    LOOP: on("loop", "1"),
    CONTROLS: off("controls", "0"),
    PLAYSINLINE: switch("playsinline"),
    CAPTIONS: text("texttrack"),
}
_HASH = {START: start("t", "s")}


def _usable(destination: Destination) -> tuple[str, str | None]:
    """The video id and its unlisted hash, from the map's page URL where it has one."""
    if destination.signed:
        raise NoEquivalent(f"{NAME} has no token for a private video: it plays only for the account (none is signed)")
    vid = first(destination.remote_id, destination.playback_id)
    if not vid:
        raise NoEquivalent(f"{NAME} has no URL for this video: the map has no video id")
    path = [p for p in urlsplit(destination.player_url or "").path.split("/") if p]
    hashed = path[path.index(vid) + 1] if vid in path and path.index(vid) + 1 < len(path) else None
    query_hash = markup.query(destination.player_url or "").get("h")
    return vid, first(hashed, query_hash)


def player(destination: Destination, params: Params) -> str:
    vid, hashed = _usable(destination)
    url = markup.with_query(f"{PLAYER_HOST}/{segment(vid)}", {"h": hashed} if hashed else {})
    return with_params(url, params)


def _page_url(destination: Destination) -> str:
    vid, hashed = _usable(destination)
    recorded = destination.player_url if urlsplit(destination.player_url or "").netloc.endswith("vimeo.com") else None
    return recorded or f"{PAGE_HOST}/{segment(vid)}" + (f"/{segment(hashed)}" if hashed else "")


def page(destination: Destination, params: Params) -> tuple[str, tuple[str, ...]]:
    url = _page_url(destination)
    # The page takes the start as its fragment; its other options are the player's.
    written = url + ("#" + "&".join(params.fragment) if params.fragment else "")
    return written, (*params.in_query, *params.dropped)


def oembed(destination: Destination) -> str:
    return markup.with_query(OEMBED, {"url": _page_url(destination)})


def media(kind: str, destination: Destination) -> tuple[str, tuple[str, ...]]:
    _usable(destination)
    if kind == THUMBNAIL:
        if destination.thumbnail_url:
            return destination.thumbnail_url, ()
        raise none(NAME, kind, "the map records no picture")
    raise none(NAME, kind, "Vimeo's media links come from its API and expire; none is recorded in the map")


def _params(embed: Embed) -> Params:
    return translate(embed, _QUERY, _HASH)


TARGET = Target(NAME, player, _params, media, page=page, oembed=oembed)
PLAYER = Player(
    "vimeo",
    lambda embed, destination, original: render(TARGET, embed, destination, original),
    CITE,
    options=(*_QUERY, *_HASH),
)
