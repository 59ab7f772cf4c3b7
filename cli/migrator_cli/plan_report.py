"""How a plan reads: the lines `migrator plan` prints and its JSON; use it to show an Inventory and its Estimates.

Beside the video: the inventory's thumbnails, chapters, collections (by kind, and the places in them) and publish
dates, and per target how many of each are carried and how many noted, with why (plan_extras.py)."""

from __future__ import annotations

from dataclasses import dataclass

from migrator.sources import HTTP_SOURCES  # each platform's documented read rate and requests a video

from .plan import Estimate, Inventory  # what a plan counted and estimated (plan.py); this module reads it out
from .plan_archive import ArchiveOutlook, archive_outlook
from .plan_aws import PROVIDER as AWS_TARGET
from .plan_aws import AwsOutlook, aws_outlook
from .plan_usage import UsageOutlook
from .plan_window import windowed_time
from .units import human_bytes as _bytes
from .units import human_usd as _usd

MAX_SHOWN_REASONS = 10


@dataclass
class Plan:
    source: str
    inventory: Inventory
    estimates: list[Estimate]
    region: str
    archive_table: bool = False  # `--archive`: the archive's cost per storage class, each price cited
    usage: UsageOutlook | None = None  # the usage buckets (plan_usage.py)
    where: tuple[str, ...] = ()  # the --where the plan is of (the inventory's `filtered` rows left out)
    window: str | None = None  # `--window`: the working hours kept to (plan_window.py): each time on the calendar
    start: float = 0.0  # when the windowed times start (the plan's own time)

    @property
    def archive(self) -> ArchiveOutlook:
        inv = self.inventory
        return archive_outlook(inv.assets, inv.bytes_known, inv.size_known, inv.archive_parts, inv.archive_too_large)

    @property
    def aws(self) -> AwsOutlook | None:
        """The aws target's MediaConvert, S3 and CloudFront figures (plan_aws.py), when it is planned."""
        if not any(e.provider == AWS_TARGET for e in self.estimates):
            return None
        inv = self.inventory
        return aws_outlook(inv.assets, inv.duration_known, inv.seconds_known)

    def as_dict(self) -> dict:
        inv = self.inventory
        sections: dict[str, object] = {"archive": self.archive.as_dict()} if self.archive_table else {}
        aws = self.aws
        sections |= {"aws": aws.as_dict()} if aws is not None else {}
        sections |= {"usage": self.usage.as_dict()} if self.usage is not None else {}
        sections |= {"where": list(self.where), "filtered": inv.filtered} if self.where else {}
        if self.window:
            sections |= {"window": {e.provider: _windowed(e, self.window, self.start) for e in self.estimates}}
        return {
            "type": "plan",
            "source": self.source,
            "assets": inv.assets,
            "rows": inv.rows,
            "bad": inv.bad,
            "repeats": inv.repeats,
            "bad_reasons": dict(inv.bad_reasons.most_common()),
            "hours": round((inv.seconds_known + inv.seconds_estimated) / 3600, 6),
            "hours_known": round(inv.seconds_known / 3600, 6),
            "duration_known": inv.duration_known,
            "bytes": inv.bytes_known,
            "size_known": inv.size_known,
            "tracks": inv.tracks,
            "assets_with_tracks": inv.assets_with_tracks,
            "track_languages": dict(inv.track_languages.most_common()),
            "privacy": dict(inv.privacy.most_common()),
            "source_references": dict(inv.references.most_common()),
            "thumbnails": inv.extras.thumbnails,
            "chapters": inv.extras.chapters,
            "collections": inv.extras.by_kind(),
            "memberships": inv.extras.memberships,
            "published": inv.extras.published,
            "region": self.region,
            "providers": {e.provider: _estimate_dict(e) for e in self.estimates},
            **sections,
        }

    def lines(self) -> list[str]:
        inv = self.inventory
        hours = (inv.seconds_known + inv.seconds_estimated) / 3600
        out = [
            f"inventory       {self.source}",
            *(
                [f"where           {' and '.join(self.where)}: {inv.filtered:,} assets left out, the plan is the rest"]
                if self.where
                else []
            ),
            f"assets          {inv.assets:,}"
            + (
                f" ({inv.rows:,} rows: {inv.bad:,} bad, {inv.repeats:,} repeated, {inv.skipped:,} skipped)"
                if inv.rows != inv.assets
                else ""
            ),
            f"video           {hours:,.1f} h"
            + (
                f" ({inv.duration_known:,} with a duration, {inv.seconds_known / 3600:,.1f} h; the rest estimated)"
                if inv.duration_known < inv.assets
                else ""
            ),
            f"size            {_bytes(inv.bytes_known)}"
            + (f" ({inv.size_known:,} of {inv.assets:,} rows say)" if inv.size_known < inv.assets else ""),
            f"tracks          {inv.tracks:,} on {inv.assets_with_tracks:,} assets"
            + (
                f" ({', '.join(f'{lang} {n:,}' for lang, n in inv.track_languages.most_common(5))})"
                if inv.tracks
                else ""
            ),
            f"privacy         {', '.join(f'{k} {n:,}' for k, n in inv.privacy.most_common())}"
            if inv.privacy
            else "privacy         -",
        ]
        if not self.archive_table:  # the one line; --archive gives the table below the providers'
            out.append(self.archive.line())
        out += _extras_lines(inv)
        if inv.references:  # resolved by the uploader at the create: a fresh link from the platform
            out.append(f"sources         {', '.join(f'{k}:// {n:,}' for k, n in inv.references.most_common())}")
        for reason, n in inv.bad_reasons.most_common(MAX_SHOWN_REASONS):
            out.append(f"  bad: {n:>8,}  {reason}")
        out.append("")
        out.append(f"{'provider':<11} {'to send':>9} {'time':>10} {'provider once':>14} {'per month':>11} {'AWS':>10}")
        for e in self.estimates:
            out.append(
                f"{e.provider:<11} {e.assets_to_send:>9,} {_duration(e.time_s):>10} {_usd(e.encoding_usd):>14}"
                f" {_usd(e.storage_usd_month):>11} {_usd(e.aws_usd):>10}"
            )
        for e in self.estimates:
            pace = f"{e.rate_per_s:.4g} creates a second ({e.rate_source})" if e.rate_per_s else e.rate_source
            out.append(f"  {e.provider}: time at {pace}; AWS {_breakdown(e)}")
            if e.extras is not None and inv.extras.any:
                out.append(f"  {e.provider}: extras: {e.extras.line()}")
                out += [f"  {e.provider}: {note}" for note in e.extras.notes()]
            for platform, seconds in e.source_time_s.items():
                slower = (
                    "the target's rate unknown: at least this"
                    if e.target_time_s is None
                    else "slower: it sets the time"
                    if seconds > e.target_time_s
                    else ""
                )
                source = HTTP_SOURCES[platform]
                out.append(
                    f"  {e.provider}: source {platform}: {_duration(seconds)} to resolve"
                    f" {inv.references[platform]:,} references at {source.documented_rate_per_s:.4g} requests a"
                    f" second, {source.requests_per_video} a video" + (f" ({slower})" if slower else "")
                )
            if self.window and (timed := windowed_time(e.time_s, self.window, self.start)) is not None:
                out.append(f"  {e.provider}: {timed.words()}")
        for e in self.estimates:
            for reason, n in e.unfetchable.items():
                out.append(f"  {e.provider}: unfetchable {n:,}: {reason}")
        if self.usage is not None:
            out += ["", *self.usage.lines(_duration)]
        aws = self.aws
        if aws is not None:
            out += ["", *aws.lines()]
        if self.archive_table:
            out += ["", *self.archive.lines()]
        out.append("")
        out.append("prices (per unit; date, source):")
        seen: set[tuple] = set()
        for e in self.estimates:
            for name, price in e.prices.items():
                key = (e.provider if not name.startswith(("dynamodb", "sqs", "lambda", "rest_api")) else "aws", name)
                if key in seen:
                    continue
                seen.add(key)
                flag = "" if price["verified"] else "  (not verified)"
                out.append(
                    f"  {key[0]:<10} {name:<28} {_unit_price(price['usd'])}  {price['date']}  {price['source']}{flag}"
                )
        warnings = [w for e in self.estimates for w in e.warnings]
        if warnings:
            out.append("")
            out += [f"warning: {w}" for w in dict.fromkeys(warnings)]
        return out


