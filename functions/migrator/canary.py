"""The duration-drift canary (seed 000): a provider duration that differs from the source's.

A video that comes back shorter or longer than its source by more than a tolerance
(half a second by default) is the sign of a truncated fetch or a bad transcode. The
asset is still settled as the provider says; it is flagged (`drift_s`), counted in
a metric, and listed by `migrator report --drift`.
"""

from __future__ import annotations

import math
from decimal import Decimal

DEFAULT_TOLERANCE_S = 0.5


def _seconds(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


def duration_drift(source_s: object, provider_s: object) -> float | None:
    """provider - source in seconds, or None when either is unknown."""
    source, provider = _seconds(source_s), _seconds(provider_s)
    if source is None or provider is None:
        return None
    return round(provider - source, 3)


def drifted(item: dict, tolerance_s: float = DEFAULT_TOLERANCE_S) -> float | None:
    """The drift of a settled ledger item when it is over the tolerance, else None."""
    drift = duration_drift(item.get("duration_s"), item.get("provider_duration_s"))
    if drift is None or abs(drift) <= tolerance_s:
        return None
    return drift
