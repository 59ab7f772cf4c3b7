"""Cluster-wide pacing of provider calls: one shared item, the rate it learns, holds, the breaker, the in-flight bound.

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

from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from . import pacing
from .dynamo import is_condition_failure, to_item, typed
from .fate import Outcome, OutcomeKind
from .pacing import CATCH_UP_KINDS, CATCH_UP_S, OWED_WITHIN_S, Rate, Window
from .retry import DEFAULT_THROTTLE_S

PACER_ID = "#pacer"
ATTEMPTS = 8  # lost races re-read; 8 is plenty at any sane concurrency
DEFAULT_CONCURRENCY = 5
# A slot further than this when reserved is confirmed with one read when it is due: a hold or
# a new rate may have moved it. Nearer ones go as they are (a hold placed in the meantime
# costs at most this much of the fleet's sending).
CONFIRM_AFTER_S = 1.0
# The item stays under 1 KB, one write unit per write (a reason is the longest field).
REASON_MAX = 200
# What a reservation is for: creates count toward the provider's in-flight bound.
CREATE, LOOKUP, POLL = "create", "lookup", "poll"


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
        concurrency: int = DEFAULT_CONCURRENCY,
        max_in_flight: int | None = None,
        create_share: float = 1.0,
    ):
        self.table = table_name
        self.client = client
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
        ring, tag = pacing.ring_entry(now)
        item = self.last_seen if self._read_at == now else None  # read just now (`_known`): fresh
        for _ in range(ATTEMPTS):
            if item is None or self._queued(item, now, window, within):
                old = self._update(
                    "SET next_slot = next_slot + #interval, seq = if_not_exists(seq, :zero) + :one,"
                    f" {ring} = if_not_exists(seq, :zero) + :tag, ok = ok + :ok, err = err + :err",
                    "next_slot <= :reach AND hold_until <= :now AND win = :win AND (next_slot > :now"
                    " OR (catchup_floor > :recent AND next_slot >= catchup_floor AND next_slot >= :owed_from))",
                    {
                        ":now": now,
                        ":reach": now + self._reach(item or self.last_seen, within),
                        ":win": window,
                        ":ok": ok,
                        ":err": err,
                        ":zero": 0,
                        ":one": 1,
                        ":recent": now - CATCH_UP_S - OWED_WITHIN_S,
                        ":owed_from": now - CATCH_UP_S,
                        ":tag": tag,
                    },
                    names={"#interval": "interval"},
                )
                if "current" not in old:  # the common case: a slot queued ahead (or owed after a hold)
                    slot, ticket = float(old["next_slot"]), int(old.get("seq", 0))
                    after = {"next_slot": Decimal(str(old["next_slot"])) + Decimal(str(old["interval"]))}
                    after |= {"seq": ticket + 1, "ok": int(old["ok"]) + ok, "err": int(old["err"]) + err}
                    self.last_seen = {**old, **after}
                    return self._granted(slot, ticket, now, purpose)
                item = old["current"]
                if item is None or "interval" not in item:  # no pacer yet (or one from before it learned rates)
                    self._create(now)
                    item = self.last_seen = None
                    continue
                self.last_seen = item
            if float(item.get("hold_until", 0)) > now:
                self._carry(ok, err)
                return self._hold_of(item, now)
            next_slot = float(item["next_slot"])
            reach = self._reach(item, within)
            if next_slot > now + reach:
                self._carry(ok, err)
                return Hold(next_slot - reach, "create queue is full", "queue", self._spread(item))
            # A stale slot (an idle pacer), owed slots after a hold, or a new breaker window:
            # one write on exactly what was read.
            slot, idle = pacing.slot_for(next_slot, float(item.get("catchup_floor", 0)), now)
            idle_at = now if idle else float(item.get("idle_at", 0))
            counts = _window(item).at(window).add(ok, err)
            # A window that ended calm ends the breaker's run of trips.
            trips = int(item.get("trips", 0)) if pacing.breaker_open(_window(item)) else 0
            ticket = int(item.get("seq", 0))
            won = self._update(
                f"SET next_slot = :next, seq = :seq, {ring} = :ring, win = :win, ok = :ok, err = :err,"
                " prev_ok = :pok, prev_err = :perr, trips = :trips, idle_at = :idle",
                "next_slot = :seen AND win = :seen_win AND hold_until <= :now",
                {
                    ":next": slot + float(item["interval"]),
                    ":seq": ticket + 1,
                    ":ring": tag + ticket,
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
                self.last_seen = {**item, "next_slot": slot + float(item["interval"]), "seq": ticket + 1}
                self.last_seen |= {"win": window, "ok": counts.ok, "err": counts.err, "trips": trips}
                self.last_seen |= {"prev_ok": counts.prev_ok, "prev_err": counts.prev_err, "idle_at": idle_at}
                return self._granted(slot, ticket, now, purpose)
            item = self.last_seen = won["current"]  # the item as it is: the next attempt starts from it
        self._carry(ok, err)
        interval = float((self.last_seen or {}).get("interval", 1.0))
        return Hold(now + interval * ATTEMPTS, "pacer contention", "queue", self._spread(self.last_seen))

    def _queued(self, item: dict, now: float, window: int, within: float | None) -> bool:
        """Whether the item as seen takes the common reservation (the first write's condition): a
        slot queued ahead within reach, or one owed after a hold, in the current breaker window."""
        next_slot, floor = float(item["next_slot"]), float(item.get("catchup_floor", 0))
        if next_slot > now + self._reach(item, within) or float(item.get("hold_until", 0)) > now:
            return False
        if int(item.get("win", -1)) != window:
            return False
        owed = floor > now - CATCH_UP_S - OWED_WITHIN_S and next_slot >= floor and next_slot >= now - CATCH_UP_S
        return next_slot > now or owed

    def confirm(self, go: Go, now: float) -> Go:
        """Where a far slot is now that it is due: one read. A hold or a rate change since the
        reservation moved every slot handed out; the answer may be later (confirm it again)."""
        item = self._get() or {}
        if "interval" not in item:
            return replace(go, confirm=False)
        self.last_seen = item
        at = ticket_time(item, go.ticket)
        at = max(at, float(item.get("hold_until", 0)))
        if at <= now + 0.001:
            return Go(now, go.ticket, False)
        return Go(at, go.ticket, at - now > CONFIRM_AFTER_S or float(item.get("hold_until", 0)) > now)

    def _granted(self, slot: float, ticket: int, now: float, purpose: str) -> Go | Hold:
        """A slot was handed out: what the view of the item calls for (`_after`), then the in-flight bound."""
        self._after(now)
        if purpose == CREATE and self.max_in_flight:
            held = self._over_bound(self.last_seen or {}, now, issued=0)
            if held is not None:  # this slot goes unused: its create would pass the provider's bound
                return held
        return Go(slot, ticket, slot - now > CONFIRM_AFTER_S)

    def _over_bound(self, item: dict, now: float, issued: int) -> Hold | None:
        """This worker's wait when creates in flight (`pacing.in_flight`, with `issued` more slots)
        pass the provider's bound; the item says so for `migrator status` (`bound_until`, a write
        at most every BOUND_MARK_S), but the fleet is not held: each worker looks again (a read)."""
        count = _in_flight(item, now, issued)
        self._bound_seen = count > (self.max_in_flight or 0)
        if not self._bound_seen:
            return None
        reason = f"about {count - 1} creates in flight at the provider; ProviderMaxInFlight is {self.max_in_flight}"
        if float(item.get("bound_until", 0)) <= now:
            self._mark_bound(now, reason)
        return Hold(now + pacing.in_flight_wait(self.concurrency), reason, "in_flight")

    def _mark_bound(self, now: float, reason: str) -> None:
        """Note on the item that the in-flight bound holds creates back (one writer a period)."""
        values = {":until": now + pacing.BOUND_MARK_S, ":reason": reason[: REASON_MAX // 2], ":now": now}
        self._update(
            "SET bound_until = :until, bound_reason = :reason",
            "attribute_not_exists(bound_until) OR bound_until <= :now",
            values,
        )

    def _known(self, now: float, within: float | None, purpose: str) -> Hold | None:
        """A hold this worker knows of without a write: its last view had a hold in force
        (`hold_until` only ever grows) or a queue beyond its reach. While the in-flight bound
        is reached it looks with a read instead (the tally may have counted finished videos):
        the bound costs reads, and a write a wait, not a failed write per worker."""
        known = self.known_hold(now, within)
        if known is not None:
            return known
        if purpose == CREATE and self.max_in_flight and (self._bound_seen or self._near_bound(now)):
            item = self._get() or {}
            if "interval" not in item:
                return None
            self.last_seen, self._read_at = item, now
            if float(item.get("hold_until", 0)) > now:
                return self._hold_of(item, now)
            return self._over_bound(item, now, issued=1)
        return None

    def _near_bound(self, now: float) -> bool:
        """Whether this worker's last view puts creates in flight within two slots per worker of the
        bound: the others may have taken those since, so it looks (a read) before it writes (a
        slot taken past the bound is a write for nothing; at one slot per worker, a quarter of
        the slots in the fleet model were)."""
        seen = self.last_seen or {}
        if "interval" not in seen:
            return False
        return _in_flight(seen, now, 0) + 2 * self.concurrency > (self.max_in_flight or 0)

    def known_hold(self, now: float, within: float | None = None) -> Hold | None:
        """The hold this worker's last view of the item shows, without a read or a write: a hold
        in force (`hold_until` only ever grows), or a queue beyond `within` seconds."""
        seen = self.last_seen
        if not seen or "interval" not in seen:
            return None
        if float(seen.get("hold_until", 0)) > now:
            return self._hold_of(seen, now)
        reach = self._reach(seen, within)
        if float(seen["next_slot"]) > now + reach:
            return Hold(float(seen["next_slot"]) - reach, "create queue is full", "queue", self._spread(seen))
        return None

    def _reach(self, item: dict | None, within: float | None) -> float:
        interval = float((item or {}).get("interval", 1.0))
        reach = pacing.horizon(self.concurrency, interval)
        return reach if within is None else max(0.0, min(reach, within))

    def _spread(self, item: dict | None) -> float:
        """Workers held together come back spread over the time the fleet's slots take (so the
        item does not take a fleet's writes at once); the spread costs no slot."""
        return self.concurrency * float((item or {}).get("interval", 0.0))

    def _hold_of(self, item: dict, now: float) -> Hold:
        return Hold(
            float(item.get("hold_until", 0)),
            str(item.get("hold_reason") or "provider asked us to wait"),
            str(item.get("hold_kind", "rate")),
            self._spread(item),
        )

    def _carry(self, ok: int, err: int) -> None:
        """Outcomes not counted yet: carried by the next reservation."""
        self.report.ok += ok
        self.report.err += err

    def _create(self, now: float) -> None:
        """Set the pacer up on first use (or over one from before it learned rates), keeping any
        hold already placed and the tally's count; whoever loses this race reads the winner's item."""
        rate = pacing.start(self.start_rate, self.ceiling, now)
        fields = {"next_slot": now, "win": pacing.window_id(now), "ok": 0, "err": 0, "prev_ok": 0, "prev_err": 0}
        fields |= {"trips": 0, **_rate_fields(rate)}
        names = {f"#{k}": k for k in fields}
        values = {f":{k}": v for k, v in fields.items()} | {":zero": 0}
        sets = [f"#{k} = :{k}" for k in fields]
        sets += ["hold_until = if_not_exists(hold_until, :zero)", "catchup_floor = if_not_exists(catchup_floor, :zero)"]
        sets += ["seq = if_not_exists(seq, :zero)"]
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
            self.hold(now + seconds, "errors", reason, now=now, extra={"trips": trips})
            return
        rate = rate_of(seen)
        if rate is None:
            return
        ceiling = self.ceiling
        if rate.ceiling != ceiling:  # redeployed with another ProviderRateLimit
            restarted = pacing.start(rate.rate, ceiling, now) if ceiling else _uncapped(rate)
            self._set_rate(rate, replace(restarted, stated=rate.stated), now)
            return
        grown = pacing.grow(rate, now, _limiting(seen, now))
        if grown is not None:
            self._set_rate(rate, grown, now)

    # --- what the provider said -------------------------------------------------------------

    def observe(self, outcome: Outcome, now: float) -> None:
        """What one paced call's answer (a create's, a lookup's, a poll's) tells the fleet: the
        stated limit, a throttle's response by its scope (`pacing.response`: a 429 holds the
        fleet and cuts the rate, an account limit holds it, a 503 with Retry-After only counts
        as a failure), and an outcome for the breaker (a failure of the request; a 4xx is not)."""
        signal = outcome.signal
        if signal is not None and signal.limit_per_s is not None:
            self.told(signal.limit_per_s, now)
        if outcome.kind is not OutcomeKind.THROTTLED:
            self.saw(outcome.kind is not OutcomeKind.TRANSIENT)
            return
        response = pacing.response(outcome.scope)
        asked = outcome.retry_after if outcome.retry_after is not None else DEFAULT_THROTTLE_S
        if response.cut:
            self.throttled(now)
        if response.hold == "account":
            self.account_hold(now, f"{outcome.error}: the provider's account limit", outcome.retry_after)
        elif response.hold is not None:
            self.hold(now + asked, response.hold, f"{outcome.error}: the provider asked for {asked:g} s", now=now)
        if response.failure:
            self.saw(False)

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
        """A header stated the provider's limit: a ceiling (`pacing.told`), under this fleet's share of it."""
        rate = rate_of(self.last_seen or {})
        if rate is not None:
            new = pacing.told(rate, limit_per_s, now, self.share)
            if new is not None:
                self._set_rate(rate, new, now)

    def account_hold(self, now: float, reason: str, retry_after: float | None = None) -> None:
        """An account limit (videos in progress, storage): hold the fleet for a cooldown that
        doubles while it repeats (`pacing.account_cooldown`), or the provider's Retry-After."""
        seen = self.last_seen or self._get() or {}
        trips = pacing.account_trips(int(seen.get("account_trips", 0)), float(seen.get("account_until", 0)), now)
        until = now + max(pacing.account_cooldown(trips), retry_after or 0.0)
        self.hold(until, "account", reason, now=now, extra={"account_trips": trips, "account_until": until})

    def hold(
        self,
        until: float,
        kind: str = "rate",
        reason: str = "provider asked us to wait",
        now: float | None = None,
        extra: dict | None = None,
    ) -> None:
        """Hold the fleet until `until`; an earlier hold never shortens a later one. Slots already
        handed out move past it (by what it adds to a hold in force); after a hold of
        CATCH_UP_KINDS some of the slots it cost are made up (`pacing.resume_from`)."""
        now = until if now is None else now
        resume = pacing.resume_from(until, now, kind)
        item = self.last_seen
        for _ in range(3):
            held = item is not None and "hold_until" in item
            seen_hold = float(item["hold_until"]) if held else 0.0
            if seen_hold >= until:
                return
            # Nor is the rate what holds the fleet back until a whole step after the hold (`_limiting`).
            fields = {"hold_until": until, "hold_kind": kind, "hold_reason": reason[:REASON_MAX], "idle_at": until}
            fields |= {"catchup_floor": resume if kind in CATCH_UP_KINDS else 0, **(extra or {})}
            sets = [f"#h{i} = :h{i}" for i in range(len(fields))]
            values = {f":h{i}": v for i, v in enumerate(fields.values())}
            names = {f"#h{i}": k for i, k in enumerate(fields)}
            shift = 0.0
            if item and "interval" in item and float(item["next_slot"]) > now:
                shift = max(0.0, resume - max(now, seen_hold))
                if shift > 0:  # the slots handed out move with the hold
                    sets.append("next_slot = next_slot + :shift")
                    values[":shift"] = Decimal(f"{shift:.3f}")
            if held:
                condition = "hold_until = :seen_hold"
                values[":seen_hold"] = item["hold_until"]
            else:
                condition = "attribute_not_exists(hold_until) OR hold_until < :until"
                values[":until"] = until
            result = self._update("SET " + ", ".join(sets), condition, values, names)
            if "current" not in result:
                self.last_seen = {**result, **fields}
                if shift > 0:
                    self.last_seen["next_slot"] = Decimal(str(result["next_slot"])) + values[":shift"]
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
        values = {f":{k}": v for k, v in _rate_fields(new).items()}
        values |= {":seen_adjusted": seen.adjusted_at, ":seen_cut": seen.cut_at}
        fields = _rate_fields(new)
        sets = [f"#{k} = :{k}" for k in fields]
        item = self.last_seen or {}
        if "interval" in item:
            pivot = max(now, float(item.get("hold_until", 0)))
            ahead = float(item["next_slot"]) - pivot
            shift = ahead * (float(fields["interval"]) / float(item["interval"]) - 1) if ahead > 0 else 0.0
            if abs(shift) >= 0.0005:
                sets.append("next_slot = next_slot + :rescale")
                values[":rescale"] = Decimal(f"{shift:.3f}")
        result = self._update(
            "SET " + ", ".join(sets),
            "adjusted_at = :seen_adjusted AND cut_at = :seen_cut",
            values,
            names={f"#{k}": k for k in fields},
        )
        if "current" in result:
            self.last_seen = result["current"]
            return False
        self.last_seen = {**result, **fields}
        if ":rescale" in values:
            self.last_seen["next_slot"] = Decimal(str(result["next_slot"])) + values[":rescale"]
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


def _in_flight(item: dict, now: float, issued: int) -> int:
    """`pacing.in_flight` by the item as seen, with `issued` more slots."""
    queued = (float(item["next_slot"]) - now) / float(item["interval"]) - 1
    since = int(item.get("seq", 0)) + issued - int(item.get("tallied_seq", 0))
    lag = now - float(item.get("tallied_at", now))
    return pacing.in_flight(float(item.get("processing", 0)), since, queued, float(item.get("finish_rate", 0)), lag)


def ticket_time(item: dict, ticket: int) -> float:
    """When slot `ticket` is due by the item as it stands: every slot handed out is spaced by the
    current interval back from the next free one (holds and rate changes move them all)."""
    seq = int(item.get("seq", 0))
    return float(item["next_slot"]) - (seq - ticket) * float(item["interval"])


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
        "stated": rate.stated if rate.stated is not None else 0,
    }
    return fields


def rate_of(item: dict) -> Rate | None:
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
    return replace(rate, ceiling=None, source="learned" if rate.source == "ceiling" else rate.source)
