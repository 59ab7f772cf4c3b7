"""`migrator mirror status|run|on|off|gone`: the stack's mirror of its source (issue 45), driven by the operator.

The mirror Lambda (functions/migrator/mirror) sweeps MirrorSource on its EventBridge Scheduler schedule; its
checkpoint is the ledger's `#mirror#<platform>` item. `status` shows that item (the last run and its outcome,
the mark, what was listed and sent, what is still processing at the source, what is gone there); `run` invokes
the Lambda once now (`--wait`: and prints its result); `on` / `off` turn the schedule on or off (its State;
the rest of the schedule as the stack made it); `gone` lists the videos a full sweep found gone at the source
(reported on their ledger items, never acted on).
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime

from ..errors import CliError
from ..options import print_json_line, resolve_target, stack_options

ACTIONS = {
    "status": "the mirror's checkpoint: last run, mark, listed, sent, pending, gone",
    "run": "invoke the mirror once now (it resumes where the last run stopped)",
    "on": "turn the mirror's schedule on",
    "off": "turn the mirror's schedule off (a run under way finishes its page and saves)",
    "gone": "list the videos a full sweep found gone at the source (reported, never acted on)",
}
# What `mirror run --wait` allows the invoke, past the function's own timeout (900 s in template.yaml).
MIRROR_TIMEOUT_S = 900.0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "mirror",
        help="the stack's scheduled sweep of the source until the cut-over: status, run, on, off, gone",
        description=(
            "The mirror sweeps the stack's MirrorSource on a schedule and sends what was added or changed since "
            "its mark to intake (docs/operator-guide.md, 'Mirror until the cut-over')."
        ),
    )
    actions = p.add_subparsers(dest="mirror_action", metavar="ACTION", required=True)
    for name, words in ACTIONS.items():
        action = actions.add_parser(name, help=words, description=words[0].upper() + words[1:] + ".")
        if name == "run":
            action.add_argument("--wait", action="store_true", help="wait for the run's end and print its result")
        stack_options(action)
        action.set_defaults(run=run)


def run(args) -> int:
    target = resolve_target(args)
    platform = target.outputs.get("MirrorSource") or ""
    if not platform:
        raise CliError(
            f"stack {target.name} has no mirror: deploy it with MirrorSource=<platform> (docs/operator-guide.md)"
        )
    action = args.mirror_action
    if action == "status":
        return _status(args, target, platform)
    if action == "run":
        return _run(args, target)
    if action == "gone":
        return _gone(args, target, platform)
    return _switch(args, target, on=action == "on")


def checkpoint(dynamodb, table: str, platform: str) -> dict:
    """The mirror's checkpoint item, as `migrator mirror status` shows it ({} before its first run)."""
    from migrator.mirror.checkpoint import Store, status_of

    item = Store(dynamodb, table, platform).read()
    return status_of(item) if item else {}


def mirror_status(outputs: dict, dynamodb) -> dict | None:
    """What `migrator status` shows of the mirror (None: the stack has none)."""
    platform, table = outputs.get("MirrorSource"), outputs.get("LedgerTableName")
    if not platform or not table:
        return None
    return {"platform": platform, **checkpoint(dynamodb, table, platform)}


def mirror_words(status: dict) -> str:
    """`migrator status`'s line for the mirror."""
    if "sent" not in status:
        return f"mirror      {status['platform']}: not run yet (migrator mirror run)"
    return (
        f"mirror      {status['platform']}: {status.get('last_outcome', 'running')}, {status['sent']:,} sent,"
        f" {status['gone']:,} gone at the source (migrator mirror status)"
    )


def _when(epoch) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if epoch is not None else "never"


