"""`migrator load` against SQS, S3 and DynamoDB in the emulator: what arrives, exactly once, and what is reported."""

from __future__ import annotations

import io
import json
import signal
import threading

import pytest
from migrator.ledger import Ledger
from migrator.messages import ALLOWED_SCHEMES, AssetMessage, parse_message
from migrator.row_extras import Collection
from migrator_cli.errors import CliError
from migrator_cli.inventory import s3_asset_id
from migrator_cli.load import SourceBucket, load_inventory

from tests.conftest import unique
from tests.emulator.conftest import create_ledger_table

pytestmark = pytest.mark.emulator

URL = "https://media.example.com/v"


def drain(sqs, queue_url: str) -> list[AssetMessage]:
    """Every message in the queue, parsed (and deleted), until it is empty twice in a row."""
    found: list[AssetMessage] = []
    empty = 0
    while empty < 2:
        resp = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0)
        batch = resp.get("Messages", [])
        if not batch:
            empty += 1
            continue
        empty = 0
        for raw in batch:
            parsed = parse_message(raw["Body"])
            assert isinstance(parsed, AssetMessage), parsed
            found.append(parsed)
        sqs.delete_message_batch(
            QueueUrl=queue_url,
            Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(batch)],
        )
    return found


def queue_depth(sqs, queue_url: str) -> int:
    attrs = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attrs["Attributes"]["ApproximateNumberOfMessages"])


def write_csv(tmp_path, rows: list[str], header: str = "id,source_url,title,duration_s,metadata") -> str:
    path = tmp_path / "inventory.csv"
    path.write_text(header + "\n" + "".join(r + "\n" for r in rows))
    return str(path)


def good_rows(n: int, prefix: str = "lib") -> list[str]:
    return [f"{prefix}/{i:04d},{URL}/{i}.mp4,Clip {i},{i}.5," for i in range(n)]


def test_good_rows_arrive_exactly_once_and_bad_ones_are_reported_by_line(aws, queue, tmp_path):
    sqs = aws("sqs")
    rows = good_rows(37)
    rows.insert(5, "lib/bad-scheme,ftp://x/a.mp4,,,")  # line 7
    rows.insert(10, f"lib/0002,{URL}/2.mp4,Clip 2,2.5,")  # line 12: a repeat, dropped
    rows.insert(15, f"lib/0003,{URL}/elsewhere.mp4,,,")  # line 17: same id, another URL
    rows.insert(20, f'lib/meta,{URL}/m.mp4,,,"{{""season"": 2}}"')  # line 22: good, with metadata
    rows.insert(25, f"lib/dur,{URL}/d.mp4,,long,")  # line 27
    out = io.StringIO()
    summary = load_inventory(write_csv(tmp_path, rows), sqs=sqs, queue_url=queue, workers=4, out=out)

    assert (summary.rows_read, summary.good, summary.bad, summary.repeats) == (42, 38, 3, 1)
    assert summary.sent == 38 and summary.failed == [] and summary.exit_code == 1
    arrived = drain(sqs, queue)
    assert sorted(m.asset_id for m in arrived) == sorted([f"lib/{i:04d}" for i in range(37)] + ["lib/meta"])
    by_id = {m.asset_id: m for m in arrived}
    assert by_id["lib/0003"].source_url == f"{URL}/3.mp4"  # the first row of the id wins
    assert by_id["lib/0010"] == AssetMessage("lib/0010", f"{URL}/10.mp4", "Clip 10", 10.5)
    assert by_id["lib/meta"].metadata == {"season": 2}
    printed = out.getvalue().splitlines()
    assert f"line 7: source_url scheme 'ftp' is not one of {', '.join(ALLOWED_SCHEMES)}" in printed
    assert "line 12: warning: id 'lib/0002' repeated (dropped; first on line 4)" in printed
    assert any(line.startswith("line 17: id 'lib/0003' repeated with a different source_url") for line in printed)
    assert "line 27: duration_s 'long' is not a number" in printed
    assert any(line.startswith("sent            38 of 38 in ") and "msg/s" in line for line in summary.lines())


