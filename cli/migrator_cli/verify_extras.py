"""`migrator verify` beside the video: each ready asset's thumbnail, chapters and places in collections, looked for
at the target (issue 42).

The ledger says what the tracks worker did with each extra (the asset's `track_states` entries of kind thumbnail,
chapters, collection: migrator.extras); verify reads back from the target what an `attached` entry says is there,
with the provider's own looks, the ones the tracks worker makes before it sets anything:

- a thumbnail: `thumbnail_state` says the video shows a custom one (a frame time picked, where the row had a poster
  time and no image, leaves nothing to read back: the ledger's word is taken);
- chapters: `chapters_of` finds the video holds some, in the language they were filed under;
- a place in a collection: `placed_in` finds the video in the collection the entry names (its `remote_track_id`).

A `noted` entry is settled and not a mismatch (the target cannot carry it; the note says what was done instead): it
is counted apart. An extra the row has and the ledger has no entry for, one failed for good, and one the target
does not show are mismatches. An asset whose extras are still being worked (pending, failed with a retry to come, or
not yet armed on its video) is not judged: it is left unchecked for the next run, and nothing is fetched for it.

`plan_extras` and `judge` are pure; `ExtrasChecker` asks the target, each call on the verify's own pace (`Pace`), a
429 waited out a few times before the asset is left for the next run; `WithExtras` joins the video's verdict and
its extras'.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from migrator.extras import CHAPTERS, COLLECTION, THUMBNAIL, Extra, extras_of
from migrator.extrawork import chapters_language
from migrator.ledger import NotResendable, message_of
from migrator.providers.extras import ChaptersLook, ThumbnailLook
from migrator.tracks import TrackOutcome, TrackResult, TrackState

from .verify import Finding, Pace, Verdict

# A look the provider answers 429 to is asked again after each of these waits (its Retry-After where it gives one,
# at most RETRY_AFTER_CAP_S), then the asset is left for the next run.
THROTTLED_WAITS_S = (1.0, 2.0, 4.0, 8.0)
RETRY_AFTER_CAP_S = 30.0
# Outcomes of a look that are no answer: the asset is looked at again by the next run.
NO_ANSWER = (TrackResult.TRANSIENT, TrackResult.THROTTLED, TrackResult.WAITING, TrackResult.SUBMITTED)
WHAT = {THUMBNAIL: "the thumbnail", CHAPTERS: "the chapters", COLLECTION: "the place in a collection"}


@dataclass(frozen=True)
class Look:
    """One thing to read back from the target for one attached extra."""

    key: str  # the entry's key in track_states
    kind: str  # thumbnail | chapters | collection
    arg: str = ""  # the chapters' language; the collection's id at the target


@dataclass(frozen=True)
class ExtrasPlan:
    """What verify makes of an asset's extras from the ledger alone, before it asks the target anything."""

    looks: tuple[Look, ...] = ()
    findings: tuple[Finding, ...] = ()  # mismatches the ledger already shows (no entry, failed for good)
    noted_kinds: tuple[str, ...] = ()  # the kind of each extra settled as noted: carried otherwise, not a mismatch
    # the kind of each extra attached with nothing at the target to read back (a frame time picked): the ledger's word
    taken_kinds: tuple[str, ...] = ()
    unsettled: str = ""  # why the extras cannot be judged yet ("" when they can)

    @property
    def noted(self) -> int:
        return len(self.noted_kinds)

    @property
    def taken(self) -> int:
        return len(self.taken_kinds)


def plan_extras(item: Mapping, poster_time_later: bool = False) -> ExtrasPlan:
    """What to read back from the target for `item`'s extras (the row's, as the tracks worker arms them: extras_of),
    and what the ledger already settles."""
    asset_id = str(item.get("asset_id"))
    try:
        expected = extras_of(message_of(item), poster_time_later)
    except NotResendable:  # a record that cannot travel as a message: the tracks worker works no extras of it
        return ExtrasPlan()
    if not expected:
        return ExtrasPlan()
    remote_id = item.get("remote_id")
    if not remote_id or item.get("tracks_video") != remote_id:
        return ExtrasPlan(unsettled="not yet armed on its video (the tracks worker takes them up; reconcile arms them)")
    states = said if isinstance(said := item.get("track_states"), Mapping) else {}
    looks: list[Look] = []
    findings: list[Finding] = []
    unsettled: list[str] = []
    noted: list[str] = []
    taken: list[str] = []
    for extra in expected:
        entry = states.get(extra.key)
        state = entry.get("state") if isinstance(entry, Mapping) else None
        if not isinstance(entry, Mapping):
            detail = f"{WHAT[extra.kind]} ({extra.key}): the row has it, the ledger has no entry for it"
            findings.append(_finding(asset_id, extra.kind, extra.key, detail))
        elif state == TrackState.NOTED.value:
            noted.append(extra.kind)
        elif state == TrackState.FAILED.value and "retry_after" not in entry:
            why = str(entry.get("error") or "no reason given")[:300]
            findings.append(
                _finding(asset_id, extra.kind, extra.key, f"{WHAT[extra.kind]} ({extra.key}) failed: {why}")
            )
        elif state != TrackState.ATTACHED.value:
            unsettled.append(f"{extra.key} {'failed, to be retried' if state == 'failed' else state}")
        elif extra.kind == THUMBNAIL and extra.url is None:
            taken.append(extra.kind)  # a frame time picked (the row's poster time): nothing at the target tells it
        else:
            look = _look(extra, entry, item)
            if isinstance(look, Look):
                looks.append(look)
            else:
                findings.append(_finding(asset_id, extra.kind, extra.key, look))
    if unsettled:  # nothing is asked of the target for an asset still being worked
        return ExtrasPlan((), tuple(findings), tuple(noted), tuple(taken), ", ".join(unsettled))
    return ExtrasPlan(tuple(looks), tuple(findings), tuple(noted), tuple(taken))


