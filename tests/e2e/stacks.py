"""The end-to-end package's deployed stacks: one per configuration, shared by every test that needs it.

Deploying template.yaml on the emulator costs seconds of `sam deploy` (the build is made once per
run, infra/stack.py), so a configuration is deployed the first time a test asks for it and kept for
the rest of the session. A provider's stack is deployed once with everything any module needs of it
(the sources' credentials, the caption file server's origin, the fidelity options, the quiet
reconcile schedule); what differs between modules is the simulator's behaviour, which each module
sets at run time. Each module starts from a clean slate: `Stacks.reset` waits for the queues to
settle, purges them, empties the stack's tables and resets the simulator to the configuration it
started with, so no module sees another's assets, videos or pacing.
"""

from __future__ import annotations

import base64
import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import ROOT, unique

# The generic contract's test account: the package simulator knows this token.
TOKEN = "e2e-provider-token"
WEBHOOK_SECRET = "whsec_" + base64.b64encode(b"e2e-webhook-signing-key!").decode()
SOURCE_BUCKET = "e2e-source-masters"  # the stack's SourceBucketName: s3:// sources must live here
PROVIDERS = ("mux", "cloudflare", "apivideo")
# A provider's stack, whatever module uses it: the sources' and the tracks' settings, and one or two of the
# provider's own options (fidelity checks they reach the video; nothing else depends on them).
PROVIDER_OPTIONS = {
    "mux": {"MuxVideoQuality": "plus", "MuxStaticRenditions": "highest"},
    "cloudflare": {"CloudflareAllowedOrigins": "example.com"},
    # The mirror's sweep of Kaltura, keeping to a triage, its schedule off until a module turns it on
    # (test_mirror_stack).
    "apivideo": {
        "ApiVideoMp4Support": "false",
        "MirrorSource": "kaltura",
        "MirrorSchedule": "rate(1 minute)",
        "MirrorWhere": "plays > 0",
    },
}
SOURCE_PREPARE_TIMEOUT_S = 30
# The owner's archive bucket (issue 43) of the stacks that deploy with one: Mux's (test_archive_stack). Its uploader
# owes nothing to the archive but while a module asks (`archiving`), so other modules' assets are never copied.
ARCHIVE_BUCKET = "e2e-archive-masters"
ARCHIVED_PROVIDERS = ("mux",)
# The simulator a provider stack starts with: unlimited creates and reads (pacing tests set their own).
QUIET = {"rate": 0, "read_rate": 0, "budget_quota": 0, "processing_delay_s": 0.3}


def deploy(endpoint: str, aws, sim, outputs_path: Path, acct, **extra) -> tuple[str, dict]:
    """Deploy template.yaml pointing at `sim` with `acct`'s provider and secrets; returns (name, outputs)."""
    name, params = unique("e2e"), stack_parameters(aws, sim, acct, **extra)
    return name, sam_up(endpoint, name, params, outputs_path)


def stack_parameters(aws, sim, acct, **extra) -> dict[str, str]:
    """The template parameters of an e2e stack against `sim`, its secrets stored for `acct`."""
    secret_name, webhook_secret_name = unique("provider-token"), unique("webhook-secret")
    aws("secretsmanager").create_secret(Name=secret_name, SecretString=acct.credentials)
    aws("secretsmanager").create_secret(Name=webhook_secret_name, SecretString=acct.webhook_secret_json)
    return {
        "Provider": acct.provider,
        "ProviderBaseUrl": sim.url,
        "ProviderTokenSecretName": secret_name,
        "ProviderRateLimit": "50",
        "MaximumConcurrency": "3",
        "UploaderTimeout": "60",
        "MaxAttempts": "3",
        "WebhookScheme": acct.webhook_scheme,
        "WebhookSecretName": webhook_secret_name,
        "SourceBucketName": SOURCE_BUCKET,
        "AlarmEmail": "migration-ops@example.com",
        **extra,
    }


