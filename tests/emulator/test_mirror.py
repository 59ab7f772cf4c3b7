"""The mirror (migrator.mirror) against the real ledger and queue (emulator) and a Vimeo source simulator: the
checkpoint item's lease, a sweep resumed across invocations, a delta that lists only what was added, a spent
budget that ends an invocation, and a video deleted at the source reported on its ledger item, never acted on."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import boto3
import pytest
import requests
from migrator.hours import write_override
from migrator.ledger import Ledger
from migrator.messages import AssetMessage, parse_message
from migrator.mirror.checkpoint import LeaseLost, Store, status_of
from migrator.mirror.decide import PAGE_RESERVE_S
from migrator.mirror.gone import gone_items
from migrator.mirror.handler import build_mirror
from migrator.mirror.run import Mirror
from migrator.sources import build
from migrator.sweeping import SweepState
from migrator_cli.commands.mirror import mirror_words
from migrator_cli.main import main

from infra.provider_sim import ProviderSim, SimConfig
from tests.conftest import unique

pytestmark = pytest.mark.emulator

TOKEN = "vimeo-pat"
LIBRARY = 230  # three of Vimeo's pages of 100


@pytest.fixture
def vimeo():
    sim = ProviderSim(
        SimConfig(profile="vimeo", port=0, token=TOKEN, library_size=LIBRARY, rate=0, read_rate=0, budget_quota=0)
    ).start()
    yield sim
    sim.stop()


def drain(sqs, queue: str) -> list[str]:
    """The asset ids of every message in the queue (received and deleted)."""
    return [parse_message(body).asset_id or "" for body in _bodies(sqs, queue)]


def mirror(aws, table, queue, sim, clock=None, **options) -> Mirror:
    creds = {"token": TOKEN}
    return Mirror(
        platform="vimeo",
        store=Store(aws("dynamodb"), table, "vimeo"),
        source=lambda: build("vimeo", lambda: creds, sim.url),
        sqs=aws("sqs"),
        queue_url=queue,
        closed_until=lambda now: None,
        **({"clock": clock} if clock else {}),
        **options,
    )


def pages_of_time(pages: int):
    """An invocation's time left that allows `pages` requests, then is too short for another."""
    asked = {"n": 0}

    def left() -> float:
        asked["n"] += 1
        return 600.0 if asked["n"] <= pages + 2 else PAGE_RESERVE_S  # the first two: the action and the lease

    return left


def test_one_invocation_holds_the_lease_and_a_lapsed_lease_is_taken_again(aws, table):
    store = Store(aws("dynamodb"), table, "vimeo")
    assert store.acquire("first", 1000.0, 1300.0) is not None
    assert store.acquire("second", 1100.0, 1400.0) is None  # overlapping: held
    state = SweepState("vimeo", cursor="100")
    store.save_sweep("first", state, False, 0, 5)
    taken = store.acquire("second", 1301.0, 1600.0)  # the first ran past its lease (it crashed)
    assert taken is not None and json.loads(taken["sweep"])["cursor"] == "100"  # its saved state stays
    with pytest.raises(LeaseLost):
        store.save_sweep("first", state, False, 0, 5)  # the first, late: fenced off
    store.release("second", "paused", None)
    assert status_of(store.read())["sent"] == 5 and "lease_until" not in store.read()


def test_the_mirror_lists_all_across_invocations_then_only_what_was_added(aws, table, queue, vimeo):
    sqs = aws("sqs")
    run = mirror(aws, table, queue, vimeo)
    first = run.run(pages_of_time(1))  # one page, then out of time
    assert first["outcome"] == "paused"
    assert len(drain(sqs, queue)) == 100
    assert status_of(run.store.read())["sweeping"] is True
    second = run.run(pages_of_time(10))  # resumes at the saved cursor: the two pages left
    assert second["outcome"] == "finished", second
    assert len(drain(sqs, queue)) == LIBRARY - 100
    status = status_of(run.store.read())
    assert status["sweeps"] == 1 and status["sent"] == LIBRARY and not status["sweeping"] and status["mark"]

    requests.post(f"{vimeo.url}/_sim/config", json={"library_size": LIBRARY + 7}, timeout=5).raise_for_status()
    third = run.run(pages_of_time(10))  # a delta from the mark: the 7 added, and the overlap's last minute
    assert third["outcome"] == "finished", third
    added = drain(sqs, queue)
    assert {f"vimeo/{vimeo_id}" for vimeo_id in _ids(None, range(LIBRARY, LIBRARY + 7))} <= set(added)
    assert len(added) <= 7 + 2
    assert status_of(run.store.read())["sweeps"] == 2


