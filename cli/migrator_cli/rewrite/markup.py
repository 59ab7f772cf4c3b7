"""Small readers and writers of what embeds are made of: an element's attributes, a URL's query, a switch (pure).

Shared by the source forms (which read them) and the target players (which write them), so an `&amp;` in an
attribute or a `#t=30s` fragment is understood the same way everywhere.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from urllib.parse import parse_qsl, quote, urlsplit

_ATTRIBUTE = re.compile(r"""([^\s"'<>/=]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+))?""")
_TAG_NAME = re.compile(r"<\s*([a-zA-Z][-a-zA-Z0-9]*)")
# Attributes of an iframe or player element a rewrite keeps as they were (the rest are the source player's own).
KEPT_ATTRIBUTES = (
    "title",
    "allow",
    "allowfullscreen",
    "webkitallowfullscreen",
    "mozallowfullscreen",
    "width",
    "height",
    "style",
    "class",
    "id",
    "loading",
    "frameborder",
    "referrerpolicy",
    "name",
)


def attributes(tag: str) -> dict[str, str]:
    """The attributes of the first tag in `tag` (`<iframe src="..." allowfullscreen>`), names lower-cased, values
    with their HTML entities decoded; a bare attribute's value is ""."""
    name = _TAG_NAME.match(tag)
    body = tag[name.end() :] if name else tag
    end = body.find(">")
    body = body[: end if end >= 0 else len(body)]
    found: dict[str, str] = {}
    for match in _ATTRIBUTE.finditer(body):
        key = match.group(1).lower()
        raw = match.group(2)
        if raw is None:
            value = ""
        elif raw[:1] in "\"'":
            value = raw[1:-1]
        else:
            value = raw
        found.setdefault(key, html.unescape(value))
    return found


def kept_attributes(values: Mapping[str, str]) -> dict[str, str]:
    """The attributes a rewrite keeps (KEPT_ATTRIBUTES), in their order."""
    return {name: value for name, value in values.items() if name in KEPT_ATTRIBUTES}


def write_attributes(values: dict[str, str]) -> str:
    """` name="value"` for each (a bare attribute for ""), values HTML-escaped."""
    parts = []
    for key, value in values.items():
        parts.append(f" {key}" if value == "" else f' {key}="{html.escape(value, quote=True)}"')
    return "".join(parts)


def query(url: str) -> dict[str, str]:
    """A URL's query parameters (the first of a repeated name), `&amp;` read as `&`."""
    found: dict[str, str] = {}
    for name, value in parse_qsl(urlsplit(html.unescape(url)).query, keep_blank_values=True):
        found.setdefault(name, value)
    return found


def fragment(url: str) -> str:
    return urlsplit(html.unescape(url)).fragment


def with_query(url: str, params: dict[str, str]) -> str:
    """`url` with `params` as its query (in order), values percent-encoded."""
    if not params:
        return url
    joined = "&".join(f"{quote(k, safe='')}={quote(v, safe=':/,')}" for k, v in params.items())
    return f"{url}{'&' if '?' in url else '?'}{joined}"


def switch(value: str | None) -> str | None:
    """A player switch in our words ("1"/"0") from a platform's (true, 1, yes, on; false, 0, no, off; bare = on)."""
    if value is None:
        return None
    text = value.strip().lower()
    if text in ("", "1", "true", "yes", "on", "autoplay", "muted", "loop"):
        return "1"
    if text in ("0", "false", "no", "off"):
        return "0"
    return None


_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s?)?$")


def seconds(value: str | None) -> str | None:
    """A start time in seconds ("90") from `90`, `90s`, `1m30s`, `1h2m3s` or `01:30`; None when it is none of them."""
    if value is None:
        return None
    text = value.strip().lower()
    if ":" in text:
        parts = text.split(":")
        if all(p.isdigit() for p in parts) and 1 < len(parts) <= 3:
            total = 0
            for part in parts:
                total = total * 60 + int(part)
            return str(total)
        return None
    match = _DURATION.match(text)
    if not text or not match or not any(match.groups()):
        return None
    hours, minutes, secs = match.groups()
    total_f = int(hours or 0) * 3600 + int(minutes or 0) * 60 + float(secs or 0)
    return str(int(total_f)) if total_f == int(total_f) else str(total_f)
