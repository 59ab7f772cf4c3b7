"""The database containers of `migrator rewrite`: SQL dumps (MySQL, pg_dump COPY and --inserts), WXR, PHP-serialized
values and JSON strings, rewritten by a toy rewrite (not the engine) and read back by strict readers of this file's
own, independent of the code under test: each INSERT parses, each serialized value unserializes with lengths exact."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from migrator_cli.rewrite.containers import jsonstrings, phpserial, sql, values, wxr

pytestmark = pytest.mark.unit

# Shaped like Vimeo's embed code (from https://developer.vimeo.com/player/sdk/embed, not seen verbatim): the player
# URL is what the toy rewrite replaces, so nothing here depends on the engine.
OLD = "https://player.vimeo.com/video/76979871"
IFRAME = (
    f'<iframe src="{OLD}?h=8272103f6e" width="640" height="360" frameborder="0"'
    ' allow="autoplay; fullscreen; picture-in-picture" allowfullscreen></iframe>'
)
LONGER = "https://lecteur.exemple.fr/vidéo/76979871?ü=1&ß=2"
SHORTER = "https://ñ.tv/é/7"


def toy(new: str) -> Callable[[str], str]:
    return lambda text: text.replace(OLD, new)


# --- strict readers of this test's own ---------------------------------------------------------------------------


def php_serialize(value: Any) -> str:
    """PHP's serialize() for the few types here, lengths in UTF-8 bytes (the oracle the input is built with)."""
    if value is None:
        return "N;"
    if isinstance(value, bool):
        return f"b:{int(value)};"
    if isinstance(value, int):
        return f"i:{value};"
    if isinstance(value, float):
        return f"d:{value!r};".replace("inf", "INF")  # PHP writes INF and -INF
    if isinstance(value, str):
        return f's:{len(value.encode("utf-8", "surrogateescape"))}:"{value}";'
    members = "".join(php_serialize(k) + php_serialize(v) for k, v in value.items())
    return f"a:{len(value)}:{{{members}}}"


def php_unserialize(text: str) -> Any:
    """A strict unserialize() of N, b, i, d, s and a (what WordPress writes): any length that is not the exact byte
    count, any trailing byte, raises."""
    data = text.encode("utf-8", "surrogateescape")

    def read(at: int) -> tuple[Any, int]:
        if data.startswith(b"N;", at):
            return None, at + 2
        scalar = re.compile(rb"([bid]):([^;]*);").match(data, at)
        if scalar:
            kind, raw = scalar.group(1), scalar.group(2).decode()
            value = {b"b": lambda r: {"0": False, "1": True}[r], b"i": int, b"d": float}[kind](raw)
            return value, scalar.end()
        head = re.compile(rb"([sa]):(\d+):").match(data, at)
        assert head, f"no value at {at}: {data[at : at + 20]!r}"
        size, at = int(head.group(2)), head.end()
        if head.group(1) == b"s":
            assert data[at : at + 1] == b'"' and data[at + 1 + size : at + 3 + size] == b'";', f"bad length at {at}"
            return data[at + 1 : at + 1 + size].decode("utf-8", "surrogateescape"), at + 3 + size
        assert data[at : at + 1] == b"{"
        at += 1
        array = {}
        for _ in range(size):
            key, at = read(at)
            assert isinstance(key, int | str)
            array[key], at = read(at)
        assert data[at : at + 1] == b"}"
        return array, at + 1

    value, end = read(0)
    assert end == len(data), "trailing bytes"
    return value


def strings_in(value: Any) -> list[str]:
    """Every string value in an unserialized value, a serialized string unserialized in turn (WordPress's double)."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, str) and re.match(r'(?:a:\d+:\{|s:\d+:")', value):
        return strings_in(php_unserialize(value))
    return [value] if isinstance(value, str) else []


def plain(value: str) -> str:
    """A JSON document's text with its escapes undone (what a reader of its strings sees); any other text as is."""
    try:
        return json.dumps(json.loads(value), ensure_ascii=False)
    except ValueError:
        return value


def mysql_quote(value: str) -> str:
    escapes = {"\0": "\\0", "\n": "\\n", "\r": "\\r", "\\": "\\\\", "'": "\\'", '"': '\\"', "\x1a": "\\Z"}
    return "'" + "".join(escapes.get(c, c) for c in value) + "'"


