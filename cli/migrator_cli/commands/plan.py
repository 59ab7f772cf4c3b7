"""`migrator plan`: its options and its run, which estimates a migration from the inventory alone (no AWS)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from migrator.platforms import TARGETS

from ..errors import CliError
from ..options import positive_int, source_options
from ..triage import where_options
from .inventory import list_library


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "plan",
        help="what the migration will be, from the inventory alone (no AWS): assets, hours, size, time, costs",
        description=(
            "Read an inventory (CSV or JSON Lines, as load reads it) and print what migrating it will be: assets, "
            "hours of video, total size where the rows say it, assets the provider could never fetch (by reason), "
            "caption tracks, thumbnails, chapters, collections and publish dates (and per provider how many of each "
            "it carries and how many it notes, with why), the time at the provider's documented create rate (or "
            "--rate), the provider's cost "
            "from a price table shipped with the CLI (each price with its date and source; --prices FILE "
            "overrides), the AWS cost from the requests one asset was measured to cost (--aws-requests FILE "
            "overrides) at the region's prices (--aws-prices FILE), what an archive of the originals in your own S3 "
            "costs per storage class (one line; --archive: the table), the usage buckets (never played, not played "
            "in 24 or 12 months, played within 12 months, unknown) with each one's videos, hours, size, time and "
            "cost, for the aws target (your own account) its "
            "MediaConvert minutes per tier, S3 storage and CloudFront egress rate, and warnings. Nothing is sent; "
            "no AWS credentials are read."
        ),
    )
    p.add_argument("source", metavar="FILE", nargs="?", help="a .csv or .jsonl inventory, or - for standard input")
    p.add_argument("--format", choices=["csv", "jsonl"], help="the file's format (default: from its extension)")
    p.add_argument(
        "--provider",
        choices=TARGETS,
        help="only this provider",
    )
    p.add_argument("--rate", type=float, metavar="N", help="creates a second (the stack's ProviderRateLimit)")
    p.add_argument("--concurrency", type=positive_int, default=5, metavar="N", help="MaximumConcurrency (default 5)")
    p.add_argument("--storage-minutes", type=float, metavar="N", help="Cloudflare: the account's storage capacity")
    p.add_argument("--prices", metavar="FILE", help="provider prices (the shape of migrator_cli/data/prices.json)")
    p.add_argument("--aws-prices", metavar="FILE", help="AWS prices by region (data/aws-prices.json's shape)")
    p.add_argument("--aws-requests", metavar="FILE", help="requests per asset (data/aws-requests.json's shape)")
    p.add_argument("--region", default=None, help="AWS region for the prices (default us-east-1, or AWS_REGION)")
    p.add_argument(
        "--archive",
        action="store_true",
        help="the archive of the originals (the stack's ArchiveBucket) per S3 storage class, STANDARD to "
        "DEEP_ARCHIVE: a month of the library's bytes (rows without a size at the mean), the copy's requests once "
        "(its parts as the archiver cuts them), and each class's minimum storage duration, at us-east-1's prices, "
        "each cited (with --json: under `archive`); without it, one line gives the cheapest and the dearest class",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output (docs/operator-guide.md)")
    p.add_argument(
        "--inventory",
        metavar="FILE",
        help="with --from: where the listing is written before it is planned (default <platform>-inventory.jsonl)",
    )
    p.add_argument(
        "--window",
        metavar="HOURS",
        help="working hours the fleet will keep to (the stack's WorkingHours, e.g. 'Mon-Fri 09:00-18:00"
        " Europe/Berlin'): each provider's time is also given on the calendar, from now",
    )
    where_options(p, "plans", left_behind=False)
    source_options(p, required=False, rate_flag="--source-rate")
    p.set_defaults(endpoint=None, profile=None, run=run)


def unfetchable_reasons(path: Path):
    """Each unfetchable video's reason, read a line at a time (the file may hold millions); a line that
    does not parse (torn by a crash before a resume cut it) is passed over, not fatal."""
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if isinstance(doc, dict) and isinstance(doc.get("reason"), str):
                yield doc["reason"]


def _checked_window(text: str | None) -> str | None:
    from migrator.window import parse_window

    try:
        parsed = parse_window(text)
    except ValueError as exc:
        raise CliError(f"--window: {exc}") from None
    return parsed.text if parsed is not None else None


def run(args) -> int:
    import time

    from ..inventory import read_inventory
    from ..plan import PROVIDERS, estimate, load_json, summarise
    from ..plan_report import Plan
    from ..plan_usage import UsageBuckets
    from ..select import selection_of
    from ..triage import kept_records

    if args.platform and args.source:
        raise CliError("plan takes an inventory FILE or --from PLATFORM, one of the two")
    unfetchable_file: Path | None = None  # the listing's unfetchable videos (--from only)
    if args.platform:
        # The platform's listing, written (and resumable) as `migrator inventory --from` writes it, then planned.
        from ..sweep import default_output

        listed = Path(args.inventory) if args.inventory else default_output(args.platform)
        if list_library(args, listed, record_mark=False).exit_code not in (0, 1):  # a plan moves no mark
            return 2
        records, source = read_inventory(str(listed)), f"{args.platform} listing ({listed})"
        unfetchable_file = Path(args.unfetchable) if getattr(args, "unfetchable", None) else None
        unfetchable_file = unfetchable_file or listed.with_name(listed.name + ".unfetchable.jsonl")
    elif args.source:
        records, source = read_inventory(args.source, fmt=args.format), args.source
    else:
        raise CliError("plan needs an inventory FILE or --from PLATFORM")
    region = args.region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    prices = load_json(args.prices, "prices.json")
    aws_prices = load_json(args.aws_prices, "aws-prices.json")
    requests_doc = load_json(args.aws_requests, "aws-requests.json")
    selection, left_out = selection_of(args.where), [0]
    buckets = UsageBuckets(time.time())
    inventory = summarise(kept_records(records, selection, left_out), also=buckets.add)
    inventory.filtered = left_out[0]
    if unfetchable_file is not None and unfetchable_file.exists():
        inventory.source_unfetchable.update(unfetchable_reasons(unfetchable_file))

    def estimate_of(inv, name):
        return estimate(
            inv,
            name,
            prices,
            aws_prices,
            requests_doc,
            region=region,
            rate=args.rate,
            concurrency=args.concurrency,
            storage_minutes=args.storage_minutes,
        )

    providers = [args.provider] if args.provider else list(PROVIDERS)
    estimates = [estimate_of(inventory, name) for name in providers]
    plan = Plan(
        source,
        inventory,
        estimates,
        region,
        archive_table=args.archive,
        usage=buckets.outlook(estimate_of, providers),
        where=tuple(selection.described()) if selection is not None else (),
        window=_checked_window(args.window),
        start=time.time(),
    )
    if args.json:
        print(json.dumps(plan.as_dict(), ensure_ascii=False))
    else:
        print("\n".join(plan.lines()))
    return 1 if inventory.bad else 0
