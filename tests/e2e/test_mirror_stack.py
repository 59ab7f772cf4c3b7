"""Knowing the library before moving it and keeping it in step (issue 45), on the deployed template (api.video's
shared stack, deployed with `MirrorSource=kaltura` and its schedule off):

- the mirror: Kaltura's library loaded by the operator, four entries added at the source afterwards, the schedule
  turned on (`migrator mirror on`), and the new entries moved by the scheduled sweep with no command of the
  operator's: each ready at api.video, none created twice, but the one never played, which the stack's
  `MirrorWhere=plays > 0` leaves behind (counted, never sent);
- triage and working hours: Vimeo's library listed with its plays, `load --where "plays > 0"` leaving the never
  played (and the uncounted) behind with its report, its drain cut by a window that closes mid-drain (nothing is
  created while it is closed) and going on when the window opens;
- the done notice: on the stack's topic once the last asset settles, once, with the counts `migrator status --json`
  gives.
"""

from __future__ import annotations

import json
import time

import pytest
from migrator_cli.main import main

from infra.sim import library_usage
from infra.sim.platforms import kaltura_entries
from tests.conftest import unique
from tests.e2e.stacks import wait_for_states

pytestmark = pytest.mark.e2e

ADDED = 4  # entries added to Kaltura's library after the first load
VIMEO_SIZE = 40  # Vimeo's library for the window's drain: enough rows to straddle its closing
DRAIN_RATE = "0.5"  # creates a second while the window is tested: the drain outlasts the minute before it closes


def cli(target, endpoint, capsys, *args: str) -> tuple[int, str, str]:
    code = main([*args, "--outputs", str(target.outputs_path), "--endpoint", endpoint])
    out, err = capsys.readouterr()
    return code, out, err


