"""The "jwplayer" profile: JW Player's Management API v2 as a target, and a library with its Delivery API as a source.

Bearer v2 API secret (`token`) and the property id in the path (`account_id`, the site id); errors, the list's
`q`/`sort`/ceiling and the signatures are jwplayer_library's. What each behaviour rests on, beside its code:
- create: `POST /v2/sites/{site}/media/` with `upload.method` fetch and `download_url` ("Fetch upload via URL":
  answered with `"status": "processing"`), `metadata` as "Upload content" lists it; no idempotency key;
- a media: processing -> ready | failed (`error_message`); `GET .../media/{id}/`;
- webhooks ("Learn about webhooks"; `POST /v2/webhooks/` answers the subscription with its `secret`): events
  `{event, media_id, webhook_id, site_id, event_time}`: `media_created` at the create, `conversions_complete`
  ("when both the thumbnail is ready and all initial video renditions have been processed"; only for the
  first upload) and `media_available` (first publishable; not sent while `publish_start_date` lies ahead),
  and nothing for a failure; each signed `Authorization: Bearer <JWT>`, HS256 with the webhook secret, its
  payload the body (as peers verify it: JwWebhookGuard, citing "verify the authenticity of a webhook");
- the rate limit: "60 requests/minute per API token", every call (the profile's `limits`: a budget of 60 a
  minute, refused to the minute's end), a 429 with no hint; `jw-request-limit` / `jw-request-remaining`
  with rate_headers (peer clients' names);
- text tracks: `POST .../media/{id}/text_tracks/` ("Generate a text track for the associated media. Each media
  can have a maximum of 50 text tracks": post_v2-sites-site-id-media-media-id-text-tracks), a file JW fetches
  from `upload.download_url` with `upload.method` fetch (jwplatform-go's TextTrackUploadRequest: methods
  "direct" (default) and "fetch", `file_format`, `auto_publish`), listed at `GET .../text_tracks/` (`page`,
  `page_length`) with `status` processing, then failed (`error_message`) or, once read, `draft`, or `ready`
  where the create asked `upload.auto_publish` (jwplatform-go's text-track fixtures show `draft`). `PUT
  .../text_tracks/{track}/publish/` "Enables a text track to be delivered via the Delivery API by changing the
  track status from draft to ready" (put_v2-sites-site-id-media-media-id-text-tracks-track-id-publish;
  jwplatform-py `TextTrack.publish`): a ready track is answered as it is; one still processing or failed is
  refused 409 (what JW answers then is not documented);
- playback (`/_play/jwplayer/<id>/manifest.m3u8`, variants, `poster.jpg`, `player`: JW's `/manifests/{id}.m3u8`
  and `/v2/media/{id}/poster.jpg` on cdn.jwplayer.com): a property with URL signing (`signing_secret`) serves
  the manifest only with `exp` and `sig` (md5 of its path, the expiry and the secret), its variants signed
  in it; a media whose publish window is closed is delivered to no one. `media.json` stands for the Delivery
  API's `/v2/media/{id}` (a playlist of one item, its `sources` and `tracks`; on a signing property only with
  a JWT `token` for that resource): its `tracks` are the published (`ready`) ones only, each file at
  `tracks/<track id>.<format>` (JW's `/tracks/{id}.{ext}`), which serves no file of a draft;
- as a source, what a viewer sees first (issue 42): chapters tracks and publish dates (jwplayer_library.py), the
  poster at the Delivery API and the property's playlists, manual ones in order (jwplayer_extras.py);
- as a target, what a viewer sees first (jwplayer_target.py): thumbnails promoted to the poster (served as the
  media's `poster.jpg` and its Delivery API `image`), a text track of `track_kind` chapters, uploaded "direct" to
  its `upload_link` (delivered with `kind` chapters), deleted by `DELETE .../text_tracks/{track}/`
  (jwplatform-go text_tracks.go), and manual playlists holding their media in order.
"""

