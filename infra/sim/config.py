"""SimConfig: every behaviour knob of the simulator, and the validation all of them go through.

The same checks run for the constructor, the command line and POST /_sim/config, so a
value that one path refuses no other path accepts.
"""

from __future__ import annotations

import ipaddress
import math
import urllib.parse
from dataclasses import dataclass, fields

PROFILES = ("generic", "mux", "cloudflare", "apivideo")
RETRY_AFTER_MODES = ("seconds", "date", "x-ratelimit", "absent")
WEBHOOK_SCHEMES = ("seed", "standard")
DEFAULT_PORT = 8790


class ConfigError(ValueError):
    """Raised when a configuration value or patch is rejected."""


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_http_url(value: object) -> bool:
    """True for an absolute http(s) URL string."""
    if not isinstance(value, str):
        return False
    parts = urllib.parse.urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


# Field name -> kind. Kinds drive both type checking in patch() and range checks below.
_KINDS: dict[str, object] = {
    "host": "str",
    "port": "int",
    "profile": PROFILES,
    "token": "optstr",
    "token_id": "optstr",
    "token_secret": "optstr",
    "account_id": "optstr",
    "api_key": "optstr",
    "rate": "float",
    "burst": "int",
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
    "seed": "optint",
}
_FRACTIONS = {
    "fail_rate",
    "unavailable_rate",
    "unavailable_retry_after_fraction",
    "lose_rate",
    "webhook_duplicate_rate",
    "webhook_forged_rate",
}
_NON_NEGATIVE = {"rate", "latency_ms", "latency_jitter_ms", "processing_delay_s"}


@dataclass
class SimConfig:
    """All behaviour knobs of the simulator; patch() is the only validated way to change them.

    Credentials: None switches a check off. `token` is the bearer token of the generic and
    cloudflare profiles; `token_id`/`token_secret` are Mux's HTTP Basic pair (checked when
    token_id is set); `account_id` must match Cloudflare's /accounts/{id}/ path segment;
    `api_key` is api.video's HTTP Basic user name (with an empty password).
    """

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    rate: float = 20.0
    burst: int = 20
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
    seed: int | None = None

    def __post_init__(self) -> None:
        # Route constructor values through the same checks as run-time patches.
        self.patch({f.name: getattr(self, f.name) for f in fields(self)})

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
        for name, value in clean.items():
            setattr(self, name, value)


def _check_type(name: str, kind: object, value: object) -> object:
    # bool is a subclass of int, so it is excluded explicitly from the numeric kinds.
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{name} must be a boolean")
    elif kind in ("int", "optint"):
        if not (kind == "optint" and value is None) and (isinstance(value, bool) or not isinstance(value, int)):
            raise ConfigError(f"{name} must be an integer" + (" or null" if kind == "optint" else ""))
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ConfigError(f"{name} must be a number")
        value = float(value)
    elif kind == "str":
        if not isinstance(value, str):
            raise ConfigError(f"{name} must be a string")
    elif kind == "optstr":
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{name} must be a string or null")
    elif isinstance(kind, tuple) and value not in kind:
        raise ConfigError(f"{name} must be one of {', '.join(kind)}")
    return value


def _check_field(name: str, kind: object, value: object) -> object:
    value = _check_type(name, kind, value)
    if name == "host" and not _is_loopback(value):
        raise ConfigError("host must be a loopback address (127.0.0.0/8, ::1 or localhost)")
    if name == "port" and not 0 <= value <= 65535:
        raise ConfigError("port must be between 0 and 65535")
    if name == "burst" and value < 1:
        raise ConfigError("burst must be at least 1")
    if name in _FRACTIONS and not 0.0 <= value <= 1.0:
        raise ConfigError(f"{name} must be between 0 and 1")
    if name in _NON_NEGATIVE and value < 0:
        raise ConfigError(f"{name} must not be negative")
    if name == "webhook_url" and value is not None and not is_http_url(value):
        raise ConfigError("webhook_url must be an http(s) URL")
    return value
