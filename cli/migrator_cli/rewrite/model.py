"""What `migrator rewrite` finds in a site's text, where the map says each video now plays, and what it writes (pure).

The three sides meet here, so each can be built and tested alone:
- a source platform's *forms* (rewrite/sources/<platform>.py) find `Embed`s in a text: an iframe, a script embed,
  an HLS, MP4 or thumbnail URL, a page or oEmbed link, each with the player options it carried;
- the *map* (rewrite/idmap.py) says for a (platform, id) where the video now is: a `Destination`, or why it is not
  there (left behind, rejected, not ready);
- a target's *player* (rewrite/targets/<provider>.py) writes the same kind of thing for the `Destination`: a
  `Rendered`, with the options it had no equivalent for.
The engine (rewrite/engine.py) runs them over one text; containers (rewrite/containers/) take the texts out of files,
SQL dumps, WXR exports and CSV columns and put them back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

# What an embed is; a target writes the same kind where it has one (`Rendered.kind` says what it wrote).
IFRAME = "iframe"  # an <iframe> element (its src is the player URL)
SCRIPT = "script"  # a script embed: a <script> and/or the element it fills (Wistia async, kWidget, <video-js>, ...)
ELEMENT = "element"  # a player web component standing alone (<mux-player>, <wistia-player>, <stream>)
PLAYER_URL = "player_url"  # a bare player URL (in text, JSON, an href): the iframe's src without its element
PAGE = "page"  # the video's page on the platform (vimeo.com/123, *.wistia.com/medias/abc)
OEMBED = "oembed"  # an oEmbed endpoint URL naming the video
HLS = "hls"
DASH = "dash"
MP4 = "mp4"
THUMBNAIL = "thumbnail"
KINDS = (IFRAME, SCRIPT, ELEMENT, PLAYER_URL, PAGE, OEMBED, HLS, DASH, MP4, THUMBNAIL)

# Player options in our words: a form reads its platform's parameters into these, a target writes its own from them.
# Values are strings: "1"/"0" for switches, seconds for `start`, the text for the rest.
AUTOPLAY, MUTED, LOOP, START, CONTROLS, PLAYSINLINE, POSTER, CAPTIONS = (
    "autoplay",
    "muted",
    "loop",
    "start",
    "controls",
    "playsinline",
    "poster",
    "captions",
)
OPTIONS = (AUTOPLAY, MUTED, LOOP, START, CONTROLS, PLAYSINLINE, POSTER, CAPTIONS)

# Where a token goes in a rewritten URL whose video needs one (signed or private at the target): the site must mint
# it (docs/rewrite.md#signed-embeds). A literal that cannot play and is easy to grep for.
TOKEN_MARKER = "MIGRATOR-TOKEN-REQUIRED"


@dataclass(frozen=True)
class Embed:
    """One embed or link found in a text: its span, its platform's video, and what it said to the player."""

    start: int
    end: int
    form: str  # the form that found it, `<platform>.<name>` (e.g. "vimeo.player-iframe"): report and corpus key
    platform: str  # the source platform, as the map's `source_platform` names it (vimeo, wistia, s3, https, ...)
    kind: str  # one of KINDS
    video_id: str  # the id the embed names, as the map keys it (Mux: a playback id, found by alias; S3: s3://b/k)
    options: Mapping[str, str] = field(default_factory=dict)  # OPTIONS it set
    unknown: tuple[str, ...] = ()  # parameters it carried that no target takes (`name=value`): reported as dropped
    attributes: Mapping[str, str] = field(default_factory=dict)  # an element's attributes to keep (title, allow, ...)
    private: bool = False  # it carried a signature, token or privacy hash: the source video was not public
    detail: str = ""  # e.g. the Vimeo hash, a JW player id, a Brightcove player: what a same-platform target reuses

    @property
    def span(self) -> tuple[int, int]:
        return self.start, self.end


@dataclass(frozen=True)
class Destination:
    """Where the map says a video now plays (an export row's columns; cutover.COLUMNS)."""

    asset_id: str
    provider: str  # the target: mux, cloudflare, apivideo, bunny, jwplayer, vimeo, generic, aws
    remote_id: str | None = None
    playback_id: str | None = None
    hls_url: str | None = None
    player_url: str | None = None
    thumbnail_url: str | None = None
    privacy: str | None = None
    signed: bool = False  # its playback needs a token the site must mint
    # What the operator told us about the target that no row holds (`--target-setting K=V`): e.g. `player_id` (JW
    # Player's player for script embeds), `library_id` and `cdn_host` (Bunny), `customer_code` (Cloudflare).
    settings: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Rendered:
    """What a target wrote in an embed's place."""

    text: str
    kind: str  # the kind written: the embed's own, or the nearest the target has (a script embed -> an iframe)
    dropped: tuple[str, ...] = ()  # options/parameters the target's player has no equivalent for (reported)
    marked: bool = False  # it holds TOKEN_MARKER: the site must add a token


class NoEquivalent(Exception):
    """The target has nothing of this kind for this video (e.g. no HLS URL recorded, no MP4 rendition): the embed is
    left as it was and reported with this reason."""


@dataclass(frozen=True)
class Form:
    """One documented embed form of a source platform: a pattern and how to read a match of it.

    `read` returns None for a look-alike the pattern caught (a blog path on vimeo.com, an id of the wrong shape):
    the text is then left alone and never reported as an embed. `cite` is the platform document the form comes from;
    `sample(video_id)` writes the form as the document shows it (the corpus and the demo's sample site use it)."""

    name: str  # `<platform>.<name>`
    platform: str
    kind: str
    pattern: re.Pattern[str]
    read: Callable[[re.Match[str]], Embed | None]
    cite: str
    sample: Callable[[str], str]
    hint: str = ""  # a literal every match contains (lower case), to skip texts without it cheaply

    def find(self, text: str, start: int = 0) -> list[Embed]:
        found = []
        for match in self.pattern.finditer(text, start):
            embed = self.read(match)
            if embed is not None:
                found.append(embed)
        return found


@dataclass(frozen=True)
class Player:
    """A target's embed forms: `render(embed, destination)` writes the target's equivalent of the embed's kind for
    the destination, or raises NoEquivalent. `cite` is the target's embed document."""

    provider: str
    render: Callable[[Embed, Destination, str], Rendered]  # (embed, where it is now, the embed's original text)
    cite: str
    options: tuple[str, ...] = ()  # the OPTIONS its player takes (the rest are dropped and reported)
    # What one row's URLs show of the account (Stream's customer host, Bunny's library and pull zone): a signed row's
    # map holds no URL, so its embed is built on what the map's other rows showed (idmap.IdMap learns it).
    learn: Callable[[Destination], Mapping[str, str]] | None = None
