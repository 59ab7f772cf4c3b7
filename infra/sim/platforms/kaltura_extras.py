"""What a viewer sees of a Kaltura entry besides its media (issue 42), for the "kaltura" profile: its thumb assets and
the image at each one's URL, its `thumbnailUrl`, and its chapters as thumb cue points. Computed from the entry's index
like the rest of the library (kaltura_entries.py), so a library of a million costs nothing until asked.

Shapes are KalturaApiClient 23.10.0's (Plugins/Core.py: KalturaThumbAsset, KalturaThumbAssetStatus, the thumbAsset
service; Plugins/CuePoint.py, ThumbCuePoint.py: KalturaThumbCuePoint, KalturaCuePointType, KalturaCuePointStatus,
KalturaThumbCuePointSubType) and behaviours kaltura/server's:

- thumb assets (`thumbAsset.list` by `entryIdIn` / `entryIdEqual`, paged): every entry has the frame Kaltura captured
  (a JPEG, `thumbParamsId` 0); one in three also one its owner uploaded (a PNG, no thumb params), which then carries
  the `default_thumb` tag (thumbParams::TAG_DEFAULT_THUMB; setAsDefault "Tags the thumbnail as DEFAULT_THUMB and
  removes that tag from all other thumbnail assets of the entry"), else the captured frame does. One in ten (LEGACY)
  has no thumb asset at all, an entry older than them: only its `thumbnailUrl` shows its image.
- `thumbAsset.getUrl(id)`: THUMB_ASSET_ID_NOT_FOUND for an unknown id, the asset's download URL otherwise
  (ThumbAssetService::getUrlAction, thumbAsset::getThumbnailUrl: `/api_v3/index.php/service/thumbAsset/action/serve/
  thumbAssetId/<id>/v/<version>`), here at the simulator's delivery host (`/_stream/kaltura/...`); where the entry's
  access control profile has a rule (a KS needed), the URL carries a KS of that entry's download privileges,
  `/ks/<ks>`, and is refused without one (KSecureEntryHelper with ContextType::THUMBNAIL: validateAccessControl only,
  so moderation and the scheduling window do not hide a thumbnail).
- the entry's `thumbnailUrl` ("Thumbnail URL", readonly): `/p/<partner>/sp/<partner>00/thumbnail/entry_id/<entry>/
  version/<n>`, the entry's default image, behind the same access control.
- chapters (`cuepoint_cuepoint.list` with KalturaThumbCuePointFilter; "Chapters segment the video into navigable
  sections", Kaltura's "Chapters & Slides API" guide): one entry in four has chapters, `startTime` in milliseconds
  from 0, `title`; each such entry has a slide too (subType SLIDE), and one in eight an ad cue point, neither a
  chapter. The filter fields CUE_POINT_FILTERS are applied as Kaltura documents them; any other is ignored, as
  Kaltura ignores what it does not support.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from ..library import Item, Served, Shelf
from ..media import THUMBNAIL as FRAME_JPEG
from .kaltura_entries import PARTNER_ID, _ints, _strs, asset_id, asset_of, created_at, entry_id, index_of
from .vimeo_library import png

THUMB_PREFIX, CUE_POINT_PREFIX = "3", "4"
LEGACY = 10  # one entry in this many has no thumb asset (index % LEGACY == 5)
CUSTOM = 3  # one in this many has a thumb its owner uploaded (index % CUSTOM == 0)
FRAME_SIZE, CUSTOM_SIZE = (16, 8), (1280, 720)  # the captured frame is media.THUMBNAIL: its SOF says 16x8
THUMB_VERSION = 2
CHAPTER_TITLES = ("Welcome", "Agenda — « Q3 »", "Demo", "Questions", "Résumé: 日本語")
THUMB, AD = "thumbCuePoint.Thumb", "adCuePoint.Ad"  # KalturaCuePointType
SLIDE, CHAPTER = 1, 2  # KalturaThumbCuePointSubType
# KalturaCuePointBaseFilter / KalturaThumbCuePointBaseFilter fields applied here.
CUE_POINT_FILTERS = frozenset(
    {"entryIdIn", "entryIdEqual", "cuePointTypeEqual", "cuePointTypeIn", "subTypeEqual", "subTypeIn", "statusEqual"}
)


def thumb_id(index: int, k: int) -> str:
    return asset_id(THUMB_PREFIX, index, k)


def thumbs(video: Item) -> list[dict]:
    """The entry's thumb assets (KalturaThumbAsset), the default one tagged default_thumb."""
    if video.index % LEGACY == 5 or video.fault in ("no_content", "audio"):
        return []
    custom = video.index % CUSTOM == 0
    found = [_thumb(video, 0, FRAME_SIZE, "jpg", 0, default=not custom)]
    if custom:
        found.append(_thumb(video, 1, CUSTOM_SIZE, "png", None, default=True))
    return found


