"""The functions' settings from the environment, validated strictly: a typo is refused, not ignored.

A low-level module: it imports nothing of the migrator's but leaf modules (`create_options`,
`messages`, `platforms`, `window`), so that everything else, `sources` included, can import it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import overload
from urllib.parse import urlsplit

from .create_options import OptionError, stack_options
from .messages import SOURCE_PLATFORMS
from .platforms import TARGETS
from .window import parse_window


class SettingsError(ValueError):
    """A setting is missing or malformed. The message names it and never shows a secret."""


PROVIDER_NAMES = TARGETS  # the stack's Provider parameter: the registered targets (platforms.py)
WEBHOOK_SCHEMES = ("seed", "standard")
# How a row that names no privacy is played (template parameter DefaultPlayback). Signed unless the
# operator says otherwise: a row whose privacy is unknown may be private at its source, and a
# signed video made public later costs a setting, a private one leaked costs what it showed.
PLAYBACKS = ("public", "signed")
DEFAULT_PLAYBACK = "signed"


@dataclass(frozen=True)
class Settings:
    table_name: str
    queue_url: str
    provider_base_url: str | None  # None: the provider's own API address
    provider: str = "generic"
    webhook_scheme: str = "seed"  # the generic provider's signature scheme
    token_secret_name: str | None = None
    token_parameter_name: str | None = None
    max_attempts: int = 5
    rate_per_s: float = 0.0  # the operator's ceiling on the learned rate; 0: the provider's (`rate_ceiling_for`)
    start_rate_per_s: float = 0.0  # where the learned rate begins; 0: the ceiling, or 5/s without one
    connect_timeout_s: float = 3.05
    read_timeout_s: float = 10.0
    presign_expiry_s: int = 86_400
    drift_tolerance_s: float = 0.5  # the duration-drift canary's threshold
    max_concurrency: int = 5  # the uploaders that may run at once (MaximumConcurrency): the pacer's queue
    create_share: float = 0.5  # of a stated rate limit that covers every call (Cloudflare's), what creates take
    provider_max_in_flight: int | None = None  # creates in flight at the provider; None: its default, 0: none
    tracks_queue_url: str = ""  # the tracks worker's queue ("" on a stack from before tracks)
    archive_queue_url: str = ""  # the archive worker's queue ("" where ArchiveBucket is empty: no archive)
    # ArchiveFirst: each original archived before its create, the target handed the archived copy through a link
    # presigned in `archive_bucket` under `archive_prefix` (both "" where the stack has no archive).
    archive_first: bool = False
    archive_bucket: str = ""
    archive_prefix: str = ""
    # Exact origins a track may be fetched from whatever the address rules say: tests only (TrackFetchTestOrigins).
    track_test_origins: str = ""
    # The stack's own bucket where caption text a source serves only through its API is staged for a target
    # that fetches captions by URL (Mux); "" on a stack from before it: such captions then fail with the reason.
    staging_bucket: str = ""
    max_track_attempts: int = 5
    # The aws target (Provider=aws): the MediaConvert role and queue, the output bucket, the playback address
    # (CloudFront's domain or the operator's own), the stack's name its jobs carry, and the job events' source.
    mediaconvert_role_arn: str = ""
    mediaconvert_queue: str = ""
    output_bucket: str = ""
    playback_base_url: str = ""
    stack_name: str = ""
    job_event_source: str = "aws.mediaconvert"
    # The stack's WorkingHours (window.py's text; "": none), which the ledger's `#window` item may override (hours.py).
    working_hours: str = ""

    @property
    def work_s(self) -> float:
        """Worst-case time one record needs once its slot is due: a lookup and a create, each
        timing out, and the ledger's writes. A slot later than this before the deadline is not taken."""
        return 2 * (self.connect_timeout_s + self.read_timeout_s) + 2.0

    default_playback: str = DEFAULT_PLAYBACK  # a row with no privacy: public | signed
    # The stack's create options, per provider (create_options.OPTIONS); a row's own override them.
    provider_options: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    # Sources (migrator.sources): the credentials secret ({"<platform>": {...}}), the platforms'
    # addresses where not their own, and how long a file the source prepares may keep an asset waiting.
    source_secret_name: str | None = None
    source_parameter_name: str | None = None
    source_base_urls: dict = field(default_factory=dict)
    source_prepare_timeout_s: float = 3600.0

    def aws_target(self):
        """Where the aws target's jobs run and land (providers.aws.AwsTarget)."""
        from .providers.aws import AwsTarget

        return AwsTarget(
            role_arn=self.mediaconvert_role_arn,
            queue=self.mediaconvert_queue,
            output_bucket=self.output_bucket,
            playback_base_url=self.playback_base_url.rstrip("/"),
            stack=self.stack_name,
            archive_bucket=self.archive_bucket,
            event_source=self.job_event_source,
        )

    @property
    def record_budget_s(self) -> float:
        """Worst-case time one record needs with a short slot wait. A record is not started with less time left."""
        return self.work_s + 5.0

    def rate_ceiling_for(self, provider_default: float | None) -> float:
        """The ceiling on the learned create rate: ProviderRateLimit, else the provider's documented
        create rate (Mux's 1/s); 0: none, the fleet learns the limit."""
        return self.rate_per_s or provider_default or 0.0

    def max_in_flight_for(self, provider_default: int | None) -> int | None:
        """The bound on creates in flight: ProviderMaxInFlight, else the provider's documented one; None: none."""
        chosen = provider_default if self.provider_max_in_flight is None else self.provider_max_in_flight
        return chosen or None


