"""`migrator audit`: its options and its run, the provider's library checked against the ledger."""

from __future__ import annotations

import json
import sys

from ..errors import CliError
from ..options import resolve_target, stack_options
from ..progress import Progress


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "audit",
        help="prove it on the provider: duplicate videos, missing videos, state drift against the ledger",
        description=(
            "Page through the provider's whole library and the ledger, and list every asset of ours that "
            "holds more than one live provider video, every ledger asset whose recorded video the provider "
            "does not have, and every video the provider sees in another state than the ledger. Run it on "
            "the real account after a migration. The credentials are the stack's (read with your AWS "
            "credentials); 429s are waited out. Exit 0 when there is nothing to report, 1 otherwise."
        ),
    )
    p.add_argument("--provider-url", metavar="URL", help="the provider's API address, if not the stack's")
    stack_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from migrator.providers import CredentialsError, ListingError

    from ..audit import audit, paced
    from ..report import scan_ledger

    target = resolve_target(args)
    provider = paced(target.provider(args.provider_url))
    progress = Progress(sys.stderr, None, "audited")
    try:
        report = audit(
            provider,
            scan_ledger(target.client("dynamodb"), target.output("LedgerTableName")),
            progress=lambda what, n: progress.update(n, what),
        )
    except (CredentialsError, ListingError) as exc:
        raise CliError(str(exc)) from None
    finally:
        progress.close()
    if args.json:
        doc = {**report.as_dict(), "findings": [finding.__dict__ for finding in report.findings]}
        print(json.dumps(doc, ensure_ascii=False))
    else:
        print("\n".join(report.lines()))
    return 0 if report.ok else 1
