"""SimConfig: every behaviour knob of the simulator, and the validation all of them go through.

The same checks run for the constructor, the command line and POST /_sim/config, so a
value that one path refuses no other path accepts.
"""

from __future__ import annotations

import ipaddress
import math
import urllib.parse
from dataclasses import dataclass, fields
from typing import Any, TypeGuard

from . import catalog

RETRY_AFTER_MODES = ("seconds", "date", "x-ratelimit", "absent")
WEBHOOK_SCHEMES = ("seed", "standard")
IN_FLIGHT_STATUSES = (429, 413)
# A Vimeo account's plan, as GET /me says it (`account`, vimeo/openapi api.yaml).
PLANS = ("basic", "business", "live_business", "live_premium", "live_pro", "plus", "pro", "pro_unlimited", "producer")
DEFAULT_PORT = 8790

# The limits a knob left None (the default) takes: these, unless the profile documents its own (each profile's
# `limits`, infra/sim/platforms). They are the simulator's historic behaviour: creates at 20/s in bursts of 20,
# nothing else limited.
LIMIT_DEFAULTS: dict[str, float | int] = {
    "rate": 20.0,
    "burst": 20,
    "read_rate": 0.0,
    "read_burst": 20,
    "budget_quota": 0,
    "budget_window_s": 300.0,
    "budget_block_s": 300.0,
    "max_in_flight": 0,
}


@dataclass(frozen=True)
class Limits:
    """The limit knobs as they act: each the value given, else the profile's (SimConfig.limits)."""

    rate: float
    burst: int
    read_rate: float
    read_burst: int
    budget_quota: int
    budget_window_s: float
    budget_block_s: float
    max_in_flight: int


class ConfigError(ValueError):
    """Raised when a configuration value or patch is rejected."""


