"""What is gone at the source: found by the mirror's full sweeps, reported on the ledger, never acted on.

A full sweep (the first, then every MirrorAuditEvery-th) stamps every video it lists that the ledger holds
with the sweep's `listed_gen` (and clears any `gone_at_source`): one conditional write a video, nothing held in
memory, whatever the library's size. Once its listing is done, a gone check scans the ledger's items of the
platform (its asset ids, `<platform>/<id>`), page by page across invocations (the scan's key is in the
checkpoint), for those made before the sweep began yet not stamped by it: each gets `gone_at_source` (when it
was found so), and the check counts all that are gone. Nothing else changes: the asset, its state, its video
at the target stay as they are; `migrator mirror gone` lists them, `migrator status` counts them.

Cost at 1M videos, per full sweep: 1M conditional writes (the stamps), one scan of the ledger (read units for
its size), and a write per video gone. Between full sweeps, deltas cost nothing here.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.exceptions import ClientError

from ..dynamo import is_condition_failure, listed_item, typed

WRITERS = 8  # stamps in flight at once
SCAN_PAGE = 1000  # items a scan call reads at most


def stamp(client: Any, table: str, asset_ids: Iterable[str], generation: int) -> int:
    """Stamp the ledger's items of `asset_ids` as listed by full sweep `generation`; how many it holds."""
    ids = sorted(set(asset_ids))
    if not ids:
        return 0

    def one(asset_id: str) -> bool:
        try:
            client.update_item(
                TableName=table,
                Key=typed({"asset_id": asset_id}),
                UpdateExpression="SET listed_gen = :g REMOVE gone_at_source",
                ConditionExpression="attribute_exists(asset_id)",
                ExpressionAttributeValues=typed({":g": generation}),
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False  # not in the ledger (yet): intake makes it, after the sweep began
            raise
        return True

    with ThreadPoolExecutor(max_workers=min(WRITERS, len(ids))) as pool:
        return sum(pool.map(one, ids))


def scan_page(client: Any, table: str, platform: str, scan: dict) -> tuple[list[str], int, dict | None]:
    """One page of the gone check `scan` ({"generation", "began", "start_key"}): the ids to mark gone now, how
    many were gone already, and the key the next page starts at (None: the check is done)."""
    request: dict = {
        "TableName": table,
        "FilterExpression": (
            "begins_with(asset_id, :prefix) AND created_at < :began"
            " AND (attribute_not_exists(listed_gen) OR listed_gen < :g)"
        ),
        "ProjectionExpression": "asset_id, gone_at_source",
        "ExpressionAttributeValues": typed(
            {":prefix": f"{platform}/", ":began": float(scan["began"]), ":g": int(scan["generation"])}
        ),
        "Limit": SCAN_PAGE,
    }
    if scan.get("start_key"):
        request["ExclusiveStartKey"] = typed(scan["start_key"])
    resp = client.scan(**request)
    fresh, already = [], 0
    for raw in resp.get("Items", []):
        item = listed_item(raw)
        if item.get("gone_at_source") is None:
            fresh.append(str(item["asset_id"]))
        else:
            already += 1
    last = resp.get("LastEvaluatedKey")
    return fresh, already, listed_item(last) if last else None


def mark_gone(client: Any, table: str, asset_ids: list[str], generation: int, now: float) -> int:
    """Mark each as gone at the source, unless a stamp of this sweep came first; how many were marked."""
    marked = 0
    for asset_id in asset_ids:
        try:
            client.update_item(
                TableName=table,
                Key=typed({"asset_id": asset_id}),
                UpdateExpression="SET gone_at_source = :now",
                ConditionExpression=(
                    "attribute_exists(asset_id) AND attribute_not_exists(gone_at_source)"
                    " AND (attribute_not_exists(listed_gen) OR listed_gen < :g)"
                ),
                ExpressionAttributeValues=typed({":now": now, ":g": generation}),
            )
            marked += 1
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise
    return marked


def gone_items(client: Any, table: str, platform: str | None = None):
    """Every ledger item marked gone at the source (of `platform`, or all), as plain items: `migrator mirror gone`."""
    request: dict = {
        "TableName": table,
        "FilterExpression": "attribute_exists(gone_at_source) AND NOT begins_with(asset_id, :control)",
        "ExpressionAttributeValues": typed({":control": "#"}),
    }
    if platform:
        request["FilterExpression"] += " AND begins_with(asset_id, :prefix)"
        request["ExpressionAttributeValues"] = typed({":control": "#", ":prefix": f"{platform}/"})
    while True:
        resp = client.scan(**request)
        for raw in resp.get("Items", []):
            yield listed_item(raw)
        if not resp.get("LastEvaluatedKey"):
            return
        request["ExclusiveStartKey"] = resp["LastEvaluatedKey"]
