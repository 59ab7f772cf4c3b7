"""The profiles by name, as the platforms package registered them: what the engine asks for the active profile.

A leaf of the engine: it imports no profile and nothing of the simulator's, so that the engine (config.py checks a
profile's name and takes its limits here; the pipeline, processing and the source side answer through the profile)
and the profiles (which build on the engine) both stand on it without a circle. infra/sim/platforms/__init__.py
fills it, once, with one instance of each profile class: importing anything of infra.sim imports the platforms
package first (infra/sim/__init__.py), so it is full before any simulator is configured.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_PROFILES: dict[str, Any] = {}


def install(profiles: Iterable[Any]) -> dict[str, Any]:
    """Register each profile under its class's `name`, in the order given; a name taken twice is an error."""
    for profile in profiles:
        if not profile.name or profile.name in _PROFILES:
            raise ValueError(f"a simulator profile's name is empty or taken twice: {profile.name!r}")
        _PROFILES[profile.name] = profile
    return dict(_PROFILES)


def names() -> tuple[str, ...]:
    """Every profile's name, in the order they were registered."""
    return tuple(_PROFILES)


def profile(name: str) -> Any:
    """The profile called `name` (an infra.sim.profile.Profile); KeyError when there is none."""
    return _PROFILES[name]


def has(name: str) -> bool:
    return name in _PROFILES
