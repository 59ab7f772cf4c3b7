"""What a source library is to the migration: one interface to list it and to resolve what it holds.

A source (a video platform, a file host or an object store: platforms.SOURCES) is listed page by
page, each page from a cursor the caller may save and resume from, and every video becomes
either a row (a valid `AssetMessage` whose `source_url` is a source reference such as
`vimeo://123`, never a download link) or an `Unfetchable` with the reason it can never be
fetched. `resolve(ref)` turns a reference into a fresh download URL (or a caption's text) at
the moment it is needed, says PREPARING where the platform must make a file first, and
UNFETCHABLE, with the same words the inventory uses, where it cannot be had.

The HTTP sources share the providers' transport (`providers.http`), readers (`providers.facts`)
and rate-limit headers (`providers.ratelimit`); `HttpSource` adds what a listing needs: pacing
at the platform's documented rate, waiting out a 429 or an exhausted quota (patient mode, on
the operator's machine), and in the Lambda (impatient mode) saying THROTTLED instead of
sleeping. Credentials are read per request and never appear in an error or a log line.
"""

from __future__ import annotations

import random
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar
from urllib.parse import quote, unquote, urlsplit

from ..fate import excerpt
from ..link_life import LinkTerms
from ..messages import SOURCE_PLATFORMS, AssetMessage
from ..platforms import SOURCES
from ..providers.facts import CredentialsError, RateSignal, entries, mapping
from ..providers.http import Answer, HttpTransport, TransportError
from ..providers.ratelimit import read_rate_headers
from ..trackfetch import MAX_TRACK_BYTES

# Every platform a library can be listed from: the referenced ones and S3 (platforms.py).
PLATFORMS = SOURCES
# Object stores whose video id is a path (`gcs://bucket/object`, `azure://account/container/blob`): the whole
# path after the scheme is the id, with its slashes as they are; such a reference names no caption track.
PATH_REFS = frozenset({"gcs", "azure"})
# A page of a source's library may be large (Cloudflare's 1,000 videos run past 1 MiB).
LISTING_MAX_BODY_BYTES = 16 * 1024 * 1024
# Patient mode (a listing): how often one request is tried again after a 429, a 5xx or no answer,
# and the longest single wait it accepts (a longer Retry-After is waited in steps of this).
MAX_TRIES = 8
MAX_WAIT_S = 300.0
DEFAULT_THROTTLE_S = 5.0
# A platform that locks a client out after its limit is passed without saying for how long (`lockout_s`):
# a patient listing waits this many lock-outs' worth in all before it gives up.
LOCKOUT_PATIENCE = 5


# --- references ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceRef:
    """`<platform>://<video id>` (the video) or `<platform>://<video id>/<kind>/<item>` (a caption track)."""

    platform: str
    video_id: str
    kind: str | None = None
    item: str | None = None

    @property
    def is_track(self) -> bool:
        return self.kind is not None

    def __str__(self) -> str:
        if self.platform in PATH_REFS and self.kind is None:
            return f"{self.platform}://{quote(self.video_id, safe='/')}"
        text = f"{self.platform}://{quote(self.video_id, safe='')}"
        if self.kind is not None:
            text += f"/{quote(self.kind, safe='')}/{quote(self.item or '', safe='')}"
        return text


def parse_ref(text: str) -> SourceRef | None:
    """The reference `text` names, or None when it is not one (an https URL, garbage)."""
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    platform = parts.scheme.lower()
    if platform not in SOURCE_PLATFORMS or not parts.netloc or parts.query or parts.fragment:
        return None
    video = unquote(parts.netloc)
    if platform in PATH_REFS:
        path = unquote(parts.path)
        return SourceRef(platform, f"{video}{path}") if path.startswith("/") and len(path) > 1 else None
    segments = [unquote(s) for s in parts.path.split("/")[1:]] if parts.path not in ("", "/") else []
    if not segments:
        return SourceRef(platform, video)
    if len(segments) != 2 or not all(segments):
        return None
    return SourceRef(platform, video, segments[0], segments[1])


def asset_id_of(platform: str, video_id: str) -> str:
    """The stable asset id of a video: `<platform>/<its id on the platform>`."""
    return f"{platform}/{video_id}"


# --- what a listing gives ----------------------------------------------------------------------


