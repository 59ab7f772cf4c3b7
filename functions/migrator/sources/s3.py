"""An S3 bucket (a prefix of it) as a source: its video objects, listed with ListObjectsV2.

- list: `ListObjectsV2(Bucket, Prefix, ContinuationToken, MaxKeys=1000,
  OptionalObjectAttributes=["RestoreStatus"])`; the continuation token is the cursor. S3 filters
  nothing by time, so a delta sweep lists everything and keeps what was modified since the mark
  (`LastModified`);
- a row: the id is `s3-` and a hash of bucket and key (the id `migrator load s3://...` has always
  given, so both ways of loading a bucket name an object alike), the key's file name as the title,
  `LastModified` as the creation time, `Size`; the source is `s3://bucket/key`, presigned by the
  uploader at hand-off (`presign.py`), so nothing can expire in the queue;
- unfetchable: a key that does not survive the trip through an s3:// URL ('?', '#', whitespace), and
  an archived object not restored. Objects that are not videos (by extension) and "directory" markers
  are skipped, not counted;
- what a viewer sees first (issue 42; sidecars.py): a sidecar image beside the object (`talk.mp4` and `talk.jpg`,
  `.jpeg`, `.png` or `.webp`) is its `thumbnail_url` (`s3://bucket/talk.jpg`, presigned when it is fetched), a
  `talk.chapters.vtt` its chapters track, and its folder (the key's prefix below the listed one) a collection of
  kind folder (id `<bucket>/<prefix>`): prefixes are the only structure a bucket has. The sidecars are read from
  the same listing; where a video's stem crosses the page's first or last key, that stem alone is listed again
  (`Prefix=<stem>.`), at most two requests a page. S3 has no publish time (LastModified is a write's).

Archived objects (the S3 User Guide, "Working with archived objects" and "Restoring an archived
object"): objects in the S3 Glacier Flexible Retrieval (GLACIER) and Glacier Deep Archive
(DEEP_ARCHIVE) storage classes, and objects of the INTELLIGENT_TIERING class in its Archive Access
and Deep Archive Access tiers, "are archived and are not accessible in real time"; GetObject on one
answers InvalidObjectState until it is restored (the API reference, GetObject). Glacier Instant
Retrieval (GLACIER_IR) and Intelligent-Tiering's Archive Instant Access tier are read at once. So:

- the storage class is in the listing (`StorageClass`), and so is a restore, when asked for:
  ListObjectsV2's `RestoreStatus` (the API reference, RestoreStatus) is absent when the object "hasn't
  been restored", `IsRestoreInProgress` true while it is, false (with `RestoreExpiryDate`, for a
  temporary copy) once it has been. A restored object is listed as a row, one being restored or not
  restored is unfetchable, each with its reason and how to go on;
- an Intelligent-Tiering object's access tier is not in the listing: HeadObject tells it, in
  `x-amz-archive-status` (`ArchiveStatus`: ARCHIVE_ACCESS or DEEP_ARCHIVE_ACCESS, absent in the other
  tiers), and `x-amz-restore` (`Restore`: `ongoing-request="true"` while a restore runs, "false" once
  it is done). So each Intelligent-Tiering video object the listing does not already say is restored
  costs one HeadObject (HEAD_WORKERS at a time), which needs s3:GetObject on it: a refusal stops the
  listing with that reason rather than sending objects whose GET may fail. Restoring one moves it back
  to the Frequent Access tier ("Restoring an archived object"; its RestoreObject takes no `Days`:
  "restore requests for S3 Intelligent-Tiering objects don't accept the days value", "Working with
  archived objects"), in hours; listing again afterwards finds it (without --since: a restore changes
  no LastModified). S3 Inventory reports every object's tier in one file: for a bucket of millions of
  Intelligent-Tiering objects, cheaper than a HeadObject each (not read here).
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

from ..messages import MAX_TITLE_LENGTH
from .base import Page, Resolution, Source, SourceError, SourceRef, Unfetchable, gone
from .rows import CollectionInfo, TrackInfo, make_row
from .sidecars import NO_SIDECARS, SidecarIndex, Sidecars, boundary_stems, folder_collection

VIDEO_EXTENSIONS = frozenset(
    ("mp4", "mov", "m4v", "mkv", "webm", "avi", "mpg", "mpeg", "ts", "mts", "m2ts", "mxf", "flv", "wmv", "3gp", "ogv")
)
ARCHIVED_CLASSES = frozenset({"GLACIER", "DEEP_ARCHIVE"})
TIERED_CLASS = "INTELLIGENT_TIERING"
# HeadObject's x-amz-archive-status values, as the S3 User Guide names the tiers, and how long a Standard
# restore takes from each ("Understanding archive retrieval options").
ARCHIVE_TIERS = {
    "ARCHIVE_ACCESS": ("Archive Access", "3-5 hours"),
    "DEEP_ARCHIVE_ACCESS": ("Deep Archive Access", "up to 12 hours"),
}
CLASS_RESTORE_TIMES = {"GLACIER": "3-5 hours", "DEEP_ARCHIVE": "up to 12 hours"}
MAX_KEYS = 1000
HEAD_WORKERS = 8
_NOT_TEXT = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_GONE = frozenset({"404", "NoSuchKey", "NotFound"})
AGAIN = "list the bucket again (without --since: a restore changes no LastModified)"


def s3_asset_id(bucket: str, key: str) -> str:
    """A stable asset id for an S3 object: the same bucket and key always give the same id."""
    return "s3-" + hashlib.sha256(f"{bucket}/{key}".encode()).hexdigest()[:32]


def is_video_key(key: str) -> bool:
    name = posixpath.basename(key)
    _, dot, ext = name.rpartition(".")
    return bool(dot) and ext.lower() in VIDEO_EXTENSIONS


def key_problem(bucket: str, key: str) -> str | None:
    """Why `key` cannot travel as s3://bucket/key: the uploader reads the key back as the URL's path, and
    a key that does not survive that trip (a '?' or '#', a leading '/', whitespace) would be presigned as
    another object."""
    parts = urlsplit(f"s3://{bucket}/{key}")
    if parts.netloc != bucket or parts.path.lstrip("/") != key or _NOT_TEXT.search(key) or re.search(r"\s", key):
        shown = repr(key if len(key) <= 80 else key[:80] + "…")
        return f"key {shown} cannot be carried as an s3:// source_url ('?', '#', whitespace)"
    return None


# --- what the listing and HeadObject say of an archived object -------------------------------------


def restore_state(obj: dict) -> str | None:
    """ListObjectsV2's RestoreStatus: "restored", "restoring", or None when no restore was asked for."""
    status = obj.get("RestoreStatus")
    if not isinstance(status, dict) or "IsRestoreInProgress" not in status:
        return None
    return "restoring" if status["IsRestoreInProgress"] is True else "restored"


