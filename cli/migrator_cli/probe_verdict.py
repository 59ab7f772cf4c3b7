"""The probe's pure verdicts: what an ffprobe run, the guard's report or a URL says of a source; use them to judge one.

Every reason made here is one short printable line with URLs redacted (no credentials), safe
to store in the ledger and print; `retryable` marks what says more about the path to the
source than about the source (probe.py's docstring says why such a source stays pending).
"""

from __future__ import annotations

import json
import math
import re
import signal
import unicodedata
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .guard import GuardEvent

DETAIL_CHARS = 200
MAX_URL_CHARS = 16384
PROBED_SCHEMES = ("http", "https")

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


def one_line(text: str, limit: int = DETAIL_CHARS) -> str:
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
            return one_line(line)
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
            reason=f"probe: format {one_line(refused.group(1), 40)} is not probed "
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
        return ProbeResult(False, reason=f"probe: no video stream (found: {one_line(found, 60)})")

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
            False, reason=f"probe: source resolves to a private or local address ({one_line(shown, 120)}); refused"
        )
    if failed is not None and not result.ok:
        host = one_line(failed.host, 80)
        where = f"{f'[{host}]' if ':' in host else host}:{failed.port}"
        if failed.kind == "unresolved":
            what = f"could not resolve {host}"
        elif failed.kind == "cut":
            what = f"the guard cut the connection{f' to {where}' if host else ''}"
        else:
            what = f"could not connect to {where}"
        return ProbeResult(False, reason=f"probe: {what}: {one_line(failed.detail, 80)}", retryable=True)
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
        return f"scheme {one_line(scheme, 20) or 'none'!r} is never probed (only http, https)"
    if not parts.hostname:
        return "source_url has no host"
    return None
