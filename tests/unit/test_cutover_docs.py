"""The operator's guide's JSON table holds plan's, export's, verify's and load's outputs field for field
(the e2e suite checks the deployed commands against the same table; these need no stack)."""

from __future__ import annotations

from migrator_cli.cutover import COLUMNS
from migrator_cli.export import ExportSummary
from migrator_cli.export_collections import COLLECTION_COLUMNS
from migrator_cli.load import LoadSummary
from migrator_cli.plan import Inventory
from migrator_cli.plan_report import Plan
from migrator_cli.rewrite.report import Report
from migrator_cli.verify import Finding, VerifySummary

from tests.e2e.test_cli_stack import documented_fields


def test_the_guide_documents_every_field_of_the_new_outputs():
    documented = documented_fields()
    assert {"type", *LoadSummary("f", "send").as_dict()} == documented["load summary"]  # main adds the type
    assert set(Plan("f", Inventory(), [], "us-east-1").as_dict()) == documented["plan"]
    assert set(COLUMNS) == documented["export"]
    assert set(COLLECTION_COLUMNS) == documented["export --collections"]
    assert set(ExportSummary("csv").as_dict()) | {"output"} == documented["export summary"]
    assert set(VerifySummary().as_dict()) == documented["verify summary"]
    assert {"applied", "map_rows", *Report().as_dict()} == documented["rewrite"]
    numbers = {"target_s": 1.0, "source_s": 2.0, "manifest_s": 1.0, "target": "1x1", "source": "2x2"}
    mismatch = set(Finding("a", "duration", "d", numbers).as_dict()) | {"reason"}
    mismatch |= set(Finding("a", "thumbnail", "d", {"key": "thumbnail"}).as_dict())  # an extra's (verify_extras.py)
    assert mismatch == documented["verify mismatch"]


def test_the_guide_documents_every_field_of_the_archive_s_outputs():
    from migrator.archive.store import Archived
    from migrator_cli.ops import ArchiveRetrySummary
    from migrator_cli.verify_archive import ArchiveReport, check, not_archived

    documented = documented_fields()
    assert set(ArchiveReport().as_dict()) == documented["verify --archive summary"]
    item = {"asset_id": "a", "archive_state": "archived", "archive_key": "m/a/original.mp4"}
    item |= {"archive_bytes": 2, "archive_sha256": "x-1"}
    differs = check(item, Archived(1, "y-1", "STANDARD"))
    fields = {name for finding in differs.findings for name in finding.as_dict()}
    assert fields | {"ledger_sha256"} <= documented["verify --archive mismatch"]
    assert set(not_archived({"asset_id": "a", "state": "ready"})) == documented["verify --archive not archived"]
    retried = {"type", "retried", "dry_run", *ArchiveRetrySummary().__dict__}
    assert retried == documented["retry --archive"]


def test_the_guide_has_a_section_for_each_new_command():
    from tests.conftest import ROOT

    text = (ROOT / "docs" / "operator-guide.md").read_text()
    for phrase in ("## Plan it first", "**A pilot first**", "**`export`**", "**`verify`**", "nginx -t"):
        assert phrase in text
