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

What the simulator does not model is refused with the same exception, its message saying so: job templates, inputs
over HTTP(S), more than one input, and output groups other than HLS (FILE, DASH ISO, CMAF, MS Smooth). The words of
the real service's validation messages are not documented; these are the simulator's own.
"""

from __future__ import annotations

import re
from typing import Any

from .mediaconvert_jobs import STATUSES
from .mediaconvert_transcode import DEFAULT_SEGMENT_S, HlsGroup, HlsOutput, Plan

FILE_INPUT = re.compile(r"^s3://([^\/]+\/+)+((([^\/]*)))|^https?://[^\/].*[^&]$")
DESTINATION = re.compile(r"^s3:\/\/.*$")
MAX_FILE_INPUT = 2048
MAX_TOKEN = 64
LIST_MAX = 20  # ListJobs: "Number of jobs, up to twenty, that will be returned at one time"
ORDERS = ("ASCENDING", "DESCENDING")


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


def _output(raw: Any, where: str, alone: bool) -> HlsOutput:
    output = _object(raw, where)
    modifier = output.get("nameModifier")
    if modifier is None and not alone:
        raise Invalid(f"{where}.nameModifier is required when an output group has more than one output")
    if modifier is None:
        # How the service names a lone output's playlist beside the multivariant one is not in the documents read.
        raise Invalid(f"{where}.nameModifier: the simulator needs one on every HLS output")
    if modifier is not None and (not isinstance(modifier, str) or not 1 <= len(modifier) <= 256 or "/" in modifier):
        raise Invalid(f"{where}.nameModifier must be 1 to 256 characters, without a slash")
    container = _object(output.get("containerSettings", {}), f"{where}.containerSettings").get("container", "M3U8")
    if container != "M3U8":
        raise Invalid(f"{where}: an HLS output's container must be M3U8; the simulator models no other")
    video = _object(output.get("videoDescription", {}), f"{where}.videoDescription")
    sizes = {}
    for name in ("width", "height"):
        if video.get(name) is not None:
            sizes[name] = _integer(video[name], f"{where}.videoDescription.{name}", 32, 8192)  # __integerMin32Max8192
    codec = _object(video.get("codecSettings", {}), f"{where}.videoDescription.codecSettings")
    if codec.get("codec", "H_264") != "H_264":
        raise Invalid(f"{where}: the simulator encodes H_264 video only")
    h264 = _object(codec.get("h264Settings", {}), f"{where}.videoDescription.codecSettings.h264Settings")
    bitrate = h264.get("bitrate", h264.get("maxBitrate"))
    if bitrate is not None:
        bitrate = _integer(bitrate, f"{where}.videoDescription.codecSettings.h264Settings.bitrate", 1000, 1152000000)
    audio = output.get("audioDescriptions")
    if audio is not None and not isinstance(audio, list):
        raise Invalid(f"{where}.audioDescriptions must be a list")
    return HlsOutput(modifier or "", sizes.get("width"), sizes.get("height"), bitrate, bool(audio))


def _group(raw: Any, where: str) -> HlsGroup:
    group = _object(raw, where)
    settings = _object(group.get("outputGroupSettings"), f"{where}.outputGroupSettings")
    if settings.get("type") != "HLS_GROUP_SETTINGS":
        raise Invalid(f"{where}.outputGroupSettings.type: the simulator models HLS_GROUP_SETTINGS only")
    hls = _object(settings.get("hlsGroupSettings"), f"{where}.outputGroupSettings.hlsGroupSettings")
    destination = hls.get("destination")
    if not isinstance(destination, str) or not DESTINATION.match(destination) or "/" not in destination[5:]:
        raise Invalid(f"{where}.outputGroupSettings.hlsGroupSettings.destination must be s3://bucket/path")
    segment = hls.get("segmentLength", DEFAULT_SEGMENT_S)
    segment = _integer(segment, f"{where}.outputGroupSettings.hlsGroupSettings.segmentLength", 1, 2147483647)
    outputs = group.get("outputs")
    if not isinstance(outputs, list) or not outputs:
        raise Invalid(f"{where}.outputs must list at least one output")
    made = tuple(_output(o, f"{where}.outputs[{i}]", len(outputs) == 1) for i, o in enumerate(outputs))
    if len({o.name_modifier for o in made}) != len(made):
        raise Invalid(f"{where}: each output's nameModifier must differ, or their files would overwrite each other")
    return HlsGroup(destination, segment, made)


def plan(settings_raw: Any) -> Plan:
    """JobSettings -> the Plan the transcode runs."""
    settings = _object(settings_raw, "settings")
    inputs = settings.get("inputs")
    if not isinstance(inputs, list) or not inputs:
        raise Invalid("settings.inputs must list the job's input")
    if len(inputs) > 1:
        raise Invalid("settings.inputs: the simulator models one input a job")
    file_input = _object(inputs[0], "settings.inputs[0]").get("fileInput")
    if not isinstance(file_input, str) or len(file_input) > MAX_FILE_INPUT or not FILE_INPUT.match(file_input):
        raise Invalid("settings.inputs[0].fileInput must be an s3:// or http(s):// URL of at most 2048 characters")
    if not file_input.startswith("s3://"):
        raise Invalid("settings.inputs[0].fileInput: the simulator reads s3:// inputs only")
    groups = settings.get("outputGroups")
    if not isinstance(groups, list) or not groups:
        raise Invalid("settings.outputGroups must list at least one output group")
    return Plan(file_input, tuple(_group(g, f"settings.outputGroups[{i}]") for i, g in enumerate(groups)))


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
