"""The "mux" profile: Mux Video's asset API as the project's adapter speaks it (providers/mux.py).

HTTP Basic token id/secret; POST /video/v1/assets {"inputs": [{"url"}], "passthrough", "meta"}
-> 201 {"data": asset}, no idempotency key; GET /video/v1/assets newest first with
limit (<= 100) and an opaque cursor, no filter by passthrough; GET /video/v1/assets/{id};
text tracks as extra `inputs` of type text at create, or POST /video/v1/assets/{id}/tracks once
the asset is ready, each fetched from its URL (SRT or WebVTT) and listed in the asset's
`tracks` as preparing -> ready | errored;
status preparing -> ready|errored; errors {"error": {"type", "messages"}}; webhooks
video.asset.created/ready/errored signed `Mux-Signature: t=<unix>,v1=<hex>`; a 429 carries
no hint unless the rate_headers knob adds X-RateLimit-*. Its documented limits (creates
1/s sustained with bursts, other requests 5/s, in separate buckets) are this profile's
defaults: its `limits`. URL signing keys (/system/v1/signing-keys) and the tokens a
signed playback id's stream.mux.com URLs need (`/_play/mux/...` here): mux_signing.py. As a
source (library_size > 0): the library's assets, master access, test assets, live recordings,
text tracks still preparing, and their WebVTT at stream.mux.com (`render_library`, `serve_playback`);
each asset's thumbnail_time, default thumbnail and chapters track (issue 42): mux_library.py; as a target, an
asset's thumbnail_time (PATCH) and chapters track, served back at stream.mux.com: mux_target.py.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import copy
import json
import re
import secrets
import time
import urllib.parse
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from .. import media
from ..bucket import RateState
from ..config import SimConfig, is_http_url
from ..library import VTT, Item, Shelf
from ..profile import (
    KIND_STATUS,
    Account,
    Call,
    Draft,
    Event,
    MadeUp,
    ParamError,
    Profile,
    Reply,
    Store,
    alnum_id,
    basic_matches,
    derived_id,
    int_param,
    iso_z,
    reset_epoch,
    x_ratelimit,
)
from ..signing import sign_timestamped
from ..video import ERRORED, READY, TextTrack, Video
from . import analytics, mux_library, mux_target
from .mux_signing import VIDEO, serve_playback, signing_keys, token_of, token_problem

_STATUS = {READY: "ready", ERRORED: "errored"}  # anything else is "preparing"
# Error "type" per kind: invalid_parameters, unauthorized, not_found and too_many_requests
# are Mux's; the rest are our choice where Mux documents none.
_TYPES = {
    "invalid": "invalid_parameters",
    "unsupported": "invalid_parameters",
    "unauthorized": "unauthorized",
    "forbidden": "forbidden",
    "not_found": "not_found",
    "no_route": "not_found",
    "method": "not_found",
    "throttled": "too_many_requests",
    "busy": "too_many_requests",
    "full": "payload_too_large",
    "failed": "internal_server_error",
    "unavailable": "service_unavailable",
}
_MESSAGES = {
    "unsupported": "The input URL is not a supported media source",
    "unauthorized": "Unauthorized request",
    "not_found": "The requested asset does not exist",
    "throttled": "Too many requests, retry later.",
    "busy": "Too many assets are preparing, retry later.",
    "full": "The environment's storage is full.",
    "failed": "Internal server error",
    "unavailable": "Service unavailable",
}
_ERRORED_MESSAGES = {False: "The input file could not be processed", True: "The input URL could not be downloaded"}
_POLICIES = ("public", "signed", "drm")
# "Max 512 / 128 / 128 code points" (mux-python 5.1.2 AssetMetadata), counted as JavaScript counts a
# string's length (docs.mux.com "Add metadata to your videos"): in UTF-16 units.
_META_LIMITS = {"title": 512, "creator_id": 128, "external_id": 128}
PASSTHROUGH_MAX = 255  # characters, counted in UTF-16 units as a JavaScript string length
# The enums of CreateAssetRequest (mux-python 5.1.2, generated from Mux's OpenAPI), and of
# CreateStaticRenditionRequest.resolution; each names the file the rendition makes (StaticRendition.name).
_ENUMS = {
    "video_quality": ("basic", "plus", "premium"),
    "encoding_tier": ("smart", "baseline", "premium"),
    "max_resolution_tier": ("1080p", "1440p", "2160p"),
    "mp4_support": ("none", "standard", "capped-1080p", "audio-only", "audio-only,capped-1080p"),
    "master_access": ("none", "temporary"),
}
_BOOLEANS = ("test", "normalize_audio", "per_title_encode")
_RENDITIONS = ("highest", "audio-only", "2160p", "1440p", "1080p", "720p", "540p", "480p", "360p", "270p")


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


# "The language code value must be a valid BCP 47 specification compliant value" (create-asset-track).
_BCP47 = re.compile(r"^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$")


def _text_problem(entry: dict, where: str, taken: set[str]) -> str | None:
    """Why a text track (a create's input, or the tracks endpoint's body) is refused, or None."""
    if entry.get("type") != "text":
        return f"{where}.type must be text (the simulator takes text tracks only)"
    if not is_http_url(entry.get("url")):
        return f"{where}.url must be an http(s) URL"
    if entry.get("text_type") not in ("subtitles", "chapters"):  # "Required when type is text"; add-chapters
        return f"{where}.text_type must be subtitles or chapters"
    language = entry.get("language_code")
    if not isinstance(language, str) or not _BCP47.match(language):
        return f"{where}.language_code must be a BCP 47 language tag"
    if not isinstance(entry.get("closed_captions", False), bool):
        return f"{where}.closed_captions must be a boolean"
    name = entry.get("name")
    if name is not None and not isinstance(name, str):
        return f"{where}.name must be a string"
    if (name or language).lower() in taken:  # "This value must be unique within each group of text ... tracks"
        return f"{where}.name must be unique among the asset's text tracks"
    passthrough = entry.get("passthrough")
    if passthrough is not None and (not isinstance(passthrough, str) or len(passthrough) > PASSTHROUGH_MAX):
        return f"{where}.passthrough must be a string of at most {PASSTHROUGH_MAX} characters"
    return None


def _text_track(entry: dict) -> TextTrack:
    """A text track Mux is to fetch: preparing until the simulator has read its file."""
    return TextTrack(
        id=alnum_id(32),
        language=entry["language_code"],
        name=entry.get("name") or entry["language_code"],
        closed_captions=entry.get("closed_captions", False),
        ref=entry.get("passthrough"),
        kind=entry["text_type"],
        url=entry["url"],
        status="preparing",
    )


def _render_track(track: TextTrack) -> dict:
    out: dict[str, Any] = {
        "type": "text",
        "id": track.id,
        "text_type": track.kind,
        "text_source": "uploaded",
        "language_code": track.language,
        "name": track.name,
        "closed_captions": track.closed_captions,
        "status": track.status,
    }
    if track.ref is not None:
        out["passthrough"] = track.ref
    if track.error:
        out["error"] = {"type": "invalid_input", "messages": [track.error]}
    return out


def _validate(body: dict) -> str | None:
    inputs = body.get("inputs", body.get("input"))  # `input` is the deprecated spelling, same meaning
    if isinstance(inputs, str):
        inputs = [{"url": inputs}]  # "As a shortcut, input can also be a string URL"
    if not isinstance(inputs, list) or not inputs or not all(isinstance(i, dict) for i in inputs):
        return "inputs must be a non-empty array of input objects"
    if not is_http_url(inputs[0].get("url")):
        return "inputs[0].url must be an http(s) URL"
    taken: set[str] = set()
    for n, entry in enumerate(inputs[1:], start=1):
        problem = _text_problem(entry, f"inputs[{n}]", taken)
        if problem:
            return problem
        taken.add((entry.get("name") or entry["language_code"]).lower())
    passthrough = body.get("passthrough")
    if passthrough is not None and (
        not isinstance(passthrough, str) or len(passthrough.encode("utf-16-le")) // 2 > PASSTHROUGH_MAX
    ):
        return f"passthrough must be a string of at most {PASSTHROUGH_MAX} characters"
    meta = body.get("meta")
    if meta is not None:
        if not isinstance(meta, dict):
            return "meta must be an object"
        for key, limit in _META_LIMITS.items():
            if key in meta and (not isinstance(meta[key], str) or _units(meta[key]) > limit):
                return f"meta.{key} must be a string of at most {limit} characters"
    policies = _policies(body)
    if policies is None or any(p not in _POLICIES for p in policies):
        return f"playback_policies must be a list of {', '.join(_POLICIES)}"
    for key, allowed in _ENUMS.items():
        if key in body and body[key] not in allowed:
            return f"{key} must be one of {', '.join(allowed)}"
    for key in _BOOLEANS:
        if key in body and not isinstance(body[key], bool):
            return f"{key} must be a boolean"
    return _renditions_problem(body)


def _renditions_problem(body: dict) -> str | None:
    renditions = body.get("static_renditions")
    if renditions is None:
        return None
    if not isinstance(renditions, list) or not all(
        isinstance(r, dict) and r.get("resolution") in _RENDITIONS for r in renditions
    ):
        return f"static_renditions must be a list of {{resolution}} with a resolution of {', '.join(_RENDITIONS)}"
    for rendition in renditions:
        passthrough = rendition.get("passthrough")
        if passthrough is not None and (not isinstance(passthrough, str) or _units(passthrough) > PASSTHROUGH_MAX):
            return f"static_renditions[].passthrough must be a string of at most {PASSTHROUGH_MAX} characters"
    # "You may not enable both `static_renditions` and `mp4_support`" (CreateAssetRequest).
    if body.get("mp4_support", "none") != "none":
        return "static_renditions and mp4_support may not both be set"
    return None


def _static_renditions(renditions: list, ready: bool) -> dict:
    """The asset's `static_renditions` (AssetStaticRenditions): one file per requested resolution, named as
    StaticRendition.name lists them (`highest.mp4`, `audio.m4a`, `1080p.mp4`)."""
    files = []
    for rendition in renditions:
        resolution = rendition["resolution"]
        audio = resolution == "audio-only"
        files.append(
            {
                "name": "audio.m4a" if audio else f"{resolution}.mp4",
                "ext": "m4a" if audio else "mp4",
                "resolution": resolution,
                "type": "standard",
                "status": "ready" if ready else "preparing",
                **({"passthrough": rendition["passthrough"]} if "passthrough" in rendition else {}),
            }
        )
    return {"status": "ready" if ready else "preparing", "files": files}


def _policies(body: dict) -> list | None:
    policies = body.get("playback_policies", body.get("playback_policy", []))  # the singular is deprecated
    if isinstance(policies, str):
        policies = [policies]
    return policies if isinstance(policies, list) else None


def _source(body: dict) -> str:
    inputs: Any = body.get("inputs", body.get("input"))  # checked (_validate): a URL, or inputs whose first has it
    return inputs if isinstance(inputs, str) else inputs[0]["url"]


def _json(raw: bytes) -> tuple[object, str | None]:
    try:
        return json.loads(raw), None
    except (ValueError, UnicodeDecodeError):
        return None, "request body is not valid JSON"


def playback_ids(video: Video) -> list[dict]:
    """The asset's playback ids, one per policy asked for: stable per asset and policy, so every
    read shows the same ones (and the media paths find the asset by them)."""
    return [{"policy": p, "id": derived_id(f"{video.id}/{p}", 34)} for p in _policies(video.request) or []]


def _encode_cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"before": seq}).encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> int:
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))["before"]
    except (binascii.Error, ValueError, TypeError, KeyError):
        raise ParamError("cursor", "cursor is not valid") from None
    if not isinstance(value, int):
        raise ParamError("cursor", "cursor is not valid")
    return value


# As a source: unfetchable in turn, an asset whose ingest errored, one still preparing, a live stream's
# asset still recording, a test asset ("watermarked with the Mux logo, limited to 10 seconds, deleted after
# 24 hrs": mux-python 5.1.2 CreateAssetRequest.test). A recording ends, as a preparing asset finishes, between
# two sweeps (library_processing_done).
FAULTS = ("errored", "processing", "live", "test")
TEST_ASSET_S = 10.0


def library_id(video: Item) -> str:
    return f"MuxAsset{video.index:024d}"


def library_index(asset_id: str) -> int:
    tail = asset_id.removeprefix("MuxAsset")
    return int(tail) if asset_id.startswith("MuxAsset") and len(tail) == 24 and tail.isdigit() else -1


def playback_id(video: Item) -> str:
    """Public ("PB...") or signed ("SG..."): a private library video has signed playback only."""
    return ("SG" if video.private else "PB") + f"{video.index:030d}"


def library_by_playback(shelf: Shelf, pid: str) -> Item | None:
    """The library video `pid` is the playback id of now (a video made private has its signed id only)."""
    digits = pid[2:]
    video = shelf.video(int(digits)) if pid[:2] in ("PB", "SG") and len(digits) == 30 and digits.isdigit() else None
    return video if video is not None and playback_id(video) == pid else None


def text_tracks(video: Item) -> list[dict]:
    """A ready library asset's text tracks; "preparing" while Mux still makes them (Track.status: preparing,
    ready, errored, deleted, mux-python 5.1.2), as `library_captions_processing` has them."""
    return [
        {
            "id": f"TT{video.index:08d}{n}",
            "type": "text",
            "text_type": "subtitles",
            "text_source": "uploaded",
            "language_code": language,
            "name": name,
            "closed_captions": kind == "captions",
            "status": "preparing" if video.captions_processing else "ready",
        }
        for n, (language, kind, name) in enumerate(video.captions)
    ]


class Mux(Profile):
    name = "mux"
    owns_playback = True  # stream.mux.com and image.mux.com: playback ids, a signed one's token (serve_playback)
    # "Make API requests", API rate limits (https://www.mux.com/docs/core/make-api-requests#api-rate-limits): video
    # creation (POST) "a sustained 1 request per second" with bursts above it for short periods; other requests 5
    # per second; separate buckets, per environment:
    # https://www.mux.com/blog/protect-your-prod-environment-new-rate-limit-controls. Bursts undocumented: 10, ours.
    limits: ClassVar[Mapping[str, float | int]] = {"rate": 1.0, "burst": 10, "read_rate": 5.0, "read_burst": 10}
    faults = FAULTS
    routes = (
        ("/video/v1/assets", {"POST": "create", "GET": "list"}),
        ("/video/v1/assets/{id}", {"GET": "get", "PATCH": "video_update"}),
        ("/video/v1/assets/{id}/tracks", {"POST": "track_add"}),
        ("/video/v1/assets/{id}/master-access", {"PUT": "src_master"}),
        ("/data/v1/metrics/{metric}/breakdown", {"GET": "src_usage"}),  # Mux Data (analytics.py)
        # The library's playback ids (mux-python PlaybackIDApi.get_asset_or_livestream_id); assets made here
        # answer 404 there (not modelled).
        ("/video/v1/playback-ids/{id}", {"GET": "src_playback_id"}),
        # Signing keys: the System API's, and the Video API's older path (mux_signing.py).
        *(
            (prefix, {"POST": "keys_create", "GET": "keys_list"})
            for prefix in ("/system/v1/signing-keys", "/video/v1/signing-keys")
        ),
        *(
            (prefix + "/{id}", {"GET": "key_get", "DELETE": "key_delete"})
            for prefix in ("/system/v1/signing-keys", "/video/v1/signing-keys")
        ),
    )

    def made_up_target(self, webhook_scheme: str = "standard") -> MadeUp:
        """An access token's id and secret (HTTP Basic), and a webhook signing secret."""
        creds = {"token_id": secrets.token_hex(8), "token_secret": secrets.token_urlsafe(24)}
        return MadeUp(creds, dict(creds), secrets.token_hex(16))

    def authorize(self, cfg: SimConfig, call: Call) -> Reply | None:
        if cfg.token_id is None or basic_matches(
            call.headers.get("Authorization"), cfg.token_id, cfg.token_secret or ""
        ):
            return None
        return self.error("unauthorized")

    def error(self, kind: str, message: str | None = None, **detail: object) -> Reply:
        text = _MESSAGES.get(kind, message) or kind
        return Reply(KIND_STATUS[kind], {"error": {"type": _TYPES[kind], "messages": [text]}})

    def new_id(self) -> str:
        return alnum_id(32)

    def account(self, cfg: SimConfig, call: Call, body: object, parse_error: str | None, held: dict) -> Account:
        return signing_keys(call, held, self.error)

    def ref_of(self, body: object) -> str | None:
        ref = body.get("passthrough") if isinstance(body, dict) else None
        return ref if isinstance(ref, str) else None

    def parse_create(self, body: object, parse_error: str | None, call: Call) -> Draft | Reply:
        if parse_error or not isinstance(body, dict):
            return self.error("invalid", parse_error or "request body must be a JSON object")
        reason = _validate(body)
        if reason:
            return self.error("invalid", reason)
        texts = [_text_track(e) for e in inputs[1:]] if isinstance(inputs := body.get("inputs"), list) else []
        return Draft(source=_source(body), ref=self.ref_of(body), request=body, texts=texts)

    def render(self, video: Video, now: float) -> dict:
        request = video.request
        out: dict[str, Any] = {
            "id": video.id,
            "status": _STATUS.get(video.state, "preparing"),
            "created_at": str(int(video.created)),
        }
        if playback_ids(video):
            out["playback_ids"] = playback_ids(video)
        # What the create set, as Mux holds it; unset, Mux's documented defaults.
        out["mp4_support"] = request.get("mp4_support", "none")
        out["master_access"] = request.get("master_access", "none")
        out["max_resolution_tier"] = request.get("max_resolution_tier", "1080p")
        for key in ("passthrough", "meta", "video_quality", "encoding_tier", "test", "normalize_audio"):
            if key in request:
                out[key] = copy.deepcopy(request[key])
        if request.get("static_renditions"):
            out["static_renditions"] = _static_renditions(request["static_renditions"], video.state == READY)

        # A ready asset lists its video and audio tracks (mux_tracks); text tracks whenever it has them.
        tracks = mux_tracks(video) if video.state == READY else []
        out["tracks"] = tracks + [_render_track(t) for t in video.texts]
        if video.state == READY:
            out["duration"] = video.duration
            if mux_target.THUMBNAIL_TIME in video.extras:  # "omitted entirely when no value is set"
                out["thumbnail_time"] = video.extras[mux_target.THUMBNAIL_TIME]
        elif video.state == ERRORED:
            out["errors"] = {"type": "invalid_input", "messages": [_ERRORED_MESSAGES[video.failure == "fetch"]]}
        return out

    def created(self, video: Video, now: float, replay: bool) -> Reply:
        return Reply(201, {"data": self.render(video, now)})

    def list(self, store: Store, call: Call, now: float) -> Reply:
        query = urllib.parse.parse_qs(call.query, keep_blank_values=True)
        try:
            limit = int_param(query, "limit", 25, 1, 100)
            page = int_param(query, "page", 1, 1, None)
            videos = list(store.newest_first())
            if "cursor" in query:
                before = _decode_cursor(query["cursor"][0])
                videos = [v for v in videos if v.seq < before]
            else:
                videos = videos[(page - 1) * limit :]
        except ParamError as exc:
            return self.error("invalid", str(exc))
        if "live_stream_id" in query or "upload_id" in query:
            videos = []  # The only filters Mux has; assets created from a URL have neither.
        data = videos[:limit]
        next_cursor = _encode_cursor(data[-1].seq) if len(videos) > limit else None
        return Reply(200, {"data": [self.render(v, now) for v in data], "next_cursor": next_cursor})

    # ----- as a source (a library)

    def render_library(self, shelf: Shelf, video: Item, now: float) -> dict:
        """A library video as Mux's asset object: master access and its preparation included."""
        fault = video.fault
        if fault == "live" and shelf.cfg.library_processing_done:
            fault = None  # the recording has ended since: an asset as any other, from a live stream
        status = {"errored": "errored", "processing": "preparing"}.get(fault or "", "ready")
        out: dict[str, Any] = {
            "id": library_id(video),
            "status": status,
            "created_at": str(int(video.created)),
            "passthrough": f"library-{video.index}",
            "meta": {"title": video.title[:512], "external_id": f"lib-{video.index}"},
            "playback_ids": [{"policy": "signed" if video.private else "public", "id": playback_id(video)}],
            "mp4_support": "none",
            "master_access": "none",
            "ingest_type": "on_demand_url",
            "video_quality": "plus",
            "max_stored_resolution": "HD",
            "resolution_tier": "1080p",
            "aspect_ratio": "16:9",
            # "Indicates whether the live stream that created this asset is currently active" (Asset.is_live)
            "is_live": fault == "live",
            "test": fault == "test",
        }
        if video.fault == "live":
            out["live_stream_id"] = f"LiveStream{video.index:020d}"
        if status == "ready":
            out["duration"] = TEST_ASSET_S if fault == "test" else video.duration
            out["tracks"] = [
                {
                    "id": f"VT{video.index:08d}",
                    "type": "video",
                    "max_width": 1920,
                    "max_height": 1080,
                    "status": "ready",
                },
                {"id": f"AT{video.index:08d}", "type": "audio", "max_channels": 2, "status": "ready"},
                *text_tracks(video),
                *mux_library.chapters_track(shelf.cfg, video),
            ]
            if (chosen := mux_library.thumbnail_time(video)) is not None and fault != "test":
                out["thumbnail_time"] = chosen
        elif status == "errored":
            out["errors"] = {"type": "invalid_input", "messages": ["The input file could not be processed"]}
        state, _done = shelf.preparation(video, now)
        if state != "none":
            # "A URL will be created that can be used to download the master version for 24 hours"
            out["master_access"] = "temporary"
            out["master"] = {"status": state}
            if state == "ready":
                out["master"]["url"] = shelf.url(video, "master.mp4")
        return out

    def source(self, op: str, shelf: Shelf, call: Call, body: object, now: float) -> Reply:
        if op == "src_usage":
            return analytics.mux_breakdown(shelf, call.params.get("metric", ""), call.query, library_id)
        if op == "list":
            query = urllib.parse.parse_qs(call.query, keep_blank_values=True)
            try:
                limit = int_param(query, "limit", 25, 1, 100)
                page = int_param(query, "page", 1, 1, None)
                start = shelf.size - 1 - _decode_cursor(query["cursor"][0]) if "cursor" in query else (page - 1) * limit
            except ParamError as exc:
                return self.error("invalid", str(exc))
            videos, _total = shelf.videos(max(0, start + (1 if "cursor" in query else 0)), limit + 1, newest_first=True)
            data = videos[:limit]
            following = _encode_cursor(data[-1].index) if len(videos) > limit else None
            return Reply(200, {"data": [self.render_library(shelf, v, now) for v in data], "next_cursor": following})
        if op == "src_playback_id":
            pid = call.params.get("id", "")
            video = library_by_playback(shelf, pid)
            if video is None:
                return self.error("not_found")
            owner = {"type": "asset", "id": library_id(video)}
            return Reply(200, {"data": {"id": pid, "policy": "signed" if video.private else "public", "object": owner}})
        video = shelf.video(library_index(call.params.get("id", "")))
        if video is None:
            return self.error("not_found")
        if op == "src_master":
            wanted = body.get("master_access") if isinstance(body, dict) else None
            if wanted not in ("temporary", "none"):
                return self.error("invalid", "master_access must be temporary or none")
            if wanted == "temporary":
                shelf.prepare(video, now)
        return Reply(200, {"data": self.render_library(shelf, video, now)})

    def media_ready(self, shelf: Shelf, video: Item, name: str, now: float) -> bool:
        return name != "master.mp4" or shelf.preparation(video, now)[0] == "ready"

    def serve_playback(
        self, videos: Iterable[Video], held: Mapping, shelf: Shelf, key: str, rest: builtins.list[str], query: str
    ) -> media.Answer:
        """stream.mux.com and image.mux.com, both at `/_play/mux/...` here: a library asset's text tracks, else
        the playback of the assets made here (mux_signing.serve_playback). `held`: the signing keys made here."""
        extra = library_by_playback(shelf, key)
        served = mux_library.serve(shelf.cfg, extra, key, rest, query, held) if extra is not None else None
        if served is not None:  # its default thumbnail, its chapters (mux_library.py)
            return served
        if extra is None and len(rest) == 2 and rest[0] == "chapters":  # a made asset's chapters (mux_target.py)
            return mux_target.serve_chapters(videos, playback_ids, held, key, rest[1], query)
        video = extra if len(rest) == 2 and rest[0] == "text" else None
        if video is None:
            return serve_playback(videos, playback_ids, held, key, rest, query)
        # A ready text track's WebVTT at `stream.mux.com/{PLAYBACK_ID}/text/{TRACK_ID}.vtt` (Mux's captions
        # guides); a signed playback id's only with a token of audience "v" ("video", which covers the subtitles
        # and captions served beside it: secure-video-playback).
        if video.private:
            problem = token_problem(token_of(query), key, VIDEO, held, time.time())
            if problem:
                return 403, media.TEXT, f"{problem}\n".encode()
        tracks = {f"{t['id']}.vtt": t for t in text_tracks(video) if t["status"] == "ready"}
        track = tracks.get(rest[1])
        if track is None:
            return 404, media.TEXT, b"no such text track, or not ready\n"
        return 200, "text/vtt", VTT.format(i=video.index, language=track["language_code"]).encode()

    def get(self, video: Video | None, now: float) -> Reply:
        return self.error("not_found") if video is None else Reply(200, {"data": self.render(video, now)})

    def video_op(
        self, cfg: SimConfig, op: str, video: Video | None, call: Call, body: object, problem: str | None, now: float
    ) -> Reply:
        refused = mux_target.update(video, body, problem, self.error)  # the asset update: thumbnail_time
        if refused is not None or video is None:
            return refused or self.error("not_found")
        return Reply(200, {"data": self.render(video, now)})

    def take_track(self, video: Video | None, call: Call, raw: bytes, cfg: SimConfig) -> TextTrack | Reply:
        if video is None:
            return self.error("not_found")
        # "Assets must be in the ready state before tracks can be added" (create-asset-track).
        if video.state != READY:
            return self.error("invalid", "The asset must be ready before tracks can be added")
        body, parse_error = _json(raw)
        if parse_error or not isinstance(body, dict):
            return self.error("invalid", parse_error or "request body must be a JSON object")
        taken = {(t.name or t.language).lower() for t in video.texts}
        problem = _text_problem(body, "track", taken)
        return self.error("invalid", problem) if problem else _text_track(body)

    def track_taken(self, video: Video, track: TextTrack, now: float) -> Reply:
        return Reply(201, {"data": _render_track(track)})

    def rate_headers(self, cfg: SimConfig, state: RateState) -> dict:
        # Mux now sends "standard X-RateLimit-Limit and X-RateLimit-Remaining headers" with no documented
        # window (https://www.mux.com/blog/protect-your-prod-environment-new-rate-limit-controls); this writes
        # the limit per second, and the X-RateLimit-Reset the simulator has always added.
        return {**x_ratelimit(state, 1), "X-RateLimit-Reset": reset_epoch(state)}

    def throttle_hint(self, cfg: SimConfig, wait_s: float, state: RateState) -> tuple[dict, float | None]:
        # Mux documents no hint on a 429; with rate_headers on, X-RateLimit-Reset is the one there is.
        return {}, (float(state.reset_in_s()) if cfg.rate_headers else None)

    def events(self, video: Video, moment: str, now: float) -> builtins.list[Event]:
        kind = "created" if moment == "created" else _STATUS[video.state]
        event_id = str(uuid.uuid4())
        event = {
            "type": f"video.asset.{kind}",
            "id": event_id,
            "created_at": iso_z(time.time()),
            "object": {"type": "asset", "id": video.id},
            "environment": {"id": "env", "name": "Production"},
            "data": self.render(video, now),
            "attempts": [],
        }
        return [Event(event_id, json.dumps(event, separators=(",", ":")).encode())]

    def signature_headers(self, cfg: SimConfig, event: Event, secret: str | None, timestamp: int) -> dict:
        if not secret:
            return {}
        return {"Mux-Signature": f"t={timestamp},v1={sign_timestamped(secret, timestamp, event.body)}"}


def mux_tracks(video: Video) -> list[dict]:
    """A ready asset's tracks: the video at its stored (largest) rendition, and stereo audio."""
    width, height = media.top_size(video)
    return [
        {"type": "video", "id": f"{video.id}-v", "max_width": width, "max_height": height, "max_frame_rate": 30},
        {"type": "audio", "id": f"{video.id}-a", "max_channels": 2},
    ]
