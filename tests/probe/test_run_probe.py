"""run_probe's orchestration with real ffprobe and an in-memory ledger: streaming, bounds, stop, fates.

The emulator test (tests/emulator/test_probe.py) runs the same pass against DynamoDB's
conditional writes; here the ledger is a dict, so the pass's own bookkeeping is what is tested.
"""

from __future__ import annotations

import itertools
import shutil
import stat
import threading

import pytest
from migrator.ledger import WriteResult
from migrator_cli.errors import CliError
from migrator_cli.probe import ProbeCounts, run_probe

from tests.probe.media import VIDEO_S


class FakeLedger:
    """The three calls run_probe makes, with _from_pending's condition: pending and unleased."""

    def __init__(self, items=()):
        self.items = {item["asset_id"]: dict(item) for item in items}
        self.writes: list[tuple] = []
        self.gets: list[str] = []
        self.lock = threading.Lock()

    def get(self, asset_id):
        with self.lock:
            self.gets.append(asset_id)
            item = self.items.get(asset_id)
            return dict(item) if item else None

    def _move(self, asset_id, state, now, **fields):
        with self.lock:
            item = self.items.get(asset_id)
            if not item or item["state"] != "pending" or "lease_token" in item:
                return WriteResult(False, dict(item) if item else None)
            item.update(state=state, updated_at=now, **fields)
            self.writes.append((asset_id, state, fields))
            return WriteResult(True)

    def mark_inventoried(self, asset_id, duration_s, now):
        return self._move(asset_id, "inventoried", now, duration_s=duration_s)

    def reject_unprobed(self, asset_id, reason, now):
        return self._move(asset_id, "rejected", now, last_error=reason)


def pending(asset_id, url):
    return {"asset_id": asset_id, "state": "pending", "source_url": url}


