"""The aws target's local parts for a LocalRun (issue 44): the stack's parameters that point at the MediaConvert
simulator (LocalRun's MediaConvertProcess), the real sample video its transcodes need, and its jobs' tally.

The aws target has no provider simulator: the stack's ProviderBaseUrl is a local MediaConvert
(infra/sim/mediaconvert_cli.py) that really transcodes each archived original with ffmpeg into the emulator's S3
and sends its job state changes through the emulator's EventBridge, under a source of its own (EventBridge refuses
an `aws.` source from anyone but AWS: the template's JobEventSource). Viewers reach the output through a local
CloudFront edge (infra/sim/edge.py) on a port reserved before the deploy (the stack's PlaybackBaseUrl), which
LocalRun starts once the distribution exists.

What the summary reads of it is the jobs, through MediaConvert's own ListJobs (the API boto3's `mediaconvert`
client calls): how many per asset (an asset with more than one is a duplicate transcode), and by status.
`jobs_by_asset` and `job_tally` are pure (tests/unit/test_localrun_aws.py).
"""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from migrator.providers.aws_job import ASSET_KEY  # the UserMetadata key the stack's jobs name their asset by

# EventBridge (and the emulator) refuse an `aws.` source from anyone but AWS; the stack's rule listens for this one.
EVENT_SOURCE = "migrator.sim.mediaconvert"
# The queue's concurrent jobs: each job runs one ffmpeg a rendition, on a machine of a few cores.
QUEUE_CONCURRENCY = 4
# The sample video: 2 s, 64x64 at 10 frames a second, with a tone (as tests/probe/media.py makes it): each job's
# three renditions take about a second of ffmpeg.
SAMPLE_VIDEO_S = 2.0


def sample_video(directory: Path) -> Path:
    """A real short video (H.264 and AAC in MP4) for MediaConvert to transcode, made once with ffmpeg."""
    video = directory / "aws-sample-video.mp4"
    if video.exists() and video.stat().st_size > 0:
        return video
    ffmpeg = shutil.which("ffmpeg")
    if not ffmpeg:
        raise RuntimeError("the aws target's local MediaConvert needs ffmpeg (infra/bootstrap.sh installs it)")
    directory.mkdir(parents=True, exist_ok=True)
    partial = video.with_suffix(".partial.mp4")
    subprocess.run(
        [
            *(ffmpeg, "-nostdin", "-hide_banner", "-v", "error", "-y"),
            *("-f", "lavfi", "-i", "testsrc=size=64x64:rate=10", "-f", "lavfi", "-i", "sine=frequency=440"),
            *("-t", f"{SAMPLE_VIDEO_S:g}", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"),
            *("-c:a", "aac", str(partial)),
        ],
        check=True,
        timeout=120,
    )
    partial.replace(video)
    return video


def stack_params(mediaconvert_url: str, archive_bucket: str, edge_port: int) -> dict[str, str]:
    """The template's parameters for an aws stack on this machine (pure): the local MediaConvert as its endpoint,
    every original archived first (the template's AwsTranscodesTheArchive), its events' source, the edge's port."""
    return {
        "ProviderBaseUrl": mediaconvert_url,
        "ArchiveBucket": archive_bucket,
        "ArchiveFirst": "true",
        "JobEventSource": EVENT_SOURCE,
        "PlaybackBaseUrl": f"http://127.0.0.1:{edge_port}",
        # The pacer keeps the queue full and a little more (docs/providers.md, "aws": ProviderMaxInFlight).
        "ProviderMaxInFlight": str(2 * QUEUE_CONCURRENCY),
    }


@dataclass(frozen=True)
class JobTally:
    """The MediaConvert jobs, read back: how many, how many assets they are for, by status, and the duplicates
    (assets with more than one job: each a second transcode billed)."""

    jobs: int
    assets: int
    duplicate_assets: int
    by_status: Counter
    not_ours: int  # jobs with no asset in their metadata: none of this stack's

    def line(self) -> str:
        statuses = ", ".join(f"{status} {n}" for status, n in sorted(self.by_status.items()))
        return (
            f"{self.jobs} for {self.assets} assets (assets with more than one job: {self.duplicate_assets});"
            f" {statuses or 'none'}"
        )


def jobs_by_asset(jobs: Iterable[Mapping]) -> Counter:
    """How many jobs each asset has (pure), by the UserMetadata every job of the stack carries; None counts the
    jobs that name no asset."""
    counted: Counter = Counter()
    for job in jobs:
        metadata = job.get("UserMetadata")
        asset = metadata.get(ASSET_KEY) if isinstance(metadata, Mapping) else None
        counted[asset if isinstance(asset, str) and asset else None] += 1
    return counted


def job_tally(jobs: Iterable[Mapping]) -> JobTally:
    """The jobs' tally (pure): see JobTally."""
    jobs = list(jobs)
    per_asset = jobs_by_asset(jobs)
    not_ours = per_asset.pop(None, 0)
    by_status = Counter(str(job.get("Status") or "?") for job in jobs)
    duplicates = sum(1 for n in per_asset.values() if n > 1)
    return JobTally(len(jobs), len(per_asset), duplicates, by_status, not_ours)
