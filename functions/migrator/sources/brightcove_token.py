"""One Brightcove access token for the whole fleet: kept in a control item of the ledger table, renewed once.

Brightcove's access tokens come from the client credentials (`POST https://oauth.brightcove.com/v4/access_token`,
`grant_type=client_credentials`) and are "only valid for 5 mins" (apis.support.brightcove.com, "Getting Access
Tokens"; the Player Management "OAuth Guide"). The uploaders and the tracks workers are many Lambdas, each
resolving references at the create: if each minted its own token, a burst of a hundred workers would make a
hundred token requests every five minutes, against an OAuth service and an account limit (CMS: about 20
requests at once, under 10 a second, shared with the account's live integrations: secondary) that the
migration shares with the customer. So the token is shared:

- `LedgerTokens`: the `#brightcove-token` control item of the ledger table (the ids starting with '#' are the
  ledger's own: messages.RESERVED_PREFIX; the report, the upgrade and the tally skip them). Every Lambda that
  resolves already reads and updates that table (the uploader and the tracks worker roles: GetItem,
  UpdateItem), so nothing new is granted and no new resource is deployed. A worker whose own copy is near
  its end reads the item (one consistent GetItem every few minutes per warm Lambda); when the item's token is
  near its end too, one worker takes a *lease* with a conditional UpdateItem (no lease, or a lease past its
  time, and the token still stale), mints, and writes the token back conditioned on still holding the lease;
  the others, whose lease write failed, wait a moment and read again. A renewer that dies leaves a lease that
  ends after LEASE_S, when the next worker takes it. A token a CMS request refused (401) is dropped from the
  item only if it is still that token (a conditional write), so a late 401 never erases a fresh token;
- the token is sealed in the item (`seal`/`unseal`): HMAC-SHA256 in counter mode keyed from the client
  secret, with a random nonce and an HMAC tag over both (encrypt-then-MAC). Roles that may read the ledger but
  not the source secret (the webhook, reconcile, an operator's read-only role) cannot use it, and an item
  written under another client id or secret fails its tag and is renewed, never sent;
- `LocalTokens`: the same in one process (the operator's `migrator inventory`, tests): a lock, so the
  threads of one process share one renewal too.

Why DynamoDB rather than Secrets Manager or SSM: a secret store has no conditional write, so two renewers could
not tell which of them renews; the ledger's item gives that in one request, and costs nothing new to deploy.
Each process also keeps the token in memory until RENEW_EARLY_S before its end, so a warm Lambda reads the item
once per token, not per request.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

TOKEN_ITEM = "#brightcove-token"
# Renewed this long before its end (a request in flight must not carry a token that dies on the way).
RENEW_EARLY_S = 30.0
# How long one worker may hold the right to renew before another may take it over.
LEASE_S = 10.0
# A worker that finds another renewing waits this long between reads, up to LEASE_S in all.
WAIT_STEP_S = 0.25


@dataclass(frozen=True)
class Token:
    value: str
    expires_at: float  # epoch seconds

    def fresh(self, now: float) -> bool:
        return self.expires_at - RENEW_EARLY_S > now


class TokenStore(Protocol):
    """Where the fleet's token is kept: read it, take the lease to renew it, write it, drop a refused one."""

    def read(self, key: bytes) -> Token | None: ...

    def lease(self, now: float, owner: str) -> bool: ...

    def write(self, key: bytes, token: Token, owner: str) -> None: ...

    def drop(self, key: bytes, token: Token) -> None: ...


# --- sealing --------------------------------------------------------------------------------------------


def seal_key(client_id: str, client_secret: str) -> bytes:
    """The key a token is sealed with: only holders of the client credentials have it."""
    return hmac.new(client_secret.encode(), b"brightcove-token-seal|" + client_id.encode(), hashlib.sha256).digest()


