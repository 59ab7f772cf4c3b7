"""Settling an asset from what its provider reports: the forward-only ledger move, then the drift canary.

The webhook (in its own transaction with the event record), reconcile's poll and the
uploader's adoption of a video an earlier try made all end the same way: the asset goes
to ready or rejected as the provider says, never backward, and a ready asset whose
provider duration differs from its source's is flagged.
"""

from __future__ import annotations

from dataclasses import dataclass

from .canary import drifted
from .ledger import Ledger
from .providers import Video


@dataclass(frozen=True)
class Settled:
    won: bool  # False: already terminal, or the ledger records another video
    drift_s: float | None = None  # flagged drift, when over the tolerance


def settle_reported(
    ledger: Ledger, asset_id: str, video: Video, remote_id: str | None, now: float, drift_tolerance_s: float
) -> Settled:
    """Move `asset_id` to the state `video` reports (ready or rejected) and run the canary; not won when the
    video reports neither (the provider still works on it: nothing to settle)."""
    if video.target is None:
        return Settled(False)
    result = ledger.settle(
        asset_id,
        video.target,
        video.remote_id or remote_id,
        now,
        provider_duration_s=video.duration_s,
        error=video.error,
        playback=video.playback,
    )
    if not result.won:
        return Settled(False)
    return Settled(True, flag_drift(ledger, asset_id, result.current or {}, drift_tolerance_s, now))


def flag_drift(ledger: Ledger, asset_id: str, settled: dict, tolerance_s: float, now: float) -> float | None:
    """The canary on a settled item: flag it when its durations differ by more than the tolerance."""
    drift = drifted(settled, tolerance_s)
    if drift is not None:
        ledger.flag_drift(asset_id, drift, now)
    return drift
