"""`migrator status`: counts by state, throughput, ETA, 429 rate, queue and DLQ depth, oldest in flight.

Every refresh reads a bounded number of items whatever the size of the table: the 16
count shards and one item per minute of the window from the stats table (kept by the
tally Lambda from the ledger's stream), one item per in-flight shard of the by_state
index (the oldest), two queue attribute calls, the uploader's event source mapping
(paused?), the pacer item (holding after a 429?) and the working hours' override (`#window`).
`--exact` counts through the index instead, for an audit: that one reads every index entry.
A stack with the archive on (its ArchiveBucketName output) shows the archive's copies too:
archived (and their bytes), copying, failed, from the same count items (the tally counts each asset's `archive_state`).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime

from migrator.dynamo import to_item, typed
from migrator.ledger import SHARDS, STATE_INDEX, Ledger
from migrator.notices import ACTIVE as NOTICE_ACTIVE
from migrator.notices import remaining_of
from migrator.pacer import PACER_ID, rate_of
from migrator.states import State
from migrator.tally import Stats, read_stats

from .commands.mirror import mirror_status, mirror_words
from .units import human_bytes

ACTIVE = NOTICE_ACTIVE  # what is left to move: the same states the done notice waits on (migrator.notices)
IN_FLIGHT = (State.UPLOADING, State.PROCESSING)


@dataclass(frozen=True)
class Queues:
    visible: int
    in_flight: int
    delayed: int
    dead: int
    tally_failed: int = 0  # stream batches the tally gave up on: the counts are short by them
    # Messages not yet recorded in the ledger (the intake queue, waiting or in flight); None for a
    # stack from before intake, whose one queue holds messages the ledger may not have seen.
    intake: int | None = None


@dataclass(frozen=True)
class Oldest:
    asset_id: str
    state: str
    since: float


@dataclass(frozen=True)
class Uploader:
    """Why the uploader may be waiting (paused, or held and by what), and the pace it keeps."""

    mapping_state: str  # the event source mapping's State: Enabled, Disabled, ...
    hold_until: float | None  # the fleet-wide hold (the pacer item)
    hold_kind: str = ""  # rate (a 429), errors (the breaker), account (an account limit, e.g. a 413)
    hold_reason: str = ""
    rate: float | None = None  # creates per second in use
    rate_source: str = ""  # start | told | learned | ceiling
    ceiling: float | None = None
    limit_seen: float | None = None  # the rate at which the provider last pushed back
    bound_until: float | None = None  # the in-flight bound holds creates back until then (the pacer item)
    bound_reason: str = ""


@dataclass(frozen=True)
class View:
    """Everything status shows, computed from what was read (pure)."""

    at: float
    counts: dict
    total: int
    window_s: float
    settled: int
    ready: int
    rejected: int
    created: int
    throttled: int
    rate_per_min: float
    throttle_rate: float | None  # 429s / (creates + 429s) in the window
    remaining: int
    eta_s: float | None
    queues: Queues
    oldest: Oldest | None
    uploader: Uploader | None = None
    # Per minute of the window, oldest first: assets settled, and 429s met.
    settled_per_minute: tuple = ()
    throttled_per_minute: tuple = ()
    tracks: dict = field(default_factory=dict)  # caption tracks per track state (pending, attached, failed, noted)
    # The extras per kind (thumbnail, chapters, collection: a video's place in one) and state; noted: carried
    # otherwise, as each entry's note says (migrator report).
    extras: dict = field(default_factory=dict)
    # The archive's copies by state (pending, copying, archived, failed) and the archived `bytes`; None for a
    # stack without the archive.
    archive: dict | None = None
    # The working hours (migrator.hours.HoursView.as_dict): the window in force, open or closed, until when.
    hours: dict | None = None
    mirror: dict | None = None  # the mirror's checkpoint (commands/mirror.py); None: the stack has no mirror

    def as_dict(self) -> dict:
        return asdict(self)


def summarize(
    stats: Stats,
    queues: Queues,
    oldest: Oldest | None,
    now: float,
    window_minutes: int,
    uploader: Uploader | None = None,
    archive_on: bool = False,
) -> View:
    """Throughput over the window (the current minute counts for its elapsed part), ETA, 429 rate."""
    first_minute = int(now // 60) - window_minutes
    events = stats.events_since(first_minute)
    # A migration that started inside the window is measured from its first minute, not
    # diluted by the quiet minutes before it.
    active = [m for m, counted in stats.minutes.items() if m >= first_minute and any(counted.values())]
    began = min(active, default=first_minute)
    # From its first event when the tally recorded it: a run that began late in its first
    # minute, measured from the minute's start, reads several times slower than it goes.
    start = min(max(stats.first.get(began, began * 60), began * 60), (began + 1) * 60)
    window_s = max(1.0, now - start)
    ready, rejected = events.get("ready", 0), events.get("rejected", 0)
    settled = ready + rejected
    created, throttled = events.get("created", 0), events.get("throttled", 0)
    rate_per_s = settled / window_s
    # Messages still visible in the queue are mostly assets not yet claimed (no ledger
    # item yet); deferred ones are in flight and already counted as pending.
    # Every message past intake is an asset the ledger counts already; those before it are not yet.
    unrecorded = queues.visible if queues.intake is None else queues.intake
    remaining = remaining_of(stats.counts, unrecorded)  # as the done notice counts it
    processing = stats.counts.get(State.PROCESSING.value, 0)
    eta = eta_seconds(remaining - processing, processing, created / window_s, rate_per_s)
    attempts = created + throttled
    minutes = range(first_minute + 1, int(now // 60) + 1)
    per_minute = [stats.minutes.get(m, {}) for m in minutes]
    return View(
        at=now,
        counts=dict(stats.counts),
        total=stats.total(),
        window_s=window_s,
        settled=settled,
        ready=ready,
        rejected=rejected,
        created=created,
        throttled=throttled,
        rate_per_min=rate_per_s * 60,
        throttle_rate=throttled / attempts if attempts else None,
        remaining=remaining,
        eta_s=eta,
        queues=queues,
        oldest=oldest,
        uploader=uploader,
        settled_per_minute=tuple(m.get("ready", 0) + m.get("rejected", 0) for m in per_minute),
        throttled_per_minute=tuple(m.get("throttled", 0) for m in per_minute),
        tracks=dict(stats.tracks),
        extras={kind: dict(states) for kind, states in stats.extras.items()},
        archive=dict(stats.archive) if archive_on else None,
    )


def eta_seconds(to_create: int, processing: int, create_rate: float, settle_rate: float) -> float | None:
    """Seconds until every asset left is settled; None when nothing moves.

    While creates go on, the pace is the create rate: assets leave processing about as fast
    as they entered it, one provider lag later, so what is left (to create, and processing)
    takes its count over the create rate. Settled assets would say otherwise at the start of
    a run: for the first minutes of transcoding nothing settles, and an ETA from them reads
    hours. Once everything is created, what processing has left goes at the settling rate."""
    left = to_create + processing
    if left <= 0:
        return 0.0
    rate = create_rate if to_create > 0 and create_rate > 0 else settle_rate
    return left / rate if rate > 0 else None


BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values: tuple | list) -> str:
    """One character per value, the height its share of the largest; a blank minute is a dot."""
    top = max(values, default=0)
    if top <= 0:
        return "·" * len(values)
    return "".join(
        "·" if v <= 0 else BLOCKS[min(len(BLOCKS) - 1, int(v / top * (len(BLOCKS) - 1) + 0.5))] for v in values
    )


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    if seconds < 86_400:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"{seconds // 86_400} d {seconds % 86_400 // 3600:02d} h"


# The extras as status names them, in the order it shows them.
EXTRA_WORDS = {"thumbnail": "thumbnails", "chapters": "chapters", "collection": "collection places"}


def extras_part(kind: str, states: dict) -> str:
    """'thumbnails 8: 6 attached, 1 noted, 1 failed': one kind of extra, each state it has entries in."""
    shown = ", ".join(f"{states[s]:,} {s}" for s in ("attached", "noted", "pending", "failed") if states.get(s))
    return f"{EXTRA_WORDS[kind]} {sum(states.values()):,}: {shown}"


def render(view: View, stack: str) -> str:
    c = view.counts
    stamp = datetime.fromtimestamp(view.at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    lines = [
        f"stack {stack} — {stamp}",
        f"assets      {view.total:>9,}",
    ]
    row = []
    for state in State:
        row.append(f"{state.value:<11} {c.get(state.value, 0):>9,}")
    lines += ["  " + "   ".join(row[i : i + 3]) for i in range(0, len(row), 3)]
    if any(view.tracks.values()):
        t = view.tracks
        line = f"tracks      {sum(t.values()):,} captions: {t.get('attached', 0):,} attached,"
        line += f" {t.get('pending', 0):,} pending, {t.get('failed', 0):,} failed"
        line += f", {t['noted']:,} noted" if t.get("noted") else ""
        lines.append(line + (" (report says why; retry --tracks)" if t.get("failed") else ""))
    extras = [extras_part(kind, view.extras[kind]) for kind in EXTRA_WORDS if any(view.extras.get(kind, {}).values())]
    if extras:
        failed = any(states.get("failed") for states in view.extras.values())
        lines.append("extras      " + "; ".join(extras) + (" (report says why; retry --tracks)" if failed else ""))
    if view.archive is not None:
        lines.append(archive_line(view.archive))
    if view.hours is not None and view.hours.get("words"):
        lines.append(f"hours       {view.hours['words']}")
    if view.mirror is not None:
        lines.append(mirror_words(view.mirror))
    if view.uploader:
        u = view.uploader
        if u.mapping_state != "Enabled":
            lines.append(f"uploader    {u.mapping_state.upper()}: nothing is taken from the queue (migrator resume)")
        elif u.hold_until and u.hold_until > view.at:
            why = HOLD_WORDS.get(u.hold_kind, "the provider asked us to wait")
            lines.append(f"uploader    holding creates for {duration(u.hold_until - view.at)}: {why} ({u.hold_reason})")
        elif u.bound_until and u.bound_until > view.at:
            lines.append(f"uploader    waiting at the provider's bound on videos in progress ({u.bound_reason})")
        else:
            lines.append("uploader    running")
        if u.rate is not None:
            lines.append(f"pace        {u.rate:,.2f} creates/s, {pace_words(u)}")
    q = view.queues
    lines.append(
        f"queue       {q.visible:,} waiting, {q.in_flight:,} in flight, {q.delayed:,} delayed;"
        + (f" intake {q.intake:,} not yet recorded;" if q.intake is not None else "")
        + f" DLQ {q.dead:,}"
    )
    if q.tally_failed:
        lines.append(
            f"counts      SHORT: the tally could not count {q.tally_failed:,} stream batches"
            " (see its logs); `migrator status --exact` counts through the index"
        )
    window_min = view.window_s / 60
    lines.append(
        f"throughput  {view.rate_per_min:,.1f} assets/min over the last {window_min:.0f} min"
        f" ({view.ready:,} ready, {view.rejected:,} rejected)"
    )
    if view.settled_per_minute:
        peak = max(view.settled_per_minute)
        lines.append(f"  per min   {sparkline(view.settled_per_minute)}  (peak {peak:,}/min, oldest minute first)")
        lines.append(f"  429s      {sparkline(view.throttled_per_minute)}  ({sum(view.throttled_per_minute):,} in all)")
    if view.throttle_rate is None:
        lines.append("429 rate    no create attempts in the window")
    else:
        lines.append(
            f"429 rate    {view.throttle_rate:.1%} of create attempts"
            f" ({view.throttled:,} of {view.created + view.throttled:,})"
        )
    if view.remaining == 0:
        lines.append("ETA         done: nothing left in flight or waiting")
    else:
        lines.append(f"ETA         {duration(view.eta_s)} for {view.remaining:,} assets left")
    if view.oldest:
        age = duration(view.at - view.oldest.since)
        lines.append(f"oldest      {view.oldest.asset_id} {view.oldest.state} for {age}")
    else:
        lines.append("oldest      nothing in flight")
    return "\n".join(lines)


def archive_line(archive: dict) -> str:
    """'archive     1,200 archived (3.4 TB), 3 copying, 2 failed (retry --archive)': the copies by state."""
    a = {k: max(0, int(v)) for k, v in archive.items()}  # a count the tally is behind on is never shown below 0
    line = f"archive     {a.get('archived', 0):,} archived ({human_bytes(a.get('bytes', 0))}),"
    line += f" {a.get('copying', 0):,} copying"
    line += f", {a['pending']:,} waiting" if a.get("pending") else ""
    line += f", {a.get('failed', 0):,} failed"
    return line + (" (verify --archive lists why; retry --archive)" if a.get("failed") else "")


HOLD_WORDS = {
    "rate": "the provider is pacing us (429)",
    "errors": "the breaker: most recent requests failed",
    "account": "an account limit at the provider (videos in progress or storage used up)",
    "queue": "the create queue is full",
}
SOURCE_WORDS = {
    "start": "the start rate, growing until the provider pushes back",
    "told": "told by the provider's rate-limit headers",
    "learned": "learned from the provider's 429s",
    "ceiling": "the ceiling (ProviderRateLimit)",
}


def pace_words(u: Uploader) -> str:
    words = SOURCE_WORDS.get(u.rate_source, u.rate_source)
    if u.limit_seen and u.rate_source in ("learned", "told"):
        words += f" (limit seen at {u.limit_seen:,.2f}/s)"
    return words + (f"; ceiling {u.ceiling:,.2f}/s" if u.ceiling else "; no ceiling")


# --- reads -----------------------------------------------------------------------------------


def read_queues(
    sqs, queue_url: str, dlq_url: str, tally_failure_url: str | None = None, intake_url: str | None = None
) -> Queues:
    """The paced work queue (`queue_url`), the dead-letter queue, the tally's failures and intake."""
    names = [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
    ]
    main = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=names)["Attributes"]
    dead = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=names[:2])["Attributes"]
    tally = {}
    if tally_failure_url:  # a stack deployed before the tally had a failure queue has none
        tally = sqs.get_queue_attributes(QueueUrl=tally_failure_url, AttributeNames=names[:2])["Attributes"]
    intake = None
    if intake_url and intake_url != queue_url:  # a stack from before intake had one queue
        intake = sqs.get_queue_attributes(QueueUrl=intake_url, AttributeNames=names[:2])["Attributes"]
    return Queues(
        visible=int(main.get(names[0], 0)),
        in_flight=int(main.get(names[1], 0)),
        delayed=int(main.get(names[2], 0)),
        dead=int(dead.get(names[0], 0)) + int(dead.get(names[1], 0)),
        tally_failed=int(tally.get(names[0], 0)) + int(tally.get(names[1], 0)),
        intake=None if intake is None else int(intake.get(names[0], 0)) + int(intake.get(names[1], 0)),
    )


