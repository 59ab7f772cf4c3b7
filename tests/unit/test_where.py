"""The `--where` triage language (where.py): what it accepts, what it refuses and why, and what each expression
keeps, as tables over made-up rows; the old `FIELD=VALUE` form read as it always was (select.parse_clause)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from migrator.messages import AssetMessage
from migrator.row_extras import Collection
from migrator.usage import Usage
from migrator.where import WhereError, months_before, parse
from migrator_cli.select import Selection, parse_clause

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC).timestamp()


def usage(plays=None, last=None, views=None, since=None) -> Usage:
    return Usage(
        read_at="2026-12-06T00:00:00Z", counted_by="test", plays=plays, views=views, last_played_at=last, since=since
    )


ROWS = {
    "never": AssetMessage("never", "kaltura://0_a", title="Town hall", usage=usage(plays=0, views=3)),
    "old": AssetMessage(
        "old",
        "kaltura://0_b",
        title="Budget 2023",
        usage=usage(plays=12, last="2023-05-01T00:00:00Z"),
        size_bytes=3_000_000_000,
        duration_s=5400,
        tags=("finance", "news"),
        folder="Sales/EMEA",
        created_at="2023-01-10T09:00:00Z",
        privacy="private",
        collections=(Collection("c1", "Quarterly", "playlist"),),
    ),
    "recent": AssetMessage(
        "recent",
        "https://m.example/r.mp4",
        title="Launch",
        usage=usage(plays=900, last="2026-11-30T08:00:00Z"),
        size_bytes=400_000_000,
        duration_s=90,
        published_at="2026-02-01T00:00:00Z",
        tags=("news",),
    ),
    "unknown": AssetMessage("unknown", "https://m.example/u.mp4", title="budget draft"),
}


def kept(text: str) -> set[str]:
    expression = parse(text, NOW)
    return {name for name, row in ROWS.items() if expression.matches(row)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plays > 0", {"old", "recent"}),
        ("plays = 0", {"never"}),  # a row with no usage never matches plays = 0 ...
        ("plays != 0", {"old", "recent"}),  # ... nor plays != 0: a missing value matches nothing
        ("not plays > 0", {"never", "unknown"}),  # not turns the whole comparison
        ("plays is missing", {"unknown"}),
        ("plays is set", {"never", "old", "recent"}),
        ("plays is not missing", {"never", "old", "recent"}),
        ("views >= 3", {"never"}),
        ("last_played < 24 months ago", {"old"}),
        ("last_played >= 12 months ago", {"recent"}),
        ("plays = 0 or last_played < 24 months ago", {"never", "old"}),
        ("last_played < 365d", {"old"}),
        ("last_played > 2 weeks ago", {"recent"}),
        ("last_played = 2026-11-30", {"recent"}),  # a day: = is that day
        ("last_played > 2026-11-30", set()),  # after the whole day
        ("last_played <= 2026-11-30", {"old", "recent"}),
        ("last_played < 2026-11-30T08:00:01Z", {"old", "recent"}),
        ("created < 2024-01-01", {"old"}),
        ("published >= 2026-01-01", {"recent"}),
        ("size > 2GB", {"old"}),
        ("size < 500 MB", {"recent"}),
        ("size <= 400000000", {"recent"}),
        ("size > 2.7GiB", {"old"}),  # 2.7 GiB = 2.9 GB
        ("duration >= 1h30m", {"old"}),
        ("duration < 2m", {"recent"}),
        ("duration = 90s", {"recent"}),
        ("privacy = private", {"old"}),
        ("privacy = default", {"never", "recent", "unknown"}),  # rows leaving it to the stack
        ("folder = Sales/*", {"old"}),  # a glob character: a glob
        ("folder = Sales", set()),  # none: exact
        ("folder ~ sales/emea", {"old"}),  # ~ ignores case
        ("tag = news", {"old", "recent"}),  # any of the tags
        ("tag != finance", {"recent"}),  # none of the tags; a row without tags is not known
        ("tag is missing", {"never", "unknown"}),
        ("collection = Quarterly", {"old"}),
        ("collection = c1", {"old"}),  # by id too
        ("title ~ '*budget*'", {"old", "unknown"}),
        ('title = "Town hall"', {"never"}),
        ("(plays > 0 and tag = news) or plays is missing", {"old", "recent", "unknown"}),
        ("plays > 0 and not (tag = finance or size > 1GB)", {"recent"}),
        ("PLAYS > 0 AND Tag = news", {"old", "recent"}),  # keywords and columns in any case
        ("not not plays = 0", {"never"}),
    ],
)
def test_each_expression_keeps_what_it_says(text, expected):
    assert kept(text) == expected


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("plays < ten", "plays compares with a whole number, got 'ten'"),
        ("plays > -1", "plays compares with a whole number, got"),
        ("plays > 1.5", "plays compares with a whole number, got '1.5'"),
        ("size > big", "size compares with a size (2GB, 500MB, 1.5GiB, or bytes), got 'big'"),
        ("size > 2 parsecs", "size compares with a size"),
        ("duration < long", "duration compares with a duration (90s, 10m, 1h30m, or seconds), got 'long'"),
        ("last_played < yesterday", "last_played compares with a day (2025-01-31), an RFC 3339 time or an age"),
        ("last_played < 2025-13-01", "last_played compares with a day"),
        ("last_played < 1.5 months ago", "last_played compares with a day"),
        ("privacy = secret", "privacy is one of public, unlisted, private, signed, default, got 'secret'"),
        ("plays ~ 3", "plays compares with = != < <= > >=, not ~"),
        ("folder < x", "folder compares with = != ~, not <"),
        ("colour = red", "'colour' is not a column: one of plays, views, last_played"),
        ("plays >", "plays compares with a whole number, got nothing"),
        ("plays", "expression ends too soon"),
        ("plays 3", "plays takes an operator"),
        ("plays is gone", "expected 'missing' or 'set'"),
        ("(plays > 0", "the '(' at character 1 is never closed"),
        ("plays > 0)", "unexpected ')' at character 10"),
        ("plays > 0 plays < 3", "unexpected 'plays'"),
        ("title = 'open", "never closed"),
        ("plays => 3", "plays compares with a whole number, got nothing"),
        ("plays ! 3", "'!' at character 7 is not an operator"),
        ("", "empty"),
        ("   ", "empty"),
        ("plays > 0\x00", "control characters"),
        ("not " * 100 + "plays > 0", "nested more than"),
        ("(" * 100 + "plays > 0" + ")" * 100, "nested more than"),
        ("plays > 0 or " * 300 + "plays > 1", "over 2,000 characters"),
    ],
)
def test_what_is_refused_says_the_column_and_what_it_expected(text, error):
    with pytest.raises(WhereError, match=re.escape(error)):
        parse(text, NOW)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("plays > 0", "plays > 0 is false: plays is 0"),
        ("size > 1GB and plays > 0", "size > 1GB is false: size is not known"),
        (
            "tag = news or plays > 5",
            "none holds: tag = news is false: tag is not known; plays > 5 is false: plays is 0",
        ),
        ("not plays = 0", "not plays = 0 is false: plays = 0 holds"),
        ("plays is missing", "plays is missing is false: plays is 0"),
    ],
)
def test_why_a_row_was_left_says_the_part_that_failed_and_its_value(text, why):
    assert parse(text, NOW).why_not(ROWS["never"]) == why
    assert parse("plays > 0", NOW).why_not(ROWS["unknown"]) == "plays > 0 is false: plays is not known (no usage read)"
    assert parse("plays > 0", NOW).why_not(ROWS["old"]) is None


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("plays>0", "plays > 0"),
        ("(plays > 0 or views > 0) and size<2GB", "(plays > 0 or views > 0) and size < 2GB"),
        ("plays > 0 or views > 0 and size < 2GB", "plays > 0 or views > 0 and size < 2GB"),
        ("not (plays = 0 or views = 0)", "not (plays = 0 or views = 0)"),
        ("title = 'two words'", "title = 'two words'"),
        ("last_played < 24   months ago", "last_played < 24 months ago"),
    ],
)
def test_an_expression_is_quoted_back_in_one_canonical_form(text, canonical):
    assert parse(text, NOW).text == canonical
    assert parse(canonical, NOW).text == canonical  # and that form reads the same


def test_and_binds_tighter_than_or():
    assert kept("plays = 0 or plays > 0 and tag = finance") == {"never", "old"}
    assert kept("(plays = 0 or plays > 0) and tag = finance") == {"old"}


@pytest.mark.parametrize(
    ("now", "months", "expected"),
    [
        ("2026-12-06T12:00:00", 24, "2024-12-06T12:00:00"),
        ("2026-03-31T00:00:00", 1, "2026-02-28T00:00:00"),  # the month's last day where the day is not in it
        ("2028-03-31T00:00:00", 1, "2028-02-29T00:00:00"),
        ("2026-01-15T00:00:00", 13, "2024-12-15T00:00:00"),
    ],
)
def test_a_month_is_a_calendar_month(now, months, expected):
    start = datetime.fromisoformat(now).replace(tzinfo=UTC).timestamp()
    assert datetime.fromtimestamp(months_before(start, months), UTC).isoformat()[:19] == expected


@pytest.mark.parametrize(
    ("text", "form"),
    [
        ("folder=Sales*", ("folder", "Sales*")),  # the old form: a glob, as before
        ("tag=news", ("tag", "news")),
        ("privacy=default", ("privacy", "default")),
        ("folder=Sales Team*", ("folder", "Sales Team*")),  # the language cannot read it: the old form still does
        ("Folder=x", ("folder", "x")),
        ("folder = Sales*", "folder = Sales*"),  # spaces: the language (the same glob)
        ("folder=x and plays > 0", "folder = x and plays > 0"),
        ("title=x", "title = x"),
    ],
)
def test_the_old_form_reads_as_before_and_the_language_reads_the_rest(text, form):
    clause = parse_clause(text, NOW)
    assert (clause if isinstance(clause, tuple) else clause.text) == form


def test_old_pairs_on_one_field_match_either_and_expressions_must_all_hold():
    selection = Selection(
        where=(("tag", "finance"), ("tag", "launch*")), expressions=(parse("plays > 0", NOW), parse("size > 1GB", NOW))
    )
    assert [name for name, row in ROWS.items() if selection.matches(row)] == ["old"]
    assert selection.why_not(ROWS["recent"]) == "tag=finance or tag=launch* is false: tag 'news'"
    assert selection.why_not(ROWS["never"]) == "tag=finance or tag=launch* is false: tag none"
    assert selection.described() == ["tag=finance", "tag=launch*", "plays > 0", "size > 1GB"]
