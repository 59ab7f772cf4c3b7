"""`migrator show ID`: one asset as the ledger holds it, its caption tracks included (pure rendering).

One consistent read of the item. The lease's token and the index keys are the ledger's
plumbing and are left out; everything else an operator asks about one asset is here: its
state and why, the provider's video, attempts and throttles, and each track's state,
attempts and reason.
"""

from __future__ import annotations

from datetime import UTC, datetime

from migrator.dynamo import plain

from .report import tracks_of

HIDDEN = frozenset({"lease_token", "state_shard", "due_lane", "tracks_lane", "track_states", "tracks"})
FIRST = ("asset_id", "state", "source_url", "remote_id", "title", "attempts", "throttles", "last_error")
TIMES = ("created_at", "updated_at", "claimed_at", "processing_at", "settled_at", "lease_until", "retry_after")


def asset_view(item: dict) -> dict:
    """The item as `show --json` prints it: plain JSON values, no plumbing, tracks as the report lists them."""
    doc = {k: plain(v) for k, v in item.items() if k not in HIDDEN}
    if item.get("tracks"):
        doc["tracks"] = tracks_of(item)
    return doc


def render_asset(item: dict) -> str:
    doc = asset_view(item)
    lines = []
    for key in FIRST + tuple(sorted(set(doc) - set(FIRST) - {"tracks"})):
        if key in doc and doc[key] is not None and not isinstance(doc[key], (dict, list)):
            value = doc[key]
            if key in TIMES and isinstance(value, (int, float)):
                value = datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            lines.append(f"{key:<20} {value}")
    tracks = doc.get("tracks") or []
    if tracks:
        lines.append(f"tracks ({len(tracks)})")
        for track in tracks:
            why = f": {track['error']}" if track.get("error") else ""
            tries = f", {track['attempts']} attempts" if track.get("attempts") else ""
            lines.append(f"  {track['key']:<30} {track['state']}{tries}{why}")
    return "\n".join(lines)
