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

`classify_probe`, `guarded` and `probeable` are pure; `probe_url` runs one ffprobe behind
its guard; `run_probe` streams the candidates through a bounded thread pool and moves the
ledger.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import IO, Any
from urllib.parse import urlsplit

from migrator.states import State

from .errors import CliError
from .guard import Guard, GuardEvent, IPAddress

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
DETAIL_CHARS = 200
MAX_URL_CHARS = 16384
PROBED_SCHEMES = ("http", "https")
FFPROBE_MISSING = "ffprobe not found: install Debian's ffmpeg (apt-get install ffmpeg)"

# ffprobe's words for failures of the path to the source rather than of the source: whole
# phrases, never a bare word like "tls", which is also in "Protocol 'file' not on whitelist
# 'http,https,tcp,tls,httpproxy'!" (a source that will never be read). The TLS ones are
# Debian's (GnuTLS) wording, plus OpenSSL's "certificate verify failed".
_TRANSIENT = re.compile(
    r"connection timed out|connection refused|connection reset|network is unreachable|no route to host"
    r"|failed to resolve hostname|temporary failure in name resolution"
    r"|peer certificate failed verification|unable to verify peer certificate|certificate verify failed"
    r"|certificate's owner does not match hostname|tls fatal alert has been received"
    r"|unexpected tls packet was received|tls connection was non-properly terminated"
    r"|error in the pull function|error in the push function"
    r"|server returned 5|server returned 401|server returned 403|server returned 4xx"
    # Fewer bytes than the server announced, or no answer at all: the connection broke.
    r"|stream ends prematurely|^\s*:?\s*end of file$",
    re.IGNORECASE | re.MULTILINE,
)
_FORMAT_REFUSED = re.compile(r"^\[([^\]@]+?)(?: @ 0x[0-9A-Fa-f]+)?\] Format not on whitelist", re.MULTILINE)
# A process killed from outside (OOM killer, an operator) has told us nothing about the source.
_EXTERNAL_SIGNALS = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")
_URL_PREFIX = re.compile(r"^\S+://\S+: ")
_POINTER = re.compile(r" @ 0x[0-9A-Fa-f]+\]")


@dataclass(frozen=True)
class ProbeResult:
    ok: bool  # a video stream and a finite duration > 0
    duration_s: float | None = None
    reason: str | None = None  # why not ok: a short single line, safe to store and print
    retryable: bool = False  # not ok, but not the source's fault: leave it pending


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


# --- pure parts ------------------------------------------------------------------------------


