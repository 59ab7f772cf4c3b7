"""The ledger table's plumbing: keys and indexes, reads, and the conditional update every writer uses.

One item per asset, keyed by `asset_id`. Three indexes read it without a scan:

- `by_state` (`state_shard` = "<state>#<n>", by `updated_at`): a state's items spread
  over SHARDS partitions, for status, reports, retries and the probe;
- `by_remote` (`remote_id`): the provider's video -> our asset, for webhooks that name
  only the video;
- `by_due` (`due_lane`, `due_at`): a sparse index of the assets reconcile may have to act
  on (see `due.py`); everything else stays out of it;
- `by_tracks_due` (`tracks_lane`, `tracks_due_at`): likewise, the assets whose caption tracks
  are not all settled (`ledger/tracks.py`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from .. import due
from ..dynamo import is_condition_failure, listed_item, to_item, typed
from ..messages import AssetMessage, message_doc
from ..redact import redact_credentials
from ..states import State

SHARDS = 16
# An expression's placeholders: #name and :value tokens.
_PLACEHOLDER = re.compile(r"[#:][A-Za-z0-9_]+")
STATE_INDEX = "by_state"
REMOTE_INDEX = "by_remote"
DUE_INDEX = due.INDEX
TRACKS_INDEX = due.TRACKS_INDEX


# A row's fields are kept under their message names, but one the ledger already uses for itself:
# `created_at` is when the ledger item was made, so the original video's creation time is kept apart.
LEDGER_NAMES = {"created_at": "original_created_at"}


def ledger_name(field_name: str) -> str:
    """The item attribute that holds a message field (messages.FIELDS)."""
    return LEDGER_NAMES.get(field_name, field_name)


def shard_of(asset_id: str) -> int:
    return due.shard_of(asset_id)


def state_shard(state: State, asset_id: str) -> str:
    return f"{state.value}#{shard_of(asset_id)}"


@dataclass(frozen=True)
class WriteResult:
    won: bool
    current: dict | None = None  # on a lost write: the item that beat us; on a won one, the item after (if asked)


@dataclass(frozen=True)
class ControlClaim:
    """A control item (`#collection#...`, `#archive#...`) taken for one pass: the claim's token, the item after."""

    token: str
    item: dict


@dataclass(frozen=True)
class ControlRefused:
    """A control item not taken: the item as it stood says why (done, held by another pass, waiting)."""

    item: dict


# The ledger's attributes that hold a reason in words (an asset's, a track's), often a provider's.
ERROR_FIELDS = frozenset({"last_error", "error", "archive_error"})


