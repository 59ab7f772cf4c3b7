"""A listed video as a row the queue accepts (pure): every field a platform gave, cleaned, or dropped.

The platform's answer is untrusted: a field of the wrong type, a title past 512 characters,
a tag with a control character, a caption in a language tag no provider reads: each is
cut to its limit or left out, never allowed to make the whole row bad. The row is then
checked with the queue's own validation (`messages.parse_message`), so a row an inventory
writes is a message the uploader takes.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from ..messages import (
    MAX_DESCRIPTION_LENGTH,
    MAX_DURATION_S,
    MAX_FOLDER_LENGTH,
    MAX_TAG_LENGTH,
    MAX_TAGS,
    MAX_TITLE_LENGTH,
    MAX_TRACK_NAME_LENGTH,
    MAX_TRACKS,
    PRIVACY,
    AssetMessage,
    Poison,
    parse_message,
)
from ..providers.facts import epoch_of, finite_number
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
    """A caption or subtitle track as a platform lists it; `ref` is where to get it (a source reference)."""

    ref: str
    language: object
    kind: str = "captions"
    name: object = None
    closed_captions: bool = False
    format: str | None = None


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
        if language is None or track.kind not in ("captions", "subtitles"):
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
        if track.format in ("srt", "vtt"):
            doc["format"] = track.format
        docs.append(doc)
        if len(docs) == MAX_TRACKS:
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
) -> Entry:
    """The row for one fetchable video, or an Unfetchable when even its cleaned fields cannot travel.
    `asset_id`: an id of its own (an S3 object's), instead of `<platform>/<id>` and the source's
    platform and id in its metadata."""
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
    parsed = parse_message(json.dumps(doc, ensure_ascii=False))
    if isinstance(parsed, Poison):
        return Unfetchable(asset_id, source_url, f"cannot be carried as a message: {parsed.reason}", doc.get("title"))
    return parsed


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