def _stream(key: bytes, nonce: bytes, length: int) -> bytes:
    blocks = (hmac.new(key, nonce + n.to_bytes(4, "big"), hashlib.sha256).digest() for n in range(length // 32 + 1))
    return b"".join(blocks)[:length]


def seal(key: bytes, token: str) -> str:
    """`token` encrypted (HMAC-SHA256 counter mode) and authenticated (HMAC-SHA256 over nonce and ciphertext)."""
    nonce = secrets.token_bytes(16)
    plain = token.encode()
    cipher = bytes(a ^ b for a, b in zip(plain, _stream(key, nonce, len(plain)), strict=True))
    tag = hmac.new(key, b"tag|" + nonce + cipher, hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(nonce + tag + cipher).decode()


def unseal(key: bytes, sealed: object) -> str | None:
    """The token, or None when `sealed` is not one this key sealed (another client, tampered, garbage)."""
    try:
        raw = base64.urlsafe_b64decode(str(sealed).encode())
    except (ValueError, TypeError):
        return None
    if len(raw) < 33:
        return None
    nonce, tag, cipher = raw[:16], raw[16:32], raw[32:]
    if not hmac.compare_digest(tag, hmac.new(key, b"tag|" + nonce + cipher, hashlib.sha256).digest()[:16]):
        return None
    try:
        return bytes(a ^ b for a, b in zip(cipher, _stream(key, nonce, len(cipher)), strict=True)).decode()
    except UnicodeDecodeError:
        return None


# --- the stores -----------------------------------------------------------------------------------------


class LocalTokens:
    """The token of one process (sealed all the same: one code path)."""

    def __init__(self) -> None:
        self._sealed: str | None = None
        self._expires_at = 0.0
        self._lease: tuple[str, float] | None = None
        self._lock = threading.Lock()

    def read(self, key: bytes) -> Token | None:
        with self._lock:
            value = unseal(key, self._sealed) if self._sealed else None
            return Token(value, self._expires_at) if value else None

    def lease(self, now: float, owner: str) -> bool:
        with self._lock:
            if self._lease is not None and self._lease[1] > now:
                return False
            self._lease = (owner, now + LEASE_S)
            return True

    def write(self, key: bytes, token: Token, owner: str) -> None:
        with self._lock:
            if self._lease is None or self._lease[0] == owner:
                self._sealed, self._expires_at, self._lease = seal(key, token.value), token.expires_at, None

    def drop(self, key: bytes, token: Token) -> None:
        with self._lock:
            if self._sealed and unseal(key, self._sealed) == token.value:
                self._expires_at = 0.0


class LedgerTokens:
    """The `#brightcove-token` item of the ledger table, read and written with the low-level client."""

    def __init__(self, table: str, client: Any):
        self.table, self.client = table, client

    def _key(self) -> dict:
        return {"asset_id": {"S": TOKEN_ITEM}}

    def read(self, key: bytes) -> Token | None:
        item = self.client.get_item(TableName=self.table, Key=self._key(), ConsistentRead=True).get("Item") or {}
        value = unseal(key, item.get("token", {}).get("S"))
        try:
            expires_at = float(item.get("expires_at", {}).get("N", "0"))
        except ValueError:
            return None
        return Token(value, expires_at) if value else None

    def _update(self, expression: str, condition: str, values: dict) -> bool:
        """One conditional UpdateItem; False when its condition did not hold (another worker was first)."""
        from botocore.exceptions import ClientError

        request: dict[str, Any] = {"UpdateExpression": expression, "ConditionExpression": condition}
        request["ExpressionAttributeValues"] = values
        if "#t" in expression + condition:
            request["ExpressionAttributeNames"] = {"#t": "token"}
        try:
            self.client.update_item(TableName=self.table, Key=self._key(), **request)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def lease(self, now: float, owner: str) -> bool:
        """The right to renew: no lease held, or one past its time; and the token still not fresh."""
        return self._update(
            "SET lease_owner = :owner, lease_until = :until",
            "(attribute_not_exists(lease_until) OR lease_until < :now)"
            " AND (attribute_not_exists(expires_at) OR expires_at < :fresh)",
            {
                ":owner": {"S": owner},
                ":until": {"N": f"{now + LEASE_S:.3f}"},
                ":now": {"N": f"{now:.3f}"},
                ":fresh": {"N": f"{now + RENEW_EARLY_S:.3f}"},
            },
        )

    def write(self, key: bytes, token: Token, owner: str) -> None:
        """The renewed token, if this worker still holds the lease (else another renewed since: keep theirs)."""
        values = {
            ":token": {"S": seal(key, token.value)},
            ":expires": {"N": f"{token.expires_at:.3f}"},
            ":zero": {"N": "0"},
            ":owner": {"S": owner},
        }
        self._update("SET #t = :token, expires_at = :expires, lease_until = :zero", "lease_owner = :owner", values)

    def drop(self, key: bytes, token: Token) -> None:
        """A token Brightcove refused, made stale in the item only if the item still holds it."""
        item = self.client.get_item(TableName=self.table, Key=self._key(), ConsistentRead=True).get("Item") or {}
        sealed = item.get("token", {}).get("S")
        if sealed is None or unseal(key, sealed) != token.value:
            return
        self._update("SET expires_at = :zero", "#t = :sealed", {":zero": {"N": "0"}, ":sealed": {"S": sealed}})


def default_store() -> TokenStore:
    """In a Lambda of the stack (LEDGER_TABLE set), the ledger's item; elsewhere, this process's own."""
    table = os.environ.get("LEDGER_TABLE")
    if not table:
        return LocalTokens()
    import boto3

    return LedgerTokens(table, boto3.client("dynamodb"))


class SharedToken:
    """One worker's side: its own copy while fresh, else the store's, else one renewal for everyone."""

    def __init__(
        self,
        store: TokenStore,
        mint: Callable[[], Token],
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.store, self.mint, self.clock, self.sleep = store, mint, clock, sleep
        self.owner = secrets.token_hex(8)
        self._mine: Token | None = None
        self._lock = threading.Lock()
        self.minted = 0  # tokens this worker asked Brightcove for

    def get(self, key: bytes) -> Token:
        mine = self._mine
        if mine is not None and mine.fresh(self.clock()):
            return mine
        with self._lock:  # one renewal in flight per process
            return self._renew(key)

    def _renew(self, key: bytes) -> Token:
        waited = 0.0
        while True:
            now = self.clock()
            if self._mine is not None and self._mine.fresh(now):
                return self._mine
            held = self.store.read(key)
            if held is not None and held.fresh(now):
                self._mine = held
                return held
            if self.store.lease(now, self.owner) or waited >= LEASE_S + WAIT_STEP_S:
                token = self.mint()
                self.minted += 1
                self.store.write(key, token, self.owner)
                self._mine = token
                return token
            self.sleep(WAIT_STEP_S)  # another worker is renewing: its token is a moment away
            waited += WAIT_STEP_S

    def refused(self, key: bytes, token: Token) -> None:
        """Brightcove answered 401 to `token`: forget it here and in the store (if it still holds it)."""
        with self._lock:
            if self._mine is not None and self._mine.value == token.value:
                self._mine = None
            self.store.drop(key, token)
