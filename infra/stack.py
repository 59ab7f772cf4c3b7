"""The local-stack command: `sam build` and `sam deploy` of template.yaml, the way users deploy it.

    python -m infra.stack up   [--endpoint URL] [--stack-name NAME] [--param Key=Value ...]
    python -m infra.stack down [--endpoint URL] [--stack-name NAME]

`up` runs `sam build`, then `sam deploy` with samconfig.toml (its `local` environment
against an emulator: the SAM CLI pointed at it through AWS_ENDPOINT_URL, artifacts in a
bucket it resolves there, the SAM transform run by the emulator's CloudFormation as AWS
runs it), and writes the stack's outputs to a JSON file. With the default endpoint it
starts the emulator first if nothing answers. Any other endpoint (LocalStack on 4566, or
real AWS with `--endpoint aws`, samconfig's `default` environment) takes the same path.
Runs on the SAM tool environment; `infra/local-stack` arranges that.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from infra.emulator import CREDENTIALS, DEFAULT_PORT, REGION, Emulator, healthy  # noqa: E402
from infra.toolchain import python312_bin_dir  # noqa: E402

DEFAULT_ENDPOINT = f"http://127.0.0.1:{DEFAULT_PORT}"
DEFAULT_STACK = "video-migration"
DEFAULT_OUTPUTS = ROOT / ".local" / "stack-outputs.json"

# A function's ReservedConcurrentExecutions, which the emulator's CloudFormation drops (ministack
# 1.5.33 provisions every function unreserved) and the local stack therefore applies itself after
# each deploy, through the Lambda API the emulator does honour: the function's logical id, and the
# template parameter its ReservedConcurrentExecutions reads (tests/template holds the two together).
RESERVED_CONCURRENCY = {"WebhookFunction": "WebhookConcurrency"}


def template_parameters(template: Path) -> set[str]:
    """The parameter names a template declares (read without resolving its CloudFormation tags)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    return set((yaml.load(template.read_text(), Loader=Loader) or {}).get("Parameters") or {})


def local_defaults() -> dict[str, str]:
    """Parameters an emulator deploy gets unless told otherwise.

    The emulator runs each concurrent execution as a process of its own on this machine (a cold
    start unpacks the code and imports boto3: CPU seconds). Unbounded, a burst of a few hundred
    webhooks started a few hundred such processes on two cores, each timed out, and the provider's
    retries started more: the stack stopped answering. Two per core keeps the burst answered:
    past the bound a callback is throttled and the provider retries it, as on AWS.
    """
    return {"WebhookConcurrency": str(2 * max(1, os.cpu_count() or 1))}


class DeployError(RuntimeError):
    pass


def session(endpoint: str | None):
    import boto3

    if endpoint:
        return boto3.Session(
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            region_name=REGION,
        )
    return boto3.Session()


def client(name: str, endpoint: str | None):
    return session(endpoint).client(name, endpoint_url=endpoint) if endpoint else session(None).client(name)


# Beside a build, the digest of the inputs it was built from (`build_inputs_digest`).
BUILD_STAMP = ".inputs-digest"


def build_inputs_digest(root: Path = ROOT) -> str:
    """A digest of everything `sam build` reads: the template, the functions' code and requirements,
    and the SAM CLI that builds them (and the Python that compiles their bytecode). Equal digests build
    equal packages."""
    import hashlib

    from samcli import __version__ as sam_version

    digest = hashlib.sha256(f"sam {sam_version}\nbytecode {sys.version_info[:2]}\n".encode())
    files = [root / "template.yaml", *sorted(p for p in (root / "functions").rglob("*") if _is_build_input(p))]
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _is_build_input(path: Path) -> bool:
    return path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo")


def build(log=print, root: Path = ROOT) -> Path:
    """`sam build` of the tree at `root` (this one; a previous release's, for an upgrade test) into its
    .aws-sam/build, unless what is there was built from the same inputs (a test run deploys many stacks
    from one build); returns the built template's path."""
    with build_lock(root):
        return _build_locked(root, root / ".aws-sam" / "build", log)


