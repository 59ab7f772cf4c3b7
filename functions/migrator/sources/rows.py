"""A listed video as a row the queue accepts (pure): every field a platform gave, cleaned, or dropped.

The platform's answer is untrusted: a field of the wrong type, a title past 512 characters,
a tag with a control character, a caption in a language tag no provider reads: each is
cut to its limit or left out, never allowed to make the whole row bad. The row is then
checked with the queue's own validation (`messages.parse_message`), so a row an inventory
writes is a message the uploader takes.

What a viewer sees first (issue 42) is given the same way: `thumbnail_url` (a source reference such as
`vimeo://<video>/pictures/<id>`, resolved at use time, or a lasting https link), `chapters` (`ChapterInfo`:
sorted, one a start time, titles made one line), `collections` (`CollectionInfo`: each id once, its kind one of
row_extras.COLLECTION_KINDS, the video's place in the collection's order where the platform gives one) and
`published_at`. A row too large for a message leaves its chapters out, then its collections, and says so in
its metadata, rather than losing the video.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from ..messages import (
    MAX_BODY_BYTES,
    MAX_DESCRIPTION_LENGTH,
    MAX_DURATION_S,
    MAX_FOLDER_LENGTH,
    MAX_TAG_LENGTH,
    MAX_TAGS,
    MAX_TITLE_LENGTH,
    MAX_TRACK_NAME_LENGTH,
    MAX_TRACKS,
    PRIVACY,
    TRACK_KINDS,
    UNDETERMINED_LANGUAGE,
    AssetMessage,
    Poison,
    parse_message,
    source_url_problem,
)
from ..providers.facts import epoch_of, finite_number
from ..row_extras import (
    COLLECTION_KINDS,
    CUE_ARROW,
    MAX_CHAPTER_TITLE_LENGTH,
    MAX_CHAPTERS,
    MAX_COLLECTION_ID_LENGTH,
    MAX_COLLECTION_NAME_LENGTH,
    MAX_COLLECTIONS,
    MAX_POSITION,
)
from ..usage import Usage
from .base import Entry, Unfetchable, asset_id_of

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_LANGUAGE = re.compile(r"^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$")
# ISO 639-2 codes (what Wistia names caption languages by) for the languages most libraries carry,
# as the two-letter ISO 639-1 codes BCP 47 prefers and providers read (Mux's language_code, api.video's
# srclang). A code not here is kept as it came: a valid BCP 47 tag still.
ISO639_2_TO_1 = {
    "ara": "ar", "chi": "zh", "zho": "zh", "cze": "cs", "ces": "cs", "dan": "da", "dut": "nl", "nld": "nl",
    "eng": "en", "fin": "fi", "fre": "fr", "fra": "fr", "ger": "de", "deu": "de", "gre": "el", "ell": "el",
    "heb": "he", "hin": "hi", "hun": "hu", "ind": "id", "ita": "it", "jpn": "ja", "kor": "ko", "nor": "no",
    "pol": "pl", "por": "pt", "rum": "ro", "ron": "ro", "rus": "ru", "spa": "es", "swe": "sv", "tha": "th",
    "tur": "tr", "ukr": "uk", "vie": "vi",
}  # fmt: skip


@dataclass(frozen=True)
class TrackInfo:
    """A caption, subtitle or chapters track as a platform lists it; `ref` is where to get it (a source reference).
    A chapters track (a WebVTT file of chapter cues) may have no language: it is then "und"."""

    ref: str
    language: object
    kind: str = "captions"
    name: object = None
    closed_captions: bool = False
    format: str | None = None


@dataclass(frozen=True)
class ChapterInfo:
    """A chapter as a platform lists it: where it starts, in seconds, and its title (both untrusted)."""

    start_s: object
    title: object


@dataclass(frozen=True)
class CollectionInfo:
    """A collection that holds the video, as a platform lists it. `id`: its id there, unique over the platform's
    kinds of collection (prefix them where they share numbers: Vimeo's `projects/7`, `albums/7`); `kind`: one of
    row_extras.COLLECTION_KINDS; `position`: the video's place in the collection's own order, None where the
    platform gives none."""

    id: object
    name: object
    kind: str
    position: object = None


def clean_text(value: object, limit: int) -> str | None:
    """A string field cut to `limit` characters, without lone surrogates; None for anything else."""
    if not isinstance(value, str):
        return None
    text = _SURROGATE.sub("", value)
    return text[:limit] if text.strip() else None


def clean_tags(values: Iterable[object]) -> list[str]:
    tags: list[str] = []
    for value in values:
        tag = clean_text(value, MAX_TAG_LENGTH)
        tag = tag.strip() if tag is not None else None
        if tag and not _CONTROL.search(tag) and tag not in tags:
            tags.append(tag)
        if len(tags) == MAX_TAGS:
            break
    return tags


def one_line(value: object, limit: int) -> str | None:
    """Text as one line: control characters and runs of white space made one space, cut to `limit`; None for
    anything else, or nothing left."""
    text = clean_text(value, 4 * limit)
    if text is None:
        return None
    line = " ".join(_CONTROL.sub(" ", text).split())[:limit].strip()
    return line or None


def rfc3339(value: object) -> str | None:
    """A platform's time (ISO 8601 text, epoch seconds, Mux's seconds as a string) as RFC 3339 UTC."""
    epoch = epoch_of(value)
    if epoch is None or not 0 <= epoch < 32_503_680_000:  # before the year 3000
        return None
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def seconds(value: object) -> float | None:
    number = finite_number(value)
    return number if number is not None and 0 <= number <= MAX_DURATION_S else None


def whole_bytes(value: object) -> int | None:
    number = finite_number(value)
    return int(number) if number is not None and number >= 0 and number.is_integer() and number < 2**63 else None


def language_tag(value: object) -> str | None:
    """A BCP 47 language tag, or None when `value` is not one."""
    if not isinstance(value, str):
        return None
    tag = value.strip().replace("_", "-")
    tag = ISO639_2_TO_1.get(tag.lower(), tag)
    return tag if _LANGUAGE.match(tag) and len(tag) <= 35 else None


def track_docs(tracks: Iterable[TrackInfo]) -> list[dict]:
    """The tracks that can be carried, as message objects: one per language, kind and name."""
    docs, keys = [], set()
    for track in tracks:
        language = language_tag(track.language)
        if language is None and track.kind == "chapters" and track.language in (None, ""):
            language = UNDETERMINED_LANGUAGE
        if language is None or track.kind not in TRACK_KINDS:
            continue
        name = clean_text(track.name, MAX_TRACK_NAME_LENGTH)
        key = (language, track.kind, name or "")
        if key in keys:
            continue
        keys.add(key)
        doc: dict = {"url": track.ref, "language": language, "kind": track.kind}
        if name:
            doc["name"] = name
        if track.closed_captions:
            doc["closed_captions"] = True
        if track.format == "vtt" or (track.format == "srt" and track.kind != "chapters"):
            doc["format"] = track.format
        docs.append(doc)
        if len(docs) == MAX_TRACKS:
            break
    return docs


def thumbnail_of(value: object) -> str | None:
    """A thumbnail's URL or source reference, when it is one a row can carry."""
    return value if isinstance(value, str) and source_url_problem(value, "thumbnail_url") is None else None


