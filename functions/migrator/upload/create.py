"""The provider's side of one claimed asset: use `FindOrCreate` to look up what an earlier try may have made,
hand the source over and create the video idempotently, each call paced, each answer moved into the ledger."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..chaos import Chaos
from ..fate import Fate, Outcome, OutcomeKind
from ..ledger import Claimed
from ..ledger.upgrade import lookup_bound
from ..messages import AssetMessage
from ..pacer import CREATE, Hold
from ..providers import Provider
from ..retry import DEFAULT_THROTTLE_S
from .archive_first import Step, archived_url, gate
from .attempt import Attempt
from .handoff import Handed, SourceHandOff
from .moves import LedgerMoves
from .pace import Pace

# A source handed over longer ago than this (a wait for a slot or out a 429 in place) is handed over again
# before the create: its link may live only minutes (the sources' links are minted for the create itself).
HANDED_FRESH_S = 5.0


@dataclass
class FindOrCreate:
    provider: Provider
    pace: Pace
    hand_off: SourceHandOff
    moves: LedgerMoves
    chaos: Chaos
    clock: Callable[[], float]

    def __call__(self, msg: AssetMessage, attempt: Attempt, lookup_first: bool, spent: int, deadline: float) -> Fate:
        """The claimed asset's video, found (when an earlier try may have made it) or created, and the
        ledger moved to what came of it; `spent`: attempts its budget has spent."""
        claim = attempt.claim
        problem = self.provider.source_problem(claim.source_url)
        if problem:  # never fetchable by this provider: refused before any request, with the fix
            return self.moves.apply(msg, attempt, Outcome(OutcomeKind.REJECTED, error=problem), spent)
        if lookup_first:
            found = self.find(msg.asset_id, claim, deadline)
            if isinstance(found, Hold):
                return self.moves.release_held(msg, attempt, found)
            if found.kind is not OutcomeKind.NOT_FOUND:
                return self.moves.adopt(msg, attempt, found, spent)
            attempt.searched = True  # nothing exists from the tries before this claim
        if self.moves.settings.archive_first:  # the original archived before the create, the copy handed over
            archived = self.archived_first(msg, attempt, spent)
            if isinstance(archived, Fate):
                return archived
            attempt.archived_url, attempt.archived_files = archived
        handed = self.handed(msg, attempt, spent)  # resolved now, just before the create, never earlier
        if isinstance(handed, Fate):
            return handed
        attempt.wait_ended = (claim.previous or {}).get("preparing_since") is not None
        return self.create(msg, attempt, handed, spent, deadline)

    def handed(self, msg: AssetMessage, attempt: Attempt, spent: int) -> Handed | Fate:
        """The source handed over now (the URL, the privacy its platform says), or the fate of an asset whose
        source cannot be had now: the source's refusal or failure moved as the provider's would be."""
        # The aws target reads the archived copy itself (its s3:// URI), never a link presigned for it.
        if attempt.archived_url and getattr(self.provider, "reads_s3_itself", False):
            return Handed(attempt.archived_url)
        handed = self.hand_off(msg, attempt.claim, attempt.archived_url)
        if isinstance(handed, Outcome):
            return self.moves.apply(msg, attempt, handed, spent)
        if isinstance(handed, Fate):
            return handed
        attempt.narrowed_privacy = attempt.narrow_privacy(msg, handed.privacy)
        return handed

    def archived_first(
        self, msg: AssetMessage, attempt: Attempt, spent: int
    ) -> tuple[str, tuple[tuple[str, str], ...]] | Fate:
        """ArchiveFirst: the archived copy's s3:// URL to hand over, or the claim's fate while there is none (the
        copy owed and the claim held, or the asset failed with the copy's reason): `upload.archive_first`."""
        settings, asset_id = self.moves.settings, msg.asset_id
        item = self.moves.ledger.archive(asset_id)
        went = gate(item, asset_id, settings.archive_prefix, self.clock(), self.moves.rng.random())
        if went.step is Step.HAND:
            url = archived_url(settings.archive_bucket, went.key)
            problem = self.provider.source_problem(url)
            if problem:  # a target that cannot fetch a presigned GET (the template's rule refuses the stack)
                return self.moves.apply(msg, attempt, Outcome(OutcomeKind.REJECTED, error=problem), spent)
            return url, went.files
        if went.step is Step.FAIL:
            return self.moves.fail_for_good(msg, attempt, went.reason)
        if went.step is Step.OWE:
            self.moves.archive_due(asset_id)
        return self.moves.hold_for_archive(msg, attempt, went.delay_s, went.reason)

    def create(self, msg: AssetMessage, attempt: Attempt, handed: Handed, spent: int, deadline: float) -> Fate:
        """Create the video from the handed source in a slot of the fleet's pace, short holds and 429s waited
        out in place, the source handed over again after such a wait (a link minted before it may have
        expired by its end); a conflict is the video an earlier try made, found and adopted."""
        waited_out = 0  # 429s met and waited out inside this invocation
        handed_at = self.clock()
        while True:
            slot = self.pace.slot(deadline, CREATE)
            if isinstance(slot, Hold):
                if self.pace.wait_if_short(slot.until, deadline, slot.spread):
                    continue  # a short hold costs a sleep, not a trip through the queue
                return self.moves.release_held(msg, attempt, slot)
            if self.clock() - handed_at > HANDED_FRESH_S:
                fresh = self.handed(msg, attempt, spent)
                if isinstance(fresh, Fate):
                    return fresh
                handed, handed_at = fresh, self.clock()
            attempt.create_sent = True  # from here on, a crash may leave a video behind
            outcome = self.provider.create(attempt.asset_ref(msg), handed.url)
            if outcome.kind is OutcomeKind.CREATED:
                self.chaos.after_create()
                if handed.notes:  # the ledger keeps what the hand-off did (a link signed again for longer)
                    outcome = replace(outcome, notes=(*outcome.notes, *handed.notes))
            self.pace.observe(outcome)
            if outcome.kind is OutcomeKind.THROTTLED:
                asked = outcome.retry_after if outcome.retry_after is not None else DEFAULT_THROTTLE_S
                if self.pace.wait_if_short(self.clock() + asked, deadline):
                    waited_out += 1
                    continue
                outcome = replace(outcome, retry_after=asked)
            if outcome.kind is OutcomeKind.CONFLICT:
                found = self.find(msg.asset_id, attempt.claim, deadline)
                if isinstance(found, Hold):
                    return self.moves.release_held(msg, attempt, found)
                return self.moves.adopt(msg, attempt, found, spent)
            return self.moves.apply(msg, attempt, outcome, spent, waited_out)

    def find(self, asset_id: str, claim: Claimed, deadline: float) -> Outcome | Hold:
        """What an earlier try may have created, looked for among videos made since the earliest try
        that may have made one (`lookup_from`: the first claim, moved on only by a lookup that completed
        and found nothing), so a throttled or interrupted lookup in between never narrows the search; an
        item an earlier release wrote reaches back to its earliest try (`lookup_bound`).

        A lookup is paced like a create (one slot of the fleet's pace, however many pages it reads),
        and what it is answered tells the pacer the same (a 429 holds the fleet); a Hold when the
        fleet is held for longer than this record can wait."""
        slot = self.pace.lookup_slot(deadline)
        if isinstance(slot, Hold):
            return slot
        found = self.provider.find(asset_id, lookup_bound(claim.previous))
        self.pace.pacer.observe(found, self.clock())
        return found