@contextlib.contextmanager
def build_lock(root: Path, then_shared: bool = False):
    """One build at a time per tree, and no build while a deploy packages what the last one made: a demo
    and a test run, or a test run's workers, deploying from the same checkout would otherwise rewrite the
    build directory under each other. With `then_shared` the lock is held exclusively for the body's
    build, then shared (yield a `share` to call once built): deploys of one build run side by side."""
    (root / ".aws-sam").mkdir(parents=True, exist_ok=True)
    with open(root / ".aws-sam" / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield (lambda: fcntl.flock(lock, fcntl.LOCK_SH)) if then_shared else None


def _build_locked(root: Path, build_dir: Path, log) -> Path:
    stamp = build_dir / BUILD_STAMP
    wanted = build_inputs_digest(root)
    if stamp.exists() and stamp.read_text() == wanted and (build_dir / "template.yaml").exists():
        log("[stack] sam build: up to date")
        return build_dir / "template.yaml"
    sam = str(Path(sys.executable).parent / "sam")
    started = time.time()
    stamp.unlink(missing_ok=True)  # a build that fails half way leaves no stamp behind
    result = subprocess.run(
        [sam, "build", "--template-file", str(root / "template.yaml"), "--build-dir", str(build_dir)],
        cwd=root,
        env=sam_env(None),
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise DeployError("sam build failed:\n" + (result.stderr or result.stdout)[-3000:])
    compiled = compile_bytecode(build_dir, template_runtime(root / "template.yaml"))
    stamp.write_text(wanted)
    log(f"[stack] sam build: {time.time() - started:.1f} s ({compiled:,} modules compiled ahead)")
    return build_dir / "template.yaml"


def template_runtime(template: Path) -> str | None:
    """The Lambda runtime the template's functions share (Globals' `Runtime: python3.12`)."""
    import re

    found = re.search(r"^\s+Runtime:\s*(python3\.\d+)\s*$", template.read_text(), re.MULTILINE)
    return found.group(1) if found else None


def compile_bytecode(build_dir: Path, runtime: str | None) -> int:
    """Write each built function's bytecode beside its sources; returns how many modules were compiled.

    A Lambda's package is read-only where it runs and unpacked afresh by every cold start on the emulator,
    so without bytecode in the package each cold start compiles what it imports: importing the webhook
    took 0.92 s from sources and 0.41 s with bytecode (measured in a copy of its 42 MB package). The
    bytecode is checked against a hash of its source, not a file time an unzip may not keep. Only when
    this interpreter is the runtime's version: other bytecode would be ignored there."""
    import compileall
    import py_compile

    if runtime != f"python{sys.version_info.major}.{sys.version_info.minor}":
        return 0
    compiled = 0
    for function in sorted(p for p in build_dir.iterdir() if p.is_dir()):
        before = sum(1 for _ in function.rglob("*.pyc"))
        if not compileall.compile_dir(
            function, quiet=2, workers=0, invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH
        ):
            raise DeployError(f"compiling {function.name}'s modules failed")
        compiled += sum(1 for _ in function.rglob("*.pyc")) - before
    return compiled


def packaged(root: Path, built: Path, endpoint: str, bucket: str | None, log) -> Path:
    """`sam package` of the build into the emulator's artifacts bucket, once per build and emulator; returns
    the packaged template, whose code is already in S3. `sam deploy` otherwise zips every function's 42 MB
    again to learn that its artifact is there: 9 to 10 s of a 15 s local deploy, and a test run deploys
    dozens of stacks from one build. A package whose artifacts its emulator no longer holds (a restart) is
    made again."""
    import hashlib

    stamp = built.parent / BUILD_STAMP
    digest = stamp.read_text() if stamp.exists() else ""
    key = hashlib.sha256(f"{digest}\n{built}\n{endpoint}\n{bucket or ''}".encode()).hexdigest()[:20]
    out = root / ".aws-sam" / "packaged" / f"{key}.yaml"
    if digest and out.exists() and _artifacts_present(out.read_text(), client("s3", endpoint)):
        log("[stack] sam package: up to date")
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(f".{os.getpid()}.part")
    started = time.time()
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "sam"),
            "package",
            "--template-file",
            str(built),
            "--output-template-file",
            str(partial),
            *(["--s3-bucket", bucket] if bucket else ["--resolve-s3"]),
        ],
        cwd=root,
        env=sam_env(endpoint),
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        partial.unlink(missing_ok=True)
        raise DeployError("sam package failed:\n" + (result.stderr or result.stdout)[-3000:])
    partial.replace(out)
    log(f"[stack] sam package: {time.time() - started:.1f} s")
    return out