def _look(extra: Extra, entry: Mapping, item: Mapping) -> Look | str:
    """The look for an attached extra, or why there is none to make (a mismatch)."""
    if extra.kind == CHAPTERS:
        return Look(extra.key, CHAPTERS, chapters_language(extra, item))
    if extra.kind == COLLECTION:
        collection_id = entry.get("remote_track_id")
        if not isinstance(collection_id, str) or not collection_id:
            return f"the place in a collection ({extra.key}) is attached with no collection id recorded"
        return Look(extra.key, COLLECTION, collection_id)
    return Look(extra.key, THUMBNAIL)


def _finding(asset_id: str, kind: str, key: str, detail: str) -> Finding:
    return Finding(asset_id, kind, detail, {"key": key})


def judge(asset_id: str, look: Look, answer: object) -> Finding | str | None:
    """What the target's answer to `look` means: None (there, as the ledger says), a Finding (not there, or the target
    refused to say), or the reason it is no answer (the asset is looked at again by the next run)."""
    what = WHAT[look.kind]
    if isinstance(answer, TrackOutcome):
        why = answer.error or answer.kind.value
        if answer.kind in NO_ANSWER:
            return f"{what} ({look.key}): no answer from the target: {why}"
        return _finding(asset_id, look.kind, look.key, f"{what} ({look.key}) could not be read at the target: {why}")
    if look.kind == THUMBNAIL:
        shown = isinstance(answer, ThumbnailLook) and answer.custom
        detail = "the target's video shows no custom thumbnail; the ledger says one was set"
    elif look.kind == CHAPTERS:
        shown = isinstance(answer, ChaptersLook) and answer.count > 0
        detail = f"the target's video holds no chapters ({look.arg}); the ledger says they were written"
    else:
        shown = answer is True
        detail = f"the video is not in the collection {look.arg} at the target; the ledger says it was placed there"
    return None if shown else _finding(asset_id, look.kind, look.key, detail)


class ExtrasChecker:
    """Reads back an asset's attached extras from the target (`provider`: the stack's Provider), on `pace`."""

    def __init__(
        self,
        provider,
        pace: Pace,
        sleep: Callable[[float], None] = time.sleep,
        waits: Sequence[float] = THROTTLED_WAITS_S,
        jitter: Callable[[], float] = lambda: random.uniform(0.5, 1.5),
    ):
        self.provider, self.pace, self.sleep, self.waits, self.jitter = provider, pace, sleep, waits, jitter

    def check(self, item: Mapping, looks: Sequence[Look]) -> tuple[list[Finding], tuple[str, ...], str]:
        """(mismatches, the kind of each extra found, "" or why the asset is left for the next run)."""
        asset_id, remote_id = str(item.get("asset_id")), str(item.get("remote_id"))
        findings: list[Finding] = []
        found: list[str] = []
        for look in looks:
            verdict = judge(asset_id, look, self.ask(functools.partial(self._call, remote_id, look)))
            if isinstance(verdict, str):
                return findings, tuple(found), verdict
            if verdict is None:
                found.append(look.kind)
            else:
                findings.append(verdict)
        return findings, tuple(found), ""

    def ask(self, call: Callable[[], object]) -> object:
        """`call()` (one of the provider's looks), paced; a 429 waited out (THROTTLED_WAITS_S) before it is given up
        as no answer."""
        for wait in (*self.waits, None):
            self.pace.wait()
            answer = call()
            if not (isinstance(answer, TrackOutcome) and answer.kind is TrackResult.THROTTLED) or wait is None:
                return answer
            told = answer.retry_after
            self.sleep(min(told, RETRY_AFTER_CAP_S) if told is not None and told > 0 else wait * self.jitter())
        raise AssertionError("unreachable")  # the loop's last turn returns

    def _call(self, remote_id: str, look: Look) -> object:
        if look.kind == THUMBNAIL:
            return self.provider.thumbnail_state(remote_id)
        if look.kind == CHAPTERS:
            return self.provider.chapters_of(remote_id, look.arg)
        return self.provider.placed_in(remote_id, look.arg)


class WithExtras:
    """The verdict on an asset's video (verify.Checker), then on its extras: one Verdict. An asset whose extras are
    still being worked is left unchecked before anything is fetched for it."""

    def __init__(self, video: Callable[[Mapping], Verdict], extras: ExtrasChecker, poster_time_later: bool = False):
        self.video, self.extras, self.poster_time_later = video, extras, poster_time_later

    def __call__(self, item: Mapping) -> Verdict:
        asset_id = str(item.get("asset_id"))
        plan = plan_extras(item, self.poster_time_later)
        if plan.unsettled and not plan.findings:
            return Verdict(asset_id, "unchecked", reason=f"its extras are not settled yet: {plan.unsettled}")
        verdict = self.video(item)
        if verdict.status == "unchecked":
            return verdict
        findings, found = list(plan.findings), plan.taken_kinds
        if not plan.unsettled:
            looked, seen, why = self.extras.check(item, plan.looks)
            if why:
                return Verdict(asset_id, "unchecked", reason=why)
            findings += looked
            found += seen
        status = "failed" if verdict.findings or findings else verdict.status
        return Verdict(
            asset_id,
            status,
            (*verdict.findings, *findings),
            verdict.reason,
            found_kinds=found,
            noted_kinds=plan.noted_kinds,
        )
