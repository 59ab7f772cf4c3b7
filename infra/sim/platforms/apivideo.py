"""The "apivideo" profile: api.video's video API as the project's adapter speaks it (providers/apivideo.py).

HTTP Basic with the API key as user name and an empty password, or a bearer token from
POST /auth/api-key {"apiKey"} (refreshed at POST /auth/refresh), as the official clients'
AuthenticatedApiClient does; POST /videos {"title"
(required), "source", "metadata": [{"key", "value"}]} -> 201 video (no status on it);
GET /videos with metadata[...] filters, sortBy/sortOrder, currentPage/pageSize (<= 100)
and pagination links; GET /videos/{id}; GET /videos/{id}/status with ingest and
per-quality encoding statuses; problem-style errors {"type", "title", "status"};
X-RateLimit-Limit (per minute) / -Remaining / -Retry-After; webhooks
video.encoding.quality.completed once per quality, signed X-Api-Video-Signature (hex HMAC
of the body), and no event at all for a failure; captions POST /videos/{id}/captions/{language}
as a multipart `file`, VTT only, one per language, listed at GET /videos/{id}/captions; the webhook
subscriptions at GET / POST /webhooks (`_webhooks`); a video's thumbnail (uploaded or picked), chapters and
update (apivideo_extras.py).
"""

from __future__ import annotations

import builtins
import copy
import hashlib
import hmac
import json
import math
import secrets
import time
import urllib.parse
from typing import Any, ClassVar

from .. import media
from ..bucket import RateState
from ..config import SimConfig, is_http_url
from ..profile import (
    KIND_STATUS,
    Account,
    Call,
    Draft,
    Event,
    MadeUp,
    Profile,
    Reply,
    Store,
    alnum_id,
    basic_matches,
    derived_id,
    iso_offset,
    same,
    x_ratelimit,
)
from ..signing import sign_seed
from ..texttracks import label_of, uploaded_caption
from ..video import ERRORED, IDLE, READY, TextTrack, Video
from .apivideo_extras import Extras
from .apivideo_extras import serve as serve_extra
from .apivideo_library import FAULTS, MEDIA, SORT_FIELDS, Library, encodings, page_of, paged, pagination
from .apivideo_vod import REFUSED, admit, private_token, session_ttl

DOCS = "https://docs.api.video/reference/"
# Signs the private tokens of videos made on this simulator (apivideo_vod): one per process is enough.
_VOD_SECRET = secrets.token_bytes(16)
# (type, title) per kind, from the OpenAPI file's examples; "about:blank" (RFC 9457: the
# title is the status phrase) where it documents no body.
_PROBLEMS = {
    "invalid": (DOCS + "invalid-attribute", "An attribute is invalid."),
    "unsupported": (DOCS + "invalid-attribute", "An attribute is invalid."),
    "unauthorized": (DOCS + "authentication-invalid-user-credentials", "The user credentials were incorrect."),
    "forbidden": ("about:blank", "Forbidden"),
    "not_found": (DOCS + "resource-not-found", "The requested resource was not found."),
    "no_route": (DOCS + "unrecognized-request-url", "Unrecognized request URL."),
    "method": ("about:blank", "Method Not Allowed"),
    "throttled": (DOCS + "too-many-requests", "Too many requests."),
    "busy": ("about:blank", "Too Many Requests"),
    "full": ("about:blank", "Payload Too Large"),
    "failed": ("about:blank", "Internal Server Error"),
    "unavailable": ("about:blank", "Service Unavailable"),
}
REQUIRED = (DOCS + "attribute-required", "This attribute is required.")
QUALITY_EVENT = "video.encoding.quality.completed"
_INGESTED_AT = 1 / 3  # fraction of the processing time spent fetching the source
# POST /auth/api-key answers {"token_type": "Bearer", "expires_in": 3600, "access_token", "refresh_token"};
# a wrong key is a 400 "The user credentials were incorrect." (oas_apivideo.yaml, /auth/api-key and /auth/refresh).
TOKEN_LIFETIME_S = 3600
BAD_CREDENTIALS = {
    "type": DOCS + "authentication-invalid-user-credentials",
    "title": "The user credentials were incorrect.",
    "name": "",
    "status": 400,
}
# Each field's type in video-creation-payload (oas_apivideo.yaml); it documents no lengths or counts.
_TYPES = {
    "title": str,
    "description": str,
    "source": str,
    "public": bool,
    "panoramic": bool,
    "mp4Support": bool,
    "playerId": str,
    "transcript": bool,
    "transcriptSummary": bool,
}
_TYPE_NAMES = {str: "a string", bool: "a boolean"}


