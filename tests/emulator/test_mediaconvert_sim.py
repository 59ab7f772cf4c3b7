"""The MediaConvert simulator transcoding for real: the emulator's S3 in and out, its EventBridge carrying the events.

A two-second sample (ffmpeg's lavfi testsrc and a sine, tests/probe/media.py) goes into the emulator's S3; boto3's
`mediaconvert` client makes an HLS job of it with two outputs; the job completes; ffprobe reads the multivariant
playlist and each output's playlist from the objects written (downloaded to a temporary directory); and the job's
PROGRESSING and COMPLETE events arrive at an SQS queue through an EventBridge rule, as a rule in the stack will route
them. A file cut short ends its job in ERROR, its ERROR event routed the same way. A job with a WebVTT and an SRT
sidecar file and a frame capture writes caption renditions ffprobe reads as WebVTT, a multivariant playlist that
names them as subtitles, and JPEG thumbnails, all in the emulator's S3; its COMPLETE event names the multivariant
playlist and the last image.

EventBridge refuses PutEvents for an `aws.` source from anyone but AWS itself, and the emulator (ministack) refuses
it the same way (NotAuthorizedForSourceException): the last test shows it. So the routed jobs run with the
simulator's event source set to `migrator.sim.mediaconvert`, and the rule matches that; everything else in the event
is MediaConvert's.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from infra.emulator import client
from infra.sim.mediaconvert import MediaConvertConfig, MediaConvertSim
from infra.sim.mediaconvert_jobs import DETAIL_TYPE, Events, Job
from infra.sim.mediaconvert_transcode import Plan
from tests.conftest import unique
from tests.probe.media import make_media
from tests.sim.support import wait_for
from tests.sim.test_sdk_mediaconvert import (
    SRT,
    WEBVTT,
    caption_output,
    caption_selector,
    captions_settings,
    frame_capture_group,
    hls_settings,
)

ROLE = "arn:aws:iam::111122223333:role/MediaConvertRole"
LOCAL_SOURCE = "migrator.sim.mediaconvert"


@pytest.fixture
def routed(endpoint, tmp_path):
    """(s3, sqs, queue url, in bucket, out bucket, media files): an SQS queue that a rule on the default bus fills
    with every job state change from LOCAL_SOURCE."""
    s3, sqs, events = client("s3", endpoint), client("sqs", endpoint), client("events", endpoint)
    in_bucket, out_bucket = unique("mc-in"), unique("mc-out")
    for bucket in (in_bucket, out_bucket):
        s3.create_bucket(Bucket=bucket)
    media = make_media(tmp_path / "media")
    s3.upload_file(str(media["video"]), in_bucket, "videos/sample.mp4")
    s3.upload_file(str(media["truncated"]), in_bucket, "videos/cut.mp4")
    queue_url = sqs.create_queue(QueueName=unique("mc-events"))["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    rule = unique("mc-rule")
    pattern = {"source": [LOCAL_SOURCE], "detail-type": [DETAIL_TYPE]}
    events.put_rule(Name=rule, EventPattern=json.dumps(pattern), State="ENABLED")
    events.put_targets(Rule=rule, Targets=[{"Id": "queue", "Arn": queue_arn}])
    yield s3, sqs, queue_url, in_bucket, out_bucket, media
    events.remove_targets(Rule=rule, Ids=["queue"])
    events.delete_rule(Name=rule)
    sqs.delete_queue(QueueUrl=queue_url)


@pytest.fixture
def mediaconvert(endpoint):
    """A started simulator on the emulator's S3 and EventBridge, its events from LOCAL_SOURCE; and a boto3
    mediaconvert client on the account endpoint it gives."""
    sim = MediaConvertSim(
        MediaConvertConfig(event_source=LOCAL_SOURCE, tool_timeout_s=120),
        s3=client("s3", endpoint),
        events=client("events", endpoint),
    ).start()
    regional = client("mediaconvert", sim.url)
    url = regional.describe_endpoints()["Endpoints"][0]["Url"]
    yield sim, client("mediaconvert", url)
    sim.stop()


def _hls_settings(file_input: str, destination: str) -> dict:
    """Two outputs: the input's 64x64, and 32 high at 200 kb/s; both with audio; 1-second segments."""
    audio = {"ContainerSettings": {"Container": "M3U8"}, "AudioDescriptions": [{"CodecSettings": {"Codec": "AAC"}}]}
    small = {"Height": 32, "CodecSettings": {"Codec": "H_264", "H264Settings": {"Bitrate": 200000}}}
    outputs = [{**audio, "NameModifier": "v1"}, {**audio, "NameModifier": "v2", "VideoDescription": small}]
    return hls_settings(file_input, outputs, destination, segment_length=1)


def _wait_ended(mc, job_id: str, timeout: float = 120) -> dict:
    ended: dict = {}

    def done() -> bool:
        ended.update(mc.get_job(Id=job_id)["Job"])
        return ended["Status"] in ("COMPLETE", "ERROR")

    assert wait_for(done, timeout=timeout, step=0.2), ended.get("Status")
    return ended


