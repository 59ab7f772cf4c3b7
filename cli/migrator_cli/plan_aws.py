"""`migrator plan`'s cost of the `aws` target (issue 44), the owner's own account: the MediaConvert minutes of every
rendition per tier and resolution class, the S3 storage of the HLS they write a month, and CloudFront's egress as a
rate (it depends on views), at the prices of aws_prices.py, each cited. Pure: `aws_outlook` reads the inventory's
durations, `lines` and `as_dict` say it.

Rows without a duration are costed at the mean of those with one, and said to be. Every video gets the whole ladder
(the target's renditions, a parameter); sources above 30 fps bill twice, so their figure is given beside.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import aws_prices as P
from .units import human_bytes
from .units import human_usd as _usd

PROVIDER = "aws"  # the target's name in platforms.TARGETS: its estimate carries this section


@dataclass
class AwsOutlook:
    assets: int = 0
    duration_known: int = 0
    source_minutes: float = 0.0  # every asset's, those estimated at the mean included
    estimated_minutes: float = 0.0
    ladder: tuple[P.Rendition, ...] = P.DEFAULT_LADDER
    output_minutes: dict[str, float] = field(default_factory=dict)  # by resolution class
    # tier -> frame-rate class -> resolution class -> USD
    transcode: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    bytes: float = 0.0
    s3_usd_month: float = 0.0
    mean_seconds: float = 0.0  # of one video, for the egress of a view

    @property
    def costed(self) -> bool:
        return self.source_minutes > 0

    def once_usd(self, tier: str, frame_rate: str = "<=30fps") -> float:
        return round(sum(self.transcode[tier][frame_rate].values()), 6)

    def per_1000_views(self, rendition: P.Rendition) -> float:
        """Egress of 1,000 full views of the mean video at `rendition`, at the first tier's price (before the free
        TB a month)."""
        return round(P.egress_usd(1000 * P.view_gb(self.mean_seconds, rendition.kbps)), 6)

    def _watched(self) -> tuple[P.Rendition, P.Rendition]:
        videos = [r for r in self.ladder if not r.frame_capture and r.kbps]
        return max(videos, key=lambda r: r.kbps), min(videos, key=lambda r: r.kbps)

    def as_dict(self) -> dict:
        top, bottom = self._watched()
        return {
            "region": P.REGION,
            "assets": self.assets,
            "duration_known": self.duration_known,
            "source_minutes": round(self.source_minutes, 6),
            "estimated_minutes": round(self.estimated_minutes, 6),
            "ladder": [
                {"name": r.name, "height": r.height, "kbps": r.kbps, "resolution": r.resolution} for r in self.ladder
            ],
            "output_minutes": {res: round(m, 6) for res, m in self.output_minutes.items()},
            "mediaconvert_usd": {
                tier: {rate: {res: round(usd, 6) for res, usd in by_res.items()} for rate, by_res in by_rate.items()}
                for tier, by_rate in self.transcode.items()
            },
            "once_usd": {tier: self.once_usd(tier) for tier in self.transcode},
            "bytes": round(self.bytes),
            "s3_gb_month": round(self.bytes / P.GB, 6),
            "s3_usd_month": round(self.s3_usd_month, 6),
            "egress": {
                "usd_per_gb": P.EGRESS_PER_GB,
                "usd_per_tb": round(P.egress_usd(P.TB_GB), 6),
                "free_gb_month": P.EGRESS_FREE_GB,
                "per_1000_views_usd": {r.name: self.per_1000_views(r) for r in (top, bottom)},
            },
            "prices": P.cited(),
        }

    def lines(self) -> list[str]:
        """The section `plan` prints when the aws target is planned."""
        known = (
            f"{self.assets - self.duration_known:,} of {self.assets:,} rows without a duration, at the mean:"
            f" {self.estimated_minutes:,.1f} min"
            if self.duration_known < self.assets
            else "every row has a duration"
        )
        if not self.costed:
            return [f"aws target      - (no row says its duration: give duration_s to cost it; {known})"]
        names = ", ".join(r.name for r in self.ladder)
        out = [
            f"aws target      {self.source_minutes:,.1f} min of source video ({known}); each made into {names}"
            f" ({P.REGION} prices)",
            "  MediaConvert output minutes: "
            + ", ".join(
                f"{res} {m:,.1f} ({', '.join(r.name for r in self.ladder if r.resolution == res)})"
                for res, m in self.output_minutes.items()
            ),
        ]
        for tier in self.transcode:
            by_res = self.transcode[tier]["<=30fps"]
            rates = ", ".join(f"{res} ${P.PER_MINUTE[(tier, res, '<=30fps')]:g}/min" for res in by_res)
            out.append(
                f"  MediaConvert {tier:<13} {_usd(self.once_usd(tier)):>11} once"
                f" ({', '.join(f'{res} {_usd(usd)}' for res, usd in by_res.items())}; {rates}; up to 30 fps);"
                f" sources above 30 fps: {_usd(self.once_usd(tier, '30-60fps'))}"
            )
        out.append(
            f"  S3 storage     {_usd(self.s3_usd_month):>11} a month: {self.bytes / P.GB:,.1f} GB-month of HLS"
            f" ({human_bytes(self.bytes)}, {sum(r.kbps for r in self.ladder):,} kbit/s of renditions), STANDARD"
        )
        top, bottom = self._watched()
        out.append(
            f"  CloudFront     ${P.EGRESS_PER_GB:g}/GB, {_usd(P.egress_usd(P.TB_GB))} a TB (the first 10 TB a month;"
            f" the first {P.EGRESS_FREE_GB / P.TB_GB:g} TB free): 1,000 full views of the mean video"
            f" ({self.mean_seconds / 60:,.1f} min) {_usd(self.per_1000_views(top))} at {top.name},"
            f" {_usd(self.per_1000_views(bottom))} at {bottom.name}"
        )
        basic, pro = (self.once_usd(tier) for tier in P.TIERS)
        out.append(
            f"  total          {_usd(basic)} (Basic) to {_usd(pro)} (Professional) once, then"
            f" {_usd(self.s3_usd_month)} a month and the egress of the views"
        )
        out.append("  aws prices (us-east-1; date, source):")
        mc_flag = "" if P.MEDIACONVERT_VERIFIED else "  (not verified)"
        for tier in P.TIERS:
            words = ", ".join(f"{res} ${P.PER_MINUTE[(tier, res, '<=30fps')]:g}" for res in P.RESOLUTIONS)
            out.append(
                f"    MediaConvert {tier:<13} {words} a minute (30-60 fps: twice)  {P.DATE}  {P.MEDIACONVERT}{mc_flag}"
            )
        out.append(f"    MediaConvert volume tiers  lower past monthly thresholds  {P.DATE}  {P.MEDIACONVERT_VOLUME}")
        if any(r.frame_capture for r in self.ladder):
            out.append(
                "    MediaConvert frame capture costed as an SD output of the video's length (assumed: the page"
                f" is unread){mc_flag}"
            )
        standard = P.PRICES["STANDARD"]
        s3_flag = "" if standard.verified else "  (not verified)"
        out.append(
            f"    S3 STANDARD                ${standard.gb_month[0][1]:g}/GB-month (first 50 TB)"
            f"  {standard.cited()['date']}  {standard.source}{s3_flag}"
        )
        cf_flag = "" if P.CLOUDFRONT_VERIFIED else "  (not verified)"
        out.append(
            f"    CloudFront egress          ${P.EGRESS_PER_GB:g}/GB (US, Mexico, Canada; Europe), 1 TB and"
            f" {P.EGRESS_FREE_REQUESTS:,} requests a month free  {P.DATE}  {P.CLOUDFRONT}{cf_flag}"
        )
        return out


def aws_outlook(
    assets: int, duration_known: int, seconds_known: float, ladder: tuple[P.Rendition, ...] = P.DEFAULT_LADDER
) -> AwsOutlook:
    """The aws target's costs for `assets` videos, `duration_known` of which say their duration (`seconds_known` in
    all); the others at the mean (pure)."""
    outlook = AwsOutlook(assets=assets, duration_known=duration_known, ladder=ladder)
    if not assets or not duration_known:
        return outlook
    mean = seconds_known / duration_known
    seconds = seconds_known + (assets - duration_known) * mean
    outlook.mean_seconds = mean
    outlook.source_minutes = seconds / 60
    outlook.estimated_minutes = (assets - duration_known) * mean / 60
    outlook.output_minutes = P.output_minutes(outlook.source_minutes, ladder)
    outlook.transcode = {
        tier: {rate: P.transcode_usd(outlook.output_minutes, tier, rate) for rate in P.FRAME_RATES} for tier in P.TIERS
    }
    outlook.bytes = P.output_bytes(seconds, ladder)
    outlook.s3_usd_month = P.s3_month_usd(outlook.bytes)
    return outlook
