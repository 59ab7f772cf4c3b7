"""What S3 charges for the archive of the originals (issue 43), per storage class, us-east-1: the one price table
`migrator plan --archive` reads, every figure beside the page it comes from.

Storage is billed by the GB-month; the archiver's requests (CreateMultipartUpload and CompleteMultipartUpload are
POSTs, each UploadPart a PUT) at the class's "PUT, COPY, POST, LIST requests" price per 1,000; its one
ListMultipartUploads (a LIST) and the row's JSON beside the original (a PUT, always in STANDARD:
archive/store.py) at STANDARD's; its HeadObject that reads the checksum back at the "GET, SELECT, and all other
requests" price. An object in GLACIER or DEEP_ARCHIVE also costs 32 KB of index at the class's rate and 8 KB of
metadata at STANDARD's, and one in INTELLIGENT_TIERING a monitoring fee per object a month. Each class bills at
least its minimum storage duration, whatever is deleted sooner.

`verified` is False for a figure this table's author could not read on the cited page when it was written (the
page renders its prices in the browser): `migrator plan` marks it "(not verified)", as it does the providers'.
Data transfer in (the copy from the source) is free; retrievals (a restore) are not planned here.
"""

from __future__ import annotations

from dataclasses import dataclass

PRICING = "https://aws.amazon.com/s3/pricing/"
CLASSES = "https://docs.aws.amazon.com/AmazonS3/latest/userguide/storage-class-intro.html#sc-compare"
ARCHIVAL = "https://docs.aws.amazon.com/AmazonS3/latest/userguide/archival-storage.html"
REGION = "us-east-1"
DATE = "2026-12-06"  # when the table was written
GB = 1024**3  # S3 bills storage by the GB of 2^30 bytes, a TB of 1,024 GB
TB_GB = 1024


@dataclass(frozen=True)
class ClassPrice:
    """One storage class's prices and terms (us-east-1)."""

    storage_class: str
    # USD a GB-month by tier: (GB the tier holds, or None for the rest; USD). Flat classes have one tier.
    gb_month: tuple[tuple[float | None, float], ...]
    put_per_1000: float  # PUT, COPY, POST, LIST requests
    min_days: int  # the minimum storage duration billed
    min_object_kb: int = 0  # the minimum billable object size (0: none)
    index_kb: int = 0  # GLACIER, DEEP_ARCHIVE: KB per object billed at the class's rate (its index)
    metadata_kb: int = 0  # GLACIER, DEEP_ARCHIVE: KB per object billed at STANDARD's rate (its name, metadata)
    monitoring_per_1000: float = 0.0  # INTELLIGENT_TIERING: USD per 1,000 objects a month (objects of 128 KB up)
    note: str = ""
    source: str = PRICING
    verified: bool = False

    def cited(self) -> dict:
        return {"date": DATE, "source": self.source, "terms": CLASSES, "verified": self.verified}


# S3 Standard's storage tiers: first 50 TB a month, next 450 TB, over 500 TB.
STANDARD_TIERS: tuple[tuple[float | None, float], ...] = ((50 * TB_GB, 0.023), (450 * TB_GB, 0.022), (None, 0.021))

PRICES: dict[str, ClassPrice] = {
    price.storage_class: price
    for price in (
        ClassPrice("STANDARD", STANDARD_TIERS, put_per_1000=0.005, min_days=0),
        ClassPrice("STANDARD_IA", ((None, 0.0125),), put_per_1000=0.01, min_days=30, min_object_kb=128),
        ClassPrice("ONEZONE_IA", ((None, 0.01),), put_per_1000=0.01, min_days=30, min_object_kb=128),
        ClassPrice(
            "INTELLIGENT_TIERING",
            STANDARD_TIERS,
            put_per_1000=0.005,
            min_days=0,
            monitoring_per_1000=0.0025,
            note="billed at the Frequent Access tier (Standard's price) at first; an object not read for 30 days"
            " moves to Infrequent Access ($0.0125/GB), for 90 days to Archive Instant Access ($0.004/GB)",
        ),
        ClassPrice("GLACIER_IR", ((None, 0.004),), put_per_1000=0.02, min_days=90, min_object_kb=128),
        ClassPrice(
            "GLACIER",
            ((None, 0.0036),),
            put_per_1000=0.03,
            min_days=90,
            index_kb=32,
            metadata_kb=8,
            note="read back only after a restore of minutes to hours",
        ),
        ClassPrice(
            "DEEP_ARCHIVE",
            ((None, 0.00099),),
            put_per_1000=0.05,
            min_days=180,
            index_kb=32,
            metadata_kb=8,
            note="read back only after a restore of up to 12 hours (48 in bulk)",
        ),
    )
}
# The other requests S3 bills, at STANDARD's prices: HeadObject (the checksum read back) is a GET-class request.
GET_PER_1000 = 0.0004
GET_CITED = {"date": DATE, "source": PRICING, "verified": False}


def storage_usd(price: ClassPrice, gb: float) -> float:
    """A month of `gb` GB in the class, through its tiers."""
    usd, left = 0.0, gb
    for size, rate in price.gb_month:
        held = left if size is None else min(left, size)
        usd += held * rate
        left -= held
        if left <= 0:
            break
    return usd