def read_oldest(ledger: Ledger) -> Oldest | None:
    """The oldest change among in-flight assets: one item from each in-flight shard."""
    lanes = [(state, shard) for state in IN_FLIGHT for shard in range(SHARDS)]
    with ThreadPoolExecutor(8) as pool:
        pages = list(pool.map(lambda lane: ledger.query_shard(lane[0], lane[1], 1)[0], lanes))
    items = [item for page in pages for item in page]
    if not items:
        return None
    oldest = min(items, key=lambda i: float(i["updated_at"]))
    return Oldest(oldest["asset_id"], oldest["state"], float(oldest["updated_at"]))


def exact_counts(ledger: Ledger) -> dict:
    """Counts through the index (Select=COUNT): reads every index entry; for audits, not for --watch."""

    def count(lane: tuple[State, int]) -> int:
        total, key = 0, None
        while True:
            kwargs = {
                "TableName": ledger.table,
                "IndexName": STATE_INDEX,
                "KeyConditionExpression": "state_shard = :s",
                "ExpressionAttributeValues": typed({":s": f"{lane[0].value}#{lane[1]}"}),
                "Select": "COUNT",
            }
            if key:
                kwargs["ExclusiveStartKey"] = key
            resp = ledger.client.query(**kwargs)
            total += resp.get("Count", 0)
            key = resp.get("LastEvaluatedKey")
            if not key:
                return total

    lanes = [(state, shard) for state in State for shard in range(SHARDS)]
    with ThreadPoolExecutor(8) as pool:
        counts = list(pool.map(count, lanes))
    out = {state.value: 0 for state in State}
    for (state, _), n in zip(lanes, counts, strict=True):
        out[state.value] += n
    return out


