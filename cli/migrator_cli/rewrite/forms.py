"""The registry of source embed forms, and finding them in a text (pure).

Each source platform's module (rewrite/sources/<platform>.py) registers its forms once, at import; `find` runs them
all over a text and keeps, where two overlap, the one that starts first and, of those, the longest (a Wistia async
embed's block wins over the JSON-P URL inside it), so one embed is rewritten once.
"""

from __future__ import annotations

from collections.abc import Iterable

from .model import Embed, Form

_FORMS: dict[str, Form] = {}


def register(*forms: Form) -> None:
    for form in forms:
        if form.name in _FORMS:
            raise ValueError(f"rewrite form {form.name!r} is registered twice")
        if not form.name.startswith(form.platform + "."):
            raise ValueError(f"rewrite form {form.name!r} must be named <platform>.<name>")
        _FORMS[form.name] = form


def all_forms() -> list[Form]:
    from . import sources  # noqa: F401  (importing it registers every platform's forms)

    return list(_FORMS.values())


def find(text: str, forms: Iterable[Form] | None = None) -> list[Embed]:
    """Every embed in `text`, in order, none overlapping another."""
    lowered = text.lower()
    found: list[Embed] = []
    for form in all_forms() if forms is None else forms:
        if form.hint and form.hint not in lowered:
            continue
        found.extend(form.find(text))
    found.sort(key=lambda e: (e.start, -(e.end - e.start)))
    kept: list[Embed] = []
    for embed in found:
        if kept and embed.start < kept[-1].end:
            continue
        kept.append(embed)
    return kept
