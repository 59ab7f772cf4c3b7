"""The MediaConvert simulator's checks of a CreateJob body and of ListJobs' query: a Plan to run, or the reason a
BadRequestException gives.

The rules are the service model's (botocore's mediaconvert 2017-08-29 service-2.json, the same model the API
reference at https://docs.aws.amazon.com/mediaconvert/latest/apireference/jobs.html is made from): CreateJobRequest
requires Role and Settings; FileInput matches `^s3://([^\\/]+\\/+)+((([^\\/]*)))|^https?://[^\\/].*[^&]$` and is at
most 2,048 characters; HlsGroupSettings.Destination matches `^s3:\\/\\/.*$`; NameModifier is 1 to 256 characters and
"When you create multiple outputs in the same output group, Name modifier is required"; Priority is -50 to 50;
UserMetadata maps strings to strings; ClientRequestToken "can be any string that includes up to 64 ASCII
characters" (https://docs.aws.amazon.com/mediaconvert/latest/apireference/idempotency.html); ListJobs' maxResults
is 1 to 20, order ASCENDING or DESCENDING, status one of JobStatus.

Captions (mediaconvert_captions.py): CaptionSelectors map a name to a selector whose SourceSettings.SourceType is
WEBVTT or SRT here, with FileSourceSettings.SourceFile matching the model's pattern (an s3:// or http(s):// URI ending
.scc, .ttml, .dfxp, .stl, .srt, .xml, .smi, .vtt or .webvtt, at least 14 characters), TimeDelta and TimeDeltaUnits
(SECONDS or MILLISECONDS); CustomLanguageCode matches `^[A-Za-z]{2,3}(-[A-Za-z-]+)?$`, LanguageCode is one of the
model's LanguageCode enum (three upper-case letters here, not the whole list). An HLS output with CaptionDescriptions
is a captions output: its one description's CaptionSelectorName must name a selector of the input, its
DestinationSettings.DestinationType must be WEBVTT, and it holds no video or audio ("Put your captions in the same
output group, but a different output from your video", https://docs.aws.amazon.com/mediaconvert/latest/ug/
ttml-and-webvtt-output-captions.html). An HLS group needs at least one video output beside its captions.

File groups (mediaconvert_files.py): FILE_GROUP_SETTINGS with FileGroupSettings.Destination matching `^s3:\\/\\/.*$`;
each output an MP4 (Container MP4, Codec H_264) or a frame capture (Container RAW, Codec FRAME_CAPTURE, its
FrameCaptureSettings "Required when you set Codec to the value FRAME_CAPTURE": FramerateNumerator and
FramerateDenominator 1 to 2147483647, MaxCaptures 1 to 10000000, Quality 1 to 100); "MediaConvert doesn't support
jobs that consist only of a frame capture output" (https://docs.aws.amazon.com/mediaconvert/latest/ug/
file-group-with-frame-capture-output.html). Output.Extension is at most 256 characters (the model's __stringMax256).

What the simulator does not model is refused with the same exception, its message saying so: job templates, inputs
over HTTP(S) (captions included), more than one input, output groups other than HLS and FILE (DASH ISO, CMAF, MS
Smooth), caption sources and destinations other than WebVTT and SRT into WebVTT, and frame-capture numerators and
denominators left unset (the service's defaults are not documented). The words of the real service's validation
messages are not documented; these are the simulator's own.
"""

from __future__ import annotations

import re
from typing import Any

from .mediaconvert_captions import LARGE_SEGMENT_S, SOURCE_TYPES, CaptionOutput, CaptionSource
from .mediaconvert_files import MP4, RAW, FileGroup, FileOutput, FrameCapture
from .mediaconvert_jobs import STATUSES
from .mediaconvert_transcode import DEFAULT_SEGMENT_S, HlsGroup, HlsOutput, Plan

