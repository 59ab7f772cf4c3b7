"""What every target's player writes the same way: the kept attributes, an iframe, a responsive wrapper, a URL in
its text's escaping, the player options in the target's words, and the dispatch by kind (pure).

A target (rewrite/targets/<provider>.py) says only what is its own in a `Target`: its player URL, its media URLs,
its page and oEmbed URLs where it has them, its script embed or element where it has one, and how it writes each of
our OPTIONS. `render` turns that into the `Rendered` for one embed, or raises NoEquivalent.

Responsive: an embed whose span holds its responsive wrapper (Wistia's `wistia_responsive_padding` divs, Brightcove
Studio's and JW Player's padding divs: the sources' `wrap` groups) is written in the target's responsive form; so is
one a source marks with `options["responsive"] = "1"` or an attribute `data-responsive`. An iframe or element whose
own style fills a wrapper left outside the span keeps that style, so stays responsive as it was.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from urllib.parse import quote, urlsplit

from .. import markup
from ..model import (
    AUTOPLAY,
    CONTROLS,
    DASH,
    ELEMENT,
    HLS,
    IFRAME,
    LOOP,
    MP4,
    MUTED,
    OEMBED,
    PAGE,
    PLAYER_URL,
    SCRIPT,
    START,
    THUMBNAIL,
    TOKEN_MARKER,
    Destination,
    Embed,
    NoEquivalent,
    Rendered,
)

RESPONSIVE = "responsive"  # an option a source sets for a responsive wrapper it found inside its embed
MEDIA_KINDS = (HLS, DASH, MP4, THUMBNAIL)
# A value every player takes as its default: writing nothing keeps it, so it is never reported as dropped.
DEFAULTS = {AUTOPLAY: "0", MUTED: "0", LOOP: "0", CONTROLS: "1", START: "0"}
SCRIPT_AS_IFRAME = "script embed written as an iframe"
ELEMENT_AS_IFRAME = "player element written as an iframe"
OEMBED_AS_PLAYER = "no oEmbed endpoint documented: the player URL written"
# The responsive form most players document: a 16:9 padding-top box, the iframe filling it (e.g. Cloudflare's
# "Responsive" example, developers.cloudflare.com/stream/viewing-videos/using-the-stream-player).
WRAPPER_STYLE = "position: relative; padding-top: 56.25%;"
FILL_STYLE = "border: none; position: absolute; top: 0; left: 0; height: 100%; width: 100%;"

# (parameter, value) to write for one of our option values, or None: nothing to write (the player's default).
Write = Callable[[str], "tuple[str, str] | None"]


@dataclass(frozen=True)
class Params:
    """Player options in a target's words: its query parameters, its fragment parts, and ours it had no word for."""

    query: dict[str, str] = field(default_factory=dict)
    fragment: list[str] = field(default_factory=list)
    dropped: tuple[str, ...] = ()
    in_query: tuple[str, ...] = ()  # ours the query carries (`name=value`): dropped where only the fragment is kept


def on(param: str, value: str = "true") -> Write:
    """A switch written only when set on (off is every player's default)."""
    return lambda ours: (param, value) if ours == "1" else None


def switch(param: str, yes: str = "1", no: str = "0") -> Write:
    return lambda ours: (param, yes if ours == "1" else no)


def off(param: str, value: str = "false") -> Write:
    """A switch written only when set off (`controls`: on by default)."""
    return lambda ours: (param, value) if ours == "0" else None


def start(param: str, suffix: str = "") -> Write:
    return lambda ours: (param, f"{ours}{suffix}")


def text(param: str) -> Write:
    return lambda ours: (param, ours)


