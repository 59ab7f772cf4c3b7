"""Mux's embed forms: the HLS, MP4 and image URLs of a playback id, <mux-player> and <mux-video> (with or without
their jsdelivr script), and the player.mux.com iframe and URL (pure; registered at import).

Every Mux embed names a *playback* id, never the asset's id the migration's map keys Mux videos by: `video_id` is
the playback id and the map finds the asset by it (the Mux source keeps an asset's playback ids in its row's
metadata, `mux_playback_ids`). Documents:
- https://www.mux.com/docs/guides/play-your-videos (`https://stream.mux.com/{PLAYBACK_ID}.m3u8`);
- https://www.mux.com/docs/guides/secure-video-playback and .../modify-playback-behavior (`?token={TOKEN}`: a
  signed playback id; modifiers such as `max_resolution` are reported as unknown);
- https://www.mux.com/docs/guides/enable-static-mp4-renditions and the API reference's static rendition names
  (`highest.mp4`, `capped-1080p.mp4`, `low|medium|high.mp4`, `2160p.mp4` ... `270p.mp4`); `audio.m4a` is audio
  only, no video rendition, and is not a form;
- https://www.mux.com/docs/guides/get-images-from-a-video (`thumbnail.{png|jpg|webp}`, `animated.{gif|webp}`,
  `storyboard.vtt` and its `.jpg|.png|.webp|.json`): all of kind THUMBNAIL, with the file in `detail`. A
  storyboard is the timeline's hover previews, not a poster: it is still found (a page naming it plays from
  Mux), so the report lists it, and a target with no storyboard raises NoEquivalent on `detail` "storyboard.*"
  rather than write a still image where a WebVTT track is read;
- https://www.mux.com/docs/guides/mux-player-web and .../player-api-reference/html (`<mux-player playback-id=...>`,
  its attributes; the hosted script `https://cdn.jsdelivr.net/npm/@mux/mux-player`), the @mux/mux-video README
  (`<mux-video>`, `https://cdn.jsdelivr.net/npm/@mux/mux-video@0`);
- https://www.mux.com/docs/guides/player-mux-com and .../player-mux-com-reference (the iframe; boolean parameters
  are on when present; `playback-token` for a signed playback id).
A token (`token`, `playback-token`, `thumbnail-token`, `storyboard-token`, `drm-token`) marks the embed private and
is not carried: it is the old account's and expires.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .. import forms, markup
from ..model import (
    AUTOPLAY,
    CONTROLS,
    ELEMENT,
    HLS,
    IFRAME,
    LOOP,
    MP4,
    MUTED,
    PLAYER_URL,
    PLAYSINLINE,
    POSTER,
    SCRIPT,
    START,
    THUMBNAIL,
    Embed,
    Form,
)
from ._pieces import SCHEME, URL_SCHEME, iframe_pattern, params_of, read_params, url_pattern

PLATFORM = "mux"
PLAYBACK_ID = r"[A-Za-z0-9]{10,64}"
_ID = re.compile(PLAYBACK_ID + r"\Z")
TOKENS = ("token", "playback-token", "thumbnail-token", "storyboard-token", "drm-token")
STREAM = SCHEME + r"(?i:stream\.mux\.com)/(?P<id>" + PLAYBACK_ID + r")"
IMAGE = SCHEME + r"(?i:image\.mux\.com)/(?P<id>" + PLAYBACK_ID + r")"
PLAYER = SCHEME + r"(?i:player\.mux\.com)/(?P<id>" + PLAYBACK_ID + r")"
RENDITIONS = r"(?:low|medium|high|highest|capped-1080p|(?:2160|1440|1080|720|540|480|360|270)p)\.mp4"
# player.mux.com's parameters and Mux Player's attributes in our words; the rest is reported as unknown.
PLAYER_OPTIONS = {
    "autoplay": AUTOPLAY,
    "muted": MUTED,
    "loop": LOOP,
    "start-time": START,
    "poster": POSTER,
    "playsinline": PLAYSINLINE,
    "controls": CONTROLS,
}

PLAY_DOC = "https://www.mux.com/docs/guides/play-your-videos"
MP4_DOC = "https://www.mux.com/docs/guides/enable-static-mp4-renditions"
IMAGE_DOC = "https://www.mux.com/docs/guides/get-images-from-a-video"
PLAYER_DOC = "https://www.mux.com/docs/guides/mux-player-web"
IFRAME_DOC = "https://www.mux.com/docs/guides/player-mux-com"
VIDEO_DOC = "https://app.unpkg.com/@mux/mux-video@0.26.1/files/README.md"


def _url_embed(match: re.Match[str], form: str, kind: str, detail: str = "") -> Embed:
    """An embed of a Mux URL: its parameters read as the player's (or reported), a token marking it private."""
    params = params_of(match.group("src"))
    options, unknown = read_params(params, PLAYER_OPTIONS if kind in (IFRAME, PLAYER_URL) else {}, skip=TOKENS)
    return Embed(
        match.start(),
        match.end(),
        form,
        PLATFORM,
        kind,
        match.group("id"),
        options=options,
        unknown=unknown,
        private=any(t in params for t in TOKENS),
        detail=detail,
    )


