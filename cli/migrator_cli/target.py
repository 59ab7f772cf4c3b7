"""Which deployed stack the CLI talks to, on AWS or a local emulator, and its boto3 clients.

A stack is named (`--stack`, read from CloudFormation's outputs) or described by the
outputs file `infra/local-stack up --outputs` writes (`--outputs`). `--endpoint` points
every client at a LocalStack-compatible emulator instead of AWS.
"""

from __future__ import annotations

import ipaddress
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import boto3
from botocore.config import Config
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    ProfileNotFound,
    ReadTimeoutError,
)

from .errors import CliError

# What the CLI reads from the stack; a stack deployed from an older template may lack some.
OUTPUTS = (
    "QueueUrl",
    "DeadLetterQueueUrl",
    "LedgerTableName",
    "StatsTableName",
    "UploaderEventSourceMappingId",
    "ReconcileFunctionName",
)
EMULATOR_CREDENTIALS = {"aws_access_key_id": "test", "aws_secret_access_key": "test"}


def _is_loopback(endpoint: str) -> bool:
    host = urlsplit(endpoint).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class Target:
    outputs: dict
    name: str
    endpoint: str | None = None
    region: str | None = None
    _session: boto3.session.Session | None = field(default=None, repr=False)
    _clients: dict = field(default_factory=dict, repr=False)

    def output(self, key: str) -> str:
        value = self.outputs.get(key)
        if not value:
            raise CliError(f"stack {self.name} has no output {key}: redeploy it from the current template.yaml")
        return str(value)

    def client(self, service: str, config: Config | None = None):
        """The boto3 client for `service` (shared), or a new one with `config` merged in."""
        if config is not None:
            return make_client(service, self.endpoint, self.region, self._session, config)
        if service not in self._clients:
            self._clients[service] = make_client(service, self.endpoint, self.region, self._session)
        return self._clients[service]

    def provider(self, base_url: str | None = None):
        """The stack's provider, its credentials read with the operator's AWS credentials."""
        from migrator.providers import CredentialsError, build

        name = self.outputs.get("Provider") or "generic"
        base = base_url or self.outputs.get("ProviderBaseUrl") or None
        secret_name = self.outputs.get("ProviderTokenSecretName") or None
        parameter_name = self.outputs.get("ProviderTokenParameterName") or None
        cache: dict = {}

        def secret() -> str | None:
            if "value" not in cache:
                if secret_name:
                    value = self.client("secretsmanager").get_secret_value(SecretId=secret_name)["SecretString"]
                elif parameter_name:
                    value = self.client("ssm").get_parameter(Name=parameter_name, WithDecryption=True)["Parameter"][
                        "Value"
                    ]
                else:
                    value = None
                cache["value"] = value
            return cache["value"]

        try:
            if name == "aws":
                return self._aws_provider(base)
            return build(name, base, secret, webhook_scheme=self.outputs.get("WebhookScheme") or "seed")
        except CredentialsError as exc:
            raise CliError(f"provider {name}: {exc}") from None

    def _aws_provider(self, base: str | None):
        """The aws target as the stack's outputs name it: its MediaConvert (ProviderBaseUrl where a local simulator
        stands in, else the region's own), its output bucket and playback address, with the operator's credentials."""
        from migrator.providers import AwsTarget, build

        target = AwsTarget(
            role_arn=self.outputs.get("MediaConvertRoleArn") or "",
            queue=self.outputs.get("MediaConvertQueueArn") or "",
            output_bucket=self.outputs.get("OutputBucketName") or "",
            playback_base_url=(self.outputs.get("PlaybackBaseUrlOut") or "").rstrip("/"),
            stack=self.outputs.get("StackName") or self.name,
            archive_bucket=self.outputs.get("ArchiveBucketName") or "",
        )
        mediaconvert = make_client("mediaconvert", base, self.region, self._session)
        return build("aws", base, lambda: None, target=target, mediaconvert=mediaconvert, s3=self.client("s3"))

    def presigner(self, expiry_s: int):
        """SigV4 presigned GET URLs for s3:// sources, in each bucket's own region."""
        from migrator.presign import SIGV4, S3Presigner

        return S3Presigner(
            expiry_s,
            client_for=lambda region: make_client("s3", self.endpoint, region or self.region, self._session, SIGV4),
        )


# Connection failures end in seconds, not minutes: a short connect timeout and few tries.
# Throttling is retried by the same policy (standard mode), once: never two policies stacked.
CLIENT_CONFIG = Config(
    connect_timeout=3, read_timeout=30, retries={"mode": "standard", "total_max_attempts": 3}, max_pool_connections=32
)


