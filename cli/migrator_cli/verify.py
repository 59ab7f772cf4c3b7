"""`migrator verify`: the parity check after the last create. Per ready asset, what arrived against what left.

For each ready asset: its HLS manifest is fetched and read (hls.py): the master playlist must exist
and list variants, the top variant's media playlist must be a finished one whose EXTINF durations
add up to the duration the provider reports; the provider's duration must match the source's (the
inventory's or the probe's `duration_s`), and the top variant's resolution must reach the source's
(the inventory's `metadata.width`/`height`, else what the provider reports it read from the
source), each within a tolerance. A mismatch is listed with its numbers. Beside the video, its thumbnail,
chapters and places in collections are read back from the target where the ledger says they were set
(verify_extras.py): a noted one (carried otherwise) is counted apart, a missing one is a mismatch.

Bounded, paced and resumable for a million assets: the ledger is streamed (a filtered parallel
scan), at most `concurrency` assets are in flight, fetches leave at `rate` a second, and each
finished asset is written to a checkpoint (SQLite on disk), so a run that stops is resumed by the
next with the same --checkpoint, and memory stays flat. A fetch whose path failed (DNS, connect,
timeout, 5xx) is not a verdict: the asset is left unchecked for the next run. Only a passed verdict is
final (`is_final`): a failed or signed-not-fetched one is checked again by the next run. The fetches go from
the operator's machine to public addresses only (fetch.py) unless told otherwise.

`evaluate` is pure; `run_verify` does the I/O.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from urllib.parse import urljoin

from migrator.extras import item_needs_extras
from migrator.providers import PROVIDERS, SignedPlayback, SigningUnavailable
from migrator.providers.http import TransportError

from .cutover import needs_token, row_of
from .fetch import Fetched, FetchError, guarded_get
from .hls import Master, Media, PlaylistError, Variant, is_master, parse_master, parse_media
from .sender import run_bounded

MAX_SHOWN = 50
# The extras' kinds (migrator.extras) as the summary names them.
EXTRA_NAMES = {"thumbnail": "thumbnails", "chapters": "chapters", "collection": "places"}


@dataclass(frozen=True)
class Finding:
    asset_id: str
    # duration, manifest_duration, resolution, manifest_missing, manifest_invalid, no_playback, refused; and for the
    # extras (verify_extras.py, with the entry's `key`): thumbnail, chapters, collection
    kind: str
    detail: str
    numbers: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"type": "mismatch", "id": self.asset_id, "kind": self.kind, "detail": self.detail, **self.numbers}


@dataclass(frozen=True)
class Verdict:
    asset_id: str
    status: str  # passed, failed, signed (needs a token: not fetched), unchecked (no answer: next run)
    findings: tuple[Finding, ...] = ()
    reason: str = ""
    found_kinds: tuple[str, ...] = ()  # each extra read back from the target as the ledger says, by its kind
    noted_kinds: tuple[str, ...] = ()  # each extra the target cannot carry, settled as noted (not a mismatch)

    @property
    def extras_found(self) -> int:
        return len(self.found_kinds)

    @property
    def extras_noted(self) -> int:
        return len(self.noted_kinds)

    def extras_kinds(self) -> dict[str, list[int]]:
        """{kind: [found, noted]} of this verdict's extras (verify_extras.py)."""
        kinds: dict[str, list[int]] = {}
        for column, named in enumerate((self.found_kinds, self.noted_kinds)):
            for kind in named:
                kinds.setdefault(kind, [0, 0])[column] += 1
        return kinds


@dataclass
class Tolerance:
    duration_s: float = 1.0
    pixels: int = 0


def number(value) -> float | None:
    if isinstance(value, Decimal):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def source_size(item: Mapping) -> tuple[int, int] | None:
    """The source's resolution: the inventory's metadata width/height (or the ledger's source_width/
    source_height), else what the provider reports it read (Cloudflare's input, api.video's metadata)."""
    metadata = said if isinstance(said := item.get("metadata"), Mapping) else {}
    playback = told if isinstance(told := item.get("playback_info"), Mapping) else {}
    for w, h in (
        (item.get("source_width"), item.get("source_height")),
        (metadata.get("width"), metadata.get("height")),
        (playback.get("width"), playback.get("height")),
    ):
        w, h = number(w), number(h)
        if w and h and w > 0 and h > 0:
            return int(w), int(h)
    return None