def _reader(form: str, kind: str, with_file: bool = False):
    def read(match: re.Match[str]) -> Embed | None:
        return _url_embed(match, form, kind, match.group("file") if with_file else "")

    return read


def _read_iframe(match: re.Match[str]) -> Embed:
    embed = _url_embed(match, "mux.player-iframe", IFRAME)
    attributes = markup.kept_attributes(markup.attributes(match.group(0)))
    return replace(embed, attributes=attributes)


# --- the web components: <mux-player> and <mux-video>, alone or after their hosted script


def _element(tag: str) -> str:
    # The element and what it holds (<track> children, fallback text), bounded; a closing tag ends it.
    return r"<" + tag + r"(?![\w:-])(?P<attrs>[^>]{0,4000})>(?:(?!</" + tag + r")[\s\S]){0,4000}?</" + tag + r"\s*>"


def _script(package: str) -> str:
    return (
        r"<script\b[^>]{0,500}?(?<![\w-])src\s*=\s*[\"']?" + URL_SCHEME
        + r"(?i:cdn\.jsdelivr\.net)/npm/@mux/" + package + r"(?:@[\w.^~-]{1,40})?(?:/[^\s\"'<>]{0,200})?[\"']?"
        r"[^>]{0,500}>\s*</script\s*>\s*"
    )  # fmt: skip


def _read_element(form: str, kind: str):
    def read(match: re.Match[str]) -> Embed | None:
        attrs = markup.attributes("<x " + match.group("attrs") + ">")
        pid, _, signed = attrs.get("playback-id", "").partition("?")
        if not _ID.match(pid):
            return None  # a template's placeholder ({{ id }}), a src= player: not a playback id we can look up
        rest = {k: v for k, v in attrs.items() if k not in markup.KEPT_ATTRIBUTES and k != "playback-id"}
        options, unknown = read_params(rest, PLAYER_OPTIONS, skip=TOKENS)
        private = any(t in attrs for t in TOKENS) or "token=" in signed
        return Embed(
            match.start(),
            match.end(),
            form,
            PLATFORM,
            kind,
            pid,
            options=options,
            unknown=unknown,
            attributes=markup.kept_attributes(attrs),
            private=private,
        )

    return read


def _sample_player(pid: str) -> str:
    return (
        f'<mux-player\n  playback-id="{pid}"\n  metadata-video-title="Test VOD"\n'
        '  metadata-viewer-user-id="user-id-007"\n></mux-player>'
    )


def _sample_video(pid: str) -> str:
    return f'<mux-video controls playback-id="{pid}" env-key="your-mux-data-env-key"></mux-video>'


PLAYER_SCRIPT = '<script src="https://cdn.jsdelivr.net/npm/@mux/mux-player" defer></script>\n'
VIDEO_SCRIPT = '<script src="https://cdn.jsdelivr.net/npm/@mux/mux-video@0"></script>\n'

