"""Made-up accounts for each provider and source platform, for local runs: secrets and simulator settings.

A local run (the demo, the benchmarks, the end-to-end tests) stores the provider's
credentials and the webhook signing secret in the emulator's Secrets Manager, in the
format the stack reads for that provider (docs/providers.md), and tells the simulator
the same values, so the Lambdas authenticate and verify exactly as they would against
the real service.
"""

from __future__ import annotations

import base64
import json
import secrets
from dataclasses import dataclass, field


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
    """A fresh made-up account for `provider` (generic, mux, cloudflare, apivideo, bunny)."""
    token = secrets.token_urlsafe(24)
    if provider == "generic":
        if webhook_scheme == "standard":
            signing = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
        else:
            signing = secrets.token_urlsafe(24)
        return Account(provider, json.dumps({"token": token}), {"token": token}, signing, webhook_scheme)
    if provider == "mux":
        token_id = secrets.token_hex(8)
        creds = {"token_id": token_id, "token_secret": token}
        return Account(provider, json.dumps(creds), creds, secrets.token_hex(16))
    if provider == "cloudflare":
        account_id = secrets.token_hex(16)  # 32 hex characters, as Cloudflare's are
        creds = json.dumps({"account_id": account_id, "api_token": token})
        return Account(provider, creds, {"account_id": account_id, "token": token}, secrets.token_hex(16))
    if provider == "jwplayer":  # a property: its id, a v2 API secret, and its secret with URL signing on
        site, signing = secrets.token_hex(4), secrets.token_urlsafe(32)
        creds = {"site_id": site, "api_secret": token, "signing_secret": signing, "url_signing": True}
        sim = {"token": token, "account_id": site, "signing_secret": signing}
        return Account(provider, json.dumps(creds), sim, secrets.token_urlsafe(32))
    if provider == "apivideo":
        return Account(provider, json.dumps({"api_key": token}), {"api_key": token}, "sig_sec_" + secrets.token_hex(11))
    if provider == "bunny":  # one video library: its id, its API key, its token authentication key (on)
        library, token_key = str(100_000 + secrets.randbelow(900_000)), secrets.token_hex(16)
        creds = json.dumps({"library_id": library, "api_key": token, "token_key": token_key})
        sim = {"account_id": library, "api_key": token, "token_secret": token_key}
        read_only_key = secrets.token_hex(18)  # what Bunny signs its webhooks with
        return Account(provider, creds, sim, read_only_key, stack={"BunnyTokenAuthentication": "true"})
    if provider == "vimeo":  # a personal access token; Vimeo sends no webhooks (the secret is the doctor's test)
        return Account(provider, json.dumps({"token": token}), {"token": token}, secrets.token_hex(16))
    raise ValueError(f"unknown provider {provider!r}")


def source_account(platform: str) -> tuple[dict, dict]:
    """A made-up account on a source platform: (its entry in the stack's source secret, `{"<platform>": this}`,
    and the source simulator's config fields for the same credentials)."""
    if platform in ("vimeo", "wistia"):
        token = secrets.token_urlsafe(24)
        return {"token": token}, {"token": token}
    if platform == "kaltura":  # an app token (its id and token), never the admin secret; the simulator's partner
        token_id, token = "0_" + secrets.token_hex(4), secrets.token_hex(16)
        creds = {"partner_id": 2_012_345, "app_token_id": token_id, "app_token": token}
        return creds, {"token_id": token_id, "token_secret": token}
    if platform == "dropbox":  # an OAuth 2 access token, and the folder to migrate
        token = secrets.token_urlsafe(32)
        return {"token": token, "path": "/Videos"}, {"token": token}
    if platform == "brightcove":  # API client credentials and the Video Cloud account they serve
        client_id, client_secret = secrets.token_hex(8), secrets.token_urlsafe(24)
        creds = {"account_id": "6300000000001", "client_id": client_id, "client_secret": client_secret}
        return creds, {"account_id": creds["account_id"], "token_id": client_id, "token_secret": client_secret}
    acct = account(platform)
    return json.loads(acct.credentials), acct.sim


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
