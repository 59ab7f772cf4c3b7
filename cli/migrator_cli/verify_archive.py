"""`migrator verify --archive`: every archived original read back from the owner's bucket and held against the ledger.

For each asset whose own item says `archive_state` archived (ledger/archive.py's `note_archive`), S3 is asked what it
holds at `archive_key` (HeadObject with ChecksumMode ENABLED, through the archiver's own adapter:
`archive.store.ArchiveStore.held`), and its ContentLength and ChecksumSHA256 (S3's composite SHA-256 of the parts,
"base64-N") must be the ledger's `archive_bytes` and `archive_sha256`. Each object that differs, is missing, or got
no answer is listed with its reason; so is each ready asset whose original is not archived, with its archive state
and error. The summary's one line is `archived N of M, <bytes>, checksums verified` (N archived and verified of the
M assets owed a copy: `owed`), else the same with how many differ, are missing, or went unchecked.

Bounded and paced for a million assets: the ledger is streamed (the parallel scan report.py runs), at most
`workers` HeadObjects are in flight, leaving at `rate` a second (verify.Pace), and only counts are kept: each
finding goes out as it is found. `check` is pure; `run_archive_verify` does the I/O.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from botocore.exceptions import BotoCoreError, ClientError
from migrator.archive.store import Archived
from migrator.states import State

from .sender import run_bounded
from .units import human_bytes
from .verify import Finding, Pace


@dataclass(frozen=True)
class Recorded:
    """What the ledger says was archived: the object's key, its size and S3's checksum of it."""

    key: str
    size: int
    sha256: str


@dataclass(frozen=True)
class ArchiveFinding(Finding):
    """A verify finding about the archive: its `kind` is size, checksum, no_checksum, unrecorded (the ledger's record
    is short), missing or unchecked (no answer); a line of its own type."""

    def as_dict(self) -> dict:
        return {**super().as_dict(), "type": "archive_mismatch"}


@dataclass(frozen=True)
class ArchiveVerdict:
    asset_id: str
    status: str  # verified, differs, missing, unchecked
    findings: tuple[ArchiveFinding, ...] = ()
    size: int = 0  # the verified object's bytes


def recorded(item: Mapping) -> Recorded | None:
    """The ledger's record of an archived original; None where it lacks the key, the size or the checksum."""
    key, size, sha256 = item.get("archive_key"), item.get("archive_bytes"), item.get("archive_sha256")
    if isinstance(size, Decimal) and size == size.to_integral_value():
        size = int(size)
    if not isinstance(key, str) or not key or not isinstance(sha256, str) or not sha256:
        return None
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        return None
    return Recorded(key, size, sha256)


def check(item: Mapping, held: Archived | str | None) -> ArchiveVerdict:
    """One archived asset's verdict from what S3 answered for its key (pure): `held` is what S3 holds there, None
    when it holds nothing, or the reason it gave no answer (a denial, a timeout)."""
    asset_id = str(item.get("asset_id"))
    record = recorded(item)
    if record is None:
        why = "the ledger says archived but lacks the object's key, size or checksum (archive_key, archive_bytes,"
        return ArchiveVerdict(asset_id, "differs", (ArchiveFinding(asset_id, "unrecorded", why + " archive_sha256)"),))
    where = {"key": record.key}
    if isinstance(held, str):
        finding = ArchiveFinding(asset_id, "unchecked", f"no answer from S3 for {record.key}: {held}", where)
        return ArchiveVerdict(asset_id, "unchecked", (finding,))
    if held is None:
        finding = ArchiveFinding(asset_id, "missing", f"no object at {record.key}", where)
        return ArchiveVerdict(asset_id, "missing", (finding,))
    findings = []
    if held.size != record.size:
        numbers = {**where, "bytes": held.size, "ledger_bytes": record.size}
        detail = f"S3 holds {held.size:,} bytes at {record.key}, the ledger says {record.size:,}"
        findings.append(ArchiveFinding(asset_id, "size", detail, numbers))
    if not held.sha256:
        detail = f"S3 answered no SHA-256 checksum for {record.key}: it cannot be checked against the ledger's"
        findings.append(ArchiveFinding(asset_id, "no_checksum", detail, {**where, "ledger_sha256": record.sha256}))
    elif held.sha256 != record.sha256:
        numbers = {**where, "sha256": held.sha256, "ledger_sha256": record.sha256}
        detail = f"S3's SHA-256 of {record.key} is {held.sha256}, the ledger's {record.sha256}"
        findings.append(ArchiveFinding(asset_id, "checksum", detail, numbers))
    if findings:
        return ArchiveVerdict(asset_id, "differs", tuple(findings))
    return ArchiveVerdict(asset_id, "verified", size=record.size)


# An asset the provider took: the uploader owes its copy then (upload/moves.py's `owe_archive`).
TAKEN = frozenset({State.PROCESSING.value, State.READY.value})


def owed(item: Mapping) -> bool:
    """Whether the asset is owed a copy of its original: the provider took it (the uploader owes the copy then), or
    its copy began (archived first, before the create). One the provider refused, or not yet sent, owes none."""
    return item.get("state") in TAKEN or bool(item.get("archive_state"))


