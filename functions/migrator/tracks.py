"""Caption and subtitle tracks, and the extras beside them: their states and the decisions about them (pure).

Each of an asset's tracks (messages.Track, named by `track_key`) has its own entry in the
ledger item's `track_states` map, for the provider video it belongs to (`tracks_video`), and so
has each of the row's extras (a thumbnail, chapters, a place in a collection: `extras.py`), told
apart by the entry's `kind` (none: a caption track, as 0.3.0 armed them):

- `pending`: not yet at the provider, or sent and not yet confirmed (Mux ingests a file
  itself: a track sent at create time, `via: create`, or posted later, `submitted`, is
  attached only once Mux lists it ready);
- `attached`: the provider holds it (`remote_track_id` where it names one);
- `failed`: with its reason (`error`); retried at `retry_after` while the attempt budget
  lasts, for good without a `retry_after` (`migrator retry --tracks` re-arms it);
- `noted`: settled, the target cannot carry it as the row has it, and its `note` says what was done
  instead (a frame time set in place of an image, the file kept in the stack's bucket).

A track never holds its video back: the video reaches ready on its own path, and the
tracks worker works on tracks once the provider has the video. One pass on a track is a
claim (a conditional write with a lease, like the asset's), then what the provider and the
fetch said (`TrackOutcome`; for a track the provider already lists, `listed_outcome`), then
`decide`, then a write fenced by the claim's token. A track the provider holds unpublished
(JW Player's `draft`: delivered to no viewer) is published, never uploaded again.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .extras import (
    CAPTION,
    CHAPTERS_TRACK,
    ExtrasFacts,
    entry_kind,
    extra_entries,
    extras_of,
    item_needs_extras,
    needs_extras,
)
from .messages import AssetMessage, Track, id_message, id_message_id, track_key
from .retry import backoff_delay, throttle_delay
from .states import AT_PROVIDER

# Real failures (a 5xx, a timeout, a server that cannot be reached) one track may have.
MAX_TRACK_ATTEMPTS = 5
# Passes that found the provider not ready for the track yet (the video still processing, a
# file still being ingested) before the track fails: at the delays below, about a day.
MAX_TRACK_WAITS = 60
WAIT_BASE_S, WAIT_CAP_S = 15.0, 1800.0
# A track handed to a provider that fetches it (Mux) is looked at after this: a caption file is fetched in a
# second or two; one still being fetched then is waited for as any track the provider is not ready for.
SUBMITTED_LOOK_S = 5.0
# How long a claim on a track lasts past the worker's own deadline (as the asset's lease).
LEASE_MARGIN_S = 5.0


class TrackState(StrEnum):
    PENDING = "pending"
    ATTACHED = "attached"
    FAILED = "failed"
    NOTED = "noted"  # settled: carried otherwise, as its note says (extras.py)


STATES = tuple(s.value for s in TrackState)


class Via(StrEnum):
    CREATE = "create"  # sent with the video's create (Mux's text inputs); confirmed afterwards
    UPLOAD = "upload"  # fetched and checked by the tracks worker, then given to the provider


class TrackResult(StrEnum):
    ATTACHED = "attached"  # the provider holds it
    SUBMITTED = "submitted"  # handed over; the provider fetches it itself and confirms later (Mux)
    WAITING = "waiting"  # the provider is not ready for it yet: nothing spent, look again later
    REFUSED = "refused"  # can never succeed as it is: the file, the address, the provider's 4xx
    TRANSIENT = "transient"  # may succeed on a later try: a 5xx, a timeout, an unreachable server
    THROTTLED = "throttled"  # the provider is pacing us: nothing spent
    VIDEO_GONE = "video_gone"  # the video it belongs to was rejected or is no longer there
    NOTED = "noted"  # the target cannot carry it as the row has it: what was done instead is the note


@dataclass(frozen=True)
class TrackOutcome:
    kind: TrackResult
    error: str | None = None
    remote_track_id: str | None = None
    retry_after: float | None = None
    note: str | None = None  # NOTED: what was done instead (also kept beside an ATTACHED that was done partly)


@dataclass(frozen=True)
class TrackMove:
    """What to write for one pass on a track (see `decide`)."""

    state: TrackState
    error: str | None = None
    retry_at: float | None = None  # pending or failed: when it may be claimed again
    give_back: bool = False  # the pass spent nothing: its attempt is given back
    waited: bool = False  # a pass that found the provider not ready (counted apart)
    submitted: bool = False  # handed to a provider that confirms later
    remote_track_id: str | None = None
    note: str | None = None  # noted: what was done instead


def decide(
    outcome: TrackOutcome, attempts: int, waits: int, now: float, rng: random.Random, max_attempts: int
) -> TrackMove:
    """The track's next state after a pass whose claim counted `attempts` (this one included)."""
    kind = outcome.kind
    if kind is TrackResult.ATTACHED:
        return TrackMove(TrackState.ATTACHED, remote_track_id=outcome.remote_track_id, note=outcome.note)
    if kind is TrackResult.NOTED:
        note = outcome.note or "not carried by the target"
        return TrackMove(TrackState.NOTED, remote_track_id=outcome.remote_track_id, note=note)
    if kind is TrackResult.SUBMITTED:
        return TrackMove(TrackState.PENDING, retry_at=now + SUBMITTED_LOOK_S, submitted=True)
    if kind is TrackResult.WAITING:
        if waits + 1 >= MAX_TRACK_WAITS:
            error = f"{outcome.error or 'the provider was not ready for the track'}, {waits + 1} times in a row"
            return TrackMove(TrackState.FAILED, error=error, give_back=True, waited=True)
        return TrackMove(TrackState.PENDING, retry_at=now + wait_delay(waits + 1, rng), give_back=True, waited=True)
    if kind is TrackResult.THROTTLED:
        return TrackMove(TrackState.PENDING, retry_at=now + throttle_delay(outcome.retry_after, rng), give_back=True)
    if kind in (TrackResult.REFUSED, TrackResult.VIDEO_GONE):
        return TrackMove(TrackState.FAILED, error=outcome.error or kind.value)
    # TRANSIENT: backed off, and for good once the budget is spent.
    error = outcome.error or "transient failure"
    if attempts >= max_attempts:
        return TrackMove(TrackState.FAILED, error=f"{error} (after {attempts} attempts)")
    return TrackMove(TrackState.FAILED, error=error, retry_at=now + backoff_delay(attempts, rng))


