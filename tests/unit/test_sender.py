"""The batch sender, the load summary and the progress line, with a fake SQS: retries, stops, exact counts."""

from __future__ import annotations

import io
import threading
import time

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from migrator.messages import ALLOWED_SCHEMES, AssetMessage, parse_message
from migrator_cli.errors import CliError
from migrator_cli.load import LoadSummary, load_inventory
from migrator_cli.progress import Progress
from migrator_cli.sender import BatchSender, is_transient

URL = "https://media.example.com/a.mp4"


def messages(n: int, prefix: str = "id") -> list[AssetMessage]:
    return [AssetMessage(f"{prefix}-{i}", f"{URL}?{i}") for i in range(n)]


def client_error(code: str, status: int) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": f"{code} here"}, "ResponseMetadata": {"HTTPStatusCode": status}},
        "SendMessageBatch",
    )


class FakeSQS:
    """Accepts batches like SQS; `verdict(asset_id, call)` may fail an entry: "retry", "fatal" or None."""

    def __init__(self, verdict=None, call_error=None, delay_s: float = 0.0):
        self.verdict = verdict or (lambda asset_id, call: None)
        self.call_error = call_error or (lambda call: None)
        self.delay_s = delay_s
        self.lock = threading.Lock()
        self.calls: list[list[dict]] = []
        self.received: list[str] = []

    def send_message_batch(self, QueueUrl, Entries):  # boto3's argument names
        with self.lock:
            call = len(self.calls)
            self.calls.append(Entries)
        if self.delay_s:
            time.sleep(self.delay_s)
        error = self.call_error(call)
        if error:
            raise error
        ok, failed = [], []
        for entry in Entries:
            asset_id = parse_message(entry["MessageBody"]).asset_id
            verdict = self.verdict(asset_id, call)
            if verdict == "retry":
                failed.append(
                    {"Id": entry["Id"], "SenderFault": False, "Code": "InternalError", "Message": "try again"}
                )
            elif verdict == "fatal":
                failed.append(
                    {"Id": entry["Id"], "SenderFault": True, "Code": "InvalidMessageContents", "Message": "no"}
                )
            else:
                with self.lock:
                    self.received.append(asset_id)
                ok.append({"Id": entry["Id"], "MessageId": "m", "MD5OfMessageBody": "x"})
        return {"Successful": ok, "Failed": failed}


def sender(sqs, **kwargs) -> tuple[BatchSender, list[float]]:
    sleeps: list[float] = []
    return BatchSender(sqs, "https://queue", sleep=sleeps.append, **kwargs), sleeps


def test_sends_everything_in_batches_of_ten_with_positional_entry_ids():
    sqs = FakeSQS()
    batch_sender, sleeps = sender(sqs, workers=4)
    progress: list[tuple[int, int]] = []
    summary = batch_sender.send(messages(95, prefix="lib/odd id:"), on_progress=lambda s, f: progress.append((s, f)))
    assert summary.sent == 95 and summary.failed == [] and not summary.stopped
    assert summary.batches == summary.calls == 10
    assert sorted(sqs.received) == sorted(m.asset_id for m in messages(95, prefix="lib/odd id:"))
    assert all([e["Id"] for e in call] == [str(i) for i in range(len(call))] for call in sqs.calls)
    assert progress[-1] == (95, 0) and len(progress) == 10
    assert sleeps == []


def test_transient_entry_failures_are_retried_and_sender_faults_reported():
    flaky_seen: set[str] = set()

    def verdict(asset_id, call):
        if asset_id == "id-7":
            return "fatal"
        if asset_id in ("id-3", "id-12") and asset_id not in flaky_seen:
            flaky_seen.add(asset_id)  # fails the first time only
            return "retry"
        return None

    sqs = FakeSQS(verdict)
    batch_sender, sleeps = sender(sqs, workers=1)
    summary = batch_sender.send(messages(20))
    assert summary.sent == 19
    assert summary.failed == [("id-7", "InvalidMessageContents: no")]
    assert sorted(sqs.received) == sorted(f"id-{i}" for i in range(20) if i != 7)
    assert summary.retried == 2 and summary.calls == 4  # each flaky batch: the first call, then one for the flaky entry
    assert [len(call) for call in sqs.calls] == [10, 1, 10, 1]
    assert len(sleeps) == 2 and all(0.1 <= s <= 0.2 for s in sleeps)


