"""`migrator verify` for each collection the rows name (issue 42): made at the target, and, where the target keeps an
order, holding the videos placed in it in the source's order.

A collection's own ledger item (`#collection#<key>`: migrator.ledger.collections) says whether it was made and as
which id; on a target that keeps an order it also holds each placed video's source position (`members`). Each such
collection's videos are listed at the target in its order (`collection_members`), and ours among them must all be
there and must come in the order of their positions (videos another hand put in it are passed over; videos whose
source position is not known come after, in any order). That a video is in the collection is also each video's own
look (verify_extras.py); this check is the order, which no single video can tell.

`order_finding` is pure; `CollectionsCheck` asks the target, on verify's pace, a 429 waited out as for the extras.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import pairwise

from migrator.ledger.collections import PREFIX, CollectionState
from migrator.tracks import TrackOutcome

from .verify import Finding
from .verify_extras import NO_ANSWER

KIND = "collection_order"


@dataclass
class CollectionsSummary:
    """What verify found of the collections: how many the rows name, how many were made, and of those whose order
    the target keeps, how many hold their videos in the source's order."""

    named: int = 0
    made: int = 0
    ordered: int = 0  # made at a target that keeps their order, with members recorded
    in_order: int = 0
    unchecked: int = 0  # no answer from the target: looked at again by the next run
    findings: list[Finding] = field(default_factory=list)

    def line(self) -> str | None:
        """'collections     3 of 3 made at the target; 2 of 2 ordered ones hold their videos in the source's order'."""
        if not self.named:
            return None
        line = f"collections     {self.made:,} of {self.named:,} made at the target"
        if self.ordered:
            line += f"; {self.in_order:,} of {self.ordered:,} ordered ones hold their videos in the source's order"
        if self.unchecked:
            line += f"; {self.unchecked:,} got no answer (run again)"
        return line


def _position(value: object) -> int | None:
    """A member's recorded source position (a number in the ledger), None where it is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, Decimal, float)):
        return None
    return int(value)


def order_finding(item: Mapping, members: Sequence[str]) -> Finding | None:
    """Whether the collection `item` (its ledger item) holds, in `members` (the target's listing in its order), every
    video the ledger placed in it, in the order of their source positions; None when it does, else the mismatch."""
    key = str(item.get("asset_id", ""))
    placed = {
        str(rid): p for rid, value in dict(item.get("members") or {}).items() if (p := _position(value)) is not None
    }
    missing = sorted(set(placed) - set(members))
    name = str(item.get("name") or key.removeprefix(PREFIX))[:80]
    collection_id = str(item.get("remote_collection_id"))
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        detail = f"the collection {name!r} ({collection_id}) lacks {len(missing)} of its videos at the target: {shown}"
        return Finding(key, KIND, detail, {"missing": len(missing)})
    seen = [placed[rid] for rid in members if rid in placed]
    for at, (before, after) in enumerate(pairwise(seen)):
        if after < before:
            detail = (
                f"the collection {name!r} ({collection_id}) holds its videos out of the source's order at the target:"
                f" the video at place {at + 2} of ours comes from source position {after}, after {before}"
            )
            return Finding(key, KIND, detail, {"place": at + 2})
    return None


class CollectionsCheck:
    """Reads each made collection whose order the target keeps, through `ask` (verify_extras.ExtrasChecker.ask:
    paced, a 429 waited out) and the stack's provider."""

    def __init__(self, provider, ask: Callable[[Callable[[], object]], object]):
        self.provider, self.ask = provider, ask

    def run(self, items: Iterable[Mapping], on_finding: Callable[[dict], None]) -> CollectionsSummary:
        summary = CollectionsSummary()
        for item in items:
            summary.named += 1
            collection_id = item.get("remote_collection_id")
            if item.get("state") != CollectionState.CREATED.value or not isinstance(collection_id, str):
                continue
            summary.made += 1
            if not item.get("members") or not self.provider.keeps_order_of(collection_id):
                continue
            summary.ordered += 1
            listed = self.ask(functools.partial(self.provider.collection_members, collection_id))
            if isinstance(listed, TrackOutcome):
                if listed.kind in NO_ANSWER:
                    summary.unchecked += 1
                    continue
                why = listed.error or listed.kind.value
                detail = f"the collection {collection_id} could not be listed at the target: {why}"
                finding = Finding(str(item.get("asset_id", "")), KIND, detail)
                summary.findings.append(finding)
                on_finding(finding.as_dict())
                continue
            found = order_finding(item, tuple(str(m) for m in listed) if isinstance(listed, (tuple, list)) else ())
            if found is None:
                summary.in_order += 1
            else:
                summary.findings.append(found)
                on_finding(found.as_dict())
        return summary
