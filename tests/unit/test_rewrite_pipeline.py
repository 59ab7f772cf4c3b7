"""The file side of `migrator rewrite`: the walk, the dry run's diff that `patch -p1` and `git apply` turn into
exactly what --apply writes, the atomic apply with its backup, a second run that changes nothing, binary files
skipped with a reason, and a 200 MB file streamed in flat memory. The rewrite is a toy (a fake embed replaced)."""

from __future__ import annotations

import io
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from migrator_cli.rewrite import diff, files, pipeline
from migrator_cli.rewrite.containers import jsontext, text

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
FAKE = re.compile(r'<fake-embed id="(\w+)">.*?</fake-embed>', re.S)


def toy(value: str) -> str:
    """Replaces a fake embed with a new one of two lines (so line numbers shift), and is idempotent."""
    return FAKE.sub(lambda m: f'<new-embed id="{m[1]}">\n  src="https://new.example/{m[1]}"</new-embed>', value)


@pytest.fixture(autouse=True)
def toy_locator(monkeypatch: pytest.MonkeyPatch) -> None:
    """Large text files are cut where the toy's embeds are not (the engine's forms are not these tests' concern)."""
    monkeypatch.setattr(text, "embed_spans", lambda value: [m.span() for m in FAKE.finditer(value)])


def big_text() -> bytes:
    """About 3 MB of HTML with embeds in several windows, one of them multi-line, in CRLF."""
    page = "".join(f"<p>paragraph {n} of the page</p>\r\n" for n in range(9000))
    embed = '<fake-embed id="v{}">\r\n  <param>\r\n</fake-embed>\r\n'
    return "".join(page + embed.format(n) for n in range(10)).encode()


def site(root: Path) -> dict[str, bytes]:
    """A small site: every kind of file, and what is in each."""
    content = {
        "index.html": b'<html>\r\n<body>\r\n<fake-embed id="a1">\r\n</fake-embed>\r\n</body>\r\n</html>\r\n',
        "about.html": b"<p>no embeds here</p>\n",
        "blog/post one.md": b'# Post\n\ntext\n\n<fake-embed id="b2"></fake-embed>',  # no final newline
        "blog/legacy.html": b'caf\xe9 \xff <fake-embed id="c3">x</fake-embed> \xfe\n',  # not UTF-8
        "data/videos.json": b'{"v": "<fake-embed id=\\"d4\\"><\\/fake-embed>",\n "k": 1}\n',
        "data/feed.jsonl": b'{"h": "x"}\n{"h": "<fake-embed id=\\"e5\\"></fake-embed>"}\n',
        "data/table.csv": b'id,html\r\n1,"<fake-embed id=""f6""></fake-embed>"\r\n2,plain\r\n',
        "big.html": big_text(),
        "logo.png": b'\x89PNG\r\n\x1a\n<fake-embed id="z"></fake-embed>',
        "nul.txt": b'text\0with a NUL <fake-embed id="z"></fake-embed>',
        "archive.sql.gz": b"\x1f\x8b\x08\x00",
        ".git/config": b'<fake-embed id="z"></fake-embed>',
    }
    for name, data in content.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return content