def read_uploader(lambda_client, mapping_id: str, ledger: Ledger) -> Uploader:
    """The mapping's state and the pacer's hold and rate: two reads."""
    state = lambda_client.get_event_source_mapping(UUID=mapping_id).get("State", "unknown")
    pacer = ledger.client.get_item(TableName=ledger.table, Key=typed({"asset_id": PACER_ID}), ConsistentRead=True)
    item = to_item(pacer.get("Item")) or {}
    rate = rate_of(item)
    hold = item.get("hold_until")
    return Uploader(
        state,
        float(hold) if hold is not None else None,
        str(item.get("hold_kind", "")),
        str(item.get("hold_reason", "")),
        rate.rate if rate else None,
        rate.source if rate else "",
        rate.ceiling if rate else None,
        rate.limit if rate else None,
        float(item["bound_until"]) if item.get("bound_until") is not None else None,
        str(item.get("bound_reason", "")),
    )


def gather(target, window_minutes: int, exact: bool = False, now: float | None = None) -> View:
    now = time.time() if now is None else now
    dynamodb = target.client("dynamodb")
    ledger = Ledger(target.output("LedgerTableName"), dynamodb)
    stats = read_stats(dynamodb, target.output("StatsTableName"), now, window_minutes)
    if exact:
        stats = Stats(exact_counts(ledger), stats.minutes, stats.first, stats.tracks, stats.extras, stats.archive)
    queues = read_queues(
        target.client("sqs"),
        target.outputs.get("WorkQueueUrl") or target.output("QueueUrl"),
        target.output("DeadLetterQueueUrl"),
        target.outputs.get("TallyFailureQueueUrl"),
        target.outputs.get("QueueUrl"),
    )
    uploader = read_uploader(target.client("lambda"), target.output("UploaderEventSourceMappingId"), ledger)
    archive_on = bool(target.outputs.get("ArchiveBucketName"))  # present only where the stack keeps an archive
    view = summarize(stats, queues, read_oldest(ledger), now, window_minutes, uploader, archive_on)
    return replace(view, hours=read_hours(target, ledger, now), mirror=mirror_status(target.outputs, dynamodb))


def read_hours(target, ledger: Ledger, now: float) -> dict:
    """The working hours in force (the stack's WorkingHours output, or the ledger's override): one read."""
    from migrator.hours import hours_view, hours_words, read_override

    shown = hours_view(target.outputs.get("WorkingHours") or "", read_override(ledger.client, ledger.table), now)
    # No window and no override: nothing worth a line.
    return {**shown.as_dict(), "words": hours_words(shown) if shown.text or shown.source == "override" else ""}
