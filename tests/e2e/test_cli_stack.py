"""The operator's CLI against the deployed stack: status, report, retry, redrive, pause and resume."""

from __future__ import annotations

import csv
import io
import json
import time
from collections import Counter

import pytest
import requests
from migrator.ledger import Claimed, Ledger
from migrator.messages import AssetMessage
from migrator_cli.main import main

from tests.conftest import unique
from tests.e2e.conftest import SOURCE_BUCKET, queue_depth, wait_for_states
from tests.e2e.stacks import settle_with_reconcile
from tests.e2e.test_uploader_stack import asset, send_all

pytestmark = pytest.mark.e2e


def scan_items(dynamodb, table: str) -> dict:
    from migrator.dynamo import to_item

    items, kwargs = {}, {"TableName": table}
    while True:
        page = dynamodb.scan(**kwargs)
        for raw in page["Items"]:
            item = to_item(raw)
            if not item["asset_id"].startswith("#"):
                items[item["asset_id"]] = item
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_status_figures_match_the_ledger(stack, aws, live_sim, migrator):
    run = unique("st")
    ids = [f"{run}/{i}" for i in range(15)]
    send_all(aws("sqs"), stack["QueueUrl"], [asset(i) for i in ids])

    # As an operator waits: reconcile polls what a webhook given up under load left processing.
    def reconcile():
        return migrator("reconcile", "--poll-after", "10")

    settle_with_reconcile(aws("dynamodb"), stack["LedgerTableName"], ids, {"ready"}, 150, reconcile)

    deadline = time.time() + 30  # the tally follows the stream within seconds
    while True:
        truth = Counter(item["state"] for item in scan_items(aws("dynamodb"), stack["LedgerTableName"]).values())
        code, out, err = migrator("status", "--json")
        assert code == 0, err
        view = json.loads(out)
        shown = {k: v for k, v in view["counts"].items() if v}
        if shown == dict(truth) or time.time() > deadline:
            break
        time.sleep(1)
    assert shown == dict(truth)
    assert view["total"] == sum(truth.values())
    assert view["ready"] >= len(ids)  # this run's assets settled inside the window
    assert view["rate_per_min"] > 0 and view["queues"]["dead"] == 0

    code, out, _ = migrator("status", "--exact", "--json")
    assert {k: v for k, v in json.loads(out)["counts"].items() if v} == dict(truth)
    code, text, _ = migrator("status")
    assert code == 0 and f"ready       {truth['ready']:>9,}" in text and "ETA" in text


def test_the_report_round_trips(stack, aws, live_sim, migrator, tmp_path):
    run = unique("rep")
    ids = [f"{run}/{i}" for i in range(5)]
    send_all(aws("sqs"), stack["QueueUrl"], [asset(i, f"https://media.example.com/{i}.mp4?duration=7.5") for i in ids])
    wait_for_states(aws("dynamodb"), stack["LedgerTableName"], ids, {"ready"}, timeout_s=60)

    code, _, err = migrator("report", "--format", "jsonl", "-o", str(tmp_path / "r.jsonl"))
    assert code == 0, err
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "r.jsonl").read_text().splitlines())}
    items = scan_items(aws("dynamodb"), stack["LedgerTableName"])
    assert set(rows) >= set(ids)
    for asset_id in ids:
        row, item = rows[asset_id], items[asset_id]
        assert (row["source_url"], row["state"], row["remote_id"]) == (item["source_url"], "ready", item["remote_id"])
        assert row["provider_duration_s"] == 7.5 and row["attempts"] == 1

    code, out, _ = migrator("report", "--format", "csv", "--state", "ready")
    csv_rows = {r["id"]: r for r in csv.DictReader(io.StringIO(out))}
    assert all(r["state"] == "ready" for r in csv_rows.values())
    for asset_id in ids:  # the CSV says what the JSONL says, but for the lists only JSONL carries
        listed = dict(rows[asset_id])
        assert listed.pop("tracks") == [] and listed.pop("extras") == []
        assert {k: str(v) if v is not None else "" for k, v in listed.items()} == csv_rows[asset_id]


