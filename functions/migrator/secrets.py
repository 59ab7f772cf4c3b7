"""Secrets from Secrets Manager or an SSM SecureString: the provider's credentials, the webhook's secret.

Powertools' parameters utility caches the value for `max_age` seconds across warm
invocations, so a rotated secret is picked up within that time without a redeploy (the
webhook reads past the cache at once when a signature fails: webhook.Receiver).
Each provider reads its own credentials format from the text (providers/); the webhook
reads its signing secrets (webhook.parse_secrets).
"""

from __future__ import annotations

from aws_lambda_powertools.utilities import parameters

CACHE_SECONDS = 300


def read_secret(secret_name: str | None, parameter_name: str | None, fresh: bool = False) -> str | None:
    """The cached value of the Secrets Manager secret, else of the SSM SecureString;
    None when neither is configured. Shared by the token and the webhook secrets.
    `fresh` reads past the cache (and refreshes it): the webhook's check after a signature
    fails, so a secret rotated a moment ago is not refused for CACHE_SECONDS."""
    if secret_name:
        raw = parameters.get_secret(secret_name, max_age=CACHE_SECONDS, force_fetch=fresh)
    elif parameter_name:
        raw = parameters.get_parameter(parameter_name, decrypt=True, max_age=CACHE_SECONDS, force_fetch=fresh)
    else:
        return None
    return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
