"""The MediaConvert simulator's file output groups: an MP4 file, and JPEG thumbnails by frame capture.

A FILE_GROUP_SETTINGS group writes each output as files at `FileGroupSettings.Destination`, "the S3 output location
and the output filename base. ... If you do not specify the base filename in the URI, the service will use the
filename of the input file" (the service model's FileGroupSettings). Each output's file is the base, its NameModifier
("add a string to the end of each output filename"; "When you create multiple outputs in the same output group, Name
modifier is required") and its extension: the Output's `Extension`, else "default extensions by container type ...
MPEG-4 container, mp4" (the model's Output.Extension). So `s3://bucket/file/file` with no modifier makes
`s3://bucket/file/file.mp4`, the documents' example (https://docs.aws.amazon.com/mediaconvert/latest/ug/
output-file-names-and-paths.html).

- MP4: `ContainerSettings.Container` MP4 and `VideoDescription.CodecSettings.Codec` H_264 (its Bitrate or
  MaxBitrate; Width/Height as in HLS), with AAC audio when the output has AudioDescriptions; the moov atom first.
- Frame capture ("File group with a frame capture output", https://docs.aws.amazon.com/mediaconvert/latest/ug/
  file-group-with-frame-capture-output.html): "you remove the audio component, choose No container for the
  container [RAW], and then choose Frame capture to JPEG for the video codec [FRAME_CAPTURE]"; "You can create frame
  capture outputs only in jobs that also have a regular audio and video output. MediaConvert doesn't support jobs
  that consist only of a frame capture output" (refused by mediaconvert_settings.py). FrameCaptureSettings: "Frame
  capture will encode the first frame of the output stream, then one frame every framerateDenominator/
  framerateNumerator seconds ... Files will be named as filename.NNNNNNN.jpg where N is the 0-based frame sequence
  number zero padded to 7 decimal places"; MaxCaptures "Maximum number of captures (encoded jpg output files)";
  Quality "JPEG Quality - a higher value equals higher quality" (1 to 100). So the files are
  `<base><NameModifier>.0000000.jpg`, `.0000001.jpg`, ...; the COMPLETE event's `outputFilePaths` names "the final
  captured image" and "you can infer all the image names from the final one" (the same page).

Not confirmed: the User Guide's own example ("file.0000036.jpg ... 35 other images ... named file.0000001,
file.0000002") reads as 1-based, the model's text as 0-based; the model's is followed. Quality's default when
unset (80 here), and how Quality maps to the encoder (ffmpeg's JPEG scale 2..31 here, linearly). A frame capture's
`durationInMs` (the input's duration here, as the example's 185000 beside the MP4's 180041 suggests).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .mediaconvert_tools import (
    OTHER_ERROR,
    GroupResult,
    Rendition,
    TranscodeError,
    base_key,
    ffmpeg_run,
    h264_args,
    key_beside,
    media_info,
    scale_filter,
)

MP4, RAW = "MP4", "RAW"
DEFAULT_QUALITY = 80  # unconfirmed: the service's default when Quality is unset


@dataclass(frozen=True)
class FrameCapture:
    numerator: int
    denominator: int
    max_captures: int | None = None
    quality: int = DEFAULT_QUALITY


@dataclass(frozen=True)
class FileOutput:
    """One output of a file group: an MP4 (H.264) or a frame capture (RAW container, JPEG images)."""

    name_modifier: str = ""
    container: str = MP4
    width: int | None = None
    height: int | None = None
    bitrate: int | None = None
    audio: bool = False
    extension: str | None = None  # Output.Extension; None: the container's default (mp4)
    capture: FrameCapture | None = None


@dataclass(frozen=True)
class FileGroup:
    destination: str  # s3://bucket/prefix/base, or s3://bucket/prefix/ (the base is the input's file name)
    outputs: tuple[FileOutput, ...] = ()


def _jpeg_scale(quality: int) -> int:
    """Quality 1..100 (higher is better) -> ffmpeg's -q:v for JPEG, 31..2 (lower is better)."""
    return round(31 - (quality - 1) * 29 / 99)


def _mp4(source: Path, output: FileOutput, folder: Path, name: str, timeout_s: float) -> Path:
    made = folder / f"{name}.{output.extension or 'mp4'}"
    argv = h264_args(source, output.width, output.height, output.bitrate, output.audio)
    argv += ["-movflags", "+faststart", "-f", "mp4", str(made)]
    ffmpeg_run(argv, made, name, timeout_s)
    return made


def _frames(source: Path, output: FileOutput, folder: Path, name: str, timeout_s: float) -> list[Path]:
    capture = output.capture
    assert capture is not None
    first = folder / f"{name}.{0:07d}.jpg"
    rate = f"fps={capture.numerator}/{capture.denominator}"
    argv = ["-i", str(source), "-map", "0:v:0", "-vf", f"{rate},{scale_filter(output.width, output.height)}"]
    if capture.max_captures is not None:
        argv += ["-frames:v", str(capture.max_captures)]
    argv += ["-q:v", str(_jpeg_scale(capture.quality)), "-start_number", "0", "-f", "image2"]
    argv.append(str(folder / f"{name}.%07d.jpg"))
    ffmpeg_run(argv, first, name, timeout_s)
    return sorted(folder.glob(f"{name}.*.jpg"))


def run_file_group(
    group: FileGroup,
    source: Path,
    file_input: str,
    folder: Path,
    duration_ms: int,
    timeout_s: float,
    step: Callable[[], None] = lambda: None,
) -> tuple[GroupResult, str, str]:
    """Every output of the group into `folder`: (its result, its bucket, its key base); `step()` before each
    output. The caller uploads the folder beside the base."""
    bucket, base = base_key(group.destination, file_input)
    stem = posixpath.basename(base)
    renditions = []
    for output in group.outputs:
        step()
        name = f"{stem}{output.name_modifier}"
        if output.capture is not None:
            images = _frames(source, output, folder, name, timeout_s)
            width, height, _ = media_info(images[-1], timeout_s)
            last = f"s3://{bucket}/{key_beside(base, images[-1].name)}"
            renditions.append(Rendition([last], duration_ms, width, height))
            continue
        made = _mp4(source, output, folder, name, timeout_s)
        width, height, made_ms = media_info(made, timeout_s)
        if not width:
            raise TranscodeError(OTHER_ERROR, f"the transcode of output [{name}] failed")
        renditions.append(Rendition([f"s3://{bucket}/{key_beside(base, made.name)}"], made_ms, width, height))
    return GroupResult("FILE_GROUP", None, renditions), bucket, base
