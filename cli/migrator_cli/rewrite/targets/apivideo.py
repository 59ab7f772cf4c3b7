"""api.video as a rewrite target: its player on embed.api.video, the HLS, thumbnail and MP4 on vod.api.video (pure).

Platform facts:
- the player `https://embed.api.video/vod/{video id}`, a private video's `?token={private token}`
  (https://docs.api.video/docs/private-video-delivery-web-browser); options as URL fragments joined by `;`:
  `#autoplay`, `#loop`, `#t=<seconds>`, `#hide-controls`, `#show-subtitles`, and no fragment for starting muted
  ("HTML5 Player URL Fragments", apivideo/api.video-api-client-generator
  templates/documentation/delivery-analytics/video-playback-features.md, docs.api.video's source);
- the video object's assets: `https://vod.api.video/vod/{id}/hls/manifest.m3u8`, `.../thumbnail.jpg`,
  `.../mp4/source.mp4` (oas_apivideo.yaml, video-assets); a private video's token in the path,
  `/vod/{id}/token/{token}/...` ("the HLS manifest has the token in the path", the same private-video page);
- no DASH, no watch page or oEmbed URL of its own: the player URL stands for both.
"""

from __future__ import annotations

from .. import markup
from ..model import (
    AUTOPLAY,
    CAPTIONS,
    CONTROLS,
    DASH,
    HLS,
    LOOP,
    MP4,
    START,
    THUMBNAIL,
    TOKEN_MARKER,
    Destination,
    Embed,
    Player,
)
from .common import Params, Target, base_in, first, none, off, on, render, segment, start, translate, with_params

CITE = "https://docs.api.video/docs/private-video-delivery-web-browser"
EMBED = "https://embed.api.video/vod"
VOD = "https://vod.api.video/vod"
NAME = "api.video"

_HASH = {
    AUTOPLAY: on("autoplay", ""),
    LOOP: on("loop", ""),
    START: start("t"),
    CONTROLS: off("hide-controls", ""),
    CAPTIONS: lambda _language: ("show-subtitles", ""),  # the video's captions shown; the language is the player's
}
_ASSETS = {HLS: "hls/manifest.m3u8", THUMBNAIL: "thumbnail.jpg", MP4: "mp4/source.mp4"}


def _video_id(destination: Destination) -> str:
    vid = first(destination.remote_id, destination.playback_id)
    if not vid:
        raise none(NAME, "player", "the map has no video id")
    return vid


def player(destination: Destination, params: Params) -> str:
    vid = _video_id(destination)
    if destination.signed:
        url = markup.with_query(f"{EMBED}/{segment(vid)}", {"token": TOKEN_MARKER})
    else:
        url = destination.player_url or f"{EMBED}/{segment(vid)}"
    return with_params(url.split("#", 1)[0], params, fragment_sep=";")


def media(kind: str, destination: Destination) -> tuple[str, tuple[str, ...]]:
    if kind == DASH:
        raise none(NAME, kind, "api.video delivers HLS and MP4, no DASH")
    if kind not in _ASSETS:
        raise none(NAME, kind, "not a media kind")
    vid = _video_id(destination)
    recorded = {HLS: destination.hls_url, THUMBNAIL: destination.thumbnail_url}.get(kind)
    if recorded and not destination.signed:
        return recorded, ()
    base = first(base_in(destination.hls_url, vid), base_in(destination.thumbnail_url, vid), f"{VOD}/{segment(vid)}")
    assert base is not None
    token = f"/token/{TOKEN_MARKER}" if destination.signed else ""
    return f"{base}{token}/{_ASSETS[kind]}", ()


def _params(embed: Embed) -> Params:
    return translate(embed, {}, _HASH)


TARGET = Target(NAME, player, _params, media)
PLAYER = Player(
    "apivideo",
    lambda embed, destination, original: render(TARGET, embed, destination, original),
    CITE,
    options=tuple(_HASH),
)
