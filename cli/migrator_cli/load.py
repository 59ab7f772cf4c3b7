"""`migrator load`: an inventory file (or S3 listing) into the queue, or into the ledger as pending.

Rows stream from the reader through validation and the repeat check straight into the
sender, so memory stays flat however long the file. Bad rows are reported with their
line numbers and do not stop the good ones; s3:// sources outside the stack's source
bucket (`SourceBucket`), which the uploader could not read, are bad rows too. The front
end (cli/main.py) parses the arguments, calls `load_inventory`, prints
`LoadSummary.lines()` and exits with `LoadSummary.exit_code`; a CliError is its one-line
error.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO
from urllib.parse import urlsplit

from botocore.exceptions import BotoCoreError, ClientError
from migrator.create_options import row_problems
from migrator.ledger import Ledger
from migrator.messages import AssetMessage
from migrator.presign import split_s3_url

from .errors import CliError
from .inventory import BadRow, Deduper, Meter, Record, Row, Skipped, parse_s3_source, read_inventory
from .left_behind import LeftBehindReport
from .progress import Progress
from .select import Selection
from .sender import BatchSender, describe, is_transient, is_unreachable, run_bounded

MAX_SHOWN = 50  # bad rows, warnings and failures printed one by one; the rest are counted
EXIT_INTERRUPTED = 130  # the shell's convention for a run ended by Ctrl-C


@dataclass
class LoadSummary:
    source: str
    mode: str  # "send", "dry-run" or "stage"
    rows_read: int = 0  # data rows (objects, for an S3 listing), bad ones included
    good: int = 0  # valid, first of their id, within --limit: handed on to be sent or staged
    bad: int = 0  # invalid rows and ids repeated with another source_url
    repeats: int = 0  # ids repeated with the same source_url: dropped with a warning
    skipped: int = 0  # S3 objects that are not videos
    sent: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (asset_id, reason): sent or staged in vain
    staged: int = 0
    already_known: int = 0  # staging: ids the ledger had already
    elapsed_s: float = 0.0
    batches: int = 0
    calls: int = 0  # SendMessageBatch calls, retries included
    retried: int = 0  # entries sent again after a transient failure
    last_line: int = 0  # the last line read
    limit: int | None = None
    limit_reached: bool = False
    interrupted: bool = False
    # A pilot's selection (`select.Selection`): rows not matching --where, and matching rows left out of
    # the --sample; a later full load sends them all (the stack's intake drops what the pilot moved).
    where: list[str] = field(default_factory=list)
    sample: int | None = None
    seed: int | None = None
    filtered: int = 0
    sampled_out: int = 0
    left_behind_file: str | None = None  # the rows --where did not take, each with why (left_behind.py)

    @property
    def handed_on(self) -> int:
        """Good rows that reached the queue or the ledger."""
        return self.staged + self.already_known if self.mode == "stage" else self.sent

    @property
    def complete(self) -> bool:
        """Every row read was sent, or was never sendable: no Ctrl-C, no --limit, no pilot's filter or
        sample, no send that failed. What a listing's mark may move on (`load --from`)."""
        return (
            self.mode == "send"
            and not self.interrupted
            and not self.limit_reached
            and not self.filtered
            and not self.sampled_out
            and not self.failed
            and self.not_sent == 0
        )

    @property
    def not_sent(self) -> int:
        """Good rows read but not sent (or staged): failed ones, and those a Ctrl-C left behind."""
        return 0 if self.mode == "dry-run" else self.good - self.handed_on

    @property
    def rate(self) -> float:
        """Rows handed on per second (rows validated per second in a dry run)."""
        done = self.rows_read if self.mode == "dry-run" else self.handed_on
        return done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def _selected(self) -> str:
        matched = self.good + self.sampled_out
        text = f"{self.good:,} rows"
        if self.where:
            text += f" of {matched:,} matching {' and '.join(self.where)} ({self.filtered:,} did not)"
        if self.sample is not None:
            text += f"; a sample of {self.sample:,} (seed {self.seed}: the same rows on every run)"
        return text

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return EXIT_INTERRUPTED
        return 1 if self.bad or self.failed or self.not_sent else 0

    def as_dict(self) -> dict:
        """The summary for `load --json` (the failures are reported one by one before it)."""
        fields = {k: v for k, v in self.__dict__.items() if k != "failed"}
        return {**fields, "failed": len(self.failed), "not_sent": self.not_sent, "rate": round(self.rate, 1)}

    def lines(self) -> list[str]:
        """The closing report, one figure a line."""
        out = [f"rows read       {self.rows_read:,}" + (f" (to line {self.last_line:,})" if self.rows_read else "")]
        out.append(f"bad rows        {self.bad:,}" + (" (listed above with their line numbers)" if self.bad else ""))
        if self.repeats:
            out.append(f"repeated ids    {self.repeats:,} (dropped)")
        if self.skipped:
            out.append(f"skipped         {self.skipped:,} objects that are not videos")
        if self.where or self.sample is not None:
            out.append(f"selected        {self._selected()}")
        if self.left_behind_file:
            out.append(f"left behind     {self.filtered:,} rows, each with why, in {self.left_behind_file}")
        if self.limit_reached:
            out.append(f"limit           stopped after {self.good:,} good rows (--limit {self.limit})")
        took = f"{self.elapsed_s:.1f} s"
        if self.mode == "dry-run":
            out.append(
                f"dry run         {self.good:,} rows would be sent; nothing sent ({took}, {self.rate:,.0f} rows/s)"
            )
        elif self.mode == "stage":
            out.append(
                f"staged          {self.staged:,} new as pending, {self.already_known:,} already known"
                f" ({took}, {self.rate:,.0f} rows/s)"
            )
        else:
            out.append(
                f"sent            {self.sent:,} of {self.good:,} in {took}: {self.rate:,.0f} msg/s"
                f" ({self.calls:,} SendMessageBatch calls, {self.retried:,} entries retried)"
            )
        if self.failed:
            out.append(f"failed          {len(self.failed):,} (listed above with their reasons)")
        if self.interrupted:
            verb = "staged" if self.mode == "stage" else "sent"
            out.append(
                f"interrupted: {self.handed_on:,} {verb}, {self.not_sent:,} not {verb};"
                f" rows after line {self.last_line:,} were not read"
            )
        return out