def chapter_docs(chapters: Iterable[ChapterInfo], duration_s: float | None = None) -> list[dict]:
    """The chapters that can be carried, as message objects: in order of start, one a start (the first listed
    wins), each before the end where the duration is known, titles one line without a WebVTT cue arrow."""
    starts: dict[float, str] = {}
    for chapter in chapters:
        start, title = seconds(chapter.start_s), one_line(chapter.title, MAX_CHAPTER_TITLE_LENGTH)
        if start is None or title is None or (duration_s is not None and start >= duration_s):
            continue
        starts.setdefault(round(start, 3), title.replace(CUE_ARROW, "->"))
    return [{"start_s": start, "title": title} for start, title in sorted(starts.items())][:MAX_CHAPTERS]


def collection_docs(collections: Iterable[CollectionInfo]) -> list[dict]:
    """The collections that can be carried, as message objects: each id once (the first listed wins); an id
    that is not one line of at most MAX_COLLECTION_ID_LENGTH characters is left out, never cut to another."""
    docs: list[dict] = []
    for found in collections:
        cid = str(found.id) if isinstance(found.id, int) and not isinstance(found.id, bool) else found.id
        name = one_line(found.name, MAX_COLLECTION_NAME_LENGTH)
        if not isinstance(cid, str) or not cid.strip() or len(cid) > MAX_COLLECTION_ID_LENGTH or name is None:
            continue
        if _CONTROL.search(cid) or _SURROGATE.search(cid) or found.kind not in COLLECTION_KINDS:
            continue
        if any(d["id"] == cid for d in docs):
            continue
        doc: dict = {"id": cid, "name": name, "kind": found.kind}
        position = finite_number(found.position)
        if position is not None and position.is_integer() and 0 <= position <= MAX_POSITION:
            doc["position"] = int(position)
        docs.append(doc)
        if len(docs) == MAX_COLLECTIONS:
            break
    return docs


