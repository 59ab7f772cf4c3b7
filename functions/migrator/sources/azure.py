"""An Azure Blob Storage container (a prefix of it) as a source: List Blobs to list, a service SAS to fetch.

- credentials: `{"account": "...", "account_key": "<base64, as the portal shows it>", "container": "...",
  "prefix": "videos/" (optional)}`. Every request is authorised by a service SAS made here with the account
  key (learn.microsoft.com/rest/api/storageservices/create-service-sas): one for the container with the List
  permission (`sr=c`, `sp=l`) to list, one for the blob with Read (`sr=b`, `sp=r`) to read its properties and
  to hand the target. A user delegation SAS (Entra ID) needs a token in the Lambda, which nothing there has:
  not done (Azurite does not list it among its features either);
- the SAS (version SAS_VERSION, "Version 2020-12-06 and later"): the string-to-sign is signedPermissions,
  signedStart, signedExpiry, canonicalizedResource (`/blob/<account>/<container>[/<blob>]`), signedIdentifier,
  signedIP, signedProtocol, signedVersion, signedResource, signedSnapshotTime, signedEncryptionScope, rscc,
  rscd, rsce, rscl, rsct, one a line; the signature is the base64 HMAC-SHA256 of it under the decoded key.
  `spr=https` wherever the endpoint is https (a link that works only over TLS); no `st` (the service's clock
  decides the start: a skewed one here cannot make a link not yet valid);
- list: `GET https://<account>.blob.core.windows.net/<container>?restype=container&comp=list&prefix=&
  maxresults=5000&include=metadata,copy&marker=` (List Blobs: "If the request doesn't specify maxresults, or
  specifies a value greater than 5,000, the server will return up to 5,000 items"; NextMarker names where the
  next page starts, empty on the last; blobs "in alphabetical order"). The marker is the cursor. List Blobs
  filters nothing by time: a delta sweep lists everything and keeps what was modified (`Last-Modified`) since
  the mark;
- a row: the blob's metadata `title` (else its file name), `description`, `tags`, `Creation-Time`,
  `Content-Length`, its folder under the prefix, privacy private; the reference `azure://account/container/blob`;
- what a viewer sees first (objects.py, sidecars.py): the sidecar image beside the blob (`talk.jpg` by `talk.mp4`)
  as `thumbnail_url` and `talk.chapters.vtt` as a chapters track, each its own `azure://` reference (a read SAS
  when it is fetched, as a video's), the folder below the prefix (a virtual directory: "/" in blob names) as a
  collection. Read from the same List Blobs answers as they stream: a video is handed on once the listing has
  passed its stem's names (`sidecars.Pairing`), and a stem that crosses the page's first or last name is listed
  again by `prefix=<stem>.`, at most two requests a page;
- not read at once ("Blob rehydration from the archive tier"): a blob in the Archive tier is offline, and Get
  Blob answers 409 BlobArchived until it is rehydrated to an online tier. One being rehydrated
  (`ArchiveStatus` rehydrate-pending-to-hot|cool|cold) goes to `page.pending`, asked for again next sweep
  (`video`, Get Blob Properties); one not being rehydrated is unfetchable, with how to rehydrate it. A blob
  whose copy is still under way (`CopyStatus` pending, Copy Blob) is pending too; a failed or aborted copy is
  unfetchable. A blob written with a customer-provided key (`CustomerProvidedKeySha256`) can be read only
  with the key in `x-ms-encryption-*` headers, which a SAS cannot carry: unfetchable;
- resolve, just before the create: Get Blob Properties (HEAD) with a read SAS, then a fresh read SAS that
  lives LINK_TTL_S: a deleted blob is unfetchable, a blob archived since the inventory is preparing while it
  is rehydrated or unfetchable when it is not;
- rate: a standard account takes up to 20,000 requests a second ("Scalability and performance targets for
  standard storage accounts"); its 503 ServerBusy is waited out as any 5xx.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import ClassVar, cast
from urllib.parse import quote, urlencode, urlsplit
from xml.etree import ElementTree

from ..link_life import LinkTerms
from ..providers.facts import CredentialsError
from .base import HttpSource, Page, Resolution, SourceError, SourceRef, gone
from .objects import listed, object_row, object_unfetchable, settings_of, sort_object
from .sidecars import NO_SIDECARS, Pairing, Sidecars

SAS_VERSION = "2025-11-05"
PAGE_SIZE = 5000
XML_SLICE = 64 * 1024  # characters of a List Blobs answer parsed at a time
LINK_TTL_S = 24 * 3600  # the stack's presigned S3 links live as long (settings.presign_expiry_s)
# The longest SAS handed to a target that needs more than LINK_TTL_S: Azure sets no maximum on a service SAS
# signed with the account key, but an account's SAS expiration policy may (Azure Policy's built-in one: "7 day
# maximum validity"), and a user delegation SAS lives seven days at most.
LONGEST_SAS_S = 7 * 24 * 3600
API_TTL_S = 900
_ACCOUNT = re.compile(r"^[a-z0-9]{3,24}$")
_CONTAINER = re.compile(r"^(?=.{3,63}$)[a-z0-9]+(-[a-z0-9]+)*$")
REHYDRATING = "being rehydrated from the Archive tier (up to 15 hours at Standard priority): listed once it is online"
COPYING = "a copy into the blob is still under way (Copy Blob): listed once it is done"
CPK = (
    "written with a customer-provided key: reading it needs the key in x-ms-encryption-* headers, which a SAS"
    " cannot carry and no target sends; copy it to a blob without one, then list again"
)


def archived(name: str) -> str:
    return (
        "in the Archive tier (offline: Get Blob answers 409 BlobArchived): rehydrate it first, e.g. az storage blob"
        f" set-tier --tier Hot --rehydrate-priority Standard --name {name[:80]!r} (up to 15 hours; High: under an"
        " hour for blobs under 10 GiB), then list again"
    )


@dataclass(frozen=True)
class AzureCredentials:
    account: str
    key: bytes
    container: str
    prefix: str

    @classmethod
    def parse(cls, creds: Mapping) -> AzureCredentials:
        account, container, prefix = creds.get("account"), creds.get("container"), creds.get("prefix") or ""
        if not isinstance(account, str) or not _ACCOUNT.match(account):
            raise CredentialsError("the azure credentials need the storage account's name (3-24 lowercase, digits)")
        if not isinstance(container, str) or not _CONTAINER.match(container) or not isinstance(prefix, str):
            raise CredentialsError("the azure credentials need a valid container name (and prefix, if any, as text)")
        try:
            key = base64.b64decode(str(creds.get("account_key") or ""), validate=True)
        except (binascii.Error, ValueError):
            key = b""
        if not key:
            raise CredentialsError("the azure credentials need the account_key (base64, as the portal shows it)")
        return cls(account, key, container, prefix)


def sas_time(epoch: float) -> str:
    return datetime.fromtimestamp(int(epoch), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def service_sas(
    account: str, key: bytes, container: str, blob: str | None, permissions: str, expiry: str, https: bool
) -> tuple[dict[str, str], str]:
    """A service SAS's query parameters and the string it signs (the blob's, or the container's without one)."""
    resource = f"/blob/{account}/{container}" + (f"/{blob}" if blob is not None else "")
    signed = "b" if blob is not None else "c"
    protocol = "https" if https else ""
    # sp, st, se, canonicalizedResource, si, sip, spr, sv, sr, snapshot time, ses, rscc, rscd, rsce, rscl, rsct
    lines = [permissions, "", expiry, resource, "", "", protocol, SAS_VERSION, signed, "", "", "", "", "", "", ""]
    string_to_sign = "\n".join(lines)
    signature = base64.b64encode(hmac.new(key, string_to_sign.encode("utf-8"), hashlib.sha256).digest()).decode()
    query = {"sv": SAS_VERSION, "se": expiry, "sr": signed, "sp": permissions}
    if protocol:
        query["spr"] = protocol
    query["sig"] = signature
    return query, string_to_sign