def mysql_rows(statement: str) -> list[list[tuple[str, Any]]]:
    """A strict parser of mysqldump's `INSERT INTO `t` VALUES (...),(...);`: each value as (its raw text, its value)."""
    head = re.compile(r"INSERT INTO `\w+` VALUES ").match(statement)
    assert head, statement[:60]
    at, rows = head.end(), []
    unescape = {"0": "\0", "n": "\n", "r": "\r", "t": "\t", "b": "\b", "Z": "\x1a"}
    while True:
        assert statement[at] == "(", f"no row at {at}"
        at += 1
        row = []
        while True:
            start = at
            binary = statement.startswith("_binary '", at)
            if binary:
                at += len("_binary ")
            if statement[at] == "'":
                at, chars = at + 1, []
                while statement[at] != "'":
                    if statement[at] == "\\":
                        chars.append(unescape.get(statement[at + 1], statement[at + 1]))
                        at += 2
                    else:
                        chars.append(statement[at])
                        at += 1
                at += 1
                value: Any = ("binary", "".join(chars)) if binary else "".join(chars)
            else:
                plain = re.compile(r"NULL|0x[0-9a-f]+|-?\d+(?:\.\d+)?").match(statement, at)
                assert plain, f"bad value at {at}: {statement[at : at + 20]!r}"
                at, value = plain.end(), None if plain.group() == "NULL" else plain.group()
            row.append((statement[start:at], value))
            if statement[at] == ")":
                break
            assert statement[at] == ",", f"no comma at {at}"
            at += 1
        rows.append(row)
        at += 1
        if statement[at:] == ";\n":
            return rows
        assert statement[at] == ",", f"no row separator at {at}"
        at += 1


# --- a WordPress site's tables ----------------------------------------------------------------------------------

POST_CONTENT = (
    f'<!-- wp:embed {{"url":"{OLD}","type":"video","providerNameSlug":"vimeo","responsive":true}} -->\n'
    f'<figure class="wp-block-embed is-type-video"><div class="wp-block-embed__wrapper">\n{OLD}\n</div></figure>\n'
    "<!-- /wp:embed -->\n\n"
    '<!-- wp:paragraph -->\n<p>It\'s "our" café — naïve\\path</p>\n<!-- /wp:paragraph -->\n\n'
    f"<!-- wp:html -->\n{IFRAME}\n<!-- /wp:html -->"
)
SETTINGS = {
    "source": {"url": OLD, "title": 'Café "Rêve"\nligne deux', "poster": "https://i.vimeocdn.com/video/1.jpg"},
    "start": 30,
    "ratio": 0.5625,
    "autoplay": True,
    "chapters": None,
    7: f"{OLD}#t=1m",
}
WIDGET = {2: {"title": "Vidéo à la une", "text": IFRAME}, "_multiwidget": 1}
JSON_META = json.dumps({"embed": OLD, "caption": "café", "nested": [{"src": OLD}]}).replace("/", "\\/")
MALFORMED = f'a:1:{{s:3:"url";s:10:"{OLD}";}}'  # the length is wrong: unserialize() refuses it
DOUBLE = php_serialize(php_serialize({"video": OLD, "titre": "Été"}))

TABLES: list[tuple[str, list[list[Any]]]] = [
    ("wp_posts", [[1, POST_CONTENT, "Hello 'world'", "publish"], [2, "No video here.\nJust text.", "Plain", "draft"]]),
    (
        "wp_postmeta",
        [
            [10, 1, "_video_settings", php_serialize(SETTINGS)],
            [11, 1, "_oembed_abc", IFRAME],
            [12, 1, "_double", DOUBLE],
            [13, 1, "_json", JSON_META],
            [14, 1, "_broken", MALFORMED],
            [15, 2, "_thumbnail_id", "42"],
        ],
    ),
    ("wp_options", [[100, "widget_custom_html", php_serialize(WIDGET), "yes"], [101, "blogname", "Mon blog", "yes"]]),
]


def mysql_dump() -> str:
    lines = ["-- MySQL dump 10.13  Distrib 8.0.36, for Linux (x86_64)\n", "/*!40101 SET NAMES utf8mb4 */;\n"]
    for table, rows in TABLES:
        lines.append(f"LOCK TABLES `{table}` WRITE;\n")
        for row in rows:  # one statement per row, so each changed row is a record of its own line
            literal = [str(v) if isinstance(v, int) else mysql_quote(v) for v in row]
            lines.append(f"INSERT INTO `{table}` VALUES ({','.join(literal)});\n")
        lines.append("UNLOCK TABLES;\n")
    lines.append(f"INSERT INTO `wp_blobs` VALUES (1,_binary '{OLD}',0x{OLD.encode().hex()});\n")
    return "".join(lines)