def test_rerunning_a_file_sends_it_again_for_the_ledger_to_dedupe(aws, queue, tmp_path):
    # The loader keeps no memory across runs; the ledger's claim makes a second copy a no-op.
    sqs = aws("sqs")
    path = write_csv(tmp_path, good_rows(12))
    assert load_inventory(path, sqs=sqs, queue_url=queue, out=io.StringIO()).sent == 12
    assert load_inventory(path, sqs=sqs, queue_url=queue, out=io.StringIO()).sent == 12
    ids = [m.asset_id for m in drain(sqs, queue)]
    assert len(ids) == 24 and len(set(ids)) == 12


def test_dry_run_sends_nothing(aws, queue, tmp_path):
    sqs = aws("sqs")
    summary = load_inventory(
        write_csv(tmp_path, [*good_rows(20), "x,ftp://x/y,,,"]),
        sqs=sqs,
        queue_url=queue,
        dry_run=True,
        out=io.StringIO(),
    )
    assert summary.good == 20 and summary.bad == 1 and summary.sent == 0
    assert queue_depth(sqs, queue) == 0
    assert drain(sqs, queue) == []


def test_limit_sends_the_first_n_good_rows(aws, queue, tmp_path):
    sqs = aws("sqs")
    summary = load_inventory(write_csv(tmp_path, good_rows(50)), sqs=sqs, queue_url=queue, limit=13, out=io.StringIO())
    assert summary.sent == 13 and summary.rows_read == 13 and summary.limit_reached
    assert sorted(m.asset_id for m in drain(sqs, queue)) == [f"lib/{i:04d}" for i in range(13)]


def test_s3_listing_sends_s3_sources_with_stable_ids(aws, queue):
    sqs, s3 = aws("sqs"), aws("s3")
    bucket = unique("media")
    s3.create_bucket(Bucket=bucket)
    keys = ["library/intro.mp4", "library/2019/Finale.MOV", "library/poster.jpg", "library/", "elsewhere/x.mp4"]
    for key in keys:
        s3.put_object(Bucket=bucket, Key=key, Body=b"not really a video")

    summary = load_inventory(
        f"s3://{bucket}/library/",
        sqs=sqs,
        queue_url=queue,
        s3=s3,
        out=io.StringIO(),
        source_bucket=SourceBucket(bucket),
    )
    assert (summary.rows_read, summary.good, summary.skipped, summary.sent) == (4, 2, 2, 2)
    assert summary.exit_code == 0
    arrived = {m.asset_id: m for m in drain(sqs, queue)}
    # A folder below the listed prefix is the video's collection (sources/sidecars.py); the prefix itself is none.
    folders = {
        "library/intro.mp4": (),
        "library/2019/Finale.MOV": (Collection(f"{bucket}/library/2019", "2019", "folder"),),
    }
    assert arrived == {
        s3_asset_id(bucket, key): AssetMessage(
            s3_asset_id(bucket, key),
            f"s3://{bucket}/{key}",
            key.rsplit("/", 1)[-1],
            metadata={"s3_bucket": bucket, "s3_key": key},
            collections=collections,
        )
        for key, collections in folders.items()
    }
    again = load_inventory(f"s3://{bucket}/library/", sqs=sqs, queue_url=queue, s3=s3, out=io.StringIO())
    assert again.sent == 2
    assert {m.asset_id for m in drain(sqs, queue)} == set(arrived)  # the same ids the second time


def test_s3_listing_of_a_missing_bucket_is_a_clear_error(aws, queue):
    with pytest.raises(CliError, match=r"cannot list s3://no-such-bucket-\w+/: NoSuchBucket"):
        load_inventory(f"s3://{unique('no-such-bucket')}/", sqs=aws("sqs"), queue_url=queue, s3=aws("s3"))