def http_epoch(value: object) -> float | None:
    """An RFC 1123 date (Azure's Last-Modified, Creation-Time) as epoch seconds; None when it is not one."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None


def blob_of_xml(node: ElementTree.Element) -> dict:
    """One `<Blob>` of a List Blobs answer as {"name", "properties": {...}, "metadata": {...}}."""
    props = node.find("Properties")
    meta = node.find("Metadata")
    return {
        "name": node.findtext("Name") or "",
        "properties": {child.tag: child.text or "" for child in props} if props is not None else {},
        "metadata": {child.tag: child.text or "" for child in meta} if meta is not None else {},
    }


def read_blob_list(text: str, take: Callable[[dict], None]) -> str:
    """Hand each `<Blob>` of a List Blobs answer (`EnumerationResults/Blobs/Blob`) to `take` as it is parsed,
    and return the answer's NextMarker ("" at the end). The answer is parsed a slice at a time and each blob
    dropped once taken: a page of 5,000 held whole as a tree cost a sweep about 30 MiB (71 MiB against the
    other sources' 40 to 47). A body that is not XML raises ElementTree.ParseError."""
    parser: ElementTree.XMLPullParser[ElementTree.Element] = ElementTree.XMLPullParser(events=("start", "end"))
    path: list[str] = []
    marker = ""
    for at in range(0, max(len(text), 1), XML_SLICE):
        parser.feed(text[at : at + XML_SLICE])
        # Only start and end events are asked for: each comes with its element (typeshed's type covers them all).
        events = cast("Iterator[tuple[str, ElementTree.Element]]", parser.read_events())
        for event, node in events:
            if event == "start":
                path.append(node.tag)
                continue
            path.pop()
            if node.tag == "Blob" and len(path) == 2 and path[1] == "Blobs":
                take(blob_of_xml(node))
                node.clear()
            elif node.tag == "NextMarker" and len(path) == 1:
                marker = node.text or ""
    parser.close()
    return marker.strip()


def blob_of_headers(name: str, headers: Mapping[str, str]) -> dict:
    """Get Blob Properties' headers in the listing's shape."""
    lower = {k.lower(): v for k, v in headers.items()}
    names = {
        "Content-Type": "content-type",
        "Content-Length": "content-length",
        "Last-Modified": "last-modified",
        "Creation-Time": "x-ms-creation-time",
        "AccessTier": "x-ms-access-tier",
        "ArchiveStatus": "x-ms-archive-status",
        "CopyStatus": "x-ms-copy-status",
        "CustomerProvidedKeySha256": "x-ms-encryption-key-sha256",
    }
    props = {tag: lower[header] for tag, header in names.items() if header in lower}
    metadata = {k[len("x-ms-meta-") :]: v for k, v in lower.items() if k.startswith("x-ms-meta-")}
    return {"name": name, "properties": props, "metadata": metadata}


def blob_problem(blob: Mapping) -> tuple[str, str] | None:
    """("pending" | "unfetchable", why) for a blob that cannot be read now; None when it can."""
    props = blob["properties"]
    if props.get("CustomerProvidedKeySha256"):
        return "unfetchable", CPK
    copy = props.get("CopyStatus", "").lower()
    if copy == "pending":
        return "pending", COPYING
    if copy in ("failed", "aborted"):
        return "unfetchable", f"a copy into the blob {copy} (Copy Blob): its content is not the video; copy it again"
    if props.get("AccessTier", "").lower() == "archive":
        if props.get("ArchiveStatus", "").lower().startswith("rehydrate-pending"):
            return "pending", REHYDRATING
        return "unfetchable", archived(blob["name"])
    return None


class AzureSource(HttpSource):
    platform = "azure"
    # The az CLI's own names for the account and its key.
    credential_env: ClassVar[Mapping[str, str]] = {
        "account": "AZURE_STORAGE_ACCOUNT",
        "account_key": "AZURE_STORAGE_KEY",
        "container": "AZURE_STORAGE_CONTAINER",
    }
    default_base_url = ""  # https://<account>.blob.core.windows.net, from the credentials
    documented_rate_per_s = 20000.0
    requests_per_video = 1  # Get Blob Properties; the SAS costs no request
    link_ttl_s: ClassVar[int] = LINK_TTL_S
    # A service SAS signed with the account key ends when its `se` says; a target that needs longer is handed
    # one signed for that, up to LONGEST_SAS_S.
    link_terms = LinkTerms("the stack signs Azure links for 24 hours", longest_s=LONGEST_SAS_S)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http.base = ""  # every request names its whole URL: the endpoint depends on the credentials' account

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        return {"x-ms-version": SAS_VERSION}  # the SAS in each request's query authorises it

    def settings(self) -> AzureCredentials:
        return settings_of(self, AzureCredentials.parse)

    def endpoint(self, creds: AzureCredentials) -> str:
        """The account's blob endpoint (an emulator's when the base URL is overridden: Azurite's path-style)."""
        return self.base_url or f"https://{creds.account}.blob.core.windows.net"

    def blob_url(self, creds: AzureCredentials, blob: str, permissions: str, ttl_s: float) -> str:
        endpoint = self.endpoint(creds)
        https = urlsplit(endpoint).scheme == "https"
        query, _ = service_sas(
            creds.account, creds.key, creds.container, blob, permissions, sas_time(self.clock() + ttl_s), https
        )
        return f"{endpoint}/{creds.container}/{quote(blob, safe='/')}?{urlencode(query, safe='')}"

    # --- listing ---------------------------------------------------------------------------------------

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        creds = self.settings()
        endpoint = self.endpoint(creds)
        https = urlsplit(endpoint).scheme == "https"
        sas, _ = service_sas(
            creds.account, creds.key, creds.container, None, "l", sas_time(self.clock() + API_TTL_S), https
        )
        params = {"restype": "container", "comp": "list", "prefix": creds.prefix, "maxresults": str(PAGE_SIZE)}
        params["include"] = "metadata,copy"
        if cursor:
            params["marker"] = cursor
        answer = self.call("GET", f"{endpoint}/{creds.container}", params={**params, **sas})
        if answer.status != 200:
            raise self.failure(answer, "the blob list")
        page = Page()
        pairing = Pairing(lambda prefix: self._names(creds, prefix), before=cursor is not None)
        try:
            following = read_blob_list(answer.text, lambda blob: self._take(page, creds, blob, since, pairing))
        except ElementTree.ParseError:
            raise SourceError("azure: the blob list is not the XML List Blobs answers") from None
        if following and following != cursor and len(following) <= 4096:
            page.cursor = following
        pairing.end(after=page.cursor is not None)
        return page

    def _names(self, creds: AzureCredentials, prefix: str) -> list[str]:
        """The blob names under `prefix` (a video's stem: its sidecars looked up past a page), one page of them."""
        if not prefix.startswith(creds.prefix):
            return []
        endpoint = self.endpoint(creds)
        https = urlsplit(endpoint).scheme == "https"
        sas, _ = service_sas(
            creds.account, creds.key, creds.container, None, "l", sas_time(self.clock() + API_TTL_S), https
        )
        params = {"restype": "container", "comp": "list", "prefix": prefix, "maxresults": str(PAGE_SIZE)}
        answer = self.call("GET", f"{endpoint}/{creds.container}", params={**params, **sas})
        if answer.status != 200:
            raise self.failure(answer, "the blob list")
        names: list[str] = []
        try:
            read_blob_list(answer.text, lambda blob: names.append(blob["name"]))
        except ElementTree.ParseError:
            raise SourceError("azure: the blob list is not the XML List Blobs answers") from None
        return names

    def _take(self, page: Page, creds: AzureCredentials, blob: Mapping, since: float | None, pairing: Pairing) -> None:
        name, props = blob["name"], blob["properties"]
        pairing.see(name)
        if not listed(page, name, props.get("Content-Type"), http_epoch(props.get("Last-Modified")), since):
            return
        path = f"{creds.account}/{creds.container}/{name}"
        ref = self.ref(path)
        problem = blob_problem(blob)
        reason = sort_object(name, props.get("Content-Type")) or (problem[1] if problem else None)
        if problem is not None and problem[0] == "pending" and reason == problem[1]:
            pending = object_unfetchable(self.platform, path, ref, name, reason)
            pairing.hold(None, lambda _: page.pending.append(pending))
        elif reason is not None:
            unfetchable = object_unfetchable(self.platform, path, ref, name, reason)
            pairing.hold(None, lambda _: page.entries.append(unfetchable))
        else:
            pairing.hold(name, lambda sidecars: page.entries.append(self._row(creds, path, ref, blob, sidecars)))

    def _row(self, creds: AzureCredentials, path: str, ref: str, blob: Mapping, sidecars: Sidecars = NO_SIDECARS):
        props = blob["properties"]
        return object_row(
            self.platform,
            path,
            ref,
            blob["name"],
            creds.prefix,
            metadata=blob["metadata"],
            created_at=http_epoch(props.get("Creation-Time")),
            size_bytes=int(props["Content-Length"]) if props.get("Content-Length", "").isdigit() else None,
            extra={
                "azure_account": creds.account,
                "azure_container": creds.container,
                "azure_blob": blob["name"],
                "azure_access_tier": (props.get("AccessTier") or "")[:20] or None,
            },
            sidecars=sidecars,
            ref_of=lambda other: self.ref(f"{creds.account}/{creds.container}/{other}"),
        )

    def properties(self, creds: AzureCredentials, name: str) -> dict | None:
        """Get Blob Properties of `name` in the listing's shape; None when it is gone."""
        answer = self.call("HEAD", self.blob_url(creds, name, "r", API_TTL_S), max_body_bytes=4096)
        if answer.status == 404:
            return None
        if answer.status != 200:
            raise SourceError(f"azure: Get Blob Properties answered HTTP {answer.status}")
        return blob_of_headers(name, answer.headers)

    def video(self, video_id: str, tracks: bool = True) -> Page:
        """The blob `video_id` (`account/container/blob`) as a page lists it; empty when gone."""
        creds = self.settings()
        name = self._name_of(creds, video_id)
        page = Page()
        blob = self.properties(creds, name) if name else None
        if blob is not None:
            pairing = Pairing(lambda prefix: self._names(creds, prefix), before=True)  # its stem looked up
            self._take(page, creds, blob, None, pairing)
            pairing.end(after=True)
        return page

    def _name_of(self, creds: AzureCredentials, video_id: str) -> str | None:
        account, _, rest = video_id.partition("/")
        container, _, name = rest.partition("/")
        if account != creds.account or container != creds.container or not name.startswith(creds.prefix):
            return None
        return name or None

    # --- resolving ---------------------------------------------------------------------------------------

    def resolve(self, ref: SourceRef) -> Resolution:
        return self._resolve(ref, self.link_ttl_s)

    def resolve_lasting(self, ref: SourceRef, lasting_s: float) -> Resolution:
        return self._resolve(ref, min(LONGEST_SAS_S, max(self.link_ttl_s, math.ceil(lasting_s))))

    def _resolve(self, ref: SourceRef, ttl_s: int) -> Resolution:
        creds = self.settings()
        name = None if ref.is_track else self._name_of(creds, ref.video_id)
        if name is None:
            where = f"{creds.account}/{creds.container}/{creds.prefix}"
            return Resolution.unfetchable(f"not a blob of the configured container {where}")
        blob = self.properties(creds, name)
        if blob is None:
            return Resolution.unfetchable(gone("Azure Blob Storage"))
        problem = blob_problem(blob)
        if problem is not None:
            kind, reason = problem
            return Resolution.preparing(reason, 600.0) if kind == "pending" else Resolution.unfetchable(reason)
        url = self.blob_url(creds, name, "r", ttl_s)
        return Resolution.ready(url, expires_at=self.clock() + ttl_s, privacy="private")