def run(container: Any, text: str, rewrite: Callable[[str], str]) -> tuple[str, list[tuple[int, str, str]], Any]:
    out: io.StringIO = io.StringIO()
    records: list[tuple[int, str, str]] = []
    counts = container.run(io.StringIO(text, newline=""), out, rewrite, lambda *r: records.append(r))
    return out.getvalue(), records, counts


def assert_records(source: str, result: str, records: list[tuple[int, str, str]]) -> None:
    """Each reported record is the source's lines from its number on, and splicing the new ones in gives the result."""
    lines = source.splitlines(keepends=True)
    spliced, at = [], 0
    for number, old, new in records:
        count = old.count("\n")
        assert "".join(lines[number - 1 : number - 1 + count]) == old
        spliced += [*lines[at : number - 1], new]
        at = number - 1 + count
    assert "".join(spliced + lines[at:]) == result


@pytest.mark.parametrize("new", [LONGER, SHORTER])
def test_a_mysql_dump_of_wordpress_tables_parses_back_with_every_serialized_value_valid(new: str) -> None:
    source = mysql_dump()
    result, records, counts = run(sql, source, toy(new))

    before = [line for line in source.splitlines(keepends=True) if line.startswith("INSERT")]
    after = [line for line in result.splitlines(keepends=True) if line.startswith("INSERT")]
    assert len(after) == len(before)
    for old_line, new_line in zip(before, after, strict=True):
        old_row, new_row = mysql_rows(old_line)[0], mysql_rows(new_line)[0]
        for (old_raw, old_value), (new_raw, new_value) in zip(old_row, new_row, strict=True):
            if old_raw.startswith("_binary") or old_raw.startswith("0x") or old_value == MALFORMED:
                assert new_raw == old_raw  # binary, hex and the malformed value: left alone
                continue
            if not isinstance(old_value, str) or OLD not in plain(old_value):
                assert new_raw == old_raw  # a value the rewrite does not change keeps its bytes
                continue
            assert isinstance(new_value, str) and OLD not in plain(new_value) and new in plain(new_value)
            if re.match(r'(?:a:\d+:\{|s:\d+:")', old_value):
                strings = strings_in(php_unserialize(new_value))
                assert strings == [s.replace(OLD, new) for s in strings_in(php_unserialize(old_value))]
                assert any(new in s for s in strings)
    # floats, booleans, nulls and int keys come back as they were; the strings as the toy rewrite makes them
    settings = mysql_rows(after[2])[0][3][1]
    source_fields = {key: text.replace(OLD, new) for key, text in SETTINGS["source"].items()}
    assert php_unserialize(settings) == {**SETTINGS, "source": source_fields, 7: f"{new}#t=1m"}
    assert f"d:{SETTINGS['ratio']!r};" in settings
    json_meta = mysql_rows(after[5])[0][3][1]  # PHP's style kept: \/ and \u00e9, as json_encode() writes them
    assert json_meta == JSON_META.replace(OLD.replace("/", "\\/"), json.dumps(new)[1:-1].replace("/", "\\/"))

    lines = source.splitlines()
    mentions = [n for n, line in enumerate(lines, 1) if OLD in line.replace("\\", "") and "_binary" not in line]
    changed_lines = [n for n in mentions if "_broken" not in lines[n - 1]]
    assert [number for number, _, _ in records] == changed_lines
    assert_records(source, result, records)
    assert counts.malformed_serialized == 1
    assert counts.serialized_fixed == 3  # the settings, the widget, the double-serialized meta
    assert counts.changed == len(changed_lines)  # one changed value a line here

    again, records_again, _ = run(sql, result, toy(new))
    assert again == result and records_again == []


def test_mysql_values_keep_their_escapes_and_a_dump_with_doubled_quotes_keeps_doubling() -> None:
    line = f"INSERT INTO `t` VALUES ('it''s {OLD}','a\\tb\\%\\_ {OLD}','{OLD}\\\\n');\n"
    result, records, counts = run(sql, line, toy(SHORTER))
    assert result == f"INSERT INTO `t` VALUES ('it''s {SHORTER}','a\tb\\\\%\\\\_ {SHORTER}','{SHORTER}\\\\n');\n"
    assert records == [(1, line, result)] and counts.values == 3 and counts.changed == 3