def run_all(paths: list[Path], column: str | None = None, **options) -> tuple[bytes, list[pipeline.FileResult]]:
    diff = io.BytesIO()
    results = [
        pipeline.rewrite_file(item.path, item.kind, toy, column=column, diff_out=diff, **options)
        for item in pipeline.plan(paths, column=column)
        if item.kind is not None
    ]
    return diff.getvalue(), results


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def test_the_walk_is_sorted_and_says_why_each_skipped_file_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "site"
    site(root)
    outside = tmp_path / "outside.html"
    outside.write_text('<fake-embed id="o"></fake-embed>')
    (root / "link-out.html").symlink_to(outside)
    (root / "link-in.html").symlink_to(root / "index.html")
    (root / "blog-link").symlink_to(root / "blog")
    (root / "old-backup").mkdir()
    (root / "old-backup" / pipeline.BACKUP_MARK).write_text("")
    (root / "old-backup" / "index.html").write_text('<fake-embed id="z"></fake-embed>')
    (root / f".index.html.x{pipeline.TEMPORARY_SUFFIX}").write_text("partial")
    planned = list(pipeline.plan([Path("site")], column="html"))
    assert [(p.path.relative_to("site").as_posix(), p.kind, p.reason) for p in planned] == [
        (f".index.html.x{pipeline.TEMPORARY_SUFFIX}", None, files.LEFTOVER),
        ("about.html", "text", ""),
        ("archive.sql.gz", None, files.COMPRESSED),
        ("big.html", "text", ""),
        ("blog/legacy.html", "text", ""),
        ("blog/post one.md", "text", ""),
        ("blog-link", None, files.SYMLINK),
        ("data/feed.jsonl", "json", ""),
        ("data/table.csv", "csv", ""),
        ("data/videos.json", "json", ""),
        ("index.html", "text", ""),
        ("link-in.html", None, files.SYMLINK),
        ("link-out.html", None, files.SYMLINK),
        ("logo.png", None, files.BINARY_TYPE),
        ("nul.txt", None, files.BINARY_CONTENT),
    ]
    tally = pipeline.Tally()
    for item in planned:
        tally.planned(item)
    assert tally.files_seen == 15
    assert tally.by_kind == {"text": 5, "json": 2, "csv": 1}
    assert tally.skipped[files.SYMLINK] == 3
    # a path named twice, or inside another one named, is walked once
    twice = list(pipeline.plan([Path("site"), Path("site/index.html"), Path("site/blog"), Path("site/")]))
    assert [p.path for p in twice] == [p.path for p in planned]
    # a symlink named on the command line is followed; a path that is not there is an error
    assert [p.kind for p in pipeline.plan([root / "link-out.html"])] == ["text"]
    with pytest.raises(FileNotFoundError):
        list(pipeline.plan([root / "missing.html"]))


def test_patch_and_git_apply_turn_the_dry_run_diff_into_what_apply_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # small windows and batches, so big.html and the JSON files are many records, embeds between them
    monkeypatch.setattr(text, "WINDOW", 1 << 16)
    monkeypatch.setattr(text, "HOLD", 1 << 12)
    monkeypatch.setattr(jsontext, "BATCH", 16)
    original = site(tmp_path / "site")
    shutil.copytree(tmp_path / "site", tmp_path / "patched" / "site", symlinks=True)
    shutil.copytree(tmp_path / "site", tmp_path / "git-applied" / "site", symlinks=True)

    diff, dry = run_all([Path("site")], column="html")
    assert snapshot(tmp_path / "site") == original  # a dry run writes nothing
    assert {r.name for r in dry if r.changed} == {
        "site/index.html",
        "site/blog/post one.md",
        "site/blog/legacy.html",
        "site/data/videos.json",
        "site/data/feed.jsonl",
        "site/data/table.csv",
        "site/big.html",
    }
    big = next(r for r in dry if r.name == "site/big.html")
    assert big.records_changed == 10  # big.html is cut into records and each of its hunks is placed by line
    assert diff.count(b"\n@@ ") >= 16

    _, applied = run_all([Path("site")], column="html", apply=True, backup_dir=tmp_path / "backup")
    assert [(r.name, r.records_changed, r.bytes_out) for r in applied] == [
        (r.name, r.records_changed, r.bytes_out) for r in dry
    ]
    after = snapshot(tmp_path / "site")
    assert after != original

    subprocess.run(["patch", "-p1", "--quiet", "--batch"], input=diff, cwd=tmp_path / "patched", check=True)
    assert snapshot(tmp_path / "patched" / "site") == after
    subprocess.run(["git", "apply", "-p1", "-"], input=diff, cwd=tmp_path / "git-applied", check=True)
    assert snapshot(tmp_path / "git-applied" / "site") == after


