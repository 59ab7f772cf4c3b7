"""`migrator plan`: what a migration will be, from its inventory alone, before the first create (no AWS).

It streams the inventory (inventory.read_inventory, the loader's own validation and repeat check) and
counts: assets, hours of video, total size where the rows say it, what the provider could never fetch
(by reason), caption tracks, privacy, what a viewer sees (thumbnails, chapters, collections, publish dates:
plan_extras.py); then, for each provider (or the one named), the time at its
documented or configured create rate, its cost from the shipped price table (data/prices.json: each
price with its date and source; --prices FILE overrides), and the AWS cost from requests per asset
measured on the stack (data/aws-requests.json, which says how) at the region's prices
(data/aws-prices.json; --aws-prices FILE overrides), the aws target's own MediaConvert and S3 cost
(plan_aws.py); and warnings (sources above 1080p on Mux, Cloudflare storage beyond the account's capacity,
unknown durations, unverified prices), and what becomes of the extras there: carried, or noted (the target's
class facts).

Rows without a duration are costed at the mean of the rows with one, and said to be. `summarise` and
`estimate` are pure; the CLI front end prints a Plan's `lines()` or `as_dict()` (plan_report.py).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from migrator.extras import CHAPTERS_TRACK
from migrator.messages import SOURCE_PLATFORMS, AssetMessage
from migrator.providers import PROVIDERS as REGISTERED_PROVIDERS  # each one's documented create rate
from migrator.sources import HTTP_SOURCES  # each platform's documented read rate and requests a video

from .aws_prices import MEDIACONVERT, MEDIACONVERT_VERIFIED
from .errors import CliError
from .inventory import BadRow, Deduper, Record, Skipped
from .plan_archive import parts_of
from .plan_aws import PROVIDER as AWS_TARGET
from .plan_aws import aws_outlook
from .plan_extras import ExtrasCount, ExtrasOutlook, TargetFacts, outlook

# Every registered target, in the registry's order (migrator.platforms, providers.REGISTERED).
PROVIDERS = tuple(REGISTERED_PROVIDERS)
# Creates a second each provider documents (what paces a migration), and where it says so: each provider's own
# `documented_rate_per_s` and `documented_rate_doc`. One with none (Bunny, Vimeo) makes the plan ask for --rate.
DOCUMENTED_RATES = {
    name: (cls.documented_rate_per_s, cls.documented_rate_doc)
    for name, cls in REGISTERED_PROVIDERS.items()
    if cls.documented_rate_per_s is not None
}
HIGH_DEFINITION = 1080  # Mux stores up to max_resolution_tier, 1080p unless asked (docs.mux.com: resolution tiers)


@dataclass
class Inventory:
    """What the inventory holds, provider aside."""

    rows: int = 0
    assets: int = 0
    bad: int = 0
    repeats: int = 0
    skipped: int = 0
    bad_reasons: Counter = field(default_factory=Counter)
    duration_known: int = 0
    seconds_known: float = 0.0
    size_known: int = 0
    bytes_known: int = 0
    tracks: int = 0  # caption tracks (a chapters track is counted with the chapters: `extras`)
    assets_with_tracks: int = 0
    track_languages: Counter = field(default_factory=Counter)
    privacy: Counter = field(default_factory=Counter)
    above_1080p: int = 0
    s3_sources: int = 0
    references: Counter = field(default_factory=Counter)  # source references by platform
    # Videos the source platform's listing found it could never fetch (`--from`), by reason: never sent.
    source_unfetchable: Counter = field(default_factory=Counter)
    # What a viewer sees besides the video: thumbnails, chapters, collections, publish dates (plan_extras.py).
    extras: ExtrasCount = field(default_factory=ExtrasCount)
    # The archive's copy of the originals (plan_archive.py): the parts of the files with a size, as the archiver
    # cuts them, and the files past what one archive copy takes.
    archive_parts: int = 0
    archive_too_large: int = 0
    # Good rows `--where` left out (not counted above): the plan is of the rest (triage.py).
    filtered: int = 0

    @property
    def seconds_estimated(self) -> float:
        """The rows without a duration, at the mean of those with one."""
        missing = self.assets - self.duration_known
        return missing * self.seconds_known / self.duration_known if self.duration_known and missing else 0.0

    @property
    def minutes(self) -> float:
        return (self.seconds_known + self.seconds_estimated) / 60


def summarise(records: Iterable[Record], also: Callable[[AssetMessage], None] | None = None) -> Inventory:
    """Count the inventory's rows, each id once (a repeat with another URL is a bad row, as load says); `also`
    hears each asset counted (plan_usage.py's buckets count it again in theirs)."""
    inv = Inventory()
    with Deduper() as seen:
        for record in records:
            inv.rows += 1
            if isinstance(record, Skipped):
                inv.skipped += 1
                continue
            if isinstance(record, BadRow):
                inv.bad += 1
                inv.bad_reasons[record.reason] += 1
                continue
            msg = record.message
            verdict = seen.check(msg.asset_id, msg.source_url, record.line)
            if verdict == Deduper.REPEAT:
                inv.repeats += 1
                continue
            if verdict == Deduper.CONFLICT:
                inv.bad += 1
                inv.bad_reasons["id repeated with a different source_url"] += 1
                continue
            count_asset(inv, msg)
            if also is not None:
                also(msg)
    return inv


def count_asset(inv: Inventory, msg: AssetMessage) -> None:
    """One asset counted into `inv`."""
    inv.assets += 1
    if msg.duration_s is not None:
        inv.duration_known += 1
        inv.seconds_known += msg.duration_s
    if msg.size_bytes is not None:
        inv.size_known += 1
        inv.bytes_known += msg.size_bytes
        parts = parts_of(msg.size_bytes)
        inv.archive_parts += parts or 0
        inv.archive_too_large += parts is None
    captions = [t for t in msg.tracks if t.kind != CHAPTERS_TRACK]
    if captions:
        inv.assets_with_tracks += 1
        inv.tracks += len(captions)
        inv.track_languages.update(t.language for t in captions)
    inv.extras.add(msg)
    inv.privacy[msg.privacy or "default"] += 1
    width, height = (msg.metadata or {}).get("width"), (msg.metadata or {}).get("height")
    if _number(height) > HIGH_DEFINITION or _number(width) > HIGH_DEFINITION * 16 / 9:
        inv.above_1080p += 1
    scheme = msg.source_url.split("://", 1)[0].lower()
    if scheme == "s3":
        inv.s3_sources += 1
    elif scheme in SOURCE_PLATFORMS:
        inv.references[scheme] += 1


def _number(value) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


# --- prices and measured requests --------------------------------------------------------------


def load_json(path: str | None, shipped: str) -> dict:
    """A JSON data file: the operator's `path`, else the one shipped in migrator_cli/data."""
    try:
        text = (
            Path(path).read_text(encoding="utf-8")
            if path
            else resources.files("migrator_cli.data").joinpath(shipped).read_text(encoding="utf-8")
        )
        doc = json.loads(text)
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise CliError(f"{path or shipped} is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise CliError(f"{path or shipped}: expected a JSON object")
    return doc


@dataclass(frozen=True)
class Price:
    usd: float  # per unit (a minute, a minute-month, a request, a GB-s, a GB-month)
    date: str
    source: str
    verified: bool = True
    block: int = 0  # billed in blocks of this many units (Cloudflare storage: 1,000 minutes)
    note: str = ""

    @classmethod
    def of(cls, doc: Mapping, what: str) -> Price:
        if not isinstance(doc, Mapping):
            raise CliError(f"price {what}: expected an object")
        if "usd_per_million" in doc:
            usd = doc["usd_per_million"] / 1e6
        else:
            usd = doc.get("usd")
        if isinstance(usd, bool) or not isinstance(usd, int | float) or usd < 0 or not math.isfinite(usd):
            raise CliError(f"price {what}: usd (or usd_per_million) must be a number of dollars, not {usd!r}")
        date, source = doc.get("date"), doc.get("source")
        if not isinstance(date, str) or not isinstance(source, str):
            raise CliError(f"price {what}: every price needs its date and source")
        block = doc.get("block_minutes", 0)
        return cls(
            float(usd), date, source, doc.get("verified", True) is not False, int(block or 0), str(doc.get("note", ""))
        )

    def cost(self, units: float) -> float:
        if self.block:
            units = math.ceil(units / self.block) * self.block if units > 0 else 0
        return units * self.usd

    def cited(self) -> dict:
        return {"date": self.date, "source": self.source, "verified": self.verified}


AWS_ITEMS = (
    ("dynamodb_write_units", "dynamodb_write_request_unit"),
    ("dynamodb_read_units", "dynamodb_read_request_unit"),
    ("sqs_requests", "sqs_request"),
    ("lambda_requests", "lambda_request"),
    ("lambda_gb_seconds", "lambda_gb_second"),
    ("api_requests", "rest_api_request"),
)


@dataclass
class Estimate:
    provider: str
    rate_per_s: float | None
    rate_source: str
    assets_to_send: int
    unfetchable: dict[str, int]
    time_s: float | None
    encoding_usd: float | None
    storage_usd_month: float | None
    aws_usd: float
    aws_breakdown: dict[str, float]
    ledger_storage_usd_month: float
    prices: dict[str, dict]
    warnings: list[str]
    # The source platforms' side: how long resolving every reference takes within each one's documented
    # read budget (platform -> seconds). `time_s` is the slower of this and the target's creates.
    source_time_s: dict[str, float] = field(default_factory=dict)
    target_time_s: float | None = None
    # What becomes of the inventory's thumbnails, chapters, collections and publish dates at this target.
    extras: ExtrasOutlook | None = None

    @property
    def one_off_usd(self) -> float | None:
        return None if self.encoding_usd is None else round(self.encoding_usd + self.aws_usd, 6)


def estimate(
    inv: Inventory,
    provider: str,
    prices: Mapping,
    aws_prices: Mapping,
    requests: Mapping,
    *,
    region: str = "us-east-1",
    rate: float | None = None,
    concurrency: int = 5,
    storage_minutes: float | None = None,
) -> Estimate:
    """Time, provider cost and AWS cost of migrating `inv` to `provider` (pure)."""
    # The steps append to `warnings` in the order the plan prints them.
    warnings: list[str] = []
    unfetchable, to_send = _unfetchable(inv, provider)
    pace, pace_source = _pace(provider, rate, warnings)
    target_time_s, source_time_s, time_s = _times(inv, provider, to_send, pace, warnings)
    encoding, storage, cited = _provider_cost(inv, provider, prices, to_send, warnings)
    breakdown, ledger_month = _aws_cost(
        provider, aws_prices, requests, region, pace, concurrency, to_send, cited, warnings
    )
    _capacity_warnings(inv, provider, to_send, storage_minutes, warnings)
    return Estimate(
        provider,
        pace,
        pace_source,
        to_send,
        unfetchable,
        time_s,
        encoding,
        storage,
        round(sum(breakdown.values()), 6),
        breakdown,
        ledger_month,
        cited,
        warnings,
        source_time_s,
        target_time_s,
        outlook(inv.extras, TargetFacts.of(provider, REGISTERED_PROVIDERS.get(provider))),
    )


def _unfetchable(inv: Inventory, provider: str) -> tuple[dict[str, int], int]:
    """The assets `provider` could never fetch, by reason, and how many are left to send."""
    unfetchable: dict[str, int] = {}
    if provider == "cloudflare" and inv.s3_sources:
        unfetchable["s3:// source (Cloudflare fetches with HEAD and range GETs, which a presigned GET refuses)"] = (
            inv.s3_sources
        )
    to_send = inv.assets - sum(unfetchable.values())
    for reason, n in sorted(inv.source_unfetchable.items()):  # never in the inventory's rows: counted apart
        unfetchable[f"at the source: {reason}"] = n
    return unfetchable, to_send


def _pace(provider: str, rate: float | None, warnings: list[str]) -> tuple[float | None, str]:
    """Creates a second the migration keeps to, and where that figure comes from."""
    if rate is not None:
        return rate, "configured (--rate, the stack's ProviderRateLimit)"
    if provider in DOCUMENTED_RATES:
        return DOCUMENTED_RATES[provider]
    warnings.append(f"{provider}: no documented create rate; give --rate (creates a second) for a time")
    return None, "none documented: give --rate"


def _times(
    inv: Inventory, provider: str, to_send: int, pace: float | None, warnings: list[str]
) -> tuple[float | None, dict[str, float], float | None]:
    """(the target's time, each source's, the migration's: the longest of them)."""
    target_time_s = to_send / pace if pace else None
    source_time_s = source_side_seconds(inv.references, warnings)
    if provider == "cloudflare" and "cloudflare" in inv.references:
        warnings.append(
            "Stream to Stream: the 1,200 requests per 5 minutes are per user; where one user holds both the source"
            " and the target token, the two sides share them and the migration takes their sum"
        )
    time_s = max([t for t in (target_time_s, *source_time_s.values()) if t is not None], default=None)
    return target_time_s, source_time_s, time_s


def _provider_cost(
    inv: Inventory, provider: str, prices: Mapping, to_send: int, warnings: list[str]
) -> tuple[float | None, float | None, dict[str, dict]]:
    """(encoding, a month's storage, the prices cited) at the provider, from its price table."""
    if provider == AWS_TARGET:
        return _aws_target_cost(inv, warnings)
    table = (prices.get("providers") or {}).get(provider) or {}
    cited: dict[str, dict] = {}
    encoding = storage = None
    if "encoding_per_minute" in table and "storage_per_minute_month" in table:
        enc = Price.of(table["encoding_per_minute"], f"{provider} encoding_per_minute")
        sto = Price.of(table["storage_per_minute_month"], f"{provider} storage_per_minute_month")
        minutes = inv.minutes * (to_send / inv.assets if inv.assets else 0)
        encoding, storage = round(enc.cost(minutes), 6), round(sto.cost(minutes), 6)
        cited = {
            "encoding_per_minute": {"usd": enc.usd, **enc.cited()},
            "storage_per_minute_month": {"usd": sto.usd, **sto.cited()},
        }
        for name, price in (("encoding", enc), ("storage", sto)):
            if not price.verified:
                warnings.append(
                    f"{provider} {name} price ${price.usd:g} is not verified: check {price.source} (or --prices FILE)"
                )
    else:
        warnings.append(f"{provider}: no prices in the table; give --prices FILE")
    return encoding, storage, cited


def _aws_target_cost(inv: Inventory, warnings: list[str]) -> tuple[float | None, float | None, dict[str, dict]]:
    """The aws target is the owner's own account, priced by aws_prices.py (plan_aws.py's section cites each price):
    MediaConvert's Basic tier once (Professional costs more: the section says both), S3 STANDARD a month."""
    outlook = aws_outlook(inv.assets, inv.duration_known, inv.seconds_known)
    if not outlook.costed:
        warnings.append("aws: no row says its duration: MediaConvert bills output minutes; give duration_s")
        return None, None, {}
    if not MEDIACONVERT_VERIFIED:
        warnings.append(f"aws MediaConvert prices are not verified: check {MEDIACONVERT}")
    return outlook.once_usd("basic"), round(outlook.s3_usd_month, 6), {}


def _aws_cost(
    provider: str,
    aws_prices: Mapping,
    requests: Mapping,
    region: str,
    pace: float | None,
    concurrency: int,
    to_send: int,
    cited: dict[str, dict],
    warnings: list[str],
) -> tuple[dict[str, float], float]:
    """(the AWS cost by item, the ledger's storage a month), from the requests one asset was measured to cost;
    the prices used are added to `cited`."""
    region_prices = (aws_prices.get("regions") or {}).get(region)
    if region_prices is None:
        region_prices = (aws_prices.get("regions") or {}).get("us-east-1") or {}
        warnings.append(f"no AWS prices for {region}: us-east-1's are used (give --aws-prices FILE)")
    per_asset = (requests.get("per_asset") or {}).get(provider) or {}
    breakdown: dict[str, float] = {}
    for count_name, price_name in AWS_ITEMS:
        count = float(per_asset.get(count_name, 0.0))
        if count_name == "lambda_gb_seconds":
            count += _uploader_gb_s(requests, pace, concurrency)
        if price_name in region_prices:
            price = Price.of(region_prices[price_name], f"aws {price_name}")
            breakdown[count_name] = round(price.cost(count * to_send), 6)
            cited[price_name] = {"usd": price.usd, **price.cited()}
    ledger_gb = to_send * float(requests.get("ledger_item_bytes", 0)) / 1e9
    storage_price = region_prices.get("dynamodb_storage_gb_month")
    ledger_month = (
        round(Price.of(storage_price, "aws dynamodb_storage_gb_month").cost(ledger_gb), 6) if storage_price else 0.0
    )
    return breakdown, ledger_month


def _capacity_warnings(
    inv: Inventory, provider: str, to_send: int, storage_minutes: float | None, warnings: list[str]
) -> None:
    """What the provider's account or the inventory's gaps will hold against the figures."""
    if provider == "mux" and inv.above_1080p:
        warnings.append(
            f"{inv.above_1080p:,} sources are above 1080p: Mux stores at most the asset's max_resolution_tier (1080p"
            " unless the row's options ask for 1440p or 2160p) and bills the higher tiers at higher rates"
        )
    if provider == "cloudflare":
        needed = math.ceil(inv.minutes * (to_send / inv.assets if inv.assets else 0))
        if storage_minutes is not None and needed > storage_minutes:
            warnings.append(
                f"Cloudflare storage: {needed:,} minutes needed, the account has {storage_minutes:,.0f}: uploads past"
                " its capacity are refused (413) until more is bought"
            )
        elif storage_minutes is None:
            warnings.append(
                f"Cloudflare storage is prepaid: {needed:,} minutes ({math.ceil(needed / 1000):,} blocks of 1,000)"
                " must be bought first; --storage-minutes N checks the account's"
            )
    if inv.assets and inv.duration_known < inv.assets:
        warnings.append(
            f"{inv.assets - inv.duration_known:,} assets have no duration: costed at the mean of the others"
            f" ({inv.seconds_estimated / 3600:,.1f} h estimated); `migrator probe` measures them"
        )


def source_side_seconds(references: Mapping[str, int], warnings: list[str]) -> dict[str, float]:
    """Per source platform, the seconds its references take to resolve within its documented read budget
    (requests a video / requests a second); a platform that documents none is not timed, and said so."""
    seconds: dict[str, float] = {}
    for platform, count in sorted(references.items()):
        source = HTTP_SOURCES.get(platform)
        if source is None:
            continue
        if not source.documented_rate_per_s:
            warnings.append(f"{platform}: no documented read rate: the source side is not timed")
            continue
        seconds[platform] = count * source.requests_per_video / source.documented_rate_per_s
    return seconds


def _uploader_gb_s(requests: Mapping, rate: float | None, concurrency: int) -> float:
    """The uploader's GB-s per asset: it waits for its paced slot inside the invocation (up to 15 s),
    so each asset holds a worker about concurrency / rate seconds, plus the create's own time."""
    model = requests.get("uploader_gb_seconds") or {}
    memory, create_s, inline = (
        float(model.get(k, d)) for k, d in (("memory_gb", 0.25), ("create_s", 0.3), ("max_inline_wait_s", 15))
    )
    # With no rate known the fleet starts at the stack's StartRate default, 5 creates a second.
    wait = min(inline, concurrency / (rate or 5.0))
    return memory * (wait + create_s)


# --- the report -------------------------------------------------------------------------------
