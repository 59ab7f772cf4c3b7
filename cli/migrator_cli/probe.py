"""The inventory pass of the operator CLI (`migrator probe`): ffprobe reads each pending source.

A source with a video stream and a known duration becomes `inventoried` with its
`duration_s`; one with no video stream, or that ffprobe cannot read, becomes `rejected`
with the reason. Only http(s) URLs ever reach ffprobe (s3:// sources are presigned to
https first); any other scheme is skipped and its item left as it is.

Sources are untrusted, and so is everything a server or a media file makes ffprobe say:
ffprobe runs without a shell, limited to the network protocols http(s) needs and to
demuxers of video files (no playlist or other format that opens further URLs), with a
deadline and a cap on what it may print, and a presigned URL's query string (its
credentials) never appears in a reason or a log line.

Nor may a source reach inside the operator's network: every connection ffprobe makes,
redirects included, goes through a guard proxy (guard.py) that connects to globally
routable addresses only. A source that leads to a private or local address is rejected;
`allow_private` (`--allow-private-addresses`) lifts that for local test servers.

A failure that says more about the path to the source than about the source (a timeout,
a refused connection, DNS, TLS, a 5xx, a 401/403 from a presigned URL, a transfer cut
short, a connection the guard cut) leaves the asset pending: a rejection is terminal, and a
network blip or a busy machine on the operator's side must not reject a library wholesale.
The next `probe` run tries those again. So ffprobe never gives up on a slow read by itself
(see `ffprobe_argv`): only the deadline ends a stall, and a deadline is never the source's
fault.

`classify_probe`, `guarded` and `probeable` are pure (in probe_verdict.py, named here still);
`probe_url` runs one ffprobe behind its guard; `run_probe` streams the candidates through a
bounded thread pool and moves the ledger.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import IO, Any

from migrator.states import State

from .errors import CliError
from .guard import Guard, IPAddress

# The verdicts moved to their own module; these names stay importable from here for their callers.
from .probe_verdict import (  # noqa: F401
    DETAIL_CHARS,
    MAX_URL_CHARS,
    PROBED_SCHEMES,
    ProbeResult,
    classify_probe,
    guarded,
    one_line,
    probeable,
    redact_url,
)

log = logging.getLogger(__name__)

# https = tls over tcp; "http" serves plain sources and https->http redirects; "httpproxy" is
# what tls tunnels through when http_proxy is set. Not "crypto" or "hls": those are for
# encrypted HLS, and every other protocol (file, concat, data, subfile, pipe...) stays off,
# also for URLs a redirect or a playlist inside the source points to.
PROTOCOL_WHITELIST = "http,https,tcp,tls,httpproxy"
# Demuxers of video files (and of audio files, which then fail as "no video stream", the
# clearer reason). Not hls, dash, concat, imf, image2 or anything else that opens further
# URLs: those would fetch whatever a playlist names. ffmpeg matches any one of a demuxer's
# names, so "mov" covers mp4, m4a and 3gp, and "matroska" covers webm.
FORMAT_WHITELIST = "mov,matroska,webm,avi,mpegts,mpeg,flv,asf,mxf,ogg,dv,nut,rm,gxf,ivf,wtv,mp3,aac,wav,flac"
# A CDN or a presigned URL redirects once or twice; a chain longer than this is not a source.
MAX_REDIRECTS = 4
# Only what the decision needs: no tags, so no attacker-written strings in the output.
SHOW_ENTRIES = "format=duration:stream=codec_type,duration:stream_disposition=attached_pic"
STDOUT_CAP = 1024 * 1024
STDERR_CAP = 64 * 1024
OUTPUT_GRACE_S = 5.0  # for the pipes to be read to their end once ffprobe has exited
FFPROBE_MISSING = "ffprobe not found: install Debian's ffmpeg (apt-get install ffmpeg)"


@dataclass(frozen=True)
class ProbeCounts:
    """Running counts, handed to the progress callback after every finished item."""

    done: int = 0
    inventoried: int = 0
    rejected: int = 0
    skipped: int = 0
    errors: int = 0


@dataclass(frozen=True)
class ProbeSummary:
    inventoried: int
    rejected: int
    skipped: int
    errors: int
    elapsed_s: float
    skipped_reasons: dict[str, int] = field(default_factory=dict)
    rejected_reasons: dict[str, int] = field(default_factory=dict)
    dry_run: bool = False  # the counts say what would have been written
    stopped: bool = False  # `stop` was set before the candidates ran out

    @property
    def done(self) -> int:
        return self.inventoried + self.rejected + self.skipped + self.errors

    def render(self) -> str:
        """The closing lines the CLI prints: counts, then reasons, most common first."""
        verb = "would be " if self.dry_run else ""
        lines = [
            f"probed {self.done:,} in {self.elapsed_s:.1f} s: {self.inventoried:,} {verb}inventoried, "
            f"{self.rejected:,} {verb}rejected, {self.skipped:,} skipped, {self.errors:,} errors"
            + (" (stopped early)" if self.stopped else "")
        ]
        for title, reasons in (("rejected", self.rejected_reasons), ("skipped", self.skipped_reasons)):
            for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:10]:
                lines.append(f"  {title} {n:>6,}  {reason}")
        return "\n".join(lines)


# --- running ffprobe ----------------------------------------------------------------------


def find_ffprobe(ffprobe: str = "ffprobe") -> str:
    """The ffprobe executable's path, or the CliError that tells the operator how to get it."""
    path = shutil.which(ffprobe)
    if path is None:
        raise CliError(FFPROBE_MISSING)
    return path