def _invalid(name: str, detail: str, required: bool = False) -> Reply:
    kind, title = REQUIRED if required else _PROBLEMS["invalid"]
    problem = {"type": kind, "title": title, "name": name}
    return Reply(400, {**problem, "status": 400, "detail": detail, "problems": [problem]})


def _bad_query(name: str) -> dict:
    return {"type": DOCS + "request-invalid-query-parameter", "title": "A query parameter is invalid.", "name": name}


def _validate(body: dict) -> Reply | None:
    if "title" not in body:
        return _invalid("title", "This attribute is required.", required=True)
    for name, kind in _TYPES.items():
        if name in body and not isinstance(body[name], kind):
            return _invalid(name, f"This attribute must be {_TYPE_NAMES[kind]}.")
    if "source" in body and not is_http_url(body["source"]):
        return _invalid("source", "This attribute must be the URL of a video.")
    tags = body.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        return _invalid("tags", "This attribute must be an array.")
    metadata = body.get("metadata", [])
    if not isinstance(metadata, list) or not all(
        isinstance(m, dict) and isinstance(m.get("key"), str) and isinstance(m.get("value"), str) for m in metadata
    ):
        return _invalid("metadata", "This attribute must be an array of {key, value} strings.")
    return None


def _caption(video: Video, track: TextTrack) -> dict:
    """A caption as the OpenAPI's Caption: `{uri, src, srclang, languageName, default}`."""
    return {
        "uri": f"/videos/{video.id}/captions/{track.language}",
        "src": f"https://vod.api.video/vod/{video.id}/captions/{track.language}.vtt",
        "srclang": track.language,
        "languageName": track.name,
        "default": False,
    }


def _token(key: str, kind: str) -> str:
    """A bearer (or refresh) token for an API key: derived, not stored."""
    return kind[:1] + "_" + hmac.new(key.encode(), f"provider-sim/{kind}".encode(), hashlib.sha256).hexdigest()


def _metadata(video: Video) -> list:
    return video.request.get("metadata", [])


def _has_pairs(video: Video, pairs: dict[str, str]) -> bool:
    own = {(m["key"], m["value"]) for m in _metadata(video)}
    return all((k, v) in own for k, v in pairs.items())


def _private(assets: dict, video_id: str, token: str) -> dict:
    """A private video's assets: its private token in the path of each link, and as the embed's `?token=`
    ("For the embedded video the private token is a query string, while the HLS manifest has the token in
    the url path", docs.api.video, "Video privacy access management")."""
    out = {name: url.replace(f"/{video_id}/", f"/{video_id}/token/{token}/", 1) for name, url in assets.items()}
    out["player"] = f"{assets['player']}?token={token}"
    out["iframe"] = f'<iframe src="{out["player"]}" width="100%" height="100%" frameborder="0" scrolling="no"></iframe>'
    return out


