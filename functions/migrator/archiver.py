"""The archive Lambda (issue 43): each asset's original copied to the owner's S3, a part at a time, while its link
still works; a lane of its own (ArchiveQueue), so a slow copy never holds a create back, nor a create a copy.

A message names an asset (`{"id": ...}`). A pass claims the asset's archive item (`ledger/archive.py`), and:

1. with no upload open, reads the file's first part to learn its size (a range GET's Content-Range), plans the
   parts (`archive.plan`), opens the multipart upload (or adopts the one a crash left open) and records both;
2. reads each next part (`trackfetch.fetch` with a byte range: the same guard as a caption's fetch), checks it
   and sends it with its SHA-256, and records it; what a read answered decides what follows (`archive.decide`):
   a link that expired is minted again at the source, a file that changed is copied again from the start once,
   a source that fails is tried again later, one that refuses is failed with its reason;
3. with every part in, keeps the row's caption, chapters and thumbnail files beside it (`archive.sidefiles`: each
   fetched through the same guard, put in STANDARD; one that cannot be had is named with its reason, never failing
   the original), then joins the parts and reads the object back: it stands when its size and S3's composite
   checksum are the ones the recorded parts make and the source's own word on its file agrees (`archive.checks`:
   every read answered the first read's ETag; a stated MD5 or Dropbox content_hash equals the copy's, where one
   can be computed) (`decide.completion_problems`); then the row's JSON is put beside it and the asset's own item
   says `archive_state` archived, with the key, bytes, checksum, `archive_files` kept, `archive_missing` (each
   file not had, and why) and `archive_checks` (what was compared with the source: `source_checks` on the copy's
   item too).

What a pass saw of the source (`checks.Tally`) and the side files' entries are written on the copy's item at
each pass's end (`side_files`, `source_tally`), so the next pass goes on from them; a pass that crashed wrote
neither, so its files are fetched again and a check it fed is reported as not made, never as passed. The archive
is recorded only after every side file is settled, so no crash leaves it recorded without them.

A pass stops a part's time before its invocation ends and sends the message back at once: a file of tens of GB
spans as many invocations as it needs, each part in memory alone. Only the original's bytes pass through here.
"""

from __future__ import annotations

import os
import random
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from .archive.checks import Sha256, Tally, stated_content_hash
from .archive.decide import MAX_COPIES, ArchiveState, Next, Read, classify_read, completion_problems, part_fate
from .archive.plan import (
    MAX_PART_BYTES,
    MIN_PART_BYTES,
    PartPlan,
    content_range_total,
    original_key,
    plan_parts,
    sha256_b64,
    sidecar_key,
    suffix_of,
)
from .archive.sidefiles import MISSING, SideFiles, kept_and_missing, retried, side_files_of
from .archive.store import ArchiveStore, SentPart
from .batch import run_batch
from .fate import Fate, excerpt
from .ledger import ArchiveEnd, ArchiveRefused, Ledger
from .messages import id_message, id_message_id
from .retry import backoff_delay
from .sources.base import Resolution, ResolutionKind
from .trackfetch import Fetched, FetchFailed, FetchPolicy, fetch, parse_test_origins

logger = Logger(service="archive")
metrics = Metrics(namespace="VideoMigration", service="archive")

# Least time one more part needs: its read (at most PART_READ_S) and its upload.
PART_BUDGET_S = 120.0
PART_READ_S = 60.0
LEASE_MARGIN_S = 30.0
# The asset item's fields that are the ledger's own, not what the row carried (left out of row.json).
INTERNAL = ("lease_token", "lease_until", "state_shard", "due_lane", "due_at", "tracks_lane", "tracks_due_at")


# The archive queue's message: only the asset's id (the ledger holds its row and its copy's state).
archive_message, archive_message_id = id_message, id_message_id


@dataclass
class Copy:
    """One pass's view of the copy: the claim, the link, the archive item as last written, the first part's
    bytes where the read that planned the copy was that part (sent, not read twice) and what that read answered,
    and what the pass carries to the next on the archive item: what it saw of the source (`tally`) and the side
    files' entries (`sides`)."""

    asset_id: str
    token: str
    source_url: str
    link: str
    item: dict
    first: bytes | None = None
    first_answer: tuple[int, dict] = (206, {})
    content_hash: str | None = None  # Dropbox's, as the row states it
    tally: Tally | None = None
    sides: dict = field(default_factory=dict)

    def carried(self) -> dict:
        """The fields every end of a pass writes on the archive item, for the next pass (or the record)."""
        doc: dict = {"side_files": self.sides}
        if self.tally is not None:
            doc["source_tally"] = self.tally.as_item()
        return doc

    @property
    def mints(self) -> int:
        return int(self.item.get("mints") or 0)

    @property
    def copies(self) -> int:
        return int(self.item.get("copies") or 0)


