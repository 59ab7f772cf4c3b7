"""What a viewer sees besides the video and its captions (issue 42): the row's thumbnail, chapters and collections
as entries of the item's `track_states`, beside its caption tracks, and the small pure checks they need.

Every extra is one entry of the map, with its `kind` (an entry without one is a caption track, as items armed
by 0.3.0 and before have them), so the claim, the lease, the fenced writes, the retries and waits, reconcile's
tracks lane and `migrator retry --tracks` are the caption tracks' own:

- `thumbnail` (kind thumbnail): the row's `thumbnail_url`, checked (`image_kind`) and set where the target takes
  an image; where it takes a frame time only, the row's poster time is set and the image kept in the stack's
  bucket (`noted`); a row with a poster time and no image arms it too on a target that picks the frame by a
  call after the create (api.video: `ExtrasFacts.poster_time_later`);
- `chapters` (kind chapters): the row's inline `chapters`, else its first `chapters` track (a WebVTT file read
  here: `read_chapters`); another chapters track of the row is `noted` (one list a video);
- `collection:<collection key>` (kind collection), one per collection the row names: the video's place in it.
  The collection itself is a ledger item of its own (`ledger/collections.py`), made once whatever the races.
  A target without collections notes each membership with what it does instead; one that keeps a video in
  a single collection (Bunny) places it in the row's first and notes the rest.

`noted` is settled: the target cannot carry the thing as the row has it, and the entry's `note` says what was
done instead. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import io
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from .messages import MAX_DURATION_S, SOURCE_PLATFORMS, AssetMessage, Track, track_key
from .row_extras import Chapter, Collection, Refused, parse_chapters

CAPTION, THUMBNAIL, CHAPTERS, COLLECTION = "caption", "thumbnail", "chapters", "collection"
KINDS = (CAPTION, THUMBNAIL, CHAPTERS, COLLECTION)
THUMBNAIL_KEY, CHAPTERS_KEY, COLLECTION_PREFIX = "thumbnail", "chapters", "collection:"
# A track of this kind is a chapters file (messages.TRACK_KINDS), read into a chapters list, never a caption.
CHAPTERS_TRACK = "chapters"
# A thumbnail image is taken up to this size: the largest any target documents (api.video's is 8 MiB, checked
# by its provider: Provider.thumbnail_max_bytes).
MAX_IMAGE_BYTES = 10 * 1024 * 1024
# A side longer than this, in pixels, is no poster image (and a decoder bomb at the target).
MAX_IMAGE_SIDE = 16_384
# The frame a target that takes only a time is given when the row names none: a few seconds in, past a fade from
# black, within the shortest video (clamped to half the duration where it is known).
DEFAULT_POSTER_TIME_S = 5.0
# Where the stack's bucket keeps what a target could not take (never expired), and hands a file to a target that
# fetches by URL (expired after a day, as staged captions are: template.yaml's StagingBucket rules).
KEPT_PREFIX, HANDOFF_PREFIX = "kept", "handoff"


def entry_kind(entry: Mapping | None) -> str:
    """An entry's kind: its own where it says one we know, else a caption track (0.3.0's entries have none)."""
    kind = entry.get("kind") if isinstance(entry, Mapping) else None
    return kind if kind in KINDS else CAPTION


def collection_key(platform: str, collection_id: str) -> str:
    """A collection's key in the ledger: a short stable hash of the source platform and its id there."""
    return hashlib.sha256(f"{platform}\n{collection_id}".encode()).hexdigest()[:16]


def collection_entry_key(key: str) -> str:
    return f"{COLLECTION_PREFIX}{key}"


def source_platform(source_url: str) -> str:
    """The platform a row's collections belong to: its source reference's scheme (`vimeo://`), the object store's
    (`s3`), else `inventory` (an https row: the collection ids are the operator's own)."""
    scheme = urlsplit(source_url).scheme.lower() if isinstance(source_url, str) else ""
    return scheme if scheme in (*SOURCE_PLATFORMS, "s3") else "inventory"


@dataclass(frozen=True)
class ExtrasFacts:
    """What a target does with each extra (its Provider's class facts), for arming."""

    provider: str
    takes_thumbnail: str | None = None  # "image" | "time" | None
    poster_time_later: bool = False  # the row's poster time is set by a call after the create (api.video's pick)
    takes_chapters: bool = False
    takes_collections: bool = False
    one_collection_per_video: bool = False
    collections_instead: str = "kept in the ledger only"


@dataclass(frozen=True)
class Extra:
    """One extra of a row, as the tracks worker works it: its entry's key and kind, and what it is made from."""

    key: str
    kind: str
    url: str | None = None  # the thumbnail's image (https, s3:// or a source reference)
    poster_time_s: float | None = None  # the thumbnail as a frame time, where the row has no image
    chapters: tuple[Chapter, ...] = ()  # inline chapters
    track: Track | None = None  # a chapters file
    collection: Collection | None = None
    platform: str = ""  # the collections' source platform
    surplus: str | None = None  # why this one is not carried (a second chapters list): noted at arming

    @property
    def collection_key(self) -> str:
        return collection_key(self.platform, self.collection.id) if self.collection else ""


