"""Kaltura's API v3 as the Kaltura source speaks it: the credentials, the KS every call carries and its renewal,
the answers and the API exceptions they may be (sources/kaltura.py; an entry's privacy: kaltura_privacy.py).

- a call is `POST {service URL}/api_v3/service/{service}/action/{action}` with the parameters as a JSON body,
  `format` 1 (JSON: "KalturaResponseType" 1 JSON, 2 XML, the default) and the KS in `ks` (KalturaClient 23.10.0,
  the official Python client, posts the same body; its `format` is 2). Every answer is HTTP 200: an API error
  is the body `{"code", "message", "objectType": "KalturaAPIException", "args"}` (kaltura/server
  KalturaSerializer::convertExceptionsToPhpArrays, KalturaJsonSerializer);
- the KS: an app token's (preferred: the admin secret is never stored) or `session.start`'s. With an app token
  (developer.kaltura.com "Generating Kaltura Sessions with Application Tokens"): `session.startWidgetSession`
  (`widgetId` "_<partner id>") gives an unprivileged KS; `appToken.startSession(id, tokenHash)` with that KS,
  `tokenHash` = HASH(widget KS + the app token's token) in the token's `hashType` (SHA1 by default; MD5,
  SHA256, SHA512), answers a `KalturaSessionInfo {ks, expiry}`; its lifetime is the token's `sessionDuration`
  at most, and no later than the token's own `expiry` (AppTokenService::startSessionAction). With the admin
  secret: `session.start(secret, userId, type 2 (ADMIN), partnerId, expiry)` answers the KS as a string, its
  expiry 86,400 s by default (testmeDoc session.start);
- a KS dies at its expiry: every call then answers `INVALID_KS` with `args.ERR_CODE` -5, `ERR_DESC` EXPIRED
  (kSessionBase::EXPIRED; KalturaErrors::INVALID_KS, whose message quotes the KS itself: never kept in a reason
  here). `Session` starts a new one RENEW_BEFORE_S before the expiry it was told, and once more when a call is
  refused INVALID_KS anyway (a clock ahead of ours, a KS revoked), then tries that call again: a listing that
  runs for weeks keeps its cursor and goes on. An app token past its own `expiry` answers APP_TOKEN_EXPIRED:
  that is the operator's to renew (DENIED, with what to do).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..providers.facts import CredentialsError, entries, finite_number, mapping, text
from .base import SourceDenied, SourceError

SESSION_TTL_S = 86_400  # session.start's default `expiry`, and what a KS is asked to live
RENEW_BEFORE_S = 600.0  # a KS this close to its expiry is replaced before the next call
ADMIN = 2  # KalturaSessionType.ADMIN: a listing reads every entry of the partner
HASHES: dict[str, Callable] = {
    "SHA1": hashlib.sha1,
    "MD5": hashlib.md5,
    "SHA256": hashlib.sha256,
    "SHA512": hashlib.sha512,
}
# The credentials' fields. Anything else is refused: a field this tool does not know may be a filter the operator
# meant, and Kaltura answers a filter field it does not support by ignoring it (and returning everything).
KNOWN_FIELDS = frozenset(
    {"partner_id", "app_token_id", "app_token", "app_token_hash", "admin_secret", "user_id", "category_ids"}
)
MAX_CATEGORY_IDS = 100
# Errors that are the operator's to fix (their words are Kaltura's codes, KalturaErrors / APIErrors).
DENIED_CODES = {
    "APP_TOKEN_EXPIRED": "the Kaltura app token has expired: make another (appToken.add) and put it in the credentials",
    "APP_TOKEN_NOT_ACTIVE": "the Kaltura app token is not active (deleted or disabled): make another (appToken.add)",
    "APP_TOKEN_ID_NOT_FOUND": "Kaltura knows no app token of that app_token_id",
    "INVALID_APP_TOKEN_HASH": "Kaltura refused the app token's hash: check app_token and app_token_hash (hashType)",
    "START_SESSION_ERROR": "Kaltura would not start a session for these credentials (partner id or admin secret)",
    "SERVICE_FORBIDDEN": "the Kaltura session may not call this service (the app token's or the KS's privileges)",
    "INVALID_WIDGET_ID": "Kaltura knows no partner of that partner_id (its widget _<partner id>)",
    "INVALID_KS": "Kaltura refused a KS it had just started (the clock, or the partner's session settings)",
}
_ENTRY_ID = re.compile(r"^[0-9]_[0-9a-zA-Z]{1,40}$")


def is_entry_id(value: object) -> bool:
    """Kaltura's entry ids ("0_abcd1234"): a digit, an underscore, letters and digits."""
    return isinstance(value, str) and bool(_ENTRY_ID.match(value))


def number(value: object) -> int | None:
    """An integer field Kaltura may write as a number or as a string enum ("2")."""
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,12}", value.strip()):
        return int(value)
    found = finite_number(value)
    return int(found) if found is not None and found.is_integer() else None


