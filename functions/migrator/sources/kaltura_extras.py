"""What a viewer sees on Kaltura besides the entry (issue 42), read for the row: the default thumbnail, the chapters,
the categories as collections and the publish time. The readers are pure over Kaltura's answers; sources/kaltura.py
asks for them a chunk of entries at a time, as it asks for flavors and captions, never one call an entry.

Documents: KalturaApiClient 23.10.0 (Plugins/Core.py: KalturaThumbAsset, KalturaThumbAssetStatus, thumbAsset
service; Plugins/CuePoint.py and ThumbCuePoint.py: KalturaCuePointType, KalturaCuePointStatus,
KalturaThumbCuePointSubType, KalturaThumbCuePoint) and kaltura/server, which it is generated from:

- the thumbnail: an entry's thumbnails are thumb assets (`thumbAsset.list`, a KalturaThumbAssetFilter by
  `entryIdIn`); the one the owner chose is tagged `default_thumb` (thumbParams::TAG_DEFAULT_THUMB): `setAsDefault`
  "Tags the thumbnail as DEFAULT_THUMB and removes that tag from all other thumbnail assets of the entry. Create a
  new file sync link on the entry thumbnail that points to the thumbnail asset file sync", so the entry's own
  `thumbnailUrl` shows that image too, and is the only image of an entry that has no thumb asset. The asset is
  carried as `kaltura://<entry>/thumb/<asset id>` and resolved when it is set with `thumbAsset.getUrl`, "Get
  download URL for the asset" (ThumbAssetService::getUrlAction: READY only, the entry's access control checked, a
  KS in the URL where it asks for one, as a flavor's: asset::getDownloadUrl), so no KS-bearing link waits in a
  queue. An entry whose thumb assets were not read (`--no-tracks`) or hold no default READY one, while its
  `thumbnailUrl` says it has an image, carries `kaltura://<entry>/thumb/default`: resolved to its default thumb
  asset then, else to its `thumbnailUrl`;
- chapters: thumb cue points of sub-type CHAPTER (`cuepoint_cuepoint.list` with a KalturaThumbCuePointFilter:
  `cuePointTypeEqual` "thumbCuePoint.Thumb", `subTypeEqual` 2; KalturaThumbCuePointSubType SLIDE 1, CHAPTER 2;
  "Chapters segment the video into navigable sections", Kaltura's "Chapters & Slides API" guide): `startTime` "Start
  time in milliseconds", `title`; READY (KalturaCuePointStatus 1) only. Kaltura answers a filter field it does not
  support by ignoring it: every cue point answered is checked against the filter, and a chunk's answer holding
  another entry's cue point (entryIdIn ignored: the partner's every cue point would follow) is dropped whole;
- collections: the entry's categories, those of `categoriesIds` and those only `categoryEntry.list` names (a
  privacy context's: MediaSpace channels and galleries), each a collection of kind category named by its
  `fullName` ("Library>Marketing"), the category's id its id. Kaltura keeps no order of a category's entries
  (KalturaCategory's `defaultOrderBy` orders its child categories), so no position;
- the publish time: an entry is published from its `startDate`, "Entry scheduling start date" (the sunrise of
  knowledge.kaltura.com "Schedule availability of an entry"), where one is set and has passed; where none is set,
  from its creation, `createdAt`. An entry whose `startDate` is still ahead is not published yet: no publish time
  (its row's privacy note and `metadata.schedule` name the date).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..providers.facts import text
from .kaltura_api import is_entry_id, number
from .kaltura_privacy import schedule_date
from .rows import ChapterInfo, CollectionInfo

DEFAULT_TAG = "default_thumb"  # thumbParams::TAG_DEFAULT_THUMB
THUMB_READY = 2  # KalturaThumbAssetStatus READY
THUMB_CUE_POINT = "thumbCuePoint.Thumb"  # KalturaCuePointType THUMB
CHAPTER = 2  # KalturaThumbCuePointSubType CHAPTER (1 is SLIDE)
CUE_POINT_READY = 1  # KalturaCuePointStatus READY (2 DELETED, 3 HANDLED, 4 PENDING)
THUMB_KIND = "thumb"  # a reference's kind: kaltura://<entry>/thumb/<asset id or DEFAULT_ITEM>
DEFAULT_ITEM = "default"


def thumb_filter(entry_ids: Iterable[str]) -> dict:
    return {"objectType": "KalturaThumbAssetFilter", "entryIdIn": ",".join(entry_ids)}


def chapter_filter(entry_ids: Iterable[str]) -> dict:
    return {
        "objectType": "KalturaThumbCuePointFilter",
        "entryIdIn": ",".join(entry_ids),
        "cuePointTypeEqual": THUMB_CUE_POINT,
        "subTypeEqual": CHAPTER,
        "statusEqual": CUE_POINT_READY,
        "orderBy": "+startTime",
    }


def is_default(thumb: Mapping) -> bool:
    """A READY thumb asset tagged default_thumb (its tags a comma-separated list)."""
    tags = [t.strip() for t in (text(thumb.get("tags")) or "").split(",")]
    return DEFAULT_TAG in tags and number(thumb.get("status")) == THUMB_READY and is_entry_id(thumb.get("id"))


def default_thumbs(thumbs: Iterable[Mapping]) -> dict[str, str]:
    """Each entry's default thumb asset id (the first listed, should two be tagged)."""
    chosen: dict[str, str] = {}
    for thumb in thumbs:
        entry = text(thumb.get("entryId"))
        if entry and is_default(thumb):
            chosen.setdefault(entry, str(thumb["id"]))
    return chosen


