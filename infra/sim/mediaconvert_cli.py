"""The MediaConvert simulator's command line: start it as a process for a test harness, then serve until SIGTERM.

    python -m infra.sim.mediaconvert_cli --port 0 --s3-endpoint http://127.0.0.1:4566 \\
        --events-endpoint http://127.0.0.1:4566 --event-source migrator.sim.mediaconvert \\
        --queue Default=4 --encode-delay 0.5 [--lose-create-answer-rate 0.2 --create-throttle-rate 0.1 --seed 7]

As infra/sim/cli.py does for the provider simulator: one flag a MediaConvertConfig field, one line on stdout once it
listens (`mediaconvert-sim listening on http://127.0.0.1:PORT`, the account endpoint DescribeEndpoints also gives),
and a clean stop on SIGTERM or SIGINT (the server closed, the queues' workers joined). It binds 127.0.0.1 only: there
is no flag for the address. S3 and EventBridge are reached with boto3 at the endpoints given (a local emulator); the
credentials are boto3's usual ones, or the emulator's `test`/`test` where there are none. Without --s3-endpoint every
job ends in ERROR (nothing to read the input with); without --events-endpoint no event is sent.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from .mediaconvert import DEFAULT_QUEUE, MediaConvertConfig, MediaConvertSim
from .mediaconvert_jobs import EVENT_SOURCE
from .mediaconvert_tools import TOOL_TIMEOUT_S


def _queue(text: str) -> tuple[str, int]:
    """`Name=N`: a queue and how many jobs it runs at once."""
    name, sep, count = text.partition("=")
    if not sep or not name or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"--queue takes NAME=N with N 1 or more, not {text!r}")
    return name, int(count)


def _rate(text: str) -> float:
    try:
        rate = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from exc
    if not 0.0 <= rate <= 1.0:
        raise argparse.ArgumentTypeError(f"a rate is from 0 to 1, not {text}")
    return rate


def build_parser() -> argparse.ArgumentParser:
    d = MediaConvertConfig()
    p = argparse.ArgumentParser(
        prog="python -m infra.sim.mediaconvert_cli",
        description="A local AWS Elemental MediaConvert on 127.0.0.1: jobs that transcode with ffmpeg into S3 and "
        "send their state-change events to EventBridge (infra/sim/mediaconvert.py).",
    )
    p.add_argument("--port", type=int, default=d.port, help="port to listen on; 0 picks a free one (default 0)")
    p.add_argument("--s3-endpoint", help="the S3 the jobs read their inputs from and write their outputs to")
    p.add_argument("--events-endpoint", help="the EventBridge the jobs' state-change events go to")
    p.add_argument("--event-source", default=d.event_source, help=f"the events' source (default {EVENT_SOURCE})")
    p.add_argument("--event-bus", default=d.event_bus, help="the bus the events go to (default %(default)s)")
    p.add_argument("--region", default=d.region, help="the region in ARNs and events (default %(default)s)")
    p.add_argument("--account", default=d.account, help="the account id in ARNs and events (default %(default)s)")
    p.add_argument(
        "--queue",
        type=_queue,
        action="append",
        metavar="NAME=N",
        help=f"a queue running N jobs at once; repeat for more (default {DEFAULT_QUEUE}=2)",
    )
    p.add_argument("--encode-delay", type=float, default=d.encode_delay_s, help="seconds added to every job")
    p.add_argument(
        "--idempotency-window",
        type=float,
        default=d.idempotency_window_s,
        help="seconds a ClientRequestToken answers its first job (default %(default)s)",
    )
    p.add_argument("--tool-timeout", type=float, default=TOOL_TIMEOUT_S, help="seconds an ffmpeg call may take")
    faults = p.add_argument_group("faults (rates are probabilities 0..1, all off by default)")
    faults.add_argument(
        "--lose-create-answer-rate", type=_rate, default=0.0, help="CreateJobs made whose answer is dropped"
    )
    faults.add_argument(
        "--create-throttle-rate", type=_rate, default=0.0, help="CreateJobs refused 429 TooManyRequestsException"
    )
    faults.add_argument("--seed", type=int, help="seed the fault draws, for repeatable runs")
    return p


def _client(service: str, endpoint: str | None, region: str):
    if not endpoint:
        return None
    import boto3

    session = boto3.session.Session()
    credentials = {}
    if session.get_credentials() is None:  # a local emulator takes any; boto3 refuses to sign without some
        credentials = {"aws_access_key_id": "test", "aws_secret_access_key": "test"}
    return session.client(service, endpoint_url=endpoint, region_name=region, **credentials)


def main(argv: list[str] | None = None) -> int:
    """Run the simulator until SIGTERM or SIGINT."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = MediaConvertConfig(
            port=args.port,
            region=args.region,
            account=args.account,
            queues=dict(args.queue) if args.queue else {DEFAULT_QUEUE: 2},
            encode_delay_s=args.encode_delay,
            idempotency_window_s=args.idempotency_window,
            event_source=args.event_source,
            event_bus=args.event_bus,
            tool_timeout_s=args.tool_timeout,
            lose_create_answer_rate=args.lose_create_answer_rate,
            create_throttle_rate=args.create_throttle_rate,
            seed=args.seed,
        )
    except ValueError as exc:
        parser.error(str(exc))
    s3 = _client("s3", args.s3_endpoint, config.region)
    events = _client("events", args.events_endpoint, config.region)
    sim = MediaConvertSim(config, s3=s3, events=events)
    try:
        sim.start()
    except OSError as exc:
        print(f"mediaconvert-sim: cannot listen on {config.host}:{config.port}: {exc}", file=sys.stderr)
        return 1
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    print(f"mediaconvert-sim listening on {sim.url}", flush=True)
    while not stopping.wait(0.5):  # a timed wait keeps the main thread responsive to signals
        pass
    sim.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