def _status(args, target, platform: str) -> int:
    status = checkpoint(target.client("dynamodb"), target.output("LedgerTableName"), platform)
    schedule = _schedule(target)
    if args.json:
        print_json_line({"platform": platform, "schedule": schedule.get("State"), **status})
        return 0
    lines = [f"mirror          {platform}, schedule {schedule.get('State', 'unknown').lower()}"]
    lines.append(f"  {'expression':<14}{schedule.get('ScheduleExpression', '?')}")
    if not status:
        lines.append("  not run yet: migrator mirror run, or migrator mirror on")
    else:
        outcome = status.get("last_outcome", "running now")
        error = f" ({status['last_error']})" if status.get("last_error") else ""
        lines += [
            f"  {'last run':<14}{_when(status.get('last_run_at'))}: {outcome}{error}",
            f"  {'mark':<14}{_when(status.get('mark'))} (the next delta lists what changed after it)",
            f"  {'sweeps':<14}{status['sweeps']:,} finished" + (", one under way" if status["sweeping"] else ""),
            f"  {'listed':<14}{status['listed']:,} rows in the last sweep, {status['unfetchable']:,} unfetchable",
            f"  {'sent':<14}{status['sent']:,} rows to intake in all"
            + (f", {status['left_behind']:,} left behind by MirrorWhere" if status.get("left_behind") else ""),
            f"  {'pending':<14}{status['pending']:,} still processing at the source (asked for again next sweep)",
            f"  {'gone':<14}{status['gone']:,} gone at the source (migrator mirror gone)"
            + (", a check under way" if status["checking_gone"] else ""),
        ]
    print("\n".join(lines), file=sys.stderr)
    return 0


def _schedule(target) -> dict:
    """The schedule as EventBridge Scheduler holds it ({} where the stack names none)."""
    name = target.outputs.get("MirrorScheduleName")
    if not name:
        return {}
    return target.client("scheduler").get_schedule(Name=name)


def _switch(args, target, on: bool) -> int:
    """The schedule's State set; UpdateSchedule takes the whole schedule, so the rest is sent as it stands."""
    name = target.output("MirrorScheduleName")
    scheduler = target.client("scheduler")
    held = scheduler.get_schedule(Name=name)
    keep = ["GroupName", "ScheduleExpression", "FlexibleTimeWindow", "Target", "Description"]
    keep += ["ScheduleExpressionTimezone", "StartDate", "EndDate", "KmsKeyArn", "ActionAfterCompletion"]
    request = {k: held[k] for k in keep if held.get(k) is not None}
    scheduler.update_schedule(Name=name, State="ENABLED" if on else "DISABLED", **request)
    state = scheduler.get_schedule(Name=name).get("State", "?")
    if args.json:
        print_json_line({"schedule": name, "state": state})
    else:
        print(f"mirror schedule {name}: {state.lower()}", file=sys.stderr)
    return 0


def _run(args, target) -> int:
    function = target.output("MirrorFunctionName")
    if not args.wait:
        target.client("lambda").invoke(FunctionName=function, InvocationType="Event", Payload=b"{}")
        if args.json:
            print_json_line({"invoked": function})
        else:
            print(f"mirror invoked ({function}): migrator mirror status shows its outcome", file=sys.stderr)
        return 0
    from ..ops import invoke_once_config

    client = target.client("lambda", invoke_once_config(MIRROR_TIMEOUT_S))
    resp = client.invoke(FunctionName=function, InvocationType="RequestResponse", Payload=b"{}")
    try:
        result = json.loads(resp["Payload"].read() or b"null")
    except ValueError:
        raise CliError("the mirror answered with something that is not JSON") from None
    if resp.get("FunctionError") or not isinstance(result, dict):
        message = result.get("errorMessage") if isinstance(result, dict) else None
        raise CliError(f"the mirror failed: {message or 'see its log group'}")
    if args.json:
        print_json_line(result)
    else:
        error = f" ({result['error']})" if result.get("error") else ""
        print(f"mirror {result.get('platform', '')}: {result.get('outcome')}{error}", file=sys.stderr)
    return 1 if result.get("outcome") in ("failed", "stuck") else 0


def _gone(args, target, platform: str) -> int:
    from migrator.mirror.gone import gone_items

    count = 0
    for item in gone_items(target.client("dynamodb"), target.output("LedgerTableName"), platform):
        count += 1
        row = {
            "id": item["asset_id"],
            "title": item.get("title"),
            "state": item.get("state"),
            "remote_id": item.get("remote_id"),
            "gone_at_source": _when(float(item["gone_at_source"])),
        }
        if args.json:
            print_json_line(row)
        else:
            print("\t".join(str(v) if v is not None else "" for v in row.values()))
    if not args.json:
        print(f"{count:,} videos gone at {platform} (reported only: nothing was changed)", file=sys.stderr)
    return 0
