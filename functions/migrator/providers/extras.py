"""The facts a provider is handed and hands back for the extras (issue 42: thumbnails, chapters, collections), in our
terms; the operations that use them are on `Provider` (base.py, "--- extras"), each answering a TrackOutcome where
the call failed (VIDEO_GONE: the video is no longer there). Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass

from ..row_extras import Chapter


@dataclass(frozen=True)
class ThumbnailUpload:
    """A checked thumbnail image (extras.image_kind), and where a target that fetches by URL may take it from."""

    body: bytes
    media_type: str  # image/jpeg | image/png | image/webp
    suffix: str  # jpg | png | webp
    digest: str  # extras.digest of the body: what a target that keeps a marker records (api.video's metadata)
    url: str | None = None  # the source's own public https link, or a link to a copy staged in the stack's bucket


@dataclass(frozen=True)
class ThumbnailLook:
    """What the target's video says of its thumbnail, for the look before a set: `custom` when an earlier pass set
    ours (the video says its thumbnail is a custom one, or carries our marker of this very image)."""

    custom: bool = False
    digest: str | None = None  # our marker, where the target keeps one


@dataclass(frozen=True)
class ChaptersUpload:
    """A video's chapters, as a list and as the WebVTT file most targets take (extras.chapters_webvtt)."""

    chapters: tuple[Chapter, ...]
    webvtt: bytes
    language: str  # BCP 47: the chapters track's own, else the row's first caption's, else "en"
    duration_s: float | None = None  # where the last chapter ends, where the video's duration is known
    url: str | None = None  # a target that fetches the file by URL (Provider.chapters_by_url): a link to a staged copy


@dataclass(frozen=True)
class ChaptersLook:
    """The chapters the target's video holds, for the look before a write."""

    count: int = 0


@dataclass(frozen=True)
class RemoteCollection:
    """A collection at the target: its id and name."""

    remote_id: str
    name: str = ""
