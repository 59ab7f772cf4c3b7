"""The MediaConvert simulator (infra/sim/mediaconvert.py) driven by boto3's `mediaconvert` client, AWS's own SDK.

botocore serialises every call from the service model and parses every answer back into it (timestamps, the
error's name from `x-amzn-ErrorType`), so a simulator whose paths, shapes or error form drift from the model fails
here. S3 and EventBridge are stand-ins in memory. Most jobs here end before any transcode (a missing input, a file
that is no video); the captions, frame-capture and MP4 jobs transcode the two-second sample with ffmpeg into the
in-memory S3; tests/emulator/test_mediaconvert_sim.py transcodes into the emulator's S3 and routes the events.
The command line (infra/sim/mediaconvert_cli.py) is started as a process and driven the same way.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from botocore.exceptions import ConnectionClosedError

from infra.sim.mediaconvert import MediaConvertConfig, MediaConvertSim
from tests.probe.media import make_media
from tests.sim.mediaconvert_support import MemoryS3, RecordingEvents, sdk_client
from tests.sim.support import wait_for

REPO = Path(__file__).resolve().parents[2]

ROLE = "arn:aws:iam::111122223333:role/MediaConvertRole"


_client = sdk_client


@pytest.fixture
def mediaconvert():
    """start(s3_objects=None, **config) -> (sim, client on the account endpoint DescribeEndpoints gave)."""
    started: list[MediaConvertSim] = []

    def start(s3_objects: dict | None = None, attempts: int = 1, **config):
        sim = MediaConvertSim(MediaConvertConfig(**config), s3=MemoryS3(s3_objects), events=RecordingEvents())
        started.append(sim.start())
        regional = _client(sim.url)
        endpoint = regional.describe_endpoints()["Endpoints"][0]["Url"]
        return sim, _client(endpoint, attempts)

    yield start
    for sim in started:
        sim.stop()


def hls_settings(
    file_input: str = "s3://in/missing.mp4",
    outputs: list[dict] | None = None,
    destination: str = "s3://out/hls/main",
    segment_length: int = 2,
) -> dict:
    """A job's Settings: one input, one HLS group (tests/emulator/test_mediaconvert_sim.py makes its jobs with it)."""
    return {
        "Inputs": [{"FileInput": file_input}],
        "OutputGroups": [
            {
                "Name": "Apple HLS",
                "OutputGroupSettings": {
                    "Type": "HLS_GROUP_SETTINGS",
                    "HlsGroupSettings": {"Destination": destination, "SegmentLength": segment_length},
                },
                "Outputs": outputs or [{"NameModifier": "v1", "ContainerSettings": {"Container": "M3U8"}}],
            }
        ],
    }


def _status(client, job_id: str) -> str:
    return client.get_job(Id=job_id)["Job"]["Status"]


def test_sdk_finds_the_account_endpoint_and_creates_gets_and_lists_a_job(mediaconvert):
    sim, client = mediaconvert()
    assert client.meta.endpoint_url == sim.url
    job = client.create_job(Role=ROLE, Settings=hls_settings(), UserMetadata={"row": "lib/1"})["Job"]
    assert job["Status"] == "SUBMITTED" and job["Role"] == ROLE and job["UserMetadata"] == {"row": "lib/1"}
    assert job["Arn"] == f"arn:aws:mediaconvert:us-east-1:111122223333:jobs/{job['Id']}"
    assert job["Queue"] == "arn:aws:mediaconvert:us-east-1:111122223333:queues/Default"
    assert job["Settings"]["Inputs"][0]["FileInput"] == "s3://in/missing.mp4"
    assert isinstance(job["CreatedAt"], datetime) and isinstance(job["Timing"]["SubmitTime"], datetime)
    assert job["ClientRequestToken"]  # boto3 fills the idempotency token in (the model's idempotencyToken)

    # The input is not in S3: the job ends ERROR with the documented file access error.
    assert wait_for(lambda: _status(client, job["Id"]) == "ERROR", timeout=10)
    ended = client.get_job(Id=job["Id"])["Job"]
    assert ended["ErrorCode"] == 1010 and ended["ErrorMessage"].startswith("Unable to open input file [s3://in/")
    assert {"SubmitTime", "StartTime", "FinishTime"} <= set(ended["Timing"])
    assert "JobPercentComplete" not in ended
    listed = client.list_jobs()
    assert [j["Id"] for j in listed["Jobs"]] == [job["Id"]] and "NextToken" not in listed

    assert wait_for(lambda: len(sim.events.client.entries) == 2, timeout=3)  # the event follows the change
    statuses = [d["status"] for d in sim.events.client.details()]
    assert statuses == ["PROGRESSING", "ERROR"]
    error = sim.events.client.details()[-1]
    assert error["errorCode"] == 1010 and error["jobId"] == job["Id"] and error["userMetadata"] == {"row": "lib/1"}
    entry = sim.events.client.entries[-1]
    assert (entry["Source"], entry["DetailType"]) == ("aws.mediaconvert", "MediaConvert Job State Change")
    assert entry["Resources"] == [job["Arn"]]