@dataclass(frozen=True)
class SourceBucket:
    """The one bucket s3:// sources may name: the stack's SourceBucketName.

    The uploader presigns s3:// sources with its own role, whose policy grants
    s3:GetObject on that bucket only; a source elsewhere would load and then fail at
    hand-off. `name` is "" when the stack has none; `declared` is False when the stack
    has no such output at all (deployed from an older template.yaml, it cannot say).
    """

    name: str
    declared: bool = True
    provider: str = ""  # the stack's provider: some cannot fetch a presigned S3 URL at all

    @classmethod
    def of_outputs(cls, outputs: Mapping[str, str]) -> SourceBucket:
        return cls(outputs.get("SourceBucketName", ""), "SourceBucketName" in outputs, outputs.get("Provider", ""))

    def refusal(self, bucket: str) -> str | None:
        """Why s3:// sources in `bucket` cannot be loaded, or None when they can."""
        from migrator.providers import PROVIDERS
        from migrator.providers.base import unfetchable_s3

        provider = PROVIDERS.get(self.provider)
        if provider is not None and not provider.fetches_presigned_get:
            return unfetchable_s3(self.provider)
        if not self.name:
            why = (
                "no source bucket for s3:// sources"
                if self.declared
                else "no SourceBucketName output (deployed from an older template.yaml?)"
            )
            return f"the stack has {why}: set the stack parameter SourceBucketName to {bucket!r} and redeploy"
        if bucket != self.name:
            return (
                f"bucket {bucket!r} is not the stack's source bucket {self.name!r}"
                " (stack parameter SourceBucketName): the uploader can read only that one"
            )
        return None


def in_source_bucket(records: Iterable[Record], allowed: SourceBucket) -> Iterator[Record]:
    """`records`, with each row whose s3:// source lies outside `allowed` turned into a bad row."""
    for record in records:
        if isinstance(record, Row) and urlsplit(record.message.source_url).scheme == "s3":
            # Split as the uploader splits it before presigning, so both see the same bucket.
            bucket, _ = split_s3_url(record.message.source_url)
            problem = allowed.refusal(bucket)
            if problem:
                record = BadRow(record.line, problem, record.message.asset_id)
        yield record


def with_usable_options(records: Iterable[Record], provider: str) -> Iterator[Record]:
    """`records`, with each row whose options for the stack's `provider` the provider would not take
    (an unknown option, a value its check refuses) turned into a bad row naming the option."""
    for record in records:
        if isinstance(record, Row):
            problems = row_problems(provider, record.message.options)
            if problems:
                record = BadRow(record.line, "; ".join(problems[:3]), record.message.asset_id)
        yield record