def test_retry_gives_failed_assets_a_fresh_budget(stack, aws, live_sim, migrator):
    ledger = Ledger(stack["LedgerTableName"], aws("dynamodb"))
    failed = unique("failed")
    now = time.time()
    claim = ledger.claim(AssetMessage(failed, f"https://media.example.com/{failed}.mp4"), now, now + 60, "t1")
    assert isinstance(claim, Claimed)
    ledger.mark_failed(failed, "t1", "HTTP 500: provider broke", None, now)
    aws("dynamodb").update_item(  # its whole budget (MaxAttempts=3) was spent
        TableName=stack["LedgerTableName"],
        Key={"asset_id": {"S": failed}},
        UpdateExpression="SET attempts = :n",
        ExpressionAttributeValues={":n": {"N": "3"}},
    )

    code, _, err = migrator("retry", "--id", failed, "--dry-run")
    assert code == 0 and "would re-enqueue 1 failed" in err
    assert ledger.get(failed)["state"] == "failed"

    code, _, err = migrator("retry", "--id", failed)
    assert code == 0 and "re-enqueued 1 failed" in err, err
    item = wait_for_states(aws("dynamodb"), stack["LedgerTableName"], [failed], {"ready"}, timeout_s=60)[failed]
    assert item["retry_base"] == "3" and item["attempts"] == "4"

    code, _, err = migrator("retry", "--state", "processing")
    assert code == 2 and "not processing" in err


def test_redrive_moves_dead_letters_back(stack, aws, live_sim, migrator):
    dead = unique("dlq")
    aws("sqs").send_message(QueueUrl=stack["DeadLetterQueueUrl"], MessageBody=asset(dead))

    code, _, err = migrator("redrive")

    assert code == 0 and "moved 1 messages" in err and "(copy then delete)" in err, err
    wait_for_states(aws("dynamodb"), stack["LedgerTableName"], [dead], {"ready"}, timeout_s=60)
    assert queue_depth(aws("sqs"), stack["DeadLetterQueueUrl"]) == 0


def test_pause_holds_the_queue_and_resume_drains_it(stack, aws, live_sim, migrator):
    code, _, err = migrator("pause")
    assert code == 0 and "paused" in err, err
    try:
        time.sleep(2)  # a poll already under way may still deliver
        waiting = unique("paused")
        send_all(aws("sqs"), stack["QueueUrl"], [asset(waiting)])
        # Intake records it at once (status counts it), and the paced queue holds its message.
        ledger = Ledger(stack["LedgerTableName"], aws("dynamodb"))
        deadline = time.time() + 30
        while time.time() < deadline and not (
            (ledger.get(waiting) or {}).get("state") == "pending" and queue_depth(aws("sqs"), stack["WorkQueueUrl"])
        ):
            time.sleep(0.5)
        assert ledger.get(waiting)["state"] == "pending"
        assert queue_depth(aws("sqs"), stack["WorkQueueUrl"]) >= 1
        time.sleep(3)  # and nothing claims it while paused
        assert ledger.get(waiting)["state"] == "pending"
        code, text, _ = migrator("status")
        assert code == 0 and "uploader    DISABLED" in text
    finally:
        code, _, err = migrator("resume")
    assert code == 0 and "resumed" in err, err
    wait_for_states(aws("dynamodb"), stack["LedgerTableName"], [waiting], {"ready"}, timeout_s=60)
    assert "uploader    running" in migrator("status")[1]


def test_operator_mistakes_get_one_clear_line(stack, endpoint, tmp_path, capsys):
    def run(*args):
        code = main(list(args))
        return code, capsys.readouterr().err

    code, err = run("status", "--stack", "no-such-stack", "--endpoint", endpoint)
    assert code == 2 and err.strip() == f"migrator status: no stack named 'no-such-stack' in {endpoint}"
    code, err = run("status", "--outputs", str(tmp_path / "missing.json"))
    assert code == 2 and "outputs file not found" in err and "Traceback" not in err
    code, err = run("status", "--endpoint", "http://127.0.0.1:9", "--stack", "x")
    assert code == 2 and "cannot reach" in err