def test_a_file_that_is_no_video_ends_the_job_in_error_with_the_probes_reason(mediaconvert):
    _sim, client = mediaconvert(s3_objects={("in", "junk.mp4"): b"this is not a video file" * 40})
    job = client.create_job(Role=ROLE, Settings=hls_settings("s3://in/junk.mp4"))["Job"]
    assert wait_for(lambda: _status(client, job["Id"]) == "ERROR", timeout=20)
    ended = client.get_job(Id=job["Id"])["Job"]
    assert ended["ErrorCode"] == 1010 and "Failed probe/open" in ended["ErrorMessage"]


def test_a_client_request_token_reused_within_the_window_answers_the_original_job(mediaconvert):
    _sim, client = mediaconvert(idempotency_window_s=0.5)
    first = client.create_job(Role=ROLE, Settings=hls_settings(), ClientRequestToken="row-lib-7")["Job"]
    again = client.create_job(Role=ROLE, Settings=hls_settings(), ClientRequestToken="row-lib-7")["Job"]
    assert again["Id"] == first["Id"]
    assert len(client.list_jobs()["Jobs"]) == 1
    time.sleep(0.6)  # past the window ("within one minute of a successful request", here half a second)
    later = client.create_job(Role=ROLE, Settings=hls_settings(), ClientRequestToken="row-lib-7")["Job"]
    assert later["Id"] != first["Id"]
    # Without a token of the caller's, boto3 makes a new one each call: two calls, two jobs.
    client.create_job(Role=ROLE, Settings=hls_settings())
    client.create_job(Role=ROLE, Settings=hls_settings())
    assert len(client.list_jobs()["Jobs"]) == 4


def test_list_jobs_pages_newest_first_and_filters_by_status_and_queue(mediaconvert):
    _sim, client = mediaconvert(queues={"Default": 2, "Slow": 1})
    made = [client.create_job(Role=ROLE, Settings=hls_settings())["Job"]["Id"] for _ in range(3)]
    slow = client.create_job(Role=ROLE, Settings=hls_settings(), Queue="Slow")["Job"]
    assert slow["Queue"].endswith(":queues/Slow")
    made.append(slow["Id"])
    first = client.list_jobs(MaxResults=3)
    assert [j["Id"] for j in first["Jobs"]] == made[::-1][:3]
    second = client.list_jobs(MaxResults=3, NextToken=first["NextToken"])
    assert [j["Id"] for j in second["Jobs"]] == [made[0]] and "NextToken" not in second
    assert [j["Id"] for j in client.list_jobs(Order="ASCENDING")["Jobs"]] == made
    assert [j["Id"] for j in client.list_jobs(Queue="Slow")["Jobs"]] == [slow["Id"]]
    assert wait_for(lambda: len(client.list_jobs(Status="ERROR")["Jobs"]) == 4, timeout=10)
    assert client.list_jobs(Status="COMPLETE")["Jobs"] == []


def test_a_queue_runs_its_concurrency_at_once_and_the_rest_wait_submitted(mediaconvert):
    sim, client = mediaconvert(queues={"Default": 1}, encode_delay_s=0.6)
    one = client.create_job(Role=ROLE, Settings=hls_settings())["Job"]["Id"]
    two = client.create_job(Role=ROLE, Settings=hls_settings())["Job"]["Id"]
    assert wait_for(lambda: _status(client, one) == "PROGRESSING", timeout=3)
    running = client.get_job(Id=one)["Job"]
    assert running["JobPercentComplete"] == 0 and running["CurrentPhase"] == "PROBING"
    assert "StartTime" in running["Timing"] and "FinishTime" not in running["Timing"]
    assert _status(client, two) == "SUBMITTED"
    assert wait_for(lambda: _status(client, two) == "ERROR", timeout=10)
    assert sim.runner.most_running == 1


