"""`--where EXPRESSION`: the triage language of `load`, `plan` and `inventory` (issue 45), parsed and evaluated, pure.

An expression keeps a row or leaves it behind. Grammar (keywords in any case; a value with spaces or one of
`()<>=!~"'` is quoted, '...' or "..."):

    expression := term ("or" term)*
    term       := factor ("and" factor)*
    factor     := "not" factor | "(" expression ")" | COLUMN OP VALUE | COLUMN "is" ("missing" | "set")
    OP         := = | != | < | <= | > | >= | ~

Columns, and what each compares with:

    plays, views        a whole number                       usage.plays, usage.views
    last_played         a time (see below)                    usage.last_played_at
    created, published  a time                                created_at, published_at
    size                a size: 2GB, 500MB, 1.5GiB, bytes     size_bytes (GB = 10^9 bytes, GiB = 2^30)
    duration            a duration: 90s, 10m, 1h30m, seconds  duration_s
    privacy             public, unlisted, private, signed, default (the stack's)
    folder, title       text
    tag                 text: true when any of the row's tags is
    collection          text: true when any collection holding the video is, by its name or its id

A time is a day (`2025-01-31`, UTC: `=` is that day, `<` before it, `>` after it), an RFC 3339 time, or an age
counted back from `now` (given by the caller, so evaluation is pure): `24 months ago`, `365d`, `2 years ago`,
`12w`, `48h` (units h, d, w, mo or months, y or years; a month is a calendar month). Text is compared exactly with
`=`/`!=`, as a glob (`*`, `?`, `[...]`, case-sensitive, as the old `--where FIELD=VALUE`) where the value has a
glob character, and `~` is a glob that ignores case (`title ~ "*budget*"`). `<` and `>` apply to numbers, sizes,
durations and times only.

Unknown values: a comparison on a value the row does not have (no usage read, no size, no tags) is false, whatever
its operator (`!=` too): a row with no usage never matches `plays = 0`, nor `plays != 0`. Ask for it with
`plays is missing` (or `is set`); `not` turns the whole comparison, so `not plays > 0` keeps the unknown ones too.
A video never played has plays 0 and no last play, so "not played in 24 months" reads
`plays = 0 or last_played < 24 months ago`.

`parse(text, now)` gives an `Expression` or raises `WhereError` naming the column and what it expected;
`Expression.matches(msg)` says whether a row is kept and `why_not(msg)` says in words why it is not.
"""

from __future__ import annotations

import calendar
import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from .messages import AssetMessage

MAX_LENGTH = 2_000  # an expression is typed by a person; past this it is a mistake or an attack
MAX_DEPTH = 40  # nesting of not and parentheses: the parser recurses, and Python's stack is not endless
OPERATORS = ("<=", ">=", "!=", "=", "<", ">", "~")
ORDERED = ("=", "!=", "<", "<=", ">", ">=")
TEXTUAL = ("=", "!=", "~")
PRIVACIES = ("public", "unlisted", "private", "signed", "default")
_SPECIAL = set("()<>=!~\"'")
_GLOB = re.compile(r"[*?\[]")


class WhereError(ValueError):
    """An expression that does not parse, or compares a column with something it cannot hold."""


# --- values a column compares with -----------------------------------------------------------------------------

_SIZE_UNITS = {
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_DURATION_UNITS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600}
_AGE_UNITS = {
    "h": ("hours", 1),
    "hour": ("hours", 1),
    "hours": ("hours", 1),
    "d": ("days", 1),
    "day": ("days", 1),
    "days": ("days", 1),
    "w": ("days", 7),
    "week": ("days", 7),
    "weeks": ("days", 7),
    "mo": ("months", 1),
    "month": ("months", 1),
    "months": ("months", 1),
    "y": ("months", 12),
    "year": ("months", 12),
    "years": ("months", 12),
}
_NUMBER_UNIT = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([a-z]*)$")
_DURATION_PARTS = re.compile(r"([0-9]+(?:\.[0-9]+)?)(h|m|s)")
_DURATION_WHOLE = re.compile(r"([0-9]+(\.[0-9]+)?h)?([0-9]+(\.[0-9]+)?m)?([0-9]+(\.[0-9]+)?s)?")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?$", re.IGNORECASE)