def test_apply_keeps_the_mode_backs_up_only_what_changed_and_a_second_run_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    original = site(tmp_path / "site")
    (tmp_path / "site" / "index.html").chmod(0o640)
    untouched = (tmp_path / "site" / "about.html").stat()
    backup = pipeline.default_backup_dir(Path("site"))
    assert backup.parent == tmp_path and backup.name.startswith("site.backup-")

    _, results = run_all([Path("site")], column="html", apply=True, backup_dir=backup)
    changed = {r.name for r in results if r.changed}
    assert stat.S_IMODE((tmp_path / "site" / "index.html").stat().st_mode) == 0o640
    about = (tmp_path / "site" / "about.html").stat()
    assert (about.st_ino, about.st_mtime_ns) == (untouched.st_ino, untouched.st_mtime_ns)
    saved = snapshot(backup)
    assert saved.pop(pipeline.BACKUP_MARK)
    assert saved == {name: original[name.removeprefix("site/")] for name in changed}
    assert all(r.backup == backup / r.name for r in results if r.changed)
    assert not list((tmp_path / "site").rglob(f"*{pipeline.TEMPORARY_SUFFIX}"))

    applied = snapshot(tmp_path / "site")
    diff, again = run_all([Path("site")], column="html", apply=True, backup_dir=tmp_path / "second")
    assert diff == b""
    assert not any(r.changed for r in again)
    assert snapshot(tmp_path / "site") == applied
    assert not (tmp_path / "second").exists()
    # a backup inside the tree is passed over by later runs
    inside = tmp_path / "site" / "backup-here"
    (tmp_path / "site" / "index.html").write_bytes(original["index.html"])
    run_all([Path("site")], apply=True, backup_dir=inside)
    assert all(inside not in p.path.parents for p in pipeline.plan([Path("site")]))


@pytest.mark.parametrize("fail_at", ["rewrite", "replace"])
def test_a_failure_mid_file_leaves_the_original_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_at: str
) -> None:
    path = tmp_path / "big.html"
    data = big_text()
    path.write_bytes(data)
    calls = []

    def failing(value: str) -> str:
        calls.append(value)
        if fail_at == "rewrite" and len(calls) == 2:
            raise RuntimeError("the engine broke")
        return toy(value)

    if fail_at == "replace":
        monkeypatch.setattr(os, "replace", lambda *_: (_ for _ in ()).throw(OSError("disk gone")))
    with pytest.raises((RuntimeError, OSError)):
        pipeline.rewrite_file(path, "text", failing, apply=True, backup_dir=tmp_path / "backup", name="big.html")
    assert path.read_bytes() == data
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["big.html"]


def test_a_dry_run_counts_what_it_would_write(tmp_path: Path) -> None:
    path = tmp_path / "p.html"
    path.write_bytes(b'caf\xc3\xa9 <fake-embed id="q"></fake-embed>\n')
    result = pipeline.rewrite_file(path, "text", toy)
    expected = toy(path.read_text()).encode()
    assert (result.bytes_in, result.bytes_out, result.records_changed) == (path.stat().st_size, len(expected), 1)
    tally = pipeline.Tally()
    tally.done(result)
    assert (tally.files_changed, tally.records_changed, tally.bytes_out) == (1, 1, len(expected))


@pytest.mark.parametrize(
    ("name", "header"),
    [
        ("site/a.html", "site/a.html"),
        ("site/my page.html", "site/my page.html\t"),
        ('site/say "hi".html', '"site/say \\"hi\\".html"'),
    ],
)
def test_names_in_diff_headers_read_back(tmp_path: Path, name: str, header: str) -> None:
    assert diff.header_name(name) == header
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text('one\n<fake-embed id="n"></fake-embed>\n')
    out = io.BytesIO()
    pipeline.rewrite_file(tmp_path / name, "text", toy, diff_out=out, name=name)
    subprocess.run(["patch", "-p1", "--quiet", "--batch"], input=out.getvalue(), cwd=tmp_path, check=True)
    assert (tmp_path / name).read_text() == toy('one\n<fake-embed id="n"></fake-embed>\n')


def test_display_names_are_relative_to_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert pipeline.display_name(Path("site/./a/../b.html")) == "site/b.html"
    assert pipeline.display_name(Path("/elsewhere/b.html")) == "elsewhere/b.html"


MEMORY_PROBE = textwrap.dedent(
    """
    import re, resource, sys
    from pathlib import Path
    from migrator_cli.rewrite import pipeline
    from migrator_cli.rewrite.containers import jsontext, text

    FAKE = re.compile(r'<fake-embed id="(\\w+)">.*?</fake-embed>', re.S)
    text.embed_spans = lambda value: [m.span() for m in FAKE.finditer(value)]
    rewrite = lambda value: FAKE.sub(lambda m: '<new-embed id="' + m[1] + '"></new-embed>', value)
    path = Path(sys.argv[1])
    pipeline.rewrite_file(path, "text", lambda v: v, name="warm")  # warm the imports and buffers on a small file
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with open("/dev/null", "wb") as diff:
        result = pipeline.rewrite_file(Path(sys.argv[2]), "text", rewrite, diff_out=diff, name="big")
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(result.records_changed, result.bytes_in, result.bytes_out, (after - before) // 1024)
    """
)