@dataclass
class Archiver:
    ledger: Ledger
    store: ArchiveStore
    prefix: str
    sqs: Any  # a boto3 SQS client (boto3 ships no types)
    queue_url: str
    locate: Callable[[str], Resolution]  # a source_url as a link to read now (a reference resolved, s3:// signed)
    policy: FetchPolicy = field(default_factory=lambda: FetchPolicy(max_bytes=MAX_PART_BYTES, timeout_s=PART_READ_S))
    fetch: Callable = fetch
    clock: Callable[[], float] = time.time
    rng: random.Random = field(default_factory=random.Random)
    part_budget_s: float = PART_BUDGET_S

    def handle_batch(self, event: dict, remaining_s: Callable[[], float]) -> dict:
        return run_batch(
            event, self.process, remaining_s, self.sqs, self.queue_url, self.clock, self.rng, logger, metrics
        )

    # --- one asset ------------------------------------------------------------------------------------------

    def process(self, record: dict, deadline: float) -> Fate:
        asset_id = archive_message_id(record.get("body"))
        if asset_id is None:
            metrics.add_metric(name="Poison", unit=MetricUnit.Count, value=1)
            return Fate.poison("not an archive message")
        logger.set_correlation_id(asset_id)
        asset = self.ledger.get(asset_id)
        if not asset or not isinstance(asset.get("source_url"), str):
            return Fate.finished("no such asset in the ledger")
        now, token = self.clock(), uuid.uuid4().hex
        claim = self.ledger.claim_archive(asset_id, token, now, deadline + LEASE_MARGIN_S)
        if isinstance(claim, ArchiveRefused):
            return self._refused(claim.item, now)
        link = self._link(asset["source_url"])
        if isinstance(link, ArchiveEnd):
            return self._end(asset_id, token, link)
        copy = Copy(asset_id, token, asset["source_url"], link, claim.item)
        copy.content_hash = stated_content_hash(copy.source_url, asset)
        copy.sides = {str(k): dict(v) for k, v in dict(claim.item.get("side_files") or {}).items()}
        return self._copy(copy, asset, deadline)

    def _refused(self, item: Mapping, now: float) -> Fate:
        state = item.get("state")
        if state == ArchiveState.ARCHIVED.value:
            return Fate.finished("archived already")
        if state == ArchiveState.FAILED.value and item.get("retry_after") is None:
            return Fate.finished("failed for good: `migrator retry --archive` copies it again")
        until = max(float(item.get("lease_until") or 0), float(item.get("retry_after") or 0))
        return Fate.later(max(1.0, until - now) + self.rng.uniform(0, 5), "another pass holds the copy, or it waits")

    def _copy(self, copy: Copy, asset: Mapping, deadline: float) -> Fate:
        if copy.item.get("state") != ArchiveState.COPYING.value or not copy.item.get("upload_id"):
            started = self._start(copy)
            if started is not None:
                return self._end(copy.asset_id, copy.token, started, copy)
        else:
            number = len(copy.item.get("parts") or []) + 1
            copy.tally = Tally.of_item(copy.item.get("source_tally"), str(copy.item["upload_id"]), number)
            if copy.content_hash:
                copy.tally.stated.setdefault("content_hash", copy.content_hash)
        while True:
            plan = PartPlan(int(copy.item["size"]), int(copy.item["part_bytes"]))
            number = len(copy.item.get("parts") or []) + 1
            if number > plan.count:
                return self._complete(copy, plan, asset, deadline)
            in_hand = number == 1 and copy.first is not None  # read already: sent whatever the time
            if not in_hand and deadline - self.clock() < self.part_budget_s:
                return self._pause(copy, "the invocation's time: the next pass goes on")
            end = self._part(copy, plan, number)
            if end is not None:
                return self._end(copy.asset_id, copy.token, end, copy)

    # --- the upload -----------------------------------------------------------------------------------------

    def _start(self, copy: Copy) -> ArchiveEnd | None:
        """Learn the file's size from its first bytes, plan the parts, open (or adopt) the upload and record it."""
        first = self.fetch(copy.link, self.policy, byte_range=(0, MIN_PART_BYTES - 1))
        if not isinstance(first, Fetched):
            return self._unread(first, copy)
        size = first_size(first)
        if size is None:
            return ArchiveEnd(ArchiveState.FAILED, "the source said neither the file's size nor its whole body")
        # A source that ignores Range answers the whole file: it is archived as one part, if one part holds it.
        plan = plan_parts(size) if first.status == 206 or size > MAX_PART_BYTES else PartPlan(size, max(size, 1))
        if isinstance(plan, str):
            return ArchiveEnd(ArchiveState.FAILED, plan)
        key = original_key(self.prefix, copy.asset_id, suffix_for(copy.source_url, first))
        open_ = self.store.open_uploads(key)
        # One a crash left between its create and the ledger's record is adopted; any other, a dead copy's, goes.
        upload_id = open_[0] if open_ and not copy.copies else None
        for stale in (u for u in open_ if u != upload_id):
            self.store.abort(key, stale)
        upload_id = upload_id or self.store.start(key, first.headers.get("Content-Type") or "application/octet-stream")
        written = self.ledger.record_upload(
            copy.asset_id, copy.token, key, upload_id, plan.size, plan.part_bytes, self.clock()
        )
        if not written.won:
            return ArchiveEnd(ArchiveState.COPYING, "the claim was taken over before the upload was recorded")
        copy.item = written.current or {}
        copy.first = first.body if len(first.body) == plan.length(1) else None
        copy.first_answer = (first.status, first.headers)
        # A new copy: what it sees of the source is its own, and the side files missing before are tried again.
        stated = {"content_hash": copy.content_hash} if copy.content_hash else {}
        copy.tally = Tally(upload_id, stated=stated, blocks=Sha256() if copy.content_hash else None)
        copy.tally.seen(1, first.headers)
        copy.sides = retried(copy.sides)
        self.ledger.note_archive(copy.asset_id, {"archive_state": "copying", "archive_key": key}, self.clock())
        logger.info("copy started", extra={"key": key, "bytes": plan.size, "parts": plan.count})
        return None

    def _part(self, copy: Copy, plan: PartPlan, number: int) -> ArchiveEnd | None:
        """Read, check, send and record part `number`; None when it is recorded (or its link minted again), else
        how the pass ends."""
        if number == 1 and copy.first is not None:
            body, copy.first = copy.first, None
            return self._send(copy, plan, number, body, *copy.first_answer)
        read = self.fetch(copy.link, self.policy, byte_range=plan.byte_range(number))
        if not isinstance(read, Fetched) and not read.status:  # refused here, or no answer
            return self._unread(read, copy)
        if isinstance(read, Fetched):
            status, body, total = read.status, read.body, content_range_total(read.headers.get("Content-Range"))
        else:
            status, body, total = read.status, b"", None
        kind = classify_read(status, len(body), plan, number, total)
        headers = read.headers if isinstance(read, Fetched) else {}
        if kind is Read.OK and copy.tally is not None and not copy.tally.seen(number, headers):
            kind = Read.RETAGGED
        fate = part_fate(kind, status, copy.mints, int(copy.item.get("failures") or 0) + 1, copy.copies)
        if fate.next is Next.SEND:
            return self._send(copy, plan, number, body, status, headers)
        if fate.next is Next.MINT:
            copy.item = self.ledger.count_mint(copy.asset_id, copy.token, self.clock()).current or copy.item
            link = self._link(copy.source_url)
            if isinstance(link, ArchiveEnd):
                return link
            copy.link = link
            return None
        if fate.next is Next.RESTART:
            logger.warning("copy restarted: %s", fate.reason)
            self.store.abort(str(copy.item["key"]), str(copy.item["upload_id"]))
            return self._start(copy)
        if fate.next is Next.RETRY:
            return self._later(copy, fate.reason)
        self.store.abort(str(copy.item["key"]), str(copy.item["upload_id"]))
        return ArchiveEnd(ArchiveState.FAILED, fate.reason)

    def _send(
        self, copy: Copy, plan: PartPlan, number: int, body: bytes, status: int, headers: dict
    ) -> ArchiveEnd | None:
        key, upload_id = str(copy.item["key"]), str(copy.item["upload_id"])
        sent = self.store.send_part(key, upload_id, number, body, sha256_b64(body))
        recorded = self.ledger.record_part(
            copy.asset_id, copy.token, upload_id, number, sent.sha256, sent.etag, len(body), self.clock()
        )
        if not recorded.won:
            return ArchiveEnd(ArchiveState.COPYING, "the claim was taken over mid-copy")
        copy.item = recorded.current or {}
        if copy.tally is not None:
            copy.tally.fold(number, body, plan.count, copy.source_url, status, headers)
        metrics.add_metric(name="ArchiveBytes", unit=MetricUnit.Bytes, value=len(body))
        return None

    def _complete(self, copy: Copy, plan: PartPlan, asset: Mapping, deadline: float) -> Fate:
        """Every part is in: the side files kept (before the upload is joined, so a pass that stops among them
        leaves the upload open to go on with), then the object joined and checked, the row beside it."""
        waited = self._side_files(copy, asset, deadline)
        if waited is not None:
            return waited
        key, upload_id = str(copy.item["key"]), str(copy.item["upload_id"])
        parts = [SentPart(n, str(p[1]), str(p[0])) for n, p in enumerate(copy.item.get("parts") or [], 1)]
        try:
            checksum = self.store.complete(key, upload_id, parts)
        except Exception as exc:  # joined by a pass that stopped before its record: what S3 holds decides
            if getattr(exc, "response", {}).get("Error", {}).get("Code") != "NoSuchUpload":
                raise
            checksum = None
        held = self.store.held(key)
        sha256 = held.sha256 if held else checksum
        tally = copy.tally or Tally(upload_id)
        tally.finish(plan.count)
        problems = completion_problems(
            plan, [p.sha256 for p in parts], sha256, held.size if held else None, tally.stated, tally.copied
        )
        if problems:
            why = "; ".join(problems)
            if copy.copies >= MAX_COPIES:
                return self._end(copy.asset_id, copy.token, ArchiveEnd(ArchiveState.FAILED, why), copy)
            logger.warning("the archived object did not stand, copied again: %s", why)
            started = self._start(copy)
            return self._end(copy.asset_id, copy.token, started, copy) if started else self._pause(copy, why)
        self.store.put_json(sidecar_key(self.prefix, copy.asset_id), row_of(asset))
        checks = tally.report(plan.count)
        kept, missing = kept_and_missing(copy.sides)
        noted = {"archive_state": "archived", "archive_key": key, "archive_bytes": plan.size, "archive_sha256": sha256}
        noted |= {"archive_files": kept, "archive_missing": missing, "archive_checks": checks}
        self.ledger.note_archive(copy.asset_id, noted, self.clock())
        metrics.add_metric(name="Archived", unit=MetricUnit.Count, value=1)
        fields = {"sha256": sha256, "bytes": plan.size, "source_checks": checks}
        return self._end(copy.asset_id, copy.token, ArchiveEnd(ArchiveState.ARCHIVED, fields=fields), copy)

    def _side_files(self, copy: Copy, asset: Mapping, deadline: float) -> Fate | None:
        """The row's caption, chapters and thumbnail files put beside the original (`archive.sidefiles`); None when
        each is settled (kept or missing), else how the pass ends (out of time, or a file to wait for)."""
        files = side_files_of(asset)
        if isinstance(files, str):
            copy.sides["row"] = {"state": MISSING, "reason": files[:200]}
            return None
        sides = SideFiles(
            self.store, self.prefix, self.locate, self.fetch, self.policy.test_origins, self.clock, self.rng
        )
        went = sides.keep(copy.asset_id, files, copy.sides, deadline)
        if went.done:
            return None
        if went.wait_until is None:
            return self._pause(copy, went.why)
        return self._end(copy.asset_id, copy.token, ArchiveEnd(ArchiveState.COPYING, went.why, went.wait_until), copy)

    # --- the ends of a pass ---------------------------------------------------------------------------------

    def _pause(self, copy: Copy, why: str) -> Fate:
        """The copy goes on in the next pass, sent at once."""
        end = ArchiveEnd(ArchiveState.COPYING, fields=copy.carried())
        self.ledger.finish_archive(copy.asset_id, copy.token, end, self.clock())
        return Fate.later(0, why)

    def _later(self, copy: Copy, why: str) -> ArchiveEnd:
        """A read that failed and may pass: the copy waits (backed off by its failures in a row), its parts kept."""
        failures = int(copy.item.get("failures") or 0) + 1
        retry_at = self.clock() + backoff_delay(failures, self.rng)
        return ArchiveEnd(ArchiveState.COPYING, why, retry_at, {"failures": failures})

    def _unread(self, failed: FetchFailed, copy: Copy) -> ArchiveEnd:
        """A read refused before any answer (an address or scheme the guard refuses, a file over the cap) fails
        the copy with the guard's reason; no answer at all (a timeout, a refused connection) waits."""
        if failed.retryable:
            return self._later(copy, f"the source: {excerpt(failed.reason, 300)}")
        if copy.item.get("upload_id"):
            self.store.abort(str(copy.item["key"]), str(copy.item["upload_id"]))
        return ArchiveEnd(ArchiveState.FAILED, f"the source: {excerpt(failed.reason, 300)}")

    def _end(self, asset_id: str, token: str, end: ArchiveEnd, copy: Copy | None = None) -> Fate:
        now = self.clock()
        if copy is not None:  # what the pass saw and kept goes on the item with its end
            end = replace(end, fields={**copy.carried(), **(end.fields or {})})
        self.ledger.finish_archive(asset_id, token, end, now)
        if end.state is ArchiveState.ARCHIVED:
            return Fate.finished("archived")
        if end.state is ArchiveState.FAILED and end.retry_after is None:
            self.ledger.note_archive(asset_id, {"archive_state": "failed", "archive_error": end.error or ""}, now)
            metrics.add_metric(name="ArchiveFailed", unit=MetricUnit.Count, value=1)
            return Fate.finished(f"archive failed: {end.error}")
        if end.retry_after is not None:
            return Fate.later(end.retry_after - now, f"archive waits: {end.error}")
        return Fate.later(self.rng.uniform(1, 5), end.error or "goes on")

    def _link(self, source_url: str) -> str | ArchiveEnd:
        """The link to read the original at now: a reference resolved at its platform, s3:// signed; else how the
        pass ends (a file still being prepared or a source pacing us: later; one it will never serve: failed)."""
        try:
            resolved = self.locate(source_url)
        except Exception as exc:  # a platform's (or our settings') failure is the copy's, not the worker's
            why = f"the source could not be asked ({type(exc).__name__})"
            return ArchiveEnd(ArchiveState.COPYING, why, self.clock() + 60)
        if resolved.kind is ResolutionKind.READY and resolved.url:
            return resolved.url
        why = resolved.reason or resolved.kind.value
        if resolved.kind in (ResolutionKind.UNFETCHABLE, ResolutionKind.READY):
            return ArchiveEnd(ArchiveState.FAILED, f"the source cannot serve the file: {why}")
        wait = resolved.retry_after if resolved.retry_after is not None else 60.0
        return ArchiveEnd(ArchiveState.COPYING, f"the source: {why}", self.clock() + wait)  # its parts kept