def translate(embed: Embed, table: Mapping[str, Write], hashed: Mapping[str, Write] | None = None) -> Params:
    """The embed's options in a target's words (`table`: query parameters; `hashed`: fragment parts, written
    `name` for a switch or `name=value`), and what it has no word for: its options and every unknown parameter."""
    query: dict[str, str] = {}
    fragment: list[str] = []
    dropped: list[str] = []
    in_query: list[str] = []
    for name, value in embed.options.items():
        if name == RESPONSIVE or DEFAULTS.get(name) == value:
            continue
        if name in table:
            pair = table[name](value)
            if pair is not None:
                query[pair[0]] = pair[1]
                in_query.append(f"{name}={value}")
        elif hashed is not None and name in hashed:
            pair = hashed[name](value)
            if pair is not None:
                fragment.append(pair[0] if pair[1] == "" else f"{pair[0]}={pair[1]}")
        else:
            dropped.append(f"{name}={value}")
    return Params(query, fragment, (*dropped, *embed.unknown), tuple(in_query))


def with_params(url: str, params: Params, fragment_sep: str = "&") -> str:
    """`url` with the params' query and fragment."""
    written = markup.with_query(url, params.query)
    if params.fragment:
        written += "#" + fragment_sep.join(params.fragment)
    return written


def in_text(url: str, original: str) -> str:
    """A URL as its text writes URLs: `&` as `&amp;` where the original was HTML-escaped."""
    return url.replace("&", "&amp;") if "&amp;" in original else url


def base_in(url: str | None, video_id: str | None) -> str | None:
    """The URL's scheme, host and path up to the segment that is the video's id (`https://h/x/<id>`), or None."""
    if not url or not video_id:
        return None
    parts = urlsplit(url)
    segments = parts.path.split("/")
    if video_id not in segments or not parts.scheme or not parts.netloc:
        return None
    path = "/".join(segments[: segments.index(video_id) + 1])
    return f"{parts.scheme}://{parts.netloc}{path}"


def segment(value: str) -> str:
    return quote(value, safe="")


def first(*values: str | None) -> str | None:
    return next((v for v in values if v), None)


def responsive(embed: Embed) -> bool:
    """Marked responsive by its source, or a fluid Video.js element (Brightcove's in-page `class="vjs-fluid"`)."""
    fluid = "vjs-fluid" in embed.attributes.get("class", "").split()
    return embed.options.get(RESPONSIVE) == "1" or "data-responsive" in embed.attributes or fluid


# The divs an embed's span opens with (after any scripts, as Wistia's async embed has them), and in them a padding
# box or a responsive class: the wrapper is part of what is replaced, so the target's own must take its place.
_LEADING_DIVS = re.compile(r"^\s*(?:<script\b[^>]*>\s*</script\s*>\s*)*((?:<div\b[^>]*>\s*)+)", re.IGNORECASE)
_WRAPPER_WORD = re.compile(r"padding(?:-top|-bottom)?\s*:\s*[\d.]+%|responsive", re.IGNORECASE)


def wrapped(original: str) -> bool:
    """Whether the embed's own text opens with a responsive wrapper."""
    divs = _LEADING_DIVS.match(original[:4000])
    return divs is not None and _WRAPPER_WORD.search(divs.group(1)) is not None


def kept(embed: Embed) -> dict[str, str]:
    """The embed's attributes a rewrite keeps, in their order (never its `src`)."""
    return markup.kept_attributes(embed.attributes)


def iframe(src: str, embed: Embed, allow: str | None = None, responsive_style: str | None = None) -> str:
    """`<iframe src=...>` with the embed's kept attributes; `allow` where the original had none and the target's
    document asks for one (Mux: "Keep the allow attribute"; Cloudflare's and Bunny's examples carry one without
    asking for it); when the source embed was responsive, the target's own responsive style where it documents one
    (Mux: `aspect-ratio`), else in a padding-top wrapper."""
    attributes = {"src": src, **kept(embed)}
    if allow and "allow" not in attributes:
        attributes["allow"] = allow
    if not responsive(embed):
        return f"<iframe{markup.write_attributes(attributes)}></iframe>"
    attributes.pop("width", None), attributes.pop("height", None)
    attributes["style"] = responsive_style or FILL_STYLE
    if responsive_style:
        return f"<iframe{markup.write_attributes(attributes)}></iframe>"
    inner = f"<iframe{markup.write_attributes(attributes)}></iframe>"
    return f'<div style="{html.escape(WRAPPER_STYLE)}">{inner}</div>'


