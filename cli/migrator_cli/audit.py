"""`migrator audit`: the proof, on a real account, that the migration made one video per asset.

It pages through the provider's whole library and through the ledger, and lists:

- **duplicates**: an asset of ours that holds more than one provider video that is not
  errored (an errored leftover from a rejected try is counted apart, not as a duplicate);
- **missing**: a ledger asset whose recorded provider video the library does not have;
- **state drift**: a ledger asset whose video the provider sees in another state (ready at
  the provider but processing in the ledger is a webhook still to come or lost, which
  reconcile's poll settles; ready in the ledger but errored at the provider is not);
- **privacy**: a ledger asset whose video the provider plays otherwise than its row asks
  (a private or signed row public at the provider, above all): the row's privacy, or for a
  row with none the playback its create recorded (the stack's DefaultPlayback then).

Both sides are streamed into a temporary SQLite file, so memory stays flat for a library
of millions; the provider is paced by its own 429s (Retry-After honoured, bounded).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field

from migrator.providers import Provider, Video
from migrator.providers.fidelity import playback_of
from migrator.providers.http import Answer
from migrator.states import State

MAX_SHOWN = 50
THROTTLE_RETRIES = 8
THROTTLE_WAIT_CAP_S = 300.0


@dataclass
class Finding:
    kind: str  # duplicate | missing | state | privacy
    asset_id: str
    detail: str
    remote_ids: list[str] = field(default_factory=list)


@dataclass
class AuditReport:
    provider_videos: int = 0
    our_videos: int = 0  # videos that name one of our assets
    errored_leftovers: int = 0  # errored videos beside a live one for the same asset
    ledger_assets: int = 0
    findings: list[Finding] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(1 for f in self.findings if f.kind == kind)

    @property
    def ok(self) -> bool:
        return not self.findings

    def as_dict(self) -> dict:
        return {
            **{k: v for k, v in asdict(self).items() if k != "findings"},
            "duplicates": self.count("duplicate"),
            "missing": self.count("missing"),
            "state_drift": self.count("state"),
            "privacy_drift": self.count("privacy"),
            "ok": self.ok,
        }

    def lines(self) -> list[str]:
        out = [
            f"provider videos   {self.provider_videos:,} ({self.our_videos:,} name an asset of ours)",
            f"ledger assets     {self.ledger_assets:,}",
            f"duplicates        {self.count('duplicate'):,}   (assets with more than one live provider video)",
            f"missing           {self.count('missing'):,}   (ledger points at a video the provider does not have)",
            f"state drift       {self.count('state'):,}   (the provider sees the video in another state)",
            f"privacy drift     {self.count('privacy'):,}   (the provider plays the video otherwise than its row asks)",
            f"errored leftovers {self.errored_leftovers:,}   (an errored video beside a live one: not a duplicate)",
        ]
        for finding in self.findings[:MAX_SHOWN]:
            ids = f" [{', '.join(finding.remote_ids)}]" if finding.remote_ids else ""
            out.append(f"  {finding.kind:<9} {finding.asset_id}: {finding.detail}{ids}")
        if len(self.findings) > MAX_SHOWN:
            out.append(f"  … and {len(self.findings) - MAX_SHOWN:,} more (--json lists them all)")
        out.append(
            "result            " + ("OK: one video per asset, as the ledger says" if self.ok else "FINDINGS above")
        )
        return out


def paced(provider: Provider, sleep: Callable[[float], None] = time.sleep) -> Provider:
    """The provider with its transport retrying 429s after the provider's own hint (bounded):
    an audit reads the whole library and must not stop at the first throttle."""
    send = provider.http.send

    def send_paced(*args, **kwargs) -> Answer:
        for _ in range(THROTTLE_RETRIES):
            answer = send(*args, **kwargs)
            if answer.status != 429:
                return answer
            wait = provider.rate_signal(answer.headers).retry_after
            sleep(min(THROTTLE_WAIT_CAP_S, wait if wait is not None else 5.0))
        return answer

    provider.http.send = send_paced  # type: ignore[method-assign]  # deliberate: this provider's every call paced
    return provider


def audit(
    provider: Provider, ledger_items: Iterable[dict], progress: Callable[[str, int], None] | None = None
) -> AuditReport:
    """Compare the provider's library with the ledger; see the module's docstring."""
    report = AuditReport()
    fd, path = tempfile.mkstemp(prefix="migrator-audit-", suffix=".sqlite")
    os.close(fd)
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
            "CREATE TABLE videos (remote_id TEXT PRIMARY KEY, ref TEXT, target TEXT, status TEXT, errored INTEGER,"
            " privacy TEXT);"
            "CREATE INDEX by_ref ON videos (ref);"
        )
        db.execute("BEGIN")
        for video in _our_statuses(provider, provider.videos()):
            report.provider_videos += 1
            report.our_videos += int(video.ref is not None)
            errored = int(video.target is State.REJECTED)
            db.execute(
                "INSERT OR REPLACE INTO videos VALUES (?, ?, ?, ?, ?, ?)",
                (
                    video.remote_id,
                    video.ref,
                    video.target.value if video.target else None,
                    video.status,
                    errored,
                    video.privacy,
                ),
            )
            if progress and report.provider_videos % 1000 == 0:
                progress("provider videos", report.provider_videos)
        db.execute("COMMIT")
        for ref, live, dead, ids in db.execute(
            "SELECT ref, SUM(1 - errored), SUM(errored), GROUP_CONCAT(remote_id) FROM videos"
            " WHERE ref IS NOT NULL GROUP BY ref HAVING COUNT(*) > 1"
        ):
            if live > 1:
                report.findings.append(Finding("duplicate", ref, f"{live} live provider videos", ids.split(",")))
            elif live == 1:
                report.errored_leftovers += dead
        for item in ledger_items:
            report.ledger_assets += 1
            report.findings += [f for f in (_check(item, db), _privacy_check(item, db)) if f]
    finally:
        db.close()
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
    return report


def _our_statuses(provider: Provider, videos: Iterator[Video]) -> Iterator[Video]:
    """Listed videos; ours get their status where the listing leaves it out (api.video)."""
    for video in videos:
        if not video.remote_id:
            continue
        yield provider.settled(video) if video.ref is not None else video


def _check(item: dict, db: sqlite3.Connection) -> Finding | None:
    """What is wrong, if anything, between one ledger asset and the provider's view of its video."""
    asset_id, remote_id, state = item["asset_id"], item.get("remote_id"), item.get("state")
    if not remote_id:
        return None  # never reached the provider (or only as a lost create, which `duplicate` would show)
    row = db.execute("SELECT target, status FROM videos WHERE remote_id = ?", (remote_id,)).fetchone()
    if row is None:
        return Finding("missing", asset_id, f"ledger says {state}, the provider has no such video", [remote_id])
    target, status = row
    if state == State.READY.value and target != State.READY.value:
        return Finding("state", asset_id, f"ready in the ledger, {status or 'unknown'} at the provider", [remote_id])
    if state == State.REJECTED.value and target == State.READY.value:
        return Finding("state", asset_id, "rejected in the ledger, ready at the provider", [remote_id])
    if state == State.PROCESSING.value and target in (State.READY.value, State.REJECTED.value):
        return Finding(
            "state",
            asset_id,
            f"processing in the ledger, {status} at the provider (reconcile will settle it)",
            [remote_id],
        )
    return None


def wanted_playback(item: dict) -> str | None:
    """How the row asks its video to be played (public or signed): from its privacy, else from what its
    create recorded (the stack's DefaultPlayback then); None when neither is known (an older ledger)."""
    privacy, recorded = item.get("privacy"), item.get("playback")
    if privacy is None and recorded is None:
        return None
    return playback_of(privacy, recorded)


def _privacy_check(item: dict, db: sqlite3.Connection) -> Finding | None:
    """A video the provider plays otherwise than its row asks (one whose privacy it does not say is skipped)."""
    remote_id, wanted = item.get("remote_id"), wanted_playback(item)
    if not remote_id or wanted is None:
        return None
    row = db.execute("SELECT privacy FROM videos WHERE remote_id = ?", (remote_id,)).fetchone()
    if row is None or row[0] is None or row[0] == wanted:
        return None
    asked = item.get("privacy") or f"none (DefaultPlayback {item.get('playback')})"
    detail = f"row privacy {asked}: {wanted} wanted, {row[0]} at the provider"
    return Finding("privacy", item["asset_id"], detail, [remote_id])
