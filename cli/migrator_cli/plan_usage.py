"""`migrator plan`'s usage buckets (issue 45): the library grouped by how recently it was watched, each bucket with
its videos, hours, size, and per provider the time and cost of moving it (plan.estimate, bucket by bucket).

A row's bucket, from its usage (usage.py) and the time the plan is made (`now`; months are calendar months):

    never played                  plays 0 and no last play, counted over the video's whole life
    not played in 24 months       last_played_at before 24 months ago; or no plays counted since a time
                                  before that
    not played in 12 months       last_played_at from 24 to 12 months ago; or no plays counted since a time
                                  in that range
    played within 12 months       last_played_at on or after 12 months ago; or plays > 0 counted only since a
                                  time within the last 12 months (`since`)
    played, last play not known   plays > 0, but the platform says no date (counts only)
    usage unknown                 no usage read, one that says neither plays nor a last play, or no plays
                                  counted over a period shorter than 12 months

The buckets are what a triage decides on; `--where` (where.py) is how it acts on them: `load --where "plays > 0"`
leaves the never-played behind, `load --where "last_played >= 24 months ago"` everything not played since.
`bucket_of` is pure; the plan's text and JSON read a `UsageOutlook`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from migrator.messages import AssetMessage
from migrator.usage import Usage, epoch_of, utc_text
from migrator.where import months_before

from .plan import Estimate, Inventory, count_asset
from .units import human_bytes, human_usd

BUCKETS = (  # in the order a triage reads them: what to leave behind first
    ("never", "never played"),
    ("over_24_months", "not played in 24 months"),
    ("12_to_24_months", "not played in 12 months"),
    ("within_12_months", "played within 12 months"),
    ("played_when_unknown", "played, last play not known"),
    ("unknown", "usage unknown"),
)
LABELS = dict(BUCKETS)


def bucket_of(usage: Usage | None, now: float) -> str:
    """The bucket (a key of BUCKETS) of a row whose usage is `usage`, at `now` (epoch seconds)."""
    if usage is None:
        return "unknown"
    year_ago, two_years_ago = months_before(now, 12), months_before(now, 24)
    if usage.last_played_at is not None:
        last = epoch_of(usage.last_played_at)
        return (
            "within_12_months" if last >= year_ago else "12_to_24_months" if last >= two_years_ago else "over_24_months"
        )
    if usage.plays is None:
        return "unknown"
    since = epoch_of(usage.since) if usage.since is not None else None
    if usage.plays > 0:  # played, but when is not said: only a count bounded to a recent period tells
        return "within_12_months" if since is not None and since >= year_ago else "played_when_unknown"
    if since is None:
        return "never"
    # No play counted since `since`: not played since then at least.
    return "over_24_months" if since <= two_years_ago else "12_to_24_months" if since <= year_ago else "unknown"


@dataclass
class UsageBuckets:
    """The plan's assets counted again, each into its bucket (plan.summarise's `also`)."""

    now: float
    inventories: dict[str, Inventory] = field(default_factory=lambda: {key: Inventory() for key, _ in BUCKETS})
    with_usage: int = 0

    def add(self, msg: AssetMessage) -> None:
        self.with_usage += msg.usage is not None
        count_asset(self.inventories[bucket_of(msg.usage, self.now)], msg)

    def outlook(self, estimate: Callable[[Inventory, str], Estimate], providers: Sequence[str]) -> UsageOutlook:
        """Each bucket with the providers' estimates of moving it (`estimate(inventory, provider)`)."""
        buckets = []
        for key, label in BUCKETS:
            inv = self.inventories[key]
            estimates = {name: estimate(inv, name) for name in providers} if inv.assets else {}
            buckets.append(Bucket(key, label, inv, estimates))
        return UsageOutlook(self.now, self.with_usage, buckets)


@dataclass
class Bucket:
    key: str
    label: str
    inventory: Inventory
    estimates: dict[str, Estimate]

    @property
    def hours(self) -> float:
        return (self.inventory.seconds_known + self.inventory.seconds_estimated) / 3600

    def as_dict(self) -> dict:
        inv = self.inventory
        return {
            "bucket": self.key,
            "label": self.label,
            "videos": inv.assets,
            "hours": round(self.hours, 6),
            "bytes": inv.bytes_known,
            "size_known": inv.size_known,
            "providers": {
                name: {
                    "time_s": None if e.time_s is None else round(e.time_s, 3),
                    "encoding_usd": e.encoding_usd,
                    "storage_usd_month": e.storage_usd_month,
                    "aws_usd": e.aws_usd,
                    "one_off_usd": e.one_off_usd,
                }
                for name, e in self.estimates.items()
            },
        }


@dataclass
class UsageOutlook:
    now: float
    with_usage: int
    buckets: list[Bucket]

    def as_dict(self) -> dict:
        return {
            "as_of": utc_text(self.now),
            "with_usage": self.with_usage,
            "buckets": [b.as_dict() for b in self.buckets],
        }

    def lines(self, duration: Callable[[float | None], str]) -> list[str]:
        """The buckets' table, then each provider's time and cost per bucket (`duration` writes a time)."""
        videos = sum(b.inventory.assets for b in self.buckets)
        if not self.with_usage:
            return [
                "usage           none in the rows: every asset is 'usage unknown' (`migrator usage` reads plays"
                " and last plays where the platform counts them)"
            ]
        out = [
            f"usage           {self.with_usage:,} of {videos:,} assets say how they were watched"
            f" (buckets as of {utc_text(self.now)[:10]})"
            + ("; `migrator usage` reads it where the platform counts" if self.with_usage < videos else ""),
            f"  {'bucket':<30} {'videos':>9} {'hours':>10} {'size':>11}",
        ]
        for b in self.buckets:
            size = human_bytes(b.inventory.bytes_known) if b.inventory.size_known else "-"
            out.append(f"  {b.label:<30} {b.inventory.assets:>9,} {b.hours:>10,.1f} {size:>11}")
        costed = [b for b in self.buckets if b.estimates]
        if costed:
            out.append(f"  {'bucket':<30} {'provider':<11} {'time':>10} {'once':>12} {'per month':>11}")
            for b in costed:
                for name, e in b.estimates.items():
                    out.append(
                        f"  {b.label:<30} {name:<11} {duration(e.time_s):>10} {human_usd(e.one_off_usd):>12}"
                        f" {human_usd(e.storage_usd_month):>11}"
                    )
        return out
