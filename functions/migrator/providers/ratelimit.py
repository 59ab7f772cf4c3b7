"""Rate-limit headers in the dialects providers speak, read into one RateSignal (pure).

- `Retry-After`: delta-seconds or an HTTP-date (RFC 9110).
- `X-RateLimit-Limit` / `-Remaining` / `-Reset` / `-Retry-After`: the de facto headers;
  the limit's window is the provider's (api.video counts per minute), and `-Reset` is
  either seconds to go or an epoch time, told apart by size.
- The IETF fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy:
  "default";q=100;w=60` (quota q per window w seconds) and `RateLimit: "default";r=50;t=30`
  (r left, t seconds to reset), as Cloudflare sends them; and the older draft's
  `RateLimit-Limit` / `-Remaining` / `-Reset`.

Everything is untrusted: a value that does not parse is ignored, never an error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from ..retry import EPOCH_THRESHOLD, parse_retry_after
from .facts import RateSignal

# `key=value` parameters of a structured-field item: `"name";q=100;w=60`.
_PARAM = re.compile(r";\s*([a-z]+)\s*=\s*([0-9]+(?:\.[0-9]+)?)")
MAX_HEADER_CHARS = 512


def _lower(headers: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): str(v)[:MAX_HEADER_CHARS] for k, v in headers.items() if isinstance(v, str)}


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text.strip().split(",")[0])
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _seconds_or_epoch(value: float | None, now: float) -> float | None:
    if value is None:
        return None
    return max(0.0, value - now) if value > EPOCH_THRESHOLD else value


def _structured(text: str | None) -> dict[str, float]:
    """The parameters of the first item of a structured-field list (`"name";q=1;w=2, ...`)."""
    if not text:
        return {}
    first = text.split(",")[0]
    return {k: float(v) for k, v in _PARAM.findall(first)}


def read_rate_headers(headers: Mapping[str, str], now: float, window_s: float = 1.0) -> RateSignal:
    """Every rate-limit header the answer carries. `window_s` is the window an `X-RateLimit-Limit`
    counts over (1 for per second, 60 for per minute) where the headers do not say."""
    h = _lower(headers)
    retry_after = parse_retry_after(h.get("retry-after"), now)
    source = "Retry-After" if retry_after is not None else ""
    limit = remaining = reset = None

    policy = _structured(h.get("ratelimit-policy"))
    current = _structured(h.get("ratelimit"))
    if "q" in policy and policy.get("w", 0) > 0:
        limit = policy["q"] / policy["w"]
        source = source or "RateLimit-Policy"
    if "r" in current:
        remaining = current["r"]
    if "t" in current:
        reset = current["t"]

    x_limit = _number(h.get("x-ratelimit-limit") or h.get("ratelimit-limit"))
    if limit is None and x_limit is not None and x_limit > 0:
        limit = x_limit / window_s
        source = source or "X-RateLimit-Limit"
    if remaining is None:
        remaining = _number(h.get("x-ratelimit-remaining") or h.get("ratelimit-remaining"))
    if reset is None:
        reset = _seconds_or_epoch(_number(h.get("x-ratelimit-reset") or h.get("ratelimit-reset")), now)
    x_retry = _seconds_or_epoch(_number(h.get("x-ratelimit-retry-after")), now)
    if retry_after is None and x_retry is not None:
        retry_after, source = x_retry, source or "X-RateLimit-Retry-After"
    return RateSignal(retry_after=retry_after, limit_per_s=limit, remaining=remaining, reset_after=reset, source=source)
