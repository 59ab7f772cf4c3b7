"""The mirror Lambda's handler: the stack's settings and clients, then one `Mirror.run` (run.py).

Invoked by its EventBridge Scheduler schedule (MirrorSchedule, off unless MirrorEnabled) or by
`migrator mirror run`. The source is MIRROR_SOURCE (the stack's MirrorSource), built as the uploader builds
its sources (`sources.Resolver.from_settings`): credentials from the source secret or parameter, read per
request and never logged, the platform's address from SourceBaseUrls, impatient (a 429 or a spent quota is
THROTTLED at once, never slept on: the invocation ends and the next resumes). Rows go to the intake queue
(INTAKE_QUEUE_URL). The working hours are WORKING_HOURS (the stack's WorkingHours) or the ledger's `#window`
override (hours.py): outside them the mirror lists nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping

import boto3
from aws_lambda_powertools import Logger

from ..hours import Hours
from ..settings import SettingsError, env_number
from ..settings import load as load_settings
from ..sources import HTTP_SOURCES, Source, build, credentials_by_platform
from ..where import WhereError, parse
from .checkpoint import Store
from .run import Mirror

logger = Logger(service="mirror")


def window_gate(text: str, table: str = "", client=None) -> Callable[[float], float | None]:
    """When the window opens again, from a time it is closed at; None while it is open (or there is none):
    the stack's WorkingHours, unless the ledger's `#window` item overrides it (hours.Hours, read once a minute)."""
    return Hours(text, table, client).closed_until


def build_mirror(env: Mapping[str, str] | None = None) -> Mirror:
    env = os.environ if env is None else env
    platform = env.get("MIRROR_SOURCE", "").strip()
    if platform not in HTTP_SOURCES:
        raise SettingsError(f"MIRROR_SOURCE must be one of {', '.join(HTTP_SOURCES)}, got {platform!r}")
    queue_url = env.get("INTAKE_QUEUE_URL", "").strip()
    if not queue_url:
        raise SettingsError("INTAKE_QUEUE_URL is not set")
    settings = load_settings(env, require_queue=False)
    dynamodb = boto3.client("dynamodb")
    try:
        closed_until = window_gate(env.get("WORKING_HOURS", ""), settings.table_name, dynamodb)
    except ValueError as exc:
        raise SettingsError(f"WORKING_HOURS: {exc}") from None

    def source() -> Source:
        from ..providers import readable
        from ..secrets import read_secret

        raw = readable(lambda: read_secret(settings.source_secret_name, settings.source_parameter_name), "source")
        return build(
            platform,
            lambda: credentials_by_platform(raw()).get(platform),
            settings.source_base_urls.get(platform),
            connect_timeout_s=settings.connect_timeout_s,
            read_timeout_s=settings.read_timeout_s,
            paced=True,  # within the platform's documented rate; a 429 ends the run and the next one resumes
        )

    return Mirror(
        platform=platform,
        store=Store(dynamodb, settings.table_name, platform),
        source=source,
        sqs=boto3.client("sqs"),
        queue_url=queue_url,
        closed_until=closed_until,
        audit_every=int(env_number(env, "MIRROR_AUDIT_EVERY", 24, 0, 10_000)),
        where=mirror_where(env.get("MIRROR_WHERE", "")),
    )


def mirror_where(text: str) -> str:
    """MirrorWhere, checked at start-up (a mistake fails every run with the parser's reason, before any listing)."""
    if text.strip():
        try:
            parse(text, time.time())
        except WhereError as exc:
            raise SettingsError(f"MIRROR_WHERE: {exc}") from None
    return text.strip()


_mirror: Mirror | None = None


@logger.inject_lambda_context(clear_state=True)
def handler(event, context):
    global _mirror
    if _mirror is None:
        _mirror = build_mirror()
    result = _mirror.run(lambda: context.get_remaining_time_in_millis() / 1000.0)
    logger.info("mirror invocation", extra={"platform": _mirror.platform, **result})
    return {"platform": _mirror.platform, **result}
