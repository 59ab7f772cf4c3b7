"""The "cloudflare" profile: Cloudflare Stream as the project's adapter speaks it (providers/cloudflare.py).

Bearer API token and an account id in every path; POST /accounts/{a}/stream/copy {"input"
(or the deprecated "url"), "creator", "meta"} -> 200 envelope {"success", "errors",
"messages", "result": video}; GET /accounts/{a}/stream with creator/after/before/asc/limit
(<= 1000) and total/range; GET /accounts/{a}/stream/{uid}; status.state downloading ->
queued -> inprogress -> ready|error, readyToStream, duration -1 until known; one webhook
per account (PUT/GET/DELETE /accounts/{a}/stream/webhook, a PUT rotating the secret);
webhooks are the video itself signed `Webhook-Signature: time=<unix>,sig1=<hex>`; a 429
carries `retry-after`; captions PUT /accounts/{a}/stream/{uid}/captions/{language} as a
multipart WebVTT `file`, one per language (a second replaces the first), listed at GET
.../captions. Its documented limits (1,200 calls per 5 minutes per user with a
5-minute block, 120 videos in progress) are this profile's defaults: its `limits`.

Signed URLs (developers.cloudflare.com/stream/viewing-videos/securing-your-stream/; the API reference
"Create signed URL tokens for videos"): POST /accounts/{a}/stream/{uid}/token {exp, nbf, downloadable}
-> {"token"}, a JWT put "in place of the video id" in a delivery URL. A video with requireSignedURLs
is refused at its uid's URLs (playback and MP4 download) and served at a valid, unexpired token's;
its download only with `downloadable` in the token ("Download links will not work for videos which
already require signed URLs if the `downloadable` flag is not present in the token", .../download-videos/).
As a source, the MP4 download lives at the delivery host `/_stream/<uid>/downloads/default.mp4`
(Stream's `customer-<CODE>.cloudflarestream.com/<uid>/downloads/default.mp4`), a ready video's `thumbnail`
("omitted until encoding is complete") at `/_stream/<uid>/thumbnails/thumbnail.jpg` ("Display thumbnails"), a
JPEG; with requireSignedURLs only at a valid token, downloadable or not ("If signed URLs are required, you must
use a signed URL instead of video UIDs"). "Edit video details" (the poster frame, after the create):
cloudflare_edit.py.
"""

from __future__ import annotations

import builtins
import copy
import json
import math
import secrets
import time
import urllib.parse
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, ClassVar

from .. import media
from ..bucket import RateState
from ..config import SimConfig, is_http_url
from ..library import EPOCH, STEP_S, VTT, Item, Served, Shelf, serve_media
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
    ietf_ratelimit,
    int_param,
    iso_z,
    same,
)
from ..signing import sign_timestamped
from ..texttracks import label_of, uploaded_caption
from ..video import ERRORED, READY, TextTrack, Video
from . import analytics, cloudflare_edit
from .cloudflare_signing import TOKEN_SECRET, mint_token, token_claims, token_holds, token_problem