def test_load_reports_bad_rows_drops_repeats_and_a_reload_creates_nothing(stack, aws, live_sim, migrator, tmp_path):
    run = unique("inv")
    good = [f"{run}/{i}" for i in range(6)]
    lines = ["id,source_url,title,duration_s"]
    lines += [f"{i},https://media.example.com/{i}.mp4?duration=9,Episode {n},9" for n, i in enumerate(good)]
    lines.append(f"{good[0]},https://media.example.com/{good[0]}.mp4?duration=9,Episode 0,9")  # line 8: repeat
    lines.append(f"{good[1]},https://elsewhere.example.com/other.mp4,Other,")  # line 9: same id, other URL
    lines.append(f"{run}/ftp,ftp://nas.example.com/a.mp4,FTP,")  # line 10
    lines.append(f"{run}/dur,https://media.example.com/d.mp4,Bad duration,soon")  # line 11
    inventory = tmp_path / "inventory.csv"
    inventory.write_text("\n".join(lines) + "\n")
    ledger = Ledger(stack["LedgerTableName"], aws("dynamodb"))

    code, _, err = migrator("load", str(inventory), "--dry-run")
    assert code == 1, err  # bad rows: the exit says so
    assert "line 10:" in err and "ftp" in err and "line 11:" in err and "line 9:" in err
    assert "line 8: warning" in err
    time.sleep(2)
    assert ledger.get(good[0]) is None  # a dry run sends nothing

    code, _, err = migrator("load", str(inventory))
    assert code == 1 and "line 9:" in err, err
    wait_for_states(aws("dynamodb"), stack["LedgerTableName"], good, {"ready"}, timeout_s=60)
    assert ledger.get(f"{run}/ftp") is None and ledger.get(f"{run}/dur") is None  # bad rows never went
    assert ledger.get(good[1])["source_url"].startswith("https://media.example.com/")

    code, _, err = migrator("load", str(inventory))  # the same file again
    assert code == 1, err
    time.sleep(3)
    log = live_sim.requests_log()
    assert all(sum(1 for r in log if r["ref"] == i and r["status"] == 201) == 1 for i in good)
    assert live_sim.stats()["duplicate_videos"] == 0


def test_stage_probe_then_enqueue_what_passed(stack, aws, live_sim, migrator, tmp_path):
    from tests.probe.media import MediaServer, make_media

    make_media(tmp_path / "media")
    run = unique("probe")
    ids = {name: f"{run}/{name}" for name in ("video", "audio", "truncated")}
    with MediaServer(tmp_path / "media") as media:
        files = {"video": "video.mp4?duration=2", "audio": "audio.m4a", "truncated": "truncated.mp4"}
        inventory = tmp_path / "inventory.jsonl"
        inventory.write_text(
            "".join(json.dumps({"id": ids[n], "source_url": media.url(f)}) + "\n" for n, f in files.items())
        )
        code, _, err = migrator("load", str(inventory), "--stage")
        assert code == 0, err
        ledger = Ledger(stack["LedgerTableName"], aws("dynamodb"))
        assert {ledger.get(i)["state"] for i in ids.values()} == {"pending"}

        code, _, err = migrator("probe", "--concurrency", "2", "--timeout", "20", "--allow-private-addresses")
        assert code == 0, err

    video, audio, truncated = (ledger.get(ids[n]) for n in ("video", "audio", "truncated"))
    assert video["state"] == "inventoried" and abs(float(video["duration_s"]) - 2.0) < 0.2
    assert audio["state"] == "rejected" and "no video stream" in audio["last_error"]
    assert truncated["state"] == "rejected" and "probe:" in truncated["last_error"]

    code, _, err = migrator("retry", "--state", "inventoried", "--id", ids["video"])
    assert code == 0 and "re-enqueued 1 inventoried" in err, err
    ready = wait_for_states(aws("dynamodb"), stack["LedgerTableName"], [ids["video"]], {"ready"}, 60)[ids["video"]]
    assert float(ready["provider_duration_s"]) == 2.0 and "drift_s" not in ready


def test_an_s3_listing_reaches_the_provider_as_presigned_urls(stack, aws, live_sim, migrator):
    s3 = aws("s3")
    bucket, show = SOURCE_BUCKET, unique("show")
    if bucket not in {b["Name"] for b in s3.list_buckets()["Buckets"]}:
        s3.create_bucket(Bucket=bucket)
    for key in (f"{show}/ep1.mp4", f"{show}/ep2.MOV", f"{show}/notes.txt"):
        s3.put_object(Bucket=bucket, Key=key, Body=b"not really a video")
    elsewhere = unique("other-bucket")
    s3.create_bucket(Bucket=elsewhere)
    code, _, err = migrator("load", f"s3://{elsewhere}/")
    assert code == 2 and SOURCE_BUCKET in err  # the uploader could never presign another bucket's objects

    code, _, err = migrator("load", f"s3://{bucket}/{show}/")

    assert code == 0, err
    from migrator_cli.inventory import s3_asset_id

    ids = [s3_asset_id(bucket, f"{show}/ep1.mp4"), s3_asset_id(bucket, f"{show}/ep2.MOV")]
    items = wait_for_states(aws("dynamodb"), stack["LedgerTableName"], ids, {"ready"}, timeout_s=60)
    assert items[ids[0]]["source_url"] == f"s3://{bucket}/{show}/ep1.mp4"
    inputs = {
        v["metadata"]["migration_ref"]: v["input"]
        for v in requests.get(
            f"{live_sim.url}/videos", headers={"Authorization": f"Bearer {live_sim.config.token}"}, timeout=10
        ).json()["data"]
    }
    for asset_id in ids:  # the provider was handed a SigV4 presigned GET URL, never the s3:// address
        assert inputs[asset_id].startswith("http") and "X-Amz-Algorithm=AWS4-HMAC-SHA256" in inputs[asset_id]
        assert "AWSAccessKeyId" not in inputs[asset_id]


