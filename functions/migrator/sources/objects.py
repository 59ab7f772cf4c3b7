"""What the object-store sources (Google Cloud Storage, Azure Blob Storage) share: which objects are videos, the
stable id an object is known by, and the row one becomes.

An object store holds files, not videos: an object is taken as a video when its Content-Type says so
(`video/*`), or when its Content-Type says nothing (absent, `application/octet-stream`, what a plain upload
gets) and its name ends in a video extension (the S3 source's list). Anything else is no video at all (a
thumbnail, a manifest, a folder placeholder) and is skipped, not counted, as the S3 source does; but an object
*named* as a video and stored with another specific Content-Type is named unfetchable with that reason, since a
target would be handed a file its own type check refuses.

Titles, descriptions and tags come from the object's user metadata where it has them (`title`,
`description`, `tags` comma-separated, any case: Azure's metadata names are case-insensitive), else the title
is the file name. An object is private (its store serves it to no one without a signature), so its row says
so: the create is never made wider than the source.

What a viewer sees first (issue 42; sidecars.py): a sidecar image beside the object is its `thumbnail_url` and a
`<stem>.chapters.vtt` its chapters track, each as the store's own reference to that object (`gcs://bucket/...`,
`azure://account/container/...`, signed when it is fetched, as a video is); the folder below the listed prefix
is a collection of kind folder. A store keeps no publish time (its times are writes).
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Callable, Mapping

from ..messages import MAX_TITLE_LENGTH
from ..providers.facts import CredentialsError
from .base import Entry, HttpSource, Page, SourceDenied, Unfetchable
from .rows import CollectionInfo, TrackInfo, make_row
from .s3 import is_video_key
from .sidecars import NO_SIDECARS, Sidecars, folder_collection

SKIP = "skip"  # sort_object: no video at all
GENERIC_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream"})


def settings_of[T](source: HttpSource, parse: Callable[[Mapping], T]) -> T:
    """The store's settings from `source.credentials()` (read per request); SourceDenied, naming no value, when they
    are missing or malformed."""
    try:
        creds = source.credentials()
        if not creds:
            raise CredentialsError(f"no {source.platform} credentials are configured (the source credentials secret)")
        return parse(creds)
    except CredentialsError as exc:
        raise SourceDenied(str(exc)) from None


def object_asset_id(platform: str, path: str) -> str:
    """A stable asset id for an object: `<platform>-` and a hash of its whole path (names run to 1,024 bytes,
    ids to 255 characters), as the S3 source does."""
    return f"{platform}-" + hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def sort_object(name: str, content_type: object) -> str | None:
    """None for a video; SKIP for an object that is no video at all; else why an object named as a video
    cannot be taken as one."""
    if name.endswith("/"):
        return SKIP
    media = content_type.split(";")[0].strip().lower() if isinstance(content_type, str) else ""
    if media.startswith("video/"):
        return None
    named = is_video_key(name)
    if media in GENERIC_TYPES:
        return None if named else SKIP
    if named:
        return (
            f"named as a video but stored with Content-Type {media[:60]}, not a video: set the object's"
            " Content-Type to the video's (video/mp4, video/quicktime, ...), then list again"
        )
    return SKIP


def listed(page: Page, name: str | None, content_type: object, modified: float | None, since: float | None) -> bool:
    """Whether a listed object goes on to its entry: not when it is no video (counted as skipped) or has not
    changed since a delta sweep's mark; the newest change is noted on `page` either way it goes on."""
    page.listed += 1
    if not name or sort_object(name, content_type) == SKIP:
        page.skipped += 1
        return False
    if since is not None and modified is not None and modified < since:
        return False
    page.saw(modified)
    return True


def user_field(metadata: Mapping, *names: str) -> str | None:
    """A user-metadata value by name, any case (the first of `names` present)."""
    lowered = {str(k).lower(): v for k, v in metadata.items() if isinstance(v, str)}
    return next((lowered[n] for n in names if lowered.get(n, "").strip()), None)


def object_row(
    platform: str,
    path: str,
    ref: str,
    name: str,
    prefix: str,
    *,
    metadata: Mapping,
    created_at: object,
    size_bytes: object,
    extra: Mapping,
    sidecars: Sidecars = NO_SIDECARS,
    ref_of: Callable[[str], str] | None = None,
) -> Entry:
    """The row of one video object at `path` (its store's whole path, the id's source), `name` within its
    bucket or container, listed under `prefix` (its folder is the rest of its directory); `sidecars` beside it,
    each referred to as `ref_of(its name)` says."""
    tags = user_field(metadata, "tags", "keywords")
    folder = posixpath.dirname(name[len(prefix) :] if name.startswith(prefix) else name).strip("/")
    store = path[: len(path) - len(name)]
    held = folder_collection(store, name, prefix)
    chapters = ref_of(sidecars.chapters) if ref_of and sidecars.chapters else None
    return make_row(
        platform,
        path,
        ref,
        title=user_field(metadata, "title") or posixpath.basename(name),
        description=user_field(metadata, "description"),
        tags=[t.strip() for t in tags.split(",")] if tags else (),
        created_at=created_at,
        size_bytes=size_bytes,
        privacy="private",
        folder=folder or None,
        metadata={"source_platform": platform, "source_id": path, **extra},
        asset_id=object_asset_id(platform, path),
        thumbnail_url=ref_of(sidecars.image) if ref_of and sidecars.image else None,
        tracks=[TrackInfo(chapters, None, "chapters", "Chapters", format="vtt")] if chapters else (),
        collections=[CollectionInfo(held[0], held[1], "folder")] if held else (),
    )


def object_unfetchable(platform: str, path: str, ref: str, name: str, reason: str) -> Unfetchable:
    return Unfetchable(object_asset_id(platform, path), ref, reason, posixpath.basename(name)[:MAX_TITLE_LENGTH])
