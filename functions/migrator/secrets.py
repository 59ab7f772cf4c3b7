"""Secrets from Secrets Manager or an SSM SecureString: the provider's bearer token.

Powertools' parameters utility caches the value for `max_age` seconds across warm
invocations, so a rotated token is picked up within that time without a redeploy.
The value may be the token itself or a JSON object with a "token" field.
"""

from __future__ import annotations

import json

from aws_lambda_powertools.utilities import parameters

CACHE_SECONDS = 300


def read_secret(secret_name: str | None, parameter_name: str | None) -> str | None:
    """The cached value of the Secrets Manager secret, else of the SSM SecureString;
    None when neither is configured. Shared by the token and the webhook secrets."""
    if secret_name:
        raw = parameters.get_secret(secret_name, max_age=CACHE_SECONDS)
    elif parameter_name:
        raw = parameters.get_parameter(parameter_name, decrypt=True, max_age=CACHE_SECONDS)
    else:
        return None
    return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)


def token_getter(secret_name: str | None, parameter_name: str | None):
    """A zero-argument callable returning the token (None when none is configured)."""

    def get() -> str | None:
        raw = read_secret(secret_name, parameter_name)
        return None if raw is None else _unwrap(raw)

    return get


def _unwrap(raw: str) -> str:
    text = raw.strip()
    if text.startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError:
            return text
        if isinstance(doc, dict) and isinstance(doc.get("token"), str):
            return doc["token"]
    return text
