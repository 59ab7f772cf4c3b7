"""The libraries a migration can start from, each behind the one `Source` interface, and `resolve`.

One module per platform (HTTP_SOURCES below, and s3), each speaking only its platform's wire format
and declaring its own facts as class attributes (`platform`, `credential_env`, `documented_rate_per_s`,
`requests_per_video`, `link_terms`); a platform that is also a provider shares that provider's HTTP
and facts code (`providers/`), not its class. A platform is registered by one line in `REGISTERED`
below and its name in `platforms.py` (docs/adding-a-platform.md).

`build(platform, ...)` makes a source for a listing (the CLI's `migrator inventory --from`);
`Resolver` turns a message's `source_url` into what the provider is handed at the create (an
https URL unchanged, an s3:// one presigned, a source reference resolved by its platform), and
`resolve(ref)` does the same for a caption track's reference with the stack's settings (the
tracks worker). A video's link comes with what is known of its life (`Resolution.expires_at`,
`.terms`), and one signed for longer where that is the signer's to choose (`Resolver(url,
lasting_s=...)`): the uploader weighs both against the target's need.

Source credentials are one JSON object, keyed by platform, in the formats each module names:
`{"vimeo": {"token": ...}, "mux": {"token_id": ..., "token_secret": ...}, ...}` (Secrets Manager
`SourceTokenSecretName` or SSM `SourceTokenParameterName` in the stack; a file, a profile or the
environment on the operator's machine). They are read per request and never logged.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from urllib.parse import urlsplit

from ..link_life import LinkTerms, expiry_in_link, span
from ..presign import MAX_EXPIRY_S
from ..providers.facts import CredentialsError
from ..settings import load, parse_base_urls
from .apivideo import ApiVideoSource
from .azure import AzureSource
from .base import (
    PLATFORMS,
    Entry,
    HttpSource,
    Page,
    Resolution,
    ResolutionKind,
    Source,
    SourceDenied,
    SourceError,
    SourceRef,
    SourceThrottled,
    Unfetchable,
    asset_id_of,
    parse_ref,
)
from .brightcove import BrightcoveSource
from .cloudflare import CloudflareSource
from .dropbox import DropboxSource
from .gcs import GcsSource
from .jwplayer import JwPlayerSource
from .kaltura import KalturaSource
from .mux import MuxSource
from .s3 import S3Source
from .vimeo import VimeoSource
from .wistia import WistiaSource

# The sources a reference names, one line each, in platforms.REFERENCED_SOURCES' order (a unit test holds the two
# equal); S3 is listed apart (`S3Source`: its rows carry s3:// URLs, not references).
REGISTERED: tuple[type[HttpSource], ...] = (
    VimeoSource,
    WistiaSource,
    MuxSource,
    CloudflareSource,
    ApiVideoSource,
    KalturaSource,
    JwPlayerSource,
    BrightcoveSource,
    GcsSource,
    AzureSource,
    DropboxSource,
)
HTTP_SOURCES: dict[str, type[HttpSource]] = {cls.platform: cls for cls in REGISTERED}

__all__ = [
    "HTTP_SOURCES",
    "PLATFORMS",
    "REGISTERED",
    "ROW_TERMS",
    "Entry",
    "HttpSource",
    "Page",
    "Resolution",
    "ResolutionKind",
    "Resolver",
    "S3Source",
    "Source",
    "SourceDenied",
    "SourceError",
    "SourceRef",
    "SourceThrottled",
    "Unfetchable",
    "asset_id_of",
    "build",
    "credentials_by_platform",
    "parse_base_urls",
    "parse_ref",
    "resolve",
]


def build(
    platform: str, credentials: Callable[[], Mapping | None], base_url: str | None = None, **options
) -> HttpSource:
    """The HTTP source for `platform` (see HTTP_SOURCES); `options`: clock, sleep, session, timeouts,
    patient, rate_per_s."""
    try:
        cls = HTTP_SOURCES[platform]
    except KeyError:
        raise ValueError(f"unknown source platform {platform!r}; one of {', '.join(HTTP_SOURCES)}") from None
    return cls(base_url, credentials, **options)


def credentials_by_platform(raw: str | None) -> dict[str, Mapping]:
    """`{platform: credentials}` from the secret's text; CredentialsError (naming no value) when malformed."""
    if raw is None or not raw.strip():
        return {}
    try:
        doc = json.loads(raw)
    except ValueError:
        raise CredentialsError("the source credentials are not valid JSON") from None
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise CredentialsError('the source credentials must be a JSON object of {"<platform>": {...}}')
    unknown = sorted(set(doc) - set(HTTP_SOURCES))
    if unknown:
        raise CredentialsError(f"the source credentials name unknown platforms: {', '.join(unknown)}")
    return doc


