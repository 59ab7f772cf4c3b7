"""What the demo counts of what arrived beside the bytes: the caption tracks and the extras (thumbnails, chapters,
collection places) of the ready videos, as the ledger holds them and as `migrator verify` read them back from the
simulator; the wait until they settle; and the summary's lines on them and on privacy.

The tallies and lines are pure (tested as tables in tests/unit/test_demo_logic.py); `settle_tracks` and `fidelity_of`
read the ledger and the simulator.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from migrator.extras import CAPTION
from migrator_cli.audit import paced
from migrator_cli.target import resolve

from .localrun import LocalRun

# How long the demo waits with no track or extra settling before it says which are pending: a library's extras
# (a thumbnail, chapters, a collection place a video) settle at the target's pace, longer than any fixed wait.
TRACKS_SETTLE_S = 180
# The most it waits in all, however steadily they settle.
TRACKS_SETTLE_CAP_S = 1800.0


@dataclass(frozen=True)
class TrackTally:
    """The caption tracks (and the extras beside them: thumbnails, chapters, collection places) of the ready
    videos, as the ledger holds them: by state (noted, carried otherwise, is settled and counted apart), the
    failures' reasons, and the tracks of videos whose tracks the tracks worker has not armed yet (`unarmed`:
    their row names them, no state does), which are as pending as a track the provider is still fetching."""

    states: Counter
    why_failed: Counter
    unarmed: int
    # The same by the entry's kind (caption, thumbnail, chapters, collection): its states, and "unarmed".
    by_kind: dict[str, Counter] = field(default_factory=dict)

    @property
    def pending(self) -> int:
        return self.states.get("pending", 0) + self.unarmed

    def of(self, kind: str) -> TrackTally:
        """The tally of one kind of entry alone."""
        counted = self.by_kind.get(kind, Counter())
        states = Counter({state: n for state, n in counted.items() if state != "unarmed"})
        return TrackTally(states, Counter(), counted.get("unarmed", 0))


def tally_tracks(ready: list[dict], poster_time_later: bool = False) -> TrackTally:
    """Count the tracks of `ready` ledger items (pure): each armed track by its state, each track a row
    names for a video it is not armed for (`tracks_video` is not the item's `remote_id`) as unarmed.
    `poster_time_later`: the target sets a row's poster time after the create (the provider's flag), so a
    row with a poster time alone owes the tracks worker a thumbnail too."""
    from migrator.extras import CHAPTERS_TRACK, entry_kind, item_needs_extras
    from migrator.messages import parse_tracks
    from migrator.tracks import STATES
    from migrator.tracks import failures as track_failures

    states: Counter = Counter()
    why: Counter = Counter()
    by_kind: dict[str, Counter] = {}
    for item in ready:
        track_states = item.get("track_states")
        if item.get("tracks_video") == item.get("remote_id") and isinstance(track_states, dict):
            for entry in track_states.values():
                state = entry.get("state") if isinstance(entry, dict) else None
                if state in STATES:
                    states[state] += 1
                    by_kind.setdefault(entry_kind(entry), Counter())[state] += 1
            why.update(reason[:70] for _, reason in track_failures(track_states))
        elif item.get("tracks") or item_needs_extras(item) or (poster_time_later and _has_poster_time(item)):
            named = parse_tracks(item["tracks"]) if item.get("tracks") else ()
            # a chapters file among the tracks is armed as the chapters extra (extras_of), not as a caption
            captions = sum(1 for t in named if t.kind != CHAPTERS_TRACK) if isinstance(named, tuple) else 0
            by_kind.setdefault(CAPTION, Counter())["unarmed"] += captions
            for kind in unarmed_extras(item, poster_time_later):
                by_kind.setdefault(kind, Counter())["unarmed"] += 1
    unarmed = sum(counted.get("unarmed", 0) for counted in by_kind.values())
    return TrackTally(states, why, unarmed, by_kind)


def unarmed_extras(item: dict, poster_time_later: bool = False) -> list[str]:
    """The kind of each extra a ready item's row names (a thumbnail, chapters, its collections), not armed yet."""
    from migrator.extras import extras_of
    from migrator.ledger import NotResendable, message_of

    try:
        return [extra.kind for extra in extras_of(message_of(item), poster_time_later)]
    except NotResendable:
        return []


