"""The MediaConvert simulator's plumbing, shared by its HLS, file-group and captions modules: the S3 client's shape, the
job's error (code and message), ffmpeg and ffprobe with a timeout, and how an output's files are named from the
group's Destination.

Error codes, from the User Guide's "Error codes" (https://docs.aws.amazon.com/mediaconvert/latest/ug/
mediaconvert_error_codes.html): 1010 "File access error: MediaConvert can't open one or more of your input files
... inaccessible, corrupted, or in an unsupported format ... or an incorrect Amazon S3 path", its example message
"Unable to open input file [s3://amzn-s3-demo-bucket/VIDEO.MP4]: [Failed probe/open: [No parser found for
container]]". A sidecar caption file is one of the job's input files, so one that cannot be read is 1010 here too
(the page's text on captions codes was not read). 1999 is in the page's list of codes; its text was not read: used
here for a failure past the probe (an encode or an upload that fails), which that page does not otherwise place.
"""

from __future__ import annotations

import json
import posixpath
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

TOOL_TIMEOUT_S = 600.0  # a sample file takes seconds; a hung ffmpeg must not hold a queue's slot for ever
INPUT_ERROR = 1010
OTHER_ERROR = 1999

CONTENT_TYPES = {
    ".m3u8": "application/vnd.apple.mpegurl",
    ".ts": "video/mp2t",
    ".vtt": "text/vtt",
    ".mp4": "video/mp4",
    ".jpg": "image/jpeg",
}


class S3(Protocol):
    """The two calls of boto3's S3 client the transcode makes."""

    def download_file(self, Bucket: str, Key: str, Filename: str) -> None: ...

    def upload_file(self, Filename: str, Bucket: str, Key: str, ExtraArgs: dict | None = None) -> None: ...


class TranscodeError(Exception):
    """A job's end in ERROR: MediaConvert's error code and message (Job.ErrorCode, Job.ErrorMessage)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def unreadable(file_input: str, reason: str) -> TranscodeError:
    """Error 1010 in the documented message's form."""
    return TranscodeError(INPUT_ERROR, f"Unable to open input file [{file_input}]: [Failed probe/open: [{reason}]]")


def run_tool(argv: list[str], timeout_s: float = TOOL_TIMEOUT_S) -> subprocess.CompletedProcess[bytes]:
    """ffmpeg or ffprobe, output captured; a call that outlives `timeout_s` is ended (subprocess.TimeoutExpired)."""
    return subprocess.run(argv, capture_output=True, timeout=timeout_s, check=False, stdin=subprocess.DEVNULL)


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise TranscodeError(OTHER_ERROR, f"{name} is not installed on the simulator's machine")
    return path


def ffmpeg_run(argv: list[str], made: Path, what: str, timeout_s: float) -> None:
    """One ffmpeg call (after `ffmpeg -nostdin ... -y`) that must leave `made` behind; else error 1999."""
    full = [tool("ffmpeg"), "-nostdin", "-hide_banner", "-v", "error", "-y", *argv]
    try:
        done = run_tool(full, timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise TranscodeError(OTHER_ERROR, f"the transcode of output [{what}] timed out") from exc
    if done.returncode != 0 or not made.is_file():
        raise TranscodeError(OTHER_ERROR, f"the transcode of output [{what}] failed")


def media_info(path: Path, timeout_s: float) -> tuple[int, int, int]:
    """(width, height, duration in ms) of what was written, read back with ffprobe (0 where it has none)."""
    argv = [tool("ffprobe"), "-v", "error", "-print_format", "json", "-show_format", "-show_streams", str(path)]
    done = run_tool(argv, timeout_s)
    info: dict = json.loads(done.stdout or b"{}") if done.returncode == 0 else {}
    video: dict = next((s for s in info.get("streams", []) if s.get("codec_type") == "video"), {})
    duration = float(info.get("format", {}).get("duration") or 0)
    return int(video.get("width") or 0), int(video.get("height") or 0), round(duration * 1000)


def scale_filter(width: int | None, height: int | None) -> str:
    """VideoDescription's Width and Height: "To use the same resolution as your input: Leave both Width and Height
    blank. To evenly scale from your input resolution: Leave Width blank and enter a value for Height" (and the
    other way round); the API reference's VideoDescription. -2 keeps the other side even, as H.264 needs."""
    if width is None and height is None:
        return "scale=trunc(iw/2)*2:trunc(ih/2)*2"
    return f"scale={width if width is not None else -2}:{height if height is not None else -2}"


def h264_args(source: Path, width: int | None, height: int | None, bitrate: int | None, audio: bool) -> list[str]:
    """ffmpeg's input and encoder arguments for an H.264 output: the input's first video stream scaled as the
    VideoDescription says, at H264Settings' Bitrate (or MaxBitrate) when set, and AAC from its first audio stream
    when the output has AudioDescriptions."""
    argv = ["-i", str(source), "-map", "0:v:0"]
    if audio:
        argv += ["-map", "0:a:0?", "-c:a", "aac", "-b:a", "96k"]
    argv += ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-vf", scale_filter(width, height)]
    if bitrate is not None:
        argv += ["-b:v", str(bitrate), "-maxrate", str(bitrate), "-bufsize", str(2 * bitrate)]
    return argv


def split_s3(url: str) -> tuple[str, str]:
    """`s3://bucket/key` -> (bucket, key)."""
    bucket, _, key = url.removeprefix("s3://").partition("/")
    return bucket, key


def base_key(destination: str, file_input: str) -> tuple[str, str]:
    """(bucket, key base) of a group's outputs: the Destination's, or its folder and the input's file name."""
    bucket, key = split_s3(destination)
    if key == "" or key.endswith("/"):
        stem = posixpath.splitext(posixpath.basename(split_s3(file_input)[1]))[0]
        key = f"{key}{stem}"
    return bucket, key


def key_beside(base: str, file_name: str) -> str:
    """The S3 key of a file written beside the base: the base's folder and the file's name."""
    return f"{posixpath.dirname(base)}/{file_name}" if "/" in base else file_name


def upload_folder(s3: S3, folder: Path, bucket: str, base: str) -> None:
    """Every file of `folder` to S3 beside the base, typed by its extension; a failure is error 1999."""
    for path in sorted(folder.iterdir()):
        try:
            s3.upload_file(
                Filename=str(path),
                Bucket=bucket,
                Key=key_beside(base, path.name),
                ExtraArgs={"ContentType": CONTENT_TYPES.get(path.suffix, "application/octet-stream")},
            )
        except Exception as exc:
            raise TranscodeError(OTHER_ERROR, f"Unable to write to output file [s3://{bucket}/{base}]") from exc


@dataclass
class Rendition:
    """One output's result: the API's OutputDetail and the event's `outputFilePaths`."""

    paths: list[str]  # s3:// URLs: an HLS output's own playlist, a file output's file, a frame capture's last image
    duration_ms: int
    width: int | None = None  # None: no videoDetails (a captions output)
    height: int | None = None


@dataclass
class GroupResult:
    """One output group's result: the event's `type` and (HLS) `playlistFilePaths`."""

    type: str  # HLS_GROUP or FILE_GROUP
    playlist: str | None  # s3:// URL of the multivariant playlist; None for a file group ("not returned")
    renditions: list[Rendition] = field(default_factory=list)
