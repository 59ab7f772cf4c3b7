"""infra/test prepares the emulator, SAM and Azurite only for a selection that may need them."""

from __future__ import annotations

import pytest

from infra.lanes import needs_side_tools


@pytest.mark.parametrize(
    "argv, needs",
    [
        ([], True),  # the whole suite
        (["-q", "--durations=25"], True),  # .ci/run
        (["tests/unit"], False),
        (["tests/unit/test_fate.py", "./tests/sim/test_mux.py::test_x"], False),
        (["tests/unit", "tests/emulator/test_ledger.py"], True),
        (["-m", "unit"], False),
        (["-munit"], False),
        (["-m", "unit or sim"], False),
        (["-m", "(unit or probe)"], False),
        (["tests/static"], False),  # ruff and mypy: no server of any kind
        (["-m", "static"], False),
        (["-m", "not e2e"], True),  # the quick lane of old still reaches the emulator
        (["-m", "emulator"], True),
        (["-m", "unit and not slow"], True),  # cannot tell: prepare
        (["-k", "pacing"], True),
        (["tests/template"], True),  # the SAM CLI's translator
    ],
)
def test_only_a_tool_free_selection_skips_the_side_tools(argv, needs):
    assert needs_side_tools(argv) is needs