def redact_url(url: str) -> str:
    """`url` without what may carry credentials: user info, query (shown as "?…") and fragment."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}{parts.path}" + ("?…" if parts.query else "")


def _redact_in_text(text: str) -> str:
    def one(match: re.Match) -> str:
        token = match.group(0)
        core = token.rstrip(":,;.)'\"")
        return redact_url(core) + token[len(core) :]

    return _URL_IN_TEXT.sub(one, text)


def _one_line(text: str, limit: int = DETAIL_CHARS) -> str:
    """Printable, single-line, redacted and trimmed: server and file text can hold anything."""
    cleaned = "".join(" " if unicodedata.category(ch)[0] in "CZ" else ch for ch in text)
    cleaned = " ".join(_redact_in_text(cleaned).split())
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def _positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and number > 0 else None


def _failure_detail(stderr: str) -> str:
    """ffprobe's first message, without the source's URL (on record already) or heap addresses."""
    for line in stderr.splitlines():
        line = line.strip()
        if line:
            line = _POINTER.sub("]", _URL_PREFIX.sub("", line))
            return _one_line(line)
    return ""


def classify_probe(
    returncode: int, stdout: str, stderr: str, timed_out: bool = False, *, timeout_s: float | None = None
) -> ProbeResult:
    """What one ffprobe run (with JSON output of SHOW_ENTRIES) says about a source."""
    if timed_out:
        after = f" after {timeout_s:g} s" if timeout_s is not None else ""
        return ProbeResult(False, reason=f"probe: timed out{after}", retryable=True)
    if returncode < 0:
        signum = -returncode
        external = signum in _EXTERNAL_SIGNALS
        return ProbeResult(False, reason=f"probe: ffprobe was killed by signal {signum}", retryable=external)
    if returncode != 0 and (refused := _FORMAT_REFUSED.search(stderr)):
        return ProbeResult(
            False,
            reason=f"probe: format {_one_line(refused.group(1), 40)} is not probed "
            "(only video files: no playlists or formats that open other URLs)",
        )
    if returncode != 0:
        detail = _failure_detail(stderr) or f"exit status {returncode}, no message"
        return ProbeResult(
            False,
            reason=f"probe: ffprobe could not read the source: {detail}",
            # URLs out first: a path like /tls/clip.mp4 says nothing about the transport.
            retryable=bool(_TRANSIENT.search(_URL_IN_TEXT.sub(" ", stderr))),
        )
    try:
        doc = json.loads(stdout)
    except (ValueError, RecursionError):
        doc = None
    if not isinstance(doc, dict):
        # ffprobe said it succeeded but did not print its JSON: the tool misbehaves, not the source.
        return ProbeResult(False, reason="probe: ffprobe output is not JSON", retryable=True)

    streams = [s for s in doc.get("streams") or [] if isinstance(s, dict)]
    video, kinds = [], set()
    for stream in streams:
        kind = stream.get("codec_type")
        disposition = stream.get("disposition")
        cover = isinstance(disposition, dict) and disposition.get("attached_pic") == 1
        # An audio file's cover art is a one-frame "video" stream: not a video.
        if kind == "video" and not cover:
            video.append(stream)
        kinds.add("cover image" if cover else str(kind or "unknown"))
    if not video:
        found = ", ".join(sorted(kinds)) if kinds else "no streams"
        return ProbeResult(False, reason=f"probe: no video stream (found: {_one_line(found, 60)})")

    fmt = doc.get("format")
    duration = _positive(fmt.get("duration")) if isinstance(fmt, dict) else None
    if duration is None:
        duration = next((d for d in (_positive(s.get("duration")) for s in video) if d is not None), None)
    if duration is None:
        return ProbeResult(False, reason="probe: duration unknown")
    return ProbeResult(True, duration_s=duration)


def guarded(result: ProbeResult, refused: GuardEvent | None, failed: GuardEvent | None) -> ProbeResult:
    """`result` in the light of what the guard saw: the first target it `refused`, the first it `failed` to reach.

    A refusal rejects the source, whatever ffprobe made of it: the source (or where it sent
    ffprobe) points inside a network it has no business in. A target that did not resolve or
    answer is the path's failure, as it would be without the guard: left pending. So is a
    connection the guard cut itself ("cut"): ffprobe read a truncated file or none, and
    what it says of that is not about the source. Reasons name a host, never a URL, so no
    credentials.
    """
    if refused is not None:
        shown = ", ".join(refused.addresses) or "no address"
        if refused.addresses != (refused.host,):
            shown = f"{refused.host} = {shown}"
        return ProbeResult(
            False, reason=f"probe: source resolves to a private or local address ({_one_line(shown, 120)}); refused"
        )
    if failed is not None and not result.ok:
        host = _one_line(failed.host, 80)
        where = f"{f'[{host}]' if ':' in host else host}:{failed.port}"
        if failed.kind == "unresolved":
            what = f"could not resolve {host}"
        elif failed.kind == "cut":
            what = f"the guard cut the connection{f' to {where}' if host else ''}"
        else:
            what = f"could not connect to {where}"
        return ProbeResult(False, reason=f"probe: {what}: {_one_line(failed.detail, 80)}", retryable=True)
    return result


def probeable(url: object) -> str | None:
    """Why `url` may not be handed to ffprobe, or None when it may (http and https only)."""
    if not isinstance(url, str) or not url:
        return "source_url is missing or not a string"
    if len(url) > MAX_URL_CHARS:
        return f"source_url is over {MAX_URL_CHARS} characters"
    if any(ch.isspace() or unicodedata.category(ch) == "Cc" for ch in url):
        return "source_url contains whitespace or control characters"
    try:
        parts = urlsplit(url)
    except ValueError:
        return "source_url does not parse"
    scheme = parts.scheme.lower()
    if scheme == "s3":
        return "s3 source_url must be presigned before probing"
    if scheme not in PROBED_SCHEMES:
        return f"scheme {_one_line(scheme, 20) or 'none'!r} is never probed (only http, https)"
    if not parts.hostname:
        return "source_url has no host"
    return None


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
    item: dict | None = candidate
    if candidate.get("state", State.PENDING.value) != State.PENDING.value:
        return _moved_on(candidate)
    if not candidate.get("source_url"):
        # The by_state index does not project source_url: read the item.
        item = ledger.get(asset_id)
        if item is None or item.get("state") != State.PENDING.value:
            return _moved_on(item)
    url = item.get("source_url")
    if isinstance(url, str) and url[:3].lower() == "s3:":
        url = presign(url)
    why = probeable(url)
    if why:
        return _Outcome("skipped", why)

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
    tally: Counter = Counter()
    skipped_reasons: Counter = Counter()
    rejected_reasons: Counter = Counter()

    def finish(future: Future, asset_id: object) -> None:
        try:
            outcome = future.result()
        except Exception as exc:
            # One bad item (a throttled write, a failed presign) must not end the pass.
            outcome = _Outcome("error")
            log.warning(
                "probe of %s failed: %s: %s",
                asset_id,
                type(exc).__name__,
                _one_line(str(exc)),
                extra={"asset_id": asset_id},
            )
        tally[outcome.kind] += 1
        if outcome.kind == "skipped":
            skipped_reasons[outcome.reason or "unknown"] += 1
        elif outcome.kind == "rejected":
            rejected_reasons[outcome.reason or "unknown"] += 1
        if progress:
            progress(
                ProbeCounts(
                    done=sum(tally.values()),
                    inventoried=tally["inventoried"],
                    rejected=tally["rejected"],
                    skipped=tally["skipped"],
                    errors=tally["error"],
                )
            )

    window = 2 * concurrency
    inflight: dict[Future, object] = {}

    def reap(block: bool) -> None:
        done, _ = wait(inflight, timeout=0.5 if block else 0, return_when=FIRST_COMPLETED)
        for future in done:
            finish(future, inflight.pop(future))

    end = object()
    exhausted = False
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="probe") as pool:
        iterator = iter(candidates)
        while not stop.is_set():
            while len(inflight) >= window and not stop.is_set():
                reap(block=True)
            if stop.is_set():
                break
            candidate = next(iterator, end)
            if candidate is end:
                exhausted = True
                break
            future = pool.submit(
                _probe_one,
                candidate,
                ledger=ledger,
                presign=presign,
                timeout_s=timeout_s,
                ffprobe=ffprobe,
                clock=clock,
                dry_run=dry_run,
                allow_private=allow_private,
            )
            inflight[future] = candidate.get("asset_id") if isinstance(candidate, dict) else None
            reap(block=False)
        stopped = not exhausted
        if stopped:
            # Queued but not started: they stay pending for the next run.
            for future in [f for f in inflight if f.cancel()]:
                del inflight[future]
        while inflight:
            reap(block=True)

    return ProbeSummary(
        inventoried=tally["inventoried"],
        rejected=tally["rejected"],
        skipped=tally["skipped"],
        errors=tally["error"],
        elapsed_s=time.monotonic() - started,
        skipped_reasons=dict(skipped_reasons),
        rejected_reasons=dict(rejected_reasons),
        dry_run=dry_run,
        stopped=stopped,
    )
