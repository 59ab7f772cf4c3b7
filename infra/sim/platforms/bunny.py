"""The "bunny" profile: one Bunny Stream video library's API as the project's adapter speaks it, each behaviour
beside the document it comes from. The contract is Bunny's own OpenAPI file for the Stream API, as its SDKs
ship it (BunnyWay/bunny-stream-ios Sources/BunnyStreamAPI/openapi.yml, "Stream API"), with Bunny's docs
(docs.bunny.net) and Bunny's importer (BunnyWay/cli packages/stream-import) where the file says nothing.

Credentials: `AccessKey` (cfg.api_key) for the library in the path (cfg.account_id); the play data needs
none. cfg.token_secret is the library's token authentication key: set, the library has embed view and CDN
token authentication on (its play data and every playback file need a token); None, they are off.

Source URL convention (this profile's, beside video.py's): a source whose query has `answer=no-id` is
fetched, and the fetch's answer names no video, as Bunny's importer says it may.

A video's custom thumbnail, its chapters and the library's collections: bunny_extras.py.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import copy
import hashlib
import hmac
import json
import math
import re
import secrets
import time
import urllib.parse
import uuid
from datetime import UTC, datetime

from .. import media
from ..bucket import RateState
from ..config import SimConfig, is_http_url
from ..profile import KIND_STATUS, Call, Draft, Event, MadeUp, ParamError, Profile, Reply, Store, int_param, same
from ..signing import sign_seed
from ..texttracks import read_caption
from ..video import ERRORED, READY, TextTrack, Video
from .bunny_extras import Extras, paging, read_chapters, thumbnail_name
from .bunny_extras import serve as serve_extra

# The fetch answers a StatusModel; "The video was successfully fetched and added to the library" (200), "Failed
# fetching the video" (400), "The request authorization failed" (401), "The requested video was not found" (404)
# (openapi.yml, Video_FetchNewVideo); the same phrases for every operation.
_MESSAGES = {
    "invalid": "Failed fetching the video.",
    "unsupported": "Failed fetching the video.",
    "unauthorized": "The request authorization failed.",
    "forbidden": "The request authorization failed.",
    "not_found": "The requested video was not found.",
    "no_route": "Not Found",
    "method": "Method Not Allowed",
    "throttled": "Too Many Requests",
    "busy": "Too Many Requests",
    "full": "Payload Too Large",
    "failed": "Internal Server Error.",
    "unavailable": "Service Unavailable",
}
# VideoModelStatus: 0 Created, 1 Uploaded, 2 Processing, 3 Transcoding, 4 Finished, 5 Error, 6 UploadFailed.
CREATED, UPLOADED, PROCESSING, TRANSCODING, FINISHED, ERROR, UPLOAD_FAILED = range(7)
# The webhook's own numbers: 0 Queued, 3 Finished, 4 Resolution finished ("The first request also signals that the
# video is now playable"), 5 Failed (docs.bunny.net/docs/stream-webhook, "Status list").
HOOK_QUEUED, HOOK_FINISHED, HOOK_RESOLUTION, HOOK_FAILED = 0, 3, 4, 5
SRCLANG = re.compile(r"[a-z]{2}")  # "The ISO 639-1 language code for the caption" (take_track)
_TAG = re.compile(r" \[(vm-[0-9a-f]{32})\]$")
# Each stage's share of a fetch's processing time (the simulator's choice: no durations are documented).
_STAGES = ((0.1, CREATED), (0.25, UPLOADED), (0.4, PROCESSING), (1.0, TRANSCODING))


def _iso(epoch: float) -> str:
    """A date-time as this profile writes `dateUploaded`: UTC, milliseconds, no offset (what only a real
    account can confirm: the file says only `format: date-time`)."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


def _status(video: Video, now: float) -> int:
    if video.state == READY:
        return FINISHED
    if video.state == ERRORED:
        return UPLOAD_FAILED if video.failure == "fetch" else ERROR
    done = video.progress(now)
    return next(code for limit, code in _STAGES if done < limit or limit == 1.0)


def _meta_tags(body: object) -> list[dict] | str:
    """UpdateVideoModel `metaTags`: a list of MetaTagModel `{property, value}` (strings, nullable), or why not."""
    if not isinstance(body, list):
        return "metaTags must be an array"
    tags = []
    for tag in body:
        if not isinstance(tag, dict) or any(not isinstance(tag.get(k), str | None) for k in ("property", "value")):
            return "each metaTag must be {property, value} strings"
        tags.append({"property": tag.get("property"), "value": tag.get("value")})
    return tags