def months_before(now: float, months: int) -> float:
    """`now` moved back whole calendar months (the day kept, or the month's last day: 31 March less 1 is 28/29 Feb)."""
    when = datetime.fromtimestamp(now, UTC)
    index = when.year * 12 + (when.month - 1) - months
    year, month = divmod(index, 12)
    day = min(when.day, calendar.monthrange(year, month + 1)[1])
    return when.replace(year=year, month=month + 1, day=day).timestamp()


def age_before(now: float, amount: float, unit: str) -> float:
    """The time `amount` `unit`s (a key of `_AGE_UNITS`) before `now`."""
    kind, factor = _AGE_UNITS[unit]
    if kind == "months":
        if amount != int(amount):
            raise ValueError("months and years are whole")
        return months_before(now, int(amount) * factor)
    return now - timedelta(**{kind: amount * factor}).total_seconds()


def time_of(text: str) -> float:
    """Epoch seconds of an RFC 3339 time a row carries (a time without a zone is UTC)."""
    when = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def _whole(words: list[str]) -> int:
    (word,) = words
    if not re.fullmatch(r"[0-9]+", word):
        raise ValueError
    return int(word)


def _size(words: list[str]) -> float:
    match = _NUMBER_UNIT.match("".join(words).lower())
    if not match or match.group(2) not in ("", *_SIZE_UNITS):
        raise ValueError
    return float(match.group(1)) * _SIZE_UNITS.get(match.group(2), 1)


def _duration(words: list[str]) -> float:
    text = "".join(words).lower()
    if re.fullmatch(r"[0-9]+(\.[0-9]+)?", text):
        return float(text)
    text = re.sub(r"(sec|min|hr)$", lambda m: {"sec": "s", "min": "m", "hr": "h"}[m.group(1)], text)
    if not text or not _DURATION_WHOLE.fullmatch(text):
        raise ValueError
    return sum(float(n) * _DURATION_UNITS[u] for n, u in _DURATION_PARTS.findall(text))


def _time(words: list[str], now: float) -> tuple[float, float]:
    """(from, to): a day is [its midnight, the next); a time or an age is the instant [t, t]."""
    lowered = [w.lower() for w in words]
    if lowered and lowered[-1] == "ago":
        lowered = lowered[:-1]
        if not lowered:
            raise ValueError
    if len(lowered) == 1 and _DAY.match(lowered[0]):
        start = datetime.fromisoformat(lowered[0]).replace(tzinfo=UTC).timestamp()
        return start, start + 86_400
    if len(lowered) == 1 and _TIME.match(lowered[0]):
        at = time_of(words[0])
        return at, at
    match = _NUMBER_UNIT.match("".join(lowered))
    if match and match.group(2) in _AGE_UNITS:
        at = age_before(now, float(match.group(1)), match.group(2))
        return at, at
    raise ValueError


@dataclass(frozen=True)
class Kind:
    """What a column holds: how a value for it reads, what it is called in an error, which operators it takes."""

    expected: str
    operators: tuple[str, ...]
    read: Callable[[list[str], float], object] | None = None  # None: text


COUNT = Kind("a whole number", ORDERED, lambda words, now: _whole(words))
TIME = Kind("a day (2025-01-31), an RFC 3339 time or an age (24 months ago, 365d, 2 years ago)", ORDERED, _time)
SIZE = Kind("a size (2GB, 500MB, 1.5GiB, or bytes)", ORDERED, lambda words, now: _size(words))
DURATION = Kind("a duration (90s, 10m, 1h30m, or seconds)", ORDERED, lambda words, now: _duration(words))
TEXT = Kind("text", TEXTUAL)
PRIVACY = Kind(f"one of {', '.join(PRIVACIES)}", TEXTUAL)


def _usage(name: str) -> Callable[[AssetMessage], list]:
    def get(msg: AssetMessage) -> list:
        value = getattr(msg.usage, name) if msg.usage is not None else None
        return [] if value is None else [value]

    return get


