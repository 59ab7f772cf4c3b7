"""The demo: migrate a sample library end to end on this machine, driven by the operator's CLI.

    infra/demo [--provider TARGET] [--assets 500] [--provider-rate 20] [--keep]
    infra/demo --from SOURCE --provider TARGET [--archive]   (any pair)
    infra/demo --matrix [--only vimeo-mux,sample-bunny]   (every source, every target: infra/matrix.py)

TARGET is any registered target, SOURCE any registered source (migrator.platforms: TARGETS,
SOURCES; `infra/demo --help` lists them). It starts the emulator and a rate-limited provider
simulator speaking the chosen provider's API (paths, credentials, bodies, statuses, signed
webhooks), and deploys template.yaml with that provider.
Then it does what an operator would: writes a sample inventory CSV (with a few bad
rows, a repeated id and sources the provider refuses), `migrator plan`s it (time and
cost, no AWS), `migrator load`s it, shows `migrator status` while the queue drains, runs
`migrator reconcile` once, exports the mapping with `migrator report` and the cut-over map
with `migrator export`, checks what arrived with `migrator verify` (each ready video's HLS
manifest, duration and resolution against its row), runs `migrator rewrite --dry-run` over a small
sample site that embeds the videos as their platform documents it (infra/demo_site.py), and ends with a
summary. It exits non-zero if any asset is left unresolved, any asset got two provider videos, or the parity
check finds a mismatch.

With --from PLATFORM the library lives on that platform instead: a second simulator holds it
(titles, tags, captions, private and unfetchable videos, links that expire, files Mux and Stream
prepare first), `migrator inventory --from PLATFORM` lists it into a JSON Lines inventory with
source references, and `migrator load` sends that file as it is; the uploader resolves each link
at the create and the target simulator fetches it from the source simulator.

With --provider aws a local MediaConvert really transcodes each archived original, so the library is one real
2-second video (100 by default), served through a local CloudFront edge that enforces signed URLs and cookies;
after verify the demo plays every video as a viewer would (infra/demo_aws.py), and counts MediaConvert's jobs per
asset where other targets count the provider simulator's videos and 429s.

With --archive the stack also copies every original to an S3 bucket of the emulator (ArchiveBucket),
and the demo waits for the copies, checks each with `migrator verify --archive` and quotes its line
("archived N of M, <bytes>, checksums verified"); an original not archived makes the demo not OK.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import requests
from botocore.exceptions import BotoCoreError, ClientError
from migrator.platforms import SOURCES, TARGETS
from migrator.providers import PROVIDERS
from migrator_cli.main import main as migrator
from migrator_cli.status import gather
from migrator_cli.target import resolve

from .captions import SRT, VTT, FileServer, body
from .demo_archive import DEMO_ARCHIVE_BUCKET, archive_line, archive_problem, settle_archive
from .demo_aws import PlayTally, check_playback, provider_lines, serve_sample_media
from .demo_site import rewrite_step
from .demo_tracks import TRACKS_SETTLE_S, fidelity_of, settle_tracks
from .localrun import LocalRun
from .sim.platforms.mux_signing import mux_host_flags
from .storage_emulators import LIBRARY_NAME

# The aws target's default sample: each video is really transcoded (three renditions), on this machine's cores.
AWS_DEFAULT_ASSETS = 100
# Anything here when the drain ends is unresolved: webhooks carry processing on to ready or rejected.
UNSETTLED = {"pending", "inventoried", "uploading", "failed", "processing"}
# The least the demo gives a drain before it stops watching, whatever the rate.
DRAIN_TIMEOUT_FLOOR_S = 600.0
# How long the demo waits on an emulator that does not answer before it gives up with the reason.
STALL_LIMIT_S = 180.0
# What a stalled or overloaded local stack raises: a timeout, a refused connection, a throttle, a 5xx.
UNANSWERED = (BotoCoreError, ClientError, requests.RequestException)


def drain_timeout(assets: int, simulated_rate: float, documented_rate: float | None) -> float:
    """How long to watch a drain (pure): twice what `assets` creates take at the slower of the simulator's rate
    and the provider's documented one (JW Player's 60 requests a minute make 490 creates over eight minutes),
    and never less than DRAIN_TIMEOUT_FLOOR_S."""
    rates = [r for r in (simulated_rate, documented_rate) if r and r > 0]
    return max(DRAIN_TIMEOUT_FLOOR_S, 2 * assets / min(rates)) if rates else DRAIN_TIMEOUT_FLOOR_S


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def answered(what: str, call, limit_s: float = STALL_LIMIT_S, sleep=time.sleep, clock=time.time):
    """call()'s result, asked again with backoff (1 s doubling to 30 s) while the local stack does not
    answer, saying what it waits for; SystemExit with the reason once it has not answered for limit_s."""
    started, delay = clock(), 1.0
    while True:
        try:
            return call()
        except UNANSWERED as exc:
            waited = clock() - started
            if waited >= limit_s:
                raise SystemExit(f"[demo] gave up: {what} got no answer for {waited:.0f} s: {one_line(exc)}") from None
            print(f"[demo] waiting for the local stack ({what}: {one_line(exc)}); asking again in {delay:.0f} s")
            sleep(delay)
            delay = min(delay * 2, 30.0)


SAMPLE_MEDIA = "https://media.example.com"  # the provider simulator reads the duration from each URL's query


def sample_media_path(i: int) -> str:
    """Row `i`'s media path: every 100 rows, one the provider refuses (a .wmv) and one it fails to ingest."""
    if i % 100 == 13:
        return f"/library/unsupported-{i:05d}.wmv"
    if i % 100 == 57:
        return f"/library/corrupt-{i:05d}.mp4"
    return f"/library/{i:05d}.mp4"


