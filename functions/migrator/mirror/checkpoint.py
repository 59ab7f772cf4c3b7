"""The mirror's checkpoint: one control item of the ledger per source, `#mirror#<platform>`.

`#` is the prefix of control items, which the report, the upgrade and the tally skip. The item holds:

- the lease (`lease_token`, `lease_until`): one conditional write takes it (`acquire`), only when no live lease
  is held, so two overlapping invocations never list at once; every later write is fenced by the token, and a
  crashed invocation's lease ends on its own (decide.lease_for);
- the sweep under way (`sweep`: sweeping.SweepState as JSON, saved after every page), whether it is full
  (`full`) and its audit `generation`; the gone check under way after a full one (`scan`: JSON of its
  `generation`, `began` and the scan's `start_key`);
- what the last finished sweep recorded (`record`: sweeping.recorded as JSON: mark, pending, delta cursor),
  its `mark` and `pending` count as numbers for `migrator mirror status`;
- counts: `sweeps` finished, `listed` (the sweep's rows so far), `sent` (rows sent to intake, all sweeps),
  `left_behind` (rows MirrorWhere did not keep, all sweeps), `unfetchable`, `gone` (videos the last gone check
  found gone at the source); and `last_run_at`, `last_outcome`, `last_error` (a reason safe to show: the
  source's words, never a credential).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from ..dynamo import is_condition_failure, to_item, typed
from ..sweeping import SweepState
from .decide import View

PREFIX = "#mirror#"
# DynamoDB's item limit is 400 KB; a sweep whose state (its pending videos) outgrows this is refused with a reason.
MAX_STATE_BYTES = 300_000


def mirror_item_id(platform: str) -> str:
    return f"{PREFIX}{platform}"


class LeaseLost(Exception):
    """Another invocation took the checkpoint (this one outlived its lease): stop without writing."""


def _loads(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _number(value: Any) -> float | None:
    return float(value) if value is not None and not isinstance(value, bool | str) else None


@dataclass
class Store:
    """The checkpoint item of `platform` in the ledger `table` (a low-level DynamoDB client)."""

    client: Any
    table: str
    platform: str

    @property
    def key(self) -> dict:
        return typed({"asset_id": mirror_item_id(self.platform)})

    def read(self) -> dict:
        resp = self.client.get_item(TableName=self.table, Key=self.key, ConsistentRead=True)
        return to_item(resp.get("Item")) or {}

    def acquire(self, token: str, now: float, lease_until: float) -> dict | None:
        """Take the lease (the item made if new); the item after, or None while another holds it."""
        try:
            resp = self.client.update_item(
                TableName=self.table,
                Key=self.key,
                UpdateExpression="SET lease_token = :t, lease_until = :u, kind = :k, platform = :p, last_run_at = :now",
                ConditionExpression="attribute_not_exists(lease_until) OR lease_until < :now",
                ExpressionAttributeValues=typed(
                    {":t": token, ":u": lease_until, ":k": "mirror", ":p": self.platform, ":now": now}
                ),
                ReturnValues="ALL_NEW",
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return None
            raise
        return to_item(resp.get("Attributes")) or {}

    def _write(self, token: str, sets: dict, removes: tuple[str, ...] = (), adds: dict | None = None) -> None:
        names, values, parts = {}, {":token": token}, []
        for i, (attr, value) in enumerate(sets.items()):
            names[f"#s{i}"], values[f":s{i}"] = attr, value
            parts.append(f"#s{i} = :s{i}")
        expression = "SET " + ", ".join(parts)
        if adds:
            adding = []
            for i, (attr, delta) in enumerate(adds.items()):
                names[f"#a{i}"], values[f":a{i}"] = attr, delta
                adding.append(f"#a{i} :a{i}")
            expression += " ADD " + ", ".join(adding)
        if removes:
            for i, attr in enumerate(removes):
                names[f"#r{i}"] = attr
            expression += " REMOVE " + ", ".join(f"#r{i}" for i in range(len(removes)))
        try:
            self.client.update_item(
                TableName=self.table,
                Key=self.key,
                UpdateExpression=expression,
                ConditionExpression="lease_token = :token",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=typed(values),
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                raise LeaseLost(f"the {self.platform} mirror's lease was taken by another invocation") from None
            raise

    def save_sweep(
        self, token: str, state: SweepState, full: bool, generation: int, sent: int, left_behind: int = 0
    ) -> None:
        """After a page: the sweep's state, fenced by the lease; `sent` rows sent to intake since the last save,
        `left_behind` rows MirrorWhere did not keep."""
        doc = json.dumps(state.as_doc(), separators=(",", ":"))
        if len(doc) > MAX_STATE_BYTES:
            raise ValueError(f"the sweep's state ({len(doc):,} bytes, its pending videos) is too large to checkpoint")
        sets = {"sweep": doc, "full": full, "generation": generation, "listed": state.rows}
        self._write(token, {**sets, "unfetchable": state.unfetchable}, adds={"sent": sent, "left_behind": left_behind})

    def finish_sweep(self, token: str, record: dict, scan: dict | None, now: float) -> None:
        """A finished sweep: its record (the mark moves), the sweep count, and a full one's gone check to come."""
        sets: dict = {"record": json.dumps(record, separators=(",", ":")), "finished_at": now}
        sets["pending"] = len(record.get("pending") or {})
        if record.get("mark") is not None:
            sets["mark"] = record["mark"]
        if scan is not None:
            sets["scan"] = json.dumps(scan, separators=(",", ":"))
        self._write(token, sets, removes=("sweep", "full"), adds={"sweeps": 1})

    def save_scan(self, token: str, scan: dict) -> None:
        self._write(token, {"scan": json.dumps(scan, separators=(",", ":"))})

    def finish_scan(self, token: str, gone: int, now: float) -> None:
        self._write(token, {"gone": gone, "gone_checked_at": now}, removes=("scan",))

    def release(self, token: str, outcome: str, error: str | None) -> None:
        """The invocation's end: its outcome (and reason), the lease given back."""
        sets = {"last_outcome": outcome, **({"last_error": error} if error else {})}
        removes = ("lease_token", "lease_until") + (() if error else ("last_error",))
        self._write(token, sets, removes=removes)