@pytest.mark.slow
def test_a_200_mb_text_file_is_streamed_in_flat_memory(tmp_path: Path) -> None:
    block = ("<p>" + "x" * 60 + "</p>\n") * 16_000  # about 1 MB of lines
    embed = '<fake-embed id="m">\n<param>\n</fake-embed>\n'
    big = tmp_path / "big.html"
    with big.open("w") as out:
        for n in range(200):
            out.write(block)
            if n % 20 == 0:
                out.write(embed)
    small = tmp_path / "small.html"
    small.write_text(block[:100_000])
    probe = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(small), str(big)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "cli")},
    )
    records, size_in, size_out, growth_mb = map(int, probe.stdout.split())
    assert size_in == big.stat().st_size > 200_000_000
    assert records == 10
    assert size_out == size_in + 10 * (len('<new-embed id="m"></new-embed>') - len(embed) + 1)
    assert growth_mb < 50, f"peak RSS grew {growth_mb} MB over a {size_in // 1_000_000} MB file"


def test_a_record_that_is_not_the_file_text_at_its_line_is_an_error_not_a_wrong_diff(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one\ntwo\nthree\n")
    with path.open(encoding="utf-8", newline="") as original:
        writer = diff.DiffWriter(io.BytesIO(), "a.txt", original)
        with pytest.raises(RuntimeError, match="line 2"):
            writer.record(2, "three\n", "3\n")


def test_hunks_closer_than_twice_the_context_merge_and_far_ones_do_not(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    lines = [f"line {n}\n" for n in range(1, 31)]
    path.write_text("".join(lines))
    out = io.BytesIO()
    with path.open(encoding="utf-8", newline="") as original:
        writer = diff.DiffWriter(out, "a.txt", original)
        for number in (5, 11, 25):  # 5 and 11 are 5 lines apart (merged), 25 is far
            writer.record(number, lines[number - 1], "changed\n")
        writer.finish()
    headers = [line for line in out.getvalue().decode().splitlines() if line.startswith("@@")]
    assert headers == ["@@ -2,13 +2,13 @@", "@@ -22,7 +22,7 @@"]
    changed = tmp_path / "b.txt"
    changed.write_text("".join("changed\n" if n in (5, 11, 25) else line for n, line in enumerate(lines, 1)))
    reference = subprocess.run(["diff", "-u", str(path), str(changed)], capture_output=True).stdout
    assert out.getvalue().split(b"\n")[2:] == reference.split(b"\n")[2:]  # as diff -u writes it, but the names


def test_line_changes_tile_both_sides_and_equal_spans_are_equal() -> None:
    chooser = random.Random(46)
    for _ in range(500):
        before = [chooser.choice("abcdefgh") + "\n" for _ in range(chooser.randint(0, 40))]
        after = list(before)
        for _ in range(chooser.randint(0, 6)):
            at = chooser.randint(0, len(after))
            roll = chooser.random()
            if roll < 0.4 and after:
                del after[min(at, len(after) - 1)]
            elif roll < 0.7:
                after.insert(at, chooser.choice("abcdefghxyz") + "\n")
            elif after:
                after[min(at, len(after) - 1)] = "z" + after[min(at, len(after) - 1)]
        at_a = at_b = 0
        for equal, a1, a2, b1, b2 in diff.line_changes(before, after):
            assert (a1, b1) == (at_a, at_b)
            assert not equal or before[a1:a2] == after[b1:b2]
            at_a, at_b = a2, b2
        assert (at_a, at_b) == (len(before), len(after))


def test_line_changes_anchor_on_lines_found_once() -> None:
    before = [f"unique {n}\n" for n in range(50)]
    after = [line if n % 10 else "changed\n" for n, line in enumerate(before)]
    changes = [span for span in diff.line_changes(before, after) if not span[0]]
    assert [(a1, a2) for _, a1, a2, _, _ in changes] == [(n, n + 1) for n in range(0, 50, 10)]
