"""bench/pacing's scenarios: each a provider simulator's limit and faults, the stack's settings, and the targets its
drain is held to (bench/pacing.py's docstring lists them as a table); and each one's ideal drain time."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

CLEAN = "configured = true limit, no faults"
ENCODE_S = 20.0  # the Cloudflare row's encode time
IN_FLIGHT = 120  # Cloudflare Stream's cap on videos queued or encoding at once


@dataclass(frozen=True)
class Scenario:
    name: str
    today: dict | None  # the old stack's PROVIDER_RATE_LIMIT; None: the new pacer only
    new: dict  # the new stack's PROVIDER_RATE_LIMIT (ceiling) and START_RATE
    sim: dict = field(default_factory=dict)
    schedule: tuple = ()  # (at_s, rate) changes of the provider's limit
    targets: tuple = (1.10, 1.0)  # drain ratio, 429s per 100 creates
    provider: str = "generic"
    assets: int | None = None  # N for this scenario (default: --assets)
    ideal: str = "rate"  # "rate": N at the limit; "in_flight": N x encode / in-flight cap
    ideal_rate: float | None = None  # creates/s the limit leaves when it counts every request, not creates alone
    env: dict = field(default_factory=dict)  # extra uploader environment (fault injection)
    stack: dict = field(default_factory=dict)  # extra stack parameters
    refused: float = 0.0  # share of sources the provider refuses at create
    versus: str | None = None  # the clean row this one's drain is held to, and by how much
    versus_target: float = 1.10


def scenarios(n: int, limit: float) -> list[Scenario]:
    """Every scenario, in the order the table lists them."""
    return [*limit_scenarios(n, limit), *provider_scenarios(n), *hostile_scenarios(limit)]


def limit_scenarios(n: int, limit: float) -> list[Scenario]:
    """Today's pacer beside the new one: the true limit configured, guessed high or low, told in headers, lowered."""
    # Full, half, full for a third of the ideal run each: 3 x t with (1 + 1/2 + 1) x limit x t = n.
    third = 0.4 * n / limit
    faults = {"unavailable_rate": 0.02, "unavailable_retry_after_fraction": 0.5, "lose_rate": 0.01}
    return [
        Scenario(CLEAN, {"rate": limit}, {"ceiling": limit}, targets=(1.02, 1)),
        Scenario(
            "2 % of requests 503 (half with Retry-After), 1 % of create responses lost",
            {"rate": limit},
            {"ceiling": limit},
            sim=faults,
            targets=(1.10, 1),
        ),
        Scenario(
            "starts at 2 x the true limit, no ceiling, no headers",
            {"rate": 2 * limit},
            {"start": 2 * limit},
            targets=(1.10, 2),
        ),
        Scenario(
            "starts at 0.5 x the true limit, no ceiling, no headers",
            {"rate": limit / 2},
            {"start": limit / 2},
            targets=(1.10, 2),
        ),
        Scenario("limit unknown, headers sent", {"rate": 10}, {}, sim={"rate_headers": True}, targets=(1.05, 1)),
        Scenario(
            "true limit drops to half for a third of the run, then back",
            {"rate": limit},
            {"ceiling": limit},
            schedule=((third, limit / 2), (2 * third, limit)),
            targets=(1.10, 3),
        ),
    ]