def _one(name: str, convert: Callable = lambda v: v) -> Callable[[AssetMessage], list]:
    def get(msg: AssetMessage) -> list:
        value = getattr(msg, name)
        return [] if value is None else [convert(value)]

    return get


def _times(get: Callable[[AssetMessage], list]) -> Callable[[AssetMessage], list]:
    def read(msg: AssetMessage) -> list:
        out = []
        for text in get(msg):
            try:
                out.append(time_of(text))
            except ValueError:  # a row's time that is not one is not known, never a match
                pass
        return out

    return read


# Each column: its kind, how a row's values are read (an empty list: not known), and those values in words.
COLUMNS: dict[str, tuple[Kind, Callable[[AssetMessage], list], Callable[[AssetMessage], list]]] = {
    "plays": (COUNT, _usage("plays"), _usage("plays")),
    "views": (COUNT, _usage("views"), _usage("views")),
    "last_played": (TIME, _times(_usage("last_played_at")), _usage("last_played_at")),
    "created": (TIME, _times(_one("created_at")), _one("created_at")),
    "published": (TIME, _times(_one("published_at")), _one("published_at")),
    "size": (SIZE, _one("size_bytes"), _one("size_bytes")),
    "duration": (DURATION, _one("duration_s"), _one("duration_s")),
    "privacy": (PRIVACY, lambda m: [m.privacy or "default"], lambda m: [m.privacy or "default"]),
    "folder": (TEXT, _one("folder"), _one("folder")),
    "title": (TEXT, _one("title"), _one("title")),
    "tag": (TEXT, lambda m: list(m.tags), lambda m: list(m.tags)),
    "collection": (
        TEXT,
        lambda m: [v for c in m.collections for v in (c.name, c.id)],
        lambda m: [f"{c.name} ({c.id})" for c in m.collections],
    ),
}


# --- the expression tree -----------------------------------------------------------------------------------------


