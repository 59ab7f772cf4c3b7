"""CloudFront signed URLs and signed cookies, made and checked as AWS documents them (pure: no I/O).

The `aws` target (issue 44) serves private and signed rows only through CloudFront, signed with a key
from the distribution's trusted key group. This module makes those URLs and cookies (`migrator export`,
`migrator verify`) and checks them as an edge does (what the local CloudFront stand-in will call), so
what we make and what we accept follow one reading of the documents, held against botocore's
`CloudFrontSigner` byte for byte in tests/sim/test_sdk_cloudfront_signing.py. The key is a
`playback_tokens.SigningKey` (the same PEM loading, PKCS#1 or PKCS#8, with `rsa`, pure Python, so the
same code runs on arm64 Lambda); its `key_id` is the CloudFront public key's ID.

The rules, each from the CloudFront Developer Guide (D = https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide):
- Canned policy, D/private-content-creating-signed-url-canned-policy.html: the statement
  `{"Statement":[{"Resource":"<base URL>","Condition":{"DateLessThan":{"AWS:EpochTime":<seconds>}}}]}`,
  UTF-8, in that literal order, every whitespace removed. Resource is the URL with the viewer's own query
  string but none of CloudFront's parameters; DateLessThan is Expires, unquoted, Unix seconds no later
  than 2147483647. The URL is `<base>?<own params>&Expires=<s>&Signature=<sig>&Key-Pair-Id=<id>` (`?`
  before our parameters when the base has no query string, else `&`); the policy itself is not in the URL.
- Custom policy, D/private-content-creating-signed-url-custom-policy.html: one statement; Resource with
  `*` (zero or more characters) and `?` (exactly one) anywhere, and "if you omit the Resource parameter"
  any object; DateLessThan required; DateGreaterThan and IpAddress optional; IpAddress is one IPv4
  address or range in CIDR form, a single address as `/32`, IPv6 not supported; "the order of the
  parameters in the Condition section doesn't matter". The URL carries `Policy=<policy in safe base64>`
  where a canned one has Expires.
- Signature, the same pages and D/private-content-linux-openssl.html: RSA (PKCS#1 v1.5) over the SHA-1
  hash of the policy's exact bytes (`openssl sha1 -sign`), base64 without line breaks (`openssl base64 -A`),
  then `+` to `-`, `=` to `_`, `/` to `~` (`tr -- '+=/' '-_~'`); the Policy parameter is encoded alike.
  SHA-256 only with `Hash-Algorithm=SHA256` (D/PrivateCFSignatureCodeAndExamples.html; the canned page's
  example puts it after Key-Pair-Id); URLs that name no hash are SHA-1.
- Key-Pair-Id: the ID of a public key in a key group the cache behaviour trusts, e.g. K2JCJMDEHXQW5F
  (the canned page).
- Cookies, D/private-content-setting-signed-cookie-canned-policy.html and ...-custom-policy.html:
  `CloudFront-Expires` (canned) or `CloudFront-Policy` (custom), `CloudFront-Signature`,
  `CloudFront-Key-Pair-Id`, optionally `CloudFront-Hash-Algorithm`, one `Set-Cookie` each with Domain,
  Path, Secure and HttpOnly; the same policy, signature and encoding as the URLs.
- Precedence, D/private-content-choosing-signed-urls-cookies.html: a URL with any of Expires, Policy,
  Signature, Key-Pair-Id or Hash-Algorithm is a signed URL and its cookies are not looked at; the viewer's
  own parameters cannot have those names.
- Expiry, D/private-content-signed-urls.html#private-content-check-expiration: checked at the request's time.

What the documents leave open, decided strictly here (the stand-in must not accept what CloudFront might
refuse): DateLessThan and DateGreaterThan are exclusive, as their names say (refused at that very second);
Expires is written as the policy writes it (decimal digits, no sign, no leading zero); a signature must be
of the hash the request names (`rsa.verify` says which hash a signature carries), so a SHA-256 signature
without Hash-Algorithm=SHA256 is refused; a parameter given twice, or Expires beside Policy, is refused;
a custom policy with duplicate or unknown keys, quoted times, or an address without its prefix length is
refused; an IpAddress condition with no client address to check is refused. The signature is checked
before the policy's JSON is read.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import rsa
from pyasn1.error import PyAsn1Error

from migrator.playback_tokens import SigningKey, SigningKeyError

SHA1, SHA256 = "SHA1", "SHA256"  # the values of Hash-Algorithm
_RSA_HASH = {SHA1: "SHA-1", SHA256: "SHA-256"}  # rsa's names for them
MAX_EPOCH = 2_147_483_647  # "a 32-bit integer for a date which can be no later than 2147483647" (the canned page)

# Why a request was refused (Verdict.reason).
MALFORMED = "malformed"  # not a URL, a parameter or a policy in CloudFront's form
MISSING = "missing-parameter"
AMBIGUOUS = "ambiguous"  # a parameter twice, or Expires beside Policy
UNKNOWN_KEY = "unknown-key"  # Key-Pair-Id is no key of the trusted key group
BAD_HASH = "bad-hash-algorithm"
BAD_SIGNATURE = "bad-signature"
EXPIRED = "expired"
NOT_YET_VALID = "not-yet-valid"
RESOURCE_MISMATCH = "resource-mismatch"
IP_REFUSED = "ip-refused"


@dataclass(frozen=True)
class _Names:
    """What the five values are called: query parameters in a URL, cookie names in cookies."""

    expires: str
    policy: str
    signature: str
    key_pair_id: str
    hash_algorithm: str

    @property
    def all(self) -> frozenset[str]:
        return frozenset((self.expires, self.policy, self.signature, self.key_pair_id, self.hash_algorithm))


URL_PARAMETERS = _Names("Expires", "Policy", "Signature", "Key-Pair-Id", "Hash-Algorithm")
COOKIES = _Names(
    "CloudFront-Expires",
    "CloudFront-Policy",
    "CloudFront-Signature",
    "CloudFront-Key-Pair-Id",
    "CloudFront-Hash-Algorithm",
)

_TO_SAFE = str.maketrans("+=/", "-_~")
_FROM_SAFE = str.maketrans("-_~", "+=/")
_SAFE_BASE64 = re.compile(r"[A-Za-z0-9_~-]+")
_KEY_ID = re.compile(r"[A-Za-z0-9]{1,128}")  # K2JCJMDEHXQW5F; a legacy key pair's APKA...: it goes in a URL as is
_EPOCH = re.compile(r"0|[1-9][0-9]{0,9}")
_IPV4_RANGE = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?:/[0-9]{1,2})?")
_NOT_IN_RESOURCE = re.compile(r'["\\\x00-\x20\x7f#]')  # would need JSON escapes, or never reaches CloudFront


class SigningError(ValueError):
    """What cannot be signed as CloudFront reads it: the reason names no key and no signature."""


def cloudfront_b64encode(raw: bytes) -> str:
    """Base64 in one line with CloudFront's replacements for the characters a query string cannot carry."""
    return base64.b64encode(raw).decode("ascii").translate(_TO_SAFE)


