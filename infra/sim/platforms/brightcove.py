"""The "brightcove" profile: Brightcove Video Cloud's CMS API and OAuth API as a source of videos.

Documents (apis.support.brightcove.com unless said): "Getting Access Tokens" (oauth/guides), the Player
Management "OAuth Guide", "CMS API Video Fields Reference", "Using the CMS API: Page Search Results", the CMS
API reference (BrightcoveLearning/api-references-raml `cms-api/v1/src/video.js`, `asset.js`, `folder.js`),
"Managing Text Tracks", "Activate/Deactivate or Schedule Videos", "Adding Geo-Filtering", "CMS API Folder Fields
Reference". Brightcove is no target here: creates are not routed.

- OAuth: `POST /v4/access_token` (oauth.brightcove.com; here on the same port), `Authorization: Basic
  base64(client_id:client_secret)` (the config's token_id / token_secret), `grant_type=client_credentials` in
  the form body (`application/x-www-form-urlencoded`) or the query -> 201 Created `{"access_token",
  "token_type": "Bearer", "expires_in": 300}` (the OAuth API reference, api-references-raml
  `oauth-api/v4/src/access_token.js`): tokens are "only valid for 5 mins" (token_ttl_s). A token is an HMAC of
  its expiry under the client secret, so the simulator keeps no list; an expired or forged one is refused 401
  `UNAUTHORIZED`. A wrong client is refused 400 `{"error": "invalid_client"}`, as access_token.js shows it;
- CMS (cms.api.brightcove.com): `GET /v1/accounts/{a}/videos` (`limit` 1..100, default 20, "A maximum of 100
  records will be returned from a single request"; `offset`; `sort` one of the documented fields, `-` for
  descending, default `-updated_at`; `q` the date-range search `updated_at:<time>..` or `created_at:<time>..`,
  other queries answered 422 here, our choice), `GET .../counts/videos[?q=]` -> `{"count"}`,
  `GET .../videos/{id}`, `GET .../videos/{id}/sources`, `GET .../folders`; an account other than account_id
  refused 401 (our choice);
- a video: the fields reference's `id`, `name`, `description`, `long_description`, `tags`, `created_at`,
  `updated_at`, `published_at` (ISO 8601, as the API's examples write them), `duration` (milliseconds),
  `state`, `schedule`, `geo`, `complete`, `folder_id`, `delivery_type`, `reference_id`, `text_tracks`;
- faults in turn (library_unfetchable_every): "processing" (`complete: false`, no renditions yet: "As soon as
  one rendition exists for the video, the complete property will be automatically set to true"; ready with
  library_processing_done), "no_mp4" (a Dynamic Delivery account making only HLS and DASH renditions: "most
  asset endpoints for Dynamic Delivery will return no results", the sources list then holds no MP4);
- private videos (library_private_every, and those made private since) in turn: `state` INACTIVE; ACTIVE
  scheduled to start in the future; ACTIVE within a schedule window that ends ("Deactivate it", "Schedule it
  to be playable at some time in the future"); ACTIVE geo-restricted to an include list; ACTIVE geo-restricted
  by an exclude list ("Adding Geo-Filtering": `geo {restricted, exclude_countries, countries}`; the reference's
  video.js: `geo` null on a video without it, `restricted` and `exclude_countries` false by default);
- sources: HLS and DASH manifests, and MP4 renditions 640x360, 1280x720 and 1920x1080 (`src`, `container`
  MP4, `codec`, `width`, `height`, `size`, `encoding_rate`, `duration`) on /_media;
- text tracks (captioned videos): the library's captions `status` published, plus a German `draft` one;
  `src` on /_media. Brightcove keeps no processing status for a track: library_captions_processing has
  nothing to show;
- folders: the library's three, a `/` made a space ("illegal characters: /" in folder names);
- what a viewer sees first (issue 42), each documented in brightcove_library.py: the videos' images (and a real
  PNG at each link, `serve_delivery`), chapters tracks (`library_chapters_every`), `published_at`, and the account's
  playlists (`GET .../playlists`, `GET .../playlists/{id}/videos`) in their order;
- rate limits: 429 `TOO_MANY_REQUESTS` ("too many simultaneous requests or too many requests per second",
  asset.js), with no Retry-After (none documented); the profile's `limits` give 10 reads a second (secondary: under
  10 a second per account). Errors are a JSON array `[{"error_code", "message"}]` (asset.js).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import time
import urllib.parse
import zlib
from collections.abc import Mapping
from typing import ClassVar

from ..bucket import RateState
from ..config import SimConfig
from ..library import CHANGED_AFTER_S, EPOCH, FOLDERS, STEP_S, Item, Served, Shelf
from ..profile import Call, MadeUp, ParamError, Profile, Reply, basic_matches, int_param, iso_z, same
from . import analytics
from . import brightcove_library as extras
from .brightcove_library import ID_BASE

FAULTS = ("processing", "no_mp4")
SORTS = (
    "name",
    "reference_id",
    "created_at",
    "published_at",
    "updated_at",
    "schedule_starts_at",
    "schedule_ends_at",
    "state",
    "plays_total",
    "plays_trailing_week",
)
FAR_FUTURE = 4_070_908_800.0  # 2099-01-01
# (error_code, status), as asset.js names them.
_ERRORS = {
    "unauthorized": ("UNAUTHORIZED", 401),
    "forbidden": ("UNAUTHORIZED", 401),
    "not_found": ("RESOURCE_NOT_FOUND", 404),
    "no_route": ("RESOURCE_NOT_FOUND", 404),
    "method": ("METHOD_NOT_ALLOWED", 405),
    "invalid": ("VALIDATION_ERROR", 422),
    "throttled": ("TOO_MANY_REQUESTS", 429),
    "failed": ("UNKNOWN", 500),
    "unavailable": ("UNKNOWN", 503),
}
RENDITIONS = ((640, 360, 4), (1280, 720, 2), (1920, 1080, 1))  # width, height, size divisor
# Geo-filtering ("Adding Geo-Filtering", apis.support.brightcove.com/cms/managing-videos/
# using-cms-api-add-geo-filtering.html): `geo.countries` lower-case ISO 3166 codes, `exclude_countries` true for
# "viewing is not allowed in countries included in the geo.countries list", false for "viewing is only allowed in
# those countries". The private videos' fourth and fifth turns: (exclude_countries, countries).
GEO_TURNS = ((False, ("ph", "in", "my")), (True, ("us", "ca")))


def video_id(video: Item) -> str:
    return str(ID_BASE + video.index)


def _accounts(query: str) -> str | None:
    return urllib.parse.parse_qs(query).get("accounts", [None])[0]


def index_of(vid: str) -> int:
    return int(vid) - ID_BASE if vid.isdigit() else -1


def folder_id(name: str) -> str:
    return f"{zlib.crc32(name.encode()):024x}"[-24:]


def token_for(cfg: SimConfig, expires: int) -> str:
    sig = hmac.new((cfg.token_secret or "").encode(), f"bc|{expires}".encode(), hashlib.sha256).hexdigest()
    return f"bc.{expires}.{sig}"


def token_ok(cfg: SimConfig, token: str) -> bool:
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != "bc" or not parts[1].isdigit():
        return False
    return same(token, token_for(cfg, int(parts[1]))) and int(parts[1]) > time.time()


def _bound(query: dict) -> tuple[str, float | None]:
    """The `q` date range's field and lower bound; ParamError for any other search."""
    q = query.get("q", [""])[0].strip()
    if not q:
        return "updated_at", None
    name, _, rest = q.partition(":")
    start, dots, end = rest.partition("..")
    if name not in ("updated_at", "created_at") or not dots or end:
        raise ParamError("q", "only updated_at:<time>.. and created_at:<time>.. searches are simulated")
    try:
        from datetime import datetime

        return name, datetime.fromisoformat(start.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise ParamError("q", f"{start!r} is not a date") from None


def first_index(name: str, bound: float | None) -> int:
    """The first library index whose `name` time is at or after `bound` (times grow with the index)."""
    if bound is None:
        return 0
    offset = CHANGED_AFTER_S if name == "updated_at" else 0.0
    return max(0, math.ceil((bound - EPOCH - offset) / STEP_S - 1e-9))


class Brightcove(Profile):
    name = "brightcove"
    # The CMS API: 429 TOO_MANY_REQUESTS for "too many simultaneous requests or too many requests per second"
    # (api-references-raml asset.js); about 20 at once and under 10 a second per account (secondary:
    # api-evangelist brightcove-rate-limits). 10 reads a second, the burst of 20 our choice; concurrency is not
    # modelled.
    limits: ClassVar[Mapping[str, float | int]] = {"read_rate": 10.0, "read_burst": 20}
    faults = FAULTS
    routes = (
        ("/v4/access_token", {"POST": "src_token"}),
        ("/v1/data", {"GET": "src_usage"}),  # the Analytics API, analytics.api.brightcove.com (analytics.py)
        ("/v1/accounts/{account}/videos", {"GET": "list"}),
        ("/v1/accounts/{account}/counts/videos", {"GET": "src_count"}),
        ("/v1/accounts/{account}/videos/{id}", {"GET": "get"}),
        ("/v1/accounts/{account}/videos/{id}/sources", {"GET": "src_sources"}),
        ("/v1/accounts/{account}/folders", {"GET": "src_folders"}),
        # The account's playlists and a playlist's videos (brightcove_library.py).
        ("/v1/accounts/{account}/playlists", {"GET": "src_playlists"}),
        ("/v1/accounts/{account}/playlists/{playlist}/videos", {"GET": "src_playlist_videos"}),
    )

    def made_up_source(self) -> MadeUp:
        """API client credentials and the Video Cloud account they serve."""
        client_id, client_secret = secrets.token_hex(8), secrets.token_urlsafe(24)
        creds = {"account_id": "6300000000001", "client_id": client_id, "client_secret": client_secret}
        return MadeUp(creds, {"account_id": creds["account_id"], "token_id": client_id, "token_secret": client_secret})

    def authorize(self, cfg: SimConfig, call: Call) -> Reply | None:
        if cfg.token_id is None:
            return None
        if call.op == "src_token":
            if basic_matches(call.headers.get("Authorization"), cfg.token_id, cfg.token_secret or ""):
                return None
            # access_token.js: "invalid_client 400: credential is not valid", its example "HTTP/1.1 400".
            return Reply(400, {"error": "invalid_client", "error_description": "The client credentials are invalid"})
        scheme, _, token = (call.headers.get("Authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not token_ok(cfg, token.strip()):
            return self.error("unauthorized", "Permission denied.")
        # The Analytics API names the account in its `accounts` query parameter, the CMS API in its path.
        account = _accounts(call.query) if call.op == "src_usage" else call.params.get("account")
        if cfg.account_id is not None and account != cfg.account_id:
            return self.error("unauthorized", "The access token does not grant this account.")
        return None

    def error(self, kind: str, message: str | None = None, **detail: object) -> Reply:
        code, status = _ERRORS.get(kind, ("UNKNOWN", 500))
        return Reply(status, [{"error_code": code, "message": message or code.replace("_", " ").lower()}])

    def new_id(self) -> str:  # pragma: no cover - Brightcove is no target
        raise NotImplementedError

    # ----- the library

    def source(self, op: str, shelf: Shelf, call: Call, body: object, now: float) -> Reply:
        if op == "src_token":
            return self._token(shelf.cfg, call, body)
        if op == "list":
            return self._list(shelf, call)
        if op == "src_usage":
            return analytics.brightcove_data(shelf, call.query, shelf.cfg.account_id or "", video_id)
        if op == "src_count":
            return self._count(shelf, call)
        if op == "src_folders":
            return Reply(200, self._folders(shelf))
        if op in ("src_playlists", "src_playlist_videos"):
            return self._playlists(op, shelf, call)
        video = shelf.video(index_of(call.params.get("id", "")))
        if video is None:
            return self.error("not_found", "The resource you requested does not exist.")
        if op == "get":
            return Reply(200, self.render_library(shelf, video))
        return Reply(200, self._sources(shelf, video))

    def _token(self, cfg: SimConfig, call: Call, body: object) -> Reply:
        # "Getting Access Tokens": "send the following key/value pair as the request body or as URL parameter:
        # grant_type=client_credentials" (the body a form, "Content-Type: application/x-www-form-urlencoded");
        # the reference (api-references-raml oauth-api/v4/src/access_token.js) shows the URL form and answers
        # "HTTP/1.1 201 Created" with access_token, expires_in 300 and token_type "Bearer".
        form = body if isinstance(body, dict) else {}
        grant = form.get("grant_type") or urllib.parse.parse_qs(call.query).get("grant_type", [None])[0]
        if grant != "client_credentials":
            return Reply(400, {"error": "unsupported_grant_type", "error_description": "grant_type is required"})
        ttl = max(1, math.ceil(cfg.token_ttl_s))
        token = token_for(cfg, int(time.time()) + ttl)
        return Reply(201, {"access_token": token, "token_type": "Bearer", "expires_in": ttl})

    def _privacy(self, cfg: SimConfig, video: Item) -> tuple[str, dict | None, dict | None]:
        """(state, schedule, geo) of a video: private ones in turn INACTIVE, scheduled later, within a closing
        window, geo-restricted to an include list, geo-restricted by an exclude list (GEO_TURNS)."""
        if not video.private:
            return "ACTIVE", None, None
        turn = (video.index // max(1, cfg.library_private_every)) % (3 + len(GEO_TURNS))
        if turn == 0:
            return "INACTIVE", None, None
        if turn == 1:
            return "ACTIVE", {"starts_at": iso_z(FAR_FUTURE), "ends_at": None}, None
        if turn == 2:
            return "ACTIVE", {"starts_at": iso_z(video.created), "ends_at": iso_z(FAR_FUTURE)}, None
        exclude, countries = GEO_TURNS[turn - 3]
        return "ACTIVE", None, {"restricted": True, "exclude_countries": exclude, "countries": list(countries)}

    def render_library(self, shelf: Shelf, video: Item) -> dict:
        vid = video_id(video)
        state, schedule, geo = self._privacy(shelf.cfg, video)
        account = shelf.cfg.account_id or "1"
        return {
            "id": vid,
            "account_id": account,
            "name": video.title,
            "description": video.description[:248],  # "maximum length: 248 single-byte characters"
            "long_description": video.description,
            "reference_id": f"library-{video.index}",
            "tags": list(video.tags),
            "created_at": iso_z(video.created),
            "updated_at": iso_z(video.modified),
            "published_at": iso_z(extras.published(video)),
            "duration": round(video.duration * 1000),
            "state": state,
            "schedule": schedule,
            "geo": geo,  # null where the video has no geo-filtering, as the reference's examples show it
            "complete": video.fault != "processing",
            "delivery_type": "dynamic_origin",
            "folder_id": folder_id(video.folder),
            "economics": "AD_SUPPORTED",
            "custom_fields": {},
            "text_tracks": self._text_tracks(shelf, video) + extras.chapters_track(shelf, video),
            "images": extras.images(shelf, video),
        }

    def _text_tracks(self, shelf: Shelf, video: Item) -> list[dict]:
        found = []
        drafts = (("de", "captions", "Deutsch (Entwurf)"),) if video.captions else ()
        for n, (language, kind, label) in enumerate(video.captions + drafts):
            src = shelf.url(video, f"text-{language}.vtt")
            found.append(
                {
                    "id": f"{video.index:08d}-{n:04d}-{language}",
                    "account_id": shelf.cfg.account_id or "1",
                    "src": src,
                    "srclang": language,
                    "label": label,
                    "kind": kind,
                    "mime_type": "text/vtt",
                    "status": "draft" if n >= len(video.captions) else "published",
                    "default": n == 0,
                    "sources": [{"src": src}],
                }
            )
        return found

    def _sources(self, shelf: Shelf, video: Item) -> list[dict]:
        if video.fault == "processing":
            return []
        found: list[dict[str, object]] = [
            {"src": shelf.url(video, "master.m3u8"), "type": "application/x-mpegURL", "ext_x_version": "4"},
            {"src": shelf.url(video, "manifest.mpd"), "type": "application/dash+xml"},
        ]
        if video.fault == "no_mp4":
            return found
        for width, height, divisor in RENDITIONS:
            found.append(
                {
                    "src": shelf.url(video, f"{width}x{height}.mp4"),
                    "container": "MP4",
                    "codec": "H264",
                    "width": width,
                    "height": height,
                    "size": video.size // divisor,
                    "encoding_rate": width * 1500,
                    "duration": round(video.duration * 1000),
                }
            )
        return found

    def _folders(self, shelf: Shelf) -> list[dict]:
        return [
            {
                "id": folder_id(name),
                "account_id": shelf.cfg.account_id or "1",
                "name": name.replace("/", " "),
                "video_count": 0,
                "created_at": iso_z(EPOCH),
                "updated_at": iso_z(EPOCH),
            }
            for name in FOLDERS
        ]

    def _playlists(self, op: str, shelf: Shelf, call: Call) -> Reply:
        """A page of the account's playlists, or one playlist's videos in its order (brightcove_library.py)."""
        account = shelf.cfg.account_id or "1"
        if op == "src_playlist_videos":
            playlist = extras.playlist_of(call.params.get("playlist", ""))
            if playlist is None:
                return self.error("not_found", "The resource you requested does not exist.")
            return Reply(200, [self.render_library(shelf, v) for v in playlist.videos(shelf)])
        query = urllib.parse.parse_qs(call.query, keep_blank_values=True)
        try:
            limit = int_param(query, "limit", 20, 1, 100)
            offset = int_param(query, "offset", 0, 0, None)
        except ParamError as exc:
            return self.error("invalid", str(exc))
        found = extras.listed_playlists(query)
        if isinstance(found, str):  # playlist.js: "INVALID_SORT 400", "INVALID_SEARCH 400"
            code = "INVALID_SORT" if found.startswith("sort") else "INVALID_SEARCH"
            return Reply(400, [{"error_code": code, "message": found}])
        return Reply(200, [extras.render_playlist(p, shelf, account) for p in found[offset : offset + limit]])

    def serve_delivery(
        self, shelf: Shelf, method: str, path: str, query: str, range_header: str | None
    ) -> Served | None:
        """The videos' images and chapters files at the delivery host (brightcove_library.serve)."""
        return extras.serve(shelf, method, path, query)

    def _window(self, shelf: Shelf, call: Call) -> tuple[dict, int, int]:
        query = urllib.parse.parse_qs(call.query, keep_blank_values=True)
        name, bound = _bound(query)
        first = first_index(name, bound)
        below = sum(1 for d in shelf.state.deleted if d < first)
        return query, first, max(0, first - below)

    def _list(self, shelf: Shelf, call: Call) -> Reply:
        try:
            query, first, position = self._window(shelf, call)
            limit = int_param(query, "limit", 20, 1, 100)
            offset = int_param(query, "offset", 0, 0, None)
        except ParamError as exc:
            return self.error("invalid", str(exc))
        sort = query.get("sort", ["-updated_at"])[0]
        if sort.lstrip("-") not in SORTS:
            return self.error("invalid", f"sort must be one of {', '.join(SORTS)}, with - for descending")
        # Times grow with the index: created_at and updated_at order alike, and other sorts fall back to them.
        if sort.startswith("-"):
            videos, _ = shelf.videos(offset, limit, newest_first=True)
            videos = [v for v in videos if v.index >= first]
        else:
            videos, _ = shelf.videos(position + offset, limit)
        return Reply(200, [self.render_library(shelf, v) for v in videos])

    def _count(self, shelf: Shelf, call: Call) -> Reply:
        try:
            _, first, _ = self._window(shelf, call)
        except ParamError as exc:
            return self.error("invalid", str(exc))
        deleted = sum(1 for d in shelf.state.deleted if first <= d < shelf.size)
        return Reply(200, {"count": max(0, shelf.size - first - deleted)})

    # ----- rate limits

    def rate_headers(self, cfg: SimConfig, state: RateState) -> dict:
        return {}  # Brightcove documents none

    def throttle_hint(self, cfg: SimConfig, wait_s: float, state: RateState) -> tuple[dict, float | None]:
        return {}, None  # a 429 says nothing of when to come back (asset.js)
