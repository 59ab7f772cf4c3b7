"""`migrator`: the operator's command line for a deployed migration stack (AWS or a local emulator).

Every subcommand explains itself with --help. Problems the operator can fix (a wrong
stack name, no credentials, an unreadable file) end in one line on stderr and exit
status 2, never a traceback; a run that finished but left some rows or assets behind
exits with 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path

from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError, NoCredentialsError
from migrator.ledger import REARMABLE, Ledger
from migrator.states import State

from .cutover import SIGNED as SIGNED_TEXT
from .errors import CliError
from .export import ID_FIELDS as EXPORT_ID_FIELDS
from .export import URL_FIELDS as EXPORT_URL_FIELDS
from .progress import Progress

EPILOG = """\
Pick the stack with --stack NAME (its CloudFormation outputs are read), or with --outputs FILE
(written by `infra/local-stack up --outputs`). --endpoint URL (or MIGRATOR_ENDPOINT) points every
call at a local emulator. MIGRATOR_STACK and MIGRATOR_OUTPUTS work like the flags.

A typical migration:
  migrator plan inventory.csv             what it will be: assets, hours, size, time, provider and AWS cost
  migrator load inventory.csv --sample 50 a pilot: 50 rows chosen by a hash of their id (reproducible)
  migrator load inventory.csv             push one message per asset (validated, deduped)
  migrator status --watch                 counts, throughput, ETA, 429 rate, DLQ, oldest in flight
  migrator report -o mapping.csv          our id -> provider id, durations, errors
  migrator retry                          re-enqueue failed assets with a fresh attempt budget
  migrator retry --tracks                 re-arm failed caption tracks (the report says why they failed)
  migrator show ID                        one asset: state, provider video, errors, its tracks
  migrator export --format nginx ...      the cut-over map: old URL -> new playback URL, per asset
  migrator verify --checkpoint F          each ready asset's HLS manifest, duration, resolution vs the source
From the platform the library lives on (Vimeo, Wistia, Mux, Cloudflare Stream, api.video, S3):
  migrator inventory --from vimeo -o vimeo.jsonl   list it: rows with source references, unfetchable apart
  migrator load vimeo.jsonl                        load what was written, as it is
  migrator load --from vimeo                       both in one go; --since last catches up later uploads
Probe first instead (ffprobe checks each source before any upload):
  migrator load inventory.csv --stage     record assets as pending, enqueue nothing
  migrator probe                          pending -> inventoried (duration) or rejected (reason)
  migrator retry --state inventoried      enqueue what passed
