"""The text, JSON and CSV containers and the kind of each file: byte for byte outside what a rewrite changed, an embed
seen whole across a window's edge, a JSON string in its file's style, a CSV cell in its quoting. The rewrite is a
toy (a fake embed element replaced), so these hold whatever the engine does."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from migrator_cli.rewrite import files
from migrator_cli.rewrite.containers import ContainerError, container, csvcolumn, jsontext, lines, text

pytestmark = pytest.mark.unit

FAKE = re.compile(r'<fake-embed id="(\w+)">.*?</fake-embed>', re.S)


def toy(value: str) -> str:
    return FAKE.sub(lambda m: f'<new-embed id="{m[1]}" src="https://new.example/{m[1]}"></new-embed>', value)


def toy_spans(value: str) -> list[tuple[int, int]]:
    return [m.span() for m in FAKE.finditer(value)]


def stream(run, data: str, rewrite=toy, **options) -> tuple[str, list[tuple[int, str, str]]]:
    """What `run` writes for `data`, and the records it said changed."""
    changes: list[tuple[int, str, str]] = []
    out = io.StringIO(newline="")
    run(io.StringIO(data, newline=""), out, rewrite, lambda *c: changes.append(c), **options)
    return out.getvalue(), changes


def encoded(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


# -- lines and the map of containers


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("", []),
        ("a", ["a"]),
        ("a\n", ["a\n"]),
        ("a\r\nb\rc\n\nd", ["a\r\n", "b\rc\n", "\n", "d"]),
        ("x" * 10 + "\n" + "y" * 7, ["x" * 10 + "\n", "y" * 7]),
    ],
)
def test_lines_end_at_newline_only_and_lose_nothing(data: str, expected: list[str]) -> None:
    assert list(lines(io.StringIO(data, newline=""), size=3)) == expected


def test_a_csv_container_needs_its_column_and_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ContainerError, match="name the column"):
        container("csv")
    with pytest.raises(ContainerError, match="no container for 'zip'"):
        container("zip")


# -- text


@pytest.mark.parametrize(
    "raw",
    [
        b"<p>hello</p>\r\n<p>crlf</p>\r\n",
        b"no trailing newline",
        b"latin-1 \xe9t\xe9 and a lone \xff byte\n<fake-embed",
        b"\xef\xbb\xbfbom first\n\n\n",
        b"",
        b"old mac\rline ends\r",
    ],
)
def test_text_without_embeds_is_written_back_byte_for_byte(raw: bytes) -> None:
    out, changes = stream(text.run, encoded(raw))
    assert out.encode("utf-8", "surrogateescape") == raw
    assert changes == []


def test_a_small_file_is_one_record_with_its_first_line() -> None:
    data = 'a\r\nb\r\n<fake-embed id="v1">\r\nx\r\n</fake-embed>\r\nz'
    out, changes = stream(text.run, data)
    assert out == toy(data)
    assert changes == [(1, data, toy(data))]


def test_an_embed_straddling_a_window_is_rewritten_whole_and_every_byte_once() -> None:
    filler = "".join(f"<p>line {n}</p>\n" for n in range(400))  # about 6 KB
    embed = '<fake-embed id="v9">\n' + "".join(f"  <param n={n}>\n" for n in range(40)) + "</fake-embed>\n"
    data = filler + embed + filler + '<fake-embed id="v2"></fake-embed>\n' + filler
    windows = {"window": len(filler) + 300, "hold": 1024}  # the first cut falls 300 bytes into the 600-byte embed
    cut_blind, _ = stream(text.run, data, locate=lambda _: [], **windows)
    assert 'id="v9" src=' not in cut_blind and 'id="v2" src=' in cut_blind  # the test's windows do straddle it
    calls: list[str] = []

    def counted(value: str) -> str:
        calls.append(value)
        return toy(value)

    out, changes = stream(text.run, data, counted, locate=toy_spans, **windows)
    assert out == toy(data)
    assert "".join(calls) == data  # each character rewritten once
    assert len(calls) >= 3
    assert next(old for _, old, _ in changes if "v9" in old).count("<fake-embed") == 1
    for first_line, old, _ in changes:  # each record's line number is where it starts
        assert data.split("\n")[first_line - 1] == old.split("\n")[0]
    assert sum(old.count("\n") for _, old, _ in changes) < data.count("\n")  # unchanged records not reported


def test_a_file_of_one_long_line_is_one_record() -> None:
    data = "x" * 5000 + '<fake-embed id="v3"></fake-embed>' + "y" * 5000
    out, changes = stream(text.run, data, locate=toy_spans, window=1024, hold=256)
    assert out == toy(data)
    assert len(changes) == 1


def test_the_default_locator_reads_the_source_forms() -> None:
    assert text.embed_spans("nothing here at all\n") == []


# -- JSON


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # keys are not rewritten; values are, anywhere; spacing kept
        (
            '{"<fake-embed id=\\"k\\"></fake-embed>" :  "<fake-embed id=\\"v\\"></fake-embed>"}\n',
            '{"<fake-embed id=\\"k\\"></fake-embed>" :  "<new-embed id=\\"v\\" src=\\"https://new.example/v\\">'
            '</new-embed>"}\n',
        ),
        # slashes escaped in the literal itself: escaped in the new one
        (
            '["<fake-embed id=\\"a\\"><\\/fake-embed>"]',
            '["<new-embed id=\\"a\\" src=\\"https:\\/\\/new.example\\/a\\"><\\/new-embed>"]',
        ),
        # ensure_ascii: non-ASCII as \\u escapes, in the literal's hex case
        (
            '["caf\\u00E9 <fake-embed id=\\"b\\"></fake-embed> \\u00FC"]',
            '["caf\\u00E9 <new-embed id=\\"b\\" src=\\"https://new.example/b\\"></new-embed> \\u00FC"]',
        ),
        # raw UTF-8 kept raw
        (
            '["café <fake-embed id=\\"c\\"></fake-embed>"]',
            '["café <new-embed id=\\"c\\" src=\\"https://new.example/c\\"></new-embed>"]',
        ),
        # HTML characters as \\u003c (Rails, JSON_HEX_TAG), and the quote as \\u0022 stays a short escape
        (
            '{"body": "\\u003cfake-embed id=\\"d\\"\\u003e\\u003c/fake-embed\\u003e"}',
            '{"body": "\\u003cnew-embed id=\\"d\\" src=\\"https://new.example/d\\"\\u003e\\u003c/new-embed\\u003e"}',
        ),
    ],
)
def test_a_json_string_is_rewritten_in_its_own_style(raw: str, expected: str) -> None:
    out, changes = stream(jsontext.run, raw)
    assert out == expected
    assert changes == [(1, raw, expected)]


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        ('"https:\\/\\/old.example\\/x", "caf\\u00e9"', '"https:\\/\\/new.example\\/vid\\u00e9o"'),
        ('"https://old.example/x", "café"', '"https://new.example/vidéo"'),
        ('"plain"', '"https://new.example/vidéo"'),
    ],
)
def test_a_literal_showing_no_style_takes_the_one_its_file_showed_before(before: str, expected: str) -> None:
    raw = f'[{before},\n "VIDEO"]\n'
    out, _ = stream(jsontext.run, raw, lambda v: v.replace("VIDEO", "https://new.example/vidéo"))
    assert out == f"[{before},\n {expected}]\n"


def test_json_lines_are_records_and_the_rest_is_byte_for_byte() -> None:
    rows = [
        '{"id": 1, "html": "<p>none</p>"}\r\n',
        '{"id": 2, "html": "<fake-embed id=\\"f\\"></fake-embed>"}\r\n',
        '{"id": 3, "bad": "unterminated <fake-embed id=\\"g\\"></fake-embed>\r\n',
        '  {"id": 4,   "html": "\\u00e9"}',
    ]
    raw = "".join(rows)
    out, changes = stream(jsontext.run, raw)
    assert out.split("\r\n")[0] + "\r\n" == rows[0]
    assert out.split("\r\n")[2] + "\r\n" == rows[2]  # not a literal: left alone
    assert out.endswith(rows[3])
    assert json.loads(out.split("\r\n")[1])["html"] == toy('<fake-embed id="f"></fake-embed>')
    assert len(changes) == 1 and changes[0][0] == 1


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": [1, 2.5e3, true, null, "\\u00e9\\/x"],\r\n  "b" : {}}',
        b'["\xff\xfe invalid utf-8", "\\ud83d\\ude00"]\n',
        b'not json at all " quote\n',
        b"",
    ],
)
def test_json_without_embeds_is_written_back_byte_for_byte(raw: bytes) -> None:
    out, changes = stream(jsontext.run, encoded(raw))
    assert out.encode("utf-8", "surrogateescape") == raw
    assert changes == []


def test_a_json_record_is_never_cut_between_a_literal_and_its_colon(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsontext, "BATCH", 10)
    raw = '{"<fake-embed id=\\"k\\"></fake-embed>"\n\n   : "<fake-embed id=\\"v\\"></fake-embed>"}\n'
    out, changes = stream(jsontext.run, raw)
    assert '"<fake-embed id=\\"k\\"></fake-embed>"' in out  # the key, untouched
    assert "new.example/v" in out
    assert len(changes) == 1


@pytest.mark.parametrize(
    ("value", "style", "expected"),
    [
        ("a/b", jsontext.Style(slash=True), '"a\\/b"'),
        ("a/b", jsontext.Style(slash=False), '"a/b"'),
        ("é😀", jsontext.Style(ascii=True), '"\\u00e9\\ud83d\\ude00"'),
        ("é😀", jsontext.Style(ascii=True, upper_hex=True), '"\\u00E9\\uD83D\\uDE00"'),
        ('q"\\\n\t\x01', jsontext.Style(), '"q\\"\\\\\\n\\t\\u0001"'),
        ("<&>", jsontext.Style(escaped={"<", ">"}), '"\\u003c&\\u003e"'),
    ],
)
def test_json_encoding_by_style(value: str, style: jsontext.Style, expected: str) -> None:
    assert jsontext.encode(value, style) == expected
    assert json.loads(expected) == value


# -- CSV


def csv_run(column: str):
    return csvcolumn.factory(column)


def test_only_the_column_is_rewritten_and_its_quoting_kept() -> None:
    raw = (
        'id,"body",note\r\n'
        '1,"<fake-embed id=""a""></fake-embed>","x, ""y"""\r\n'
        '2,plain <fake-embed id="b"></fake-embed>,<fake-embed id="n"></fake-embed>\r\n'
        '3,"multi\r\nline <fake-embed id=""c"">\r\n</fake-embed>",  "kept"  \r\n'
        "4,,\r\n"
        "5"
    )
    out, changes = stream(csv_run("body"), raw)
    lines_out = out.split("\r\n")
    assert lines_out[0] == 'id,"body",note'
    assert lines_out[1] == ('1,"<new-embed id=""a"" src=""https://new.example/a""></new-embed>","x, ""y"""')
    # an unquoted cell whose new value needs quotes gets them; the note column is not touched
    assert lines_out[2] == (
        '2,"plain <new-embed id=""b"" src=""https://new.example/b""></new-embed>",<fake-embed id="n"></fake-embed>'
    )
    assert out.endswith('",  "kept"  \r\n4,,\r\n5')
    assert [first for first, _, _ in changes] == [2, 3, 4]
    parsed = list(csv.reader(io.StringIO(out, newline="")))
    assert parsed[3][1] == toy('multi\r\nline <fake-embed id="c">\r\n</fake-embed>')