def _ffprobe(path: Path) -> dict:
    done = subprocess.run(
        ["ffprobe", "-v", "error", "-print_format", "json", "-show_format", "-show_streams", str(path)],
        capture_output=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def _events(sqs, queue_url: str, job_id: str, wanted: set[str], timeout: float = 20) -> dict[str, dict]:
    """The routed events of `job_id`, by status, once every status in `wanted` has arrived."""
    seen: dict[str, dict] = {}
    deadline = time.monotonic() + timeout
    while not wanted <= set(seen) and time.monotonic() < deadline:
        answer = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        for message in answer.get("Messages", []):
            event = json.loads(message["Body"])
            if event["detail"]["jobId"] == job_id:
                seen[event["detail"]["status"]] = event
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
    return seen


def test_a_job_transcodes_the_sample_into_playable_hls_and_its_complete_event_is_routed(routed, mediaconvert, tmp_path):
    s3, sqs, queue_url, in_bucket, out_bucket, _media = routed
    sim, mc = mediaconvert
    settings = _hls_settings(f"s3://{in_bucket}/videos/sample.mp4", f"s3://{out_bucket}/hls/main")
    job = mc.create_job(Role=ROLE, Settings=settings, UserMetadata={"row": "lib/9"})["Job"]
    ended = _wait_ended(mc, job["Id"])
    assert ended["Status"] == "COMPLETE", ended.get("ErrorMessage")
    details = ended["OutputGroupDetails"][0]["OutputDetails"]
    assert [(d["VideoDetails"]["WidthInPx"], d["VideoDetails"]["HeightInPx"]) for d in details] == [(64, 64), (32, 32)]
    assert all(1500 <= d["DurationInMs"] <= 2500 for d in details)

    # Named as MediaConvert names them: <base>.m3u8, <base><NameModifier>.m3u8 and its segments, beside them.
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=out_bucket, Prefix="hls/")["Contents"])
    assert {"hls/main.m3u8", "hls/mainv1.m3u8", "hls/mainv2.m3u8"} <= set(keys)
    assert any(k.startswith("hls/mainv1_") and k.endswith(".ts") for k in keys)
    assert any(k.startswith("hls/mainv2_") and k.endswith(".ts") for k in keys)
    local = tmp_path / "out"
    local.mkdir()
    for key in keys:
        s3.download_file(out_bucket, key, str(local / Path(key).name))
    master = _ffprobe(local / "main.m3u8")
    sizes = {(s["width"], s["height"]) for s in master["streams"] if s["codec_type"] == "video"}
    assert sizes == {(64, 64), (32, 32)}
    assert any(s["codec_type"] == "audio" for s in master["streams"])
    for name, size in (("mainv1.m3u8", (64, 64)), ("mainv2.m3u8", (32, 32))):
        rendition = _ffprobe(local / name)
        video = next(s for s in rendition["streams"] if s["codec_type"] == "video")
        assert (video["codec_name"], video["width"], video["height"]) == ("h264", *size)
        assert 1.5 <= float(rendition["format"]["duration"]) <= 2.5

    events = _events(sqs, queue_url, job["Id"], {"PROGRESSING", "COMPLETE"})
    assert set(events) == {"PROGRESSING", "COMPLETE"}
    complete = events["COMPLETE"]
    assert complete["detail-type"] == DETAIL_TYPE and complete["resources"] == [job["Arn"]]
    detail = complete["detail"]
    assert detail["userMetadata"] == {"row": "lib/9"} and detail["queue"] == job["Queue"]
    group = detail["outputGroupDetails"][0]
    assert group["type"] == "HLS_GROUP" and group["playlistFilePaths"] == [f"s3://{out_bucket}/hls/main.m3u8"]
    assert [d["outputFilePaths"] for d in group["outputDetails"]] == [
        [f"s3://{out_bucket}/hls/mainv1.m3u8"],
        [f"s3://{out_bucket}/hls/mainv2.m3u8"],
    ]
    assert sim.events.refused == []