"""


def _stack_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("stack and AWS (as the AWS CLI reads them)")
    group.add_argument("--stack", metavar="NAME", help="CloudFormation stack name (or MIGRATOR_STACK)")
    group.add_argument("--outputs", metavar="FILE", help="JSON file of the stack's outputs (or MIGRATOR_OUTPUTS)")
    group.add_argument(
        "--endpoint-url",
        "--endpoint",
        dest="endpoint",
        metavar="URL",
        help="a LocalStack-compatible endpoint, e.g. http://127.0.0.1:4566 (or AWS_ENDPOINT_URL)",
    )
    group.add_argument("--region", help="AWS region (or AWS_REGION, AWS_DEFAULT_REGION, the profile's)")
    group.add_argument("--profile", help="a named profile from ~/.aws/config (or AWS_PROFILE)")
    group.add_argument("--json", action="store_true", help="machine-readable output (docs/operator-guide.md)")


def _mux_host_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "Mux playback hosts (its video objects carry playback ids, never URLs; these build them)"
    )
    for name, what, default in (
        ("stream", "HLS", "https://stream.mux.com"),
        ("image", "thumbnail", "https://image.mux.com"),
        ("player", "player", "https://player.mux.com"),
    ):
        group.add_argument(
            f"--mux-{name}-url",
            metavar="URL",
            help=f"the {what} host to build Mux URLs on (default {default}; a custom domain, or the simulator)",
        )


def mux_hosts(args) -> dict[str, str]:
    hosts = {"hls": args.mux_stream_url, "thumbnail": args.mux_image_url, "player": args.mux_player_url}
    return {k: v for k, v in hosts.items() if v}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("video-migrator")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value <= 30 * 86_400:
        raise argparse.ArgumentTypeError("must be between 0 and 2592000 seconds")
    return value


def where_filter(text: str) -> tuple[str, str]:
    from .select import parse_where

    try:
        return parse_where(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def state_name(text: str) -> State:
    try:
        return State(text.lower())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"unknown state {text!r}; states: {', '.join(s.value for s in State)}"
        ) from None


def since_time(text: str) -> float | str:
    from .sweep import parse_since

    try:
        return parse_since(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _source_options(parser: argparse.ArgumentParser, required: bool, rate_flag: str = "--rate") -> None:
    """Where a library is listed from, and with which credentials (the operator's, never the stack's).
    `rate_flag`: the name of the listing's own rate option (plan's `--rate` is the provider's)."""
    from migrator.sources import PLATFORMS

    group = parser.add_argument_group("the source library (docs/sources.md)")
    group.add_argument(
        "--from", dest="platform", choices=PLATFORMS, required=required, help="the platform to list the library from"
    )
    group.add_argument(
        "--credentials",
        metavar="FILE",
        help='JSON {"<platform>": {...}}, the stack\'s source secret format (else --source-profile, '
        "MIGRATOR_SOURCE_CREDENTIALS, or VIMEO_TOKEN, WISTIA_TOKEN, MUX_TOKEN_ID/MUX_TOKEN_SECRET, "
        "CLOUDFLARE_ACCOUNT_ID/CLOUDFLARE_API_TOKEN, APIVIDEO_API_KEY)",
    )
    group.add_argument(
        "--source-profile", metavar="NAME", help="a profile of ~/.config/video-migrator/sources.json holding them"
    )
    group.add_argument("--source-url", metavar="URL", help="the platform's API address, if not its own (a simulator)")
    group.add_argument("--s3", metavar="S3URL", help="with --from s3: the bucket and prefix, s3://bucket/prefix")
    group.add_argument(
        "--since",
        type=since_time,
        metavar="TIME",
        help="only what was added or changed since TIME (RFC 3339 or epoch seconds), or 'last': since the "
        "previous finished sweep's mark (--mark-file)",
    )
    group.add_argument(
        "--mark-file", metavar="FILE", help="where each finished sweep records its mark (default <platform>.mark.json)"
    )
    group.add_argument("--state", metavar="FILE", help="the resumable cursor file (default <output>.state.json)")
    group.add_argument("--restart", action="store_true", help="ignore a saved cursor and list from the start")
    group.add_argument("--no-tracks", action="store_true", help="do not look up caption tracks (fewer requests)")
    group.add_argument(
        rate_flag,
        dest="source_rate",
        type=float,
        metavar="R",
        help="requests per second to the source (default: its documented limit)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="migrator",
        description=(
            "Operate a video-library migration: load the inventory, watch it, export the mapping, fix what failed."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "load",
        help="push an inventory (CSV, JSON Lines or an S3 listing) to the queue",
        description=(
            "Read an inventory and push one message per asset, 10 per SendMessageBatch call, in parallel. "
            "CSV needs a header with id and source_url, and may have title, metadata (a JSON object) and "
            "duration_s; JSON Lines has one object per line with the same fields. s3://bucket/prefix lists "
            "the video objects under the prefix: the id is derived from bucket and key, and the uploader "
            "hands the provider a presigned GET URL (stack parameter PresignExpirySeconds). Every s3:// "
            "source, listed or in a file, must be in the stack's bucket (stack parameter SourceBucketName), "
            "the only one the uploader can read. A row's options for the stack's provider (options.mux, "
            "options.cloudflare, options.apivideo) must be ones that provider takes. Bad rows are "
            "reported with their line numbers and the good rows still go; an id repeated with the same URL "
            "is dropped with a warning, with a different URL it is an error. The file is streamed. Loading "
            "the same file twice creates nothing twice: the ledger's claim refuses duplicates."
        ),
    )
    p.add_argument(
        "source",
        metavar="FILE",
        nargs="?",
        help="a .csv or .jsonl file, - for standard input, or s3://bucket/prefix (or --from PLATFORM)",
    )
    p.add_argument("--format", choices=["csv", "jsonl"], help="the file's format (default: from its extension)")
    p.add_argument("--dry-run", action="store_true", help="validate and count, send nothing")
    p.add_argument("--limit", type=positive_int, metavar="N", help="stop after N good rows")
    p.add_argument(
        "--stage",
        action="store_true",
        help="record the assets in the ledger as pending instead of enqueuing (probe first)",
    )
    p.add_argument("--workers", type=positive_int, default=8, metavar="N", help="parallel senders (default 8)")
    pilot = p.add_argument_group(
        "a pilot (a reproducible subset; a later full load sends the rest, and the stack drops what moved already)"
    )
    pilot.add_argument(
        "--sample",
        type=positive_int,
        metavar="N",
        help="send N rows chosen by a hash of their id and --seed: the same rows on every run, whatever their order",
    )
    pilot.add_argument("--seed", type=int, default=0, metavar="S", help="the sample's seed (default 0)")
    pilot.add_argument(
        "--where",
        type=where_filter,
        action="append",
        metavar="FIELD=VALUE",
        help="only rows whose folder, tag or privacy matches VALUE (a glob; privacy=default: the stack's); "
        "repeatable: the same field matches either value, different fields all of them",
    )
    p.add_argument(
        "--inventory",
        metavar="FILE",
        help="with --from: where the listing is written before it is loaded (default <platform>-inventory.jsonl)",
    )
    _source_options(p, required=False)
    _stack_options(p)

    p = sub.add_parser(
        "plan",
        help="what the migration will be, from the inventory alone (no AWS): assets, hours, size, time, costs",
        description=(
            "Read an inventory (CSV or JSON Lines, as load reads it) and print what migrating it will be: assets, "
            "hours of video, total size where the rows say it, assets the provider could never fetch (by reason), "
            "caption tracks, the time at the provider's documented create rate (or --rate), the provider's cost "
            "from a price table shipped with the CLI (each price with its date and source; --prices FILE "
            "overrides), the AWS cost from the requests one asset was measured to cost (--aws-requests FILE "
            "overrides) at the region's prices (--aws-prices FILE), and warnings. Nothing is sent; no AWS "
            "credentials are read."
        ),
    )
    p.add_argument("source", metavar="FILE", nargs="?", help="a .csv or .jsonl inventory, or - for standard input")
    p.add_argument("--format", choices=["csv", "jsonl"], help="the file's format (default: from its extension)")
    p.add_argument("--provider", choices=["generic", "mux", "cloudflare", "apivideo"], help="only this provider")
    p.add_argument("--rate", type=float, metavar="N", help="creates a second (the stack's ProviderRateLimit)")
    p.add_argument("--concurrency", type=positive_int, default=5, metavar="N", help="MaximumConcurrency (default 5)")
    p.add_argument("--storage-minutes", type=float, metavar="N", help="Cloudflare: the account's storage capacity")
    p.add_argument("--prices", metavar="FILE", help="provider prices (the shape of migrator_cli/data/prices.json)")
    p.add_argument("--aws-prices", metavar="FILE", help="AWS prices by region (data/aws-prices.json's shape)")
    p.add_argument("--aws-requests", metavar="FILE", help="requests per asset (data/aws-requests.json's shape)")
    p.add_argument("--region", default=None, help="AWS region for the prices (default us-east-1, or AWS_REGION)")
    p.add_argument("--json", action="store_true", help="machine-readable output (docs/operator-guide.md)")
    p.add_argument(
        "--inventory",
        metavar="FILE",
        help="with --from: where the listing is written before it is planned (default <platform>-inventory.jsonl)",
    )
    _source_options(p, required=False, rate_flag="--source-rate")
    p.set_defaults(endpoint=None, profile=None)

    p = sub.add_parser(
        "inventory",
        help="list a library on the platform it lives on into an inventory (JSONL, CSV on request)",
        description=(
            "Page through a Vimeo, Wistia, Mux, Cloudflare Stream, api.video or S3 library and write one row per "
            "video (title, description, tags, creation time, duration, size, privacy, folder, caption tracks, "
            "poster time) whose source_url is a source reference such as vimeo://123: the uploader resolves it "
            "to a fresh download link only when it creates the video, so no link expires in the queue. Videos "
            "that can never be fetched (no file access, still processing, no MP4, signed-only, archived, ...) "
            "are counted, kept out, and listed with their reason in <output>.unfetchable.jsonl. The listing "
            "keeps to the source's documented rate and waits out its 429s; after each page the cursor is saved, "
            "so the same command resumes an interrupted sweep. `migrator load` takes the output as it is. "
            "Needs no stack."
        ),
    )
    p.add_argument(
        "-o", "--output", metavar="FILE", help="the JSON Lines inventory (default <platform>-inventory.jsonl)"
    )
    p.add_argument("--csv", metavar="FILE", help="also write the rows as CSV")
    p.add_argument(
        "--unfetchable", metavar="FILE", help="where unfetchable videos go (default <output>.unfetchable.jsonl)"
    )
    p.add_argument("--limit", type=positive_int, metavar="N", help="stop after N rows (the same command goes on)")
    _source_options(p, required=True)
    group = p.add_argument_group("AWS, for --from s3 (as the AWS CLI reads them)")
    group.add_argument("--endpoint-url", "--endpoint", dest="endpoint", metavar="URL", help="an S3-compatible endpoint")
    group.add_argument("--region", help="AWS region")
    group.add_argument("--profile", help="a named profile from ~/.aws/config")
    group.add_argument("--json", action="store_true", help="the summary as one JSON object")

    p = sub.add_parser(
        "probe",
        help="ffprobe each pending source: inventoried with its duration, or rejected with a reason",
        description=(
            "The inventory pass. For each pending asset, ffprobe (Debian's ffmpeg) reads the source's duration "
            "and checks it has a video stream. A source with no video stream, or one ffprobe cannot read, "
            "becomes rejected with the reason; the others become inventoried with duration_s (the drift "
            "canary compares it with the provider's later). Only http(s) sources are probed (s3:// ones "
            "through a presigned URL); an asset the uploader claims meanwhile is left to it. ffprobe reaches "
            "public addresses only, redirects included: a source that leads to a private, loopback or "
            "link-local address (cloud metadata, localhost, the internal network) is rejected."
        ),
    )
    p.add_argument("--concurrency", type=positive_int, default=8, metavar="N", help="probes at once (default 8)")
    p.add_argument("--timeout", type=seconds, default=60.0, metavar="S", help="per source (default 60)")
    p.add_argument("--dry-run", action="store_true", help="probe and report, change nothing")
    p.add_argument("--ffprobe", default="ffprobe", metavar="PATH", help="the ffprobe binary (default: on PATH)")
    p.add_argument(
        "--allow-private-addresses",
        action="store_true",
        help="let ffprobe reach private and local addresses too: for local test servers only, never a real library",
    )
    _stack_options(p)

    p = sub.add_parser(
        "status",
        help="counts by state, throughput, ETA, 429 rate, DLQ depth, oldest in flight",
        description=(
            "One screen on the migration. Counts come from aggregates the tally Lambda keeps from the "
            "ledger's stream, so each refresh reads a few dozen items whatever the size of the table."
        ),
    )
    p.add_argument(
        "--watch",
        nargs="?",
        type=float,
        const=5.0,
        metavar="SECONDS",
        help="refresh every SECONDS (default 5) until Ctrl-C",
    )
    p.add_argument("--count", type=positive_int, metavar="N", help="with --watch: stop after N refreshes")
    p.add_argument(
        "--window", type=positive_int, default=15, metavar="MIN", help="minutes of throughput history (default 15)"
    )
    p.add_argument(
        "--exact", action="store_true", help="count through the ledger's index instead (reads every entry: an audit)"
    )
    _stack_options(p)

    p = sub.add_parser(
        "report",
        help="export the mapping (our id, source, state, provider id, durations, attempts, last error, privacy,"
        " what did not fit)",
        description="One line per asset, as CSV or JSON Lines, streamed from a parallel scan of the ledger.",
    )
    p.add_argument("--format", choices=["csv", "jsonl"], default="csv", help="default csv")
    p.add_argument(
        "--state", type=state_name, action="append", metavar="STATE", help="only assets in STATE (repeatable)"
    )
    p.add_argument("--drift", action="store_true", help="only assets the duration-drift canary flagged")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    p.add_argument(
        "--html",
        metavar="FILE",
        help="write one self-contained page instead: counts, throughput over time, why assets failed or were "
        "rejected, the largest drifts (no server, nothing loaded from the network)",
    )
    _stack_options(p)

    p = sub.add_parser(
        "export",
        help="the cut-over map: each asset's source and where it now plays, or redirect maps (old URL -> new)",
        description=(
            "One row per asset, streamed from the ledger: our id, the source platform and id, the source URL, "
            "the provider and its video id, the playback id, the HLS, player and thumbnail URLs the provider "
            "gave when the video was ready, privacy, state and tracks. A video that needs a token to play "
            f"(signed or private) says '{SIGNED_TEXT}' instead of a URL. --format nginx writes a `map` block "
            "and --format redirects an old_url,new_url CSV, from --old-url and --new-url templates with "
            "{placeholders}: ids (" + ", ".join(f"{{{n}}}" for n in EXPORT_ID_FIELDS) + ") are percent-encoded "
            "into the URL, URLs (" + ", ".join(f"{{{n}}}" for n in EXPORT_URL_FIELDS) + ") go in as they are."
        ),
    )
    p.add_argument("--format", choices=["csv", "jsonl", "nginx", "redirects"], default="csv", help="default csv")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    p.add_argument("--old-url", metavar="TEMPLATE", help="e.g. 'https://vimeo.com/{source_id}'")
    p.add_argument("--new-url", metavar="TEMPLATE", help="e.g. 'https://player.example/{playback_id}'")
    p.add_argument(
        "--nginx-key",
        choices=["uri", "url"],
        default="uri",
        help="what the nginx map matches: $request_uri (the old URL's path and query; default) or the whole URL",
    )
    p.add_argument("--nginx-variable", default="migrator_new_url", metavar="NAME", help="the map's variable")
    p.add_argument(
        "--nginx-no-hash-sizes",
        action="store_true",
        help="leave out map_hash_max_size and map_hash_bucket_size (set elsewhere in http {}); a comment gives them",
    )
    p.add_argument(
        "--state", type=state_name, action="append", metavar="STATE", help="only assets in STATE (repeatable)"
    )
    _mux_host_options(p)
    _stack_options(p)

    p = sub.add_parser(
        "verify",
        help="the parity check: each ready asset's HLS manifest, duration and resolution against its source's",
        description=(
            "For each ready asset, fetch its HLS manifest from the provider (master and top variant) and check it "
            "exists and is a finished playlist, that its duration matches the provider's and the source's "
            "(duration_s from the inventory or the probe), and that its top resolution reaches the source's "
            "(metadata width/height from the inventory, else what the provider read from the source). Each "
            "mismatch is listed with its numbers; exit 1 when any asset fails or got no answer. Bounded "
            "(--concurrency), paced (--rate fetches a second) and resumable (--checkpoint FILE: a second run "
            "skips what the first finished). The fetches go from this machine to public addresses only, "
            "redirects included. Signed playback is not fetched (it needs a token)."
        ),
    )
    p.add_argument("--tolerance", type=seconds, default=1.0, metavar="S", help="duration tolerance (default 1 s)")
    p.add_argument(
        "--resolution-tolerance", type=int, default=0, metavar="PX", help="pixels the target may fall short (0)"
    )
    p.add_argument("--rate", type=float, default=10.0, metavar="N", help="fetches a second at most (default 10)")
    p.add_argument("--concurrency", type=positive_int, default=4, metavar="N", help="assets at once (default 4)")
    p.add_argument("--timeout", type=seconds, default=10.0, metavar="S", help="per fetch (default 10)")
    p.add_argument("--checkpoint", metavar="FILE", help="keep verdicts here; a later run resumes from it")
    p.add_argument("--limit", type=positive_int, metavar="N", help="check at most N assets this run")
    p.add_argument("--id", action="append", dest="ids", metavar="ID", help="only this asset (repeatable)")
    p.add_argument(
        "--allow-private-addresses",
        action="store_true",
        help="let the fetches reach private and local addresses too: for a local simulator only",
    )
    _mux_host_options(p)
    _stack_options(p)

    p = sub.add_parser(
        "retry",
        help="re-enqueue the assets in a state (default: failed)",
        description=(
            "Re-arm and re-enqueue assets. failed (and rejected, if you ask) get a fresh attempt budget; the "
            "uploader still asks the provider first whether an earlier try created the video, so a retry "
            "never makes a second copy. pending and inventoried assets (staged, probed) are simply enqueued."
        ),
    )
    p.add_argument(
        "--state", type=state_name, default=State.FAILED, help="failed (default), rejected, pending or inventoried"
    )
    p.add_argument("--id", action="append", dest="ids", metavar="ID", help="only this asset (repeatable)")
    p.add_argument("--ids-file", metavar="FILE", help="only the ids in FILE, one per line")
    p.add_argument("--dry-run", action="store_true", help="list what would be retried")
    p.add_argument(
        "--tracks",
        action="store_true",
        help="re-arm the failed caption tracks of ready assets instead (only those; the others are left as they "
        "are) and send them to the tracks worker; --state does not apply",
    )
    _stack_options(p)

    p = sub.add_parser(
        "show",
        help="one asset as the ledger holds it: state, provider video, attempts, errors, its caption tracks",
        description="One consistent read of the asset's ledger item; --json prints it whole (tracks included).",
    )
    p.add_argument("asset_id", metavar="ID", help="the asset's id, as in the inventory")
    _stack_options(p)

    p = sub.add_parser(
        "redrive",
        help="move dead-letter messages back to the queue",
        description=(
            "Each DLQ message is copied to the queue, then deleted from the DLQ (a crash leaves a harmless duplicate)."
        ),
    )
    p.add_argument("--limit", type=positive_int, metavar="N", help="move at most N messages")
    _stack_options(p)

    for name, verb in (("pause", "Disable"), ("resume", "Enable")):
        p = sub.add_parser(
            name,
            help=f"{name} the uploader ({verb.lower()} its queue's event source mapping)",
            description=(
                f"{verb} the uploader's event source mapping. Invocations already running finish and record "
                "their outcome; messages not yet received stay in the queue, so nothing is lost."
            ),
        )
        _stack_options(p)

    p = sub.add_parser(
        "audit",
        help="prove it on the provider: duplicate videos, missing videos, state drift against the ledger",
        description=(
            "Page through the provider's whole library and the ledger, and list every asset of ours that "
            "holds more than one live provider video, every ledger asset whose recorded video the provider "
            "does not have, and every video the provider sees in another state than the ledger. Run it on "
            "the real account after a migration. The credentials are the stack's (read with your AWS "
            "credentials); 429s are waited out. Exit 0 when there is nothing to report, 1 otherwise."
        ),
    )
    p.add_argument("--provider-url", metavar="URL", help="the provider's API address, if not the stack's")
    _stack_options(p)

    p = sub.add_parser(
        "doctor",
        help="check a deployed stack can migrate: credentials, provider, webhook, mapping, queue, alarms, DLQ",
        description=(
            "One line per check, and a fix for each failure: the provider's credentials readable by the "
            "functions' role and accepted by the provider (asked from inside the stack), the clock against the "
            "provider's, a signed test webhook accepted end to end, the uploader's event source mapping enabled, "
            "the queue's visibility timeout at least 6 x the function's timeout, the alarms subscribed, the "
            "dead-letter queue empty. Exit 0 only when every check passes."
        ),
    )
    _stack_options(p)

    p = sub.add_parser(
        "reconcile",
        help="run reconcile now: heal lost work, poll for lost webhooks, flag drift",
        description=(
            "Invoke the reconcile Lambda and print its summary. Without options it uses the stack's "
            "thresholds; each run is bounded, reads only the assets that are due (the longest silent first), "
            "and the next run takes what it left."
        ),
    )
    p.add_argument("--heal-after", type=seconds, metavar="S", help="quiet time before an asset is healed")
    p.add_argument("--poll-after", type=seconds, metavar="S", help="processing time before the provider is asked")
    p.add_argument("--max-items", type=positive_int, metavar="N", help="index items to examine in this run")
    _stack_options(p)
    return parser


# --- commands ------------------------------------------------------------------------------------


def _target(args):
    from .target import resolve

    return resolve(args.stack, args.outputs, args.endpoint, args.region, args.profile)


def _sweep(args, output: Path) -> int:
    """List the library `args` names into `output`; prints the summary; the sweep's exit code."""
    from .load import _ctrl_c_sets
    from .sweep import MARK_OVERLAP_S, build_source, default_output, read_mark, source_credentials, sweep

    platform = args.platform
    credentials = None
    if platform != "s3":
        credentials = source_credentials(platform, args.credentials, args.source_profile)
    s3 = _standalone_client("s3", args) if platform == "s3" else None
    source = build_source(
        platform, credentials=credentials, base_url=args.source_url, rate=args.source_rate, s3=s3, s3_url=args.s3
    )
    mark_path = Path(args.mark_file or f"{platform}.mark.json")
    since = args.since
    if since == "last":
        since = read_mark(mark_path, platform) - MARK_OVERLAP_S
    output = output or default_output(platform)
    stop = threading.Event()
    with _ctrl_c_sets(stop):
        summary = sweep(
            source,
            output,
            unfetchable_output=Path(args.unfetchable) if getattr(args, "unfetchable", None) else None,
            csv_output=Path(args.csv) if getattr(args, "csv", None) else None,
            state_path=Path(args.state) if args.state else None,
            mark_path=mark_path,
            since=since,
            restart=args.restart,
            limit=getattr(args, "limit", None) if args.command == "inventory" else None,
            tracks=not args.no_tracks,
            out=sys.stderr,
            stop=stop,
        )
    if args.json and args.command == "inventory":
        _json_lines({"type": "summary", **summary.as_dict()})
    else:
        print("\n".join(summary.lines()), file=sys.stderr)
    return summary.exit_code


def cmd_inventory(args) -> int:
    from .sweep import default_output

    return _sweep(args, Path(args.output) if args.output else default_output(args.platform))


def cmd_load(args) -> int:
    from .load import SourceBucket, load_inventory
    from .sender import SENDER_CLIENT_CONFIG

    if bool(args.source) == bool(args.platform):
        raise CliError("load takes a FILE (or s3://bucket/prefix) or --from PLATFORM, one of the two")
    if args.platform:
        from .sweep import default_output

        inventory = Path(args.inventory) if args.inventory else default_output(args.platform)
        code = _sweep(args, inventory)
        if code:
            return code
        args.source, args.format = str(inventory), "jsonl"

    # A dry run checks a file without any AWS: no stack, no credentials (the stack's source
    # bucket is checked too when one is named).
    named = args.stack or args.outputs or os.environ.get("MIGRATOR_STACK") or os.environ.get("MIGRATOR_OUTPUTS")
    target = _target(args) if not args.dry_run or named else None
    listing = args.source.startswith("s3://")
    emit = _json_lines if args.json else None
    summary = load_inventory(
        args.source,
        sqs=target.client("sqs", SENDER_CLIENT_CONFIG) if target and not args.dry_run else None,
        queue_url=target.output("QueueUrl") if target and not args.dry_run else None,
        s3=(target.client("s3") if target else _standalone_client("s3", args)) if listing else None,
        ledger=Ledger(target.output("LedgerTableName"), target.client("dynamodb")) if args.stage else None,
        fmt=args.format,
        dry_run=args.dry_run,
        limit=args.limit,
        stage=args.stage,
        workers=args.workers,
        out=sys.stderr,
        stop=threading.Event(),
        source_bucket=SourceBucket.of_outputs(target.outputs) if target else None,
        on_problem=(lambda fields: emit({"type": "problem", **fields})) if emit else None,
        selection=_selection(args),
    )
    if emit:
        emit({"type": "summary", **summary.as_dict()})
    else:
        print("\n".join(summary.lines()), file=sys.stderr)
    return summary.exit_code


def _selection(args):
    """The pilot's --where and --sample, or None for a whole load."""
    from .select import Selection

    if not args.where and args.sample is None:
        return None
    try:
        return Selection(tuple(args.where or ()), args.sample, args.seed)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def _tally_counts(target) -> dict:
    """Assets by state as the tally keeps them (a few reads), for a progress total; {} when unreadable."""
    from migrator.tally import read_stats

    try:
        return read_stats(target.client("dynamodb"), target.output("StatsTableName"), time.time(), 0).counts
    except (CliError, ClientError, BotoCoreError):
        return {}  # a bar without a percentage: the work itself will say what is wrong


def _count_in(target, state: State) -> int | None:
    return _tally_counts(target).get(state.value) or None


def _count_in_all(target) -> int | None:
    return sum(_tally_counts(target).values()) or None


def _json_lines(doc: dict) -> None:
    print(json.dumps(doc, ensure_ascii=False, default=str), flush=True)


def _standalone_client(service: str, args):
    """A client without a stack (a dry run of an S3 listing): the AWS CLI's profile, region, endpoint."""
    from .target import make_client, session_for

    endpoint = args.endpoint or os.environ.get("MIGRATOR_ENDPOINT") or os.environ.get("AWS_ENDPOINT_URL") or None
    return make_client(service, endpoint, args.region, session_for(args.profile))


def cmd_plan(args) -> int:
    from .inventory import read_inventory
    from .plan import PROVIDERS, Plan, estimate, load_json, summarise

    if args.platform and args.source:
        raise CliError("plan takes an inventory FILE or --from PLATFORM, one of the two")
    if args.platform:
        # The platform's listing, written (and resumable) as `migrator inventory --from` writes it, then planned.
        from .sweep import default_output

        listed = Path(args.inventory) if args.inventory else default_output(args.platform)
        if _sweep(args, listed) not in (0, 1):
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
    inventory = summarise(records)
    if args.platform and unfetchable_file.exists():
        for line in unfetchable_file.read_text(encoding="utf-8").splitlines():
            reason = json.loads(line).get("reason") if line.strip() else None
            if isinstance(reason, str):
                inventory.source_unfetchable[reason] += 1
    estimates = [
        estimate(
            inventory,
            name,
            prices,
            aws_prices,
            requests_doc,
            region=region,
            rate=args.rate,
            concurrency=args.concurrency,
            storage_minutes=args.storage_minutes,
        )
        for name in ([args.provider] if args.provider else PROVIDERS)
    ]
    plan = Plan(source, inventory, estimates, region)
    if args.json:
        print(json.dumps(plan.as_dict(), ensure_ascii=False))
    else:
        print("\n".join(plan.lines()))
    return 1 if inventory.bad else 0


def cmd_probe(args) -> int:
    from .probe import run_probe

    target = _target(args)
    ledger = Ledger(target.output("LedgerTableName"), target.client("dynamodb"))
    presign = target.presigner(3600)

    progress = Progress(sys.stderr, _count_in(target, State.PENDING), "probed")
    stop = threading.Event()
    try:
        summary = run_probe(
            ledger.iter_state(State.PENDING),
            ledger=ledger,
            presign=presign,
            concurrency=args.concurrency,
            timeout_s=args.timeout,
            ffprobe=args.ffprobe,
            progress=lambda counts: progress.update(
                counts.done, f"{counts.inventoried} inventoried, {counts.rejected} rejected"
            ),
            stop=stop,
            dry_run=args.dry_run,
            allow_private=args.allow_private_addresses,
        )
    finally:
        progress.close()
    if args.json:
        _json_lines({"type": "summary", **summary.__dict__, "done": summary.done})
    else:
        print(summary.render(), file=sys.stderr)
    if summary.inventoried and not args.dry_run and not args.json:
        print("next: migrator retry --state inventoried   (enqueues them)", file=sys.stderr)
    return 0 if not summary.errors else 1


def cmd_status(args) -> int:
    from .status import gather, render

    target = _target(args)
    shown = 0
    while True:
        view = gather(target, args.window, exact=args.exact)
        shown += 1
        if args.json:  # one object on one line; one a line under --watch (JSON Lines)
            text = json.dumps(view.as_dict(), ensure_ascii=False)
        else:
            text = render(view, target.name)
        if args.watch and sys.stdout.isatty() and not args.json:
            sys.stdout.write("\x1b[H\x1b[2J")  # home and clear: redraw in place
        print(text, flush=True)
        if not args.watch or (args.count and shown >= args.count):
            return 0
        time.sleep(max(1.0, args.watch))
        if not sys.stdout.isatty() and not args.json:
            print(flush=True)


def cmd_report(args) -> int:
    from .report import scan_ledger, write_report

    if args.html:
        if args.output or args.state or args.drift:
            raise CliError("--html summarises every asset: it takes no --output, --state or --drift")
        return _report_html(args)
    target = _target(args)
    if args.json:
        args.format = "jsonl"  # --json: one JSON object per asset
    items = scan_ledger(target.client("dynamodb"), target.output("LedgerTableName"), args.state, args.drift)
    with _output(args.output) as out:
        count = write_report(items, out, args.format)
    if args.output:
        print(f"{count:,} assets written to {args.output}", file=sys.stderr)
    return 0


@contextlib.contextmanager
def _output(path: str | None):
    """The file at `path` (written whole, one error line if it cannot be), or standard output."""
    if not path:
        yield sys.stdout
        return
    try:
        out = open(path, "w", encoding="utf-8", newline="")
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror}") from None
    with out:
        yield out