def cdn_token_ok(key: str, path: str, query: str, now: float) -> bool:
    """A CDN token in the query (docs.bunny.net/cdn/security/token-authentication/advanced: `token`, `expires`,
    `token_path` "URL-encoded path prefix for directory-level access"; the token `HS256-` + base64url of an
    HMAC-SHA256 over the signed path, the expiry and the other parameters sorted, BunnyWay/BunnyCDN.
    TokenAuthentication), for `path` (under the pull zone) before `expires`."""
    params = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
    token, expires = params.pop("token", ""), params.pop("expires", "")
    if not expires.isdigit() or int(expires) < now:
        return False
    signed_path = params.get("token_path") or path
    if not path.startswith(signed_path):
        return False
    data = "&".join(f"{k}={v}" for k, v in sorted(params.items()))
    digest = hmac.new(key.encode(), f"{signed_path}{expires}{data}".encode(), hashlib.sha256).digest()
    return same(token, "HS256-" + base64.urlsafe_b64encode(digest).decode().rstrip("="))


def embed_token_ok(key: str, video_id: str, query: str, now: float) -> bool:
    """An embed view token: "SHA256_HEX(token_security_key + video_id + expiration)", `expires` "the UNIX
    timestamp in seconds marking until when the URL is accessible" (docs.bunny.net/stream/token-authentication)."""
    params = urllib.parse.parse_qs(query)
    token, expires = params.get("token", [""])[0], params.get("expires", [""])[0]
    if not expires.isdigit() or int(expires) < now:
        return False
    return same(token, hashlib.sha256(f"{key}{video_id}{expires}".encode()).hexdigest())


