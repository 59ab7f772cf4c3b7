"""Credentials out of text we store or log: query-string signatures and tokens in URLs.

A provider that cannot fetch a source often echoes the URL it was given, and for an
s3:// source that URL is presigned: its query string is a bearer credential until it
expires. Anything the provider says goes through `redact_credentials` before it
reaches the ledger (`last_error`, the index, the report) or a log line; the rest of
the message (host, path, the provider's reason) is kept, since that is what an
operator needs to act on.
"""

from __future__ import annotations

import re

REDACTED = "REDACTED"

# Query parameters that carry a credential in the URL schemes providers echo back:
# AWS SigV4 (X-Amz-*) and SigV2 (AWSAccessKeyId, Signature), STS session tokens, CloudFront
# signed URLs (Policy, Key-Pair-Id), Google Cloud Storage (X-Goog-*), Azure SAS (sig), and
# the generic token/access_token/api_key names.
_SECRET_PARAMS = (
    "x-amz-signature|x-amz-credential|x-amz-security-token|awsaccesskeyid|signature|security-token"
    "|policy|key-pair-id|x-goog-signature|x-goog-credential|sig|token|access_token|api_key|apikey|key"
)
# `name=value` after ?, & or its JSON escape \u0026; the value runs to the next separator.
_PARAM = re.compile(
    rf"(?P<lead>[?&;]|\\u0026)(?P<name>{_SECRET_PARAMS})=(?P<value>[^&;\s\"'<>\\]*)",
    re.IGNORECASE,
)
# user:password@ in a URL's authority.
_USERINFO = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)[^/\s@\"'<>]+@", re.IGNORECASE)


# Punctuation that ends a sentence after a URL ("... failed: https://h/a?sig=x: 403").
_TRAILING = re.compile(r"[:,.)\]]+$")


def _param(match: re.Match) -> str:
    value = match["value"]
    if not value:
        return match[0]
    tail = _TRAILING.search(value)
    return f"{match['lead']}{match['name']}={REDACTED}{tail[0] if tail else ''}"


def redact_credentials(text: str) -> str:
    """`text` with every credential-bearing query value and URL password replaced by REDACTED."""
    if not text:
        return text
    text = _PARAM.sub(_param, text)
    return _USERINFO.sub(lambda m: f"{m['scheme']}{REDACTED}@", text)
