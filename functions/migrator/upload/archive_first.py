"""Archive before the create (issue 43, the stack's `ArchiveFirst`): for sources whose links are one-use or about
to go away, each original is copied to the archive first and the target is handed the archived copy through a
presigned link. Use `gate` to decide, from the copy's ledger item, what an uploader's claim does before its create;
pure: no I/O (the uploader's `upload.create` reads the item and acts).

How the two lanes meet. They share no message and no lock, only the ledger:

- the uploader claims the asset as always; with no copy owed yet it owes one and tells the archive worker
  (`LedgerMoves.archive_due`, the same message as after a create), then gives the claim back without spending an
  attempt (a hold, as the pacer's), its message coming back after `wait_s`;
- the archive worker copies the original in its own lane and at its own pace, and writes the end on the copy's item
  (`#archive#<asset id>`: archived with its key, or failed); it does not tell the uploader;
- the asset's message comes back on its own and the uploader reads the copy's item again: still under way, it waits
  longer (the wait grows with the copy's age, up to `LONGEST_WAIT_S`, and never ends before a retry the copy waits
  for); archived, the create is made from a link presigned now for the archived object (the ledger keeps the row's
  own `source_url`); failed for good, the asset fails with the copy's reason (`migrator retry --archive` copies
  again, then `migrator retry` moves the asset).

A lost message on either side is sent again by reconcile: the asset's hold is in its heal lane, the copy's in the
archive lane.

| the copy's item                            | the claim                                                   |
|--------------------------------------------|-------------------------------------------------------------|
| none                                       | OWE: the copy owed, the archive worker told, the claim held |
| pending, copying, failed with a retry time | WAIT: the claim held                                        |
| archived, its key the asset's original     | HAND: the create made from the archived copy                |
| archived, no such key                      | FAIL: a copy the uploader cannot hand over                  |
| failed with no retry time (for good)       | FAIL: "archived first, and the archive failed: <reason>"    |
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..archive.decide import ArchiveState
from ..archive.plan import ORIGINAL, object_prefix

# The first hold (a copy just owed): about what a small original takes to copy.
FIRST_WAIT_S = 30.0
# The longest hold: a copy of tens of GB is checked on this often at most, so its create follows it within this.
LONGEST_WAIT_S = 600.0
# Of each hold, up to this share more at random, so assets held together do not come back together.
JITTER = 0.2


class Step(StrEnum):
    OWE = "owe"  # no copy owed yet: owe it, tell the archive worker, hold the claim
    WAIT = "wait"  # a copy owed, under way, or waiting for its retry: hold the claim
    HAND = "hand"  # archived: the create is made from the archived copy
    FAIL = "fail"  # the asset fails with `reason`


@dataclass(frozen=True)
class Gate:
    step: Step
    delay_s: float = 0.0  # OWE, WAIT: when the message comes back
    key: str = ""  # HAND: the archived object's key in the archive bucket
    files: tuple[tuple[str, str], ...] = ()  # HAND: the side files kept beside it (name, key)
    reason: str = ""  # WAIT: why it is held; FAIL: the asset's error


def gate(item: dict | None, asset_id: str, prefix: str, now: float, jitter: float) -> Gate:
    """What a claim on `asset_id` does before its create, from its copy's item (None: none owed yet) in the archive
    under `prefix` (see the module's table); `jitter` in [0, 1) spreads the hold."""
    if not item:
        return Gate(Step.OWE, wait_s(0.0, None, jitter), reason="archive first: the original is being archived")
    state, retry_after = item.get("state"), _number(item.get("retry_after"))
    if state == ArchiveState.ARCHIVED.value:
        key = item.get("key")
        if isinstance(key, str) and _is_original(key, asset_id, prefix):
            return Gate(Step.HAND, key=key, files=kept_files(item))
        return Gate(
            Step.FAIL, reason=f"archived first, but the archive names no original of this asset under {prefix}/"
        )
    if state == ArchiveState.FAILED.value and retry_after is None:
        return Gate(Step.FAIL, reason=f"archived first, and the archive failed: {item.get('error') or 'no reason'}")
    waited = now - (_number(item.get("created_at")) or now)
    retry_in = retry_after - now if retry_after is not None else None
    why = "archive first: " + (f"the copy waits: {item['error']}" if item.get("error") else f"the copy is {state}")
    return Gate(Step.WAIT, wait_s(waited, retry_in, jitter), reason=why[:300])


def wait_s(waited_s: float, retry_in_s: float | None, jitter: float) -> float:
    """How long a claim is held for a copy owed `waited_s` ago: half that (a copy checked again about when it may
    be done, less often the longer it takes), no sooner than the retry the copy waits for (`retry_in_s`), between
    FIRST_WAIT_S and LONGEST_WAIT_S, and up to JITTER of it more."""
    base = max(FIRST_WAIT_S, waited_s / 2, retry_in_s or 0.0)
    return min(base, LONGEST_WAIT_S) * (1 + JITTER * min(max(jitter, 0.0), 1.0))


def kept_files(item: dict) -> tuple[tuple[str, str], ...]:
    """The side files the archive kept beside the original (`side_files` entries kept, with their key), by name."""
    sides = item.get("side_files")
    if not isinstance(sides, dict):
        return ()
    kept = [
        (str(name), entry["key"])
        for name, entry in sides.items()
        if isinstance(entry, dict) and entry.get("state") == "kept" and isinstance(entry.get("key"), str)
    ]
    return tuple(sorted(kept))


def archived_url(bucket: str, key: str) -> str:
    """The archived copy as the hand-off resolves it: an s3:// URL, presigned just before the create."""
    return f"s3://{bucket}/{key}"


def _is_original(key: str, asset_id: str, prefix: str) -> bool:
    """Whether `key` is the asset's original as the archive names it (`archive.plan.original_key`): in its own
    folder, not one of a longer id's (`a` and `a/b`), nor outside the prefix the uploader may read."""
    folder = f"{object_prefix(prefix, asset_id)}/"
    name = key[len(folder) :] if key.startswith(folder) else ""
    return name.startswith(f"{ORIGINAL}.") and "/" not in name


def _number(value: object) -> float | None:
    """A time the ledger holds (a Decimal, an int or a float); None where there is none."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
