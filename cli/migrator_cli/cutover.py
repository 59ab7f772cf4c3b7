"""The cut-over map's rows: for each ledger asset, where it came from and where it now plays (pure).

A row is what `migrator export` writes and `migrator verify` fetches: our id, the source platform
and its id (from a source reference such as `vimeo://123`, else our own id), the source URL, the
target provider and its video id, the playback id, the HLS, player and thumbnail URLs, privacy,
state, tracks, and the source's usage (plays, views, last play, when and by what they were read: issue 45), so
the numbers outlive the source account. The URLs are what the provider said when the video was ready (the ledger's
`playback_info`, kept by settle); Mux's objects carry playback ids only, so its URLs are built on its
documented hosts (`providers.mux.MUX_HOSTS`) or on the ones the operator names (a custom domain).
A video whose playback needs a token (Mux `signed`/`drm`, Cloudflare `requireSignedURLs`, api.video
private) says so in place of a URL that would not play.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from urllib.parse import urlsplit

from migrator.messages import SOURCE_PLATFORMS
from migrator.providers.facts import playback_url
from migrator.providers.mux import playback_urls

# How much it was watched at its source, as the ledger's `usage` map keeps it (issue 45; migrator.usage): the column
# and the usage field it is read from. Empty where not read (a platform without usage, or no pass run).
USAGE_COLUMNS_FROM = {
    "plays": "plays",
    "views": "views",
    "last_played_at": "last_played_at",
    "usage_read_at": "read_at",
    "usage_counted_by": "counted_by",
}
USAGE_COLUMNS = tuple(USAGE_COLUMNS_FROM)
COLUMNS = (
    "id",
    "source_platform",
    "source_id",
    "source_url",
    "source_aliases",
    "provider",
    "remote_id",
    "playback_id",
    "playback_policy",
    "hls_url",
    "player_url",
    "thumbnail_url",
    "privacy",
    "state",
    "tracks",
    *USAGE_COLUMNS,
    "note",
)
URL_COLUMNS = ("hls_url", "player_url", "thumbnail_url")
SIGNED = "signed: needs a token"
ALIAS_METADATA = "mux_playback_ids"
MAX_ALIASES = 16


def source_of(item: Mapping) -> tuple[str, str]:
    """(platform, id) of the asset's source: a source reference names both; otherwise the source
    is a file (https, s3) and our own id is the one to map from."""
    url = str(item.get("source_url") or "")
    scheme, sep, rest = url.partition("://")
    if sep and scheme.lower() in SOURCE_PLATFORMS and rest:
        return scheme.lower(), rest
    return (urlsplit(url).scheme.lower() if sep else ""), str(item.get("asset_id", ""))


def playback_links(provider: str, playback: Mapping | None, mux_hosts: Mapping[str, str] | None = None) -> dict:
    """{hls, player, thumbnail} as the ledger's playback gives them (None where unknown)."""
    playback = playback or {}
    if provider == "mux" and playback.get("playback_id"):
        built = playback_urls(str(playback["playback_id"]), dict(mux_hosts or {}))
        return {name: playback_url(url) for name, url in built.items()}
    return {
        "hls": playback_url(playback.get("hls")),
        "player": playback_url(playback.get("player") or playback.get("embed") or playback.get("preview")),
        "thumbnail": playback_url(playback.get("thumbnail")),
    }


def needs_token(playback: Mapping | None) -> bool:
    return playback is not None and bool(playback) and playback.get("policy") not in (None, "public")


def row_of(item: Mapping, provider: str, mux_hosts: Mapping[str, str] | None = None) -> dict:
    """One row of the cut-over map from a ledger item."""
    platform, source_id = source_of(item)
    playback = item.get("playback_info") if isinstance(item.get("playback_info"), Mapping) else None
    state = item.get("state")
    row: dict = {
        "id": item.get("asset_id"),
        "source_platform": platform,
        "source_id": source_id,
        "source_url": item.get("source_url"),
        "source_aliases": aliases_of(item),
        "provider": provider,
        "remote_id": item.get("remote_id"),
        "playback_id": (playback or {}).get("playback_id"),
        "playback_policy": (playback or {}).get("policy"),
        "hls_url": None,
        "player_url": None,
        "thumbnail_url": None,
        "privacy": item.get("privacy"),
        "state": state,
        "tracks": tracks_of(item),
        **usage_cells(item),
        "note": None,
    }
    if state != "ready":
        row["note"] = "not ready"
    elif playback is None:
        row["note"] = "no playback recorded (settled before playback was kept, or the provider said none)"
    elif needs_token(playback):
        row["note"] = SIGNED
    else:
        links = playback_links(provider, playback, mux_hosts)
        row.update(hls_url=links["hls"], player_url=links["player"], thumbnail_url=links["thumbnail"])
    return row


def aliases_of(item: Mapping) -> list[str]:
    """Other ids the source's embeds name the video by (Mux's playback ids, kept by its source adapter in the row's
    metadata as `mux_playback_ids`): `migrator rewrite` finds a `stream.mux.com/<playback id>` by them."""
    metadata = item.get("metadata")
    found = metadata.get(ALIAS_METADATA) if isinstance(metadata, Mapping) else None
    if not isinstance(found, list):
        return []
    return [value for value in found if isinstance(value, str) and value and len(value) <= 256][:MAX_ALIASES]


def usage_cells(item: Mapping) -> dict:
    """The usage columns of an asset from its ledger item's `usage` map (None where it has none, or a value is not
    the kind the usage model writes: the ledger's item is read back, not trusted)."""
    found = item.get("usage")
    usage: Mapping = found if isinstance(found, Mapping) else {}
    cells: dict = {}
    for column, name in USAGE_COLUMNS_FROM.items():
        value = _plain(usage.get(name))
        kind = int if name in ("plays", "views") else str
        cells[column] = value if isinstance(value, kind) and not isinstance(value, bool) else None
    return cells


def tracks_of(item: Mapping) -> list[dict]:
    """What the ledger has of the asset's caption tracks: language, kind, name, and a state when kept."""
    out = []
    for track in item.get("tracks") or []:
        if not isinstance(track, Mapping):
            continue
        entry = {k: _plain(track[k]) for k in ("language", "kind", "name", "state", "status") if k in track}
        if entry:
            out.append(entry)
    return out


def tracks_text(tracks: list[dict]) -> str:
    """Tracks as one cell: `en captions; fr subtitles (ready)`."""
    parts = []
    for track in tracks:
        words = [str(track.get(k)) for k in ("language", "kind", "name") if track.get(k)]
        state = track.get("state") or track.get("status")
        parts.append(" ".join(words) + (f" ({state})" if state else ""))
    return "; ".join(parts)


def _plain(value):
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value
