"""bench.peak: a benchmark child's own peak memory, not its parent's."""

from __future__ import annotations

import subprocess
import sys

from bench.peak import own_peak_kib
from infra.toolchain import ROOT


def test_the_peak_is_read_from_the_status_file(tmp_path):
    status = tmp_path / "status"
    status.write_text("Name:\tpython\nVmPeak:\t  999999 kB\nVmHWM:\t   45232 kB\nVmRSS:\t   40000 kB\n")
    assert own_peak_kib(status) == 45232


def test_without_the_status_file_the_peak_is_ru_maxrss(tmp_path):
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert before <= own_peak_kib(tmp_path / "absent") <= resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def test_a_child_does_not_report_the_memory_its_parent_held():
    """The bug it replaces: a child's ru_maxrss counted its parent's peak (bench/inventory reported 70 MiB for a
    sweep that never held 44, the parent having filled a storage emulator)."""
    held = b"x" * (200 << 20)  # touched pages: the parent's resident set is at least 200 MiB
    child = subprocess.run(
        [sys.executable, "-c", "from bench.peak import own_peak_kib; print(own_peak_kib())"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert len(held) == 200 << 20
    assert int(child.stdout) < 100 << 10, f"{int(child.stdout) >> 10} MiB: the parent's peak, not the child's"
