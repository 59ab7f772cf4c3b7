"""What a provider profile is: the wire format of one provider, and nothing else.

A profile turns the simulator's neutral state into one provider's HTTP contract: its
paths, credentials, request validation, bodies and status names, error shapes,
rate-limit headers, webhook events and signature headers. It holds no state and makes
no decisions about faults, timing or delivery: ProviderSim (core.py) and the parts it wires (gate.py,
create.py, processing.py, webhooks.py) do those once for every profile.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import hashlib
import hmac
import time
import urllib.parse
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import Message
from typing import TYPE_CHECKING, ClassVar, Protocol

from .bucket import RateState
from .video import TextTrack, Video

if TYPE_CHECKING:
    from .config import SimConfig
    from .library import Item, Served, Shelf

# Delay before attempt 2, 3, ... of a webhook; len + 1 is the maximum number of tries. Mux "will continue
# to try the message for the next 24 hours (with an increasing delay between attempts)", each attempt
# timing out after 5 s (docs.mux.com/guides/listen-for-webhooks): compressed here to about 90 s, long
# enough that a receiver slowed by a loaded machine (cold starts, throttles) is reached as on the platform,
# short enough that a test of a receiver that is down sees the give-up. A profile with a documented
# schedule of its own (api.video's) overrides it.
WEBHOOK_BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 30.0)

# Error kinds the core asks profiles to express, with their HTTP status (the same everywhere).
KIND_STATUS = {
    "invalid": 400,
    "unsupported": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "no_route": 404,
    "method": 405,
    "conflict": 409,
    "full": 413,  # the account's storage is used up (Cloudflare)
    "throttled": 429,
    "busy": 429,  # too many videos processing at once (Cloudflare; the core may answer 413 instead)
    "failed": 500,
    "unavailable": 503,
}


@dataclass
class Reply:
    """One API answer. `told` is the retry hint it carries in seconds, for the request log;
    `lost` means the request was performed but the connection closes without an answer."""

    status: int
    body: object = None
    headers: dict = field(default_factory=dict)
    told: float | None = None
    lost: bool = False
    raw: bytes | None = None  # a body that is not JSON (a caption file), sent as it is with its Content-Type
    log: dict = field(default_factory=dict)  # what the request log should note of it (Wistia's API version served)


@dataclass
class Draft:
    """A create the profile accepted: the source URL (None: nothing to process), our reference, the body."""

    source: str | None
    ref: str | None
    request: dict
    log: dict = field(default_factory=dict)  # what the request log should note of it (e.g. which field came)
    texts: list[TextTrack] = field(default_factory=list)  # caption files the create carries (Mux's text inputs)


@dataclass
class Event:
    """One webhook delivery's content. `id` names it in logs and where the scheme carries an id."""

    id: str
    body: bytes


@dataclass
class Call:
    """What a profile may read of the request it answers."""

    query: str
    params: dict  # path parameters, e.g. {"id": ...}
    headers: Mapping | Message  # case-insensitive (http.client.HTTPMessage)
    base_url: str  # scheme://host:port as the client addressed us
    op: str = ""  # the operation the route named
    method: str = ""
    config: SimConfig | None = None  # the configuration the request goes by (Vimeo: the account's plan)


@dataclass
class Account:
    """The answer to an account operation, and the config changes it makes."""

    reply: Reply
    changes: dict = field(default_factory=dict)


@dataclass(frozen=True)
class MadeUp:
    """A made-up account on the platform, for local runs (infra/accounts.py): the credentials as the stack's secret
    holds them (a target's provider secret, docs/providers.md; a source's entry in the source secret,
    docs/sources.md), the simulator's knobs for the same credentials, and for a target what signs its webhooks, in
    which scheme (the generic contract's), and the template parameters a stack against it needs."""

    credentials: dict
    sim: dict
    webhook_secret: str = ""
    webhook_scheme: str = "seed"
    stack: dict = field(default_factory=dict)


class Store(Protocol):
    """The video listing the core lends a profile while it holds the state lock."""

    videos: dict[str, Video]  # by id, in creation order
    account: dict  # what the profile keeps of account operations (Stream's token secret)

    def newest_first(self) -> Sequence[Video]: ...

    def with_ref(self, ref: str) -> Sequence[Video]: ...


class ParamError(ValueError):
    """A query or body parameter out of its documented range; profiles word it their way."""

    def __init__(self, name: str, message: str, low: int | None = None, high: int | None = None) -> None:
        super().__init__(message)
        self.name, self.low, self.high = name, low, high


# ----- helpers shared by the profiles ---------------------------------------------------------


