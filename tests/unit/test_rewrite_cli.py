"""`migrator rewrite` end to end on a small site of every kind it reads: the dry run changes nothing and its diff is
what --apply then writes; --apply keeps backups; the dump, the WXR and the CSV still parse; a second run changes
nothing; bad input is refused with the reason."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from migrator_cli.main import main
from migrator_cli.rewrite.model import TOKEN_MARKER

pytestmark = pytest.mark.unit

VIMEO_READY = "76979871"
VIMEO_SIGNED = "22439234"
VIMEO_FAILED = "11111111"
WISTIA_BEHIND = "g5pnf59ala"
NEW_PID = "Qx8lOjwQ01zt8aVnJ5NNI4q02bDQ02mT"
HEADER = (
    *("id", "source_platform", "source_id", "source_url", "provider", "remote_id", "playback_id"),
    *("playback_policy", "hls_url", "player_url", "thumbnail_url", "state", "note"),
)
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


def serialized(value: str) -> str:
    return f'a:1:{{s:5:"video";s:{len(value.encode())}:"{value}";}}'


def site(root: Path) -> None:
    (root / "blog").mkdir(parents=True)
    (root / "blog" / "index.html").write_text(
        "<h1>Talks</h1>\n"
        f'<iframe src="https://player.vimeo.com/video/{VIMEO_READY}?autoplay=1&amp;muted=1" width="640" height="360"'
        ' frameborder="0" allow="autoplay; fullscreen" allowfullscreen title="Keynote"></iframe>\n'
        f'<iframe src="https://player.vimeo.com/video/{VIMEO_SIGNED}" width="640" height="360"></iframe>\n'
        f'<iframe src="https://fast.wistia.net/embed/iframe/{WISTIA_BEHIND}" width="640" height="360"></iframe>\n'
        '<iframe src="https://www.youtube.com/embed/dQw4w9WgXcQ"></iframe>\n'
        f'<a href="https://vimeo.com/blog/{VIMEO_READY}">not a video</a>\n',
        encoding="utf-8",
    )
    (root / "blog" / "post.md").write_text(
        f"Watch [the keynote](https://vimeo.com/{VIMEO_READY}) or [the old one](https://vimeo.com/{VIMEO_FAILED}).\r\n",
        encoding="utf-8",
    )
    (root / "data.json").write_text(
        json.dumps({"title": "Keynote ✓", "src": f"https://player.vimeo.com/video/{VIMEO_READY}"}).replace("/", "\\/")
        + "\n",
        encoding="utf-8",
    )
    meta = serialized(f"https://vimeo.com/{VIMEO_READY}").replace('"', '\\"')
    (root / "db.sql").write_text(
        "-- MySQL dump 10.13\n"
        "INSERT INTO `wp_posts` VALUES (1,'<p>Hi</p>\\n<iframe src=\\\"https://player.vimeo.com/video/"
        f"{VIMEO_READY}\\\"></iframe>','Keynote'),(2,'plain','x');\n"
        f"INSERT INTO `wp_postmeta` VALUES (7,1,'video','{meta}');\n",
        encoding="utf-8",
    )
    (root / "export.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8" ?>\n<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/'
        'content/" xmlns:wp="http://wordpress.org/export/1.2/">\n<channel>\n<item>\n<title>Keynote</title>\n'
        f'<content:encoded><![CDATA[<iframe src="https://player.vimeo.com/video/{VIMEO_READY}"></iframe>]]>'
        "</content:encoded>\n<wp:postmeta><wp:meta_key><![CDATA[video]]></wp:meta_key>"
        f"<wp:meta_value><![CDATA[{serialized(f'https://vimeo.com/{VIMEO_READY}')}]]></wp:meta_value></wp:postmeta>\n"
        "</item>\n</channel>\n</rss>\n",
        encoding="utf-8",
    )
    (root / "videos.csv").write_text(
        f'title,embed\n"Keynote, 2024",https://vimeo.com/{VIMEO_READY}\nOther,https://vimeo.com/{VIMEO_READY}/x\n',
        encoding="utf-8",
    )
    (root / "logo.png").write_bytes(PNG)


def the_map(root: Path) -> tuple[Path, Path]:
    rows = [
        ("a1", "vimeo", VIMEO_READY, "ready", "public", None),
        ("a2", "vimeo", VIMEO_SIGNED, "ready", "signed", "signed: needs a token"),
        ("a3", "vimeo", VIMEO_FAILED, "failed", None, "source gone"),
    ]
    path = root / "map.csv"
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(HEADER)
        for asset, platform, source_id, state, policy, note in rows:
            urls = (
                [f"https://stream.mux.com/{NEW_PID}.m3u8", f"https://player.mux.com/{NEW_PID}", ""]
                if policy == "public"
                else ["", "", ""]
            )
            playback = NEW_PID if policy == "public" else f"SIGNED{asset}"
            source = (asset, platform, source_id, f"{platform}://{source_id}")
            writer.writerow([*source, "mux", f"mux-{asset}", playback, policy or "", *urls, state, note or ""])
    behind = root / "left.jsonl"
    behind.write_text(
        json.dumps({"id": "w1", "source_url": f"wistia://{WISTIA_BEHIND}", "why": "plays > 0 is false: plays is 0"})
        + "\n",
        encoding="utf-8",
    )
    return path, behind


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["rewrite", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def prepared(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "site"
    site(root)
    mapping, behind = the_map(tmp_path)
    return tmp_path, root, mapping, behind


def test_dry_run_then_apply_then_nothing(prepared, capsys):
    base, root, mapping, behind = prepared
    before = snapshot(root)
    args = ["--map", str(mapping), "--left-behind", str(behind), "--csv-column", "embed", "site"]
    code, diff, summary = run_cli(capsys, *args)
    assert code == 1  # one embed is of a video that failed: someone must act
    assert snapshot(root) == before  # a dry run writes nothing
    assert "+++ b/site/blog/index.html" in diff and f"player.mux.com/{NEW_PID}" in diff
    assert "files       6 read" in summary and "1 skipped" in summary and "binary" in summary
    assert "left behind 1" in summary and "rejected 1" in summary and "signed      1" in summary

    patched = base / "patched"
    shutil.copytree(root, patched / "site")
    (base / "dry.diff").write_text(diff, encoding="utf-8")
    subprocess.run(["git", "apply", "--unsafe-paths", str(base / "dry.diff")], cwd=patched, check=True)

    code, out, summary = run_cli(capsys, *args, "--apply", "--json", "--backup-dir", str(base / "backup"))
    report = json.loads(out)
    assert code == 1 and report["applied"] is True
    after = snapshot(root)
    assert after == snapshot(patched / "site")  # --apply wrote exactly what the dry run's diff said
    assert snapshot(base / "backup" / "site") == {k: v for k, v in before.items() if after[k] != v}
    assert after["logo.png"] == PNG

    html = after["blog/index.html"].decode()
    assert f'<iframe src="https://player.mux.com/{NEW_PID}?autoplay=true&amp;muted=true"' in html
    assert 'title="Keynote"' in html and 'allow="autoplay; fullscreen"' in html
    assert TOKEN_MARKER in html and f"/embed/iframe/{WISTIA_BEHIND}" in html and "youtube.com/embed" in html
    assert f"vimeo.com/blog/{VIMEO_READY}" in html  # a look-alike stays
    md = after["blog/post.md"].decode()
    assert md.endswith("\r\n") and f"vimeo.com/{VIMEO_FAILED}" in md and f"vimeo.com/{VIMEO_READY}" not in md
    assert f"player.mux.com\\/{NEW_PID}" in after["data.json"].decode()  # the file's own escaping kept
    _assert_serialized_lengths(after["db.sql"].decode().replace('\\"', '"'))
    assert f"player.mux.com/{NEW_PID}" in after["db.sql"].decode()
    tree = ET.fromstring(after["export.xml"])
    meta = tree.find(".//{http://wordpress.org/export/1.2/}meta_value")
    assert meta is not None and meta.text is not None and NEW_PID in meta.text
    _assert_serialized_lengths(meta.text)
    cells = list(csv.DictReader(io.StringIO(after["videos.csv"].decode())))
    assert [c["title"] for c in cells] == ["Keynote, 2024", "Other"]
    assert all(NEW_PID in c["embed"] for c in cells)

    assert report["embeds"]["left"] == {"left behind": 1, "rejected": 1}
    assert {e["video_id"] for e in report["left"]} == {WISTIA_BEHIND, VIMEO_FAILED}
    assert [e["video_id"] for e in report["signed"]] == [VIMEO_SIGNED]
    assert report["files"]["skipped"] and report["database_values"]["serialized_fixed"] >= 2

    code, diff, summary = run_cli(capsys, *args, "--apply", "--backup-dir", str(base / "backup2"))
    assert snapshot(root) == after and diff == "" and not (base / "backup2").exists()
    assert "0 changed" in summary and "rewritten   0" in summary


def _assert_serialized_lengths(text: str) -> None:
    """Every `s:N:"..."` of PHP's format holds N bytes (the documented rule), checked without our parser."""
    found = 0
    for match in re.finditer(r's:(\d+):"', text):
        size = int(match.group(1))
        body = text[match.end() :].encode()
        assert body[size : size + 2] == b'";', (text, size)
        found += 1
    assert found >= 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--map", "nope.csv", "site"], "cannot read the map nope.csv"),
        (["--map", "MAP", "missing-dir"], "no such file or directory: missing-dir"),
        (["--map", "MAP", "--target-setting", "player_id", "site"], "--target-setting takes KEY=VALUE"),
        (["--map", "site/videos.csv", "site"], "not a `migrator export` map"),
        (["--map", "EMPTY", "site"], "the map is empty"),
    ],
)
def test_bad_input_is_refused_with_its_reason(prepared, capsys, args, message):
    base, root, mapping, _ = prepared
    (base / "empty.csv").write_text("id,source_platform,source_id,state\n", encoding="utf-8")
    before = snapshot(root)
    args = [str(mapping) if a == "MAP" else str(base / "empty.csv") if a == "EMPTY" else a for a in args]
    code, _, err = run_cli(capsys, *args)
    assert code == 2 and message in err
    assert snapshot(root) == before


