"""The MediaConvert simulator's transcode: a job's S3 input made into HLS in S3 with ffmpeg, as MediaConvert names it.

One input, one or more HLS output groups, each with one or more outputs (renditions). What is written, per group
(AWS Elemental MediaConvert User Guide, "Output file names and paths",
https://docs.aws.amazon.com/mediaconvert/latest/ug/output-file-names-and-paths.html, and its "Apple HLS group"
sample, https://docs.aws.amazon.com/mediaconvert/latest/ug/apple-hls-group.html: `s3://bucket/hls/main.m3u8` the
multivariant playlist, `mainv1.m3u8` and `mainv2.m3u8` the outputs' own):

- the group's Destination is "the S3 output location and the output filename base"; "If you do not specify the base
  filename in the URI, the service will use the filename of the input file" (the API reference's HlsGroupSettings,
  https://docs.aws.amazon.com/mediaconvert/latest/apireference/jobs.html#jobs-model-hlsgroupsettings);
- the multivariant playlist is `<base>.m3u8`; each output's playlist `<base><NameModifier>.m3u8` ("Name modifier
  ... add a string to the end of each output filename", the Output model; required when a group has more than one
  output, checked in mediaconvert_settings.py);
- each output's segments are `<base><NameModifier>_00001.ts`, ...: the numbering's form is not in the documents read;
  it is the form the service's outputs are commonly seen with, and a player follows the playlist, not the names;
- segments last the group's SegmentLength, "When you don't specify a value, MediaConvert defaults to 10".

ffmpeg and ffprobe run through `run_tool` only, each call with a timeout. The S3 client is injected (boto3's, or
any object with `download_file` and `upload_file`), so tests put the emulator's S3 here.
"""

from __future__ import annotations

import json
import math
import posixpath
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

DEFAULT_SEGMENT_S = 10  # HlsGroupSettings.SegmentLength: "When you don't specify a value, MediaConvert defaults to 10"
TOOL_TIMEOUT_S = 600.0  # a sample file takes seconds; a hung ffmpeg must not hold a queue's slot for ever

# Error codes, from the User Guide's "Error codes" (https://docs.aws.amazon.com/mediaconvert/latest/ug/
# mediaconvert_error_codes.html): 1010 "File access error: MediaConvert can't open one or more of your input files
# ... inaccessible, corrupted, or in an unsupported format ... or an incorrect Amazon S3 path", its example message
# "Unable to open input file [s3://amzn-s3-demo-bucket/VIDEO.MP4]: [Failed probe/open: [No parser found for
# container]]". 1999 is in the page's list of codes; its text was not read: used here for a failure past the probe
# (an encode or an upload that fails), which that page does not otherwise place.
INPUT_ERROR = 1010
OTHER_ERROR = 1999


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


@dataclass(frozen=True)
class HlsOutput:
    """One output (rendition) of an HLS group: what mediaconvert_settings.py read from the job's Output."""

    name_modifier: str
    width: int | None = None  # VideoDescription.Width/Height: both blank keeps the input's, one scales evenly
    height: int | None = None
    bitrate: int | None = None  # H264Settings.Bitrate or MaxBitrate, bits/s; None lets the encoder choose
    audio: bool = False  # the output has AudioDescriptions


@dataclass(frozen=True)
class HlsGroup:
    destination: str  # s3://bucket/prefix/base, or s3://bucket/prefix/ (the base is the input's file name)
    segment_length: int = DEFAULT_SEGMENT_S
    outputs: tuple[HlsOutput, ...] = ()


@dataclass(frozen=True)
class Plan:
    """What a job transcodes: its input and its HLS groups."""

    file_input: str  # s3://bucket/key
    groups: tuple[HlsGroup, ...] = ()


@dataclass
class Rendition:
    playlist: str  # s3:// URL of the output's own playlist
    duration_ms: int
    width: int
    height: int


@dataclass
class GroupResult:
    playlist: str  # s3:// URL of the multivariant playlist
    renditions: list[Rendition] = field(default_factory=list)