def cloudfront_b64decode(text: str) -> bytes:
    """The bytes of a Signature or Policy value; ValueError unless it is in CloudFront's alphabet and padded."""
    if not _SAFE_BASE64.fullmatch(text):
        raise ValueError("not CloudFront's base64")
    return base64.b64decode(text.translate(_FROM_SAFE), validate=True)


def canned_policy(resource: str, expires_at: int) -> str:
    """The canned policy statement CloudFront rebuilds for `resource` and Expires, byte for byte."""
    _check_resource(resource, wildcards=False)
    return _statement(resource, {"DateLessThan": {"AWS:EpochTime": _epoch(expires_at, "the expiry")}})


@dataclass(frozen=True)
class CustomPolicy:
    """A custom policy: `resource` may hold `*` and `?`; times are Unix seconds; `ip_address` is IPv4 or a range."""

    resource: str
    date_less_than: int
    date_greater_than: int | None = None
    ip_address: str | None = None

    def __post_init__(self) -> None:
        _check_resource(self.resource, wildcards=True)
        ends = _epoch(self.date_less_than, "DateLessThan")
        if self.date_greater_than is not None and _epoch(self.date_greater_than, "DateGreaterThan") >= ends:
            raise SigningError("DateGreaterThan must be before DateLessThan")
        if self.ip_address is not None:
            _ipv4_range(self.ip_address)

    def statement(self) -> str:
        """The policy's JSON, in the order botocore's `build_policy` writes it (CloudFront takes any order)."""
        condition: dict[str, dict[str, int | str]] = {"DateLessThan": {"AWS:EpochTime": self.date_less_than}}
        if self.ip_address is not None:
            source = self.ip_address if "/" in self.ip_address else f"{self.ip_address}/32"
            condition["IpAddress"] = {"AWS:SourceIp": source}
        if self.date_greater_than is not None:
            condition["DateGreaterThan"] = {"AWS:EpochTime": self.date_greater_than}
        return _statement(self.resource, condition)