def extras_of(msg: AssetMessage | None, poster_time_later: bool = False) -> list[Extra]:
    """The row's extras in the order they are worked: the thumbnail, the chapters (and any chapters list past the
    first), the collections in the row's order."""
    if msg is None:
        return []
    out: list[Extra] = []
    if msg.thumbnail_url:
        out.append(Extra(THUMBNAIL_KEY, THUMBNAIL, url=msg.thumbnail_url, poster_time_s=msg.poster_time_s))
    elif msg.poster_time_s is not None and poster_time_later:
        out.append(Extra(THUMBNAIL_KEY, THUMBNAIL, poster_time_s=msg.poster_time_s))
    files = [t for t in msg.tracks if t.kind == CHAPTERS_TRACK]
    if msg.chapters:
        out.append(Extra(CHAPTERS_KEY, CHAPTERS, chapters=msg.chapters))
        carried = "the row's own chapters list"
    elif files:
        out.append(Extra(CHAPTERS_KEY, CHAPTERS, track=files[0]))
        carried, files = f"its chapters track {track_key(files[0])}", files[1:]
    for track in files:
        why = f"one chapters list a video: {carried} is the one carried"
        out.append(Extra(track_key(track), CHAPTERS, track=track, surplus=why))
    platform = source_platform(msg.source_url)
    for collection in msg.collections:
        key = collection_entry_key(collection_key(platform, collection.id))
        out.append(Extra(key, COLLECTION, collection=collection, platform=platform))
    return out


def extra_entries(extras: Iterable[Extra], facts: ExtrasFacts, now: float) -> dict[str, dict]:
    """The entries the row's extras start with for a new provider video: pending, or noted with why where the
    target cannot carry them as the row has them."""
    entries: dict[str, dict] = {}
    first_collection: Collection | None = None
    for extra in extras:
        entry: dict = {"state": "pending", "kind": extra.kind, "attempts": 0, "updated_at": now}
        note = extra.surplus
        if extra.kind == COLLECTION and extra.collection is not None:
            entry["collection"] = extra.collection_key
            if not facts.takes_collections:
                note = f"{facts.provider} keeps no collections: {facts.collections_instead}"
            elif facts.one_collection_per_video and first_collection is not None:
                note = (
                    f"{facts.provider} keeps a video in one collection only: it is placed in"
                    f" {first_collection.name[:80]!r}, the row's first"
                )
            else:
                first_collection = first_collection or extra.collection
        if note:
            entry |= {"state": "noted", "note": note}
        entries[extra.key] = entry
    return entries


def needs_extras(msg: AssetMessage | None) -> bool:
    """Whether a row has anything for the tracks worker besides caption tracks."""
    return bool(msg is not None and (msg.thumbnail_url or msg.chapters or msg.collections))


def item_needs_extras(item: Mapping | None) -> bool:
    """The same, of a ledger item (which keeps the row's fields under their names)."""
    return bool(item and (item.get("thumbnail_url") or item.get("chapters") or item.get("collections")))


# --- thumbnails ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Image:
    """A checked image: its kind, media type, file suffix and size in pixels where it was cheap to read."""

    kind: str  # jpeg | png | webp
    media_type: str
    suffix: str
    width: int | None = None
    height: int | None = None


_IMAGES = {"jpeg": ("image/jpeg", "jpg"), "png": ("image/png", "png"), "webp": ("image/webp", "webp")}


def image_kind(body: bytes, max_bytes: int = MAX_IMAGE_BYTES) -> Image | str:
    """The image `body` is (JPEG, PNG or WebP, told by its magic bytes, never its name), or why it is not one a
    target takes: another kind, empty, too large, a side of 0 or past MAX_IMAGE_SIDE where its header says."""
    if not body:
        return "the image is empty"
    if len(body) > max_bytes:
        return f"the image is {len(body):,} bytes, over the {max_bytes:,} allowed"
    if body[:3] == b"\xff\xd8\xff":
        kind, size = "jpeg", _jpeg_size(body)
    elif body[:8] == b"\x89PNG\r\n\x1a\n":
        kind, size = "png", struct.unpack(">II", body[16:24]) if len(body) >= 24 and body[12:16] == b"IHDR" else None
    elif body[:4] == b"RIFF" and body[8:12] == b"WEBP":
        kind, size = "webp", _webp_size(body)
    else:
        return "not a JPEG, PNG or WebP image (its first bytes say otherwise)"
    if size is not None and not all(0 < side <= MAX_IMAGE_SIDE for side in size):
        return f"the image is {size[0]}x{size[1]} pixels: a side is 0 or over {MAX_IMAGE_SIDE:,}"
    media_type, suffix = _IMAGES[kind]
    return Image(kind, media_type, suffix, *(size or (None, None)))


