"""Where a provider's webhooks point, where its API can tell, beside where they should (the stack's WebhookUrl).

An upgrade can change the stack's webhook URL (CHANGELOG.md, Unreleased: the webhook's REST API has new logical
ids), and nothing at the provider follows: its callbacks keep going to the old URL until the operator points them
at the new one. So `migrator doctor` (the stack) and `migrator doctor --target` (first contact) read the
provider's subscriptions where its API lists them:

- Cloudflare Stream keeps one webhook per account (`webhook_target`, `GET .../stream/webhook`): pointing it at the
  stack takes it from whatever listens there now;
- api.video (`GET /webhooks`, "List all webhooks") and JW Player (`GET /v2/webhooks/`, jwplatform's
  WebhookClient.list) keep many (`webhook_urls`): one of them must point at the stack;
- Mux, Bunny Stream and the generic contract give the migration's credentials no read of their subscriptions
  here: doctor prints the URL to set and says it cannot read it back; Vimeo sends no webhooks at all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from migrator.providers import PROVIDERS
from migrator.providers.http import TransportError
from migrator.redact import redact_credentials, strip_controls


@dataclass(frozen=True)
class WebhookCheck:
    ok: bool
    detail: str
    fix: str = ""
    unknown: bool = False  # the provider's API cannot say where its webhooks point


def subscriptions(provider) -> tuple[list[str] | None, bool]:
    """(the URLs the provider's webhooks point at, None when its API cannot say; whether it keeps one per
    account). TransportError when it did not answer."""
    many = getattr(provider, "webhook_urls", None)
    if callable(many):
        return many(), False
    one = provider.webhook_target()
    if one is None:
        return None, False
    return ([one] if one else []), True


def webhook_check(provider, here: str | None) -> WebhookCheck:
    """Whether the provider's webhooks point at `here` (the stack's WebhookUrl; None before any stack: only
    where they point is said). What it says is redacted: a subscription's URL may carry a token."""
    found = _check(provider, here)
    return replace(found, detail=_shown(found.detail), fix=_shown(found.fix))


def _shown(text: str) -> str:
    return strip_controls(redact_credentials(text))


def _check(provider, here: str | None) -> WebhookCheck:
    name = provider.name
    if name in PROVIDERS and not PROVIDERS[name].sends_webhooks:  # its class's fact (Vimeo: none, the poll settles)
        return WebhookCheck(True, f"{name} sends no webhooks: reconcile's poll settles every video", unknown=True)
    try:
        urls, single = subscriptions(provider)
    except TransportError as exc:
        return WebhookCheck(False, f"reading {name}'s webhooks got no answer ({exc.kind})", "try again")
    if urls is None:
        set_it = f": point them at {here}" if here else ""
        detail = (
            f"{name} did not let these credentials read its webhook subscriptions"
            if callable(getattr(provider, "webhook_urls", None))
            else f"{name}'s API gives no read of its webhook subscriptions"
        ) + ", so where they point cannot be checked"
        return WebhookCheck(True, detail + set_it, unknown=True)
    if here is None:
        if not urls:
            return WebhookCheck(True, "no webhook subscribed yet: subscribe the stack's WebhookUrl once deployed")
        return WebhookCheck(True, f"subscribed: {', '.join(urls[:5])}")
    if here in urls:
        others = [u for u in urls if u != here]
        also = f" (and {len(others)} other subscription(s): {', '.join(others[:3])})" if others else ""
        said = "the account's one webhook points" if single else "a subscription points"
        return WebhookCheck(True, f"{said} at this stack{also}")
    if not urls:
        what = "the account has no webhook" if single else f"{name} has no webhook subscription"
        fix = (
            f"point the account's webhook at {here} (one per account: docs/providers.md)"
            if single
            else (f"subscribe {here} at {name} (docs/providers.md says with which events)")
        )
        return WebhookCheck(False, f"{what}: no callback will come", fix)
    if single:
        return WebhookCheck(
            False,
            f"the account's only webhook points at {urls[0]}",
            f"point it at {here}; the provider keeps one webhook per account, so that takes it from whatever"
            " listens there now (docs/providers.md)",
        )
    return WebhookCheck(
        False,
        f"{name}'s webhooks point at {', '.join(urls[:5])}, none at this stack's {here}",
        f"subscribe {here} at {name} and remove the old subscription once nothing listens there (after an upgrade"
        " that changed WebhookUrl, CHANGELOG.md); until then callbacks go elsewhere and reconcile's poll settles",
    )