# A row's own https link: it ends where its signature says (link_life.expiry_in_link), and nothing here can sign
# it again.
ROW_TERMS = LinkTerms(
    "the row's link",
    fix="give the row a link that lives as long, or an s3:// URL the stack signs at the create, then migrator retry",
)


class Resolver:
    """What the provider is handed for a `source_url`, made at the moment it is needed.

    `sources(platform)` gives the source for a platform (built once, impatient: a 429 comes back as
    THROTTLED, never a sleep); `presign(url)` presigns an s3:// URL (`presign(url, expiry_s=...)`: for that
    long), for `presign_expiry_s` where that is known. Errors of the source become resolutions: THROTTLED
    and DENIED spend no attempt, TRANSIENT does; anything else raised (an S3 client's failure) is the
    caller's to handle, as before. A video's READY link carries its source's `link_terms`; `lasting_s` asks
    for one signed to live that long, where its source chooses (s3, `Source.resolve_lasting`).
    """

    def __init__(
        self,
        sources: Callable[[str], Source],
        presign: Callable[..., str],
        presign_expiry_s: float | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self._sources = sources
        self._presign = presign
        self._presign_expiry_s = presign_expiry_s
        self._clock = clock

    def __call__(self, url: str, lasting_s: float | None = None) -> Resolution:
        scheme = urlsplit(url).scheme.lower()
        if scheme in ("http", "https"):
            return replace(Resolution.ready(url, expires_at=expiry_in_link(url)), terms=ROW_TERMS)
        if scheme == "s3":
            return self._s3(url, lasting_s)
        ref = parse_ref(url)
        if ref is None:
            return Resolution.unfetchable(f"not a source reference this stack can resolve: {scheme}://")
        try:
            source = self._sources(ref.platform)
            resolution = source.resolve(ref) if lasting_s is None else source.resolve_lasting(ref, lasting_s)
        except SourceError as exc:
            return exc.resolution()
        except CredentialsError as exc:
            return Resolution(ResolutionKind.DENIED, reason=str(exc))
        terms = getattr(source, "link_terms", None)  # a stand-in source may have none
        if resolution.kind is ResolutionKind.READY and resolution.url and not ref.is_track and not resolution.terms:
            resolution = replace(resolution, terms=terms)
        return resolution

    def _s3(self, url: str, lasting_s: float | None) -> Resolution:
        """An s3:// source presigned now: for PresignExpirySeconds, or for `lasting_s` (SigV4's seven days at most).
        A link signed with the uploader's temporary credentials may end sooner (presign.py says why)."""
        expiry_s = self._presign_expiry_s
        if lasting_s is None:
            signed = self._presign(url)
        else:
            expiry_s = min(MAX_EXPIRY_S, max(expiry_s or 0, math.ceil(lasting_s)))
            signed = self._presign(url, expiry_s=expiry_s)
        now = self._clock()
        words = f"the stack signs S3 links to live {span(expiry_s)} (PresignExpirySeconds)" if expiry_s else ""
        terms = LinkTerms(words, longest_s=MAX_EXPIRY_S)
        return replace(Resolution.ready(signed, expires_at=now + expiry_s if expiry_s else None), terms=terms)

    @classmethod
    def from_settings(cls, settings, presign: Callable[[str], str]) -> Resolver:
        """The stack's resolver: credentials from its source secret (cached 5 minutes, as the provider's)."""
        from ..providers import readable
        from ..secrets import read_secret

        raw = readable(lambda: read_secret(settings.source_secret_name, settings.source_parameter_name), "source")
        built: dict[str, Source] = {}
        lock = threading.Lock()

        def source(platform: str) -> Source:
            with lock:
                if platform not in built:
                    built[platform] = build(
                        platform,
                        lambda: credentials_by_platform(raw()).get(platform),
                        settings.source_base_urls.get(platform),
                        connect_timeout_s=settings.connect_timeout_s,
                        read_timeout_s=settings.read_timeout_s,
                    )
                return built[platform]

        return cls(source, presign, settings.presign_expiry_s)


_default: Resolver | None = None


def resolve(ref: str) -> Resolution:
    """Resolve `ref` (a track's or a video's source reference, or any source_url) with the stack's
    settings from the environment: what the tracks worker calls for a track's source reference."""
    global _default
    if _default is None:
        from ..presign import S3Presigner

        settings = load(require_queue=False)
        _default = Resolver.from_settings(settings, S3Presigner(settings.presign_expiry_s))
    return _default(ref)