def is_loopback(host: str) -> bool:
    """True for localhost and loopback IP literals."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_http_url(value: object) -> TypeGuard[str]:
    """True for an absolute http(s) URL string."""
    if not isinstance(value, str):
        return False
    parts = urllib.parse.urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


# Field name -> kind. Kinds drive both type checking in patch() and range checks below.
_KINDS: dict[str, object] = {
    "host": "str",
    "port": "int",
    "profile": "profile",
    "token": "optstr",
    "token_id": "optstr",
    "token_secret": "optstr",
    "account_id": "optstr",
    "api_key": "optstr",
    "rate": "optfloat",
    "burst": "optint",
    "read_rate": "optfloat",
    "read_burst": "optint",
    "budget_quota": "optint",
    "budget_window_s": "optfloat",
    "budget_block_s": "optfloat",
    "max_in_flight": "optint",
    "in_flight_status": IN_FLIGHT_STATUSES,
    "storage_minutes": "float",
    "check_source": "bool",
    "hang_rate": "float",
    "legacy_rate_headers": "bool",
    "rate_header_scale": "float",
    "retry_after_mode": RETRY_AFTER_MODES,
    "rate_headers": "bool",
    "latency_ms": "float",
    "latency_jitter_ms": "float",
    "fail_rate": "float",
    "unavailable_rate": "float",
    "unavailable_retry_after_fraction": "float",
    "lose_rate": "float",
    "honour_idempotency": "bool",
    "conflict_on_duplicate": "bool",
    "processing_delay_s": "float",
    "webhook_url": "optstr",
    "webhook_scheme": WEBHOOK_SCHEMES,
    "webhook_secret": "optstr",
    "webhooks_enabled": "bool",
    "webhook_duplicate_rate": "float",
    "webhook_forged_rate": "float",
    "webhook_early": "bool",
    "webhook_early_rate": "float",
    "unavailable_retry_after_max_s": "int",
    "seed": "optint",
    "others_take": "int",
    "track_lose_rate": "float",
    "track_max_bytes": "int",
    "library_size": "int",
    "library_private_every": "int",
    "library_unfetchable_every": "int",
    "library_captions_every": "int",
    "library_chapters_every": "int",
    "library_stuck_every": "int",
    "library_team_every": "int",
    "library_processing_done": "bool",
    "library_captions_processing": "bool",
    "link_ttl_s": "float",
    "prepare_s": "float",
    "token_ttl_s": "float",
    "session_ttl_s": "float",
    "media_bytes": "int",
    "media_file": "optstr",
    "signing_secret": "optstr",
    "plan": PLANS,
    "search_lag_s": "float",
    "drift": "rules",
}
_FRACTIONS = {
    "fail_rate",
    "unavailable_rate",
    "unavailable_retry_after_fraction",
    "webhook_early_rate",
    "lose_rate",
    "webhook_duplicate_rate",
    "webhook_forged_rate",
    "hang_rate",
    "track_lose_rate",
}
_NON_NEGATIVE = {
    "others_take",
    "rate",
    "read_rate",
    "latency_ms",
    "latency_jitter_ms",
    "processing_delay_s",
    "budget_quota",
    "budget_block_s",
    "max_in_flight",
    "storage_minutes",
    "track_max_bytes",
    "library_size",
    "library_private_every",
    "library_unfetchable_every",
    "library_captions_every",
    "library_chapters_every",
    "library_stuck_every",
    "library_team_every",
    "link_ttl_s",
    "prepare_s",
    "token_ttl_s",
    "session_ttl_s",
    "search_lag_s",
}
_AT_LEAST_ONE = {"burst", "read_burst", "media_bytes"}


@dataclass
class SimConfig:
    """All behaviour knobs of the simulator; patch() is the only validated way to change them.

    Credentials: None switches a check off. `token` is the bearer token of the generic and
    cloudflare profiles; `token_id`/`token_secret` are Mux's HTTP Basic pair (checked when
    token_id is set); `account_id` must match Cloudflare's /accounts/{id}/ path segment;
    `api_key` is api.video's HTTP Basic user name (with an empty password).

    Limits: a limit knob left None takes the active profile's documented value
    (its `limits`, else LIMIT_DEFAULTS), and takes the new profile's when the profile
    changes; a value given explicitly stays until it is patched again (to null: back to
    the profile's).
    """

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    # Creates per second sustained, 0 = unlimited (the create bucket). None: the profile's (mux 1, others 20).
    rate: float | None = None
    # The create bucket's capacity, at least 1. None: the profile's (mux 10, others 20).
    burst: int | None = None
    retry_after_mode: str = "seconds"
    latency_ms: float = 0.0
    latency_jitter_ms: float = 0.0
    fail_rate: float = 0.0
    honour_idempotency: bool = True
    conflict_on_duplicate: bool = False
    processing_delay_s: float = 1.0
    webhook_url: str | None = None
    webhook_scheme: str = "seed"
    webhook_secret: str | None = None
    webhooks_enabled: bool = True
    # ----- added with the provider profiles (defaults keep the generic behaviour as it was)
    profile: str = "generic"
    token_id: str | None = None
    token_secret: str | None = None
    account_id: str | None = None
    api_key: str | None = None
    rate_headers: bool = False
    unavailable_rate: float = 0.0
    unavailable_retry_after_fraction: float = 0.5
    lose_rate: float = 0.0
    webhook_duplicate_rate: float = 0.0
    webhook_forged_rate: float = 0.0
    webhook_early: bool = False
    # A share of the videos finish at once, their webhooks sent before the create's answer.
    webhook_early_rate: float = 0.0
    # An injected 503's Retry-After is a whole number of seconds from 1 to this (1: always 1).
    unavailable_retry_after_max_s: int = 1
    seed: int | None = None
    # The next N creates find the create bucket just emptied by the account's other clients (a provider's limit is
    # the account's, shared with its live traffic): each is answered the profile's 429 and retry hint, however
    # slowly the fleet sends, and counts this down. A test that must see 429s then sees them on any machine.
    others_take: int = 0
    # ----- added with the documented provider limits (issue 20)
    # Every request that is not a create (list, get, status, auth, webhook) per second, 0 = unlimited: a
    # bucket of its own. None: the profile's (mux 5, others 0).
    read_rate: float | None = None
    # That bucket's capacity, at least 1. None: the profile's (mux 10, others 20).
    read_burst: int | None = None
    # A budget over every API call that passes auth, whatever its kind: at most budget_quota calls per
    # budget_window_s (fixed windows from the first call); the call past it starts a block of
    # budget_block_s in which every call is answered 429 with a retry hint, and a fresh window follows.
    # 0 = no budget. None: the profile's (cloudflare 1200 per 300 s, a 300 s block; others none).
    budget_quota: int | None = None
    budget_window_s: float | None = None  # > 0; None: the profile's (300)
    budget_block_s: float | None = None  # >= 0; None: the profile's (300)
    # Videos still processing (neither ready nor errored, hung ones included) past which a create is refused
    # with in_flight_status, 0 = no cap. None: the profile's (cloudflare 120, others 0).
    max_in_flight: int | None = None
    # 429 or 413: Cloudflare documents both for an upload past its limits without saying which is which.
    in_flight_status: int = 429
    # Storage capacity in minutes of video, 0 = unlimited: once the durations of the videos held (all but
    # errored ones) reach it, every create is refused 413, as Cloudflare refuses uploads past the storage
    # purchased.
    storage_minutes: float = 0.0
    # Fetch each source before processing it, as Cloudflare does (HEAD with a Content-Length, then a GET of
    # `Range: bytes=0-1023` answered 206), over loopback only; a source that fails ends errored (Cloudflare:
    # ERR_FETCH_ORIGIN_ERROR). Off by default so sources on hosts that do not exist (the demo's) still work.
    check_source: bool = False
    # Share of accepted creates whose ingest hangs: the video stays processing forever and no event is sent
    # (as api.video may, having no failed-ingest state). A source URL with the word "hang" always hangs.
    hang_rate: float = 0.0
    # cloudflare: the older `ratelimit-limit/-remaining/-reset` headers instead of `Ratelimit`/`Ratelimit-Policy`.
    legacy_rate_headers: bool = False
    # > 0: rate-limit headers state the limit (and what remains) this many times over, a provider's headers
    # that overstate its limit (2: twice the true limit). The 429s and their retry hints stay true.
    rate_header_scale: float = 1.0
    # ----- added with caption tracks (issue 22)
    # Share of track uploads (Cloudflare's captions PUT, api.video's captions POST, Mux's tracks POST) that
    # are performed (the provider holds the track) and whose answer is lost: the connection just closes.
    track_lose_rate: float = 0.0
    # The largest text-track file taken, in bytes; a larger one is refused (an upload) or errors (a file
    # Mux fetches). No provider documents its cap: 2 MiB is the simulator's choice.
    track_max_bytes: int = 2 * 1024 * 1024
    # ----- added with the source side (issue 21): a library of videos to list and fetch (infra/sim/library.py)
    # > 0: this simulator is a source of that many videos: its list and get show the library (computed, not
    # stored), with the profile's own source operations (text tracks, master access, downloads, captions).
    library_size: int = 0
    # Every Nth video private; every Nth unfetchable in one of the profile's ways (in turn); every Nth with two
    # caption tracks; every Nth whose prepared file (Mux master, Stream download) never becomes ready. 0 = none.
    library_private_every: int = 0
    library_unfetchable_every: int = 0
    library_captions_every: int = 0
    library_stuck_every: int = 0
    # Every Nth video with a chapters text track, where the platform keeps chapters as a WebVTT file (Brightcove,
    # JW Player: platforms/chapter_cues.py); 0 = none.
    library_chapters_every: int = 0
    # Every Nth video uploaded by another member of the token's team, held in the team's library: a platform
    # that lists the token's own uploads apart (Vimeo's /me/videos) lists it only in the team's (0 = none).
    library_team_every: int = 0
    # The platform finishes what it was processing between two sweeps: the videos unfetchable as "processing"
    # are ready once this is set; with `library_captions_processing`, every captioned video's caption tracks
    # are still being made (where the platform keeps a status for them), ready once it is unset.
    library_processing_done: bool = False
    library_captions_processing: bool = False
    # Seconds a link to a file lives from when it is handed out (0: forever), and a prepared file takes.
    link_ttl_s: float = 0.0
    prepare_s: float = 2.0
    media_bytes: int = 4096  # the size of every file served (its HEAD and range GETs agree)
    # A real video every library file is served as instead (its bytes, whatever media_bytes says): for a target that
    # really transcodes what it is handed (the aws target's MediaConvert simulator). None: the synthetic bytes.
    media_file: str | None = None
    # ----- added with Brightcove: seconds an access token of the platform's OAuth API lives ("only valid for
    # 5 mins": apis.support.brightcove.com, "Getting Access Tokens").
    token_ttl_s: float = 300.0
    # ----- added with Kaltura: seconds a session the platform starts lives at most (Kaltura's KS, capped by the app
    # token's sessionDuration); 0: what the client asks for.
    session_ttl_s: float = 0.0
    # ----- added with JW Player: the property's secret, and URL signing on: its Delivery API and files want signed
    # requests (JWT HS256, or exp and sig), made with this secret. None: signing off.
    signing_secret: str | None = None
    # ----- added with Vimeo as a target
    # The account's plan (Vimeo: "Vimeo Basic members can't set [privacy.view] to disable or unlisted").
    plan: str = "pro"
    # Seconds a new video takes to show in a search of the list by `query` (Vimeo's /me/videos?query=); 0: at once.
    search_lag_s: float = 0.0
    # ----- a test knob, not a platform's behaviour (infra/sim/drift.py): answers reshaped as a platform that drifted
    # from its documents would send them (`rename <path> <name>`, `drop <path>`, `set <path> <JSON>`), for
    # `migrator doctor --source/--target`'s tests. Empty: every answer as the profile documents it.
    drift: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self._defaulted: frozenset[str] = frozenset()
        # Route constructor values through the same checks as run-time patches.
        self.patch({f.name: getattr(self, f.name) for f in fields(self)})

    def limits(self) -> Limits:
        """The limits in force: never None, since patch() gives every limit left None the profile's value."""
        return Limits(**{name: getattr(self, name) for name in LIMIT_DEFAULTS})

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def patch(self, changes: dict) -> None:
        """Validate every change first, then apply them all, so a bad patch changes nothing."""
        if not isinstance(changes, dict):
            raise ConfigError("config patch must be a JSON object")
        clean = {}
        for name, value in changes.items():
            if name not in _KINDS:
                raise ConfigError(f"unknown config field: {name}")
            clean[name] = _check_field(name, _KINDS[name], value)
        # Limits left to the profile follow it; one given a value is the caller's until set to None again.
        defaulted = set(self._defaulted)
        for name in LIMIT_DEFAULTS.keys() & clean.keys():
            (defaulted.add if clean[name] is None else defaulted.discard)(name)
        profile = clean.get("profile", self.profile)
        for name in defaulted:
            clean[name] = profile_limit(profile, name)
        for name, value in clean.items():
            setattr(self, name, value)
        self._defaulted = frozenset(defaulted)


def profile_limit(profile: str, name: str) -> float | int:
    """The value of a limit knob the profile documents (its `limits`), or the simulator's default for it."""
    return catalog.profile(profile).limits.get(name, LIMIT_DEFAULTS[name])


def _check_type(name: str, kind: object, value: object) -> Any:
    """`value`, checked to be of `kind` (so Any: its type is the kind's), converted where the kind says."""
    # bool is a subclass of int, so it is excluded explicitly from the numeric kinds.
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{name} must be a boolean")
    elif kind in ("int", "optint") or kind == IN_FLIGHT_STATUSES:
        if not (kind == "optint" and value is None) and (isinstance(value, bool) or not isinstance(value, int)):
            raise ConfigError(f"{name} must be an integer" + (" or null" if kind == "optint" else ""))
    elif kind in ("float", "optfloat"):
        if kind == "optfloat" and value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ConfigError(f"{name} must be a number" + (" or null" if kind == "optfloat" else ""))
        value = float(value)
    elif kind == "str":
        if not isinstance(value, str):
            raise ConfigError(f"{name} must be a string")
    elif kind == "optstr":
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{name} must be a string or null")
    elif kind == "profile":
        if not isinstance(value, str) or not catalog.has(value):
            raise ConfigError(f"{name} must be one of {', '.join(catalog.names())}")
    elif kind == "rules":
        from .drift import DriftError, parse_rule

        if not isinstance(value, list | tuple):
            raise ConfigError(f"{name} must be a list of rules")
        try:
            for rule in value:
                parse_rule(rule)
        except DriftError as exc:
            raise ConfigError(f"{name}: {exc}") from None
        value = tuple(value)
    if isinstance(kind, tuple) and value not in kind:
        raise ConfigError(f"{name} must be one of {', '.join(map(str, kind))}")
    return value


def _check_field(name: str, kind: object, given: object) -> Any:
    value = _check_type(name, kind, given)
    if value is None:
        return value  # an optional credential, or a limit left to the profile
    if name == "host" and not is_loopback(value):
        raise ConfigError("host must be a loopback address (127.0.0.0/8, ::1 or localhost)")
    if name == "port" and not 0 <= value <= 65535:
        raise ConfigError("port must be between 0 and 65535")
    if name in _AT_LEAST_ONE and value < 1:
        raise ConfigError(f"{name} must be at least 1")
    if name in ("budget_window_s", "rate_header_scale") and value <= 0:
        raise ConfigError(f"{name} must be positive")
    if name == "unavailable_retry_after_max_s" and not 1 <= value <= 3600:
        raise ConfigError("unavailable_retry_after_max_s must be between 1 and 3600")
    if name in _FRACTIONS and not 0.0 <= value <= 1.0:
        raise ConfigError(f"{name} must be between 0 and 1")
    if name in _NON_NEGATIVE and value < 0:
        raise ConfigError(f"{name} must not be negative")
    if name == "webhook_url" and value is not None and not is_http_url(value):
        raise ConfigError("webhook_url must be an http(s) URL")
    return value
