"""Which side tools a test run needs (pure): infra/test prepares the emulator, the SAM CLI and Azurite only for
a selection that may reach them, so `infra/test tests/unit` or `infra/test -m unit` starts at once."""

from __future__ import annotations

import sys

# The depths that never start the emulator, deploy a template or fill Azurite (tests/conftest.py's DEPTHS).
TOOL_FREE = ("unit", "sim", "probe", "static")


def needs_side_tools(argv: list[str]) -> bool:
    """False only when the run is limited to tool-free depths: every path argument under tests/<depth>, or a
    `-m` expression naming only those depths; True whenever it cannot tell."""
    paths, marks = [], []
    args = iter(argv)
    for arg in args:
        if arg == "-m":
            marks.append(next(args, ""))
        elif arg.startswith("-m") and len(arg) > 2:
            marks.append(arg[2:])
        elif not arg.startswith("-"):
            paths.append(arg.removeprefix("./"))
    if paths and all(any(p.startswith(f"tests/{depth}") for depth in TOOL_FREE) for p in paths):
        return False
    if marks and not paths:
        words = {w for mark in marks for w in mark.replace("(", " ").replace(")", " ").split()} - {"or"}
        return not words or not words <= set(TOOL_FREE)
    return True


if __name__ == "__main__":
    sys.exit(0 if needs_side_tools(sys.argv[1:]) else 1)