FILE_INPUT = re.compile(r"^s3://([^\/]+\/+)+((([^\/]*)))|^https?://[^\/].*[^&]$")
DESTINATION = re.compile(r"^s3:\/\/.*$")
MAX_FILE_INPUT = 2048
MAX_TOKEN = 64
LIST_MAX = 20  # ListJobs: "Number of jobs, up to twenty, that will be returned at one time"
ORDERS = ("ASCENDING", "DESCENDING")
SOURCE_FILE = re.compile(
    r"^((s3://(.*?)\.(scc|SCC|ttml|TTML|dfxp|DFXP|stl|STL|srt|SRT|xml|XML|smi|SMI|vtt|VTT|webvtt|WEBVTT))|"
    r"(https?://(.*?)\.(scc|SCC|ttml|TTML|dfxp|DFXP|stl|STL|srt|SRT|xml|XML|smi|SMI|vtt|VTT|webvtt|WEBVTT)"
    r"(\?([^&=]+=[^&]+&)*[^&=]+=[^&]+)?))$"
)
CUSTOM_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z-]+)?$")
LANGUAGE_CODE = re.compile(r"^[A-Z]{3}$")  # the model's LanguageCode enum: ENG, SPA, FRA, ... (all three letters)
TIME_DELTA_UNITS = {"SECONDS": 1000, "MILLISECONDS": 1}


class Invalid(Exception):
    """A request MediaConvert answers with BadRequestException (400); the message is the simulator's."""