def _report_html(args) -> int:
    from .report import scan_ledger
    from .report_html import ReportSummary, render_html

    target = _target(args)
    summary = ReportSummary()
    progress = Progress(sys.stderr, _count_in_all(target), "read")
    try:
        for item in scan_ledger(target.client("dynamodb"), target.output("LedgerTableName")):
            summary.add(item)
            progress.update(summary.total)
    finally:
        progress.close()
    page = render_html(summary, target.name, time.time())
    try:
        Path(args.html).write_text(page, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {args.html}: {exc.strerror}") from None
    if args.json:
        _json_lines({"type": "summary", "html": args.html, "assets": summary.total, "counts": dict(summary.counts)})
    else:
        print(f"{summary.total:,} assets summarised in {args.html}", file=sys.stderr)
    return 0


def cmd_show(args) -> int:
    from migrator.messages import id_problem

    from .show import asset_view, render_asset

    problem = id_problem(args.asset_id)
    if problem:
        raise CliError(f"{args.asset_id!r}: {problem}")
    target = _target(args)
    item = Ledger(target.output("LedgerTableName"), target.client("dynamodb")).get(args.asset_id)
    if item is None:
        raise CliError(f"the ledger has no asset {args.asset_id!r}", exit_code=1)
    print(json.dumps(asset_view(item), ensure_ascii=False) if args.json else render_asset(item))
    return 0


def _retry_tracks(args, ids: list[str], target) -> int:
    from migrator.tracks import tracks_message

    from .ops import retry_tracks
    from .report import scan_ledger
    from .sender import SENDER_CLIENT_CONFIG, BatchSender

    ledger = Ledger(target.output("LedgerTableName"), target.client("dynamodb"))
    queue = target.output("TracksQueueUrl")
    sender = BatchSender(
        target.client("sqs", SENDER_CLIENT_CONFIG), queue, encode=lambda due: tracks_message(due.asset_id)
    )
    if ids:
        found = ledger.get_many(ids)
        items = [found.get(i) or {"asset_id": i} for i in ids]
    else:
        items = scan_ledger(ledger.client, ledger.table, [State.READY], with_tracks=True)

    def send(due):
        result = sender.send(due)
        if result.fatal:  # re-armed but not sent: reconcile sends them after its quiet period
            raise CliError(result.fatal)
        return result.sent, result.failed

    summary = retry_tracks(ledger, items, send, dry_run=args.dry_run)
    if args.json:
        _json_lines({"type": "summary", "retried": "tracks", "dry_run": args.dry_run, **summary.__dict__})
    else:
        verb = "would re-arm" if args.dry_run else "re-armed"
        print(f"{verb} {summary.tracks:,} failed tracks on {summary.assets:,} assets", file=sys.stderr)
        for asset_id, why in summary.moved_on[:20] + summary.failed[:20]:
            print(f"  {asset_id}: {why}", file=sys.stderr)
    return 1 if summary.failed else 0


def cmd_export(args) -> int:
    from .export import Template, export, show_problems
    from .report import scan_ledger

    old_url = Template(args.old_url, "--old-url") if args.old_url else None
    new_url = Template(args.new_url, "--new-url") if args.new_url else None
    if args.format in ("nginx", "redirects") and (old_url is None or new_url is None):
        raise CliError(f"--format {args.format} needs --old-url and --new-url templates")
    target = _target(args)
    provider = target.outputs.get("Provider") or "generic"
    fmt = args.format
    if args.json and not args.output:
        fmt = "jsonl"  # --json: one JSON object per asset, as report does
    items = scan_ledger(target.client("dynamodb"), target.output("LedgerTableName"), args.state)
    progress = Progress(sys.stderr, _count_in_all(target) if not args.state else None, "exported")
    counted = _counting(items, progress)
    report = show_problems(progress.write, _json_lines if args.json and args.output else None)
    options = dict(
        mux_hosts=mux_hosts(args),
        old_url=old_url,
        new_url=new_url,
        nginx_key=args.nginx_key,
        nginx_variable=args.nginx_variable,
        nginx_sizes=not args.nginx_no_hash_sizes,
        report=report,
    )
    try:
        with _output(args.output) as out:
            summary = export(counted, out, fmt, provider, **options)
    finally:
        progress.close()
    if args.json and args.output:
        _json_lines({**summary.as_dict(), "output": args.output})
    else:
        print("\n".join(summary.lines()), file=sys.stderr)
    return 1 if summary.problems else 0


def _counting(items, progress: Progress):
    for n, item in enumerate(items, start=1):
        progress.update(n)
        yield item


def cmd_verify(args) -> int:
    from .report import scan_ledger
    from .verify import Checkpoint, Tolerance, checker, run_verify

    target = _target(args)
    provider = target.outputs.get("Provider") or "generic"
    if args.ids:
        ledger = Ledger(target.output("LedgerTableName"), target.client("dynamodb"))
        found = ledger.get_many(list(args.ids))
        items = [found[i] for i in args.ids if i in found and found[i].get("state") == State.READY.value]
    else:
        items = scan_ledger(target.client("dynamodb"), target.output("LedgerTableName"), [State.READY])
    check = checker(
        provider,
        Tolerance(args.tolerance, max(0, args.resolution_tolerance)),
        rate=args.rate,
        timeout_s=args.timeout,
        allow_private=args.allow_private_addresses,
        mux_hosts=mux_hosts(args),
    )
    progress = Progress(sys.stderr, len(items) if args.ids else _count_in(target, State.READY), "verified")
    shown = [0]

    def on_finding(doc: dict) -> None:
        if args.json:
            _json_lines(doc)
        elif shown[0] < 50:
            progress.write(f"{doc['id']}: {doc.get('detail') or doc.get('reason')}")
        shown[0] += 1

    stop = threading.Event()
    try:
        checkpoint = Checkpoint(args.checkpoint)
    except sqlite3.Error as exc:
        raise CliError(f"cannot use the checkpoint {args.checkpoint}: {exc}") from None
    try:
        summary = run_verify(
            items,
            check,
            checkpoint=checkpoint,
            concurrency=args.concurrency,
            limit=args.limit,
            stop=stop,
            on_finding=on_finding,
            progress=progress.update,
        )
    finally:
        progress.close()
        checkpoint.close()
    if args.json:
        _json_lines(summary.as_dict())
    else:
        if shown[0] > 50:
            print(f"… and {shown[0] - 50:,} more (--json lists them all)", file=sys.stderr)
        print("\n".join(summary.lines()), file=sys.stderr)
    return 0 if summary.ok else 1


def cmd_retry(args) -> int:
    from .ops import retry
    from .sender import SENDER_CLIENT_CONFIG, BatchSender

    if args.tracks:
        return _retry_tracks(args, _ids(args), _target(args))
    if args.state not in REARMABLE:
        raise CliError(f"retry takes failed, rejected, pending or inventoried assets, not {args.state.value}")
    ids = _ids(args)
    target = _target(args)
    ledger = Ledger(target.output("LedgerTableName"), target.client("dynamodb"))
    # Straight to the paced queue: the ledger already has these assets (older stacks had one queue).
    queue = target.outputs.get("WorkQueueUrl") or target.output("QueueUrl")
    sender = BatchSender(target.client("sqs", SENDER_CLIENT_CONFIG), queue)
    progress = Progress(sys.stderr, len(ids) if ids else _count_in(target, args.state), "re-enqueued")

    def send(messages):
        result = sender.send(messages, on_progress=lambda sent, failed: progress.update(sent, f"({failed} failed)"))
        if result.fatal:  # what was re-armed but not sent is pending: reconcile heals it
            raise CliError(result.fatal)
        return result.sent, result.failed

    try:
        summary = retry(ledger, args.state, ids or None, send, dry_run=args.dry_run)
    finally:
        progress.close()
    trouble = bool(summary.failed or summary.not_retryable)
    if args.json:
        _json_lines({"type": "summary", "state": args.state.value, "dry_run": args.dry_run, **summary.__dict__})
        return 1 if trouble else 0
    verb = "would re-enqueue" if args.dry_run else "re-enqueued"
    count = summary.listed - len(summary.moved_on) if args.dry_run else summary.sent
    print(f"{verb} {count:,} {args.state.value} assets", file=sys.stderr)
    for asset_id, state in summary.moved_on[:20]:
        print(f"  skipped {asset_id}: now {state}", file=sys.stderr)
    if len(summary.moved_on) > 20:
        print(f"  … and {len(summary.moved_on) - 20} more skipped", file=sys.stderr)
    for asset_id, reason in summary.not_retryable[:20]:
        print(f"  not retryable {asset_id}: {reason}", file=sys.stderr)
    if len(summary.not_retryable) > 20:
        print(f"  … and {len(summary.not_retryable) - 20} more not retryable (--json lists them)", file=sys.stderr)
    for asset_id, reason in summary.failed[:20]:
        print(f"  not sent {asset_id}: {reason} (reconcile will heal it)", file=sys.stderr)
    return 1 if trouble else 0


def _ids(args) -> list[str]:
    """The ids of --id and --ids-file, in order."""
    ids = list(args.ids or [])
    if args.ids_file:
        try:
            ids += [
                line.strip() for line in Path(args.ids_file).read_text(encoding="utf-8").splitlines() if line.strip()
            ]
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"cannot read {args.ids_file}: {getattr(exc, 'strerror', None) or exc}") from None
    return ids


