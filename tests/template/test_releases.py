"""No release changes a resource's type under a logical id an earlier release used: CloudFormation refuses such
an update (0.1.0's HTTP API `WebhookApi`, made a REST API under the same name in 0.2.0, left every 0.1.0 stack
unable to upgrade: UPDATE_ROLLBACK_COMPLETE, "Invalid API identifier"). The releases are CHANGELOG.md's."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.conftest import ROOT

RELEASE = re.compile(r"^## (\d+\.\d+\.\d+) — \d{4}-\d{2}-\d{2} \(([0-9a-f]{7,40})\)$", re.MULTILINE)


def releases() -> list[tuple[str, str]]:
    """(version, commit) of every release CHANGELOG.md names, newest first."""
    return RELEASE.findall((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))


def test_the_changelog_names_each_release_with_its_commit():
    found = releases()
    assert [version for version, _ in found][-3:] == ["0.3.0", "0.2.0", "0.1.0"]
    for version, commit in found:
        shown = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-t", commit], capture_output=True, text=True)
        assert shown.stdout.strip() == "commit", f"{version}: {commit} is not a commit of this clone's history"


@pytest.fixture(scope="module")
def types_by_release(tmp_path_factory) -> dict[str, dict[str, str]]:
    """Each release's resource types after the SAM transform, and this tree's (as "this")."""
    from infra.toolchain import tool

    folder = tmp_path_factory.mktemp("templates")
    paths = {"this": ROOT / "template.yaml"}
    for version, commit in releases():
        text = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{commit}:template.yaml"], capture_output=True, check=True
        ).stdout
        paths[version] = folder / f"{version}.yaml"
        paths[version].write_bytes(text)
    done = subprocess.run(
        [tool("sam", "python"), "-m", "infra.template_types", *map(str, paths.values())],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    by_path = json.loads(done.stdout)
    return {name: by_path[str(path)] for name, path in paths.items()}


def test_no_logical_id_changes_its_type_from_any_release(types_by_release):
    this = types_by_release["this"]
    changed = {
        f"{version}: {name} {was} -> {this[name]}"
        for version, types in types_by_release.items()
        if version != "this"
        for name, was in types.items()
        if name in this and this[name] != was
    }
    assert not changed, "a type change under one logical id cannot be deployed over that release: " + "; ".join(
        sorted(changed)
    )


def test_the_check_sees_the_change_that_broke_0_1_0(types_by_release):
    """The check is not vacuous: 0.1.0 and 0.2.0 used `WebhookApi` for two types."""
    assert types_by_release["0.1.0"]["WebhookApi"] == "AWS::ApiGatewayV2::Api"
    assert types_by_release["0.2.0"]["WebhookApi"] == "AWS::ApiGateway::RestApi"


def test_the_template_says_the_release_the_package_is():
    """doctor compares the stack's `Release` output with the CLI's version: one number, in both places."""
    import tomllib

    import yaml

    from tests.emulator.conftest import _CfnLoader

    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert template["Outputs"]["Release"]["Value"] == project["version"]
    assert project["version"] not in {version for version, _ in releases()}  # a released number is not reused
