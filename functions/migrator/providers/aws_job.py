"""The `aws` target's MediaConvert job for one asset, and where its output lives (pure: no I/O).

A video at the `aws` target is the output of one AWS Elemental MediaConvert job: the archived original (the stack's
archive, ArchiveFirst) in, an HLS ladder out, in the stack's output bucket under the asset's own folder, which is
also where CloudFront serves it from:

    {public|signed}/{asset id as key segments}/index.m3u8        the master playlist
    ... index_{rendition}.m3u8, index_{rendition}_00001.ts       each rendition (MediaConvert's own names)
    ... index_captions_{n}.m3u8 and its .vtt segments             each caption track, a WebVTT rendition
    ... poster.0000000.jpg                                       the frame capture (the poster)

The first folder is the playback the row asks for: `signed/` is served only to a CloudFront signed URL or cookie (the
distribution's default behaviour trusts the stack's key group), `public/` to anyone (its own behaviour); a row's
privacy is never widened by where its files land.

The job's shape is the API's (https://docs.aws.amazon.com/mediaconvert/latest/apireference/jobs.html; the service
model's JobSettings): one input (`FileInput` the s3:// URI, the default audio selector, one caption selector per
archived caption file, "WEBVTT" or "SRT" `SourceSettings` with `FileSourceSettings.SourceFile`), an HLS group
(`HlsGroupSettings.Destination` the master's s3:// path without its suffix: "MediaConvert ... adds the .m3u8
extension", and each output's `NameModifier`, "required when you create multiple outputs in the same output
group") whose caption outputs carry `CaptionDescriptions` with `DestinationType` "WEBVTT" and the track's language
as `CustomLanguageCode` ("for streaming outputs, you can also use any other code in the full RFC-5646
specification", pattern `^[A-Za-z]{2,3}(-[A-Za-z0-9-]+)?$`), and a file group of one FRAME_CAPTURE output (RAW
container) for the poster. The ladder is QVBR H.264 with AAC, never upscaled past the source by the encoder's
choice alone: each rung sets only its height (the width follows the source's aspect ratio).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..archive.plan import key_of_id
from ..messages import CAPTION_KINDS, Track

MASTER = "index"  # the HLS group's base name: index.m3u8
POSTER = "poster"  # the frame capture's base name: poster.0000000.jpg
POSTER_FILE = f"{POSTER}.0000000.jpg"  # "<base><modifier>.<7-digit counter>.jpg" (the frame capture's naming)
PUBLIC, SIGNED = "public", "signed"
# The user metadata a job carries (UserMetadata: strings only): ours, found again by a lookup when an answer is lost.
ASSET_KEY, STACK_KEY, GENERATION_KEY = "migrator_asset", "migrator_stack", "migrator_generation"
MP4_KEY = "migrator_mp4"  # "1" where the job also writes the MP4 (`mp4` option)
MP4 = "video"  # the MP4 group's base name: video.mp4
MP4_FILE = f"{MP4}.mp4"
MP4_RUNG_HEIGHT = 720  # the download's one rendition
POSTER_KEY = "migrator_poster"  # the poster the video uses where it is the row's own image, not the frame capture
_IMAGE_SUFFIXES = ("jpg", "png", "webp")  # what the archive names a kept image (archive.sidefiles.file_name)
MAX_METADATA_VALUE = 256  # what we put in a metadata value at most (asset ids are shorter)
TOKEN_LENGTH = 64  # ClientRequestToken: "any string that includes up to 64 ASCII characters"
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9-]+)?$")  # CaptionDescription.CustomLanguageCode's pattern


@dataclass(frozen=True)
class Rung:
    """One rendition of the ladder: its name (the output's NameModifier) and its H.264 quality."""

    name: str
    height: int
    max_bitrate: int  # bits/s, QVBR's ceiling
    audio_bitrate: int = 128_000


# A ladder for web playback, Apple's HLS authoring spec's heights at conservative ceilings.
LADDER: tuple[Rung, ...] = (
    Rung("1080p", 1080, 6_000_000),
    Rung("720p", 720, 3_500_000),
    Rung("360p", 360, 900_000, audio_bitrate=96_000),
)


@dataclass(frozen=True)
class Caption:
    """An archived caption file a job turns into a WebVTT rendition."""

    uri: str  # s3://archive/... as the archive kept it
    language: str
    source_type: str  # WEBVTT | SRT
    label: str  # what a player shows (LanguageDescription)


def playback_folder(playback: str) -> str:
    """Where a video of this playback (public or signed) lands: a signed one only where signing is required."""
    return PUBLIC if playback == PUBLIC else SIGNED


def output_prefix(playback: str, asset_id: str) -> str:
    """The asset's folder in the output bucket (no trailing slash)."""
    return f"{playback_folder(playback)}/{key_of_id(asset_id)}"


def master_key(playback: str, asset_id: str) -> str:
    return f"{output_prefix(playback, asset_id)}/{MASTER}.m3u8"


def poster_key(playback: str, asset_id: str) -> str:
    return f"{output_prefix(playback, asset_id)}/{POSTER_FILE}"


def request_token(stack: str, asset_id: str, generation: int) -> str:
    """The create's ClientRequestToken: the same for every try of one generation of one asset in one stack, so a
    create sent again within the service's minute returns the first job (then the lookup by metadata takes over)."""
    digest = hashlib.sha256(f"{stack}\n{asset_id}\n{generation}".encode()).hexdigest()
    return digest[:TOKEN_LENGTH]


def user_metadata(stack: str, asset_id: str, generation: int) -> dict[str, str]:
    return {ASSET_KEY: asset_id[:MAX_METADATA_VALUE], STACK_KEY: stack, GENERATION_KEY: str(generation)}


def poster_image(kept: Mapping[str, str]) -> tuple[str, str] | None:
    """The row's own poster as the archive kept it (its key, and the file name it gets beside the renditions), or
    None: none kept, or a file the archive could not read as an image (`thumbnail.bin`)."""
    key = kept.get("thumbnail")
    suffix = key.rsplit(".", 1)[-1] if key and "." in key else ""
    return (key, f"{POSTER}.{suffix}") if key and suffix in _IMAGE_SUFFIXES else None


def poster_file(metadata: Mapping[str, object]) -> str:
    """The poster a job's video shows: the row's image its create copied (named in the metadata), else the frame."""
    named = metadata.get(POSTER_KEY)
    if isinstance(named, str) and named in {f"{POSTER}.{s}" for s in _IMAGE_SUFFIXES}:
        return named
    return POSTER_FILE


def captions_of(tracks: Sequence[Track], kept: Mapping[str, str], bucket: str) -> list[Caption]:
    """The row's caption and subtitle tracks whose file the archive kept as WebVTT or SubRip (`kept`: each side file's
    name, as archive.sidefiles names it, to its key), in the row's order; the rest cannot be given to a job."""
    from ..archive.sidefiles import track_name  # the archive's own naming, so the two never disagree

    found = []
    for track in tracks:
        key = kept.get(track_name(track)) if track.kind in CAPTION_KINDS else None
        if not key or not _LANGUAGE.match(track.language):
            continue
        kind = "WEBVTT" if key.endswith(".vtt") else "SRT" if key.endswith(".srt") else None
        if kind is None:  # a file the archive could not read as a caption (`.txt`)
            continue
        found.append(Caption(f"s3://{bucket}/{key}", track.language, kind, track.name or track.language))
    return found


def job_settings(
    source_uri: str, bucket: str, prefix: str, captions: Sequence[Caption], ladder=LADDER, mp4: bool = False
) -> dict:
    """The JobSettings of the asset's job (boto3's PascalCase): `source_uri` in, HLS and the poster under
    `s3://{bucket}/{prefix}/`, and with `mp4` one 720p MP4 beside them (`video.mp4`)."""
    selectors = {
        f"Captions {n}": {
            # No language here: the selector's CustomLanguageCode takes ISO 639-2/3 (three letters) only; the
            # rendition's (CaptionDescription) takes any RFC 5646 tag for streaming outputs.
            "SourceSettings": {"SourceType": c.source_type, "FileSourceSettings": {"SourceFile": c.uri}},
        }
        for n, c in enumerate(captions, 1)
    }
    source: dict = {
        "FileInput": source_uri,
        "AudioSelectors": {"Audio Selector 1": {"DefaultSelection": "DEFAULT"}},
        "VideoSelector": {},
        "TimecodeSource": "ZEROBASED",
    }
    if selectors:
        source["CaptionSelectors"] = selectors
    outputs = [_rendition(rung) for rung in ladder]
    outputs += [
        {
            "NameModifier": f"_captions_{n}",
            "ContainerSettings": {"Container": "M3U8", "M3u8Settings": {}},
            "CaptionDescriptions": [
                {
                    "CaptionSelectorName": f"Captions {n}",
                    "CustomLanguageCode": c.language,
                    "LanguageDescription": c.label[:100],
                    "DestinationSettings": {"DestinationType": "WEBVTT"},
                }
            ],
        }
        for n, c in enumerate(captions, 1)
    ]
    hls = {
        "Name": "HLS",
        "OutputGroupSettings": {
            "Type": "HLS_GROUP_SETTINGS",
            "HlsGroupSettings": {
                "Destination": f"s3://{bucket}/{prefix}/{MASTER}",
                "SegmentLength": 6,
                "MinSegmentLength": 0,
                "DirectoryStructure": "SINGLE_DIRECTORY",
                "ManifestDurationFormat": "INTEGER",
                "StreamInfResolution": "INCLUDE",
                "CaptionLanguageSetting": "INSERT",
            },
        },
        "Outputs": outputs,
    }
    poster = {
        "Name": "Poster",
        "OutputGroupSettings": {
            "Type": "FILE_GROUP_SETTINGS",
            "FileGroupSettings": {"Destination": f"s3://{bucket}/{prefix}/{POSTER}"},
        },
        "Outputs": [
            {
                "ContainerSettings": {"Container": "RAW"},
                "VideoDescription": {
                    "CodecSettings": {
                        "Codec": "FRAME_CAPTURE",
                        # One frame, taken at the second second (1 capture every 2 s, at most 1): past a black lead-in.
                        "FrameCaptureSettings": {
                            "FramerateNumerator": 1,
                            "FramerateDenominator": 2,
                            "MaxCaptures": 1,
                            "Quality": 80,
                        },
                    }
                },
            }
        ],
    }
    groups = [hls, poster]
    if mp4:
        rung = next((r for r in ladder if r.height == MP4_RUNG_HEIGHT), ladder[0])
        download = {**_rendition(rung), "ContainerSettings": {"Container": "MP4", "Mp4Settings": {}}}
        del download["NameModifier"]  # the group's one output: video.mp4
        groups.append(
            {
                "Name": "MP4",
                "OutputGroupSettings": {
                    "Type": "FILE_GROUP_SETTINGS",
                    "FileGroupSettings": {"Destination": f"s3://{bucket}/{prefix}/{MP4}"},
                },
                "Outputs": [download],
            }
        )
    return {"TimecodeConfig": {"Source": "ZEROBASED"}, "Inputs": [source], "OutputGroups": groups}


def _rendition(rung: Rung) -> dict:
    return {
        "NameModifier": f"_{rung.name}",
        "ContainerSettings": {"Container": "M3U8", "M3u8Settings": {}},
        "VideoDescription": {
            "Height": rung.height,
            "CodecSettings": {
                "Codec": "H_264",
                "H264Settings": {
                    "RateControlMode": "QVBR",
                    "MaxBitrate": rung.max_bitrate,
                    "SceneChangeDetect": "TRANSITION_DETECTION",
                },
            },
        },
        "AudioDescriptions": [
            {
                "CodecSettings": {
                    "Codec": "AAC",
                    "AacSettings": {
                        "Bitrate": rung.audio_bitrate,
                        "CodingMode": "CODING_MODE_2_0",
                        "SampleRate": 48000,
                    },
                }
            }
        ],
    }
