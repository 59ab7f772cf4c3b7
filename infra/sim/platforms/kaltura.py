"""The "kaltura" profile: a Kaltura partner's library as Kaltura's API v3 serves it (a source only).

Calls are `POST /api_v3/service/{service}/action/{action}` with the parameters in a JSON body (or the query), as
KalturaApiClient 23.10.0 (the official Python client) sends them; the answer is XML unless `format` is 1 (JSON),
as kaltura/server's KalturaFrontController chooses ("or default to XML"; KalturaXmlSerializer writes true as 1 and
false as 0), and an API error is an answer like any other, HTTP 200, `{code, message, objectType:
KalturaAPIException, args}` (KalturaSerializer, KalturaXmlSerializer: `<xml><result><error>...</error></result>`).
Modelled, each where its document says:

- sessions: `session.start(secret, userId, type, partnerId, expiry)` with the admin secret (`token` here);
  `session.startWidgetSession("_<partner>")`, then `appToken.startSession(id, tokenHash)` where tokenHash is
  HASH(widget KS + token) in the app token's hashType, SHA1 (the default) here (`token_id`/`token_secret`;
  "Generating Kaltura Sessions with Application Tokens"; AppTokenService::startSessionAction: the KS lives the token's
  sessionDuration at most, `session_ttl_s` here, 0: what was asked). A KS past its expiry is refused on every call
  with INVALID_KS, `Error "-5,EXPIRED"` (kSessionBase::EXPIRED, KalturaErrors::INVALID_KS);
- media.list: the filter fields kaltura_entries.SUPPORTED, others ignored as Kaltura ignores them; READY only and
  moderation-approved only unless a status filter says otherwise; pages of at most 500 (a larger pageSize cut to
  it) and never a match past the 10,000th (kaltura_entries.MAX_MATCHES); media.get by entryId;
- flavorAsset.list, flavorAsset.getUrl (FLAVOR_ASSET_IS_NOT_READY unless READY; where the entry's access control
  profile has a rule, it is pending moderation, or it is outside its scheduling window or closes it within the
  day, the URL carries a KS of that entry's download privileges, `/ks/<ks>`, living a day: asset.php
  getDownloadUrlWithExpiry), served at the delivery host (/_stream/kaltura/...) only with that KS where the
  profile's rule, the moderation or the window asks for one (KSecureEntryHelper::validateForDownload: the
  download privilege lets it past moderation and scheduling; without it, NOT_SCHEDULED_NOW and the others, 403
  here). The partner's FEATURE_ENTITLEMENT permission, with which every such URL carries a KS, is not modelled;
- entries' categories: `categoriesIds` leaves out those with a privacy context (MediaSpace's), which
  categoryEntry.list names (kaltura_entries.links): by `entryIdIn` / `entryIdEqual` and `categoryIdIn` /
  `categoryIdEqual`, `statusEqual` / `statusIn`, paged like any list; without an entry or category filter
  MUST_FILTER_ON_ENTRY_OR_CATEGORY (KalturaCategoryEntryFilter::getListResponse, as where entitlement is enforced
  or the session is not an admin's);
- entries' scheduling windows (`startDate` / `endDate`, kaltura_entries.schedule): media.list lists an entry
  outside its window to an admin session as any other; only playback and download refuse it (above);
- caption_captionasset.list and serveWebVTT (without segmentIndex: the HLS playlist of segments; with -1: the
  whole file as WebVTT, CaptionAssetService::serveWebVTTAction, kWebVTTGenerator); category.list by idIn;
  accessControlProfile.list;
- what a viewer sees first (issue 42), each documented in kaltura_extras.py: thumbAsset.list and getUrl, the image
  at each thumb's URL and at the entry's `thumbnailUrl`, and chapters as thumb cue points (cuepoint_cuepoint.list).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import secrets
import time
import urllib.parse
from collections.abc import Mapping
from typing import ClassVar
from xml.sax.saxutils import escape

from ..bucket import RateState
from ..config import SimConfig
from ..library import VTT, Item, Served, Shelf, serve_media
from ..profile import Call, MadeUp, Profile, Reply
from . import kaltura_entries as lib
from . import kaltura_extras as extras

KS_DEFAULT_S = 86_400  # session.start's default expiry
URL_KS_S = 86_400  # the KS in a download URL: getDownloadUrlWithExpiry(86400)
ADMIN = 2


def _num(value: object, default: int | None = None) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default


# ----- the wire -----------------------------------------------------------------------------------------------


def kerror(code: str, message: str, **args: object) -> dict:
    return {"code": code, "message": message, "objectType": "KalturaAPIException", "args": dict(args)}


def _xml(value: object) -> str:
    """KalturaXmlSerializer: an object's fields as tags (objectType first, nulls left out), a list as <item>s,
    true as 1 and false as 0 (serializeByType: `case 'boolean': $object = ($object) ? 1 : 0;`)."""
    if isinstance(value, dict):
        if value.get("objectType") == "KalturaAPIException":
            args = "".join(
                f"<item><objectType>KalturaAPIExceptionArg</objectType><name>{escape(str(k))}</name>"
                f"<value>{escape(str(v))}</value></item>"
                for k, v in mapping(value.get("args")).items()
            )
            return (
                f"<error><code>{escape(value['code'])}</code><message>{escape(value['message'])}</message>"
                f"<objectType>KalturaAPIException</objectType><args>{args}</args></error>"
            )
        return "".join(f"<{k}>{_xml(v)}</{k}>" for k, v in value.items() if v is not None)
    if isinstance(value, list):
        return "".join(f"<item>{_xml(v)}</item>" for v in value)
    if isinstance(value, bool):
        return "1" if value else "0"
    return escape(str(value))


def mapping(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def answer(result: object, fmt: int) -> Reply:
    if fmt == 1:
        return Reply(200, result)
    body = f'<?xml version="1.0" encoding="utf-8"?><xml><result>{_xml(result)}</result>'
    body += "<executionTime>0.001</executionTime></xml>"
    return Reply(200, raw=body.encode(), headers={"Content-Type": "text/xml"})


# ----- sessions ---------------------------------------------------------------------------------------------------


def make_ks(shelf: Shelf, kind: int, expiry: float, privileges: str) -> str:
    doc = json.dumps({"p": lib.PARTNER_ID, "t": kind, "e": int(expiry), "v": privileges}, separators=(",", ":"))
    sig = hmac.new(shelf.state.secret, doc.encode(), hashlib.sha256).hexdigest()[:32]
    return base64.urlsafe_b64encode(f"{sig}|{doc}".encode()).decode()


def read_ks(shelf: Shelf, ks: object) -> tuple[dict | None, str]:
    """The KS's fields, or None with kSessionBase's error ("-1,INVALID_STR", "-5,EXPIRED")."""
    try:
        sig, _, doc = base64.urlsafe_b64decode(str(ks).encode()).decode().partition("|")
        expected = hmac.new(shelf.state.secret, doc.encode(), hashlib.sha256).hexdigest()[:32]
        fields = json.loads(doc) if hmac.compare_digest(sig, expected) else None
    except (ValueError, UnicodeDecodeError):
        fields = None
    if not isinstance(fields, dict):
        return None, "-1,INVALID_STR"
    if fields["e"] < time.time():
        return None, "-5,EXPIRED"
    return fields, ""


def invalid_ks(ks: object, error: str) -> dict:
    code, _, desc = error.partition(",")
    shown = str(ks)[:200]
    return kerror("INVALID_KS", f'Invalid KS "{shown}", Error "{error}"', KSID=shown, ERR_CODE=code, ERR_DESC=desc)


def _lifetime(cfg: SimConfig, asked: object) -> float:
    """What a KS asked to live `asked` seconds gets: the app token's sessionDuration at most (session_ttl_s)."""
    wanted = _num(asked, KS_DEFAULT_S) or KS_DEFAULT_S
    return min(wanted, cfg.session_ttl_s) if cfg.session_ttl_s > 0 else wanted


