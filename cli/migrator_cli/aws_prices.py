"""What the `aws` target (issue 44) costs in the owner's own account, us-east-1: the MediaConvert minutes that make
each video's HLS renditions, the S3 storage of what they write, and CloudFront's egress when it is watched. The one
price table `migrator plan` reads for the target, every figure beside the page it comes from, and the pure sums.

- MediaConvert on demand bills each output by its minutes (by the second, at least 10 s an output, as a copy of
  the page read here says), at a price per minute set by its tier (Basic: AVC single-pass and the like;
  Professional: multi-pass HQ, HEVC and other Professional features), its resolution class (SD below 720p, HD 720p
  to 1080p, UHD above) and its frame-rate class (up to 30 fps, or above 30 and up to 60; an output keeps its
  input's frame rate unless told otherwise). Since September 2024 the minutes are "normalized" and the price falls
  past monthly volume thresholds, per region and tier: the prices here are the first volume tier's, the most a
  minute costs.
- S3 keeps the renditions in STANDARD at the archive's prices (archive_prices.py: one table for S3, not two); their
  bytes are the renditions' bitrates times the source's duration (HLS adds a few percent of container overhead).
- CloudFront bills egress per GB to viewers, not the origin fetch from S3. It depends on views, so the plan gives a
  rate (a TB, 1,000 full views of the mean video), never a total. The first 1 TB a month is free (always).

`verified` is False for a figure this table's author could not read on the cited page when it was written (the
MediaConvert page renders its prices in the browser; the figures are its long-published us-east-1 list prices):
`migrator plan` marks it "(not verified)", as it does the archive's and the providers'.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from migrator.providers.aws_job import LADDER

from .archive_prices import GB, PRICES, TB_GB, storage_usd

MEDIACONVERT = "https://aws.amazon.com/mediaconvert/pricing/"
# The volume tiers and normalized minutes, monthly per region, tier and account: AWS's own post (read 2026-12-06).
MEDIACONVERT_VOLUME = (
    "https://aws.amazon.com/blogs/media/optimize-costs-with-tiered-pricing-in-aws-elemental-mediaconvert/"
)
CLOUDFRONT = "https://aws.amazon.com/cloudfront/pricing/"
REGION = "us-east-1"
DATE = "2026-12-06"  # when the table was written

TIERS = ("basic", "professional")
RESOLUTIONS = ("SD", "HD", "UHD")
FRAME_RATES = ("<=30fps", "30-60fps")
HD_LINES, UHD_LINES = 720, 1081  # SD is below 720p, HD 720p to 1080p, UHD above 1080p

# USD per output minute, us-east-1, on demand, AVC, the first volume tier: (tier, resolution, frame rate) -> USD.
# The 30-60 fps class is twice the 30 fps one in each tier.
PER_MINUTE: dict[tuple[str, str, str], float] = {
    ("basic", "SD", "<=30fps"): 0.0075,
    ("basic", "HD", "<=30fps"): 0.015,
    ("basic", "UHD", "<=30fps"): 0.030,
    ("professional", "SD", "<=30fps"): 0.012,
    ("professional", "HD", "<=30fps"): 0.024,
    ("professional", "UHD", "<=30fps"): 0.048,
}
PER_MINUTE |= {(tier, res, "30-60fps"): 2 * usd for (tier, res, _), usd in list(PER_MINUTE.items())}
MEDIACONVERT_VERIFIED = False  # the page's table renders in the browser: not read here

# CloudFront: United States, Mexico and Canada (Europe's the same), read from the page on DATE.
EGRESS_FIRST_TIER_GB = 10 * TB_GB  # the first 10 TB a month
EGRESS_PER_GB = 0.085
EGRESS_FREE_GB = TB_GB  # the Always Free tier: 1 TB of data transfer out to the internet a month
EGRESS_FREE_REQUESTS = 10_000_000  # and 10,000,000 HTTP or HTTPS requests a month
CLOUDFRONT_VERIFIED = True


@dataclass(frozen=True)
class Rendition:
    """One output of the target's MediaConvert job: its name, height in lines and average bitrate (video and audio,
    kbit/s; 0 for a still image, whose bytes are negligible)."""

    name: str
    height: int
    kbps: int
    frame_capture: bool = False  # a thumbnail JPEG: billed as an output, costed here as SD (not verified)

    @property
    def resolution(self) -> str:
        return resolution_class(self.height)


# The ladder the aws target's job makes (migrator.providers.aws_job.LADDER), each rung at its QVBR ceiling with its
# audio (so storage and egress are upper bounds), and the poster's frame capture.
DEFAULT_LADDER: tuple[Rendition, ...] = (
    *(Rendition(r.name, r.height, (r.max_bitrate + r.audio_bitrate) // 1000) for r in LADDER),
    Rendition("thumbnail", 360, 0, frame_capture=True),
)


def resolution_class(height: int) -> str:
    """MediaConvert's resolution class of an output `height` lines tall."""
    return "SD" if height < HD_LINES else "HD" if height < UHD_LINES else "UHD"


