"""`migrator show ID`: its options and its run, one asset as the ledger holds it."""

from __future__ import annotations

import json

from migrator.ledger import Ledger

from ..errors import CliError
from ..options import resolve_target, stack_options


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "show",
        help="one asset as the ledger holds it: state, provider video, attempts, errors, its caption tracks",
        description="One consistent read of the asset's ledger item; --json prints it whole (tracks included).",
    )
    p.add_argument("asset_id", metavar="ID", help="the asset's id, as in the inventory")
    stack_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from migrator.messages import id_problem

    from ..show import asset_view, render_asset

    problem = id_problem(args.asset_id)
    if problem:
        raise CliError(f"{args.asset_id!r}: {problem}")
    target = resolve_target(args)
    item = Ledger(target.output("LedgerTableName"), target.client("dynamodb")).get(args.asset_id)
    if item is None:
        raise CliError(f"the ledger has no asset {args.asset_id!r}", exit_code=1)
    print(json.dumps(asset_view(item), ensure_ascii=False) if args.json else render_asset(item))
    return 0
