"""The MediaConvert simulator (infra/sim/mediaconvert.py) driven by boto3's `mediaconvert` client, AWS's own SDK.

botocore serialises every call from the service model and parses every answer back into it (timestamps, the
error's name from `x-amzn-ErrorType`), so a simulator whose paths, shapes or error form drift from the model fails
here. S3 and EventBridge are stand-ins in memory: the jobs here end before any transcode (a missing input, a file
that is no video), so they need no emulator; tests/emulator/test_mediaconvert_sim.py transcodes for real.
"""

from __future__ import annotations

import json
import time
from datetime import datetime

import boto3
import pytest
from botocore.config import Config

from infra.sim.mediaconvert import MediaConvertConfig, MediaConvertSim
from tests.sim.support import wait_for

ROLE = "arn:aws:iam::111122223333:role/MediaConvertRole"


class MemoryS3:
    """The two S3 calls the transcode makes, over a dict; a missing key fails as boto3's download does."""

    def __init__(self, objects: dict[tuple[str, str], bytes] | None = None) -> None:
        self.objects = dict(objects or {})

    def download_file(self, Bucket: str, Key: str, Filename: str) -> None:
        if (Bucket, Key) not in self.objects:
            raise FileNotFoundError(f"s3://{Bucket}/{Key}")
        with open(Filename, "wb") as out:
            out.write(self.objects[Bucket, Key])

    def upload_file(self, Filename: str, Bucket: str, Key: str, ExtraArgs: dict | None = None) -> None:
        with open(Filename, "rb") as data:
            self.objects[Bucket, Key] = data.read()


class RecordingEvents:
    """PutEvents, recorded and accepted."""

    def __init__(self) -> None:
        self.entries: list[dict] = []

    def put_events(self, Entries: list[dict]) -> dict:
        self.entries += Entries
        return {"FailedEntryCount": 0, "Entries": [{"EventId": str(len(self.entries))} for _ in Entries]}

    def details(self) -> list[dict]:
        return [json.loads(e["Detail"]) for e in self.entries]


def _client(url: str):
    return boto3.client(
        "mediaconvert",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"max_attempts": 1}),
    )


@pytest.fixture
def mediaconvert():
    """start(s3_objects=None, **config) -> (sim, client on the account endpoint DescribeEndpoints gave)."""
    started: list[MediaConvertSim] = []

    def start(s3_objects: dict | None = None, **config):
        sim = MediaConvertSim(MediaConvertConfig(**config), s3=MemoryS3(s3_objects), events=RecordingEvents())
        started.append(sim.start())
        regional = _client(sim.url)
        endpoint = regional.describe_endpoints()["Endpoints"][0]["Url"]
        return sim, _client(endpoint)

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