def cmd_redrive(args) -> int:
    from .ops import redrive

    target = _target(args)
    sqs, dlq = target.client("sqs"), target.output("DeadLetterQueueUrl")
    waiting = int(
        sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"].get(
            "ApproximateNumberOfMessages", 0
        )
    )
    progress = Progress(sys.stderr, min(waiting, args.limit or waiting) or None, "moved")
    try:
        result = redrive(sqs, dlq, target.output("QueueUrl"), args.limit, lambda moved, _: progress.update(moved))
    finally:
        progress.close()
    if args.json:
        _json_lines(result.__dict__)
        return 1 if result.failed else 0
    print(
        f"moved {result.moved:,} messages from the DLQ to the queue ({result.method})"
        + (f"; {result.failed} could not be sent" if result.failed else ""),
        file=sys.stderr,
    )
    return 1 if result.failed else 0


def cmd_pause(args, paused: bool = True) -> int:
    from .ops import set_paused

    target = _target(args)
    state = set_paused(target.client("lambda"), target.output("UploaderEventSourceMappingId"), paused)
    word = "paused" if paused else "resumed"
    if args.json:
        _json_lines({"uploader": word, "mapping_state": state})
    else:
        print(f"uploader {word}: its event source mapping is {state.lower()}", file=sys.stderr)
    return 0


