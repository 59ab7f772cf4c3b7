"""`migrator doctor`: is this deployed stack able to migrate? One line per check, a fix for each failure.

The checks that only the stack can answer run inside it: the reconcile function, invoked
with `{"doctor": true}`, reads the provider's credentials with its own role and calls the
provider from its own network (`reconcile.self_check`). The webhook is proven end to end:
a callback signed with the stored secret, in the provider's own scheme, is posted to the
public URL and must be acknowledged. The rest are reads of the stack's resources.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import requests

from .errors import CliError

MAX_SKEW_S = 60.0  # webhook timestamps and presigned URLs tolerate less than a few minutes


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        text = f"{mark}  {self.name:<30} {self.detail}"
        return text + (f"\n      fix: {self.fix}" if not self.ok and self.fix else "")


def run_checks(target, clock: Callable[[], float] = time.time) -> list[Check]:
    """Every check, in the order an operator would fix them; each one failing on its own."""
    checks: list[Check] = []
    for check in (
        _release,
        _inside,
        _webhook,
        _webhook_target,
        _mapping,
        _visibility,
        _alarms,
        _dead_letters,
        _schema,
    ):
        try:
            result = check(target, clock)
        except CliError:
            raise
        except Exception as exc:  # one check that cannot run is a failed check, not a crash
            result = [Check(check.__name__.strip("_"), False, f"could not check: {type(exc).__name__}: {exc}"[:200])]
        checks += result
    return checks


def release_check(stack_release: str | None, cli_release: str) -> Check:
    """The deployed stack's release (its `Release` output) beside this CLI's (pure): the CLI reads and writes
    what its own release's template deploys, so the two must be one release; a stack with no `Release` output
    is from 0.3.0 or before."""
    stack = stack_release or "0.3.0 or before (no Release output)"
    detail = f"stack {stack}, CLI {cli_release}"
    if stack_release == cli_release:
        return Check("release", True, detail)
    fix = (
        f"deploy this release's template over the stack (sam build && sam deploy), then `migrator upgrade`;"
        f" CHANGELOG.md says what changes between {stack} and {cli_release}"
    )
    if stack_release and _numbers(stack_release) > _numbers(cli_release):
        fix = f"use the CLI of release {stack_release} (pip install the same checkout the stack was deployed from)"
    return Check("release", False, detail, fix)


def _numbers(release: str) -> tuple[int, ...]:
    """'0.10.1' as (0, 10, 1), so releases compare as numbers; what is not a number counts as 0."""
    return tuple(int(part) if part.isdigit() else 0 for part in release.split("."))


def _release(target, clock) -> list[Check]:
    from .version import cli_version

    return [release_check(target.outputs.get("Release"), cli_version())]


def _inside(target, clock) -> list[Check]:
    """Credentials, the provider, the clock: asked of the reconcile function (its role, its network)."""
    lam = target.client("lambda")
    resp = lam.invoke(FunctionName=target.output("ReconcileFunctionName"), Payload=b'{"doctor": true}')
    answer = json.loads(resp["Payload"].read() or b"null")
    if resp.get("FunctionError") or not isinstance(answer, dict) or "credentials" not in answer:
        message = answer.get("errorMessage") if isinstance(answer, dict) else None
        fix = "read the reconcile function's log group; `sam deploy` from the current template.yaml"
        return [Check("provider credentials", False, f"the self-check did not run: {message or answer}", fix)]
    provider = target.outputs.get("Provider", "generic")
    where = target.outputs.get("ProviderTokenSecretName") or target.outputs.get("ProviderTokenParameterName") or "?"
    credentials = answer["credentials"]
    out = [
        Check(
            "provider credentials",
            credentials["ok"],
            f"readable by the functions' role ({where})" if credentials["ok"] else credentials.get("detail", ""),
            f"store the {provider} credentials in {where} in the format docs/providers.md gives, readable by the stack",
        )
    ]
    if not credentials["ok"]:
        return out
    reached = answer["provider"]
    status = reached.get("status")
    if reached["ok"]:
        detail, fix = f"reachable, credentials accepted (HTTP {status})", ""
    elif status in (401, 403):
        detail, fix = f"credentials refused (HTTP {status})", f"the {provider} credentials are wrong or lack rights"
    else:
        detail = reached.get("detail") or f"HTTP {status}"
        fix = "check ProviderBaseUrl and that the functions can reach it (VPC, egress)"
    out.append(Check("provider", reached["ok"], detail, fix))
    skew = answer.get("clock", {}).get("skew_s")
    if skew is not None:
        out.append(
            Check(
                "clock skew (function vs provider)",
                abs(skew) <= MAX_SKEW_S,
                f"{skew:+.1f} s",
                "webhook timestamps will be refused: check the provider's clock, or raise WebhookToleranceSeconds",
            )
        )
    return out


UNUSABLE_SECRET_FIX = (
    "store the provider's signing secret as it gives it (Standard Webhooks wants whsec_<base64>; "
    'a rotation wants {"current": ..., "previous": ...}); until then every callback is answered HTTP 503'
)


def _webhook(target, clock) -> list[Check]:
    """A signed callback that names nothing, posted to the public URL: it must come back 200."""
    name = target.outputs.get("WebhookSecretName") or ""
    secret = _webhook_secret(target, name)
    if secret is None:
        return [
            Check(
                "webhook secret",
                False,
                f"no signing secret is stored ({name or 'WebhookSecretName is empty'})",
                "store the provider's signing secret in the secret WebhookSecretName names (docs/providers.md)",
            )
        ]
    from migrator.signatures import SecretError

    try:
        body, headers = target.provider().doctor_event(secret, clock())
    except SecretError as exc:  # the function cannot use it either: it answers every callback 503
        return [Check("webhook", False, f"the stored signing secret is unusable: {exc}", UNUSABLE_SECRET_FIX)]
    url = target.output("WebhookUrl")
    answer = requests.post(url, data=body, headers={"content-type": "application/json", **headers}, timeout=15)
    if answer.status_code == 200:
        return [Check("webhook", True, "a signed test event was accepted end to end")]
    fixes = {
        401: "the webhook function refuses a signature made with the stored secret: "
        "WebhookScheme does not match the provider, or the function still caches an older secret (5 min)",
        503: f"the webhook function has no usable secret: {UNUSABLE_SECRET_FIX}",
    }
    fix = fixes.get(answer.status_code, "read the webhook function's log group")
    return [Check("webhook", False, f"the test event was answered HTTP {answer.status_code}", fix)]


def _webhook_target(target, clock) -> list[Check]:
    """Where the provider's webhooks point, where its API can say (webhook_targets.py: Cloudflare's one per
    account, api.video's and JW Player's subscriptions): here, or away (an upgrade that changed WebhookUrl). A
    provider that cannot say gets the URL to set, and the words that it cannot be read back."""
    from .webhook_targets import webhook_check

    found = webhook_check(target.provider(), target.output("WebhookUrl"))
    return [Check("provider's webhook", found.ok, found.detail, found.fix)]


def _webhook_secret(target, name: str) -> str | None:
    from botocore.exceptions import ClientError
    from migrator.webhook import parse_secrets

    parameter = target.outputs.get("WebhookSecretParameterName") or ""
    try:
        if name:
            raw = target.client("secretsmanager").get_secret_value(SecretId=name)["SecretString"]
        elif parameter:
            raw = target.client("ssm").get_parameter(Name=parameter, WithDecryption=True)["Parameter"]["Value"]
        else:
            return None
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("ResourceNotFoundException", "ParameterNotFound"):
            return None
        raise
    secrets = parse_secrets(raw)
    return secrets[0] if secrets else ""


def _mapping(target, clock) -> list[Check]:
    mapping = target.client("lambda").get_event_source_mapping(UUID=target.output("UploaderEventSourceMappingId"))
    state = mapping.get("State", "?")
    concurrency = (mapping.get("ScalingConfig") or {}).get("MaximumConcurrency")
    return [
        Check(
            "uploader",
            state == "Enabled",
            f"event source mapping {state.lower()}, at most {concurrency or '?'} invocations at once",
            "migrator resume",
        )
    ]


def _visibility(target, clock) -> list[Check]:
    function = target.client("lambda").get_function_configuration(FunctionName=target.output("UploaderFunctionName"))
    timeout = int(function.get("Timeout", 0))
    queue = target.outputs.get("WorkQueueUrl") or target.output("QueueUrl")  # the queue the uploader reads
    attrs = target.client("sqs").get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])
    visibility = int(attrs["Attributes"].get("VisibilityTimeout", 0))
    return [
        Check(
            "queue visibility",
            visibility >= 6 * timeout,
            f"{visibility} s for a {timeout} s function (AWS asks for at least 6 x)",
            "redeploy from template.yaml (the TimeoutToVisibility mapping sets it); do not edit the queue by hand",
        )
    ]


def _alarms(target, clock) -> list[Check]:
    cloudwatch, sns = target.client("cloudwatch"), target.client("sns")
    stack = target.outputs.get("StackName") or target.name
    alarms = [
        a for page in cloudwatch.get_paginator("describe_alarms").paginate() for a in page.get("MetricAlarms", [])
    ]
    ours = [a for a in alarms if a.get("AlarmName", "").startswith(stack)]
    topics = {arn for alarm in ours for arn in alarm.get("AlarmActions", [])}
    confirmed = 0
    for topic in topics:
        subscriptions = sns.list_subscriptions_by_topic(TopicArn=topic).get("Subscriptions", [])
        confirmed += sum(1 for s in subscriptions if s.get("SubscriptionArn", "").startswith("arn:"))
    return [
        Check(
            "alarms",
            bool(ours) and confirmed > 0,
            f"{len(ours)} alarms, {confirmed} confirmed subscriptions to where they go",
            "set AlarmEmail (and confirm the email SNS sends) or AlarmTopicArn, then sam deploy",
        )
    ]


def _dead_letters(target, clock) -> list[Check]:
    attrs = target.client("sqs").get_queue_attributes(
        QueueUrl=target.output("DeadLetterQueueUrl"), AttributeNames=["ApproximateNumberOfMessages"]
    )
    dead = int(attrs["Attributes"].get("ApproximateNumberOfMessages", 0))
    return [
        Check(
            "dead-letter queue",
            dead == 0,
            f"{dead} messages",
            "read why in the uploader's log, fix the cause, then `migrator redrive`",
        )
    ]


def _schema(target, clock) -> list[Check]:
    """Items an earlier release wrote lack what this one reads (due lanes, lookup bounds): a backfill is due."""
    from .upgrade import schema_status

    ok, detail = schema_status(target.client("dynamodb"), target.output("LedgerTableName"))
    fix = "run `migrator upgrade` (idempotent, resumable, paced) to fill in what they lack"
    return [Check("ledger schema", ok, detail, fix)]