def test_a_csv_without_the_column_is_skipped_with_the_columns_it_has(prepared, capsys):
    _, _, mapping, _ = prepared
    code, out, _ = run_cli(capsys, "--map", str(mapping), "--csv-column", "nope", "--json", "site/videos.csv")
    report = json.loads(out)
    assert code == 0 and report["files"]["read"] == {}
    (reason,) = report["files"]["skipped"]
    assert "nope" in reason and "embed" in reason and "title" in reason


def test_from_the_ledger_a_signed_video_keeps_the_urls_an_export_leaves_out():
    from migrator_cli.commands.rewrite import ledger_row
    from migrator_cli.cutover import row_of

    hls = "https://d111.cloudfront.net/signed/lib/1/index.m3u8"
    signed = {
        "asset_id": "lib/1",
        "source_url": "vimeo://1",
        "state": "ready",
        "remote_id": "job-1",
        "playback_info": {"policy": "signed", "hls": hls, "thumbnail": hls.replace("index.m3u8", "poster.jpg")},
    }
    exported = row_of(signed, "aws")
    assert exported["hls_url"] is None and exported["note"] == "signed: needs a token"
    row = ledger_row(signed, "aws", {})
    assert row["hls_url"] == hls and row["note"] == "signed: needs a token"
    public = {**signed, "playback_info": {"policy": "public", "hls": hls}}
    assert ledger_row(public, "aws", {}) == row_of(public, "aws")
