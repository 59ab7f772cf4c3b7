"""The pacer's decisions as pure functions of a worker's view of the `#pacer` item: use it to say what a reservation
takes, what a hold or a new rate moves, and what an answer tells the fleet (pacer.py makes the writes).

A view is the item as DynamoDB returned it (`dynamo.to_item`: numbers as Decimal) or as a worker
patched it after its own write; every function here reads it and returns values or small frozen
dataclasses, never a write. The fields are described in pacer.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal

from . import pacing
from .fate import Outcome, OutcomeKind
from .pacing import CATCH_UP_KINDS, CATCH_UP_S, OWED_WITHIN_S, Rate, Window
from .retry import DEFAULT_THROTTLE_S

# A slot further than this when reserved is confirmed with one read when it is due: a hold or
# a new rate may have moved it. Nearer ones go as they are (a hold placed in the meantime
# costs at most this much of the fleet's sending).
CONFIRM_AFTER_S = 1.0
# A confirmed slot this close is due now: the item keeps times to the millisecond.
DUE_WITHIN_S = 0.001
# The item stays under 1 KB, one write unit per write (a reason is the longest field).
REASON_MAX = 200
# Slots handed out move with a new rate only by at least this much: the item keeps times to the
# millisecond, and a smaller shift would round to nothing for a write.
RESCALE_MIN_S = 0.0005


@dataclass(frozen=True)
class Go:
    at: float  # start the call at this time (may be now, or just past after a hold)
    ticket: int = 0  # the slot's number, for `confirm`
    confirm: bool = False  # the slot was far: `confirm` it when it is due


@dataclass(frozen=True)
class Hold:
    until: float  # do not call before this time
    reason: str
    kind: str = "rate"
    spread: float = 0.0  # come back within this long after `until`, not all at once


@dataclass(frozen=True)
class FleetHold:
    """A hold to place on the whole fleet (`Pacer.hold`), with the item's fields it sets besides."""

    until: float
    kind: str
    reason: str
    extra: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class RateStep:
    """A new rate to write, conditioned on the one seen still being the item's (`Pacer._set_rate`)."""

    seen: Rate
    new: Rate


# --- the queue as a view shows it ------------------------------------------------------------------


def reach(item: Mapping | None, within: float | None, concurrency: int) -> float:
    """How far ahead of now a reservation may take its slot: the queue's horizon, or less when the
    caller can wait only `within` seconds."""
    interval = float((item or {}).get("interval", 1.0))
    horizon = pacing.horizon(concurrency, interval)
    return horizon if within is None else max(0.0, min(horizon, within))


def spread(item: Mapping | None, concurrency: int) -> float:
    """Workers held together come back spread over the time the fleet's slots take (so the
    item does not take a fleet's writes at once); the spread costs no slot."""
    return concurrency * float((item or {}).get("interval", 0.0))


def hold_in_force(item: Mapping, now: float, concurrency: int) -> Hold | None:
    """The hold the item records, when it is still in force at `now`."""
    until = float(item.get("hold_until", 0))
    if until <= now:
        return None
    reason = str(item.get("hold_reason") or "provider asked us to wait")
    return Hold(until, reason, str(item.get("hold_kind", "rate")), spread(item, concurrency))


def blocked(item: Mapping, now: float, within: float | None, concurrency: int) -> Hold | None:
    """Why a worker cannot reserve by this view: a hold in force, or a queue beyond its reach."""
    held = hold_in_force(item, now, concurrency)
    if held is not None:
        return held
    reach_s = reach(item, within, concurrency)
    next_slot = float(item["next_slot"])
    if next_slot > now + reach_s:
        return Hold(next_slot - reach_s, "create queue is full", "queue", spread(item, concurrency))
    return None


def known_hold(seen: Mapping | None, now: float, within: float | None, concurrency: int) -> Hold | None:
    """`blocked` by a worker's last view, when it has one of a pacer that paces (no read, no write)."""
    if not seen or "interval" not in seen:
        return None
    return blocked(seen, now, within, concurrency)


def owed_window(now: float) -> tuple[float, float]:
    """What a slot owed after a hold must meet to be taken at `now` (as `pacing.slot_for` makes them
    up): the hold's resume point (`catchup_floor`) after the first value, the slot at or after the second."""
    return now - CATCH_UP_S - OWED_WITHIN_S, now - CATCH_UP_S


def queued(item: Mapping, now: float, window: int, reach_s: float) -> bool:
    """Whether the item as seen takes the common reservation (the first write's condition): a
    slot queued ahead within reach, or one owed after a hold, in the current breaker window."""
    next_slot, floor = float(item["next_slot"]), float(item.get("catchup_floor", 0))
    if next_slot > now + reach_s or float(item.get("hold_until", 0)) > now:
        return False
    if int(item.get("win", -1)) != window:
        return False
    recent, owed_from = owed_window(now)
    owed = floor > recent and next_slot >= floor and next_slot >= owed_from
    return next_slot > now or owed