def head_restore_state(head: dict) -> str | None:
    """HeadObject's x-amz-restore (`ongoing-request="true"` / "false"), as restore_state says it."""
    restore = head.get("Restore")
    if not isinstance(restore, str):
        return None
    if 'ongoing-request="true"' in restore:
        return "restoring"
    return "restored" if 'ongoing-request="false"' in restore else None


def class_problem(obj: dict) -> str | None:
    """Why the listing says an object cannot be read now: a GLACIER or DEEP_ARCHIVE one not restored, an
    Intelligent-Tiering one being restored (None: another class, restored, or a tier only HeadObject tells)."""
    storage, state = obj.get("StorageClass"), restore_state(obj)
    if storage == TIERED_CLASS and state == "restoring":
        return restoring("an S3 Intelligent-Tiering archive tier", "3-5 hours, or up to 12 from Deep Archive Access,")
    if storage not in ARCHIVED_CLASSES:
        return None
    if state == "restored":
        return None
    where, hours = f"S3 {storage}", CLASS_RESTORE_TIMES[storage]
    if state == "restoring":
        return restoring(where, hours)
    request = "RestoreObject with Days, e.g. aws s3api restore-object --bucket B --key K --restore-request Days=7"
    return f"archived in {where}: restore a copy first ({request}; {hours} at the Standard tier), then {AGAIN}"


