"""Brightcove → the owner's own AWS (Provider=aws), end to end on the deployed template (issue 44).

template.yaml deployed with `Provider=aws` on the emulator: the output bucket, the CloudFront distribution with its
origin access control and the key group the stack makes itself (its private key in Secrets Manager), the
MediaConvert role, and the EventBridge rule that hands MediaConvert's job state changes to the job-events function.
A local MediaConvert (infra/sim/mediaconvert.py, its endpoint the stack's ProviderBaseUrl) really transcodes each
archived original with ffmpeg into the emulator's S3 and sends its events through the emulator's EventBridge (under a
source of its own: JobEventSource); a local edge (infra/sim/edge.py, the stack's PlaybackBaseUrl) enforces the
distribution's signed URLs and cookies in front of the emulator's CloudFront.

`migrator inventory --from brightcove` then `migrator load`, with a share of CreateJob answers lost (the job made)
and of uploaders dying right after a create; then, read back from what AWS holds: every video ready, each HLS
rendition read by ffprobe through CloudFront, the captions in the manifest, the private videos refused unsigned
and served signed, and exactly one job per asset.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time

import pytest
import requests

from infra.emulator import client
from infra.sim.edge import LocalEdge
from infra.sim.mediaconvert import MediaConvertConfig, MediaConvertSim
from tests.conftest import unique
from tests.e2e.stacks import SOURCE_PREPARE_TIMEOUT_S, sam_up, set_environment, wait_for_states
from tests.probe.media import make_media

pytestmark = pytest.mark.e2e

ARCHIVE_BUCKET = "e2e-aws-masters"
EVENT_SOURCE = "migrator.sim.mediaconvert"  # EventBridge refuses an aws. source from anyone but AWS
QUEUE_CONCURRENCY = 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AwsStack:
    def __init__(self, name, outputs, outputs_path, mediaconvert, edge):
        self.name, self.outputs, self.outputs_path = name, outputs, outputs_path
        self.mediaconvert, self.edge = mediaconvert, edge


@pytest.fixture(scope="module")
def aws_stack(endpoint, aws, sources, tmp_path_factory):
    from migrator.trackfetch import origin_of

    from infra.accounts import source_secret

    work = tmp_path_factory.mktemp("aws-target")
    sample = make_media(work / "media")["video"]
    sources.sims["brightcove"].patch_config({"media_file": str(sample)})  # a library of real (short) videos
    aws("s3").create_bucket(Bucket=ARCHIVE_BUCKET)
    config = MediaConvertConfig(queues={"Default": QUEUE_CONCURRENCY}, event_source=EVENT_SOURCE, seed=44)
    mediaconvert = MediaConvertSim(config, s3=aws("s3"), events=client("events", endpoint)).start()
    edge_port = _free_port()
    secret_name = unique("source-credentials")
    aws("secretsmanager").create_secret(Name=secret_name, SecretString=source_secret(sources.credentials))
    params = {
        "Provider": "aws",
        "ProviderBaseUrl": mediaconvert.url,
        "ArchiveBucket": ARCHIVE_BUCKET,
        "ArchiveFirst": "true",
        "JobEventSource": EVENT_SOURCE,
        "PlaybackBaseUrl": f"http://127.0.0.1:{edge_port}",
        "ProviderMaxInFlight": str(2 * QUEUE_CONCURRENCY),
        "MaximumConcurrency": "3",
        # One message an invocation: a crash (CHAOS below) takes its own asset down, not batch mates that then wait
        # out the queue's six-minute visibility timeout (what is measured here is that no job is made twice).
        "BatchSize": "1",
        "UploaderTimeout": "60",
        "MaxAttempts": "3",
        "ReconcileScheduleEnabled": "false",
        "PollAfterSeconds": "60",
        "TrackFetchTestOrigins": ",".join(origin_of(s.url) for s in sources.sims.values()),
        "SourceTokenSecretName": secret_name,
        "SourceBaseUrls": sources.base_urls(),
        "SourcePrepareTimeoutSeconds": str(SOURCE_PREPARE_TIMEOUT_S),
    }
    name, outputs_path = unique("e2e-aws"), work / "outputs.json"
    outputs = sam_up(endpoint, name, params, outputs_path)
    edge = LocalEdge(client("cloudfront", endpoint), outputs["PlaybackDistributionId"], endpoint, port=edge_port)
    edge.start()
    yield AwsStack(name, outputs, outputs_path, mediaconvert, edge)
    edge.stop()
    mediaconvert.stop()
    sources.sims["brightcove"].patch_config({"media_file": None})
    aws("cloudformation").delete_stack(StackName=name)


def _migrate(endpoint, aws, sources, stack, tmp_path, capsys) -> tuple[list[dict], dict]:
    from migrator.ledger import Ledger
    from migrator_cli.main import main

    credentials = tmp_path / "sources.json"
    credentials.write_text(json.dumps(sources.credentials))
    out = tmp_path / "brightcove.jsonl"
    argv = ["inventory", "--from", "brightcove", "-o", str(out), "--mark-file", str(tmp_path / "marks.json")]
    argv += ["--source-url", sources.base("brightcove"), "--credentials", str(credentials), "--restart"]
    assert main(argv) == 0, capsys.readouterr().err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert main(["load", str(out), "--outputs", str(stack.outputs_path), "--endpoint", endpoint]) == 0
    capsys.readouterr()
    table, ids = stack.outputs["LedgerTableName"], [r["id"] for r in rows]
    deadline, ledger = time.time() + 420, Ledger(table, aws("dynamodb"))
    while True:
        try:
            wait_for_states(aws("dynamodb"), table, ids, {"ready", "rejected"}, timeout_s=30)
            return rows, ledger.get_many(ids)  # the items as plain Python, maps and all
        except AssertionError:
            if time.time() > deadline:
                return rows, ledger.get_many(ids)
        # As an operator runs it: a job event lost on a loaded machine is made good by reconcile's poll of GetJob,
        # and a message that went down with a crashed uploader (held beside the create that crashed it) is sent
        # again by its heal, rather than after the queue's visibility timeout.
        argv = ["reconcile", "--poll-after", "10", "--heal-after", "30"]
        main([*argv, "--outputs", str(stack.outputs_path), "--endpoint", endpoint])
        capsys.readouterr()


def _ffprobe(url: str, cookies: dict | None = None) -> dict:
    """ffprobe's reading of a rendition; with `cookies`, sent on every request it makes (the playlist's and each
    segment's: its HLS reader passes `-headers` on), as a player holding CloudFront's signed cookies does."""
    sent = ["-headers", "Cookie: " + "; ".join(f"{k}={v}" for k, v in cookies.items()) + "\r\n"] if cookies else []
    result = subprocess.run(
        ["ffprobe", "-v", "error", *sent, "-print_format", "json", "-show_streams", url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, (url, result.stderr[-500:])
    return json.loads(result.stdout)


def _renditions(master: str) -> tuple[list[str], list[str]]:
    """A master playlist's variant URIs and its subtitle renditions' LANGUAGE values (RFC 8216 4.3.4)."""
    lines = master.splitlines()
    variants = [lines[i + 1] for i, line in enumerate(lines) if line.startswith("#EXT-X-STREAM-INF")]
    languages = [
        part.split("=", 1)[1].strip('"')
        for line in lines
        if line.startswith("#EXT-X-MEDIA:") and "TYPE=SUBTITLES" in line
        for part in line.split(",")
        if part.startswith("LANGUAGE=")
    ]
    return variants, languages


def test_a_brightcove_library_moves_to_your_own_aws_and_plays_through_cloudfront(
    endpoint, aws, sources, aws_stack, tmp_path, capsys
):
    from migrator.cloudfront_key_plan import signing_key_from_secret
    from migrator.cloudfront_signing import CustomPolicy, custom_cookies, sign_custom_url
    from migrator.extras import image_kind

    from tests.e2e.extras_pairs import SourceFiles

    files = SourceFiles.of(sources)

    mediaconvert, outputs = aws_stack.mediaconvert, aws_stack.outputs
    mediaconvert.config.lose_create_answer_rate = 0.3  # the job made, its answer never arrives
    uploader = outputs["UploaderFunctionName"]
    lam = aws("lambda")
    before = lam.get_function_configuration(FunctionName=uploader)["Environment"]["Variables"]
    set_environment(lam, uploader, {**before, "CHAOS_CRASH_AFTER_CREATE": "0.1"})  # and uploaders die after one
    try:
        rows, items = _migrate(endpoint, aws, sources, aws_stack, tmp_path, capsys)
    finally:
        set_environment(lam, uploader, before)
        mediaconvert.config.lose_create_answer_rate = 0.0
    assert mediaconvert.lost_answers > 0, "no CreateJob answer was lost: the test would prove nothing"

    states = {r["id"]: items[r["id"]].get("state") for r in rows}
    not_ready = {k: items[k] for k, v in states.items() if v != "ready"}
    assert not not_ready, json.dumps(not_ready, default=str)[:6000]

    # One job per asset, whatever was lost or crashed on the way.
    jobs = mediaconvert._jobs.values()
    per_asset: dict[str, int] = {}
    for job in jobs:
        asset = job.user_metadata.get("migrator_asset")
        per_asset[asset] = per_asset.get(asset, 0) + 1
    assert {r["id"] for r in rows} <= set(per_asset) and max(per_asset.values()) == 1, per_asset

    secret = aws("secretsmanager").get_secret_value(SecretId=outputs["PlaybackKeySecretArn"])["SecretString"]
    key = signing_key_from_secret(secret)
    private = [r for r in rows if r.get("privacy") in ("private", "signed", "unlisted")]
    public = [r for r in rows if r.get("privacy") == "public"]
    assert private and public, "the library needs both to prove the split"
    captioned = [r for r in rows if any(t.get("kind") != "chapters" for t in r.get("tracks", ()))]
    assert captioned, "no captions in the library: the test would prove nothing"

    for row in rows:
        playback = items[row["id"]]["playback_info"]
        hls = playback["hls"]
        assert hls.startswith(aws_stack.edge.url)
        folder = hls[: -len("index.m3u8")]
        if row in public:
            assert playback["policy"] == "public" and "/public/" in hls
            master = requests.get(hls, timeout=10)
            assert master.status_code == 200, (row["id"], master.status_code)
            cookies = None
        else:
            assert playback["policy"] == "signed" and "/signed/" in hls
            refused = requests.get(hls, timeout=10)
            assert refused.status_code == 403 and "<Code>MissingKey</Code>" in refused.text, refused.text
            policy = CustomPolicy(folder + "*", int(time.time() + 600))
            master = requests.get(sign_custom_url(hls, key, policy), timeout=10)
            assert master.status_code == 200, (row["id"], master.text[:200])
            cookies = custom_cookies(key, policy)  # what a player holds: one policy over the video's folder
            poster = requests.get(playback["thumbnail"], cookies=cookies, timeout=10)  # by cookie
            assert poster.status_code == 200 and image_kind(poster.content).__class__ is not str, row["id"]
            if row.get("thumbnail_url"):  # the row's own image, as the source serves it, not the frame capture
                assert poster.content == files.read(row["thumbnail_url"]), row["id"]

        variants, languages = _renditions(master.text)
        assert len(variants) >= 3, master.text
        for variant in variants:
            streams = _ffprobe(folder + variant, cookies)["streams"]
            assert {s["codec_type"] for s in streams} >= {"video"}, (row["id"], variant)
        wanted = sorted(t["language"] for t in row.get("tracks", ()) if t.get("kind") != "chapters")
        assert sorted(languages) == wanted, (row["id"], languages, wanted)

    outside = requests.get(f"{aws_stack.edge.url}/signed/nothing/index.m3u8", timeout=10)
    assert outside.status_code == 403


def test_a_forged_job_event_through_the_public_webhook_route_is_refused(aws_stack):
    """The webhook's public route takes nothing for the aws target (its events come only through EventBridge)."""
    url = aws_stack.outputs["WebhookUrl"]
    forged = {"source": "aws.mediaconvert", "detail-type": "MediaConvert Job State Change", "detail": {}}
    answer = requests.post(url, data=json.dumps(forged), headers={"Content-Type": "application/json"}, timeout=30)
    assert answer.status_code in (401, 503), answer.text