def sign_canned_url(url: str, key: SigningKey, expires_at: int, *, hash_algorithm: str = SHA1) -> str:
    """`url` (its own query string kept) signed with a canned policy until `expires_at`."""
    _check_unsigned(url)
    policy = canned_policy(url, expires_at)
    expires = [(URL_PARAMETERS.expires, str(expires_at))]
    return _append(url, expires + _sign(policy, key, hash_algorithm, URL_PARAMETERS))


def sign_custom_url(url: str, key: SigningKey, policy: CustomPolicy, *, hash_algorithm: str = SHA1) -> str:
    """`url` signed with `policy`, whose resource must match it (else CloudFront would refuse the URL)."""
    _check_unsigned(url)
    if not resource_matches(policy.resource, url):
        raise SigningError("the URL is outside the policy's resource")
    statement = policy.statement()
    encoded = cloudfront_b64encode(statement.encode("utf-8"))
    return _append(url, [(URL_PARAMETERS.policy, encoded), *_sign(statement, key, hash_algorithm, URL_PARAMETERS)])


def canned_cookies(resource: str, key: SigningKey, expires_at: int, *, hash_algorithm: str = SHA1) -> dict[str, str]:
    """The signed cookies (name to value, in the documented order) for the one URL `resource` until `expires_at`."""
    policy = canned_policy(resource, expires_at)
    return dict([(COOKIES.expires, str(expires_at)), *_sign(policy, key, hash_algorithm, COOKIES)])


def custom_cookies(key: SigningKey, policy: CustomPolicy, *, hash_algorithm: str = SHA1) -> dict[str, str]:
    """The signed cookies (name to value, in the documented order) for every URL `policy` covers."""
    statement = policy.statement()
    encoded = cloudfront_b64encode(statement.encode("utf-8"))
    return dict([(COOKIES.policy, encoded), *_sign(statement, key, hash_algorithm, COOKIES)])


def set_cookie_headers(cookies: Mapping[str, str], *, domain: str | None = None, path: str | None = None) -> list[str]:
    """One `Set-Cookie` value a cookie, with the attributes the cookie pages show (no Expires, no Max-Age)."""
    attributes = ([f"Domain={domain}"] if domain else []) + ([f"Path={path}"] if path else []) + ["Secure", "HttpOnly"]
    return ["; ".join([f"{name}={value}", *attributes]) for name, value in cookies.items()]


def public_key_of(key: SigningKey) -> rsa.PublicKey:
    """The public half of a signing key: what the key group holds under its id."""
    private = key.private()
    return rsa.PublicKey(private.n, private.e)


def load_public_key(pem: str) -> rsa.PublicKey:
    """A public key in PEM: `BEGIN PUBLIC KEY` (the form CloudFront's public keys take) or `BEGIN RSA PUBLIC KEY`."""
    data = pem.encode("ascii", errors="replace")
    try:
        if b"BEGIN PUBLIC KEY" in data:
            return rsa.PublicKey.load_pkcs1_openssl_pem(data)
        if b"BEGIN RSA PUBLIC KEY" in data:
            return rsa.PublicKey.load_pkcs1(data, "PEM")
    except (ValueError, IndexError, TypeError, PyAsn1Error) as exc:
        raise SigningKeyError(f"the public key does not parse ({type(exc).__name__})") from None
    raise SigningKeyError("the public key is not an RSA public key in PEM")