def provider_scenarios(n: int) -> list[Scenario]:
    """The new pacer against a provider's own documented limits: Stream's in-flight cap, Mux's create rate."""
    return [
        Scenario(
            "Cloudflare: 120 videos in flight at most, a 20 s encode",
            None,
            {},
            # The per-user budget on (raised, so that the in-flight cap is what binds), its block counted.
            sim={"rate": 0, "processing_delay_s": ENCODE_S, "max_in_flight": 120, "budget_quota": 20 * 300},
            targets=(1.10, 2),
            provider="cloudflare",
            ideal="in_flight",
        ),
        Scenario(
            "Mux at 1 create/s, 1 % of creates crash the worker right after",
            None,
            {},
            sim={"rate": 1, "burst": 10},
            targets=(1.10, 2),
            provider="mux",
            assets=max(100, n // 4),
            env={"CHAOS_CRASH_AFTER_CREATE": "0.01"},
            # One record an invocation: a crash takes only the record it crashed on back to the queue.
            stack={"BatchSize": "1", "UploaderTimeout": "60"},
        ),
        *(
            Scenario(
                f"{label}: 1 % of create answers lost, 1 % of creates crash the worker right after",
                None,
                {},
                sim={"rate": 5, "burst": 5, "lose_rate": 0.01},
                targets=(1.10, 2),
                provider=provider,
                assets=max(100, n // 4),
                env={"CHAOS_CRASH_AFTER_CREATE": "0.01"},
                # One record an invocation, ten at once: enough to drive 5 creates/s on the emulator (five
                # uploaders of one record each drove 7.6 calls/s, and a Bunny create is two calls).
                stack={"BatchSize": "1", "UploaderTimeout": "60", "MaximumConcurrency": "10"},
            )
            # Neither publishes a number: 5 creates/s stands for theirs.
            for provider, label in (("bunny", "Bunny Stream at 5 creates/s"), ("vimeo", "Vimeo at 5 creates/s"))
        ),
        Scenario(
            "JW Player at 60 requests a minute, 1 % of create answers lost, 1 % of creates crash right after",
            None,
            {},
            # The profile's budget: "60 requests/minute per API token" (docs.jwplayer.com authentication), every
            # call counted. The webhook settles a media from the ledger without a read, so a create a second is
            # the limit's own pace: the ideal. Lookups after a lost answer or a crash spend more.
            sim={"lose_rate": 0.01},
            targets=(1.10, 2),
            provider="jwplayer",
            assets=max(60, n // 20),
            ideal_rate=1.0,
            env={"CHAOS_CRASH_AFTER_CREATE": "0.01"},
            stack={"BatchSize": "1", "UploaderTimeout": "60"},
        ),
    ]


def hostile_scenarios(limit: float) -> list[Scenario]:
    """The new pacer against a provider that misstates its limit or fails requests, held to the clean row."""
    hostile = {
        "unavailable_rate": 0.02,
        "unavailable_retry_after_fraction": 1.0,
        "unavailable_retry_after_max_s": 3,
        "lose_rate": 0.01,
    }
    return [
        Scenario(
            "headers state twice the true limit, no ceiling",
            None,
            {},
            sim={"rate_headers": True, "rate_header_scale": 2},
            targets=(1.10, 2),
        ),
        Scenario(
            "2 % of all requests 503 (Retry-After 1-3 s), 1 % of create answers lost",
            None,
            {"ceiling": limit},
            sim=hostile,
            targets=(1.10, 1),
            versus=CLEAN,
            versus_target=1.05,
        ),
        Scenario(
            "every fault at once: those, 10 % webhooks early, 20 % twice, forged ones, 2 % sources refused",
            None,
            {"ceiling": limit},
            sim={**hostile, "webhook_early_rate": 0.1, "webhook_duplicate_rate": 0.2, "webhook_forged_rate": 0.05},
            targets=(math.inf, math.inf),
            refused=0.02,
            versus=CLEAN,
            versus_target=1.10,
        ),
    ]


def ideal_for(scenario: Scenario, n: int, limit: float) -> float:
    """The scenario's ideal drain: at the provider's limit, or at what its in-flight cap allows."""
    if scenario.ideal == "in_flight":
        return n * ENCODE_S / IN_FLIGHT
    rate = scenario.ideal_rate or float(scenario.sim.get("rate", limit))
    return ideal_seconds(n, rate, scenario.schedule)


def ideal_seconds(n: int, limit: float, schedule: tuple) -> float:
    """How long n creates take at exactly the provider's limit, following its schedule."""
    t, made, rate, changes = 0.0, 0.0, limit, list(schedule)
    while True:
        until = changes[0][0] if changes else float("inf")
        if made + (until - t) * rate >= n:
            return t + (n - made) / rate
        made += (until - t) * rate
        t, rate = until, changes.pop(0)[1]