def first_size(first: Fetched) -> int | None:
    """The file's whole size from its first read: a 206's Content-Range, or a 200's whole body."""
    if first.status == 200:
        return len(first.body)
    return content_range_total(first.headers.get("Content-Range"))


def suffix_for(source_url: str, first: Fetched) -> str:
    """The original's suffix: the source's own name's, else the link's or its media type's."""
    named = suffix_of(source_url)
    return named if named != "bin" else suffix_of(first.url, first.headers.get("Content-Type"))


def row_of(asset: Mapping) -> dict:
    """What the row carried, for row.json: the asset's item less the ledger's own working fields."""
    return {k: v for k, v in asset.items() if k not in INTERNAL}


def build(env: Mapping[str, str] | None = None) -> Archiver:
    from .settings import load
    from .sources import resolve

    env = os.environ if env is None else env
    settings = load(require_queue=False)
    storage_class = env.get("ARCHIVE_STORAGE_CLASS", "STANDARD").strip() or "STANDARD"
    policy = FetchPolicy(
        max_bytes=MAX_PART_BYTES,
        timeout_s=PART_READ_S,
        test_origins=parse_test_origins(settings.track_test_origins),
    )
    return Archiver(
        ledger=Ledger(settings.table_name, boto3.client("dynamodb")),
        store=ArchiveStore(env["ARCHIVE_BUCKET"], boto3.client("s3"), storage_class),
        prefix=env.get("ARCHIVE_PREFIX", "masters"),
        sqs=boto3.client("sqs"),
        queue_url=env["ARCHIVE_QUEUE_URL"],
        locate=resolve,
        policy=policy,
    )


_archiver: Archiver | None = None


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event, context):
    global _archiver
    if _archiver is None:
        _archiver = build()
    return _archiver.handle_batch(event, lambda: context.get_remaining_time_in_millis() / 1000)