def tier_problem(head: dict) -> str | None:
    """Why an INTELLIGENT_TIERING object cannot be read now, from its HeadObject answer (None: it can)."""
    tier = ARCHIVE_TIERS.get(head.get("ArchiveStatus") or "")
    state = head_restore_state(head)
    if tier is None or state == "restored":
        return None
    where, hours = f"the S3 Intelligent-Tiering {tier[0]} tier", tier[1]
    if state == "restoring":
        return restoring(where, hours)
    request = "RestoreObject without Days, e.g. aws s3api restore-object --bucket B --key K --restore-request '{}'"
    return f"archived in {where}: restore it first ({request}; {hours} at the Standard tier), then {AGAIN}"


def restoring(where: str, hours: str) -> str:
    return f"being restored from {where} (a restore takes {hours} at the Standard tier): once it is done, {AGAIN}"


# --- what a viewer sees first ----------------------------------------------------------------------------


def sidecar_fields(
    bucket: str, key: str, prefix: str, sidecars: Sidecars
) -> tuple[str | None, list[TrackInfo], list[CollectionInfo]]:
    """The row's thumbnail_url, chapters track and folder collection for object `key` listed under `prefix`: each
    sidecar as its s3:// URL (presigned when it is fetched), where its key travels as one."""

    def url(name: str | None) -> str | None:
        return f"s3://{bucket}/{name}" if name and key_problem(bucket, name) is None else None

    chapters = url(sidecars.chapters)
    tracks = [TrackInfo(chapters, None, "chapters", "Chapters", format="vtt")] if chapters else []
    folder = folder_collection(bucket, key, prefix)
    collections = [CollectionInfo(folder[0], folder[1], "folder")] if folder else []
    return url(sidecars.image), tracks, collections


# --- the source --------------------------------------------------------------------------------------