def sam_up(endpoint: str, name: str, params: dict, outputs_path: Path, source: Path | None = None) -> dict:
    """`infra/local-stack up` of this tree (or the tree at `source`: an earlier release) as stack `name`."""
    from infra.toolchain import tool

    command = [tool("sam", "python"), "-m", "infra.stack", "up", "--endpoint", endpoint, "--stack-name", name]
    command += ["--outputs", str(outputs_path), *(["--source", str(source)] if source else [])]
    for key, value in params.items():
        command += ["--param", f"{key}={value}"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return json.loads(outputs_path.read_text())


def delete(endpoint: str, name: str) -> None:
    from infra.toolchain import tool

    subprocess.run(
        [tool("sam", "python"), "-m", "infra.stack", "down", "--endpoint", endpoint, "--stack-name", name],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )


@dataclass
class Deployed:
    """template.yaml deployed with `Provider=<name>` against a simulator speaking that provider's API."""

    name: str
    stack_name: str
    outputs: dict
    sim: object  # infra.sim.core.ProviderSim
    acct: object  # infra.accounts.Account
    outputs_path: Path
    track_origins: frozenset = frozenset()
    files: object = None  # the caption file server (tests.track_files.FileServer) the stack may fetch from
    sim_baseline: dict = field(default_factory=dict)  # the simulator's configuration at deploy, for resets

    def client(self):
        """Our own adapter for this provider, pointed at the simulator: a client of its API (caption files
        fetched from the package's file server, as the stack's TrackFetchTestOrigins allows)."""
        from migrator.providers import build
        from migrator.trackfetch import FetchPolicy

        policy = FetchPolicy(test_origins=self.track_origins)
        return build(self.name, self.sim.url, lambda: self.acct.credentials, track_policy=policy)


class Stacks:
    """The session's stacks by configuration; `close` deletes them all."""

    def __init__(self, endpoint: str, aws, workdir: Callable[[str], Path]):
        self.endpoint, self.aws, self.workdir = endpoint, aws, workdir
        self._made: dict[str, Deployed] = {}

    def get(self, key: str, make: Callable[[], Deployed]) -> Deployed:
        if key not in self._made:
            self._made[key] = make()
        return self._made[key]

    def provider(self, name: str, sources, files) -> Deployed:
        """The shared stack for provider `name` (mux, cloudflare, apivideo)."""
        return self.get(f"provider:{name}", lambda: self._provider(name, sources, files))

    def _provider(self, name: str, sources, files) -> Deployed:
        from migrator.trackfetch import origin_of

        from infra.accounts import account, source_secret
        from infra.provider_sim import ProviderSim, SimConfig

        acct = account(name)
        sim = ProviderSim(SimConfig(port=0, profile=name, **QUIET, **acct.sim)).start()
        # Caption files come from the package's file server and from the source simulators (a Vimeo text
        # track's link, Mux's text track URL): their exact origins, and no other loopback port.
        origins = [files.origin, *(origin_of(source.url) for source in sources.sims.values())]
        secret_name = unique("source-credentials")
        self.aws("secretsmanager").create_secret(Name=secret_name, SecretString=source_secret(sources.credentials))
        params = {
            "ReconcileScheduleEnabled": "false",
            "PollAfterSeconds": "60",
            "MaximumConcurrency": "5",
            "TrackFetchTestOrigins": ",".join(origins),
            "MaxTrackAttempts": "2",
            "SourceTokenSecretName": secret_name,
            "SourceBaseUrls": sources.base_urls(),
            "SourcePrepareTimeoutSeconds": str(SOURCE_PREPARE_TIMEOUT_S),
            **PROVIDER_OPTIONS[name],
        }
        if name in ARCHIVED_PROVIDERS:
            self.aws("s3").create_bucket(Bucket=ARCHIVE_BUCKET)
            params["ArchiveBucket"] = ARCHIVE_BUCKET
        stack_name, outputs = deploy(self.endpoint, self.aws, sim, self.workdir(name) / "outputs.json", acct, **params)
        if name in ARCHIVED_PROVIDERS:
            uploader = outputs["UploaderFunctionName"]
            variables = self.aws("lambda").get_function_configuration(FunctionName=uploader)["Environment"]["Variables"]
            set_environment(self.aws("lambda"), uploader, {**variables, "ARCHIVE_QUEUE_URL": ""})
        sim.patch_config({"webhook_url": outputs["WebhookUrl"], "webhook_secret": acct.webhook_secret})
        deployed = Deployed(name, stack_name, outputs, sim, acct, self.workdir(name) / "outputs.json")
        deployed.outputs_path.write_text(json.dumps(outputs))
        deployed.track_origins, deployed.files = frozenset(origins), files
        deployed.sim_baseline = sim.config_dict()
        return deployed

    def reset(self, deployed: Deployed) -> None:
        """A clean slate on `deployed`: the queues settled and purged, its tables empty, its simulator as
        deployed (no videos, counters or pending work; its first configuration back)."""
        reset_stack(self.aws, deployed.stack_name, deployed.outputs)
        deployed.sim.reset()
        deployed.sim.patch_config(deployed.sim_baseline)
        threading.Thread(target=warm_webhook, args=(deployed.outputs["WebhookUrl"],), daemon=True).start()

    def close(self) -> None:
        """Every stack deleted at once and every simulator stopped side by side: one after the other, a `sam`
        process and a simulator's wind-down each (its server's join, its deliveries' timeouts), a worker's
        dozen stacks took 70 to 150 s of a CI run's teardown."""
        from concurrent.futures import ThreadPoolExecutor

        from infra.stack import wait

        made, cfn = list(self._made.values()), self.aws("cloudformation")
        for deployed in made:
            cfn.delete_stack(StackName=deployed.stack_name)
        with ThreadPoolExecutor(max(1, len(made))) as pool:
            list(pool.map(lambda deployed: deployed.sim.stop(), made))
        for deployed in made:
            wait(cfn, deployed.stack_name, timeout_s=120)


QUEUES = (
    "QueueUrl",
    "WorkQueueUrl",
    "TracksQueueUrl",
    "ArchiveQueueUrl",
    "DeadLetterQueueUrl",
    "TracksDeadLetterQueueUrl",
    "ArchiveDeadLetterQueueUrl",
)


def set_environment(lambda_client, name: str, variables: dict, timeout_s: float = 60) -> None:
    """Function `name`'s environment set to `variables`, once the update has finished."""
    lambda_client.update_function_configuration(FunctionName=name, Environment={"Variables": variables})
    deadline = time.time() + timeout_s
    while lambda_client.get_function_configuration(FunctionName=name).get("LastUpdateStatus") == "InProgress":
        assert time.time() < deadline, f"{name}'s configuration update did not finish in {timeout_s} s"
        time.sleep(0.5)


def warm_webhook(url: str, timeout_s: float = 30.0) -> None:
    """Start the webhook function's reserved executions, so that a module's first burst of callbacks finds them
    started. Run beside the module's first steps (its inventory, its load), not before them.

    The emulator runs each execution as a process that unpacks the 51 MB package and imports it: four at once took
    6.2 s on an idle machine (7 to 14 s in a suite), past the simulators' 5 s webhook timeout, and meanwhile every
    other callback was throttled: 20 Mux videos settled 8 s after processing, each ready event refused four
    times and answered at the provider's fifth try (after 0.5, 1, 2 and 4 s of backoff). On AWS a cold start
    takes about a second. An unsigned POST is refused (401) and writes nothing; the surplus executions stay
    for the emulator's idle minute (infra/emulator.py). Waited for, the start cost as much as it saved
    (29 resets, 209 s in a suite of 2,490 tests, whose sum of test times did not move)."""
    from concurrent.futures import ThreadPoolExecutor

    import requests

    from infra.stack import local_defaults

    executions = int(local_defaults()["WebhookConcurrency"])

    def knock(_: int) -> None:
        try:
            requests.post(url, data=b"{}", headers={"Content-Type": "application/json"}, timeout=timeout_s)
        except requests.RequestException:
            pass  # a start that failed only leaves the burst to meet a cold worker, as before

    with ThreadPoolExecutor(executions) as pool:
        list(pool.map(knock, range(executions)))


def reset_stack(aws, stack_name: str, outputs: dict, settle_s: float = 30.0) -> None:
    """Wait (up to `settle_s`) until nothing is queued or in flight, purge every queue, then empty every table
    the stack owns: what a fresh deploy would have. The ledger goes first, and its stats only once the tally
    has counted the ledger's removals from its stream (else they would count below zero afterwards)."""
    sqs = aws("sqs")
    urls = [outputs[key] for key in QUEUES if outputs.get(key)]
    deadline = time.time() + settle_s
    while time.time() < deadline and any(_depth(sqs, url) for url in urls):
        time.sleep(0.5)
    for url in urls:
        sqs.purge_queue(QueueUrl=url)
    resources = aws("cloudformation").describe_stack_resources(StackName=stack_name)["StackResources"]
    is_table = "AWS::DynamoDB::Table"
    tables = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in resources if r["ResourceType"] == is_table}
    stats = tables.pop("StatsTable", None)
    for table in tables.values():
        _empty(aws("dynamodb"), table)
    if stats:
        _tally_settled(aws("dynamodb"), stats, settle_s)
        _empty(aws("dynamodb"), stats)