@pytest.mark.parametrize(
    "call, exception, status",
    [
        # Two outputs in a group: "Name modifier is required" (the Output model).
        (
            lambda c: c.create_job(Role=ROLE, Settings=hls_settings(outputs=[{}, {}])),
            "BadRequestException",
            400,
        ),
        (
            lambda c: c.create_job(Role=ROLE, Settings=hls_settings(file_input="ftp://in/a.mp4")),
            "BadRequestException",
            400,
        ),
        (
            lambda c: c.create_job(Role=ROLE, Settings=hls_settings(), ClientRequestToken="x" * 65),
            "BadRequestException",
            400,
        ),
        (lambda c: c.create_job(Role=ROLE, Settings=hls_settings(), Priority=51), "BadRequestException", 400),
        (lambda c: c.create_job(Role=ROLE, Settings=hls_settings(), Queue="Nope"), "NotFoundException", 404),
        (lambda c: c.list_jobs(MaxResults=21), "BadRequestException", 400),  # "up to twenty"
        (lambda c: c.list_jobs(NextToken="not-a-token"), "BadRequestException", 400),
        (lambda c: c.get_job(Id="1536964333549-opn151"), "NotFoundException", 404),
    ],
)
def test_a_bad_request_is_answered_in_the_models_error_form(mediaconvert, call, exception, status):
    _sim, client = mediaconvert()
    with pytest.raises(getattr(client.exceptions, exception)) as refused:
        call(client)
    error = refused.value.response
    assert error["Error"]["Code"] == exception and error["ResponseMetadata"]["HTTPStatusCode"] == status
    assert error["Error"]["Message"]
    assert client.list_jobs()["Jobs"] == []  # nothing was made


# --- captions, frame capture, MP4 (real transcodes of the sample into the in-memory S3) ---------------------------

WEBVTT = b"WEBVTT\n\n1\n00:00:00.000 --> 00:00:01.000\nHello\n\n00:00:01.000 --> 00:00:01.900\nWorld\n"
SRT = b"1\n00:00:00,200 --> 00:00:01,000\nHola\n\n2\n00:00:01,000 --> 00:00:01,500\nMundo\n"


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> bytes:
    """The two-second 64x64 sample (video and audio), as bytes for the in-memory S3."""
    return make_media(tmp_path_factory.mktemp("mc-media"))["video"].read_bytes()


def caption_selector(source_file: str, source_type: str = "WEBVTT", **file_settings) -> dict:
    """A CaptionSelector of a sidecar file (tests/emulator/test_mediaconvert_sim.py makes its jobs with it)."""
    files = {"SourceFile": source_file, **file_settings}
    return {"SourceSettings": {"SourceType": source_type, "FileSourceSettings": files}}


def caption_output(modifier: str, selector: str, language: str, label: str | None = None, kind: str = "WEBVTT"):
    """An HLS output holding one WebVTT captions track and nothing else."""
    description = {
        "CaptionSelectorName": selector,
        "DestinationSettings": {"DestinationType": kind},
        "LanguageCode": language,
    }
    if label:
        description["LanguageDescription"] = label
    return {"NameModifier": modifier, "ContainerSettings": {"Container": "M3U8"}, "CaptionDescriptions": [description]}


def frame_capture_group(destination: str, modifier: str = "_thumb", **capture) -> dict:
    """A file group with one frame-capture output (RAW container, FRAME_CAPTURE codec)."""
    settings = {"FramerateNumerator": 1, "FramerateDenominator": 1, "MaxCaptures": 2, "Quality": 80, **capture}
    settings = {name: value for name, value in settings.items() if value is not None}  # None: leave it unset
    return {
        "Name": "File Group",
        "OutputGroupSettings": {"Type": "FILE_GROUP_SETTINGS", "FileGroupSettings": {"Destination": destination}},
        "Outputs": [
            {
                "NameModifier": modifier,
                "ContainerSettings": {"Container": "RAW"},
                "VideoDescription": {
                    "CodecSettings": {"Codec": "FRAME_CAPTURE", "FrameCaptureSettings": settings},
                },
            }
        ],
    }


