"""The generic (seed contract) target: only what the map's URLs give, its player, HLS and thumbnail (pure).

The contract documents a video's optional `playback` object `{policy, hls, player, thumbnail}` and nothing about a
player's parameters (providers/generic.py `read_playback`; docs/providers.md "generic"): every option is reported,
an MP4 or DASH has no URL, and a signed video's URL carries the marker as `?token=` (our convention for it: the
contract documents no signing).
"""

from __future__ import annotations

from .. import markup
from ..model import HLS, THUMBNAIL, TOKEN_MARKER, Destination, Embed, NoEquivalent, Player
from .common import Params, Target, none, render, translate

CITE = "docs/providers.md#generic"
NAME = "the generic target"


def signed(url: str, destination: Destination) -> str:
    return markup.with_query(url, {"token": TOKEN_MARKER}) if destination.signed else url


def player(destination: Destination, params: Params) -> str:
    if not destination.player_url:
        raise NoEquivalent(f"{NAME} has no player URL for this video: the map records none")
    return signed(destination.player_url, destination)


def media(kind: str, destination: Destination) -> tuple[str, tuple[str, ...]]:
    url = {HLS: destination.hls_url, THUMBNAIL: destination.thumbnail_url}.get(kind)
    if not url:
        why = "the map records none" if kind in (HLS, THUMBNAIL) else "the contract records only HLS and thumbnails"
        raise none(NAME, kind, why)
    return signed(url, destination), ()


def params(embed: Embed) -> Params:
    return translate(embed, {})


TARGET = Target(NAME, player, params, media)
PLAYER = Player("generic", lambda embed, destination, original: render(TARGET, embed, destination, original), CITE)