def make_row(
    platform: str,
    video_id: str,
    source_url: str,
    *,
    title: object = None,
    description: object = None,
    tags: Iterable[object] = (),
    created_at: object = None,
    duration_s: object = None,
    size_bytes: object = None,
    privacy: str | None = None,
    folder: object = None,
    poster_time_s: object = None,
    tracks: Iterable[TrackInfo] = (),
    metadata: Mapping | None = None,
    asset_id: str | None = None,
    thumbnail_url: object = None,
    chapters: Iterable[ChapterInfo] = (),
    collections: Iterable[CollectionInfo] = (),
    published_at: object = None,
    usage: Usage | None = None,
) -> Entry:
    """The row for one fetchable video, or an Unfetchable when even its cleaned fields cannot travel.
    `asset_id`: an id of its own (an S3 object's), instead of `<platform>/<id>` and the source's
    platform and id in its metadata. `usage`: how much it was watched, where the listing says (inline_usage.py)."""
    own_id = asset_id is not None
    if asset_id is None:
        asset_id = asset_id_of(platform, video_id)
    doc: dict = {"id": asset_id, "source_url": source_url}
    duration = seconds(duration_s)
    fields = {
        "title": clean_text(title, MAX_TITLE_LENGTH),
        "description": clean_text(description, MAX_DESCRIPTION_LENGTH),
        "created_at": rfc3339(created_at),
        "duration_s": duration,
        "size_bytes": whole_bytes(size_bytes),
        "privacy": privacy if privacy in PRIVACY else None,
        "folder": clean_text(folder, MAX_FOLDER_LENGTH),
        "thumbnail_url": thumbnail_of(thumbnail_url),
        "published_at": rfc3339(published_at),
    }
    poster = seconds(poster_time_s)
    if poster is not None and (duration is None or poster <= duration):
        fields["poster_time_s"] = round(poster, 3)
    doc.update({k: v for k, v in fields.items() if v is not None})
    tag_list = clean_tags(tags)
    if tag_list:
        doc["tags"] = tag_list
    track_list = track_docs(tracks)
    if track_list:
        doc["tracks"] = track_list
    origin = {} if own_id else {"source_platform": platform, "source_id": video_id}
    doc["metadata"] = {**origin, **dict(metadata or {})}
    extras = {"chapters": chapter_docs(chapters, duration), "collections": collection_docs(collections)}
    doc.update({name: found for name, found in extras.items() if found})
    if usage is not None:
        doc["usage"] = usage.as_dict()
    parsed = parse_message(_fitted(doc))
    if isinstance(parsed, Poison):
        return Unfetchable(asset_id, source_url, f"cannot be carried as a message: {parsed.reason}", doc.get("title"))
    return parsed


def _fitted(doc: dict) -> str:
    """`doc` as a message body; past a message's size, without its chapters, then its collections (the metadata
    says how many were left out), so a video with a long list of them still travels."""
    body = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    for name in ("chapters", "collections"):
        if len(body.encode("utf-8")) <= MAX_BODY_BYTES or name not in doc:
            continue
        left = doc.pop(name)
        doc["metadata"] = {
            **doc["metadata"],
            f"{name}_note": f"{len(left)} {name} left out: the row was over a message's size",
        }
        body = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return body


def unfetchable(platform: str, video_id: str, source_url: str, reason: str, title: object = None) -> Unfetchable:
    return Unfetchable(asset_id_of(platform, video_id), source_url, reason, clean_text(title, MAX_TITLE_LENGTH))


def poster_from_pct(pct: object, duration: object) -> float | None:
    """A poster time from a fraction of the duration (Cloudflare's thumbnailTimestampPct)."""
    fraction, length = finite_number(pct), seconds(duration)
    if fraction is None or length is None or not 0 < fraction <= 1:
        return None
    return math.floor(fraction * length * 1000) / 1000


def is_message(entry: Entry) -> bool:
    return isinstance(entry, AssetMessage)