def captions_settings(file_input: str, destination: str, selectors: dict, caption_outputs: list[dict]) -> dict:
    """One input with its caption selectors; an HLS group of one video output (v1) and the caption outputs."""
    settings = hls_settings(file_input, destination=destination, segment_length=1)
    settings["Inputs"][0]["CaptionSelectors"] = selectors
    video = {"NameModifier": "v1", "ContainerSettings": {"Container": "M3U8"}}
    settings["OutputGroups"][0]["Outputs"] = [video, *caption_outputs]
    return settings


def _ended(client, job_id: str, timeout: float = 60) -> dict:
    assert wait_for(lambda: _status(client, job_id) in ("COMPLETE", "ERROR", "CANCELED"), timeout=timeout, step=0.1)
    return client.get_job(Id=job_id)["Job"]


def test_a_captions_job_writes_webvtt_renditions_and_the_master_names_them(mediaconvert, sample):
    objects = {("in", "v.mp4"): sample, ("in", "en.vtt"): WEBVTT, ("in", "es.srt"): SRT}
    sim, client = mediaconvert(s3_objects=objects)
    selectors = {
        "Captions Selector 1": caption_selector("s3://in/en.vtt"),
        # TimeDelta in milliseconds: every SRT time 500 ms later.
        "Captions Selector 2": caption_selector("s3://in/es.srt", "SRT", TimeDelta=500, TimeDeltaUnits="MILLISECONDS"),
    }
    outputs = [
        caption_output("_en", "Captions Selector 1", "ENG", "English"),
        caption_output("_es", "Captions Selector 2", "SPA", "Español"),
    ]
    job = client.create_job(
        Role=ROLE, Settings=captions_settings("s3://in/v.mp4", "s3://out/hls/main", selectors, outputs)
    )
    ended = _ended(client, job["Job"]["Id"])
    assert ended["Status"] == "COMPLETE", ended.get("ErrorMessage")
    keys = {k for b, k in sim.runner._s3.objects if b == "out"}
    assert {"hls/main.m3u8", "hls/mainv1.m3u8", "hls/main_en.m3u8", "hls/main_es.m3u8"} <= keys
    assert {"hls/main_en_00001.vtt", "hls/main_es_00001.vtt"} <= keys  # Large segments: 300 s, one for 2 s

    master = sim.runner._s3.objects["out", "hls/main.m3u8"].decode().splitlines()
    media = [line for line in master if line.startswith("#EXT-X-MEDIA:")]
    assert media == [
        '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",LANGUAGE="eng",NAME="English",DEFAULT=YES,AUTOSELECT=YES,'
        'URI="main_en.m3u8"',
        '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",LANGUAGE="spa",NAME="Español",DEFAULT=NO,AUTOSELECT=YES,'
        'URI="main_es.m3u8"',
    ]
    streams = [line for line in master if line.startswith("#EXT-X-STREAM-INF:")]
    assert len(streams) == 1 and streams[0].endswith(',SUBTITLES="subs"')
    assert "main_en.m3u8" not in [line for line in master if not line.startswith("#")]  # not a variant stream

    english = sim.runner._s3.objects["out", "hls/main_en_00001.vtt"].decode()
    assert english.startswith("WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:") and "00:00:00.000 --> 00:00:01.000\nHello" in english
    spanish = sim.runner._s3.objects["out", "hls/main_es_00001.vtt"].decode()
    assert "00:00:00.700 --> 00:00:01.500\nHola" in spanish and "00:00:01.500 --> 00:00:02.000\nMundo" in spanish
    playlist = sim.runner._s3.objects["out", "hls/main_en.m3u8"].decode()
    assert "#EXT-X-PLAYLIST-TYPE:VOD" in playlist and "main_en_00001.vtt" in playlist

    # GetJob: the captions outputs have a duration and no videoDetails; the event names every playlist.
    details = ended["OutputGroupDetails"][0]["OutputDetails"]
    assert [("VideoDetails" in d) for d in details] == [True, False, False]
    complete = sim.events.client.details()[-1]
    assert complete["status"] == "COMPLETE"
    group = complete["outputGroupDetails"][0]
    assert group["type"] == "HLS_GROUP" and group["playlistFilePaths"] == ["s3://out/hls/main.m3u8"]
    assert [d["outputFilePaths"] for d in group["outputDetails"]] == [
        ["s3://out/hls/mainv1.m3u8"],
        ["s3://out/hls/main_en.m3u8"],
        ["s3://out/hls/main_es.m3u8"],
    ]


