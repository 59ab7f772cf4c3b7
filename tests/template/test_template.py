"""template.yaml passes the linters, as written and as translated, and keeps its invariants."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from tests.conftest import ROOT
from tests.emulator.conftest import _CfnLoader


@pytest.fixture(scope="module")
def sam_python():
    from infra.toolchain import tool

    return tool("sam", "python")


def test_cfn_lint_on_source_and_translated_template(sam_python):
    result = subprocess.run([sam_python, "-m", "infra.lint_template"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "clean, source and translated" in result.stdout


def test_sam_validate_lint(sam_python):
    sam = os.path.join(os.path.dirname(sam_python), "sam")
    env = {**os.environ, "SAM_CLI_TELEMETRY": "0"}
    result = subprocess.run(
        [sam, "validate", "--lint", "--region", "us-east-1"], cwd=ROOT, capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_visibility_is_six_times_its_timeout():
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    allowed = template["Parameters"]["UploaderTimeout"]["AllowedValues"]
    mapping = template["Mappings"]["TimeoutToVisibility"]
    assert {str(v) for v in allowed} == set(mapping)
    for timeout, row in mapping.items():
        assert row["Visibility"] >= 6 * int(timeout)


def test_uploader_record_budget_fits_the_shortest_timeout():
    from migrator.settings import Settings

    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    shortest = min(int(v) for v in template["Parameters"]["UploaderTimeout"]["AllowedValues"])
    budget = Settings("t", "q", "https://x").record_budget_s
    assert budget * 1.5 < shortest  # room for at least one record per invocation, with margin


def test_concurrency_mapping_covers_every_allowed_value():
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    allowed = template["Parameters"]["MaximumConcurrency"]["AllowedValues"]
    mapping = template["Mappings"]["ConcurrencyValue"]
    assert set(allowed) == set(mapping)
    assert all(mapping[k]["Value"] == int(k) for k in allowed)


def test_the_state_index_projects_what_reconcile_reads():
    from migrator.heal import INDEX_FIELDS

    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    table = template["Resources"]["LedgerTable"]["Properties"]
    (index,) = [i for i in table["GlobalSecondaryIndexes"] if i["IndexName"] == "by_state"]
    keys = {k["AttributeName"] for k in table["KeySchema"]} | {k["AttributeName"] for k in index["KeySchema"]}
    assert set(INDEX_FIELDS) <= keys | set(index["Projection"]["NonKeyAttributes"])


def test_heals_wait_longer_than_a_crashed_invocations_own_message():
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    params = template["Parameters"]
    visibility = template["Mappings"]["TimeoutToVisibility"][str(params["UploaderTimeout"]["Default"])]["Visibility"]
    assert params["HealAfterSeconds"]["Default"] > visibility


def test_the_tally_counts_every_change_since_the_table_was_made():
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    resources = template["Resources"]
    assert resources["LedgerTable"]["Properties"]["StreamSpecification"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    stream = resources["TallyFunction"]["Properties"]["Events"]["LedgerStream"]["Properties"]
    assert stream["StartingPosition"] == "TRIM_HORIZON" and stream["MaximumRetryAttempts"] == -1