def _object(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise Invalid(f"{where} must be an object")
    return value


def _integer(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Invalid(f"{where} must be an integer from {low} to {high}")
    return value


def _string_map(value: Any, where: str) -> dict[str, str]:
    mapping = _object(value, where)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
        raise Invalid(f"{where} must map strings to strings")
    return mapping


def client_token(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > MAX_TOKEN or not value.isascii():
        raise Invalid(f"clientRequestToken must be 1 to {MAX_TOKEN} ASCII characters")
    return value


def _modifier(output: dict, where: str, alone: bool, required_alone: bool) -> str:
    modifier = output.get("nameModifier")
    if modifier is None and not alone:
        raise Invalid(f"{where}.nameModifier is required when an output group has more than one output")
    if modifier is None and required_alone:
        # How the service names a lone output's playlist beside the multivariant one is not in the documents read.
        raise Invalid(f"{where}.nameModifier: the simulator needs one on every HLS output")
    if modifier is not None and (not isinstance(modifier, str) or not 1 <= len(modifier) <= 256 or "/" in modifier):
        raise Invalid(f"{where}.nameModifier must be 1 to 256 characters, without a slash")
    return modifier or ""


def _video(output: dict, where: str, codecs: tuple[str, ...]) -> tuple[dict, dict, str]:
    """(the VideoDescription, its CodecSettings, the codec) of an output, the codec one of `codecs`."""
    video = _object(output.get("videoDescription", {}), f"{where}.videoDescription")
    codec = _object(video.get("codecSettings", {}), f"{where}.videoDescription.codecSettings")
    name = codec.get("codec", "H_264")
    if name not in codecs:
        raise Invalid(f"{where}.videoDescription.codecSettings.codec: the simulator models {' or '.join(codecs)} here")
    return video, codec, name


def _sizes(video: dict, where: str) -> dict[str, int | None]:
    # __integerMin32Max8192
    return {
        n: _integer(video[n], f"{where}.videoDescription.{n}", 32, 8192) if video.get(n) is not None else None
        for n in ("width", "height")
    }


def _bitrate(codec: dict, where: str) -> int | None:
    h264 = _object(codec.get("h264Settings", {}), f"{where}.videoDescription.codecSettings.h264Settings")
    bitrate = h264.get("bitrate", h264.get("maxBitrate"))
    if bitrate is None:
        return None
    return _integer(bitrate, f"{where}.videoDescription.codecSettings.h264Settings.bitrate", 1000, 1152000000)


def _audio(output: dict, where: str) -> bool:
    audio = output.get("audioDescriptions")
    if audio is not None and not isinstance(audio, list):
        raise Invalid(f"{where}.audioDescriptions must be a list")
    return bool(audio)


def _container(output: dict, where: str, default: str) -> str:
    return _object(output.get("containerSettings", {}), f"{where}.containerSettings").get("container", default)


def _output(output: dict, where: str, alone: bool) -> HlsOutput:
    modifier = _modifier(output, where, alone, required_alone=True)
    if _container(output, where, "M3U8") != "M3U8":
        raise Invalid(f"{where}: an HLS output's container must be M3U8; the simulator models no other")
    video, codec, _ = _video(output, where, ("H_264",))
    sizes = _sizes(video, where)
    return HlsOutput(modifier, sizes["width"], sizes["height"], _bitrate(codec, where), _audio(output, where))


def _caption_output(output: dict, where: str, alone: bool, selectors: set[str]) -> CaptionOutput:
    """An HLS output whose CaptionDescriptions make it a WebVTT captions track of its own."""
    modifier = _modifier(output, where, alone, required_alone=True)
    if "videoDescription" in output or output.get("audioDescriptions"):
        raise Invalid(f"{where}: put WebVTT captions in an output of their own, without video or audio")
    descriptions = output["captionDescriptions"]
    if not isinstance(descriptions, list) or len(descriptions) != 1:
        raise Invalid(f"{where}.captionDescriptions: put each captions track in its own output")
    here = f"{where}.captionDescriptions[0]"
    description = _object(descriptions[0], here)
    selector = description.get("captionSelectorName")
    if not isinstance(selector, str) or selector not in selectors:
        raise Invalid(f"{here}.captionSelectorName must name one of the input's captionSelectors")
    destination = _object(description.get("destinationSettings", {}), f"{here}.destinationSettings")
    if destination.get("destinationType") != "WEBVTT":
        raise Invalid(f"{here}.destinationSettings.destinationType: the simulator models WEBVTT in HLS only")
    language, custom = description.get("languageCode"), description.get("customLanguageCode")
    if language is not None and (not isinstance(language, str) or not LANGUAGE_CODE.match(language)):
        raise Invalid(f"{here}.languageCode must be one of the model's LanguageCode values (ENG, SPA, ...)")
    if custom is not None and (not isinstance(custom, str) or not CUSTOM_LANGUAGE.match(custom)):
        raise Invalid(f"{here}.customLanguageCode must match ^[A-Za-z]{{2,3}}(-[A-Za-z-]+)?$")
    label = description.get("languageDescription")
    if label is not None and not isinstance(label, str):
        raise Invalid(f"{here}.languageDescription must be a string")
    return CaptionOutput(modifier, selector, custom or language, label or None)


def _destination(settings: dict, where: str) -> str:
    destination = settings.get("destination")
    if not isinstance(destination, str) or not DESTINATION.match(destination) or "/" not in destination[5:]:
        raise Invalid(f"{where}.destination must be s3://bucket/path")
    return destination


def _hls_group(group: dict, settings: dict, where: str, selectors: set[str]) -> HlsGroup:
    hls = _object(settings.get("hlsGroupSettings"), f"{where}.outputGroupSettings.hlsGroupSettings")
    destination = _destination(hls, f"{where}.outputGroupSettings.hlsGroupSettings")
    segment = hls.get("segmentLength", DEFAULT_SEGMENT_S)
    segment = _integer(segment, f"{where}.outputGroupSettings.hlsGroupSettings.segmentLength", 1, 2147483647)
    control = hls.get("captionSegmentLengthControl", "LARGE_SEGMENTS")
    if control not in ("LARGE_SEGMENTS", "MATCH_VIDEO"):
        raise Invalid(
            f"{where}.outputGroupSettings.hlsGroupSettings.captionSegmentLengthControl is not one the model has"
        )
    outputs = group.get("outputs")
    if not isinstance(outputs, list) or not outputs:
        raise Invalid(f"{where}.outputs must list at least one output")
    videos: list[HlsOutput] = []
    texts: list[CaptionOutput] = []
    for i, raw in enumerate(outputs):
        output = _object(raw, f"{where}.outputs[{i}]")
        if "captionDescriptions" in output:
            texts.append(_caption_output(output, f"{where}.outputs[{i}]", len(outputs) == 1, selectors))
        else:
            videos.append(_output(output, f"{where}.outputs[{i}]", len(outputs) == 1))
    if not videos:
        raise Invalid(f"{where}.outputs: an HLS group needs a video output beside its captions")
    modifiers = [o.name_modifier for o in videos] + [t.name_modifier for t in texts]
    if len(set(modifiers)) != len(modifiers):
        raise Invalid(f"{where}: each output's nameModifier must differ, or their files would overwrite each other")
    caption_s = segment if control == "MATCH_VIDEO" else LARGE_SEGMENT_S
    return HlsGroup(destination, segment, tuple(videos), tuple(texts), caption_s)


def _frame_capture(codec: dict, where: str) -> FrameCapture:
    here = f"{where}.videoDescription.codecSettings.frameCaptureSettings"
    settings = _object(codec.get("frameCaptureSettings"), here)
    if settings.get("framerateNumerator") is None or settings.get("framerateDenominator") is None:
        raise Invalid(f"{here}: the simulator needs framerateNumerator and framerateDenominator")
    numerator = _integer(settings["framerateNumerator"], f"{here}.framerateNumerator", 1, 2147483647)
    denominator = _integer(settings["framerateDenominator"], f"{here}.framerateDenominator", 1, 2147483647)
    most = settings.get("maxCaptures")
    most = None if most is None else _integer(most, f"{here}.maxCaptures", 1, 10000000)
    quality = settings.get("quality")
    quality = FrameCapture.quality if quality is None else _integer(quality, f"{here}.quality", 1, 100)
    return FrameCapture(numerator, denominator, most, quality)


def _file_output(output: dict, where: str, alone: bool) -> FileOutput:
    modifier = _modifier(output, where, alone, required_alone=False)
    extension = output.get("extension")
    if extension is not None and (
        not isinstance(extension, str) or not 1 <= len(extension) <= 256 or "/" in extension or extension[0] == "."
    ):
        raise Invalid(f"{where}.extension must be up to 256 characters, without a slash or a leading dot")
    container = _container(output, where, MP4)
    if container == RAW:
        if output.get("audioDescriptions"):
            raise Invalid(f"{where}: a frame capture output has no audio")
        video, codec, _ = _video(output, where, ("FRAME_CAPTURE",))
        sizes = _sizes(video, where)
        return FileOutput(modifier, RAW, sizes["width"], sizes["height"], capture=_frame_capture(codec, where))
    if container != MP4:
        raise Invalid(f"{where}.containerSettings.container: the simulator models MP4 and RAW in a file group")
    video, codec, _ = _video(output, where, ("H_264",))
    sizes = _sizes(video, where)
    bitrate, audio = _bitrate(codec, where), _audio(output, where)
    return FileOutput(modifier, MP4, sizes["width"], sizes["height"], bitrate, audio, extension)


def _file_group(group: dict, settings: dict, where: str) -> FileGroup:
    files = _object(settings.get("fileGroupSettings"), f"{where}.outputGroupSettings.fileGroupSettings")
    destination = _destination(files, f"{where}.outputGroupSettings.fileGroupSettings")
    outputs = group.get("outputs")
    if not isinstance(outputs, list) or not outputs:
        raise Invalid(f"{where}.outputs must list at least one output")
    made = tuple(
        _file_output(_object(o, f"{where}.outputs[{i}]"), f"{where}.outputs[{i}]", len(outputs) == 1)
        for i, o in enumerate(outputs)
    )
    if len({(o.name_modifier, o.capture is None) for o in made}) != len(made):
        raise Invalid(f"{where}: each output's nameModifier must differ, or their files would overwrite each other")
    return FileGroup(destination, made)


def _group(raw: Any, where: str, selectors: set[str]) -> HlsGroup | FileGroup:
    group = _object(raw, where)
    settings = _object(group.get("outputGroupSettings"), f"{where}.outputGroupSettings")
    kind = settings.get("type")
    if kind == "HLS_GROUP_SETTINGS":
        return _hls_group(group, settings, where, selectors)
    if kind == "FILE_GROUP_SETTINGS":
        return _file_group(group, settings, where)
    raise Invalid(f"{where}.outputGroupSettings.type: the simulator models HLS_GROUP_SETTINGS and FILE_GROUP_SETTINGS")


def _caption_selectors(raw: Any) -> tuple[CaptionSource, ...]:
    """The input's CaptionSelectors: one sidecar file each."""
    selectors = _object(raw, "settings.inputs[0].captionSelectors")
    if len(selectors) > 100:  # "You can use up to 100 captions selectors per input" (the CaptionSelector model)
        raise Invalid("settings.inputs[0].captionSelectors: at most 100 an input")
    made = []
    for name, value in selectors.items():
        where = f"settings.inputs[0].captionSelectors[{name}]"
        source = _object(_object(value, where).get("sourceSettings"), f"{where}.sourceSettings")
        kind = source.get("sourceType")
        if kind not in SOURCE_TYPES:
            raise Invalid(f"{where}.sourceSettings.sourceType: the simulator models {' and '.join(SOURCE_TYPES)}")
        files = _object(source.get("fileSourceSettings"), f"{where}.sourceSettings.fileSourceSettings")
        source_file = files.get("sourceFile")
        if not isinstance(source_file, str) or len(source_file) < 14 or not SOURCE_FILE.match(source_file):
            raise Invalid(f"{where}.sourceSettings.fileSourceSettings.sourceFile must be a caption file's URI")
        if not source_file.startswith("s3://"):
            raise Invalid(f"{where}.sourceSettings.fileSourceSettings.sourceFile: the simulator reads s3:// only")
        units = files.get("timeDeltaUnits", "SECONDS")
        if units not in TIME_DELTA_UNITS:
            raise Invalid(f"{where}.sourceSettings.fileSourceSettings.timeDeltaUnits must be SECONDS or MILLISECONDS")
        delta = _integer(files.get("timeDelta", 0), f"{where}.timeDelta", -2147483648, 2147483647)
        made.append(CaptionSource(name, kind, source_file, delta * TIME_DELTA_UNITS[units]))
    return tuple(made)


def plan(settings_raw: Any) -> Plan:
    """JobSettings -> the Plan the transcode runs."""
    settings = _object(settings_raw, "settings")
    inputs = settings.get("inputs")
    if not isinstance(inputs, list) or not inputs:
        raise Invalid("settings.inputs must list the job's input")
    if len(inputs) > 1:
        raise Invalid("settings.inputs: the simulator models one input a job")
    first = _object(inputs[0], "settings.inputs[0]")
    file_input = first.get("fileInput")
    if not isinstance(file_input, str) or len(file_input) > MAX_FILE_INPUT or not FILE_INPUT.match(file_input):
        raise Invalid("settings.inputs[0].fileInput must be an s3:// or http(s):// URL of at most 2048 characters")
    if not file_input.startswith("s3://"):
        raise Invalid("settings.inputs[0].fileInput: the simulator reads s3:// inputs only")
    sources = _caption_selectors(first.get("captionSelectors", {}))
    groups = settings.get("outputGroups")
    if not isinstance(groups, list) or not groups:
        raise Invalid("settings.outputGroups must list at least one output group")
    made = tuple(_group(g, f"settings.outputGroups[{i}]", {c.name for c in sources}) for i, g in enumerate(groups))
    outputs = [o for g in made for o in g.outputs]
    if all(isinstance(o, FileOutput) and o.capture is not None for o in outputs):
        raise Invalid("settings.outputGroups: MediaConvert doesn't support jobs that consist only of a frame capture")
    return Plan(file_input, made, sources)


def create_fields(body: Any) -> dict[str, Any]:
    """A CreateJob body's fields, checked: role, settings, plan, queue (None: the default), user_metadata,
    client_request_token, priority."""
    request = _object(body, "the request body")
    if "jobTemplate" in request:
        raise Invalid("jobTemplate: the simulator models jobs with their own settings only")
    role = request.get("role")
    if not isinstance(role, str) or not role:
        raise Invalid("role is required")
    if "settings" not in request:
        raise Invalid("settings is required")
    queue = request.get("queue")
    if queue is not None and (not isinstance(queue, str) or not queue):
        raise Invalid("queue must be a queue's name or ARN")
    return {
        "role": role,
        "settings": request["settings"],
        "plan": plan(request["settings"]),
        "queue": queue,
        "user_metadata": _string_map(request.get("userMetadata", {}), "userMetadata"),
        "client_request_token": client_token(request.get("clientRequestToken")),
        "priority": _integer(request.get("priority", 0), "priority", -50, 50),
    }


def list_query(query: dict[str, list[str]]) -> dict[str, Any]:
    """ListJobs' query string: max_results, order (DESCENDING, newest first, unless asked), status, queue,
    next_token."""

    def one(name: str) -> str | None:
        values = query.get(name)
        return values[-1] if values else None

    raw_max = one("maxResults")
    try:
        max_results = LIST_MAX if raw_max is None else int(raw_max)
    except ValueError as exc:
        raise Invalid("maxResults must be an integer from 1 to 20") from exc
    _integer(max_results, "maxResults", 1, LIST_MAX)
    order = one("order") or "DESCENDING"  # "Default varies by resource": jobs are "your most recently created"
    if order not in ORDERS:
        raise Invalid("order must be ASCENDING or DESCENDING")
    status = one("status")
    if status is not None and status not in STATUSES:
        raise Invalid(f"status must be one of {', '.join(STATUSES)}")
    return {
        "max_results": max_results,
        "order": order,
        "status": status,
        "queue": one("queue"),
        "next_token": one("nextToken"),
    }