def _tally_settled(dynamodb, stats_table: str, within_s: float) -> None:
    """Until the tally's counts are back to zero (every removal counted) or stop moving for 3 s."""
    from migrator.tally import read_stats

    deadline, last, still_since = time.time() + within_s, None, time.time()
    while time.time() < deadline:
        counts = read_stats(dynamodb, stats_table, time.time(), 0).counts
        if not any(counts.values()):
            return
        if counts != last:
            last, still_since = counts, time.time()
        elif time.time() - still_since > 3:
            return
        time.sleep(0.5)


def _depth(sqs, url: str) -> int:
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return sum(int(attrs[name]) for name in names)


def _empty(dynamodb, table: str) -> None:
    keys = [k["AttributeName"] for k in dynamodb.describe_table(TableName=table)["Table"]["KeySchema"]]
    kwargs: dict = {"TableName": table, "ProjectionExpression": ", ".join(f"#k{i}" for i in range(len(keys)))}
    kwargs["ExpressionAttributeNames"] = {f"#k{i}": key for i, key in enumerate(keys)}
    while True:
        page = dynamodb.scan(**kwargs)
        items = page["Items"]
        for start in range(0, len(items), 25):
            requests = [{"DeleteRequest": {"Key": item}} for item in items[start : start + 25]]
            while requests:
                left = dynamodb.batch_write_item(RequestItems={table: requests}).get("UnprocessedItems", {})
                requests = left.get(table, [])
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


