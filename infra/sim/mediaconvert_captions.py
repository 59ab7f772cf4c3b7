"""The MediaConvert simulator's captions: a sidecar WebVTT or SRT file made into a WebVTT rendition of an HLS group.

What a job asks for (the API reference's shapes, https://docs.aws.amazon.com/mediaconvert/latest/apireference/
jobs.html, and the service model botocore carries):

- In the input, one CaptionSelector per sidecar file ("In all cases, create one captions selector for each input
  captions file", https://docs.aws.amazon.com/mediaconvert/latest/ug/sidecar-input.html), named by its key in
  `CaptionSelectors`; its `SourceSettings.SourceType` WEBVTT or SRT here (the model's CaptionSourceType has more);
  `FileSourceSettings.SourceFile` the file's URI, matching the model's pattern (an s3:// or http(s):// URI ending in
  .srt, .vtt, .webvtt and other caption extensions; only s3:// is read here); `TimeDelta` "Enter a positive or
  negative number to modify the times in the captions file ... When you don't specify a value for Time delta
  units, MediaConvert uses seconds by default" (FileSourceSettings).
- In an HLS group, the captions in an output of their own: "Put your captions in the same output group, but a
  different output from your video ... Put each captions track in its own output" and "The captions track that you
  specify first in your job is signaled as the default track in the HLS manifest" ("IMSC, TTML, and WebVTT (sidecar)
  output captions", https://docs.aws.amazon.com/mediaconvert/latest/ug/ttml-and-webvtt-output-captions.html). Its
  `CaptionDescriptions[0]` names the selector (`CaptionSelectorName`), `DestinationSettings.DestinationType`
  WEBVTT, and `LanguageCode` (ISO 639-2, the model's LanguageCode enum) or `CustomLanguageCode`, and
  `LanguageDescription`: "For streaming outputs, MediaConvert passes this information into destination manifests
  for display on the end-viewer's player device" (CaptionDescription).
- The group's `CaptionSegmentLengthControl`: "Match video to create caption segments that align with the video
  segments ... Keep the default setting, Large segments to create caption segments that are 300 seconds long"
  (HlsCaptionSegmentLengthControl).

What is written, beside the video renditions: the caption output's playlist `<base><NameModifier>.m3u8` (the naming
of every HLS output, mediaconvert_transcode.py) and its segments `<base><NameModifier>_00001.vtt`, ...; each segment
a WebVTT file with an `X-TIMESTAMP-MAP` header (RFC 8216, 3.5: "WebVTT Segments") mapping its local time 0 to the
first video segment's MPEG-TS time, so a cue at 00:00:01.000 shows one second into the video; a cue that spans a
segment boundary is in both segments. The multivariant playlist gets one
`#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",LANGUAGE=...,NAME=...,DEFAULT=...,AUTOSELECT=YES,URI=...` a caption
output (RFC 8216, 4.3.4.1) and `SUBTITLES="subs"` on every `#EXT-X-STREAM-INF` (4.3.4.2).

Not in the documents read, so the simulator's own: the GROUP-ID's value ("subs"); LANGUAGE as the lower-case
three-letter code ("eng" for ENG); NAME when LanguageDescription is blank (the language code); the segment files'
numbering; the caption output's `outputDetails` (its playlist in `outputFilePaths`, the input's duration, no
`videoDetails`); error 1010 for a caption file that cannot be read or parsed (the input-file error's form).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from .mediaconvert_tools import S3, split_s3, unreadable

WEBVTT, SRT = "WEBVTT", "SRT"
SOURCE_TYPES = (WEBVTT, SRT)
LARGE_SEGMENT_S = 300  # HlsCaptionSegmentLengthControl LARGE_SEGMENTS, the default
SUBTITLES_GROUP = "subs"  # the GROUP-ID: not documented; any string a player matches SUBTITLES= against
MPEGTS_HZ = 90000  # RFC 8216, 3.5: MPEGTS is "an MPEG-2 transport stream timestamp" (90 kHz)
MAX_CAPTION_BYTES = 20 * 1024 * 1024  # a sidecar file past this is refused as unreadable, not loaded into memory

_TIME = re.compile(r"^(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{3})$")


@dataclass(frozen=True)
class CaptionSource:
    """One CaptionSelector of the input: a sidecar file."""

    name: str
    source_type: str  # WEBVTT or SRT
    source_file: str  # s3://bucket/key
    time_delta_ms: int = 0


@dataclass(frozen=True)
class CaptionOutput:
    """One output of an HLS group that holds a WebVTT captions track."""

    name_modifier: str
    selector: str
    language: str | None = None  # LanguageCode (ENG) or CustomLanguageCode
    description: str | None = None  # LanguageDescription


@dataclass(frozen=True)
class Cue:
    start_ms: int
    end_ms: int
    text: str


def _ms(stamp: str) -> int | None:
    match = _TIME.match(stamp.strip())
    if match is None:
        return None
    hours, minutes, seconds, millis = (int(g or 0) for g in match.groups())
    if minutes > 59 or seconds > 59:
        return None
    return ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis


def _blocks(text: str) -> list[list[str]]:
    blocks: list[list[str]] = []
    for chunk in re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n").replace("\r", "\n")):
        lines = chunk.split("\n")
        while lines and not lines[0].strip():
            lines.pop(0)
        if lines:
            blocks.append(lines)
    return blocks


def _cue(lines: list[str]) -> Cue | None:
    """A block's cue: its timing line (after an optional identifier or SRT counter) and the text after it."""
    for index, line in enumerate(lines[:2]):
        if "-->" in line:
            start, _, rest = line.partition("-->")
            end = rest.strip().split()[0] if rest.strip() else ""
            start_ms, end_ms = _ms(start), _ms(end)
            if start_ms is None or end_ms is None or end_ms < start_ms:
                raise ValueError(f"a bad cue timing: {line.strip()[:80]}")
            return Cue(start_ms, end_ms, "\n".join(lines[index + 1 :]).strip())
    return None