def frame_rate_class(fps: float) -> str:
    """MediaConvert's frame-rate class; above 60 fps is not priced here."""
    if not 0 < fps <= 60:
        raise ValueError(f"frame rate {fps!r}: the plan prices outputs up to 60 fps")
    return "<=30fps" if fps <= 30 else "30-60fps"


def output_minutes(source_minutes: float, ladder: Iterable[Rendition] = DEFAULT_LADDER) -> dict[str, float]:
    """The output minutes by resolution class: every rendition lasts as long as its source."""
    minutes = dict.fromkeys(RESOLUTIONS, 0.0)
    for rendition in ladder:
        minutes[rendition.resolution] += source_minutes
    return {res: m for res, m in minutes.items() if m}


def transcode_usd(
    minutes_by_class: Mapping[str, float], tier: str, frame_rate: str = "<=30fps", per_minute=PER_MINUTE
) -> dict[str, float]:
    """The MediaConvert cost of those output minutes in `tier`, by resolution class."""
    if tier not in TIERS or frame_rate not in FRAME_RATES:
        raise ValueError(f"no MediaConvert price for {tier!r} at {frame_rate!r}")
    return {res: minutes * per_minute[(tier, res, frame_rate)] for res, minutes in minutes_by_class.items()}


def output_bytes(source_seconds: float, ladder: Iterable[Rendition] = DEFAULT_LADDER) -> float:
    """The renditions' bytes: the sum of their bitrates over the source's duration."""
    return sum(r.kbps for r in ladder) * 1000 / 8 * source_seconds


def s3_month_usd(nbytes: float) -> float:
    """A month of `nbytes` in S3 STANDARD, through its tiers (archive_prices' table)."""
    return storage_usd(PRICES["STANDARD"], nbytes / GB)


def egress_usd(gb: float, *, free_gb: float = 0.0) -> float:
    """CloudFront egress of `gb` GB in a month at the first tier's price, past `free_gb` free (the first 10 TB;
    the next tiers are cheaper: beyond them this is an upper bound)."""
    return max(0.0, gb - free_gb) * EGRESS_PER_GB


def view_gb(seconds: float, kbps: int) -> float:
    """The GB one full view of `seconds` of video at `kbps` sends."""
    return kbps * 1000 / 8 * seconds / GB


def cited() -> dict[str, dict]:
    """Each price the aws section uses, with its date and source (JSON's `aws.prices`)."""
    mediaconvert = {
        "usd_per_minute": {"/".join(key): usd for key, usd in PER_MINUTE.items()},
        "date": DATE,
        "source": MEDIACONVERT,
        "volume_tiers": MEDIACONVERT_VOLUME,
        "verified": MEDIACONVERT_VERIFIED,
    }
    standard = PRICES["STANDARD"]
    return {
        "mediaconvert": mediaconvert,
        "s3_standard_gb_month": {"usd": standard.gb_month[0][1], **standard.cited()},
        "cloudfront_egress_gb": {
            "usd": EGRESS_PER_GB,
            "first_tier_gb": EGRESS_FIRST_TIER_GB,
            "free_gb_month": EGRESS_FREE_GB,
            "free_requests_month": EGRESS_FREE_REQUESTS,
            "date": DATE,
            "source": CLOUDFRONT,
            "verified": CLOUDFRONT_VERIFIED,
        },
    }