class S3Source(Source):
    """`s3://bucket/prefix`, read with `client` (boto3's S3 client, the operator's credentials)."""

    platform = "s3"

    def __init__(self, client, bucket: str, prefix: str = "", head_workers: int = HEAD_WORKERS):
        super().__init__()
        self.client, self.bucket, self.prefix = client, bucket, prefix
        self.head_workers = max(1, head_workers)

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        # RestoreStatus is listed only when asked for: whether an archived object has been restored.
        kwargs = {"Bucket": self.bucket, "Prefix": self.prefix, "MaxKeys": MAX_KEYS}
        kwargs["OptionalObjectAttributes"] = ["RestoreStatus"]
        if cursor:
            kwargs["ContinuationToken"] = cursor
        answer = self._list(**kwargs)
        page, listed = Page(), []
        index = SidecarIndex()
        for obj in answer.get("Contents", []):
            page.listed += 1
            key = obj.get("Key", "")
            index.add(key)
            if key.endswith("/") or not is_video_key(key):
                page.skipped += 1
                continue
            modified = obj.get("LastModified")
            when = modified.timestamp() if hasattr(modified, "timestamp") else None
            if since is not None and when is not None and when < since:
                continue
            page.saw(when)
            listed.append((key, obj, when))
        tiers = self._tiers([key for key, obj, _ in listed if self._needs_head(key, obj)])
        keys = [obj.get("Key", "") for obj in answer.get("Contents", [])]
        more = bool(answer.get("IsTruncated") and answer.get("NextContinuationToken"))
        first, last = (keys[0], keys[-1]) if keys else (None, None)
        rows = [k for k, obj, _ in listed if not (tiers.get(k) or key_problem(self.bucket, k) or class_problem(obj))]
        for stem in boundary_stems(rows, first, last, before=cursor is not None, after=more):
            index.add_all(self._names(stem + "."))
        page.entries = [self.entry(key, obj, when, tiers.get(key), index.of(key)) for key, obj, when in listed]
        if more:
            page.cursor = answer["NextContinuationToken"]
        return page

    def _names(self, prefix: str) -> list[str]:
        """The keys under `prefix` within the listed one (a video's stem, its sidecars looked up past a page)."""
        if not prefix.startswith(self.prefix):
            return []
        answer = self._list(Bucket=self.bucket, Prefix=prefix, MaxKeys=MAX_KEYS)
        return [str(obj.get("Key", "")) for obj in answer.get("Contents", [])]

    def entry(
        self,
        key: str,
        obj: dict | None = None,
        modified: float | None = None,
        tier: str | None = None,
        sidecars: Sidecars = NO_SIDECARS,
    ):
        """The row (or Unfetchable) for one video object; `tier`: why its access tier keeps it from being read;
        `sidecars`: its poster image and chapters file beside it."""
        obj = obj or {}
        source_url = f"s3://{self.bucket}/{key}"
        asset_id = s3_asset_id(self.bucket, key)
        title = posixpath.basename(key)[:MAX_TITLE_LENGTH]
        problem = key_problem(self.bucket, key)
        if problem:
            return Unfetchable(asset_id, source_url, problem, title if not _NOT_TEXT.search(title) else None)
        reason = tier or class_problem(obj)
        if reason:
            return Unfetchable(asset_id, source_url, reason, title)
        thumbnail, tracks, collections = sidecar_fields(self.bucket, key, self.prefix, sidecars)
        return make_row(
            "s3",
            key,
            source_url,
            title=title,
            created_at=modified,
            size_bytes=obj.get("Size"),
            metadata={"s3_bucket": self.bucket, "s3_key": key},
            asset_id=asset_id,
            thumbnail_url=thumbnail,
            tracks=tracks,
            collections=collections,
        )

    def _needs_head(self, key: str, obj: dict) -> bool:
        """An Intelligent-Tiering object the listing does not say is restored: only HeadObject tells its tier."""
        tiered = obj.get("StorageClass") == TIERED_CLASS and restore_state(obj) is None
        return tiered and not key_problem(self.bucket, key)

    def _tiers(self, keys: list[str]) -> dict[str, str]:
        """key -> why it cannot be read now, for those of `keys` HeadObject says are archived (or gone)."""
        if not keys:
            return {}
        if self.head_workers == 1 or len(keys) == 1:
            found = [self._tier(key) for key in keys]
        else:
            with ThreadPoolExecutor(max_workers=min(self.head_workers, len(keys))) as pool:
                found = list(pool.map(self._tier, keys))
        self.requests += len(keys)
        return {key: reason for key, reason in zip(keys, found, strict=True) if reason}

    def _tier(self, key: str) -> str | None:
        from botocore.exceptions import BotoCoreError, ClientError

        what = f"cannot read the access tier of s3://{self.bucket}/{key} (HeadObject"
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code"))
            if code in _GONE:  # deleted since the listing
                return gone("S3")
            needs = ", which needs s3:GetObject on the object" if code in ("403", "AccessDenied") else ""
            raise SourceError(f"s3: {what}{needs}): {code}") from None
        except BotoCoreError as exc:
            raise SourceError(f"s3: {what}): {type(exc).__name__}") from None
        return tier_problem(head)

    def _list(self, **kwargs) -> dict:
        from botocore.exceptions import BotoCoreError, ClientError

        self.requests += 1
        try:
            return self.client.list_objects_v2(**kwargs)
        except ClientError as exc:
            error = exc.response.get("Error", {})
            raise SourceError(f"s3: cannot list s3://{self.bucket}/{self.prefix}: {error.get('Code')}") from None
        except BotoCoreError as exc:
            raise SourceError(f"s3: cannot list s3://{self.bucket}/{self.prefix}: {type(exc).__name__}") from None

    def resolve(self, ref: SourceRef) -> Resolution:
        # s3:// sources are no source references: the uploader presigns them (presign.S3Presigner).
        return Resolution.unfetchable(f"not an s3 source reference: {ref}")