from __future__ import annotations

import builtins
import json
import secrets
import time
import urllib.parse
import uuid
from collections.abc import Mapping
from typing import ClassVar

from .. import media
from ..bucket import RateState
from ..config import SimConfig, is_http_url
from ..library import Item, Served, Shelf
from ..profile import Account, Call, Draft, Event, MadeUp, Profile, Reply, Store, alnum_id, same
from ..texttracks import label_of
from ..video import ERRORED, READY, TextTrack, Video
from . import analytics
from . import jwplayer_extras as extras
from . import jwplayer_target as target
from .jwplayer_library import (
    CEILING,
    FAULTS,
    Query,
    chapter_tracks,
    epoch,
    error,
    file_sig,
    iso,
    jwt,
    library_id,
    library_index,
    library_tracks,
    list_library,
    listing,
    matches,
    paging,
    parse_query,
    render_library,
    serve_delivery,
    sign_file,
    signed_file,
    token_for,
)

_STATUS = {READY: "ready", ERRORED: "failed"}
_ERRORED = {False: "The source file could not be transcoded", True: "The file could not be fetched from the URL"}
_METADATA_TEXT = ("title", "description", "author", "category", "external_id", "permalink")
_DATES = ("publish_start_date", "publish_end_date")
_TRACK_STATUS = {
    "preparing": "processing",
    "ready": "ready",
    "errored": "failed",
    "draft": "draft",
    "created": "created",
}
TRACK_KINDS = "jw_track_kinds"  # in a media's extras: track id -> track_kind (captions where none is kept)
MAX_TRACKS = 50  # "Each media can have a maximum of 50 text tracks"
WEBHOOK_ID = "SimHook1"


def _problem(body: dict) -> str | None:
    """Why a create body is refused, as JW would refuse it (400), or None."""
    upload, metadata = body.get("upload"), body.get("metadata", {})
    if not isinstance(upload, dict) or upload.get("method") not in ("fetch", "direct", "multipart", "external"):
        return "upload.method must be one of direct, multipart, fetch, external"
    if upload["method"] == "fetch" and not is_http_url(upload.get("download_url")):
        return "upload.download_url must be an http(s) URL for the fetch method"
    if not isinstance(metadata, dict):
        return "metadata must be an object"
    for name in _METADATA_TEXT:
        if name in metadata and metadata[name] is not None and not isinstance(metadata[name], str):
            return f"metadata.{name} must be a string"
    tags = metadata.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        return "metadata.tags must be a list of strings"
    custom = metadata.get("custom_params", {})
    if not isinstance(custom, dict) or not all(isinstance(v, str) for v in custom.values()):
        return "metadata.custom_params must be an object of strings"  # key-value strings (update_custom_params)
    for name in _DATES:
        value = metadata.get(name)
        if value is not None and (not isinstance(value, str) or epoch(value) is None):
            return f"metadata.{name} must be an ISO 8601 date"
    return None


def _metadata(video: Video) -> dict:
    return video.request.get("metadata", {})


def held(video: Video, now_epoch: float) -> bool:
    """Its publish window keeps it from everyone now: a start ahead, or an end passed."""
    start, end = (epoch(_metadata(video).get(name) or "") for name in _DATES)
    return (start is not None and start > now_epoch) or (end is not None and end <= now_epoch)


