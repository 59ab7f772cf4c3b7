"""The facts a provider hands back, in our terms, and the small readers that make them (pure).

Everything a provider says is untrusted; these types are what is left once its answer has
been read and checked: ids checked like our own, durations in range, times as epoch
seconds, errors short and redacted. Every reader is total: a field of the wrong type, an
absurd number (a 400-digit integer overflows float()) or nested garbage reads as unknown
(None, `known=False`), never as an exception, since an exception here would turn a video
the provider made into a poison message or a webhook answered 500 for ever.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from ..fate import Outcome, OutcomeKind, excerpt
from ..messages import AssetMessage, id_problem
from ..pacing import RateSignal  # noqa: F401  (re-exported: a provider fact too)
from ..playback_tokens import SigningKey
from ..states import State

if TYPE_CHECKING:  # the caption libraries load in the tracks worker only
    from ..captions import CaptionFile

# A duration outside this is garbage, not a video's length (seconds).
MAX_DURATION_S = 10_000_000
# An integer id longer than this is not a provider's id (and str() of a huge int may raise).
MAX_INT_ID_DIGITS = 40


class CredentialsError(ValueError):
    """The provider's credentials are missing or malformed. The message names the field,
    never its value, so it is safe to log."""


class EventError(ValueError):
    """A verified webhook whose body cannot be read (400). `.reason` is safe to return."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Video:
    """What a provider says about one of its videos, in our terms."""

    remote_id: str | None
    ref: str | None = None  # our asset id as the provider keeps it; None when absent or not readable
    target: State | None = None  # READY or REJECTED once the provider has finished; None while it works
    status: str = ""  # the provider's own word, for notes and reports
    known: bool = True  # False: a status we cannot read, which says nothing about progress
    duration_s: float | None = None
    error: str | None = None  # why the provider gave up (REJECTED), redacted and short
    created_at: float | None = None  # epoch seconds, when the provider says
    # Who may play it, in our terms: "public" (anyone with its URL), "signed" (a token is needed), None
    # when the answer does not say. `migrator audit` compares it with the row's privacy.
    privacy: str | None = None
    # How the video plays once ready, in our terms (see `playback_of`): the cut-over map's source.
    playback: dict | None = None


@dataclass(frozen=True)
class Poll:
    """One poll's answer: the HTTP status, and the video when the answer named one."""

    http_status: int
    video: Video | None = None
    retry_after: float | None = None


@dataclass(frozen=True)
class WebhookEvent:
    """A verified callback. It names our asset or only the provider's video; it carries the
    video's outcome, or (`confirm`) says only that something changed and the video must be asked."""

    event_id: str
    asset_id: str | None = None
    remote_id: str | None = None
    video: Video | None = None
    confirm: bool = False
    note: str = ""
    # With `confirm`: the event's kind itself says the video finished well (JW Player's conversions_complete), so
    # a provider whose every call counts against one small budget may settle it from what the ledger holds
    # (`Provider.ready_video`) instead of reading it.
    says_ready: bool = False


@dataclass(frozen=True)
class AssetRef:
    """What a create needs to know about the asset besides its source: our id, the create's
    generation, and everything the video is (`details`: the asset's message as the ledger keeps
    it: description, tags, privacy, poster, tracks, options...), which each provider carries
    in its own fields."""

    asset_id: str
    title: str | None = None
    generation: int = 0
    details: AssetMessage | None = None
    # ArchiveFirst: the side files the archive kept of the asset (name as archive.sidefiles names it, its key in the
    # archive bucket), for a target that reads them from there itself (the aws target's caption selectors).
    archived_files: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class RemoteTrack:
    """A text track as the provider lists it on a video, in our terms (for the look before an upload)."""

    language: str | None
    status: str = "ready"  # ready | preparing | errored | draft (held unpublished: Provider.publish_track)
    ref: str | None = None  # our track's reference where the provider keeps one (Mux's passthrough)
    remote_id: str | None = None
    error: str | None = None  # why the provider gave up on it (errored), short and redacted


@dataclass(frozen=True)
class TrackList:
    """A video's text tracks, and whether the provider takes a new one now (Mux: only once ready)."""

    tracks: tuple[RemoteTrack, ...] = ()
    open_for_tracks: bool = True
    video_gone: str | None = None  # the video errored or no longer exists: why


@dataclass(frozen=True)
class TrackUpload:
    """What an attach needs: the checked file, and the URL it was fetched from (Mux fetches it itself)."""

    caption: CaptionFile
    url: str


# What a ready video's playback may say, in our terms: each provider's reader maps its own fields
# onto these, and `playback_of` keeps only what is well formed (untrusted text from the provider).
PLAYBACK_URLS = ("hls", "dash", "player", "embed", "thumbnail", "preview", "mp4")
PLAYBACK_POLICIES = ("public", "signed", "drm", "private")
MAX_PLAYBACK_URL = 2048
MAX_PLAYBACK_IDS = 10
MAX_PIXELS = 100_000  # a side longer than this is garbage, not a video's resolution


# --- small readers shared by the provider modules ---------------------------------------------