def documented_fields() -> dict[str, set[str]]:
    """The operator's guide's JSON table: output name -> its fields."""
    import re

    from tests.conftest import ROOT

    text = (ROOT / "docs" / "operator-guide.md").read_text()
    table = text[text.index("| output | fields |") :].split("\n\n")[0]
    fields = {}
    for row in table.splitlines()[2:]:
        output, names = row.strip("|").split("|")
        for name in re.findall(r"`([^`]+)`", output):
            key = f"{name} {output.split('`')[-1].strip()}".strip()
            fields[key] = set(re.findall(r"`([a-z][a-z_0-9]*)`", names))
    return fields


def test_every_command_speaks_json_with_the_documented_fields(stack, aws, live_sim, migrator, tmp_path):
    """--json on every command, parsed (one object, or JSON Lines for a stream), and each output's
    fields exactly the operator's guide's."""
    documented = documented_fields()
    run = unique("json")
    ids = [f"{run}/{i}" for i in range(4)]
    inventory = tmp_path / "inventory.csv"
    inventory.write_text(
        "id,source_url\n"
        + "".join(f"{i},https://media.example.com/{i}.mp4\n" for i in ids)
        + f"bad,ftp://x/y\n{ids[0]},https://media.example.com/{ids[0]}.mp4\n"
    )

    def lines(*argv: str, codes=(0,)) -> list[dict]:
        code, out, err = migrator(*argv, "--json")
        assert code in codes, (argv, code, err)
        return [json.loads(line) for line in out.splitlines()]

    def fields_of(doc: dict, output: str) -> None:
        assert set(doc) == documented[output], (output, set(doc) ^ documented[output])

    *problems, summary = lines("load", str(inventory), codes=(1,))  # one bad row: exit 1
    assert [(p["type"], p["kind"], p["line"]) for p in problems] == [("problem", "bad", 6), ("problem", "repeat", 7)]
    assert all(set(p) <= documented["load problem"] for p in problems)
    assert summary["type"] == "summary" and summary["sent"] == 4 and summary["bad"] == 1
    fields_of(summary, "load summary")
    wait_for_states(aws("dynamodb"), stack["LedgerTableName"], ids, {"ready"}, timeout_s=60)

    (view,) = lines("status")
    assert view["counts"]["ready"] >= 4
    fields_of(view, "status")
    watched = lines("status", "--watch", "1", "--count", "2")
    assert len(watched) == 2 and all(set(v) == documented["status"] for v in watched)

    rows = {row["id"]: row for row in lines("report")}
    assert all(rows[i]["state"] == "ready" for i in ids)
    fields_of(rows[ids[0]], "report")

    (html,) = lines("report", "--html", str(tmp_path / "r.html"))
    assert html["type"] == "summary" and html["assets"] == sum(html["counts"].values())
    fields_of(html, "report --html")

    *_, retried = lines("retry", "--id", ids[0], "--dry-run")
    assert retried["type"] == "summary" and retried["dry_run"] is True and retried["moved_on"] == [[ids[0], "ready"]]
    fields_of(retried, "retry")

    (moved,) = lines("redrive")
    assert moved["moved"] == 0 and moved["method"] in ("copy then delete", "StartMessageMoveTask")
    fields_of(moved, "redrive")

    (paused,) = lines("pause")
    (resumed,) = lines("resume")
    assert (paused["uploader"], resumed["uploader"]) == ("paused", "resumed")
    fields_of(paused, "pause")
    fields_of(resumed, "resume")

    (reconciled,) = lines("reconcile")
    assert reconciled["examined"] >= 0 and reconciled["errors"] == 0
    fields_of(reconciled, "reconcile")

    (probed,) = lines("probe", "--dry-run", "--timeout", "5", codes=(0, 1))  # other tests' sources may be gone
    assert probed["type"] == "summary" and probed["dry_run"] is True
    fields_of(probed, "probe")

    (audited,) = lines("audit", codes=(0, 1))
    assert isinstance(audited["findings"], list)
    fields_of(audited, "audit")

    (doctor,) = lines("doctor", codes=(0, 1))
    assert isinstance(doctor["ok"], bool) and {c["name"] for c in doctor["checks"]} >= {"provider", "webhook"}
    fields_of(doctor, "doctor")


