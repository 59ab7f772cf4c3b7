"""Kaltura as a source (developer.kaltura.com API v3: media.list, KalturaMediaEntryFilter, KalturaFilterPager,
session.start, appToken, flavorAsset, caption_captionasset, category, categoryEntry, accessControlProfile;
kaltura/server, whose code the reference is generated from; KalturaApiClient 23.10.0, the official Python client,
sends the same calls).

- credentials, the KS and its renewal, API errors: kaltura_api.py; privacy (categories, moderation, access
  control, the scheduling window): kaltura_privacy.py. `{"partner_id": ..., "app_token_id": ..., "app_token": ...,
  "app_token_hash": "SHA256"}` (preferred) or `{"partner_id": ..., "admin_secret": ...}`;
- list: `media.list(filter, pager)` answers `{objects, totalCount}`, 500 a page, walked by creation windows under
  its 10,000-entry ceiling, every filter sent checked on every entry answered (kaltura_walk.py: `Walk`, the
  cursor, `FilterIgnored`);
- media.list shows only READY entries unless a status filter is given, and hides entries pending or rejected in
  moderation (KalturaBaseEntryFilter::setDefaultStatus, setDefaultModerationStatus): `statusIn` and
  `moderationStatusIn` name every status, so an entry still converting goes to `page.pending` (and `video(id)`,
  `media.get`, asks for it again at the next sweep) and one that failed is named unfetchable with why;
- an entry (KalturaMediaEntry): `id` ("0_abcd1234"), `name`, `description`, `tags` (comma separated), `createdAt`,
  `updatedAt` (Unix seconds), `msDuration`/`duration`, `status` (KalturaEntryStatus: -2 ERROR_IMPORTING,
  -1 ERROR_CONVERTING, 0 IMPORT, 1 PRECONVERT, 2 READY, 4 PENDING, 5 MODERATE, 6 BLOCKED, 7 NO_CONTENT),
  `mediaType` (1 VIDEO, 2 IMAGE, 5 AUDIO, 201-204 live), `categoriesIds`, `moderationStatus`, `displayInSearch`,
  `accessControlId`, `startDate`/`endDate` (the scheduling window, kaltura_privacy.py). Images are no videos
  (skipped, counted apart); audio and live entries are unfetchable;
- categories: `categoriesIds` lists "only categories that don't have entitlement (privacy context) ... to retrieve
  the full list of categories, use the categoryEntry.list action" (KalturaBaseEntry, KalturaApiClient 23.10.0;
  "Content Categories Management": "Avoid using the categories and categoriesIds properties"), so MediaSpace's
  channels and galleries are missing from it. Each page's entries are asked of `categoryEntry.list` in one call
  (`entryIdIn` the page's ids, `statusEqual` 2 ACTIVE, `+createdAt`, pages of 500; an entry has at most 32
  categories, so a page of 500 entries is 32 such pages at most, under the 10,000 ceiling: past it, or when fewer
  links were read than `totalCount` said, the ids are asked again in halves). An entry's categories are both; a
  link not ACTIVE (pending or rejected in the category's moderation) publishes nothing and is left out. media.list's
  `categoriesIdsMatchOr` matches those ACTIVE links (entryFilter::categoryIdsToIdsParsed), so the category filter
  is checked against both too;
- the file: `flavorAsset.list` (`entryIdIn`) gives each entry's flavors (`isOriginal`: "True if this Flavor Asset
  is the original source"; `status` 2 READY, 0 QUEUED, 1 CONVERTING, 6 WAIT_FOR_CONVERT, 7 IMPORTING, 8 VALIDATING
  are still being made; `height`, `sizeInBytes`/`size` in KB). The source flavor when it is READY; when it was
  purged, the tallest READY flavor, said so in the row (`metadata.source_flavor`). `flavorAsset.getUrl(id)` mints
  the download URL just before the create; where the entry's access control needs a KS to download, Kaltura puts
  one in the URL itself (`/ks/<ks>`, privileges download/sview of that entry only, 24 hours: asset.php
  getDownloadUrlWithExpiry; also where the entry is pending moderation, or outside its scheduling window or
  closing it within the day: such a KS lets the download past both, KSecureEntryHelper::validateForDownload),
  so the URL is said to expire then;
- captions: `caption_captionasset.list` (`entryIdIn`) `[{id, entryId, languageCode, language, label, status}]`
  (KalturaCaptionAssetStatus 2 READY, 0 QUEUED and 7 IMPORTING still being made: the entry waits in
  `page.pending`); one track's text from `caption_captionasset.serveWebVTT` with `segmentIndex` -1, the whole file
  as WebVTT whatever its format (without a segment index it serves an HLS playlist of segments instead:
  CaptionAssetService::serveWebVTTAction, kWebVTTGenerator::buildWebVTTSegment);
- what a viewer sees first (issue 42; kaltura_extras.py): the default thumb asset (`thumbAsset.list`), carried as
  `kaltura://<entry>/thumb/<asset>` and resolved with `thumbAsset.getUrl` when it is set; the chapters (thumb cue
  points of sub-type CHAPTER, `cuepoint_cuepoint.list`), both asked for a chunk of entries at a time with the
  captions, and only when tracks are; the categories as collections; `startDate` once passed, else `createdAt`,
  as `published_at`;
- usage (issue 45; inline_usage.py): the entry's own `plays`, `views` and `lastPlayedAt` (KalturaPlayableEntry),
  in every row as `usage`, read at the listing's time, at no request of its own;
- rate limits: Kaltura publishes no number; none is kept here (`documented_rate_per_s` None), a 429 is waited out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar
from urllib.parse import urlencode

from ..link_life import LinkTerms
from ..providers.facts import CredentialsError, entries, mapping, text
from .base import HttpSource, Page, Resolution, SourceDenied, SourceRef, gone
from .inline_usage import kaltura_usage
from .kaltura_api import Credentials, KalturaError, Session, api_error, is_entry_id, number, refusal
from .kaltura_extras import (
    DEFAULT_ITEM,
    THUMB_KIND,
    chapter_filter,
    chapters_by_entry,
    collections_of,
    default_thumbs,
    published_at,
    thumb_filter,
    thumb_ref_item,
)
from .kaltura_privacy import privacy_of, schedule_metadata
from .kaltura_walk import PAGE_SIZE, STATUSES_HIDDEN, FilterIgnored, Walk, categories_of
from .rows import ChapterInfo, TrackInfo, make_row, unfetchable

CHUNK = 100  # entries whose flavors (or captions) one list asks for: a few each, under a page of 500
MAX_LISTED = 10_000  # no list answers past its 10,000th object
LINK_ACTIVE = 2  # KalturaCategoryEntryStatus ACTIVE (1 PENDING, 3 DELETED, 4 REJECTED publish nothing)
# KalturaEntryStatus: what is listed, and what each means here.
READY = 2
WORKING = {0: "importing", 1: "preconverting", 4: "pending", 5: "awaiting moderation"}
FAILED = {
    -2: "failed at the source (Kaltura entry status ERROR_IMPORTING)",
    -1: "failed at the source (Kaltura entry status ERROR_CONVERTING)",
    6: "blocked at the source (Kaltura entry status BLOCKED)",
    7: "no media was ever uploaded to it (Kaltura entry status NO_CONTENT)",
}
FLAVOR_READY, FLAVOR_WORKING = 2, {0, 1, 6, 7, 8}
CAPTION_READY, CAPTION_WORKING = 2, {0, 7}
VIDEO, IMAGE, AUDIO = 1, 2, 5
STILL_PROCESSING = "still {state} at Kaltura (entry status {status}): asked for again at the next sweep"
FLAVORS_PROCESSING = "its flavors are still being made at Kaltura: asked for again at the next sweep"
CAPTIONS_PROCESSING = "its caption {language} is still being made at Kaltura: asked for again at the next sweep"
SERVE_WEBVTT = "/api_v3/service/caption_captionasset/action/serveWebVTT"
NO_FLAVOR = "no flavor of it is ready at Kaltura (none READY, none being made)"
# Categories and access control profiles are read once per this long by a source (a warm Lambda keeps its source):
# a category made members-only during a migration narrows what is resolved after, within minutes.
SETTINGS_TTL_S = 600.0
URL_KS_TTL_S = 86_400.0  # the KS Kaltura puts in a download URL lives a day (getDownloadUrlWithExpiry(86400))


@dataclass
class Lookups:
    """What a page's entries need besides themselves, asked for once per page (flavors, captions) or once per
    listing (categories, access control profiles)."""

    flavors: dict[str, list[dict]] = field(default_factory=dict)
    captions: dict[str, list[dict]] = field(default_factory=dict)
    links: dict[str, set[int]] = field(default_factory=dict)  # each entry's ACTIVE categories, categoryEntry.list's
    thumbs: dict[str, str] = field(default_factory=dict)  # each entry's default thumb asset (kaltura_extras.py)
    chapters: dict[str, list[ChapterInfo]] = field(default_factory=dict)


class KalturaSource(HttpSource):
    platform = "kaltura"
    credential_env: ClassVar[Mapping[str, str]] = {
        "partner_id": "KALTURA_PARTNER_ID",
        "app_token_id": "KALTURA_APP_TOKEN_ID",
        "app_token": "KALTURA_APP_TOKEN",
    }
    default_base_url = "https://www.kaltura.com"
    documented_rate_per_s = None  # Kaltura publishes no number
    # media.get, categoryEntry.list, flavorAsset.list and flavorAsset.getUrl (the KS, the categories' settings and
    # access control are per listing)
    requests_per_video = 4
    link_terms = LinkTerms("a KS in Kaltura's download URL lives 24 hours (getDownloadUrlWithExpiry(86400))")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.session = Session(self._post, self.clock)
        self._categories: dict[int, dict | None] = {}
        self._restricting: set[int] | None = None
        self._settings_read_at = 0.0

    # --- calls ----------------------------------------------------------------------------------------------

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        Credentials.parse(creds)  # the KS travels in the body; malformed credentials are refused here
        return {}

    def creds(self) -> Credentials:
        try:
            raw = self.credentials()
            if not raw:
                raise SourceDenied("no kaltura credentials are configured (the source credentials secret)")
            return Credentials.parse(raw)
        except CredentialsError as exc:
            raise SourceDenied(str(exc)) from None

    def _post(self, service: str, action: str, params: dict, ks: str | None) -> object:
        """One call as it is answered: its body, or the error its API exception is."""
        body = {**params, "format": 1, **({"ks": ks} if ks else {})}
        answer = self.call("POST", f"/api_v3/service/{service}/action/{action}", json_body=body)
        if not 200 <= answer.status < 300:
            raise self.failure(answer, f"{service}.{action}")
        doc = self.json_of(answer, f"{service}.{action}")
        error = api_error(doc)
        if error is not None:
            code, message, args = error
            if code == "INVALID_KS" and ks:
                raise KalturaError(code, f"kaltura: the KS was refused ({text(args.get('ERR_DESC')) or '?'})")
            raise refusal(code, message, f"{service}.{action}", (*self.creds().secrets, ks or ""))
        return doc

    def api(self, service: str, action: str, params: dict) -> object:
        """A call with the session's KS; a KS refused (it expired, or was revoked) is replaced once and the call
        tried again, so a long listing goes on from where it is."""
        creds = self.creds()
        try:
            return self._post(service, action, params, self.session.ks(creds))
        except KalturaError as exc:
            if exc.code != "INVALID_KS":
                raise
        self.session.drop()
        try:
            return self._post(service, action, params, self.session.ks(creds))
        except KalturaError as exc:
            if exc.code == "INVALID_KS":
                raise refusal("INVALID_KS", "", f"{service}.{action}", ()) from None
            raise

    def _list(self, service: str, action: str, filter_doc: dict, page_index: int = 1) -> tuple[list[dict], int | None]:
        pager = {"objectType": "KalturaFilterPager", "pageSize": PAGE_SIZE, "pageIndex": page_index}
        body = mapping(self.api(service, action, {"filter": filter_doc, "pager": pager}))
        return [mapping(o) for o in entries(body.get("objects"))], number(body.get("totalCount"))

    def _all(self, service: str, filter_doc: dict) -> list[dict]:
        """Every object of a short list (a chunk's flavors or captions), page by page."""
        found, index = [], 1
        while True:
            objects, _ = self._list(service, "list", filter_doc, index)
            found += objects
            if len(objects) < PAGE_SIZE or index * PAGE_SIZE >= 10_000:
                return found
            index += 1

    # --- the listing ----------------------------------------------------------------------------------------

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        creds = self.creds()
        walk = Walk.of(cursor, since, self.clock())
        if cursor is None:
            self._probe(walk, creds)
        objects, total = self._list("media", "list", walk.filter(creds))
        links = self._links([str(e["id"]) for e in objects if is_entry_id(e.get("id"))])
        walk.check(objects, creds, links)
        page = Page()
        if total is not None:
            page.remaining = max(0, total - len(objects))
        self._place_all(page, objects, tracks, links)
        following = walk.next(objects)
        page.cursor = following.cursor() if following else None
        return page

    def _probe(self, walk: Walk, creds: Credentials) -> None:
        """The filters whose neglect no answer of the walk would show: `statusIn` and `moderationStatusIn` (ignored,
        media.list answers READY approved entries only, and those it hides are never listed). Asked once each
        with only the values Kaltura's defaults hide: an entry answered outside them proves the field ignored."""
        for name, key, hidden in (
            ("statusIn", "status", STATUSES_HIDDEN),
            ("moderationStatusIn", "moderationStatus", "1,3,5"),
        ):
            allowed = {int(v) for v in hidden.split(",")}
            pager = {"objectType": "KalturaFilterPager", "pageSize": 1, "pageIndex": 1}
            body = mapping(self.api("media", "list", {"filter": {**walk.filter(creds), name: hidden}, "pager": pager}))
            if any(number(mapping(e).get(key)) not in allowed for e in entries(body.get("objects"))):
                raise FilterIgnored(
                    f"kaltura: media.list answered an entry outside the filter {name}: Kaltura ignores a filter field"
                    " it does not support, and without this one the entries it hides by default (not READY, or not"
                    " approved in moderation) would never be listed; the listing stops"
                )

    def video(self, video_id: str, tracks: bool = True) -> Page:
        """One entry by id (`media.get`): its row, why it is unfetchable, pending again, or empty when gone."""
        page = Page()
        entry = self._entry(video_id)
        if entry is not None:
            self._place_all(page, [entry], tracks)
        return page

    def _entry(self, entry_id: str) -> dict | None:
        if not is_entry_id(entry_id):
            return None
        try:
            return mapping(self.api("media", "get", {"entryId": entry_id}))
        except KalturaError as exc:
            if exc.code == "ENTRY_ID_NOT_FOUND":
                return None
            raise

    def _place_all(self, page: Page, objects: list[dict], tracks: bool, links: dict[str, set[int]] | None = None):
        videos = [e for e in objects if is_entry_id(e.get("id")) and number(e.get("mediaType")) != IMAGE]
        page.skipped += len(objects) - len(videos)
        for entry in objects:
            page.saw(number(entry.get("updatedAt")) or number(entry.get("createdAt")))
        ready = [e for e in videos if number(e.get("status")) == READY and number(e.get("mediaType")) == VIDEO]
        looked = self._lookups([str(e["id"]) for e in ready], tracks)
        looked.links = links if links is not None else self._links([str(e["id"]) for e in ready])
        self._read_categories(ready, looked.links)
        for entry in videos:
            self._place(page, entry, looked, tracks)

    def _lookups(self, ids: list[str], tracks: bool) -> Lookups:
        looked = Lookups()
        for start in range(0, len(ids), CHUNK):
            chunk = {"entryIdIn": ",".join(ids[start : start + CHUNK])}
            for flavor in self._all("flavorAsset", {"objectType": "KalturaFlavorAssetFilter", **chunk}):
                looked.flavors.setdefault(str(flavor.get("entryId")), []).append(flavor)
            if tracks:
                for caption in self._all("caption_captionasset", {"objectType": "KalturaCaptionAssetFilter", **chunk}):
                    looked.captions.setdefault(str(caption.get("entryId")), []).append(caption)
                self._extras(ids[start : start + CHUNK], looked)
        return looked

    def _extras(self, ids: list[str], looked: Lookups) -> None:
        """The chunk's default thumb assets and chapters (kaltura_extras.py), a list call each."""
        looked.thumbs.update(default_thumbs(self._all("thumbAsset", thumb_filter(ids))))
        chapters = chapters_by_entry(self._all("cuepoint_cuepoint", chapter_filter(ids)), ids)
        looked.chapters.update(chapters or {})

    def _place(self, page: Page, entry: dict, looked: Lookups, tracks: bool) -> None:
        eid, title = str(entry["id"]), entry.get("name")
        ref = self.ref(eid)
        reason, waiting = why_not(entry)
        if not reason and not waiting:
            flavor, note = source_flavor(looked.flavors.get(eid, []))
            if flavor is None:
                reason, waiting = (None, FLAVORS_PROCESSING) if note == "working" else (note, None)
        if not reason and not waiting and tracks:
            waiting = captions_waiting(looked.captions.get(eid, []))
        if waiting:
            page.pending.append(unfetchable(self.platform, eid, ref, waiting, title))
        elif reason:
            page.entries.append(unfetchable(self.platform, eid, ref, reason, title))
        else:
            page.entries.append(self._row(entry, looked, tracks))

    def _row(self, entry: dict, looked: Lookups, tracks: bool):
        eid = str(entry["id"])
        flavor, note = source_flavor(looked.flavors.get(eid, []))
        categories = self._categories_for(entry, looked.links)
        privacy, privacy_note = privacy_of(entry, categories, self._restricted(entry), self.clock())
        names = [text(c.get("fullName")) for c in categories if c and text(c.get("fullName"))]
        extra: dict = {"categories": names[:20]} if names else {}
        if privacy_note:
            extra["privacy_note"] = privacy_note
        schedule = schedule_metadata(entry)
        if schedule:
            extra["schedule"] = schedule
        if note:
            extra["source_flavor"] = note
        for key, name in (("referenceId", "reference_id"), ("userId", "user_id")):
            if text(entry.get(key)):
                extra[name] = entry[key][:200]
        ms = number(entry.get("msDuration"))
        thumb = thumb_ref_item(entry, looked.thumbs.get(eid))
        return make_row(
            self.platform,
            eid,
            self.ref(eid),
            title=entry.get("name"),
            description=entry.get("description"),
            tags=[t.strip() for t in (text(entry.get("tags")) or "").split(",")],
            created_at=number(entry.get("createdAt")),
            duration_s=ms / 1000 if ms else number(entry.get("duration")),
            size_bytes=flavor_bytes(flavor),
            privacy=privacy,
            folder=names[0] if names else None,
            tracks=self._tracks(eid, looked.captions.get(eid, [])) if tracks else (),
            metadata=extra,
            thumbnail_url=self.ref(eid, THUMB_KIND, thumb) if thumb else None,
            chapters=looked.chapters.get(eid, []),
            collections=collections_of(categories_of(entry, looked.links), self._categories),
            published_at=published_at(entry, self.clock()),
            usage=kaltura_usage(entry, self.clock()),  # in the entry itself: no request of its own
        )

    def _tracks(self, eid: str, captions: list[dict]) -> list[TrackInfo]:
        found = []
        for caption in captions:
            cid = text(caption.get("id"))
            if not is_entry_id(cid) or number(caption.get("status")) != CAPTION_READY:
                continue
            language = text(caption.get("languageCode")) or text(caption.get("language"))
            label = caption.get("label") or caption.get("language")
            found.append(TrackInfo(self.ref(eid, "captions", cid), language, "captions", label, format="vtt"))
        return found

    # --- categories and access control, once per listing ----------------------------------------------------

    def _links(self, ids: list[str]) -> dict[str, set[int]]:
        """Each entry's ACTIVE categories as categoryEntry.list answers them: all the entries' in one call,
        paged; asked again in halves where the pages could not be read whole (the ceiling, or fewer links than
        `totalCount` said: the order shifted between pages)."""
        found: dict[str, set[int]] = {i: set() for i in ids}
        if not ids:
            return found
        filter_doc = {
            "objectType": "KalturaCategoryEntryFilter",
            "entryIdIn": ",".join(ids),
            "statusEqual": LINK_ACTIVE,
            "orderBy": "+createdAt",
        }
        read: dict[tuple[str, int | None], dict] = {}
        index, total, whole = 1, None, True
        while True:
            objects, count = self._list("categoryEntry", "list", filter_doc, index)
            outside = next((str(o.get("entryId")) for o in objects if str(o.get("entryId")) not in found), None)
            if outside is not None:  # checked at once: ignored, the filter would answer every link of the partner
                raise FilterIgnored(
                    f"kaltura: categoryEntry.list answered a link outside the filter entryIdIn (entry"
                    f" {outside[:20]}): Kaltura ignores a filter field it does not support, so the listing stops"
                )
            total = count if total is None else total
            read.update({(str(o.get("entryId")), number(o.get("categoryId"))): o for o in objects})
            if len(objects) < PAGE_SIZE or (total is not None and index * PAGE_SIZE >= total):
                break
            if index * PAGE_SIZE >= MAX_LISTED:
                whole = False
                break
            index += 1
        if (not whole or (total is not None and len(read) < total)) and len(ids) > 1:
            half = len(ids) // 2
            return {**self._links(ids[:half]), **self._links(ids[half:])}
        for (eid, cid), link in read.items():
            if cid is not None and cid > 0 and number(link.get("status")) == LINK_ACTIVE:
                found[eid].add(cid)
        return found

    def _read_categories(self, listed: Iterable[dict], links: Mapping[str, set[int]]) -> None:
        """The categories of these entries not read yet, read once each (`category.list` by `idIn`); None kept
        for one Kaltura does not answer (not visible to these credentials)."""
        if self.clock() - self._settings_read_at > SETTINGS_TTL_S:
            self._categories, self._restricting, self._settings_read_at = {}, None, self.clock()
        wanted: list[int] = []
        for entry in listed:
            wanted += [i for i in categories_of(entry, links) if i not in self._categories and i not in wanted]
        for start in range(0, len(wanted), PAGE_SIZE):
            chunk = wanted[start : start + PAGE_SIZE]
            filter_doc = {"objectType": "KalturaCategoryFilter", "idIn": ",".join(map(str, chunk))}
            answered = {number(c.get("id")): c for c in self._all("category", filter_doc)}
            self._categories.update({i: answered.get(i) for i in chunk})

    def _categories_for(self, entry: dict, links: Mapping[str, set[int]]) -> list[dict | None]:
        self._read_categories([entry], links)
        return [self._categories.get(i) for i in categories_of(entry, links)]

    def _restricted(self, entry: Mapping) -> bool:
        """Whether the entry's access control profile has rules (a site, country, IP or KS restriction)."""
        if self._restricting is None:
            profiles = self._all("accessControlProfile", {"objectType": "KalturaAccessControlProfileFilter"})
            self._restricting = {number(p.get("id")) or 0 for p in profiles if entries(p.get("rules"))}
        return number(entry.get("accessControlId")) in self._restricting

    # --- resolving ------------------------------------------------------------------------------------------

    def resolve(self, ref: SourceRef) -> Resolution:
        if ref.kind == THUMB_KIND:
            return self._thumbnail(ref)
        if ref.is_track:
            return self._caption(ref)
        entry = self._entry(ref.video_id)
        if entry is None:
            return Resolution.unfetchable(gone("Kaltura"))
        reason, waiting = why_not(entry)
        if reason:
            return Resolution.unfetchable(reason)
        if waiting:
            return Resolution.preparing(waiting, 60.0)
        flavors = self._all("flavorAsset", {"objectType": "KalturaFlavorAssetFilter", "entryIdEqual": ref.video_id})
        flavor, note = source_flavor(flavors)
        if flavor is None:
            if note == "working":
                return Resolution.preparing(FLAVORS_PROCESSING, 60.0)
            return Resolution.unfetchable(note or NO_FLAVOR)  # no flavor: always a note saying why
        categories = self._categories_for(entry, self._links([ref.video_id]))
        privacy = privacy_of(entry, categories, self._restricted(entry), self.clock())[0]
        try:
            url = text(self.api("flavorAsset", "getUrl", {"id": flavor["id"]}))
        except KalturaError as exc:
            if exc.code in ("FLAVOR_ASSET_ID_NOT_FOUND", "ENTRY_ID_NOT_FOUND"):
                return Resolution.unfetchable(gone("Kaltura"))
            if exc.code == "FLAVOR_ASSET_IS_NOT_READY":
                return Resolution.preparing(FLAVORS_PROCESSING, 60.0)
            raise
        if not url or not url.startswith(("https://", "http://")):
            return Resolution.unfetchable("Kaltura's flavorAsset.getUrl answered no download URL")
        expires = self.clock() + URL_KS_TTL_S if "/ks/" in url else None
        return Resolution.ready(url, expires_at=expires, privacy=privacy)

    def _thumbnail(self, ref: SourceRef) -> Resolution:
        """The thumb asset's download URL (`thumbAsset.getUrl`, minted now); the entry's default thumbnail now where
        the asset is gone or none was named, and its `thumbnailUrl` where it has no thumb asset at all."""
        eid, item = ref.video_id, ref.item or ""
        if not is_entry_id(eid) or not (item == DEFAULT_ITEM or is_entry_id(item)):
            return Resolution.unfetchable(f"not a Kaltura thumbnail reference: {ref}")
        if item != DEFAULT_ITEM:
            url = self._thumb_url(item)
            if url is not None:
                return url
        chosen = default_thumbs(self._all("thumbAsset", thumb_filter([eid]))).get(eid)
        url = self._thumb_url(chosen) if chosen else None
        if url is not None:
            return url
        entry = self._entry(eid)
        if entry is None:
            return Resolution.unfetchable(gone("Kaltura"))
        link = text(entry.get("thumbnailUrl"))
        if not link or not link.startswith(("https://", "http://")):
            return Resolution.unfetchable("the entry has no thumbnail at Kaltura any more")
        return Resolution.ready(link)

    def _thumb_url(self, asset: str) -> Resolution | None:
        """A thumb asset's download URL, or None where Kaltura has it no more (or not READY)."""
        try:
            url = text(self.api("thumbAsset", "getUrl", {"id": asset}))
        except KalturaError as exc:
            if exc.code in ("THUMB_ASSET_ID_NOT_FOUND", "THUMB_ASSET_IS_NOT_READY", "ENTRY_ID_NOT_FOUND"):
                return None
            raise
        if not url or not url.startswith(("https://", "http://")):
            return None
        return Resolution.ready(url, expires_at=self.clock() + URL_KS_TTL_S if "/ks/" in url else None)

    def _caption(self, ref: SourceRef) -> Resolution:
        """A caption's WebVTT as serveWebVTT makes it (segmentIndex -1: the whole file), up to the stack's cap."""
        if ref.kind != "captions" or not is_entry_id(ref.item):
            return Resolution.unfetchable(f"not a Kaltura caption reference: {ref}")
        for attempt in range(2):
            query = {"captionAssetId": ref.item, "segmentIndex": -1, "format": 1, "ks": self.session.ks(self.creds())}
            served = self.api_caption(f"{SERVE_WEBVTT}?{urlencode(query)}", "Kaltura")
            if served.text is None or served.text.lstrip("\ufeff").startswith("WEBVTT"):
                return served
            error = api_error(_json(served.text))
            if error and error[0] == "INVALID_KS" and attempt == 0:
                self.session.drop()
                continue
            if error and error[0] in ("CAPTION_ASSET_ID_NOT_FOUND", "ENTRY_ID_NOT_FOUND"):
                return Resolution.unfetchable(gone("Kaltura"))
            break
        return Resolution.unfetchable("Kaltura's serveWebVTT answered no WebVTT for the caption")


def _json(value: str) -> object:
    try:
        return json.loads(value)
    except ValueError:
        return None


def why_not(entry: Mapping) -> tuple[str | None, str | None]:
    """(why the entry can never be fetched, or why it must wait): (None, None) for an entry to carry."""
    media = number(entry.get("mediaType"))
    if media == AUDIO:
        return "an audio entry (Kaltura mediaType AUDIO): no video to migrate", None
    if media != VIDEO:
        return f"not a video entry (Kaltura mediaType {media if media is not None else '?'})", None
    status = number(entry.get("status"))
    if status == READY:
        return None, None
    if status in WORKING:
        return None, STILL_PROCESSING.format(state=WORKING[status], status=status)
    if status in FAILED:
        return FAILED[status], None
    shown = str(entry.get("status"))[:40]
    return f"Kaltura gives it an entry status this tool does not know ({shown})", None


def source_flavor(flavors: list[dict]) -> tuple[dict | None, str | None]:
    """The flavor to migrate and what the row says of it: the READY source flavor (no note), else the tallest
    READY flavor ("the source flavor was purged ..."); None with "working" while one is still being made, else
    None with why none can be had."""
    ready = [f for f in flavors if number(f.get("status")) == FLAVOR_READY and text(f.get("id"))]
    original = [f for f in ready if f.get("isOriginal") in (True, 1, "1", "true")]
    if original:
        return original[0], None
    if any(
        f.get("isOriginal") in (True, 1, "1", "true") and number(f.get("status")) in FLAVOR_WORKING for f in flavors
    ):
        return None, "working"
    if ready:
        tallest = max(ready, key=lambda f: (number(f.get("height")) or 0, number(f.get("bitrate")) or 0))
        height = number(tallest.get("height"))
        return tallest, (
            f"the source flavor is no longer at Kaltura (purged): the tallest flavor kept is carried"
            f" ({height or '?'}p, flavor {str(tallest['id'])[:20]})"
        )
    if any(number(f.get("status")) in FLAVOR_WORKING for f in flavors):
        return None, "working"
    return None, NO_FLAVOR


def flavor_bytes(flavor: Mapping | None) -> int | None:
    if not flavor:
        return None
    exact = number(flavor.get("sizeInBytes"))
    kb = number(flavor.get("size"))  # KalturaAsset.size: "The size (in KBytes)"; sizeInBytes "(in Bytes)"
    return exact if exact and exact > 0 else (kb * 1024 if kb and kb > 0 else None)


def captions_waiting(captions: list[dict]) -> str | None:
    for caption in captions:
        if number(caption.get("status")) in CAPTION_WORKING:
            label = text(caption.get("languageCode")) or text(caption.get("language")) or "?"
            return CAPTIONS_PROCESSING.format(language=label[:35])
    return None
