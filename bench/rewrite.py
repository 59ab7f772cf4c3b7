"""Benchmark: `migrator rewrite` over a WordPress MySQL dump (issue 46): the SQL container's speed and memory.

    bench/rewrite [--size-mb 10,100,1024] [--rewrite engine|regex] [--embed-every 5]

Not a test: it prints figures. For each size a mysqldump-shaped dump of WordPress tables is generated into a
scratch directory: wp_posts as extended INSERTs (about 1 MB a line, as mysqldump's net_buffer_length makes them) of
HTML posts, one in --embed-every holding a Vimeo embed (an iframe, or a Gutenberg embed block whose JSON attributes
name the player URL); wp_postmeta with PHP-serialized settings, one in ten naming the video, some serialized twice;
quotes, newlines and multibyte text escaped as mysqldump escapes them. The SQL container
(migrator_cli.rewrite.containers.sql) then copies it to a second file in a child process of its own, with
  engine   the real engine (migrator_cli.rewrite.engine.Engine) over a map of the dump's Vimeo ids moved to Mux,
  regex    a regular expression replacing the Vimeo player URL (where the engine cannot be built),
and the child reports its wall time and its own peak RSS (bench.peak: VmHWM), which must stay flat with the size:
records are lines, so memory is bounded by the longest line, not the file.

Figures, per size: MB/s (the dump's size over the copy's wall time), peak MB, values seen, values changed,
serialized values fixed, records changed.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.peak import own_peak_kib
from infra.toolchain import ROOT

MB = 1024 * 1024
LINE_BYTES = 1 * MB  # mysqldump's extended INSERT lines break near net_buffer_length (1 MB by default)
VIDEO_IDS = [str(76979871 + n) for n in range(200)]
WORDS = "le vidéo café naïve über straße the quick brown fox jumps over lazy dog lorem ipsum dolor sit amet".split()
_VIMEO_PLAYER = re.compile(r"https://player\.vimeo\.com/video/(\d+)")


def mysql_quote(value: str) -> str:
    escapes = {"\0": "\\0", "\n": "\\n", "\r": "\\r", "\\": "\\\\", "'": "\\'", '"': '\\"', "\x1a": "\\Z"}
    return "'" + "".join(escapes.get(c, c) for c in value) + "'" if any(c in escapes for c in value) else f"'{value}'"


def php_serialize(value: object) -> str:
    if isinstance(value, bool):
        return f"b:{int(value)};"
    if isinstance(value, int):
        return f"i:{value};"
    if isinstance(value, float):
        return f"d:{value!r};"
    if isinstance(value, str):
        return f's:{len(value.encode())}:"{value}";'
    assert isinstance(value, dict)
    members = "".join(php_serialize(k) + php_serialize(v) for k, v in value.items())
    return f"a:{len(value)}:{{{members}}}"


def post(rng: random.Random, embed_every: int) -> str:
    paragraphs = [
        f'<!-- wp:paragraph -->\n<p>{" ".join(rng.choices(WORDS, k=rng.randint(20, 80)))} "cité" l\'été</p>\n'
        "<!-- /wp:paragraph -->"
        for _ in range(rng.randint(2, 8))
    ]
    if rng.randrange(embed_every) == 0:
        video = rng.choice(VIDEO_IDS)
        if rng.random() < 0.5:
            embed = (
                f'<!-- wp:embed {{"url":"https://vimeo.com/{video}","type":"video","providerNameSlug":"vimeo"}} -->\n'
                f'<figure class="wp-block-embed"><div class="wp-block-embed__wrapper">\nhttps://vimeo.com/{video}\n'
                "</div></figure>\n<!-- /wp:embed -->"
            )
        else:
            embed = (
                f'<iframe src="https://player.vimeo.com/video/{video}?h=8272103f6e&amp;autoplay=1" width="640" '
                'height="360" frameborder="0" allow="autoplay; fullscreen; picture-in-picture" allowfullscreen>'
                "</iframe>"
            )
        paragraphs.insert(rng.randrange(len(paragraphs) + 1), embed)
    return "\n\n".join(paragraphs)


def meta(rng: random.Random) -> str:
    settings: dict = {"ratio": 0.5625, "autoplay": rng.random() < 0.3, "title": " ".join(rng.choices(WORDS, k=6))}
    if rng.randrange(10) == 0:
        settings["source"] = {"url": f"https://player.vimeo.com/video/{rng.choice(VIDEO_IDS)}", "start": 30}
    value = php_serialize(settings)
    return php_serialize(value) if rng.randrange(20) == 0 else value  # WordPress's double serialization


def generate(path: Path, size: int, embed_every: int, seed: int = 46) -> None:
    """A dump of about `size` bytes, written line by line."""
    rng = random.Random(seed)
    written, post_id, meta_id = 0, 0, 0
    with open(path, "w", encoding="utf-8", newline="") as out:
        header = "-- MySQL dump 10.13  Distrib 8.0.36, for Linux (x86_64)\n/*!40101 SET NAMES utf8mb4 */;\n"
        written += out.write(header)
        while written < size:
            rows: list[str] = []
            length = 0
            table = "wp_posts" if rng.random() < 0.7 else "wp_postmeta"
            while length < LINE_BYTES and written + length < size:
                if table == "wp_posts":
                    post_id += 1
                    row = f"({post_id},1,'2024-05-01 10:00:00',{mysql_quote(post(rng, embed_every))},'Titre',"
                    row += f"'publish','post-{post_id}',0,'post',NULL)"
                else:
                    meta_id += 1
                    row = f"({meta_id},{rng.randint(1, max(post_id, 1))},'_video_settings',{mysql_quote(meta(rng))})"
                rows.append(row)
                length += len(row) + 1
            written += out.write(f"INSERT INTO `{table}` VALUES {','.join(rows)};\n")


def build_rewrite(mode: str) -> tuple[Callable[[str], str], str]:
    """The rewrite the child runs, and what it is: the real engine where it can be built, else the regex."""
    if mode == "engine":
        try:
            import migrator_cli.rewrite.sources  # noqa: F401  # registers every source's forms
            from migrator_cli.rewrite.engine import Engine
            from migrator_cli.rewrite.idmap import from_rows

            rows = [
                {
                    "id": f"asset-{video}",
                    "source_platform": "vimeo",
                    "source_id": video,
                    "source_url": f"https://vimeo.com/{video}",
                    "provider": "mux",
                    "remote_id": f"mux{video}",
                    "playback_id": f"pb{video}",
                    "playback_policy": "public",
                    "state": "ready",
                }
                for video in VIDEO_IDS
            ]
            return Engine(from_rows(rows)).rewrite, "engine (vimeo -> mux)"
        except Exception as error:  # the engine is not there or not whole yet: said, and the regex measured
            print(f"[bench] the engine could not be built ({error!r}): the regex instead", file=sys.stderr)

    def regex(text: str) -> str:
        return _VIMEO_PLAYER.sub(r"https://player.mux.com/pb\1", text)

    return regex, "regex"


def child(path: str, mode: str) -> None:
    """One copy in its own process: its figures and peak RSS as one JSON line."""
    from migrator_cli.rewrite.containers import sql

    rewrite, used = build_rewrite(mode)
    records = 0

    def changed(_line: int, _old: str, _new: str) -> None:
        nonlocal records
        records += 1

    started = time.perf_counter()
    with (
        open(path, encoding="utf-8", errors="surrogateescape", newline="") as src,
        open(path + ".out", "w", encoding="utf-8", errors="surrogateescape", newline="") as dst,
    ):
        counts = sql.run(src, dst, rewrite, changed)
    wall = time.perf_counter() - started
    figures = {"wall_s": wall, "peak_kib": own_peak_kib(), "rewrite": used, "records_changed": records}
    print(json.dumps({**figures, **vars(counts)}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/rewrite", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", default="10,100,1024", help="dump sizes in MB, a comma list (default 10,100,1024)")
    parser.add_argument("--rewrite", choices=("engine", "regex"), default="engine")
    parser.add_argument("--embed-every", type=int, default=5, help="one post in N holds an embed (default 5)")
    parser.add_argument("--child", nargs=2, metavar=("PATH", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    sizes = [int(n) for n in args.size_mb.split(",") if n]
    print(f"{'dump':>8} | {'MB/s':>6} | {'peak MB':>7} | {'values':>9} | {'changed':>7} | {'serialized':>10} | rewrite")
    failed = False
    for size_mb in sizes:
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / f"wordpress-{size_mb}mb.sql"
            generate(path, size_mb * MB, args.embed_every)
            size = path.stat().st_size
            command = [sys.executable, "-m", "bench.rewrite", "--child", str(path), args.rewrite]
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{size_mb:>5} MB | FAILED\n{done.stderr[-2000:]}", flush=True)
            failed = True
            continue
        got = json.loads(done.stdout.strip().splitlines()[-1])
        print(
            f"{size / MB:>5.0f} MB | {size / MB / got['wall_s']:>6.1f} | {got['peak_kib'] / 1024:>7.0f} |"
            f" {got['values']:>9,} | {got['changed']:>7,} | {got['serialized_fixed']:>10,} | {got['rewrite']}",
            flush=True,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
