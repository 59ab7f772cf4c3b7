"""What each adapter reads of each answer it relies on, declared as data: the platforms' shapes, in one place.

Every source and target adapter reads a few fields of a few answers (a list's items, a video's status, a link).
What it assumes of them (the keys it needs, their JSON types, the values of a status it branches on) was taken
from each platform's documents, never from the platform itself: no test here reaches a real account. So the
assumptions are written down once, here, as `Declared` answers, and checked twice:

- against the real platform by `migrator doctor --source P` / `--target T` (cli/migrator_cli/first_contact.py),
  with the operator's credentials, read-only: each answer the adapter's own calls get is held to its declaration;
- against the simulators by the tests (tests/sim/test_first_contact.py): a simulator that drifts from what the
  adapter assumes fails the same declarations.

Why here and not beside each adapter: the declarations are pure data that both the product (the CLI's check) and
the simulators' tests read, and that the Lambdas never import (no cold-start cost); one table per side reads as
the contract it is, and a change to an adapter's module (by whoever owns it) does not have to move them. Each
declaration names the adapter's reader it mirrors; a field an adapter starts to read belongs here too.

A declaration also says which calls are reads: `doctor` sends only requests a declaration of the platform covers
(a write, or anything not declared, is refused before it is sent: `allowed`).
"""

from __future__ import annotations

from .checker import differences
from .declared import Declared, Platform, xml_doc


def platform(side: str, name: str) -> Platform | None:
    """The declarations of `name` as a `side` ("source" or "target"); None when none are declared."""
    if side == "source":
        from .sources import SOURCES

        return SOURCES.get(name)
    from .targets import TARGETS

    return TARGETS.get(name)


__all__ = ["Declared", "Platform", "differences", "platform", "xml_doc"]