def evaluate(item: Mapping, master: Master, media: Media, tolerance: Tolerance) -> list[Finding]:
    """What differs between the asset that left (the ledger's source facts) and what arrived."""
    asset_id = str(item.get("asset_id"))
    findings = []
    source_s, target_s = number(item.get("duration_s")), number(item.get("provider_duration_s"))
    if source_s is not None and target_s is not None and abs(target_s - source_s) > tolerance.duration_s:
        findings.append(
            Finding(
                asset_id,
                "duration",
                f"duration {target_s:.3f} s at the target, {source_s:.3f} s at the source"
                f" (off by {target_s - source_s:+.3f} s; tolerance {tolerance.duration_s:g} s)",
                {"target_s": target_s, "source_s": source_s},
            )
        )
    expected = target_s if target_s is not None else source_s
    if expected is not None and abs(media.duration_s - expected) > tolerance.duration_s:
        findings.append(
            Finding(
                asset_id,
                "manifest_duration",
                f"the manifest lasts {media.duration_s:.3f} s ({media.segments} segments),"
                f" the video {expected:.3f} s (tolerance {tolerance.duration_s:g} s)",
                {"manifest_s": media.duration_s, "target_s": expected},
            )
        )
    top = master.top()
    wanted = source_size(item)
    if wanted and (top.width is None or top.height is None):
        findings.append(Finding(asset_id, "resolution", "the top variant states no RESOLUTION", {}))
    elif wanted and top.width is not None and top.height is not None:  # never None here (above)
        if top.height < wanted[1] - tolerance.pixels or top.width < wanted[0] - tolerance.pixels:
            findings.append(
                Finding(
                    asset_id,
                    "resolution",
                    f"resolution {top.width}x{top.height} at the target, {wanted[0]}x{wanted[1]} at the source"
                    + (f" (tolerance {tolerance.pixels} px)" if tolerance.pixels else ""),
                    {"target": f"{top.width}x{top.height}", "source": f"{wanted[0]}x{wanted[1]}"},
                )
            )
    return findings


class Pace:
    """Fetches leave at most `rate` a second, whichever thread asks (0: unpaced)."""

    def __init__(self, rate: float, clock=time.monotonic, sleep=time.sleep):
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.clock, self.sleep = clock, sleep
        self.next_at = clock()
        self.lock = threading.Lock()

    def wait(self) -> None:
        with self.lock:
            now = self.clock()
            at = max(now, self.next_at)
            self.next_at = at + self.interval
        if at > now:
            self.sleep(at - now)


# How long the playback tokens verify makes for itself live: the two fetches of one asset, with room.
TOKEN_TTL_S = 900.0


class Checker:
    """Verifies one asset: the manifest fetched (paced, guarded) and read, then `evaluate`. A signed video's
    manifest is fetched with a token the stack makes for itself (`signer`: the provider's `signed_playback`);
    without a signer, or where the provider cannot sign, it is counted apart, never as checked."""

    def __init__(
        self,
        provider: str,
        tolerance: Tolerance,
        pace: Pace,
        fetch: Callable[[str], Fetched],
        mux_hosts,
        signer: Callable[[Mapping], SignedPlayback] | None = None,
    ):
        self.provider, self.tolerance, self.pace = provider, tolerance, pace
        self.fetch, self.mux_hosts, self.signer = fetch, mux_hosts, signer

    def __call__(self, item: Mapping) -> Verdict:
        asset_id = str(item.get("asset_id"))
        playback = item.get("playback_info") if isinstance(item.get("playback_info"), Mapping) else None
        query: tuple[tuple[str, str], ...] = ()
        if playback is not None and needs_token(playback):
            if self.signer is None:
                return Verdict(asset_id, "signed", reason="signed: needs a token")
            try:
                signed = self.signer(playback)
            except SigningUnavailable as exc:
                return Verdict(asset_id, "signed", reason=f"signed: {exc}")
            except TransportError as exc:
                return Verdict(asset_id, "unchecked", reason=f"signing the playback URL: {exc.kind}")
            url, query = signed.manifest_url, signed.query
        else:
            url = row_of(item, self.provider, self.mux_hosts)["hls_url"]
        why = "no HLS URL recorded (settled before playback was kept, or the provider gave none)"
        if (
            not url
            and playback
            and self.signer is not None
            and not getattr(PROVIDERS.get(self.provider), "records_hls", True)
        ):
            # A provider whose HLS links expire within hours records none (Vimeo): it hands a fresh one.
            try:
                fresh = self.signer(playback)
            except SigningUnavailable as exc:
                why = f"no HLS URL recorded, and none to be had now: {exc}"
            except TransportError as exc:
                return Verdict(asset_id, "unchecked", reason=f"asking for the HLS URL: {exc.kind}")
            else:
                url, query = fresh.manifest_url, fresh.query
        if not url:
            return Verdict(asset_id, "failed", (Finding(asset_id, "no_playback", why),))
        try:
            master_doc = self._get(url)
            master = parse_master(master_doc.text) if is_master(master_doc.text) else None
            if master is None:  # a media playlist given as the HLS URL: one variant, no resolution stated
                media = parse_media(master_doc.text)
                master = Master((_single(url),))
            else:
                variant = with_query(urljoin(master_doc.url, master.top().uri), query)
                media_doc = self._get(variant, what="the top variant's playlist")
                media = parse_media(media_doc.text)
        except PlaylistError as exc:
            return Verdict(asset_id, "failed", (Finding(asset_id, "manifest_invalid", f"{url}: {exc}"),))
        except _Unchecked as exc:
            return Verdict(asset_id, "unchecked", reason=str(exc))
        except _Refused as exc:
            return Verdict(asset_id, "failed", (Finding(asset_id, "refused", str(exc)),))
        except _Missing as exc:
            return Verdict(asset_id, "failed", (Finding(asset_id, "manifest_missing", str(exc)),))
        findings = evaluate(item, master, media, self.tolerance)
        return Verdict(asset_id, "failed" if findings else "passed", tuple(findings))

    def _get(self, url: str, what: str = "the manifest") -> _Doc:
        self.pace.wait()
        try:
            answer = self.fetch(url)
        except FetchError as exc:
            if exc.transient:
                raise _Unchecked(f"{what}: {exc}") from None
            raise _Refused(f"{what} at {url[:200]}: {exc}") from None
        if answer.status >= 500 or answer.status == 429:
            raise _Unchecked(f"{what}: HTTP {answer.status} at {url[:200]}")
        if answer.status != 200:
            raise _Missing(f"{what} missing: HTTP {answer.status} at {url[:200]}")
        try:
            text = answer.body.decode("utf-8")
        except UnicodeDecodeError:
            raise PlaylistError("not UTF-8 text") from None
        return _Doc(text, answer.url)


