"""What a target's simulator holds of a video's extras at the end of a migration (issue 42), read through the
platform's own API as a player or the platform's own client would read it, never from what was sent.

One module per target (`held.<target>`), each with two readers over the simulator (`infra.sim.core.ProviderSim`, its
account in `sim.config`):
- `extras(sim, remote_id) -> HeldExtras`: the video's thumbnail and chapters;
- `collections(sim) -> list[HeldCollection]`: every collection the account holds (a second one of a name is a
  duplicate the test must see), each with its videos in the target's own order.
`extras_of(target, sim, remote_id)` and `collections_of(target, sim)` pick the module.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class HeldExtras:
    """A video's extras as the target shows them."""

    # The custom image a player is served (its bytes as served), None where the video shows its own frame.
    thumbnail: bytes | None = None
    # Whether the served image is the uploaded file unchanged (False where the platform re-encodes or serves its own
    # rendition: then only its being custom is checked).
    thumbnail_as_uploaded: bool = True
    # The frame picked as the poster, in seconds, where the target keeps a time (Mux, Cloudflare, Bunny); else None.
    thumbnail_time_s: float | None = None
    # (start in seconds, title) of each chapter, in start order; () where the video holds none.
    chapters: tuple[tuple[float, str], ...] = ()


@dataclass(frozen=True)
class HeldCollection:
    """A collection the target's account holds, with its videos in the target's own order."""

    remote_id: str
    name: str
    members: tuple[str, ...]  # the target's video ids
    ordered: bool  # whether the target keeps an order of its own for it (a showcase, a manual playlist)


def _module(target: str):
    return importlib.import_module(f"{__name__}.{target}")


def extras_of(target: str, sim, remote_id: str) -> HeldExtras:
    return _module(target).extras(sim, remote_id)


def collections_of(target: str, sim) -> list[HeldCollection]:
    return _module(target).collections(sim)