@dataclass
class Update:
    """One UpdateItem expression, built a clause at a time with its own placeholders, so
    writers say what changes and `request` turns it into DynamoDB's syntax."""

    sets: list[str] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    names: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)

    def _name(self, attr: str | tuple[str, ...]) -> str:
        """The attribute's placeholder (one per attribute, reused: if_not_exists names it twice); a
        tuple is a path into a map (`("track_states", key, "state")`), each part its own placeholder."""
        if isinstance(attr, tuple):
            return ".".join(self._name(part) for part in attr)
        for placeholder, name in self.names.items():
            if name == attr:
                return placeholder
        placeholder = f"#n{len(self.names)}"
        self.names[placeholder] = attr
        return placeholder

    def path(self, *parts: str) -> str:
        """The placeholder path of an attribute or a map entry, for a condition on it."""
        return self._name(parts if len(parts) > 1 else parts[0])

    def value(self, value: Any) -> str:
        """A value's placeholder, for a condition on it."""
        return self._value(value)

    def _value(self, value: Any) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = value
        return placeholder

    def set(self, attr: str | tuple[str, ...], value: Any) -> Update:
        if isinstance(value, str) and (attr if isinstance(attr, str) else attr[-1]) in ERROR_FIELDS:
            # The one door every stored reason passes: whatever wrote it, a credential in an
            # echoed link (a presign, a platform's path token) never reaches the ledger.
            value = redact_credentials(value)
        self.sets.append(f"{self._name(attr)} = {self._value(value)}")
        return self

    def set_if_absent(self, attr: str, value: Any) -> Update:
        name = self._name(attr)
        self.sets.append(f"{name} = if_not_exists({name}, {self._value(value)})")
        return self

    def set_from(self, attr: str, source: str, default: Any) -> Update:
        """`attr` takes `source`'s value (or `default` when the item has none)."""
        self.sets.append(f"{self._name(attr)} = if_not_exists({self._name(source)}, {self._value(default)})")
        return self

    def add(self, attr: str | tuple[str, ...], delta: int) -> Update:
        name = self._name(attr)
        self.sets.append(f"{name} = if_not_exists({name}, {self._value(0)}) + {self._value(delta)}")
        return self

    def remove(self, *attrs: str | tuple[str, ...]) -> Update:
        self.removes += [self._name(a) for a in attrs]
        return self

    def message_fields(self, msg: AssetMessage, keep_existing: bool = False) -> Update:
        """What a message says of its asset (title, duration, metadata, what the video is: see
        messages.FIELDS); `keep_existing`: an item's own values win (the ledger keeps the first it saw)."""
        put = self.set_if_absent if keep_existing else self.set
        for attr, value in message_doc(msg).items():
            if attr not in ("id", "source_url"):  # the key, and the source the ledger keeps apart
                put(ledger_name(attr), value)
        return self

    def to_state(self, state: State, asset_id: str, now: float) -> Update:
        """The state and its by_state index key change together, with the time of the change."""
        self.sets.append(f"#state = {self._value(state.value)}")
        return self.set("state_shard", state_shard(state, asset_id)).set("updated_at", now)

    def to_lane(self, family: due.Family, asset_id: str, due_at: float) -> Update:
        """File the asset in reconcile's due lane `family`, silent from `due_at`."""
        return self.set("due_lane", due.lane(family, asset_id)).set("due_at", due_at)

    def off_lanes(self) -> Update:
        """Nothing reconcile could do for the asset until someone moves it: out of the due index."""
        return self.remove("due_lane", "due_at")

    def expression(self) -> str:
        parts = []
        if self.sets:
            parts.append("SET " + ", ".join(self.sets))
        if self.removes:
            parts.append("REMOVE " + ", ".join(dict.fromkeys(self.removes)))
        return " ".join(parts)

    def request(self, condition: str | None = None, **condition_values: Any) -> dict:
        """The UpdateItem fields: the expression, and `condition` over `condition_values`
        (their placeholders named by the caller, e.g. `:token`) and `#state`."""
        expression = self.expression()
        # DynamoDB refuses a placeholder that no expression uses: send only those in use.
        used = set(_PLACEHOLDER.findall(expression + " " + (condition or "")))
        names = {"#state": "state", **self.names}
        request: dict = {"UpdateExpression": expression}
        if used & set(names):
            request["ExpressionAttributeNames"] = {k: v for k, v in names.items() if k in used}
        values = {k: v for k, v in {**self.values, **condition_values}.items() if k in used}
        if values:
            request["ExpressionAttributeValues"] = typed(values)
        if condition:
            request["ConditionExpression"] = condition
        return request