def cmd_audit(args) -> int:
    from migrator.providers import CredentialsError, ListingError

    from .audit import audit, paced
    from .progress import Progress
    from .report import scan_ledger

    target = _target(args)
    provider = paced(target.provider(args.provider_url))
    progress = Progress(sys.stderr, None, "audited")
    try:
        report = audit(
            provider,
            scan_ledger(target.client("dynamodb"), target.output("LedgerTableName")),
            progress=lambda what, n: progress.update(n, what),
        )
    except (CredentialsError, ListingError) as exc:
        raise CliError(str(exc)) from None
    finally:
        progress.close()
    if args.json:
        doc = {**report.as_dict(), "findings": [finding.__dict__ for finding in report.findings]}
        print(json.dumps(doc, ensure_ascii=False))
    else:
        print("\n".join(report.lines()))
    return 0 if report.ok else 1


def cmd_doctor(args) -> int:
    from .doctor import run_checks

    checks = run_checks(_target(args))
    if args.json:
        ok = all(check.ok for check in checks)
        print(json.dumps({"ok": ok, "checks": [check.__dict__ for check in checks]}, ensure_ascii=False))
    else:
        print("\n".join(check.line() for check in checks))
        failed = sum(1 for check in checks if not check.ok)
        print(f"{len(checks) - failed} of {len(checks)} checks pass" + ("" if not failed else f"; {failed} to fix"))
    return 0 if all(check.ok for check in checks) else 1


