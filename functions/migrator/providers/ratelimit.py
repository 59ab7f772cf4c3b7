"""Rate-limit headers in the dialects providers speak, read into one RateSignal (pure).

- `Retry-After`: delta-seconds or an HTTP-date (RFC 9110).
- `X-RateLimit-Limit` / `-Remaining` / `-Reset` / `-Retry-After`: the de facto headers;
  the limit's window is the provider's to document (api.video counts per minute, the
  generic contract per second, Mux documents none: a limit without a window is not a
  rate, and is not read as one), and `-Reset` is either seconds to go or an epoch time,
  told apart by size.
- The IETF fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy:
  "default";q=100;w=60` (quota q per window w seconds) and `RateLimit: "default";r=50;t=30`
  (r left, t seconds to reset), as Cloudflare sends them; and the older drafts'
  `RateLimit-Limit` / `-Remaining` / `-Reset`, whose limit has a window only when a quota
  policy follows it (`RateLimit-Limit: 10, 10;w=1`): Cloudflare's older `ratelimit-limit:
  1200` has none (its 1,200 are per 5 minutes), so it is not a rate either.

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


def _older_draft_limit(text: str | None) -> float | None:
    """The older IETF drafts' `RateLimit-Limit`, per second: only from a quota policy with a window
    (`10, 10;w=1, 50;w=60`: the first one); a bare number says nothing about its window."""
    for item in (text or "").split(",")[1:]:
        quota, params = _number(item.split(";")[0]), _structured(";" + item.split(";", 1)[-1])
        if quota is not None and quota > 0 and params.get("w", 0) > 0:
            return quota / params["w"]
    return None


def read_rate_headers(headers: Mapping[str, str], now: float, window_s: float | None = 1.0) -> RateSignal:
    """Every rate-limit header the answer carries. `window_s` is the window an `X-RateLimit-Limit`
    counts over (1 for per second, 60 for per minute) where the headers do not say; None where
    the provider documents none: the stated limit is then not read as a rate."""
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

    x_limit = _number(h.get("x-ratelimit-limit"))
    if limit is None and x_limit is not None and x_limit > 0 and window_s:
        limit = x_limit / window_s
        source = source or "X-RateLimit-Limit"
    if limit is None and "ratelimit-limit" in h:
        limit = _older_draft_limit(h["ratelimit-limit"])
        source = source or ("RateLimit-Limit" if limit is not None else "")
    if remaining is None:
        remaining = _number(h.get("x-ratelimit-remaining") or h.get("ratelimit-remaining"))
    if reset is None:
        reset = _seconds_or_epoch(_number(h.get("x-ratelimit-reset") or h.get("ratelimit-reset")), now)
    x_retry = _seconds_or_epoch(_number(h.get("x-ratelimit-retry-after")), now)
    if retry_after is None and x_retry is not None:
        retry_after, source = x_retry, source or "X-RateLimit-Retry-After"
    return RateSignal(retry_after=retry_after, limit_per_s=limit, remaining=remaining, reset_after=reset, source=source)