@dataclass(frozen=True)
class Unfetchable:
    """A video the migration can never fetch, and why: counted and listed apart, never sent."""

    asset_id: str
    source_url: str
    reason: str
    title: str | None = None

    def as_dict(self) -> dict:
        doc = {"id": self.asset_id, "source_url": self.source_url, "reason": self.reason}
        if self.title is not None:
            doc["title"] = self.title
        return doc


Entry = AssetMessage | Unfetchable


@dataclass
class Page:
    """One page of a library: its entries, where the next page starts (None: this was the last),
    how many videos remain after it when the platform says, and the newest change time seen
    (epoch seconds): the mark a later delta sweep starts from."""

    entries: list[Entry] = field(default_factory=list)
    cursor: str | None = None
    remaining: int | None = None
    newest: float | None = None
    skipped: int = 0  # objects that are not videos at all (an S3 listing's other files): not counted
    # Items the platform's page held that this listing had not read before, whatever became of them (rows,
    # unfetchable, pending, skipped, or left out: unchanged since a delta's mark, naming no video): a page
    # that held some is no empty page of a stuck listing (paging.PagingGuard), even with nothing to write.
    listed: int = 0
    # Videos the platform is still processing (the video, or a caption track it has): not written yet, each
    # with why; the sweep carries them to the next one, which asks for each again (`Source.video`), since a
    # platform listed by creation time (Mux, Stream) would never list them again past the mark.
    pending: list[Unfetchable] = field(default_factory=list)
    # Where a later delta sweep starts, for a platform whose changes are read from a cursor rather than by time
    # (Dropbox's list_folder/continue): the sweep keeps the first a sweep is handed, with its mark.
    delta: str | None = None

    def saw(self, when: float | None) -> None:
        if when is not None and (self.newest is None or when > self.newest):
            self.newest = when


# --- resolving a reference -------------------------------------------------------------------------


class ResolutionKind(StrEnum):
    READY = "ready"  # `url` (or `text`) is good now
    PREPARING = "preparing"  # the platform is making the file: ask again after `retry_after`
    UNFETCHABLE = "unfetchable"  # never: `reason` (the inventory's words)
    THROTTLED = "throttled"  # the source is pacing us: ask again after `retry_after`, no attempt spent
    DENIED = "denied"  # our credentials for the source are missing or refused: our configuration
    TRANSIENT = "transient"  # the source failed this once (a 5xx, no answer): an attempt is spent


@dataclass(frozen=True)
class Resolution:
    kind: ResolutionKind
    url: str | None = None
    text: str | None = None  # a caption's content, where the platform serves it only through its API
    text_format: str | None = None  # "vtt" | "srt", with `text`
    expires_at: float | None = None  # epoch seconds the link stops working, where the link or the platform says
    retry_after: float | None = None
    reason: str | None = None
    # The video's privacy as the platform says it at the create (None: not read, or no narrower word): it
    # may have been made private since the inventory, and the narrowest known wins (messages.narrowest_privacy).
    privacy: str | None = None
    # What the platform documents of its video links' life (the source's `link_terms`, set by the Resolver): with
    # `expires_at`, what the hand-off weighs against the target's need (link_life.decide). None: nothing known.
    terms: LinkTerms | None = None

    @classmethod
    def ready(cls, url: str, expires_at: float | None = None, privacy: str | None = None) -> Resolution:
        return cls(ResolutionKind.READY, url=url, expires_at=expires_at, privacy=privacy)

    @classmethod
    def ready_text(cls, text: str, text_format: str) -> Resolution:
        return cls(ResolutionKind.READY, text=text, text_format=text_format)

    @classmethod
    def preparing(cls, reason: str, retry_after: float = 30.0) -> Resolution:
        return cls(ResolutionKind.PREPARING, reason=reason, retry_after=retry_after)

    @classmethod
    def unfetchable(cls, reason: str) -> Resolution:
        return cls(ResolutionKind.UNFETCHABLE, reason=reason)


class SourceError(Exception):
    """A request to the source that gave no usable answer. `reason` is safe to log and store."""

    kind = ResolutionKind.TRANSIENT

    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after

    def resolution(self) -> Resolution:
        return Resolution(self.kind, reason=self.reason, retry_after=self.retry_after)


class SourceThrottled(SourceError):
    kind = ResolutionKind.THROTTLED


class SourceDenied(SourceError):
    """401/403, or credentials that cannot be read: the operator's to fix, not the video's fault."""

    kind = ResolutionKind.DENIED