@dataclass(frozen=True)
class _Doc:
    text: str
    url: str


class _Unchecked(Exception):
    pass


class _Refused(Exception):
    pass


class _Missing(Exception):
    pass


def _single(url: str) -> Variant:
    return Variant(url, 0)


def with_query(url: str, query: tuple[tuple[str, str], ...]) -> str:
    """`url` with `query`'s pairs added (a session token every request of a signed video carries)."""
    if not query:
        return url
    from urllib.parse import urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    extra = urlencode(query)
    return urlunsplit(parts._replace(query=f"{parts.query}&{extra}" if parts.query else extra))


# --- the run ---------------------------------------------------------------------------------


@dataclass
class VerifySummary:
    checked: int = 0  # verdicts this run
    passed: int = 0  # in all (this run and the ones before it, from the checkpoint)
    failed: int = 0
    signed: int = 0
    unchecked: int = 0  # this run: no answer, left for the next run
    skipped_done: int = 0  # already verified by an earlier run (the checkpoint)
    elapsed_s: float = 0.0
    stopped: bool = False
    by_kind: dict = field(default_factory=dict)
    signed_reason: str = ""  # why signed assets were not fetched (the first one's reason)
    extras_found: int = 0  # in all: thumbnails, chapters and places found at the target as the ledger says
    extras_noted: int = 0  # in all: extras the target cannot carry (noted: carried otherwise, not a mismatch)
    extras_kinds: dict = field(default_factory=dict)  # the same by kind: {kind: [found, noted]}
    collections_line: str | None = None  # the collections' own check (verify_collections.py), where made
    collections_findings: int = 0

    @property
    def ok(self) -> bool:
        return not self.failed and not self.unchecked and not self.stopped and not self.collections_findings

    def as_dict(self) -> dict:
        return {"type": "summary", **self.__dict__, "compared": self.compared, "ok": self.ok, "result": self.result()}

    @property
    def compared(self) -> int:
        """Assets whose manifest was fetched, read and compared, in all runs: passed or failed (signed ones
        not fetched are counted apart, never as checked)."""
        return self.passed + self.failed

    @property
    def seen(self) -> int:
        return self.passed + self.failed + self.signed

    def result(self) -> str:
        """One line that counts exactly what was checked: "every" only when every ready asset was."""
        if not self.ok:
            if self.failed or self.collections_findings:
                return "MISMATCHES above"
            return "NOT DONE: run again with the same --checkpoint"
        extras = (
            f"; extras {self.extras_found:,} found, {self.extras_noted:,} noted"
            if self.extras_found or self.extras_noted
            else ""
        )
        if self.signed:
            return (
                f"OK: {self.compared:,} of {self.seen:,} checked and matched;"
                f" {self.signed:,} signed not fetched ({self.signed_reason or 'no token'})" + extras
            )
        return f"OK: every ready asset checked ({self.compared:,}) and matched" + extras

    def lines(self) -> list[str]:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.by_kind.items()))
        out = [
            f"verified        {self.compared:,} of {self.seen:,} ready assets checked"
            + (f" ({self.skipped_done:,} by an earlier run)" if self.skipped_done else ""),
            f"passed          {self.passed:,}",
            f"failed          {self.failed:,}" + (f" ({kinds})" if kinds else ""),
        ]
        if self.signed:
            out.append(f"signed          {self.signed:,} not fetched: {self.signed_reason or 'needs a token'}")
        if self.extras_found or self.extras_noted:
            out.append(
                f"extras          {self.extras_found:,} found at the target, {self.extras_noted:,} noted"
                " (carried otherwise: report's extras_notes)"
            )
            for kind, (found, noted) in sorted(self.extras_kinds.items()):
                out.append(
                    f"  {EXTRA_NAMES.get(kind, kind):<14}{found:,} found" + (f", {noted:,} noted" if noted else "")
                )
        if self.collections_line:
            out.append(self.collections_line)
        if self.unchecked:
            out.append(f"unchecked       {self.unchecked:,} got no answer (run again with the same --checkpoint)")
        out.append(f"took            {self.elapsed_s:.1f} s")
        out.append("result          " + self.result())
        return out


