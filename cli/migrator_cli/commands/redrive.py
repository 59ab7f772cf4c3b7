"""`migrator redrive`: its options and its run, which moves dead-letter messages back to the queue."""

from __future__ import annotations

import sys

from ..options import positive_int, print_json_line, resolve_target, stack_options
from ..progress import Progress


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "redrive",
        help="move dead-letter messages back to the queue",
        description=(
            "Each DLQ message is copied to the queue, then deleted from the DLQ (a crash leaves a harmless duplicate)."
        ),
    )
    p.add_argument("--limit", type=positive_int, metavar="N", help="move at most N messages")
    stack_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..ops import redrive

    target = resolve_target(args)
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
        print_json_line(result.__dict__)
        return 1 if result.failed else 0
    print(
        f"moved {result.moved:,} messages from the DLQ to the queue ({result.method})"
        + (f"; {result.failed} could not be sent" if result.failed else ""),
        file=sys.stderr,
    )
    return 1 if result.failed else 0