def test_match_video_cuts_the_captions_into_the_video_segments_length(mediaconvert, sample):
    sim, client = mediaconvert(s3_objects={("in", "v.mp4"): sample, ("in", "en.vtt"): WEBVTT})
    settings = captions_settings(
        "s3://in/v.mp4",
        "s3://out/hls/main",
        {"Captions Selector 1": caption_selector("s3://in/en.vtt")},
        [caption_output("_en", "Captions Selector 1", "ENG")],
    )
    settings["OutputGroups"][0]["OutputGroupSettings"]["HlsGroupSettings"]["CaptionSegmentLengthControl"] = (
        "MATCH_VIDEO"
    )
    ended = _ended(client, client.create_job(Role=ROLE, Settings=settings)["Job"]["Id"])
    assert ended["Status"] == "COMPLETE", ended.get("ErrorMessage")
    first = sim.runner._s3.objects["out", "hls/main_en_00001.vtt"].decode()
    second = sim.runner._s3.objects["out", "hls/main_en_00002.vtt"].decode()
    assert "Hello" in first and "World" not in first and "World" in second and "Hello" not in second


@pytest.mark.parametrize(
    "objects, reason",
    [
        ({}, "the file could not be read"),  # no such key
        ({("in", "en.vtt"): b"00:00:00.000 --> 00:00:01.000\nno header\n"}, "No parser found for WEBVTT captions"),
        ({("in", "en.vtt"): b"\xff\xfe not utf-8"}, "No parser found for WEBVTT captions"),
    ],
)
def test_a_caption_file_that_cannot_be_read_ends_the_job_in_error_1010(mediaconvert, sample, objects, reason):
    sim, client = mediaconvert(s3_objects={("in", "v.mp4"): sample, **objects})
    settings = captions_settings(
        "s3://in/v.mp4",
        "s3://out/hls/main",
        {"Captions Selector 1": caption_selector("s3://in/en.vtt")},
        [caption_output("_en", "Captions Selector 1", "ENG")],
    )
    ended = _ended(client, client.create_job(Role=ROLE, Settings=settings)["Job"]["Id"])
    assert ended["Status"] == "ERROR" and ended["ErrorCode"] == 1010
    assert ended["ErrorMessage"] == f"Unable to open input file [s3://in/en.vtt]: [Failed probe/open: [{reason}]]"
    assert not [k for b, k in sim.runner._s3.objects if b == "out"]  # nothing written
    assert wait_for(lambda: sim.events.client.details()[-1]["status"] == "ERROR", timeout=3)
    assert sim.events.client.details()[-1]["errorCode"] == 1010


def test_a_frame_capture_and_an_mp4_are_written_as_the_documents_name_them(mediaconvert, sample):
    sim, client = mediaconvert(s3_objects={("in", "v.mp4"): sample})
    settings = hls_settings("s3://in/v.mp4", destination="s3://out/hls/main")
    mp4 = {
        "Name": "File Group",
        "OutputGroupSettings": {
            "Type": "FILE_GROUP_SETTINGS",
            "FileGroupSettings": {"Destination": "s3://out/file/file"},
        },
        "Outputs": [
            {
                "ContainerSettings": {"Container": "MP4"},
                "VideoDescription": {"Height": 32, "CodecSettings": {"Codec": "H_264"}},
                "AudioDescriptions": [{"CodecSettings": {"Codec": "AAC"}}],
            }
        ],
    }
    # Destination without a base name: the input's ("v"); one capture a second, at most 2.
    settings["OutputGroups"] += [frame_capture_group("s3://out/thumbs/"), mp4]
    ended = _ended(client, client.create_job(Role=ROLE, Settings=settings)["Job"]["Id"])
    assert ended["Status"] == "COMPLETE", ended.get("ErrorMessage")
    objects = sim.runner._s3.objects
    images = sorted(k for b, k in objects if b == "out" and k.startswith("thumbs/"))
    assert images == ["thumbs/v_thumb.0000000.jpg", "thumbs/v_thumb.0000001.jpg"]
    assert all(objects["out", k][:3] == b"\xff\xd8\xff" for k in images)  # JPEG's SOI marker
    assert objects["out", "file/file.mp4"][4:8] == b"ftyp"

    capture, file = ended["OutputGroupDetails"][1:]
    assert capture["OutputDetails"][0]["VideoDetails"] == {"WidthInPx": 64, "HeightInPx": 64}
    assert file["OutputDetails"][0]["VideoDetails"] == {"WidthInPx": 32, "HeightInPx": 32}
    groups = sim.events.client.details()[-1]["outputGroupDetails"]
    assert [g["type"] for g in groups] == ["HLS_GROUP", "FILE_GROUP", "FILE_GROUP"]
    assert "playlistFilePaths" not in groups[1] and "playlistFilePaths" not in groups[2]  # "not returned"
    # "the file name and path of the final captured image"; the MP4's own file.
    assert groups[1]["outputDetails"][0]["outputFilePaths"] == ["s3://out/thumbs/v_thumb.0000001.jpg"]
    assert groups[2]["outputDetails"][0]["outputFilePaths"] == ["s3://out/file/file.mp4"]