def test_captions_and_thumbnails_land_in_s3_playable_and_named_in_the_master(routed, mediaconvert, tmp_path):
    s3, sqs, queue_url, in_bucket, out_bucket, _media = routed
    sim, mc = mediaconvert
    s3.put_object(Bucket=in_bucket, Key="captions/en.vtt", Body=WEBVTT)
    s3.put_object(Bucket=in_bucket, Key="captions/es.srt", Body=SRT)
    selectors = {
        "Captions Selector 1": caption_selector(f"s3://{in_bucket}/captions/en.vtt"),
        "Captions Selector 2": caption_selector(f"s3://{in_bucket}/captions/es.srt", "SRT"),
    }
    outputs = [
        caption_output("_en", "Captions Selector 1", "ENG", "English"),
        caption_output("_es", "Captions Selector 2", "SPA", "Spanish"),
    ]
    settings = captions_settings(
        f"s3://{in_bucket}/videos/sample.mp4", f"s3://{out_bucket}/hls/main", selectors, outputs
    )
    settings["OutputGroups"].append(frame_capture_group(f"s3://{out_bucket}/thumbs/poster", MaxCaptures=3))
    job = mc.create_job(Role=ROLE, Settings=settings, UserMetadata={"row": "lib/12"})["Job"]
    ended = _wait_ended(mc, job["Id"])
    assert ended["Status"] == "COMPLETE", ended.get("ErrorMessage")

    local = tmp_path / "out"
    local.mkdir()
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=out_bucket)["Contents"])
    for key in keys:
        s3.download_file(out_bucket, key, str(local / Path(key).name))
    assert {"hls/main_en.m3u8", "hls/main_en_00001.vtt", "hls/main_es.m3u8", "hls/main_es_00001.vtt"} <= set(keys)
    for name in ("main_en.m3u8", "main_es.m3u8"):  # ffprobe follows each caption playlist to its WebVTT segment
        streams = _ffprobe(local / name)["streams"]
        assert [(s["codec_type"], s["codec_name"]) for s in streams] == [("subtitle", "webvtt")]
    assert "Hello" in (local / "main_en_00001.vtt").read_text() and "Hola" in (local / "main_es_00001.vtt").read_text()

    master = (local / "main.m3u8").read_text()
    assert '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",LANGUAGE="eng",NAME="English",DEFAULT=YES' in master
    assert 'LANGUAGE="spa",NAME="Spanish",DEFAULT=NO,AUTOSELECT=YES,URI="main_es.m3u8"' in master
    assert all(line.endswith('SUBTITLES="subs"') for line in master.splitlines() if "EXT-X-STREAM-INF" in line)
    video = [s for s in _ffprobe(local / "main.m3u8")["streams"] if s["codec_type"] == "video"]
    assert [(s["codec_name"], s["width"]) for s in video] == [("h264", 64)]  # the master still plays

    # One capture a second from the first frame, at most 3: a two-second sample gives .0000000 and .0000001.
    images = [k for k in keys if k.startswith("thumbs/")]
    assert images == ["thumbs/poster_thumb.0000000.jpg", "thumbs/poster_thumb.0000001.jpg"]
    for key in images:
        path = local / Path(key).name
        assert path.read_bytes()[:3] == b"\xff\xd8\xff"
        picture = _ffprobe(path)["streams"][0]
        assert (picture["codec_name"], picture["width"], picture["height"]) == ("mjpeg", 64, 64)
    head = s3.head_object(Bucket=out_bucket, Key=images[0])
    assert head["ContentType"] == "image/jpeg"

    events = _events(sqs, queue_url, job["Id"], {"PROGRESSING", "COMPLETE"})
    groups = events["COMPLETE"]["detail"]["outputGroupDetails"]
    assert groups[0]["playlistFilePaths"] == [f"s3://{out_bucket}/hls/main.m3u8"]
    assert groups[0]["outputDetails"][1]["outputFilePaths"] == [f"s3://{out_bucket}/hls/main_en.m3u8"]
    assert groups[1]["type"] == "FILE_GROUP" and "playlistFilePaths" not in groups[1]
    assert groups[1]["outputDetails"][0]["outputFilePaths"] == [f"s3://{out_bucket}/thumbs/poster_thumb.0000001.jpg"]
    assert sim.events.refused == []


def test_a_file_cut_short_ends_its_job_in_error_and_the_error_event_is_routed(routed, mediaconvert):
    s3, sqs, queue_url, in_bucket, out_bucket, _media = routed
    _sim, mc = mediaconvert
    settings = _hls_settings(f"s3://{in_bucket}/videos/cut.mp4", f"s3://{out_bucket}/cut/")
    job = mc.create_job(Role=ROLE, Settings=settings)["Job"]
    ended = _wait_ended(mc, job["Id"])
    assert ended["Status"] == "ERROR" and ended["ErrorCode"] == 1010
    assert ended["ErrorMessage"].startswith(f"Unable to open input file [s3://{in_bucket}/videos/cut.mp4]")
    assert s3.list_objects_v2(Bucket=out_bucket, Prefix="cut/").get("KeyCount", 0) == 0
    events = _events(sqs, queue_url, job["Id"], {"PROGRESSING", "ERROR"})
    assert events["ERROR"]["detail"]["errorCode"] == 1010
    assert events["ERROR"]["detail"]["errorMessage"] == ended["ErrorMessage"]


def test_the_emulator_refuses_the_documented_aws_source_from_put_events(endpoint):
    """Why the routed tests set their own source: `aws.mediaconvert` is AWS's to send, and the emulator says so."""
    events = Events(client("events", endpoint), "us-east-1", "111122223333")
    job = Job(
        id="1536964333549-opn151",
        arn="arn:aws:mediaconvert:us-east-1:111122223333:jobs/1536964333549-opn151",
        queue_arn="arn:aws:mediaconvert:us-east-1:111122223333:queues/Default",
        role=ROLE,
        settings={},
        plan=Plan("s3://in/a.mp4"),
        user_metadata={},
        client_request_token=None,
        priority=0,
        submit_time=time.time(),
        status="PROGRESSING",
    )
    events.send(job)
    assert events.sent == [] and [r["error"] for r in events.refused] == ["NotAuthorizedForSourceException"]