def subscribe(aws, topic_arn: str) -> str:
    """An SQS queue subscribed to the stack's notice topic: what AlarmEmail would receive."""
    sqs = aws("sqs")
    url = sqs.create_queue(QueueName=unique("notices"))["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    aws("sns").subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=arn)
    return url


def notices(aws, url: str) -> list[dict]:
    """Every notice the queue holds (the SNS envelope's Subject and Message), each read once."""
    sqs, found = aws("sqs"), []
    while True:
        got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
        if not got:
            return found
        for message in got:
            envelope = json.loads(message["Body"])
            found.append({"subject": envelope.get("Subject", ""), "message": envelope["Message"]})
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


def ledger_items(aws, table: str, prefix: str) -> dict[str, dict]:
    """The ledger's assets whose id starts with `prefix`, as plain values."""
    from migrator.dynamo import to_item

    pages = aws("dynamodb").get_paginator("scan").paginate(TableName=table)
    items = (to_item(i) for page in pages for i in page["Items"])
    return {i["asset_id"]: i for i in items if str(i["asset_id"]).startswith(prefix)}


def closed_minute(now: float, lead_s: float) -> tuple[float, float, str]:
    """A window closed for one whole UTC minute starting at least `lead_s` from now: (closes, opens, its text)."""
    closes = (int(now + lead_s) // 60 + 1) * 60
    opens = closes + 60

    def hhmm(epoch: float) -> str:
        return time.strftime("%H:%M", time.gmtime(epoch))

    if hhmm(closes) == "23:59":  # the open span after it would end at 24:00 and start at 00:00: one span
        return closes, opens, "daily 00:00-23:59 UTC"
    if hhmm(closes) == "00:00":
        return closes, opens, "daily 00:01-24:00 UTC"
    return closes, opens, f"daily 00:00-{hhmm(closes)}; daily {hhmm(opens)}-24:00 UTC"


def sleep_until(epoch: float) -> None:
    time.sleep(max(0.0, epoch - time.time()))


def test_the_mirror_moves_what_was_added_and_the_hours_hold_a_triaged_drain_said_done_once(
    sources, targets, migrate, aws, endpoint, tmp_path, capsys
):
    target = targets("apivideo")
    table = target.outputs["LedgerTableName"]
    inbox = subscribe(aws, target.outputs["NoticeTopicArn"])

    # --- the mirror: what the source gains after the first load moves with no command -------------------------
    rows, _, _ = migrate("kaltura", target)
    first = {r["id"] for r in rows}
    kaltura = sources.sims["kaltura"]
    kaltura.patch_config({"library_size": kaltura.config.library_size + ADDED})
    listed = tmp_path / "kaltura-after.jsonl"  # the test's own oracle: what the source now holds
    list_source(sources, "kaltura", listed, tmp_path, capsys)
    added = {json.loads(line)["id"] for line in listed.read_text().splitlines()} - first
    indexes = {i: kaltura_entries.index_of(i.split("/", 1)[1]) for i in added}
    assert len(added) == ADDED and min(indexes.values()) >= 20, added
    unplayed = {i for i, index in indexes.items() if library_usage.never_played(index)}
    assert unplayed and unplayed < added, indexes  # MirrorWhere has one to leave behind and others to send
    assert cli(target, endpoint, capsys, "mirror", "on")[0] == 0
    try:
        moved = wait_for_states(aws("dynamodb"), table, sorted(added - unplayed), {"ready"}, timeout_s=240)
    finally:
        assert cli(target, endpoint, capsys, "mirror", "off")[0] == 0
    assert {i["state"] for i in moved.values()} == {"ready"}
    assert not set(ledger_items(aws, table, "kaltura/")) & unplayed  # left behind by the triage: never sent
    code, out, _ = cli(target, endpoint, capsys, "mirror", "status", "--json")
    status = json.loads(out)
    assert code == 0 and status["left_behind"] >= len(unplayed) and status["gone"] == 0, status
    assert status["sent"] + status["left_behind"] >= len(first) + len(added), status
    assert target.sim.stats()["duplicate_videos"] == 0

    # --- triage and working hours: a drain cut by the window and resumed when it opens -------------------------
    sources.sims["vimeo"].patch_config({"library_size": VIMEO_SIZE})
    vimeo_rows = tmp_path / "vimeo.jsonl"
    list_source(sources, "vimeo", vimeo_rows, tmp_path, capsys)
    inventory = [json.loads(line) for line in vimeo_rows.read_text().splitlines()]
    played = {r["id"] for r in inventory if (r.get("usage") or {}).get("plays", 0) > 0}
    behind = {r["id"] for r in inventory} - played
    assert played and any(r.get("usage", {}).get("plays") == 0 for r in inventory if r["id"] in behind)
    report = tmp_path / "vimeo.left-behind.jsonl"
    lambda_client = aws("lambda")
    with target.uploader_environment(lambda_client, PROVIDER_RATE_LIMIT=DRAIN_RATE, START_RATE=DRAIN_RATE):
        closes, opens, window = closed_minute(time.time(), lead_s=40)
        code, out, _ = cli(target, endpoint, capsys, "window", "set", window, "--json")
        assert code == 0 and json.loads(out)["open"] is True, out
        sleep_until(closes - 25)  # the drain starts 25 s before the window closes: at its rate it cannot end before
        code, _, err = cli(
            target, endpoint, capsys, "load", str(vimeo_rows), "--where", "plays > 0", "--left-behind", str(report)
        )
        assert code == 0, err
        sleep_until(closes + 8)  # a create reserved just before the close may finish just after it
        before = created(aws, table, played)
        assert 0 < len(before) < len(played), (len(before), len(played))  # the window closed mid-drain
        code, out, _ = cli(target, endpoint, capsys, "window", "show", "--json")
        assert json.loads(out)["open"] is False, out
        sleep_until(opens - 3)
        assert created(aws, table, played) == before  # nothing created while the window was closed
        settled = wait_for_states(aws("dynamodb"), table, sorted(played), {"ready"}, timeout_s=240)
    assert cli(target, endpoint, capsys, "window", "clear")[0] == 0
    assert {i["state"] for i in settled.values()} == {"ready"}
    assert not set(ledger_items(aws, table, "vimeo/")) & behind  # never sent
    left = [json.loads(line) for line in report.read_text().splitlines()]
    assert {entry["id"] for entry in left} == behind
    assert all("plays" in entry["why"] for entry in left), left[:3]
    assert target.sim.stats()["duplicate_videos"] == 0

    # --- done: once, with the counts status gives --------------------------------------------------------------
    notices(aws, inbox)  # what earlier settles told (a done notice per load that settled): read and put aside
    code, out, _ = cli(target, endpoint, capsys, "reconcile")
    assert code == 0, out
    cli(target, endpoint, capsys, "reconcile")  # a second run tells nothing more
    told = notices(aws, inbox)
    done = [n for n in told if "migration done" in n["subject"]]
    assert len(done) == 1, told
    code, out, _ = cli(target, endpoint, capsys, "status", "--json")
    status = json.loads(out.splitlines()[-1])
    summary = json.loads(done[0]["message"].rsplit("\n\n", 1)[1])
    assets = [i for i in ledger_items(aws, table, "") if not i.startswith("#")]
    assert summary["total"] == status["total"] == len(assets)
    assert (summary["ready"], summary["remaining"], summary["counts"]) == (status["ready"], 0, status["counts"])
    assert summary["ready"] >= len(first) + len(added - unplayed) + len(played)


def created(aws, table: str, ids: set[str]) -> set[str]:
    """Of `ids`, those the uploader has created at the provider (a remote id in the ledger)."""
    return {i for i, item in ledger_items(aws, table, "vimeo/").items() if i in ids and item.get("remote_id")}


def list_source(sources, platform: str, output, tmp_path, capsys) -> None:
    """`migrator inventory --from PLATFORM` into `output`, as the operator lists it."""
    credentials = tmp_path / "sources.json"
    credentials.write_text(json.dumps(sources.credentials))
    argv = ["inventory", "--from", platform, "-o", str(output), "--restart", "--source-url", sources.base(platform)]
    code = main([*argv, "--credentials", str(credentials), "--mark-file", str(tmp_path / f"{platform}.marks.json")])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