def resource_matches(pattern: str, candidate: str) -> bool:
    """Whether a policy's Resource covers `candidate`: `*` is any run of characters, `?` any one, the rest literal.

    The classic two-pointer glob, backtracking only to the last `*`: at worst len(pattern) x len(candidate)
    steps, never a regex's exponential backtracking on a pattern of many `*`."""
    p = c = 0
    star, resume = -1, 0
    while c < len(candidate):
        if p < len(pattern) and pattern[p] == "*":
            star, resume = p, c
            p += 1
        elif p < len(pattern) and pattern[p] in ("?", candidate[c]):
            p += 1
            c += 1
        elif star >= 0:
            resume += 1
            p, c = star + 1, resume
        else:
            return False
    return all(ch == "*" for ch in pattern[p:])


@dataclass(frozen=True)
class Verdict:
    """What an edge decides: allowed, or refused with `reason` (one of the constants above) and words for a log."""

    allowed: bool
    reason: str = ""
    detail: str = ""  # never a signature, a policy or a key


ALLOWED = Verdict(True)


def verify_signed_url(
    url: str, public_keys: Mapping[str, rsa.PublicKey], now: float, *, client_ip: str | None = None
) -> Verdict:
    """Check a signed URL as an edge does; `public_keys` is the trusted key group (public key id to key)."""
    if not url.isascii() or "#" in url:
        return _refuse(MALFORMED, "a request URL is ASCII and has no fragment")
    base, _, query = url.partition("?")
    own: list[str] = []
    signing: list[tuple[str, str]] = []
    for item in query.split("&") if query else []:
        name, _, value = item.partition("=")
        if name in URL_PARAMETERS.all:
            signing.append((name, value))
        else:
            own.append(item)
    resource = f"{base}?{'&'.join(own)}" if own else base
    return _verify(resource, signing, URL_PARAMETERS, public_keys, now, client_ip)


def verify_signed_cookies(
    url: str,
    cookies: Mapping[str, str] | Iterable[tuple[str, str]],
    public_keys: Mapping[str, rsa.PublicKey],
    now: float,
    *,
    client_ip: str | None = None,
) -> Verdict:
    """Check the signed cookies a request for `url` carries (pairs, so that a cookie sent twice is seen)."""
    if not url.isascii() or "#" in url:
        return _refuse(MALFORMED, "a request URL is ASCII and has no fragment")
    pairs = cookies.items() if isinstance(cookies, Mapping) else cookies
    signing = [(name, value) for name, value in pairs if name in COOKIES.all]
    return _verify(url, signing, COOKIES, public_keys, now, client_ip)


def verify_request(
    url: str,
    cookies: Mapping[str, str] | Iterable[tuple[str, str]],
    public_keys: Mapping[str, rsa.PublicKey],
    now: float,
    *,
    client_ip: str | None = None,
) -> Verdict:
    """A request as an edge takes it: a URL with any of CloudFront's parameters is checked alone, else the cookies."""
    query = url.partition("?")[2]
    if any(item.partition("=")[0] in URL_PARAMETERS.all for item in query.split("&")):
        return verify_signed_url(url, public_keys, now, client_ip=client_ip)
    return verify_signed_cookies(url, cookies, public_keys, now, client_ip=client_ip)


@dataclass(frozen=True)
class _Conditions:
    resource: str | None  # None: nothing to match (a canned policy's signature covers the resource itself)
    date_less_than: int
    date_greater_than: int | None = None
    network: ipaddress.IPv4Network | None = None


