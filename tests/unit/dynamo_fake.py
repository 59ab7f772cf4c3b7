"""An in-memory DynamoDB client that evaluates the update and condition expressions it is sent.

Enough of the low-level client for the pacer and the tally's pacer update: `update_item` (SET and
ADD actions; `+` and `-`; `if_not_exists`; conditions with comparisons, AND, OR, NOT, parentheses,
`attribute_exists` / `attribute_not_exists`; ALL_OLD on success and on a failed condition) and
`get_item`. It counts every call as DynamoDB bills it: a failed conditional write consumes write
capacity like a successful one. Semantics followed (the DynamoDB developer guide, "Condition
expressions" and "Update expressions"): a comparison with an attribute the item lacks is false, and
arithmetic on a missing attribute is a ValidationException.
"""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal
from functools import lru_cache

from boto3.dynamodb.types import TypeSerializer
from botocore.exceptions import ClientError
from migrator.dynamo import to_item

_ser = TypeSerializer()
_TOKEN = re.compile(r"\s*(<>|<=|>=|[=<>(),+\-]|[#:]?[A-Za-z_][A-Za-z0-9_]*)")
_MISSING = object()


def _tokens(text: str) -> list[str]:
    out, at = [], 0
    text = text.strip()
    while at < len(text):
        match = _TOKEN.match(text, at)
        if not match:
            raise ValueError(f"cannot read the expression at {text[at:]!r}")
        out.append(match.group(1))
        at = match.end()
    return out


class _Reader:
    def __init__(self, tokens: list[str]):
        self.tokens, self.at = tokens, 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.tokens[self.at]
        if expected is not None and token.upper() != expected:
            raise ValueError(f"expected {expected}, got {token}")
        self.at += 1
        return token


# Parsed forms: ("path", name) ("value", ref) ("ine", path, operand) ("op", "+"|"-", a, b)
# conditions: ("cmp", op, a, b) ("and", a, b) ("or", a, b) ("not", a) ("exists", path) ("absent", path)


def _operand(r: _Reader):
    token = r.take()
    if token.lower() == "if_not_exists":
        r.take("(")
        path = _operand(r)
        r.take(",")
        fallback = _value(r)
        r.take(")")
        return ("ine", path, fallback)
    if token.startswith(":"):
        return ("value", token)
    return ("path", token)


def _value(r: _Reader):
    left = _operand(r)
    while r.peek() in ("+", "-"):
        op = r.take()
        left = ("op", op, left, _operand(r))
    return left


@lru_cache(maxsize=256)
def _update(expression: str):
    r, actions = _Reader(_tokens(expression)), []
    while r.peek() is not None:
        clause = r.take().upper()
        while True:
            path = _operand(r)
            if clause == "SET":
                r.take("=")
                actions.append(("set", path, _value(r)))
            elif clause == "ADD":
                actions.append(("add", path, _operand(r)))
            else:
                raise ValueError(f"unsupported clause {clause}")
            if r.peek() != ",":
                break
            r.take(",")
    return tuple(actions)


@lru_cache(maxsize=256)
def _condition(expression: str):
    r = _Reader(_tokens(expression))
    parsed = _or(r)
    if r.peek() is not None:
        raise ValueError(f"unread tokens in {expression!r}")
    return parsed


def _or(r):
    return _joined(r, "OR", _and)


def _and(r):
    return _joined(r, "AND", _not)


def _joined(r, word: str, operand):
    """`operand (word operand)*`, left to right: one precedence level of the grammar."""
    left = operand(r)
    while r.peek() and r.peek().upper() == word:
        r.take()
        left = (word.lower(), left, operand(r))
    return left


def _not(r):
    if r.peek() and r.peek().upper() == "NOT":
        r.take()
        return ("not", _not(r))
    if r.peek() == "(":
        r.take()
        inner = _or(r)
        r.take(")")
        return inner
    if r.peek() in ("attribute_exists", "attribute_not_exists"):
        kind = "exists" if r.take() == "attribute_exists" else "absent"
        r.take("(")
        path = _operand(r)
        r.take(")")
        return (kind, path)
    left = _value(r)
    op = r.take()
    return ("cmp", op, left, _value(r))