@contextmanager
def provider_stack(name, stacks, sources, track_files) -> Iterator[Deployed]:
    """The shared stack of provider `name`, reset to a clean slate for the module that asks."""
    deployed = stacks.provider(name, sources, track_files)
    stacks.reset(deployed)
    yield deployed


# How long a wait runs before reconcile is asked to poll what is still processing.
SETTLE_ROUND_S = 20.0


def wait_for_states(dynamodb, table: str, ids: list[str], done: set[str], timeout_s: float = 60) -> dict:
    """Poll the ledger until every id is in a `done` state; return {id: item}."""
    deadline = time.time() + timeout_s
    items: dict = {}
    while time.time() < deadline:
        pending = [i for i in ids if items.get(i, {}).get("state") not in done]
        if not pending:
            return items
        for start in range(0, len(pending), 100):
            keys = [{"asset_id": {"S": i}} for i in pending[start : start + 100]]
            resp = dynamodb.batch_get_item(RequestItems={table: {"Keys": keys, "ConsistentRead": True}})
            for raw in resp["Responses"].get(table, []):
                items[raw["asset_id"]["S"]] = {k: next(iter(v.values())) for k, v in raw.items()}
        time.sleep(0.5)
    missing = {i: items.get(i, {}).get("state") for i in ids if items.get(i, {}).get("state") not in done}
    raise AssertionError(f"{len(missing)} assets not done after {timeout_s:.0f} s: {dict(list(missing.items())[:10])}")


def settle_with_reconcile(
    dynamodb, table: str, ids: list[str], done: set[str], timeout_s: float, reconcile: Callable[[], object]
) -> dict:
    """`wait_for_states`, with reconcile's poll run as an operator runs it every SETTLE_ROUND_S until then: a
    webhook the provider gave up on (a cold webhook Lambda on a loaded machine answers after its timeout) is
    made good by the poll, as on AWS by the scheduled reconcile."""
    deadline = time.time() + timeout_s
    while True:
        try:
            return wait_for_states(dynamodb, table, ids, done, max(0.0, min(SETTLE_ROUND_S, deadline - time.time())))
        except AssertionError:
            if time.time() >= deadline:
                raise
        reconcile()