def view_of(item: dict) -> View:
    """The decisions' view of a checkpoint item (as `Store.read` gives it)."""
    record = _loads(item.get("record"))
    return View(
        lease_until=_number(item.get("lease_until")),
        sweeping=isinstance(item.get("sweep"), str),
        scanning=isinstance(item.get("scan"), str),
        record=record if isinstance(record, dict) else None,
        sweeps=int(_number(item.get("sweeps")) or 0),
        generation=int(_number(item.get("generation")) or 0),
    )


def sweep_of(item: dict, platform: str) -> SweepState | None:
    """The sweep under way in the item (None: none, or not a sweep of `platform`: it starts over)."""
    doc = _loads(item.get("sweep"))
    try:
        state = SweepState.from_doc(doc) if isinstance(doc, dict) else None
    except TypeError:
        return None
    return state if state is not None and state.platform == platform else None


def scan_of(item: dict) -> dict | None:
    scan = _loads(item.get("scan"))
    return scan if isinstance(scan, dict) else None


def status_of(item: dict) -> dict:
    """What `migrator mirror status` shows of the item: plain numbers and words."""
    out: dict = {}
    for name in ("platform", "last_outcome", "last_error"):
        if isinstance(item.get(name), str):
            out[name] = item[name]
    for name in ("last_run_at", "finished_at", "mark", "lease_until", "gone_checked_at"):
        if _number(item.get(name)) is not None:
            out[name] = _number(item.get(name))
    for name in ("sweeps", "listed", "sent", "left_behind", "unfetchable", "gone", "pending", "generation"):
        out[name] = int(_number(item.get(name)) or 0)
    out["sweeping"] = isinstance(item.get("sweep"), str)
    out["checking_gone"] = isinstance(item.get("scan"), str)
    return out
