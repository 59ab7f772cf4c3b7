"""The demo's archive of originals (`infra/demo --archive`, issue 43): the wait until every ready video's original
is archived (or failed, with its reason), and what the summary says of it, quoted from `migrator verify
--archive`'s own line ("archived N of M, <bytes>, checksums verified").

The tally, the line and the verdict are pure (tested as tables in tests/unit/test_demo_logic.py); `settle_archive`
reads the ledger.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

from .localrun import LocalRun

# The owner's bucket in the emulator, made before the stack (LocalRun.archive_bucket).
DEMO_ARCHIVE_BUCKET = "demo-archive-masters"
# How long the demo waits with no original archived before it stops waiting, and the most it waits in all.
ARCHIVE_SETTLE_S = 120.0
ARCHIVE_SETTLE_CAP_S = 1800.0
SETTLED = ("archived", "failed")


def archive_tally(ready: Sequence[dict]) -> Counter:
    """The ready videos by their original's archive state (`archive_state` on the asset's item); `owed` where the
    archive worker has not written one yet."""
    return Counter(str(item.get("archive_state") or "owed") for item in ready)


def unsettled(tally: Counter) -> int:
    return sum(n for state, n in tally.items() if state not in SETTLED)


def settle_archive(
    run: LocalRun, sleep=time.sleep, clock=time.time, quiet_s: float = ARCHIVE_SETTLE_S, cap_s=ARCHIVE_SETTLE_CAP_S
) -> tuple[Counter, float]:
    """Wait until every ready video's original is archived or failed; (the tally, the seconds waited). It gives
    up once none has settled for `quiet_s`, or after `cap_s` in all."""
    started = last_progress = clock()
    tally = archive_tally(run.items("ready"))
    shown = None
    while unsettled(tally) and clock() - last_progress < quiet_s and clock() - started < cap_s:
        left = unsettled(tally)
        if left != shown:
            print(f"[demo] waiting for {left} originals to be archived (until none is for {quiet_s:.0f} s)")
            if shown is not None and left < shown:
                last_progress = clock()
            shown = left
        sleep(2)
        tally = archive_tally(run.items("ready"))
    return tally, clock() - started


def archive_line(verify_lines: Sequence[str]) -> str | None:
    """`migrator verify --archive`'s summary line ("archived N of M, ..."), the last it printed; None without one."""
    said = [line.strip() for line in verify_lines if line.strip().startswith("archived ")]
    return said[-1] if said else None


def archive_problem(tally: Counter, verified: bool, line: str | None, waited_s: float) -> str | None:
    """Why the archive is not OK, or None: an original never archived, one that failed, or a check that failed."""
    if unsettled(tally):
        return f"{unsettled(tally)} originals not archived after a wait of {waited_s:.0f} s"
    if tally.get("failed"):
        return f"{tally['failed']} originals failed to archive (migrator status names why)"
    if not verified or line is None:
        return f"the archive's check failed: {line or 'verify --archive said nothing (above)'}"
    return None
