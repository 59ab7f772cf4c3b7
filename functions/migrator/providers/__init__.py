"""The video providers a migration can target, each behind the one `Provider` interface.

`build(name, ...)` makes the provider the stack's `Provider` parameter names. The
uploader, the webhook, reconcile and the CLI's audit call only the interface
(`providers.base.Provider`); every wire detail (paths, credentials, bodies, statuses,
signatures, rate-limit headers) lives in the provider's own module, and every fact the
rest reads of a provider (its events per asset, documented rate, tracks) is a class
attribute there. A provider is registered by one line in `REGISTERED` below and its name in
`platforms.py` (docs/adding-a-platform.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .apivideo import ApiVideoProvider
from .aws import AwsProvider, AwsTarget
from .base import ListingError, Provider
from .bunny import BunnyProvider
from .cloudflare import CloudflareProvider
from .facts import (
    AssetRef,
    CredentialsError,
    EventError,
    PlaybackKeys,
    Poll,
    RateSignal,
    SignedPlayback,
    SigningUnavailable,
    Video,
    WebhookEvent,
)
from .fidelity import CreateDefaults
from .generic import GenericProvider
from .jwplayer import JwPlayerProvider
from .mux import MuxProvider
from .vimeo import VimeoProvider

# The targets, one line each, in platforms.TARGETS' order (a unit test holds the two equal): each class declares
# its own name and facts (`Provider`'s class attributes: events_per_asset, documented_rate_per_s, takes_tracks...).
REGISTERED: tuple[type[Provider], ...] = (
    GenericProvider,
    MuxProvider,
    CloudflareProvider,
    ApiVideoProvider,
    BunnyProvider,
    JwPlayerProvider,
    VimeoProvider,
    AwsProvider,
)
PROVIDERS: dict[str, type[Provider]] = {cls.name: cls for cls in REGISTERED}


def build(name: str, base_url: str | None, secret: Callable[[], str | None], **options) -> Provider:
    """The provider called `name` (see PROVIDERS). `options`: clock, session, timeouts, the stack's
    `create_defaults` (DefaultPlayback and the create options), and for the generic provider its
    `webhook_scheme`."""
    try:
        cls = PROVIDERS[name]
    except KeyError:
        raise CredentialsError(f"unknown provider {name!r}; one of {', '.join(PROVIDERS)}") from None
    if cls is not GenericProvider:
        options.pop("webhook_scheme", None)  # the real providers sign in their own scheme
    if cls is not AwsProvider:
        options.pop("target", None)  # where the aws target's jobs run and land (settings.aws_target)
    return cls(base_url, secret, **options)


__all__ = [
    "PROVIDERS",
    "REGISTERED",
    "ApiVideoProvider",
    "AssetRef",
    "AwsProvider",
    "AwsTarget",
    "BunnyProvider",
    "CloudflareProvider",
    "CreateDefaults",
    "CredentialsError",
    "EventError",
    "GenericProvider",
    "JwPlayerProvider",
    "ListingError",
    "MuxProvider",
    "PlaybackKeys",
    "Poll",
    "Provider",
    "RateSignal",
    "SignedPlayback",
    "SigningUnavailable",
    "Video",
    "VimeoProvider",
    "WebhookEvent",
    "build",
    "from_settings",
]


def from_settings(settings, clock: Callable[[], float] | None = None) -> Provider:
    """The stack's provider, its credentials read from Secrets Manager or SSM (cached, never logged)."""
    from ..secrets import read_secret
    from ..trackfetch import FetchPolicy, parse_test_origins

    options = {
        "connect_timeout_s": settings.connect_timeout_s,
        "read_timeout_s": settings.read_timeout_s,
        "create_defaults": CreateDefaults(settings.default_playback, settings.provider_options),
    }
    options["track_policy"] = FetchPolicy(test_origins=parse_test_origins(settings.track_test_origins))
    if clock is not None:
        options["clock"] = clock
    if settings.provider == AwsProvider.name:
        options["target"] = settings.aws_target()
    return build(
        settings.provider,
        settings.provider_base_url,
        readable(lambda: read_secret(settings.token_secret_name, settings.token_parameter_name)),
        webhook_scheme=settings.webhook_scheme,
        **options,
    )


def readable(secret: Callable[[], str | None], what: str = "provider") -> Callable[[], str | None]:
    """`secret`, with a failure to read it (AccessDenied under a KMS key the role may not use,
    throttling, an outage) turned into CredentialsError: our configuration or the service's
    weather, never the asset's fault, so the uploader holds the asset without spending its
    attempts instead of failing every asset for good. The error names the cause, not the value."""

    def read() -> str | None:
        try:
            return secret()
        except CredentialsError:
            raise
        except Exception as exc:
            code = re.search(r"\(([A-Za-z]+(?:Exception|Error)?)\)", str(exc))
            cause = code.group(1) if code else type(exc).__name__
            raise CredentialsError(f"the {what}'s credentials could not be read ({cause})") from None

    return read
