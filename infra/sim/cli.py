"""The simulator's command line: one flag per SimConfig field, then serve until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from . import catalog
from .config import (
    IN_FLIGHT_STATUSES,
    LIMIT_DEFAULTS,
    RETRY_AFTER_MODES,
    WEBHOOK_SCHEMES,
    ConfigError,
    SimConfig,
)
from .core import ProviderSim

_DESCRIPTION = """\
Fake video provider on loopback for the migration tool's tests, benchmark and demo.
--profile picks the wire format: one platform's API (infra/sim/platforms: the targets' and
the sources', named as in migrator.platforms; generic is the seed contract). --library-size N
makes it a source of N videos to list and fetch. Every setting can also be
changed at run time with POST /_sim/config (JSON, field names as below with _);
GET /_sim/stats, GET /_sim/requests[?op=all], POST /_sim/reset work in every profile.
Sources whose URL contains "unsupported" are refused, "corrupt" ones fail processing,
ones with the word "hang" never finish, and ?duration=S&drift=D in a source URL set its
duration. Limits left unset take the profile's documented values (mux: creates 1/s in
bursts of 10, other requests 5/s; cloudflare: 1,200 calls per 300 s then a 300 s block,
120 videos in progress)."""


# A flag adder: (group, SimConfig field, help text, argparse keywords).
Knob = Callable[..., None]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="provider_sim.py", description=_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    knob = _knob_adder(SimConfig())
    knob(p, "host", "loopback address to bind; anything else is refused (default %(default)s)")
    knob(p, "port", "port to listen on; 0 picks a free one (default %(default)s)")
    knob(p, "profile", "provider wire format (default %(default)s)", choices=catalog.names())

    # The groups in the order --help lists them.
    _add_credentials(p.add_argument_group("credentials (unset = no check)"), knob)
    _add_rate_limits(p.add_argument_group("rate limiting"), knob)
    _add_faults(p.add_argument_group("faults (rates are probabilities 0..1)"), knob)
    _add_processing_and_webhooks(p.add_argument_group("processing and webhooks"), knob)
    _add_source(p.add_argument_group("as a source: a library of videos to list and fetch (infra/sim/library.py)"), knob)
    p.add_argument("--verbose", action="store_true", help="log every request to stderr")
    return p


def _knob_adder(d: SimConfig) -> Knob:
    """The `knob` that adds flags defaulted from `d`."""

    def knob(group: argparse._ArgumentGroup, field: str, help: str, **kw: Any) -> None:
        """A flag named after its SimConfig field, typed and defaulted from it (booleans switch on).
        A limit's flag defaults to unset, so the profile's documented value applies."""
        default = getattr(d, field)
        if field in LIMIT_DEFAULTS:
            kw.setdefault("type", type(LIMIT_DEFAULTS[field]))
            kw.setdefault("default", None)
            help += f" (default: the profile's; {_limit_defaults(field)})"
        elif isinstance(default, bool):
            kw.setdefault("action", "store_true")
        else:
            kw.setdefault("type", type(default) if default is not None else str)
            kw.setdefault("default", default)
        group.add_argument("--" + field.replace("_", "-"), help=help, **kw)

    return knob


def _add_credentials(creds: argparse._ArgumentGroup, knob: Knob) -> None:
    for field, env_name, text in (
        ("token", "SIM_TOKEN", "generic and cloudflare: 'Authorization: Bearer TOKEN'"),
        ("token_id", "SIM_TOKEN_ID", "mux: HTTP Basic user name, the access token id"),
        ("token_secret", "SIM_TOKEN_SECRET", "mux: HTTP Basic password, the access token secret"),
        ("account_id", "SIM_ACCOUNT_ID", "cloudflare: the account id every path must carry, else 403"),
        ("api_key", "SIM_API_KEY", "apivideo: HTTP Basic user name, with an empty password"),
    ):
        knob(creds, field, f"{text} (env {env_name})", default=os.environ.get(env_name))


def _add_rate_limits(limits: argparse._ArgumentGroup, knob: Knob) -> None:
    knob(limits, "rate", "creates per second allowed, 0 = unlimited")
    knob(limits, "burst", "token bucket capacity for creates")
    knob(limits, "read_rate", "every other request (list, get, status, auth, webhook) per second, 0 = unlimited")
    knob(limits, "read_burst", "token bucket capacity for those requests")
    knob(limits, "budget_quota", "calls of every kind allowed per budget window, 0 = no budget")
    knob(limits, "budget_window_s", "the budget's window in seconds")
    knob(
        limits,
        "budget_block_s",
        "seconds every call is refused 429 once the budget is exceeded (0: to the window's end)",
    )
    knob(limits, "max_in_flight", "videos processing at once past which a create is refused, 0 = no cap")
    knob(
        limits,
        "in_flight_status",
        "the status of a create past max_in_flight (default %(default)s)",
        type=int,
        choices=IN_FLIGHT_STATUSES,
    )
    knob(
        limits, "storage_minutes", "minutes of video the account may hold before creates are refused 413, 0 = unlimited"
    )
    knob(
        limits,
        "retry_after_mode",
        "generic: how a 429 says when to retry: Retry-After seconds or HTTP-date, X-RateLimit-Retry-After, or "
        "nothing. Other profiles use their own (cloudflare retry-after, apivideo X-RateLimit-Retry-After, mux none)",
        choices=RETRY_AFTER_MODES,
    )
    knob(
        limits,
        "rate_headers",
        "send the profile's rate-limit headers on every API answer, true to the bucket: generic "
        "X-RateLimit-Limit/Remaining/Reset + RateLimit-Policy/RateLimit; mux X-RateLimit-*; cloudflare "
        "Ratelimit/Ratelimit-Policy; apivideo X-RateLimit-Limit (per minute)/Remaining/Retry-After. They report the "
        "call budget when there is one, else the bucket the request draws from",
    )
    knob(limits, "legacy_rate_headers", "cloudflare: the older ratelimit-limit/-remaining/-reset headers instead")
    knob(limits, "rate_header_scale", "rate-limit headers state the limit this many times over (default %(default)s)")


def _add_faults(faults: argparse._ArgumentGroup, knob: Knob) -> None:
    knob(faults, "latency_ms", "delay added to every create")
    knob(faults, "latency_jitter_ms", "extra uniform 0..N ms random delay")
    knob(faults, "fail_rate", "creates answered 500, in the profile's error shape")
    knob(faults, "unavailable_rate", "API requests (create, list, get, status) answered 503")
    knob(
        faults, "unavailable_retry_after_fraction", "share of those 503s carrying Retry-After: 1 (default %(default)s)"
    )
    knob(faults, "lose_rate", "creates performed (the video exists) whose answer is lost: the connection just closes")
    knob(faults, "track_lose_rate", "caption uploads performed (the track is held) whose answer is lost")
    knob(faults, "track_max_bytes", "the largest caption file taken (default %(default)s bytes)")
    knob(faults, "seed", "seed the fault draws, for repeatable runs", type=int)
    faults.add_argument(
        "--ignore-idempotency",
        dest="honour_idempotency",
        action="store_false",
        help="generic: ignore Idempotency-Key, so a retried create makes a duplicate video (others never honour it)",
    )
    knob(faults, "conflict_on_duplicate", "generic: answer 409 if a video with the reference exists")


def _add_processing_and_webhooks(hooks: argparse._ArgumentGroup, knob: Knob) -> None:
    knob(hooks, "processing_delay_s", "seconds from create to ready/errored (default %(default)s)")
    knob(
        hooks,
        "check_source",
        "fetch each source first as Cloudflare does (HEAD with a size, then a range GET answered 206), loopback "
        "only; a source that fails ends errored",
    )
    knob(hooks, "hang_rate", "share of creates whose ingest never finishes and sends no event")
    knob(hooks, "webhook_url", "where to POST the profile's webhook events")
    knob(
        hooks,
        "webhook_scheme",
        "generic: 'seed': x-signature hex HMAC of the body; 'standard': Standard Webhooks 1.0 "
        "(other profiles sign in their own scheme)",
        choices=WEBHOOK_SCHEMES,
    )
    secret_help = "signing secret, whsec_<base64> for standard (env SIM_WEBHOOK_SECRET)"
    knob(hooks, "webhook_secret", secret_help, default=os.environ.get("SIM_WEBHOOK_SECRET"))
    hooks.add_argument(
        "--no-webhooks", dest="webhooks_enabled", action="store_false", help="never send webhooks; clients must poll"
    )
    knob(hooks, "webhook_duplicate_rate", "deliveries sent twice (after the first was accepted)")
    knob(hooks, "webhook_forged_rate", "deliveries preceded by a copy signed with a wrong secret, to be refused")
    knob(hooks, "webhook_early", "processing completes at once; its webhook arrives before the create's answer")


def _add_source(source: argparse._ArgumentGroup, knob: Knob) -> None:
    knob(source, "library_size", "videos in the library; > 0 makes this simulator a source (default %(default)s)")
    knob(source, "library_private_every", "every Nth video private (0: none)")
    knob(source, "library_unfetchable_every", "every Nth video unfetchable in one of the profile's ways (0: none)")
    knob(source, "library_captions_every", "every Nth video with two caption tracks (0: none)")
    knob(source, "library_chapters_every", "every Nth video with a chapters text track (Brightcove, JW; 0: none)")
    knob(source, "library_stuck_every", "every Nth video's prepared file never becomes ready (0: none)")
    knob(source, "library_team_every", "every Nth video uploaded by another team member (Vimeo: not in /me/videos)")
    knob(source, "library_processing_done", "the videos still processing have finished (between two sweeps)")
    knob(source, "library_captions_processing", "every captioned video's caption tracks are still being made")
    knob(source, "link_ttl_s", "seconds a link to a file lives (0: forever)")
    knob(source, "prepare_s", "seconds a file asked for (a Mux master, a Stream download) takes to prepare")
    knob(source, "media_bytes", "the size of every file served")


def _limit_defaults(field: str) -> str:
    """How each profile sets a limit: `generic 20, mux 1, ...`."""
    return ", ".join(
        f"{name} {catalog.profile(name).limits.get(field, LIMIT_DEFAULTS[field]):g}" for name in catalog.names()
    )


def main(argv: list[str] | None = None) -> int:
    """Run the simulator from the command line until SIGTERM or SIGINT."""
    parser = build_parser()
    args = vars(parser.parse_args(argv))
    verbose = args.pop("verbose")
    try:
        config = SimConfig(**args)
    except ConfigError as exc:
        parser.error(str(exc))
    sim = ProviderSim(config, verbose=verbose)
    try:
        sim.start()
    except OSError as exc:
        print(f"provider-sim: cannot listen on {config.host}:{config.port}: {exc}", file=sys.stderr)
        return 1
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    print(f"provider-sim listening on {sim.url}", flush=True)
    while not stopping.wait(0.5):  # A timed wait keeps the main thread responsive to signals.
        pass
    sim.stop()
    return 0
