"""Cloudflare Stream as a rewrite target: the Stream Player's iframe, the HLS and DASH manifests, the thumbnail,
the watch page and the MP4 download, all under the video's `customer-<CODE>.cloudflarestream.com/<uid>` (pure).

Platform facts:
- the iframe `https://customer-<CODE>.cloudflarestream.com/<VIDEO_UID>/iframe`, with `allow`, "<VIDEO_UID> with the
  video UID (or signed token)", and its responsive form, a padding-top div around an absolutely placed iframe
  (https://developers.cloudflare.com/stream/viewing-videos/using-the-stream-player); its "Basic Options" in the
  query: `autoplay` (included or not: "don't include the autoplay flag at all"), `muted`, `loop`, `controls` (default
  true), `poster` (a URL), `startTime` ("a plain number ... will be interpreted as ... seconds"), `defaultTextTrack`
  (a BCP-47 language code) (the same page's source, cloudflare/cloudflare-docs src/content/docs/stream/viewing-videos/
  using-the-stream-player/index.mdx);
- `/manifest/video.m3u8`, `/manifest/video.mpd` (https://developers.cloudflare.com/stream/examples/video-js,
  .../dash-js), `/thumbnails/thumbnail.jpg` (https://developers.cloudflare.com/stream/examples/stream-player), the
  watch page `/watch` (the video object's `preview`);
- an MP4 `/downloads/default.mp4` only once downloads are enabled for the video
  (https://developers.cloudflare.com/stream/viewing-videos/download-videos);
- a signed video: the token in place of the uid in every URL (https://developers.cloudflare.com/stream/security).
The map's URLs (the video object's) give the customer host; a signed row has none, so it takes the host the map's
other rows show (`learn`); without any, `--target-setting customer_code=<CODE>`.
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
    MUTED,
    POSTER,
    START,
    THUMBNAIL,
    TOKEN_MARKER,
    Destination,
    Embed,
    NoEquivalent,
    Player,
)
from .common import Params, Target, base_in, first, none, off, on, render, segment, start, text, translate

CITE = "https://developers.cloudflare.com/stream/viewing-videos/using-the-stream-player"
DOWNLOADS = "the MP4 plays only once downloads are enabled for the video (POST .../downloads)"
NAME = "Cloudflare Stream"

_PARAMS = {
    AUTOPLAY: on("autoplay"),
    MUTED: on("muted"),
    LOOP: on("loop"),
    START: start("startTime"),
    CONTROLS: off("controls"),
    POSTER: text("poster"),
    CAPTIONS: text("defaultTextTrack"),
}
_PATHS = {HLS: "manifest/video.m3u8", DASH: "manifest/video.mpd", THUMBNAIL: "thumbnails/thumbnail.jpg",
          MP4: "downloads/default.mp4"}  # fmt: skip


def video_base(destination: Destination) -> str:
    """`https://customer-<CODE>.cloudflarestream.com/<uid>` (the token marker in place of the uid when signed)."""
    uid = first(destination.playback_id, destination.remote_id)
    if not uid:
        raise NoEquivalent(f"{NAME} has no URL for this video: the map has no video uid")
    found = first(*(base_in(u, uid) for u in (destination.hls_url, destination.player_url, destination.thumbnail_url)))
    host = destination.settings.get("video_host")
    if found is None and host:
        found = f"{host}/{segment(uid)}"
    if found is None:
        code = destination.settings.get("customer_code")
        if not code:
            raise NoEquivalent(
                f"{NAME} has no URL for this video: the map has none and no customer code was given "
                "(--target-setting customer_code=<CODE>)"
            )
        found = f"https://customer-{segment(code)}.cloudflarestream.com/{segment(uid)}"
    if destination.signed:
        return found.rsplit("/", 1)[0] + "/" + TOKEN_MARKER
    return found


def learn(destination: Destination) -> dict[str, str]:
    """The account's video host (`https://customer-<CODE>.cloudflarestream.com`), as a row's URLs show it."""
    uid = first(destination.playback_id, destination.remote_id)
    found = first(*(base_in(u, uid) for u in (destination.hls_url, destination.player_url, destination.thumbnail_url)))
    return {"video_host": found.rsplit("/", 1)[0]} if found else {}


def player(destination: Destination, params: Params) -> str:
    return markup.with_query(video_base(destination) + "/iframe", params.query)


def page(destination: Destination, params: Params) -> tuple[str, tuple[str, ...]]:
    url = (not destination.signed and destination.player_url) or video_base(destination) + "/watch"
    # The watch page's parameters are not documented: the options are reported, not written.
    return url, (*params.in_query, *params.dropped)


def media(kind: str, destination: Destination) -> tuple[str, tuple[str, ...]]:
    if kind not in _PATHS:
        raise none(NAME, kind, "not a media kind")
    if kind == HLS and destination.hls_url and not destination.signed:
        return destination.hls_url, ()
    if kind == THUMBNAIL and destination.thumbnail_url and not destination.signed:
        return destination.thumbnail_url, ()
    return video_base(destination) + "/" + _PATHS[kind], (DOWNLOADS,) if kind == MP4 else ()


def _params(embed: Embed) -> Params:
    return translate(embed, _PARAMS)


TARGET = Target(NAME, player, _params, media, page=page)
PLAYER = Player(
    "cloudflare",
    lambda embed, destination, original: render(TARGET, embed, destination, original),
    CITE,
    options=tuple(_PARAMS),
    learn=learn,
)