def test_a_statement_after_which_a_comment_holds_a_quote_does_not_swallow_the_next_lines() -> None:
    text = f"INSERT INTO `t` VALUES ('{OLD}'); -- don't\nCREATE TABLE `u` (a int);\nINSERT INTO `u` VALUES (1);\n"
    result, records, _ = run(sql, text, toy(SHORTER))
    assert result == text.replace(OLD, SHORTER, 1)
    assert [r[0] for r in records] == [1]


def pg_copy_escape(value: str) -> str:
    escapes = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f", "\v": "\\v"}
    return "".join(escapes.get(c, c) for c in value)


def pg_copy_unescape(field: str) -> str | None:
    if field == "\\N":
        return None
    names = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v", "\\": "\\"}
    return re.sub(r"\\(.)", lambda m: names[m.group(1)], field)


PG_HEADER = "--\n-- PostgreSQL database dump\n--\n\nSET standard_conforming_strings = on;\n"


def pg_copy_dump() -> str:
    lines = [PG_HEADER]
    for table, rows in TABLES:
        lines.append(f"\nCOPY public.{table} (id, a, b, c) FROM stdin;\n")
        for row in rows:
            lines.append("\t".join(pg_copy_escape(str(v)) for v in row) + "\t\\N\n")
        lines.append("\\.\n")
    return "".join(lines)


def pg_insert_dump() -> str:
    lines = [PG_HEADER]
    for table, rows in TABLES:
        for row in rows:
            literal = [str(v) if isinstance(v, int) else "'" + v.replace("'", "''") + "'" for v in row]
            lines.append(f"INSERT INTO public.{table} VALUES ({', '.join(literal)});\n")
    return "".join(lines)


def check_values(old_values: list[str], new_values: list[str], new: str) -> None:
    for old_value, new_value in zip(old_values, new_values, strict=True):
        if OLD not in plain(old_value) or old_value == MALFORMED:
            assert new_value == old_value
        elif re.match(r'(?:a:\d+:\{|s:\d+:")', old_value):
            strings = strings_in(php_unserialize(new_value))
            assert any(new in s for s in strings) and not any(OLD in s for s in strings)
        else:
            assert OLD not in plain(new_value) and new in plain(new_value)


@pytest.mark.parametrize("new", [LONGER, SHORTER])
def test_a_pg_dump_copy_dump_reads_back_field_by_field(new: str) -> None:
    source = pg_copy_dump()
    result, records, counts = run(sql, source, toy(new))

    def fields(text: str) -> list[str]:
        rows = [line for line in text.splitlines() if "\t" in line]
        return [f for row in rows for f in map(pg_copy_unescape, row.split("\t")) if f is not None]

    check_values(fields(source), fields(result), new)
    assert counts.malformed_serialized == 1 and counts.serialized_fixed == 3
    assert_records(source, result, records)
    mentions = [n for n, line in enumerate(source.splitlines(), 1) if OLD in line.replace("\\", "")]
    assert [n for n, _, _ in records] == [n for n in mentions if MALFORMED not in source.splitlines()[n - 1]]
    again, records_again, _ = run(sql, result, toy(new))
    assert again == result and records_again == []


@pytest.mark.parametrize("new", [LONGER, SHORTER])
def test_a_pg_dump_inserts_dump_with_raw_newlines_reads_back(new: str) -> None:
    source = pg_insert_dump()
    result, records, counts = run(sql, source, toy(new))

    def literals(text: str) -> list[str]:
        statements = re.findall(r"^INSERT INTO .*?\);$", text, re.MULTILINE | re.DOTALL)
        return [m.replace("''", "'") for s in statements for m in re.findall(r"'((?:[^']|'')*)'", s)]

    check_values(literals(source), literals(result), new)
    assert counts.malformed_serialized == 1
    assert_records(source, result, records)
    first_lines = [n for n, line in enumerate(source.splitlines(), 1) if line.startswith("INSERT")]
    assert {n for n, _, _ in records} <= set(first_lines)  # a record spanning lines is reported at its first
    assert any(old.count("\n") > 1 for _, old, _ in records)
    again, records_again, _ = run(sql, result, toy(new))
    assert again == result and records_again == []


