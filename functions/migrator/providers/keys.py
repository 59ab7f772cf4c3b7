"""How our asset id travels to a provider: the hashed keys and references a provider can carry.

An asset id may be any text up to 255 characters, but headers carry Latin-1 at best and
providers cap their client-data fields, so what goes on the wire is derived from the
exact id, stably, and is ASCII. The exact id travels too wherever the provider keeps
free text, so a webhook or a listing can name the asset.
"""

from __future__ import annotations

import hashlib

# Mux's passthrough holds at most 255 characters (counted, to be safe, in UTF-16 units as
# JavaScript counts them: an astral character takes two).
PASSTHROUGH_MAX = 255


def idempotency_key(asset_id: str, generation: int = 0) -> str:
    """The create's idempotency key: stable for an asset, ASCII whatever its id holds.

    `generation` moves on when an operator re-arms a rejected asset: its retry must make a
    new video, not be answered with the errored one the first key made.
    """
    digest = hashlib.sha256(f"{generation}\n{asset_id}".encode()).hexdigest()
    return f"vm-{digest[:48]}"


def asset_tag(asset_id: str) -> str:
    """A short, ASCII, per-asset tag (every generation shares it), for fields capped at 64
    characters that a provider can filter on (Cloudflare's `creator`)."""
    return "vm-" + hashlib.sha256(asset_id.encode()).hexdigest()[:32]


def passthrough_for(asset_id: str) -> str:
    """Mux's `passthrough`: the exact id when it fits, else `sha256:<hex>` of it (a webhook
    for such an asset cannot name it, and reconcile's poll settles it by its recorded id)."""
    if len(asset_id.encode("utf-16-le")) // 2 <= PASSTHROUGH_MAX:
        return asset_id
    return "sha256:" + hashlib.sha256(asset_id.encode()).hexdigest()


def track_ref(key: str) -> str:
    """A caption track's reference at the provider (Mux's track `passthrough`, 255 characters at most):
    its key (messages.track_key) when it fits, else `sha256:<hex>` of it."""
    if len(key.encode("utf-16-le")) // 2 <= PASSTHROUGH_MAX:
        return key
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()
