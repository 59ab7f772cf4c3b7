"""The shape checker: does an answer hold what an adapter reads of it? Pure, no dependency.

A declaration (`shapes/sources.py`, `shapes/targets.py`) describes each answer in a small subset of JSON Schema,
kept to what the adapter relies on: `type` (one name or a list: object, array, string, integer, number, boolean,
null), `properties` and `required` of an object, `items` of an array, `enum` (the values the adapter branches on),
`anyOf` (an answer of two forms, held to the first whose type it has).
Every other key is ignored, and so is every field the declaration does not name: a platform may add fields, an
adapter reads only its own. Because it is a subset of JSON Schema, the unit tests hold this checker to the
`jsonschema` package (a development dependency only) on the same table of cases.

`differences(schema, doc)` says what differs, one sentence per place, each naming the path
(`media[0].status: expected one of ready/processing/failed, got 'published'`); none when the answer fits.
Values are shown short and never whole: an answer can carry a credential (a signed link), so what is quoted is
cut to a few characters and then redacted by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# How much of a value a difference quotes: enough to recognise a word, too little to carry a credential whole.
SHOWN_CHARS = 32
# How many differences one answer is reported with; the rest are counted.
MAX_DIFFERENCES = 5
_INDEX = re.compile(r"\[\d+\]")

_PYTHON_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


# --- building a declaration (plain dicts: JSON Schema's own words) -------------------------------------------

STR = {"type": "string"}
INT = {"type": "integer"}
NUM = {"type": "number"}
BOOL = {"type": "boolean"}
ANY: dict = {}


def obj(fields: Mapping[str, dict] | None = None, **optional: dict) -> dict:
    """An object: `fields` required (each with its schema), `optional` ones checked only where present."""
    fields = dict(fields or {})
    return {"type": "object", "required": list(fields), "properties": {**fields, **optional}}


def arr(items: dict = ANY) -> dict:
    return {"type": "array", "items": items}


def nullable(schema: dict) -> dict:
    """`schema`, or null (a field the platform sends as null where it has nothing)."""
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    out = {**schema, "type": [*kinds, "null"]} if kinds else dict(schema)
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    return out


def one_of(*values: object, kind: str = "string") -> dict:
    """An enum the adapter branches on: any other value differs."""
    return {"type": kind, "enum": list(values)}


def either(*kinds: str) -> dict:
    return {"type": list(kinds)}


def any_of(*schemas: dict) -> dict:
    """One of several forms (each with its own `type`): the value is held to the first whose type it has."""
    return {"anyOf": list(schemas)}


# --- checking -------------------------------------------------------------------------------------------------


def differences(schema: dict | None, doc: object, root: str = "") -> list[str]:
    """What in `doc` differs from `schema`, one sentence per place (at most MAX_DIFFERENCES, then a count)."""
    if not schema:
        return []
    found: list[str] = []
    _walk(schema, doc, root, found)
    # The same difference in every item of a list is one difference: said once, with how many items have it.
    groups: dict[str, list[str]] = {}
    for each in found:
        groups.setdefault(_INDEX.sub("[*]", each.partition(": ")[0]), []).append(each)
    said = [
        f"{alike[0]} (and {len(alike) - 1} more items alike)" if len(alike) > 1 else alike[0]
        for alike in groups.values()
    ]
    if len(said) > MAX_DIFFERENCES:
        return [*said[:MAX_DIFFERENCES], f"(and {len(said) - MAX_DIFFERENCES} more)"]
    return said


def _walk(schema: dict, doc: object, path: str, found: list[str]) -> None:
    if "anyOf" in schema:
        fitting = [s for s in schema["anyOf"] if not _type_differs(s, doc)]
        if not fitting:
            any_of = [k for s in schema["anyOf"] for k in _kinds(s)]
            found.append(f"{path or 'the answer'}: expected {' or '.join(any_of)}, got {kind_of(doc)}")
            return
        schema = fitting[0]
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    where = path or "the answer"
    if kinds and not any(_PYTHON_TYPES[k](doc) for k in kinds):
        found.append(f"{where}: expected {' or '.join(kinds)}, got {kind_of(doc)}")
        return
    if "enum" in schema and doc not in schema["enum"]:
        allowed = "/".join("null" if v is None else str(v) for v in schema["enum"])
        found.append(f"{where}: expected one of {allowed}, got {shown(doc)}")
        return
    if isinstance(doc, dict):
        for name in schema.get("required", ()):
            if name not in doc:
                found.append(f"{_join(path, name)}: missing")
        for name, inner in schema.get("properties", {}).items():
            if name in doc:
                _walk(inner, doc[name], _join(path, name), found)
    elif isinstance(doc, list) and "items" in schema:
        for index, item in enumerate(doc):
            _walk(schema["items"], item, f"{path}[{index}]", found)


def _kinds(schema: dict) -> list[str]:
    kinds = schema.get("type")
    return [kinds] if isinstance(kinds, str) else list(kinds or [])


def _type_differs(schema: dict, doc: object) -> bool:
    kinds = _kinds(schema)
    return bool(kinds) and not any(_PYTHON_TYPES[k](doc) for k in kinds)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def kind_of(value: object) -> str:
    """A value's JSON type, and for a scalar a short quote of it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, int | float):
        return f"number {shown(value)}"
    return f"string {shown(value)}"


def shown(value: object) -> str:
    """A value quoted short: a word is recognisable, a token is not carried whole."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