def test_an_e_string_in_a_pg_dump_takes_backslash_escapes() -> None:
    text = PG_HEADER + f"INSERT INTO public.t VALUES (E'caf\\303\\251 \\'{OLD}\\'\\n', '{OLD}\\n');\n"
    result, _, counts = run(sql, text, toy(SHORTER))
    # pg_dump's own E'' style (appendStringLiteral): quotes and backslashes doubled, other characters raw
    statement = f"INSERT INTO public.t VALUES (E'caf\udcc3\udca9 ''{SHORTER}''\n', '{SHORTER}\\n');\n"
    assert result == PG_HEADER + statement
    assert "E'café" in statement.encode("utf-8", "surrogateescape").decode("utf-8")  # the octal bytes written raw
    assert counts.changed == 2


def wxr_export() -> str:
    meta = php_serialize(SETTINGS)
    content = f"{POST_CONTENT}\n<p>a ]]> inside</p>".replace("]]>", "]]]]><![CDATA[>")
    escaped = IFRAME.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return (
        '<?xml version="1.0" encoding="UTF-8" ?>\n'
        '<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"'
        ' xmlns:wp="http://wordpress.org/export/1.2/" xmlns:excerpt="http://wordpress.org/export/1.2/excerpt/">\n'
        "<channel>\n\t<title>Mon blog</title>\n"
        f"\t<description>{escaped}</description>\n"
        "\t<item>\n\t\t<title><![CDATA[Vidéo]]></title>\n"
        f"\t\t<content:encoded><![CDATA[{content}]]></content:encoded>\n"
        "\t\t<excerpt:encoded><![CDATA[]]></excerpt:encoded>\n"
        "\t\t<wp:postmeta>\n\t\t\t<wp:meta_key><![CDATA[_video_settings]]></wp:meta_key>\n"
        f"\t\t\t<wp:meta_value><![CDATA[{meta}]]></wp:meta_value>\n\t\t</wp:postmeta>\n"
        "\t\t<wp:postmeta>\n\t\t\t<wp:meta_key><![CDATA[_broken]]></wp:meta_key>\n"
        f"\t\t\t<wp:meta_value><![CDATA[{MALFORMED}]]></wp:meta_value>\n\t\t</wp:postmeta>\n"
        "\t</item>\n"
        "\t<item>\n\t\t<title><![CDATA[Sans vidéo]]></title>\n"
        "\t\t<content:encoded><![CDATA[No video.]]></content:encoded>\n\t</item>\n"
        "</channel>\n</rss>\n"
    )


@pytest.mark.parametrize("new", [LONGER, SHORTER])
def test_a_wxr_export_parses_back_with_its_serialized_meta_fixed(new: str) -> None:
    source = wxr_export()
    result, records, counts = run(wxr, source, toy(new))

    channel = ET.fromstring(result.encode()).find("channel")
    assert channel is not None
    assert new in (channel.findtext("description") or "") and OLD not in result.replace(MALFORMED, "")
    ns = {"content": "http://purl.org/rss/1.0/modules/content/", "wp": "http://wordpress.org/export/1.2/"}
    first, second = channel.findall("item")
    assert second.findtext("content:encoded", namespaces=ns) == "No video."
    content = first.findtext("content:encoded", namespaces=ns) or ""
    assert content == f"{POST_CONTENT}\n<p>a ]]> inside</p>".replace(OLD, new)
    metas = [m.text or "" for m in first.iterfind("wp:postmeta/wp:meta_value", ns)]
    assert php_unserialize(metas[0])["source"]["url"] == new
    assert metas[1] == MALFORMED and counts.malformed_serialized == 1
    assert [n for n, _, _ in records] == [5, 6]  # the description's line, and the first item from its <item> line
    assert source.splitlines()[5] == "\t<item>" and records[1][1].endswith("</item>\n")
    assert "Sans vidéo" in result and result.endswith(source[source.index("\t<item>\n\t\t<title><![CDATA[Sans") :])
    assert_records(source, result, records)
    again, records_again, _ = run(wxr, result, toy(new))
    assert again == result and records_again == []


# --- the value rules themselves -----------------------------------------------------------------------------------