def video_id(value: object) -> str | None:
    """A provider's video id, checked like our own ids (untrusted text)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value) if abs(value) < 10**MAX_INT_ID_DIGITS else None
    return value if isinstance(value, str) and id_problem(value) is None else None


def our_ref(value: object) -> str | None:
    """Our asset id as a provider echoes it back, or None when it is not one."""
    return value if isinstance(value, str) and id_problem(value) is None else None


def duration_of(value: object) -> float | None:
    """A duration in seconds, or None when it is missing, negative (-1: unknown) or absurd."""
    number = finite_number(value)
    return number if number is not None and 0 <= number < MAX_DURATION_S else None


def finite_number(value: object) -> float | None:
    """A JSON number as a finite float, or None (a bool, a string, NaN, an integer too big for a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def epoch_of(value: object) -> float | None:
    """Epoch seconds from a number, a string of digits (Mux) or an RFC 3339 / ISO 8601 text."""
    if isinstance(value, (bool, int, float)):
        return finite_number(value)
    if not isinstance(value, str) or not value or len(value) > 40:
        return None
    try:
        number = float(value)  # Mux: Unix seconds as a string
    except ValueError:
        number = None
    if number is not None:
        return number if math.isfinite(number) else None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return parsed.timestamp() if parsed.tzinfo else None
    except (ValueError, OverflowError, OSError):  # not a date, or one no timestamp can hold
        return None


def body_event_id(body: bytes) -> str:
    """An event id for providers that send none: a redelivery repeats the same bytes."""
    return "sha256:" + hashlib.sha256(body).hexdigest()


def found_among(videos: Sequence[Video], asset_id: str) -> Outcome | None:
    """CREATED for the first of our asset's videos that is not errored, else None."""
    for video in videos:
        if video.ref == asset_id and video.remote_id and video.target is not State.REJECTED:
            return Outcome(OutcomeKind.CREATED, remote_id=video.remote_id)
    return None


def rejected_video(remote_id: str | None, ref: str | None, status: str, reason: str | None, **fields) -> Video:
    text = excerpt(reason) if reason else "the provider could not ingest the source"
    return Video(remote_id, ref, State.REJECTED, status, error=f"provider: {text}", **fields)


def mapping(value: object) -> dict:
    """An object field, or {} when it is anything else."""
    return value if isinstance(value, dict) else {}


def entries(value: object) -> list:
    """A list field, or [] when it is anything else (an integer where a list belongs)."""
    return value if isinstance(value, list) else []


def text(value: object) -> str | None:
    """A string field, or None when it is anything else (a dict where text belongs)."""
    return value if isinstance(value, str) else None


def playback_url(value: object) -> str | None:
    """An absolute http(s) URL a player could open, or None: no whitespace, no control characters,
    bounded (the cut-over map writes it into CSV, nginx and redirect files)."""
    if not isinstance(value, str) or not value or len(value) > MAX_PLAYBACK_URL:
        return None
    if not value.isascii() or any(c.isspace() or not c.isprintable() for c in value):
        return None
    scheme, sep, rest = value.partition("://")
    if not sep or scheme.lower() not in ("https", "http") or not rest or rest[0] in "/?#":
        return None
    return value


def pixels(value: object) -> int | None:
    """A width or height in pixels, or None (-1: unknown; absurd numbers; text)."""
    number = finite_number(value)
    return int(number) if number is not None and number.is_integer() and 0 < number <= MAX_PIXELS else None


def playback_of(
    *,
    policy: object = None,
    playback_id: object = None,
    ids: object = None,  # a list; anything else is left out, as every argument here is checked
    width: object = None,
    height: object = None,
    **urls: object,
) -> dict | None:
    """The checked playback facts of a video: `policy` (public, signed, drm or private: anything but
    public needs a token to play), `playback_id`, `playback_ids` (Mux: each id with its policy), the
    URLs of PLAYBACK_URLS and the resolution the provider reports; None when nothing usable is left."""
    out: dict = {}
    if isinstance(policy, str) and policy in PLAYBACK_POLICIES:
        out["policy"] = policy
    if (pid := video_id(playback_id)) is not None:
        out["playback_id"] = pid
    if isinstance(ids, list) and ids:
        out["playback_ids"] = ids[:MAX_PLAYBACK_IDS]
    for name, value in urls.items():
        if name not in PLAYBACK_URLS:
            raise TypeError(f"unknown playback field {name!r}")
        if (url := playback_url(value)) is not None:
            out[name] = url
    w, h = pixels(width), pixels(height)
    if w is not None and h is not None:
        out["width"], out["height"] = w, h
    return out or None


# --- signed playback (migrator verify) -------------------------------------------------------------


class SigningUnavailable(Exception):
    """The provider cannot sign a playback URL for us (no route, no key the stack may hold): said, not failed."""


@dataclass(frozen=True)
class SignedPlayback:
    """A signed video's HLS as the stack may fetch it: the manifest's URL (its token in it), and the query
    every request the manifest leads to carries (api.video's session token, `avh`; empty where the token
    rides the manifest's own relative URLs, as Cloudflare's path token and Mux's signed renditions do)."""

    manifest_url: str
    query: tuple[tuple[str, str], ...] = ()


class PlaybackKeys(Protocol):
    """The stack's playback signing key (Mux), made through the provider's API once and kept in Secrets
    Manager: `mux()` returns it, making and storing it the first time."""

    def mux(self) -> SigningKey: ...

    def cloudfront(self) -> SigningKey:
        """The aws target's CloudFront key (its key group's), which the stack made and keeps in Secrets Manager."""
        ...
