"""Each target provider's player (rewrite/targets/<provider>.py): what `migrator rewrite` writes in an embed's place."""

from __future__ import annotations

from ..model import Player
from . import apivideo, aws, bunny, cloudflare, generic, jwplayer, mux, vimeo

PLAYERS: dict[str, Player] = {
    module.PLAYER.provider: module.PLAYER
    for module in (mux, cloudflare, apivideo, bunny, jwplayer, vimeo, generic, aws)
}


def player_for(provider: str) -> Player:
    """The target's player; a provider no module writes for is an error that names the ones there are."""
    try:
        return PLAYERS[provider]
    except KeyError:
        raise KeyError(f"no rewrite target {provider!r}: one of {', '.join(sorted(PLAYERS))}") from None