def _thumb(video: Item, k: int, size: tuple[int, int], ext: str, params: int | None, default: bool) -> dict:
    body = image(video.index, k)
    return {
        "objectType": "KalturaThumbAsset",
        "id": thumb_id(video.index, k),
        "entryId": entry_id(video.index),
        "partnerId": PARTNER_ID,
        "version": THUMB_VERSION,
        "size": max(1, len(body) // 1024),  # KalturaAsset.size: in KB
        "sizeInBytes": len(body),
        "tags": "default_thumb" if default else "",
        "fileExt": ext,
        "createdAt": created_at(video.index) + 60 * k,
        "updatedAt": created_at(video.index) + 60 * k,
        "thumbParamsId": params,
        "width": size[0],
        "height": size[1],
        "status": 2,  # KalturaThumbAssetStatus READY
    }


@functools.lru_cache(maxsize=64)
def image(index: int, k: int) -> bytes:
    """The thumb's file: the captured frame (a JPEG), or the owner's upload (a PNG of its own colour)."""
    if k == 0:
        return FRAME_JPEG
    return png(*CUSTOM_SIZE, (index * 37 % 256, index * 91 % 256, 200))


def default_thumb(video: Item) -> dict | None:
    return next((t for t in thumbs(video) if t["tags"] == "default_thumb"), None)


def thumb_path(index: int, k: int) -> str:
    serve = "/_stream/kaltura/api_v3/index.php/service/thumbAsset/action/serve"
    return f"{serve}/thumbAssetId/{thumb_id(index, k)}/v/{THUMB_VERSION}"


def entry_thumbnail_path(index: int) -> str:
    return f"/_stream/kaltura/p/{PARTNER_ID}/sp/{PARTNER_ID}00/thumbnail/entry_id/{entry_id(index)}/version/100002"


def thumb_of(shelf: Shelf, asset: object) -> tuple[Item, int] | None:
    """The entry and the place of thumb asset `asset`, where the library has it."""
    index, k = asset_of(asset, THUMB_PREFIX)
    video = shelf.video(index)
    if video is None or not any(t["id"] == asset for t in thumbs(video)):
        return None
    return video, k


# ----- chapters


def cue_points(video: Item) -> list[dict]:
    """The entry's cue points: its chapters in start order, a slide, and now and then an ad."""
    ms = round(video.duration * 1000)
    n = 2 + video.index % 5 if video.index % 4 == 1 else 0
    points = [
        _cue_point(video, k, THUMB, CHAPTER, k * ms // n, CHAPTER_TITLES[k % len(CHAPTER_TITLES)]) for k in range(n)
    ]
    if n:
        points.append(_cue_point(video, n, THUMB, SLIDE, ms // 3, "Slide 1"))
    if video.index % 8 == 1:
        points.append(_cue_point(video, n + 1, AD, None, ms // 2, None))
    return points


def _cue_point(video: Item, k: int, kind: str, sub: int | None, start_ms: int, title: str | None) -> dict:
    point: dict[str, object] = {
        "objectType": "KalturaThumbCuePoint" if kind == THUMB else "KalturaAdCuePoint",
        "id": asset_id(CUE_POINT_PREFIX, video.index, k % 10),
        "cuePointType": kind,
        "status": 1,  # KalturaCuePointStatus READY
        "entryId": entry_id(video.index),
        "partnerId": PARTNER_ID,
        "createdAt": created_at(video.index),
        "updatedAt": created_at(video.index),
        "startTime": start_ms,
        "tags": "",
    }
    if kind == THUMB:
        point.update(subType=sub, title=title, description=None, assetId=None)
    return point


def cue_points_matching(videos: list[Item], flt: Mapping) -> list[dict]:
    """cuepoint_cuepoint.list's answer for these entries: their cue points, filtered by CUE_POINT_FILTERS."""
    given = {k: v for k, v in flt.items() if k in CUE_POINT_FILTERS and v not in (None, "")}
    types = _strs(given["cuePointTypeIn"]) if "cuePointTypeIn" in given else None
    if "cuePointTypeEqual" in given:
        types = {str(given["cuePointTypeEqual"])}
    subs = _ints(given["subTypeIn"]) if "subTypeIn" in given else None
    if "subTypeEqual" in given:
        subs = _ints(given["subTypeEqual"])
    status = _ints(given["statusEqual"]) if "statusEqual" in given else None
    found = []
    for video in videos:
        for point in cue_points(video):
            if types is not None and point["cuePointType"] not in types:
                continue
            if subs is not None and point.get("subType") not in subs:
                continue
            if status is not None and point["status"] not in status:
                continue
            found.append(point)
    return sorted(found, key=lambda p: (p["entryId"], p["startTime"]))


# ----- serving the images


def serve_thumbnail(shelf: Shelf, path: str, ks_ok: Callable[[Item, str | None], bool]) -> Served | None:
    """A thumb asset's file (`.../thumbAssetId/<id>/v/<n>[/ks/<ks>]`) or an entry's thumbnail (`/p/.../thumbnail/
    entry_id/<entry>/...`); None for a path of neither kind. `ks_ok(video, ks)`: whether the KS (or none) lets this
    entry's thumbnail be served under its access control."""
    parts = path.split("/")
    missing = Served(404, {"Content-Type": "text/plain"}, b"Not Found")
    if "thumbAssetId" in parts:
        pairs = _pairs(parts[parts.index("thumbAssetId") :])
        found = thumb_of(shelf, pairs.get("thumbAssetId"))
        if found is None:
            return missing
        video, k = found
    elif "thumbnail" in parts and "entry_id" in parts:
        pairs = _pairs(parts[parts.index("entry_id") :])
        entry = shelf.video(index_of(pairs.get("entry_id")))
        if entry is None:
            return missing
        video, chosen = entry, default_thumb(entry)
        k = asset_of(chosen["id"], THUMB_PREFIX)[1] if chosen else 0
    else:
        return None
    if not ks_ok(video, pairs.get("ks")):
        return Served(403, {"Content-Type": "text/plain"}, b"Access denied: a KS is required")
    body = image(video.index, k)
    kind = "image/png" if body.startswith(b"\x89PNG") else "image/jpeg"
    return Served(200, {"Content-Type": kind, "Content-Length": str(len(body))}, body)


def _pairs(parts: list[str]) -> dict[str, str]:
    return dict(zip(parts[0::2], parts[1::2], strict=False))