def test_serialized_floats_objects_enums_and_references_are_copied_byte_for_byte() -> None:
    text = (
        "a:8:{i:0;d:0.1000000000000000055511151231257827;i:1;d:-INF;i:2;d:NAN;i:3;d:1.0E+25;"
        f's:1:"o";O:8:"stdClass":1:{{s:3:"url";s:{len(OLD)}:"{OLD}";}}'
        's:1:"c";C:11:"ArrayObject":21:{x:i:0;a:0:{};m:a:0:{}}'
        's:1:"e";E:11:"Suit:Hearts";s:1:"r";r:2;}'
    )
    new = phpserial.rewrite_serialized(text, toy(SHORTER))
    assert new == text.replace(f's:{len(OLD)}:"{OLD}"', f's:{len(SHORTER.encode())}:"{SHORTER}"')


def test_a_byte_that_is_not_utf8_counts_as_one_byte() -> None:
    text = f's:{len(OLD) + 1}:"\udce9{OLD}";'  # a Latin-1 é read with surrogateescape
    assert phpserial.rewrite_serialized(text, toy("x")) == 's:2:"\udce9x";'


@pytest.mark.parametrize(
    "text",
    [
        's:5:"abc";',
        'a:2:{i:0;s:1:"a";}',
        'a:1:{d:0.5;s:1:"a";}',
        's:3:"abc"',
        's:3:"abc";;',
        'a:1:{i:0;s:1:"a";',
        "a:1:{i:0;X:1;}",
        'O:3:"Foo":1:{s:1:"a";}',
        "a:1:{i:0;" * 300 + "N;" + "}" * 300,
    ],
)
def test_malformed_serialized_raises(text: str) -> None:
    assert phpserial.looks_serialized(text) or not text.endswith((";", "}"))
    with pytest.raises(phpserial.MalformedSerialized):
        phpserial.rewrite_serialized(text, toy("x"))


def test_what_looks_serialized() -> None:
    assert phpserial.looks_serialized('a:1:{i:0;s:1:"a";}')
    assert not phpserial.looks_serialized("i:5;")  # a scalar holds nothing to rewrite
    assert not phpserial.looks_serialized(f"see {OLD};")


def test_json_strings_keep_the_documents_escapes_and_keys() -> None:
    php_style = '{"url": "https:\\/\\/player.vimeo.com\\/video\\/76979871", "t": "caf\\u00e9",\n "https://x": 1}'
    new = jsonstrings.rewrite_json_strings(php_style, toy("https://é.tv/1"))
    assert new == '{"url": "https:\\/\\/\\u00e9.tv\\/1", "t": "caf\\u00e9",\n "https://x": 1}'
    raw = f'[ "{OLD}", "déjà" ]'
    assert jsonstrings.rewrite_json_strings(raw, toy("https://é.tv/1")) == '[ "https://é.tv/1", "déjà" ]'
    keyed = f'{{"{OLD}": "{OLD}"}}'
    assert jsonstrings.rewrite_json_strings(keyed, toy("n")) == f'{{"{OLD}": "n"}}'


def test_a_value_that_did_not_change_is_the_same_object_and_is_counted() -> None:
    counts = values.Counts()
    text = "nothing to see"
    assert values.rewrite_value(text, toy("x"), counts) is text
    assert values.rewrite_value(MALFORMED, toy("x"), counts) is MALFORMED
    inner_broken = php_serialize({"v": MALFORMED, "u": OLD})
    fixed = values.rewrite_value(inner_broken, toy("x"), counts)
    assert php_unserialize(fixed) == {"v": MALFORMED, "u": "x"}
    assert counts == values.Counts(values=3, changed=1, serialized_fixed=1, malformed_serialized=2)


def test_the_registry_runs_the_sql_and_wxr_containers() -> None:
    from migrator_cli.rewrite.containers import container

    for kind, text in (("sql", mysql_dump()), ("wxr", wxr_export())):
        out = io.StringIO()
        container(kind)(io.StringIO(text, newline=""), out, toy(SHORTER), lambda *_: None)
        assert out.getvalue() == run(sql if kind == "sql" else wxr, text, toy(SHORTER))[0]


def test_a_lone_carriage_return_does_not_end_a_line_and_an_open_literal_at_the_end_is_left() -> None:
    text = f"-- a\r comment\nINSERT INTO `t` VALUES ('{OLD}');\nINSERT INTO `t` VALUES ('{OLD}\\n\n"
    result, records, _ = run(sql, text, toy(SHORTER))
    assert result == text.replace(OLD, SHORTER, 1)  # the file ends inside the second literal: written as it was
    assert [r[0] for r in records] == [2]