def _artifacts_present(template: str, s3) -> bool:
    """Whether every s3:// artifact a packaged template names is in the bucket it names."""
    import re

    from botocore.exceptions import BotoCoreError, ClientError

    uris = set(re.findall(r"s3://([a-z0-9.\-]+)/([A-Za-z0-9._/\-]+)", template))
    try:
        for bucket, key in uris:
            s3.head_object(Bucket=bucket, Key=key)
    except (BotoCoreError, ClientError):  # absent, or the bucket gone: either way, package again
        return False
    return bool(uris)


def sam_env(endpoint: str | None) -> dict:
    """The environment `sam` runs in: the emulator's endpoint and its stand-in credentials, when local."""
    env = {
        **os.environ,
        "PATH": python312_bin_dir() + os.pathsep + os.environ.get("PATH", ""),
        "SAM_CLI_TELEMETRY": "0",
    }
    if endpoint:
        env.update({"AWS_ENDPOINT_URL": endpoint, **CREDENTIALS, "AWS_REGION": REGION})
        # sam deploy reads stack events every 5 s (not to be throttled by CloudFormation); the emulator
        # creates a stack in about 0.1 s and throttles nothing, so most of each local deploy was that wait.
        env.setdefault("SAM_CLI_POLL_DELAY", "0.5")
    return env


def deploy(
    endpoint: str | None,
    stack_name: str,
    parameters: dict[str, str],
    outputs_path: Path,
    bucket: str | None = None,
    log=print,
    root: Path = ROOT,
) -> dict:
    """`sam build` then `sam deploy` of the tree at `root` (samconfig.toml's `local` environment on an
    emulator, `default` on AWS); write and return the stack's outputs."""
    with build_lock(root, then_shared=True) as share:  # held until the deploy has packaged what the build made
        built = _build_locked(root, root / ".aws-sam" / "build", log)
        share()  # built: other deploys of the same build may package it too, a new build waits for them
        return _deploy_locked(endpoint, stack_name, parameters, outputs_path, bucket, log, root, built)


