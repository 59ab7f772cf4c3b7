"""`migrator doctor`: its options and its run, which checks a deployed stack can migrate."""

from __future__ import annotations

import json

from ..options import resolve_target, stack_options


def register(subparsers) -> None:
    p = subparsers.add_parser(
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
    stack_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..doctor import run_checks

    checks = run_checks(resolve_target(args))
    if args.json:
        ok = all(check.ok for check in checks)
        print(json.dumps({"ok": ok, "checks": [check.__dict__ for check in checks]}, ensure_ascii=False))
    else:
        print("\n".join(check.line() for check in checks))
        failed = sum(1 for check in checks if not check.ok)
        print(f"{len(checks) - failed} of {len(checks)} checks pass" + ("" if not failed else f"; {failed} to fix"))
    return 0 if all(check.ok for check in checks) else 1