class _Notes:
    """Prints the first MAX_SHOWN lines of a kind and counts the rest; every one, whole and
    structured, goes to `each` when given (`load --json`: one JSON line per problem)."""

    def __init__(self, write: Callable[[str], None], what: str, each: Callable[[dict], None] | None = None):
        self.write = write
        self.what = what
        self.each = each
        self.shown = 0
        self.hidden = 0

    def add(self, text: str, **fields) -> None:
        if self.each is not None and fields:
            self.each(fields)
        if self.shown < MAX_SHOWN:
            self.write(text)
            self.shown += 1
        else:
            self.hidden += 1

    def finish(self) -> None:
        if self.hidden:
            self.write(f"… and {self.hidden:,} more {self.what} not shown")


def load_inventory(
    source: str,
    *,
    sqs: Any = None,
    queue_url: str | None = None,
    s3: Any = None,
    ledger: Ledger | None = None,
    fmt: str | None = None,
    dry_run: bool = False,
    limit: int | None = None,
    stage: bool = False,
    workers: int = 8,
    out: TextIO = sys.stderr,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.time,
    source_bucket: SourceBucket | None = None,
    on_problem: Callable[[dict], None] | None = None,
    selection: Selection | None = None,
    left_behind: LeftBehindReport | None = None,
) -> LoadSummary:
    """Read, validate and de-duplicate `source`, then send each good row (or stage it, or only count it).

    Problems with the source as a whole raise CliError before anything is sent. Ctrl-C
    (or `stop`) ends the run after the batches in flight: the summary says what was sent.
    With `source_bucket` (the stack's), s3:// sources elsewhere are bad rows, in every mode,
    and a listing of another bucket is refused before it starts, and so are rows whose options
    for the stack's provider it would not take; without it (no stack known) neither is checked.
    The rows the selection's --where does not take go to `left_behind`, each with why.
    """
    mode = "dry-run" if dry_run else "stage" if stage else "send"
    if mode == "send" and (sqs is None or not queue_url):
        raise CliError("load needs the queue (its URL and an SQS client) unless --dry-run or --stage")
    if mode == "stage" and ledger is None:
        raise CliError("load --stage needs the ledger table")
    if limit is not None and limit < 1:
        raise CliError("--limit must be at least 1")
    if workers < 1:
        raise CliError("--workers must be at least 1")
    stop = stop or threading.Event()
    summary = LoadSummary(source=source, mode=mode, limit=limit)
    if selection is not None:
        summary.where, summary.sample, summary.seed = selection.described(), selection.sample, selection.seed
    if left_behind is not None:
        summary.left_behind_file = str(left_behind.path)
    if source_bucket is not None and source.startswith("s3://"):
        problem = source_bucket.refusal(parse_s3_source(source)[0])
        if problem:  # every object listed would be refused: say it once, list nothing
            raise CliError(f"{source}: {problem}")
    meter = Meter()
    records = read_inventory(source, fmt=fmt, s3=s3, meter=meter)  # a bad source fails here, before anything happens
    if source_bucket is not None:
        records = in_source_bucket(records, source_bucket)
        records = with_usable_options(records, source_bucket.provider)

    label = {"send": "sending", "stage": "staging", "dry-run": "validating"}[mode]
    # How far: the bytes of the file read so far (a listing has no known end: a count and a rate).
    progress = Progress(out, total=limit, label=label, measure=meter.fraction if limit is None else None)
    problems = _Notes(progress.write, "bad rows and warnings", on_problem)
    started = clock()
    try:
        with Deduper() as deduper, _ctrl_c_sets(stop):
            good = _good_messages(records, deduper, summary, problems, limit, selection, left_behind)
            if mode == "send":
                _send(good, summary, sqs, queue_url, workers, stop, progress)
            elif mode == "stage" and ledger is not None:  # stage without a ledger is refused above
                _stage(good, summary, ledger, workers, stop, progress, clock)
            else:
                _validate(good, summary, stop, progress)
    except CliError as exc:
        # The source failed part-way (after the header): say what had been done by then.
        if summary.handed_on:
            raise CliError(f"{exc}; stopped after line {summary.last_line:,} with {summary.handed_on:,} done") from None
        raise
    finally:
        summary.elapsed_s = clock() - started
        progress.close()
    problems.finish()
    failures = _Notes(lambda line: print(line, file=out), "failures", on_problem)
    for asset_id, reason in summary.failed:
        failures.add(f"failed: id {asset_id!r}: {reason}", kind="not_sent", id=asset_id, reason=reason)
    failures.finish()
    return summary