def chapters_by_entry(cue_points: Iterable[Mapping], entry_ids: Iterable[str]) -> dict[str, list[ChapterInfo]] | None:
    """The chapters of each entry asked for, from a `cuepoint_cuepoint.list` answer; None when the answer holds a cue
    point of an entry not asked for (the filter was ignored: none of it can be trusted)."""
    asked = set(entry_ids)
    found: dict[str, list[ChapterInfo]] = {}
    for point in cue_points:
        entry = text(point.get("entryId"))
        if entry not in asked:
            return None
        if point.get("cuePointType") != THUMB_CUE_POINT or number(point.get("subType")) != CHAPTER:
            continue
        if number(point.get("status")) != CUE_POINT_READY:
            continue
        start = number(point.get("startTime"))
        if start is None or start < 0:
            continue
        found.setdefault(entry, []).append(ChapterInfo(start / 1000, point.get("title")))
    return found


def collections_of(category_ids: Iterable[int], categories: Mapping[int, Mapping | None]) -> list[CollectionInfo]:
    """The entry's categories these credentials can read, as collections named by their full names."""
    found = []
    for cid in category_ids:
        category = categories.get(cid)
        name = text(category.get("fullName")) or text(category.get("name")) if category else None
        if name:
            found.append(CollectionInfo(str(cid), name, "category"))
    return found


def published_at(entry: Mapping, now: float) -> int | None:
    """When the entry was published: its `startDate` once passed, else its `createdAt`; None while its `startDate`
    is ahead (or unreadable)."""
    start, readable = schedule_date(entry, "startDate")
    if not readable or (start is not None and start > now):
        return None
    return start if start is not None else number(entry.get("createdAt"))


def thumb_ref_item(entry: Mapping, default_thumb: str | None) -> str | None:
    """The item of the entry's thumbnail reference: its default thumb asset's id, DEFAULT_ITEM where only its
    `thumbnailUrl` says it has an image, None where it has none."""
    if default_thumb:
        return default_thumb
    url = text(entry.get("thumbnailUrl"))
    return DEFAULT_ITEM if url and url.startswith(("https://", "http://")) else None
