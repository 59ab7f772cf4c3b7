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

An HLS group may also hold captions outputs: WebVTT renditions made from sidecar files, named in the multivariant
playlist (mediaconvert_captions.py). A job's file groups (an MP4, a frame capture) are mediaconvert_files.py's; this
module runs every group of a job in order: the input read and probed once, each group encoded, then uploaded.

ffmpeg and ffprobe run through `run_tool` only (mediaconvert_tools.py), each call with a timeout. The S3 client is
injected (boto3's, or any object with `download_file` and `upload_file`), so tests put the emulator's S3 here.
"""

from __future__ import annotations

import json
import math
import posixpath
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import mediaconvert_captions as captions
from .mediaconvert_captions import LARGE_SEGMENT_S, CaptionOutput, CaptionSource, Cue
from .mediaconvert_files import FileGroup, run_file_group
from .mediaconvert_tools import (
    INPUT_ERROR,
    OTHER_ERROR,
    S3,
    TOOL_TIMEOUT_S,
    GroupResult,
    Rendition,
    TranscodeError,
    base_key,
    ffmpeg_run,
    h264_args,
    key_beside,
    media_info,
    run_tool,
    split_s3,
    tool,
    unreadable,
    upload_folder,
)

__all__ = ["INPUT_ERROR", "OTHER_ERROR", "S3", "TOOL_TIMEOUT_S", "GroupResult", "Rendition", "TranscodeError"]

DEFAULT_SEGMENT_S = 10  # HlsGroupSettings.SegmentLength: "When you don't specify a value, MediaConvert defaults to 10"


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
    captions: tuple[CaptionOutput, ...] = ()  # its WebVTT outputs, in the job's order (the first is the default)
    caption_segment_length: int = LARGE_SEGMENT_S  # CaptionSegmentLengthControl: LARGE_SEGMENTS, or MATCH_VIDEO


@dataclass(frozen=True)
class Plan:
    """What a job transcodes: its input, its caption selectors and its output groups."""

    file_input: str  # s3://bucket/key
    groups: tuple[HlsGroup | FileGroup, ...] = ()
    captions: tuple[CaptionSource, ...] = ()


def probe(path: Path, file_input: str, timeout_s: float) -> dict:
    """ffprobe's streams and format of the input; a file it cannot read, or one without video, is error 1010."""
    argv = [tool("ffprobe"), "-v", "error", "-print_format", "json", "-show_format", "-show_streams", str(path)]
    try:
        done = run_tool(argv, timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise unreadable(file_input, "the probe timed out") from exc
    if done.returncode != 0:
        raise unreadable(file_input, "No parser found for container")
    try:
        info = json.loads(done.stdout or b"{}")
    except ValueError as exc:
        raise unreadable(file_input, "No parser found for container") from exc
    if not any(s.get("codec_type") == "video" for s in info.get("streams", [])):
        raise unreadable(file_input, "no video stream")
    return info


def encode(source: Path, output: HlsOutput, group: HlsGroup, folder: Path, name: str, timeout_s: float) -> Path:
    """One output's playlist `<name>.m3u8` and segments `<name>_00001.ts`, ... in `folder`; returns the playlist."""
    playlist = folder / f"{name}.m3u8"
    argv = h264_args(source, output.width, output.height, output.bitrate, output.audio)
    # A keyframe at every segment boundary, so segments last SegmentLength as the playlist says.
    argv += ["-force_key_frames", f"expr:gte(t,n_forced*{group.segment_length})"]
    argv += ["-f", "hls", "-hls_time", str(group.segment_length), "-hls_playlist_type", "vod", "-start_number", "1"]
    argv += ["-hls_segment_filename", str(folder / f"{name}_%05d.ts"), str(playlist)]
    ffmpeg_run(argv, playlist, name, timeout_s)
    return playlist


def _segments(playlist: Path) -> list[tuple[str, float]]:
    """(segment file name, EXTINF duration) of a media playlist."""
    found, duration = [], None
    for line in playlist.read_text().splitlines():
        if line.startswith("#EXTINF:"):
            duration = float(line.removeprefix("#EXTINF:").split(",")[0] or 0)
        elif line and not line.startswith("#") and duration:
            found.append((line, duration))
            duration = None
    return found


def _peak_bandwidth(playlist: Path) -> int:
    """EXT-X-STREAM-INF's BANDWIDTH: "the peak segment bit rate" (RFC 8216, 4.3.4.2), from the segments written."""
    peak = 0
    for name, duration in _segments(playlist):
        peak = max(peak, math.ceil((playlist.parent / name).stat().st_size * 8 / duration))
    return peak or 1


def _mpegts_start(playlist: Path, timeout_s: float) -> int:
    """The first segment's first timestamp in 90 kHz units: what a WebVTT segment's X-TIMESTAMP-MAP maps 0 to."""
    segments = _segments(playlist)
    if not segments:
        return 0
    argv = [tool("ffprobe"), "-v", "error", "-print_format", "json", "-show_entries", "format=start_time"]
    done = run_tool([*argv, str(playlist.parent / segments[0][0])], timeout_s)
    try:
        start = float(json.loads(done.stdout or b"{}").get("format", {}).get("start_time") or 0)
    except ValueError:
        start = 0.0
    return round(start * captions.MPEGTS_HZ)


def master_playlist(entries: list[tuple[str, int, int, int, bool]], media: list[str] | None = None) -> str:
    """A multivariant playlist (RFC 8216, 4.3.4.2): one EXT-X-STREAM-INF a rendition, from
    (playlist file name, bandwidth, width, height, has audio); `media` its EXT-X-MEDIA subtitles lines, which every
    rendition then names with SUBTITLES= (4.3.4.2.1)."""
    lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-INDEPENDENT-SEGMENTS", *(media or [])]
    subtitles = f',SUBTITLES="{captions.SUBTITLES_GROUP}"' if media else ""
    for name, bandwidth, width, height, audio in entries:
        codecs = "avc1.64001f,mp4a.40.2" if audio else "avc1.64001f"
        lines.append(
            f'#EXT-X-STREAM-INF:BANDWIDTH={bandwidth},RESOLUTION={width}x{height},CODECS="{codecs}"{subtitles}'
        )
        lines.append(name)
    return "\n".join(lines) + "\n"


def _hls_group(
    group: HlsGroup,
    source: Path,
    plan: Plan,
    cues: dict[str, list[Cue]],
    folder: Path,
    duration_ms: int,
    timeout_s: float,
    step: Callable[[], None],
) -> tuple[GroupResult, str, str]:
    """Encode one HLS group into `folder`: (its result, its bucket, its key base)."""
    bucket, base = base_key(group.destination, plan.file_input)
    stem = posixpath.basename(base)
    entries: list[tuple[str, int, int, int, bool]] = []
    renditions: list[Rendition] = []
    first_video: Path | None = None
    for output in group.outputs:
        step()
        playlist = encode(source, output, group, folder, f"{stem}{output.name_modifier}", timeout_s)
        first_video = first_video or playlist
        width, height, rendition_ms = media_info(playlist, timeout_s)
        entries.append((playlist.name, _peak_bandwidth(playlist), width, height, output.audio))
        renditions.append(Rendition([f"s3://{bucket}/{key_beside(base, playlist.name)}"], rendition_ms, width, height))
    media: list[str] = []
    mpegts = _mpegts_start(first_video, timeout_s) if first_video and group.captions else 0
    for index, caption in enumerate(group.captions):
        step()
        name = f"{stem}{caption.name_modifier}"
        segment_s = group.caption_segment_length
        playlist = captions.write_rendition(cues[caption.selector], folder, name, segment_s, duration_ms, mpegts)
        media.append(captions.media_line(caption, playlist.name, default=index == 0))
        renditions.append(Rendition([f"s3://{bucket}/{key_beside(base, playlist.name)}"], duration_ms))
    (folder / f"{stem}.m3u8").write_text(master_playlist(entries, media))
    return GroupResult("HLS_GROUP", f"s3://{bucket}/{base}.m3u8", renditions), bucket, base


def transcode(
    plan: Plan,
    s3: S3,
    work: Path,
    progress: Callable[[str, int], None] = lambda phase, percent: None,
    timeout_s: float = TOOL_TIMEOUT_S,
) -> list[GroupResult]:
    """Read the input and its caption files from S3, encode every output of every group into `work`, write each
    group's files back to S3 under its base; `progress(phase, percent)` hears the job's phase (PROBING, TRANSCODING,
    UPLOADING: Job.CurrentPhase) as it goes, before each output (it may raise to stop the job there). Raises
    TranscodeError for a job that ends in ERROR."""
    progress("PROBING", 0)
    in_bucket, in_key = split_s3(plan.file_input)
    source = work / ("input" + posixpath.splitext(in_key)[1][:16])
    try:
        s3.download_file(Bucket=in_bucket, Key=in_key, Filename=str(source))
    except Exception as exc:  # botocore's ClientError (no such key, no such bucket) or a connection failure
        raise unreadable(plan.file_input, "the file could not be read") from exc
    info = probe(source, plan.file_input, timeout_s)
    duration_ms = round(float(info.get("format", {}).get("duration") or 0) * 1000)
    cues = {c.name: captions.read(c, s3, work, index) for index, c in enumerate(plan.captions)}
    total = sum(len(g.outputs) + len(getattr(g, "captions", ())) for g in plan.groups) or 1
    done = 0

    def step() -> None:
        nonlocal done
        progress("TRANSCODING", 5 + 85 * done // total)
        done += 1

    results: list[GroupResult] = []
    for index, group in enumerate(plan.groups):
        folder = work / f"group{index}"
        folder.mkdir()
        if isinstance(group, FileGroup):
            result, bucket, base = run_file_group(group, source, plan.file_input, folder, duration_ms, timeout_s, step)
        else:
            result, bucket, base = _hls_group(group, source, plan, cues, folder, duration_ms, timeout_s, step)
        progress("UPLOADING", 90)
        upload_folder(s3, folder, bucket, base)
        results.append(result)
    return results
