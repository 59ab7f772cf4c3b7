"""Stand-ins for a GCS bucket's and an Azure container's list pages, for bench/inventory's memory runs of
libraries the real emulators cannot hold (`bench/inventory --store-stand-ins`).

fake-gcs-server's in-memory bucket slows with every object added (a 100,000-object fill was stopped after
24 minutes, fake-gcs-server pegging a core) and Azurite takes about 200 uploads a second, so a million-object
library is hours of filling. A memory run only lists (no HEAD, no link), so these serve what a list request
answers, computed from the object's index: the same objects infra/storage_emulators.StoreLibrary uploads
(`library/video-NNNNNNN.mp4`, a title on odd ones, every 50th an image), in the shape each emulator renders
them. tests/emulator/test_store_listings.py holds a sweep of each to a sweep of its emulator, row for row.

GCS: JSON API `objects.list` (https://cloud.google.com/storage/docs/json_api/v1/objects/list), at most 1,000 a
page, an opaque `nextPageToken`. Azure: List Blobs
(https://learn.microsoft.com/rest/api/storageservices/list-blobs), at most 5,000 a page, `NextMarker`.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

from infra.storage_emulators import LIBRARY_NAME, STORE_PLATFORMS

PREFIX = "library/"
CREATED = "2026-12-01T00:00:00.000000Z"
CREATED_HTTP = "Tue, 01 Dec 2026 00:00:00 GMT"
SIZE = 768  # infra.storage_emulators.MEDIA's length
GCS_PAGE, AZURE_PAGE = 1000, 5000
AZURE_ACCOUNT = "benchstandin"
AZURE_KEY = "c3RhbmQtaW4ta2V5LWZvci1iZW5jaC1tZW1vcnktcnVucy1vbmx5"  # base64; the stand-in checks no signature


def object_name(i: int) -> str:
    return f"{PREFIX}video-{i:07d}.mp4"


def content_type(i: int) -> str:
    return "image/png" if i % 50 == 49 else "video/mp4"


def title(i: int) -> str | None:
    return f"Library video {i}" if i % 2 else None


def gcs_item(i: int, port: int) -> dict:
    """Object `i` as fake-gcs-server renders it in a list (it answers every field whatever `fields` asks)."""
    name, quoted = object_name(i), object_name(i).replace("/", "%2F")
    item: dict[str, object] = {
        "kind": "storage#object",
        "name": name,
        "id": f"{LIBRARY_NAME}/{name}",
        "bucket": LIBRARY_NAME,
        "size": str(SIZE),
        "contentType": content_type(i),
        "crc32c": "skcuCQ==",
        "md5Hash": "qb7OG+4h7HCMJc03TI2wnA==",
        "etag": "qb7OG+4h7HCMJc03TI2wnA==",
        "storageClass": "STANDARD",
        "timeCreated": CREATED,
        "timeStorageClassUpdated": CREATED,
        "updated": CREATED,
        "generation": str(1796355272534091 + i),
        "selfLink": f"http://127.0.0.1:{port}/storage/v1/b/{LIBRARY_NAME}/o/{quoted}",
        "mediaLink": f"http://127.0.0.1:{port}/download/storage/v1/b/{LIBRARY_NAME}/o/{quoted}?alt=media",
        "metageneration": "1",
    }
    if shown := title(i):
        item["metadata"] = {"title": shown}
    return item


def azure_blob(i: int) -> str:
    """Object `i` as one `<Blob>` of a List Blobs answer (include=metadata)."""
    meta = f"<title>{escape(shown)}</title>" if (shown := title(i)) else ""
    return (
        f"<Blob><Name>{escape(object_name(i))}</Name><Properties><Creation-Time>{CREATED_HTTP}</Creation-Time>"
        f"<Last-Modified>{CREATED_HTTP}</Last-Modified><Etag>0x8DD{i:013X}</Etag>"
        f"<Content-Length>{SIZE}</Content-Length><Content-Type>{content_type(i)}</Content-Type>"
        "<Content-Encoding /><Content-Language /><Content-CRC64 /><Content-MD5>qb7OG+4h7HCMJc03TI2wnA==</Content-MD5>"
        "<Cache-Control /><Content-Disposition /><BlobType>BlockBlob</BlobType><AccessTier>Hot</AccessTier>"
        "<AccessTierInferred>true</AccessTierInferred><LeaseStatus>unlocked</LeaseStatus>"
        "<LeaseState>available</LeaseState><ServerEncrypted>true</ServerEncrypted></Properties>"
        f"<Metadata>{meta}</Metadata><OrMetadata /></Blob>"
    )


def _start(query: dict, key: str) -> int:
    value = (query.get(key) or ["0"])[0]
    return int(value) if value.isdigit() else 0


def _limit(query: dict, key: str, ceiling: int) -> int:
    value = (query.get(key) or [str(ceiling)])[0]
    return max(1, min(ceiling, int(value))) if value.isdigit() else ceiling


class StoreListing:
    """One platform's list pages of a `size`-object library on 127.0.0.1; `url` and `credentials` as
    StoreLibrary has them."""

    def __init__(self, platform: str, size: int):
        if platform not in STORE_PLATFORMS:
            raise ValueError(f"no list stand-in for {platform!r}: one of {', '.join(STORE_PLATFORMS)}")
        self.platform, self.size = platform, size
        self.server: ThreadingHTTPServer | None = None
        self.pages = 0

    @property
    def port(self) -> int:
        assert self.server is not None
        return self.server.server_address[1]

    @property
    def url(self) -> str:
        base = f"http://127.0.0.1:{self.port}"
        return f"{base}/{AZURE_ACCOUNT}" if self.platform == "azure" else base

    @property
    def credentials(self) -> dict:
        if self.platform == "azure":
            return {"account": AZURE_ACCOUNT, "account_key": AZURE_KEY, "container": LIBRARY_NAME, "prefix": PREFIX}
        return {"bucket": LIBRARY_NAME, "prefix": PREFIX, "access_token": "ya29.stand-in"}

    def gcs_page(self, query: dict) -> tuple[int, str, bytes]:
        start = _start(query, "pageToken")
        end = min(self.size, start + _limit(query, "maxResults", GCS_PAGE))
        doc: dict = {"kind": "storage#objects", "items": [gcs_item(i, self.port) for i in range(start, end)]}
        if end < self.size:
            doc["nextPageToken"] = str(end)
        return 200, "application/json", json.dumps(doc).encode()

    def azure_page(self, query: dict) -> tuple[int, str, bytes]:
        if (query.get("comp") or [""])[0] != "list":
            return 400, "application/xml", b"<Error><Code>UnsupportedQueryParameter</Code></Error>"
        start = _start(query, "marker")
        end = min(self.size, start + _limit(query, "maxresults", AZURE_PAGE))
        blobs = "".join(azure_blob(i) for i in range(start, end))
        marker = f"<NextMarker>{end}</NextMarker>" if end < self.size else "<NextMarker />"
        body = (
            '<?xml version="1.0" encoding="utf-8"?>'
            f'<EnumerationResults ServiceEndpoint="{self.url}" ContainerName="{LIBRARY_NAME}">'
            f"<Prefix>{PREFIX}</Prefix><MaxResults>{end - start}</MaxResults><Blobs>{blobs}</Blobs>{marker}"
            "</EnumerationResults>"
        )
        return 200, "application/xml", body.encode()

    def answer(self, path: str, query: dict) -> tuple[int, str, bytes]:
        if self.platform == "gcs" and path == f"/storage/v1/b/{LIBRARY_NAME}/o":
            return self.gcs_page(query)
        if self.platform == "azure" and path == f"/{AZURE_ACCOUNT}/{LIBRARY_NAME}":
            return self.azure_page(query)
        return 404, "text/plain", b"not a list request of the stand-in's library"

    def start(self) -> StoreListing:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                parts = urlsplit(self.path)
                status, kind, body = owner.answer(parts.path, parse_qs(parts.query))
                owner.pages += status == 200
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
