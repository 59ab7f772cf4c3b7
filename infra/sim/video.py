"""The provider-neutral video record, and the conventions a source URL uses to steer the simulator.

Every profile stores the same record and renders it in its own wire format, so processing,
stats and the request log never depend on the profile. Source URL conventions (the same
in every profile): a URL containing "unsupported" is refused at create, one containing
"corrupt" is accepted and then fails processing, one with the word "hang" (not inside a
longer word: "hang-1.mp4", not "change.mp4") is accepted and never finishes, and
`?duration=` / `?drift=` set the true duration and the provider's reported one.
"""

from __future__ import annotations

import hashlib
import math
import re
import urllib.parse
from dataclasses import dataclass, field

# Processing states of the record; profiles map them onto their own status names.
PROCESSING, READY, ERRORED, IDLE = "processing", "ready", "errored", "idle"


def source_duration(url: str) -> tuple[float, float]:
    """Return (true duration, provider-reported duration) for a source URL, deterministically."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)

    def number(key: str) -> float | None:
        return query_number(query, key)

    duration = number("duration")
    if duration is None:
        # A stable hash, not hash(), so every run and process agrees on the value.
        n = int.from_bytes(hashlib.sha256(url.encode()).digest()[:8], "big")
        duration = 5.0 + (n % 595_000) / 1000.0
    drift = number("drift") or 0.0
    return duration, round(duration + drift, 3)


def query_number(query: dict[str, list[str]], key: str) -> float | None:
    """A finite number from a parsed query string, or None."""
    try:
        value = float(query[key][0])
    except (KeyError, IndexError, ValueError):
        return None
    return value if math.isfinite(value) else None


def is_unsupported(url: str) -> bool:
    return "unsupported" in url


_HANG = re.compile(r"(?<![a-z0-9])hang(?![a-z0-9])", re.IGNORECASE)


def is_hang(url: str) -> bool:
    """A source whose ingest never finishes: the word "hang" on its own in the URL."""
    return _HANG.search(url) is not None


@dataclass
class TextTrack:
    """A caption or subtitle file a video holds, whatever the profile (what tests read back)."""

    id: str
    language: str
    name: str | None = None
    closed_captions: bool = False
    ref: str | None = None  # Mux's track passthrough
    kind: str = "subtitles"  # Mux's text_type: subtitles, or chapters (a JSON file of chapters, issue 42)
    url: str | None = None  # where Mux fetches it from (the file is uploaded to the others)
    status: str = "ready"  # preparing (Mux fetching it) | ready | errored | draft (JW: read, not published)
    ready_as: str = "ready"  # the status a fetched file takes once read: "draft" where JW waits for a publish
    error: str | None = None
    content: bytes | None = None
    format: str | None = None  # vtt | srt: what the simulator read it as
    uploads: int = 1  # times this track was sent (a second upload of a language replaces the first)


@dataclass
class Video:
    """One video as the simulator keeps it, whatever the profile."""

    id: str
    seq: int  # creation order, the tie-breaker of every listing
    ref: str | None  # our migration reference, as the profile carries it
    key: str | None  # the create's Idempotency-Key header, if any
    source: str | None  # None: an api.video container created without a source (never processed)
    request: dict  # the create body as accepted; profiles echo their fields from it
    created: float  # epoch seconds
    started: float  # monotonic seconds at create
    delay_s: float  # processing time chosen at create
    state: str = PROCESSING
    finished: float | None = None  # epoch seconds at ready/errored
    extra: dict = field(default_factory=dict)  # profile-made values that must not change (playback ids)
    hung: bool = False  # the ingest never finishes: processing forever, no event
    failure: str | None = None  # why an errored video failed: "corrupt" (its data) or "fetch" (its source)
    texts: list[TextTrack] = field(default_factory=list)  # caption and subtitle tracks, in the order taken
    # What the video holds besides its file and text tracks, as its profile keeps it (a custom thumbnail's bytes and
    # type, chapters, the frame picked as its poster): tests read it back through the platform's own API.
    extras: dict = field(default_factory=dict)

    def add_text(self, track: TextTrack, one_per_language: bool) -> TextTrack:
        """Hold `track`; where the provider keeps one file per language, it replaces that language's."""
        if one_per_language:
            for i, held in enumerate(self.texts):
                if held.language.lower() == track.language.lower():
                    track.uploads = held.uploads + 1
                    self.texts[i] = track
                    return track
        self.texts.append(track)
        return track

    @property
    def corrupt(self) -> bool:
        return self.source is not None and "corrupt" in self.source

    @property
    def duration(self) -> float:
        """The duration the provider reports once it knows it."""
        return source_duration(self.source)[1] if self.source else 0.0

    def progress(self, now: float) -> float:
        """Fraction of processing done at monotonic time `now`: 1 once finished, below 1 until then.

        Profiles with intermediate states (Cloudflare, api.video) derive them from this, so
        only the completion itself needs a scheduled task.
        """
        if self.state in (READY, ERRORED):
            return 1.0
        if self.state == IDLE or self.hung or self.delay_s <= 0:
            return 0.0  # A hung ingest never gets past fetching its source.
        return min(0.999, max(0.0, (now - self.started) / self.delay_s))

    def at(self, fraction: float) -> float:
        """Epoch time at which processing reached `fraction` (for "modified"-style fields)."""
        return self.created + self.delay_s * fraction
