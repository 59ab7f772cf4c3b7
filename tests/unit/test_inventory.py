"""Inventory reading for `migrator load`: rows, their line numbers, the reasons bad rows are bad, repeats, S3 ids.

Long (about 700 lines, 50 tests) as a table of bad inputs is long: each test is one kind of row and the
reason it is refused with, and stands alone."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from migrator.messages import (
    ALLOWED_SCHEMES,
    MAX_BODY_BYTES,
    AssetMessage,
    encode_message,
    id_problem,
    parse_message,
)
from migrator.row_extras import Collection
from migrator_cli.errors import CliError
from migrator_cli.inventory import (
    MAX_LINE_BYTES,
    BadRow,
    CsvLines,
    Deduper,
    Meter,
    Row,
    RowTooLong,
    Skipped,
    format_of,
    is_video_key,
    parse_s3_source,
    read_inventory,
    s3_asset_id,
    s3_record,
)
from migrator_cli.load import SourceBucket, load_inventory
from migrator_cli.main import main
from migrator_cli.sender import MAX_BATCH_BYTES, split_batches

# What a row with an ftp:// source_url is told: every scheme the queue takes (each source platform's included).
FTP_REFUSED = f"source_url scheme 'ftp' is not one of {', '.join(ALLOWED_SCHEMES)}"
URL = "https://media.example.com/a.mp4"


def write(tmp_path, name: str, content: str | bytes):
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return str(path)


def records(tmp_path, name: str, content: str | bytes, **kwargs) -> list:
    return list(read_inventory(write(tmp_path, name, content), **kwargs))


def by_line(rows: list) -> dict:
    return {r.line: r for r in rows}


# --- CSV -----------------------------------------------------------------------------------


def test_csv_row_with_every_column(tmp_path):
    (row,) = records(
        tmp_path, "inv.csv", "id,source_url,title,duration_s,metadata\nlib/1," + URL + ',Intro,61.5,"{""season"": 1}"\n'
    )
    assert row == Row(2, AssetMessage("lib/1", URL, "Intro", 61.5, {"season": 1}))


def test_csv_line_numbers_count_physical_lines_of_quoted_fields_and_blank_lines(tmp_path):
    content = (
        "id,source_url,title\n"
        f'a,{URL},"a title\nspread over\nthree lines"\n'  # lines 2-4
        "\n"  # line 5
        f"b,{URL},\n"  # line 6
        "  \n"  # line 7: only blanks
        "c,ftp://x/c.mp4,\n"  # line 8
    )
    rows = records(tmp_path, "inv.csv", content)
    assert [(type(r).__name__, r.line) for r in rows] == [("Row", 2), ("Row", 6), ("BadRow", 8)]
    assert rows[0].message.title == "a title\nspread over\nthree lines"


def test_csv_with_bom_crlf_and_column_names_in_any_case(tmp_path):
    content = f"\ufeffID, Source_URL ,Title\r\na,{URL},A\r\nb,{URL},\r\n"
    rows = records(tmp_path, "inv.csv", content)
    assert rows == [Row(2, AssetMessage("a", URL, "A")), Row(3, AssetMessage("b", URL))]


def test_csv_empty_optional_cells_are_absent_and_short_rows_lack_them(tmp_path):
    rows = records(tmp_path, "inv.csv", f"id,source_url,title,duration_s,metadata\na,{URL},,,\nb,{URL}\n")
    assert [r.message for r in rows] == [AssetMessage("a", URL), AssetMessage("b", URL)]
    assert json.loads(encode_message(rows[0].message)) == {"id": "a", "source_url": URL}


def test_csv_duration_accepts_integers_and_decimals(tmp_path):
    rows = records(tmp_path, "inv.csv", f"id,source_url,duration_s\na,{URL},12\nb,{URL},0.25\n")
    assert [r.message.duration_s for r in rows] == [12.0, 0.25]


@pytest.mark.parametrize(
    ("cells", "reason"),
    [
        (f",{URL}", "id is empty"),
        (f"#pacer,{URL}", "id may not start with '#' (reserved)"),
        (
            "a,ftp://x.example/a.mp4",
            FTP_REFUSED,
        ),
        ("a,", "source_url is empty"),
        ("a,s3://bucket", "s3 source_url has no object key"),
        (f"a,{URL},,abc", "duration_s 'abc' is not a number"),
        (f"a,{URL},,-1", "duration_s must be between 0 and 10,000,000 seconds"),
        (f"a,{URL},,nan", "duration_s 'nan' is not a number"),
        (f"a,{URL},,inf", "duration_s 'inf' is not a number"),
        (f"a,{URL},,,{{oops", "metadata '{oops' is not valid JSON"),
        (f'a,{URL},,,"[1, 2]"', "metadata must be an object"),
        (f"a,{URL},{'t' * 513}", "title must be a string of at most 512 characters"),
        (f"a,{URL},,,,extra", "row has 6 cells, the header has 5"),
    ],
)
def test_csv_bad_rows_say_why(tmp_path, cells, reason):
    content = f"id,source_url,title,duration_s,metadata\ngood,{URL}\n{cells}\ngood2,{URL}\n"
    rows = records(tmp_path, "inv.csv", content)
    assert [type(r) for r in rows] == [Row, BadRow, Row]
    assert rows[1].line == 3
    assert rows[1].reason == reason


def test_csv_unclosed_quote_on_the_last_row_is_a_bad_row_not_a_good_one(tmp_path):
    # Without strict parsing the csv module takes the row as complete, quote and all.
    content = f'id,source_url\na,{URL}\nx,"https://a.example/v.mp4'
    for ending in ("", "\n"):
        rows = records(tmp_path, "inv.csv", content + ending)
        assert rows[0] == Row(2, AssetMessage("a", URL))
        assert [type(r) for r in rows] == [Row, BadRow]
        assert rows[1].line == 3
        assert rows[1].reason.startswith("CSV cannot be read here: unclosed quote")


def test_csv_stray_quote_mid_file_is_reported_on_its_line_and_names_the_lines_it_swallowed(tmp_path):
    content = (
        "id,source_url,title\n"
        f"a,{URL},A\n"  # line 2
        f'b,{URL},"Bad title\n'  # line 3: the quote opens here...
        f"c,{URL},C\n"  # line 4
        f'd,{URL},"D" and more\n'  # line 5: ...and closes here, followed by text
        f"e,{URL},E\n"  # line 6
        f'f,{URL},"F" x\n'  # line 7: text after a closing quote on one line
        f"g,{URL},G\n"  # line 8
    )
    rows = records(tmp_path, "inv.csv", content)
    assert [(type(r).__name__, r.line) for r in rows] == [
        ("Row", 2),
        ("BadRow", 3),
        ("Row", 6),
        ("BadRow", 7),
        ("Row", 8),
    ]
    assert rows[1].reason == (
        "CSV cannot be read here: text after a closing quote (',' expected after '\"');"
        " lines 3-5 were read as one row (a quote that opens on line 3 closes only on line 5), none of them loaded"
    )
    assert rows[3].reason == "CSV cannot be read here: text after a closing quote (',' expected after '\"')"


def test_csv_unclosed_quote_mid_file_says_it_swallowed_the_rest(tmp_path):
    content = f'id,source_url,title\na,{URL},A\nb,{URL},"B\nc,{URL},C\nd,{URL},D\n'
    rows = records(tmp_path, "inv.csv", content)
    assert rows == [
        Row(2, AssetMessage("a", URL, "A")),
        BadRow(
            3,
            "CSV cannot be read here: unclosed quote (the file ends inside a quoted cell);"
            " lines 3-5 were read as one row, none of them loaded",
        ),
    ]


def test_csv_over_long_line_is_a_bad_row_on_its_line_and_the_rows_after_it_load(tmp_path):
    long_cell = "x" * (MAX_LINE_BYTES + 1)
    for ending in ("\n", "\r\n", "\r"):
        content = ending.join(["id,source_url,title", f"a,{URL},A", f"b,{URL},{long_cell}", f'c,{URL},"C', 'C"', ""])
        rows = records(tmp_path, "inv.csv", content)
        assert rows == [
            Row(2, AssetMessage("a", URL, "A")),
            BadRow(3, f"line 3 is over {MAX_LINE_BYTES} bytes"),
            Row(4, AssetMessage("c", URL, "C" + ending + "C")),  # a quoted cell over two lines still reads
        ]


def test_csv_row_whose_quoted_lines_together_pass_the_bound_is_one_bad_row(tmp_path):
    # Each line and each cell is under its limit, but quotes that open at the end of each line
    # join the lines into one row: the bound is on the row, so it cannot grow without end.
    part = "y" * (MAX_LINE_BYTES // 6 + 1)
    row = f'a,{URL},"{part}\n{part}","{part}\n{part}","{part}\n{part}"'  # lines 2-5
    rows = records(tmp_path, "inv.csv", f"id,source_url,title,duration_s,metadata\n{row}\nb,{URL},B\n")
    assert rows == [
        BadRow(
            2,
            f"lines 2-5 are over {MAX_LINE_BYTES} bytes together"
            " (read as one row: a quote that opens on line 2 is still open), none of them loaded",
        ),
        Row(6, AssetMessage("b", URL, "B")),
    ]


def test_csv_over_long_header_is_one_clear_error(tmp_path):
    with pytest.raises(CliError, match=rf"the header cannot be read: line 1 is over {MAX_LINE_BYTES} bytes"):
        read_inventory(write(tmp_path, "inv.csv", "id,source_url," + "t" * MAX_LINE_BYTES + "\n"))


@settings(max_examples=300, deadline=None)
@given(
    content=st.lists(st.sampled_from([b"a", b"bb", b"\r", b"\n", b"\r\n", b"\xff", b"\xc3\xa9"]), max_size=30).map(
        b"".join
    ),
    limit=st.integers(min_value=0, max_value=8),
    chunk=st.integers(min_value=1, max_value=7),
)
def test_csv_physical_lines_are_the_text_files_lines_whatever_the_reads(content, limit, chunk):
    # Line numbers in every message count these lines: they must be the ones csv.reader saw over
    # a text file opened with newline="" (a line ends at \n, \r\n or a lone \r), however the reads
    # fall, with each line over the bound (its ending aside) replaced by a RowTooLong on its number.
    text = io.TextIOWrapper(io.BytesIO(content), encoding="utf-8", errors="surrogateescape", newline="")
    expected = []
    for number, line in enumerate(text, start=1):
        body = re.sub("(\r\n|\r|\n)$", "", line).encode("utf-8", errors="surrogateescape")
        expected.append(("too long", number) if len(body) > limit else line)
    lines, got = CsvLines(io.BytesIO(content), limit=limit, chunk=chunk), []
    while True:
        lines.start_row()
        try:
            got.append(next(lines))
        except StopIteration:
            break
        except RowTooLong as exc:
            assert exc.first == exc.last == lines.count
            got.append(("too long", exc.last))
    assert got == expected


def test_csv_header_that_is_not_csv_is_one_clear_error(tmp_path):
    with pytest.raises(CliError, match=r"inv\.csv: the header is not CSV: unclosed quote"):
        read_inventory(write(tmp_path, "inv.csv", 'id,"source_url\n'))


def test_csv_row_too_big_for_a_message_is_bad(tmp_path):
    big = json.dumps({"blob": "x" * MAX_BODY_BYTES}).replace('"', '""')
    rows = records(tmp_path, "inv.csv", f'id,source_url,metadata\na,{URL},"{big}"\nb,{URL},\n')
    assert isinstance(rows[0], BadRow) and rows[0].asset_id == "a"
    assert "over the 65536-byte limit" in rows[0].reason
    assert isinstance(rows[1], Row)


def test_csv_bytes_that_are_not_utf8_fail_their_row_only(tmp_path):
    content = f"id,source_url\na,{URL}\n".encode() + b"b\xff\xfe,https://x.example/b.mp4\n" + f"c,{URL}\n".encode()
    rows = records(tmp_path, "inv.csv", content)
    assert [type(r) for r in rows] == [Row, BadRow, Row]
    assert rows[1] == BadRow(3, "row is not valid UTF-8", None)


def test_csv_character_sqs_refuses_is_a_bad_row(tmp_path):
    rows = records(tmp_path, "inv.csv", f"id,source_url,title\na,{URL},bad \ufffe here\n")
    assert rows == [BadRow(2, "row contains a character SQS does not accept (U+FFFE)", "a")]


def test_unknown_column_is_one_clear_error_naming_it_and_the_known_ones(tmp_path):
    path = write(tmp_path, "inv.csv", f"id,source_url,sourceurl\na,{URL},x\n")
    with pytest.raises(CliError) as caught:
        read_inventory(path)
    message = str(caught.value)
    assert "unknown column 'sourceurl'" in message
    assert "id, source_url, title, metadata, duration_s" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("id,title\na,b\n", "the header has no source_url column"),
        ("", "the file is empty"),
        ("\n\n", "the file is empty"),
        (f"id,source_url,id\na,{URL},a\n", "column 'id' appears twice"),
        (f"id,source_url,\na,{URL},\n", "column 3 of the header has no name"),
    ],
)
def test_bad_headers_are_clear_errors(tmp_path, content, expected):
    with pytest.raises(CliError, match=expected):
        read_inventory(write(tmp_path, "inv.csv", content))


def test_unreadable_file_is_a_clear_error(tmp_path):
    with pytest.raises(CliError, match=r"cannot read .*missing\.csv: No such file or directory"):
        read_inventory(str(tmp_path / "missing.csv"))
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(CliError, match="Is a directory"):
        read_inventory(str(tmp_path / "dir.csv"))


def test_gzip_file_is_read_and_a_fake_one_refused(tmp_path):
    path = tmp_path / "inv.csv.gz"
    path.write_bytes(gzip.compress(f"id,source_url\na,{URL}\n".encode()))
    assert list(read_inventory(str(path))) == [Row(2, AssetMessage("a", URL))]
    fake = write(tmp_path, "fake.jsonl.gz", "not gzip at all")
    with pytest.raises(CliError, match="cannot read"):
        read_inventory(fake)


def test_format_comes_from_the_extension_or_must_be_given():
    assert format_of("a/inv.CSV") == "csv"
    assert format_of("inv.jsonl") == format_of("inv.ndjson") == format_of("inv.json-lines.gz") == "jsonl"
    with pytest.raises(CliError, match="--format"):
        format_of("inv.json")
    with pytest.raises(CliError, match="stdin needs --format"):
        read_inventory("-")
    with pytest.raises(CliError, match="unknown format 'xml'"):
        read_inventory("inv.csv", fmt="xml")


# --- JSON Lines ----------------------------------------------------------------------------


def test_jsonl_rows_bad_rows_and_line_numbers(tmp_path):
    lines = [
        json.dumps({"id": "a", "source_url": URL, "title": "A", "duration_s": 3, "metadata": {"k": "v"}}),  # 1
        "",  # 2
        "{not json",  # 3
        json.dumps({"id": "b", "source_url": URL, "sourceurl": "x"}),  # 4
        json.dumps(["a", URL]),  # 5
        json.dumps({"id": "c", "source_url": "ftp://x/c.mp4"}),  # 6
        "   ",  # 7
        json.dumps({"source_url": URL}),  # 8
        json.dumps({"id": "d", "source_url": URL}),  # 9
    ]
    rows = records(tmp_path, "inv.jsonl", "\ufeff" + "\n".join(lines) + "\n")
    assert rows == [
        Row(1, AssetMessage("a", URL, "A", 3.0, {"k": "v"})),
        BadRow(3, "row is not JSON"),
        BadRow(4, "unknown field(s): sourceurl", "b"),
        BadRow(5, "row must be a JSON object, got list"),
        BadRow(6, FTP_REFUSED, "c"),
        BadRow(8, "id is missing"),
        Row(9, AssetMessage("d", URL)),
    ]


def test_jsonl_line_with_bytes_that_are_not_utf8(tmp_path):
    content = (
        b'{"id": "a\xff", "source_url": "https://x.example/a"}\n{"id": "b", "source_url": "https://x.example/b"}\n'
    )
    rows = records(tmp_path, "inv.ndjson", content)
    assert rows[0] == BadRow(1, "row is not valid UTF-8")
    assert rows[1] == Row(2, AssetMessage("b", "https://x.example/b"))


def test_jsonl_lone_surrogate_escape_is_refused_not_a_crash(tmp_path):
    rows = records(tmp_path, "inv.jsonl", '{"id": "a\\ud800", "source_url": "https://x.example/a"}\n')
    assert rows == [BadRow(1, "id contains a lone surrogate (not valid Unicode text)", None)]


def test_jsonl_long_line_of_escapes_that_fits_once_compacted_is_good(tmp_path):
    title = "é" * 500
    metadata = {"notes": "é" * 20_000}  # 120 kB as \u escapes, 40 kB as UTF-8
    line = json.dumps({"id": "a", "source_url": URL, "title": title, "metadata": metadata}, ensure_ascii=True)
    assert len(line) > MAX_BODY_BYTES
    (row,) = records(tmp_path, "inv.jsonl", line + "\n")
    assert isinstance(row, Row) and row.message.metadata == metadata


def test_jsonl_endless_line_is_refused_without_reading_it_whole(tmp_path):
    content = (
        '{"id": "a", "source_url": "' + "x" * (MAX_LINE_BYTES * 3) + '"}\n' + json.dumps({"id": "b", "source_url": URL})
    )
    rows = records(tmp_path, "inv.jsonl", content)
    assert rows == [BadRow(1, f"row is over {MAX_LINE_BYTES} bytes"), Row(2, AssetMessage("b", URL))]


# (format, what comes before the endless line, after it, why it is bad, the line it is on)
ENDLESS = {
    "csv": ("id,source_url,title\n" + f"a,{URL},A\nb,{URL},", f"\nc,{URL},C\n", "line 3 is over {} bytes", 3),
    "jsonl": (
        json.dumps({"id": "a", "source_url": URL, "title": "A"}) + '\n{"id": "b", "title": "',
        '"}\n' + json.dumps({"id": "c", "source_url": URL, "title": "C"}) + "\n",
        "row is over {} bytes",
        2,
    ),
}


@pytest.mark.parametrize("fmt", ENDLESS)
def test_an_endless_line_is_a_bad_row_read_in_flat_memory(tmp_path, fmt):
    head, tail, reason, line = ENDLESS[fmt]
    path = tmp_path / f"inv.{fmt}"
    with open(path, "wb") as out:  # a 200 MiB line among good rows, written a chunk at a time
        out.write(head.encode())
        chunk = b"x" * (1 << 20)
        for _ in range(200):
            out.write(chunk)
        out.write(tail.encode())
    tracemalloc.start()
    try:
        rows = list(read_inventory(str(path)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        path.unlink()
    assert rows == [
        Row(line - 1, AssetMessage("a", URL, "A")),
        BadRow(line, reason.format(MAX_LINE_BYTES)),
        Row(line + 1, AssetMessage("c", URL, "C")),
    ]
    assert peak < 4 * 2**20, f"peak {peak / 2**20:.1f} MiB while reading"


# --- repeats -------------------------------------------------------------------------------


def test_deduper_tells_new_repeat_and_conflict_across_commits():
    with Deduper(commit_every=2) as seen:
        path = seen.path
        assert os.path.exists(path)
        assert seen.check("a", URL, 2) == "new"
        assert seen.check("b", URL, 3) == "new"
        assert seen.check("c", URL, 4) == "new"
        assert seen.check("a", URL, 5) == "repeat"
        assert seen.check("a", URL + "?v=2", 6) == "conflict"
        assert seen.check("c", URL, 7) == "repeat"
        assert seen.first_line("a") == 2
        assert seen.first_line("zzz") is None
    assert not os.path.exists(path)


def test_deduper_holds_many_ids_on_disk():
    with Deduper() as seen:
        assert all(seen.check(f"id-{i}", f"{URL}?{i}") == "new" for i in range(20_000))
        assert seen.check("id-19999", f"{URL}?19999") == "repeat"
        assert seen.check("id-0", URL) == "conflict"
        assert os.path.getsize(seen.path) > 100_000  # the ids are in the file, not in memory


# --- S3 listing ----------------------------------------------------------------------------


def test_s3_id_is_stable_valid_and_tells_objects_apart():
    first = s3_asset_id("media", "videos/intro.mp4")
    assert first == s3_asset_id("media", "videos/intro.mp4")
    assert first.startswith("s3-") and len(first) == 35
    assert id_problem(first) is None
    assert first != s3_asset_id("media", "videos/intro2.mp4")
    assert first != s3_asset_id("media2", "videos/intro.mp4")


def test_s3_id_is_fixed_across_releases():
    # Changing how ids are derived would load every listed object a second time.
    import hashlib

    assert s3_asset_id("b", "k.mp4") == "s3-" + hashlib.sha256(b"b/k.mp4").hexdigest()[:32]


def test_s3_record_for_a_video_carries_the_s3_source():
    record = s3_record(4, "media", "library/2019/Intro Clip.MP4".replace(" ", "_"))
    assert isinstance(record, Row) and record.line == 4
    assert record.message == AssetMessage(
        asset_id=s3_asset_id("media", "library/2019/Intro_Clip.MP4"),
        source_url="s3://media/library/2019/Intro_Clip.MP4",
        title="Intro_Clip.MP4",
        metadata={"s3_bucket": "media", "s3_key": "library/2019/Intro_Clip.MP4"},
        collections=(Collection("media/library/2019", "library/2019", "folder"),),  # its prefix: a folder
    )
    assert parse_message(encode_message(record.message)) == record.message


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("library/", Skipped),
        ("library/poster.jpg", Skipped),
        ("library/README", Skipped),
        ("library/mp4", Skipped),
        ("library/clip.webm", Row),
        ("library/clip.M2TS", Row),
        ("library/what?.mp4", BadRow),
        ("library/a#b.mp4", BadRow),
        ("library/with space.mov", BadRow),
        ("/leading-slash.mp4", BadRow),
    ],
)
def test_s3_record_kinds(key, kind):
    assert type(s3_record(1, "media", key)) is kind


def test_video_extensions_are_case_insensitive():
    assert is_video_key("a/B.MoV") and is_video_key("x.3gp") and not is_video_key("x.mp3")


def test_s3_source_parsing():
    assert parse_s3_source("s3://media/library/2019") == ("media", "library/2019")
    assert parse_s3_source("s3://media") == ("media", "")
    with pytest.raises(CliError, match="expected s3://bucket"):
        parse_s3_source("s3:///prefix")


# --- batches -------------------------------------------------------------------------------


def test_batches_hold_ten_entries_in_order():
    messages = [AssetMessage(f"id-{i}", URL) for i in range(23)]
    batches = list(split_batches(messages))
    assert [len(b) for b in batches] == [10, 10, 3]
    assert [m.asset_id for b in batches for m, _ in b] == [m.asset_id for m in messages]
    assert all(body == encode_message(m) for b in batches for m, body in b)


@pytest.mark.parametrize(("pad", "sizes"), [(50_000, [5, 5, 1]), (60_000, [4, 4, 3]), (20_000, [10, 1])])
def test_batches_split_by_size_before_count(pad, sizes):
    # 256 KiB per call: five bodies of ~50 kB fit, four of ~60 kB, ten of ~20 kB.
    messages = [AssetMessage(f"id-{i}", URL, metadata={"pad": "x" * pad}) for i in range(11)]
    batches = list(split_batches(messages))
    assert [len(b) for b in batches] == sizes
    assert all(sum(len(body.encode()) for _, body in b) <= MAX_BATCH_BYTES for b in batches)


def test_batches_split_by_size_with_small_limit():
    messages = [AssetMessage(f"id-{i}", URL) for i in range(5)]
    size = len(encode_message(messages[0]).encode())
    assert [len(b) for b in split_batches(messages, max_bytes=2 * size)] == [2, 2, 1]
    assert [len(b) for b in split_batches(messages, max_bytes=size - 1)] == [1, 1, 1, 1, 1]  # never an empty batch


def test_stdin_is_read_with_a_format_and_left_open(tmp_path, monkeypatch):
    path = write(tmp_path, "piped", f'{{"id": "a", "source_url": "{URL}"}}\n')
    with open(path) as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        assert list(read_inventory("-", fmt="jsonl")) == [Row(1, AssetMessage("a", URL))]
        assert not stdin.closed


# --- the stack's source bucket -------------------------------------------------------------
# The uploader may presign objects in SourceBucketName only (its IAM policy names no other
# bucket), so an s3:// source elsewhere would be accepted here and fail at hand-off.


def dry_load(tmp_path, content: str, source_bucket: SourceBucket | None, name: str = "inv.csv"):
    out = io.StringIO()
    summary = load_inventory(write(tmp_path, name, content), dry_run=True, source_bucket=source_bucket, out=out)
    return summary, out.getvalue().splitlines()


S3_ROWS = (
    "id,source_url\n"
    f"a,{URL}\n"  # line 2
    "b,s3://media/library/b.mp4\n"  # line 3
    "c,s3://other-bucket/c.mp4\n"  # line 4
    "d,S3://Media/d.mp4\n"  # line 5: bucket names are lowercase; this is another bucket
    "e,s3://media.backup/e.mp4\n"  # line 6
)


def test_load_refuses_s3_sources_outside_the_stacks_source_bucket(tmp_path):
    summary, printed = dry_load(tmp_path, S3_ROWS, SourceBucket("media"))
    assert (summary.good, summary.bad, summary.exit_code) == (2, 3, 1)
    expected = "is not the stack's source bucket 'media' (stack parameter SourceBucketName)"
    assert f"line 4: bucket 'other-bucket' {expected}: the uploader can read only that one" in printed
    assert f"line 5: bucket 'Media' {expected}: the uploader can read only that one" in printed
    assert any(line.startswith(f"line 6: bucket 'media.backup' {expected}") for line in printed)
    assert not any(line.startswith(("line 2:", "line 3:")) for line in printed)


def test_s3_sources_for_a_provider_that_fetches_with_head_are_refused_at_load_with_the_fix(tmp_path):
    """Cloudflare Stream fetches with HEAD and range GETs; a URL presigned for GET answers HEAD with 403."""
    summary, printed = dry_load(
        tmp_path, S3_ROWS, SourceBucket.of_outputs({"SourceBucketName": "media", "Provider": "cloudflare"})
    )
    assert (summary.good, summary.bad) == (1, 4)  # only the https row; every s3:// row, its own bucket's too
    (line3,) = [line for line in printed if line.startswith("line 3:")]
    assert "HEAD and range GETs" in line3 and "list those URLs instead of s3://" in line3
    mux, _ = dry_load(tmp_path, S3_ROWS, SourceBucket.of_outputs({"SourceBucketName": "media", "Provider": "mux"}))
    assert mux.good == 2  # Mux fetches the presigned GET itself


def test_load_refuses_s3_sources_the_same_way_in_json_lines(tmp_path):
    content = json.dumps({"id": "x", "source_url": "s3://other-bucket/x.mp4"}) + "\n"
    summary, printed = dry_load(tmp_path, content, SourceBucket("media"), name="inv.jsonl")
    assert summary.bad == 1 and printed[0].startswith("line 1: bucket 'other-bucket' is not the stack's source bucket")


@pytest.mark.parametrize(
    ("outputs", "why"),
    [
        ({"SourceBucketName": ""}, "the stack has no source bucket for s3:// sources"),
        ({}, "the stack has no SourceBucketName output (deployed from an older template.yaml?)"),
    ],
)
def test_load_without_a_source_bucket_refuses_every_s3_row_and_says_to_set_it(tmp_path, outputs, why):
    summary, printed = dry_load(tmp_path, S3_ROWS, SourceBucket.of_outputs(outputs))
    assert (summary.good, summary.bad) == (1, 4)
    set_it = "set the stack parameter SourceBucketName to"
    assert f"line 3: {why}: {set_it} 'media' and redeploy" in printed
    assert f"line 4: {why}: {set_it} 'other-bucket' and redeploy" in printed


def test_load_without_a_known_stack_does_not_check_buckets(tmp_path):
    summary, _ = dry_load(tmp_path, S3_ROWS, None)
    assert (summary.good, summary.bad) == (5, 0)


class NoListing:
    def get_paginator(self, name):
        raise AssertionError("the bucket was listed")


@pytest.mark.parametrize(
    ("source_bucket", "message"),
    [
        (
            SourceBucket("media"),
            "s3://other-bucket/show/: bucket 'other-bucket' is not the stack's source bucket 'media'"
            " (stack parameter SourceBucketName): the uploader can read only that one",
        ),
        (
            SourceBucket(""),
            "s3://other-bucket/show/: the stack has no source bucket for s3:// sources:"
            " set the stack parameter SourceBucketName to 'other-bucket' and redeploy",
        ),
    ],
)
def test_load_of_a_listing_in_another_bucket_is_one_error_before_anything_is_listed(source_bucket, message):
    with pytest.raises(CliError) as caught:
        load_inventory("s3://other-bucket/show/", s3=NoListing(), dry_run=True, source_bucket=source_bucket)
    assert str(caught.value) == message


def test_load_command_reads_the_source_bucket_from_the_stack_outputs(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MIGRATOR_ENDPOINT", raising=False)
    outputs = tmp_path / "outputs.json"
    stack = ["--outputs", str(outputs), "--region", "us-east-1"]
    outputs.write_text(json.dumps({"QueueUrl": "https://sqs.example/q", "SourceBucketName": "media"}))
    inventory = write(tmp_path, "inv.csv", S3_ROWS)

    assert main(["load", inventory, "--dry-run", *stack]) == 1
    err = capsys.readouterr().err
    assert "line 4: bucket 'other-bucket' is not the stack's source bucket 'media'" in err
    assert "line 3:" not in err

    assert main(["load", "s3://other-bucket/show/", "--dry-run", *stack]) == 2
    assert capsys.readouterr().err == (
        "migrator load: s3://other-bucket/show/: bucket 'other-bucket' is not the stack's source bucket 'media'"
        " (stack parameter SourceBucketName): the uploader can read only that one\n"
    )

    outputs.write_text(json.dumps({"QueueUrl": "https://sqs.example/q"}))  # a stack deployed before the output
    assert main(["load", inventory, "--dry-run", *stack]) == 1
    assert "line 3: the stack has no SourceBucketName output" in capsys.readouterr().err


@pytest.mark.slow  # seconds of real time or work: `make unit` and CI run it, `make quick` does not
@pytest.mark.parametrize("compressed", [False, True])
def test_a_files_progress_is_the_bytes_read_of_its_size(tmp_path, compressed):
    # Random names, so that even gzipped the file is megabytes: read-ahead is coarse next to that.
    names = [os.urandom(16).hex() for _ in range(50_000)]
    rows = "id,source_url\n" + "".join(f"a{n},https://media.example.com/{name}.mp4\n" for n, name in enumerate(names))
    path = tmp_path / ("inventory.csv.gz" if compressed else "inventory.csv")
    path.write_bytes(gzip.compress(rows.encode(), mtime=0) if compressed else rows.encode())
    meter = Meter()
    records = read_inventory(str(path), meter=meter)
    seen = []
    for n, _ in enumerate(records, 1):
        if n in (10_000, 25_000, 40_000):
            seen.append(meter.fraction())
    assert meter.fraction() == 1.0
    # Read ahead in blocks, so roughly, but rising and in proportion to the rows read.
    assert all(0 < f < 1 for f in seen) and seen == sorted(seen)
    assert abs(seen[1] - 0.5) < 0.15, seen


def test_a_stream_has_no_known_end(monkeypatch):
    read_end, write_end = os.pipe()
    os.write(write_end, b"id,source_url\na,https://x.example.com/a.mp4\n")
    os.close(write_end)
    with open(read_end, encoding="utf-8") as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        meter = Meter()
        assert len(list(read_inventory("-", fmt="csv", meter=meter))) == 1 and meter.fraction() is None


def test_a_csv_row_carries_everything_a_video_is(tmp_path):
    tracks = '[{""url"": ""https://cdn.example.com/a.en.vtt"", ""language"": ""en""}]'
    content = (
        "id,source_url,title,description,tags,privacy,poster_time_s,created_at,folder,size_bytes,tracks,options\n"
        f'a,{URL},T,"Two\nlines",news; sport,private,4.5,2020-01-02T03:04:05Z,Shows,1024,"{tracks}",'
        '"{""mux"": {""video_quality"": ""plus""}}"\n'
        f'b,{URL},T,,"[""x"", ""y""]",,,,,,,\n'
        f"c,{URL},T,,,,,,,12.5,,\n"
    )
    records = list(read_inventory(write(tmp_path, "full.csv", content)))
    a, b, c = records
    assert a.message.description == "Two\nlines" and a.message.tags == ("news", "sport")
    assert (a.message.privacy, a.message.poster_time_s, a.message.size_bytes) == ("private", 4.5, 1024)
    assert a.message.created_at == "2020-01-02T03:04:05Z" and a.message.folder == "Shows"
    assert a.message.tracks[0].language == "en" and a.message.options == {"mux": {"video_quality": "plus"}}
    assert b.message.tags == ("x", "y")  # or a JSON list
    assert isinstance(c, BadRow) and "size_bytes '12.5' is not a whole number" in c.reason


# --- what a viewer sees first (issue 42): the thumbnail, chapters, collections, the publish time -------------

CHAPTERS_CELL = '"[{""start_s"": 0, ""title"": ""Intro""}, {""start_s"": 61.5, ""title"": ""Deux, « trois »""}]"'
COLLECTIONS_CELL = '"[{""id"": ""albums/9"", ""name"": ""Best of"", ""kind"": ""showcase"", ""position"": 2}]"'


def test_a_csv_row_carries_the_thumbnail_chapters_collections_and_publish_time(tmp_path):
    content = (
        "id,source_url,thumbnail_url,published_at,chapters,collections\n"
        f"a,{URL},https://i.example.com/a.jpg,2020-01-02T03:04:05+01:00,{CHAPTERS_CELL},{COLLECTIONS_CELL}\n"
        f"b,{URL},vimeo://1/pictures/2,,,\n"
    )
    a, b = records(tmp_path, "extras.csv", content)
    assert a.message.thumbnail_url == "https://i.example.com/a.jpg" and a.message.published_at == "2020-01-02T02:04:05Z"
    assert [(c.start_s, c.title) for c in a.message.chapters] == [(0.0, "Intro"), (61.5, "Deux, « trois »")]
    assert [(c.id, c.kind, c.position) for c in a.message.collections] == [("albums/9", "showcase", 2)]
    assert b.message.thumbnail_url == "vimeo://1/pictures/2" and b.message.chapters == () and not b.message.collections


@pytest.mark.parametrize(
    ("cells", "reason"),
    [
        ("ftp://i.example.com/a.jpg,,,", "thumbnail_url scheme 'ftp'"),
        (",yesterday,,", "published_at must be an RFC 3339 date-time"),
        (",,Intro at 0,", "chapters 'Intro at 0' is not valid JSON"),
        (',,"{""start_s"": 0}",', "chapters must be a list of at most 500 objects"),
        (',,"[{""start_s"": 5, ""title"": ""B""}, {""start_s"": 1, ""title"": ""A""}]",', "strictly increasing"),
        (",,,[oops", "collections '[oops' is not valid JSON"),
        (',,,"[{""id"": ""9"", ""name"": ""S"", ""kind"": ""shelf""}]"', "collection 1: kind must be one of"),
    ],
)
def test_csv_extras_that_cannot_travel_say_why(tmp_path, cells, reason):
    content = f"id,source_url,thumbnail_url,published_at,chapters,collections\na,{URL},{cells}\nb,{URL},,,,\n"
    bad, good = records(tmp_path, "extras.csv", content)
    assert isinstance(bad, BadRow) and reason in bad.reason and bad.asset_id == "a" and isinstance(good, Row)


def test_a_jsonl_row_carries_the_extras_and_refuses_bad_ones_with_the_reason(tmp_path):
    extras = {
        "thumbnail_url": "s3://posters/a.png",
        "published_at": "2020-01-02T03:04:05Z",
        "chapters": [{"start_s": 0, "title": "Intro"}],
        "collections": [{"id": "projects/7", "name": "Marketing", "kind": "folder"}],
    }
    bad = {"chapters": [{"start_s": 0, "title": "Intro"}, {"start_s": 0, "title": "Again"}]}
    content = "\n".join(json.dumps({"id": i, "source_url": URL, **doc}) for i, doc in (("a", extras), ("b", bad)))
    a, b = records(tmp_path, "extras.jsonl", content + "\n")
    assert a.message.thumbnail_url == "s3://posters/a.png" and a.message.collections[0].id == "projects/7"
    assert isinstance(b, BadRow) and "chapter 2: start_s must be later" in b.reason


def test_an_inventory_csv_as_the_sweep_writes_it_is_read_back_whole(tmp_path):
    """`migrator inventory --csv` writes every column (sweep.CSV_COLUMNS, JSON for lists); load reads it back."""
    import csv

    from migrator_cli.sweep import CSV_COLUMNS, csv_cells

    full = {
        "id": "vimeo/1",
        "source_url": "vimeo://1",
        "title": "T",
        "tags": ["a", "b"],
        "tracks": [{"url": "vimeo://1/texttracks/3", "language": "en", "kind": "captions"}],
        "thumbnail_url": "vimeo://1/pictures/2",
        "published_at": "2020-01-02T03:04:05Z",
        "chapters": [{"start_s": 0, "title": "Intro, « un »"}, {"start_s": 12.25, "title": "Two"}],
        "collections": [{"id": "albums/9", "name": "Best of", "kind": "showcase", "position": 0}],
        "metadata": {"source_platform": "vimeo", "source_id": "1"},
    }
    msg = parse_message(json.dumps(full))
    assert isinstance(msg, AssetMessage)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    writer.writerow(csv_cells(msg))
    (row,) = records(tmp_path, "inventory.csv", out.getvalue())
    assert isinstance(row, Row) and row.message == msg
