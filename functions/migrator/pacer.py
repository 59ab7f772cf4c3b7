"""The fleet's pacer on its one shared `#pacer` item: reserve a slot before every provider call and tell it the answer.

`Pacer` is one worker's side of it and `PacerTable` the item's reads and conditional writes; what
they write (the slot a reservation takes, what a hold or a new rate moves, what an answer tells the
fleet) is decided by the pure functions of `pacer_item` and `pacing`.

Every uploader invocation (and every paced lookup or poll) shares one control item in the
ledger table (`#pacer`):

- `next_slot`, `interval`, `seq`: the time of the next free slot, the seconds between slots
  (1 / the rate), and the number of slots handed out. Reserving one advances `next_slot` by
  `interval` and `seq` by one, read from the item itself (`SET next_slot = next_slot +
  interval`), so one conditional write hands out slots at the fleet's rate however many
  Lambdas run. A slot is a ticket: ticket n is due at `next_slot - (seq - n) * interval`,
  so a hold or a new rate moves every slot already handed out, and a worker that waits long
  for its slot reads the item once when it is due (`confirm`) to learn where it went.
- the queue reaches `pacing.horizon` ahead: room for a slot per worker the fleet may run
  (MaximumConcurrency), so each takes its slot in one write and waits it out; a worker that
  cannot wait that long in its invocation does not take one (`within`).
- the rate and how it came to be (`pacing.Rate`: start, told by headers, learned,
  ceiling); whoever sees that it is due to grow, or meets a 429, changes it with a
  write conditioned on the values it read, so each step happens once.
- `hold_until`, `hold_kind`, `hold_reason`: no slot is handed out before `hold_until`, and
  slots already handed out move past it. Kinds: `rate` (a 429), `errors` (the breaker),
  `account` (an account limit, e.g. Cloudflare's 413), `headers` (the provider said no
  requests remain in its window). After a hold
  that was not about the rate or a bound (`pacing.CATCH_UP_KINDS`) some of the slots it
  cost are made up (`catchup_floor`, `pacing.slot_for`).
- `idle_at`: the last time a reservation found its slot already free, or the end of the
  last hold. The rate grows only after a whole step without either: a fleet that sends
  slower than its rate (too few workers, slow claims) would otherwise grow a rate nobody
  sends at, and a step spent held says nothing about the rate either.
- `win`, `ok`, `err`, `prev_ok`, `prev_err`, `trips`: the breaker's two windows of request
  outcomes. Each reservation carries the outcomes its worker saw since its last one, so
  counting costs no extra write.
- `processing`, `tallied_seq`, `tallied_at`: the ledger's count of assets processing at the
  provider, kept by the tally from the stream, and the slots handed out by the time its batch
  of the stream reached (`r0`..`r11`, a ring of recent (time, ticket) the reservations note,
  `pacing.issued_by`). Creates in flight are about `processing + seq - tallied_seq` plus the
  slots queued (`pacing.in_flight`); over the provider's bound (`max_in_flight`) a worker
  waits and looks again with a read, and `bound_until`, `bound_reason` say so for status.

A reservation is one conditional UpdateItem in the common case. A worker whose last view of
the item says a write would fail (a hold, a queue beyond its reach, the in-flight bound)
waits, or looks with a read, instead of writing: a failed conditional write consumes write
capacity like a successful one. So the item takes about one write per slot plus a few a
second, within what one DynamoDB item sustains (about 1,000 writes/s), hence the 500/s cap
on `ProviderRateLimit`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from . import pacer_item, pacing
from .dynamo import is_condition_failure, to_item, typed
from .fate import Outcome
from .pacer_item import FleetHold, FreshSlot, Go, Hold, HoldWrite, millis, rate_fields, rate_of, view_after
from .pacing import Rate

__all__ = [
    "CREATE",
    "LOOKUP",
    "PACER_ID",
    "POLL",
    "TRACK",
    "TRACKS_PACER_ID",
    "Go",
    "Hold",
    "Pacer",
    "PacerTable",
    "Report",
    "rate_of",
    "wait_for_slot",
]

PACER_ID = "#pacer"
# The tracks worker's own pace, where the provider limits other calls apart from creates (Mux: creates 1/s, the
# rest 5/s): its 429s then neither hold nor cut the creates (`Pacer.for_tracks`).
TRACKS_PACER_ID = "#pacer#tracks"
ATTEMPTS = 8  # lost races re-read; 8 is plenty at any sane concurrency
DEFAULT_CONCURRENCY = 5
# What a reservation is for: creates count toward the provider's in-flight bound.
CREATE, LOOKUP, POLL, TRACK = "create", "lookup", "poll", "track"


@dataclass
class Report:
    """Outcomes a worker saw since its last reservation, carried by the next one."""

    ok: int = 0
    err: int = 0

    def take(self) -> tuple[int, int]:
        counts, self.ok, self.err = (self.ok, self.err), 0, 0
        return counts


class PacerTable:
    """The `#pacer` item's reads and conditional writes, each as one DynamoDB request; what they
    write is decided in `pacer_item`. A write returns the item before it (ALL_OLD) when its
    condition held, else {"current": the item as it is, or None}."""

    def __init__(self, table_name: str, client: Any, item_id: str = PACER_ID):
        self.table = table_name
        self.client = client
        self.item_id = item_id  # PACER_ID: the fleet's; TRACKS_PACER_ID: the tracks worker's own (Pacer.for_tracks)

    def get(self) -> dict | None:
        resp = self.client.get_item(TableName=self.table, Key=typed({"asset_id": self.item_id}), ConsistentRead=True)
        return to_item(resp.get("Item"))

    def update(self, expression: str, condition: str, values: dict, names: dict | None = None) -> dict:
        """ALL_OLD attributes on success; {"current": item or None} when the condition failed."""
        request = {
            "TableName": self.table,
            "Key": typed({"asset_id": self.item_id}),
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

    def create(self, fields: dict) -> None:
        """Set the pacer up with `fields` unless it paces already, keeping any hold already placed and
        the tally's count; whoever loses this race reads the winner's item."""
        names = {f"#{k}": k for k in fields}
        values = {f":{k}": v for k, v in fields.items()} | {":zero": 0}
        sets = [f"#{k} = :{k}" for k in fields]
        sets += ["hold_until = if_not_exists(hold_until, :zero)", "catchup_floor = if_not_exists(catchup_floor, :zero)"]
        sets += ["seq = if_not_exists(seq, :zero)"]
        try:
            self.client.update_item(
                TableName=self.table,
                Key=typed({"asset_id": self.item_id}),
                UpdateExpression="SET " + ", ".join(sets),
                ConditionExpression="attribute_not_exists(#interval)",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=typed(values),
            )
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise

    def take_queued(self, now: float, reach_s: float, window: int, ring: tuple[str, int], ok: int, err: int) -> dict:
        """The common reservation: the next slot, read from the item itself (`pacer_item.queued` is its
        condition as a worker's view shows it), with this worker's outcomes and its ring entry."""
        attribute, tag = ring
        recent, owed_from = pacer_item.owed_window(now)
        return self.update(
            "SET next_slot = next_slot + #interval, seq = if_not_exists(seq, :zero) + :one,"
            f" {attribute} = if_not_exists(seq, :zero) + :tag, ok = ok + :ok, err = err + :err",
            "next_slot <= :reach AND hold_until <= :now AND win = :win AND (next_slot > :now"
            " OR (catchup_floor > :recent AND next_slot >= catchup_floor AND next_slot >= :owed_from))",
            {
                ":now": now,
                ":reach": now + reach_s,
                ":win": window,
                ":ok": ok,
                ":err": err,
                ":zero": 0,
                ":one": 1,
                ":recent": recent,
                ":owed_from": owed_from,
                ":tag": tag,
            },
            names={"#interval": "interval"},
        )

    def take_fresh(self, fresh: FreshSlot, item: dict, now: float, ring: tuple[str, int]) -> dict:
        """Take `fresh` with a write conditioned on exactly the item read."""
        attribute, tag = ring
        counts = fresh.counts
        return self.update(
            f"SET next_slot = :next, seq = :seq, {attribute} = :ring, win = :win, ok = :ok, err = :err,"
            " prev_ok = :pok, prev_err = :perr, trips = :trips, idle_at = :idle",
            "next_slot = :seen AND win = :seen_win AND hold_until <= :now",
            {
                ":next": fresh.next_slot,
                ":seq": fresh.ticket + 1,
                ":ring": tag + fresh.ticket,
                ":win": counts.id,
                ":ok": counts.ok,
                ":err": counts.err,
                ":pok": counts.prev_ok,
                ":perr": counts.prev_err,
                ":trips": fresh.trips,
                ":idle": fresh.idle_at,
                ":seen": item["next_slot"],
                ":seen_win": item["win"],
                ":now": now,
            },
        )

    def mark_bound(self, until: float, reason: str, now: float) -> None:
        """Note that the in-flight bound holds creates back, unless a note stands (one writer a period)."""
        self.update(
            "SET bound_until = :until, bound_reason = :reason",
            "attribute_not_exists(bound_until) OR bound_until <= :now",
            {":until": until, ":reason": reason, ":now": now},
        )

    def hold(self, write: HoldWrite, item: dict | None, until: float) -> tuple[dict, Decimal | None]:
        """Write a hold over the one `item` shows (or over none, when it shows none), and the shift of
        the slots handed out as written."""
        sets = [f"#h{i} = :h{i}" for i in range(len(write.fields))]
        values = {f":h{i}": v for i, v in enumerate(write.fields.values())}
        names = {f"#h{i}": k for i, k in enumerate(write.fields)}
        shift = millis(write.shift) if write.shift > 0 else None
        if shift is not None:  # the slots handed out move with the hold
            sets.append("next_slot = next_slot + :shift")
            values[":shift"] = shift
        if item is not None and "hold_until" in item:
            condition = "hold_until = :seen_hold"
            values[":seen_hold"] = item["hold_until"]
        else:
            condition = "attribute_not_exists(hold_until) OR hold_until < :until"
            values[":until"] = until
        return self.update("SET " + ", ".join(sets), condition, values, names), shift

    def set_rate(self, fields: dict, seen: Rate, shift: float) -> tuple[dict, Decimal | None]:
        """Write a rate's `fields` if the rate is still as `seen`, moving the slots handed out by
        `shift` (0: not at all); the shift as written."""
        values = {f":{k}": v for k, v in fields.items()}
        values |= {":seen_adjusted": seen.adjusted_at, ":seen_cut": seen.cut_at}
        sets = [f"#{k} = :{k}" for k in fields]
        rescale = millis(shift) if shift else None
        if rescale is not None:
            sets.append("next_slot = next_slot + :rescale")
            values[":rescale"] = rescale
        result = self.update(
            "SET " + ", ".join(sets),
            "adjusted_at = :seen_adjusted AND cut_at = :seen_cut",
            values,
            names={f"#{k}": k for k in fields},
        )
        return result, rescale


class Pacer:
    """One worker's side of the fleet's pacer: reservations, holds and rate changes, each decided by
    `pacer_item` from this worker's view of the item (`last_seen`) and written through `PacerTable`."""

    def __init__(
        self,
        table_name: str,
        client: Any,
        ceiling_per_s: float = 0.0,
        start_per_s: float = 0.0,
        concurrency: int = DEFAULT_CONCURRENCY,
        max_in_flight: int | None = None,
        create_share: float = 1.0,
        item_id: str = PACER_ID,
    ):
        self.table = PacerTable(table_name, client, item_id)
        self.ceiling = ceiling_per_s if ceiling_per_s > 0 else None
        self.start_rate = start_per_s
        self.concurrency = max(1, concurrency)
        self.max_in_flight = max_in_flight if max_in_flight else None
        self.share = create_share  # of a stated limit, when it covers every call (`told`)
        self.report = Report()
        self.last_seen: dict | None = None  # the item as this worker last saw it
        self._bound_seen = False  # the last look found the in-flight bound reached
        self._read_at: float | None = None  # when this worker last read the item (`_known`)

    @classmethod
    def configured(cls, settings: Any, client: Any, provider: Any) -> Pacer:
        """The fleet's pacer as the settings (`settings.Settings`) and the provider's own pacing facts
        (`providers.base.Provider`) make it: for the uploader, and for reconcile's polls."""
        return cls(
            settings.table_name,
            client,
            settings.rate_ceiling_for(provider.create_rate_per_s),
            settings.start_rate_per_s,
            concurrency=settings.max_concurrency,
            max_in_flight=settings.max_in_flight_for(provider.max_in_flight),
            create_share=settings.create_share if provider.budget_covers_all_calls else 1.0,
        )

    @classmethod
    def for_tracks(cls, settings: Any, client: Any, provider: Any) -> Pacer:
        """The pace the tracks worker's calls take: the fleet's where one budget covers every call (Cloudflare,
        Vimeo, JW Player: a track's call spends what a create would), else one of its own, learned from its own
        429s, with no ceiling a document gives and no in-flight bound."""
        if provider.budget_covers_all_calls:
            return cls.configured(settings, client, provider)
        return cls(settings.table_name, client, 0.0, settings.start_rate_per_s, item_id=TRACKS_PACER_ID)

    # --- reservations ----------------------------------------------------------------

    def reserve(self, now: float, within: float | None = None, purpose: str = CREATE) -> Go | Hold:
        """Reserve the next slot for a create (or a lookup, a poll), or say how long to hold, and why.
        `within`: the longest this caller can wait for its slot (its invocation's time)."""
        ok, err = self.report.take()
        known = self._known(now, within, purpose)
        if known is not None:
            self._carry(ok, err)
            return known
        window = pacing.window_id(now)
        ring = pacing.ring_entry(now)
        item = self.last_seen if self._read_at == now else None  # read just now (`_known`): fresh
        for _ in range(ATTEMPTS):
            reach_s = pacer_item.reach(item or self.last_seen, within, self.concurrency)
            if item is None or pacer_item.queued(item, now, window, reach_s):
                old = self.table.take_queued(now, reach_s, window, ring, ok, err)
                if "current" not in old:  # the common case: a slot queued ahead (or owed after a hold)
                    taken = pacer_item.taken_from_queue(old, ok, err)
                    self.last_seen = taken.view
                    return self._granted(taken.slot, taken.ticket, now, purpose)
                item = old["current"]
                if item is None or "interval" not in item:  # no pacer yet (or one from before it learned rates)
                    self.table.create(pacer_item.fresh_item(self.start_rate, self.ceiling, now))
                    item = self.last_seen = None
                    continue
                self.last_seen = item
            held = pacer_item.blocked(item, now, within, self.concurrency)
            if held is not None:
                self._carry(ok, err)
                return held
            # A stale slot (an idle pacer), owed slots after a hold, or a new breaker window:
            # one write on exactly what was read.
            fresh = pacer_item.fresh_slot(item, now, window, ok, err)
            won = self.table.take_fresh(fresh, item, now, ring)
            if "current" not in won:
                self.last_seen = fresh.view(item)
                return self._granted(fresh.slot, fresh.ticket, now, purpose)
            item = self.last_seen = won["current"]  # the item as it is: the next attempt starts from it
        self._carry(ok, err)
        return pacer_item.contention_hold(self.last_seen, now, ATTEMPTS, self.concurrency)

    def confirm(self, go: Go, now: float) -> Go:
        """Where a far slot is now that it is due: one read. A hold or a rate change since the
        reservation moved every slot handed out; the answer may be later (confirm it again)."""
        item = self.table.get() or {}
        if "interval" not in item:
            return replace(go, confirm=False)
        self.last_seen = item
        return pacer_item.confirmed(item, go, now)

    def _granted(self, slot: float, ticket: int, now: float, purpose: str) -> Go | Hold:
        """A slot was handed out: what the view of the item calls for (`_after`), then the in-flight bound."""
        self._after(now)
        if purpose == CREATE and self.max_in_flight:
            held = self._over_bound(self.last_seen or {}, now, issued=0)
            if held is not None:  # this slot goes unused: its create would pass the provider's bound
                return held
        return pacer_item.go_for(slot, ticket, now)

    def _over_bound(self, item: dict, now: float, issued: int) -> Hold | None:
        """This worker's wait when creates in flight (`pacing.in_flight`, with `issued` more slots)
        pass the provider's bound; the item says so for `migrator status` (`bound_until`, a write
        at most every BOUND_MARK_S), but the fleet is not held: each worker looks again (a read)."""
        held = pacer_item.bound_hold(item, now, issued, self.max_in_flight, self.concurrency)
        self._bound_seen = held is not None
        mark = pacer_item.bound_mark(item, now, held.reason) if held is not None else None
        if mark is not None:
            self.table.mark_bound(*mark, now)
        return held

    def _known(self, now: float, within: float | None, purpose: str) -> Hold | None:
        """A hold this worker knows of without a write: its last view had a hold in force
        (`hold_until` only ever grows) or a queue beyond its reach. While the in-flight bound
        is reached it looks with a read instead (the tally may have counted finished videos):
        the bound costs reads, and a write a wait, not a failed write per worker."""
        known = self.known_hold(now, within)
        if known is not None or purpose != CREATE or not self.max_in_flight:
            return known
        if not self._bound_seen and not pacer_item.near_bound(
            self.last_seen or {}, now, self.concurrency, self.max_in_flight
        ):
            return None
        item = self.table.get() or {}
        if "interval" not in item:
            return None
        self.last_seen, self._read_at = item, now
        held = pacer_item.hold_in_force(item, now, self.concurrency)
        return held if held is not None else self._over_bound(item, now, issued=1)

    def known_hold(self, now: float, within: float | None = None) -> Hold | None:
        """The hold this worker's last view of the item shows, without a read or a write: a hold
        in force (`hold_until` only ever grows), or a queue beyond `within` seconds."""
        return pacer_item.known_hold(self.last_seen, now, within, self.concurrency)

    def _carry(self, ok: int, err: int) -> None:
        """Outcomes not counted yet: carried by the next reservation."""
        self.report.ok += ok
        self.report.err += err

    def _after(self, now: float) -> None:
        """What a reservation's view of the item calls for (`pacer_item.after_reservation`): the
        breaker's hold, a grown rate, a new ceiling."""
        step = pacer_item.after_reservation(self.last_seen or {}, now, self.ceiling)
        if isinstance(step, FleetHold):
            self.hold(step.until, step.kind, step.reason, now=now, extra=dict(step.extra))
        elif step is not None:
            self._set_rate(step.seen, step.new, now)

    # --- what the provider said -------------------------------------------------------------

    def observe(self, outcome: Outcome, now: float) -> None:
        """What one paced call's answer (a create's, a lookup's, a poll's) tells the fleet
        (`pacer_item.heard`): the stated limit, a throttle's response by its scope, and an outcome
        for the breaker."""
        heard = pacer_item.heard(outcome, now)
        if heard.limit_per_s is not None:
            self.told(heard.limit_per_s, now)
        if heard.cut:
            self.throttled(now)
        if heard.account_reason is not None:
            self.account_hold(now, heard.account_reason, heard.retry_after)
        elif heard.hold is not None:
            self.hold(heard.hold.until, heard.hold.kind, heard.hold.reason, now=now)
        if heard.ok is not None:
            self.saw(heard.ok)

    def saw(self, ok: bool) -> None:
        """Count one request's outcome for the breaker (a failure of the request, not a 429 or a 4xx)."""
        if ok:
            self.report.ok += 1
        else:
            self.report.err += 1

    def throttled(self, now: float) -> None:
        """A 429: cut the rate, once per episode (the hold is `hold`'s business)."""
        for _ in range(3):
            rate = rate_of(self.last_seen or {}) or rate_of(self.table.get() or {})
            if rate is None:
                return
            cut = pacing.cut(rate, now)
            if cut is None or self._set_rate(rate, cut, now):
                return

    def told(self, limit_per_s: float | None, now: float) -> None:
        """A header stated the provider's limit: a ceiling (`pacing.told`), under this fleet's share of it."""
        rate = rate_of(self.last_seen or {})
        if rate is not None:
            new = pacing.told(rate, limit_per_s, now, self.share)
            if new is not None:
                self._set_rate(rate, new, now)

    def account_hold(self, now: float, reason: str, retry_after: float | None = None) -> None:
        """An account limit (videos in progress, storage): hold the fleet for a cooldown that
        doubles while it repeats (`pacing.account_cooldown`), or the provider's Retry-After."""
        seen = self.last_seen or self.table.get() or {}
        held = pacer_item.account_fleet_hold(seen, now, reason, retry_after)
        self.hold(held.until, held.kind, held.reason, now=now, extra=dict(held.extra))

    def hold(
        self,
        until: float,
        kind: str = "rate",
        reason: str = "provider asked us to wait",
        now: float | None = None,
        extra: dict | None = None,
    ) -> None:
        """Hold the fleet until `until` (`pacer_item.hold_write`): an earlier hold never shortens a
        later one, slots already handed out move past it, and after a hold of CATCH_UP_KINDS some
        of the slots it cost are made up."""
        now = until if now is None else now
        item = self.last_seen
        for _ in range(3):
            write = pacer_item.hold_write(item, until, kind, reason, now, extra)
            if write is None:
                return
            result, shift = self.table.hold(write, item, until)
            if "current" not in result:
                self.last_seen = view_after(result, write.fields, shift)
                return
            item = result["current"]
            if item is None:  # the item did not exist: the hold is written, on nothing else
                self.last_seen = None
                return
            self.last_seen = item

    # --- the rate -------------------------------------------------------------------------------

    def _set_rate(self, seen: Rate, new: Rate, now: float) -> bool:
        """Write `new` if the rate is still as `seen` (so each step happens once); False if it moved.
        Slots handed out take the new spacing from the next one due (one addition: no reservation
        waits for it; one that slips in between is a few milliseconds off)."""
        fields = rate_fields(new)
        shift = pacer_item.rescale(self.last_seen or {}, fields["interval"], now)
        result, rescale = self.table.set_rate(fields, seen, shift)
        if "current" in result:
            self.last_seen = result["current"]
            return False
        self.last_seen = view_after(result, fields, rescale)
        return True

    def state(self) -> dict | None:
        """The item as it stands (for `migrator status`)."""
        return self.table.get()


def wait_for_slot(
    pacer: Pacer,
    slot: Go | Hold,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    too_far: Callable[[Go, float], bool],
    too_far_reason: str,
) -> Go | Hold:
    """Wait in place until a reserved slot is due, confirming a far one when it is (a hold or a cut may
    have moved it): the slot once due, or a Hold when the fleet is held or when `too_far(slot, wait)`
    says the slot now lies beyond what the caller can wait (a "queue" hold until it, `too_far_reason`)."""
    while isinstance(slot, Go):
        wait = slot.at - clock()
        if too_far(slot, wait):
            return Hold(slot.at, too_far_reason, "queue")
        if wait > 0:
            sleep(wait)
        if not slot.confirm:
            return slot
        slot = pacer.confirm(slot, clock())
    return slot