def _good_messages(
    records: Iterable,
    deduper: Deduper,
    summary: LoadSummary,
    problems: _Notes,
    limit: int | None,
    selection: Selection | None = None,
    left_behind: LeftBehindReport | None = None,
) -> Iterator[AssetMessage]:
    """The messages to hand on (those a pilot's selection keeps); counts and reports everything else."""
    valid = _valid_messages(records, deduper, summary, problems, selection, left_behind)
    if selection is not None and selection.sample is not None:
        valid = selection.sampled(valid, summary)
    for msg in valid:
        summary.good += 1
        yield msg
        if limit is not None and summary.good >= limit:
            summary.limit_reached = True
            return


def _valid_messages(
    records: Iterable,
    deduper: Deduper,
    summary: LoadSummary,
    problems: _Notes,
    selection: Selection | None,
    left_behind: LeftBehindReport | None = None,
) -> Iterator[AssetMessage]:
    """Valid rows, each id once, that match the selection's --where."""
    for record in records:
        summary.rows_read += 1
        summary.last_line = record.line
        if isinstance(record, Skipped):
            summary.skipped += 1
            continue
        if isinstance(record, BadRow):
            summary.bad += 1
            problems.add(
                f"line {record.line}: {record.reason}",
                kind="bad",
                line=record.line,
                id=record.asset_id,
                reason=record.reason,
            )
            continue
        msg = record.message
        verdict = deduper.check(msg.asset_id, msg.source_url, record.line)
        if verdict != Deduper.NEW:
            first = deduper.first_line(msg.asset_id)
            if verdict == Deduper.REPEAT:
                summary.repeats += 1
                text = f"warning: id {msg.asset_id!r} repeated (dropped; first on line {first})"
            else:  # a conflict: the same id with another source_url
                summary.bad += 1
                text = (
                    f"id {msg.asset_id!r} repeated with a different source_url"
                    f" (line {first} has the id; that row is kept)"
                )
            problems.add(
                f"line {record.line}: {text}", kind=verdict, line=record.line, id=msg.asset_id, first_line=first
            )
            continue
        why = selection.why_not(msg) if selection is not None else None
        if why is not None:
            summary.filtered += 1
            if left_behind is not None:
                left_behind.add(msg, why)
            continue
        yield msg


def _send(good, summary: LoadSummary, sqs, queue_url, workers: int, stop, progress: Progress) -> None:
    def on_progress(sent: int, failed: int) -> None:
        progress.update(sent, f"(read {summary.rows_read:,}, bad {summary.bad:,}, failed {failed:,})")

    result = BatchSender(sqs, queue_url, workers=workers).send(good, stop=stop, on_progress=on_progress)
    summary.sent, summary.failed = result.sent, result.failed
    summary.batches, summary.calls, summary.retried = result.batches, result.calls, result.retried
    if result.fatal:
        raise CliError(result.fatal)
    summary.interrupted = result.stopped


def _stage(good, summary: LoadSummary, ledger: Ledger, workers: int, stop, progress: Progress, clock) -> None:
    fatal: list[str] = []

    def work(msg: AssetMessage) -> bool | Exception:
        try:
            return ledger.stage(msg, clock())
        except (ClientError, BotoCoreError) as exc:  # botocore has retried the transient ones already
            return exc

    def on_done(msg: AssetMessage, result: bool | Exception) -> None:
        if result is True:
            summary.staged += 1
        elif result is False:
            summary.already_known += 1
        else:
            summary.failed.append((msg.asset_id, describe(result)))
            if (is_unreachable(result) or not is_transient(result)) and not fatal:
                fatal.append(describe(result))
                stop.set()  # no table, no access: every other row would fail the same way
        progress.update(
            summary.staged + summary.already_known,
            f"(read {summary.rows_read:,}, bad {summary.bad:,})",
        )

    stopped = run_bounded(good, work, on_done, workers=workers, stop=stop)
    if fatal:
        raise CliError(f"the ledger refused a write or could not be reached: {fatal[0]}")
    summary.interrupted = stopped


def _validate(good, summary: LoadSummary, stop: threading.Event, progress: Progress) -> None:
    try:
        for _ in good:
            progress.update(summary.rows_read, f"(bad {summary.bad:,})")
            if stop.is_set():
                summary.interrupted = True
                return
    except KeyboardInterrupt:
        summary.interrupted = True


@contextlib.contextmanager
def _ctrl_c_sets(stop: threading.Event):
    """The first Ctrl-C sets `stop` (the run ends after the batches in flight); a second one interrupts."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread receives signals
        return
    pressed = threading.Event()

    def on_sigint(signum, frame):
        if pressed.is_set():
            raise KeyboardInterrupt
        pressed.set()
        stop.set()  # nothing is printed here: the interrupted write could be mid-line

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