# Envelope error (code, message) per kind. 10000, 10005 and 971 are the wire contract's;
# 10010 (invalid URL), 10004 (undecodable request), 10011 (too large) and 10016 (too many
# requests) come from a third-party list of Stream codes (pub.dev `cloudflare`,
# CloudflareStreamVideosErrorCodes), 10059 (non-video content) from Stream's changelog;
# 7000/7001, the 5xx codes and every message of "busy" and "full" are our choice where
# nothing is documented (the FAQ promises only "more information in the response body").
_ERRORS = {
    "invalid": (10004, "Decoding Error: cannot decode request"),
    "unsupported": (10059, "The file was not recognized as a valid video file."),
    "unauthorized": (10000, "Authentication error"),
    "forbidden": (10000, "Authentication error"),
    "not_found": (10005, "Video not found"),
    "no_route": (7000, "No route for that URI"),
    "method": (7001, "Method not allowed"),
    "throttled": (971, "Please wait and consider throttling your request speed"),
    "busy": (10016, "Too many videos queued or encoding at once: wait for some to finish"),
    "full": (10011, "Storage capacity exceeded: the account's minutes of video are used up"),
    "failed": (10002, "Internal server error"),
    "unavailable": (10003, "Service unavailable"),
}
INVALID_URL = 10010
CREATOR_MAX = 64
# Processing stages as fractions of the processing time; readyToStream turns true once
# "at least one quality level is encoded", halfway through encoding.
_QUEUED_AT, _ENCODING_AT, _STREAMABLE_AT = 1 / 3, 2 / 3, 5 / 6
# status.errorReasonCode/Text per failure, from Stream's list ("Use webhooks": ERR_NON_VIDEO,
# ERR_DURATION_EXCEED_CONSTRAINT, ERR_FETCH_ORIGIN_ERROR "The video failed to download from the URL",
# ERR_MALFORMED_VIDEO, ERR_DURATION_TOO_SHORT, ERR_UNKNOWN; https://developers.cloudflare.com/stream/manage-video-library/using-webhooks/).
_ERROR_REASONS = {
    "corrupt": ("ERR_MALFORMED_VIDEO", "The video is a valid file but contains corrupt data that cannot be recovered."),
    "fetch": ("ERR_FETCH_ORIGIN_ERROR", "The video failed to download from the URL"),
}


def _envelope(result: object, **extra: object) -> dict:
    return {"result": result, "success": True, "errors": [], "messages": [], **extra}


def _caption(track: TextTrack) -> dict:
    """A caption as Stream answers it: `{generated, label, language, status}` (cloudflare-python Caption)."""
    return {"language": track.language, "label": track.name, "generated": False, "status": "ready"}


def _subscription(url: str, secret: str | None, held: dict) -> dict:
    return {"notificationUrl": url, "modified": iso_z(held.get("webhook_modified", time.time())), "secret": secret}


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(when: datetime) -> int:
    return (when - _EPOCH) // timedelta(microseconds=1)  # exact integer arithmetic, no float rounding


def _created_micros(video: Video) -> int:
    # Times compare at the microsecond the API shows (the same datetime iso_z prints), so a
    # `before`/`after` copied from a listed video excludes exactly that video.
    return _micros(datetime.fromtimestamp(video.created, UTC))


def _time_param(query: dict, *names: str) -> int | None:
    """A created-time bound in microseconds; `after`/`start` and `before`/`end` are aliases."""
    for name in names:
        if name in query:
            try:
                when = datetime.fromisoformat(query[name][0])
            except ValueError:
                raise ParamError(name, f"{name} must be an RFC 3339 date-time") from None
            return _micros(when if when.tzinfo else when.replace(tzinfo=UTC))
    return None


def _fields_problem(body: dict) -> str | None:
    """What the copy's other fields break of their documented types and ranges (cloudflare-python 5.9.0
    CopyCreateParams; Cloudflare's OpenAPI: stream_thumbnailTimestampPct 0 to 1)."""
    if not isinstance(body.get("meta", {}), dict):
        return "meta must be an object"
    if not isinstance(body.get("requireSignedURLs", False), bool):
        return "requireSignedURLs must be a boolean"
    origins = body.get("allowedOrigins", [])
    if not isinstance(origins, list) or not all(isinstance(o, str) for o in origins):
        return "allowedOrigins must be an array of strings"
    pct = body.get("thumbnailTimestampPct", 0)
    if isinstance(pct, bool) or not isinstance(pct, (int, float)) or not 0 <= pct <= 1:
        return "thumbnailTimestampPct must be a number from 0 to 1"
    if "name" in body and not isinstance(body["name"], str):
        return "name must be a string"
    return None


# ----- as a source

# Unfetchable in turn: a video still encoding (pending until `library_processing_done`), one whose encoding
# failed. A private library video is one Stream limits (`_restriction`): it moves, signed.
FAULTS = ("processing", "error")
LIBRARY_ORIGIN = "videos.example.com"  # where a hotlink-protected library video may be embedded