# --- a reservation ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Taken:
    """A slot the common reservation took, and the item as it is after that write."""

    slot: float
    ticket: int
    view: dict


def taken_from_queue(old: Mapping, ok: int, err: int) -> Taken:
    """The slot the common write took, from the item before it (ALL_OLD) and the outcomes it carried."""
    slot, ticket = float(old["next_slot"]), int(old.get("seq", 0))
    after: dict[str, Decimal | int] = {"next_slot": Decimal(str(old["next_slot"])) + Decimal(str(old["interval"]))}
    after |= {"seq": ticket + 1, "ok": int(old["ok"]) + ok, "err": int(old["err"]) + err}
    return Taken(slot, ticket, {**old, **after})


@dataclass(frozen=True)
class FreshSlot:
    """A slot taken by a write on exactly the item read: a stale slot (an idle pacer), one owed after
    a hold, or the first of a new breaker window."""

    slot: float
    ticket: int
    next_slot: float  # the next free slot after this one
    idle_at: float
    counts: Window  # the breaker's windows with this reservation's outcomes
    trips: int

    def view(self, item: Mapping) -> dict:
        """The item after the write that takes this slot."""
        counts = self.counts
        view = {**item, "next_slot": self.next_slot, "seq": self.ticket + 1}
        view |= {"win": counts.id, "ok": counts.ok, "err": counts.err, "trips": self.trips}
        view |= {"prev_ok": counts.prev_ok, "prev_err": counts.prev_err, "idle_at": self.idle_at}
        return view


def fresh_slot(item: Mapping, now: float, window: int, ok: int, err: int) -> FreshSlot:
    """The slot a reservation at `now` takes from the item as read, carrying `ok` and `err` outcomes."""
    slot, idle = pacing.slot_for(float(item["next_slot"]), float(item.get("catchup_floor", 0)), now)
    seen = window_of(item)
    # A window that ended calm ends the breaker's run of trips.
    trips = int(item.get("trips", 0)) if pacing.breaker_open(seen) else 0
    return FreshSlot(
        slot=slot,
        ticket=int(item.get("seq", 0)),
        next_slot=slot + float(item["interval"]),
        idle_at=now if idle else float(item.get("idle_at", 0)),
        counts=seen.at(window).add(ok, err),
        trips=trips,
    )


def go_for(slot: float, ticket: int, now: float) -> Go:
    """A slot handed out: confirmed when it is due if it is far (`CONFIRM_AFTER_S`)."""
    return Go(slot, ticket, slot - now > CONFIRM_AFTER_S)


def contention_hold(seen: Mapping | None, now: float, attempts: int, concurrency: int) -> Hold:
    """The wait of a worker that lost `attempts` races in a row for a slot."""
    interval = float((seen or {}).get("interval", 1.0))
    return Hold(now + interval * attempts, "pacer contention", "queue", spread(seen, concurrency))


def ticket_time(item: Mapping, ticket: int) -> float:
    """When slot `ticket` is due by the item as it stands: every slot handed out is spaced by the
    current interval back from the next free one (holds and rate changes move them all)."""
    seq = int(item.get("seq", 0))
    return float(item["next_slot"]) - (seq - ticket) * float(item["interval"])


def confirmed(item: Mapping, go: Go, now: float) -> Go:
    """Where a far slot is by the item read when it is due; the answer may be later (confirm it again)."""
    hold_until = float(item.get("hold_until", 0))
    at = max(ticket_time(item, go.ticket), hold_until)
    if at <= now + DUE_WITHIN_S:
        return Go(now, go.ticket, False)
    return Go(at, go.ticket, at - now > CONFIRM_AFTER_S or hold_until > now)


def fresh_item(start_rate: float, ceiling: float | None, now: float) -> dict:
    """The fields a pacer is set up with on first use (beside the hold, the floor and the count it keeps)."""
    fields = {"next_slot": now, "win": pacing.window_id(now), "ok": 0, "err": 0, "prev_ok": 0, "prev_err": 0}
    return fields | {"trips": 0, **rate_fields(pacing.start(start_rate, ceiling, now))}


# --- the in-flight bound ---------------------------------------------------------------------------


def in_flight_of(item: Mapping, now: float, issued: int) -> int:
    """`pacing.in_flight` by the item as seen, with `issued` more slots."""
    queued_slots = (float(item["next_slot"]) - now) / float(item["interval"]) - 1
    since = int(item.get("seq", 0)) + issued - int(item.get("tallied_seq", 0))
    lag = now - float(item.get("tallied_at", now))
    finishing = float(item.get("finish_rate", 0))
    return pacing.in_flight(float(item.get("processing", 0)), since, queued_slots, finishing, lag)


