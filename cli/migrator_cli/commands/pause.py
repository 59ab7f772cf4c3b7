"""`migrator pause` and `resume`: their options and their run, the uploader's event source mapping off or on."""

from __future__ import annotations

import sys

from ..options import print_json_line, resolve_target, stack_options


def register(subparsers) -> None:
    for name, verb in (("pause", "Disable"), ("resume", "Enable")):
        p = subparsers.add_parser(
            name,
            help=f"{name} the uploader ({verb.lower()} its queue's event source mapping)",
            description=(
                f"{verb} the uploader's event source mapping. Invocations already running finish and record "
                "their outcome; messages not yet received stay in the queue, so nothing is lost."
            ),
        )
        stack_options(p)
        p.set_defaults(run=run)


def run(args) -> int:
    from ..ops import set_paused

    paused = args.command == "pause"  # one run for both commands: the name says which way
    target = resolve_target(args)
    state = set_paused(target.client("lambda"), target.output("UploaderEventSourceMappingId"), paused)
    word = "paused" if paused else "resumed"
    if args.json:
        print_json_line({"uploader": word, "mapping_state": state})
    else:
        print(f"uploader {word}: its event source mapping is {state.lower()}", file=sys.stderr)
    return 0
