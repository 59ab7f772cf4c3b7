"""Made-up accounts for each provider and source platform, for local runs: secrets and simulator settings.

Each platform's simulator profile makes its own (infra/sim/platforms: `made_up_target`, `made_up_source`); this
module hands them to the demo, the benchmarks and the tests in the shape they take.

A local run (the demo, the benchmarks, the end-to-end tests) stores the provider's
credentials and the webhook signing secret in the emulator's Secrets Manager, in the
format the stack reads for that provider (docs/providers.md), and tells the simulator
the same values, so the Lambdas authenticate and verify exactly as they would against
the real service.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from infra.sim import catalog


@dataclass(frozen=True)
class Account:
    provider: str
    credentials: str  # the provider secret's text, as the stack reads it
    sim: dict = field(default_factory=dict)  # the simulator's config fields for the same credentials
    webhook_secret: str = ""  # what the stack verifies and the simulator signs with
    webhook_scheme: str = "seed"  # the generic provider's scheme (the simulator's webhook_scheme)
    # Template parameters a stack against this account needs (Bunny: its library is token-protected).
    stack: dict = field(default_factory=dict)

    @property
    def webhook_secret_json(self) -> str:
        return json.dumps({"current": self.webhook_secret})


def account(provider: str, webhook_scheme: str = "standard") -> Account:
    """A fresh made-up account for the target `provider`, as its simulator profile makes one (the profile's
    `made_up_target`: infra/sim/platforms/<provider>.py); `webhook_scheme`: the generic contract's."""
    if not catalog.has(provider):
        raise ValueError(f"unknown provider {provider!r}")
    made = catalog.profile(provider).made_up_target(webhook_scheme)
    return Account(
        provider, json.dumps(made.credentials), made.sim, made.webhook_secret, made.webhook_scheme, made.stack
    )


def source_account(platform: str) -> tuple[dict, dict]:
    """A made-up account on a source platform, as its simulator profile makes one (`made_up_source`): (its entry in
    the stack's source secret, `{"<platform>": this}`, and the source simulator's config fields for the same
    credentials)."""
    if not catalog.has(platform):
        raise ValueError(f"no simulator of the source {platform!r}")
    made = catalog.profile(platform).made_up_source()
    return made.credentials, made.sim


def source_secret(accounts: dict[str, dict]) -> str:
    """The stack's source secret for `{platform: credentials}`: the format migrator.sources reads."""
    return json.dumps(accounts)


def mux_signing_key(api_url: str, credentials: dict) -> dict:
    """A URL signing key made through Mux's API (POST /system/v1/signing-keys), as an operator makes one for
    the Mux source credentials (docs/sources.md): the stack signs the text tracks of signed-only assets with
    it. The fields to add to those credentials."""
    import requests

    answer = requests.post(
        f"{api_url}/system/v1/signing-keys", auth=(credentials["token_id"], credentials["token_secret"]), timeout=10
    )
    answer.raise_for_status()
    key = answer.json()["data"]
    return {"signing_key_id": key["id"], "signing_private_key": key["private_key"]}