def test_throttled_or_failed_calls_are_retried_whole():
    errors = {0: client_error("ThrottlingException", 400), 1: EndpointConnectionError(endpoint_url="http://q")}
    sqs = FakeSQS(call_error=errors.get)
    batch_sender, sleeps = sender(sqs, workers=1)
    summary = batch_sender.send(messages(5))
    assert summary.sent == 5 and summary.failed == [] and summary.calls == 3
    assert sorted(sqs.received) == [f"id-{i}" for i in range(5)]
    assert len(sleeps) == 2 and 0.1 <= sleeps[0] <= 0.2 and 0.2 <= sleeps[1] <= 0.4


def test_entries_that_never_go_through_are_given_up_with_their_reason():
    sqs = FakeSQS(lambda asset_id, call: "retry" if asset_id == "id-1" else None)
    batch_sender, sleeps = sender(sqs, workers=1, max_retries=3)
    summary = batch_sender.send(messages(3))
    assert summary.sent == 2
    assert summary.failed == [("id-1", "InternalError: try again (gave up after 4 tries)")]
    assert len(sleeps) == 3


class Counted:
    """An input that counts how much of it was read."""

    def __init__(self, items):
        self.items, self.pulled = iter(items), 0

    def __iter__(self):
        return self

    def __next__(self):
        item = next(self.items)
        self.pulled += 1
        return item


def test_a_refused_call_stops_the_run():
    sqs = FakeSQS(call_error=lambda call: client_error("AWS.SimpleQueueService.NonExistentQueue", 400))
    batch_sender, _ = sender(sqs, workers=1)
    source = Counted(messages(1000))
    summary = batch_sender.send(source)
    assert summary.fatal == (
        "SQS refused SendMessageBatch: AWS.SimpleQueueService.NonExistentQueue: "
        "AWS.SimpleQueueService.NonExistentQueue here"
    )
    assert summary.sent == 0 and summary.stopped
    assert source.pulled < 100  # the input was not read to the end
    assert len(summary.failed) == 10 * summary.batches


def test_an_endpoint_that_never_answers_stops_the_run_after_a_few_quick_tries():
    sqs = FakeSQS(call_error=lambda call: EndpointConnectionError(endpoint_url="http://127.0.0.1:9"))
    batch_sender, sleeps = sender(sqs, workers=1)
    source = Counted(messages(1000))
    summary = batch_sender.send(source)
    assert summary.fatal is not None and summary.fatal.startswith("cannot reach SQS (")
    assert "http://127.0.0.1:9" in summary.fatal and summary.fatal.endswith("tried 3 times)")
    # Only the batches already taken (two per worker) try; each gives up on its third call.
    assert summary.batches <= 2 and summary.calls == 3 * summary.batches and summary.sent == 0 and summary.stopped
    assert sum(sleeps) <= 0.6 * summary.batches and source.pulled < 100  # seconds, not a retry per batch


def test_the_sender_is_the_only_retry_policy_on_its_calls():
    """botocore's retries are off on the sender's client (its loop retries); other clients keep three tries."""
    import http.server

    from migrator_cli.sender import SENDER_CLIENT_CONFIG
    from migrator_cli.target import make_client

    calls = []

    class Broken(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            calls.append(self.path)
            body = b'{"__type":"InternalError","message":"broken"}'
            self.send_response(500)
            self.send_header("Content-Type", "application/x-amz-json-1.0")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Broken)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        for config, expected in ((SENDER_CLIENT_CONFIG, 1), (None, 3)):
            calls.clear()
            sqs = make_client("sqs", endpoint, "us-east-1", config=config)
            with pytest.raises(ClientError):
                sqs.send_message_batch(QueueUrl=f"{endpoint}/1/q", Entries=[{"Id": "0", "MessageBody": "x"}])
            assert len(calls) == expected, (config, calls)
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("exc", "transient"),
    [
        (client_error("ThrottlingException", 400), True),
        (client_error("Whatever", 503), True),
        (client_error("AccessDenied", 403), False),
        (EndpointConnectionError(endpoint_url="http://q"), True),
    ],
)
def test_transient_errors(exc, transient):
    assert is_transient(exc) is transient


