"""A Kaltura partner's library as the "kaltura" profile renders it (infra/sim/kaltura.py): entries, flavors,
captions, categories, the entries' category links (categoryEntry) and access control profiles computed from the
library's index, and media.list's filters.

Every shape is KalturaApiClient 23.10.0's (the official Python client: KalturaMediaEntry, KalturaFlavorAsset,
KalturaCaptionAsset, KalturaCategory, KalturaAccessControlProfile and their enums, Plugins/Core.py and Caption.py)
and the server's that client is generated from (kaltura/server, api_v3 and alpha/lib). Nothing is stored per
entry: a library of a million lists from arithmetic, each entry's plays, views and last play too
(infra/sim/library_usage.py; issue 45).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping

from .. import library_usage as usage
from ..library import EPOCH, STEP_S, Item, Shelf, fault_of, is_private

PARTNER_ID = 2_012_345
# Seven entries share each creation second: a page of 500 ends inside a second (500 = 71 x 7 + 3), as a busy
# partner's bulk upload makes, which is what `idNotIn` at the window's boundary is for (Kaltura's blog, "Tags
# editor": "the entries created at the same second" are excluded by id).
TIE = 7
UPDATED_AFTER_S = 3600
# media.list's ceiling: "The server has a hard limit of 10,000 entries when accessing the media.list"
# (corp.kaltura.com/blog/tags-editor; knowledge.kaltura.com/help/api-results-limitation): no match past the
# 10,000th of a query is answered, whatever the page index.
MAX_MATCHES = 10_000
MAX_PAGE_SIZE = 500  # KalturaFilterPager: "(Default is 30, maximum page size is 500)"; a larger one is cut to it
DEFAULT_PAGE_SIZE = 30
# Unfetchable in turn (library_unfetchable_every): still converting (PRECONVERT, READY once
# library_processing_done), a failed conversion (ERROR_CONVERTING), no content ever uploaded (NO_CONTENT), an audio
# entry, and a READY entry whose source flavor was purged (carried from its tallest flavor: not unfetchable).
FAULTS = ("processing", "failed", "no_content", "audio", "purged")
STATUS = {"processing": "1", "failed": "-1", "no_content": "7"}  # KalturaEntryStatus (a string enum); READY "2"
# Categories (KalturaCategory): privacy 1 ALL, 2 AUTHENTICATED_USERS, 3 MEMBERS_ONLY; appearInList 1 PARTNER_ONLY,
# 3 CATEGORY_MEMBERS_ONLY; contributionPolicy 1 ALL, 2 MEMBERS_WITH_CONTRIBUTION_PERMISSION. MediaSpace's
# channel types (a public gallery; a private channel; a restricted one for signed-in users; the "unlisted"
# category of the forum's answer, forum.kaltura.org "Private videos in media list response"). MediaSpace's are
# under its privacy context ("MediaSpace", `privacyContext`), which leaves them out of an entry's `categories`
# and `categoriesIds` ("Only categories that don't have entitlement (privacy context) are listed, to retrieve the
# full list of categories, use the categoryEntry.list action": KalturaBaseEntry, KalturaApiClient 23.10.0;
# categoryEntryPeer::syncEntriesCategories "skip category with privacy contexts"); categoryEntry.list names them.
CATEGORIES = {
    1: ("MediaSpace>site>galleries>Public", 1, 1, 2),
    2: ("MediaSpace>site>channels>Members", 3, 3, 2),
    3: ("MediaSpace>site>channels>Staff", 2, 1, 1),
    4: ("MediaSpace>unlisted", 1, 3, 2),
}
# The library's folders, as categories only their members see (a shared repository: MEMBERS_ONLY, listed).
FOLDER_CATEGORY = {"Marketing": 10, "Training/2021": 11, "Webinars": 12}
CATEGORIES.update({cid: (f"Library>{name}", 3, 1, 2) for name, cid in FOLDER_CATEGORY.items()})
PUBLIC_GALLERY = 1
# A private library video is, in turn: in no category, in a members-only channel (and suggested to the public
# gallery, that link pending the gallery's moderation: "Entries in the moderation queue must be approved ...
# before they are officially associated with the category", developer.kaltura.com "Content Categories
# Management"), in one for signed-in users, in the unlisted category, public but behind an access control profile
# with a rule, public pending moderation, or in the public gallery outside its scheduling window: not yet open
# (`startDate` ahead), closed (`endDate` passed), or open but closing (`endDate` ahead).
PRIVATE_KINDS = (
    "no_category",
    "members",
    "staff",
    "unlisted",
    "restricted",
    "moderation",
    "not_yet",
    "expired",
    "closing",
)
# KalturaCategoryEntryStatus: 1 PENDING (in the category's moderation queue), 2 ACTIVE.
LINK_PENDING, LINK_ACTIVE = 1, 2
WINDOW_DAYS = 30  # how far ahead a window opens (not_yet) or closes (closing), from the day it is asked
RESTRICTED_PROFILE = 2  # accessControlProfile 2 has a rule (a KS is needed); 1 is the partner's default, none
# Flavors (KalturaFlavorAsset): the source (flavorParamsId 0, isOriginal) and two renditions.
FLAVORS = ((0, 1080, 5000, True), (487071, 720, 2500, False), (487041, 360, 800, False))
CAPTION_FORMAT = {"en": "3", "fr": "1"}  # KalturaCaptionType: 3 WEBVTT, 1 SRT
LANGUAGE = {"en": "English", "fr": "French"}


def _b36(n: int, width: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out.rjust(width, "0")


def entry_id(index: int) -> str:
    return f"0_{_b36(index, 8)}"


def index_of(eid: object) -> int:
    if not isinstance(eid, str) or len(eid) != 10 or not eid.startswith("0_"):
        return -1
    try:
        return int(eid[2:], 36)
    except ValueError:
        return -1


def asset_id(prefix: str, index: int, k: int) -> str:
    """A flavor ("1_...") or caption ("2_...") asset id: the entry's index and the asset's place."""
    return f"{prefix}_{_b36(index, 7)}{k}"


def asset_of(aid: object, prefix: str) -> tuple[int, int]:
    if not isinstance(aid, str) or len(aid) != 10 or not aid.startswith(f"{prefix}_") or not aid[-1].isdigit():
        return -1, -1
    try:
        return int(aid[2:9], 36), int(aid[-1])
    except ValueError:
        return -1, -1


def created_at(index: int) -> int:
    return int(EPOCH + (index // TIE) * STEP_S)


def private_kind(shelf: Shelf, video: Item) -> str | None:
    return _kind(shelf, video.index, video.private)


def _kind(shelf: Shelf, index: int, private: bool) -> str | None:
    if not private:
        return None
    return PRIVATE_KINDS[(index // max(1, shelf.cfg.library_private_every)) % len(PRIVATE_KINDS)]


def links(shelf: Shelf, video: Item) -> list[tuple[int, int]]:
    """The entry's category links (categoryEntry): (category id, KalturaCategoryEntryStatus)."""
    folder = FOLDER_CATEGORY[video.folder]
    kind = private_kind(shelf, video)
    if kind == "no_category":
        return []
    channel = {"members": 2, "staff": 3, "unlisted": 4}.get(kind or "", PUBLIC_GALLERY)
    found = [(folder, LINK_ACTIVE), (channel, LINK_ACTIVE)]
    return [*found, (PUBLIC_GALLERY, LINK_PENDING)] if kind == "members" else found


