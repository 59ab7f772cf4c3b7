"""The demo matrix: every source to a target and every target from the sample, one demo each.

    infra/demo --matrix [--only vimeo-mux,sample-bunny] [--assets N]

Each pair is one `infra/demo` in a process of its own (its own emulator, simulators and stack,
stopped before the next starts), its whole output kept in `.local/matrix/<stamp>/<pair>.log`.
The matrix prints one line a pair as it ends, with the demo's own result line and its wall time,
then the table again, and exits non-zero if any pair is not OK. Run it on a quiet machine before
resolving anything that touches a source, a target, the tracks or the demo.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from migrator.platforms import SOURCES
from migrator.providers import PROVIDERS

from .toolchain import ROOT

SAMPLE = "sample"  # the demo's own inventory of URLs, not a source platform

# Every registered source once (migrator.platforms.SOURCES), each to the target named here, else to Mux, the one
# that fetches tracks itself and carries most of what a row holds (an S3 link too: Stream refuses one presigned for
# GET, as it asks with HEAD first). The targets rotate so that every target that takes tracks meets a source too.
PAIRED_TARGET = {
    "wistia": "apivideo",
    "mux": "cloudflare",
    "brightcove": "jwplayer",
    "jwplayer": "aws",  # its simulator serves captions, and a real video for MediaConvert (media_file)
    "kaltura": "vimeo",
    "dropbox": "bunny",
    "gcs": "apivideo",
    "azure": "cloudflare",
}
DEFAULT_TARGET = "mux"
# The pairs whose demo also archives every original (`--archive`, issue 43): Vimeo, which has deleted masters.
ARCHIVED = {("vimeo", "mux")}
SOURCE_PAIRS: tuple[tuple[str, str], ...] = tuple((s, PAIRED_TARGET.get(s, DEFAULT_TARGET)) for s in SOURCES)


@dataclass(frozen=True)
class Pair:
    source: str  # a source platform, or SAMPLE
    target: str

    @property
    def name(self) -> str:
        return f"{self.source}-{self.target}"

    def argv(self, assets: int | None) -> list[str]:
        """The demo's arguments for this pair."""
        args = ["--provider", self.target]
        if self.source != SAMPLE:
            args += ["--from", self.source]
        if (self.source, self.target) in ARCHIVED:
            args.append("--archive")
        return args + (["--assets", str(assets)] if assets else [])


def all_pairs() -> list[Pair]:
    """Every source to its target, then every target from the sample, in that order."""
    return [Pair(s, t) for s, t in SOURCE_PAIRS] + [Pair(SAMPLE, t) for t in PROVIDERS]


def chosen(only: str | None) -> list[Pair]:
    """The pairs `--only` names (comma-separated `source-target`, `sample-target` for the sample), in the
    matrix's order; all of them when it names none. ValueError naming what is not a pair of the matrix."""
    pairs = all_pairs()
    if not only:
        return pairs
    wanted = [name.strip() for name in only.split(",") if name.strip()]
    known = {pair.name for pair in pairs}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise ValueError(f"not a pair of the matrix: {', '.join(unknown)} (pairs: {', '.join(sorted(known))})")
    return [pair for pair in pairs if pair.name in wanted]


@dataclass(frozen=True)
class Verdict:
    pair: Pair
    ok: bool
    result: str  # the demo's own result line, or why there is none
    wall_s: float


def verdict_of(pair: Pair, output: str, exit_code: int, wall_s: float) -> Verdict:
    """A pair's verdict from its demo's output (pure): OK only when the demo exited 0 and its last
    `result` line says OK; otherwise the last thing it said, so the table names the reason."""
    results = [line.split(None, 1)[1].strip() for line in output.splitlines() if line.startswith("result ")]
    result = results[-1] if results else ""
    ok = exit_code == 0 and result.startswith("OK")
    if not result:
        said = [line.strip() for line in output.splitlines() if line.strip()]
        last = said[-1] if said else "no output"
        result = f"exit {exit_code}, no result line: {last[:150]}"
    elif exit_code != 0 and result.startswith("OK"):
        result = f"exit {exit_code} after {result}"
    return Verdict(pair, ok, result, wall_s)


def line_of(verdict: Verdict) -> str:
    """One line of the table: the pair, its verdict in a word, its wall time, the demo's result."""
    source = "sample" if verdict.pair.source == SAMPLE else verdict.pair.source
    mark = "OK" if verdict.ok else "NOT OK"
    return f"{source:>10} -> {verdict.pair.target:<10} {mark:<6} {verdict.wall_s:7.1f} s  {verdict.result}"


def run_pair(pair: Pair, assets: int | None, logs: Path) -> Verdict:
    """One demo in a process of its own, its output in `logs/<pair>.log`."""
    log = logs / f"{pair.name}.log"
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(
            [sys.executable, "-m", "infra.demo", *pair.argv(assets)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
    wall_s = time.monotonic() - started
    return verdict_of(pair, log.read_text(encoding="utf-8", errors="replace"), done.returncode, wall_s)


def run(only: str | None, assets: int | None) -> int:
    """Run the chosen pairs one after another; 0 when every one is OK."""
    try:
        pairs = chosen(only)
    except ValueError as exc:
        print(f"[matrix] {exc}", file=sys.stderr)
        return 2
    logs = ROOT / ".local" / "matrix" / time.strftime("%Y%m%d-%H%M%S")
    logs.mkdir(parents=True, exist_ok=True)
    print(f"[matrix] {len(pairs)} pairs, one demo each; logs in {logs.relative_to(ROOT)}", flush=True)
    started = time.monotonic()
    verdicts = []
    for pair in pairs:
        verdicts.append(run_pair(pair, assets, logs))
        print(line_of(verdicts[-1]), flush=True)
    failed = [v for v in verdicts if not v.ok]
    took = time.monotonic() - started
    print(f"\n=== demo matrix: {len(verdicts) - len(failed)} of {len(verdicts)} OK in {took:.0f} s ===")
    for verdict in verdicts:
        print(line_of(verdict))
    return 1 if failed else 0