def test_stop_ends_the_run_after_the_batches_in_flight_with_an_exact_count():
    sqs = FakeSQS(delay_s=0.002)
    stop = threading.Event()
    batch_sender, _ = sender(sqs, workers=3)

    def on_progress(sent, failed):
        if sent >= 50:
            stop.set()

    summary = batch_sender.send(messages(5000), stop=stop, on_progress=on_progress)
    assert summary.stopped
    assert 50 <= summary.sent < 5000
    assert summary.sent == len(sqs.received) == 10 * summary.batches


def test_ctrl_c_inside_the_input_stops_cleanly_with_an_exact_count():
    sqs = FakeSQS(delay_s=0.001)
    batch_sender, _ = sender(sqs, workers=2)

    def source():
        yield from messages(234)
        raise KeyboardInterrupt

    summary = batch_sender.send(source())
    assert summary.stopped
    assert summary.sent == len(sqs.received) == 230  # the last four were never a full batch


def test_input_is_read_only_as_fast_as_batches_finish():
    sqs = FakeSQS(delay_s=0.003)
    batch_sender, _ = sender(sqs, workers=2)
    ahead: list[int] = []

    def source():
        for i, msg in enumerate(messages(600)):
            ahead.append(i - len(sqs.received))
            yield msg

    assert batch_sender.send(source()).sent == 600
    assert max(ahead) <= 4 * 10 + 10  # 2 x workers batches in flight, plus the one being filled


def test_backoff_grows_and_stays_within_its_bounds():
    batch_sender = BatchSender(None, "q", base_delay_s=0.2, max_delay_s=5.0)
    for attempt, ceiling in [(1, 0.2), (2, 0.4), (3, 0.8), (6, 5.0), (10, 5.0)]:
        delays = [batch_sender.backoff_s(attempt) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)


# --- load_inventory without AWS ------------------------------------------------------------


def inventory(tmp_path, rows: list[str]) -> str:
    path = tmp_path / "inv.csv"
    path.write_text("id,source_url\n" + "".join(r + "\n" for r in rows))
    return str(path)


def test_dry_run_reads_everything_and_sends_nothing(tmp_path):
    rows = [f"a-{i},{URL}?{i}" for i in range(30)] + ["bad,ftp://x/y", "a-1,https://other.example/x", f"a-2,{URL}?2"]
    out = io.StringIO()
    summary = load_inventory(inventory(tmp_path, rows), dry_run=True, out=out)
    assert (summary.rows_read, summary.good, summary.bad, summary.repeats) == (33, 30, 2, 1)
    assert summary.sent == 0 and summary.exit_code == 1
    printed = out.getvalue().splitlines()
    assert f"line 32: source_url scheme 'ftp' is not one of {', '.join(ALLOWED_SCHEMES)}" in printed
    assert any(line.startswith("line 33: id 'a-1' repeated with a different source_url (line 3") for line in printed)
    assert "line 34: warning: id 'a-2' repeated (dropped; first on line 4)" in printed
    assert any(line.startswith("dry run         30 rows would be sent") for line in summary.lines())


def test_printed_problems_are_capped_but_all_counted(tmp_path):
    out = io.StringIO()
    summary = load_inventory(inventory(tmp_path, [f"x{i},ftp://x/{i}" for i in range(120)]), dry_run=True, out=out)
    printed = out.getvalue().splitlines()
    assert summary.bad == 120
    assert len([line for line in printed if line.startswith("line ")]) == 50
    assert "… and 70 more bad rows and warnings not shown" in printed


def test_limit_stops_reading_after_n_good_rows(tmp_path):
    sqs = FakeSQS()
    rows = ["bad,ftp://x/y"] + [f"a-{i},{URL}?{i}" for i in range(30)]
    summary = load_inventory(inventory(tmp_path, rows), sqs=sqs, queue_url="q", limit=7, out=io.StringIO())
    assert summary.sent == 7 and summary.rows_read == 8 and summary.limit_reached
    assert sorted(sqs.received) == sorted(f"a-{i}" for i in range(7))
    assert summary.exit_code == 1  # the bad row