def ffprobe_argv(url: str, *, ffprobe: str = "ffprobe", timeout_s: float = 60, ca_file: str | None = None) -> list[str]:
    """The argv for one probe. `url` must have passed `probeable`."""
    # ffprobe's read timeout lies past the deadline, so that it never fires: a read it gives
    # up on mid-file is not reported as a timeout. The demuxer carries on with the bytes it
    # has and says "moov atom not found", and a good source stalled for a moment on a busy
    # machine would be rejected for good. A stall is ended by the deadline instead, which
    # leaves the source pending.
    rw_timeout_us = max(1, int(timeout_s * 2 * 1_000_000))
    argv = [
        ffprobe,
        "-hide_banner",
        "-v",
        "error",
        "-protocol_whitelist",
        PROTOCOL_WHITELIST,
        "-rw_timeout",
        str(rw_timeout_us),
        "-tls_verify",
        "1",
        "-max_redirects",
        str(MAX_REDIRECTS),
        "-format_whitelist",
        FORMAT_WHITELIST,
    ]
    if ca_file:
        argv += ["-ca_file", ca_file]
    # -i: the URL is never read as an option.
    return [*argv, "-print_format", "json", "-show_entries", SHOW_ENTRIES, "-i", url]


class _CappedReader(threading.Thread):
    """Reads a pipe to its end, keeping at most `cap` bytes; on overflow, calls `on_overflow`."""

    def __init__(self, pipe: IO[bytes], cap: int, on_overflow: Callable[[], None] | None = None):
        super().__init__(daemon=True)
        self.pipe, self.cap, self.on_overflow = pipe, cap, on_overflow
        self.chunks: list[bytes] = []
        self.size = 0
        self.overflowed = False
        self.start()

    def run(self) -> None:
        with self.pipe:
            # Keep draining after the cap so the child never blocks on a full pipe.
            while chunk := self.pipe.read(65536):
                if self.size < self.cap:
                    self.chunks.append(chunk[: self.cap - self.size])
                self.size += len(chunk)
                if self.size > self.cap and not self.overflowed:
                    self.overflowed = True
                    if self.on_overflow:
                        self.on_overflow()

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", errors="replace")


