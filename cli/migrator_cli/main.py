"""`migrator`: the operator's command line for a deployed migration stack (AWS or a local emulator).

Every subcommand explains itself with --help. Problems the operator can fix (a wrong
stack name, no credentials, an unreadable file) end in one line on stderr and exit
status 2, never a traceback; a run that finished but left some rows or assets behind
exits with 1.
"""

from __future__ import annotations

import argparse
import os
import sys

from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError, NoCredentialsError

from .commands import (
    audit,
    doctor,
    export,
    inventory,
    load,
    mirror,
    pause,
    plan,
    probe,
    reconcile,
    redrive,
    report,
    retry,
    rewrite,
    show,
    status,
    upgrade,
    usage,
    verify,
    window,
)
from .errors import CliError
from .version import cli_version

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
  migrator rewrite site/ dump.sql         the site's embeds and links -> the new videos (a diff; then --apply)
From the platform the library lives on (Vimeo, Wistia, Mux, Cloudflare Stream, api.video, S3):
  migrator inventory --from vimeo -o vimeo.jsonl   list it: rows with source references, unfetchable apart
  migrator load vimeo.jsonl                        load what was written, as it is
  migrator load --from vimeo                       both in one go; --since last catches up later uploads
  migrator mirror on                               or the stack sweeps it on a schedule (MirrorSource)
  migrator usage --from wistia w.jsonl -o w+usage.jsonl   plays and last plays, where analytics are apart
Probe first instead (ffprobe checks each source before any upload):
  migrator load inventory.csv --stage     record assets as pending, enqueue nothing
  migrator probe                          pending -> inventoried (duration) or rejected (reason)
  migrator retry --state inventoried      enqueue what passed
After `sam deploy` of a new release, while a migration goes on:
  migrator doctor                         every check, the ledger's schema among them
  migrator upgrade                        fill in what items an earlier release wrote lack (idempotent)
Working hours (the fleet creates nothing outside them; the stack's WorkingHours, or at run time):
  migrator window set "Mon-Fri 19:00-07:00; Sat-Sun 00:00-24:00 Europe/Berlin"   migrator window show | clear
"""


# In the order `migrator --help` lists them; each module registers its subcommand(s) with their run.
COMMANDS = (
    load,
    plan,
    inventory,
    usage,
    probe,
    status,
    report,
    export,
    rewrite,
    verify,
    retry,
    show,
    redrive,
    pause,
    window,
    audit,
    doctor,
    reconcile,
    mirror,
    upgrade,
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
    parser.add_argument(
        "--version",
        action="store_true",
        help="this CLI's release and, with --stack or --outputs (or MIGRATOR_STACK), the deployed stack's",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.register(sub)
    return parser


def print_version(argv: list[str]) -> int:
    """`migrator --version [--stack S | --outputs F]`: the CLI's release, and the deployed stack's beside it when
    one is named (its Release output; a stack from 0.3.0 or before has none). A stack that cannot be read is said
    in a line, not raised: the CLI's own release is still the answer asked for."""
    from .target import resolve

    known = argparse.ArgumentParser(add_help=False)
    for flag in ("--stack", "--outputs", "--endpoint-url", "--region", "--profile"):
        known.add_argument(flag)
    given, _ = known.parse_known_args(argv)
    print(f"migrator {cli_version()}")
    if not (given.stack or given.outputs or os.environ.get("MIGRATOR_STACK") or os.environ.get("MIGRATOR_OUTPUTS")):
        return 0
    try:
        target = resolve(given.stack, given.outputs, given.endpoint_url, given.region, given.profile)
    except (CliError, BotoCoreError, ClientError) as exc:
        print(f"stack    cannot be read: {exc}")
        return 2
    print(f"stack    {target.name}: release {target.outputs.get('Release') or '0.3.0 or before (no Release output)'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--version" in argv:  # no command takes a --version of its own
        return print_version(argv)
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
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