class LedgerTable:
    """The table and its client; every part of the ledger (claims, settling, healing,
    loading) is a mixin over this. Methods take `now` so callers control time."""

    def __init__(self, table_name: str, client: Any):
        self.table = table_name
        self.client = client

    def get(self, asset_id: str) -> dict | None:
        resp = self.client.get_item(TableName=self.table, Key=typed({"asset_id": asset_id}), ConsistentRead=True)
        return to_item(resp.get("Item"))

    def get_many(self, asset_ids: list[str]) -> dict[str, dict]:
        """The items of `asset_ids` (up to 100 a call, consistent reads), by id; absent ids are absent."""
        found: dict[str, dict] = {}
        for start in range(0, len(asset_ids), 100):
            keys = [typed({"asset_id": a}) for a in dict.fromkeys(asset_ids[start : start + 100])]
            request = {self.table: {"Keys": keys, "ConsistentRead": True}}
            for _ in range(10):  # unprocessed keys come back under throttling: ask again for those
                resp = self.client.batch_get_item(RequestItems=request)
                for raw in resp.get("Responses", {}).get(self.table, []):
                    item = listed_item(raw)
                    found[item["asset_id"]] = item
                request = resp.get("UnprocessedKeys") or {}
                if not request:
                    break
        return found

    def asset_for_remote(self, remote_id: str) -> str | None:
        """The asset whose recorded provider video is `remote_id` (the by_remote index, eventually
        consistent: a video recorded a moment ago may not be found yet; reconcile's poll is the
        backstop). Two assets never share a video, so the first match is the one."""
        resp = self.client.query(
            TableName=self.table,
            IndexName=REMOTE_INDEX,
            KeyConditionExpression="remote_id = :rid",
            ExpressionAttributeValues=typed({":rid": remote_id}),
            Limit=1,
        )
        items = resp.get("Items") or []
        return listed_item(items[0])["asset_id"] if items else None

    def _update(self, asset_id: str, **request: Any) -> WriteResult:
        """One conditional UpdateItem: won with the item after (when asked for), or lost with the item as it stood."""
        try:
            resp = self.client.update_item(
                TableName=self.table,
                Key=typed({"asset_id": asset_id}),
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
                **request,
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return WriteResult(False, to_item(exc.response.get("Item")))
            raise
        return WriteResult(True, to_item(resp.get("Attributes")))

    def _apply(self, asset_id: str, update: Update, condition: str, returns: str = "NONE", **values) -> WriteResult:
        return self._update(asset_id, **update.request(condition, **values), ReturnValues=returns)

    # --- reading a state through the by_state index ------------------------------------

    def query_shard(
        self,
        state: State,
        shard: int,
        limit: int,
        older_than: float | None = None,
        start_key: dict | None = None,
        newest_first: bool = False,
    ) -> tuple[list[dict], dict | None]:
        """One bounded page of one state's shard, oldest change first; returns (items, next key).

        Items carry the index's projection (state, lease, retry, remote id, counters,
        last error), not the whole asset: `get` reads the rest when it is needed.
        """
        values: dict = {":shard": f"{state.value}#{shard}"}
        condition = "state_shard = :shard"
        if older_than is not None:
            values[":cutoff"] = older_than
            condition += " AND updated_at < :cutoff"
        kwargs: dict = {
            "TableName": self.table,
            "IndexName": STATE_INDEX,
            "KeyConditionExpression": condition,
            "ExpressionAttributeValues": typed(values),
            "Limit": limit,
            "ScanIndexForward": not newest_first,
        }
        if start_key:
            kwargs["ExclusiveStartKey"] = start_key
        resp = self.client.query(**kwargs)
        return [listed_item(raw) for raw in resp.get("Items", [])], resp.get("LastEvaluatedKey")

    def iter_state(self, state: State, page_size: int = 100, older_than: float | None = None):
        """Every item of `state`, shard by shard (a paginated walk; bounded per page, not in total)."""
        for shard in range(SHARDS):
            key = None
            while True:
                items, key = self.query_shard(state, shard, page_size, older_than=older_than, start_key=key)
                yield from items
                if not key:
                    break

    # --- reading reconcile's due lanes ----------------------------------------------------

    def query_due(
        self, lane: str, before: float, limit: int, start_key: Mapping | None = None
    ) -> tuple[list[dict], dict | None]:
        """One page of the lane's items silent since before `before`, the longest silent first."""
        index, lane_attr, due_attr = due.index_of(due.family_of(lane) or due.Family.HEAL)
        kwargs: dict = {
            "TableName": self.table,
            "IndexName": index,
            "KeyConditionExpression": f"{lane_attr} = :lane AND {due_attr} < :before",
            "ExpressionAttributeValues": typed({":lane": lane, ":before": before}),
            "Limit": limit,
        }
        if start_key:
            kwargs["ExclusiveStartKey"] = start_key
        resp = self.client.query(**kwargs)
        return [listed_item(raw) for raw in resp.get("Items", [])], resp.get("LastEvaluatedKey")