@pytest.mark.parametrize(
    "raw",
    [
        "name;url\n" + 'one;"https://a.example/<fake-embed id=""s""></fake-embed>"\n',
        "name\turl\n" + 'one\t<fake-embed id="t"></fake-embed>\n',
    ],
)
def test_the_dialect_is_sniffed(raw: str) -> None:
    out, changes = stream(csv_run("url"), raw)
    assert len(changes) == 1
    delimiter = ";" if ";" in raw else "\t"
    assert out.split("\n")[1].split(delimiter)[0] == "one"
    assert "new.example" in out.split("\n")[1]


def test_a_missing_column_names_the_columns_there_are() -> None:
    with pytest.raises(ContainerError, match=r"no column 'html'; the columns are: id, body, note"):
        stream(csv_run("html"), '\ufeff"id",body,note\n1,2,3\n')
    out, changes = stream(csv_run("id"), '\ufeff"id",body\n<fake-embed id="i"></fake-embed>,2\n')
    assert out.startswith('\ufeff"id",body\n"<new-embed') and len(changes) == 1


def test_a_csv_without_changes_is_byte_for_byte() -> None:
    raw = encoded(b'\xef\xbb\xbfid,body\r\n1,"a ""quoted"", \xff cell"\r\n2,"x\ny"\r\n3,last')
    out, changes = stream(csv_run("body"), raw)
    assert out == raw and changes == []


