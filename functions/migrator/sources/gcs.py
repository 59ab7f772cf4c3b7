"""A Google Cloud Storage bucket (a prefix of it) as a source: its JSON API to list, V4 signed URLs to fetch.

- credentials: `{"bucket": "...", "prefix": "videos/" (optional), "service_account_key": {the JSON key file
  Google hands out, or its text}}`. The key's `client_email`, `private_key` (PEM), `private_key_id` and
  `token_uri` are what is used: an access token for the listing is asked for with a JWT signed by the key
  (the OAuth 2.0 JWT bearer grant, developers.google.com/identity/protocols/oauth2/service-account, "Preparing
  to make an authorized API call": `iss` the email, `scope` devstorage.read_only, `aud` the token URI, an
  hour at most), and the signed URLs are signed with it (below). `access_token` instead of a key lists with a
  token minted elsewhere (`gcloud auth print-access-token`), but cannot sign: IAM signBlob needs a fresh token
  in the Lambda, which nothing there has, so a key it is;
- list: `GET /storage/v1/b/{bucket}/o?prefix=&maxResults=1000&pageToken=` (JSON API objects.list; 1,000 a
  page at most, "maxResults ... Maximum combined number of entries in items[] and prefixes[] to return in a
  single page of responses", nextPageToken to the next page, none on the last): the page token is the
  cursor, so a sweep resumes where it stopped. Objects come in name order, and nothing filters them by time
  server-side: a delta sweep lists everything and keeps what was `updated` since the mark (NEW_PLATFORMS.md,
  "Delta filter");
- a row: the object's `metadata.title` (else its file name), `description`, `tags`, `timeCreated`, `size`, its
  folder under the prefix; privacy private (an object is served to no one without a signature); the source
  reference `gcs://bucket/object`. No caption tracks: a bucket has none of its own;
- what a viewer sees first (objects.py, sidecars.py): the sidecar image beside the object (`talk.jpg` by
  `talk.mp4`) as `thumbnail_url` and `talk.chapters.vtt` as a chapters track, each its own `gcs://` reference
  (signed as a video is when it is fetched), the folder below the prefix as a collection; read from the same
  listing (objects are "ordered in the list lexicographically by name", "Listing objects"), a stem that crosses
  the page's first or last name listed again by `prefix=<stem>.`, at most two requests a page;
- unfetchable, each with its reason: an object named as a video and stored as another type
  (`objects.sort_object`), and one encrypted with a customer-supplied key (`customerEncryption` in its
  resource): reading it needs the key in `x-goog-encryption-*` request headers ("Customer-supplied encryption
  keys"), which a signed URL cannot carry and no target sends. Every storage class (Standard, Nearline,
  Coldline, Archive) is read at once ("Storage classes": Archive data "is available within milliseconds, not
  hours or days"), with a retrieval fee for the colder ones: the class is kept in the row's metadata;
- resolve, just before the create: a HEAD of the object through a URL signed for HEAD (so a deleted object,
  or one the key may not read, is told apart before the target is handed anything), then a V4 URL signed for
  GET that lives LINK_TTL_S (at most seven days, "X-Goog-Expires ... 604800"). The V4 form ("V4 signing
  process with your own program", "Canonical requests", "Signatures"): the canonical request `GET`, the
  path-style resource `/bucket/object` percent-encoded, the canonical query string of the `X-Goog-*`
  parameters sorted, `host:<host>` as the one signed header, `UNSIGNED-PAYLOAD`; the string-to-sign
  `GOOG4-RSA-SHA256`, the request time, the credential scope `<date>/auto/storage/goog4_request` and the
  canonical request's SHA-256; the signature RSA-SHA256 (PKCS#1 v1.5, `rsa`, pure Python) in hex;
- rate: buckets start at about 5,000 object reads a second, listing included ("Request rate and access
  distribution guidelines"); a 429 or 5xx is waited out (patient) or said THROTTLED/TRANSIENT.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar
from urllib.parse import quote, urlsplit

import rsa

from ..link_life import LinkTerms
from ..playback_tokens import SigningKey, SigningKeyError, rs256_jwt
from ..providers.facts import CredentialsError, entries, epoch_of, finite_number, mapping, text
from ..providers.http import HttpTransport, TransportError
from .base import HttpSource, Page, Resolution, SourceDenied, SourceError, SourceRef, SourceThrottled, gone
from .objects import listed, object_row, object_unfetchable, settings_of, sort_object
from .sidecars import NO_SIDECARS, SidecarIndex, Sidecars, boundary_stems, stem_of

PAGE_SIZE = 1000
SEVEN_DAYS_S = 7 * 24 * 3600
LINK_TTL_S = 24 * 3600  # the stack's presigned S3 links live as long (settings.presign_expiry_s)
HEAD_TTL_S = 300
TOKEN_URI = "https://oauth2.googleapis.com/token"
SCOPE = "https://www.googleapis.com/auth/devstorage.read_only"
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$")
CSEK = (
    "encrypted with a customer-supplied key: reading it needs the key in x-goog-encryption-* headers, which a"
    " signed URL cannot carry and no target sends; rewrite it with a Google-managed or Cloud KMS key, then list again"
)
FIELDS = "nextPageToken,items(name,size,contentType,timeCreated,updated,storageClass,metadata,customerEncryption)"


@dataclass(frozen=True)
class GcsCredentials:
    bucket: str
    prefix: str
    email: str | None
    key: SigningKey | None
    token_uri: str
    access_token: str | None

    @classmethod
    def parse(cls, creds: Mapping) -> GcsCredentials:
        bucket, prefix = creds.get("bucket"), creds.get("prefix") or ""
        if not isinstance(bucket, str) or not _BUCKET.match(bucket) or not isinstance(prefix, str):
            raise CredentialsError("the gcs credentials need a valid bucket name (and prefix, if any, as text)")
        key_doc = creds.get("service_account_key")
        if isinstance(key_doc, str):
            try:
                key_doc = json.loads(key_doc)
            except ValueError:
                raise CredentialsError("the gcs service_account_key is not a JSON key file") from None
        token = creds.get("access_token") if isinstance(creds.get("access_token"), str) else None
        if key_doc is None:
            if not token:
                raise CredentialsError("the gcs credentials need a service_account_key (or an access_token)")
            return cls(bucket, prefix, None, None, TOKEN_URI, token)
        key_doc = mapping(key_doc)
        email, pem = text(key_doc.get("client_email")), text(key_doc.get("private_key"))
        token_uri = text(key_doc.get("token_uri")) or TOKEN_URI
        if not email or not pem or not _safe_token_uri(token_uri):
            raise CredentialsError("the gcs service_account_key needs client_email, private_key and an https token_uri")
        return cls(bucket, prefix, email, SigningKey(text(key_doc.get("private_key_id")) or "", pem), token_uri, token)


def _safe_token_uri(uri: str) -> bool:
    parts = urlsplit(uri)
    return parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost"))


# --- V4 signing --------------------------------------------------------------------------------------


def _encode(value: str) -> str:
    return quote(value, safe="~")


def v4_parts(base_url: str, email: str, bucket: str, name: str, method: str, now: float, expires_s: int) -> dict:
    """The pieces of a V4 signed URL (before its signature): the resource path, the canonical query string, the
    canonical request and the string-to-sign, as "V4 signing process with your own program" builds them."""
    expires_s = max(1, min(SEVEN_DAYS_S, int(expires_s)))
    stamp = datetime.fromtimestamp(int(now), UTC)
    request_time, date = stamp.strftime("%Y%m%dT%H%M%SZ"), stamp.strftime("%Y%m%d")
    scope = f"{date}/auto/storage/goog4_request"
    host = urlsplit(base_url).netloc
    path = "/" + quote(bucket, safe="") + "/" + quote(name, safe="/~")
    query = {
        "X-Goog-Algorithm": "GOOG4-RSA-SHA256",
        "X-Goog-Credential": f"{email}/{scope}",
        "X-Goog-Date": request_time,
        "X-Goog-Expires": str(expires_s),
        "X-Goog-SignedHeaders": "host",
    }
    canonical_query = "&".join(f"{_encode(k)}={_encode(v)}" for k, v in sorted(query.items()))
    canonical_request = "\n".join([method, path, canonical_query, f"host:{host}", "", "host", "UNSIGNED-PAYLOAD"])
    digest = hashlib.sha256(canonical_request.encode("utf-8")).hexdigest()
    string_to_sign = "\n".join(["GOOG4-RSA-SHA256", request_time, scope, digest])
    return {"path": path, "query": canonical_query, "canonical_request": canonical_request, "sts": string_to_sign}


def v4_signed_url(
    base_url: str, email: str, key: SigningKey, bucket: str, name: str, method: str, now: float, expires_s: int
) -> str:
    parts = v4_parts(base_url, email, bucket, name, method, now, expires_s)
    signature = rsa.sign(parts["sts"].encode("utf-8"), key.private(), "SHA-256").hex()
    return f"{base_url.rstrip('/')}{parts['path']}?{parts['query']}&X-Goog-Signature={signature}"


# --- the source --------------------------------------------------------------------------------------


class GcsSource(HttpSource):
    platform = "gcs"
    # The bucket, and the service account key file's JSON text (docs/sources.md, Google Cloud Storage).
    credential_env: ClassVar[Mapping[str, str]] = {
        "bucket": "GCS_BUCKET",
        "service_account_key": "GCS_SERVICE_ACCOUNT_KEY",
    }
    default_base_url = "https://storage.googleapis.com"
    documented_rate_per_s = 5000.0
    requests_per_video = 1  # the signed HEAD; the signatures cost no request
    link_ttl_s: ClassVar[int] = LINK_TTL_S
    # The signature's life is ours to choose, up to V4's seven days: a target that needs longer is handed one.
    link_terms = LinkTerms("the stack signs Cloud Storage links for 24 hours", longest_s=SEVEN_DAYS_S)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.plain = HttpTransport("", dict, self.http.session, *self.http.timeout)
        self._token: tuple[str, float] | None = None
        self._lock = threading.Lock()

    def settings(self) -> GcsCredentials:
        return settings_of(self, GcsCredentials.parse)

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._access_token(GcsCredentials.parse(creds))}"}

    def _access_token(self, creds: GcsCredentials) -> str:
        if creds.key is None:
            return creds.access_token or ""
        with self._lock:
            if self._token is not None and self._token[1] > self.clock() + 60:
                return self._token[0]
            self._token = self._exchange(creds, creds.key)
            return self._token[0]

    def _exchange(self, creds: GcsCredentials, key: SigningKey) -> tuple[str, float]:
        """An access token for `key`, the credentials' (the JWT bearer grant); SourceDenied when it is refused."""
        now = int(self.clock())
        claims = {"iss": creds.email, "scope": SCOPE, "aud": creds.token_uri, "iat": now, "exp": now + 3600}
        try:
            assertion = rs256_jwt(claims, key)
        except SigningKeyError as exc:
            raise CredentialsError(f"the gcs service_account_key: {exc}") from None
        form = {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion}
        try:
            answer = self.plain.send("POST", creds.token_uri, data=_form(form), headers=FORM_HEADERS)
        except TransportError as exc:
            raise SourceError(f"gcs: the token endpoint: {exc.kind}") from None
        body = mapping(answer.body)
        token, lifetime = text(body.get("access_token")), finite_number(body.get("expires_in"))
        if answer.status != 200 or not token or len(token) > 8192:
            raise SourceDenied(f"gcs: the token endpoint refused the service account key: HTTP {answer.status}")
        return token, now + min(3600.0, lifetime if lifetime and lifetime > 0 else 3600.0)

    # --- listing ---------------------------------------------------------------------------------------

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        creds = self.settings()
        params = {"prefix": creds.prefix, "maxResults": str(PAGE_SIZE), "fields": FIELDS}
        if cursor:
            params["pageToken"] = cursor
        body = mapping(self.read("GET", self._objects(creds), "the object list", gone_ok=False, params=params))
        page = Page()
        items = [mapping(item) for item in entries(body.get("items"))]
        names = [text(item.get("name")) or "" for item in items]
        index = SidecarIndex()
        index.add_all(names)
        taken = [item for item in items if self._listed(page, item, since)]
        following = text(body.get("nextPageToken"))
        if following and following != cursor and len(following) <= 4096:
            page.cursor = following
        videos = [text(item.get("name")) or "" for item in taken]
        rows = [n for n, i in zip(videos, taken, strict=True) if not (sort_object(n, i.get("contentType")) or _csek(i))]
        first, last = (names[0], names[-1]) if names else (None, None)
        for stem in boundary_stems(rows, first, last, before=cursor is not None, after=page.cursor is not None):
            index.add_all(self._names(creds, stem + "."))
        page.entries = [self.entry_of(creds, item, index.of(name)) for item, name in zip(taken, videos, strict=True)]
        return page

    @staticmethod
    def _objects(creds: GcsCredentials) -> str:
        return f"/storage/v1/b/{quote(creds.bucket, safe='')}/o"

    @staticmethod
    def _listed(page: Page, item: Mapping, since: float | None) -> bool:
        return listed(page, text(item.get("name")), item.get("contentType"), epoch_of(item.get("updated")), since)

    def _names(self, creds: GcsCredentials, prefix: str) -> list[str]:
        """The names under `prefix` (a video's stem: its sidecars looked up past a page), one page of them."""
        if not prefix.startswith(creds.prefix):
            return []
        params = {"prefix": prefix, "maxResults": str(PAGE_SIZE), "fields": "items(name)"}
        body = mapping(self.read("GET", self._objects(creds), "the object list", gone_ok=False, params=params))
        return [name for item in entries(body.get("items")) if (name := text(mapping(item).get("name")))]

    def entry_of(self, creds: GcsCredentials, item: Mapping, sidecars: Sidecars = NO_SIDECARS):
        name = text(item.get("name")) or ""
        path = f"{creds.bucket}/{name}"
        ref = self.ref(path)
        reason = sort_object(name, item.get("contentType"))
        if reason is None and _csek(item):
            reason = CSEK
        if reason is not None:
            return object_unfetchable(self.platform, path, ref, name, reason)
        storage = text(item.get("storageClass")) or "STANDARD"
        return object_row(
            self.platform,
            path,
            ref,
            name,
            creds.prefix,
            metadata=mapping(item.get("metadata")),
            created_at=item.get("timeCreated"),
            size_bytes=int(size) if isinstance(size := item.get("size"), str) and size.isdigit() else None,
            extra={"gcs_bucket": creds.bucket, "gcs_object": name, "gcs_storage_class": storage[:40]},
            sidecars=sidecars,
            ref_of=lambda other: self.ref(f"{creds.bucket}/{other}"),
        )

    def video(self, video_id: str, tracks: bool = True) -> Page:
        """The object `video_id` (`bucket/object`) as a page lists it, with its sidecars (its stem looked up);
        empty when gone or not a video."""
        creds = self.settings()
        bucket, _, name = video_id.partition("/")
        if bucket != creds.bucket or not name:
            return Page()
        path = f"{self._objects(creds)}/{quote(name, safe='')}"
        item = self.read("GET", path, "the object")
        page = Page()
        if item is not None and self._listed(page, mapping(item), None):
            index = SidecarIndex()
            index.add_all(self._names(creds, stem_of(name) + "."))
            page.entries.append(self.entry_of(creds, mapping(item), index.of(name)))
        return page

    # --- resolving ---------------------------------------------------------------------------------------

    def resolve(self, ref: SourceRef) -> Resolution:
        return self._resolve(ref, self.link_ttl_s)

    def resolve_lasting(self, ref: SourceRef, lasting_s: float) -> Resolution:
        return self._resolve(ref, min(SEVEN_DAYS_S, max(self.link_ttl_s, math.ceil(lasting_s))))

    def _resolve(self, ref: SourceRef, ttl_s: int) -> Resolution:
        creds = self.settings()
        bucket, _, name = ref.video_id.partition("/")
        if ref.is_track or bucket != creds.bucket or not name or not name.startswith(creds.prefix):
            return Resolution.unfetchable(f"not an object of the configured bucket gs://{creds.bucket}/{creds.prefix}")
        if creds.key is None or not creds.email:
            raise SourceDenied("the gcs credentials carry no service_account_key to sign URLs with")
        now = self.clock()
        try:
            head = v4_signed_url(self.base_url, creds.email, creds.key, bucket, name, "HEAD", now, HEAD_TTL_S)
            url = v4_signed_url(self.base_url, creds.email, creds.key, bucket, name, "GET", now, ttl_s)
        except SigningKeyError as exc:
            raise SourceDenied(f"gcs: the service_account_key cannot sign: {exc}") from None
        problem = self._check(head)
        if problem is not None:
            return problem
        return Resolution.ready(url, expires_at=now + min(ttl_s, SEVEN_DAYS_S), privacy="private")

    def _check(self, head_url: str) -> Resolution | None:
        """The object as a signed HEAD finds it: None when it can be fetched, else why not."""
        self.requests += 1
        try:
            answer = self.plain.send("HEAD", head_url, max_body_bytes=4096)
        except TransportError as exc:
            raise SourceError(f"gcs: {exc.kind}") from None
        if answer.status == 200:
            return None
        if answer.status == 404:
            return Resolution.unfetchable(gone("Cloud Storage"))
        if answer.status == 400:
            return Resolution.unfetchable(f"Cloud Storage answered a signed HEAD with HTTP 400 (an object {CSEK})")
        if answer.status in (401, 403):
            why = "the service account may not read the object (storage.objects.get)"
            raise SourceDenied(f"gcs: {why}: HTTP {answer.status}")
        if answer.status == 429:
            raise SourceThrottled("gcs: HTTP 429 (rate limited)", 5.0)
        raise SourceError(f"gcs: a signed HEAD answered HTTP {answer.status}")


def _csek(item: Mapping) -> bool:
    """Whether the object is encrypted with a customer-supplied key (its resource's `customerEncryption`)."""
    return item.get("customerEncryption") is not None


FORM_HEADERS = {"Content-Type": "application/x-www-form-urlencoded"}


def _form(fields: Mapping[str, str]) -> bytes:
    return "&".join(f"{_encode(k)}={_encode(v)}" for k, v in fields.items()).encode("ascii")
