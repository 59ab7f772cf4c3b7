"""The tree as `make lint` and `make types` hold it: ruff's lint and format check, and mypy ([tool.mypy] in
pyproject.toml). Each runs as a subprocess from the repository's root, as the Makefile runs it, so what fails here
fails there too; its own words are shown on failure."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

TIMEOUT_S = 600  # mypy's first run on a fresh clone, no cache, on a busy machine: well under a minute here


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )


@pytest.mark.parametrize("command", [("ruff", "check", "."), ("ruff", "format", "--check", ".")], ids=" ".join)
def test_ruff_finds_nothing(command):
    done = run(*command)
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}{done.stderr}"


def test_mypy_finds_nothing():
    done = run("mypy")
    assert done.returncode == 0, f"mypy exited {done.returncode}:\n{done.stdout}{done.stderr}"