def test_send_with_a_fake_queue_counts_and_exits_zero(tmp_path):
    sqs = FakeSQS()
    summary = load_inventory(inventory(tmp_path, [f"a-{i},{URL}?{i}" for i in range(25)]), sqs=sqs, queue_url="q")
    assert summary.sent == 25 and summary.calls == 3 and summary.exit_code == 0
    assert any("25 of 25" in line for line in summary.lines())


def test_a_missing_queue_is_one_clear_error(tmp_path):
    sqs = FakeSQS(call_error=lambda call: client_error("QueueDoesNotExist", 400))
    with pytest.raises(CliError, match="SQS refused SendMessageBatch: QueueDoesNotExist"):
        load_inventory(inventory(tmp_path, [f"a-{i},{URL}" for i in range(5)]), sqs=sqs, queue_url="q")


def test_sending_needs_a_queue_and_staging_a_ledger(tmp_path):
    path = inventory(tmp_path, [f"a,{URL}"])
    with pytest.raises(CliError, match="needs the queue"):
        load_inventory(path)
    with pytest.raises(CliError, match="needs the ledger"):
        load_inventory(path, stage=True)
    with pytest.raises(CliError, match="--limit must be at least 1"):
        load_inventory(path, dry_run=True, limit=0)


def test_summary_exit_codes_and_interruption_line():
    clean = LoadSummary("f.csv", "send", rows_read=10, good=10, sent=10, elapsed_s=2.0)
    assert clean.exit_code == 0 and clean.rate == 5.0
    assert LoadSummary("f.csv", "send", rows_read=11, good=10, sent=10, bad=1).exit_code == 1
    assert LoadSummary("f.csv", "send", good=10, sent=9, failed=[("a", "no")]).exit_code == 1
    stopped = LoadSummary("f.csv", "send", rows_read=40, good=40, sent=30, last_line=41, interrupted=True)
    assert stopped.exit_code == 130 and stopped.not_sent == 10
    assert stopped.lines()[-1] == "interrupted: 30 sent, 10 not sent; rows after line 41 were not read"
    staged = LoadSummary("f.csv", "stage", rows_read=10, good=10, staged=6, already_known=4)
    assert staged.exit_code == 0 and staged.not_sent == 0


# --- progress ------------------------------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_on_a_log_is_a_plain_line_every_interval():
    out, clock = io.StringIO(), Clock()
    progress = Progress(out, None, "sending", clock=clock, every_s=10)
    for second in range(1, 26):
        clock.now = second
        progress.update(second * 100)
    progress.write("line 7: bad")
    progress.close()
    assert out.getvalue().splitlines() == [
        "sending 1,000 100/s",
        "sending 2,000 100/s",
        "line 7: bad",
        "sending 2,500 100/s",
    ]
    assert "\r" not in out.getvalue()


def test_progress_on_a_terminal_redraws_in_place_and_keeps_lines_apart():
    out, clock = Terminal(), Clock()
    progress = Progress(out, 200, "sending", clock=clock)
    clock.now = 1
    progress.update(50, "(read 60)")
    progress.write("line 3: bad")
    clock.now = 2
    progress.update(200)
    progress.close()
    text = out.getvalue()
    # a quarter done in 1 s: 3 s to go at that pace
    assert "\r\x1b[Ksending [######..................]  25% 50/200 50/s ETA 0:03 (read 60)" in text
    assert "\r\x1b[Kline 3: bad\n" in text
    assert text.endswith("\r\x1b[Ksending [########################] 100% 200/200 100/s\n")


def test_progress_by_a_fraction_measured_otherwise_shows_its_percentage_and_time_left():
    """A file load's progress is its bytes read; the count shown is still rows."""
    out, clock = io.StringIO(), Clock()
    progress = Progress(out, None, "sending", clock=clock, every_s=10)
    clock.now = 20
    progress.update(4_000, "(read 4,100)", fraction=0.4)
    assert out.getvalue() == "sending [#########...............]  40% 4,000 200/s ETA 0:30 (read 4,100)\n"


def test_time_left_reads_naturally():
    from migrator_cli.progress import clock_time

    assert [clock_time(s) for s in (5, 75, 3_725)] == ["0:05", "1:15", "1:02:05"]