def cmd_reconcile(args) -> int:
    from .ops import run_reconcile

    target = _target(args)
    request: dict = {}
    for option, key in (("heal_after", "heal_after_s"), ("poll_after", "poll_after_s"), ("max_items", "max_items")):
        if getattr(args, option) is not None:
            request[key] = getattr(args, option)
    from .ops import invoke_once_config

    function = target.output("ReconcileFunctionName")
    timeout = target.client("lambda").get_function_configuration(FunctionName=function).get("Timeout", 900)
    summary = run_reconcile(target.client("lambda", invoke_once_config(float(timeout))), function, request)
    if args.json:
        _json_lines(summary)
        return 1 if summary.get("errors") else 0
    print(
        f"reconcile: healed {summary.get('healed', 0)}, polled {summary.get('polled', 0)} "
        f"(ready {summary.get('settled_ready', 0)}, rejected {summary.get('settled_rejected', 0)}, "
        f"still processing {summary.get('still_processing', 0)}), drifted {summary.get('drifted', 0)}, "
        f"skipped {summary.get('skipped_total', 0)}; examined {summary.get('examined', 0)} in "
        f"{summary.get('elapsed_s', 0)} s, {summary.get('lanes_finished', 0)}/{summary.get('lanes', 0)} lanes finished",
        file=sys.stderr,
    )
    return 1 if summary.get("errors") else 0