class JwPlayer(target.TargetExtras, Profile):
    name = "jwplayer"
    # "60 requests/minute per API token. Calls that exceed this rate will not be executed and will return a 429"
    # (https://docs.jwplayer.com/platform/reference/authentication): every call, a minute's budget, refused to the
    # end of that minute (block 0).
    limits: ClassVar[Mapping[str, float | int]] = {"budget_quota": 60, "budget_window_s": 60.0, "budget_block_s": 0.0}
    faults = FAULTS
    routes = (
        ("/v2/sites/{site}/media", {"POST": "create", "GET": "list"}),
        ("/v2/sites/{site}/media/{id}", {"GET": "get"}),
        ("/v2/sites/{site}/analytics/queries", {"POST": "src_usage"}),  # the Analytics API (analytics.py)
        # One list, two sides: a target's tracks (track_list), or a library's (src_tracks: `source_ops`).
        ("/v2/sites/{site}/media/{id}/text_tracks", {"POST": "track_add", "GET": "track_list"}),
        ("/v2/sites/{site}/media/{id}/text_tracks/{track}", {"GET": "video_track_get", "DELETE": "video_track_delete"}),
        ("/v2/sites/{site}/media/{id}/text_tracks/{track}/publish", {"PUT": "video_track_publish"}),
        ("/v2/webhooks", {"POST": "webhook_create", "GET": "webhook_list"}),
        # The property's thumbnails and manual playlists (jwplayer_target.py); a library's playlists as a source
        # (jwplayer_extras.py) on the same routes.
        ("/v2/sites/{site}/thumbnails", {"POST": "store_thumbnail_create", "GET": "store_thumbnails"}),
        ("/v2/sites/{site}/thumbnails/{thumb}", {"GET": "store_thumbnail", "PATCH": "store_thumbnail_update"}),
        ("/v2/sites/{site}/playlists", {"GET": "store_playlists"}),
        ("/v2/sites/{site}/playlists/manual_playlist", {"POST": "store_playlist_create"}),
        (
            "/v2/sites/{site}/playlists/{playlist}/manual_playlist",
            {"GET": "store_playlist", "PATCH": "store_playlist_update"},
        ),
        # A text track's file, PUT to the link its direct upload answered with (S3's, here on the simulator's host).
        ("/_upload/jwplayer/{id}/{token}", {"PUT": "store_upload"}),
    )
    source_ops: ClassVar[dict[str, str]] = {
        "track_list": "src_tracks",
        "store_playlists": "src_playlists",
        "store_playlist": "src_manual_playlist",
    }

    def made_up_target(self, webhook_scheme: str = "standard") -> MadeUp:
        """A property: its id, a v2 API secret, and its secret with URL signing on; a webhook secret."""
        site, token, signing = secrets.token_hex(4), secrets.token_urlsafe(24), secrets.token_urlsafe(32)
        creds = {"site_id": site, "api_secret": token, "signing_secret": signing, "url_signing": True}
        sim = {"token": token, "account_id": site, "signing_secret": signing}
        return MadeUp(creds, sim, secrets.token_urlsafe(32))

    def authorize(self, cfg: SimConfig, call: Call) -> Reply | None:
        if call.op == "store_upload":
            return None  # a pre-signed upload link is its own authority (its one-time token)
        scheme, _, token = (call.headers.get("Authorization") or "").partition(" ")
        if cfg.token is not None and not (scheme.lower() == "bearer" and same(token.strip(), cfg.token)):
            return error("unauthorized", "Unauthorized: invalid API credentials")
        site = call.params.get("site")
        if site is not None and cfg.account_id is not None and site != cfg.account_id:
            return error("not_found", "No property with this site id")
        return None

    def error(self, kind: str, message: str | None = None, **detail: object) -> Reply:
        return error(kind, message)

    def new_id(self) -> str:
        return alnum_id(8)

    def ref_of(self, body: object) -> str | None:
        metadata = body.get("metadata") if isinstance(body, dict) else None
        custom = metadata.get("custom_params") if isinstance(metadata, dict) else None
        ref = custom.get("migration_ref") if isinstance(custom, dict) else None
        return ref if isinstance(ref, str) else None

    def parse_create(self, body: object, parse_error: str | None, call: Call) -> Draft | Reply:
        if parse_error or not isinstance(body, dict):
            return error("invalid", parse_error or "the body must be a JSON object")
        problem = _problem(body)
        if problem:
            return error("invalid", problem)
        source = body["upload"].get("download_url") if body["upload"]["method"] == "fetch" else None
        return Draft(source=source, ref=self.ref_of(body), request={**body, "_site": call.params.get("site", "")})

    def render(self, video: Video, now: float) -> dict:
        metadata = _metadata(video)
        status = _STATUS.get(video.state, "processing")
        out = {
            "id": video.id,
            "type": "media",
            "created": iso(video.created),
            "last_modified": iso(video.finished or video.created),
            "status": status,
            "error_message": _ERRORED[video.failure == "fetch"] if status == "failed" else None,
            "duration": video.duration if status == "ready" else 0.0,
            "media_type": "video",
            "hosting_type": "hosted",
            "external_id": metadata.get("external_id"),
            "metadata": {
                "title": metadata.get("title", ""),
                "description": metadata.get("description"),
                "tags": list(metadata.get("tags", [])),
                "custom_params": dict(metadata.get("custom_params", {})),
                **{name: metadata.get(name) for name in ("author", "category", "external_id", *_DATES)},
            },
        }
        return out

    def created(self, video: Video, now: float, replay: bool) -> Reply:
        return Reply(200, self.render(video, now))  # jwplatform-py's own mock answers a create 200

    def list_ref(self, call: Call) -> str | None:
        return urllib.parse.parse_qs(call.query).get("q", [None])[0]

    def list(self, store: Store, call: Call, now: float) -> Reply:
        query = parse_query(call.query)
        if isinstance(query, Reply):
            return query
        found = [v for v in store.newest_first() if self._selected(v, query)]
        field = (lambda v: v.created) if query.sort_field == "created" else (lambda v: v.finished or v.created)
        found.sort(key=lambda v: (field(v), v.seq), reverse=query.descending)
        first, last = query.window(len(found))
        return listing([self.render(v, now) for v in found[first:last]], len(found), query)

    def _selected(self, video: Video, query: Query) -> bool:
        metadata = _metadata(video)
        if query.external_id is not None:
            return matches(metadata.get("external_id"), query.external_id)
        if query.field is not None:
            return query.in_range(video.created if query.field == "created" else video.finished or video.created)
        return True

    def get(self, video: Video | None, now: float) -> Reply:
        return error("not_found", "Media not found") if video is None else Reply(200, self.render(video, now))

    # ----- text tracks

    def take_track(self, video: Video | None, call: Call, raw: bytes, cfg: SimConfig) -> TextTrack | Reply:
        if video is None:
            return error("not_found", "Media not found")
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return error("invalid", "the body must be JSON")
        upload = body.get("upload") if isinstance(body, dict) else None
        meta = body.get("metadata") if isinstance(body, dict) else None
        direct = isinstance(upload, dict) and upload.get("method", "direct") == "direct"
        if not isinstance(upload, dict) or not (
            (upload.get("method") == "fetch" and is_http_url(upload.get("download_url")))
            or (direct and upload.get("file_format") in ("vtt", "srt"))
        ):
            return error("invalid", "upload: method fetch with an http(s) download_url, or direct with a file_format")
        if not isinstance(meta, dict) or not isinstance(meta.get("srclang"), str) or not meta["srclang"]:
            return error("invalid", "metadata.srclang must be a language code")
        if meta.get("track_kind", "captions") not in ("captions", "subtitles", "chapters"):
            return error("invalid", "metadata.track_kind must be captions, subtitles or chapters")
        if not isinstance(upload.get("auto_publish", False), bool):
            return error("invalid", "upload.auto_publish must be true or false")
        if len(video.texts) >= MAX_TRACKS:
            return error("invalid", f"a media can have a maximum of {MAX_TRACKS} text tracks")
        label = meta.get("label") if isinstance(meta.get("label"), str) else label_of(meta["srclang"])
        # Read, it is held as a draft unless the create asked JW to publish it (jwplatform-go's auto_publish).
        ready_as = "ready" if upload.get("auto_publish") else "draft"
        tid = alnum_id(8)
        video.extras.setdefault(TRACK_KINDS, {})[tid] = meta.get("track_kind", "captions")
        if direct:  # created: no file until it is PUT to the upload link (jwplayer_target.py)
            video.extras.setdefault("jw_upload_links", {})[tid] = target.upload_link(video, call.base_url, tid)
            return TextTrack(tid, meta["srclang"], label, status="created", ready_as=ready_as)
        return TextTrack(tid, meta["srclang"], label, url=upload["download_url"], status="preparing", ready_as=ready_as)

    def _track(self, video: Video, track: TextTrack) -> dict:
        kind = video.extras.get(TRACK_KINDS, {}).get(track.id, "captions")
        out = {
            "id": track.id,
            "type": "text_track",
            "status": _TRACK_STATUS.get(track.status, "processing"),
            "track_kind": kind,  # jwplatform-go's TextTrackResource
            "metadata": {"label": track.name, "srclang": track.language, "track_kind": kind},
        }
        if track.error:
            out["error_message"] = track.error
        return out

    def track_taken(self, video: Video, track: TextTrack, now: float) -> Reply:
        link = video.extras.get("jw_upload_links", {}).pop(track.id, None)
        return Reply(201, {**self._track(video, track), **({"upload_link": link} if link else {})})

    def list_tracks(self, video: Video | None, call: Call, now: float) -> Reply:
        if video is None:
            return error("not_found", "Media not found")
        paged = paging(urllib.parse.parse_qs(call.query))
        if isinstance(paged, Reply):
            return paged
        page, length = paged
        tracks = [self._track(video, t) for t in video.texts]
        shown = tracks[(page - 1) * length : page * length]
        return Reply(200, {"text_tracks": shown, "page": page, "page_length": length, "total": len(tracks)})

    def video_op(
        self, cfg: SimConfig, op: str, video: Video | None, call: Call, body: object, problem: str | None, now: float
    ) -> Reply:
        """One text track: read, or published (draft -> ready, the publish reference's words)."""
        if video is None:
            return error("not_found", "Media not found")
        track = next((t for t in video.texts if t.id == call.params.get("track")), None)
        if track is None:
            return error("not_found", "Text track not found")
        if op == "video_track_delete":
            video.texts.remove(track)
            return Reply(204, raw=b"")  # no body: a keep-alive connection stays in step
        if op == "video_track_publish" and track.status != "ready":
            if track.status != "draft":
                status = self._track(video, track)["status"]
                return error("conflict", f"a text track that is {status} cannot be published")
            track.status = "ready"
        return Reply(200, self._track(video, track))

    # ----- the account: webhook subscriptions

    def account(self, cfg: SimConfig, call: Call, body: object, parse_error: str | None, held_: dict) -> Account:
        hooks = held_.setdefault("jw_webhooks", [])
        knob = cfg.webhook_url and all(h["metadata"]["webhook_url"] != cfg.webhook_url for h in hooks)
        if knob:  # a subscription set up through the webhook_url knob stands for one made before: listed, kept
            meta = {"name": "migration", "description": None, "webhook_url": cfg.webhook_url,
                    "events": ["conversions_complete", "media_available"],
                    "site_ids": [cfg.account_id] if cfg.account_id else []}  # fmt: skip
            hooks.insert(0, {"id": WEBHOOK_ID, "metadata": meta, "created": iso(time.time())})
        if call.op == "webhook_list":  # jwplatform 2.2.2 WebhookClient.list: `{webhooks, page, page_length, total}`
            page = {"webhooks": hooks, "page": 1, "page_length": max(1, len(hooks)), "total": len(hooks)}
            return Account(Reply(200, page))
        asked = body.get("metadata") if isinstance(body, dict) else None
        if not isinstance(asked, dict) or not is_http_url(asked.get("webhook_url")):
            return Account(error("invalid", "metadata.webhook_url must be an http(s) URL"))
        secret = uuid.uuid4().hex
        hook = {"id": WEBHOOK_ID, "metadata": {k: asked.get(k) for k in ("name", "description", "webhook_url",
                "events", "site_ids")}, "created": iso(time.time())}  # fmt: skip
        hooks.append(hook)
        # "the secret ... used to verify": shown with the subscription, then used to sign every delivery (the
        # simulator delivers to the newest subscription only).
        return Account(
            Reply(201, {**hook, "secret": secret}), {"webhook_url": asked["webhook_url"], "webhook_secret": secret}
        )

    # ----- as a source (a library)

    def source(self, op: str, shelf: Shelf, call: Call, body: object, now: float) -> Reply:
        if op == "list":
            query = parse_query(call.query)
            return query if isinstance(query, Reply) else list_library(shelf, query)
        if op in ("src_playlists", "src_manual_playlist"):
            return extras.playlists_reply(op, shelf, call)
        if op == "src_usage":
            return analytics.jwplayer_query(shelf, body, lambda video: library_id(video.index))
        video = shelf.video(library_index(call.params.get("id", "")))
        if video is None:
            return error("not_found", "Media not found")
        if op == "src_tracks":
            tracks = library_tracks(video) + chapter_tracks(shelf.cfg, video)
            return Reply(200, {"text_tracks": tracks, "page": 1, "page_length": 10, "total": len(tracks)})
        return Reply(200, render_library(video))

    def serve_delivery(
        self, shelf: Shelf, method: str, path: str, query: str, range_header: str | None
    ) -> Served | None:
        rest = path.removeprefix("/_stream/jwplayer/")
        if rest != path and (poster := extras.serve_poster(shelf, method, rest, query)) is not None:
            return poster
        return serve_delivery(shelf, method, path, query, range_header)

    # ----- playback of the media made here

    def open_playback(self, cfg: SimConfig, kept: dict, video: Video, rest: builtins.list[str], query: str):
        """The manifest, its variants, the poster and the player page of a ready media; a property with URL signing
        wants `exp` and `sig` on the manifest (and writes them into it for each variant)."""
        if video.state != READY or held(video, time.time()):
            return 404, media.TEXT, b"no such media, or not published\n"
        if rest == ["media.json"]:
            return self._delivery(cfg, video, query)
        last = rest[-1] if rest else ""
        path = "/".join(["_play", "jwplayer", video.id, *rest])
        if cfg.signing_secret and not signed_file(path, query, cfg.signing_secret):
            return 403, media.TEXT, b"signed URLs are required for this property\n"
        if last == "manifest.m3u8":
            expires = urllib.parse.parse_qs(query).get("exp", [""])[0]

            def variant(height: int) -> str:
                name = f"{height}p.m3u8"
                if not cfg.signing_secret:
                    return name
                sig = file_sig(f"_play/jwplayer/{video.id}/{name}", expires, cfg.signing_secret)
                return f"{name}?exp={expires}&sig={sig}"

            return 200, "application/vnd.apple.mpegurl", media.master_playlist(video, variant).encode()
        if last.endswith("p.m3u8") and last[:-6].isdigit() and int(last[:-6]) in {h for _, h in media.ladder(video)}:
            return 200, "application/vnd.apple.mpegurl", media.media_playlist(video).encode()
        if last == "poster.jpg":  # the promoted custom image once JW has it, else the frame
            kind, image = target.poster_image(kept, video) or ("image/jpeg", media.THUMBNAIL)
            return 200, kind, image
        if len(rest) == 2 and rest[0] == "thumbnails" and (own := target.thumbnail_image(kept, video, last)):
            return 200, *own
        if last == "player":
            return 200, "text/html; charset=utf-8", media.player_page(video).encode()
        if len(rest) == 2 and rest[0] == "tracks":
            track = next((t for t in video.texts if f"{t.id}.{t.format or 'vtt'}" == last), None)
            if track is not None and track.status == "ready" and track.content is not None:  # a draft: to no one
                return 200, "text/vtt" if track.format == "vtt" else media.TEXT, track.content
        return 404, media.TEXT, b"not found\n"

    def _delivery(self, cfg: SimConfig, video: Video, query: str):
        """The Delivery API's `/v2/media/{id}` for a media made here: its manifest and its published text tracks
        (a draft is not delivered); on a signing property only for a JWT `token` of that resource, every file URL
        in it signed with `exp` and `sig` ("the response includes signed video URLs")."""
        token = urllib.parse.parse_qs(query).get("token", [None])[0]
        expires, secret = None, cfg.signing_secret
        if secret:
            claims = token_for(token, secret, f"/v2/media/{video.id}")
            if claims is None:
                return 403, media.TEXT, b"signed URLs are required for this property\n"
            expires = int(claims["exp"])
        home = media.base(video, self.name)

        def url(path: str) -> str:
            plain = f"{home}/{video.id}/{path}"
            if expires is None or secret is None:  # expires is set only where signing is on
                return plain
            return sign_file(plain, f"_play/jwplayer/{video.id}/{path}", secret, expires)

        kinds = video.extras.get(TRACK_KINDS, {})
        tracks = [
            {
                "file": url(f"tracks/{t.id}.{t.format or 'vtt'}"),
                "kind": kinds.get(t.id, "captions"),
                "label": t.name or t.language,
            }
            for t in video.texts
            if t.status == "ready"
        ]
        item = {
            "mediaid": video.id,
            "title": _metadata(video).get("title", ""),
            "image": url("poster.jpg"),  # "Poster image URL": the promoted custom one once JW has it
            "duration": round(video.duration),
            "sources": [{"file": url("manifest.m3u8"), "type": "application/vnd.apple.mpegurl"}],
            "tracks": tracks,
        }
        body = {"title": item["title"], "kind": "Single Item", "playlist": [item]}
        return 200, "application/json", json.dumps(body).encode()

    # ----- rate limits and webhooks

    def rate_headers(self, cfg: SimConfig, state: RateState) -> dict:
        per_minute = round(state.rate * 60)  # "60 requests/minute": the header counts a minute's
        return {"jw-request-limit": str(per_minute), "jw-request-remaining": str(state.remaining)}

    def throttle_hint(self, cfg: SimConfig, wait_s: float, state: RateState) -> tuple[dict, float | None]:
        # "Calls that exceed this rate will not be executed and will return a 429": no time to come back is given.
        return ({"jw-request-remaining": "0"} if cfg.rate_headers else {}), None

    def events(self, video: Video, moment: str, now: float) -> builtins.list[Event]:
        if moment == "created":
            kinds = ["media_created"]
        elif video.state == READY:
            # media_available "is not sent if the publish_start_date is in the future".
            kinds = ["conversions_complete"] + ([] if held(video, time.time()) else ["media_available"])
        else:
            kinds = []  # no event says a media failed
        return [self._event(video, kind) for kind in kinds]

    def _event(self, video: Video, kind: str) -> Event:
        doc = {
            "event": kind,
            "media_id": video.id,
            "webhook_id": WEBHOOK_ID,
            "site_id": video.request.get("_site", ""),
            "event_time": iso(time.time()).replace(".", "+").split("+")[0] + "+00:00",
        }
        return Event(f"{kind}-{video.id}", json.dumps(doc, separators=(",", ":")).encode())

    def signature_headers(self, cfg: SimConfig, event: Event, secret: str | None, timestamp: int) -> dict:
        if not secret:
            return {}
        return {"Authorization": f"Bearer {jwt(json.loads(event.body), secret)}"}


__all__ = ["CEILING", "Item", "JwPlayer"]