def _verify(
    resource: str,
    signing: list[tuple[str, str]],
    names: _Names,
    public_keys: Mapping[str, rsa.PublicKey],
    now: float,
    client_ip: str | None,
) -> Verdict:
    found: dict[str, str] = {}
    for name, value in signing:
        if name in found:
            return _refuse(AMBIGUOUS, f"{name} is given twice")
        found[name] = value
    expires, encoded_policy = found.get(names.expires), found.get(names.policy)
    if expires is not None and encoded_policy is not None:
        return _refuse(AMBIGUOUS, f"{names.expires} and {names.policy} are both given")
    for name in (names.signature, names.key_pair_id):
        if name not in found:
            return _refuse(MISSING, f"no {name}")
    if expires is None and encoded_policy is None:
        return _refuse(MISSING, f"neither {names.expires} nor {names.policy}")
    algorithm = found.get(names.hash_algorithm, SHA1)
    if algorithm not in _RSA_HASH:
        return _refuse(BAD_HASH, f"{names.hash_algorithm} is neither {SHA1} nor {SHA256}")
    key_id = found[names.key_pair_id]
    public_key = public_keys.get(key_id)
    if public_key is None:
        return _refuse(UNKNOWN_KEY, f"key {key_id!r} is not in the trusted key group"[:200])
    try:
        signature = cloudfront_b64decode(found[names.signature])
        if expires is not None:
            if not _EPOCH.fullmatch(expires) or int(expires) > MAX_EPOCH:
                return _refuse(MALFORMED, f"{names.expires} is not Unix seconds as the policy writes them")
            statement = _statement(resource, {"DateLessThan": {"AWS:EpochTime": int(expires)}}).encode("utf-8")
        else:
            statement = cloudfront_b64decode(encoded_policy or "")
    except ValueError:
        return _refuse(MALFORMED, f"{names.signature} or {names.policy} is not CloudFront's base64")
    if not _signature_holds(statement, signature, public_key, algorithm):
        return _refuse(BAD_SIGNATURE, f"the signature is not the key's {algorithm} signature of the policy")
    conditions = _Conditions(None, int(expires)) if expires is not None else _read_policy(statement)
    if isinstance(conditions, str):
        return _refuse(MALFORMED, conditions)
    return _check_conditions(conditions, resource, now, client_ip)


def _check_conditions(conditions: _Conditions, resource: str, now: float, client_ip: str | None) -> Verdict:
    if now >= conditions.date_less_than:
        return _refuse(EXPIRED, "DateLessThan has passed")
    if conditions.date_greater_than is not None and now <= conditions.date_greater_than:
        return _refuse(NOT_YET_VALID, "DateGreaterThan has not passed")
    if conditions.resource is not None and not resource_matches(conditions.resource, resource):
        return _refuse(RESOURCE_MISMATCH, "the URL is outside the policy's Resource")
    if conditions.network is not None:
        try:
            address = ipaddress.ip_address(client_ip or "")
        except ValueError:
            return _refuse(IP_REFUSED, "the policy limits the client's address, and no IPv4 address was given")
        if not isinstance(address, ipaddress.IPv4Address) or address not in conditions.network:
            return _refuse(IP_REFUSED, "the client's address is outside the policy's IpAddress")
    return ALLOWED


def _signature_holds(statement: bytes, signature: bytes, public_key: rsa.PublicKey, algorithm: str) -> bool:
    try:
        used = rsa.verify(statement, signature, public_key)
    except (rsa.VerificationError, OverflowError, ValueError):
        return False
    return used == _RSA_HASH[algorithm]  # the hash the request names, not whichever the signature carries


def _read_policy(statement: bytes) -> _Conditions | str:
    """A custom policy's conditions, or why it is not one (the statement is already known to be signed)."""
    try:
        doc = json.loads(statement.decode("utf-8"), object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError):
        return "the policy is not JSON without duplicate keys"
    statements = doc.get("Statement") if isinstance(doc, dict) and set(doc) == {"Statement"} else None
    if not isinstance(statements, list) or len(statements) != 1 or not isinstance(statements[0], dict):
        return "a policy is one object with one Statement"
    entry = statements[0]
    resource, condition = entry.get("Resource"), entry.get("Condition")
    if not set(entry) <= {"Resource", "Condition"} or not isinstance(condition, dict):
        return "a statement has a Condition and an optional Resource, nothing else"
    if resource is not None and not isinstance(resource, str):
        return "Resource is a string"
    if "DateLessThan" not in condition or not set(condition) <= {"DateLessThan", "DateGreaterThan", "IpAddress"}:
        return "a Condition has DateLessThan, optionally DateGreaterThan and IpAddress, nothing else"
    ends = _epoch_value(condition["DateLessThan"])
    starts = _epoch_value(condition["DateGreaterThan"]) if "DateGreaterThan" in condition else None
    if ends is None or ("DateGreaterThan" in condition and starts is None):
        return 'a date is {"AWS:EpochTime": <Unix seconds, unquoted>}'
    network = None
    if "IpAddress" in condition:
        source = condition["IpAddress"]
        text = source.get("AWS:SourceIp") if isinstance(source, dict) and set(source) == {"AWS:SourceIp"} else None
        try:
            if not isinstance(text, str) or "/" not in text:
                raise ValueError(text)
            network = _ipv4_range(text)
        except ValueError:
            return 'IpAddress is {"AWS:SourceIp": "<IPv4 address>/<prefix length>"}'
    return _Conditions(resource, ends, starts, network)


