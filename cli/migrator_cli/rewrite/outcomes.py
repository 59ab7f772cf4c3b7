"""What became of one embed: rewritten (with what the target wrote) or left (with the reason) (pure types)."""

from __future__ import annotations

from dataclasses import dataclass

from .model import Embed, Rendered

ALREADY = "already at the target"  # a second run meets what the first wrote: no one's problem


@dataclass(frozen=True)
class Rewritten:
    embed: Embed
    rendered: Rendered


@dataclass(frozen=True)
class Left:
    embed: Embed
    reason: str  # Missing.reason, ALREADY, "no equivalent", "no player"
    detail: str = ""
    asset_id: str | None = None


Outcome = Rewritten | Left
