"""A benchmark child's own peak resident memory, for the memory figures of bench/inventory and bench/load.

Not ru_maxrss: at exec, Linux folds the old address space's high-water mark into the new process's
ru_maxrss, and Python's subprocess starts children with vfork, whose old address space is the parent's.
A child measured that way reports at least the parent's peak: a bench/inventory child reported 70 MiB
where it never held more than 44 (the parent had filled a storage emulator through Google's SDK).
VmHWM in /proc/self/status is the high-water mark of the process's own address space, begun at exec.
"""

from __future__ import annotations

import resource
from pathlib import Path

STATUS = Path("/proc/self/status")


def own_peak_kib(status: Path = STATUS) -> int:
    """This process's peak RSS in KiB since its exec (VmHWM); ru_maxrss where /proc is not there."""
    try:
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])  # "VmHWM:\t   45232 kB"
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