def has_privacy_context(cid: int) -> bool:
    return CATEGORIES[cid][0].startswith("MediaSpace")


def category_ids(shelf: Shelf, video: Item) -> list[int]:
    """What `categoriesIds` says: the ACTIVE links to categories without a privacy context."""
    return [c for c, status in links(shelf, video) if status == LINK_ACTIVE and not has_privacy_context(c)]


def schedule(shelf: Shelf, video: Item) -> tuple[int | None, int | None]:
    """The entry's scheduling window (startDate, endDate), epoch seconds; None where not set. Kaltura plays it only
    within ("a start date (sunrise) and an end date (sunset) ... If users try to access the entry outside of this
    window, they'll see an error message", knowledge.kaltura.com "Schedule availability of an entry")."""
    kind = private_kind(shelf, video)
    ahead = (int(time.time() // 86_400) + WINDOW_DAYS) * 86_400  # a day boundary: the same all day
    created = created_at(video.index)
    if kind is None and video.index % 5 == 2:  # published (its sunrise passed) a day after its upload
        return created + 86_400, None
    return {
        "not_yet": (ahead, None),
        "expired": (created, created + 86_400),
        "closing": (created, ahead),
    }.get(kind or "", (None, None))


def scheduled_now(shelf: Shelf, video: Item, margin_s: float = 0.0) -> bool:
    """entry::isScheduledNow, with `margin_s` more of the window asked for (getDownloadUrlWithExpiry asks that
    it stay open the day its URL lives)."""
    start, end = schedule(shelf, video)
    now = time.time()
    return (start is None or start <= now) and (end is None or end > now + margin_s)


def entry(shelf: Shelf, video: Item) -> dict:
    """The KalturaMediaEntry of library video `video`."""
    ids = category_ids(shelf, video)
    kind = private_kind(shelf, video)
    created = created_at(video.index)
    start, end = schedule(shelf, video)
    return {
        "objectType": "KalturaMediaEntry",
        "id": entry_id(video.index),
        "name": video.title,
        "description": video.description,
        "partnerId": PARTNER_ID,
        "userId": f"owner{video.index % 3}@example.com",
        "creatorId": f"owner{video.index % 3}@example.com",
        "tags": ", ".join(video.tags),
        "categories": ",".join(CATEGORIES[c][0] for c in ids),
        "categoriesIds": ",".join(map(str, ids)),
        "status": STATUS.get(video.fault or "", "2"),
        "moderationStatus": 1 if kind == "moderation" else 6,  # PENDING_MODERATION, AUTO_APPROVED
        "type": "1",  # KalturaEntryType MEDIA_CLIP
        "createdAt": created,
        "updatedAt": created + UPDATED_AFTER_S,
        "accessControlId": RESTRICTED_PROFILE if kind == "restricted" else 1,
        # Null when not set, as Kaltura's JSON serializer writes a null field (KalturaJsonSerializer::unsetNull
        # puts the key back, null); the XML form leaves it out.
        "startDate": start,
        "endDate": end,
        "displayInSearch": 1,  # PARTNER_ONLY
        "referenceId": f"ref-{video.index:06d}",
        # KalturaPlayableEntry's read-only counts (KalturaApiClient 23.10.0, Plugins/Core.py: `plays` "Number of
        # plays", `views` "Number of views", `lastPlayedAt` "The last time the entry was played", an int, null when
        # never played, as the JSON serializer writes an unset field), from the library's arithmetic (library_usage).
        "plays": usage.plays(video.index),
        "views": usage.views(video.index),
        "lastPlayedAt": usage.last_played(video.index, created),
        "width": 1920,
        "height": 1080,
        "duration": math.floor(video.duration + 0.5),
        "msDuration": round(video.duration * 1000),
        "mediaType": 5 if video.fault == "audio" else 1,  # KalturaMediaType AUDIO, VIDEO
        "flavorParamsIds": ",".join(str(f[0]) for f in FLAVORS),
    }


def flavors(shelf: Shelf, video: Item) -> list[dict]:
    """The entry's flavors: READY once the entry is, CONVERTING while it converts; the source DELETED (3) where it
    was purged, ERROR (-1) where the conversion failed, none where nothing was uploaded (or audio: its own)."""
    if video.fault in ("no_content", "audio"):
        return []
    found = []
    for k, (params_id, height, bitrate, original) in enumerate(FLAVORS):
        status = {"processing": 1, "failed": -1}.get(video.fault or "", 2)
        if original and video.fault == "purged":
            status = 3
        size = video.size if original else video.size * height // 2160
        found.append(
            {
                "objectType": "KalturaFlavorAsset",
                "id": asset_id("1", video.index, k),
                "entryId": entry_id(video.index),
                "partnerId": PARTNER_ID,
                "flavorParamsId": params_id,
                "width": height * 16 // 9,
                "height": height,
                "bitrate": bitrate,
                "isOriginal": original,
                "isWeb": not original,
                "containerFormat": "mp4" if not original else "isom",
                "fileExt": "mp4",
                "size": size // 1024,  # KalturaAsset.size: in KB
                "sizeInBytes": size,
                "status": status,
            }
        )
    return found


def captions(shelf: Shelf, video: Item) -> list[dict]:
    """The entry's caption assets: READY, or QUEUED (0) while library_captions_processing."""
    return [
        {
            "objectType": "KalturaCaptionAsset",
            "id": asset_id("2", video.index, k),
            "entryId": entry_id(video.index),
            "partnerId": PARTNER_ID,
            "language": LANGUAGE.get(language, language),
            "languageCode": language,
            "label": name,
            "isDefault": 1 if k == 0 else 0,  # KalturaNullableBoolean (-1 NULL_VALUE, 0 FALSE, 1 TRUE), an int
            "format": CAPTION_FORMAT.get(language, "3"),
            "fileExt": "vtt" if CAPTION_FORMAT.get(language) == "3" else "srt",
            "status": 0 if video.captions_processing else 2,
        }
        for k, (language, _kind, name) in enumerate(video.captions)
    ]


def category_links(shelf: Shelf, videos: list[Item], flt: Mapping) -> list[dict]:
    """categoryEntry.list's answer for these entries: their links (KalturaCategoryEntry), every status unless
    `statusEqual` / `statusIn` says which, and only to the categories `categoryIdEqual` / `categoryIdIn` name."""
    statuses = _ints(flt["statusIn"]) if flt.get("statusIn") not in (None, "") else None
    if flt.get("statusEqual") not in (None, ""):
        statuses = _ints(flt["statusEqual"])
    categories = _ints(flt.get("categoryIdIn") or "") | _ints(flt.get("categoryIdEqual") or "")
    found = []
    for video in videos:
        for cid, status in links(shelf, video):
            if (statuses is None or status in statuses) and (not categories or cid in categories):
                found.append(
                    {
                        "objectType": "KalturaCategoryEntry",
                        "categoryId": cid,
                        "entryId": entry_id(video.index),
                        "createdAt": created_at(video.index),
                        "categoryFullIds": str(cid),  # every category here is at the root (parentId 0)
                        "status": status,
                        "creatorUserId": f"owner{video.index % 3}@example.com",
                    }
                )
    return found


def category(cid: int) -> dict:
    full, privacy, listed, contribution = CATEGORIES[cid]
    return {
        "objectType": "KalturaCategory",
        "id": cid,
        "parentId": 0,
        "partnerId": PARTNER_ID,
        "name": full.rsplit(">", 1)[-1],
        "fullName": full,
        "privacy": privacy,
        "appearInList": listed,
        "contributionPolicy": contribution,
        "privacyContext": "MediaSpace" if full.startswith("MediaSpace") else None,
        "status": 2,  # KalturaCategoryStatus ACTIVE
    }


def access_profiles() -> list[dict]:
    """The partner's default profile (no rules) and one whose rule asks for a KS (KalturaAuthenticatedCondition
    with a block action)."""
    rule = {
        "objectType": "KalturaRule",
        "conditions": [{"objectType": "KalturaAuthenticatedCondition", "not": True}],
        "actions": [{"objectType": "KalturaAccessControlBlockAction", "type": "1"}],
    }
    return [
        {"objectType": "KalturaAccessControlProfile", "id": 1, "name": "Default", "isDefault": 1, "rules": []},
        {"objectType": "KalturaAccessControlProfile", "id": RESTRICTED_PROFILE, "name": "KS", "rules": [rule]},
    ]


# ----- media.list -------------------------------------------------------------------------------------------

# The filter fields this simulator applies as KalturaBaseEntryFilter documents them. Any other field is ignored,
# as Kaltura ignores a field it does not support (and answers everything).
SUPPORTED = frozenset(
    {
        "createdAtGreaterThanOrEqual",
        "createdAtLessThanOrEqual",
        "updatedAtGreaterThanOrEqual",
        "updatedAtLessThanOrEqual",
        "idEqual",
        "idIn",
        "idNotIn",
        "statusEqual",
        "statusIn",
        "moderationStatusIn",
        "categoriesIdsMatchOr",
    }
)


def _ints(value: object) -> set[int]:
    return {int(v) for v in str(value).split(",") if v.strip().lstrip("-").isdigit()}


def _strs(value: object) -> set[str]:
    return {v.strip() for v in str(value).split(",") if v.strip()}


def matches(shelf: Shelf, video: Item, found: dict, flt: Mapping) -> bool:
    """Whether a rendered entry (`found`, of `video`) passes the filter's supported fields (and the defaults where
    none is given)."""
    given = {k: v for k, v in flt.items() if k in SUPPORTED and v not in (None, "")}
    for side, name in (("createdAt", "createdAt"), ("updatedAt", "updatedAt")):
        low, high = given.get(f"{side}GreaterThanOrEqual"), given.get(f"{side}LessThanOrEqual")
        if (low is not None and found[name] < int(low)) or (high is not None and found[name] > int(high)):
            return False
    if "idEqual" in given and found["id"] != str(given["idEqual"]):
        return False
    if "idIn" in given and found["id"] not in _strs(given["idIn"]):
        return False
    if "idNotIn" in given and found["id"] in _strs(given["idNotIn"]):
        return False
    rule = _state_rule(given)
    return _state_passes(rule, int(found["status"]), found["moderationStatus"]) and _in_categories(shelf, given, video)


StateRule = tuple["set[int] | None", "set[int] | None", bool]


def _state_rule(given: Mapping) -> StateRule:
    """The filter's status and moderation fields, or the defaults where none is given: (the statuses answered,
    the moderation statuses answered, whether pending and rejected moderation is hidden)."""
    # KalturaBaseEntryFilter::setDefaultStatus: READY only when no status filter is given (and no idEqual);
    # setDefaultModerationStatus: pending and rejected moderation hidden likewise.
    statuses = _ints(given["statusIn"]) if "statusIn" in given else None
    if "statusEqual" in given:
        statuses = _ints(given["statusEqual"])
    if statuses is None and "idEqual" not in given:
        statuses = {2}
    moderation = _ints(given["moderationStatusIn"]) if "moderationStatusIn" in given else None
    return statuses, moderation, moderation is None and "idEqual" not in given


def _state_passes(rule: StateRule, status: int, moderation_status: int) -> bool:
    statuses, moderation, hide_pending = rule
    if statuses is not None and status not in statuses:
        return False
    if hide_pending and moderation_status in (1, 3):
        return False
    return moderation is None or moderation_status in moderation


def _state_of(shelf: Shelf, index: int) -> tuple[int, int]:
    """Entry `index`'s status and moderationStatus as entry() renders them, from arithmetic alone."""
    fault = fault_of(shelf.cfg, index, shelf.faults)
    kind = _kind(shelf, index, is_private(shelf.cfg, shelf.state, index))
    return int(STATUS.get(fault or "", "2")), 1 if kind == "moderation" else 6


def _in_categories(shelf: Shelf, given: Mapping, video: Item) -> bool:
    """categoriesIdsMatchOr: the entry's ACTIVE links to one of them, a privacy context's too (the search index
    holds every link, entry::getCategoriesEntryIds; the filter asks for ACTIVE ones, categoryIdsToIdsParsed)."""
    wanted = _ints(given.get("categoriesIdsMatchOr", ""))
    return not wanted or any(c in wanted and status == LINK_ACTIVE for c, status in links(shelf, video))


def window(flt: Mapping) -> tuple[int, int]:
    """The library indexes the filter's creation window can hold (arithmetic: createdAt grows with the index)."""
    low, high = 0, None
    for side, shift in (("createdAt", 0), ("updatedAt", UPDATED_AFTER_S)):
        if side + "GreaterThanOrEqual" in SUPPORTED and flt.get(side + "GreaterThanOrEqual") not in (None, ""):
            low = max(low, math.ceil((int(flt[side + "GreaterThanOrEqual"]) - shift - EPOCH) / STEP_S) * TIE)
        if side + "LessThanOrEqual" in SUPPORTED and flt.get(side + "LessThanOrEqual") not in (None, ""):
            top = (math.floor((int(flt[side + "LessThanOrEqual"]) - shift - EPOCH) / STEP_S) + 1) * TIE
            high = top if high is None else min(high, top)
    return max(0, low), high if high is not None else 1 << 62


def listed(shelf: Shelf, flt: Mapping, descending: bool) -> tuple[Iterator[dict], range]:
    """The entries the filter matches, in order (`+createdAt`, or `-createdAt`), and the library indexes the
    filter's window spans (in that order), so a caller that stops early can count what is left."""
    low, high = window(flt)
    high = min(high, shelf.size)
    order = range(high - 1, low - 1, -1) if descending else range(low, high)

    rule = _state_rule({k: v for k, v in flt.items() if k in SUPPORTED and v not in (None, "")})

    def walk() -> Iterator[dict]:
        for position, index in enumerate(order):
            # Status and moderation first, without rendering: a filter for the states Kaltura hides by default
            # (the source's probe) matches almost nothing, and rendering a million entries outlasted the client.
            if not _state_passes(rule, *_state_of(shelf, index)):
                continue
            video = shelf.video(index)
            if video is None:
                continue
            found = entry(shelf, video)
            if matches(shelf, video, found, flt):
                found["_position"] = position
                yield found

    return walk(), order