def near_bound(seen: Mapping, now: float, concurrency: int, max_in_flight: int | None) -> bool:
    """Whether a view puts creates in flight within two slots per worker of the bound: the others
    may have taken those since, so the worker looks (a read) before it writes (a slot taken past
    the bound is a write for nothing; at one slot per worker, a quarter of the slots in the fleet
    model were)."""
    if "interval" not in seen:
        return False
    return in_flight_of(seen, now, 0) + 2 * concurrency > (max_in_flight or 0)


def bound_hold(item: Mapping, now: float, issued: int, max_in_flight: int | None, concurrency: int) -> Hold | None:
    """A worker's wait when creates in flight (with `issued` more slots) pass the provider's bound:
    it looks again after `pacing.in_flight_wait`, the fleet is not held. None: within the bound."""
    count = in_flight_of(item, now, issued)
    if count <= (max_in_flight or 0):
        return None
    reason = f"about {count - 1} creates in flight at the provider; ProviderMaxInFlight is {max_in_flight}"
    return Hold(now + pacing.in_flight_wait(concurrency), reason, "in_flight")


def bound_mark(item: Mapping, now: float, reason: str) -> tuple[float, str] | None:
    """What the item should say of the bound for `migrator status` (until when, and why, in half a
    reason's room), when the last note has run out; None while it stands (one writer a period)."""
    if float(item.get("bound_until", 0)) > now:
        return None
    return now + pacing.BOUND_MARK_S, reason[: REASON_MAX // 2]


# --- what a reservation's view calls for ----------------------------------------------------------


def after_reservation(seen: Mapping, now: float, ceiling: float | None) -> FleetHold | RateStep | None:
    """What the view a reservation left calls for: the breaker's hold, the rate restarted under a new
    ceiling (a redeploy with another ProviderRateLimit), a grown rate; None: nothing."""
    if pacing.breaker_open(window_of(seen).at(pacing.window_id(now))):
        trips = int(seen.get("trips", 0)) + 1
        failed = int(seen.get("err", 0)) + int(seen.get("prev_err", 0))
        reason = f"breaker: {failed} of the last requests failed"
        return FleetHold(now + pacing.breaker_cooldown(trips), "errors", reason, {"trips": trips})
    rate = rate_of(seen)
    if rate is None:
        return None
    if rate.ceiling != ceiling:
        restarted = pacing.start(rate.rate, ceiling, now) if ceiling else uncapped(rate)
        return RateStep(rate, replace(restarted, stated=rate.stated))
    grown = pacing.grow(rate, now, limiting(seen, now))
    return RateStep(rate, grown) if grown is not None else None


def limiting(item: Mapping, now: float) -> bool:
    """Whether the rate is what holds the fleet back: no reservation found its slot already free
    (`idle_at`) for a whole growth step. A fleet slower than its rate finds free slots all the time,
    and success then says nothing about a higher rate (`pacing.grow`)."""
    return now - float(item.get("idle_at", 0)) >= pacing.STEP_S


def uncapped(rate: Rate) -> Rate:
    """The rate with the operator's ceiling lifted (ProviderRateLimit set back to none)."""
    return replace(rate, ceiling=None, source="learned" if rate.source == "ceiling" else rate.source)


# --- what the provider said ------------------------------------------------------------------------


@dataclass(frozen=True)
class Heard:
    """What one paced call's answer tells the fleet, in the order the pacer applies it."""

    limit_per_s: float | None = None  # a limit the provider stated (`Pacer.told`)
    cut: bool = False  # a 429: cut the rate, once per episode
    account_reason: str | None = None  # an account limit: hold the fleet for its cooldown
    retry_after: float | None = None  # the provider's own wait, for the account hold
    hold: FleetHold | None = None  # any other fleet hold the answer asks for
    ok: bool | None = None  # the request's outcome for the breaker; None: it counts as neither


def heard(outcome: Outcome, now: float) -> Heard:
    """What `outcome` tells the fleet: the stated limit, a throttle's response by its scope
    (`pacing.response`: a 429 holds the fleet and cuts the rate, an account limit holds it, a 503
    with Retry-After only counts as a failure), and an outcome for the breaker (a failure of the
    request; a 4xx is not)."""
    signal = outcome.signal
    limit = signal.limit_per_s if signal is not None else None
    if outcome.kind is not OutcomeKind.THROTTLED:
        return Heard(limit, ok=outcome.kind is not OutcomeKind.TRANSIENT)
    response = pacing.response(outcome.scope)
    asked = outcome.retry_after if outcome.retry_after is not None else DEFAULT_THROTTLE_S
    account, hold = None, None
    if response.hold == "account":
        account = f"{outcome.error}: the provider's account limit"
    elif response.hold is not None:
        hold = FleetHold(now + asked, response.hold, f"{outcome.error}: the provider asked for {asked:g} s")
    return Heard(limit, response.cut, account, outcome.retry_after, hold, False if response.failure else None)


def account_fleet_hold(seen: Mapping, now: float, reason: str, retry_after: float | None) -> FleetHold:
    """An account limit's hold: a cooldown that doubles while it repeats (`pacing.account_cooldown`),
    or the provider's Retry-After when that is longer."""
    trips = pacing.account_trips(int(seen.get("account_trips", 0)), float(seen.get("account_until", 0)), now)
    until = now + max(pacing.account_cooldown(trips), retry_after or 0.0)
    return FleetHold(until, "account", reason, {"account_trips": trips, "account_until": until})


# --- holds and rates as the item records them ------------------------------------------------------


@dataclass(frozen=True)
class HoldWrite:
    """A hold's write on the item as seen: its fields, and how far the slots handed out move with it."""

    fields: dict
    shift: float  # seconds added to `next_slot`; 0: none


def hold_write(
    item: Mapping | None, until: float, kind: str, reason: str, now: float, extra: Mapping | None = None
) -> HoldWrite | None:
    """The write that holds the fleet until `until`, placed at `now`; None when the hold seen already
    lasts as long (an earlier hold never shortens a later one). Slots already handed out move past it
    by what it adds to a hold in force; after a hold of CATCH_UP_KINDS some of the slots it cost are
    made up (`pacing.resume_from`)."""
    seen_hold = float(item["hold_until"]) if item is not None and "hold_until" in item else 0.0
    if seen_hold >= until:
        return None
    resume = pacing.resume_from(until, now, kind)
    # Nor is the rate what holds the fleet back until a whole step after the hold (`limiting`).
    fields = {"hold_until": until, "hold_kind": kind, "hold_reason": reason[:REASON_MAX], "idle_at": until}
    fields |= {"catchup_floor": resume if kind in CATCH_UP_KINDS else 0, **(extra or {})}
    shift = 0.0
    if item and "interval" in item and float(item["next_slot"]) > now:
        shift = max(0.0, resume - max(now, seen_hold))
    return HoldWrite(fields, shift)


def millis(seconds: float) -> Decimal:
    """A shift of `next_slot` as the item keeps times: to the millisecond."""
    return Decimal(f"{seconds:.3f}")


def view_after(old: Mapping, fields: Mapping, shift: Decimal | None = None) -> dict:
    """The item after a write that set `fields` (and moved `next_slot` by `shift`), from the item
    before it (ALL_OLD)."""
    view = {**old, **fields}
    if shift is not None:
        view["next_slot"] = Decimal(str(old["next_slot"])) + shift
    return view


def rescale(item: Mapping, interval: float | Decimal, now: float) -> float:
    """How far `next_slot` moves for the slots handed out to take a new `interval` from the next one
    due (after any hold in force); 0 when by less than RESCALE_MIN_S."""
    if "interval" not in item:
        return 0.0
    pivot = max(now, float(item.get("hold_until", 0)))
    ahead = float(item["next_slot"]) - pivot
    shift = ahead * (float(interval) / float(item["interval"]) - 1) if ahead > 0 else 0.0
    return shift if abs(shift) >= RESCALE_MIN_S else 0.0


def rate_fields(rate: Rate) -> dict:
    """The item's fields that record `rate` (`rate_of` reads them back)."""
    return {
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
        "stated": rate.stated if rate.stated is not None else 0,
    }


def rate_of(item: Mapping) -> Rate | None:
    """The pacing.Rate an item records; None for an item without one."""
    if not item or "rate" not in item:
        return None
    limit, ceiling = float(item.get("limit_seen", 0)), float(item.get("ceiling", 0))
    stated = float(item.get("stated", 0))
    return Rate(
        rate=float(item["rate"]),
        source=str(item.get("rate_source", "start")),
        ceiling=ceiling if ceiling > 0 else None,
        limit=limit if limit > 0 else None,
        slow_start=bool(item.get("slow_start", True)),
        adjusted_at=float(item.get("adjusted_at", 0)),
        quiet_steps=int(item.get("quiet_steps", 0)),
        cut_at=float(item.get("cut_at", 0)),
        stated=stated if stated > 0 else None,
    )


def window_of(item: Mapping) -> Window:
    """The breaker's two windows of request outcomes as the item records them."""
    return Window(
        int(item.get("win", 0)),
        int(item.get("ok", 0)),
        int(item.get("err", 0)),
        int(item.get("prev_ok", 0)),
        int(item.get("prev_err", 0)),
    )
