"""The migration's map as `migrator rewrite` reads it: for a source (platform, id), where the video plays now, or why
it does not (pure, apart from reading the rows).

Rows come from the ledger (cutover.row_of over a scan) or from a `migrator export` file (CSV or JSON Lines), and a
`--where`'s left-behind report adds the videos that were never sent. Each row is indexed by:
- (source platform, source id): `vimeo://123` -> ("vimeo", "123");
- each alias the source knows it by (Mux's playback ids: `source_aliases`);
- its source URL where the source was a file (s3://b/k, https://...): (scheme, URL);
and the target's own ids are kept apart, so a second run knows an embed it already rewrote.

Everything in a row is untrusted (an export file can be edited by hand): a row without a platform and id is
counted and skipped, and only http(s) URLs are taken from it (providers.facts.playback_url).
"""

from __future__ import annotations

import csv
import json
from collections import ChainMap
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TextIO

from migrator.messages import SOURCE_PLATFORMS
from migrator.providers.facts import playback_url

from ..cutover import SIGNED
from ..errors import CliError
from .model import Destination

# Row states that mean the video will not arrive by itself: the report says "rejected", not "not moved yet".
FAILED_STATES = ("failed", "poison", "rejected", "unfetchable", "errored")


@dataclass(frozen=True)
class Missing:
    """Why an embed's video has no destination: its text is left as it was and listed with this reason."""

    reason: str  # "not in the map" | "left behind" | "rejected" | "not moved yet" | "no playback recorded"
    detail: str = ""  # the row's own words: the --where's why, the error, the state
    asset_id: str | None = None


@dataclass
class IdMap:
    """Source (platform, id) -> Destination or Missing; built with `add_row` / `add_left_behind`."""

    provider: str = ""
    settings: Mapping[str, str] = field(default_factory=dict)
    _by_source: dict[tuple[str, str], Destination | Missing] = field(default_factory=dict)
    _target_ids: set[str] = field(default_factory=set)
    _has_urls: bool = False
    _learned: dict[str, str] = field(default_factory=dict)  # what rows' URLs showed of the account (Player.learn)
    rows: int = 0
    skipped: int = 0  # rows with no usable source platform and id

    def __post_init__(self) -> None:
        self._settings_view: ChainMap[str, str] = ChainMap(dict(self.settings), self._learned)  # one for every row

    def __len__(self) -> int:
        return self.rows

    def find(self, platform: str, video_id: str) -> Destination | Missing:
        found = self._by_source.get((platform.lower(), video_id))
        if found is None and platform in ("https", "http", "url"):
            found = self._by_source.get(("url", _url_key(video_id)))
        return found if found is not None else Missing("not in the map")

    def has_urls(self) -> bool:
        """Some row came from a URL list: the engine then looks every URL in a text up (`find("url", url)`)."""
        return self._has_urls

    def is_target(self, video_id: str) -> bool:
        """`video_id` is one of the target's own ids (a remote id or playback id the map wrote): already rewritten."""
        return video_id in self._target_ids

    def add_row(self, row: Mapping) -> None:
        """One export row (cutover.COLUMNS; a CSV's cells are strings)."""
        platform = _text(row.get("source_platform")).lower()
        source_id = _text(row.get("source_id"))
        source_url = _text(row.get("source_url"))
        if not platform or not (source_id or source_url):
            self.skipped += 1
            return
        self.rows += 1
        entry = self._entry(row)
        keys = []
        if platform in ("https", "http"):
            keys.append(("url", _url_key(source_url)))
            self._has_urls = True
        elif "://" in source_url and source_url.split("://", 1)[0].lower() == platform and platform not in _REFERENCED:
            keys.append((platform, source_url))  # a file source (s3://b/k, gs://..): its embeds name the object
        if source_id:
            keys.append((platform, source_id))
        keys += [(platform, alias) for alias in _aliases(row.get("source_aliases"))]
        for key in keys:
            self._by_source[key] = entry
        if isinstance(entry, Destination):
            self._target_ids.update(v for v in (entry.remote_id, entry.playback_id) if v)

    def add_left_behind(self, doc: Mapping) -> None:
        """One row of a --where's left-behind report (left_behind.py): its video stays where it is."""
        source_url = _text(doc.get("source_url"))
        scheme, sep, rest = source_url.partition("://")
        if not sep or not rest:
            self.skipped += 1
            return
        scheme = scheme.lower()
        missing = Missing("left behind", _text(doc.get("why")) or "a --where left it", _text(doc.get("id")) or None)
        key = ("url", _url_key(source_url)) if scheme in ("https", "http") else (scheme, rest)
        if scheme in ("https", "http"):
            self._has_urls = True
        elif scheme not in _REFERENCED:
            self._by_source.setdefault((scheme, source_url), missing)
        self._by_source.setdefault(key, missing)
        self.rows += 1

    def _entry(self, row: Mapping) -> Destination | Missing:
        asset_id = _text(row.get("id")) or None
        state = _text(row.get("state"))
        note = _text(row.get("note"))
        if state != "ready":
            if state in FAILED_STATES:
                return Missing("rejected", f"{state}: {note}" if note and note != "not ready" else state, asset_id)
            return Missing("not moved yet", f"state {state or 'unknown'}", asset_id)
        signed = note == SIGNED or _text(row.get("playback_policy")) not in ("", "public")
        urls = {k: playback_url(_text(row.get(k)) or None) for k in ("hls_url", "player_url", "thumbnail_url")}
        remote_id = _text(row.get("remote_id")) or None
        playback_id = _text(row.get("playback_id")) or None
        if not signed and not any(urls.values()) and not (remote_id or playback_id):
            return Missing("no playback recorded", note, asset_id)
        destination = Destination(
            asset_id=asset_id or "",
            provider=_text(row.get("provider")) or self.provider,
            remote_id=remote_id,
            playback_id=playback_id,
            hls_url=urls["hls_url"],
            player_url=urls["player_url"],
            thumbnail_url=urls["thumbnail_url"],
            privacy=_text(row.get("privacy")) or None,
            signed=signed,
            # The operator's settings first, then what the map's rows show, read when the embed is written (a signed
            # row may come before the rows that show the host).
            settings=self._settings_view,
        )
        if not signed:
            self._learn(destination)
        return destination

    def _learn(self, destination: Destination) -> None:
        from .targets import PLAYERS

        player = PLAYERS.get(destination.provider)
        if player is not None and player.learn is not None:
            for key, value in player.learn(destination).items():
                self._learned.setdefault(key, value)