def run_tool(argv: list[str], timeout_s: float = TOOL_TIMEOUT_S) -> subprocess.CompletedProcess[bytes]:
    """ffmpeg or ffprobe, output captured; a call that outlives `timeout_s` is ended (subprocess.TimeoutExpired)."""
    return subprocess.run(argv, capture_output=True, timeout=timeout_s, check=False, stdin=subprocess.DEVNULL)


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


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise TranscodeError(OTHER_ERROR, f"{name} is not installed on the simulator's machine")
    return path


def probe(path: Path, file_input: str, timeout_s: float) -> dict:
    """ffprobe's streams and format of the input; a file it cannot read, or one without video, is error 1010."""

    def unreadable(reason: str) -> TranscodeError:
        return TranscodeError(INPUT_ERROR, f"Unable to open input file [{file_input}]: [Failed probe/open: [{reason}]]")

    argv = [_tool("ffprobe"), "-v", "error", "-print_format", "json", "-show_format", "-show_streams", str(path)]
    try:
        done = run_tool(argv, timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise unreadable("the probe timed out") from exc
    if done.returncode != 0:
        raise unreadable("No parser found for container")
    try:
        info = json.loads(done.stdout or b"{}")
    except ValueError as exc:
        raise unreadable("No parser found for container") from exc
    if not any(s.get("codec_type") == "video" for s in info.get("streams", [])):
        raise unreadable("no video stream")
    return info


def _scale(output: HlsOutput) -> list[str]:
    """VideoDescription's Width and Height: "To use the same resolution as your input: Leave both Width and Height
    blank. To evenly scale from your input resolution: Leave Width blank and enter a value for Height" (and the
    other way round); the API reference's VideoDescription. -2 keeps the other side even, as H.264 needs."""
    if output.width is None and output.height is None:
        return ["-vf", "scale=trunc(iw/2)*2:trunc(ih/2)*2"]
    width = output.width if output.width is not None else -2
    height = output.height if output.height is not None else -2
    return ["-vf", f"scale={width}:{height}"]


def encode(source: Path, output: HlsOutput, group: HlsGroup, folder: Path, name: str, timeout_s: float) -> Path:
    """One output's playlist `<name>.m3u8` and segments `<name>_00001.ts`, ... in `folder`; returns the playlist."""
    playlist = folder / f"{name}.m3u8"
    argv = [_tool("ffmpeg"), "-nostdin", "-hide_banner", "-v", "error", "-y", "-i", str(source), "-map", "0:v:0"]
    if output.audio:
        argv += ["-map", "0:a:0?", "-c:a", "aac", "-b:a", "96k"]
    argv += ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", *_scale(output)]
    if output.bitrate is not None:
        argv += ["-b:v", str(output.bitrate), "-maxrate", str(output.bitrate), "-bufsize", str(2 * output.bitrate)]
    # A keyframe at every segment boundary, so segments last SegmentLength as the playlist says.
    argv += ["-force_key_frames", f"expr:gte(t,n_forced*{group.segment_length})"]
    argv += ["-f", "hls", "-hls_time", str(group.segment_length), "-hls_playlist_type", "vod", "-start_number", "1"]
    argv += ["-hls_segment_filename", str(folder / f"{name}_%05d.ts"), str(playlist)]
    try:
        done = run_tool(argv, timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise TranscodeError(OTHER_ERROR, f"the transcode of output [{name}] timed out") from exc
    if done.returncode != 0 or not playlist.is_file():
        raise TranscodeError(OTHER_ERROR, f"the transcode of output [{name}] failed")
    return playlist


def _rendition_info(playlist: Path, timeout_s: float) -> tuple[int, int, int]:
    """(width, height, duration in ms) of an output, read back with ffprobe from what was written."""
    argv = [_tool("ffprobe"), "-v", "error", "-print_format", "json", "-show_format", "-show_streams", str(playlist)]
    done = run_tool(argv, timeout_s)
    info: dict = json.loads(done.stdout or b"{}") if done.returncode == 0 else {}
    video: dict = next((s for s in info.get("streams", []) if s.get("codec_type") == "video"), {})
    duration = float(info.get("format", {}).get("duration") or 0)
    return int(video.get("width") or 0), int(video.get("height") or 0), round(duration * 1000)


def _peak_bandwidth(playlist: Path) -> int:
    """EXT-X-STREAM-INF's BANDWIDTH: "the peak segment bit rate" (RFC 8216, 4.3.4.2), from the segments written."""
    peak, duration = 0, None
    for line in playlist.read_text().splitlines():
        if line.startswith("#EXTINF:"):
            duration = float(line.removeprefix("#EXTINF:").split(",")[0] or 0)
        elif line and not line.startswith("#") and duration:
            size = (playlist.parent / line).stat().st_size
            peak = max(peak, math.ceil(size * 8 / duration))
            duration = None
    return peak or 1


def master_playlist(entries: list[tuple[str, int, int, int, bool]]) -> str:
    """A multivariant playlist (RFC 8216, 4.3.4.2): one EXT-X-STREAM-INF a rendition, from
    (playlist file name, bandwidth, width, height, has audio)."""
    lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-INDEPENDENT-SEGMENTS"]
    for name, bandwidth, width, height, audio in entries:
        codecs = "avc1.64001f,mp4a.40.2" if audio else "avc1.64001f"
        lines.append(f'#EXT-X-STREAM-INF:BANDWIDTH={bandwidth},RESOLUTION={width}x{height},CODECS="{codecs}"')
        lines.append(name)
    return "\n".join(lines) + "\n"


def _content_type(path: Path) -> str:
    return "application/vnd.apple.mpegurl" if path.suffix == ".m3u8" else "video/mp2t"


def transcode(
    plan: Plan,
    s3: S3,
    work: Path,
    progress: Callable[[str, int], None] = lambda phase, percent: None,
    timeout_s: float = TOOL_TIMEOUT_S,
) -> list[GroupResult]:
    """Read the input from S3, encode every output of every group into `work`, write the playlists and segments
    back to S3 under each group's base; `progress(phase, percent)` hears the job's phase (PROBING, TRANSCODING,
    UPLOADING: Job.CurrentPhase) as it goes. Raises TranscodeError for a job that ends in ERROR."""
    progress("PROBING", 0)
    in_bucket, in_key = split_s3(plan.file_input)
    source = work / ("input" + posixpath.splitext(in_key)[1][:16])
    try:
        s3.download_file(Bucket=in_bucket, Key=in_key, Filename=str(source))
    except Exception as exc:  # botocore's ClientError (no such key, no such bucket) or a connection failure
        raise TranscodeError(
            INPUT_ERROR,
            f"Unable to open input file [{plan.file_input}]: [Failed probe/open: [the file could not be read]]",
        ) from exc
    probe(source, plan.file_input, timeout_s)
    total = sum(len(group.outputs) for group in plan.groups) or 1
    done = 0
    results: list[GroupResult] = []
    for index, group in enumerate(plan.groups):
        bucket, base = base_key(group.destination, plan.file_input)
        folder = work / f"group{index}"
        folder.mkdir()
        stem = posixpath.basename(base)
        entries: list[tuple[str, int, int, int, bool]] = []
        renditions: list[Rendition] = []
        for output in group.outputs:
            progress("TRANSCODING", 5 + 85 * done // total)
            name = f"{stem}{output.name_modifier}"
            playlist = encode(source, output, group, folder, name, timeout_s)
            width, height, duration_ms = _rendition_info(playlist, timeout_s)
            entries.append((playlist.name, _peak_bandwidth(playlist), width, height, output.audio))
            renditions.append(Rendition(f"s3://{bucket}/{_key(base, playlist.name, stem)}", duration_ms, width, height))
            done += 1
        (folder / f"{stem}.m3u8").write_text(master_playlist(entries))
        progress("UPLOADING", 90)
        for path in sorted(folder.iterdir()):
            try:
                s3.upload_file(
                    Filename=str(path),
                    Bucket=bucket,
                    Key=_key(base, path.name, stem),
                    ExtraArgs={"ContentType": _content_type(path)},
                )
            except Exception as exc:
                raise TranscodeError(OTHER_ERROR, f"Unable to write to output file [s3://{bucket}/{base}]") from exc
        results.append(GroupResult(f"s3://{bucket}/{base}.m3u8", renditions))
    return results


def _key(base: str, file_name: str, stem: str) -> str:
    """The S3 key of a file written beside the base: the base's folder and the file's name."""
    folder = base[: len(base) - len(stem)]
    return f"{folder}{file_name}"
