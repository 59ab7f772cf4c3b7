"""Bunny Stream as a rewrite target: the embed player on iframe.mediadelivery.net, the direct play page, and the
HLS, thumbnail and MP4 on the library's pull zone (pure).

Platform facts:
- the embed `https://iframe.mediadelivery.net/embed/{video_library_id}/{video_id}` (providers/bunny_formats.py
  `EMBED`; the documents now show `player.mediadelivery.net`), its responsive form a padding-top div, its "Supported
  Parameters": `autoplay` (default `true`: so ours, off unless set, is written `false`), `muted`, `loop`,
  `playsinline` as true/false, `captions` (a caption's short code), `t` (`Xs`, `1h20m45s`, seconds)
  (https://docs.bunny.net/docs/stream-embedding-videos; its source BunnyWay/documentation stream/embedding.mdx);
  the direct play page `.../play/{video_library_id}/{video_id}?t=30s` (the same page);
- `https://{pull_zone}.b-cdn.net/{video_id}/playlist.m3u8`, `/thumbnail.jpg`, `/play_{height}p.mp4`, the MP4 only
  with MP4 fallback enabled, up to 720p (https://docs.bunny.net/docs/stream-how-to-retrieve-an-mp4-url-from-stream);
- a protected library: the embed's view token `token=` and `expires=`, the CDN's `token=` and `expires=`
  (https://docs.bunny.net/stream/token-authentication; providers/bunny.py signs the CDN's the same way).
The map's URLs name the library (the embed) and the pull zone (the HLS); without them `--target-setting
library_id=<id>` and `cdn_host=<vz-....b-cdn.net>`.
"""

from __future__ import annotations

from dataclasses import replace

from migrator.providers.bunny_formats import EMBED

from .. import markup
from ..model import (
    AUTOPLAY,
    CAPTIONS,
    DASH,
    HLS,
    LOOP,
    MP4,
    MUTED,
    PLAYSINLINE,
    START,
    THUMBNAIL,
    TOKEN_MARKER,
    Destination,
    Embed,
    NoEquivalent,
    Player,
)
from .common import (
    RESPONSIVE,
    Params,
    Target,
    base_in,
    first,
    none,
    on,
    render,
    responsive,
    segment,
    start,
    switch,
    text,
    translate,
)

CITE = "https://docs.bunny.net/docs/stream-embedding-videos"
NAME = "Bunny Stream"
FALLBACK_MP4 = "the MP4 fallback (720p): plays only with MP4 fallback enabled in the library"
SIGNED = {"token": TOKEN_MARKER, "expires": TOKEN_MARKER}

_PARAMS = {
    AUTOPLAY: on("autoplay"),
    LOOP: on("loop"),
    MUTED: on("muted"),
    START: start("t", "s"),
    PLAYSINLINE: switch("playsinline", "true", "false"),
    CAPTIONS: text("captions"),
}
_FILES = {HLS: "playlist.m3u8", THUMBNAIL: "thumbnail.jpg", MP4: "play_720p.mp4"}


def _guid(destination: Destination) -> str:
    guid = first(destination.remote_id, destination.playback_id)
    if not guid:
        raise NoEquivalent(f"{NAME} has no URL for this video: the map has no video id")
    return guid


def _embed(destination: Destination, what: str = "embed") -> str:
    guid = _guid(destination)
    found = base_in(destination.player_url, guid)
    if found is not None and what == "embed":
        return found
    library = first(destination.settings.get("library_id"), _library_in(destination.player_url, guid))
    if not library:
        raise NoEquivalent(f"{NAME} has no player URL for this video: no library id (--target-setting library_id=<id>)")
    return f"{EMBED.rsplit('/', 1)[0]}/{what}/{segment(library)}/{segment(guid)}"


def _library_in(url: str | None, guid: str) -> str | None:
    base = base_in(url, guid)
    return base.rsplit("/", 2)[-2] if base else None


def learn(destination: Destination) -> dict[str, str]:
    """The library and the pull zone a row's URLs show (a signed row's map has none: it takes these)."""
    guid = first(destination.remote_id, destination.playback_id)
    learned = {}
    library = _library_in(destination.player_url, guid) if guid else None
    if library:
        learned["library_id"] = library
    base = first(base_in(destination.hls_url, guid), base_in(destination.thumbnail_url, guid)) if guid else None
    if base:
        learned["cdn_base"] = base.rsplit("/", 1)[0]
    return learned


def player(destination: Destination, params: Params) -> str:
    return markup.with_query(_embed(destination), {**params.query, **(SIGNED if destination.signed else {})})


def page(destination: Destination, params: Params) -> tuple[str, tuple[str, ...]]:
    url = markup.with_query(_embed(destination, "play"), {**params.query, **(SIGNED if destination.signed else {})})
    return url, params.dropped


def media(kind: str, destination: Destination) -> tuple[str, tuple[str, ...]]:
    if kind == DASH:
        raise none(NAME, kind, "Bunny Stream delivers HLS and MP4, no DASH")
    if kind not in _FILES:
        raise none(NAME, kind, "not a media kind")
    guid = _guid(destination)
    recorded = {HLS: destination.hls_url, THUMBNAIL: destination.thumbnail_url}.get(kind)
    if recorded and not destination.signed:
        return recorded, ()
    base = first(base_in(destination.hls_url, guid), base_in(destination.thumbnail_url, guid))
    if base is None and destination.settings.get("cdn_base"):
        base = f"{destination.settings['cdn_base']}/{segment(guid)}"
    if base is None:
        host = destination.settings.get("cdn_host")
        if not host:
            raise none(NAME, kind, "no pull zone in the map (--target-setting cdn_host=<vz-....b-cdn.net>)")
        base = f"https://{host.removeprefix('https://').strip('/')}/{segment(guid)}"
    url = markup.with_query(f"{base}/{_FILES[kind]}", SIGNED if destination.signed else {})
    return url, (FALLBACK_MP4,) if kind == MP4 else ()


def _params(embed: Embed) -> Params:
    params = translate(embed, _PARAMS)
    # Bunny autoplays unless told not to; the source's player did only where its embed said so.
    query = {"autoplay": params.query.pop("autoplay", "false"), **params.query}
    if responsive(embed):
        query[RESPONSIVE] = "true"
    return replace(params, query=query)


TARGET = Target(NAME, player, _params, media, page=page)
PLAYER = Player(
    "bunny",
    lambda embed, destination, original: render(TARGET, embed, destination, original),
    CITE,
    options=tuple(_PARAMS),
    learn=learn,
)
