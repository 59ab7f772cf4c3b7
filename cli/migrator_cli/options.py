"""The options, argument types and helpers several `migrator` commands share; a command module imports them from here.

Option groups (the stack, the source library, Mux hosts) are added to a command's parser; the
argument types turn a bad value into argparse's one-line refusal; the helpers resolve the stack,
print JSON Lines, open --output and size progress bars the same way for every command.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time

from botocore.exceptions import BotoCoreError, ClientError
from migrator.states import State

from .errors import CliError


def stack_options(parser: argparse.ArgumentParser) -> None:
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


def mux_host_options(parser: argparse.ArgumentParser) -> None:
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
    """The hosts of --mux-*-url the operator gave, by the URL they build."""
    hosts = {"hls": args.mux_stream_url, "thumbnail": args.mux_image_url, "player": args.mux_player_url}
    return {k: v for k, v in hosts.items() if v}


def source_options(parser: argparse.ArgumentParser, required: bool, rate_flag: str = "--rate") -> None:
    """Where a library is listed from, and with which credentials (the operator's, never the stack's).
    `rate_flag`: the name of the listing's own rate option (plan's `--rate` is the provider's)."""
    from migrator.sources import PLATFORMS

    from .source_credentials import ENV_CREDENTIALS

    env_names = ", ".join("/".join(names.values()) for names in ENV_CREDENTIALS.values())

    group = parser.add_argument_group("the source library (docs/sources.md)")
    group.add_argument(
        "--from", dest="platform", choices=PLATFORMS, required=required, help="the platform to list the library from"
    )
    group.add_argument(
        "--credentials",
        metavar="FILE",
        help='JSON {"<platform>": {...}}, the stack\'s source secret format (else --source-profile, '
        f"MIGRATOR_SOURCE_CREDENTIALS, or the platform's variables: {env_names})",
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
    group.add_argument(
        "--no-tracks",
        action="store_true",
        help="do not look up caption tracks, chapters, showcases or playlists, which cost requests of their own",
    )
    group.add_argument(
        rate_flag,
        dest="source_rate",
        type=float,
        metavar="R",
        help="requests per second to the source (default: its documented limit)",
    )


# --- argument types: a bad value is argparse's one-line refusal, exit 2 ------------------------------


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


# --- helpers for a command's run ----------------------------------------------------------------


def resolve_target(args):
    """The stack the stack options name (--stack, --outputs, their variables), with its clients."""
    from .target import resolve

    return resolve(args.stack, args.outputs, args.endpoint, args.region, args.profile)


def standalone_client(service: str, args):
    """A client without a stack (a dry run of an S3 listing): the AWS CLI's profile, region, endpoint."""
    from .target import make_client, session_for

    endpoint = args.endpoint or os.environ.get("MIGRATOR_ENDPOINT") or os.environ.get("AWS_ENDPOINT_URL") or None
    return make_client(service, endpoint, args.region, session_for(args.profile))


def print_json_line(doc: dict) -> None:
    """One JSON object on one line of standard output, flushed (--json's JSON Lines)."""
    print(json.dumps(doc, ensure_ascii=False, default=str), flush=True)


@contextlib.contextmanager
def output_to(path: str | None):
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


def tally_counts(target) -> dict:
    """Assets by state as the tally keeps them (a few reads), for a progress total; {} when unreadable."""
    from migrator.tally import read_stats

    try:
        return read_stats(target.client("dynamodb"), target.output("StatsTableName"), time.time(), 0).counts
    except (CliError, ClientError, BotoCoreError):
        return {}  # a bar without a percentage: the work itself will say what is wrong


def count_in(target, state: State) -> int | None:
    """Assets in `state` by the tally, for a progress total; None when unknown."""
    return tally_counts(target).get(state.value) or None


def count_in_all(target) -> int | None:
    """All assets by the tally, for a progress total; None when unknown."""
    return sum(tally_counts(target).values()) or None