def test_s3_sources_outside_the_stacks_source_bucket_are_never_sent(aws, queue, tmp_path):
    # The uploader may read the stack's SourceBucketName only: elsewhere it would fail at hand-off.
    sqs, s3 = aws("sqs"), aws("s3")
    ours, theirs = unique("media"), unique("elsewhere")
    for bucket in (ours, theirs):
        s3.create_bucket(Bucket=bucket)
        s3.put_object(Bucket=bucket, Key="show/ep1.mp4", Body=b"not really a video")
    rows = [f"lib/ours,s3://{ours}/show/ep1.mp4,,,", f"lib/theirs,s3://{theirs}/show/ep1.mp4,,,", *good_rows(3)]
    out = io.StringIO()
    allowed = SourceBucket(ours)
    summary = load_inventory(write_csv(tmp_path, rows), sqs=sqs, queue_url=queue, out=out, source_bucket=allowed)

    assert (summary.good, summary.bad, summary.sent) == (4, 1, 4)
    assert f"line 3: bucket {theirs!r} is not the stack's source bucket {ours!r}" in out.getvalue()
    assert sorted(m.asset_id for m in drain(sqs, queue)) == ["lib/0000", "lib/0001", "lib/0002", "lib/ours"]

    with pytest.raises(CliError, match=f"^s3://{theirs}/show/: bucket {theirs!r} is not the stack's source bucket"):
        load_inventory(f"s3://{theirs}/show/", sqs=sqs, queue_url=queue, s3=s3, source_bucket=allowed)
    assert queue_depth(sqs, queue) == 0


def test_stage_creates_pending_items_once(aws, tmp_path):
    dynamodb = aws("dynamodb")
    ledger = Ledger(create_ledger_table(dynamodb), dynamodb)
    path = write_csv(tmp_path, [*good_rows(15), "bad,ftp://x/y,,,"])
    first = load_inventory(path, ledger=ledger, stage=True, workers=4, out=io.StringIO(), clock=lambda: 1_000.0)
    assert (first.staged, first.already_known, first.bad, first.sent) == (15, 0, 1, 0)
    item = ledger.get("lib/0007")
    assert item["state"] == "pending" and item["source_url"] == f"{URL}/7.mp4"
    assert item["title"] == "Clip 7" and float(item["duration_s"]) == 7.5 and float(item["created_at"]) == 1_000.0

    again = load_inventory(path, ledger=ledger, stage=True, out=io.StringIO(), clock=lambda: 2_000.0)
    assert (again.staged, again.already_known) == (0, 15)
    assert float(ledger.get("lib/0007")["created_at"]) == 1_000.0
    assert any("staged          0 new as pending, 15 already known" in line for line in again.lines())


class FlakySQS:
    """The real client, except that some entries fail: `flaky` ids once (SenderFault false), `poison` ids always."""

    def __init__(self, sqs, flaky: set[str], poison: set[str], on_call=None):
        self.sqs = sqs
        self.flaky_left = set(flaky)
        self.poison = poison
        self.on_call = on_call
        self.lock = threading.Lock()
        self.calls = 0

    def send_message_batch(self, QueueUrl, Entries):
        with self.lock:
            self.calls += 1
            call = self.calls
        if self.on_call:
            self.on_call(call)
        passing, failed = [], []
        for entry in Entries:
            asset_id = json.loads(entry["MessageBody"])["id"]
            with self.lock:
                flaky = asset_id in self.flaky_left
                self.flaky_left.discard(asset_id)
            if asset_id in self.poison:
                failed.append(
                    {"Id": entry["Id"], "SenderFault": True, "Code": "InvalidParameterValue", "Message": "nope"}
                )
            elif flaky:
                failed.append({"Id": entry["Id"], "SenderFault": False, "Code": "InternalError", "Message": "blip"})
            else:
                passing.append(entry)
        resp = self.sqs.send_message_batch(QueueUrl=QueueUrl, Entries=passing) if passing else {}
        return {"Successful": resp.get("Successful", []), "Failed": resp.get("Failed", []) + failed}