class ApiVideo(Library, Extras, Profile):
    name = "apivideo"
    hls_master = ("hls", "manifest.m3u8")  # where its video object's HLS link points (media.py)
    faults = FAULTS
    routes = (
        ("/auth/api-key", {"POST": "auth"}),
        ("/auth/refresh", {"POST": "refresh"}),
        ("/videos", {"POST": "create", "GET": "list"}),
        ("/videos/{id}", {"GET": "get", "PATCH": "store_video_update"}),
        ("/videos/{id}/status", {"GET": "status"}),
        ("/videos/{id}/thumbnail", {"POST": "store_thumbnail_upload", "PATCH": "store_thumbnail_pick"}),
        ("/videos/{id}/chapters", {"GET": "store_chapters_list"}),
        ("/videos/{id}/chapters/{language}", {"POST": "store_chapter_add", "GET": "store_chapter_get"}),
        # One list, two sides: a target's captions (track_list), or a library's (src_captions: `source_ops`).
        ("/videos/{id}/captions", {"GET": "track_list"}),
        ("/data/buckets/{metric}/{breakdown}", {"GET": "src_usage"}),  # the Analytics API (analytics.py)
        ("/videos/{id}/captions/{language}", {"POST": "track_add", "GET": "src_caption"}),
        ("/webhooks", {"POST": "webhook_create", "GET": "webhook_list"}),
    )
    # A library lists its own captions and chapters (apivideo_library.py); a target, what it was sent.
    source_ops: ClassVar[dict[str, str]] = {
        "track_list": "src_captions",
        "store_chapters_list": "src_chapters",
        "store_chapter_get": "src_chapter",
    }
    # Captions "are uploaded per language" (docs.api.video/vod/add-captions): one file per language.
    one_track_per_language = True
    # "api.video retries sending the webhook notification 3 times, with 3 second intervals".
    webhook_backoff_s = (3.0, 3.0, 3.0)

    def made_up_target(self, webhook_scheme: str = "standard") -> MadeUp:
        """An API key, and a webhook signature secret as api.video's look."""
        token = secrets.token_urlsafe(24)
        return MadeUp({"api_key": token}, {"api_key": token}, "sig_sec_" + secrets.token_hex(11))

    def authorize(self, cfg: SimConfig, call: Call) -> Reply | None:
        if call.op in ("auth", "refresh") or cfg.api_key is None:
            return None  # the token endpoints check the key in their body
        header = call.headers.get("Authorization")
        if basic_matches(header, cfg.api_key, "") or same(header, f"Bearer {_token(cfg.api_key, 'access')}"):
            return None
        return self.error("unauthorized")

    def account(self, cfg: SimConfig, call: Call, body: object, parse_error: str | None, held: dict) -> Account:
        if call.op in ("webhook_list", "webhook_create"):
            return self._webhooks(cfg, call, body, held)
        given = body.get("apiKey" if call.op == "auth" else "refreshToken") if isinstance(body, dict) else None
        if not isinstance(given, str) or not given:
            return Account(Reply(400, BAD_CREDENTIALS))
        if cfg.api_key is None:
            key = given  # no key to check against: any key or refresh token is good
        else:
            expected = cfg.api_key if call.op == "auth" else _token(cfg.api_key, "refresh")
            if not same(given, expected):
                return Account(Reply(400, BAD_CREDENTIALS))
            key = cfg.api_key
        # Tokens derive from the key, so nothing is stored and they never expire here.
        tokens = {"access_token": _token(key, "access"), "refresh_token": _token(key, "refresh")}
        return Account(Reply(200, {"token_type": "Bearer", "expires_in": TOKEN_LIFETIME_S, **tokens}))

    def _webhooks(self, cfg: SimConfig, call: Call, body: object, held: dict) -> Account:
        """The account's webhook subscriptions: `GET /webhooks` ("List all webhooks", `{data, pagination}`, each
        `{webhookId, createdAt, events, url}`) and `POST /webhooks {events, url}` (201, the subscription with its
        `signatureSecret`): oas_apivideo.yaml, api-video 1.4.7 WebhooksApi and Webhook; docs.api.video "Create and
        manage webhooks". One set up through the webhook_url knob stands for one made before: listed, and kept when
        another is made. The simulator delivers to the newest subscription only, where api.video sends each event to
        every one."""
        hooks = held.setdefault("apivideo_webhooks", [])
        if cfg.webhook_url and all(h["url"] != cfg.webhook_url for h in hooks):  # the knob's: listed, and kept
            hooks.insert(0, _subscription(cfg.webhook_url, [QUALITY_EVENT], time.time()))
        if call.op == "webhook_list":
            chosen = paged(call, "/webhooks", hooks)
            if isinstance(chosen, Reply):
                return Account(chosen)
            return Account(Reply(200, {"data": chosen[0], "pagination": chosen[1]}))
        events = body.get("events") if isinstance(body, dict) else None
        if not isinstance(body, dict) or not is_http_url(body.get("url")) or not isinstance(events, list) or not events:
            return Account(self.error("invalid", "url must be an http(s) URL and events a non-empty list"))
        hook = _subscription(body["url"], [e for e in events if isinstance(e, str)], time.time())
        hooks.append(hook)
        secret = secrets.token_hex(16)
        return Account(
            Reply(201, {**hook, "signatureSecret": secret}), {"webhook_url": body["url"], "webhook_secret": secret}
        )

    def error(self, kind: str, message: str | None = None, **detail: object) -> Reply:
        kind_url, title = _PROBLEMS[kind]
        body = {"type": kind_url, "title": title, "status": KIND_STATUS[kind]}
        if kind == "not_found":
            body["name"] = "videoId"
        elif kind == "unsupported":
            body.update(name="source", detail="The source is not a video file that can be encoded.")
        elif kind == "invalid" and message:
            body["detail"] = message
        return Reply(KIND_STATUS[kind], {**body, **detail})

    def invalid(self, name: str, detail: str) -> Reply:
        return _invalid(name, detail)

    def store_op(
        self, cfg: SimConfig, op: str, store: Store, call: Call, raw: bytes, fetched: object, now: float
    ) -> Reply:
        """A video's thumbnail, chapters and update (apivideo_extras.py)."""
        return self.extras_op(op, store.videos.get(call.params.get("id", "")), call, raw, now)

    def new_id(self) -> str:
        return alnum_id(22, prefix="vi")

    def ref_of(self, body: object) -> str | None:
        metadata = body.get("metadata") if isinstance(body, dict) else None
        for item in metadata if isinstance(metadata, list) else []:
            if isinstance(item, dict) and item.get("key") == "migration_ref" and isinstance(item.get("value"), str):
                return item["value"]
        return None

    def parse_create(self, body: object, parse_error: str | None, call: Call) -> Draft | Reply:
        if parse_error or not isinstance(body, dict):
            return Reply(400, {"type": "about:blank", "title": "Bad Request", "status": 400, "detail": parse_error})
        refusal = _validate(body)
        if refusal:
            return refusal
        # Without a source the video is an empty container waiting for an upload: it never encodes.
        return Draft(source=body.get("source"), ref=self.ref_of(body), request=body)

    def render(self, video: Video, now: float) -> dict:
        request = video.request
        at = iso_offset(video.created)
        assets = apivideo_assets(video)
        if request.get("public") is False:
            assets = _private(assets, video.id, private_token(_VOD_SECRET, video.id))
        return {
            "videoId": video.id,
            "createdAt": at,
            "title": request["title"],
            "description": request.get("description", ""),
            "publishedAt": at,
            "updatedAt": at,
            "discarded": False,
            "discardedAt": None,
            "deletesAt": None,
            "tags": copy.deepcopy(request.get("tags", [])),
            "metadata": copy.deepcopy(_metadata(video)),
            "source": {"uri": video.source or f"/videos/{video.id}/source"},
            "public": request.get("public", True),
            "panoramic": request.get("panoramic", False),
            "mp4Support": request.get("mp4Support", True),
            **({"playerId": request["playerId"]} if "playerId" in request else {}),
            "assets": assets,
        }

    def _qualities(self, video: Video) -> list[tuple[str, str]]:
        return encodings(video.request.get("mp4Support", True))

    def render_status(self, video: Video, now: float) -> dict:
        """The /status resource: ingest, then per-quality encoding; playable once encoded."""
        encoding = {"playable": video.state == READY, "qualities": [], "metadata": dict.fromkeys(MEDIA)}
        if video.state == IDLE:
            return {"encoding": encoding}  # Waiting for an upload: nothing ingested or encoding.
        # A corrupt source never finishes ingesting; at its end every quality is "failed".
        ingested = not video.corrupt and video.progress(now) >= _INGESTED_AT
        if video.state == READY:
            quality_status = "encoded"
        elif video.state == ERRORED:
            quality_status = "failed"
        else:
            quality_status = "encoding" if ingested else "waiting"
        encoding["qualities"] = [{"type": t, "quality": q, "status": quality_status} for t, q in self._qualities(video)]
        if ingested:
            encoding["metadata"] = {**MEDIA, "duration": round(video.duration)}  # whole seconds
        ingest: dict[str, Any] = {
            "status": "ingested" if ingested else "ingesting",
            "filesize": int(video.duration * 500_000) if ingested else None,
            "receivedBytes": [],
        }
        return {"ingest": ingest, "encoding": encoding}

    def created(self, video: Video, now: float, replay: bool) -> Reply:
        return Reply(201, self.render(video, now))

    def list_ref(self, call: Call) -> str | None:
        return urllib.parse.parse_qs(call.query).get("metadata[migration_ref]", [None])[0]

    def list(self, store: Store, call: Call, now: float) -> Reply:
        pairs = urllib.parse.parse_qsl(call.query, keep_blank_values=True)
        query = urllib.parse.parse_qs(call.query, keep_blank_values=True)
        asked = page_of(query)
        if isinstance(asked, Reply):
            return asked
        sort_by = query.get("sortBy", ["createdAt"])[0]  # The default order is undocumented: oldest first.
        order = query.get("sortOrder", ["asc"])[0]
        for name, value, allowed in (("sortBy", sort_by, SORT_FIELDS), ("sortOrder", order, ("asc", "desc"))):
            if value not in allowed:
                return self.error("invalid", f"This value must be one of {', '.join(allowed)}.", **_bad_query(name))
        wanted = {k[len("metadata[") : -1]: v for k, v in pairs if k.startswith("metadata[") and k.endswith("]")}
        tags = query.get("tags[]", [])
        title = query.get("title", [None])[0]
        description = query.get("description", [None])[0]
        ref = wanted.get("migration_ref")
        candidates = store.with_ref(ref) if ref is not None else store.newest_first()  # the index narrows only
        matched = [
            v
            for v in candidates
            if _has_pairs(v, wanted)
            and all(t in v.request.get("tags", []) for t in tags)
            and (title is None or title in v.request["title"])
            and (description is None or description in v.request.get("description", ""))
        ]
        key = (lambda v: (v.request["title"], v.seq)) if sort_by == "title" else (lambda v: (v.created, v.seq))
        matched.sort(key=key, reverse=order == "desc")
        page, size = asked
        data = [self.render(v, now) for v in matched[(page - 1) * size : page * size]]
        kept = [(k, v) for k, v in pairs if k not in ("currentPage", "pageSize")]
        listed = pagination(f"{call.base_url}/videos", kept, page, size, len(matched), len(data))
        return Reply(200, {"data": data, "pagination": listed})

    def get(self, video: Video | None, now: float) -> Reply:
        return self.error("not_found") if video is None else Reply(200, self.render(video, now))

    def take_track(self, video: Video | None, call: Call, raw: bytes, cfg: SimConfig) -> TextTrack | Reply:
        if video is None:
            return self.error("not_found")
        language = call.params["language"]
        # "file: The video text track in VTT format only"; "Currently only VTT file format is supported".
        taken = uploaded_caption(call.headers.get("Content-Type"), raw, cfg.track_max_bytes)
        if isinstance(taken, str):
            return _invalid("file", taken)
        content, fmt = taken
        return TextTrack(id=language, language=language, name=label_of(language), content=content, format=fmt)

    def track_taken(self, video: Video, track: TextTrack, now: float) -> Reply:
        return Reply(200, _caption(video, track))

    def list_tracks(self, video: Video | None, call: Call, now: float) -> Reply:
        if video is None:
            return self.error("not_found")
        chosen = paged(call, f"/videos/{video.id}/captions", [_caption(video, t) for t in video.texts])
        return chosen if isinstance(chosen, Reply) else Reply(200, {"data": chosen[0], "pagination": chosen[1]})

    def playback_needs_token(self, video: Video) -> bool:
        return video.request.get("public") is False  # a private video (`public: false`)

    def open_playback(self, cfg: SimConfig, kept: dict, video: Video, rest: builtins.list[str], query: str):
        """A private video's playback at its delivery host, under apivideo_vod's rules: `token/{token}/...`
        (the session route, or a file with the session's `avh`, or once without), the player with `?token=`."""
        if video.request.get("public") is not False:
            return serve_extra(video, rest)  # a custom thumbnail, a chapters file; else the common rules
        spent = kept.setdefault("vod_spent", set())
        ttl = session_ttl(cfg.link_ttl_s)
        embed_token = urllib.parse.parse_qs(query).get("token", [""])[0]
        if len(rest) >= 3 and rest[0] == "token":
            admitted = admit(_VOD_SECRET, spent, video.id, rest[1], rest[2:], query, ttl)
        elif rest == ["player"] and embed_token:
            admitted = admit(_VOD_SECRET, spent, video.id, embed_token, rest, query, ttl)
        else:
            return 404, media.TEXT, REFUSED  # a private video's media without its token
        if admitted.session is not None:
            return 200, "application/json", admitted.session
        if admitted.rest is None:
            return 404, media.TEXT, REFUSED
        return serve_extra(video, admitted.rest) or admitted.rest

    def status(self, video: Video | None, now: float) -> Reply:
        return self.error("not_found") if video is None else Reply(200, self.render_status(video, now))

    def rate_headers(self, cfg: SimConfig, state: RateState) -> dict:
        # Per minute, as api.video counts. Retry-After is the wait for the next request (0 while
        # some remain): for a token bucket that is when "the current window resets".
        return {**x_ratelimit(state, 60), "X-RateLimit-Retry-After": str(math.ceil(state.next_in_s))}

    def throttle_hint(self, cfg: SimConfig, wait_s: float, state: RateState) -> tuple[dict, float | None]:
        told = max(1, math.ceil(wait_s))
        return {"X-RateLimit-Retry-After": str(told)}, float(told)

    def events(self, video: Video, moment: str, now: float) -> builtins.list[Event]:
        if moment != "finished" or video.state != READY:
            return []  # api.video has no event for a failed encoding.
        events = []
        for kind, quality in self._qualities(video):
            event = {
                "type": QUALITY_EVENT,
                "emittedAt": iso_offset(time.time()),
                "videoId": video.id,
                "encoding": kind,
                "quality": quality,
            }
            events.append(Event(f"{video.id}/{kind}/{quality}", json.dumps(event, separators=(",", ":")).encode()))
        return events

    def signature_headers(self, cfg: SimConfig, event: Event, secret: str | None, timestamp: int) -> dict:
        # The subscription's id, stable for a webhook URL as a real subscription's is.
        headers = {"X-Api-Video-WebhookID": "webhook_" + derived_id(cfg.webhook_url or "", 15)}
        if secret:
            headers["X-Api-Video-Signature"] = sign_seed(secret, event.body)
        return headers


def _subscription(url: str, events: list[str], created: float) -> dict:
    """A webhook subscription as api.video lists it; its id is derived from its URL, as the deliveries' header is."""
    return {
        "webhookId": "webhook_" + derived_id(url, 15),
        "createdAt": iso_offset(created),
        "events": events,
        "url": url,
    }


def apivideo_assets(video: Video) -> dict:
    """The video object's `assets`, as api.video's has them (iframe, player, hls, thumbnail, mp4)."""
    at = f"{media.base(video, 'apivideo')}/{video.id}"
    iframe = (
        f'<iframe src="{at}/player" width="100%" height="100%" frameborder="0" scrolling="no"'
        ' allowfullscreen=""></iframe>'
    )
    assets = {"iframe": iframe, "player": f"{at}/player", "hls": f"{at}/hls/manifest.m3u8"}
    assets["thumbnail"] = f"{at}/thumbnail.jpg"
    if video.request.get("mp4Support", True):
        assets["mp4"] = f"{at}/mp4/source.mp4"
    return assets
