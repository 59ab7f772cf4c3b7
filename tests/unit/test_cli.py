"""The CLI's front end without any AWS: help, argument checks, one-line errors."""

import pytest
from migrator_cli.main import build_parser, main

COMMANDS = ("load", "probe", "status", "report", "retry", "redrive", "pause", "resume", "reconcile", "audit", "doctor")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_subcommand_explains_itself(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0
    assert f"usage: migrator {command}" in out and "--stack" in out and "--outputs" in out


def test_the_top_level_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(command in out for command in COMMANDS)
    assert "migrator load inventory.csv --stage" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["load", "x.csv", "--limit", "0"], "must be at least 1"),
        (["report", "--state", "done"], "unknown state 'done'"),
        (["reconcile", "--heal-after", "soon"], "is not a number of seconds"),
        (["status", "--window", "-3"], "must be at least 1"),
    ],
)
def test_bad_arguments_are_refused_with_a_reason(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_no_stack_named_is_one_clear_line(monkeypatch, capsys):
    for name in ("MIGRATOR_STACK", "MIGRATOR_OUTPUTS", "MIGRATOR_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    assert main(["status"]) == 2
    assert (
        capsys.readouterr().err
        == "migrator status: which stack? pass --stack NAME (or --outputs FILE from infra/local-stack up)\n"
    )


def test_a_malformed_outputs_file_is_one_clear_line(tmp_path, capsys):
    bad = tmp_path / "outputs.json"
    bad.write_text("[1, 2]")
    assert main(["report", "--outputs", str(bad)]) == 2
    assert "is not a JSON object of stack outputs" in capsys.readouterr().err


def test_missing_credentials_get_one_clear_line(monkeypatch, tmp_path, capsys):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance-metadata lookups

    code = main(["status", "--stack", "prod", "--region", "us-east-1"])

    err = capsys.readouterr().err
    assert code == 2 and err.startswith("migrator status: no AWS credentials found")


def test_the_sample_inventory_is_clean():
    from pathlib import Path

    from migrator_cli.inventory import Row, read_inventory

    records = list(read_inventory(str(Path(__file__).parents[2] / "events" / "sample-inventory.csv")))
    assert all(isinstance(r, Row) for r in records) and len(records) == 4
    assert records[0].message.metadata == {"season": 1} and records[0].message.duration_s == 61.5
    assert records[3].message.source_url.startswith("s3://")


@pytest.mark.parametrize(
    "skipped, shown",
    [
        ({}, "skipped 0; examined"),
        ({"not due": 3}, "skipped 3 (not due 3); examined"),
        (
            {"not due": 2, "provider held the fleet": 9, "poll budget spent": 2},
            "skipped 13 (provider held the fleet 9, not due 2, poll budget spent 2); examined",
        ),
    ],
)
def test_reconcile_names_why_it_skipped_most_first(skipped, shown):
    from migrator_cli.commands.reconcile import describe

    summary = {"examined": 13, "skipped": skipped, "skipped_total": sum(skipped.values()), "lanes": 64}
    assert shown in describe(summary)