def test_the_html_report_holds_the_numbers_the_ledger_holds(stack, aws, live_sim, migrator, tmp_path):
    from tests.unit.test_report_html import ALLOWED_TAGS, FETCHING_ATTRIBUTES, Page

    ledger = Ledger(stack["LedgerTableName"], aws("dynamodb"))
    run = unique("html")
    rejected = f"{run}/rejected"
    now = time.time()
    assert isinstance(
        ledger.claim(AssetMessage(rejected, "https://media.example.com/r.mp4"), now, now + 60, "t"), Claimed
    )
    ledger.mark_rejected(rejected, "t", f"source: 404 Not Found <{run}>", now)
    page_path = tmp_path / "report.html"

    for _ in range(5):  # other tests' webhooks may still be settling: read until the ledger holds still
        before = Counter(i["state"] for i in scan_items(aws("dynamodb"), stack["LedgerTableName"]).values())
        code, _, err = migrator("report", "--html", str(page_path))
        after = Counter(i["state"] for i in scan_items(aws("dynamodb"), stack["LedgerTableName"]).values())
        if before == after:
            break
        time.sleep(2)
    assert code == 0 and "assets summarised in" in err, err
    assert before == after

    page = Page(page_path.read_text(encoding="utf-8"))
    counts = {row[0]: int(row[1].replace(",", "")) for row in page.tables["counts"][1:] if row[0] != "all"}
    assert {state: n for state, n in counts.items() if n} == dict(after)
    assert int(page.tables["counts"][-1][1].replace(",", "")) == sum(after.values())
    assert ["1", f"source: 404 Not Found <{run}>"] in page.tables["rejected-reasons"]
    assert {tag for tag, _ in page.tags} <= ALLOWED_TAGS
    assert not any(FETCHING_ATTRIBUTES & set(attributes) for _, attributes in page.tags)


def test_rewrite_reads_the_map_from_the_ledger_and_points_the_site_at_the_new_videos(
    stack, aws, live_sim, migrator, tmp_path
):
    """`migrator rewrite` with no --map reads the deployed stack's ledger, as export does: a page's links to a URL
    list's files become the provider's player URLs; a <video> of one stays (the generic contract gives no MP4), as
    does the refused video's link, each listed with its reason; a second run changes nothing."""
    run = unique("site")
    ids = [f"{run}/{i}" for i in range(3)]
    refused = f"{run}/unsupported"
    send_all(
        aws("sqs"),
        stack["QueueUrl"],
        [asset(i) for i in ids] + [asset(refused, f"https://media.example.com/{run}/unsupported.mp4")],
    )
    wait_for_states(aws("dynamodb"), stack["LedgerTableName"], ids, {"ready"}, timeout_s=60)
    wait_for_states(aws("dynamodb"), stack["LedgerTableName"], [refused], {"rejected"}, timeout_s=60)
    site = tmp_path / "site"
    site.mkdir()
    page = site / "talks.html"
    page.write_text(
        "".join(f'<a href="https://media.example.com/{i}.mp4">talk</a>\n' for i in ids)
        + f'<video src="https://media.example.com/{ids[0]}.mp4"></video>\n'
        + f'<a href="https://media.example.com/{run}/unsupported.mp4">old</a>\n'
        + f'<a href="https://media.example.com/{run}/never-loaded.mp4">other</a>\n',
        encoding="utf-8",
    )
    code, out, err = migrator("export", "--format", "jsonl")
    assert code in (0, 1), err
    exported = {r["id"]: r for r in map(json.loads, out.splitlines())}

    code, out, err = migrator("rewrite", str(site), "--apply", "--json", "--backup-dir", str(tmp_path / "backup"))
    report = json.loads(out)
    assert code == 1, err  # what stays is for someone to act on
    text = page.read_text(encoding="utf-8")
    for asset_id in ids:
        assert f'<a href="{exported[asset_id]["player_url"]}">talk</a>' in text, (asset_id, exported[asset_id])
    assert f'<video src="https://media.example.com/{ids[0]}.mp4">' in text
    assert f"{run}/unsupported.mp4" in text and f"{run}/never-loaded.mp4" in text
    assert report["embeds"]["found"] == {"https": 5} and report["embeds"]["rewritten"] == {"https": 3}
    assert report["embeds"]["left"] == {"no equivalent": 1, "rejected": 1}
    assert (tmp_path / "backup").is_dir()

    code, out, _ = migrator("rewrite", str(site), "--apply", "--json", "--backup-dir", str(tmp_path / "backup2"))
    assert json.loads(out)["files"]["changed"] == 0 and page.read_text(encoding="utf-8") == text
