"""`migrator plan`'s archive of the originals (issue 43): what keeping a copy of every original in the owner's S3
costs, per storage class: a month of the library's bytes, the one-off requests of the copy (its parts as the
archiver cuts them: archive/plan.plan_parts) and the least each class bills (its minimum storage duration), at the
prices of archive_prices.py, each cited. Pure: `archive_outlook` reads an Inventory, `lines` and `as_dict` say it.

Rows without a size are costed at the mean of those with one, and said to be; a file past what one archive copy
takes (MAX_ARCHIVE_BYTES) is counted in the storage (the owner copies it by hand) but not in the requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

from migrator.archive.plan import STORAGE_CLASSES, PartPlan, plan_parts

from .archive_prices import GB, GET_CITED, GET_PER_1000, PRICES, REGION, ClassPrice, storage_usd
from .units import human_bytes
from .units import human_usd as _usd


@dataclass(frozen=True)
class ClassCost:
    storage_class: str
    usd_month: float  # a month of the whole archive, per-object charges included
    usd_copy: float  # the copy's requests, once
    min_days: int
    usd_minimum: float  # the least the class bills for the archive: a month's storage over its minimum duration
    note: str = ""


@dataclass
class ArchiveOutlook:
    originals: int = 0  # assets, each one original
    bytes: int = 0  # every original's, those estimated included
    estimated: int = 0  # rows without a size, costed at the mean
    parts: int = 0  # the archiver's UploadParts
    too_large: int = 0  # past what one archive copy takes: copied by hand
    classes: list[ClassCost] = field(default_factory=list)

    @property
    def costed(self) -> bool:
        return bool(self.classes)

    def as_dict(self) -> dict:
        doc = asdict(self)
        doc["region"] = REGION
        doc["prices"] = {
            **{name: {**_figures(p), **p.cited()} for name, p in PRICES.items()},
            "get_per_1000": {"usd": GET_PER_1000, **GET_CITED},
        }
        return doc

    def line(self) -> str:
        """The one line plan always prints: the cheapest and the dearest class a month."""
        if not self.costed:
            return "archive         - (no row says its size: give size_bytes to cost the archive)"
        low = min(self.classes, key=lambda c: c.usd_month)
        high = max(self.classes, key=lambda c: c.usd_month)
        return (
            f"archive         {_usd(low.usd_month)} ({low.storage_class}) to {_usd(high.usd_month)}"
            f" ({high.storage_class}) a month for {human_bytes(self.bytes)} of originals (--archive: each class)"
        )

    def lines(self) -> list[str]:
        """The table `plan --archive` prints: per class a month, the copy, the minimum duration; then the prices."""
        if not self.costed:
            return [self.line()]
        estimated = f"; {self.estimated:,} rows without a size at the mean" if self.estimated else ""
        out = [
            f"archive         {human_bytes(self.bytes)} in {self.originals:,} originals, {self.parts:,} parts"
            f" to copy{estimated} ({REGION} prices)",
            f"  {'class':<20} {'a month':>11} {'copy, once':>11}  minimum duration",
        ]
        for c in self.classes:
            minimum = f"{c.min_days} days, at least {_usd(c.usd_minimum)}" if c.min_days else "none"
            out.append(f"  {c.storage_class:<20} {_usd(c.usd_month):>11} {_usd(c.usd_copy):>11}  {minimum}")
        out += [f"  {c.storage_class}: {c.note}" for c in self.classes if c.note]
        if self.too_large:
            out.append(f"  {self.too_large:,} files are past what one archive copy takes: copy them by hand")
        out.append("  archive prices (us-east-1; date, source):")
        for name, p in PRICES.items():
            flag = "" if p.verified else "  (not verified)"
            out.append(f"    {name:<20} {_price_words(p)}  {p.cited()['date']}  {p.source}{flag}")
        out.append(f"    {'minimum durations':<20} and sizes, per class: {PRICES['STANDARD'].cited()['terms']}")
        return out


def archive_outlook(
    originals: int,
    bytes_known: int,
    size_known: int,
    parts_known: int,
    too_large: int,
    prices: Mapping[str, ClassPrice] = PRICES,
) -> ArchiveOutlook:
    """The archive of `originals` files, `size_known` of which say their size (`bytes_known` in all, cut into
    `parts_known` parts; `too_large` of them past one copy), per storage class (pure)."""
    outlook = ArchiveOutlook(originals=originals, too_large=too_large)
    if not size_known or not originals:
        return outlook
    missing = originals - size_known
    mean = bytes_known / size_known
    per_file = plan_parts(max(1, round(mean)))
    outlook.estimated = missing
    outlook.bytes = bytes_known + round(mean * missing)
    outlook.parts = parts_known + missing * (per_file.count if isinstance(per_file, PartPlan) else 0)
    copies = originals - too_large  # the files the archiver copies itself
    standard = prices["STANDARD"]
    for name in STORAGE_CLASSES:
        price = prices[name]
        month = storage_usd(price, outlook.bytes / GB)
        # Each object's own charges: GLACIER's and DEEP_ARCHIVE's index and metadata, INTELLIGENT_TIERING's fee.
        month += storage_usd(price, originals * price.index_kb / (1024 * 1024))
        month += storage_usd(standard, originals * price.metadata_kb / (1024 * 1024))
        month += originals / 1000 * price.monitoring_per_1000
        # Create + parts + Complete in the class; ListMultipartUploads and the row's JSON in STANDARD; one HEAD.
        copy = (outlook.parts + 2 * copies) / 1000 * price.put_per_1000
        copy += 2 * copies / 1000 * standard.put_per_1000 + copies / 1000 * GET_PER_1000
        minimum = month * price.min_days / 30
        outlook.classes.append(
            ClassCost(name, round(month, 6), round(copy, 6), price.min_days, round(minimum, 6), price.note)
        )
    return outlook


def _figures(p: ClassPrice) -> dict:
    return {
        "gb_month": [[size, usd] for size, usd in p.gb_month],
        "put_per_1000": p.put_per_1000,
        "min_days": p.min_days,
        "min_object_kb": p.min_object_kb,
        "index_kb": p.index_kb,
        "metadata_kb": p.metadata_kb,
        "monitoring_per_1000": p.monitoring_per_1000,
    }


def _price_words(p: ClassPrice) -> str:
    tiers = ", ".join(
        f"${usd:g}/GB-month" + (f" (first {size / 1024:,.0f} TB)" if size and i == 0 else "")
        for i, (size, usd) in enumerate(p.gb_month)
        if i == 0
    )
    words = f"{tiers}, ${p.put_per_1000:g} per 1,000 PUTs"
    words += f", {p.min_days}-day minimum" if p.min_days else ""
    words += f", {p.min_object_kb} KB least object" if p.min_object_kb else ""
    words += f", {p.index_kb} + {p.metadata_kb} KB an object" if p.index_kb else ""
    words += f", ${p.monitoring_per_1000:g} per 1,000 objects a month" if p.monitoring_per_1000 else ""
    return words


def parts_of(size: int) -> int | None:
    """The parts the archiver copies a file of `size` bytes in; None past what one copy takes (0 for nothing)."""
    if size <= 0:
        return 0
    plan = plan_parts(size)
    return plan.count if isinstance(plan, PartPlan) else None
