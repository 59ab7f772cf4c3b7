"""Cluster-wide pacing of provider creates: one shared item, the rate it learns, holds, the breaker.

Every uploader invocation shares one control item in the ledger table (`#pacer`):

- `next_slot` and `interval`: the earliest time the next create may start, and the
  seconds between creates (1 / the rate). Reserving a slot advances `next_slot` by
  `interval`, read from the item itself (`SET next_slot = next_slot + interval`), so one
  conditional write hands out slots at the fleet's rate however many Lambdas run.
- the rate and how it came to be (`pacing.Rate`: start, told by headers, learned,
  ceiling); whoever sees that it is due to grow, or meets a 429, changes it with a
  write conditioned on the values it read, so each step happens once.
- `hold_until`, `hold_kind`, `hold_reason`: nobody creates before `hold_until`. Kinds:
  `rate` (a 429), `unavailable` (a 503 with Retry-After), `errors` (the breaker),
  `headers` (the provider said no requests remain in its window). After a hold that was
  not about the rate, some of the slots it cost are made up (`catchup_floor`, set by
  `pacing.resume_from`): the provider's budget kept accruing while we waited.
- `idle_at`: the last time a reservation found its slot already free, or the end of the
  last hold. The rate grows only after a whole step without either: a fleet that sends
  slower than its rate (too few workers, slow claims) would otherwise grow a rate nobody
  sends at, and a step spent held says nothing about the rate either.
- `win`, `ok`, `err`, `prev_ok`, `prev_err`, `trips`: the breaker's two windows of request
  outcomes. Each reservation carries the outcomes its worker saw since its last one, so
  counting costs no extra write.

A reservation is one conditional UpdateItem in the common case; the item takes about
one write per create plus one a second for the rate, within what one DynamoDB item
sustains (about 1,000 writes/s), hence the 500 creates/s cap on `ProviderRateLimit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from . import pacing
from .dynamo import is_condition_failure, to_item, typed
from .pacing import CATCH_UP_S, Rate, Window

PACER_ID = "#pacer"
# Never sleep longer than this inside an invocation waiting for a slot; past it the
# message goes back to the queue instead (the slot queue is too long).
DEFAULT_HORIZON_S = 5.0
ATTEMPTS = 8  # lost races re-read; 8 is plenty at any sane concurrency


@dataclass(frozen=True)
class Go:
    at: float  # start the create at this time (may be now, or just past after a hold)


@dataclass(frozen=True)
class Hold:
    until: float  # do not create before this time
    reason: str
    kind: str = "rate"


@dataclass
class Report:
    """Outcomes a worker saw since its last reservation, carried by the next one."""

    ok: int = 0
    err: int = 0

    def take(self) -> tuple[int, int]:
        counts, self.ok, self.err = (self.ok, self.err), 0, 0
        return counts


class Pacer:
    def __init__(
        self,
        table_name: str,
        client: Any,
        ceiling_per_s: float = 0.0,
        start_per_s: float = 0.0,
        horizon_s: float = DEFAULT_HORIZON_S,
    ):
        self.table = table_name
        self.client = client
        self.ceiling = ceiling_per_s if ceiling_per_s > 0 else None
        self.start_rate = start_per_s
        self.horizon = horizon_s
        self.report = Report()
        self.last_seen: dict | None = None  # the item as the last reservation saw it

    # --- reservations ----------------------------------------------------------------

    def reserve(self, now: float) -> Go | Hold:
        """Reserve the next create slot, or say how long everyone holds, and why."""
        ok, err = self.report.take()
        window = pacing.window_id(now)
        for _ in range(ATTEMPTS):
            old = self._update(
                "SET next_slot = next_slot + #interval, ok = ok + :ok, err = err + :err",
                "next_slot <= :horizon AND hold_until <= :now AND win = :win"
                " AND (next_slot > :now OR (next_slot >= catchup_floor AND catchup_floor > :recent))",
                {
                    ":now": now,
                    ":horizon": now + self.horizon,
                    ":win": window,
                    ":ok": ok,
                    ":err": err,
                    ":recent": now - CATCH_UP_S - self.horizon,
                },
                names={"#interval": "interval"},
            )
            if "current" not in old:  # the common case: a slot queued ahead (or owed after a hold)
                self.last_seen = {**old, "ok": int(old["ok"]) + ok, "err": int(old["err"]) + err}
                self._after(now)
                return Go(float(old["next_slot"]))
            item = old["current"]
            if item is None or "interval" not in item:  # no pacer yet (or one from before it learned rates)
                self._create(now)
                continue
            self.last_seen = item
            hold = float(item.get("hold_until", 0))
            if hold > now:
                self.report.ok += ok  # not counted yet: carried by the next reservation
                self.report.err += err
                return Hold(
                    hold,
                    str(item.get("hold_reason") or "provider asked us to wait"),
                    str(item.get("hold_kind", "rate")),
                )
            next_slot = float(item["next_slot"])
            if next_slot > now + self.horizon:
                self.report.ok += ok
                self.report.err += err
                return Hold(next_slot - self.horizon, "create queue is full", "queue")
            # A stale slot (an idle pacer) or a new breaker window: one write on exactly what was read.
            floor = float(item.get("catchup_floor", 0))
            idle_at = float(item.get("idle_at", 0))
            if next_slot > now:
                slot = next_slot
            elif now - CATCH_UP_S - self.horizon < floor < now:  # just after a 503's hold: make up its slots
                slot = max(next_slot, floor)
            else:
                slot = idle_at = now  # the slot was free: the fleet sends slower than the rate allows
            counts = _window(item).at(window).add(ok, err)
            # A window that ended calm ends the breaker's run of trips.
            trips = int(item.get("trips", 0)) if pacing.breaker_open(_window(item)) else 0
            won = self._update(
                "SET next_slot = :next, win = :win, ok = :ok, err = :err, prev_ok = :pok, prev_err = :perr,"
                " trips = :trips, idle_at = :idle",
                "next_slot = :seen AND win = :seen_win AND hold_until <= :now",
                {
                    ":next": slot + float(item["interval"]),
                    ":win": window,
                    ":ok": counts.ok,
                    ":err": counts.err,
                    ":pok": counts.prev_ok,
                    ":perr": counts.prev_err,
                    ":trips": trips,
                    ":idle": idle_at,
                    ":seen": item["next_slot"],
                    ":seen_win": item["win"],
                    ":now": now,
                },
            )
            if "current" not in won:
                self.last_seen = {**item, "win": window, "ok": counts.ok, "err": counts.err, "trips": trips}
                self.last_seen |= {"prev_ok": counts.prev_ok, "prev_err": counts.prev_err, "idle_at": idle_at}
                self._after(now)
                return Go(slot)
        self.report.ok += ok
        self.report.err += err
        return Hold(now + float((self.last_seen or {}).get("interval", 1.0)) * ATTEMPTS, "pacer contention", "queue")

    def _create(self, now: float) -> None:
        """Set the pacer up on first use (or over one from before it learned rates), keeping any
        hold already placed; whoever loses this race just reads the winner's item."""
        rate = pacing.start(self.start_rate, self.ceiling, now)
        fields = {"next_slot": now, "win": pacing.window_id(now), "ok": 0, "err": 0, "prev_ok": 0, "prev_err": 0}
        fields |= {"trips": 0, **_rate_fields(rate)}
        names = {f"#{k}": k for k in fields}
        values = {f":{k}": v for k, v in fields.items()} | {":zero": 0}
        sets = [f"#{k} = :{k}" for k in fields]
        sets += ["hold_until = if_not_exists(hold_until, :zero)", "catchup_floor = if_not_exists(catchup_floor, :zero)"]
        try:
            self.client.update_item(
                TableName=self.table,
                Key=typed({"asset_id": PACER_ID}),
                UpdateExpression="SET " + ", ".join(sets),
                ConditionExpression="attribute_not_exists(#interval)",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=typed(values),
            )
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise

    def _after(self, now: float) -> None:
        """What a reservation's view of the item calls for: the breaker, a grown rate, a new ceiling."""
        seen = self.last_seen or {}
        if pacing.breaker_open(_window(seen).at(pacing.window_id(now))):
            trips = int(seen.get("trips", 0)) + 1
            seconds = pacing.breaker_cooldown(trips)
            failed = int(seen.get("err", 0)) + int(seen.get("prev_err", 0))
            reason = f"breaker: {failed} of the last requests failed"
            self.hold(now + seconds, "errors", reason, trips=trips, now=now)
            return
        rate = rate_of(seen)
        if rate is None:
            return
        ceiling = self.ceiling
        if rate.ceiling != ceiling:  # redeployed with another ProviderRateLimit
            self._set_rate(rate, pacing.start(rate.rate, ceiling, now) if ceiling else _uncapped(rate), now)
            return
        grown = pacing.grow(rate, now, _limiting(seen, now))
        if grown is not None:
            self._set_rate(rate, grown, now)

    # --- what the provider said -------------------------------------------------------------

    def saw(self, ok: bool) -> None:
        """Count one request's outcome for the breaker (a failure of the request, not a 429 or a 4xx)."""
        if ok:
            self.report.ok += 1
        else:
            self.report.err += 1

    def throttled(self, now: float) -> None:
        """A 429: cut the rate, once per episode (the hold is `hold`'s business)."""
        for _ in range(3):
            rate = rate_of(self.last_seen or {}) or rate_of(self._get() or {})
            if rate is None:
                return
            cut = pacing.cut(rate, now)
            if cut is None or self._set_rate(rate, cut, now):
                return

    def told(self, limit_per_s: float | None, now: float) -> None:
        """A header stated the provider's limit: pace just under it."""
        rate = rate_of(self.last_seen or {})
        if rate is not None:
            new = pacing.told(rate, limit_per_s, now)
            if new is not None:
                self._set_rate(rate, new, now)

    def hold(
        self,
        until: float,
        kind: str = "rate",
        reason: str = "provider asked us to wait",
        trips: int | None = None,
        now: float | None = None,
    ):
        """Hold every create until `until`; an earlier hold never shortens a later one. After a
        503's hold, some of the slots it cost are made up (`pacing.resume_from`)."""
        now = until if now is None else now
        floor = pacing.resume_from(until, now, kind)
        values = {":until": until, ":kind": kind, ":reason": reason[:200], ":floor": floor}
        # Nor is the rate what holds the fleet back until a whole step after the hold (`_limiting`).
        expression = (
            "SET hold_until = :until, hold_kind = :kind, hold_reason = :reason, catchup_floor = :floor,"
            " idle_at = :until"
        )
        if trips is not None:
            expression += ", trips = :trips"
            values[":trips"] = trips
        try:
            self.client.update_item(
                TableName=self.table,
                Key=typed({"asset_id": PACER_ID}),
                UpdateExpression=expression,
                ConditionExpression="attribute_not_exists(hold_until) OR hold_until < :until",
                ExpressionAttributeValues=typed(values),
            )
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise

    # --- the rate -------------------------------------------------------------------------------

    def _set_rate(self, seen: Rate, new: Rate, now: float) -> bool:
        """Write `new` if the rate is still as `seen` (so each step happens once); False if it moved."""
        values = {f":{k}": v for k, v in _rate_fields(new).items()}
        values |= {":seen_adjusted": seen.adjusted_at, ":seen_cut": seen.cut_at}
        sets = ", ".join(f"#{k} = :{k}" for k in _rate_fields(new))
        result = self._update(
            f"SET {sets}",
            "adjusted_at = :seen_adjusted AND cut_at = :seen_cut",
            values,
            names={f"#{k}": k for k in _rate_fields(new)},
        )
        if "current" in result:
            self.last_seen = result["current"]
            return False
        self.last_seen = {**(self.last_seen or {}), **_rate_fields(new)}
        return True

    def state(self) -> dict | None:
        """The item as it stands (for `migrator status`)."""
        return self._get()

    def _get(self) -> dict | None:
        resp = self.client.get_item(TableName=self.table, Key=typed({"asset_id": PACER_ID}), ConsistentRead=True)
        return to_item(resp.get("Item"))

    def _update(self, expression: str, condition: str, values: dict, names: dict | None = None) -> dict:
        """ALL_OLD attributes on success; {"current": item or None} when the condition failed."""
        request = {
            "TableName": self.table,
            "Key": typed({"asset_id": PACER_ID}),
            "UpdateExpression": expression,
            "ConditionExpression": condition,
            "ExpressionAttributeValues": typed(values),
            "ReturnValues": "ALL_OLD",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        if names:
            request["ExpressionAttributeNames"] = names
        try:
            resp = self.client.update_item(**request)
        except ClientError as exc:
            if is_condition_failure(exc):
                return {"current": to_item(exc.response.get("Item"))}
            raise
        return to_item(resp.get("Attributes")) or {"current": None}


def _rate_fields(rate: Rate) -> dict:
    fields = {
        "rate": rate.rate,
        # Nanoseconds, not the milliseconds other times are kept to: at 300/s a millisecond is 10 %.
        "interval": Decimal(f"{rate.interval:.9f}"),
        "rate_source": rate.source,
        "limit_seen": rate.limit if rate.limit is not None else 0,
        "slow_start": rate.slow_start,
        "adjusted_at": rate.adjusted_at,
        "quiet_steps": rate.quiet_steps,
        "cut_at": rate.cut_at,
        "ceiling": rate.ceiling if rate.ceiling is not None else 0,
    }
    return fields


def rate_of(item: dict) -> Rate | None:
    """The pacing.Rate an item records; None for an item without one."""
    if not item or "rate" not in item:
        return None
    limit, ceiling = float(item.get("limit_seen", 0)), float(item.get("ceiling", 0))
    return Rate(
        rate=float(item["rate"]),
        source=str(item.get("rate_source", "start")),
        ceiling=ceiling if ceiling > 0 else None,
        limit=limit if limit > 0 else None,
        slow_start=bool(item.get("slow_start", True)),
        adjusted_at=float(item.get("adjusted_at", 0)),
        quiet_steps=int(item.get("quiet_steps", 0)),
        cut_at=float(item.get("cut_at", 0)),
    )


def _limiting(item: dict, now: float) -> bool:
    """Whether the rate is what holds the fleet back: no reservation found its slot already free
    (`idle_at`) for a whole growth step. A fleet slower than its rate finds free slots all the time,
    and success then says nothing about a higher rate (`pacing.grow`)."""
    return now - float(item.get("idle_at", 0)) >= pacing.STEP_S


def _window(item: dict) -> Window:
    return Window(
        int(item.get("win", 0)),
        int(item.get("ok", 0)),
        int(item.get("err", 0)),
        int(item.get("prev_ok", 0)),
        int(item.get("prev_err", 0)),
    )


def _uncapped(rate: Rate) -> Rate:
    from dataclasses import replace

    return replace(rate, ceiling=None, source="learned" if rate.source == "ceiling" else rate.source)