# --- the interface -------------------------------------------------------------------------------------


class Source(ABC):
    """A library on one platform."""

    platform: ClassVar[str] = ""
    # The platform's credentials object (the `{"<platform>": {...}}` entry of the stack's source secret): each field,
    # and the environment variable `migrator inventory --from` reads it from on the operator's machine when no file
    # or profile names the credentials (cli source_credentials.py). Empty: none from the environment (S3 reads the
    # AWS SDK's own chain).
    credential_env: ClassVar[Mapping[str, str]] = {}
    # Requests per second the platform documents for reads, which a listing paces itself at (None: none known).
    documented_rate_per_s: ClassVar[float | None] = None
    # Requests resolving one video's reference costs at the platform, at least (its file's link, and where
    # the platform prepares the file first, the request and the read that finds it ready): with the rate
    # above, what bounds the source side of a migration (`migrator plan`).
    requests_per_video: ClassVar[int] = 1
    # What the platform documents of how long a video's link lives (its words, whether it ends at a time nobody
    # says, the longest it can be signed for): weighed at the hand-off against what the target needs.
    link_terms: ClassVar[LinkTerms] = LinkTerms()

    def __init__(self) -> None:
        self.requests = 0  # every request sent, retries included (requests per row, for the bench)
        self.throttled = 0  # 429s (or quota pauses) met and waited out
        # Where a listing says what it is waiting for (the sweep's progress sets it); None: nowhere.
        self.notice: Callable[[str], None] | None = None

    @abstractmethod
    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        """The page that starts at `cursor` (None: the first). `since` (epoch seconds): only what was
        added or changed since then, for a delta sweep. `tracks`: look up caption tracks too."""

    @abstractmethod
    def resolve(self, ref: SourceRef) -> Resolution:
        """A fresh download URL for the video or track `ref` names (see `Resolution`)."""

    def resolve_lasting(self, ref: SourceRef, lasting_s: float) -> Resolution:
        """`resolve`, its link signed to live `lasting_s` at least (at most `link_terms.longest_s`), for a source
        whose links' lifetime is the signer's to choose; any other answers as `resolve` does."""
        return self.resolve(ref)

    def video(self, video_id: str, tracks: bool = True) -> Page:
        """One video as a page would list it, asked for by id: a one-entry page (its row, or why it is
        unfetchable), `pending` when it is still processing, empty when it is gone. A source whose pages
        put videos in `pending` must answer this (the next sweep asks for each)."""
        raise NotImplementedError(f"{self.platform}: no lookup of one video")

    def ref(self, video_id: str, kind: str | None = None, item: str | None = None) -> str:
        return str(SourceRef(self.platform, video_id, kind, item))