def is_final(status: str) -> bool:
    """Whether a verdict kept in the checkpoint stands for later runs (for the same video): only one that
    fetched the manifest and matched. A failed one may have been mended; a signed one was not fetched because
    something was missing (no token, no signing key, a provider that could not sign then), which the operator
    may have given since; an unchecked one got no answer (and is never kept)."""
    return status == "passed"


class Checkpoint:
    """Each finished asset's verdict, on disk: a resumed run skips what was verified, and the summary
    counts every verdict of every run.

    A verdict belongs to the video it checked (the ledger's `remote_id`): an asset migrated again since
    (a retry made a new video) is checked again. Only a passed verdict for the same video stands
    (`is_final`): one that failed is checked again, since what failed may have been mended, and so is a
    signed one, never fetched for want of a token or a signing key the next run may have. Each verdict
    carries the run that made it, so the earlier runs' failures are told apart from this run's, however
    many there are.
    """

    def __init__(self, path: str | None):
        self.scratch = path is None
        if path is None:
            fd, path = tempfile.mkstemp(prefix="migrator-verify-", suffix=".sqlite")
            os.close(fd)
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL" if not self.scratch else "PRAGMA journal_mode=OFF")
        self.db.execute("CREATE TABLE IF NOT EXISTS verdicts (id TEXT PRIMARY KEY, status TEXT, findings TEXT)")
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(verdicts)")}
        for column in ("remote_id", "run"):  # a checkpoint from before these: its verdicts are checked again
            if column not in columns:
                self.db.execute(f"ALTER TABLE verdicts ADD COLUMN {column} TEXT")
        # Verdicts made before the extras were checked (or counted by kind) have none: an asset with extras is
        # checked again.
        for column, kind in (("extras_found", "INTEGER"), ("extras_noted", "INTEGER"), ("extras_kinds", "TEXT")):
            if column not in columns:
                self.db.execute(f"ALTER TABLE verdicts ADD COLUMN {column} {kind}")
        self.run = f"{time.time():.6f}-{os.getpid()}"
        self.pending = 0
        self.db.execute("BEGIN")

    def done(self, item: Mapping) -> bool:
        """Whether `item` needs no check this run: a final verdict (`is_final`) for the same video, its extras
        checked too where it has any."""
        row = self.db.execute(
            "SELECT status, remote_id, extras_kinds FROM verdicts WHERE id = ?", (str(item.get("asset_id")),)
        ).fetchone()
        if row is None or not is_final(row[0]) or row[1] != _remote_id(item):
            return False
        return row[2] is not None or not item_needs_extras(item)

    def record(self, verdict: Verdict, remote_id: str | None = None) -> None:
        findings = json.dumps([f.as_dict() for f in verdict.findings])
        self.db.execute(
            "INSERT OR REPLACE INTO verdicts"
            " (id, status, findings, remote_id, run, extras_found, extras_noted, extras_kinds)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                verdict.asset_id,
                verdict.status,
                findings,
                remote_id,
                self.run,
                verdict.extras_found,
                verdict.extras_noted,
                json.dumps(verdict.extras_kinds()),
            ),
        )
        self.pending += 1
        if self.pending >= 100:
            self.flush()

    def flush(self) -> None:
        self.db.execute("COMMIT")
        self.db.execute("BEGIN")
        self.pending = 0

    def totals(self) -> dict[str, int]:
        return dict(self.db.execute("SELECT status, COUNT(*) FROM verdicts GROUP BY status").fetchall())

    def extras(self) -> tuple[int, int]:
        """(extras found, extras noted) over every verdict kept."""
        found, noted = self.db.execute("SELECT SUM(extras_found), SUM(extras_noted) FROM verdicts").fetchone()
        return int(found or 0), int(noted or 0)

    def extras_kinds(self) -> dict[str, list[int]]:
        """{kind: [found, noted]} over every verdict kept."""
        kinds: dict[str, list[int]] = {}
        for (text,) in self.db.execute("SELECT extras_kinds FROM verdicts WHERE extras_kinds IS NOT NULL"):
            for kind, counts in json.loads(text).items():
                held = kinds.setdefault(kind, [0, 0])
                held[0], held[1] = held[0] + counts[0], held[1] + counts[1]
        return kinds

    def kinds(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for (text,) in self.db.execute("SELECT findings FROM verdicts WHERE status = 'failed'"):
            for finding in json.loads(text):
                counts[finding["kind"]] = counts.get(finding["kind"], 0) + 1
        return counts

    def earlier_failures(self):
        """The findings of failed verdicts made by an earlier run (this run's were reported as found)."""
        query = "SELECT findings FROM verdicts WHERE status = 'failed' AND run IS NOT ?"
        for (text,) in self.db.execute(query, (self.run,)):
            yield from json.loads(text)

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("COMMIT")
        self.db.close()
        if self.scratch:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.path)


