"""In-memory stand-ins for the two AWS services the MediaConvert simulator calls (its S3 and its EventBridge), for the
tests that drive it without the emulator: tests/sim/test_sdk_mediaconvert.py and the aws target's conformance."""

from __future__ import annotations

import io
import json

import boto3
from botocore.config import Config


def sdk_client(url: str, attempts: int = 1):
    """boto3's `mediaconvert` client on the simulator at `url`, made-up credentials, `attempts` tries a call."""
    return boto3.client(
        "mediaconvert",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"max_attempts": attempts, "mode": "standard"}),
    )


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

    def get_object(self, Bucket: str, Key: str) -> dict:
        """What the aws target reads back (a master playlist), as boto3 answers it: a readable Body."""
        if (Bucket, Key) not in self.objects:
            raise FileNotFoundError(f"s3://{Bucket}/{Key}")
        return {"Body": io.BytesIO(self.objects[Bucket, Key])}


class RecordingEvents:
    """PutEvents, recorded and accepted."""

    def __init__(self) -> None:
        self.entries: list[dict] = []

    def put_events(self, Entries: list[dict]) -> dict:
        self.entries += Entries
        return {"FailedEntryCount": 0, "Entries": [{"EventId": str(len(self.entries))} for _ in Entries]}

    def details(self) -> list[dict]:
        return [json.loads(e["Detail"]) for e in self.entries]

    def delivered(self) -> list[dict]:
        """Each event as a rule's target receives it from EventBridge (id, source, detail-type, detail)."""
        return [
            {
                "id": f"event-{n}",
                "source": e["Source"],
                "detail-type": e["DetailType"],
                "detail": json.loads(e["Detail"]),
            }
            for n, e in enumerate(self.entries)
        ]