def needs_ks(shelf: Shelf, video: Item, margin_s: float = 0.0) -> bool:
    """Whether the entry's download asks for a KS: its access control profile has a rule, it is pending
    moderation, or it is not within its scheduling window (for `margin_s` more: getDownloadUrlWithExpiry asks the
    window to stay open the day the URL lives)."""
    kind = lib.private_kind(shelf, video)
    return kind in ("restricted", "moderation") or not lib.scheduled_now(shelf, video, margin_s)


class Kaltura(Profile):
    name = "kaltura"
    # Kaltura publishes no number (NEW_PLATFORMS.md: "Rate limit: No public numbers"): 10 reads a second in bursts
    # of 20 is our choice, so the benchmarks and tests have a limit to meet.
    limits: ClassVar[Mapping[str, float | int]] = {"read_rate": 10.0, "read_burst": 20}
    faults = lib.FAULTS
    routes = (("/api_v3/service/{service}/action/{action}", {"GET": "src_api", "POST": "src_api"}),)

    def made_up_source(self) -> MadeUp:
        """An app token (its id and token), never the admin secret, of the simulator's partner."""
        token_id, token = "0_" + secrets.token_hex(4), secrets.token_hex(16)
        creds = {"partner_id": 2_012_345, "app_token_id": token_id, "app_token": token}
        return MadeUp(creds, {"token_id": token_id, "token_secret": token})

    def authorize(self, cfg: SimConfig, call: Call) -> Reply | None:
        return None  # the KS travels in the parameters: each action checks it (`source`)

    def error(self, kind: str, message: str | None = None, **detail: object) -> Reply:
        codes = {"no_route": "SERVICE_DOES_NOT_EXISTS", "throttled": "TOO_MANY_REQUESTS", "not_found": "NOT_FOUND"}
        status = 429 if kind in ("throttled", "busy") else (503 if kind == "unavailable" else 200)
        if kind in ("failed", "unavailable"):
            status = 500 if kind == "failed" else 503
        return Reply(status, kerror(codes.get(kind, kind.upper()), message or kind))

    # ----- one call

    def source(self, op: str, shelf: Shelf, call: Call, body: object, now: float) -> Reply:
        params = {k: v[-1] for k, v in urllib.parse.parse_qs(call.query).items()}
        params.update(mapping(body))
        fmt = _num(params.get("format"), 2) or 2
        service, action = call.params["service"].lower(), call.params["action"].lower()
        reply = self._call(shelf, call, params, service, action, fmt)
        # The request log says which call each was, and the code of an API exception it answered (tests read it).
        refused = mapping(reply.body).get("code") if isinstance(reply.body, dict) else None
        if reply.raw is not None and b"<error>" in reply.raw:
            refused = reply.raw.split(b"<code>", 1)[1].split(b"</code>", 1)[0].decode()
        reply.log = {"call": f"{service}.{action}", **({"refused": refused} if refused else {})}
        return reply

    def _call(self, shelf: Shelf, call: Call, params: dict, service: str, action: str, fmt: int) -> Reply:
        if service == "session" and action == "start":
            return answer(self._start(shelf, params), fmt)
        if service == "session" and action == "startwidgetsession":
            return answer(self._widget(shelf, params), fmt)
        fields, error = read_ks(shelf, params.get("ks"))
        if fields is None:
            return answer(invalid_ks(params.get("ks"), error), fmt)
        if service == "apptoken" and action == "startsession":
            return answer(self._app_token(shelf, params, params["ks"]), fmt)
        if fields["t"] != ADMIN:
            return answer(kerror("SERVICE_FORBIDDEN", f"The access to service [{service}->{action}] is forbidden"), fmt)
        if (service, action) == ("caption_captionasset", "servewebvtt"):
            return self._webvtt(shelf, params, fmt)
        handler = {
            ("media", "list"): self._media_list,
            ("media", "get"): self._media_get,
            ("flavorasset", "list"): self._flavor_list,
            ("flavorasset", "geturl"): self._flavor_url,
            ("caption_captionasset", "list"): self._caption_list,
            ("category", "list"): self._category_list,
            ("categoryentry", "list"): self._category_entry_list,
            ("accesscontrolprofile", "list"): self._access_list,
            ("thumbasset", "list"): self._thumb_list,
            ("thumbasset", "geturl"): self._thumb_url,
            ("cuepoint_cuepoint", "list"): self._cue_point_list,
        }.get((service, action))
        if handler is None:
            return answer(kerror("SERVICE_DOES_NOT_EXISTS", f"Service [{service}] does not exist"), fmt)
        return answer(handler(shelf, call, params), fmt)

    def _start(self, shelf: Shelf, params: Mapping) -> object:
        cfg = shelf.cfg
        partner = _num(params.get("partnerId"))
        if (
            cfg.token is None
            or partner != lib.PARTNER_ID
            or not hmac.compare_digest(str(params.get("secret", "")).encode(), cfg.token.encode())
        ):
            return kerror("START_SESSION_ERROR", f"Error while starting session for partner [{partner}]")
        kind = _num(params.get("type"), 0)
        return make_ks(shelf, kind or 0, time.time() + _lifetime(cfg, params.get("expiry")), "")

    def _widget(self, shelf: Shelf, params: Mapping) -> object:
        if params.get("widgetId") != f"_{lib.PARTNER_ID}":
            return kerror("INVALID_WIDGET_ID", f"Invalid widget id [{params.get('widgetId')}]")
        ks = make_ks(shelf, 0, time.time() + KS_DEFAULT_S, "view:*,widget:1")
        return {"objectType": "KalturaStartWidgetSessionResponse", "partnerId": lib.PARTNER_ID, "ks": ks, "userId": 0}

    def _app_token(self, shelf: Shelf, params: Mapping, widget_ks: str) -> object:
        cfg = shelf.cfg
        if cfg.token_id is None or cfg.token_secret is None or params.get("id") != cfg.token_id:
            return kerror("APP_TOKEN_ID_NOT_FOUND", f"Application token id [{params.get('id')}] not found")
        expected = hashlib.sha1((widget_ks + cfg.token_secret).encode()).hexdigest()  # hashType SHA1, the default
        if not hmac.compare_digest(str(params.get("tokenHash", "")).encode(), expected.encode()):
            return kerror("INVALID_APP_TOKEN_HASH", "Invalid application token hash")
        expiry = int(time.time() + _lifetime(cfg, params.get("expiry")))
        ks = make_ks(shelf, ADMIN, expiry, f"sessionid:{cfg.token_id},apptoken:{cfg.token_id}")
        return {
            "objectType": "KalturaSessionInfo",
            "ks": ks,
            "sessionType": ADMIN,
            "partnerId": lib.PARTNER_ID,
            "userId": "",
            "expiry": expiry,
            "privileges": f"sessionid:{cfg.token_id},apptoken:{cfg.token_id}",
        }

    # ----- lists

    @staticmethod
    def _pager(params: Mapping) -> tuple[int, int]:
        pager = mapping(params.get("pager"))
        size = _num(pager.get("pageSize"), lib.DEFAULT_PAGE_SIZE)
        size = max(0, min(lib.MAX_PAGE_SIZE, lib.DEFAULT_PAGE_SIZE if size is None else size))
        return size, max(1, _num(pager.get("pageIndex"), 1) or 1)

    @staticmethod
    def _listing(kind: str, objects: list, total: int) -> dict:
        return {"objectType": kind, "objects": objects, "totalCount": total}

    def _media_list(self, shelf: Shelf, call: Call, params: Mapping) -> object:
        flt = mapping(params.get("filter"))
        size, index = self._pager(params)
        descending = str(flt.get("orderBy") or "-createdAt").startswith("-")
        offset = (index - 1) * size
        matched, order = lib.listed(shelf, flt, descending)
        found, total = [], 0
        for n, item in enumerate(matched):
            total = n + 1
            if n >= min(offset + size, lib.MAX_MATCHES):
                # The page is full (or past the ceiling: no match after the 10,000th is answered). What the window
                # holds beyond here is counted, not filtered: totalCount is an estimate then (ours).
                total = n + len(order) - item["_position"]
                break
            if n >= offset:
                found.append(item)
        for item in found:
            item.pop("_position", None)
            item["thumbnailUrl"] = call.base_url + extras.entry_thumbnail_path(lib.index_of(item["id"]))
        return self._listing("KalturaMediaListResponse", found, total)

    def _media_get(self, shelf: Shelf, call: Call, params: Mapping) -> object:
        video = shelf.video(lib.index_of(params.get("entryId")))
        if video is None:
            return kerror("ENTRY_ID_NOT_FOUND", f'Entry id "{params.get("entryId")}" not found')
        return {**lib.entry(shelf, video), "thumbnailUrl": call.base_url + extras.entry_thumbnail_path(video.index)}

    def _videos_of(self, shelf: Shelf, flt: Mapping) -> list[Item]:
        ids = lib._strs(flt.get("entryIdIn") or flt.get("entryIdEqual") or "")
        videos = [shelf.video(lib.index_of(i)) for i in sorted(ids)]
        return [v for v in videos if v is not None]

    def _assets(self, shelf: Shelf, params: Mapping, render, kind: str) -> object:
        size, index = self._pager(params)
        objects = [a for v in self._videos_of(shelf, mapping(params.get("filter"))) for a in render(shelf, v)]
        return self._listing(kind, objects[(index - 1) * size : index * size], len(objects))

    def _flavor_list(self, shelf: Shelf, call: Call, params: Mapping) -> object:
        return self._assets(shelf, params, lib.flavors, "KalturaFlavorAssetListResponse")

    def _caption_list(self, shelf: Shelf, call: Call, params: Mapping) -> object:
        return self._assets(shelf, params, lib.captions, "KalturaCaptionAssetListResponse")

    def _category_list(self, shelf: Shelf, call: Call, params: Mapping) -> object:
        ids = lib._ints(mapping(params.get("filter")).get("idIn") or "") or set(lib.CATEGORIES)
        found = [lib.category(c) for c in sorted(ids) if c in lib.CATEGORIES]
        return self._listing("KalturaCategoryListResponse", found, len(found))

    def _category_entry_list(self, shelf: Shelf, call: Call, params: Mapping) -> object:
        flt = mapping(params.get("filter"))
        if not any(
            flt.get(k) not in (None, "") for k in ("entryIdIn", "entryIdEqual", "categoryIdIn", "categoryIdEqual")
        ):
            return kerror("MUST_FILTER_ON_ENTRY_OR_CATEGORY", "Must filter on entry id or category id")
        if flt.get("entryIdIn") or flt.get("entryIdEqual"):
            videos = self._videos_of(shelf, flt)
        else:
            videos = [v for v in (shelf.video(i) for i in range(shelf.size)) if v is not None]
        size, index = self._pager(params)
        found = lib.category_links(shelf, videos, flt)
        return self._listing("KalturaCategoryEntryListResponse", found[(index - 1) * size : index * size], len(found))

    def _access_list(self, shelf: Shelf, call: Call, params: Mapping) -> object:
        found = lib.access_profiles()
        return self._listing("KalturaAccessControlProfileListResponse", found, len(found))

    def _thumb_list(self, shelf: Shelf, call: Call, params: Mapping) -> object:
        return self._assets(shelf, params, lambda _shelf, video: extras.thumbs(video), "KalturaThumbAssetListResponse")

    def _cue_point_list(self, shelf: Shelf, call: Call, params: Mapping) -> object:
        size, index = self._pager(params)
        flt = mapping(params.get("filter"))
        found = extras.cue_points_matching(self._videos_of(shelf, flt), flt)
        return self._listing("KalturaCuePointListResponse", found[(index - 1) * size : index * size], len(found))

    # ----- files

    def _flavor_url(self, shelf: Shelf, call: Call, params: Mapping) -> object:
        index, _ = lib.asset_of(params.get("id"), "1")
        video = shelf.video(index)
        flavor = next((f for f in lib.flavors(shelf, video) if f["id"] == params.get("id")), None) if video else None
        if video is None or flavor is None:
            return kerror("FLAVOR_ASSET_ID_NOT_FOUND", f"The requested flavor asset id [{params.get('id')}] not found")
        if flavor["status"] != 2:
            return kerror("FLAVOR_ASSET_IS_NOT_READY", "The flavor asset is not ready")
        eid = lib.entry_id(index)
        path = f"/_stream/kaltura/p/{lib.PARTNER_ID}/sp/{lib.PARTNER_ID}00/playManifest/entryId/{eid}"
        path += f"/flavorId/{flavor['id']}/format/download/protocol/http"
        if needs_ks(shelf, video, margin_s=URL_KS_S):
            lifetime = shelf.cfg.link_ttl_s if shelf.cfg.link_ttl_s > 0 else URL_KS_S
            path += "/ks/" + make_ks(shelf, 0, time.time() + lifetime, f"download:{eid},sview:{eid}")
        return f"{call.base_url}{path}/a.mp4?{urllib.parse.urlencode(video.media_query())}"

    def _thumb_url(self, shelf: Shelf, call: Call, params: Mapping) -> object:
        """thumbAsset.getUrl: the thumb's download URL, a KS of the entry's download privileges in it where its
        access control asks for one (kaltura_extras.py)."""
        found = extras.thumb_of(shelf, params.get("id"))
        if found is None:
            asked = params.get("id")
            return kerror("THUMB_ASSET_ID_NOT_FOUND", f"The requested thumbnail asset id [{asked}] not found")
        video, k = found
        path = extras.thumb_path(video.index, k)
        if lib.private_kind(shelf, video) == "restricted":
            eid = lib.entry_id(video.index)
            path += "/ks/" + make_ks(shelf, 0, time.time() + URL_KS_S, f"download:{eid},sview:{eid}")
        return call.base_url + path

    def serve_delivery(
        self, shelf: Shelf, method: str, path: str, query: str, range_header: str | None
    ) -> Served | None:
        """A download URL getUrl handed out: its flavor's bytes, with the KS it carries checked where the entry's
        access control asks for one (403 without it, or once it has expired); a thumbnail's image likewise
        (kaltura_extras.serve_thumbnail)."""
        thumbnail = extras.serve_thumbnail(shelf, path, lambda video, ks: self._thumb_allowed(shelf, video, ks))
        if thumbnail is not None:
            return thumbnail
        parts = path.split("/")
        parts = parts[parts.index("playManifest") + 1 :] if "playManifest" in parts else []
        pairs = dict(zip(parts[0:-1:2], parts[1::2], strict=False))
        index, k = lib.asset_of(pairs.get("flavorId"), "1")
        video = shelf.video(index)
        if video is None or pairs.get("entryId") != lib.entry_id(index):
            return Served(404, {"Content-Type": "text/plain"}, b"Not Found")
        if needs_ks(shelf, video):
            fields, _ = read_ks(shelf, pairs.get("ks", ""))
            if fields is None or f"download:{lib.entry_id(index)}" not in fields["v"].split(","):
                return Served(403, {"Content-Type": "text/plain"}, b"Access denied: a KS is required")
        flavor = next((f for f in lib.flavors(shelf, video) if f["id"] == pairs.get("flavorId")), None)
        if flavor is None or flavor["status"] != 2:
            return Served(404, {"Content-Type": "text/plain"}, b"Not Found")
        inner = urllib.parse.urlsplit(shelf.url(video, f"flavor-{k}.mp4"))
        return serve_media(
            shelf.cfg, shelf.state, method, inner.path, inner.query, range_header, self.faults, lambda v, n: True
        )

    def _thumb_allowed(self, shelf: Shelf, video: Item, ks: str | None) -> bool:
        """A thumbnail is refused only by an access control profile with a rule, short of a KS of the entry's
        (KSecureEntryHelper, ContextType::THUMBNAIL: validateAccessControl, not moderation or scheduling)."""
        if lib.private_kind(shelf, video) != "restricted":
            return True
        fields, _ = read_ks(shelf, ks or "")
        return fields is not None and f"download:{lib.entry_id(video.index)}" in fields["v"].split(",")

    def _webvtt(self, shelf: Shelf, params: Mapping, fmt: int) -> Reply:
        index, k = lib.asset_of(params.get("captionAssetId"), "2")
        video = shelf.video(index)
        found = lib.captions(shelf, video) if video else []
        if video is None or k < 0 or k >= len(found) or found[k]["status"] != 2:  # no video: nothing found
            return answer(kerror("CAPTION_ASSET_ID_NOT_FOUND", "Caption asset id not found"), fmt)
        segment = _num(params.get("segmentIndex"))
        if not segment:  # no segment index: the playlist of 30-second segments (buildWebVTTM3U8File)
            seconds = int(video.duration)
            count = max(1, math.ceil(seconds / 30))
            lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:30", "#EXT-X-VERSION:3", "#EXT-X-MEDIA-SEQUENCE:1"]
            lines.append("#EXT-X-PLAYLIST-TYPE:VOD")
            for n in range(1, count + 1):
                lines += [f"#EXTINF:{30 if n < count else seconds - 30 * (count - 1)}.0,", f"segmentIndex/{n}.vtt"]
            text = "\r\n".join([*lines, "#EXT-X-ENDLIST", ""])
            return Reply(200, raw=text.encode(), headers={"Content-Type": "application/x-mpegurl"})
        language = found[k]["languageCode"]
        text = VTT.format(i=video.index, language=language)
        return Reply(200, raw=text.encode(), headers={"Content-Type": "text/vtt"})

    # ----- rate limits (Kaltura publishes none: the simulator's own, the profile's `limits`)

    def rate_headers(self, cfg: SimConfig, state: RateState) -> dict:
        return {}

    def throttle_hint(self, cfg: SimConfig, wait_s: float, state: RateState) -> tuple[dict, float | None]:
        told = max(1, math.ceil(wait_s))
        return {"Retry-After": str(told)}, float(told)
