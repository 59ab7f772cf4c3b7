"""The source's hand-off to the provider, made just before the create: use `SourceHandOff` to turn a claimed
asset's `source_url` into the URL the provider is handed, or into why it cannot be had now."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..fate import Fate, Outcome, OutcomeKind
from ..ledger import Claimed, Ledger
from ..messages import AssetMessage
from ..providers import CredentialsError
from ..retry import prepare_wait
from ..settings import Settings
from ..sources import Resolution, ResolutionKind, Resolver
from .attempt import back_to
from .telemetry import MetricUnit, logger, metrics


@dataclass(frozen=True)
class Handed:
    """What the provider is handed: the URL, and the video's privacy as its platform said it just now."""

    url: str
    privacy: str | None = None


@dataclass
class SourceHandOff:
    settings: Settings
    ledger: Ledger
    presign: Callable[[str], str]
    # source_url -> what the provider is handed (presigned s3://, a platform's fresh link); None: the
    # presigner alone, and no platform's references resolvable.
    sources: Callable[[str], Resolution] | None = None
    clock: Callable[[], float] = time.time
    rng: random.Random = random.Random()  # noqa: RUF009 - one shared generator is fine

    def __call__(self, msg: AssetMessage, claim: Claimed) -> Handed | Outcome | Fate:
        """The URL to hand the provider, made now (an s3:// source presigned, a source reference resolved by
        its platform, so no link expires in the queue); or, for an asset whose source cannot be had now, the
        outcome to apply as the provider's would be (rejected with the inventory's reason, failed like any
        request that did not answer), or its fate, the claim released (deferred without spending its
        attempt: a file the source is preparing, its rate limit, its credentials)."""
        resolver = self.sources or Resolver(_no_source_credentials, self.presign)
        resolution = resolver(claim.source_url)
        kind, reason = resolution.kind, resolution.reason or ""
        if kind is ResolutionKind.READY and resolution.url:
            return Handed(resolution.url, resolution.privacy)
        if kind in (ResolutionKind.READY, ResolutionKind.UNFETCHABLE):
            return Outcome(OutcomeKind.REJECTED, error=reason or "no file link")
        if kind is ResolutionKind.TRANSIENT:
            return Outcome(OutcomeKind.TRANSIENT, error=f"source: {reason}")
        if kind is ResolutionKind.PREPARING:
            return self._wait_for_source(msg, claim, resolution)
        if kind is ResolutionKind.DENIED:  # our configuration: loud, and the asset's budget untouched
            logger.error("source credentials unusable: %s", reason)
            metrics.add_metric(name="SourceMisconfigured", unit=MetricUnit.Count, value=1)
        delay = (resolution.retry_after if resolution.retry_after is not None else 60.0) + self.rng.uniform(0, 5)
        now = self.clock()
        self.ledger.release_throttled(
            msg.asset_id, claim.token, back_to(claim), now + delay, f"source: {reason}", now, count=False
        )
        return Fate.later(delay, f"source: {reason}", pacing=True)

    def _wait_for_source(self, msg: AssetMessage, claim: Claimed, resolution: Resolution) -> Fate:
        """A file the source is preparing: the message comes back when it may be ready, without spending an
        attempt, until the wait has lasted SourcePrepareTimeoutSeconds; then the asset fails with the reason."""
        now, reason = self.clock(), resolution.reason or "the source is preparing the file"
        since = (claim.previous or {}).get("preparing_since")
        limit = self.settings.source_prepare_timeout_s
        waited = now - float(since) if since is not None else 0.0
        if waited >= limit:
            error = (
                f"the source's file was not ready after {waited:.0f} s"
                f" (SourcePrepareTimeoutSeconds {limit:.0f}): {reason}"
            )
            self.ledger.fail_preparing(msg.asset_id, claim.token, error, now)
            metrics.add_metric(name="SourceNeverReady", unit=MetricUnit.Count, value=1)
            return Fate.finished(error)
        delay = prepare_wait(resolution.retry_after or 30.0, waited, limit - waited) + self.rng.uniform(0, 3)
        self.ledger.release_preparing(msg.asset_id, claim.token, back_to(claim), now + delay, reason, now)
        metrics.add_metric(name="SourcePreparing", unit=MetricUnit.Count, value=1)
        logger.info("source preparing; back in %.0f s: %s", delay, reason)
        return Fate.later(delay, reason, pacing=True)


def _no_source_credentials(platform: str):
    raise CredentialsError(f"no source credentials are configured for {platform} (SourceTokenSecretName)")
