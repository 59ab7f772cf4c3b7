"""Wistia's embed forms: the iframe ("Fallback") embed and its URL, the async ("Standard") and popover embeds, the
<wistia-player> element, media page links and the oEmbed URL (pure).

The id is the media's hashed id (10 lower-case letters and digits), as the source adapter writes `wistia://<hashed
id>` (functions/migrator/sources/wistia.py). Platform facts:
- the iframe embed `https://fast.wistia.net/embed/iframe/<id>?<options>` with class/name `wistia_embed`, options in
  its query (docs.wistia.com/docs/iframe-embed-options), and the iframe URL on fast.wistia.com too
  (docs.wistia.com/docs/wistia-and-oembed);
- the async embed: the JSON-P script `fast.wistia.com/embed/medias/<id>.jsonp`, the `E-v1.js` script and a
  `wistia_embed wistia_async_<id>` container with the options as `name=value` words of its class, the swatch inside
  it (wistia.com/support/developers/async-embeds), in the `wistia_responsive_padding`/`wistia_responsive_wrapper`
  divs when responsive (not seen verbatim in a Wistia document: Wistia's in-app responsive embed code);
- the popover embed: the same container as a `<span>` with `popover=true`
  (docs.wistia.com/docs/popover-embed-customization);
- the `<wistia-player media-id>` element with its `embed/<id>.js` and `player.js` scripts and placeholder `<style>`,
  options as kebab-case attributes, `wistia-popover` for a popover (docs.wistia.com/docs/player-embed-api,
  docs.wistia.com/docs/player-attributes-and-properties);
- media pages `https://<account>.wistia.com/medias/<id>` (and `*.wi.st/medias/<id>`), and the oEmbed endpoint
  `https://fast.wistia.com/oembed?url=<encoded>`, also on fast.wistia.net and as `.json`/`.xml`
  (docs.wistia.com/docs/wistia-and-oembed).
Not forms: thumbnails on embed-ssl.wistia.com/deliveries/<hash> name a file, not the media, so no map can say where
they went.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

from .. import forms, markup
from ..model import ELEMENT, IFRAME, OEMBED, PAGE, PLAYER_URL, SCRIPT, Embed, Form

PLATFORM = "wistia"
IFRAME_DOC = "https://docs.wistia.com/docs/iframe-embed-options"
ASYNC_DOC = "https://wistia.com/support/developers/async-embeds"
POPOVER_DOC = "https://docs.wistia.com/docs/popover-embed-customization"
ELEMENT_DOC = "https://docs.wistia.com/docs/player-embed-api"
OEMBED_DOC = "https://docs.wistia.com/docs/wistia-and-oembed"

_TAIL = r"""[^\s"'<>()\[\]{}\\]*"""
_SCHEME = r"(?<![\w.+-])(?:https?:)?//"
_ID = r"[0-9a-z]{10}"
_FAST = _SCHEME + r"fast\.wistia\.(?:net|com)"
_PLAYER = _FAST + r"/embed/iframe/(?P<id>" + _ID + r")(?![\w-]|\.[\w-])(?:[?#]" + _TAIL + ")?"
_PAGE = (
    _SCHEME
    + r"[a-z0-9-]{1,63}\.(?:wistia\.com|wi\.st)/medias/(?P<id>"
    + _ID
    + r")(?![\w-]|\.[\w-])(?:[?#]"
    + _TAIL
    + ")?"
)
_OEMBED = _FAST + r"/oembed(?:\.(?:json|xml))?/?\?" + _TAIL
_SCRIPT_END = r"""[\"'][^>]{0,200}>\s{0,20}</script\s*>\s{0,200}"""
_E_V1 = r"<script\b[^>]{0,300}?\bsrc=[\"']" + _FAST + r"/assets/external/E-v1\.js" + _SCRIPT_END
_IFRAME = (
    r"<iframe\b(?=[^>]{0,2000}?\bsrc\s*=\s*[\"']?"
    + _FAST
    + r"/embed/iframe/"
    + _ID
    + r"(?![\w.-]))[^>]{0,2000}>(?:[^<]{0,500}</iframe\s*>)?"
    + r"(?:\s{0,200}"
    + _E_V1.removesuffix(r"\s{0,200}")
    + ")?"
)
# The async and popover embeds: [JSON-P script] [E-v1.js script] [responsive wrapper] container [swatch] close.
_ASYNC = (
    r"(?:<script\b[^>]{0,300}?\bsrc=[\"']"
    + _FAST
    + r"/embed/medias/(?P<jsonp>"
    + _ID
    + r")\.jsonp"
    + _SCRIPT_END
    + ")?"
    + r"(?:"
    + _E_V1
    + ")?"
    + r"(?P<wrap><div\b[^>]{0,300}?\bclass=[\"']wistia_responsive_padding[\"'][^>]{0,500}>\s{0,200}"
    + r"<div\b[^>]{0,300}?\bclass=[\"']wistia_responsive_wrapper[\"'][^>]{0,500}>\s{0,200})?"
    + r"<(?P<tag>div|span)\b[^>]{0,500}?\bclass=[\"'](?P<class>wistia_embed\s[^\"']{0,1000}?"
    + r"\bwistia_async_(?P<id>(?(jsonp)(?P=jsonp)|"
    + _ID
    + r"))\b[^\"']{0,1000})[\"'][^>]{0,1000}>"
    + r"(?:\s|&nbsp;){0,20}"
    + r"(?:<div\b[^>]{0,300}?\bclass=[\"']wistia_swatch[\"'][^>]{0,1000}>\s{0,50}<img\b[^>]{0,2000}>\s{0,50}"
    + r"</div\s*>\s{0,50})?"
    + r"</(?P=tag)\s*>"
    + r"(?(wrap)\s{0,200}</div\s*>\s{0,200}</div\s*>)"
)
# The <wistia-player> element: [embed/<id>.js] [player.js] [placeholder style] element.
_ELEMENT = (
    r"(?:<script\b[^>]{0,300}?\bsrc=[\"']"
    + _FAST
    + r"/embed/(?P<script>"
    + _ID
    + r")\.js"
    + _SCRIPT_END
    + ")?"
    + r"(?:<script\b[^>]{0,300}?\bsrc=[\"']"
    + _FAST
    + r"/player\.js"
    + _SCRIPT_END
    + ")?"
    + r"(?:<style\b[^>]{0,200}>\s{0,200}wistia-player\[media-id=[\"']?(?P<style>"
    + _ID
    + r")[\"']?\][^<]{0,2000}</style\s*>\s{0,200})?"
    + r"<wistia-player\b[^>]{0,3000}>\s{0,200}</wistia-player\s*>"
)

# Wistia's embed options in our words (docs.wistia.com embed options; the element takes them kebab-cased).
_SWITCHES = {"autoplay": "autoplay", "muted": "muted", "playsinline": "playsinline"}
_SECONDS = ("time", "current-time", "currenttime")
_POSTERS = ("stillurl", "still-url")
_LOOPS = ("endvideobehavior", "end-video-behavior")


def _read_options(pairs: list[tuple[str, str]]) -> tuple[dict[str, str], tuple[str, ...]]:
    """Our options from Wistia's (name, value) pairs, and the pairs no target takes as `name=value`."""
    options: dict[str, str] = {}
    unknown: list[str] = []
    for name, value in pairs:
        key = name.lower()
        switch = markup.switch(value) if key in _SWITCHES else None
        start = markup.seconds(value) if key in _SECONDS else None
        if switch is not None:
            options[_SWITCHES[key]] = switch
        elif start is not None:
            options["start"] = start
        elif key in _POSTERS and value:
            options["poster"] = value
        elif key in _LOOPS and value.lower() == "loop":
            options["loop"] = "1"
        else:
            unknown.append(f"{name}={value}")
    return options, tuple(unknown)


def _embed(
    match: re.Match[str],
    name: str,
    kind: str,
    video_id: str,
    pairs: list[tuple[str, str]],
    attributes: dict[str, str] | None = None,
) -> Embed:
    options, unknown = _read_options(pairs)
    return Embed(
        start=match.start(),
        end=match.end(),
        form=name,
        platform=PLATFORM,
        kind=kind,
        video_id=video_id,
        options=options,
        unknown=unknown,
        attributes=attributes or {},
    )


def _hashed(video_id: str | None) -> str | None:
    """The id when it is a hashed id: the patterns match hosts case-insensitively, but ids are lower case."""
    return video_id if video_id is not None and re.fullmatch(_ID, video_id) else None


def _player_id(url: str) -> str | None:
    found = re.fullmatch(_PLAYER, url, re.IGNORECASE)
    return _hashed(found.group("id")) if found else None


def _read_iframe(match: re.Match[str]) -> Embed | None:
    attributes = markup.attributes(match.group(0))
    src = attributes.get("src", "")
    video_id = _player_id(src)
    if video_id is None:
        return None
    kept = markup.kept_attributes(attributes)
    return _embed(match, "wistia.iframe", IFRAME, video_id, list(markup.query(src).items()), attributes=kept)


def _read_player_url(match: re.Match[str]) -> Embed | None:
    url = match.group(0)
    video_id = _player_id(url)
    if video_id is None:
        return None
    return _embed(match, "wistia.player-url", PLAYER_URL, video_id, list(markup.query(url).items()))


def _class_options(words: str) -> list[tuple[str, str]]:
    """The `name=value` words of an async container's class (the class names themselves are no options)."""
    return [(w.partition("=")[0], w.partition("=")[2]) for w in words.split() if "=" in w]


def _read_async(popover: bool) -> Callable[[re.Match[str]], Embed | None]:
    def read(match: re.Match[str]) -> Embed | None:
        if _hashed(match.group("id")) is None:
            return None
        pairs = _class_options(match.group("class"))
        is_popover = any(k.lower() == "popover" and markup.switch(v) == "1" for k, v in pairs)
        if is_popover is not popover:
            return None
        container = markup.attributes(match.group(0)[match.start("tag") - 1 - match.start() :])
        kept = {k: v for k, v in container.items() if k in ("style", "id")}
        pairs = [(k, v) for k, v in pairs if k.lower() != "popover"]
        name = "wistia.popover-embed" if popover else "wistia.async-embed"
        return _embed(match, name, SCRIPT, match.group("id"), pairs, attributes=kept)

    return read


def _read_element(match: re.Match[str]) -> Embed | None:
    element = match.group(0)[match.group(0).lower().rindex("<wistia-player") :]
    attributes = markup.attributes(element)
    video_id = attributes.get("media-id", "")
    if _hashed(video_id) is None or any(match.group(g) not in (None, video_id) for g in ("script", "style")):
        return None
    kept = markup.kept_attributes(attributes)
    pairs = [(k, v) for k, v in attributes.items() if k != "media-id" and k not in markup.KEPT_ATTRIBUTES]
    # A bare `autoplay`/`muted` attribute is on; `wistia-popover` is kept as a word the report names.
    return _embed(match, "wistia.player-element", ELEMENT, video_id, pairs, attributes=kept)


def _read_page(match: re.Match[str]) -> Embed | None:
    url = match.group(0)
    found = re.fullmatch(_PAGE, url, re.IGNORECASE)
    if found is None or _hashed(found.group("id")) is None:
        return None
    return _embed(match, "wistia.page-link", PAGE, found.group("id"), list(markup.query(url).items()))


def _read_oembed(match: re.Match[str]) -> Embed | None:
    params = markup.query(match.group(0))
    target = params.get("url", "").strip()  # parse_qsl has decoded it once, as the endpoint does
    parts = urlsplit(target)
    bare = f"//{parts.netloc}{parts.path}"
    video_id = _player_id(bare)
    if video_id is None:
        page = re.fullmatch(_PAGE, bare, re.IGNORECASE)
        video_id = _hashed(page.group("id")) if page else None
    if video_id is None:
        return None
    pairs = list(markup.query(target).items()) + [(k, v) for k, v in params.items() if k != "url"]
    return _embed(match, "wistia.oembed", OEMBED, video_id, pairs)


def _sample_async(video_id: str) -> str:
    return (
        f'<script src="https://fast.wistia.com/embed/medias/{video_id}.jsonp" async></script>\n'
        '<script src="https://fast.wistia.com/assets/external/E-v1.js" async></script>\n'
        f'<div class="wistia_embed wistia_async_{video_id}" style="height:360px;position:relative;width:640px">\n'
        '  <div class="wistia_swatch" style="height:100%;left:0;opacity:0;overflow:hidden;position:absolute;top:0;'
        'transition:opacity 200ms;width:100%;">\n'
        f'    <img src="https://fast.wistia.com/embed/medias/{video_id}/swatch" style="filter:blur(5px);height:100%;'
        'object-fit:contain;width:100%;" alt="" aria-hidden="true" onload="this.parentNode.style.opacity=1;" />\n'
        "  </div>\n"
        "</div>"
    )


def _sample_popover(video_id: str) -> str:
    return (
        '<script src="https://fast.wistia.com/assets/external/E-v1.js" async></script>\n'
        f'<span class="wistia_embed wistia_async_{video_id} popover=true" '
        'style="display:inline-block;height:360px;position:relative;width:640px">&nbsp;</span>'
    )


def _sample_element(video_id: str) -> str:
    return (
        f'<script src="https://fast.wistia.com/embed/{video_id}.js" async type="module"></script>\n'
        '<script src="https://fast.wistia.com/player.js" async></script>\n\n'
        "<style>\n"
        f"  wistia-player[media-id='{video_id}']:not(:defined) {{\n"
        "    background: center / contain no-repeat\n"
        f"      url('https://fast.wistia.com/embed/medias/{video_id}/swatch');\n"
        "    display: block;\n    filter: blur(5px);\n    padding-top: 56.25%;\n  }\n"
        "</style>\n\n"
        f'<wistia-player media-id="{video_id}"></wistia-player>'
    )


def _sample_iframe(video_id: str) -> str:
    return (
        f'<iframe src="https://fast.wistia.net/embed/iframe/{video_id}?seo=true&videoFoam=false" '
        'title="Dan Mills - Young and Free Video" allow="autoplay; fullscreen" allowtransparency="true" '
        'frameborder="0" scrolling="no" class="wistia_embed" name="wistia_embed" msallowfullscreen width="640" '
        'height="360"></iframe>'
    )


_ASYNC_PATTERN = re.compile(_ASYNC, re.IGNORECASE)

forms.register(
    Form(
        name="wistia.iframe",
        platform=PLATFORM,
        kind=IFRAME,
        pattern=re.compile(_IFRAME, re.IGNORECASE),
        read=_read_iframe,
        cite=IFRAME_DOC,
        sample=_sample_iframe,
        hint="wistia.",
    ),
    Form(
        name="wistia.player-url",
        platform=PLATFORM,
        kind=PLAYER_URL,
        pattern=re.compile(_PLAYER, re.IGNORECASE),
        read=_read_player_url,
        cite=OEMBED_DOC,
        sample=lambda video_id: f"https://fast.wistia.net/embed/iframe/{video_id}",
        hint="/embed/iframe/",
    ),
    Form(
        name="wistia.async-embed",
        platform=PLATFORM,
        kind=SCRIPT,
        pattern=_ASYNC_PATTERN,
        read=_read_async(popover=False),
        cite=ASYNC_DOC,
        sample=_sample_async,
        hint="wistia_async_",
    ),
    Form(
        name="wistia.popover-embed",
        platform=PLATFORM,
        kind=SCRIPT,
        pattern=_ASYNC_PATTERN,
        read=_read_async(popover=True),
        cite=POPOVER_DOC,
        sample=_sample_popover,
        hint="wistia_async_",
    ),
    Form(
        name="wistia.player-element",
        platform=PLATFORM,
        kind=ELEMENT,
        pattern=re.compile(_ELEMENT, re.IGNORECASE),
        read=_read_element,
        cite=ELEMENT_DOC,
        sample=_sample_element,
        hint="<wistia-player",
    ),
    Form(
        name="wistia.page-link",
        platform=PLATFORM,
        kind=PAGE,
        pattern=re.compile(_PAGE, re.IGNORECASE),
        read=_read_page,
        cite=OEMBED_DOC,
        sample=lambda video_id: f"https://home.wistia.com/medias/{video_id}",
        hint="/medias/",
    ),
    Form(
        name="wistia.oembed",
        platform=PLATFORM,
        kind=OEMBED,
        pattern=re.compile(_OEMBED, re.IGNORECASE),
        read=_read_oembed,
        cite=OEMBED_DOC,
        sample=lambda video_id: (
            f"https://fast.wistia.com/oembed?url=https%3A%2F%2Fhome.wistia.com%2Fmedias%2F{video_id}"
        ),
        hint="/oembed",
    ),
)
