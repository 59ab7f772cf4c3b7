"""JW Player as a rewrite target: the cloud-hosted player's script and page, the HLS manifest and the poster (pure).

Platform facts:
- a cloud-hosted player embeds as one script, `https://cdn.jwplayer.com/players/{media_id}-{player_id}.js`, or its
  page `.../{media_id}-{player_id}.html` in an iframe (the dashboard's embed code, "Get started with players",
  https://docs.jwplayer.com/players/docs/players-get-started; the URLs as sites carry them, e.g. `<script
  src="https://cdn.jwplayer.com/players/pzcOBtWf-Hq47QX3P.js">`, not seen on JW's own page); the player is the
  property's (`--target-setting player_id=<id>`); without one, the media's preview page, the map's player URL
  (providers/jwplayer.py `previews/`);
- the player takes its options from its configuration, not its URL: every option is reported;
- `https://cdn.jwplayer.com/manifests/{media_id}.m3u8` and `.../v2/media/{media_id}/poster.jpg`
  (providers/jwplayer.py); an MP4 is named by a rendition template's id, which no map holds; no DASH;
- signed URLs: the non-JWT `?exp=<expiry>&sig=<signature>` on the manifest and players
  (https://docs.jwplayer.com/platform/docs/how-to-enable-url-token-signing; sites sign `players/<m>-<p>.html` so).
"""

from __future__ import annotations

import html

from .. import markup
from ..model import (
    DASH,
    HLS,
    IFRAME,
    MP4,
    SCRIPT,
    THUMBNAIL,
    TOKEN_MARKER,
    Destination,
    Embed,
    NoEquivalent,
    Player,
    Rendered,
)
from .common import SCRIPT_AS_IFRAME, Params, Target, done, first, iframe, none, render, segment, translate

CITE = "https://docs.jwplayer.com/players/docs/jw8-add-a-player-library"
CDN = "https://cdn.jwplayer.com"
NAME = "JW Player"
SIGNED = {"exp": TOKEN_MARKER, "sig": TOKEN_MARKER}


def _media(destination: Destination) -> str:
    mid = first(destination.remote_id, destination.playback_id)
    if not mid:
        raise NoEquivalent(f"{NAME} has no URL for this video: the map has no media id")
    return mid


def _signed(url: str, destination: Destination) -> str:
    return markup.with_query(url, SIGNED) if destination.signed else url


def _cloud_player(destination: Destination, ext: str) -> str | None:
    player_id = destination.settings.get("player_id")
    if not player_id:
        return None
    return _signed(f"{CDN}/players/{segment(_media(destination))}-{segment(player_id)}.{ext}", destination)


def player(destination: Destination, params: Params) -> str:
    found = _cloud_player(destination, "html")
    if found is not None:
        return found
    recorded = not destination.signed and destination.player_url
    return recorded or _signed(f"{CDN}/previews/{segment(_media(destination))}", destination)


def media(kind: str, destination: Destination) -> tuple[str, tuple[str, ...]]:
    mid = segment(_media(destination))
    if kind == HLS:
        recorded = not destination.signed and destination.hls_url
        return recorded or _signed(f"{CDN}/manifests/{mid}.m3u8", destination), ()
    if kind == THUMBNAIL:
        recorded = not destination.signed and destination.thumbnail_url
        return recorded or _signed(f"{CDN}/v2/media/{mid}/poster.jpg", destination), ()
    if kind == MP4:
        raise none(NAME, kind, "its MP4s are named by a rendition template the map does not hold")
    if kind == DASH:
        raise none(NAME, kind, "no DASH manifest is recorded or documented for a media")
    raise none(NAME, kind, "not a media kind")


def script(embed: Embed, destination: Destination, params: Params) -> Rendered:
    src = _cloud_player(destination, "js")
    if src is None:  # no player named: the preview page in an iframe
        text = iframe(player(destination, params), embed)
        return done(text, IFRAME, (SCRIPT_AS_IFRAME + " (no --target-setting player_id)", *params.dropped))
    return done(f'<script src="{html.escape(src)}"></script>', SCRIPT, params.dropped)


def _params(embed: Embed) -> Params:
    return translate(embed, {})  # the cloud player's options live in its configuration


TARGET = Target(NAME, player, _params, media, script=script)
PLAYER = Player("jwplayer", lambda embed, destination, original: render(TARGET, embed, destination, original), CITE)