def ffprobe_env(proxy_url: str, environ: dict[str, str]) -> dict[str, str]:
    """`environ` with every proxy setting replaced by the guard: ffprobe goes nowhere around it."""
    env = {k: v for k, v in environ.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
    # ffprobe 5.1 reads http_proxy for http and https alike (https as a CONNECT tunnel) and
    # ignores https_proxy; that is set too in case a later ffmpeg reads it.
    env["http_proxy"] = env["https_proxy"] = proxy_url
    return env


def probe_url(
    url: str,
    *,
    ffprobe: str = "ffprobe",
    timeout_s: float = 60,
    ca_file: str | None = None,
    allow_private: bool = False,
    allowed: Callable[[IPAddress], bool] | None = None,
) -> ProbeResult:
    """Run ffprobe on one http(s) URL, behind its guard, and classify what it says.

    The guard lets ffprobe reach globally routable addresses only; `allow_private` lets it
    reach any (local test servers), and `allowed` replaces the policy outright (tests).
    Raises ValueError for a URL `probeable` refuses (the caller checks first), and
    CliError when ffprobe is not installed.
    """
    why = probeable(url)
    if why:
        raise ValueError(f"not probed: {why}")
    # ffmpeg matches protocol names case-sensitively: "HTTPS://" would be "protocol not found".
    scheme = url.split(":", 1)[0]
    url = scheme.lower() + url[len(scheme) :]
    argv = ffprobe_argv(url, ffprobe=ffprobe, timeout_s=timeout_s, ca_file=ca_file)
    if allowed is None and allow_private:
        allowed = _anywhere
    with Guard(allowed=allowed, timeout_s=timeout_s) as guard:
        result = _run_ffprobe(argv, ffprobe_env(guard.url, dict(os.environ)), timeout_s)
    failed = guard.first("unresolved") or guard.first("unreachable") or guard.first("cut")
    return guarded(result, guard.first("refused"), failed)


def _anywhere(ip: IPAddress) -> bool:
    return True


def _run_ffprobe(argv: list[str], env: dict[str, str], timeout_s: float) -> ProbeResult:
    try:
        # Its own session: the operator's Ctrl-C stops the run, not the probes in flight,
        # which would otherwise die mid-read and be taken for unreadable sources.
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise CliError(FFPROBE_MISSING) from None
    if proc.stdout is None or proc.stderr is None:  # never: both are pipes (Popen types them optional)
        proc.kill()
        raise CliError("ffprobe started without its output pipes")
    out = _CappedReader(proc.stdout, STDOUT_CAP, on_overflow=proc.kill)
    err = _CappedReader(proc.stderr, STDERR_CAP)
    timed_out = False
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        proc.kill()
        proc.wait()
    finally:
        if proc.returncode is None:  # interrupted while waiting: leave no ffprobe behind
            proc.kill()
            proc.wait()
        out.join(OUTPUT_GRACE_S)
        err.join(OUTPUT_GRACE_S)
    if out.overflowed:
        return ProbeResult(False, reason=f"probe: ffprobe printed over {STDOUT_CAP // 1024} KiB")
    if out.is_alive() or err.is_alive():
        # A starved machine: what was read so far may lack the words of a transient failure.
        return ProbeResult(False, reason="probe: ffprobe's output was not read in time", retryable=True)
    return classify_probe(proc.returncode, out.text(), err.text(), timed_out, timeout_s=timeout_s)


# --- the inventory pass ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Outcome:
    kind: str  # "inventoried", "rejected", "skipped" or "error"
    reason: str | None = None


def _moved_on(item: dict | None) -> _Outcome:
    return _Outcome("skipped", f"moved on (now {(item or {}).get('state', 'gone')})")


def _probe_one(
    candidate: dict,
    *,
    ledger: Any,
    presign: Callable[[str], str],
    timeout_s: float,
    ffprobe: str,
    clock: Callable[[], float],
    dry_run: bool,
    allow_private: bool,
) -> _Outcome:
    if not isinstance(candidate, dict):
        return _Outcome("skipped", "not a ledger item")
    asset_id = candidate.get("asset_id")
    if not isinstance(asset_id, str) or not asset_id:
        return _Outcome("skipped", "no asset_id")
    item = candidate
    if candidate.get("state", State.PENDING.value) != State.PENDING.value:
        return _moved_on(candidate)
    if not candidate.get("source_url"):
        # The by_state index does not project source_url: read the item.
        read = ledger.get(asset_id)
        if read is None or read.get("state") != State.PENDING.value:
            return _moved_on(read)
        item = read
    url = item.get("source_url")
    if isinstance(url, str) and url[:3].lower() == "s3:":
        url = presign(url)
    why = probeable(url)
    if why or not isinstance(url, str):  # probeable passes a string only
        return _Outcome("skipped", why or "source_url is not a string")

    result = probe_url(url, ffprobe=ffprobe, timeout_s=timeout_s, allow_private=allow_private)
    if result.retryable:
        log.info("probe of %s left pending: %s", asset_id, result.reason, extra={"asset_id": asset_id})
        return _Outcome("skipped", f"left pending: {result.reason}")
    kind = "inventoried" if result.ok else "rejected"
    if dry_run:
        return _Outcome(kind, result.reason)
    if result.ok:
        write = ledger.mark_inventoried(asset_id, result.duration_s, clock())
    else:
        write = ledger.reject_unprobed(asset_id, result.reason, clock())
    if not write.won:
        # The uploader claimed it (or someone settled it) while we probed: its move stands.
        return _moved_on(write.current)
    return _Outcome(kind, result.reason)


class _Tally:
    """The pass's running counts and reasons, one finished outcome at a time; told to `progress` after each."""

    def __init__(self, progress: Callable[[ProbeCounts], None] | None):
        self.progress = progress
        self.kinds: Counter = Counter()
        self.skipped_reasons: Counter = Counter()
        self.rejected_reasons: Counter = Counter()

    def add(self, outcome: _Outcome) -> None:
        self.kinds[outcome.kind] += 1
        if outcome.kind == "skipped":
            self.skipped_reasons[outcome.reason or "unknown"] += 1
        elif outcome.kind == "rejected":
            self.rejected_reasons[outcome.reason or "unknown"] += 1
        if self.progress:
            self.progress(
                ProbeCounts(
                    done=sum(self.kinds.values()),
                    inventoried=self.kinds["inventoried"],
                    rejected=self.kinds["rejected"],
                    skipped=self.kinds["skipped"],
                    errors=self.kinds["error"],
                )
            )

    def summary(self, elapsed_s: float, *, dry_run: bool, stopped: bool) -> ProbeSummary:
        return ProbeSummary(
            inventoried=self.kinds["inventoried"],
            rejected=self.kinds["rejected"],
            skipped=self.kinds["skipped"],
            errors=self.kinds["error"],
            elapsed_s=elapsed_s,
            skipped_reasons=dict(self.skipped_reasons),
            rejected_reasons=dict(self.rejected_reasons),
            dry_run=dry_run,
            stopped=stopped,
        )


def _outcome_of(future: Future, asset_id: object) -> _Outcome:
    try:
        return future.result()
    except Exception as exc:
        # One bad item (a throttled write, a failed presign) must not end the pass.
        log.warning(
            "probe of %s failed: %s: %s",
            asset_id,
            type(exc).__name__,
            one_line(str(exc)),
            extra={"asset_id": asset_id},
        )
        return _Outcome("error")


class _Inflight:
    """The probes submitted and not yet counted, each with its asset id (for the log line of a failure)."""

    def __init__(self, tally: _Tally):
        self.tally = tally
        self.futures: dict[Future, object] = {}

    def __len__(self) -> int:
        return len(self.futures)

    def add(self, future: Future, candidate: object) -> None:
        self.futures[future] = candidate.get("asset_id") if isinstance(candidate, dict) else None

    def reap(self, block: bool) -> None:
        """Count the probes finished by now (waiting up to half a second for one when `block`)."""
        done, _ = wait(self.futures, timeout=0.5 if block else 0, return_when=FIRST_COMPLETED)
        for future in done:
            self.tally.add(_outcome_of(future, self.futures.pop(future)))

    def cancel_queued(self) -> None:
        # Queued but not started: they stay pending for the next run.
        for future in [f for f in self.futures if f.cancel()]:
            del self.futures[future]

    def drain(self) -> None:
        while self.futures:
            self.reap(block=True)


def _submit_all(
    pool: ThreadPoolExecutor,
    candidates: Iterator,
    probe_one: Callable[[Any], _Outcome],
    inflight: _Inflight,
    window: int,
    stop: threading.Event,
) -> bool:
    """Hand the candidates to `pool`, at most `window` in flight: True when they ran out, False when `stop` was set."""
    end = object()
    while not stop.is_set():
        while len(inflight) >= window and not stop.is_set():
            inflight.reap(block=True)
        if stop.is_set():
            break
        candidate = next(candidates, end)
        if candidate is end:
            return True
        inflight.add(pool.submit(probe_one, candidate), candidate)
        inflight.reap(block=False)
    return False


def run_probe(
    candidates: Iterable[dict],
    *,
    ledger: Any,
    presign: Callable[[str], str],
    concurrency: int = 8,
    timeout_s: float = 60,
    ffprobe: str = "ffprobe",
    clock: Callable[[], float] = time.time,
    progress: Callable[[ProbeCounts], None] | None = None,
    stop: threading.Event | None = None,
    dry_run: bool = False,
    allow_private: bool = False,
) -> ProbeSummary:
    """Probe every candidate (pending ledger items) and move each to inventoried or rejected.

    `candidates` is consumed lazily, at most 2 x `concurrency` items ahead of the finished
    ones, so it may be a walk over millions of items. Setting `stop` ends the pass early:
    nothing new starts, probes already running finish and are written. With `dry_run`
    the sources are probed and nothing is written. `allow_private` lets the probes reach
    private and local addresses (local test servers only).
    """
    if concurrency < 1:
        raise CliError("concurrency must be at least 1")
    ffprobe = find_ffprobe(ffprobe)
    stop = stop or threading.Event()
    started = time.monotonic()
    tally = _Tally(progress)
    probe_one = functools.partial(
        _probe_one,
        ledger=ledger,
        presign=presign,
        timeout_s=timeout_s,
        ffprobe=ffprobe,
        clock=clock,
        dry_run=dry_run,
        allow_private=allow_private,
    )
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="probe") as pool:
        inflight = _Inflight(tally)
        stopped = not _submit_all(pool, iter(candidates), probe_one, inflight, 2 * concurrency, stop)
        if stopped:
            inflight.cancel_queued()
        inflight.drain()
    return tally.summary(time.monotonic() - started, dry_run=dry_run, stopped=stopped)
