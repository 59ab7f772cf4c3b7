"""What a create carries of a video besides its bytes: the parts the provider modules share (pure).

Each provider builds its create body in one method, `_create_body(asset, source_url) ->
(body, notes)`, from the row as the ledger keeps it (`AssetRef.details`). What they share is
here: the privacy a row asks for in the two means every provider has (public, or signed:
a token is needed to play), text cut to a provider's limit with a note, a note for each
field a provider has no place for (the ledger keeps the row whole), and our fields laid
into a provider's free map beside the row's own custom ones, the source's usage with them (`with_usage`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..messages import AssetMessage
from ..usage import Usage
from .facts import AssetRef

PUBLIC, SIGNED = "public", "signed"
PLAYBACKS = (PUBLIC, SIGNED)
# The fields of a row besides its title, in the names every free map (and the notes) use.
ROW_FIELDS = ("description", "tags", "metadata", "poster_time_s", "created_at", "folder")


@dataclass(frozen=True)
class CreateDefaults:
    """The stack's side of every create: how a row with no privacy is played (DefaultPlayback),
    and the stack's create options per provider (create_options.OPTIONS, from template parameters)."""

    playback: str = SIGNED
    options: Mapping[str, Mapping[str, object]] = field(default_factory=dict)


def playback_of(privacy: str | None, default: str | None) -> str:
    """The means a row's privacy maps to: private and signed rows are signed, public and unlisted ones
    public, a row with none takes `default`; anything but an explicit "public" default is signed,
    so no mistake in a setting makes a video playable by anyone."""
    if privacy in ("private", "signed"):
        return SIGNED
    if privacy in ("public", "unlisted"):
        return PUBLIC
    return PUBLIC if default == PUBLIC else SIGNED


def privacy_notes(privacy: str | None, provider: str) -> list[str]:
    if privacy == "unlisted":
        return [f"privacy: unlisted sent as public ({provider} has no unlisted)"]
    return []


def details_of(asset: AssetRef) -> AssetMessage:
    """The row a create carries; an AssetRef made without one (a test, a tool) carries only its id."""
    return asset.details if asset.details is not None else AssetMessage(asset.asset_id, "")


def utf16_length(text: str) -> int:
    """A string's length as JavaScript counts it (an astral character takes two): the stricter count
    where a provider says "characters" or "code points" without saying how it counts."""
    return len(text.encode("utf-16-le")) // 2


def cut(text: str, limit: int, where: str, utf16: bool = False) -> tuple[str, list[str]]:
    """`text` within `limit` characters (UTF-16 units with `utf16`), never splitting a character, and
    the note when it had to be cut."""
    length = utf16_length(text) if utf16 else len(text)
    if length <= limit:
        return text, []
    if utf16:
        units = text.encode("utf-16-le")[: 2 * limit]
        kept = units.decode("utf-16-le", errors="ignore")  # a half pair at the end is dropped
    else:
        kept = text[:limit]
    return kept, [f"{where}: cut to {limit:,} characters"]


def present(details: AssetMessage, names: Iterable[str] = ROW_FIELDS) -> list[str]:
    """Which of `names` the row actually has (an empty list or map is not a value)."""
    return [name for name in names if getattr(details, name) not in (None, (), {}, "")]


def not_carried(details: AssetMessage, provider: str, names: Iterable[str], why: str = "") -> list[str]:
    """A note for each of `names` the row has and `provider` has no place for."""
    reason = f"; {why}" if why else ""
    return [f"{name}: not carried by {provider} (kept in the ledger{reason})" for name in present(details, names)]


def row_fields(details: AssetMessage, names: Iterable[str]) -> dict[str, object]:
    """The row's values of `names` (those it has) as JSON values, for a provider's free map."""
    out: dict[str, object] = {}
    for name in present(details, names):
        value = getattr(details, name)
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def free_map(ours: Mapping[str, object], custom: Mapping[str, object], where: str) -> tuple[dict, list[str]]:
    """A provider's free map: the row's custom fields, with ours over them. A custom key that one of ours
    takes is not carried there, and its note says so (the ledger keeps it)."""
    merged = {**custom, **ours}
    clashes = [key for key in custom if key in ours]
    notes = [f"metadata.{key}: not carried ({where}.{key} holds our own field; kept in the ledger)" for key in clashes]
    return merged, notes


# Usage outlives the source (issue 45): a target with a free key-value map keeps the source's counts in it, under
# these keys, beside the row's own metadata (docs/providers.md says which targets have room).
USAGE_KEYS = (("source_plays", "plays"), ("source_views", "views"), ("source_last_played_at", "last_played_at"))


def with_usage(metadata: Mapping[str, object], usage: Usage | None) -> dict:
    """The row's metadata with its source usage beside it: only the counts known, and never over a key the row set
    itself (its own value wins)."""
    found = {key: getattr(usage, name) for key, name in USAGE_KEYS} if usage is not None else {}
    return {**metadata, **{k: v for k, v in found.items() if v is not None and k not in metadata}}


def as_text(value: object) -> str:
    """A JSON value as a provider's text-only field holds it: text as it is, anything else as its JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