def _with_group(group: dict) -> dict:
    settings = hls_settings()
    settings["OutputGroups"].append(group)
    return settings


def _captions(**changes) -> dict:
    selector = caption_selector(changes.pop("source_file", "s3://in/en.vtt"), changes.pop("source_type", "WEBVTT"))
    output = caption_output(
        "_en", changes.pop("selector", "Captions Selector 1"), "ENG", kind=changes.pop("kind", "WEBVTT")
    )
    output.update(changes)
    return captions_settings("s3://in/v.mp4", "s3://out/hls/main", {"Captions Selector 1": selector}, [output])


@pytest.mark.parametrize(
    "settings, words",
    [
        # "MediaConvert doesn't support jobs that consist only of a frame capture output".
        (
            {"Inputs": [{"FileInput": "s3://in/v.mp4"}], "OutputGroups": [frame_capture_group("s3://out/thumbs/")]},
            "only of a frame capture",
        ),
        # The rate is needed here; Quality is 1 to 100.
        (_with_group(frame_capture_group("s3://out/thumbs/", FramerateNumerator=None)), "framerateNumerator"),
        (_with_group(frame_capture_group("s3://out/thumbs/", Quality=101)), "quality must be an integer from 1"),
        (_captions(selector="Captions Selector 9"), "captionSelectorName"),  # names no selector of the input
        (_captions(kind="SCC"), "destinationType"),  # WebVTT is the HLS captions modelled
        (_captions(source_type="SCC"), "sourceType"),
        (_captions(source_file="s3://in/en.txt"), "sourceFile"),  # not the model's SourceFile pattern
        (_captions(VideoDescription={}), "an output of their own"),
    ],
)
def test_a_job_the_simulator_cannot_run_is_refused_before_it_is_made(mediaconvert, settings, words):
    _sim, client = mediaconvert()
    with pytest.raises(client.exceptions.BadRequestException) as refused:
        client.create_job(Role=ROLE, Settings=settings)
    assert words in refused.value.response["Error"]["Message"]
    assert client.list_jobs()["Jobs"] == []


# --- CancelJob ------------------------------------------------------------------------------------------------


def test_cancel_job_cancels_a_submitted_and_a_progressing_job_and_sends_canceled(mediaconvert):
    sim, client = mediaconvert(queues={"Default": 1}, encode_delay_s=5)
    running = client.create_job(Role=ROLE, Settings=hls_settings(), UserMetadata={"row": "lib/1"})["Job"]["Id"]
    waiting = client.create_job(Role=ROLE, Settings=hls_settings())["Job"]["Id"]
    assert wait_for(lambda: _status(client, running) == "PROGRESSING", timeout=3)
    assert _status(client, waiting) == "SUBMITTED"

    assert client.cancel_job(Id=waiting)["ResponseMetadata"]["HTTPStatusCode"] == 202
    assert client.cancel_job(Id=running)["ResponseMetadata"]["HTTPStatusCode"] == 202
    for job_id in (waiting, running):
        job = client.get_job(Id=job_id)["Job"]
        assert job["Status"] == "CANCELED" and "FinishTime" in job["Timing"] and "ErrorCode" not in job
    time.sleep(0.3)  # the running job's worker sees the cancel and stops: nothing changes after it
    assert _status(client, running) == "CANCELED" and _status(client, waiting) == "CANCELED"
    assert sim.runner.running == 0

    canceled = [d for d in sim.events.client.details() if d["status"] == "CANCELED"]
    assert {d["jobId"] for d in canceled} == {running, waiting}
    first = next(d for d in canceled if d["jobId"] == running)
    assert set(first) == {"timestamp", "accountId", "queue", "jobId", "status", "userMetadata"}
    assert first["userMetadata"] == {"row": "lib/1"}
    assert [d["status"] for d in sim.events.client.details() if d["jobId"] == running] == ["PROGRESSING", "CANCELED"]
    assert [j["Id"] for j in client.list_jobs(Status="CANCELED")["Jobs"]] == [waiting, running]

    # Canceled already: ConflictException; an unknown job: NotFoundException.
    with pytest.raises(client.exceptions.ConflictException) as conflict:
        client.cancel_job(Id=running)
    assert conflict.value.response["ResponseMetadata"]["HTTPStatusCode"] == 409
    with pytest.raises(client.exceptions.NotFoundException):
        client.cancel_job(Id="1536964333549-opn151")


