"""Rewriting one text: find its embeds, decide each one's fate from the map, splice in the target's equivalents.

`decide` is pure: an embed, what the map says about its video and the target's player give a `Rewritten` or a `Left`
with its reason. `Engine.rewrite` is the `TextRewrite` the containers call for every plain text they take out of a
file (a page, a SQL string value, a serialized string, a CSV cell); it records each outcome in the report, under the
file the caller names (`Engine.at`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .forms import find, non_overlapping
from .idmap import IdMap, Missing
from .model import HLS, MP4, PAGE, Embed, NoEquivalent, Player
from .outcomes import ALREADY, Left, Outcome, Rewritten
from .report import Report

# A URL list's own URLs, looked up whole in the map (idmap.find("url", ...)); stops where HTML, JSON or Markdown
# would end a URL. Trailing sentence punctuation is not part of it.
_URL = re.compile(r"""https?://[^\s"'<>()\[\]{}\\`|^]+""", re.IGNORECASE)
_TRAILING = ".,;:!?"
_STREAM_SUFFIXES = (".m3u8",)
_LINKED = re.compile(r"""(?:\bhref\s*=\s*["']?|\]\()$""", re.IGNORECASE)
_SCRIPT = re.compile(r"""<script\b[^>]{0,2000}?\bsrc\s*=\s*["']([^"']{1,2000})["'][^>]{0,2000}>\s*</script\s*>""", re.I)


def decide(embed: Embed, original: str, idmap: IdMap, players: Mapping[str, Player]) -> Outcome:
    """What becomes of one embed. A video the map does not send anywhere keeps its embed, with the reason; nothing is
    ever rewritten to an empty text."""
    found = idmap.find(embed.platform, embed.video_id)
    if isinstance(found, Missing):
        if found.reason == "not in the map" and idmap.is_target(embed.video_id):
            return Left(embed, ALREADY)
        return Left(embed, found.reason, found.detail, found.asset_id)
    player = players.get(found.provider)
    if player is None:
        return Left(embed, "no player", f"no embed forms are known for the target {found.provider!r}", found.asset_id)
    try:
        rendered = player.render(embed, found, original)
    except NoEquivalent as exc:
        return Left(embed, "no equivalent", str(exc), found.asset_id)
    if not rendered.text.strip():
        return Left(embed, "no equivalent", f"{found.provider} wrote nothing for a {embed.kind}", found.asset_id)
    return Rewritten(embed, rendered)


class Engine:
    """The TextRewrite of one run: the map, the target players, and the report every outcome goes to."""

    def __init__(self, idmap: IdMap, players: Mapping[str, Player] | None = None, report: Report | None = None):
        if players is None:
            from .targets import PLAYERS

            players = PLAYERS
        self.idmap = idmap
        self.players = players
        self.report = report if report is not None else Report()
        self.where = ""

    def at(self, where: str) -> None:
        """Name the file the next texts come from (the report lists what was left by file)."""
        self.where = where

    def __call__(self, text: str) -> str:
        return self.rewrite(text)

    def rewrite(self, text: str) -> str:
        embeds = find(text)
        if self.idmap.has_urls():
            # A listed URL inside a form's embed is that embed's, not a second one.
            embeds = non_overlapping([*embeds, *_listed_urls(text, self.idmap)])
        if not embeds:
            return text
        outcomes = [decide(e, text[e.start : e.end], self.idmap, self.players) for e in embeds]
        staying = {o.embed.platform for o in outcomes if isinstance(o, Left) and o.reason != ALREADY}
        parts: list[str] = []
        position = 0
        for outcome in outcomes:
            embed = outcome.embed
            original = text[embed.start : embed.end]
            self.report.record(outcome, self.where)
            parts.append(text[position : embed.start])
            if isinstance(outcome, Left):
                parts.append(original)
            else:
                parts.append(outcome.rendered.text)
                if embed.platform in staying:  # another embed of this platform stays: keep the library it loads
                    parts.extend(library_scripts(original, embed.video_id))
            position = embed.end
        parts.append(text[position:])
        return "".join(parts)


def library_scripts(original: str, video_id: str) -> list[str]:
    """The player library scripts an embed's text loads (Wistia's E-v1.js, Brightcove's index.min.js, Kaltura's
    embedIframeJs): a page often loads one only once, with its first embed, so when a later embed of the same
    platform stays (left behind, rejected), the library must stay too. A script naming the video is the video's own
    (Wistia's JSON-P), not the library."""
    return [m.group(0) for m in _SCRIPT.finditer(original) if video_id not in m.group(1)]


def _listed_urls(text: str, idmap: IdMap):
    """URLs of the text that a URL-list source named: the map knows them by their whole URL (a URL it does not know
    is no embed: not reported). A URL a link points at (`href="..."`, Markdown's `](...)`) is the video's page to
    the reader, so the target's player or page takes its place; one a <video> or <source> plays stays a file (an
    HLS or MP4 URL)."""
    for match in _URL.finditer(text):
        url = match.group(0).rstrip(_TRAILING)
        found = idmap.find("url", url)
        if isinstance(found, Missing) and found.reason == "not in the map":
            continue
        path = url.split("?", 1)[0].split("#", 1)[0].lower()
        if _LINKED.search(text[max(0, match.start() - 8) : match.start()]):
            kind = PAGE
        else:
            kind = HLS if path.endswith(_STREAM_SUFFIXES) else MP4
        yield Embed(match.start(), match.start() + len(url), "https.listed-url", "https", kind, url, detail=url)