class Expression:
    """A parsed `--where`: `text` is its canonical form (what a summary and a left-behind report quote)."""

    text: str

    def matches(self, msg: AssetMessage) -> bool:
        raise NotImplementedError

    def why_not(self, msg: AssetMessage) -> str | None:
        """None when `msg` matches; else why not, in words (the part that failed, and the row's value)."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.text


def _value_text(value) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e18):
        return f"{int(value):,}"
    return f"{value:g}"


def _shown(msg: AssetMessage, column: str) -> str:
    values = COLUMNS[column][2](msg)
    if not values:
        return f"{column} is not known" + (" (no usage read)" if column in ("plays", "views", "last_played") else "")
    if len(values) == 1:
        return f"{column} is {_value_text(values[0])}"
    return f"{column} is each of {', '.join(repr(v) for v in values[:5])}" + (" ..." if len(values) > 5 else "")


@dataclass(frozen=True)
class Comparison(Expression):
    column: str
    op: str
    value: object  # a number, a (from, to) time, or text
    text: str

    def matches(self, msg: AssetMessage) -> bool:
        values = COLUMNS[self.column][1](msg)
        if not values:
            return False  # not known: false whatever the operator (the module's description)
        if self.op == "!=":
            return not any(self._equal(v) for v in values)
        if self.op == "=":
            return any(self._equal(v) for v in values)
        if self.op == "~":
            return any(fnmatch.fnmatchcase(str(v).casefold(), str(self.value).casefold()) for v in values)
        return any(self._ordered(v) for v in values)

    def _equal(self, value) -> bool:
        if isinstance(self.value, tuple):
            start, end = self.value
            return start <= value < end if end > start else value == start
        if isinstance(self.value, str):
            return fnmatch.fnmatchcase(value, self.value) if _GLOB.search(self.value) else value == self.value
        return value == self.value

    def _ordered(self, value) -> bool:
        start, end = self.value if isinstance(self.value, tuple) else (self.value, self.value)
        day = isinstance(self.value, tuple) and end > start  # a whole day: `<=` to its end, `>` after it
        if self.op == "<":
            return value < start
        if self.op == ">=":
            return value >= start
        if self.op == "<=":
            return value < end if day else value <= start
        return value >= end if day else value > start  # ">"

    def why_not(self, msg: AssetMessage) -> str | None:
        return None if self.matches(msg) else f"{self.text} is false: {_shown(msg, self.column)}"


@dataclass(frozen=True)
class Presence(Expression):
    column: str
    missing: bool
    text: str

    def matches(self, msg: AssetMessage) -> bool:
        return (not COLUMNS[self.column][1](msg)) == self.missing

    def why_not(self, msg: AssetMessage) -> str | None:
        return None if self.matches(msg) else f"{self.text} is false: {_shown(msg, self.column)}"


@dataclass(frozen=True)
class Not(Expression):
    inner: Expression
    text: str

    def matches(self, msg: AssetMessage) -> bool:
        return not self.inner.matches(msg)

    def why_not(self, msg: AssetMessage) -> str | None:
        return None if self.matches(msg) else f"{self.text} is false: {self.inner.text} holds"


@dataclass(frozen=True)
class All(Expression):
    parts: tuple[Expression, ...]
    text: str

    def matches(self, msg: AssetMessage) -> bool:
        return all(p.matches(msg) for p in self.parts)

    def why_not(self, msg: AssetMessage) -> str | None:
        return next((why for p in self.parts if (why := p.why_not(msg)) is not None), None)


@dataclass(frozen=True)
class Any_(Expression):
    parts: tuple[Expression, ...]
    text: str

    def matches(self, msg: AssetMessage) -> bool:
        return any(p.matches(msg) for p in self.parts)

    def why_not(self, msg: AssetMessage) -> str | None:
        whys = [p.why_not(msg) for p in self.parts]
        return None if any(w is None for w in whys) else "none holds: " + "; ".join(str(w) for w in whys)


# --- the parser --------------------------------------------------------------------------------------------------

_KEYWORDS = ("and", "or", "not", "is", "missing", "set")


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "quoted", "op", "(", ")"
    text: str
    at: int


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "()":
            out.append(_Token(c, c, i))
            i += 1
        elif c in "\"'":
            end = text.find(c, i + 1)
            if end < 0:
                raise WhereError(f"a quote opened at character {i + 1} is never closed")
            out.append(_Token("quoted", text[i + 1 : end], i))
            i = end + 1
        elif c in "<>=!~":
            op = text[i : i + 2] if text[i : i + 2] in OPERATORS else c
            if op not in OPERATORS:
                raise WhereError(f"{c!r} at character {i + 1} is not an operator: one of {' '.join(OPERATORS)}")
            out.append(_Token("op", op, i))
            i += len(op)
        else:
            start = i
            while i < len(text) and not text[i].isspace() and text[i] not in _SPECIAL:
                i += 1
            out.append(_Token("word", text[start:i], start))
    return out


def _quote(text: str) -> str:
    if text and not any(c.isspace() or c in _SPECIAL for c in text) and text.lower() not in _KEYWORDS:
        return text
    return f"'{text}'" if "'" not in text else f'"{text}"'


class _Parser:
    def __init__(self, text: str, now: float):
        self.tokens = _tokens(text)
        self.i = 0
        self.now = now
        self.depth = 0

    def peek(self, offset: int = 0) -> _Token | None:
        return self.tokens[self.i + offset] if self.i + offset < len(self.tokens) else None

    def keyword(self, *words: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == "word" and token.text.lower() in words

    def take(self) -> _Token:
        token = self.peek()
        if token is None:
            raise WhereError("the expression ends too soon: a comparison such as plays > 0 was expected")
        self.i += 1
        return token

    def expression(self) -> Expression:
        parts = [self.term()]
        while self.keyword("or"):
            self.i += 1
            parts.append(self.term())
        return parts[0] if len(parts) == 1 else Any_(tuple(parts), " or ".join(_grouped(p, Any_) for p in parts))

    def term(self) -> Expression:
        parts = [self.factor()]
        while self.keyword("and"):
            self.i += 1
            parts.append(self.factor())
        return parts[0] if len(parts) == 1 else All(tuple(parts), " and ".join(_grouped(p, All) for p in parts))

    def factor(self) -> Expression:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise WhereError(f"nested more than {MAX_DEPTH} deep")
        try:
            if self.keyword("not"):
                self.i += 1
                inner = self.factor()
                return Not(inner, f"not {_grouped(inner, None)}")
            token = self.take()
            if token.kind == "(":
                inner = self.expression()
                closing = self.peek()
                if closing is None or closing.kind != ")":
                    raise WhereError(f"the '(' at character {token.at + 1} is never closed")
                self.i += 1
                return inner
            return self.test(token)
        finally:
            self.depth -= 1

    def test(self, token: _Token) -> Expression:
        name = token.text.lower()
        if token.kind != "word" or name not in COLUMNS:
            raise WhereError(f"{token.text!r} is not a column: one of {', '.join(COLUMNS)}")
        kind = COLUMNS[name][0]
        if self.keyword("is"):
            self.i += 1
            negated = self.keyword("not")  # `is not missing` reads as `is set`
            self.i += negated
            if not self.keyword("missing", "set"):
                raise WhereError(f"{name} is ...: expected 'missing' or 'set'")
            missing = (self.take().text.lower() == "missing") != negated
            return Presence(name, missing, f"{name} is {'missing' if missing else 'set'}")
        op_token = self.take()
        if op_token.kind != "op":
            raise WhereError(
                f"{name} takes an operator ({' '.join(kind.operators)}) or 'is missing', got {op_token.text!r}"
            )
        op = op_token.text
        if op not in kind.operators:
            raise WhereError(f"{name} compares with {' '.join(kind.operators)}, not {op}")
        words = self.value_words(name, kind)
        shown = " ".join(_quote(w) for w in words)
        if kind.read is None:
            (value,) = words
            if kind is PRIVACY and not _GLOB.search(value) and op != "~" and value not in PRIVACIES:
                raise WhereError(f"privacy is {kind.expected}, got {value!r}")
            return Comparison(name, op, value, f"{name} {op} {shown}")
        try:
            read = kind.read(words, self.now)
        except (ValueError, OverflowError):
            raise WhereError(f"{name} compares with {kind.expected}, got {' '.join(words)!r}") from None
        return Comparison(name, op, read, f"{name} {op} {shown}")

    def value_words(self, name: str, kind: Kind) -> list[str]:
        """The value after an operator: one word or quoted text; for a number with a unit, or an age, the few
        words it is written in (`2 GB`, `24 months ago`)."""
        first = self.peek()
        if first is None or first.kind not in ("word", "quoted"):
            raise WhereError(f"{name} compares with {kind.expected}, got nothing")
        self.i += 1
        words = [first.text]
        if first.kind == "quoted" or kind.read is None:
            return words
        while (
            (nxt := self.peek()) is not None and nxt.kind == "word" and nxt.text.lower() not in (*_KEYWORDS, *COLUMNS)
        ):
            if not (nxt.text.isalpha() and len(words) < 3):
                break
            words.append(nxt.text)
            self.i += 1
        return words


def _grouped(part: Expression, joined_by: type | None) -> str:
    """`part`'s text, in parentheses where it would read otherwise beside its neighbours."""
    bare = isinstance(part, Comparison | Presence | Not) or (joined_by is not None and isinstance(part, joined_by))
    if joined_by is Any_ and isinstance(part, All):
        bare = True  # and binds tighter than or
    return part.text if bare else f"({part.text})"


def parse(text: str, now: float) -> Expression:
    """The expression `text` says, its ages counted back from `now` (epoch seconds); WhereError if it is not one."""
    if not isinstance(text, str) or not text.strip():
        raise WhereError("the expression is empty")
    if len(text) > MAX_LENGTH:
        raise WhereError(f"the expression is over {MAX_LENGTH:,} characters")
    if any(not c.isprintable() for c in text):
        raise WhereError("the expression holds control characters")
    parser = _Parser(text, now)
    expression = parser.expression()
    extra = parser.peek()
    if extra is not None:
        raise WhereError(f"unexpected {extra.text!r} at character {extra.at + 1}: expected and, or, or the end")
    return expression
