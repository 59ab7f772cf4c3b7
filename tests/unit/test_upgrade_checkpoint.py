"""`migrator upgrade`'s checkpoint names the ledger table and the schema version it was kept for: what a run
does with one (pure, as a table), and with the file as an earlier release or another run left it."""

from __future__ import annotations

import json

import pytest
from migrator.ledger import SCHEMA_VERSION
from migrator_cli.errors import CliError
from migrator_cli.upgrade import SEGMENTS, Checkpoint, CheckpointFate, RunFor, checkpoint_fate

THIS = RunFor("video-migration-LedgerTable-1AB", "eu-west-1", SCHEMA_VERSION)
DONE = {str(segment): "done" for segment in range(SEGMENTS)}


@pytest.mark.parametrize(
    ("saved", "expected"),
    [
        (None, CheckpointFate.FRESH),  # no file
        ({"run": THIS, "finished": False}, CheckpointFate.RESUME),  # this run, interrupted
        ({"run": THIS, "finished": True}, CheckpointFate.RESUME),  # this run, finished: nothing is below it
        # A finished run of another ledger, region or release: its positions mean nothing here.
        ({"run": RunFor("other-LedgerTable-9Z", "eu-west-1", SCHEMA_VERSION), "finished": True}, "start over"),
        ({"run": RunFor(THIS.table, "us-east-1", SCHEMA_VERSION), "finished": True}, "start over"),
        ({"run": RunFor(THIS.table, THIS.region, SCHEMA_VERSION - 1), "finished": True}, "start over"),
        ({"run": None, "finished": True}, "start over"),  # an earlier release's, finished: it named no table
        # Unfinished, of another run: refused, so that run can still go on from it.
        ({"run": RunFor("other-LedgerTable-9Z", "eu-west-1", SCHEMA_VERSION), "finished": False}, "refuse"),
        ({"run": RunFor(THIS.table, THIS.region, SCHEMA_VERSION + 1), "finished": False}, "refuse"),
        ({"run": None, "finished": False}, "refuse"),
    ],
)
def test_a_checkpoint_is_resumed_only_by_the_run_it_was_kept_for(saved, expected):
    assert checkpoint_fate(saved, THIS) == CheckpointFate(expected)


def test_a_saved_checkpoint_names_its_table_and_version_and_is_resumed_by_them(tmp_path):
    path = tmp_path / "migrator-upgrade.json"
    first = Checkpoint(path)
    assert first.take(THIS) is None
    first.positions["0"] = {"asset_id": {"S": "lib/7"}}
    first.save()
    doc = json.loads(path.read_text())
    assert (doc["table"], doc["region"], doc["schema"]) == (THIS.table, THIS.region, SCHEMA_VERSION)
    again = Checkpoint(path)
    assert again.take(THIS) is None and again.positions == {"0": {"asset_id": {"S": "lib/7"}}}


def test_another_ledgers_finished_checkpoint_is_started_over_with_the_reason(tmp_path):
    path = tmp_path / "migrator-upgrade.json"
    path.write_text(json.dumps({"positions": DONE, "table": "old-LedgerTable-9Z", "region": "eu-west-1", "schema": 2}))
    checkpoint = Checkpoint(path)
    reason = checkpoint.take(THIS)
    assert "finished upgrade of table old-LedgerTable-9Z (eu-west-1) to schema 2" in reason
    assert checkpoint.positions == {} and checkpoint.run == THIS


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (json.dumps({"positions": {"0": "done"}, "table": "old-LedgerTable-9Z", "schema": 2}), "unfinished upgrade"),
        (json.dumps({"0": "done", "1": {"asset_id": {"S": "x"}}}), "a table it does not name"),  # earlier release
        ("not json", "cannot be read"),
        (json.dumps(["a", "list"]), "cannot be read"),
    ],
)
def test_a_checkpoint_another_run_may_still_need_is_refused_and_left_as_it_is(tmp_path, content, said):
    path = tmp_path / "migrator-upgrade.json"
    path.write_text(content)
    with pytest.raises(CliError, match=said) as raised:
        Checkpoint(path).take(THIS)
    assert "--checkpoint" in str(raised.value) and path.read_text() == content
