"""What `migrator upgrade` fills in on an item an earlier release wrote (pure): the due lane today's writes
would have filed it in, the lookup bound from its earliest try, the tracks lane; nothing for an item at the
version, or one with nothing to wait for."""

from __future__ import annotations

import pytest
from migrator.due import Family, lane
from migrator.ledger.upgrade import (
    FROM_THE_START,
    SCHEMA_VERSION,
    backfill,
    earliest_try,
    lookup_bound,
    missing_lane,
    version_of,
)

NOW = 1_800_000_000.0
OLD = {"asset_id": "lib/1", "created_at": NOW - 9000, "claimed_at": NOW - 600, "updated_at": NOW - 500}


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"state": "uploading", "lease_until": NOW - 100}, ("heal", NOW - 100)),  # a lease that may have run out
        ({"state": "pending", "retry_after": NOW + 60}, ("heal", NOW + 60)),  # a deferred message
        ({"state": "failed", "retry_after": NOW + 60}, ("heal", NOW + 60)),
        ({"state": "pending", "enqueued_at": NOW - 50}, ("queued", NOW - 50)),  # sent, never claimed
        ({"state": "processing", "processing_at": NOW - 300}, ("poll", NOW - 300)),  # a webhook may be lost
        ({"state": "processing"}, ("poll", NOW - 500)),  # from its last change, when it has no processing time
        ({"state": "pending"}, None),  # staged: it waits for the operator, as today
        ({"state": "failed"}, None),  # failed for good
        ({"state": "ready"}, None),
        ({"state": "rejected"}, None),
        ({"state": "processing", "due_lane": "poll#3", "due_at": NOW}, None),  # already in a lane
    ],
)
def test_the_lane_an_old_item_is_filed_in_is_the_one_todays_writes_would_have_chosen(fields, expected):
    found = missing_lane({**OLD, **fields}, NOW)
    assert (found[0].value, found[1]) == expected if expected else found is None


def test_the_lookup_bound_reaches_back_to_the_earliest_try_and_every_item_gets_the_version():
    update = backfill({**OLD, "state": "uploading", "attempts": 2, "lease_until": NOW - 100}, NOW)
    values = {update.names[k.split(" = ")[0]]: update.values[k.split(" = ")[1]] for k in update.sets if " = :" in k}
    assert values["lookup_from"] == NOW - 9000 == earliest_try(OLD)  # not the last claim's NOW - 600
    assert values["schema"] == SCHEMA_VERSION and values["due_lane"] == lane(Family.HEAL, "lib/1")
    assert values["due_at"] == NOW - 100


def test_an_item_with_unsettled_tracks_gets_the_tracks_lane_and_one_at_the_version_nothing():
    tracks = {"t1": {"state": "pending"}, "t2": {"state": "attached"}}
    update = backfill({**OLD, "state": "ready", "track_states": tracks}, NOW)
    names = set(update.names.values())
    assert {"tracks_lane", "tracks_due_at", "schema"} <= names and "due_lane" not in names
    assert "lookup_from" not in names  # no attempts: nothing can have been created
    assert backfill({**OLD, "state": "ready", "schema": SCHEMA_VERSION}, NOW) is None
    assert version_of({"schema": "junk"}) == 1 and version_of({}) == 1
    # Noted (an extra carried otherwise) is settled: no lane for an item whose every entry is.
    settled_only = {"thumbnail": {"state": "noted", "kind": "thumbnail"}, "t2": {"state": "attached"}}
    names = set(backfill({**OLD, "state": "ready", "track_states": settled_only}, NOW).names.values())
    assert "tracks_lane" not in names


CLAIM = NOW - 60  # a claim of this release, after the earlier release's tries


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (None, None),  # a new asset: nothing to bound
        # This release's item: its own `lookup_from` (the first claim, moved on only by a completed lookup).
        ({**OLD, "schema": SCHEMA_VERSION, "attempts": 2, "lookup_from": NOW - 300}, NOW - 300),
        ({**OLD, "schema": SCHEMA_VERSION, "attempts": 1}, NOW - 600),  # none recorded: its last claim, as before
        # An earlier release's item with tries, claimed by this release before the upgrade reached it: the
        # claim's `lookup_from` is later than those tries; the earliest trace of them bounds the lookup.
        ({**OLD, "attempts": 2, "lookup_from": CLAIM}, NOW - 9000),
        ({**OLD, "attempts": 2}, NOW - 9000),  # not yet claimed by this release: not the last claim's NOW - 600
        ({**OLD, "attempts": 1, "enqueued_at": NOW - 9500}, NOW - 9500),  # whichever trace is oldest
        ({**OLD, "attempts": 2, "lookup_from": NOW - 9900}, NOW - 9900),  # an earlier value still reaches further
        ({"asset_id": "lib/1", "attempts": 3, "lookup_from": CLAIM}, FROM_THE_START),  # tries, no time kept
        ({"asset_id": "lib/1", "schema": "1", "attempts": "2", "lookup_from": CLAIM, "created_at": "5"}, 5.0),
        # No attempts: nothing can have been created; the claim's own time is as good as any.
        ({**OLD, "attempts": 0, "lookup_from": CLAIM}, CLAIM),
    ],
)
def test_the_lookup_bound_never_starts_at_a_claim_later_than_an_earlier_releases_tries(item, expected):
    assert lookup_bound(item) == expected


def set_values(update) -> dict:
    return {update.names[k.split(" = ")[0]]: update.values[k.split(" = ")[1]] for k in update.sets if " = :" in k}


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"attempts": 2}, NOW - 9000),
        ({"attempts": 2, "lookup_from": CLAIM}, NOW - 9000),  # a claim of this release set it first: replaced
        ({"attempts": 2, "lookup_from": NOW - 9900}, None),  # already reaches back further: left as it is
        ({"attempts": 0, "lookup_from": CLAIM}, None),  # no tries: nothing to reach back to
    ],
)
def test_the_upgrade_writes_the_earliest_try_even_after_a_claim_of_this_release(fields, expected):
    values = set_values(backfill({**OLD, "state": "failed", **fields}, NOW))
    assert values.get("lookup_from") == expected