def _epoch_value(value: object) -> int | None:
    if not isinstance(value, dict) or set(value) != {"AWS:EpochTime"}:
        return None
    seconds = value["AWS:EpochTime"]
    if isinstance(seconds, bool) or not isinstance(seconds, int) or not 0 <= seconds <= MAX_EPOCH:
        return None
    return seconds


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    doc = dict(pairs)
    if len(doc) != len(pairs):
        raise ValueError("duplicate key")
    return doc


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _sign(statement: str, key: SigningKey, hash_algorithm: str, names: _Names) -> list[tuple[str, str]]:
    """Signature and Key-Pair-Id (and Hash-Algorithm unless SHA-1, CloudFront's default) for `statement`."""
    if hash_algorithm not in _RSA_HASH:
        raise SigningError(f"the hash algorithm is {SHA1} or {SHA256}")
    if not _KEY_ID.fullmatch(key.key_id):
        raise SigningError("the key's id is not a CloudFront public key id")
    signature = rsa.sign(statement.encode("utf-8"), key.private(), _RSA_HASH[hash_algorithm])
    values = [(names.signature, cloudfront_b64encode(signature)), (names.key_pair_id, key.key_id)]
    return values + ([(names.hash_algorithm, hash_algorithm)] if hash_algorithm != SHA1 else [])


def _statement(resource: str, condition: Mapping[str, object]) -> str:
    # Compact separators: the documents' "remove all whitespace"; a checked resource needs no JSON escape.
    return json.dumps({"Statement": [{"Resource": resource, "Condition": condition}]}, separators=(",", ":"))


def _append(url: str, values: list[tuple[str, str]]) -> str:
    return url + ("&" if "?" in url else "?") + "&".join(f"{name}={value}" for name, value in values)


def _check_resource(resource: str, *, wildcards: bool) -> None:
    if not resource or not resource.isascii() or _NOT_IN_RESOURCE.search(resource):
        raise SigningError("a resource is ASCII, without spaces, quotes, backslashes or a fragment")
    if wildcards and "*" in resource:
        return
    if not wildcards and resource.endswith("?"):
        raise SigningError("a URL without a query string has no question mark")  # the canned page
    try:
        parts = urlsplit(resource)
        _ = parts.port  # a malformed port raises here
    except ValueError:
        raise SigningError("the resource is not a URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SigningError("the resource begins with http:// or https:// and names a host")


def _check_unsigned(url: str) -> None:
    _check_resource(url, wildcards=False)
    query = urlsplit(url).query
    if any(item.partition("=")[0] in URL_PARAMETERS.all for item in query.split("&")):
        raise SigningError("the URL already has one of CloudFront's parameters (Expires, Policy, Signature, ...)")


def _epoch(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_EPOCH:
        raise SigningError(f"{what} is whole Unix seconds from 0 to {MAX_EPOCH}")
    return value


def _ipv4_range(text: str) -> ipaddress.IPv4Network:
    if not _IPV4_RANGE.fullmatch(text):
        raise SigningError("the address is one IPv4 address or an IPv4 range in CIDR form (CloudFront takes no IPv6)")
    try:
        return ipaddress.IPv4Network(text, strict=False)
    except ValueError:
        raise SigningError("the address is one IPv4 address or an IPv4 range in CIDR form") from None


def _refuse(reason: str, detail: str) -> Verdict:
    return Verdict(False, reason, detail)
