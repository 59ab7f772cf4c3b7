"""Brings up the whole system on this machine: emulator, provider simulator, deployed stack.

The demo and the benchmark both drive a `LocalRun`: it starts what is not already
running (all on 127.0.0.1), deploys template.yaml with parameters pointing at the
simulator, and on exit stops everything it started.

The aws target (issue 44) has no provider simulator: its run starts the MediaConvert simulator instead
(infra/localrun_aws.py), archives every original first into a bucket made in the emulator, and once the stack is
deployed starts the local CloudFront edge (infra/sim/edge.py) on the port the stack's PlaybackBaseUrl names; its
source simulator (with a source) serves a real video (`media_file`) for MediaConvert to transcode.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import requests

from .accounts import account, mux_signing_key, source_account, source_secret
from .emulator import Emulator, client, free_port, healthy, port_is_free
from .localrun_aws import EVENT_SOURCE as AWS_EVENT_SOURCE
from .localrun_aws import QUEUE_CONCURRENCY, JobTally, job_tally
from .sim import catalog
from .toolchain import ROOT, tool

if TYPE_CHECKING:
    from .sim.edge import LocalEdge


class SimProcess:
    """The provider simulator as a child process (its own interpreter, its own GIL)."""

    def __init__(self, args: list[str], log_path: Path, config: dict | None = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "infra" / "provider_sim.py"), "--port", str(self.port), *args],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        deadline = time.time() + 15
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the provider simulator exited; see {log_path}")
            try:
                requests.get(f"{self.url}/_sim/stats", timeout=0.5)
            except requests.RequestException:
                time.sleep(0.1)
                continue
            if config:
                self.configure(**config)  # credentials, before anything else calls it
            return
        raise RuntimeError("the provider simulator did not start")

    def stats(self) -> dict:
        return requests.get(f"{self.url}/_sim/stats", timeout=5).json()

    def requests_log(self) -> list[dict]:
        return requests.get(f"{self.url}/_sim/requests", timeout=30).json()

    def configure(self, **changes) -> None:
        requests.post(f"{self.url}/_sim/config", json=changes, timeout=5).raise_for_status()

    def stop(self) -> None:
        stop_child(self.process, self._log)


def stop_child(process: subprocess.Popen, log) -> None:
    """A simulator's process ended (SIGTERM, then SIGKILL after 10 s), its log closed."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
    log.close()


READY_LINE = re.compile(r"mediaconvert-sim listening on (http://127\.0\.0\.1:\d+)")


