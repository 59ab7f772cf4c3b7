"""The AWS CLI's habits, kept: --profile, --region and both region variables, --endpoint-url and
AWS_ENDPOINT_URL, --version; a dry run with no AWS at all; an unreachable endpoint fails in seconds."""

import json
import socket
import time
import tomllib
from pathlib import Path
from types import SimpleNamespace

import botocore.client
import pytest
from migrator_cli.errors import CliError
from migrator_cli.main import build_parser, main
from migrator_cli.target import resolve

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "events" / "sample-inventory.csv"


@pytest.fixture
def no_aws(monkeypatch, tmp_path):
    """A machine with no AWS set-up at all: no variables, no config files, no instance metadata."""
    import os

    for name in list(os.environ):
        if name.startswith(("AWS_", "MIGRATOR_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return tmp_path


@pytest.fixture
def profiles(no_aws, monkeypatch):
    """An AWS config with a profile `ops` (its own region and keys) and a default one."""
    (no_aws / "config").write_text("[default]\nregion = us-west-2\n\n[profile ops]\nregion = eu-west-3\n")
    (no_aws / "credentials").write_text(
        "[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = d\n\n"
        "[ops]\naws_access_key_id = AKIAOPS\naws_secret_access_key = o\n"
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(no_aws / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(no_aws / "credentials"))


@pytest.fixture
def outputs(tmp_path):
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps({"QueueUrl": "http://127.0.0.1:9/000000000000/q", "LedgerTableName": "ledger"}))
    return str(path)


@pytest.fixture
def no_api_calls(monkeypatch):
    """Any AWS API call fails the test."""

    def refuse(self, operation, params):
        raise AssertionError(f"an AWS call was made: {operation}")

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", refuse)


def test_version_is_the_packages(capsys, monkeypatch):
    monkeypatch.delenv("MIGRATOR_STACK", raising=False)
    monkeypatch.delenv("MIGRATOR_OUTPUTS", raising=False)
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"migrator {declared}\n"


@pytest.mark.parametrize(
    "outputs, line",
    [
        ({"Release": "0.4.0", "QueueUrl": "q"}, "stack    outputs.json: release 0.4.0"),
        ({"QueueUrl": "q"}, "stack    outputs.json: release 0.3.0 or before (no Release output)"),
    ],
)
def test_version_shows_the_deployed_stacks_release_beside_the_clis(capsys, tmp_path, outputs, line):
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(outputs))
    assert main(["--version", "--outputs", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == line


def test_version_says_when_the_stack_cannot_be_read(capsys, tmp_path):
    assert main(["--outputs", str(tmp_path / "missing.json"), "--version"]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("migrator ") and out[1].startswith("stack    cannot be read: ")


@pytest.mark.parametrize(
    ("env", "flag", "profile", "expected"),
    [
        ({"AWS_REGION": "eu-north-1"}, None, None, "eu-north-1"),
        ({"AWS_DEFAULT_REGION": "ap-south-1"}, None, None, "ap-south-1"),
        ({"AWS_REGION": "eu-north-1", "AWS_DEFAULT_REGION": "ap-south-1"}, None, None, "eu-north-1"),
        ({"AWS_REGION": "eu-north-1"}, "ca-central-1", None, "ca-central-1"),
        ({}, None, "ops", "eu-west-3"),
        ({}, None, None, "us-west-2"),  # the default profile's
        ({"AWS_PROFILE": "ops"}, None, None, "eu-west-3"),
        ({"AWS_DEFAULT_REGION": "ap-south-1"}, None, "ops", "ap-south-1"),  # a variable beats a profile's file
    ],
)
def test_the_region_is_read_as_the_aws_cli_reads_it(profiles, monkeypatch, outputs, env, flag, profile, expected):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    target = resolve(None, outputs, None, flag, profile)
    assert target.client("sqs").meta.region_name == expected


def test_no_region_anywhere_is_one_clear_line(no_aws, outputs, capsys):
    target = resolve(None, outputs, None, None, None)
    with pytest.raises(CliError, match="no AWS region: pass --region, or set AWS_REGION"):
        target.client("sqs")


def test_a_profile_brings_its_own_credentials(profiles, outputs):
    ops = resolve(None, outputs, None, None, "ops").client("sqs")
    default = resolve(None, outputs, None, None, None).client("sqs")
    assert ops._request_signer._credentials.access_key == "AKIAOPS"
    assert default._request_signer._credentials.access_key == "AKIADEFAULT"


def test_an_unknown_profile_is_one_clear_line(profiles, outputs, capsys):
    assert main(["status", "--profile", "nosuch", "--outputs", outputs]) == 2
    assert capsys.readouterr().err == "migrator status: no AWS profile named 'nosuch' (see ~/.aws/config)\n"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "outputs file not found: "),
        (b"\xff\xfe{", "cannot read outputs file .*: 'utf-8' codec can't decode byte 0xff"),  # not UTF-8 text
        (b'{"QueueUrl": ', "outputs file .* is not JSON"),
        (b'["QueueUrl"]', "outputs file .* is not a JSON object of stack outputs"),
        (b'{"QueueUrl": 1}', "outputs file .* is not a JSON object of stack outputs"),
    ],
)
def test_an_unreadable_outputs_file_is_one_clear_line(no_aws, tmp_path, content, expected):
    path = tmp_path / "outputs.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(CliError, match=expected):
        resolve(None, str(path), None, None, None)


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        (["--endpoint-url", "http://127.0.0.1:4566"], {}, "http://127.0.0.1:4566"),
        (["--endpoint", "http://127.0.0.1:4567"], {}, "http://127.0.0.1:4567"),  # the old spelling
        ([], {"AWS_ENDPOINT_URL": "http://127.0.0.1:4568"}, "http://127.0.0.1:4568"),
        ([], {"MIGRATOR_ENDPOINT": "http://127.0.0.1:4569"}, "http://127.0.0.1:4569"),
        (["--endpoint-url", "http://127.0.0.1:4566"], {"AWS_ENDPOINT_URL": "http://x:1"}, "http://127.0.0.1:4566"),
        ([], {}, "https://sqs.eu-west-1.amazonaws.com"),
    ],
)
def test_the_endpoint_is_the_flag_else_the_variables(no_aws, monkeypatch, outputs, argv, env, expected):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    args = build_parser().parse_args(["status", "--outputs", outputs, *argv])
    target = resolve(args.stack, args.outputs, args.endpoint, args.region, args.profile)
    assert target.client("sqs").meta.endpoint_url == expected