def test_no_backslash_escapes_and_two_statements_on_a_line() -> None:
    text = (
        "/*!40101 SET SQL_MODE='NO_BACKSLASH_ESCAPES' */;\n"
        f"INSERT INTO `t` VALUES ('a\\b {OLD}'); INSERT INTO `t` VALUES ('{OLD}''s');\n"
    )
    result, _, counts = run(sql, text, toy(SHORTER))
    assert result.splitlines()[1] == (
        f"INSERT INTO `t` VALUES ('a\\b {SHORTER}'); INSERT INTO `t` VALUES ('{SHORTER}''s');"
    )
    assert counts.changed == 2


def test_copy_fields_keep_nulls_and_octal_bytes_and_are_escaped_as_pg_dump_does() -> None:
    text = PG_HEADER + f"COPY public.t (a, b, c) FROM stdin;\n\\N\tcaf\\303\\251\t{OLD}\\ttab\\\\\n\\.\n"
    result, records, _ = run(sql, text, toy(f"{SHORTER}\n"))
    assert result == PG_HEADER + (
        f"COPY public.t (a, b, c) FROM stdin;\n\\N\tcaf\\303\\251\t{SHORTER}\\n\\ttab\\\\\n\\.\n"
    )
    assert [r[0] for r in records] == [PG_HEADER.count("\n") + 2]


_PIECES = ["a", "é", "\n", '"', ";", "}", "{", ":", "s:1:", "\U0001f3ac", "\udce9", OLD]  # \udce9: a non-UTF-8 byte
_TEXTS = st.lists(st.sampled_from(_PIECES), max_size=6)
_PHP = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXTS.map(lambda t: "".join(t)),
    lambda inner: st.dictionaries(st.integers() | _TEXTS.map(lambda t: "".join(t)), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(_PHP, st.sampled_from([LONGER, SHORTER, ""]))
def test_any_serialized_value_unserializes_after_a_rewrite_to_what_the_rewrite_makes(value: Any, new: str) -> None:
    def expected(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: expected(x) for k, x in v.items()}
        return v.replace(OLD, new) if isinstance(v, str) else v

    text = php_serialize(value)
    if not phpserial.looks_serialized(text):
        return  # a scalar: nothing a container would hand to phpserial
    assert php_unserialize(phpserial.rewrite_serialized(text, toy(new))) == expected(value)


def test_whitespace_around_a_serialized_value_is_kept_as_wordpress_trims_it() -> None:
    text = f'\n a:1:{{i:0;s:{len(OLD)}:"{OLD}";}} \n'
    assert phpserial.looks_serialized(text)
    assert phpserial.rewrite_serialized(text, toy("x")) == '\n a:1:{i:0;s:1:"x";} \n'


_SQL_PIECES = [
    "a",
    "é",
    "\n",
    "\r",
    "\t",
    "\\",
    "'",
    '"',
    "\0",
    "\x1a",
    "%",
    "_",
    ";",
    "(",
    ")",
    ",",
    "\U0001f3ac",
    OLD,
]
_SQL_TEXTS = st.lists(st.sampled_from(_SQL_PIECES), max_size=8).map("".join)
_SQL_VALUES = _SQL_TEXTS | _PHP.filter(lambda v: isinstance(v, dict)).map(php_serialize)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(_SQL_VALUES, min_size=1, max_size=3), min_size=1, max_size=3), st.sampled_from(_SQL_PIECES))
def test_any_values_come_back_from_each_dump_style_as_the_rewrite_makes_them(rows: list[list[str]], extra: str) -> None:
    new = f"{SHORTER}{extra}"  # the rewritten text may hold what each style must escape

    def expected(value: str) -> str:
        if re.match(r"a:\d+:\{", value):
            return php_serialize(_mapped(php_unserialize(value), new))
        return value.replace(OLD, new)

    mysql = "".join(f"INSERT INTO `t` VALUES ({','.join(map(mysql_quote, row))});\n" for row in rows)
    result = run(sql, mysql, toy(new))[0]
    got = [[v for _, v in mysql_rows(line)[0]] for line in result.splitlines(keepends=True)]
    assert got == [[expected(v) for v in row] for row in rows]

    copy = PG_HEADER + "COPY public.t (a) FROM stdin;\n"
    copy += "".join("\t".join(map(pg_copy_escape, row)) + "\n" for row in rows) + "\\.\n"
    result = run(sql, copy, toy(new))[0]
    body = result[len(PG_HEADER) :].splitlines()[1:-1]
    assert [[pg_copy_unescape(f) for f in line.split("\t")] for line in body] == [
        [expected(v) for v in r] for r in rows
    ]

    inserts = PG_HEADER + "".join(
        "INSERT INTO public.t VALUES (" + ", ".join("'" + v.replace("'", "''") + "'" for v in row) + ");\n"
        for row in rows
    )
    result = run(sql, inserts, toy(new))[0][len(PG_HEADER) :]
    assert result == "".join(
        "INSERT INTO public.t VALUES (" + ", ".join("'" + expected(v).replace("'", "''") + "'" for v in row) + ");\n"
        for row in rows
    )