def none(target: str, kind: str, why: str) -> NoEquivalent:
    return NoEquivalent(f"{target} has no {kind} URL for this video: {why}")


@dataclass(frozen=True)
class Target:
    """What one target writes: each callable raises NoEquivalent where the target has nothing for this video.

    `player(destination, params)`: the player URL (an iframe's src) with the options written in; `params(embed)`:
    the embed's options in the target's words; `media(kind, destination)`: (URL, notes) of an HLS, DASH, MP4 or
    thumbnail; `page`/`oembed`: the watch page and oEmbed URL where the target has them; `script`/`element`: its
    script embed and player element where it has them (else an iframe is written)."""

    name: str  # as a reason names it ("Mux")
    player: Callable[[Destination, Params], str]
    params: Callable[[Embed], Params]
    media: Callable[[str, Destination], tuple[str, tuple[str, ...]]]
    allow: str | None = None  # the iframe `allow` its document asks for
    responsive_style: str | None = None  # a responsive iframe's style, where the target documents one of its own
    page: Callable[[Destination, Params], tuple[str, tuple[str, ...]]] | None = None
    oembed: Callable[[Destination], str] | None = None
    script: Callable[[Embed, Destination, Params], Rendered] | None = None
    element: Callable[[Embed, Destination, Params], Rendered] | None = None


def render(target: Target, embed: Embed, destination: Destination, original: str) -> Rendered:
    """The target's equivalent of the embed's kind, or NoEquivalent; never an empty text."""
    kind = embed.kind
    if kind in (IFRAME, SCRIPT, ELEMENT) and not responsive(embed) and wrapped(original):
        embed = replace(embed, options={**embed.options, RESPONSIVE: "1"})
    if kind == THUMBNAIL and embed.detail.lower().endswith(".vtt"):  # Mux's storyboard: a WebVTT track of images
        raise NoEquivalent(f"{target.name} has no storyboard (a WebVTT of thumbnails) URL for this video")
    if kind in MEDIA_KINDS:
        url, notes = target.media(kind, destination)
        return done(in_text(url, original), kind, (*notes, *_all_dropped(embed)))
    params = target.params(embed)
    if kind == SCRIPT and target.script is not None:
        return target.script(embed, destination, params)
    if kind == ELEMENT and target.element is not None:
        return target.element(embed, destination, params)
    if kind in (IFRAME, SCRIPT, ELEMENT):
        note = {SCRIPT: (SCRIPT_AS_IFRAME,), ELEMENT: (ELEMENT_AS_IFRAME,)}.get(kind, ())
        text = iframe(target.player(destination, params), embed, target.allow, target.responsive_style)
        return done(text, IFRAME, (*note, *params.dropped))
    if kind == PAGE and target.page is not None:
        url, dropped = target.page(destination, params)
        return done(in_text(url, original), PAGE, dropped)
    if kind == OEMBED and target.oembed is not None:
        return done(in_text(target.oembed(destination), original), OEMBED, _all_dropped(embed))
    if kind in (PLAYER_URL, PAGE, OEMBED):
        note = (OEMBED_AS_PLAYER,) if kind == OEMBED else ()
        url = target.player(destination, params)
        return done(in_text(url, original), PLAYER_URL, (*note, *params.dropped))
    raise NoEquivalent(f"{target.name} writes nothing for a {kind!r} embed")


def done(text: str, kind: str, dropped: tuple[str, ...] = ()) -> Rendered:
    if not text.strip():
        raise NoEquivalent("the target wrote nothing")  # never rewrite an embed to nothing
    return Rendered(text, kind, tuple(dropped), TOKEN_MARKER in text)


def _all_dropped(embed: Embed) -> tuple[str, ...]:
    """A media URL carries no player: every option but a default one is dropped."""
    return (
        *(f"{k}={v}" for k, v in embed.options.items() if k != RESPONSIVE and DEFAULTS.get(k) != v),
        *embed.unknown,
    )