def same(given: str | None, expected: str) -> bool:
    """Constant-time string equality (credentials)."""
    return hmac.compare_digest((given or "").encode(), expected.encode())


def basic_credentials(header: str | None) -> tuple[str, str] | None:
    """(user, password) of an `Authorization: Basic` header, or None."""
    scheme, _, encoded = (header or "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, sep, password = base64.b64decode(encoded.strip(), validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return (user, password) if sep else None


def basic_matches(header: str | None, user: str, password: str) -> bool:
    creds = basic_credentials(header)
    # Both halves are always compared, so timing does not tell which one was wrong.
    ok_user = same(creds[0] if creds else "", user)
    ok_password = same(creds[1] if creds else "", password)
    return creds is not None and ok_user and ok_password


def iso_z(epoch: float) -> str:
    """RFC 3339 UTC with microseconds and a Z, as Cloudflare and Mux events write times."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def iso_offset(epoch: float) -> str:
    """ISO 8601 to the second with +00:00 ("ATOM"), as api.video writes times."""
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")


def number(value: float) -> str:
    """A header number: integral values without a decimal point, others to 3 places."""
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}".rstrip("0")


def int_param(query: Mapping[str, list[str]], name: str, default: int, low: int, high: int | None) -> int:
    """An integer query parameter within [low, high]; raises ParamError otherwise."""
    if name not in query:
        return default
    try:
        value = int(query[name][0])
    except ValueError:
        raise ParamError(name, f"{name} must be an integer", low, high) from None
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ParamError(name, f"{name} must be {bound}", low, high)
    return value


_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _base62(n: int, length: int) -> str:
    chars = []
    for _ in range(length):
        n, i = divmod(n, len(_BASE62))
        chars.append(_BASE62[i])
    return "".join(chars)


def alnum_id(length: int, prefix: str = "") -> str:
    """A random id of letters and digits (Mux asset ids, api.video video ids)."""
    return prefix + _base62(uuid.uuid4().int << 64 | uuid.uuid4().int, length)


def derived_id(seed: str, length: int) -> str:
    """A stable id derived from another (Mux playback ids), so nothing extra is stored."""
    return _base62(int.from_bytes(hashlib.sha256(seed.encode()).digest(), "big"), length)


def x_ratelimit(state: RateState, window_s: float) -> dict:
    """X-RateLimit-Limit (requests per `window_s` seconds, the profile's unit) and -Remaining."""
    return {"X-RateLimit-Limit": number(state.rate * window_s), "X-RateLimit-Remaining": str(state.remaining)}


def ietf_ratelimit(
    state: RateState, policy_header: str, current_header: str, policy_name: str = "default", name: str = "default"
) -> dict:
    """IETF structured fields: `"<policy_name>";q=<quota>;w=<window>` and `"<name>";r=<left>;t=<reset s>`."""
    quota, window = state.policy()
    return {
        policy_header: f'"{policy_name}";q={quota};w={window}',
        current_header: f'"{name}";r={state.remaining};t={state.reset_in_s()}',
    }


def reset_epoch(state: RateState) -> str:
    """X-RateLimit-Reset as epoch seconds: when the bucket is full again."""
    return str(int(time.time()) + state.reset_in_s())


class Profile:
    """Base of every profile (infra/sim/platforms/); subclasses fill in the wire format."""

    # The `--profile` value, the platform's name in migrator.platforms too (infra/sim/platforms registers it).
    name: ClassVar[str]
    # The limits the platform documents, by SimConfig knob (rate, burst, read_rate, read_burst, budget_quota,
    # budget_window_s, budget_block_s, max_in_flight), each with its document; a knob left None in a SimConfig takes
    # the profile's, else config.LIMIT_DEFAULTS. Bursts nobody documents are the simulator's choice, and say so.
    limits: ClassVar[Mapping[str, float | int]] = {}
    # Where the API lives below the simulator's address, as below the platform's (Wistia's /modern): what a
    # client's base URL adds to the simulator's.
    api_path: ClassVar[str] = ""
    # (path template, {method: op}); "{x}" matches one segment. First match wins.
    routes: ClassVar[tuple[tuple[str, dict[str, str]], ...]]
    honours_idempotency_key: ClassVar[bool] = False  # Idempotency-Key and 409s: the generic contract only
    webhook_backoff_s: ClassVar[tuple[float, ...]] = WEBHOOK_BACKOFF_S
    # How this provider fetches a source before it ingests it (check_source): "head-range" (HEAD with the
    # size, then a range GET: Cloudflare's documented need) or "get" (a GET of the first bytes).
    fetch_mode: ClassVar[str] = "get"
    # When it fetches it (check_source), as a share of the video's processing time: 0, at the create, as the
    # providers that fetch at once; Vimeo's pull later (vimeo_target.py says why).
    fetch_after_share: ClassVar[float] = 0.0
    # As a source (library_size > 0): the ways this platform's videos can be unfetchable, given in turn to
    # every library_unfetchable_every-th video; profiles that are no source have none.
    faults: ClassVar[tuple[str, ...]] = ()

    # ----- routing and auth

    def route(self, method: str, path: str) -> tuple[str, dict] | Reply:
        """(op, path params) for an API path, or the 404/405 reply in this profile's shape."""
        segments = (path.rstrip("/") or "/").split("/")
        for template, methods in self.routes:
            parts = template.split("/")
            if len(parts) != len(segments):
                continue
            params = {}
            for part, segment in zip(parts, segments, strict=True):
                if part.startswith("{") and segment:
                    params[part[1:-1]] = urllib.parse.unquote(segment)
                elif part != segment:
                    break
            else:
                if method not in methods:
                    reply = self.error("method", "method not allowed")
                    reply.headers["Allow"] = ", ".join(sorted(methods))
                    return reply
                return methods[method], params
        return self.error("no_route", "not found")

    def authorize(self, cfg: SimConfig, call: Call) -> Reply | None:
        """None if the request may proceed, else the 401/403 reply."""
        raise NotImplementedError

    # ----- bodies

    def error(self, kind: str, message: str | None = None, **detail: object) -> Reply:
        """The reply for an error kind (see KIND_STATUS) in this profile's error shape."""
        raise NotImplementedError

    def new_id(self) -> str:
        raise NotImplementedError

    def ref_of(self, body: object) -> str | None:
        """Our reference in a create body, leniently (for the request log, even of refused creates)."""
        raise NotImplementedError

    def parse_create(self, body: object, parse_error: str | None, call: Call) -> Draft | Reply:
        """Validate a create body as the provider would: a Draft, or the 4xx refusal."""
        raise NotImplementedError

    def render(self, video: Video, now: float) -> dict:
        """The provider's video object at monotonic time `now`."""
        raise NotImplementedError

    def created(self, video: Video, now: float, replay: bool) -> Reply:
        raise NotImplementedError

    def list_ref(self, call: Call) -> str | None:
        """The reference a list request filters on, if the provider can filter by it (request log)."""
        return None

    def list(self, store: Store, call: Call, now: float) -> Reply:
        raise NotImplementedError

    def get(self, video: Video | None, now: float) -> Reply:
        raise NotImplementedError

    def status(self, video: Video | None, now: float) -> Reply:
        """A separate status resource (api.video only; others route no "status" op)."""
        raise NotImplementedError

    def video_op(
        self, cfg: SimConfig, op: str, video: Video | None, call: Call, body: object, problem: str | None, now: float
    ) -> Reply:
        """An operation on one video (a route's op named "video_..."), answered in full under the state lock:
        Bunny's update, which may change the video's own fields, and its play data, which reads the config."""
        return self.error("no_route", "not found")

    def store_op(
        self, cfg: SimConfig, op: str, store: Store, call: Call, raw: bytes, fetched: object, now: float
    ) -> Reply:
        """An operation answered with the whole store in hand (a route's op named "store_..."), under the state lock:
        what a video holds besides its file and tracks (Video.extras: a custom thumbnail, chapters) and what the
        library keeps apart from its videos (`store.account`: collections); `raw` is the request's body as sent
        (a multipart upload), `fetched` what `store_prefetch` fetched for it."""
        return self.error("no_route", "not found")

    def store_prefetch(self, cfg: SimConfig, op: str, call: Call) -> object:
        """What a store op needs from elsewhere before the lock is taken (a file the platform fetches by URL)."""
        return None

    def account(self, cfg: SimConfig, call: Call, body: object, parse_error: str | None, held: dict) -> Account:
        """An operation on the account rather than a video (api.video's tokens, Cloudflare's webhook).

        `held` is the account's state the core keeps for the profile (under its lock); the
        answer may ask for config changes, which the core applies (a webhook's URL and secret).
        """
        raise NotImplementedError

    # ----- caption tracks

    # Whether a second file in a language replaces the first (Cloudflare, api.video) or stands beside it (Mux).
    one_track_per_language: ClassVar[bool] = False

    def take_track(self, video: Video | None, call: Call, raw: bytes, cfg: SimConfig) -> TextTrack | Reply:
        """A track upload as the provider takes it: the track to hold, or its refusal (under the state lock)."""
        raise NotImplementedError

    def track_taken(self, video: Video, track: TextTrack, now: float) -> Reply:
        """The answer to an upload the provider took."""
        raise NotImplementedError

    def list_tracks(self, video: Video | None, call: Call, now: float) -> Reply:
        """A video's caption tracks, where the provider lists them on their own."""
        raise NotImplementedError

    # ----- as a source (a library: infra/sim/library.py)

    # An op a path shares between the two sides: what it means when the simulator is a source library.
    source_ops: ClassVar[dict[str, str]] = {}

    def source(self, op: str, shelf: Shelf, call: Call, body: object, now: float) -> Reply:
        """A list, get or source operation (an op named "src_...") on the library."""
        return self.error("no_route", "not found")

    def media_ready(self, shelf: Shelf, video: Item, name: str, now: float) -> bool:
        """Whether the file `name` of `video` exists yet (a master or a download being prepared)."""
        return True

    def serve_stream(self, shelf: Shelf, method: str, path: str) -> Served | None:
        """A file at the platform's delivery host, `/_stream/...` here (Mux's text tracks); None: none."""
        return None

    # ----- playback (media.py: `/_play/<profile>/<key>/...`, where the profile's video objects point)

    # The path below a video's playback base its HLS master is served at, as the platform's own URL has it
    # (Stream's `manifest/video.m3u8`); none: the profile points at no master there.
    hls_master: ClassVar[tuple[str, ...]] = ()
    # Whether the profile's delivery host has rules of its own for every path (Mux's playback ids, a signed one's
    # token): then `serve_playback` answers all of `/_play/<profile>/...`.
    owns_playback: ClassVar[bool] = False

    def serve_playback(
        self, videos: builtins.list[Video], held: dict, shelf: Shelf, key: str, rest: builtins.list[str], query: str
    ):
        """The answer `(status, type, body)` for `/_play/<profile>/<key>/<rest>`, where `owns_playback`: every video
        held and `held` (a copy of what the profile remembers), read outside the state lock."""
        raise NotImplementedError

    def playback_needs_token(self, video: Video) -> bool:
        """Whether the video plays only with a token, where no profile rule of its own answered (api.video's
        `public: false`); by default it plays as it is."""
        return False

    def open_playback(self, cfg: SimConfig, kept: dict, video: Video, rest: builtins.list[str], query: str):
        """A video's own access rules at its delivery host, before its playback media are served (api.video's
        private tokens): the path under the video to serve with no further check, an answer `(status, type,
        body)` at once (a refusal, a session), or None for the common rules (media.answer). `kept`: what the
        profile remembers between requests (the store's account dict), under the state lock."""
        return None

    def serve_delivery(
        self, shelf: Shelf, method: str, path: str, query: str, range_header: str | None
    ) -> Served | None:
        """`serve_stream` with the request's query and Range too, for a profile whose delivery host serves
        ranged files (Stream's MP4 downloads); by default `serve_stream`'s answer."""
        return self.serve_stream(shelf, method, path)

    def playback_video(self, store: Store, key: str, query: str) -> tuple[Video | None, bool] | None:
        """The video a playback URL (`/_play/<profile>/<key>/...`) names and whether the request still lacks
        the token it needs, where the profile reads `key` its own way (Stream's signed token in place of
        the uid); None: `key` is the video's id (under the state lock)."""
        return None

    # ----- a made-up account, for local runs (infra/accounts.py: the demo, the benchmarks, the tests)

    def made_up_target(self, webhook_scheme: str = "standard") -> MadeUp:
        """A fresh made-up account of this platform as a target (`webhook_scheme`: the generic contract's)."""
        raise NotImplementedError(f"{self.name} is no target")

    def made_up_source(self) -> MadeUp:
        """A fresh made-up account of this platform as a source; by default the target's credentials."""
        return self.made_up_target()

    # ----- rate limits

    def rate_headers(self, cfg: SimConfig, state: RateState) -> dict:
        """The headers every API answer carries when `rate_headers` is on."""
        raise NotImplementedError

    def throttle_hint(self, cfg: SimConfig, wait_s: float, state: RateState) -> tuple[dict, float | None]:
        """Headers a 429 always carries, and the retry hint (seconds) a client can read from the 429."""
        raise NotImplementedError

    # ----- webhooks

    def events(self, video: Video, moment: str, now: float) -> builtins.list[Event]:
        """Webhook events when a video is "created" or "finished" (ready or errored)."""
        raise NotImplementedError

    def signature_headers(self, cfg: SimConfig, event: Event, secret: str | None, timestamp: int) -> dict:
        """Headers that authenticate one delivery attempt (none without a secret)."""
        raise NotImplementedError