class Bunny(Extras, Profile):
    name = "bunny"
    # Bunny Stream publishes no numbers ("Bunny rate limit hit" is a 429 with Retry-After, BunnyWay/cli
    # rate-limit.ts): the simulator's defaults stand (no `limits`).
    routes = (
        # "Fetch Video": POST /library/{libraryId}/videos/fetch, before the path that takes a video id.
        ("/library/{lib}/videos/fetch", {"POST": "create"}),
        ("/library/{lib}/videos", {"GET": "list"}),
        ("/library/{lib}/videos/{id}", {"GET": "get", "POST": "video_update"}),
        ("/library/{lib}/videos/{id}/play", {"GET": "video_play"}),
        ("/library/{lib}/videos/{id}/captions/{srclang}", {"POST": "track_add"}),
        ("/library/{lib}/videos/{id}/thumbnail", {"POST": "store_thumbnail"}),
        ("/library/{lib}/collections", {"GET": "store_collections", "POST": "store_collection_create"}),
        ("/library/{lib}/collections/{cid}", {"GET": "store_collection"}),
    )
    # "Adds caption data to the specified video for the given language" (Video_AddCaption): one per language.
    one_track_per_language = True

    def made_up_target(self, webhook_scheme: str = "standard") -> MadeUp:
        """One video library: its id, its API key, its token authentication key (on, so the stack says so); its
        webhooks are signed with the library's Read-Only API key."""
        library, token = str(100_000 + secrets.randbelow(900_000)), secrets.token_urlsafe(24)
        token_key = secrets.token_hex(16)
        creds = {"library_id": library, "api_key": token, "token_key": token_key}
        sim = {"account_id": library, "api_key": token, "token_secret": token_key}
        return MadeUp(creds, sim, secrets.token_hex(18), stack={"BunnyTokenAuthentication": "true"})

    def authorize(self, cfg: SimConfig, call: Call) -> Reply | None:
        if cfg.account_id is not None and call.params.get("lib") != cfg.account_id:
            return self.error("unauthorized")  # the key is the library's: another library's path is refused
        if call.op == "video_play" or cfg.api_key is None:
            return None  # Video_GetVideoPlayData declares no security: its token is its own (video_op)
        return None if same(call.headers.get("AccessKey"), cfg.api_key) else self.error("unauthorized")

    def error(self, kind: str, message: str | None = None, **detail: object) -> Reply:
        status = KIND_STATUS[kind]
        return Reply(status, {"success": False, "message": message or _MESSAGES[kind], "statusCode": status})

    def new_id(self) -> str:
        return str(uuid.uuid4())  # "guid"

    def ref_of(self, body: object) -> str | None:
        """Our per-asset tag, which the fetch's title carries (no field of the fetch carries a reference)."""
        title = body.get("title") if isinstance(body, dict) else None
        found = _TAG.search(title) if isinstance(title, str) else None
        return found.group(1) if found else None

    def parse_create(self, body: object, parse_error: str | None, call: Call) -> Draft | Reply:
        # FetchVideoRequest: `url` required (minLength 1), `headers` a string map, `title` optional; the query's
        # `thumbnailTime` an int32 of milliseconds and `collectionId` a string.
        if parse_error or not isinstance(body, dict):
            return self.error("invalid")
        if not is_http_url(body.get("url")):
            return self.error("invalid", "The url is not a valid video URL.")
        title, headers = body.get("title"), body.get("headers")
        if not isinstance(title, str | None) or not isinstance(headers, dict | None):
            return self.error("invalid")
        query = urllib.parse.parse_qs(call.query)
        try:
            thumbnail_ms = int_param(query, "thumbnailTime", -1, 0, 2**31 - 1)
        except ParamError:
            return self.error("invalid", "thumbnailTime must be an integer of milliseconds.")
        request: dict[str, object] = {
            "title": title or "",
            "metaTags": [],
            "collectionId": query.get("collectionId", [""])[0],
        }
        request["library"] = call.params.get("lib")
        if thumbnail_ms >= 0:
            request["thumbnailTime"] = thumbnail_ms
        url = body["url"]
        request["no_id"] = "no-id" in urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("answer", [])
        return Draft(source=url, ref=self.ref_of(body), request=request)

    def created(self, video: Video, now: float, replay: bool) -> Reply:
        # "documented as a bare StatusModel, but it also returns the GUID" (bunny-stream.ts), unless it does not.
        answer = {"success": True, "message": "OK", "statusCode": 200}
        return Reply(200, answer if video.request.get("no_id") else {**answer, "id": video.id})

    def render(self, video: Video, now: float) -> dict:
        """VideoModel, as openapi.yml lists its fields."""
        status, done = _status(video, now), video.progress(now)
        known = status >= PROCESSING  # past fetching: the encoder knows its metadata
        width, height = media.top_size(video) if known else (0, 0)
        heights = [h for _, h in media.ladder(video)]
        resolutions = heights if status == FINISHED else heights[:1] if status == TRANSCODING and done > 0.6 else []
        messages = []
        if status == ERROR:  # TranscodingMessageModel, Severity 3 = Error, IssueCodes 7 = OriginalCorrupted
            at, note = _iso(video.finished or video.created), "The original file is corrupted."
            messages = [{"timeStamp": at, "level": 3, "issueCode": 7, "message": note}]
        return {
            "videoLibraryId": _library(video),
            "guid": video.id,
            "title": video.request["title"],
            "dateUploaded": _iso(video.created),
            "views": 0,
            "length": round(video.duration) if known else 0,  # "The duration of the video in seconds" (int32)
            "status": status,
            "framerate": 30.0 if known else 0.0,
            "rotation": 0,
            "width": width,
            "height": height,
            "availableResolutions": ",".join(f"{h}p" for h in resolutions),
            "outputCodecs": "x264",
            "thumbnailCount": 1 if status == FINISHED else 0,
            "encodeProgress": 100 if status == FINISHED else int(done * 100),
            "storageSize": int(video.duration * 500_000) if status == FINISHED else 0,
            "captions": [{"srclang": t.language, "label": t.name} for t in video.texts],
            "hasMP4Fallback": status == FINISHED,
            "collectionId": video.request.get("collectionId", ""),
            "thumbnailFileName": thumbnail_name(video),
            "averageWatchTime": 0,
            "totalWatchTime": 0,
            "category": "unknown",
            "chapters": copy.deepcopy(video.request.get("chapters", [])),
            "moments": [],
            "metaTags": copy.deepcopy(video.request.get("metaTags", [])),
            "transcodingMessages": messages,
        }

    def list(self, store: Store, call: Call, now: float) -> Reply:
        """Video_List: `page` (default 1), `itemsPerPage` (default 100; past 1,000 the ceiling: the simulator's
        reading of "documented ceiling"), `search` ("filter videos by title or metadata"), `collection`,
        `orderBy` (default date: newest first, as the dashboard lists them; the direction is not documented)."""
        query = urllib.parse.parse_qs(call.query)
        asked = paging(query)
        if isinstance(asked, str):
            return self.error("invalid", asked)
        page, size = asked
        search = query.get("search", [""])[0].lower()
        collection = query.get("collection", [""])[0]
        videos = [v for v in store.newest_first() if _matches(v, search, collection)]
        items = [self.render(v, now) for v in videos[(page - 1) * size : page * size]]
        return Reply(200, {"totalItems": len(videos), "currentPage": page, "itemsPerPage": size, "items": items})

    def get(self, video: Video | None, now: float) -> Reply:
        return self.error("not_found") if video is None else Reply(200, self.render(video, now))

    def video_op(
        self, cfg: SimConfig, op: str, video: Video | None, call: Call, body: object, problem: str | None, now: float
    ) -> Reply:
        if video is None:
            return self.error("not_found")
        if op == "video_play":
            return self._play(cfg, video, call, now)
        # Video_UpdateVideo (UpdateVideoModel): `metaTags` replaces the list whole ("Update replaces the whole
        # array, so tags already on the video are kept unless we set the same property", bunny-stream.ts).
        if problem or not isinstance(body, dict):
            return self.error("invalid", "The request body is not a video update.")
        # `chapters` (ChapterModel) and `collectionId` likewise: a field sent replaces what the video had, one left out
        # (or null) leaves it. What Bunny answers for a collectionId no collection has is not documented: kept as sent.
        tags = _meta_tags(body["metaTags"]) if "metaTags" in body and body["metaTags"] is not None else None
        chapters = read_chapters(body["chapters"]) if body.get("chapters") is not None else None
        collection = body.get("collectionId")
        for read in (tags, chapters):
            if isinstance(read, str):
                return self.error("invalid", read)
        if not isinstance(body.get("title"), str | None) or not isinstance(collection, str | None):
            return self.error("invalid", "title and collectionId must be strings")
        if body.get("title") is not None:
            video.request["title"] = body["title"]
        if tags is not None:
            video.request["metaTags"] = tags
        if chapters is not None:
            video.request["chapters"] = chapters
        if collection is not None:
            video.request["collectionId"] = collection
        return Reply(200, {"success": True, "message": "OK", "statusCode": 200})

    def _play(self, cfg: SimConfig, video: Video, call: Call, now: float) -> Reply:
        """VideoPlayDataModel. A library with token authentication answers only a valid embed view token
        (`token`, `expires`): the simulator's reading of "A 403 Forbidden on the iframe almost always means ...
        the parameters are missing entirely" (docs.bunny.net/docs/stream-embed-token-authentication)."""
        if cfg.token_secret and not embed_token_ok(cfg.token_secret, video.id, call.query, time.time()):
            return self.error("forbidden", "The request authorization failed.")
        at = f"{media.base(video, 'bunny')}/{video.id}"
        return Reply(
            200,
            {
                "video": self.render(video, now),
                "captionsPath": f"{at}/captions/",
                "seekPath": f"{at}/seek/_0.jpg",
                "thumbnailUrl": f"{at}/{thumbnail_name(video)}",
                "fallbackUrl": f"{at}/play_720p.mp4",
                "videoPlaylistUrl": f"{at}/playlist.m3u8",
                "originalUrl": f"{at}/original",
                "previewUrl": f"{at}/preview.webp",
                "controls": "play-large,play,progress,current-time,mute,volume,captions,settings,pip,fullscreen",
                "enableDRM": False,
                "drmVersion": 0,
                "tokenAuthEnabled": cfg.token_secret is not None,
                "enableMP4Fallback": True,
                "showHeatmap": False,
                "playbackSpeeds": "0.5,0.75,1,1.25,1.5,1.75,2",
            },
        )

    def open_playback(self, cfg: SimConfig, kept: dict, video: Video, rest: builtins.list[str], query: str):
        """The pull zone (`{zone}/{video}/playlist.m3u8`, `.../{h}p/video.m3u8`, `thumbnail.jpg`,
        `play_{h}p.mp4`: docs.bunny.net/stream/storage-structure; the variants' layout is the simulator's).
        "CDN token authentication applies to all direct URLs — MP4 fallbacks, HLS playlists and segments,
        thumbnails, and previews. If any of these return a 403 after enabling it, the token is either expired,
        malformed, or missing" (docs.bunny.net/stream/security)."""
        path = "/" + "/".join([video.id, *rest])
        if cfg.token_secret and not cdn_token_ok(cfg.token_secret, path, query, time.time()):
            return 403, media.TEXT, b"403 Forbidden: a valid CDN token is required\n"
        custom = serve_extra(video, rest)
        if custom is not None:
            return custom
        if len(rest) == 2 and rest[1] == "video.m3u8" and rest[0].endswith("p"):
            rest = [f"{rest[0]}.m3u8"]  # media.answer's name for a rendition's playlist
        return media.answer(video, rest, query, False, lambda h: f"{h}p/video.m3u8", lambda p: p == ["playlist.m3u8"])

    def take_track(self, video: Video | None, call: Call, raw: bytes, cfg: SimConfig) -> TextTrack | Reply:
        """CaptionModelAdd `{srclang, label, captionsFile}`: "The caption file should be provided as a base64
        encoded string" (Video_AddCaption); SRT or WebVTT (secondary: no format is named in the file)."""
        if video is None:
            return self.error("not_found")
        try:
            body = json.loads(raw or b"null")
            content = base64.b64decode(body["captionsFile"], validate=True)
        except (ValueError, TypeError, KeyError, binascii.Error):
            return self.error("invalid", "Failed uploading the captions.")
        if len(content) > cfg.track_max_bytes:
            return self.error("invalid", f"The captions file is larger than {cfg.track_max_bytes} bytes.")
        fmt, problem = read_caption(content, webvtt_only=False)
        if problem:
            return self.error("invalid", f"Failed uploading the captions: {problem}.")
        language = call.params["srclang"]
        # srclang: "The ISO 639-1 language code for the caption (e.g., 'en', 'fr')" (Video_AddCaption; 400 is
        # "Failed uploading the captions."): a tag with a region (pt-BR), `und` or a 639-2 code is refused. The
        # shape is checked (two lower-case letters, as the examples write them), not the list of codes.
        if not SRCLANG.fullmatch(language):
            return self.error("invalid", f"Failed uploading the captions: srclang {language!r} is no ISO 639-1 code.")
        label = body.get("label") if isinstance(body.get("label"), str) else language
        return TextTrack(id=language, language=language, name=label, content=content, format=fmt)

    def track_taken(self, video: Video, track: TextTrack, now: float) -> Reply:
        return Reply(200, {"success": True, "message": "OK", "statusCode": 200})

    def rate_headers(self, cfg: SimConfig, state: RateState) -> dict:
        return {}  # no rate-limit headers are documented

    def throttle_hint(self, cfg: SimConfig, wait_s: float, state: RateState) -> tuple[dict, float | None]:
        # A 429 carries `Retry-After`, in seconds (BunnyWay/cli rate-limit.ts reads it, 30 s when absent).
        told = max(1, math.ceil(wait_s))
        return {"Retry-After": str(told)}, float(told)

    def events(self, video: Video, moment: str, now: float) -> builtins.list[Event]:
        """`{VideoLibraryId, VideoGuid, Status}` (docs.bunny.net/docs/stream-webhook): Queued at the create; at
        the end a Resolution finished per rendition and then Finished, or Failed."""
        if moment == "created":
            codes = [HOOK_QUEUED]
        elif video.state == READY:
            codes = [HOOK_RESOLUTION] * len(media.ladder(video)) + [HOOK_FINISHED]
        else:
            codes = [HOOK_FAILED]
        library = _library(video)
        events = []
        for n, code in enumerate(codes):
            doc = {"VideoLibraryId": library, "VideoGuid": video.id, "Status": code}
            events.append(Event(f"{video.id}/{moment}/{n}", json.dumps(doc, separators=(",", ":")).encode()))
        return events

    def signature_headers(self, cfg: SimConfig, event: Event, secret: str | None, timestamp: int) -> dict:
        # v1: "lowercase_hex( HMAC-SHA256( utf8(body), utf8(signatureSecret) ) )", the secret "Your library's
        # Read-Only API key"; the URL, timestamp, method and headers are not signed
        # (docs.bunny.net/docs/stream-webhook, "Signature validation").
        if not secret:
            return {}
        return {
            "X-BunnyStream-Signature-Version": "v1",
            "X-BunnyStream-Signature-Algorithm": "hmac-sha256",
            "X-BunnyStream-Signature": sign_seed(secret, event.body),
        }


def _library(video: Video) -> int:
    library = str(video.request.get("library") or "")
    return int(library) if library.isdigit() else 0


def _matches(video: Video, search: str, collection: str) -> bool:
    if collection and video.request.get("collectionId") != collection:
        return False
    if not search:
        return True
    words = [video.request["title"], *(t.get("value") or "" for t in video.request.get("metaTags", []))]
    return any(search in w.lower() for w in words)