class FakeDynamo:
    """One table's items in memory, keyed by the key's single attribute value."""

    def __init__(self):
        self.items: dict[str, dict] = {}
        self.calls: Counter = Counter()  # ("update", key) / ("update_failed", key) / ("get", key)

    # --- the client's surface ---------------------------------------------------------------

    def update_item(self, **request):
        key = _key(request["Key"])
        names = request.get("ExpressionAttributeNames", {})
        values = to_item(request.get("ExpressionAttributeValues")) or {}
        old = self.items.get(key)
        current = dict(old) if old else dict(to_item(request["Key"]))
        condition = request.get("ConditionExpression")
        if condition and not _test(_condition(condition), current if old else {}, names, values):
            self.calls["update_failed", key] += 1
            response = {
                "Error": {"Code": "ConditionalCheckFailedException", "Message": "The conditional request failed"}
            }
            if old and request.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD":
                response["Item"] = _typed(old)
            raise ClientError(response, "UpdateItem")
        self.calls["update", key] += 1
        before = dict(current)
        for action, path, operand in _update(request["UpdateExpression"]):
            name = _name(path, names)
            if action == "set":
                current[name] = _eval(operand, before, names, values, strict=True)
            else:
                current[name] = before.get(name, Decimal(0)) + _eval(operand, before, names, values, strict=True)
        self.items[key] = current
        if request.get("ReturnValues") == "ALL_OLD" and old:
            return {"Attributes": _typed(old)}
        return {}

    def get_item(self, **request):
        key = _key(request["Key"])
        self.calls["get", key] += 1
        item = self.items.get(key)
        return {"Item": _typed(item)} if item else {}

    # --- for the tests ------------------------------------------------------------------------

    def writes(self, key: str) -> int:
        """Writes the item took, successful and failed conditional ones (both consume capacity)."""
        return self.calls["update", key] + self.calls["update_failed", key]


def _key(raw: dict) -> str:
    (value,) = to_item(raw).values()
    return str(value)


def _typed(item: dict) -> dict:
    return {k: _ser.serialize(v) for k, v in item.items()}


def _name(path, names: dict) -> str:
    token = path[1]
    return names[token] if token.startswith("#") else token


def _eval(node, item: dict, names: dict, values: dict, strict: bool = False):
    kind = node[0]
    if kind == "value":
        return values[node[1]]
    if kind == "path":
        value = item.get(_name(node, names), _MISSING)
        if value is _MISSING and strict:
            raise ClientError({"Error": {"Code": "ValidationException", "Message": "missing attribute"}}, "UpdateItem")
        return value
    if kind == "ine":
        value = item.get(_name(node[1], names), _MISSING)
        return _eval(node[2], item, names, values, strict) if value is _MISSING else value
    left, right = _eval(node[2], item, names, values, strict), _eval(node[3], item, names, values, strict)
    if left is _MISSING or right is _MISSING:
        return _MISSING
    return left + right if node[1] == "+" else left - right


_COMPARE = {
    "=": lambda a, b: a == b,
    "<>": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _test(node, item: dict, names: dict, values: dict) -> bool:
    kind = node[0]
    if kind == "and":
        return _test(node[1], item, names, values) and _test(node[2], item, names, values)
    if kind == "or":
        return _test(node[1], item, names, values) or _test(node[2], item, names, values)
    if kind == "not":
        return not _test(node[1], item, names, values)
    if kind in ("exists", "absent"):
        present = _name(node[1], names) in item
        return present if kind == "exists" else not present
    left, right = _eval(node[2], item, names, values), _eval(node[3], item, names, values)
    if left is _MISSING or right is _MISSING:
        return False
    try:
        return _COMPARE[node[1]](left, right)
    except TypeError:  # different types never compare true
        return node[1] == "<>"
