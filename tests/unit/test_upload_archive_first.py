"""ArchiveFirst's gate before a create (upload/archive_first.py): what a claim does, from its copy's ledger item, and
how long it is held while the original is archived."""

from __future__ import annotations

import pytest
from migrator.upload.archive_first import (
    FIRST_WAIT_S,
    JITTER,
    LONGEST_WAIT_S,
    Gate,
    Step,
    archived_url,
    gate,
    wait_s,
)

NOW = 10_000.0
KEY = "masters/vid-1/original.mp4"


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        # nothing owed yet: owe it, tell the archive worker, hold the first wait
        (None, Gate(Step.OWE, FIRST_WAIT_S, reason="archive first: the original is being archived")),
        ({}, Gate(Step.OWE, FIRST_WAIT_S, reason="archive first: the original is being archived")),
        # owed or under way: held (the wait grows with the copy's age)
        (
            {"state": "pending", "created_at": NOW},
            Gate(Step.WAIT, FIRST_WAIT_S, reason="archive first: the copy is pending"),
        ),
        (
            {"state": "copying", "created_at": NOW - 200},
            Gate(Step.WAIT, 100.0, reason="archive first: the copy is copying"),
        ),
        (
            {"state": "copying", "created_at": NOW - 7200},
            Gate(Step.WAIT, LONGEST_WAIT_S, reason="archive first: the copy is copying"),
        ),
        # a copy that waits for its retry: held no shorter than that (up to the longest)
        (
            {"state": "copying", "created_at": NOW, "retry_after": NOW + 90, "error": "the source: 503"},
            Gate(Step.WAIT, 90.0, reason="archive first: the copy waits: the source: 503"),
        ),
        (
            {"state": "failed", "created_at": NOW, "retry_after": NOW + 45, "error": "size mismatch"},
            Gate(Step.WAIT, 45.0, reason="archive first: the copy waits: size mismatch"),
        ),
        (
            {"state": "failed", "created_at": NOW, "retry_after": NOW + 86_400, "error": "x"},
            Gate(Step.WAIT, LONGEST_WAIT_S, reason="archive first: the copy waits: x"),
        ),
        # archived: the create is made from the copy
        ({"state": "archived", "key": KEY, "sha256": "abc"}, Gate(Step.HAND, key=KEY)),
        # archived, but no key the uploader may hand over (none, or outside the asset's folder under the prefix)
        (
            {"state": "archived"},
            Gate(Step.FAIL, reason="archived first, but the archive names no original of this asset under masters/"),
        ),
        (
            {"state": "archived", "key": "masters/vid-2/original.mp4"},
            Gate(Step.FAIL, reason="archived first, but the archive names no original of this asset under masters/"),
        ),
        (
            {"state": "archived", "key": "masters/vid-1/row.json"},
            Gate(Step.FAIL, reason="archived first, but the archive names no original of this asset under masters/"),
        ),
        (
            {"state": "archived", "key": "elsewhere/vid-1/original.mp4"},
            Gate(Step.FAIL, reason="archived first, but the archive names no original of this asset under masters/"),
        ),
        # failed for good: the asset fails with the copy's reason
        (
            {"state": "failed", "error": "the source cannot serve the file: 404"},
            Gate(Step.FAIL, reason="archived first, and the archive failed: the source cannot serve the file: 404"),
        ),
        ({"state": "failed"}, Gate(Step.FAIL, reason="archived first, and the archive failed: no reason")),
    ],
)
def test_the_gate_before_a_create(item, expected):
    assert gate(item, "vid-1", "masters", NOW, 0.0) == expected


def test_an_asset_id_is_matched_by_its_folder_as_the_archive_names_it():
    """The archive percent-encodes an id's segments (archive.plan.key_of_id): the key is matched as it wrote it."""
    item = {"state": "archived", "key": "masters/a%20b/c/original.mov"}
    assert gate(item, "a b/c", "masters", NOW, 0.0) == Gate(Step.HAND, key="masters/a%20b/c/original.mov")
    assert gate(item, "a b", "masters", NOW, 0.0).step is Step.FAIL


@pytest.mark.parametrize(
    ("waited", "retry_in", "jitter", "expected"),
    [
        (0.0, None, 0.0, FIRST_WAIT_S),  # a copy just owed
        (0.0, None, 0.5, FIRST_WAIT_S * (1 + JITTER * 0.5)),  # spread
        (0.0, None, 1.0, FIRST_WAIT_S * (1 + JITTER)),
        (0.0, None, 7.0, FIRST_WAIT_S * (1 + JITTER)),  # a jitter out of [0, 1) is held to it
        (0.0, None, -1.0, FIRST_WAIT_S),
        (40.0, None, 0.0, FIRST_WAIT_S),  # half its age is shorter than the first wait
        (300.0, None, 0.0, 150.0),  # half its age
        (5_000.0, None, 0.0, LONGEST_WAIT_S),  # at most the longest
        (5_000.0, None, 1.0, LONGEST_WAIT_S * (1 + JITTER)),
        (0.0, 120.0, 0.0, 120.0),  # no sooner than the copy's own retry
        (0.0, -50.0, 0.0, FIRST_WAIT_S),  # a retry time passed
        (300.0, 100.0, 0.0, 150.0),
        (0.0, 50_000.0, 0.0, LONGEST_WAIT_S),
    ],
)
def test_how_long_a_claim_is_held_for_the_copy(waited, retry_in, jitter, expected):
    assert wait_s(waited, retry_in, jitter) == pytest.approx(expected)


def test_the_archived_copy_is_handed_as_an_s3_url_the_hand_off_presigns():
    assert archived_url("owner-masters", KEY) == "s3://owner-masters/masters/vid-1/original.mp4"