@pytest.fixture
def ffprobe_log(tmp_path):
    """An ffprobe that writes each URL it is given to a log, then runs the real one."""
    real = shutil.which("ffprobe")
    log = tmp_path / "urls.log"
    wrapper = tmp_path / "ffprobe"
    wrapper.write_text(f'#!/bin/sh\nfor last; do :; done\nprintf "%s\\n" "$last" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper), log


def test_every_fate_once(server, ffprobe_log, caplog):
    """Every fate a probe run can give an asset, in one run: they share one pool, one summary and one progress
    count, which are asserted whole, so the table stays in one test rather than eleven."""
    ffprobe, log = ffprobe_log
    items = [
        pending("video", server.url("video.mp4")),
        pending("audio", server.url("audio.m4a")),
        pending("truncated", server.url("truncated.mp4")),
        pending("s3-video", "s3://bucket/video.mp4"),
        pending("s3-missing", "s3://bucket/missing.mp4"),
        pending("file", "file:///etc/passwd"),
        pending("s3-to-file", "s3://bucket/etc/passwd"),
        pending("concat", "concat:http://a/1.mp4|http://a/2.mp4"),
        pending("claimed", server.url("video.mp4")),
        pending("presign-fails", "s3://broken/x.mp4"),
        pending("refused", "http://127.0.0.1:1/video.mp4"),
    ]
    ledger = FakeLedger(items)
    # Claimed by the uploader after the candidates were listed: the listing is stale.
    ledger.items["claimed"].update(state="uploading", lease_token="tok")
    # The index does not project source_url: two candidates come without it.
    candidates = [
        {k: v for k, v in item.items() if k != "source_url"} if i < 2 else item for i, item in enumerate(items)
    ]

    def presign(url):
        bucket, _, key = url[len("s3://") :].partition("/")
        if bucket == "broken":
            raise RuntimeError("no credentials for s3://broken/x.mp4")
        if key == "etc/passwd":
            return "file:///etc/passwd"
        return server.url(key) + "?X-Amz-Credential=AKIAEXAMPLE&X-Amz-Signature=s3cr3t"

    seen: list[ProbeCounts] = []
    summary = run_probe(
        candidates,
        ledger=ledger,
        presign=presign,
        concurrency=4,
        timeout_s=20,
        ffprobe=ffprobe,
        clock=lambda: 1000.0,
        progress=seen.append,
        allow_private=True,
    )

    states = {asset_id: item["state"] for asset_id, item in ledger.items.items()}
    # On a mismatch, say why each item ended where it did (a rejection's or a skip's reason).
    why = {a: i.get("last_error") for a, i in ledger.items.items()} | {"summary": summary}
    assert states == {
        "video": "inventoried",
        "s3-video": "inventoried",
        "audio": "rejected",
        "truncated": "rejected",
        "s3-missing": "rejected",
        "file": "pending",
        "s3-to-file": "pending",
        "concat": "pending",
        "claimed": "uploading",  # the probe's conditional write lost to the claim
        "presign-fails": "pending",
        "refused": "pending",  # the path failed, not the source: left for the next run
    }, why
    assert float(ledger.items["video"]["duration_s"]) == pytest.approx(VIDEO_S, abs=0.2)
    assert ledger.items["audio"]["last_error"] == "probe: no video stream (found: audio)"
    assert ledger.items["s3-missing"]["last_error"].endswith("Server returned 404 Not Found")
    assert ledger.items["video"]["updated_at"] == 1000.0
    assert sorted(ledger.gets) == ["audio", "video"]

    assert (summary.inventoried, summary.rejected, summary.skipped, summary.errors) == (2, 3, 5, 1)
    assert summary.skipped_reasons == {
        "scheme 'file' is never probed (only http, https)": 2,
        "scheme 'concat' is never probed (only http, https)": 1,
        "moved on (now uploading)": 1,
        # The guard made the connection, so the words are its own.
        "left pending: probe: could not connect to 127.0.0.1:1: Connection refused": 1,
    }
    assert sum(summary.rejected_reasons.values()) == 3
    assert not summary.dry_run and not summary.stopped and summary.elapsed_s > 0

    assert [c.done for c in seen] == list(range(1, len(items) + 1))
    assert seen[-1] == ProbeCounts(done=11, inventoried=2, rejected=3, skipped=5, errors=1)

    probed = log.read_text().split()
    assert probed and all(url.startswith("http://127.0.0.1:") for url in probed)
    assert len(probed) == 7  # video, audio, truncated, 2 presigned, claimed, refused
    everything = caplog.text + repr(summary) + repr(ledger.items)
    assert "s3cr3t" not in everything and "AKIAEXAMPLE" not in everything


def test_dry_run_probes_and_writes_nothing(server):
    items = [pending("video", server.url("video.mp4")), pending("audio", server.url("audio.m4a"))]
    ledger = FakeLedger(items)
    summary = run_probe(items, ledger=ledger, presign=str, timeout_s=20, dry_run=True, allow_private=True)
    assert ledger.writes == []
    assert all(item["state"] == "pending" for item in ledger.items.values())
    assert (summary.inventoried, summary.rejected, summary.dry_run) == (1, 1, True)
    assert summary.rejected_reasons == {"probe: no video stream (found: audio)": 1}


def test_candidates_are_streamed_a_bounded_window_ahead(server):
    concurrency, total = 3, 60
    finished = 0
    ahead: list[int] = []

    def candidates():
        for i in range(total):
            ahead.append(i + 1 - finished)  # pulled (with this one) minus finished
            yield pending(f"a{i}", server.url("video.mp4"))

    def progress(counts):
        nonlocal finished
        finished = counts.done

    ledger = FakeLedger(pending(f"a{i}", server.url("video.mp4")) for i in range(total))
    summary = run_probe(
        candidates(),
        ledger=ledger,
        presign=str,
        concurrency=concurrency,
        timeout_s=20,
        progress=progress,
        allow_private=True,
    )
    assert summary.inventoried == total
    assert max(ahead) <= 2 * concurrency
    assert max(ahead) > concurrency  # the window is used, not one at a time


def test_stop_ends_an_endless_stream_and_lets_running_probes_finish(server):
    stop = threading.Event()
    pulled: list[str] = []

    def endless():
        for i in itertools.count():
            pulled.append(f"a{i}")
            yield pending(f"a{i}", server.url("video.mp4"))

    class Ledger(FakeLedger):
        def _move(self, asset_id, state, now, **fields):
            self.items.setdefault(asset_id, pending(asset_id, "unused"))
            return super()._move(asset_id, state, now, **fields)

    def progress(counts):
        if counts.done >= 5:
            stop.set()

    ledger = Ledger()
    summary = run_probe(
        endless(),
        ledger=ledger,
        presign=str,
        concurrency=2,
        timeout_s=20,
        progress=progress,
        stop=stop,
        allow_private=True,
    )
    assert summary.stopped
    assert summary.inventoried == len(ledger.writes) >= 5
    # Nothing new after the stop; what was queued but not started stays untouched.
    assert len(pulled) <= summary.inventoried + 2 * 2
    assert summary.errors == 0


def test_ffprobe_missing_is_a_cli_error_before_anything_is_read():
    def candidates():
        raise AssertionError("read before the ffprobe check")
        yield

    with pytest.raises(CliError, match=r"^ffprobe not found: install Debian's ffmpeg \(apt-get install ffmpeg\)$"):
        run_probe(candidates(), ledger=FakeLedger(), presign=str, ffprobe="no-such-ffprobe-here")


def test_a_bad_concurrency_is_refused():
    with pytest.raises(CliError):
        run_probe([], ledger=FakeLedger(), presign=str, concurrency=0)


def test_the_check_also_finds_ffprobe_by_absolute_path(server):
    ledger = FakeLedger([pending("video", server.url("video.mp4"))])
    summary = run_probe(
        list(ledger.items.values()), ledger=ledger, presign=str, ffprobe=shutil.which("ffprobe"), allow_private=True
    )
    assert summary.inventoried == 1
