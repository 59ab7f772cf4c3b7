"""The ledger's two invariants, in one place: fenced writes, and forward only.

- **Fenced**: once an asset is claimed, only the holder of its lease token may move it,
  and only while it is still uploading. A worker whose lease expired (slow, or presumed
  dead) and was taken over loses cleanly to its successor: its write is refused, and the
  refusal carries the item that beat it.
- **Forward only**: a settled asset (ready or rejected) never changes state again, and an
  event about another video than the one the ledger records cannot decide the asset's fate.

Every writer in the package builds its condition from these, so the rules cannot drift
apart between the uploader, the webhook, reconcile and the operator's tools.
"""

from __future__ import annotations

from ..states import State

# The holder of `:token` may write, while the asset is uploading.
FENCED = "lease_token = :token AND #state = :uploading"
# A settled asset stays settled.
NOT_SETTLED = "attribute_exists(asset_id) AND NOT #state IN (:ready, :rejected)"
# The video an outcome names is the asset's, or the ledger has not recorded one yet.
SAME_VIDEO = "(attribute_not_exists(remote_id) OR remote_id = :rid)"
# No worker holds the asset (a staged, deferred or failed asset; or one a crash left unleased).
UNLEASED = "attribute_not_exists(lease_token)"


def fenced_values(token: str) -> dict:
    return {":token": token, ":uploading": State.UPLOADING.value}


def settle_values() -> dict:
    return {":ready": State.READY.value, ":rejected": State.REJECTED.value}