def listed_outcome(status: str, remote_track_id: str | None, error: str | None) -> TrackOutcome | None:
    """What a pass makes of its track as the provider lists it (RemoteTrack.status): attached once ready, refused
    once errored, waited for while the provider makes it; None for a draft the provider holds unpublished, which
    the pass publishes (never a second upload: the provider has the file)."""
    if status == "ready":
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=remote_track_id)
    if status == "errored":
        return TrackOutcome(TrackResult.REFUSED, error=error or "provider: could not ingest the track")
    if status == "draft":
        return None
    return TrackOutcome(TrackResult.WAITING, error="the provider is still ingesting the track")


def wait_delay(waits: int, rng: random.Random) -> float:
    """How long a track waits for a provider that was not ready, after its `waits`-th such pass."""
    ceiling = min(WAIT_CAP_S, WAIT_BASE_S * 2 ** max(0, min(waits - 1, 20)))
    return rng.uniform(ceiling / 2, ceiling)


# --- the tracks worker's message ---------------------------------------------------------------------------


# The tracks queue's message: only the asset's id (the ledger holds its tracks and their states).
tracks_message, tracks_message_id = id_message, id_message_id


def needs_tracks_worker(msg: AssetMessage | None, poster_time_later: bool = False) -> bool:
    """Whether a row gives the tracks worker anything to do: caption tracks, or extras (extras.py); a poster time
    alone where the target picks its frame after the create (`poster_time_later`: api.video's)."""
    if msg is None:
        return False
    return bool(msg.tracks) or needs_extras(msg) or (poster_time_later and msg.poster_time_s is not None)


def item_needs_tracks_worker(item: Mapping | None, poster_time_later: bool = False) -> bool:
    """The same, of a ledger item (which keeps the row's fields under their names)."""
    if not item:
        return False
    timed = poster_time_later and item.get("poster_time_s") is not None
    return bool(item.get("tracks")) or item_needs_extras(item) or timed


def tracks_unarmed(item: Mapping | None, poster_time_later: bool = False) -> bool:
    """The provider has the asset's video (processing or ready) and it has tracks (or extras), but they are not
    yet armed on that video: the tracks worker has not taken it up, and its message may never have been sent.
    That happens when a settle beats the uploader's own write (a create whose answer was lost, the video
    made ready by its webhook before the retry found it): the retry's claim is refused as a duplicate."""
    if not item or item.get("state") not in AT_PROVIDER or not item_needs_tracks_worker(item, poster_time_later):
        return False
    return not item.get("remote_id") or item.get("tracks_video") != item.get("remote_id")


# --- arming: an asset's tracks for one provider video -------------------------------------------------