def test_failed_entries_are_retried_and_permanent_failures_reported(aws, queue, tmp_path):
    sqs = aws("sqs")
    flaky = {"lib/0001", "lib/0012", "lib/0013", "lib/0029"}
    client = FlakySQS(sqs, flaky=flaky, poison={"lib/0020"})
    out = io.StringIO()
    summary = load_inventory(write_csv(tmp_path, good_rows(30)), sqs=client, queue_url=queue, workers=3, out=out)

    assert summary.sent == 29 and summary.retried == 4
    assert summary.failed == [("lib/0020", "InvalidParameterValue: nope")]
    assert summary.exit_code == 1
    assert "failed: id 'lib/0020': InvalidParameterValue: nope" in out.getvalue().splitlines()
    ids = [m.asset_id for m in drain(sqs, queue)]
    assert sorted(ids) == [f"lib/{i:04d}" for i in range(30) if i != 20]  # each once, the retried ones included


def test_ctrl_c_stops_after_the_batches_in_flight_and_says_what_was_sent(aws, queue, tmp_path):
    sqs = aws("sqs")

    def press_ctrl_c(call: int) -> None:
        if call == 5:  # from a worker thread, as a terminal would: the signal goes to the main thread
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    client = FlakySQS(sqs, flaky=set(), poison=set(), on_call=press_ctrl_c)
    previous = signal.getsignal(signal.SIGINT)
    summary = load_inventory(
        write_csv(tmp_path, good_rows(3000)), sqs=client, queue_url=queue, workers=2, out=io.StringIO()
    )

    assert signal.getsignal(signal.SIGINT) is previous  # the handler is put back
    assert summary.interrupted and summary.exit_code == 130
    assert 40 <= summary.sent < 3000
    assert summary.rows_read < 3000  # the rest of the file was not read
    arrived = drain(sqs, queue)
    assert len(arrived) == len({m.asset_id for m in arrived}) == summary.sent
    assert summary.lines()[-1] == (
        f"interrupted: {summary.sent:,} sent, {summary.not_sent:,} not sent;"
        f" rows after line {summary.last_line:,} were not read"
    )


def test_a_failed_load_from_a_platform_leaves_the_mark_so_the_next_since_last_loses_nothing(aws, tmp_path, capsys):
    """Review 4, item 1: the sweep's mark was recorded before the load ran, so a load that failed (here
    every send refused: the queue is gone) made the next `--since last` start after the batch it lost."""
    from migrator_cli.main import main
    from migrator_cli.sweep import read_mark

    from infra.provider_sim import ProviderSim, SimConfig

    sim = ProviderSim(SimConfig(port=0, profile="vimeo", token="t", library_size=12, rate=0, read_rate=0)).start()
    sqs = aws("sqs")
    good = sqs.create_queue(QueueName=unique("intake"))["QueueUrl"]
    gone = good.rsplit("/", 1)[0] + "/" + unique("no-such-queue")
    endpoint = sqs.meta.endpoint_url
    (tmp_path / "creds.json").write_text(json.dumps({"vimeo": {"token": "t"}}))
    marks = tmp_path / "marks.json"

    def load(queue_url: str, *extra: str) -> int:
        outputs = tmp_path / "outputs.json"
        outputs.write_text(json.dumps({"QueueUrl": queue_url, "LedgerTableName": "unused"}))
        argv = ["load", "--from", "vimeo", "--source-url", sim.url, "--credentials", str(tmp_path / "creds.json")]
        argv += ["--inventory", str(tmp_path / "vimeo.jsonl"), "--mark-file", str(marks), "--restart", *extra]
        code = main([*argv, "--outputs", str(outputs), "--endpoint", endpoint])
        capsys.readouterr()
        return code

    try:
        assert load(gone) != 0
        assert not marks.exists()  # nothing recorded: the next sweep lists the whole library again
        assert load(good) == 0
        loaded = drain(sqs, good)
        first_mark = read_mark(marks, "vimeo")
        rows = (tmp_path / "vimeo.jsonl").read_text().splitlines()
        assert len(rows) > 0 and sorted(m.asset_id for m in loaded) == sorted(json.loads(r)["id"] for r in rows)
        assert load(gone, "--since", "last") != 0
        assert read_mark(marks, "vimeo") == first_mark  # a failed delta moves nothing either
    finally:
        sim.stop()