def retry_notice(
    attempts: int, max_attempts: int, caught_exception=None, response=None, operation=None, **_
) -> str | None:
    """What a failed try is waiting on, when the client will try again (botocore's standard mode retries
    a timeout, a dropped connection, a throttle and a 5xx), else None: the line a stalled endpoint earns
    on stderr, so a command that takes a while says what it waits for."""
    if attempts >= max_attempts:
        return None
    reason = None
    if isinstance(caught_exception, ReadTimeoutError | ConnectTimeoutError):
        reason = "no answer in time"
    elif isinstance(caught_exception, EndpointConnectionError | ConnectionClosedError):
        reason = "connection refused or dropped"
    elif response is not None:
        status = response[0].status_code
        code = (response[1] or {}).get("Error", {}).get("Code", "")
        if status >= 500 or status == 429 or "Throttl" in code or code == "TooManyRequestsException":
            reason = f"HTTP {status}" + (f" {code}" if code else "")
    if reason is None:
        return None
    name = getattr(operation, "name", None) or "a call"
    return f"{name}: {reason}; trying again ({attempts + 1} of {max_attempts})"


def _retry_announcer(max_attempts: int):
    def announce(**kwargs) -> None:
        notice = retry_notice(max_attempts=max_attempts, **kwargs)
        if notice:
            print(f"migrator: waiting for AWS: {notice}", file=sys.stderr, flush=True)

    return announce


def session_for(profile: str | None) -> boto3.session.Session:
    """The AWS CLI's session: --profile, else AWS_PROFILE, else the default chain."""
    try:
        return boto3.session.Session(profile_name=profile or None)
    except ProfileNotFound:
        raise CliError(f"no AWS profile named {profile!r} (see ~/.aws/config)") from None


def region_of(region: str | None, session: boto3.session.Session, endpoint: str | None) -> str:
    """--region, else AWS_REGION, else AWS_DEFAULT_REGION (or the profile's), as the AWS CLI reads them."""
    region = region or os.environ.get("AWS_REGION") or session.region_name or ("us-east-1" if endpoint else None)
    if not region:
        raise CliError("no AWS region: pass --region, or set AWS_REGION (or AWS_DEFAULT_REGION, or a profile's region)")
    return region


def make_client(service: str, endpoint: str | None, region: str | None, session=None, config: Config | None = None):
    session = session or boto3.session.Session()
    kwargs: dict = {"config": CLIENT_CONFIG.merge(config) if config else CLIENT_CONFIG}
    if endpoint:
        kwargs["endpoint_url"] = endpoint
        if _is_loopback(endpoint) and session.get_credentials() is None:
            kwargs.update(EMULATOR_CREDENTIALS)  # a local emulator takes any credentials
    try:
        client = session.client(service, region_name=region_of(region, session, endpoint), **kwargs)
    except NoRegionError:
        raise CliError("no AWS region: pass --region or set AWS_REGION") from None
    max_attempts = (client.meta.config.retries or {}).get("total_max_attempts", 1)
    client.meta.events.register_last("needs-retry", _retry_announcer(max_attempts))
    return client


def resolve(
    stack: str | None, outputs_file: str | None, endpoint: str | None, region: str | None, profile: str | None = None
) -> Target:
    """The stack the operator named, with its outputs; a clear CliError when it cannot be found.

    The endpoint is --endpoint-url, else MIGRATOR_ENDPOINT, else AWS_ENDPOINT_URL (which boto3
    itself also reads); the profile and region follow the AWS CLI's rules.
    """
    endpoint = endpoint or os.environ.get("MIGRATOR_ENDPOINT") or os.environ.get("AWS_ENDPOINT_URL") or None
    session = session_for(profile)
    stack = stack or os.environ.get("MIGRATOR_STACK") or None
    outputs_file = outputs_file or os.environ.get("MIGRATOR_OUTPUTS") or None
    if stack and outputs_file:
        raise CliError("give --stack or --outputs, not both")
    if outputs_file:
        return Target(_read_outputs(Path(outputs_file)), Path(outputs_file).name, endpoint, region, session)
    if not stack:
        raise CliError("which stack? pass --stack NAME (or --outputs FILE from infra/local-stack up)")
    cloudformation = make_client("cloudformation", endpoint, region, session)
    try:
        stacks = cloudformation.describe_stacks(StackName=stack)["Stacks"]
    except NoCredentialsError:
        raise CliError(
            "no AWS credentials found: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        ) from None
    except ClientError as exc:
        message = exc.response.get("Error", {}).get("Message", "")
        if "does not exist" in message:
            where = endpoint or cloudformation.meta.region_name
            raise CliError(f"no stack named {stack!r} in {where}") from None
        raise
    outputs = {o["OutputKey"]: o.get("OutputValue", "") for o in stacks[0].get("Outputs", [])}
    return Target(outputs, stack, endpoint, region, session)


def _read_outputs(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise CliError(f"outputs file not found: {path}") from None
    except OSError as exc:
        raise CliError(f"cannot read outputs file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:  # not text (before ValueError, its base, which means not JSON)
        raise CliError(f"cannot read outputs file {path}: {exc}") from None
    except ValueError:
        raise CliError(f"outputs file {path} is not JSON") from None
    if not isinstance(doc, dict) or not all(isinstance(v, str) for v in doc.values()):
        raise CliError(f"outputs file {path} is not a JSON object of stack outputs")
    return doc