class HttpSource(Source):
    """A source behind an HTTP API: credentials per request, pacing, 429s, the shared transport.

    `credentials()` returns the platform's credentials object (a dict), None when none are set.
    `patient`: a listing on the operator's machine, which waits out 429s, exhausted quotas and
    short outages; otherwise (the uploader) those raise at once so the message can be deferred.
    """

    default_base_url: ClassVar[str] = ""
    # The window an X-RateLimit-Limit counts over, where the headers do not say.
    rate_window_s: ClassVar[float] = 1.0
    # Opt-in, per platform: how long the platform documents it locks a client out once its limit is passed, for
    # a 429 that says nothing of when to come back (Vimeo: "up to a minute"). Such a 429 is then waited out with
    # a jittered backoff (DEFAULT_THROTTLE_S doubling up to this) for LOCKOUT_PATIENCE lock-outs in all (patient),
    # or answered THROTTLED for this long (the uploader). None: DEFAULT_THROTTLE_S, MAX_TRIES times.
    lockout_s: ClassVar[float | None] = None

    def __init__(
        self,
        base_url: str | None = None,
        credentials: Callable[[], Mapping | None] = lambda: None,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        session=None,
        connect_timeout_s: float = 3.05,
        read_timeout_s: float = 10.0,
        patient: bool = False,
        rate_per_s: float | None = None,
        paced: bool | None = None,
    ):
        super().__init__()
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.credentials = credentials
        self.clock, self.sleep, self.patient = clock, sleep, patient
        # Keep to the documented rate between requests: a patient listing always; an impatient one when asked (the
        # mirror's scheduled sweep, which lists many pages in one invocation but ends on a 429 rather than wait it).
        self.paced = patient if paced is None else paced
        rate = self.documented_rate_per_s if rate_per_s is None else rate_per_s
        self.interval_s = 1.0 / rate if rate else 0.0
        self._next_at = 0.0
        self._paused_until = 0.0
        self.http = HttpTransport(self.base_url, self._auth, session, connect_timeout_s, read_timeout_s)

    # --- credentials ---------------------------------------------------------------------------------

    def _auth(self) -> dict[str, str]:
        try:
            creds = self.credentials()
        except CredentialsError as exc:
            raise SourceDenied(str(exc)) from None
        if not creds:
            raise SourceDenied(f"no {self.platform} credentials are configured (the source credentials secret)")
        try:
            return self.auth_headers(creds)
        except CredentialsError as exc:
            raise SourceDenied(str(exc)) from None

    @abstractmethod
    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        """The request's credentials from the platform's credentials object (CredentialsError when malformed)."""

    def rate_signal(self, headers: Mapping[str, str]) -> RateSignal:
        return read_rate_headers(headers, self.clock(), self.rate_window_s)

    # --- one request -----------------------------------------------------------------------------------

    def call(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None = None,
        json_body: object = None,
        headers: Mapping[str, str] | None = None,
        max_body_bytes: int = LISTING_MAX_BODY_BYTES,
    ) -> Answer:
        """One answer that is not a pacing or a server failure: a 2xx, or a 4xx for the caller to read.
        A 429 (or a 503 that says when to come back), a 5xx or no answer is tried again (patient) or raised."""
        tries = 0
        lockout = Lockout(self.lockout_s) if self.lockout_s else None
        while True:
            self._wait_turn()
            self.requests += 1
            try:
                answer = self.http.send(method, path, json_body, params, headers, max_body_bytes)
            except TransportError as exc:
                tries += 1
                if self.patient and tries < MAX_TRIES:
                    self.sleep(min(MAX_WAIT_S, 2.0**tries))
                    continue
                raise SourceError(f"{self.platform}: {exc.kind}") from None
            signal = self.rate_signal(answer.headers)
            self._note(signal)
            if answer.status == 429 or (answer.status == 503 and signal.retry_after is not None):
                wait = signal.retry_after if signal.retry_after is not None else signal.reset_after
                if wait is None and lockout is not None:  # locked out, for a time the platform does not say
                    if self._wait_lockout(lockout):
                        continue
                    raise SourceThrottled(f"{self.platform}: HTTP 429 (rate limited, locked out)", lockout.lockout_s)
                wait = DEFAULT_THROTTLE_S if wait is None else max(0.0, wait)
                tries += 1
                if self.patient and tries < MAX_TRIES:
                    self.throttled += 1
                    self.sleep(min(MAX_WAIT_S, wait))
                    continue
                raise SourceThrottled(f"{self.platform}: HTTP {answer.status} (rate limited)", wait)
            if answer.status >= 500 or answer.status in (408, 425):
                tries += 1
                if self.patient and tries < MAX_TRIES:
                    self.sleep(min(MAX_WAIT_S, 2.0**tries))
                    continue
                raise SourceError(f"{self.platform}: HTTP {answer.status}")
            if answer.status in (401, 403):
                raise SourceDenied(
                    f"{self.platform} refused the credentials: HTTP {answer.status}: {excerpt(answer.text, 160)}"
                )
            return answer

    def _wait_lockout(self, lockout: Lockout) -> bool:
        """Patient mode: wait out one 429 of a lock-out (saying so through `notice`); False: give up."""
        pause = lockout.next_pause() if self.patient else None
        if pause is None:
            return False
        self.throttled += 1
        if self.notice is not None:
            self.notice(
                f"waiting on {self.platform}'s rate limit: HTTP 429 with no retry time (a lock-out of up to"
                f" {lockout.lockout_s:.0f} s); trying again in {pause:.0f} s ({lockout.waited - pause:.0f} s waited"
                f" so far, giving up after {lockout.patience_s:.0f} s)"
            )
        self.sleep(pause)
        return True

    def _wait_turn(self) -> None:
        """Paced: keep to the documented rate; patient: also wait out a quota the headers said is spent."""
        if not self.paced:
            return
        now = self.clock()
        at = max(self._next_at, self._paused_until) if self.patient else self._next_at
        if at > now:
            self.sleep(at - now)
            now = at
        self._next_at = now + self.interval_s

    def _note(self, signal: RateSignal) -> None:
        if signal.remaining is not None and signal.remaining < 1 and signal.reset_after:
            self._paused_until = self.clock() + min(MAX_WAIT_S, signal.reset_after)
            self.throttled += 1

    def read(self, method: str, path: str, what: str, gone_ok: bool = True, **kwargs) -> object:
        """The JSON body of a 2xx answer to one request; None for a 404 (the thing is gone) when `gone_ok`;
        the SourceError that stops a listing (or fails a resolve) for any other answer. A list is never
        gone (its 404 is a wrong address): pass gone_ok=False."""
        answer = self.call(method, path, **kwargs)
        if answer.status == 404 and gone_ok:
            return None
        if not 200 <= answer.status < 300:
            raise self.failure(answer, what)
        return self.json_of(answer, what)

    def take(
        self, page: Page, items: object, changed: Callable[[Mapping], float | None], since: float | None, tracks: bool
    ) -> bool:
        """Each listed item's entry onto `page`, and the newest change seen. A delta sweep (`since`) lists
        newest change first and stops at the first item changed before the mark: True when it did."""
        for item in entries(items):
            item = mapping(item)
            page.listed += 1
            when = changed(item)
            if since is not None and when is not None and when < since:
                return True
            page.saw(when)
            entry = self.entry(item, tracks)
            if entry is not None:
                page.entries.append(entry)
        return False

    def entry(self, item: Mapping, tracks: bool) -> Entry | None:
        """One listed item as a row or an Unfetchable; None for what is no video this platform could name."""
        raise NotImplementedError

    def json_of(self, answer: Answer, what: str) -> object:
        """A 2xx answer's body; SourceError when it is not JSON (or was cut at the cap)."""
        if answer.body is None:
            cut = " (over the size cap)" if answer.truncated else ""
            raise SourceError(f"{self.platform}: {what} answered HTTP {answer.status} without a JSON body{cut}")
        return answer.body

    def failure(self, answer: Answer, what: str) -> SourceError:
        """A 4xx the caller did not expect, as the error that stops a listing."""
        return SourceError(f"{self.platform}: {what} answered HTTP {answer.status}: {excerpt(answer.text, 200)}")

    def api_caption(self, path: str, name: str) -> Resolution:
        """A caption the platform serves only as text through its API (`path`), read up to the stack's cap on a
        caption file (trackfetch.MAX_TRACK_BYTES) and refused past it in the words of the tracks worker's guarded
        fetch; `name`: the platform's, for the reason a caption no longer there gives."""
        answer = self.call("GET", path, headers={"Accept": "text/vtt"}, max_body_bytes=MAX_TRACK_BYTES)
        if answer.status == 404:
            return Resolution.unfetchable(gone(name))
        if answer.status != 200:
            raise self.failure(answer, "the captions")
        length = next((v for k, v in answer.headers.items() if k.lower() == "content-length"), "")
        if length.strip().isdigit() and int(length) > MAX_TRACK_BYTES:
            return Resolution.unfetchable(
                f"the track file is {int(length):,} bytes, over the {MAX_TRACK_BYTES:,} allowed"
            )
        if answer.truncated:
            return Resolution.unfetchable(f"the track file is over the {MAX_TRACK_BYTES:,} bytes allowed")
        return Resolution.ready_text(answer.text, "vtt")


@dataclass
class Lockout:
    """The backoff through one lock-out: DEFAULT_THROTTLE_S, doubling up to the lock-out's length, each wait
    jittered by a fifth either way (so clients locked out together do not come back together), until
    LOCKOUT_PATIENCE lock-outs' worth has been waited."""

    lockout_s: float
    waited: float = 0.0
    waits: int = 0

    @property
    def patience_s(self) -> float:
        return LOCKOUT_PATIENCE * self.lockout_s

    def next_pause(self) -> float | None:
        """The next wait in seconds, or None once the patience is spent."""
        left = self.patience_s - self.waited
        if left <= 0:
            return None
        base = min(self.lockout_s, DEFAULT_THROTTLE_S * 2.0**self.waits)
        pause = min(left, base * random.uniform(0.8, 1.2))  # jitter, not a secret: random is enough
        self.waits += 1
        self.waited += pause
        return pause


def gone(platform: str) -> str:
    """A video the source no longer has: deleted, or no longer visible to these credentials."""
    return f"not found at the source: deleted from {platform}, or no longer visible to these credentials"