def _deploy_locked(endpoint, stack_name, parameters, outputs_path, bucket, log, root, built: Path) -> dict:
    if endpoint:
        declared = template_parameters(root / "template.yaml")
        parameters = {**{k: v for k, v in local_defaults().items() if k in declared}, **parameters}
    cfn = client("cloudformation", endpoint)
    if endpoint:  # the emulator's many stacks share one package of the build: `sam deploy` then zips nothing
        built = packaged(root, built, endpoint, bucket, log)
    if stack_status(cfn, stack_name) == "ROLLBACK_COMPLETE":  # a failed first create cannot be updated
        cfn.delete_stack(StackName=stack_name)
        wait(cfn, stack_name)
    command = [
        str(Path(sys.executable).parent / "sam"),
        "deploy",
        "--template-file",
        str(built),
        "--stack-name",
        stack_name,
        "--config-file",
        str(root / "samconfig.toml"),
        "--config-env",
        "local" if endpoint else "default",
        "--no-confirm-changeset",
        "--no-fail-on-empty-changeset",
        *(["--s3-bucket", bucket] if bucket else ["--resolve-s3"]),
    ]
    if parameters:
        command += ["--parameter-overrides", *(override(k, v) for k, v in sorted(parameters.items()))]
    started = time.time()
    result = subprocess.run(command, cwd=root, env=sam_env(endpoint), capture_output=True, text=True)
    if result.returncode != 0:
        reasons = failure_reasons(cfn, stack_name) if stack_status(cfn, stack_name) else ""
        raise DeployError("sam deploy failed:\n" + (result.stderr or result.stdout)[-3000:] + "\n" + reasons)
    status = stack_status(cfn, stack_name)
    log(f"[stack] sam deploy {stack_name}: {status} in {time.time() - started:.1f} s")
    stack = cfn.describe_stacks(StackName=stack_name)["Stacks"][0]
    if endpoint:
        apply_reserved_concurrency(cfn, client("lambda", endpoint), stack, log)
    outputs = {o["OutputKey"]: o.get("OutputValue", "") for o in stack.get("Outputs", [])}
    outputs.update({"StackName": stack_name, "Endpoint": endpoint or "", "Region": REGION if endpoint else ""})
    if endpoint and "WebhookApiId" in outputs:
        # An emulator has no DNS for <api>.execute-api...; it routes by path instead.
        # The deployed URL's path is the REST stage and the resource: /live/webhook.
        path = outputs["WebhookUrl"].split(".amazonaws.com", 1)[-1] if "WebhookUrl" in outputs else "/live/webhook"
        outputs["WebhookUrl"] = f"{endpoint}/_aws/execute-api/{outputs['WebhookApiId']}{path}"
    outputs_path.parent.mkdir(parents=True, exist_ok=True)
    outputs_path.write_text(json.dumps(outputs, indent=2) + "\n")
    log(f"[stack] outputs written to {outputs_path}")
    return outputs


def apply_reserved_concurrency(cfn, lambda_client, stack: dict, log=print) -> None:
    """Set (or clear, at 0) each RESERVED_CONCURRENCY function's reserved concurrency from the stack's
    parameter, as CloudFormation does on AWS."""
    values = {p["ParameterKey"]: p.get("ParameterValue", "") for p in stack.get("Parameters", [])}
    resources = cfn.describe_stack_resources(StackName=stack["StackName"])["StackResources"]
    functions = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in resources}
    for logical_id, parameter in RESERVED_CONCURRENCY.items():
        if logical_id not in functions or not values.get(parameter, "").strip():
            continue
        reserved = int(values[parameter])
        if reserved > 0:
            lambda_client.put_function_concurrency(
                FunctionName=functions[logical_id], ReservedConcurrentExecutions=reserved
            )
        else:
            lambda_client.delete_function_concurrency(FunctionName=functions[logical_id])
        log(f"[stack] {logical_id}: reserved concurrency {reserved or 'none'} ({parameter})")


def destroy(endpoint: str | None, stack_name: str, log=print) -> None:
    cfn = client("cloudformation", endpoint)
    if stack_status(cfn, stack_name) in (None, "DELETE_COMPLETE"):
        log(f"[stack] {stack_name}: nothing to delete")
        return
    cfn.delete_stack(StackName=stack_name)
    log(f"[stack] {stack_name}: {wait(cfn, stack_name) or 'DELETE_COMPLETE'}")


def stack_status(cfn, stack_name: str) -> str | None:
    try:
        return cfn.describe_stacks(StackName=stack_name)["Stacks"][0]["StackStatus"]
    except Exception as exc:
        if "does not exist" in str(exc):
            return None
        raise


def wait(cfn, stack_name: str, timeout_s: float = 1800) -> str | None:
    """Poll until the stack leaves *_IN_PROGRESS: briskly at first (the emulator takes
    under a second), then every 5 s (AWS takes minutes and throttles DescribeStacks)."""
    started = time.time()
    status = stack_status(cfn, stack_name)
    while status and status.endswith("_IN_PROGRESS") and time.time() - started < timeout_s:
        time.sleep(0.5 if time.time() - started < 30 else 5)
        status = stack_status(cfn, stack_name)
    return status