def from_rows(rows: Iterable[Mapping], provider: str = "", settings: Mapping[str, str] | None = None) -> IdMap:
    idmap = IdMap(provider=provider, settings=dict(settings or {}))
    for row in rows:
        idmap.add_row(row)
    return idmap


def read_export(stream: TextIO, name: str) -> Iterator[dict]:
    """The rows of a `migrator export` file: JSON Lines (one object a line) or CSV with its header."""
    head = stream.read(1)
    if not head:
        return
    rest = stream
    if head == "{":
        for number, line in enumerate([head + stream.readline(), *rest], start=1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except ValueError:
                raise CliError(
                    f"{name}: line {number} is not JSON (a map is `migrator export` CSV or JSON Lines)"
                ) from None
            if not isinstance(doc, dict):
                raise CliError(f"{name}: line {number} is not a JSON object")
            yield doc
        return
    reader = csv.DictReader(_prepend(head, stream))
    fields = set(reader.fieldnames or ())
    needed = {"source_platform", "source_id", "state"}
    if not needed <= fields:
        raise CliError(
            f"{name}: not a `migrator export` map: its header lacks {', '.join(sorted(needed - fields))}"
            f" (found {', '.join(sorted(fields)) or 'nothing'})"
        )
    yield from reader


def _prepend(head: str, stream: TextIO) -> Iterator[str]:
    first = True
    for line in stream:
        yield head + line if first else line
        first = False
    if first:
        yield head


# Platforms whose source reference is `<platform>://<the platform's own id>` (gcs://bucket/object included): their
# embeds name that id. Any other scheme (s3://) is a file whose reference is its URL.
_REFERENCED = SOURCE_PLATFORMS


def _aliases(value) -> list[str]:
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v]
    if isinstance(value, str):
        return value.split()
    return []


def _url_key(url: str) -> str:
    """A URL as the map compares it: `&amp;` read as `&`, the scheme and host lower-cased, no fragment."""
    url = url.replace("&amp;", "&").split("#", 1)[0]
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}{slash}{path}"


def _text(value) -> str:
    return value.strip() if isinstance(value, str) else ("" if value is None else str(value))