# -- the kind of a file


@pytest.mark.parametrize(
    ("name", "head", "column", "kind", "reason"),
    [
        ("index.html", b"<html>", None, "text", ""),
        ("post.mdx", b"# x", None, "text", ""),
        ("page.twig", b"{{ x }}", None, "text", ""),
        ("App.tsx", b"export", None, "text", ""),
        ("data.json", b"{}", None, "json", ""),
        ("feed.ndjson", b"{}\n{}", None, "json", ""),
        ("dump.sql", b"INSERT", None, "sql", ""),
        ("dump.sql.gz", b"\x1f\x8b\x08\x00", None, None, files.COMPRESSED),
        ("site.zip", b"PK", None, None, files.COMPRESSED),
        ("export.xml", b'<rss version="2.0" xmlns:wp="http://wordpress.org/export/1.2/">', None, "wxr", ""),
        ("sitemap.xml", b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">', None, "text", ""),
        ("videos.csv", b"id,url", "url", "csv", ""),
        ("videos.csv", b"id,url", None, "text", ""),
        ("videos.TSV", b"id\turl", "url", "csv", ""),
        ("logo.png", b"\x89PNG", None, None, files.BINARY_TYPE),
        ("font.woff2", b"wOF2", None, None, files.BINARY_TYPE),
        ("clip.mp4", b"\0\0\0 ftyp", None, None, files.BINARY_TYPE),
        ("segment.ts", b"G@\x11\x10\0B", None, None, files.BINARY_CONTENT),
        ("notes.txt", "utf-16".encode("utf-16"), None, None, files.BINARY_CONTENT),
        ("Makefile", b"all:\n\techo", None, "text", ""),
        (".htaccess", b"Redirect", None, "text", ""),
        ("settings.conf2", "clé = vidéo\n".encode(), None, "text", ""),
        ("blob.xyz", b"\xff\xfe\xfa garbage", None, None, files.NOT_UTF8),
        ("legacy.html", b"caf\xe9", None, "text", ""),  # a known text type need not be UTF-8
    ],
)
def test_the_kind_of_a_file(name: str, head: bytes, column: str | None, kind: str | None, reason: str) -> None:
    assert files.classify(name, head, column) == (kind, reason)
    assert files.kind_of(name, head, column) == kind


def test_a_utf8_character_cut_by_the_head_is_still_text() -> None:
    head = ("a" * 10 + "é").encode()[:-1]
    assert files.is_utf8(head)
    assert not files.is_utf8(b"\xe9abc")


@pytest.mark.parametrize(
    ("row", "dialect"),
    [
        ('a,"b,c","d ""e""",,"",f\r\n', csvcolumn.Dialect()),
        ('"multi\nline",x\n', csvcolumn.Dialect()),
        ('"q" tail,x', csvcolumn.Dialect()),
        ("a;'b;c';'it''s'\n", csvcolumn.Dialect(delimiter=";", quote="'")),
        ('a, "b, c",  d\n', csvcolumn.Dialect(skip_space=True)),
        ('a,"b \\" c",d\\,e\n', csvcolumn.Dialect(escape="\\")),
        ("a\tb c\t\t\n", csvcolumn.Dialect(delimiter="\t")),
    ],
)
def test_cells_are_read_as_the_csv_module_reads_them(row: str, dialect: csvcolumn.Dialect) -> None:
    reader = csv.reader(
        io.StringIO(row, newline=""),
        delimiter=dialect.delimiter,
        quotechar=dialect.quote,
        escapechar=dialect.escape,
        doublequote=dialect.escape is None,
        skipinitialspace=dialect.skip_space,
    )
    found = csvcolumn.cells(row, dialect)
    assert [cell.value for cell in found] == next(reader)
    body = row.rstrip("\r\n")
    assert dialect.delimiter.join(body[c.start : c.end] for c in found) == body  # spans tile the row


def test_the_source_forms_keep_a_multi_line_vimeo_iframe_whole_across_a_window() -> None:
    iframe = (
        '<iframe src="https://player.vimeo.com/video/76979871?h=8272103f6e"\n'
        ' frameborder="0" allow="autoplay; fullscreen" allowfullscreen\n'
        ' style="position:absolute;top:0;left:0;width:100%;height:100%;"></iframe>'
    )
    filler = "".join(f"<p>line {n}</p>\n" for n in range(400))
    data = filler + '<div style="padding:56.25% 0 0 0;position:relative;">' + iframe + "</div>\n" + filler
    assert text.embed_spans(data) != []
    out, _ = stream(
        text.run, data, lambda value: value.replace(iframe, "<NEW/>"), window=data.index(iframe) + 80, hold=1024
    )
    assert out == data.replace(iframe, "<NEW/>")
