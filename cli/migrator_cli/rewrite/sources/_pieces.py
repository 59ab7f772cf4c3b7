"""Regex pieces and readers shared by the Mux, Cloudflare, api.video and object-URL forms (pure).

Hosts are exact: a URL starts at its scheme (`https://`, `http://` or `//`) and its host is followed by `/`; a bare URL
runs to the first character that cannot be in one (whitespace, a quote, `<`, `>`, `(`, `)`, `[`, `]`, `\\`), so an
`&amp;` in its query is kept (an `&` right after its path ends it: it was another URL's parameter). Every
repetition is bounded, so a pattern cannot backtrack without limit over a large dump.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from .. import markup
from ..model import AUTOPLAY, CAPTIONS, CONTROLS, LOOP, MUTED, PLAYSINLINE, POSTER, START

URL_SCHEME = r"(?:https?:)?//"
SCHEME = r"(?<![\w.+-])" + URL_SCHEME  # not inside a longer word or URL scheme ("xhttps://")
# What may follow a path in a bare URL (a query, a fragment) and where the URL ends.
TAIL = r"""(?:[?#][^\s"'<>()\[\]\\]{0,4000})?"""
# `&` ends a URL that has no query of its own: it is then inside another URL's query (`?u=https://.../v.m3u8&x=1`).
END = r"""(?![^\s"'<>()\[\]\\&])"""
QUOTED_URL_TAIL = r"""(?:[?#][^"'<>]{0,4000})?"""


def iframe_pattern(src: str) -> re.Pattern[str]:
    """A whole `<iframe ...>...</iframe>` whose src (quoted) matches `src` (a pattern of the URL up to its query)."""
    return re.compile(
        r"<iframe\b[^>]{0,2000}?(?<![\w-])src\s*=\s*([\"'])(?P<src>" + src + QUOTED_URL_TAIL + r")\1"
        r"[^>]{0,2000}>[^<]{0,500}</iframe\s*>",
        re.IGNORECASE,
    )


def url_pattern(path: str) -> re.Pattern[str]:
    """A bare URL: `path` (its scheme, host and path), then a query or fragment, to where a URL ends."""
    return re.compile(r"(?P<src>" + path + TAIL + r")" + END)


def read_params(
    params: Mapping[str, str],
    names: Mapping[str, str],
    skip: Iterable[str] = (),
) -> tuple[dict[str, str], tuple[str, ...]]:
    """Options (our words) from a platform's parameters as `names` maps them (platform name -> option), and the
    rest as `name=value` in `unknown`; `skip` names are neither (a token, the id itself)."""
    options: dict[str, str] = {}
    unknown: list[str] = []
    skipped = set(skip)
    for name, value in params.items():
        if name in skipped:
            continue
        option = names.get(name)
        read = _READERS[option](value) if option in _READERS else None
        if option and read is not None:
            options[option] = read
            if option == AUTOPLAY and value.strip().lower() == "muted":
                options.setdefault(MUTED, "1")  # Mux Player's autoplay="muted": it starts muted
        else:
            unknown.append(f"{name}={value}" if value != "" else name)
    return options, tuple(unknown)


def _autoplay(value: str) -> str | None:
    # Mux Player also takes "any" (autoplay by any means): autoplay on, in our words.
    return "1" if value.strip().lower() == "any" else markup.switch(value)


def _text(value: str) -> str | None:
    return value or None


_READERS: dict[str, Callable[[str], str | None]] = {
    AUTOPLAY: _autoplay,
    MUTED: markup.switch,
    LOOP: markup.switch,
    CONTROLS: markup.switch,
    PLAYSINLINE: markup.switch,
    START: markup.seconds,
    POSTER: _text,
    CAPTIONS: _text,
}


def params_of(url: str) -> dict[str, str]:
    """A URL's query parameters, then its fragment's when it has `name=value` pairs (`#t=30`)."""
    found = markup.query(url)
    fragment = markup.fragment(url)
    if fragment and "=" in fragment and ";" not in fragment:
        for pair in fragment.split("&"):
            name, _, value = pair.partition("=")
            found.setdefault(name, value)
    return found
