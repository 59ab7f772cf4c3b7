"""Kaltura's embed forms: the player iframe (v2 `embedIframeJs` and PlayKit `embedPlaykitJs`) and its bare URL, the
auto embed, the kWidget and PlayKit dynamic embeds, and the playManifest and thumbnail URLs (pure).

The id is the entry id (`0_abcd1234`, `1_...`), as the source adapter writes `kaltura://<entry id>`
(functions/migrator/sources/kaltura.py); `<partner>/<uiconf>` is kept as `detail`. Hosts are Kaltura's SaaS ones
(cdnapisec, cdnapi, www and the thumbnail API's cdnsecakmi on kaltura.com): an on-premises or regional host is not
assumed to be Kaltura. Platform facts:
- the iframe `/p/<partner>/sp/<partner>00/embedIframeJs/uiconf_id/<uiconf>/partner_id/<partner>?iframeembed=true
  &playerId=...&entry_id=<id>&flashvars[...]` (the v2 player's embed code, quoted in gist.github.com/vladimyr/
  ae759380a7d95ff1fcf0881baa11c247 and pastebin.com/ehMF6wF1) and PlayKit's `/p/<partner>/embedPlaykitJs/uiconf_id/
  <uiconf>?iframeembed=true&entry_id=<id>` (developer.kaltura.com/player/web/embed-types-web);
- the auto embed: a script whose src carries `autoembed=true` and the entry (developer.kaltura.com/player/web/
  embed-types-web for PlayKit, with `config[playback]={"autoplay":true}`; the v2 one from github.com/kaltura/
  EmbedCodeGenerator's "auto" type, not seen verbatim);
- the dynamic embeds: the library script, the target div and `kWidget.embed({targetId, wid, uiconf_id, entry_id,
  flashvars})` or `kWidget.thumbEmbed(...)` (the mwEmbed kWidget API documentation), or PlayKit's
  `KalturaPlayer.setup({...})` and `loadMedia({entryId})` (developer.kaltura.com/player/web/embed-types-web);
- `[serviceUrl]/p/<partner>/sp/0/playManifest/entryId/<id>/format/<applehttp|url|mpegdash>/protocol/<protocol>/
  flavorParamId/<flavor>/ks/<ks>/video.<ext>`, the KS only where the entry's access control needs one (vpaas.kaltura.com
  "How to retrieve the download or streaming URL using API calls"; knowledge.kaltura.com's getPlaybackContext samples);
- the thumbnail API `/p/<partner>/thumbnail/entry_id/<id>/<name>/<value>...`
  (developer.kaltura.com/api-docs/Engage_and_Publish/kaltura-thumbnail-api.html).
Player options: the v2 player's `flashvars[autoPlay]`, `flashvars[autoMute]`, `flashvars[loop]` and
`flashvars[mediaProxy.mediaPlayFrom]` (kaltura.org's flashvars guide names autoPlay; the rest not seen verbatim), and
PlayKit's `config[playback]` / `playback: {autoplay, muted, loop}` (embed-types-web shows autoplay).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from .. import forms, markup
from ..model import DASH, HLS, IFRAME, MP4, PLAYER_URL, SCRIPT, THUMBNAIL, Embed, Form

PLATFORM = "kaltura"
EMBED_DOC = "https://developer.kaltura.com/player/web/embed-types-web"
KWIDGET_DOC = "https://vpaas.kaltura.com/documentation/Web-Video-Player/Kaltura-Media-Player-API.html"
THUMBNAIL_DOC = "https://developer.kaltura.com/api-docs/Engage_and_Publish/kaltura-thumbnail-api.html"
MANIFEST_DOC = (
    "https://vpaas.kaltura.com/documentation/Deliver-and-Distribute-Media/"
    "how-retrieve-download-or-streaming-url-using-api-calls.html"
)

_SCHEME = r"(?<![\w.+-])(?:https?:)?//"
_HOST = _SCHEME + r"(?:cdnapisec|cdnapi|www|cdnsecakmi)\.kaltura\.com"
_ENTRY = re.compile(r"[01]_[0-9a-z]{8}")
_ENTRY_PATTERN = r"[01]_[0-9a-z]{8}"
_PLAYER_PATH = (
    _HOST
    + r"/p/(?P<partner>\d{1,12})/(?:sp/\d{1,14}/embedIframeJs/uiconf_id/(?P<uiconf>\d{1,12})/partner_id/\d{1,12}"
    + r"|embedPlaykitJs/uiconf_id/(?P<playkit>\d{1,12}))"
)
_QUERY = r"""(?:\?[^\s"'<>()\[\]{}\\]*(?:\[[^\s"'<>\]]{1,100}\][^\s"'<>()\[\]{}\\]*){0,50})?"""
_PLAYER_URL = _PLAYER_PATH + r"(?![\w.-])" + _QUERY
_LIBRARY_SRC = (
    _HOST
    + r"/p/\d{1,12}/(?:sp/\d{1,14}/embedIframeJs/uiconf_id/\d{1,12}/partner_id/\d{1,12}"
    + r"|embedPlaykitJs/uiconf_id/\d{1,12})"
)
_IFRAME = (
    r"<iframe\b(?=[^>]{0,3000}?\bsrc\s*=\s*[\"']?"
    + _LIBRARY_SRC
    + r")[^>]{0,3000}>(?:(?!</iframe)[\s\S]){0,3000}</iframe\s*>"
)
_EMPTY_DIV = r"<div\b[^>]{0,500}>\s{0,20}</div\s*>\s{0,200}"
_LIBRARY_SCRIPT = (
    r"<script\b[^>]{0,300}?\bsrc\s*=\s*[\"']" + _LIBRARY_SRC + r"[\"'][^>]{0,300}>\s{0,20}</script\s*>\s{0,200}"
)
_AUTO = (
    r"(?:"
    + _EMPTY_DIV
    + r")?<script\b[^>]{0,300}?\bsrc\s*=\s*(?P<q>[\"'])(?P<src>"
    + _LIBRARY_SRC
    + r"\?(?:(?!(?P=q))[^<>]){0,4000})(?P=q)[^>]{0,300}>\s{0,20}</script\s*>"
)
_KWIDGET = (
    r"(?:"
    + _LIBRARY_SCRIPT
    + r")?(?:"
    + _EMPTY_DIV
    + r")?<script\b[^>]{0,200}>\s{0,200}kWidget\.(?:embed|thumbEmbed)\("
    + r"\s{0,20}(?:[\"'][^\"'<>]{1,200}[\"']\s{0,20},\s{0,20})?"
    + r"\{(?P<body>[^;<]{0,6000}?)\}\s{0,20}\)\s{0,20};?\s{0,200}</script\s*>"
)
_PLAYKIT = (
    r"(?:"
    + _EMPTY_DIV
    + r")?(?:"
    + _LIBRARY_SCRIPT
    + r")?<script\b[^>]{0,200}>(?P<body>(?:(?!</?script)[\s\S]){0,500}?KalturaPlayer\.setup\("
    + r"(?:(?!</?script)[\s\S]){0,4000}?)</script\s*>"
)
_SEGMENTS = r"(?P<rest>(?:/[^/\s\"'<>?#]{1,500}){0,40})(?![^/\s\"'<>?#])"
_TAIL = r"""(?:[?#][^\s"'<>()\[\]{}\\]*)?"""
_MANIFEST = (
    _HOST
    + r"/p/(?P<partner>\d{1,12})(?:/sp/\d{1,14})?/playManifest/entryId/(?P<id>"
    + _ENTRY_PATTERN
    + r")"
    + _SEGMENTS
    + _TAIL
)
_THUMBNAIL = (
    _HOST
    + r"/p/(?P<partner>\d{1,12})(?:/sp/\d{1,14})?/thumbnail/entry_id/(?P<id>"
    + _ENTRY_PATTERN
    + r")"
    + _SEGMENTS
    + _TAIL
)

# The v2 player's flashvars and PlayKit's playback config in our words.
_FLASHVARS = {"autoplay": "autoplay", "automute": "muted", "loop": "loop", "mediaproxy.mediaplayfrom": "start"}
_PLAYBACK = {"autoplay": "autoplay", "muted": "muted", "loop": "loop"}
# Parameters that say which entry, player or element, not how it plays: neither options nor reported.
_STRUCTURAL = ("iframeembed", "autoembed", "entry_id", "playerid", "targetid", "wid", "cache_st", "ks")
_KS = re.compile(r"""["']?ks["']?\s{0,20}:\s{0,20}["'][^"']{8,}["']""")


def _entry(value: str | None) -> str | None:
    """An entry id (lower case: the patterns match hosts case-insensitively, ids are not)."""
    return value if value is not None and _ENTRY.fullmatch(value) else None


def _option(options: dict[str, str], unknown: list[str], ours: str | None, name: str, value: str) -> None:
    read = markup.seconds(value) if ours == "start" else markup.switch(value) if ours else None
    if ours and read is not None:
        options[ours] = read
    else:
        unknown.append(f"{name}={value}")


def _query_options(params: dict[str, str]) -> tuple[dict[str, str], tuple[str, ...]]:
    options: dict[str, str] = {}
    unknown: list[str] = []
    for name, value in params.items():
        key = name.lower()
        if key in _STRUCTURAL:
            continue
        if key.startswith("flashvars[") and key.endswith("]"):
            _option(options, unknown, _FLASHVARS.get(key[10:-1]), name, value)
        elif key == "config[playback]":
            _playback(options, unknown, name, value)
        else:
            unknown.append(f"{name}={value}")
    return options, tuple(unknown)


def _playback(options: dict[str, str], unknown: list[str], name: str, value: str) -> None:
    """PlayKit's `config[playback]={"autoplay":true,...}`: each key read as an option or reported."""
    try:
        config = json.loads(value)
    except ValueError:
        config = None
    if not isinstance(config, dict):
        unknown.append(f"{name}={value}")
        return
    for key, setting in config.items():
        text = str(setting).lower() if isinstance(setting, bool) else str(setting)
        _option(options, unknown, _PLAYBACK.get(str(key).lower()), f"{name}.{key}", text)


def _player_url(url: str) -> tuple[re.Match[str], dict[str, str]] | None:
    """The player path's match and the query of a player URL (its query may hold JSON: read apart, not matched)."""
    found = re.match(_PLAYER_PATH, url, re.IGNORECASE)
    if found is None or url[found.end() : found.end() + 1] not in ("", "?", "#"):
        return None
    return found, markup.query(url)


def _from_url(
    match: re.Match[str], url: str, name: str, kind: str, flag: str, attributes: dict[str, str]
) -> Embed | None:
    """An embed whose URL names the entry in its query and carries `flag` (iframeembed, autoembed) as true."""
    parsed = _player_url(url)
    if parsed is None:
        return None
    found, params = parsed
    video_id = _entry(params.get("entry_id"))
    if video_id is None or markup.switch(params.get(flag)) != "1":
        return None
    options, unknown = _query_options(params)
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
        private=bool(params.get("ks")),
        detail=f"{found.group('partner')}/{found.group('uiconf') or found.group('playkit')}",
    )


def _read_iframe(match: re.Match[str]) -> Embed | None:
    attributes = markup.attributes(match.group(0))
    kept = markup.kept_attributes(attributes)
    return _from_url(match, attributes.get("src", ""), "kaltura.iframe", IFRAME, "iframeembed", kept)


def _read_player_url(match: re.Match[str]) -> Embed | None:
    return _from_url(match, match.group(0), "kaltura.player-url", PLAYER_URL, "iframeembed", {})


def _read_auto(match: re.Match[str]) -> Embed | None:
    src = markup.attributes(f"<script src={match.group('q')}{match.group('src')}{match.group('q')}>").get("src", "")
    return _from_url(match, src, "kaltura.auto-embed", SCRIPT, "autoembed", {})


def _js_value(body: str, key: str) -> str | None:
    """`key: "value"` (or a number/boolean) in a JavaScript object literal's text, quoted or not."""
    found = re.search(
        r"""["']?\b""" + re.escape(key) + r"""["']?\s{0,20}:\s{0,20}(?:["']([^"']{0,500})["']|([\w.]{1,50}))""", body
    )
    return None if found is None else found.group(1) if found.group(1) is not None else found.group(2)


def _library_detail(text: str) -> str:
    found = re.search(r"/p/(\d{1,12})/(?:sp/\d{1,14}/embedIframeJs|embedPlaykitJs)/uiconf_id/(\d{1,12})", text)
    return f"{found.group(1)}/{found.group(2)}" if found else ""


def _script_embed(
    match: re.Match[str], name: str, video_id: str | None, options: dict[str, str], unknown: list[str]
) -> Embed | None:
    if video_id is None:
        return None
    return Embed(
        start=match.start(),
        end=match.end(),
        form=name,
        platform=PLATFORM,
        kind=SCRIPT,
        video_id=video_id,
        options=options,
        unknown=tuple(unknown),
        private=bool(_KS.search(match.group("body"))),
        detail=_library_detail(match.group(0)),
    )


def _read_kwidget(match: re.Match[str]) -> Embed | None:
    body = match.group("body")
    options: dict[str, str] = {}
    unknown: list[str] = []
    flashvars = re.search(r"""["']?flashvars["']?\s{0,20}:\s{0,20}\{([^{}]{0,3000})\}""", body)
    for name, value in re.findall(
        r"""["']?([\w.]{1,80})["']?\s{0,20}:\s{0,20}["']?([^,"'{}]{0,200}?)["']?\s*(?:,|$)""",
        flashvars.group(1) if flashvars else "",
    ):
        if name.lower() != "ks":
            _option(options, unknown, _FLASHVARS.get(name.lower()), name, value.strip())
    return _script_embed(match, "kaltura.kwidget", _entry(_js_value(body, "entry_id")), options, unknown)


def _read_playkit(match: re.Match[str]) -> Embed | None:
    body = match.group("body")
    loaded = re.search(
        r"loadMedia\(\s{0,20}\{[^}]{0,1000}?\bentryId[\"']?\s{0,20}:\s{0,20}[\"']([^\"']{1,40})[\"']", body
    )
    options: dict[str, str] = {}
    unknown: list[str] = []
    playback = re.search(r"""["']?playback["']?\s{0,20}:\s{0,20}\{([^{}]{0,2000})\}""", body)
    for key in _PLAYBACK:
        value = _js_value(playback.group(1), key) if playback else None
        if value is not None:
            _option(options, unknown, _PLAYBACK[key], f"playback.{key}", value)
    return _script_embed(match, "kaltura.playkit", _entry(loaded.group(1) if loaded else None), options, unknown)


_FORMATS = {"applehttp": HLS, "url": MP4, "mpegdash": DASH}


def _path_pairs(rest: str) -> list[tuple[str, str]]:
    parts = [p for p in rest.split("/") if p]
    return [(parts[i], parts[i + 1] if i + 1 < len(parts) else "") for i in range(0, len(parts), 2)]


def _read_manifest(kind: str) -> Callable[[re.Match[str]], Embed | None]:
    name = {HLS: "kaltura.hls", MP4: "kaltura.mp4", DASH: "kaltura.dash"}[kind]

    def read(match: re.Match[str]) -> Embed | None:
        video_id = _entry(match.group("id"))
        pairs = dict((k.lower(), v) for k, v in _path_pairs(match.group("rest")))
        if video_id is None or _FORMATS.get(pairs.get("format", "").lower()) != kind:
            return None
        private = "ks" in pairs or bool(markup.query(match.group(0)).get("ks"))
        return Embed(
            start=match.start(),
            end=match.end(),
            form=name,
            platform=PLATFORM,
            kind=kind,
            video_id=video_id,
            private=private,
            detail=match.group("partner"),
        )

    return read


def _read_thumbnail(match: re.Match[str]) -> Embed | None:
    video_id = _entry(match.group("id"))
    if video_id is None:
        return None
    sizing = tuple(f"{k}={v}" for k, v in _path_pairs(match.group("rest")) if k.lower() != "ks")
    return Embed(
        start=match.start(),
        end=match.end(),
        form="kaltura.thumbnail",
        platform=PLATFORM,
        kind=THUMBNAIL,
        video_id=video_id,
        unknown=sizing,
        private="/ks/" in match.group("rest").lower(),
        detail=match.group("partner"),
    )


def _sample_iframe(entry: str) -> str:
    return (
        '<iframe id="kaltura_player_1596463167" src="https://cdnapisec.kaltura.com/p/2968292/sp/296829200/embedIframeJs/'
        f'uiconf_id/46147462/partner_id/2968292?iframeembed=true&playerId=kaltura_player_1596463167&entry_id={entry}" '
        'width="528" height="327" allowfullscreen webkitallowfullscreen mozAllowFullScreen '
        'allow="autoplay *; fullscreen *; encrypted-media *" frameborder="0"></iframe>'
    )


def _sample_kwidget(entry: str) -> str:
    return (
        '<script src="https://cdnapisec.kaltura.com/p/2968292/sp/296829200/embedIframeJs/uiconf_id/46147462/'
        'partner_id/2968292"></script>\n'
        '<div id="kaltura_player_1596463167" style="width: 560px; height: 395px;"></div>\n'
        "<script>\n"
        "kWidget.embed({\n"
        '  "targetId": "kaltura_player_1596463167",\n'
        '  "wid": "_2968292",\n'
        '  "uiconf_id": 46147462,\n'
        '  "flashvars": {},\n'
        f'  "entry_id": "{entry}"\n'
        "});\n"
        "</script>"
    )


def _sample_playkit(entry: str) -> str:
    return (
        '<div id="kaltura_player" style="width: 640px;height: 360px"></div>\n'
        '<script type="text/javascript" src="https://cdnapisec.kaltura.com/p/2968292/embedPlaykitJs/uiconf_id/'
        '46147462"></script>\n'
        '  <script type="text/javascript">\n'
        "    try {\n"
        "      var kalturaPlayer = KalturaPlayer.setup({\n"
        '        targetId: "kaltura_player",\n'
        "        provider: {\n"
        "          partnerId: 2968292,\n"
        "          uiConfId: 46147462\n"
        "        }\n"
        "      });\n"
        f'      kalturaPlayer.loadMedia({{entryId: "{entry}"}});\n'
        "    } catch (e) {\n"
        "      console.error(e.message)\n"
        "    }\n"
        "  </script>"
    )


def _sample_auto(entry: str) -> str:
    return (
        '<div id="kaltura_player" style="width: 640px;height: 360px"></div>\n'
        '<script type="text/javascript" src=\'https://cdnapisec.kaltura.com/p/2968292/embedPlaykitJs/uiconf_id/'
        f'46147462?autoembed=true&targetId=kaltura_player&entry_id={entry}&config[playback]={{"autoplay":true}}\'>'
        "</script>"
    )


_MANIFEST_PATTERN = re.compile(_MANIFEST, re.IGNORECASE)

forms.register(
    Form(
        name="kaltura.iframe",
        platform=PLATFORM,
        kind=IFRAME,
        pattern=re.compile(_IFRAME, re.IGNORECASE),
        read=_read_iframe,
        cite=EMBED_DOC,
        sample=_sample_iframe,
        hint="kaltura.com",
    ),
    Form(
        name="kaltura.player-url",
        platform=PLATFORM,
        kind=PLAYER_URL,
        pattern=re.compile(_PLAYER_URL, re.IGNORECASE),
        read=_read_player_url,
        cite=EMBED_DOC,
        sample=lambda entry: (
            f"https://cdnapisec.kaltura.com/p/2968292/embedPlaykitJs/uiconf_id/46147462?iframeembed=true&entry_id={entry}"
        ),
        hint="kaltura.com",
    ),
    Form(
        name="kaltura.auto-embed",
        platform=PLATFORM,
        kind=SCRIPT,
        pattern=re.compile(_AUTO, re.IGNORECASE),
        read=_read_auto,
        cite=EMBED_DOC,
        sample=_sample_auto,
        hint="autoembed",
    ),
    Form(
        name="kaltura.kwidget",
        platform=PLATFORM,
        kind=SCRIPT,
        pattern=re.compile(_KWIDGET, re.IGNORECASE),
        read=_read_kwidget,
        cite=KWIDGET_DOC,
        sample=_sample_kwidget,
        hint="kwidget.",
    ),
    Form(
        name="kaltura.playkit",
        platform=PLATFORM,
        kind=SCRIPT,
        pattern=re.compile(_PLAYKIT, re.IGNORECASE),
        read=_read_playkit,
        cite=EMBED_DOC,
        sample=_sample_playkit,
        hint="kalturaplayer.setup",
    ),
    Form(
        name="kaltura.hls",
        platform=PLATFORM,
        kind=HLS,
        pattern=_MANIFEST_PATTERN,
        read=_read_manifest(HLS),
        cite=MANIFEST_DOC,
        sample=lambda entry: (
            f"https://cdnapisec.kaltura.com/p/2968292/sp/296829200/playManifest/entryId/{entry}/format/applehttp/"
            "protocol/https/a.m3u8"
        ),
        hint="playmanifest",
    ),
    Form(
        name="kaltura.mp4",
        platform=PLATFORM,
        kind=MP4,
        pattern=_MANIFEST_PATTERN,
        read=_read_manifest(MP4),
        cite=MANIFEST_DOC,
        sample=lambda entry: (
            f"https://cdnapisec.kaltura.com/p/2968292/sp/296829200/playManifest/entryId/{entry}/format/url/"
            "protocol/https/a.mp4"
        ),
        hint="playmanifest",
    ),
    Form(
        name="kaltura.dash",
        platform=PLATFORM,
        kind=DASH,
        pattern=_MANIFEST_PATTERN,
        read=_read_manifest(DASH),
        cite=MANIFEST_DOC,
        sample=lambda entry: (
            f"https://cdnapisec.kaltura.com/p/2968292/sp/296829200/playManifest/entryId/{entry}/format/mpegdash/"
            "protocol/https/manifest.mpd"
        ),
        hint="playmanifest",
    ),
    Form(
        name="kaltura.thumbnail",
        platform=PLATFORM,
        kind=THUMBNAIL,
        pattern=re.compile(_THUMBNAIL, re.IGNORECASE),
        read=_read_thumbnail,
        cite=THUMBNAIL_DOC,
        sample=lambda entry: f"https://cdnsecakmi.kaltura.com/p/2968292/thumbnail/entry_id/{entry}/width/640",
        hint="/thumbnail/entry_id/",
    ),
)