@dataclass(frozen=True)
class Credentials:
    """`{"partner_id": 123, "app_token_id": "...", "app_token": "...", "app_token_hash": "SHA256"}` (an app
    token, preferred) or `{"partner_id": 123, "admin_secret": "...", "user_id": "..."}`; `category_ids`: list
    only entries in one of these categories (checked on every entry listed)."""

    partner_id: int
    app_token_id: str | None = None
    app_token: str | None = None
    hash_type: str = "SHA1"
    admin_secret: str | None = None
    user_id: str = ""
    category_ids: tuple[int, ...] = ()

    @classmethod
    def parse(cls, creds: Mapping) -> Credentials:
        unknown = sorted(set(creds) - KNOWN_FIELDS)
        if unknown:
            raise CredentialsError(
                f"the Kaltura credentials have fields this tool does not know ({', '.join(unknown)[:80]}): Kaltura"
                " ignores a filter it does not support and lists everything, so none is passed that is not checked"
            )
        partner = number(creds.get("partner_id"))
        if partner is None or partner <= 0:
            raise CredentialsError("the Kaltura credentials need partner_id, the partner's number")
        token_id, token, secret = (text(creds.get(k)) for k in ("app_token_id", "app_token", "admin_secret"))
        hash_type = (text(creds.get("app_token_hash")) or "SHA1").upper()
        if token_id and token:
            if hash_type not in HASHES:
                raise CredentialsError(f"app_token_hash must be one of {', '.join(HASHES)} (the app token's hashType)")
        elif not secret:
            raise CredentialsError(
                "the Kaltura credentials need app_token_id and app_token (an app token), or admin_secret"
            )
        categories = creds.get("category_ids", [])
        ids = [number(c) for c in entries(categories)] if isinstance(categories, list) else [None]
        if None in ids or len(ids) > MAX_CATEGORY_IDS or any(i is not None and i <= 0 for i in ids):
            raise CredentialsError(f"category_ids must be a list of at most {MAX_CATEGORY_IDS} category ids")
        return cls(
            partner,
            token_id if token else None,
            token if token_id else None,
            hash_type,
            None if token_id and token else secret,
            text(creds.get("user_id")) or "",
            tuple(i for i in ids if i is not None),
        )

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(s for s in (self.app_token, self.admin_secret) if s)


def api_error(body: object) -> tuple[str, str, dict] | None:
    """(code, message, args) of an answer that is a KalturaAPIException, else None."""
    doc = mapping(body)
    if doc.get("objectType") != "KalturaAPIException":  # the serializer names every exception so
        return None
    return text(doc.get("code")) or "UNKNOWN", text(doc.get("message")) or "", mapping(doc.get("args"))


class KalturaError(SourceError):
    """An API exception Kaltura answered; `code` is its code (ENTRY_ID_NOT_FOUND, ...)."""

    def __init__(self, code: str, reason: str):
        super().__init__(reason)
        self.code = code


def refusal(code: str, message: str, what: str, hidden: tuple[str, ...]) -> SourceError:
    """The error for an API exception: DENIED where the credentials are the cause, else the listing's stop.
    Nothing of a KS or a secret is kept: INVALID_KS's message quotes the KS, so no message of it is."""
    if code in DENIED_CODES:
        return SourceDenied(f"kaltura: {what}: {code}: {DENIED_CODES[code]}")
    shown = message
    for secret in hidden:
        shown = shown.replace(secret, "...") if secret else shown
    shown = re.sub(r"[A-Za-z0-9+/=_-]{60,}", "...", shown)[:200]  # anything that could be a KS
    return KalturaError(code, f"kaltura: {what} answered {code}: {shown}")


class Session:
    """The KS the calls carry: started from the credentials, replaced RENEW_BEFORE_S before its expiry, and
    dropped (`drop`) when Kaltura refuses it, so the next call starts another."""

    def __init__(self, call: Callable[[str, str, dict, str | None], object], clock: Callable[[], float]):
        self._call = call  # (service, action, params, ks) -> the answer's body, errors raised
        self._clock = clock
        self._ks: str | None = None
        self._expires_at = 0.0
        self.started = 0  # sessions started (the first, and every renewal)

    def ks(self, creds: Credentials) -> str:
        if self._ks is None or self._clock() >= self._expires_at - RENEW_BEFORE_S:
            self._ks, self._expires_at = self._start(creds)
            self.started += 1
        return self._ks

    def drop(self) -> None:
        self._ks = None

    @property
    def current(self) -> str | None:
        return self._ks

    def _start(self, creds: Credentials) -> tuple[str, float]:
        now = self._clock()
        if creds.app_token_id and creds.app_token:
            widget = mapping(self._call("session", "startWidgetSession", {"widgetId": f"_{creds.partner_id}"}, None))
            widget_ks = text(widget.get("ks"))
            if not widget_ks:
                raise SourceError("kaltura: session.startWidgetSession answered no ks")
            digest = HASHES[creds.hash_type]((widget_ks + creds.app_token).encode()).hexdigest()
            params = {"id": creds.app_token_id, "tokenHash": digest, "expiry": SESSION_TTL_S}
            info = mapping(self._call("appToken", "startSession", params, widget_ks))
            ks, expiry = text(info.get("ks")), number(info.get("expiry"))
            if not ks:
                raise SourceError("kaltura: appToken.startSession answered no ks")
            # `expiry` is the epoch second the KS dies (KalturaSessionInfo.expiry: the KS's valid_until).
            return ks, float(expiry) if expiry and expiry > now else now + SESSION_TTL_S
        params = {
            "secret": creds.admin_secret,
            "userId": creds.user_id,
            "type": ADMIN,
            "partnerId": creds.partner_id,
            "expiry": SESSION_TTL_S,
        }
        ks = text(self._call("session", "start", params, None))
        if not ks:
            raise SourceError("kaltura: session.start answered no KS")
        return ks, now + SESSION_TTL_S
