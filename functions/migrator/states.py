"""The asset states of the ledger and which moves between them are allowed."""

from enum import StrEnum


class State(StrEnum):
    PENDING = "pending"  # known to the ledger, nothing done yet
    INVENTORIED = "inventoried"  # probed: duration known, source readable
    UPLOADING = "uploading"  # claimed under a lease; a create may be in flight
    PROCESSING = "processing"  # the provider has it (remote_id set), not ready yet
    READY = "ready"  # terminal: the provider says it is playable
    FAILED = "failed"  # retryable while retry_after is set; failed for good without it
    REJECTED = "rejected"  # terminal: bad input or the provider refused the source


TERMINAL = frozenset({State.READY, State.REJECTED})
# States a claim may take without looking at a lease.
CLAIMABLE = frozenset({State.PENDING, State.INVENTORIED})
# States in which the provider already has the asset: a duplicate message is done.
AT_PROVIDER = frozenset({State.PROCESSING, State.READY})

# Forward order, used to refuse backward moves (e.g. a late uploader write after a
# webhook already said ready). FAILED and UPLOADING may alternate, so they share a rank.
RANK = {
    State.PENDING: 0,
    State.INVENTORIED: 1,
    State.UPLOADING: 2,
    State.FAILED: 2,
    State.PROCESSING: 3,
    State.READY: 4,
    State.REJECTED: 4,
}


def is_forward(current: State, target: State) -> bool:
    """True when moving from `current` to `target` never goes backward."""
    if current in TERMINAL:
        return False
    return RANK[target] >= RANK[current]