def _remote_id(item: Mapping) -> str | None:
    remote_id = item.get("remote_id")
    return str(remote_id) if remote_id is not None else None


def run_verify(
    items: Iterable[dict],
    check: Callable[[Mapping], Verdict],
    *,
    checkpoint: Checkpoint,
    concurrency: int = 4,
    limit: int | None = None,
    stop: threading.Event | None = None,
    on_finding: Callable[[dict], None] = lambda doc: None,
    progress: Callable[[int], None] = lambda n: None,
    clock: Callable[[], float] = time.monotonic,
) -> VerifySummary:
    """Check every item not yet in the checkpoint, `concurrency` at a time; each mismatch goes to
    `on_finding` as it is found (and the earlier runs' ones at the end)."""
    summary = VerifySummary()
    started = clock()
    stop = stop or threading.Event()

    def todo():
        for item in items:
            if checkpoint.done(item):
                summary.skipped_done += 1
                continue
            if limit is not None and summary.checked + summary.unchecked >= limit:
                stop.set()
                return
            yield item

    def on_done(item, verdict: Verdict) -> None:
        if verdict.status == "signed" and not summary.signed_reason:
            summary.signed_reason = verdict.reason.removeprefix("signed: ")
        if verdict.status == "unchecked":
            summary.unchecked += 1
            on_finding({"type": "unchecked", "id": verdict.asset_id, "reason": verdict.reason})
        else:
            summary.checked += 1
            checkpoint.record(verdict, _remote_id(item))
            for finding in verdict.findings:
                on_finding(finding.as_dict())
        progress(summary.checked + summary.unchecked)

    try:
        summary.stopped = run_bounded(todo(), check, on_done, workers=concurrency, stop=stop) and limit is None
    finally:
        checkpoint.flush()
    for doc in checkpoint.earlier_failures():
        on_finding(doc)
    totals = checkpoint.totals()
    summary.passed, summary.failed, summary.signed = (totals.get(k, 0) for k in ("passed", "failed", "signed"))
    summary.by_kind = checkpoint.kinds()
    summary.extras_found, summary.extras_noted = checkpoint.extras()
    summary.extras_kinds = checkpoint.extras_kinds()
    summary.elapsed_s = round(clock() - started, 3)
    return summary


def checker(
    provider: str,
    tolerance: Tolerance,
    *,
    rate: float,
    timeout_s: float,
    allow_private: bool,
    mux_hosts,
    signer: Callable[[Mapping], SignedPlayback] | None = None,
):
    """The Checker the CLI runs: guarded fetches, paced at `rate` a second; signed videos through `signer`."""

    def fetch(url: str) -> Fetched:
        return guarded_get(url, allow_private=allow_private, timeout_s=timeout_s)

    return Checker(provider, tolerance, Pace(rate), fetch, mux_hosts, signer)