def _has_poster_time(item: dict) -> bool:
    return item.get("poster_time_s") is not None


def target_sets_poster_later(run: LocalRun) -> bool:
    """Whether the run's target sets a row's poster time after the create (api.video, Mux, Vimeo)."""
    from migrator.providers import PROVIDERS

    provider = PROVIDERS.get(str(getattr(run, "provider", "")))
    return bool(provider and provider.poster_time_later)


def settle_tracks(
    run: LocalRun, timeout_s: float, sleep=time.sleep, clock=time.time, cap_s: float = TRACKS_SETTLE_CAP_S
) -> tuple[TrackTally, float]:
    """Wait until no ready video has a caption track pending (each attached or failed, and none unarmed), so
    the status that follows counts every track in its final state; (the tally, the seconds really waited).
    It gives up once none has settled for `timeout_s`, or after `cap_s` in all: tracks and extras settle at
    the target's pace, so a steady one is waited for, a stuck one is not.
    The tracks queue being empty is not enough: a track the provider is still fetching is asked about again
    by a delayed message, which no queue depth counts, and a video's tracks are armed only when the tracks
    worker first finds it ready."""
    started = last_progress = clock()
    later = target_sets_poster_later(run)
    tally = tally_tracks(run.items("ready"), later)
    shown = None
    while tally.pending and clock() - last_progress < timeout_s and clock() - started < cap_s:
        if tally.pending != shown:
            print(f"[demo] waiting for {tracks_waiting(tally)} (until none settles for {timeout_s:.0f} s)")
            if shown is not None and tally.pending < shown:
                last_progress = clock()
            shown = tally.pending
        sleep(2)
        tally = tally_tracks(run.items("ready"), later)
    return tally, clock() - started


def tracks_waiting(tally: TrackTally) -> str:
    """What the tracks wait is for, in words: '12 caption tracks (8 not yet armed)', or with extras pending,
    '40 tracks and extras: 12 caption tracks, 28 thumbnails (8 not yet armed)'."""
    unarmed = f" ({tally.unarmed} not yet armed)" if tally.unarmed else ""
    nouns = {CAPTION: "caption tracks"} | {kind: noun for kind, noun, _ in EXTRA_LINES}
    waiting = {nouns[kind]: n for kind in nouns if (n := tally.of(kind).pending)}
    if len(waiting) == 1:
        return f"{tally.pending} {next(iter(waiting))}{unarmed}"
    if not waiting:  # a tally without kinds (an item armed before the extras): its entries are captions
        return f"{tally.pending} caption tracks{unarmed}"
    listed = ", ".join(f"{n} {noun}" for noun, n in waiting.items())
    return f"{tally.pending} tracks and extras: {listed}{unarmed}"


@dataclass(frozen=True)
class Fidelity:
    """What arrived besides the bytes, read back at the end: the tracks, and the private rows played signed."""

    lines: list[str]
    tracks: TrackTally
    private: int
    private_signed: int


