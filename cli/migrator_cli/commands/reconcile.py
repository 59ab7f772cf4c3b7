"""`migrator reconcile`: its options and its run, which invokes the reconcile Lambda now and prints its summary."""

from __future__ import annotations

import sys

from ..options import positive_int, print_json_line, resolve_target, seconds, stack_options


def register(subparsers) -> None:
    p = subparsers.add_parser(
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
    stack_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..ops import invoke_once_config, run_reconcile

    target = resolve_target(args)
    request: dict = {}
    for option, key in (("heal_after", "heal_after_s"), ("poll_after", "poll_after_s"), ("max_items", "max_items")):
        if getattr(args, option) is not None:
            request[key] = getattr(args, option)
    function = target.output("ReconcileFunctionName")
    timeout = target.client("lambda").get_function_configuration(FunctionName=function).get("Timeout", 900)
    summary = run_reconcile(target.client("lambda", invoke_once_config(float(timeout))), function, request)
    if args.json:
        print_json_line(summary)
        return 1 if summary.get("errors") else 0
    print(describe(summary), file=sys.stderr)
    return 1 if summary.get("errors") else 0


def describe(summary: dict) -> str:
    """The run's summary as one line; the skips by reason, most first (why a run that examined many acted
    on none: not due yet, the provider holding the fleet, a poll budget spent)."""
    reasons = sorted((summary.get("skipped") or {}).items(), key=lambda kv: (-kv[1], kv[0]))
    why = f" ({', '.join(f'{reason} {count}' for reason, count in reasons)})" if reasons else ""
    return (
        f"reconcile: healed {summary.get('healed', 0)}, polled {summary.get('polled', 0)} "
        f"(ready {summary.get('settled_ready', 0)}, rejected {summary.get('settled_rejected', 0)}, "
        f"still processing {summary.get('still_processing', 0)}), drifted {summary.get('drifted', 0)}, "
        f"skipped {summary.get('skipped_total', 0)}{why}; examined {summary.get('examined', 0)} in "
        f"{summary.get('elapsed_s', 0)} s, {summary.get('lanes_finished', 0)}/{summary.get('lanes', 0)} lanes finished"
    )