def not_archived(item: Mapping) -> dict:
    """A ready asset whose original is not archived, as the report lists it: its states and the copy's error."""
    return {
        "type": "not_archived",
        "id": item.get("asset_id"),
        "state": item.get("state"),
        "archive_state": item.get("archive_state"),
        "archive_error": item.get("archive_error"),
    }


@dataclass
class ArchiveReport:
    assets: int = 0  # M: the assets owed a copy of their original (`owed`)
    verified: int = 0  # N: archived, and S3 holds what the ledger says
    bytes: int = 0  # the verified objects' bytes
    differ: int = 0  # archived, but S3's size or checksum (or the ledger's record) is not the ledger's
    missing: int = 0  # archived, but S3 holds nothing at the key
    unchecked: int = 0  # archived, S3 gave no answer: the next run checks it
    not_archived: Counter = field(default_factory=Counter)  # archive state (or "none") -> assets
    ready_not_archived: int = 0
    not_owed: Counter = field(default_factory=Counter)  # asset state -> assets owed no copy (refused, not yet sent)
    by_kind: Counter = field(default_factory=Counter)
    stopped: bool = False

    @property
    def ok(self) -> bool:
        return not (self.differ or self.missing or self.unchecked or self.stopped)

    def line(self) -> str:
        """`archived N of M, <bytes>, checksums verified`, or what differs, is missing or went unchecked."""
        head = f"archived {self.verified} of {self.assets}, {human_bytes(self.bytes)}, "
        if self.ok:
            return head + "checksums verified"
        parts = [f"{self.differ} checksums differ"] if self.differ else []
        parts += [f"{self.missing} missing"] if self.missing else []
        parts += [f"{self.unchecked} unchecked"] if self.unchecked else []
        parts += ["stopped before the end"] if self.stopped else []
        return head + ", ".join(parts)

    def lines(self) -> list[str]:
        out = [self.line()]
        if self.not_archived:
            states = ", ".join(f"{n:,} {state}" for state, n in self.not_archived.most_common())
            out.append(f"  not archived: {states}; {self.ready_not_archived:,} of them ready")
        if self.not_owed:
            states = ", ".join(f"{n:,} {state}" for state, n in self.not_owed.most_common())
            out.append(f"  owed no copy (the provider has not taken them): {states}")
        if self.by_kind:
            out.append("  findings: " + ", ".join(f"{n:,} {kind}" for kind, n in self.by_kind.most_common()))
        return out

    def as_dict(self) -> dict:
        return {
            "type": "archive_summary",
            "line": self.line(),
            "ok": self.ok,
            "assets": self.assets,
            "verified": self.verified,
            "bytes": self.bytes,
            "differ": self.differ,
            "missing": self.missing,
            "unchecked": self.unchecked,
            "not_archived": dict(self.not_archived.most_common()),
            "ready_not_archived": self.ready_not_archived,
            "not_owed": dict(self.not_owed.most_common()),
            "by_kind": dict(self.by_kind.most_common()),
            "stopped": self.stopped,
        }


def run_archive_verify(
    items: Iterable[dict],
    held: Callable[[str], Archived | None],
    *,
    workers: int,
    rate: float,
    on_finding: Callable[[dict], None],
    stop: threading.Event | None = None,
    progress: Callable[[int], None] | None = None,
) -> ArchiveReport:
    """Check every archived asset of `items` (HeadObjects through `held`, paced at `rate` a second, `workers` at
    once) and list each ready asset not archived; each finding goes to `on_finding` as it is made."""
    report, pace = ArchiveReport(), Pace(rate)

    def archived() -> Iterator[dict]:
        for item in items:
            if not owed(item):
                report.not_owed[str(item.get("state"))] += 1
                continue
            report.assets += 1
            if item.get("archive_state") == "archived":
                yield item
                continue
            report.not_archived[str(item.get("archive_state") or "none")] += 1
            if item.get("state") == State.READY.value:
                report.ready_not_archived += 1
                on_finding(not_archived(item))

    def work(item: dict) -> ArchiveVerdict:
        record = recorded(item)
        if record is None:
            return check(item, None)
        pace.wait()
        try:
            answer: Archived | str | None = held(record.key)
        except (ClientError, BotoCoreError) as exc:  # a denial, a timeout: this object's, not the run's (listed)
            answer = error_words(exc)
        return check(item, answer)

    def done(item: dict, verdict: ArchiveVerdict) -> None:
        if verdict.status == "verified":
            report.verified += 1
            report.bytes += verdict.size
        else:
            setattr(report, STATUS_COUNTS[verdict.status], getattr(report, STATUS_COUNTS[verdict.status]) + 1)
        for finding in verdict.findings:
            report.by_kind[finding.kind] += 1
            on_finding(finding.as_dict())
        if progress:
            progress(report.verified + report.differ + report.missing + report.unchecked)

    report.stopped = run_bounded(archived(), work, done, workers=workers, stop=stop or threading.Event())
    return report


STATUS_COUNTS = {"differs": "differ", "missing": "missing", "unchecked": "unchecked"}


def error_words(exc: BaseException) -> str:
    """An S3 failure in a few words: its error code and status where it has them (no request ids, no keys)."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        error = response.get("Error") or {}
        status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
        code = error.get("Code") or type(exc).__name__
        return f"{code} (HTTP {status})" if status else str(code)
    return type(exc).__name__
