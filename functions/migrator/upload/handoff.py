"""The source's hand-off to the provider, made just before the create: use `SourceHandOff` to turn a claimed
asset's `source_url` into the URL the provider is handed, or into why it cannot be had now. A link is handed
only when it lives as long as the provider needs it (`link_life.decide`): as it is, signed again for longer
where its source can, or the asset rejected with why and what to do before any create is spent."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..fate import Fate, Outcome, OutcomeKind
from ..ledger import Claimed, Ledger
from ..link_life import Handing, LinkTerms, Need, Verdict, decide
from ..messages import AssetMessage
from ..providers import CredentialsError
from ..retry import prepare_wait
from ..settings import Settings
from ..sources import Resolution, ResolutionKind, Resolver
from .attempt import back_to
from .telemetry import MetricUnit, logger, metrics

AT_ONCE = Need("the provider")  # a provider that fetches the link once the create is accepted


@dataclass(frozen=True)
class Handed:
    """What the provider is handed: the URL, the video's privacy as its platform said it just now, and what the
    ledger keeps of the hand-off (a link signed again to live as long as the provider needs)."""

    url: str
    privacy: str | None = None
    notes: tuple[str, ...] = ()


@dataclass
class SourceHandOff:
    settings: Settings
    ledger: Ledger
    presign: Callable[..., str]
    # source_url -> what the provider is handed (presigned s3://, a platform's fresh link); None: the
    # presigner alone, and no platform's references resolvable. Called as (url, lasting_s=...) for a link
    # signed again for longer, where the resolution's terms say its source can.
    sources: Callable[..., Resolution] | None = None
    clock: Callable[[], float] = time.time
    rng: random.Random = random.Random()  # noqa: RUF009 - one shared generator is fine
    # How long the provider needs the link it is handed (link_life.need_of the provider): at once by default.
    need: Need = AT_ONCE

    def __call__(self, msg: AssetMessage, claim: Claimed, url: str | None = None) -> Handed | Outcome | Fate:
        """The URL to hand the provider, made now (an s3:// source presigned, a source reference resolved by
        its platform, so no link expires in the queue) and living as long as the provider needs it, from `url`
        where given (ArchiveFirst's archived copy), else the claim's `source_url`; or, for
        an asset whose source cannot be had now, the outcome to apply as the provider's would be (rejected
        with the inventory's reason or with why its link cannot live long enough, failed like any request
        that did not answer), or its fate, the claim released (deferred without spending its attempt: a
        file the source is preparing, its rate limit, its credentials)."""
        resolver = self.sources or Resolver(
            _no_source_credentials, self.presign, self.settings.presign_expiry_s, self.clock
        )
        lasting = self._lasting(resolver, url or claim.source_url)
        if isinstance(lasting, Outcome):
            return lasting
        resolution, notes = lasting
        kind, reason = resolution.kind, resolution.reason or ""
        if kind is ResolutionKind.READY and resolution.url:
            return Handed(resolution.url, resolution.privacy, notes)
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

    def _lasting(self, resolver: Callable[..., Resolution], url: str) -> tuple[Resolution, tuple[str, ...]] | Outcome:
        """The source's answer for `url`, a link in it weighed against the provider's need: as it is, signed again
        for longer where its source can (with the note the ledger keeps), or the REJECTED outcome saying why."""
        resolution = resolver(url)
        notes: tuple[str, ...] = ()
        verdict = self._verdict(resolution, may_remint=True)
        if verdict.handing is Handing.REMINT:
            notes = (verdict.reason,)
            resolution = resolver(url, lasting_s=verdict.mint_s)
            verdict = self._verdict(resolution, may_remint=False)
        if verdict.handing is Handing.REFUSE:
            logger.info("source link refused: %s", verdict.reason)
            metrics.add_metric(name="SourceLinkTooShort", unit=MetricUnit.Count, value=1)
            return Outcome(OutcomeKind.REJECTED, error=verdict.reason)
        return resolution, notes

    def _verdict(self, resolution: Resolution, may_remint: bool) -> Verdict:
        """What to do with a ready link (`link_life.decide`); any other answer is passed on as it is."""
        if resolution.kind is not ResolutionKind.READY or not resolution.url:
            return Verdict(Handing.HAND)
        left = resolution.expires_at - self.clock() if resolution.expires_at is not None else None
        return decide(left, resolution.terms or LinkTerms(), self.need, may_remint)

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