def test_an_ended_job_cannot_be_canceled(mediaconvert):
    _sim, client = mediaconvert()
    job_id = client.create_job(Role=ROLE, Settings=hls_settings())["Job"]["Id"]
    assert _ended(client, job_id, timeout=10)["Status"] == "ERROR"  # the input is missing
    with pytest.raises(client.exceptions.ConflictException):
        client.cancel_job(Id=job_id)
    assert _status(client, job_id) == "ERROR"


# --- faults ---------------------------------------------------------------------------------------------------


def test_a_throttled_create_is_answered_429_and_makes_no_job(mediaconvert):
    sim, client = mediaconvert(create_throttle_rate=1.0)
    with pytest.raises(client.exceptions.TooManyRequestsException) as refused:
        client.create_job(Role=ROLE, Settings=hls_settings())
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429
    assert sim.jobs() == [] and client.list_jobs()["Jobs"] == []


def test_a_lost_create_answer_leaves_the_job_made_and_a_retry_with_its_token_finds_it(mediaconvert):
    sim, client = mediaconvert(lose_create_answer_rate=1.0)
    with pytest.raises(ConnectionClosedError):
        client.create_job(Role=ROLE, Settings=hls_settings(), ClientRequestToken="row-lib-7")
    assert len(sim.jobs()) == 1 and sim.lost_answers >= 1  # made, though its answer never came

    # boto3's own retries keep the token: however many answers are lost, one job.
    sim, client = mediaconvert(lose_create_answer_rate=0.5, seed=3, attempts=10)
    for _ in range(4):
        client.create_job(Role=ROLE, Settings=hls_settings())
    assert len(sim.jobs()) == 4 and sim.lost_answers > 0


def _throttle_pattern(seed: int) -> list[bool]:
    sim = MediaConvertSim(MediaConvertConfig(create_throttle_rate=0.5, seed=seed), s3=MemoryS3()).start()
    try:
        client, pattern = _client(sim.url), []
        for _ in range(12):
            try:
                client.create_job(Role=ROLE, Settings=hls_settings())
                pattern.append(False)
            except client.exceptions.TooManyRequestsException:
                pattern.append(True)
        return pattern
    finally:
        sim.stop()


def test_the_fault_draws_repeat_with_their_seed():
    assert _throttle_pattern(11) == _throttle_pattern(11)
    assert True in _throttle_pattern(11) and False in _throttle_pattern(11)


# --- the command line -----------------------------------------------------------------------------------------


def test_the_command_line_prints_its_url_serves_the_sdk_and_stops_on_sigterm():
    argv = [sys.executable, "-m", "infra.sim.mediaconvert_cli", "--port", "0", "--queue", "Default=1"]
    argv += ["--queue", "Slow=1", "--create-throttle-rate", "0", "--seed", "1"]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("mediaconvert-sim listening on http://127.0.0.1:"), line + proc.stderr.read()
        url = line.split()[-1]
        client = _client(url)
        assert client.describe_endpoints()["Endpoints"][0]["Url"] == url
        job = client.create_job(Role=ROLE, Settings=hls_settings(), Queue="Slow")["Job"]
        assert job["Queue"].endswith(":queues/Slow")
        # No --s3-endpoint: nothing to read the input with, so the job ends in ERROR.
        assert _ended(client, job["Id"], timeout=10)["Status"] == "ERROR"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


@pytest.mark.parametrize("flags", [["--queue", "Default=0"], ["--lose-create-answer-rate", "2"], ["--queue", "x"]])
def test_the_command_line_refuses_a_bad_setting(flags):
    done = subprocess.run(
        [sys.executable, "-m", "infra.sim.mediaconvert_cli", *flags], cwd=REPO, capture_output=True, timeout=30
    )
    assert done.returncode == 2 and b"mediaconvert_cli" in done.stderr
