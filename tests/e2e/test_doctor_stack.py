"""`migrator doctor` against deployed stacks: a healthy one passes every check; a broken one names
each failure with its fix (credentials the functions cannot read, an unusable webhook secret, a
paused uploader)."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import ROOT, unique
from tests.e2e.conftest import delete_stack, generic_account

pytestmark = pytest.mark.e2e


def test_a_healthy_stack_passes_every_check(stack, live_sim, migrator):
    code, out, err = migrator("doctor", "--json")
    doc = json.loads(out)
    checks = {c["name"]: c for c in doc["checks"]}
    assert code == 0 and doc["ok"] is True, out + err
    assert all(c["ok"] for c in checks.values())
    assert {"release", "provider credentials", "provider", "webhook", "uploader", "queue visibility", "alarms"} <= set(
        checks
    )
    assert checks["release"]["detail"].startswith("stack 0.")  # the deployed template says its release
    assert "dead-letter queue" in checks


@pytest.fixture
def broken_stack(endpoint, aws, e2e_sim, tmp_path):
    """A stack deployed with credentials nobody stored and a webhook secret Standard Webhooks cannot read."""
    from infra.toolchain import tool

    bad_secret = unique("webhook-secret")
    aws("secretsmanager").create_secret(Name=bad_secret, SecretString=json.dumps({"current": "whsec_not!base64"}))
    name, outputs_path = unique("e2e-broken"), tmp_path / "broken.json"
    acct = generic_account("standard", "unused")
    params = {
        "Provider": "generic",
        "ProviderBaseUrl": e2e_sim.url,
        "ProviderTokenSecretName": unique("never-stored"),
        "WebhookScheme": acct.webhook_scheme,
        "WebhookSecretName": bad_secret,
        "ReconcileScheduleEnabled": "false",
    }
    command = [tool("sam", "python"), "-m", "infra.stack", "up", "--endpoint", endpoint, "--stack-name", name]
    command += ["--outputs", str(outputs_path)] + [f"--param={k}={v}" for k, v in params.items()]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    yield outputs_path
    delete_stack(endpoint, name)


def test_a_broken_stack_names_each_failure_and_its_fix(broken_stack, endpoint, capsys):
    from migrator_cli.main import main

    def doctor(*extra):
        code = main(["doctor", *extra, "--outputs", str(broken_stack), "--endpoint", endpoint])
        return code, capsys.readouterr()

    assert main(["pause", "--outputs", str(broken_stack), "--endpoint", endpoint]) == 0
    capsys.readouterr()
    code, (out, _) = doctor()
    assert code == 1
    lines = out.splitlines()

    def failure(name):
        at = next(i for i, line in enumerate(lines) if line.startswith("FAIL") and name in line)
        return lines[at] + "\n" + lines[at + 1]

    assert (
        "ResourceNotFoundException" in failure("provider credentials")
        or "not found" in failure("provider credentials").lower()
    )
    assert "fix: store the generic credentials" in failure("provider credentials")
    assert "unusable: secret is not valid base64" in failure("webhook") and "whsec_<base64>" in failure("webhook")
    assert "disabled" in failure("uploader") and "fix: migrator resume" in failure("uploader")
    assert "to fix" in lines[-1]
