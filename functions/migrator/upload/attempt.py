"""One claim's try at an asset: use `Attempt` wherever a step of the upload needs the claim, what the
create carries of the asset, or where the next lookup may start, and `back_to` for where a release returns."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..ledger import Claimed, NotResendable, message_of
from ..messages import AssetMessage, message_doc, narrowest_privacy
from ..providers import AssetRef
from ..states import State


@dataclass
class Attempt:
    """One claim's try: whether a create went out (after which a crash may have left a video),
    and whether a lookup completed and found nothing (which moves the next lookup's bound on)."""

    claim: Claimed
    create_sent: bool = False
    searched: bool = False
    # The source's file became ready after a wait (the claim's record holds `preparing_since`): every write
    # this try makes ends that wait, so a later one is timed from its own start.
    wait_ended: bool = False
    # The privacy the platform said at the create, where it was narrower than the ledger's: recorded with it.
    narrowed_privacy: str | None = None
    # ArchiveFirst: the archived copy (s3://), handed over in place of the claim's source_url, which the ledger keeps.
    archived_url: str | None = None
    archived_files: tuple[tuple[str, str], ...] = ()  # the side files kept beside it (Gate.files)
    _asset: AssetRef | None = None

    def asset_ref(self, msg: AssetMessage) -> AssetRef:
        """What the create carries of the asset (made once a claim: see `asset_ref`)."""
        if self._asset is None:
            self._asset = replace(asset_ref(msg, self.claim), archived_files=self.archived_files)
        return self._asset

    def narrow_privacy(self, msg: AssetMessage, source_privacy: str | None) -> str | None:
        """The create carries the narrowest privacy known: the ledger's, or the platform's just now (made
        private since the inventory). Returns the privacy when the platform's narrowed it, else None."""
        ref = self.asset_ref(msg)
        if ref.details is None or source_privacy is None:  # the platform said nothing: the ledger's row stands
            return None
        narrowest = narrowest_privacy(ref.details.privacy, source_privacy)
        if narrowest == ref.details.privacy:
            return None
        self._asset = replace(ref, details=replace(ref.details, privacy=narrowest))
        return narrowest

    @property
    def lookup_from(self) -> float | None:
        """Where the next lookup may start: this claim's time, once nothing older can exist."""
        return self.claim.claimed_at if self.searched and self.claim.claimed_at else None


def asset_ref(msg: AssetMessage, claim: Claimed) -> AssetRef:
    """What the create needs: the id, a title, the create generation (moved on by a retry of a
    rejected asset, so its key differs from the errored try's), and what the video is as the
    ledger keeps it once this claim is written: the first value it saw of each field wins over a
    later message's, and a field it had none of takes the message's (as the claim just stored it),
    so a privacy a later row adds is never lost to the one before the claim."""
    previous = claim.previous or {}
    generation = previous.get("generation")
    carried = {"asset_id": msg.asset_id, **{k: v for k, v in message_doc(msg).items() if k != "id"}}
    try:
        details = message_of({**carried, **previous}) if previous.get("source_url") else msg
    except NotResendable:
        details = msg
    return AssetRef(
        msg.asset_id,
        details.title or msg.title,
        int(generation) if generation is not None else 0,
        details,
    )


def paced_receives(item: dict | None) -> int:
    """Receives an asset's message spent on the provider's pacing (429s, holds), not on failures."""
    item = item or {}
    return int(item.get("throttles") or 0) + int(item.get("holds") or 0)


def back_to(claim: Claimed) -> State:
    """Where a released claim returns: inventoried when the duration is known."""
    previous = claim.previous or {}
    return State.INVENTORIED if previous.get("duration_s") is not None else State.PENDING