def _mapped(value: Any, new: str) -> Any:
    if isinstance(value, dict):
        return {k: _mapped(v, new) for k, v in value.items()}
    return value.replace(OLD, new) if isinstance(value, str) else value


_XML_PIECES = ["a", "é", "\n", "]]>", "]", ">", "<", "&", "&amp;", '"', "\U0001f3ac", OLD]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_XML_PIECES), max_size=8).map("".join), min_size=1, max_size=3))
def test_any_cdata_or_escaped_text_comes_back_through_an_xml_parser(contents: list[str]) -> None:
    new = f"{SHORTER}]]><&"  # a rewrite that writes what CDATA and XML text must escape

    def item(content: str) -> str:
        cdata = "<![CDATA[" + content.replace("]]>", "]]]]><![CDATA[>") + "]]>"
        text = content.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return f"\t<item>\n\t\t<content:encoded>{cdata}</content:encoded>\n\t\t<title>{text}</title>\n\t</item>\n"

    ns = "http://purl.org/rss/1.0/modules/content/"
    source = f'<rss xmlns:content="{ns}">\n<channel>\n{"".join(map(item, contents))}</channel>\n</rss>\n'
    result, records, _ = run(wxr, source, toy(new))
    items = ET.fromstring(result).findall("channel/item")
    assert [i.findtext(f"{{{ns}}}encoded") for i in items] == [c.replace(OLD, new) for c in contents]
    assert [i.findtext("title") for i in items] == [c.replace(OLD, new) for c in contents]
    assert_records(source, result, records)


class _Watched(io.StringIO):
    """A source that says how much of it has been read, to a sink that notes it at each write."""

    def __init__(self, text: str) -> None:
        super().__init__(text, newline="")
        self.read_so_far = 0

    def read(self, size: int | None = -1, /) -> str:
        block = super().read(size)
        self.read_so_far += len(block)
        return block


@pytest.mark.parametrize("container", [sql, wxr])
def test_records_are_written_while_the_file_is_still_being_read(container: Any) -> None:
    if container is sql:
        text = "".join(f"INSERT INTO `t` VALUES ({n},'{OLD} {'x' * 200}');\n" for n in range(5000))
    else:
        item = f"\t<item>\n\t\t<content:encoded><![CDATA[{OLD} {'x' * 200}]]></content:encoded>\n\t</item>\n"
        text = "<rss><channel>\n" + item * 5000 + "</channel></rss>\n"
    src = _Watched(text)
    read_at_writes: list[int] = []

    class Sink(io.StringIO):
        def write(self, s: str, /) -> int:
            read_at_writes.append(src.read_so_far)
            return super().write(s)

    sink = Sink()
    container.run(src, sink, toy(SHORTER), lambda *_: None)
    assert sink.getvalue() == text.replace(OLD, SHORTER)
    assert read_at_writes[0] < 200_000 < len(text)  # the first record went out after a block or two, not the file


def test_escaped_text_keeps_its_quote_entities() -> None:
    text = f"<description>&lt;iframe src=&quot;{OLD}&quot; title=&#039;a&#039;&gt;</description>\n"
    result = run(wxr, text, toy(f'{SHORTER}" x="'))[0]
    assert result == (
        f"<description>&lt;iframe src=&quot;{SHORTER}&quot; x=&quot;&quot; title=&#039;a&#039;&gt;</description>\n"
    )