def test_a_spent_budget_ends_the_invocation_and_the_next_resumes(aws, table, queue, vimeo):
    sqs = aws("sqs")
    config = {"budget_quota": 45, "budget_block_s": 60}  # the first page takes 38 requests (its captions)
    requests.post(f"{vimeo.url}/_sim/config", json=config, timeout=5).raise_for_status()
    run = mirror(aws, table, queue, vimeo)
    throttled = run.run(pages_of_time(10))
    assert throttled["outcome"] == "throttled" and "429" in throttled["error"], throttled
    before = drain(sqs, queue)  # the pages before the 429, sent and saved
    assert 0 < len(before) < LIBRARY and status_of(run.store.read())["sent"] == len(before)
    requests.post(f"{vimeo.url}/_sim/config", json={"budget_quota": 0}, timeout=5).raise_for_status()
    resumed = run.run(pages_of_time(10))
    assert resumed["outcome"] == "finished"
    assert len(before) + len(drain(sqs, queue)) == LIBRARY


def test_a_video_deleted_at_the_source_is_reported_gone_and_nothing_else_changes(aws, table, queue, vimeo):
    sqs, ledger = aws("sqs"), Ledger(table, aws("dynamodb"))
    times = iter(range(1_800_000_000, 1_800_100_000, 10))
    run = mirror(aws, table, queue, vimeo, clock=lambda: float(next(times)), audit_every=1)
    assert run.run(pages_of_time(10))["outcome"] == "finished"
    for body in _bodies(sqs, queue):  # intake's part: each listed video recorded
        msg = parse_message(body)
        assert isinstance(msg, AssetMessage)
        ledger.record_intake(msg, 1_700_000_000.0)
    requests.post(f"{vimeo.url}/_sim/library", json={"delete": [3]}, timeout=5).raise_for_status()
    second = run.run(pages_of_time(10))  # every sweep full (audit_every 1): the listed stamped, then the check
    assert second["outcome"] == "finished", second
    gone = list(gone_items(aws("dynamodb"), table, "vimeo"))
    (deleted,) = _ids(None, [3])
    assert [item["asset_id"] for item in gone] == [f"vimeo/{deleted}"]
    assert gone[0]["state"] == "pending"  # reported, never acted on
    assert status_of(run.store.read())["gone"] == 1


def test_the_handler_builds_the_mirror_from_the_stacks_settings(aws, table, queue, vimeo, endpoint, monkeypatch):
    secret = unique("sources")
    aws("secretsmanager").create_secret(Name=secret, SecretString=json.dumps({"vimeo": {"token": TOKEN}}))
    aws_env = {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
    for name, value in aws_env.items():
        monkeypatch.setenv(name, value)
    env = {
        "LEDGER_TABLE": table,
        "PROVIDER": "mux",
        "INTAKE_QUEUE_URL": queue,
        "MIRROR_SOURCE": "vimeo",
        "SOURCE_TOKEN_SECRET": secret,
        "SOURCE_BASE_URLS": f"vimeo={vimeo.url}",
        "WORKING_HOURS": "",
    }
    run = build_mirror(env)
    assert run.run(pages_of_time(10))["outcome"] == "finished"
    assert len(drain(aws("sqs"), queue)) == LIBRARY
    elsewhen = (datetime.now(UTC) + timedelta(days=2)).strftime("%a")  # a minute two days from now: closed now
    requests.post(f"{vimeo.url}/_sim/config", json={"library_size": LIBRARY + 7}, timeout=5).raise_for_status()
    closed = build_mirror({**env, "WORKING_HOURS": f"{elsewhen} 00:00-00:01 UTC"})
    assert closed.run(pages_of_time(10)) == {"action": "wait", "outcome": "waiting"}
    assert drain(aws("sqs"), queue) == []  # nothing listed outside the window
    write_override(aws("dynamodb"), table, "always", time.time())  # `migrator window set always`
    reopened = build_mirror({**env, "WORKING_HOURS": f"{elsewhen} 00:00-00:01 UTC"})
    assert reopened.run(pages_of_time(10))["outcome"] == "finished"
    assert {f"vimeo/{i}" for i in _ids(None, range(LIBRARY, LIBRARY + 7))} <= set(drain(aws("sqs"), queue))


def _bodies(sqs, queue: str) -> list[str]:
    """Every message body in the queue (received and deleted)."""
    bodies: list[str] = []
    while True:
        resp = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=0)
        if not resp.get("Messages"):
            return bodies
        for m in resp["Messages"]:
            bodies.append(m["Body"])
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=m["ReceiptHandle"])