def _estimate_dict(e: Estimate) -> dict:
    return {
        "assets_to_send": e.assets_to_send,
        "unfetchable": e.unfetchable,
        "rate_per_s": e.rate_per_s,
        "rate_source": e.rate_source,
        "time_s": None if e.time_s is None else round(e.time_s, 3),
        "target_time_s": None if e.target_time_s is None else round(e.target_time_s, 3),
        "source_time_s": {platform: round(seconds, 3) for platform, seconds in e.source_time_s.items()},
        "encoding_usd": e.encoding_usd,
        "storage_usd_month": e.storage_usd_month,
        "aws_usd": e.aws_usd,
        "aws_breakdown": e.aws_breakdown,
        "ledger_storage_usd_month": e.ledger_storage_usd_month,
        "prices": e.prices,
        "warnings": e.warnings,
        "extras": e.extras.as_dict() if e.extras is not None else None,
    }


def _extras_lines(inv: Inventory) -> list[str]:
    """What a viewer sees besides the video, as the inventory has it: one line each, or one saying there is none."""
    extras = inv.extras
    if not extras.any:
        return ["extras          none (no thumbnail, chapters, collection or publish date in the rows)"]
    of = f" of {inv.assets:,} assets"
    surplus = (
        f" ({extras.chapters_surplus:,} more chapters tracks: one list a video)" if extras.chapters_surplus else ""
    )
    kinds = ", ".join(f"{n:,} {kind}" for kind, n in extras.by_kind().items())
    return [
        f"thumbnails      {extras.thumbnails:,}{of}",
        f"chapters        {extras.chapters:,}{of}{surplus}",
        f"collections     {extras.collections:,}"
        + (f" ({kinds})" if kinds else "")
        + f": {extras.memberships:,} places on {extras.assets_in_collections:,} assets",
        f"published       {extras.published:,}{of} say when they were first published",
    ]


def _unit_price(usd: float) -> str:
    return f"${usd * 1e6:.4g} per million" if 0 < usd < 0.001 else f"${usd:g}"


def _breakdown(e: Estimate) -> str:
    names = {
        "dynamodb_write_units": "DynamoDB writes",
        "dynamodb_read_units": "reads",
        "sqs_requests": "SQS",
        "lambda_requests": "Lambda requests",
        "lambda_gb_seconds": "GB-s",
        "api_requests": "API Gateway",
    }
    parts = [f"{names[k]} {_usd(v)}" for k, v in e.aws_breakdown.items()]
    return ", ".join(parts) + f"; the ledger then {_usd(e.ledger_storage_usd_month)} a month"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 3600:
        return f"{seconds / 60:,.1f} min"
    if seconds < 86400 * 2:
        return f"{seconds / 3600:,.1f} h"
    return f"{seconds / 86400:,.1f} days"


def _windowed(e: Estimate, window: str, start: float) -> dict | None:
    timed = windowed_time(e.time_s, window, start)
    return timed.as_dict() if timed is not None else None