COMMANDS = {
    "load": cmd_load,
    "plan": cmd_plan,
    "inventory": cmd_inventory,
    "probe": cmd_probe,
    "status": cmd_status,
    "report": cmd_report,
    "export": cmd_export,
    "verify": cmd_verify,
    "retry": cmd_retry,
    "show": cmd_show,
    "redrive": cmd_redrive,
    "pause": lambda args: cmd_pause(args, True),
    "resume": lambda args: cmd_pause(args, False),
    "reconcile": cmd_reconcile,
    "audit": cmd_audit,
    "doctor": cmd_doctor,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except CliError as exc:
        print(f"migrator {args.command}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"migrator {args.command}: interrupted", file=sys.stderr)
        return 130
    except NoCredentialsError:
        print(
            f"migrator {args.command}: no AWS credentials found: "
            "set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
            file=sys.stderr,
        )
        return 2
    except EndpointConnectionError as exc:
        print(
            f"migrator {args.command}: cannot reach {exc.kwargs.get('endpoint_url', 'the endpoint')}", file=sys.stderr
        )
        return 2
    except ClientError as exc:
        error = exc.response.get("Error", {})
        print(
            f"migrator {args.command}: AWS refused {exc.operation_name}: {error.get('Code')}: {error.get('Message')}",
            file=sys.stderr,
        )
        return 2
    except BotoCoreError as exc:
        print(f"migrator {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `migrator report | head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