def _ids(sim, indexes) -> list[str]:
    """The Vimeo ids of the simulator's videos at `indexes` (infra/sim/platforms/vimeo.py: ID_BASE + index)."""
    from infra.sim.platforms.vimeo import ID_BASE

    return [str(ID_BASE + i) for i in indexes]


def test_the_cli_shows_the_checkpoint_turns_the_schedule_and_lists_what_is_gone(aws, table, endpoint, tmp_path, capsys):
    # pytest-localstack's session knows no scheduler: a client of its own on the same emulator.
    scheduler = boto3.client("scheduler", endpoint_url=endpoint, aws_access_key_id="t", aws_secret_access_key="t")
    name = unique("mirror")
    arn = "arn:aws:lambda:us-east-1:000000000000:function:mirror"
    target = {"Arn": arn, "RoleArn": "arn:aws:iam::000000000000:role/r"}
    expression = {"ScheduleExpression": "rate(1 hour)", "FlexibleTimeWindow": {"Mode": "OFF"}}
    scheduler.create_schedule(Name=name, Target=target, State="DISABLED", **expression)
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"MirrorSource": "vimeo", "LedgerTableName": table, "MirrorScheduleName": name}))
    stack = ["--outputs", str(outputs), "--endpoint", endpoint]

    assert main(["mirror", "on", *stack]) == 0
    held = scheduler.get_schedule(Name=name)
    assert held["State"] == "ENABLED" and held["ScheduleExpression"] == "rate(1 hour)"  # the rest kept
    assert main(["mirror", "off", *stack]) == 0
    assert scheduler.get_schedule(Name=name)["State"] == "DISABLED"

    store = Store(aws("dynamodb"), table, "vimeo")
    store.acquire("t", 1000.0, 1100.0)
    store.finish_sweep("t", {"mark": 1_700_000_000.0, "pending": {"vimeo/9": {"ref": "vimeo://9"}}}, None, 1000.0)
    store.finish_scan("t", 1, 1000.0)
    store.release("t", "finished", None)
    ledger = Ledger(table, aws("dynamodb"))
    ledger.record_intake(AssetMessage("vimeo/5", "vimeo://5", title="Five"), 900.0)
    aws("dynamodb").update_item(
        TableName=table,
        Key={"asset_id": {"S": "vimeo/5"}},
        UpdateExpression="SET gone_at_source = :t",
        ExpressionAttributeValues={":t": {"N": "1000"}},
    )
    capsys.readouterr()
    assert main(["mirror", "status", "--json", *stack]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["schedule"], status["sweeps"], status["pending"], status["gone"]) == ("DISABLED", 1, 1, 1)
    assert status["last_outcome"] == "finished" and status["mark"] == 1_700_000_000.0
    assert main(["mirror", "gone", "--json", *stack]) == 0
    (gone,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (gone["id"], gone["title"], gone["state"]) == ("vimeo/5", "Five", "pending")
    assert "1 gone at the source" in mirror_words({"platform": "vimeo", **status})
