"""`migrator verify` for each collection (issue 42): made at the target, and where the target keeps an order, holding
the videos placed in it in the source's order; a collection out of order or short of a video is a mismatch, one the
target did not answer for is left for the next run."""

from __future__ import annotations

from decimal import Decimal

import pytest
from migrator.row_extras import MAX_POSITION
from migrator.tracks import TrackOutcome, TrackResult
from migrator_cli.verify import VerifySummary
from migrator_cli.verify_collections import CollectionsCheck, CollectionsSummary, order_finding


def collection(key: str = "k1", state: str = "created", remote: str | None = "pl1", **members) -> dict:
    """A collection's ledger item: `members` {remote video id: source position} (Decimal, as DynamoDB reads)."""
    item = {"asset_id": f"#collection#{key}", "name": f"Talks {key}", "state": state, "kind": "collection"}
    if remote is not None:
        item["remote_collection_id"] = remote
    if members:
        item["members"] = {rid: Decimal(position) for rid, position in members.items()}
    return item


@pytest.mark.parametrize(
    ("members", "listed", "expected"),
    [
        ({"a": 0, "b": 1, "c": 2}, ("a", "b", "c"), None),
        # Videos another hand put in the playlist are passed over, wherever they are.
        ({"a": 0, "b": 1}, ("x", "a", "y", "b"), None),
        # Positions with gaps (the source's own numbering): only their order counts.
        ({"a": 3, "b": 10, "c": 11}, ("a", "b", "c"), None),
        # A video whose source position is not known comes after those whose is, in any order.
        ({"a": 0, "b": MAX_POSITION, "c": MAX_POSITION}, ("a", "c", "b"), None),
        ({"a": 0, "b": 1}, ("b", "a"), "out of the source's order at the target: the video at place 2"),
        ({"a": 0, "b": 1, "c": 2}, ("a", "c", "b"), "out of the source's order at the target: the video at place 3"),
        ({"a": 0, "b": MAX_POSITION}, ("b", "a"), "out of the source's order"),
        ({"a": 0, "b": 1, "c": 2}, ("a", "c"), "lacks 1 of its videos at the target: b"),
        ({"a": 0}, (), "lacks 1 of its videos at the target: a"),
    ],
)
def test_a_collections_videos_are_all_there_in_the_sources_order(members, listed, expected):
    found = order_finding(collection(**members), listed)
    if expected is None:
        assert found is None
    else:
        assert found is not None and found.kind == "collection_order" and found.asset_id == "#collection#k1"
        assert expected in found.detail and "'Talks k1' (pl1)" in found.detail


class Target:
    """The provider's collection reads: each collection's members, in order, or a scripted failure."""

    def __init__(self, listed: dict, ordered: set[str]):
        self.listed, self.ordered, self.asked = listed, ordered, []

    def keeps_order_of(self, collection_id: str) -> bool:
        return collection_id in self.ordered

    def collection_members(self, collection_id: str):
        self.asked.append(collection_id)
        return self.listed[collection_id]


def test_each_made_collection_whose_order_the_target_keeps_is_read_once_and_judged():
    items = [
        collection("in-order", remote="pl1", a=0, b=1),
        collection("shuffled", remote="pl2", a=0, b=1),
        collection("folder", remote="f1", a=0, b=1),  # made, on a collection that keeps no order: not listed
        collection("unplaced", remote="pl4"),  # made, nothing placed in it yet (no members): not listed
        collection("failed", state="failed", remote=None),
        collection("busy", remote="pl5", a=0),
        collection("gone", remote="pl6", a=0),
    ]
    target = Target(
        {
            "pl1": ("a", "b"),
            "pl2": ("b", "a"),
            "pl5": TrackOutcome(TrackResult.THROTTLED),
            "pl6": TrackOutcome(TrackResult.REFUSED, error="provider: HTTP 403"),
        },
        ordered={"pl1", "pl2", "pl4", "pl5", "pl6"},
    )
    reported: list[dict] = []
    summary = CollectionsCheck(target, lambda call: call()).run(items, reported.append)
    assert (summary.named, summary.made, summary.ordered, summary.in_order, summary.unchecked) == (7, 6, 4, 1, 1)
    assert target.asked == ["pl1", "pl2", "pl5", "pl6"]
    assert [(doc["id"], doc["kind"]) for doc in reported] == [
        ("#collection#shuffled", "collection_order"),
        ("#collection#gone", "collection_order"),
    ]
    assert "could not be listed at the target: provider: HTTP 403" in reported[1]["detail"]
    assert summary.line() == (
        "collections     6 of 7 made at the target; 1 of 4 ordered ones hold their videos in the source's order;"
        " 1 got no answer (run again)"
    )


@pytest.mark.parametrize(
    ("summary", "line"),
    [
        (CollectionsSummary(), None),  # the rows name no collection: no line at all
        (CollectionsSummary(named=3, made=3), "collections     3 of 3 made at the target"),
        (
            CollectionsSummary(named=3, made=3, ordered=2, in_order=2),
            "collections     3 of 3 made at the target; 2 of 2 ordered ones hold their videos in the source's order",
        ),
    ],
)
def test_the_collections_line(summary, line):
    assert summary.line() == line


def test_a_collection_out_of_order_fails_the_verify_as_a_mismatch():
    summary = VerifySummary(passed=4)
    assert summary.ok and summary.result().startswith("OK: every ready asset checked (4)")
    summary.collections_findings = 1
    assert not summary.ok and summary.result() == "MISMATCHES above"