def failure_reasons(cfn, stack_name: str) -> str:
    events = cfn.describe_stack_events(StackName=stack_name)["StackEvents"]
    lines = [
        f"  {e['LogicalResourceId']}: {e['ResourceStatus']}: {e.get('ResourceStatusReason', '')}"
        for e in events
        if "FAILED" in e["ResourceStatus"]
    ]
    return "\n".join(lines[:20]) or "  (no failure events)"


def override(key: str, value: str) -> str:
    """One `--parameter-overrides` item: SAM splits a bare value at its spaces (`rate(1 minute)`, working hours),
    so such a value is quoted (its own quotes escaped)."""
    if not any(c.isspace() for c in value):
        return f"{key}={value}"
    return f'{key}="{value.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'


def parse_params(pairs: list[str]) -> dict[str, str]:
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--param wants Key=Value, got {pair!r}")
        params[key] = value
    return params


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="infra/local-stack",
        description="Deploy template.yaml to the local emulator (default), LocalStack, or AWS.",
        epilog="Examples:\n"
        "  infra/local-stack up --param ProviderBaseUrl=http://127.0.0.1:8790\n"
        "  infra/local-stack up --endpoint http://localhost:4566   # LocalStack\n"
        "  infra/local-stack up --endpoint aws --bucket my-artifacts --param ProviderBaseUrl=https://api.example.com\n"
        "  infra/local-stack down",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("action", choices=["up", "down"], help="up: build and deploy; down: delete the stack")
    parser.add_argument(
        "--endpoint", default=DEFAULT_ENDPOINT, help=f"AWS endpoint (default {DEFAULT_ENDPOINT}); 'aws' for real AWS"
    )
    parser.add_argument("--stack-name", default=DEFAULT_STACK, help=f"stack name (default {DEFAULT_STACK})")
    parser.add_argument("--param", action="append", default=[], metavar="Key=Value", help="a template parameter")
    parser.add_argument("--outputs", type=Path, default=DEFAULT_OUTPUTS, help="where to write the stack outputs JSON")
    parser.add_argument("--bucket", help="artifacts bucket (default: the one sam deploy --resolve-s3 manages)")
    parser.add_argument("--stop-emulator", action="store_true", help="with down: also stop the emulator `up` started")
    parser.add_argument(
        "--source",
        type=Path,
        default=ROOT,
        metavar="DIR",
        help="deploy the tree at DIR (its template.yaml and functions/) instead of this one: an earlier release",
    )
    args = parser.parse_args(argv)
    endpoint = None if args.endpoint == "aws" else args.endpoint.rstrip("/")
    pidfile = ROOT / ".local" / "emulator.pid"
    try:
        if args.action == "up":
            if endpoint == DEFAULT_ENDPOINT and not healthy(endpoint):
                emulator = Emulator().start()
                if emulator.process is None:  # never: start() runs it or raises
                    raise RuntimeError("the emulator did not start")
                pidfile.write_text(str(emulator.process.pid))
                print(
                    f"[stack] emulator started on {endpoint} (pid {emulator.process.pid});"
                    " `down --stop-emulator` ends it."
                )
            params = parse_params(args.param)
            deploy(endpoint, args.stack_name, params, args.outputs, args.bucket, root=args.source.resolve())
        else:
            if endpoint is None or healthy(endpoint) or endpoint != DEFAULT_ENDPOINT:
                destroy(endpoint, args.stack_name)
            if args.stop_emulator and pidfile.exists():
                import signal

                try:
                    os.killpg(int(pidfile.read_text()), signal.SIGTERM)
                    print("[stack] emulator stopped")
                except ProcessLookupError:
                    pass
                pidfile.unlink()
    except DeployError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
