"""`migrator export`: the cut-over map's rows from ledger items, as CSV, JSON Lines, an nginx map and a
redirect CSV; signed rows say so; hostile ids, titles and URLs cannot break out of a cell or an entry."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal

import pytest
from migrator_cli.cutover import SIGNED, row_of, source_of
from migrator_cli.errors import CliError
from migrator_cli.export import Template, export, nginx_string

from tests.nginx_check import nginx_or_none, nginx_test, read_map

MUX = {
    "asset_id": "lib/intro",
    "source_url": "vimeo://76979871",
    "state": "ready",
    "remote_id": "asset1",
    "privacy": "public",
    "tracks": [{"url": "https://c.example/en.vtt", "language": "en", "kind": "captions"}],
    "playback_info": {"policy": "public", "playback_id": "pb1", "width": Decimal(1920), "height": Decimal(1080)},
}
SIGNED_ITEM = {
    "asset_id": "lib/secret",
    "source_url": "https://media.example/s.mp4",
    "state": "ready",
    "remote_id": "asset2",
    "playback_info": {"policy": "signed", "playback_id": "pb2"},
}
PENDING = {"asset_id": "lib/later", "source_url": "wistia://abc123", "state": "processing", "remote_id": "asset3"}
OLD = {"asset_id": "lib/old", "source_url": "https://m.example/o.mp4", "state": "ready", "remote_id": "asset4"}
HOSTS = {"hls": "https://stream.example", "thumbnail": "https://image.example", "player": "https://player.example"}


def run(items, fmt, provider="mux", **options):
    out = io.StringIO()
    problems = []
    summary = export(items, out, fmt, provider, mux_hosts=HOSTS, report=lambda i, w: problems.append((i, w)), **options)
    return out.getvalue(), summary, problems


def test_a_source_reference_names_the_platform_and_its_id_else_our_id_stands():
    assert source_of(MUX) == ("vimeo", "76979871")
    assert source_of(SIGNED_ITEM) == ("https", "lib/secret")
    assert source_of({"asset_id": "s3-x", "source_url": "s3://b/k.mp4"}) == ("s3", "s3-x")


def test_a_mux_row_builds_its_urls_from_the_playback_id():
    row = row_of(MUX, "mux", HOSTS)
    assert row["hls_url"] == "https://stream.example/pb1.m3u8"
    assert row["thumbnail_url"] == "https://image.example/pb1/thumbnail.jpg"
    assert row["player_url"] == "https://player.example/pb1"
    assert (row["source_platform"], row["source_id"], row["playback_policy"]) == ("vimeo", "76979871", "public")
    assert row["tracks"] == [{"language": "en", "kind": "captions"}]


def test_signed_and_unready_rows_say_so_instead_of_a_url():
    signed, pending, old = (row_of(i, "mux", HOSTS) for i in (SIGNED_ITEM, PENDING, OLD))
    assert signed["note"] == SIGNED and signed["hls_url"] is None and signed["playback_id"] == "pb2"
    assert pending["note"] == "not ready" and pending["hls_url"] is None
    assert old["note"].startswith("no playback recorded")


def test_csv_and_json_lines_hold_the_same_rows():
    items = [MUX, SIGNED_ITEM, PENDING, OLD]
    text, summary, _ = run(items, "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["id"] for r in rows] == ["lib/intro", "lib/secret", "lib/later", "lib/old"]
    assert rows[0]["hls_url"] == "https://stream.example/pb1.m3u8" and rows[0]["tracks"] == "en captions"
    assert rows[1]["note"] == SIGNED and rows[1]["hls_url"] == ""
    assert (summary.rows, summary.ready, summary.written, summary.signed, summary.no_playback) == (4, 3, 4, 1, 1)
    lines, _, _ = run(items, "jsonl")
    docs = [json.loads(line) for line in lines.splitlines()]
    assert docs[0]["hls_url"] == rows[0]["hls_url"] and docs[1]["note"] == SIGNED and docs[1]["hls_url"] is None


def test_a_csv_cell_never_runs_as_a_formula():
    text, _, _ = run([{**MUX, "asset_id": '=HYPERLINK("http://evil")', "privacy": "@x"}], "csv")
    row = next(csv.DictReader(io.StringIO(text)))
    assert row["id"].startswith("'=") and row["privacy"] == "'@x"


def test_templates_know_their_placeholders_and_must_make_urls():
    with pytest.raises(CliError, match="unknown placeholder"):
        Template("https://x.example/{title}", "--old-url")
    with pytest.raises(CliError, match="absolute http"):
        Template("ftp://x.example/{id}", "--new-url")
    with pytest.raises(CliError, match="needs --old-url"):
        run([MUX], "nginx")


def test_the_redirect_csv_maps_each_old_url_once():
    twin = {**MUX, "asset_id": "lib/twin", "playback_info": {**MUX["playback_info"], "playback_id": "pb9"}}
    repeat = {**MUX, "asset_id": "lib/again"}
    old, new = Template("https://vimeo.com/{source_id}", "--old-url"), Template("https://p.example/{playback_id}", "n")
    text, summary, problems = run([MUX, SIGNED_ITEM, PENDING, repeat, twin], "redirects", old_url=old, new_url=new)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [
        ["old_url", "new_url"],
        ["https://vimeo.com/76979871", "https://p.example/pb1"],
        ["https://vimeo.com/lib/secret", "https://p.example/pb2"],  # an own player page may sign for it
    ]
    assert summary.repeated == 1 and [p[0] for p in problems] == ["lib/twin"]
    # The signed row has a playback id, so an own player page can take it; a URL of it cannot.
    hls = Template("https://cdn.example/?u={hls_url}", "--new-url")
    _, _, problems = run([SIGNED_ITEM], "redirects", old_url=Template("https://o.example/{id}", "o"), new_url=hls)
    assert problems == [("lib/secret", f"hls_url: {SIGNED}")]


HOSTILE = [
    'a";\n} server { listen 80; } map $x $y { "b',
    "x$request_uri${host}",
    "back\\slash 'quote' ;{}",
    "tab\there\r\n",
    "~^regex.*$",
    "default",
    "é-ünïcode/../..",
]


def hostile_items():
    for n, text in enumerate(HOSTILE):
        yield {
            "asset_id": f"lib/{n}/{text}",
            "source_url": f"vimeo://{text}",
            "title": text,
            "state": "ready",
            "remote_id": f"r{n}",
            "playback_info": {"policy": "public", "playback_id": f"pb{n}", "hls": f"https://h.example/{n}$x"},
        }


def hostile_map(tmp_path, provider="cloudflare"):
    old = Template("https://vimeo.com/{source_id}", "--old-url")
    new = Template("https://new.example/{id}?h={hls_url}", "--new-url")
    text, summary, problems = run(list(hostile_items()), "nginx", provider, old_url=old, new_url=new)
    path = tmp_path / "map.conf"
    path.write_text(text)
    return path, text, summary, problems


def test_hostile_ids_and_urls_stay_inside_their_nginx_strings(tmp_path):
    _, text, summary, problems = hostile_map(tmp_path)
    source, variable, pairs = read_map(text)
    assert (source, variable) == ("$request_uri", "migrator_new_url")
    assert summary.written == len(HOSTILE) and not problems
    assert "/a%22%3B%0A%7D%20server%20%7B%20listen%2080%3B%20%7D%20map%20%24x%20%24y%20%7B%20%22b" in pairs
    assert all(key.startswith("/") and "$" not in value for key, value in pairs.items())
    assert pairs["/default"] == "https://new.example/lib/5/default?h=https://h.example/5%24x"


def test_the_nginx_map_passes_nginx_t(tmp_path):
    path, text, _, _ = hostile_map(tmp_path)
    nginx = nginx_or_none()
    # Debian's nginx where it can be installed (as root with apt-get); the strict reader above otherwise.
    if nginx is None:
        read_map(text)
        return
    result = nginx_test(path, tmp_path / "nginx")
    assert result.returncode == 0, result.stderr
    assert "test is successful" in result.stderr


def test_nginx_t_refuses_what_an_unescaped_entry_would_inject(tmp_path):
    """The check can fail: the same entries written without escaping break the configuration."""
    if nginx_or_none() is None:
        with pytest.raises(AssertionError):
            read_map('map $request_uri $migrator_new_url {\n    default "";\n    "/a";} x {" "b";\n}\n')
        return
    path = tmp_path / "bad.conf"
    path.write_text('map $request_uri $migrator_new_url {\n    default "";\n    "/a"} server {" "b";\n}\n')
    assert nginx_test(path, tmp_path / "nginx").returncode != 0


def test_nginx_strings_escape_quotes_and_backslashes_and_variables_in_values():
    assert nginx_string('a"b\\c$d') == '"a\\"b\\\\c$d"'
    assert nginx_string("a$d", value=True) == '"a%24d"'
    with pytest.raises(ValueError):
        nginx_string("new\nline")


def test_the_nginx_key_may_be_the_whole_url(tmp_path):
    old, new = Template("https://vimeo.com/{source_id}?x=1", "o"), Template("https://p.example/{playback_id}", "n")
    text, _, _ = run([MUX], "nginx", old_url=old, new_url=new, nginx_key="url")
    source, _, pairs = read_map(text)
    assert source == "$scheme://$host$request_uri" and pairs == {
        "https://vimeo.com/76979871?x=1": "https://p.example/pb1"
    }
    text, _, _ = run([MUX], "nginx", old_url=old, new_url=new)
    assert read_map(text)[2] == {"/76979871?x=1": "https://p.example/pb1"}


@pytest.mark.slow  # seconds of real time or work: `make unit` and CI run it, `make quick` does not
def test_a_million_rows_stream_through_in_flat_memory():
    import tracemalloc

    def items(n):
        for i in range(n):
            yield {
                **MUX,
                "asset_id": f"lib/{i}",
                "source_url": f"vimeo://{i}",
                "playback_info": {"playback_id": f"p{i}"},
            }

    class Sink(io.TextIOBase):
        def write(self, text):
            return len(text)

    old, new = Template("https://vimeo.com/{source_id}", "o"), Template("https://p.example/{playback_id}", "n")
    peaks = []
    for n in (2_000, 20_000):
        tracemalloc.start()
        export(items(n), Sink(), "nginx", "mux", old_url=old, new_url=new)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < peaks[0] * 2  # ten times the rows, not ten times the memory


USAGE_MAP = {  # as boto3 reads the ledger item's usage map back: numbers as Decimal
    "plays": Decimal(1234),
    "views": Decimal(5678),
    "last_played_at": "2026-03-01T10:00:00Z",
    "read_at": "2026-12-06T12:00:00Z",
    "counted_by": "kaltura entry plays",
}


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (USAGE_MAP, (1234, 5678, "2026-03-01T10:00:00Z", "2026-12-06T12:00:00Z", "kaltura entry plays")),
        (None, (None, None, None, None, None)),  # never read: empty cells, not 0
        (
            {"plays": Decimal(0), "read_at": "2026-12-06T12:00:00Z", "counted_by": "vimeo stats.plays"},
            (0, None, None, "2026-12-06T12:00:00Z", "vimeo stats.plays"),
        ),
        ({"plays": "many", "views": True, "read_at": 3, "counted_by": None}, (None,) * 5),  # not what usage writes
        ("garbage", (None,) * 5),
    ],
)
def test_the_usage_columns_come_from_the_ledger_items_usage_map(usage, expected):
    row = row_of({**MUX, "usage": usage}, "mux", HOSTS)
    assert tuple(row[c] for c in ("plays", "views", "last_played_at", "usage_read_at", "usage_counted_by")) == expected


def test_usage_outlives_the_source_in_csv_and_json_lines():
    text, _, _ = run([{**MUX, "usage": USAGE_MAP}, OLD], "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert (rows[0]["plays"], rows[0]["last_played_at"], rows[0]["usage_counted_by"]) == (
        "1234",
        "2026-03-01T10:00:00Z",
        "kaltura entry plays",
    )
    assert rows[1]["plays"] == "" and rows[1]["usage_read_at"] == ""
    lines, _, _ = run([{**MUX, "usage": USAGE_MAP}], "jsonl")
    assert json.loads(lines)["views"] == 5678