@pytest.mark.parametrize("stage", [[], ["--stage"]])  # a staging's dry run stages nothing: it needs no ledger
def test_a_dry_run_checks_a_file_with_no_aws_at_all(no_aws, no_api_calls, capsys, stage):
    assert main(["load", str(SAMPLE), "--dry-run", *stage]) == 0
    err = capsys.readouterr().err
    rows = len(SAMPLE.read_text().splitlines()) - 1
    assert f"rows read       {rows:,}" in err and f"dry run         {rows:,} rows would be sent; nothing sent" in err


def test_a_dry_run_speaks_json_lines_one_problem_a_line_then_the_summary(no_aws, no_api_calls, tmp_path, capsys):
    inventory = tmp_path / "inventory.csv"
    inventory.write_text(
        "id,source_url\n"
        "a1,https://media.example.com/a1.mp4\n"
        "a2,ftp://media.example.com/a2.mp4\n"
        "a1,https://media.example.com/a1.mp4\n"
        "a3,https://media.example.com/a3.mp4\n"
    )
    code = main(["load", str(inventory), "--dry-run", "--json"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    problems, summary = lines[:-1], lines[-1]
    assert code == 1  # a bad row
    assert [(p["type"], p["kind"], p["line"]) for p in problems] == [("problem", "bad", 3), ("problem", "repeat", 4)]
    assert problems[1]["id"] == "a1" and problems[1]["first_line"] == 2
    assert summary["type"] == "summary" and summary["good"] == 2 and summary["bad"] == 1 and summary["sent"] == 0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("command", ["load", "status"])
def test_an_unreachable_endpoint_fails_in_seconds_with_one_line(no_aws, tmp_path, capsys, command):
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    inventory = tmp_path / "big.csv"
    inventory.write_text(
        "id,source_url\n" + "".join(f"a{n},https://media.example.com/{n}.mp4\n" for n in range(20_000))
    )
    argv = {"load": ["load", str(inventory)], "status": ["status", "--stack", "prod"]}[command]

    started = time.monotonic()
    code = main(
        [*argv, "--endpoint-url", endpoint, *(["--outputs", _outputs_at(tmp_path, endpoint)] * (command == "load"))]
    )
    elapsed = time.monotonic() - started

    err = capsys.readouterr().err
    assert code == 2
    assert elapsed < 15, f"took {elapsed:.1f} s"
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"migrator {command}: cannot reach") and endpoint in last


def _outputs_at(tmp_path: Path, endpoint: str) -> str:
    path = tmp_path / "outputs-unreachable.json"
    path.write_text(json.dumps({"QueueUrl": f"{endpoint}/000000000000/q", "LedgerTableName": "ledger"}))
    return str(path)


class _Silent:
    """A server that accepts connections and never answers: an emulator that stalls."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.endpoint = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def close(self):
        self.sock.close()


def test_a_stalled_endpoint_says_what_each_retry_waits_for(capsys):
    from botocore.config import Config
    from botocore.exceptions import ReadTimeoutError
    from migrator_cli.target import make_client

    silent = _Silent()
    try:
        client = make_client("dynamodb", silent.endpoint, "us-east-1", config=Config(read_timeout=0.3))
        with pytest.raises(ReadTimeoutError):
            client.list_tables()
    finally:
        silent.close()
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "migrator: waiting for AWS: ListTables: no answer in time; trying again (2 of 3)",
        "migrator: waiting for AWS: ListTables: no answer in time; trying again (3 of 3)",
    ]


@pytest.mark.parametrize(
    ("attempts", "kwargs", "expected"),
    [
        (1, {"response": (SimpleNamespace(status_code=503), {})}, "ListTables: HTTP 503; trying again (2 of 3)"),
        (
            2,
            {"response": (SimpleNamespace(status_code=400), {"Error": {"Code": "ThrottlingException"}})},
            "ListTables: HTTP 400 ThrottlingException; trying again (3 of 3)",
        ),
        (3, {"response": (SimpleNamespace(status_code=503), {})}, None),  # the last try: nothing follows
        (1, {"response": (SimpleNamespace(status_code=400), {"Error": {"Code": "ValidationException"}})}, None),
        (1, {"response": (SimpleNamespace(status_code=200), {})}, None),
    ],
)
def test_retry_notice_names_what_is_retried_and_nothing_else(attempts, kwargs, expected):
    from migrator_cli.target import retry_notice

    operation = SimpleNamespace(name="ListTables")
    assert retry_notice(attempts=attempts, max_attempts=3, operation=operation, **kwargs) == expected