def _restriction(shelf: Shelf, video: Item) -> tuple[bool, list[str]]:
    """(requireSignedURLs, allowedOrigins) of a library video: of the private ones, every other one requires
    signed URLs ("it can no longer be accessed publicly with only the video id") and the others are limited
    to one site's embeds ("limit the domains a video can be embedded on"; securing-your-stream)."""
    if not video.private:
        return False, []
    if (video.index // max(1, shelf.cfg.library_private_every)) % 2 == 0:
        return True, []
    return False, [LIBRARY_ORIGIN]


def library_caption(video: Item, language: str) -> str:
    """The WebVTT text a library caption serves through the API (a module function: tests serve larger ones)."""
    return VTT.format(i=video.index, language=language)


def _library_captions(video: Item) -> list[dict]:
    # Caption.status is "The status of a generated caption" (ready, inprogress, error; cloudflare-python
    # 5.9.0): one still being made is a generated one ("Generate captions or subtitles"), inprogress.
    making = video.captions_processing
    status = "inprogress" if making else "ready"
    return [
        {"language": lang, "label": name, "generated": making, "status": status} for lang, _k, name in video.captions
    ]


def _delivered(shelf: Shelf, key: str, download: bool = True) -> tuple[Item | None, bool]:
    """The library video a delivery URL's key names (its uid, or a token), and whether it is refused: a video
    that requires signed URLs at its uid, or a token that does not hold (for a download: not downloadable)."""
    index = library_index(key)
    if index >= 0:
        video = shelf.video(index)
        return video, video is not None and _restriction(shelf, video)[0]
    claims = token_claims(key)
    video = shelf.video(library_index(claims["sub"])) if claims else None
    return video, not token_holds(shelf.state.secret, key, time.time(), download=download)


def library_uid(video: Item) -> str:
    return f"cf{video.index:030d}"  # 32 hexadecimal characters, as Stream's uids are


def library_index(uid: str) -> int:
    return int(uid[2:]) if len(uid) == 32 and uid.startswith("cf") and uid[2:].isdigit() else -1


class StreamLibrary:
    """The profile's source side (a library: library.py): its list, videos, downloads, tokens and captions, and
    its delivery host's MP4s. A mixin of `Cloudflare`, whose `error` and `_list_query` it uses."""

    if TYPE_CHECKING:  # what the profile it is mixed into gives it

        def error(self, kind: str, message: str | None = None, **detail: object) -> Reply: ...

        def _list_query(self, call: Call) -> tuple[dict, int, int | None, int | None, bool] | Reply: ...

    def render_library(self, shelf: Shelf, video: Item) -> dict:
        fault = video.fault
        state = {"processing": "inprogress", "error": "error"}.get(fault or "", "ready")
        code, text = _ERROR_REASONS["corrupt"] if state == "error" else ("", "")
        ready, uid = state == "ready", library_uid(video)
        return {
            "uid": uid,
            "creator": f"creator-{video.index % 3}",
            "thumbnailTimestampPct": 0.25,
            **({"thumbnail": f"{shelf.base_url}/_stream/{uid}/thumbnails/thumbnail.jpg"} if ready else {}),
            "readyToStream": ready,
            "readyToStreamAt": iso_z(video.modified) if ready else None,
            "status": {"state": state, "pctComplete": "100.000000" if ready else "40.000000", "errorReasonCode": code,
                       "errorReasonText": text},
            "meta": {"name": video.title},
            "created": iso_z(video.created),
            "modified": iso_z(video.modified),
            "uploaded": iso_z(video.created),
            "size": video.size if ready else None,
            "allowedOrigins": _restriction(shelf, video)[1],
            "requireSignedURLs": _restriction(shelf, video)[0],
            "scheduledDeletion": None,
            "duration": video.duration if ready else -1,
            "input": {"width": 1920, "height": 1080} if ready else {"width": -1, "height": -1},
            "liveInput": None,
            "watermark": None,
        }  # fmt: skip

    def source(self, op: str, shelf: Shelf, call: Call, body: object, now: float) -> Reply:
        if op == "src_usage":
            return analytics.cloudflare_graphql(shelf, body, shelf.cfg.account_id or "", library_uid)
        if op == "list":
            return self._library_list(shelf, call)
        video = shelf.video(library_index(call.params.get("id", "")))
        if video is None:
            return self.error("not_found")
        if op == "get":
            return Reply(200, _envelope(self.render_library(shelf, video)))
        if op == "src_download":
            if call.method == "POST":
                shelf.prepare(video, now)
            return Reply(200, _envelope(self._downloads(shelf, video, now)))
        if op == "src_token":
            return self._token(shelf.state.secret, library_uid(video), body)
        if op == "src_captions":
            return Reply(200, _envelope(_library_captions(video)))
        language = call.params.get("language", "")
        if language not in {c[0] for c in video.captions} or video.captions_processing:
            return self.error("not_found")  # no file before the caption is made (our choice: nothing documented)
        return Reply(200, raw=library_caption(video, language).encode(), headers={"Content-Type": "text/vtt"})

    def _token(self, secret: bytes, uid: str, body: object) -> Reply:
        now = time.time()
        problem = token_problem(body, now)
        if problem:
            return self.error("invalid", problem)
        return Reply(200, _envelope({"token": mint_token(secret, uid, body, now)}))

    def _downloads(self, shelf: Shelf, video: Item, now: float) -> dict:
        """`{"default": {status, url, percentComplete}}` once asked for (POST), `{}` before."""
        state, done = shelf.preparation(video, now)
        if state == "none":
            return {}
        status = "ready" if state == "ready" else "inprogress"
        # The download's address is known at once; it serves the file when the download is ready, at the
        # delivery host, under the uid (download-videos: ".../<VIDEO_UID>/downloads/default.mp4"). Its query is
        # the simulator's, not Stream's: the true duration a target simulator reads back (Item.media_query).
        query = urllib.parse.urlencode(video.media_query())
        url = f"{shelf.base_url}/_stream/{library_uid(video)}/downloads/default.mp4?{query}"
        return {"default": {"status": status, "url": url, "percentComplete": round(done * 100, 1)}}

    def media_ready(self, shelf: Shelf, video: Item, name: str, now: float) -> bool:
        return name != "default.mp4" or shelf.preparation(video, now)[0] == "ready"

    def serve_delivery(
        self, shelf: Shelf, method: str, path: str, query: str, range_header: str | None
    ) -> Served | None:
        """`/_stream/<uid or token>/downloads/default.mp4`: the MP4 once its download is ready, HEAD and ranges
        as the library's files (library.serve_media); refused 403 at a signed video's uid, or with a token that
        does not hold for a download ("If your video is public, the MP4 will also be publicly accessible")."""
        parts = path.split("/")
        if len(parts) == 5 and parts[3:] == ["thumbnails", "thumbnail.jpg"]:
            video, refused = _delivered(shelf, parts[2], download=False)
            if video is None or video.fault:  # "omitted until encoding is complete"
                return Served(404, {"Content-Type": "text/plain"}, b"Not Found")
            if refused:
                return Served(403, {"Content-Type": "text/plain"}, b"This video requires a signed URL token")
            body = media.THUMBNAIL
            return Served(200, {"Content-Type": "image/jpeg", "Content-Length": str(len(body))}, body)
        if len(parts) != 5 or parts[3:] != ["downloads", "default.mp4"]:
            return None
        video, refused = _delivered(shelf, parts[2])
        if video is None:
            return Served(404, {"Content-Type": "text/plain"}, b"Not Found")
        if refused:
            return Served(403, {"Content-Type": "text/plain"}, b"This video requires a signed URL token (downloadable)")
        file = urllib.parse.urlsplit(shelf.url(video, "default.mp4"))
        now = time.monotonic()
        ready = lambda item, name: self.media_ready(shelf, item, name, now)  # noqa: E731
        return serve_media(shelf.cfg, shelf.state, method, file.path, file.query, range_header, shelf.faults, ready)

    def _library_list(self, shelf: Shelf, call: Call) -> Reply:
        parsed = self._list_query(call)
        if isinstance(parsed, Reply):
            return parsed
        query, limit, after, before, ascending = parsed
        # Library video i was created at EPOCH + i minutes: a time bound is an index bound.
        first = 0 if after is None else max(0, math.floor((after / 1e6 - EPOCH) / STEP_S) + 1)
        last = shelf.size if before is None else min(shelf.size, math.ceil((before / 1e6 - EPOCH) / STEP_S))
        matched = max(0, last - first)
        if ascending:
            start = first
            videos, _ = shelf.videos(start, min(limit, matched), newest_first=False)
        else:
            videos, _ = shelf.videos(shelf.size - last, min(limit, matched), newest_first=True)
        rendered = [self.render_library(shelf, v) for v in videos]
        total = matched if query.get("include_counts", ["false"])[0].lower() == "true" else None
        extra = {"total": total, "range": len(rendered)} if total is not None else {"range": len(rendered)}
        return Reply(200, _envelope(rendered, **extra))


class Cloudflare(StreamLibrary, Profile):
    name = "cloudflare"
    hls_master = ("manifest", "video.m3u8")  # where its video object's HLS link points (media.py)
    # Cloudflare: "1200 requests per five minutes per user ... If you exceed this limit, all API calls for the
    # next five minutes will be blocked" (https://developers.cloudflare.com/fundamentals/api/reference/limits/);
    # Stream: "up to 120 videos queued or being encoded simultaneously" (https://developers.cloudflare.com/stream/faq/).
    # The 20/s create bucket is the simulator's own (what the benchmarks call the true limit), not Cloudflare's.
    limits: ClassVar[Mapping[str, float | int]] = {
        "budget_quota": 1200,
        "budget_window_s": 300.0,
        "budget_block_s": 300.0,
        "max_in_flight": 120,
    }
    fetch_mode = "head-range"  # "must support HTTP HEAD requests and HTTP GET range requests"
    faults = FAULTS
    routes = (
        ("/accounts/{account}/stream/copy", {"POST": "create"}),
        ("/accounts/{account}/stream/webhook", {"PUT": "webhook", "GET": "webhook", "DELETE": "webhook"}),
        ("/accounts/{account}/stream", {"GET": "list"}),
        ("/graphql", {"POST": "src_usage"}),  # the GraphQL Analytics API (analytics.py)
        ("/accounts/{account}/stream/{id}", {"GET": "get", "POST": "video_edit"}),
        # One list, two sides: a target's captions (track_list), or a library's (src_captions: `source_ops`).
        ("/accounts/{account}/stream/{id}/captions", {"GET": "track_list"}),
        ("/accounts/{account}/stream/{id}/captions/{language}", {"PUT": "track_add"}),
        ("/accounts/{account}/stream/{id}/downloads", {"POST": "src_download", "GET": "src_download"}),
        ("/accounts/{account}/stream/{id}/captions/{language}/vtt", {"GET": "src_caption_vtt"}),
        ("/accounts/{account}/stream/{id}/token", {"POST": "token"}),
    )
    # A library lists its captions, a target what it was sent; each mints tokens for its own videos.
    source_ops: ClassVar[dict[str, str]] = {"track_list": "src_captions", "token": "src_token"}
    # "One caption or subtitle file per language is allowed" (cloudflare-python, stream.captions.language.update).
    one_track_per_language = True

    def made_up_target(self, webhook_scheme: str = "standard") -> MadeUp:
        """An account id (32 hex characters, as Cloudflare's are) and an API token, and a webhook secret."""
        account_id, token = secrets.token_hex(16), secrets.token_urlsafe(24)
        creds = {"account_id": account_id, "api_token": token}
        return MadeUp(creds, {"account_id": account_id, "token": token}, secrets.token_hex(16))

    def authorize(self, cfg: SimConfig, call: Call) -> Reply | None:
        if cfg.token is not None and not same(call.headers.get("Authorization"), f"Bearer {cfg.token}"):
            return self.error("unauthorized")
        # GraphQL names the account in its variables (`accountTag`), checked there (analytics.py).
        path_account = call.op != "src_usage"
        if path_account and cfg.account_id is not None and not same(call.params.get("account"), cfg.account_id):
            return self.error("forbidden")  # A good token used on another account's path.
        return None

    def error(self, kind: str, message: str | None = None, **detail: object) -> Reply:
        code, text = _ERRORS[kind]
        body = {
            "result": None,
            "success": False,
            "errors": [{"code": detail.get("code", code), "message": message if kind == "invalid" else text}],
            "messages": [],
        }
        return Reply(KIND_STATUS[kind], body)

    def new_id(self) -> str:
        return uuid.uuid4().hex

    def ref_of(self, body: object) -> str | None:
        meta = body.get("meta") if isinstance(body, dict) else None
        ref = meta.get("migration_ref") if isinstance(meta, dict) else None
        return ref if isinstance(ref, str) else None

    def parse_create(self, body: object, parse_error: str | None, call: Call) -> Draft | Reply:
        if parse_error or not isinstance(body, dict):
            return self.error("invalid", parse_error or "request body must be a JSON object")
        # `input` "is the preferred field over `url`", which "is deprecated in favor of `input`"
        # (cloudflare-python 5.9.0, stream.copy.create); either is accepted, `input` first.
        field = "input" if "input" in body else "url"
        if not is_http_url(body.get(field)):
            return self.error("invalid", f"Invalid URL: {field} must be an http(s) URL", code=INVALID_URL)
        creator = body.get("creator", call.headers.get("Upload-Creator"))  # the header is the documented alternative
        if creator is not None and (not isinstance(creator, str) or len(creator) > CREATOR_MAX):
            return self.error("invalid", f"creator must be a string of at most {CREATOR_MAX} characters")
        problem = _fields_problem(body)
        if problem:
            return self.error("invalid", problem)
        return Draft(
            source=body[field], ref=self.ref_of(body), request={**body, "creator": creator}, log={"source_field": field}
        )

    def render(self, video: Video, now: float) -> dict:
        p = video.progress(now)
        corrupt = video.corrupt
        if video.state == READY:
            state, pct, since = "ready", 100.0, video.finished
        elif video.state == ERRORED:
            state, pct, since = "error", 0.0, video.finished
        elif p < _QUEUED_AT:
            state, pct, since = "downloading", 0.0, video.at(0)
        elif p < _ENCODING_AT:
            state, pct, since = "queued", 0.0, video.at(_QUEUED_AT)
        else:
            state, pct, since = "inprogress", (p - _ENCODING_AT) / (1 - _ENCODING_AT) * 100, video.at(_ENCODING_AT)
        streamable = not corrupt and (state == "ready" or (state == "inprogress" and p >= _STREAMABLE_AT))
        if streamable and state == "inprogress":
            since = video.at(_STREAMABLE_AT)
        # The duration and size are known once the source is downloaded and probed; never for a failed one.
        known = state == "ready" or (state != "error" and not corrupt and p >= _ENCODING_AT)
        code, text = _ERROR_REASONS[video.failure or "corrupt"] if state == "error" else ("", "")
        request = video.request
        return {
            "uid": video.id,
            "creator": request.get("creator"),
            "thumbnailTimestampPct": request.get("thumbnailTimestampPct", 0),
            "readyToStream": streamable,
            "readyToStreamAt": iso_z(video.at(_STREAMABLE_AT)) if streamable else None,
            "status": {"state": state, "pctComplete": f"{pct:.6f}", "errorReasonCode": code, "errorReasonText": text},
            # Cloudflare records where it fetched the video from in meta.
            "meta": {"downloaded-from": video.source, **copy.deepcopy(request.get("meta") or {})},
            "created": iso_z(video.created),
            "modified": iso_z(since if since is not None else video.created),  # finished: set once ready or errored
            "uploaded": iso_z(video.created),
            "allowedOrigins": copy.deepcopy(request.get("allowedOrigins", [])),
            "requireSignedURLs": request.get("requireSignedURLs", False),
            "scheduledDeletion": None,
            "duration": video.duration if known else -1,
            "input": {"width": 1920, "height": 1080} if known else {"width": -1, "height": -1},
            "watermark": None,
            **cloudflare_fields(video),
        }

    def created(self, video: Video, now: float, replay: bool) -> Reply:
        return Reply(200, _envelope(self.render(video, now)))

    def _list_query(self, call: Call) -> tuple[dict, int, int | None, int | None, bool] | Reply:
        """(query, limit, after, before, ascending) of a list request, or the 400 for a bad parameter."""
        query = urllib.parse.parse_qs(call.query, keep_blank_values=True)
        try:
            limit = int_param(query, "limit", 1000, 1, 1000)
            after = _time_param(query, "after", "start")
            before = _time_param(query, "before", "end")
        except ParamError as exc:
            return self.error("invalid", str(exc))
        return query, limit, after, before, query.get("asc", ["false"])[0].lower() == "true"

    def list(self, store: Store, call: Call, now: float) -> Reply:
        parsed = self._list_query(call)
        if isinstance(parsed, Reply):
            return parsed
        query, limit, after, before, ascending = parsed
        creator = query.get("creator", [None])[0]
        name = query.get("video_name", [None])[0]
        status = query.get("status", [None])[0]
        matched = []
        for video in store.newest_first():
            created = _created_micros(video)
            if (after is not None and created <= after) or (before is not None and created >= before):
                continue
            if creator is not None and video.request.get("creator") != creator:
                continue
            rendered = self.render(video, now)
            if name is not None and rendered["meta"].get("name") != name:
                continue
            if status is not None and rendered["status"]["state"] != status:
                continue
            matched.append(rendered)
        if ascending:
            matched.reverse()
        page = matched[:limit]
        # total: every match; range: how many this answer carries (as in the docs' example).
        return Reply(200, _envelope(page, total=len(matched), range=len(page)))

    def get(self, video: Video | None, now: float) -> Reply:
        return self.error("not_found") if video is None else Reply(200, _envelope(self.render(video, now)))

    def video_op(
        self, cfg: SimConfig, op: str, video: Video | None, call: Call, body: object, problem: str | None, now: float
    ) -> Reply:
        refused = cloudflare_edit.edit(video, body, problem, self.error)  # "Edit video details"
        if refused is not None or video is None:
            return refused or self.error("not_found")
        return Reply(200, _envelope(self.render(video, now)))

    def playback_video(self, store: Store, key: str, query: str) -> tuple[Video | None, bool] | None:
        """A target's video at its uid (refused when it requires signed URLs: "This option will prevent any
        public links ... from working") or at a token in its place (served while the token holds). Stream reads
        its token from the path only, so a `?token=` never passes the common check here."""
        video = store.videos.get(key)
        if video is not None:
            lacking = video.request.get("requireSignedURLs") is True
        else:
            claims = token_claims(key)
            video = store.videos.get(claims["sub"]) if claims else None
            lacking = not token_holds(store.account.get(TOKEN_SECRET), key, time.time())
        if lacking and "token" in urllib.parse.parse_qs(query):
            return None, False
        return video, lacking

    def account(self, cfg: SimConfig, call: Call, body: object, parse_error: str | None, held: dict) -> Account:
        # "Only one webhook subscription is allowed per-account"; PUT .../stream/webhook {"notificationUrl"}
        # answers the subscription with its signing `secret`, and changing the URL makes a new secret
        # (https://developers.cloudflare.com/stream/manage-video-library/using-webhooks/). cloudflare-python
        # may send the field as `notificationUrl` or `notification_url`.
        if call.op == "token":  # a target's token: any uid's (the account state holds no videos), its secret kept
            secret = held.setdefault(TOKEN_SECRET, secrets.token_bytes(16))
            return Account(self._token(secret, call.params.get("id", ""), None if parse_error else body))
        if call.method == "DELETE":
            held.pop("webhook_modified", None)
            return Account(Reply(200, _envelope("")), {"webhook_url": None, "webhook_secret": None})
        if call.method == "GET":
            if not cfg.webhook_url:  # set by a PUT, or by the webhook_url knob
                return Account(self.error("not_found"))
            return Account(Reply(200, _envelope(_subscription(cfg.webhook_url, cfg.webhook_secret, held))))
        if parse_error or not isinstance(body, dict):
            return Account(self.error("invalid", parse_error or "request body must be a JSON object"))
        url = body.get("notificationUrl", body.get("notification_url"))
        if not is_http_url(url):
            return Account(self.error("invalid", "notificationUrl must be an http(s) URL", code=INVALID_URL))
        secret = uuid.uuid4().hex  # a second PUT replaces the first: a new URL, a new secret
        held["webhook_modified"] = time.time()
        held["webhook_puts"] = held.get("webhook_puts", 0) + 1
        return Account(
            Reply(200, _envelope(_subscription(url, secret, held))), {"webhook_url": url, "webhook_secret": secret}
        )

    def take_track(self, video: Video | None, call: Call, raw: bytes, cfg: SimConfig) -> TextTrack | Reply:
        if video is None:
            return self.error("not_found")
        language = call.params["language"]
        # The PUT's `file` is "The WebVTT file containing the caption or subtitle content".
        taken = uploaded_caption(call.headers.get("Content-Type"), raw, cfg.track_max_bytes)
        if isinstance(taken, str):
            return self.error("invalid", taken)
        content, fmt = taken
        return TextTrack(id=language, language=language, name=label_of(language), content=content, format=fmt)

    def track_taken(self, video: Video, track: TextTrack, now: float) -> Reply:
        return Reply(200, _envelope(_caption(track)))

    def list_tracks(self, video: Video | None, call: Call, now: float) -> Reply:
        return self.error("not_found") if video is None else Reply(200, _envelope([_caption(t) for t in video.texts]))

    def rate_headers(self, cfg: SimConfig, state: RateState) -> dict:
        # https://developers.cloudflare.com/fundamentals/api/reference/limits/ ("Rate limiting headers"): the
        # current form, examples `Ratelimit: "default";r=50;t=30` and `Ratelimit-Policy: "burst";q=100;w=60`,
        # written as given for the budget; the older form (the same page until cloudflare-docs PR 25269,
        # "Update API Rate Limit Headers to reflect IETF Proposal") was `ratelimit-limit` /
        # `ratelimit-remaining` / `ratelimit-reset` with no window; the reset is written in seconds, as the
        # IETF draft those names come from defines it (Cloudflare's own form of it is not documented).
        if cfg.legacy_rate_headers:
            quota, _window = state.policy()
            return {
                "ratelimit-limit": str(quota),
                "ratelimit-remaining": str(state.remaining),
                "ratelimit-reset": str(state.reset_in_s()),
            }
        policy_name = "burst" if state.kind == "budget" else "default"
        return ietf_ratelimit(state, "Ratelimit-Policy", "Ratelimit", policy_name=policy_name)

    def throttle_hint(self, cfg: SimConfig, wait_s: float, state: RateState) -> tuple[dict, float | None]:
        told = max(1, math.ceil(wait_s))  # "The number of seconds, rounded up, until more capacity is available"
        return {"retry-after": str(told)}, float(told)

    def events(self, video: Video, moment: str, now: float) -> builtins.list[Event]:
        if moment != "finished":
            return []  # Stream sends one webhook, when processing is over.
        body = json.dumps(self.render(video, now), separators=(",", ":")).encode()
        return [Event(uuid.uuid4().hex, body)]

    def signature_headers(self, cfg: SimConfig, event: Event, secret: str | None, timestamp: int) -> dict:
        if not secret:
            return {}
        return {"Webhook-Signature": f"time={timestamp},sig1={sign_timestamped(secret, timestamp, event.body)}"}


def cloudflare_fields(video: Video) -> dict:
    """`playback` {hls, dash}, `preview` and `thumbnail`, as Stream's video object has them."""
    at = f"{media.base(video, 'cloudflare')}/{video.id}"
    return {
        "playback": {"hls": f"{at}/manifest/video.m3u8", "dash": f"{at}/manifest/video.mpd"},
        "preview": f"{at}/watch",
        "thumbnail": f"{at}/thumbnails/thumbnail.jpg",
    }
