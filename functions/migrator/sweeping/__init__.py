"""The sweep of a source library, shared by the operator's CLI and the stack's mirror Lambda.

- `state`: where a sweep is (`SweepState`) and what a finished one hands the next (its mark, the videos
  still processing, a delta cursor), as pure data and rules;
- `lister`: the sweep's work (`Lister`), page by page, behind two small interfaces: a `Sink` (where entries
  go: the CLI's JSON Lines and CSV files, the mirror's intake queue) and a `Checkpoint` (where the state is
  kept after every page: the CLI's state file, the mirror's ledger item).

`migrator inventory --from` / `load --from --since last` (cli/migrator_cli/sweep.py) and the mirror
(migrator.mirror) are two adapters over this one code path.
"""

from .lister import Checkpoint, Failure, Lister, Sink, Stop, SweepFailed
from .state import (
    MARK_OVERLAP_S,
    PENDING_MAX_S,
    RECHECK_BATCH,
    SweepState,
    delta_of,
    iso,
    mark_of,
    next_mark,
    pending_of,
    recorded,
    sweep_mark,
)

__all__ = [
    "MARK_OVERLAP_S",
    "PENDING_MAX_S",
    "RECHECK_BATCH",
    "Checkpoint",
    "Failure",
    "Lister",
    "Sink",
    "Stop",
    "SweepFailed",
    "SweepState",
    "delta_of",
    "iso",
    "mark_of",
    "next_mark",
    "pending_of",
    "recorded",
    "sweep_mark",
]