def parse(text: str, source_type: str) -> list[Cue]:
    """A WebVTT file (it must open with "WEBVTT", W3C WebVTT 4.1) or an SRT file -> its cues; ValueError if not."""
    text = text.removeprefix("\ufeff")
    blocks = _blocks(text)
    if source_type == WEBVTT:
        if not blocks or not re.match(r"^WEBVTT([ \t].*)?$", blocks[0][0]):
            raise ValueError("no WEBVTT header")
        blocks = blocks[1:]
    cues = []
    for block in blocks:
        if source_type == WEBVTT and block[0].startswith(("NOTE", "STYLE", "REGION")):
            continue
        cue = _cue(block)
        if cue is None:
            raise ValueError("a block without a cue timing")
        cues.append(cue)
    if not cues:
        raise ValueError("no cues")
    return cues


def read(source: CaptionSource, s3: S3, work: Path, index: int = 0) -> list[Cue]:
    """The sidecar file from S3, parsed and shifted by its TimeDelta; error 1010 if it cannot be read."""
    bucket, key = split_s3(source.source_file)
    path = work / f"caption{index}.txt"
    try:
        s3.download_file(Bucket=bucket, Key=key, Filename=str(path))
    except Exception as exc:  # no such key or bucket, or S3 unreachable
        raise unreadable(source.source_file, "the file could not be read") from exc
    try:
        if path.stat().st_size > MAX_CAPTION_BYTES:
            raise ValueError("too large")
        cues = parse(path.read_bytes().decode("utf-8"), source.source_type)
    except (ValueError, UnicodeDecodeError) as exc:
        raise unreadable(source.source_file, f"No parser found for {source.source_type} captions") from exc
    shifted = [Cue(c.start_ms + source.time_delta_ms, c.end_ms + source.time_delta_ms, c.text) for c in cues]
    return [Cue(max(c.start_ms, 0), c.end_ms, c.text) for c in shifted if c.end_ms > 0]


def _stamp(ms: int) -> str:
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}"


def write_rendition(
    cues: list[Cue], folder: Path, name: str, segment_s: int, duration_ms: int, mpegts_start: int
) -> Path:
    """`<name>.m3u8` and its WebVTT segments `<name>_00001.vtt`, ... in `folder`, covering `duration_ms`."""
    duration_ms = max(duration_ms, 1)
    step = segment_s * 1000
    count = max(1, math.ceil(duration_ms / step))
    header = f"WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:{mpegts_start},LOCAL:00:00:00.000\n"
    entries = []
    for n in range(count):
        start, end = n * step, min((n + 1) * step, duration_ms)
        last = n == count - 1
        inside = [c for c in cues if c.start_ms < (math.inf if last else end) and c.end_ms > start]
        body = "".join(f"\n{_stamp(c.start_ms)} --> {_stamp(c.end_ms)}\n{c.text}\n" for c in inside)
        segment = f"{name}_{n + 1:05d}.vtt"
        (folder / segment).write_text(header + body, encoding="utf-8")
        entries.append((segment, (end - start) / 1000))
    lines = [
        "#EXTM3U",
        "#EXT-X-VERSION:3",
        f"#EXT-X-TARGETDURATION:{math.ceil(max(d for _, d in entries))}",
        "#EXT-X-MEDIA-SEQUENCE:1",
        "#EXT-X-PLAYLIST-TYPE:VOD",
    ]
    for segment, seconds in entries:
        lines += [f"#EXTINF:{seconds:.3f},", segment]
    lines.append("#EXT-X-ENDLIST")
    playlist = folder / f"{name}.m3u8"
    playlist.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return playlist


def _quoted(value: str) -> str:
    """An RFC 8216 quoted-string may hold no double quote, CR or LF."""
    return '"' + re.sub(r'["\r\n]', "", value) + '"'


def media_line(output: CaptionOutput, uri: str, default: bool) -> str:
    """The caption output's EXT-X-MEDIA line in the multivariant playlist."""
    language = (output.language or "").lower()
    name = output.description or output.language or output.name_modifier
    attributes = [f"TYPE=SUBTITLES,GROUP-ID={_quoted(SUBTITLES_GROUP)}"]
    if language:
        attributes.append(f"LANGUAGE={_quoted(language)}")
    attributes += [
        f"NAME={_quoted(name)}",
        f"DEFAULT={'YES' if default else 'NO'}",
        "AUTOSELECT=YES",
        f"URI={_quoted(uri)}",
    ]
    return "#EXT-X-MEDIA:" + ",".join(attributes)