def fidelity_of(run: LocalRun, verify_lines: Sequence[str] = ()) -> Fidelity:
    """What arrived besides the bytes: caption tracks by state (and why the failed ones failed), the thumbnails,
    chapters and collections as verify read them back from the simulator, and whether each row asked to be private
    is private at the provider, read back from the simulator."""
    target = resolve(None, str(run.outputs_path), run.endpoint, None)
    provider = paced(target.provider())  # read as `migrator audit` reads: a provider's 429 is waited out
    provider.http.session.trust_env = False  # the simulator is on loopback
    ready = run.items("ready")
    tracks = tally_tracks(ready, target_sets_poster_later(run))
    captions = tracks.of(CAPTION)
    if not captions.states and not captions.unarmed and not provider.takes_tracks:
        lines = [f"caption tracks        none sent: {provider.name} takes no text tracks (--provider mux carries them)"]
    else:
        lines = [f"caption tracks        {track_line(captions)}"]
    lines += extras_lines(tracks, verify_lines)
    lines += [f"  {n:>4}  failed: {reason}" for reason, n in tracks.why_failed.most_common()]
    private = [i for i in ready if i.get("privacy") in ("private", "signed")]
    default = [i for i in ready if not i.get("privacy")]
    # Read back as `migrator audit` reads the library: the provider's listing, a page a request, paced.
    played = {video.remote_id: video.privacy for video in provider.videos()}
    private_at_provider = sum(1 for i in private if played.get(i.get("remote_id")) == "signed")
    lines.append(
        f"private rows          {len(private)}, signed at the provider: {private_at_provider} of {len(private)}"
        f" (read back from the simulator's listing); rows with no privacy: {len(default)}, played"
        f" {target.outputs.get('DefaultPlayback') or 'by DefaultPlayback'}"
    )
    return Fidelity(lines, tracks, len(private), private_at_provider)


# Each extra's kind, as the summary names it and what was done with it at the target.
EXTRA_LINES = (
    ("thumbnail", "thumbnails", "set"),
    ("chapters", "chapters", "written"),
    ("collection", "collection places", "made"),
)
# verify's lines per kind ("  thumbnails    12 found, 8 noted": migrator_cli.verify.EXTRA_NAMES) and of collections.
VERIFY_KIND = re.compile(r"^  (\w+)\s+([\d,]+) found(?:, ([\d,]+) noted)?$")
VERIFY_COLLECTIONS = "collections "


def read_back(verify_lines: Sequence[str]) -> tuple[dict[str, tuple[int, int]], str | None]:
    """What verify read back of the extras, from its own lines (pure): {kind: (found, noted)}, and its collections
    line (how many were made, how many hold their videos in the source's order), None where it printed none."""
    from migrator_cli.verify import EXTRA_NAMES

    kinds = {name: kind for kind, name in EXTRA_NAMES.items()}
    found: dict[str, tuple[int, int]] = {}
    collections = None
    for line in verify_lines:
        if (matched := VERIFY_KIND.match(line)) and matched.group(1) in kinds:
            number = [int((g or "0").replace(",", "")) for g in matched.group(2, 3)]
            found[kinds[matched.group(1)]] = (number[0], number[1])
        elif line.startswith(VERIFY_COLLECTIONS):
            collections = line.removeprefix(VERIFY_COLLECTIONS).strip()
    return found, collections


def extras_lines(tracks: TrackTally, verify_lines: Sequence[str]) -> list[str]:
    """A line per kind of extra the ready rows name: how many of them verify found at the target (read back from the
    simulator), how many were noted (carried otherwise), and the ledger's word where some failed or are pending;
    then verify's collections line: made, and in the source's order (pure)."""
    found, collections = read_back(verify_lines)
    lines = []
    for kind, label, verb in EXTRA_LINES:
        mine = tracks.of(kind)
        named = sum(mine.states.values()) + mine.unarmed
        if not named:
            continue
        seen, noted = found.get(kind, (0, 0))
        line = f"{label:<22}{seen} of {named} {verb} at the target (read back by verify)"
        line += f", {noted} noted (carried otherwise)" if noted else ""
        if mine.states.get("failed") or mine.pending:
            line += f"; ledger: {track_line(mine)}"
        lines.append(line)
    if collections:
        lines.append(f"collections           {collections}")
    return lines


def track_line(tracks: TrackTally) -> str:
    """'20 attached, 3 failed, 1 noted, 4 pending (2 not yet armed)': every track (and extra) the ready rows name,
    in one state."""
    states = tracks.states
    line = f"{states.get('attached', 0)} attached, {states.get('failed', 0)} failed"
    if states.get("noted"):  # settled, carried otherwise (a frame time for an image, the file in the bucket)
        line += f", {states['noted']} noted"
    if tracks.pending:
        line += f", {tracks.pending} pending" + (f" ({tracks.unarmed} not yet armed)" if tracks.unarmed else "")
    return line