class MediaConvertProcess:
    """The aws target's MediaConvert simulator (infra/sim/mediaconvert_cli.py) as a child process, its log under
    .local/: the stack's ProviderBaseUrl; its jobs read back through ListJobs (localrun_aws.job_tally)."""

    def __init__(
        self,
        log_path: Path,
        s3_endpoint: str,
        events_endpoint: str,
        queues: int = QUEUE_CONCURRENCY,
        extra_args: list[str] | None = None,
    ):
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path = log_path
        self._log = open(log_path, "ab")
        argv = [sys.executable, "-m", "infra.sim.mediaconvert_cli", "--port", "0"]
        argv += ["--s3-endpoint", s3_endpoint, "--events-endpoint", events_endpoint]
        argv += ["--event-source", AWS_EVENT_SOURCE, "--queue", f"Default={queues}", *(extra_args or [])]
        self.args = argv[3:]
        start = log_path.stat().st_size
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        # The emulator takes any credentials; boto3 signs nothing without some.
        env.setdefault("AWS_ACCESS_KEY_ID", "test")
        env.setdefault("AWS_SECRET_ACCESS_KEY", "test")
        self.process = subprocess.Popen(argv, cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 20
        while time.time() < deadline:
            with open(log_path, "rb") as written:
                written.seek(start)
                found = READY_LINE.search(written.read().decode("utf-8", "replace"))
            if found:
                self.url = found.group(1)
                return
            if self.process.poll() is not None:
                raise RuntimeError(f"the MediaConvert simulator exited; see {log_path}")
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the MediaConvert simulator did not start; see {log_path}")

    def client(self):
        """boto3's `mediaconvert` client at the simulator, as the stack's functions reach it."""
        return client("mediaconvert", self.url)

    def jobs(self) -> list[dict]:
        """Every job, through ListJobs (twenty a page, newest first, every queue)."""
        mediaconvert, token = self.client(), None
        found: list[dict] = []
        while True:
            page = mediaconvert.list_jobs(MaxResults=20, **({"NextToken": token} if token else {}))
            found += page.get("Jobs") or []
            token = page.get("NextToken")
            if not token:
                return found

    def stats(self) -> JobTally:
        return job_tally(self.jobs())

    def stop(self) -> None:
        stop_child(self.process, self._log)


class SourceSide(Protocol):
    """What LocalRun runs a source on: a source simulator (SimProcess) or an object store's library (StoreLibrary)."""

    @property
    def url(self) -> str: ...

    def stop(self) -> None: ...


# Assets only: the ledger's control items (`#collection#...`, `#archive#...`, the pacer's) have ids that begin with `#`.
NOT_CONTROL = "NOT begins_with(asset_id, :control)"


class LocalRun:
    """Emulator + simulator + stack. Use as a context manager."""

    def __init__(
        self,
        sim_args: list[str],
        params: dict[str, str],
        label: str = "run",
        port: int = 4566,
        provider: str = "generic",
        source: str | None = None,
        source_args: list[str] | None = None,
        archive_bucket: str | None = None,
        mediaconvert_args: list[str] | None = None,
        queue_concurrency: int = QUEUE_CONCURRENCY,
    ):
        self.sim_args = sim_args
        # The aws target's MediaConvert simulator: its queue's concurrent jobs, and more of its flags (bench/).
        self.mediaconvert_args, self.queue_concurrency = mediaconvert_args or [], queue_concurrency
        # The owner's archive bucket (ArchiveBucket), made in the emulator before the stack that writes it.
        self.archive_bucket = archive_bucket
        self.params = params
        self.provider = provider
        # A library to migrate from (any source: migrator.platforms): a second simulator, its
        # credentials in the stack's source secret, and the target fetching what it is handed from it.
        self.source = source
        self.source_args = source_args or []
        self.source_sim: SourceSide | None = None
        self.source_credentials: dict = {}
        self.stack_name = f"{label}-{uuid.uuid4().hex[:6]}"
        self.port = port
        self.emulator: Emulator | None = None
        self.sim: SimProcess | None = None
        # The aws target's: its MediaConvert simulator, the CloudFront edge in front of the output, the real video.
        self.mediaconvert: MediaConvertProcess | None = None
        self.edge: LocalEdge | None = None  # once the stack is deployed
        self.media_file: Path | None = None
        self.outputs: dict = {}
        self.outputs_path: Path | None = None

    def __enter__(self) -> LocalRun:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        if healthy(self.endpoint):
            print(f"[run] using the emulator already on {self.endpoint}")
        else:
            if not port_is_free(self.port):
                self.port = free_port()
            print(f"[run] starting the emulator on {self.endpoint}")
            self.emulator = Emulator(self.port).start()
        if self.provider == "aws":
            self._start_aws()
            return
        # Real secrets in the emulator's Secrets Manager, read by the Lambdas as on AWS, in the
        # provider's own format; the simulator is told the same credentials.
        acct = account(self.provider, self.params.get("WebhookScheme", "seed"))
        manager = self.aws("secretsmanager")
        token_name, webhook_name = f"{self.stack_name}/provider-token", f"{self.stack_name}/webhook-secret"
        manager.create_secret(Name=token_name, SecretString=acct.credentials)
        manager.create_secret(Name=webhook_name, SecretString=acct.webhook_secret_json)
        self.params = {
            "Provider": self.provider,
            "ProviderTokenSecretName": token_name,
            "WebhookSecretName": webhook_name,
            **acct.stack,
            **self.params,
        }
        sim_args = ["--profile", self.provider, *self.sim_args]
        if self.source:
            self._start_source(manager, self.source)
            sim_args.append("--check-source")  # the target fetches the links it is handed, from the source
        self.sim = SimProcess(sim_args, ROOT / ".local" / f"{self.stack_name}-sim.log", acct.sim)
        print(f"[run] {self.provider} provider simulator on {self.sim.url} ({' '.join(sim_args)})")
        if self.archive_bucket:
            self.aws("s3").create_bucket(Bucket=self.archive_bucket)
            self.params = {"ArchiveBucket": self.archive_bucket, **self.params}
        self._deploy({"ProviderBaseUrl": self.sim.url, **self.params})
        self.sim.configure(
            webhook_url=self.outputs["WebhookUrl"],
            webhook_secret=acct.webhook_secret,
            webhook_scheme=acct.webhook_scheme,
        )

    def _deploy(self, params: dict[str, str]) -> None:
        self.outputs_path = outputs_path = ROOT / ".local" / f"{self.stack_name}-outputs.json"
        command = [tool("sam", "python"), "-m", "infra.stack", "up", "--endpoint", self.endpoint]
        command += ["--stack-name", self.stack_name, "--outputs", str(outputs_path)]
        for key, value in params.items():
            command += ["--param", f"{key}={value}"]
        print(f"[run] deploying template.yaml as stack {self.stack_name}")
        subprocess.run(command, cwd=ROOT, check=True)
        self.outputs = json.loads(outputs_path.read_text())

    def _start_aws(self) -> None:
        """The aws target: no provider secrets (the functions' roles sign its calls), the MediaConvert simulator,
        the archive every original goes to first, the deploy, then the edge in front of the distribution."""
        from .localrun_aws import sample_video, stack_params
        from .sim.edge import LocalEdge

        self.media_file = sample_video(ROOT / ".local")
        if self.source:
            self._start_source(self.aws("secretsmanager"), self.source)
        log = ROOT / ".local" / f"{self.stack_name}-mediaconvert.log"
        self.mediaconvert = MediaConvertProcess(
            log, self.endpoint, self.endpoint, self.queue_concurrency, self.mediaconvert_args
        )
        print(f"[run] MediaConvert simulator on {self.mediaconvert.url} ({' '.join(self.mediaconvert.args)})")
        self.archive_bucket = self.archive_bucket or f"{self.stack_name}-masters"
        self.aws("s3").create_bucket(Bucket=self.archive_bucket)
        edge_port = free_port()  # reserved for the edge: the stack's playback URLs are made under it
        aws_params = stack_params(self.mediaconvert.url, self.archive_bucket, edge_port)
        self.params = {"Provider": "aws", **aws_params, **self.params}
        self._deploy(self.params)
        cloudfront = self.aws("cloudfront")
        self.edge = LocalEdge(cloudfront, self.outputs["PlaybackDistributionId"], self.endpoint, port=edge_port)
        self.edge.start()
        print(f"[run] CloudFront edge on {self.edge.url} (signed URLs and cookies enforced)")

    def _start_source(self, manager, source: str) -> None:
        from .storage_emulators import LIBRARY_NAME, STORE_PLATFORMS, StoreLibrary, fill_s3_library

        size = int(self.source_args[self.source_args.index("--library-size") + 1])
        sim: SourceSide
        if source == "s3":  # the library is a bucket in this emulator, which the stack reads as its own
            fill_s3_library(self.aws("s3"), size)
            self.params = {"SourceBucketName": LIBRARY_NAME, **self.params}
            print(f"[run] s3 source: {size} objects in s3://{LIBRARY_NAME}/library/ on {self.endpoint}")
            return
        if source in STORE_PLATFORMS:  # an object store: its emulator, holding the library
            store = StoreLibrary(source, size).start()
            sim, creds, args = store, store.credentials, [f"{size} objects, in the {source} emulator"]
        else:
            creds, sim_config = source_account(source)
            args = ["--profile", source, *self.source_args]
            if self.media_file:  # a target that really transcodes what it is handed: a real video's bytes
                sim_config = {**sim_config, "media_file": str(self.media_file)}
            sim = SimProcess(args, ROOT / ".local" / f"{self.stack_name}-source.log", sim_config)
            if source == "mux":  # the key the stack signs the text tracks of signed-only assets with
                creds = {**creds, **mux_signing_key(sim.url, creds)}
        self.source_sim = sim
        self.source_credentials = {source: creds}
        name = f"{self.stack_name}/source-credentials"
        manager.create_secret(Name=name, SecretString=source_secret(self.source_credentials))
        self.params = {
            "SourceTokenSecretName": name,
            "SourceBaseUrls": f"{self.source}={self.source_url}",
            **self.params,
        }
        # The tracks worker fetches a source's caption files from the source simulator, on loopback.
        from migrator.trackfetch import origin_of

        given = self.params.get("TrackFetchTestOrigins")
        self.params["TrackFetchTestOrigins"] = ",".join(filter(None, (given, origin_of(sim.url))))
        print(f"[run] {source} source simulator on {sim.url} ({' '.join(args)})")

    @property
    def simulator(self) -> SimProcess:
        """The provider simulator, once started."""
        if self.sim is None:
            if self.provider == "aws":
                raise RuntimeError("the aws target has no provider simulator: its MediaConvert's is `mediaconvert`")
            raise RuntimeError("the provider simulator is not running")
        return self.sim

    @property
    def source_url(self) -> str:
        """The source simulator's API address as its platform's clients address it."""
        if self.source_sim is None or self.source is None:
            raise RuntimeError("no source is running")
        # Below it, as below the platform's (Wistia's /modern); an object store's emulator has no simulator
        # profile, and its clients address it at its root.
        below = catalog.profile(self.source).api_path if catalog.has(self.source) else ""
        return self.source_sim.url + below

    def stop(self) -> None:
        if self.outputs and healthy(self.endpoint):
            subprocess.run(
                [
                    tool("sam", "python"),
                    "-m",
                    "infra.stack",
                    "down",
                    "--endpoint",
                    self.endpoint,
                    "--stack-name",
                    self.stack_name,
                ],
                cwd=ROOT,
                capture_output=True,
            )
        if self.edge:
            self.edge.stop()
            self.edge = None
        if self.sim:
            self.sim.stop()
            self.sim = None
        if self.mediaconvert:
            self.mediaconvert.stop()
            self.mediaconvert = None
        if self.source_sim:
            self.source_sim.stop()
            self.source_sim = None
        if self.emulator:
            self.emulator.stop()
            self.emulator = None

    def aws(self, service: str):
        return client(service, self.endpoint)

    # --- driving it ---------------------------------------------------------------------

    def send(self, bodies: list[str], threads: int = 8) -> int:
        """SendMessageBatch, 10 per call, in parallel; returns the number of calls made."""
        sqs = self.aws("sqs")
        url = self.outputs["QueueUrl"]
        chunks = [bodies[i : i + 10] for i in range(0, len(bodies), 10)]

        def send_chunk(chunk: list[str]) -> int:
            calls = 0
            entries = [{"Id": str(i), "MessageBody": b} for i, b in enumerate(chunk)]
            while entries:
                calls += 1
                failed = {f["Id"] for f in sqs.send_message_batch(QueueUrl=url, Entries=entries).get("Failed", [])}
                entries = [e for e in entries if e["Id"] in failed]
                if entries:
                    time.sleep(0.2)
            return calls

        with ThreadPoolExecutor(threads) as pool:
            return sum(pool.map(send_chunk, chunks))

    def states(self) -> Counter:
        """Counts by state from a Scan: fine for a demo's few hundred assets (the
        operator CLI reads the by_state index instead)."""
        dynamodb = self.aws("dynamodb")
        counts: Counter = Counter()
        kwargs = {
            "TableName": self.outputs["LedgerTableName"],
            "ProjectionExpression": "#s",
            "FilterExpression": NOT_CONTROL,  # a collection's or an archive copy's own item has a state too
            "ExpressionAttributeNames": {"#s": "state"},
            "ExpressionAttributeValues": {":control": {"S": "#"}},
        }
        while True:
            page = dynamodb.scan(**kwargs)
            for item in page["Items"]:
                if "state" in item:
                    counts[item["state"]["S"]] += 1
            if "LastEvaluatedKey" not in page:
                return counts
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def items(self, state: str) -> list[dict]:
        """Every ledger item in `state`, as plain Python (maps and lists all the way down)."""
        from boto3.dynamodb.types import TypeDeserializer

        plain = TypeDeserializer().deserialize
        dynamodb = self.aws("dynamodb")
        kwargs = {
            "TableName": self.outputs["LedgerTableName"],
            "FilterExpression": f"#s = :s AND {NOT_CONTROL}",
            "ExpressionAttributeNames": {"#s": "state"},
            "ExpressionAttributeValues": {":s": {"S": state}, ":control": {"S": "#"}},
        }
        found = []
        while True:
            page = dynamodb.scan(**kwargs)
            found += [{k: plain(v) for k, v in item.items()} for item in page["Items"]]
            if "LastEvaluatedKey" not in page:
                return found
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def queue_depth(self, key: str = "QueueUrl") -> int:
        attrs = self.aws("sqs").get_queue_attributes(
            QueueUrl=self.outputs[key],
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attrs["ApproximateNumberOfMessages"]) + int(attrs["ApproximateNumberOfMessagesNotVisible"])

    def uploader_metrics(self) -> tuple[Counter, int]:
        """Sum the uploader's EMF metrics and count its invocations from its logs."""
        return uploader_metrics(self.aws("logs"), self.aws("lambda"), self.outputs)


def uploader_metrics(logs, lambda_client, outputs: dict) -> tuple[Counter, int]:
    """Sum the uploader's EMF metrics and count its invocations, read from its log group
    (the one its LoggingConfig names, else Lambda's default)."""
    function = outputs["UploaderFunctionName"]
    config = lambda_client.get_function_configuration(FunctionName=function)
    group = (config.get("LoggingConfig") or {}).get("LogGroup") or f"/aws/lambda/{function}"
    totals: Counter = Counter()
    invocations = 0
    kwargs = {"logGroupName": group}
    while True:
        try:
            page = logs.filter_log_events(**kwargs)
        except logs.exceptions.ResourceNotFoundException:
            return totals, invocations  # nothing logged yet
        for event in page["events"]:
            message = event["message"]
            if message.startswith("START RequestId"):
                invocations += 1
            elif message.startswith('{"_aws"'):
                doc = json.loads(message)
                for directive in doc["_aws"]["CloudWatchMetrics"]:
                    for metric in directive["Metrics"]:
                        values = doc.get(metric["Name"], [])
                        totals[metric["Name"]] += sum(values) if isinstance(values, list) else values
        if not page.get("nextToken"):
            return totals, invocations
        kwargs["nextToken"] = page["nextToken"]
