"""`migrator window set TEXT | clear | show`: the working hours at run time, an override of the stack's WorkingHours
kept in the ledger's `#window` item (functions/migrator/hours.py), which every worker re-reads within a minute."""

from __future__ import annotations

import sys
import time

from ..errors import CliError
from ..options import print_json_line, resolve_target, stack_options

FORMS = (
    "TEXT is `DAYS START-END[; ...] [ZONE]`, e.g. 'Mon-Fri 09:00-18:00 Europe/Berlin' or "
    "'Mon-Fri 19:00-07:00; Sat-Sun 00:00-24:00 UTC' (an END before START runs overnight), or 'always' "
    "for none. See docs/operator-guide.md, Working hours."
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "window",
        help="working hours: the weekly window outside which the fleet creates nothing (set, clear, show)",
        description=(
            "Outside the working hours the uploader claims and creates nothing: messages wait in the queue and the "
            "drain goes on when the window opens. The stack's WorkingHours parameter sets them; `set` overrides "
            "it at run time (every worker has it within a minute), `clear` drops the override. " + FORMS
        ),
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (
        ("show", "the window in force: open or closed, until when, and where it comes from"),
        ("set", "override the stack's WorkingHours with TEXT (validated first; 'always': no window)"),
        ("clear", "drop the override: the stack's WorkingHours hold again"),
    ):
        a = actions.add_parser(name, help=text, description=text + ". " + FORMS)
        if name == "set":
            a.add_argument("text", metavar="TEXT", help="the window, e.g. 'Mon-Fri 09:00-18:00 Europe/Berlin'")
        stack_options(a)
        a.set_defaults(run=run)


def run(args) -> int:
    from migrator.hours import clear_override, hours_view, hours_words, read_override, write_override
    from migrator.window import parse_window

    if args.action == "set":
        try:  # refused before any AWS call
            parse_window(args.text)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    target = resolve_target(args)
    table, client = target.output("LedgerTableName"), target.client("dynamodb")
    now = time.time()
    if args.action == "set":
        write_override(client, table, args.text, now)
    elif args.action == "clear":
        clear_override(client, table)
    view = hours_view(target.outputs.get("WorkingHours") or "", read_override(client, table), now)
    if args.json:
        print_json_line({"action": args.action, **view.as_dict()})
    else:
        print(f"working hours {hours_words(view)}")
        if args.action != "show":
            print(
                "every worker holds to it within a minute (each re-reads the override once a minute)", file=sys.stderr
            )
    return 0
