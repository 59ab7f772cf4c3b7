"""`migrator doctor`: its options and its run: a deployed stack's checks, or with `--source P` / `--target T` the
first contact with a platform, read-only, before any migration (first_contact.py)."""

from __future__ import annotations

import json
import os

from ..options import resolve_target, stack_options, standalone_client


def register(subparsers) -> None:
    from migrator.providers import PROVIDERS
    from migrator.sources import PLATFORMS

    p = subparsers.add_parser(
        "doctor",
        help="check a deployed stack can migrate, or (--source/--target) a platform answers as the adapters assume",
        description=(
            "One line per check, and a fix for each failure: the provider's credentials readable by the "
            "functions' role and accepted by the provider (asked from inside the stack), the clock against the "
            "provider's, a signed test webhook accepted end to end, where the provider's webhooks point, the "
            "uploader's event source mapping enabled, the queue's visibility timeout at least 6 x the function's "
            "timeout, the alarms subscribed, the dead-letter queue empty. Exit 0 only when every check passes. "
            "With --source P or --target T, the first contact with a platform instead (no stack needed): the "
            "adapter's own reads with the operator's credentials, never a write, each answer held to what the "
            "adapter reads of it, one PASS / FAIL / SKIP line per assumption; exit 0 when none FAILs."
        ),
    )
    stack_options(p)
    group = p.add_argument_group("first contact (docs/operator-guide.md, First contact)")
    side = group.add_mutually_exclusive_group()
    side.add_argument("--source", choices=PLATFORMS, metavar="P", help=f"a source platform: {', '.join(PLATFORMS)}")
    side.add_argument("--target", choices=tuple(PROVIDERS), metavar="T", help=f"a target: {', '.join(PROVIDERS)}")
    group.add_argument(
        "--credentials",
        metavar="FILE",
        help="--source: the source's credentials as `migrator inventory --from` takes them (else --source-profile, "
        "MIGRATOR_SOURCE_CREDENTIALS or the platform's variables)",
    )
    group.add_argument("--source-profile", metavar="NAME", help="--source: a profile of the sources file")
    group.add_argument("--source-url", metavar="URL", help="--source: the platform's API address (a simulator)")
    group.add_argument("--s3", metavar="S3URL", help="--source s3: the bucket and prefix, s3://bucket/prefix")
    group.add_argument("--rate", dest="source_rate", type=float, metavar="R", help="--source: requests per second")
    group.add_argument(
        "--provider-credentials",
        metavar="FILE",
        help="--target: the provider's credentials as its secret holds them (else MIGRATOR_PROVIDER_CREDENTIALS, "
        "else the secret of the stack --stack names)",
    )
    group.add_argument("--provider-url", metavar="URL", help="--target: the provider's API address (a simulator)")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.source or args.target:
        return first_contact(args)
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


def first_contact(args) -> int:
    if args.source:
        from ..first_contact_source import check_source

        report = check_source(source_of(args))
    else:
        from ..first_contact_target import check_target

        report = check_target(provider_of(args))
    print(json.dumps(report.as_dict(), ensure_ascii=False) if args.json else report.text())
    return 0 if report.ok else 1


def source_of(args):
    """The source `--source` names, with the operator's credentials as `migrator inventory --from` reads them."""
    from ..source_credentials import source_credentials
    from ..sweep import build_source

    platform = args.source
    credentials = None if platform == "s3" else source_credentials(platform, args.credentials, args.source_profile)
    s3 = standalone_client("s3", args) if platform == "s3" else None
    return build_source(
        platform, credentials=credentials, base_url=args.source_url, rate=args.source_rate, s3=s3, s3_url=args.s3
    )


def provider_of(args):
    """The provider `--target` names: its credentials from --provider-credentials, MIGRATOR_PROVIDER_CREDENTIALS,
    or the stack's own secret (read with the operator's AWS credentials, as `migrator audit` reads it)."""
    from migrator.providers import CredentialsError, build

    from ..errors import CliError

    raw = _provider_credentials(args.provider_credentials)
    if raw is None and (
        args.stack or args.outputs or os.environ.get("MIGRATOR_STACK") or os.environ.get("MIGRATOR_OUTPUTS")
    ):
        target = resolve_target(args)
        deployed = target.outputs.get("Provider") or "generic"
        if deployed != args.target:
            raise CliError(f"the stack's provider is {deployed}, not {args.target}: pass --target {deployed}")
        return target.provider(args.provider_url)
    if raw is None:
        raise CliError(
            f"no {args.target} credentials: pass --provider-credentials FILE (the secret's text), set"
            " MIGRATOR_PROVIDER_CREDENTIALS, or name the deployed stack (--stack) whose secret holds them"
            " (docs/providers.md has each provider's format)"
        )
    try:
        return build(args.target, args.provider_url, lambda: raw)
    except CredentialsError as exc:
        raise CliError(f"provider {args.target}: {exc}") from None


def _provider_credentials(path: str | None) -> str | None:
    from ..errors import CliError

    if path:
        try:
            with open(path, encoding="utf-8") as held:
                return held.read().strip() or None
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    return os.environ.get("MIGRATOR_PROVIDER_CREDENTIALS") or None
