"""A test knob, not a platform's behaviour: answers reshaped as a platform that drifted from its documents would
send them, so a test can see `migrator doctor --source/--target` name the field that differs.

`drift` (SimConfig) is a list of rules, each applied to every JSON answer of the profile's API (never to /_sim):

- `rename <path> <new name>`: the key at <path> renamed (`data.*.status statuses`);
- `drop <path>`: the key at <path> removed;
- `set <path> <JSON value>`: the key at <path> given that value (`media.*.status "published"`).

A path is keys joined by dots; `*` stands for every item of a list (`*.hashed_id` for an answer that is a list).
A path that does not lead anywhere in an answer changes nothing in it. The answer is copied first: what the
simulator holds is never changed.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

VERBS = ("rename", "drop", "set")


class DriftError(ValueError):
    """A rule this knob cannot read."""


@dataclass(frozen=True)
class Rule:
    verb: str
    path: tuple[str, ...]
    argument: object = None  # the new name (rename) or the value (set)


def parse_rule(text: object) -> Rule:
    if not isinstance(text, str):
        raise DriftError("each drift rule must be a string")
    verb, _, rest = text.strip().partition(" ")
    path, _, argument = rest.strip().partition(" ")
    if verb not in VERBS or not path or any(not part for part in path.split(".")):
        raise DriftError(f"a drift rule is `rename <path> <name>`, `drop <path>` or `set <path> <JSON>`: {text!r}")
    if verb == "drop":
        return Rule(verb, tuple(path.split(".")))
    if not argument:
        raise DriftError(f"the drift rule {text!r} needs what to {verb} it to")
    if verb == "rename":
        return Rule(verb, tuple(path.split(".")), argument.strip())
    try:
        return Rule(verb, tuple(path.split(".")), json.loads(argument))
    except ValueError:
        raise DriftError(f"the value of {text!r} is not JSON") from None


def apply(rules: list[str] | None, answer: object) -> object:
    """`answer` with every rule applied (a copy), or `answer` itself when there are none."""
    if not rules:
        return answer
    answer = copy.deepcopy(answer)
    for rule in map(parse_rule, rules):
        for holder, key in _places(answer, rule.path):
            if rule.verb == "set":
                holder[key] = rule.argument
            elif key in holder:
                value = holder.pop(key)
                if rule.verb == "rename":
                    holder[rule.argument] = value
    return answer


def _places(doc: object, path: tuple[str, ...]):
    """(the object holding the last key, that key) for each place `path` names in `doc`."""
    head, rest = path[0], path[1:]
    if head == "*":
        for item in doc if isinstance(doc, list) else []:
            if rest:
                yield from _places(item, rest)
        return
    if not isinstance(doc, dict):
        return
    if not rest:
        yield doc, head
    elif head in doc:
        yield from _places(doc[head], rest)
