"""The operator's levers against the emulator: retry over a whole state, redrive."""

from __future__ import annotations

import time

import pytest
from migrator.ledger import Claimed, Ledger
from migrator.messages import AssetMessage, parse_message
from migrator.states import State
from migrator_cli.ops import redrive, retry

from tests.conftest import unique

pytestmark = pytest.mark.emulator


def failed_for_good(ledger: Ledger, asset_id: str) -> None:
    now = time.time()
    claim = ledger.claim(AssetMessage(asset_id, f"https://media.example.com/{asset_id}.mp4"), now, now + 60, "t")
    assert isinstance(claim, Claimed)
    assert ledger.mark_failed(asset_id, "t", "HTTP 500", None, now).won


def test_retry_of_a_whole_state_enqueues_each_asset_once(aws, table):
    ledger = Ledger(table, aws("dynamodb"))
    ids = [unique("f") for _ in range(40)]
    for asset_id in ids:
        failed_for_good(ledger, asset_id)
    sent: list[str] = []

    def send(messages):
        for message in messages:
            # A re-armed item moves to the end of its shard: the walk must not meet it again.
            assert message.asset_id not in sent, f"{message.asset_id} enqueued twice"
            sent.append(message.asset_id)
        return len(sent), []

    summary = retry(ledger, State.FAILED, None, send, page_size=2)  # pages end mid-shard

    assert sorted(sent) == sorted(ids) and summary.rearmed == len(ids)
    for asset_id in ids:
        item = ledger.get(asset_id)
        assert item["state"] == "failed" and item["retry_after"] <= time.time() and item["retry_base"] == 1


def test_retry_skips_what_moved_and_a_dry_run_changes_nothing(aws, table):
    ledger = Ledger(table, aws("dynamodb"))
    moved, kept = unique("moved"), unique("kept")
    failed_for_good(ledger, moved)
    failed_for_good(ledger, kept)
    ledger.rearm(moved, State.FAILED, time.time())
    ledger.claim(AssetMessage(moved, "https://media.example.com/x.mp4"), time.time(), time.time() + 60, "t2")

    dry = retry(ledger, State.FAILED, [moved, kept], lambda messages: (len(list(messages)), []), dry_run=True)
    assert dry.listed == 2 and dry.moved_on == [(moved, "uploading")] and dry.rearmed == 0
    assert "retry_base" not in ledger.get(kept)


def test_redrive_moves_every_dead_letter_once(aws, queue):
    sqs = aws("sqs")
    dlq = sqs.create_queue(QueueName=unique("dlq"))["QueueUrl"]
    bodies = [f'{{"id": "{unique("d")}", "source_url": "https://media.example.com/a.mp4"}}' for _ in range(23)]
    for body in bodies:
        sqs.send_message(QueueUrl=dlq, MessageBody=body)

    result = redrive(sqs, dlq, queue)

    assert (result.moved, result.failed) == (23, 0)
    assert result.method == "copy then delete"  # the emulator has no StartMessageMoveTask
    received = []
    while True:
        messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
        if not messages:
            break
        for m in messages:
            received.append(parse_message(m["Body"]).asset_id)
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])
    assert sorted(received) == sorted(parse_message(b).asset_id for b in bodies)
    attrs = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]
    assert attrs["ApproximateNumberOfMessages"] == "0"


class _DroppingLambda:
    """A Lambda endpoint on loopback that takes every Invoke and drops the connection unanswered,
    the way a read timeout or a broken connection ends a long synchronous invoke."""

    def __init__(self):
        import socket
        import threading

        self.invokes = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                if b"/invocations" in data:
                    self.invokes += 1

    def close(self):
        self.sock.close()


def test_reconcile_is_invoked_once_never_retried_by_the_sdk():
    from migrator_cli.errors import CliError
    from migrator_cli.ops import invoke_once_config, run_reconcile
    from migrator_cli.target import Target

    endpoint = _DroppingLambda()
    try:
        target = Target({}, "t", endpoint=endpoint.url, region="us-east-1")
        with pytest.raises(CliError):  # the SDK's defaults: the same invoke, sent again and again
            run_reconcile(target.client("lambda"), "reconcile", {})
        assert endpoint.invokes > 1
        endpoint.invokes = 0
        with pytest.raises(CliError, match="may still be going"):
            run_reconcile(target.client("lambda", invoke_once_config(300)), "reconcile", {})
        assert endpoint.invokes == 1
    finally:
        endpoint.close()


def test_the_invoke_waits_past_the_functions_own_timeout():
    from migrator_cli.ops import invoke_once_config

    config = invoke_once_config(300)
    assert config.read_timeout > 300 and config.retries == {"total_max_attempts": 1}


class _MoveTasks:
    """An SQS endpoint with message move tasks, as AWS has (the emulator has not)."""

    def __init__(self, polls_before_done=2):
        self.started, self.polls = [], polls_before_done

    def get_queue_attributes(self, QueueUrl, AttributeNames):
        return {"Attributes": {"QueueArn": f"arn:aws:sqs:us-east-1:123456789012:{QueueUrl.rsplit('/', 1)[1]}"}}

    def start_message_move_task(self, **request):
        self.started.append(request)
        return {"TaskHandle": "handle-1"}

    def list_message_move_tasks(self, SourceArn, MaxResults):
        self.polls -= 1
        status = "COMPLETED" if self.polls <= 0 else "RUNNING"
        task = {
            "TaskHandle": "handle-1",
            "Status": status,
            "ApproximateNumberOfMessagesMoved": 7 if status == "COMPLETED" else 3,
        }
        return {"Results": [task | {"ApproximateNumberOfMessagesToMove": 7}]}


def test_redrive_on_aws_uses_sqs_own_move_task_and_says_so():
    sqs = _MoveTasks()
    progress = []
    result = redrive(
        sqs, "https://sqs/q/dlq", "https://sqs/q/main", on_progress=lambda *a: progress.append(a), sleep=lambda s: None
    )
    assert (result.moved, result.failed, result.method) == (7, 0, "StartMessageMoveTask")
    assert sqs.started == [
        {
            "SourceArn": "arn:aws:sqs:us-east-1:123456789012:dlq",
            "DestinationArn": "arn:aws:sqs:us-east-1:123456789012:main",
        }
    ]
    assert progress[-1] == (7, 7)