def write_inventory(
    path: Path, count: int, captions: str | None = None, media: str = SAMPLE_MEDIA, duration_s: float | None = None
) -> list[str]:
    """A sample inventory CSV; returns the ids that should reach the ledger.

    Every row carries what a video is besides its bytes: a description, tags, custom
    metadata, a poster time, the original's creation time and a privacy: one in five
    private, one in twenty signed, one in ten with none (the stack's DefaultPlayback
    decides), the rest public. Every tenth has two caption tracks from `captions`, when given (an SRT
    and a WebVTT file), and every fiftieth a third that is not a caption file at all, which
    fails alone with its reason. Every 100 assets, one source the provider refuses at
    create and one it fails to ingest. At the end: a repeated row (dropped with a warning),
    the same id with another URL, an ftp source, a bad duration and an id with a control
    character (bad rows, reported with their line numbers and never sent).
    `media`: where the files are (sample_media_path below it); `duration_s`: every row's duration, where the files
    are one real video (the aws target's), else each row's own.
    """
    columns = "id,source_url,title,duration_s,description,tags,privacy,poster_time_s,created_at,metadata,tracks"
    ids, lines = [], [columns]
    for i in range(count):
        asset_id = f"library/{i:05d}"
        duration = duration_s if duration_s is not None else 30 + (i * 7) % 600 + 0.5
        url = f"{media}{sample_media_path(i)}"
        if url.endswith(f"/{i:05d}.mp4"):
            url += f"?duration={duration:g}"
        privacy = "private" if i % 5 == 1 else "signed" if i % 20 == 2 else "" if i % 10 == 3 else "public"
        created = f"20{10 + i % 14:02d}-0{1 + i % 9}-1{i % 10}T10:00:00Z"
        metadata = json.dumps({"season": 1 + i // 100, "lat": 51.5072178}).replace('"', '""')
        tracks = ""
        if captions and i % 10 == 4:
            entries = [
                {"url": f"{captions}/en.srt", "language": "en", "kind": "captions", "closed_captions": True},
                {"url": f"{captions}/fr.vtt", "language": "fr", "kind": "subtitles", "name": "Français"},
            ]
            if i % 50 == 4:
                entries.append({"url": f"{captions}/notes.html", "language": "de", "kind": "subtitles"})
            tracks = json.dumps(entries).replace('"', '""')
        lines.append(
            f'{asset_id},{url},Episode {i},{duration},"Episode {i}, with a description",news; season {1 + i // 100},'
            f'{privacy},{min(5.0, duration / 2)},{created},"{metadata}","{tracks}"'
        )
        ids.append(asset_id)
    lines.append(lines[1])  # a repeat
    lines.append("library/00001,https://elsewhere.example.com/other.mp4,Other,,,,,,,,")
    lines.append("library/ftp-only,ftp://old-nas.example.com/a.mp4,FTP,,,,,,,,")
    lines.append("library/bad-duration,https://media.example.com/d.mp4,Dur,about a minute,,,,,,,")
    lines.append('"library/bad\u0007id",https://media.example.com/bell.mp4,Bell,,,,,,,,')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ids


def list_source(run: LocalRun, path: Path) -> tuple[list[str], int]:
    """`migrator inventory --from <platform>` against the source simulator; (the ids written, unfetchable)."""
    if run.source is None:
        raise RuntimeError("this run has no source to list")
    if run.source == "s3":  # the stack's own bucket in this emulator
        argv = ["inventory", "--from", "s3", "--s3", f"s3://{LIBRARY_NAME}/library/", "--endpoint-url", run.endpoint]
    else:
        credentials = path.with_name(path.name + ".credentials.json")
        credentials.write_text(json.dumps(run.source_credentials), encoding="utf-8")
        argv = ["inventory", "--from", run.source, "--source-url", run.source_url, "--credentials", str(credentials)]
    argv += ["-o", str(path), "--mark-file", str(path.with_name(path.name + ".mark.json"))]
    # The source simulator has no rate limit here; a real platform's documented one is the default pace.
    argv += ["--rate", "50"]
    print(f"\n$ migrator {' '.join(argv)}")
    if migrator(argv) != 0:
        raise SystemExit("[demo] the inventory failed")
    ids = [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]
    unfetchable = path.with_name(path.name + ".unfetchable.jsonl")
    return ids, len(unfetchable.read_text(encoding="utf-8").splitlines())


def cli(run: LocalRun, *args: str) -> int:
    """`migrator ARGS --outputs <this stack> --endpoint <this emulator>`, in this process."""
    return migrator([*args, "--outputs", str(run.outputs_path), "--endpoint", run.endpoint])


@dataclass(frozen=True)
class Outcome:
    """What the summary found, for the verdict."""

    unresolved: int
    duplicates: int
    unsettled: int
    verified: bool
    pending_tracks: int
    tracks_waited_s: float
    private_not_signed: int = 0
    archive_problem: str | None = None  # with --archive: why the archive is not OK
    playback_problem: str | None = None  # the aws target: why a video is not played as a viewer would (demo_aws)
    site_problem: str | None = None  # the sample site's rewrite found what it should not (demo_site)


def problems_of(found: Outcome) -> str | None:
    """Why the demo is not OK, the first reason an operator should act on; None when it is."""
    if found.unresolved:
        return f"{found.unresolved} unresolved"
    if found.duplicates or found.unsettled > 0:
        return f"{found.duplicates} duplicate videos, {max(found.unsettled, 0)} assets never settled"
    if found.private_not_signed:
        return f"{found.private_not_signed} private rows not signed at the provider (privacy widened)"
    if not found.verified:
        return "parity check failed"
    if found.playback_problem:
        return found.playback_problem
    if found.pending_tracks:  # the provider never confirmed them: attached is not known, so not OK
        return f"{found.pending_tracks} caption tracks still pending after a wait of {found.tracks_waited_s:.0f} s"
    return found.archive_problem or found.site_problem


def result_line(ok: bool, problems: str, verify_result: str, failed_tracks: int) -> str:
    """The demo's last line: "every ... verified" only when verify checked every ready asset, and a caption
    track that failed is named there (a failure by design, the sample's page that is no caption, included)."""
    if not ok:
        return f"NOT OK: {problems}"
    tracks = f"; {failed_tracks} caption tracks failed (above)" if failed_tracks else ""
    if verify_result.startswith("OK: every"):
        return f"OK: every asset resolved and verified{tracks}"
    return f"OK: every asset resolved; verify: {verify_result.removeprefix('OK: ')}{tracks}"


def teed(call, *args) -> tuple[int, str, tuple[str, ...]]:
    """call(*args), its stderr shown as it is, and kept: (exit code, its `result` line, every line). The summary
    quotes verify's own words (how many it checked of how many, what it read back), never a word of its own."""
    import contextlib
    import io

    captured = io.StringIO()

    class Tee(io.TextIOBase):
        def write(self, text: str) -> int:
            captured.write(text)
            shown = sys.__stderr__  # None only without a terminal's stderr at all
            return shown.write(text) if shown is not None else len(text)

    with contextlib.redirect_stderr(Tee()):
        code = call(*args)
    lines = tuple(captured.getvalue().splitlines())
    results = [line.split(None, 1)[1] for line in lines if line.startswith("result ")]
    return code, results[-1].strip() if results else "", lines


def watch(run: LocalRun, expected: int, timeout_s: float) -> tuple[Counter, float]:
    """`migrator status`, compact, every few seconds until every asset is settled, or past `timeout_s` until
    nothing has moved for WATCH_STALL_S (`watch_over`).

    When only processing assets are left and nothing has moved for a while, it runs
    `migrator reconcile` as an operator would: a provider that sends no webhook for a
    failure (api.video) or a webhook that was lost leaves them to reconcile's poll."""
    target = resolve(None, str(run.outputs_path), run.endpoint, None)
    started = time.time()
    last_print = 0.0
    counts: Counter = Counter()
    moved_at, last_counts = started, Counter[str]()
    while not watch_over(time.time() - started, time.time() - moved_at, timeout_s):
        view = answered("migrator status", lambda: gather(target, window_minutes=1))
        counts = Counter({k: v for k, v in view.counts.items() if v})
        settled = counts.get("ready", 0) + counts.get("rejected", 0)
        unresolved = sum(counts.get(s, 0) for s in UNSETTLED) + view.queues.visible + (view.queues.intake or 0)
        now = time.time()
        if now - last_print >= 5 or (settled >= expected and not unresolved):
            order = ["pending", "uploading", "failed", "processing", "ready", "rejected"]
            parts = " ".join(f"{s} {counts.get(s, 0):>4}" for s in order)
            eta = "done" if not view.remaining else (f"{view.eta_s:4.0f}s" if view.eta_s is not None else "   ?")
            rate = f"{view.throttle_rate:.0%}" if view.throttle_rate is not None else "-"
            print(f"[{now - started:6.1f}s] {parts} | {view.rate_per_min:5.0f}/min | ETA {eta} | 429 rate {rate}")
            last_print = now
        if settled >= expected and not unresolved:
            break
        if counts != last_counts:
            moved_at, last_counts = now, counts
        elif now - moved_at > 10 and unresolved and unresolved == counts.get("processing", 0):
            print(
                f"[{now - started:6.1f}s] only processing assets left, none moving: migrator reconcile --poll-after 5"
            )
            cli(run, "reconcile", "--poll-after", "5")
            moved_at = time.time()
        time.sleep(1)
    else:
        elapsed, quiet = time.time() - started, time.time() - moved_at
        print(f"[{elapsed:6.1f}s] stopped watching: {watch_end(elapsed, quiet, timeout_s)}")
    return counts, time.time() - started


# Past its timeout the drain watch waits on while assets still move, until none has for this long (and never past
# WATCH_CAP times the timeout): a slow drain is waited for, a stalled one is not.
WATCH_STALL_S = 60.0
WATCH_CAP = 3


def watch_over(elapsed_s: float, quiet_s: float, timeout_s: float) -> bool:
    """Whether the drain watch stops, its assets not all settled (pure): past its timeout with nothing moved for
    WATCH_STALL_S, or past WATCH_CAP times its timeout whatever moves."""
    return elapsed_s >= WATCH_CAP * timeout_s or (elapsed_s >= timeout_s and quiet_s >= WATCH_STALL_S)


def watch_end(elapsed_s: float, quiet_s: float, timeout_s: float) -> str:
    """Why the drain watch stopped, in the words of the wait it made."""
    if elapsed_s >= WATCH_CAP * timeout_s:
        return f"{elapsed_s:.0f} s, {WATCH_CAP} times the {timeout_s:.0f} s timeout, with assets still moving"
    return f"nothing moved for {quiet_s:.0f} s, {elapsed_s:.0f} s in (timeout {timeout_s:.0f} s)"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.matrix:
        from .matrix import run as run_matrix

        return run_matrix(args.only, args.assets if args.assets_given else None)
    captions = caption_server()
    run = local_run(args, captions.origin)
    wall_start = time.time()
    try:
        captions.__enter__()
        run.start()
        if run.media_file and not args.source:  # the aws target's sample rows point at a real video, served here
            serve_sample_media(captions, run.media_file, [sample_media_path(i) for i in range(args.assets)])
        inventory, ids, unfetchable = sample_inventory(run, args, captions.origin)
        walk = operate(run, args, inventory, len(ids))
        return print_summary(run, args, ids, unfetchable, walk, wall_start)
    except KeyboardInterrupt:
        print("\n[demo] interrupted")
        return 130
    except (subprocess.CalledProcessError, RuntimeError) as exc:  # the emulator or the deploy did not start
        print(f"[demo] stopped: {one_line(exc)}", file=sys.stderr)
        return 1
    except UNANSWERED as exc:  # anything the local stack failed to answer, as one line, not a traceback
        print(f"[demo] stopped: the local stack did not answer: {one_line(exc)}", file=sys.stderr)
        return 1
    finally:
        if args.keep:
            side = run.sim or run.mediaconvert
            edge = f" (the CloudFront edge on {run.edge.url} ends with this process)" if run.edge else ""
            print(
                f"[demo] left running: stack {run.stack_name} on {run.endpoint},"
                f" simulator on {side.url if side else '-'}{edge}"
            )
        else:
            run.stop()
        captions.__exit__(None, None, None)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="infra/demo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--provider",
        choices=TARGETS,
        default="generic",
        help="the provider to migrate to; the simulator speaks its API (default generic)",
    )
    parser.add_argument(
        "--from",
        dest="source",
        choices=SOURCES,
        help="migrate a library from this platform (a source simulator) instead of a CSV of URLs",
    )
    parser.add_argument(
        "--assets",
        type=int,
        help=f"sample library size (default 500; {AWS_DEFAULT_ASSETS} for aws, whose every video is really transcoded)",
    )
    parser.add_argument(
        "--provider-rate", type=float, default=20, help="creates/s the simulated provider allows (default 20)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        help="stop watching the drain after this many seconds once nothing has moved for"
        f" {WATCH_STALL_S:.0f} s (a drain still moving is watched up to {WATCH_CAP} times as long; default: twice"
        f" the drain at the provider's documented or simulated rate, at least {DRAIN_TIMEOUT_FLOOR_S:.0f})",
    )
    parser.add_argument(
        "--keep", action="store_true", help="leave the emulator, simulator and stack running at the end"
    )
    parser.add_argument(
        "--matrix",
        action="store_true",
        help="run the demo matrix: every source to a target and every target from the sample, one demo each,"
        " one line a pair; exits non-zero if any pair is not OK (--assets applies to each)",
    )
    parser.add_argument(
        "--archive",
        action="store_true",
        help="also keep a checksummed copy of every original in an S3 bucket (the stack's ArchiveBucket), then check"
        " every copy with `migrator verify --archive`",
    )
    parser.add_argument("--only", metavar="PAIRS", help="with --matrix: only these pairs (vimeo-mux,sample-bunny)")
    args = parser.parse_args(argv)
    args.assets_given = args.assets is not None
    args.assets = args.assets if args.assets_given else AWS_DEFAULT_ASSETS if args.provider == "aws" else 500
    if args.only and not args.matrix:
        parser.error("--only goes with --matrix")
    if args.assets < 10:
        parser.error("--assets must be at least 10")
    return args


def caption_server() -> FileServer:
    """The caption files the sample rows name: one SRT, one WebVTT, and a page that is no caption at all."""
    captions = FileServer()
    captions.route("/en.srt", body(SRT))
    captions.route("/fr.vtt", body(VTT))
    captions.route("/notes.html", body(b"<!doctype html><html><body>Please sign in</body></html>"))
    return captions


def local_run(args: argparse.Namespace, captions_origin: str) -> LocalRun:
    """The emulator, the provider simulator (and the source simulator, with --from) and the stack, not yet started."""
    # The stack paces 10 % faster than the provider allows, so 429s really happen
    # and are absorbed: the point of the demo.
    sim_args = ["--rate", str(args.provider_rate), "--burst", "5", "--processing-delay-s", "2"]
    if args.provider != "aws":  # the aws target's MediaConvert has no provider simulator's limits
        sim_args += demo_limits(args.provider, args.provider_rate)
    params = {
        "ProviderRateLimit": str(round(args.provider_rate * 1.1, 2)),
        "MaximumConcurrency": "5",
        # Each video's extras are several calls one after another (a picture: add, upload, activate); two workers
        # (the default) spent most of a pair's time waiting on the emulator's answers, not on the provider.
        "TracksConcurrency": "5",
        "WebhookScheme": "standard",
    }
    # A source library: every 50th unfetchable, every 7th private, every 10th captioned; links live 10 minutes,
    # files Mux and Stream prepare take 3 s.
    source_args = ["--library-size", str(args.assets), "--library-unfetchable-every", "50"]
    source_args += ["--library-private-every", "7", "--library-captions-every", "10", "--link-ttl-s", "600"]
    source_args += ["--prepare-s", "3", "--read-rate", "0", "--budget-quota", "0"]
    params["TrackFetchTestOrigins"] = captions_origin  # its one exact origin; other loopback stays refused
    bucket = None
    if args.archive or args.provider == "aws":  # the aws target transcodes the archived original: archived first
        bucket, params["ArchiveConcurrency"] = DEMO_ARCHIVE_BUCKET, "5"
    return LocalRun(
        sim_args,
        params,
        label="demo",
        provider=args.provider,
        source=args.source,
        source_args=source_args,
        archive_bucket=bucket,
    )


def demo_limits(provider: str, rate: float) -> list[str]:
    """The target simulator's limits on calls other than creates, raised to the demo's `rate` where the platform
    documents less (Mux: reads 5/s; Cloudflare: 1,200 calls in 5 minutes; JW Player: 60 a minute).

    The demo speeds creates to `rate` (Mux documents 1/s) so 500 rows drain in a minute; left at the documented
    figures, the calls after the create (each video's captions, thumbnail, chapters, collection place, the polls)
    took ten times the drain. The stack's pacing under the documented limits is bench/'s to measure, not the demo's.
    """
    from infra.sim.platforms import PROFILES

    documented = PROFILES[provider].limits
    raised: list[str] = []
    read_rate = float(documented.get("read_rate", 0) or 0)
    if 0 < read_rate < rate:
        raised += ["--read-rate", f"{rate:g}", "--read-burst", str(max(int(documented.get("read_burst", 0)), 10))]
    quota = int(documented.get("budget_quota", 0) or 0)
    window = float(documented.get("budget_window_s", 0) or 0)
    if quota and window and quota < rate * window:
        raised += ["--budget-quota", str(int(rate * window))]
    return raised


def sample_inventory(run: LocalRun, args: argparse.Namespace, captions_origin: str) -> tuple[Path, list[str], int]:
    """The inventory to migrate: listed from the source simulator with --from, else a sample CSV written;
    (its path, the ids that should reach the ledger, the videos listed apart as unfetchable)."""
    if args.source:
        inventory = Path(".local") / f"{run.stack_name}-{args.source}.jsonl"
        ids, unfetchable = list_source(run, inventory)
        return inventory, ids, unfetchable
    inventory = Path(".local") / f"{run.stack_name}-inventory.csv"
    # A provider with no text tracks (the generic contract) gets sample rows with none, not failed ones.
    with_tracks = captions_origin if PROVIDERS[args.provider].takes_tracks else None
    if run.media_file:  # the aws target: one real video, served beside the caption files (main)
        from .localrun_aws import SAMPLE_VIDEO_S

        ids = write_inventory(inventory, args.assets, with_tracks, media=captions_origin, duration_s=SAMPLE_VIDEO_S)
        return inventory, ids, 0
    return inventory, write_inventory(inventory, args.assets, with_tracks), 0


@dataclass(frozen=True)
class Walk:
    """What the walk through the operator's commands left for the summary."""

    counts: Counter
    drain_s: float
    verified: bool
    verify_result: str
    tracks_waited_s: float
    verify_lines: tuple[str, ...] = ()  # verify's whole output: what it read back of the extras
    archive_problem: str | None = None  # with --archive: why the archive is not OK, or None
    archive_line: str | None = None  # with --archive: verify --archive's own summary line
    playback: PlayTally | None = None  # the aws target: each video played through the CloudFront edge (demo_aws)
    site_line: str = ""  # the sample site's `migrator rewrite --dry-run`: what it found and did
    site_problem: str | None = None  # and what is wrong, or None


def operate(run: LocalRun, args: argparse.Namespace, inventory: Path, expected: int) -> Walk:
    """What an operator would do with the inventory: plan, load, watch the drain, reconcile, report, export, verify."""
    print(f"\n$ migrator plan {inventory} --provider {args.provider} --rate {args.provider_rate:g}")
    migrator(["plan", str(inventory), "--provider", args.provider, "--rate", f"{args.provider_rate:g}"])
    print(f"\n$ migrator load {inventory}")
    cli(run, "load", str(inventory))
    print("\n$ migrator status --watch   (compact)")
    documented = PROVIDERS[args.provider].create_rate_per_s
    timeout = args.timeout or drain_timeout(expected, args.provider_rate, documented)
    counts, drain_s = watch(run, expected, timeout)
    _, tracks_waited_s = settle_tracks(run, timeout_s=TRACKS_SETTLE_S)
    print("\n$ migrator status")
    time.sleep(3)  # the tally follows the ledger's stream within a few seconds
    cli(run, "status", "--window", "5")
    print("\n$ migrator reconcile")
    cli(run, "reconcile")
    report = Path(".local") / f"{run.stack_name}-report.csv"
    print(f"\n$ migrator report -o {report}")
    cli(run, "report", "-o", str(report))
    cutover = Path(".local") / f"{run.stack_name}-cutover.csv"
    hosts = mux_host_flags(run.simulator.url) if run.provider == "mux" else []
    print(f"\n$ migrator export -o {cutover}")
    cli(run, "export", "-o", str(cutover), *hosts)
    print("\n$ migrator verify   (--allow-private-addresses: the simulator is on this machine)")
    verify_code, verify_result, verify_lines = teed(
        cli, run, "verify", "--allow-private-addresses", "--rate", "50", *hosts
    )
    walk = Walk(counts, drain_s, verify_code == 0, verify_result, tracks_waited_s, verify_lines)
    site_line, site_problem = rewrite_step(run, cutover, cli)
    walk = replace(walk, site_line=site_line, site_problem=site_problem)
    if run.edge is not None:
        print("\n[demo] every ready video played as a viewer would, through the CloudFront edge (ffprobe)")
        played = check_playback(run, run.items("ready"))
        walk = replace(walk, playback=played)
        for unplayed in played.problems:
            print(f"  {unplayed}")
    if not args.archive:
        return walk
    tally, waited_s = settle_archive(run)
    print("\n$ migrator verify --archive")
    archive_code, _, archive_lines = teed(cli, run, "verify", "--archive")
    line = archive_line(archive_lines)
    problem = archive_problem(tally, archive_code == 0, line, waited_s)
    return replace(walk, archive_problem=problem, archive_line=line)


def print_summary(
    run: LocalRun, args: argparse.Namespace, ids: list[str], unfetchable: int, walk: Walk, wall_start: float
) -> int:
    """The closing summary, read back from the simulator and the ledger; 0 when everything resolved and verified."""
    counts, verified, verify_result = walk.counts, walk.verified, walk.verify_result
    rejected = run.items("rejected")
    reasons = Counter(" ".join(item.get("last_error", "?").split())[:90] for item in rejected)
    unresolved = sum(counts.get(s, 0) for s in UNSETTLED)
    print("\n=== summary ===")
    if args.source:
        print(f"assets in inventory   {len(ids)} from {args.source} (+{unfetchable} unfetchable, listed apart)")
    else:
        print(f"assets in inventory   {len(ids)} (+5 bad or repeated rows, reported by load and not sent)")
    for state in ("ready", "processing", "rejected", "failed", "uploading", "pending"):
        if counts.get(state):
            print(f"{state:<21} {counts[state]}")
    if reasons:
        print("rejected, by reason:")
    for reason, n in reasons.most_common():
        print(f"  {n:>4}  {reason}")
    fidelity = fidelity_of(run, walk.verify_lines)
    for line in fidelity.lines:
        print(line)
    side_lines, duplicates = provider_lines(run)
    for line in side_lines:
        print(line)
    print(f"dead-letter queue     {run.queue_depth('DeadLetterQueueUrl')}")
    print(f"parity (verify)       {verify_result or 'no result (above)'}")
    if walk.playback is not None:
        print(f"playback (ffprobe)    {walk.playback.line()}")
    if args.archive:
        print(f"archive               {walk.archive_line or 'no result (above)'}")
    print(f"site rewrite (dry)    {walk.site_line or 'not run'}")
    print(f"drain time            {walk.drain_s:.1f} s; wall time {time.time() - wall_start:.1f} s")
    settled = counts.get("ready", 0) + counts.get("rejected", 0)
    failed_tracks = fidelity.tracks.states.get("failed", 0)
    problems = problems_of(
        Outcome(
            unresolved=unresolved,
            duplicates=duplicates,
            unsettled=len(ids) - settled,
            verified=verified,
            pending_tracks=fidelity.tracks.pending,
            tracks_waited_s=walk.tracks_waited_s,
            private_not_signed=fidelity.private - fidelity.private_signed,
            archive_problem=walk.archive_problem,
            playback_problem=walk.playback.problem() if walk.playback is not None else None,
            site_problem=walk.site_problem,
        )
    )
    ok = problems is None
    print("result                " + result_line(ok, problems or "", verify_result, failed_tracks))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