def initial_states(
    tracks: Iterable[Track],
    *,
    takes_tracks: bool,
    provider: str,
    at_create: set[str],
    one_per_language: bool,
    now: float,
    language_key: Callable[[str], str] = str.lower,
    details: AssetMessage | None = None,
    extras: ExtrasFacts | None = None,
) -> dict[str, dict]:
    """The entries an asset's tracks (and its row's extras) start with for a new provider video.

    A provider with no track API fails every track with that reason. Where the provider keeps
    one file per language (Cloudflare Stream, api.video), the first track of a language is the
    one sent and any other fails with the reason; the inventory's order decides, stably.
    `language_key`: the language the provider files a track under (Provider.track_language_key:
    Bunny's ISO 639-1 code, so `pt` and `pt-BR` are one language there). `details` (the row) and
    `extras` (the provider's facts about them) arm the extras beside the tracks (extras.py); a
    chapters track is one of those, never a caption.
    """
    states: dict[str, dict] = {}
    languages: dict[str, str] = {}
    for track in tracks:
        if track.kind == CHAPTERS_TRACK:
            continue
        key = track_key(track)
        entry: dict = {"state": TrackState.PENDING.value, "attempts": 0, "updated_at": now}
        entry["via"] = Via.CREATE.value if key in at_create else Via.UPLOAD.value
        language = language_key(track.language)
        if not takes_tracks:
            entry |= {"state": TrackState.FAILED.value, "error": f"the {provider} provider takes no text tracks"}
        elif one_per_language and language in languages:
            first = languages[language]
            filed = "" if language == track.language.lower() else f" filed as {language} there, which is"
            error = f"{provider} keeps one caption file per language, and {track.language} is{filed} track {first}'s"
            entry |= {"state": TrackState.FAILED.value, "error": error}
        else:
            languages.setdefault(language, key)
        states[key] = entry
    if details is not None and extras is not None:
        states |= extra_entries(extras_of(details, extras.poster_time_later), extras, now)
    return states


def track_labels(tracks: Iterable[Track]) -> dict[str, str]:
    """A name per track for the player's menu, unique among the asset's (Mux refuses two text tracks
    of one name): the track's name, else its language; a repeat gets its kind, then a number."""
    labels: dict[str, str] = {}
    taken: set[str] = set()
    for track in tracks:
        if track.kind == CHAPTERS_TRACK:
            continue
        base = track.name or track.language
        label = base
        if label.lower() in taken:
            label = f"{base} ({track.kind})"
        n = 2
        while label.lower() in taken:
            label, n = f"{base} ({track.kind} {n})", n + 1
        taken.add(label.lower())
        labels[track_key(track)] = label
    return labels


# --- reading the ledger's entries ------------------------------------------------------------------


def claimable(entry: Mapping | None, now: float) -> bool:
    """The track claim's condition as a pure predicate: pending or failed with its retry time passed,
    and no live lease (the emulator tests check the two agree)."""
    if not entry:
        return False
    state = entry.get("state")
    retry_after = _number(entry.get("retry_after"))
    lease_until = _number(entry.get("lease_until"))
    if lease_until is not None and lease_until >= now:
        return False
    if state == TrackState.PENDING.value:
        return retry_after is None or retry_after <= now
    if state == TrackState.FAILED.value:
        return retry_after is not None and retry_after <= now
    return False


SETTLED = (TrackState.ATTACHED.value, TrackState.NOTED.value)


def settled(entry: Mapping) -> bool:
    """Nothing more will happen to the track without the operator: attached, noted, or failed for good."""
    state = entry.get("state")
    return state in SETTLED or (state == TrackState.FAILED.value and "retry_after" not in entry)


def next_due(states: Mapping[str, Mapping], now: float) -> float | None:
    """When the earliest unsettled track may be worked on again (None: every track is settled)."""
    times = []
    for entry in states.values():
        if settled(entry):
            continue
        at = max(_number(entry.get("retry_after")) or now, (_number(entry.get("lease_until")) or now))
        times.append(at)
    return min(times) if times else None


def counts(states: Mapping[str, Mapping] | None, kinds: Iterable[str] | None = None) -> Counter:
    """How many of an asset's tracks (of `kinds`: every entry without it) are in each state."""
    wanted = None if kinds is None else set(kinds)
    out: Counter = Counter()
    for entry in (states or {}).values():
        state = entry.get("state") if isinstance(entry, Mapping) else None
        if state in STATES and (wanted is None or entry_kind(entry) in wanted):
            out[state] += 1
    return out


def caption_counts(states: Mapping[str, Mapping] | None) -> Counter:
    """How many of an asset's caption tracks are in each state (its extras left out)."""
    return counts(states, (CAPTION,))


def notes(states: Mapping[str, Mapping] | None) -> list[tuple[str, str]]:
    """(entry key, note) for each noted entry (and each attached one with a note), in key order."""
    return [
        (key, str(entry["note"]))
        for key, entry in sorted((states or {}).items())
        if isinstance(entry, Mapping) and isinstance(entry.get("note"), str) and entry.get("note")
    ]


def failures(states: Mapping[str, Mapping] | None) -> list[tuple[str, str]]:
    """(track key, reason) for each failed track, in key order."""
    return [
        (key, str(entry.get("error") or "failed"))
        for key, entry in sorted((states or {}).items())
        if isinstance(entry, Mapping) and entry.get("state") == TrackState.FAILED.value
    ]


def _number(value: Any) -> float | None:
    """`value` (any JSON value) as a number; None for null, a boolean or what float() refuses."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