def env_number(env: Mapping[str, str], name: str, default: float, low: float, high: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, got {raw!r}") from None
    if not low <= value <= high:
        raise SettingsError(f"{name} must be between {low:g} and {high:g}, got {value:g}")
    return value


@overload
def _whole(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int: ...
@overload
def _whole(env: Mapping[str, str], name: str, default: None, low: int, high: int) -> int | None: ...
def _whole(env: Mapping[str, str], name: str, default: int | None, low: int, high: int) -> int | None:
    """A whole number in [low, high]; `default` when unset or empty."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit():
        raise SettingsError(f"{name} must be a whole number, got {raw!r}")
    value = int(raw)
    if not low <= value <= high:
        raise SettingsError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise SettingsError(f"{name} is not set")
    return value


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...], default: str) -> str:
    value = env.get(name, "").strip() or default
    if value not in choices:
        raise SettingsError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def load(env: Mapping[str, str] | None = None, require_queue: bool = True) -> Settings:
    """The settings in `env`; the webhook, which sends nothing to the queue, needs no QUEUE_URL."""
    env = os.environ if env is None else env
    provider = _choice(env, "PROVIDER", PROVIDER_NAMES, "generic")
    base = env.get("PROVIDER_BASE_URL", "").strip() or None
    if base is None and provider == "generic":
        raise SettingsError("PROVIDER_BASE_URL is not set (the generic provider has no address of its own)")
    if base is not None:
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise SettingsError("PROVIDER_BASE_URL must be an http(s) URL")
        if parts.username or parts.password:
            raise SettingsError("PROVIDER_BASE_URL must not carry credentials; use the token secret")
    try:
        options = stack_options(env)
    except OptionError as exc:
        raise SettingsError(str(exc)) from None
    attempts = env_number(env, "MAX_ATTEMPTS", 5, 1, 100)
    if attempts != int(attempts):
        raise SettingsError("MAX_ATTEMPTS must be a whole number")
    archive_first, archive_bucket, archive_prefix = _archive_first(env)
    return Settings(
        table_name=_required(env, "LEDGER_TABLE"),
        queue_url=_required(env, "QUEUE_URL") if require_queue else env.get("QUEUE_URL", ""),
        provider_base_url=base,
        provider=provider,
        webhook_scheme=_choice(env, "WEBHOOK_SCHEME", WEBHOOK_SCHEMES, "seed"),
        token_secret_name=env.get("PROVIDER_TOKEN_SECRET", "").strip() or None,
        token_parameter_name=env.get("PROVIDER_TOKEN_PARAMETER", "").strip() or None,
        max_attempts=int(attempts),
        rate_per_s=env_number(env, "PROVIDER_RATE_LIMIT", 0.0, 0.0, 10_000.0),
        start_rate_per_s=env_number(env, "START_RATE", 0.0, 0.0, 10_000.0),
        connect_timeout_s=env_number(env, "PROVIDER_CONNECT_TIMEOUT", 3.05, 0.1, 60.0),
        read_timeout_s=env_number(env, "PROVIDER_READ_TIMEOUT", 10.0, 0.1, 120.0),
        presign_expiry_s=int(env_number(env, "PRESIGN_EXPIRY_SECONDS", 86_400, 60, 604_800)),
        drift_tolerance_s=env_number(env, "DRIFT_TOLERANCE_SECONDS", 0.5, 0, 3600),
        max_concurrency=_whole(env, "MAXIMUM_CONCURRENCY", 5, 1, 10_000),
        create_share=_share(env),
        provider_max_in_flight=_whole(env, "PROVIDER_MAX_IN_FLIGHT", None, 0, 1_000_000),
        default_playback=_choice(env, "DEFAULT_PLAYBACK", PLAYBACKS, DEFAULT_PLAYBACK),
        provider_options=options,
        tracks_queue_url=env.get("TRACKS_QUEUE_URL", "").strip(),
        archive_queue_url=env.get("ARCHIVE_QUEUE_URL", "").strip(),
        archive_first=archive_first,
        archive_bucket=archive_bucket,
        archive_prefix=archive_prefix,
        track_test_origins=env.get("TRACK_FETCH_TEST_ORIGINS", "").strip(),
        staging_bucket=env.get("STAGING_BUCKET", "").strip(),
        max_track_attempts=int(env_number(env, "MAX_TRACK_ATTEMPTS", 5, 1, 20)),
        mediaconvert_role_arn=env.get("MEDIACONVERT_ROLE_ARN", "").strip(),
        mediaconvert_queue=env.get("MEDIACONVERT_QUEUE", "").strip(),
        output_bucket=env.get("OUTPUT_BUCKET", "").strip(),
        playback_base_url=_playback_base(env),
        stack_name=env.get("STACK_NAME", "").strip(),
        job_event_source=env.get("JOB_EVENT_SOURCE", "").strip() or "aws.mediaconvert",
        source_secret_name=env.get("SOURCE_TOKEN_SECRET", "").strip() or None,
        source_parameter_name=env.get("SOURCE_TOKEN_PARAMETER", "").strip() or None,
        source_base_urls=_source_base_urls(env),
        source_prepare_timeout_s=env_number(env, "SOURCE_PREPARE_TIMEOUT_SECONDS", 3600, 10, 86_400),
        working_hours=_working_hours(env),
    )


def _working_hours(env: Mapping[str, str]) -> str:
    """WORKING_HOURS (the stack's WorkingHours): a window's text (window.py), checked here; "" for none."""
    text = env.get("WORKING_HOURS", "").strip()
    try:
        parse_window(text)
    except ValueError as exc:
        raise SettingsError(f"WORKING_HOURS: {exc}") from None
    return text


def _playback_base(env: Mapping[str, str]) -> str:
    """PLAYBACK_BASE_URL: where viewers reach the aws target's output (https://<CloudFront domain>), or empty."""
    raw = env.get("PLAYBACK_BASE_URL", "").strip()
    if not raw:
        return ""
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.username:
        raise SettingsError("PLAYBACK_BASE_URL must be an http(s) URL without a query or credentials")
    return raw.rstrip("/")


def parse_base_urls(text: str) -> dict[str, str]:
    """`vimeo=https://...,mux=https://...` (the stack's SourceBaseUrls) as {platform: url}; ValueError if malformed.
    The platforms are the sources' (`SOURCE_PLATFORMS`, the keys of `sources.HTTP_SOURCES`)."""
    found: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        platform, sep, url = item.partition("=")
        parts = urlsplit(url.strip())
        if not sep or platform.strip() not in SOURCE_PLATFORMS:
            raise ValueError(f"{item!r} is not <platform>=<url> for one of {', '.join(SOURCE_PLATFORMS)}")
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.username or parts.password:
            raise ValueError(f"the {platform.strip()} address must be an http(s) URL without credentials")
        found[platform.strip()] = url.strip()
    return found


def _source_base_urls(env: Mapping[str, str]) -> dict:
    try:
        return parse_base_urls(env.get("SOURCE_BASE_URLS", ""))
    except ValueError as exc:
        raise SettingsError(f"SOURCE_BASE_URLS: {exc}") from None


def _archive_first(env: Mapping[str, str]) -> tuple[bool, str, str]:
    """ARCHIVE_FIRST ("true" or "false") and the archive the uploader presigns from: a stack that archives first
    without an archive (its bucket, prefix and queue) would hold every asset for a copy nobody makes."""
    first = _choice(env, "ARCHIVE_FIRST", ("false", "true"), "false") == "true"
    bucket, prefix = env.get("ARCHIVE_BUCKET", "").strip(), env.get("ARCHIVE_PREFIX", "").strip().strip("/")
    if first:
        needed = ("ARCHIVE_BUCKET", "ARCHIVE_PREFIX", "ARCHIVE_QUEUE_URL")
        missing = [name for name in needed if not env.get(name, "").strip().strip("/")]
        if missing:
            raise SettingsError(f"ARCHIVE_FIRST is true but {', '.join(missing)} is not set (ArchiveBucket)")
    return first, bucket, prefix


def _share(env: Mapping[str, str]) -> float:
    share = env_number(env, "CREATE_SHARE", 0.5, 0.0, 1.0)
    if share <= 0:
        raise SettingsError("CREATE_SHARE must be above 0 (creates need some of the budget), got 0")
    return share
