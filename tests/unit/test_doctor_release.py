"""doctor's release line: the deployed stack's release beside the CLI's, and what to do when they differ."""

from __future__ import annotations

import pytest
from migrator_cli.doctor import release_check


@pytest.mark.parametrize(
    "stack, cli, ok, detail, fix_starts",
    [
        ("0.4.0", "0.4.0", True, "stack 0.4.0, CLI 0.4.0", ""),
        (None, "0.4.0", False, "stack 0.3.0 or before (no Release output), CLI 0.4.0", "deploy this release's"),
        ("0.4.0", "0.5.0", False, "stack 0.4.0, CLI 0.5.0", "deploy this release's"),
        ("0.10.0", "0.9.0", False, "stack 0.10.0, CLI 0.9.0", "use the CLI of release 0.10.0"),  # numbers, not text
    ],
)
def test_the_stack_and_the_cli_must_be_one_release(stack, cli, ok, detail, fix_starts):
    check = release_check(stack, cli)
    assert (check.ok, check.detail) == (ok, detail)
    assert check.fix.startswith(fix_starts) if fix_starts else check.fix == ""