forms.register(
    Form(
        "mux.hls",
        PLATFORM,
        HLS,
        url_pattern(STREAM + r"\.m3u8"),
        _reader("mux.hls", HLS),
        PLAY_DOC,
        lambda pid: f"https://stream.mux.com/{pid}.m3u8",
        "stream.mux.com",
    ),
    Form(
        "mux.mp4",
        PLATFORM,
        MP4,
        url_pattern(STREAM + r"/(?P<file>" + RENDITIONS + r")"),
        _reader("mux.mp4", MP4, with_file=True),
        MP4_DOC,
        lambda pid: f"https://stream.mux.com/{pid}/highest.mp4",
        "stream.mux.com",
    ),
    Form(
        "mux.thumbnail",
        PLATFORM,
        THUMBNAIL,
        url_pattern(IMAGE + r"/(?P<file>thumbnail\.(?:jpg|png|webp))"),
        _reader("mux.thumbnail", THUMBNAIL, with_file=True),
        IMAGE_DOC,
        lambda pid: f"https://image.mux.com/{pid}/thumbnail.png?width=214&height=121&fit_mode=pad",
        "image.mux.com",
    ),
    Form(
        "mux.animated",
        PLATFORM,
        THUMBNAIL,
        url_pattern(IMAGE + r"/(?P<file>animated\.(?:gif|webp))"),
        _reader("mux.animated", THUMBNAIL, with_file=True),
        IMAGE_DOC,
        lambda pid: f"https://image.mux.com/{pid}/animated.gif?width=640&fps=5",
        "image.mux.com",
    ),
    Form(
        "mux.storyboard",
        PLATFORM,
        THUMBNAIL,
        url_pattern(IMAGE + r"/(?P<file>storyboard\.(?:vtt|jpg|png|webp|json))"),
        _reader("mux.storyboard", THUMBNAIL, with_file=True),
        IMAGE_DOC,
        lambda pid: f"https://image.mux.com/{pid}/storyboard.vtt",
        "image.mux.com",
    ),
    Form(
        "mux.player-iframe",
        PLATFORM,
        IFRAME,
        iframe_pattern(PLAYER),
        _read_iframe,
        IFRAME_DOC,
        lambda pid: (
            f'<iframe\n  src="https://player.mux.com/{pid}"\n  style="aspect-ratio: 16/9; width: 100%; border: 0;"\n'
            '  allow="accelerometer; gyroscope; autoplay; encrypted-media; picture-in-picture;"\n'
            '  allowfullscreen="true"\n></iframe>'
        ),
        "player.mux.com",
    ),
    Form(
        "mux.player-url",
        PLATFORM,
        PLAYER_URL,
        url_pattern(PLAYER),
        _reader("mux.player-url", PLAYER_URL),
        IFRAME_DOC,
        lambda pid: f"https://player.mux.com/{pid}?autoplay=true&muted=true",
        "player.mux.com",
    ),
    Form(
        "mux.player-element",
        PLATFORM,
        ELEMENT,
        re.compile(_element("mux-player"), re.IGNORECASE),
        _read_element("mux.player-element", ELEMENT),
        PLAYER_DOC,
        _sample_player,
        "<mux-player",
    ),
    Form(
        "mux.player-script",
        PLATFORM,
        SCRIPT,
        re.compile(_script("mux-player") + _element("mux-player"), re.IGNORECASE),
        _read_element("mux.player-script", SCRIPT),
        PLAYER_DOC,
        lambda pid: PLAYER_SCRIPT + _sample_player(pid),
        "<mux-player",
    ),
    Form(
        "mux.video-element",
        PLATFORM,
        ELEMENT,
        re.compile(_element("mux-video"), re.IGNORECASE),
        _read_element("mux.video-element", ELEMENT),
        VIDEO_DOC,
        _sample_video,
        "<mux-video",
    ),
    Form(
        "mux.video-script",
        PLATFORM,
        SCRIPT,
        re.compile(_script("mux-video") + _element("mux-video"), re.IGNORECASE),
        _read_element("mux.video-script", SCRIPT),
        VIDEO_DOC,
        lambda pid: VIDEO_SCRIPT + _sample_video(pid),
        "<mux-video",
    ),
)