def _jpeg_size(body: bytes) -> tuple[int, int] | None:
    """(width, height) from the first start-of-frame marker, walking the segments; None where it is not found
    within the first 64 KiB (a header that long is not worth reading further)."""
    at, end = 2, min(len(body), 64 * 1024)
    while at + 9 <= end:
        if body[at] != 0xFF:
            return None
        marker = body[at + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length: SOI, TEM, RSTn
            at += 2
            continue
        length = int.from_bytes(body[at + 2 : at + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # SOFn
            height, width = struct.unpack(">HH", body[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None


def _webp_size(body: bytes) -> tuple[int, int] | None:
    chunk = body[12:16]
    if chunk == b"VP8X" and len(body) >= 30:
        return 1 + int.from_bytes(body[24:27], "little"), 1 + int.from_bytes(body[27:30], "little")
    if chunk == b"VP8 " and len(body) >= 30:
        width, height = struct.unpack("<HH", body[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(body) >= 25:
        bits = int.from_bytes(body[21:25], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    return None


def digest(body: bytes) -> str:
    """A short fingerprint of a file, to tell ours at the target where it keeps one (api.video's metadata)."""
    return hashlib.sha256(body).hexdigest()[:16]


def poster_time(row_time: float | None, duration_s: float | None) -> float:
    """The frame a target that takes only a time gets: the row's, else DEFAULT_POSTER_TIME_S; within the video
    where its duration is known."""
    chosen = row_time if row_time is not None else DEFAULT_POSTER_TIME_S
    if duration_s is not None and duration_s > 0 and chosen >= duration_s:
        chosen = duration_s / 2
    return round(max(0.0, chosen), 3)


def kept_key(remote_id: str, name: str) -> str:
    """Where the stack's bucket keeps a file a target could not take (a thumbnail, a chapters file)."""
    return f"{KEPT_PREFIX}/{remote_id}/{name}"


def handoff_key(remote_id: str, name: str) -> str:
    """Where the stack's bucket stages a file for a target that fetches it by URL."""
    return f"{HANDOFF_PREFIX}/{remote_id}/{name}"


# --- chapters ------------------------------------------------------------------------------------------------


def chapter_ends(chapters: tuple[Chapter, ...], duration_s: float | None) -> list[float]:
    """Where each chapter ends: where the next begins, the last at the video's end (a second past its start when
    the duration is not known, or does not reach past it)."""
    starts = [c.start_s for c in chapters]
    last = starts[-1] if starts else 0.0
    end = duration_s if duration_s is not None and duration_s > last else last + 1.0
    return [*starts[1:], end]


def chapters_webvtt(chapters: tuple[Chapter, ...], duration_s: float | None) -> bytes:
    """The chapters as a WebVTT file, one cue a chapter (webvtt-py writes it)."""
    import webvtt

    cues = [
        webvtt.Caption(_stamp(chapter.start_s), _stamp(end), chapter.title)
        for chapter, end in zip(chapters, chapter_ends(chapters, duration_s), strict=True)
    ]
    return webvtt.WebVTT(captions=cues).content.encode("utf-8")


def read_chapters(raw: bytes) -> tuple[Chapter, ...] | str:
    """A chapters track's file (WebVTT, each cue a chapter: its start and its text as the title) as the same list
    a row's inline chapters are, checked by the same rules; or why it is not one (safe to store)."""
    import webvtt
    from webvtt.models import Timestamp

    from .captions import read_caption

    caption = read_caption(raw)
    if isinstance(caption, str):
        return f"not a chapters file: {caption}"
    if caption.format != "vtt":
        return "not a chapters file: a chapters track is WebVTT, and this file is SubRip"
    try:
        cues = webvtt.from_buffer(io.StringIO(caption.webvtt.decode("utf-8"))).captions
        doc = [{"start_s": _seconds(Timestamp.from_string(cue.start)), "title": _title(cue.text)} for cue in cues]
        return parse_chapters(doc, MAX_DURATION_S)
    except Refused as exc:
        return f"not a chapters file: {exc}"
    except Exception as exc:  # a hostile file may break the library in any way: the file's fault
        return f"not a chapters file ({type(exc).__name__})"


def _seconds(at) -> float:
    hours, minutes, seconds, millis = at.to_tuple()
    return hours * 3600 + minutes * 60 + seconds + millis / 1000


def _stamp(seconds: float) -> str:
    from webvtt.models import Timestamp

    millis = max(0, round(seconds * 1000))
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    return str(Timestamp(hours, minutes, *divmod(rest, 1000)))


def _title(text: str) -> str:
    """A cue's text as a chapter title: its lines joined on one line."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())
