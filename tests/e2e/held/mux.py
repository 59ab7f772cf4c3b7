"""What a Mux asset shows a viewer at the end (issue 42), read from the "mux" simulator through Mux's own API and
stream host, as a player reads them (docs.mux.com):

- the asset, `GET /video/v1/assets/{ASSET_ID}` (HTTP Basic, the access token's id and secret). Mux keeps no poster
  image, only the frame its default thumbnail shows: "Once set, `thumbnail_time` is included in the asset object. It
  is omitted entirely when no value is set" (https://www.mux.com/docs/guides/set-a-default-thumbnail). Our adapter
  (providers/mux.py, `takes_thumbnail = "time"`) PATCHes the row's poster time there and keeps a thumbnail image in
  the stack's bucket, noted: `thumbnail` is always None here, `thumbnail_time_s` the asset's `thumbnail_time`.
- chapters: "Mux stores chapters as a track on the asset" (https://www.mux.com/docs/guides/add-chapters), a text
  track of `text_type` chapters listed in the asset's `tracks`; a player reads a ready one at
  `https://stream.mux.com/{PLAYBACK_ID}/chapters/{TRACK_ID}.json` (the Stream API's "Retrieve chapters"; the
  simulator's stream host is `{sim}/_play/mux`), Apple's HLS chapter notation (`[{"chapter", "start-time",
  "titles": [{"language", "title"}]}]`). A signed playback id's needs a token: an RS256 JWT with `sub` the playback
  id, `aud` "v", `exp`, `kid` a URL signing key made by `POST /system/v1/signing-keys`
  (https://www.mux.com/docs/guides/secure-video-playback); one key is made per simulator and kept.
- collections: Mux has no folders or playlists, and our adapter keeps a row's collections in the ledger only
  (`collections_instead`): `collections` is always [].
"""

from __future__ import annotations

import time
import urllib.parse

import requests
from migrator.playback_tokens import SigningKey, mux_playback_token

from infra.sim import media
from tests.e2e.held import HeldCollection, HeldExtras
from tests.e2e.held.reading import TIMEOUT_S, answered, get, session

TOKEN_TTL_S = 600
SIGNED = ("signed", "drm")
_KEYS: dict[tuple[str, str], SigningKey] = {}  # a URL signing key made on each simulator, by (its URL, token id)


def extras(sim, remote_id: str) -> HeldExtras:
    """The asset's poster frame time and the chapters of its ready chapters tracks, in start order."""
    with session() as web:
        asset = _asset(web, sim, remote_id)
        chapters: list[tuple[float, str]] = []  # every file's: a second file shows as doubles
        for track in asset.get("tracks") or []:
            if (track.get("type"), track.get("text_type"), track.get("status")) == ("text", "chapters", "ready"):
                served = _chapters_file(web, sim, asset, track["id"])
                chapters.extend(read_apple_chapters(served, track.get("language_code")))
    chosen = asset.get("thumbnail_time")
    return HeldExtras(
        thumbnail=None, thumbnail_time_s=None if chosen is None else float(chosen), chapters=tuple(sorted(chapters))
    )


def collections(sim) -> list[HeldCollection]:
    """None: Mux keeps no collections (no folders or playlists in its API)."""
    return []


def read_apple_chapters(doc: object, language: str | None) -> list[tuple[float, str]]:
    """(start-time, title) of each chapter of Apple's HLS chapter notation: the title in `language` where the chapter
    has one, else its first."""
    assert isinstance(doc, list), f"a chapters file that is no list of chapters: {str(doc)[:80]}"
    found = []
    for chapter in doc:
        titles = [t for t in chapter["titles"] if isinstance(t, dict)]
        title = next((t for t in titles if t.get("language") == language), titles[0])["title"]
        found.append((float(chapter["start-time"]), title))
    return found


def _chapters_file(web: requests.Session, sim, asset: dict, track_id: str) -> object:
    """The chapters track's JSON at the stream host, under the asset's public playback id, else its signed one with a
    token."""
    ids = [(p["policy"], p["id"]) for p in asset.get("playback_ids") or []]
    assert ids, f"asset {asset['id']} has no playback id a player could read its chapters under"
    policy, pid = next((p for p in ids if p[0] not in SIGNED), ids[0])
    url = f"{sim.url}{media.PREFIX}mux/{pid}/chapters/{urllib.parse.quote(track_id, safe='')}.json"
    if policy not in SIGNED:
        return get(web, url).json()
    token = mux_playback_token(pid, _signing_key(web, sim), time.time() + TOKEN_TTL_S)
    first = web.get(url, params={"token": token}, timeout=TIMEOUT_S)
    if first.status_code == 200:
        return first.json()
    if first.status_code == 403:
        _KEYS.pop((sim.url, sim.config.token_id or ""), None)  # a key the simulator no longer holds (it was reset)
        token = mux_playback_token(pid, _signing_key(web, sim), time.time() + TOKEN_TTL_S)
    return get(web, url, params={"token": token}).json()


def _signing_key(web: requests.Session, sim) -> SigningKey:
    """The URL signing key made on this simulator, made the first time (201 `{"data": {id, private_key}}`, the key a
    base64 PEM returned this once: docs.mux.com/api-reference/system/signing-keys)."""
    kept = (sim.url, sim.config.token_id or "")
    if kept not in _KEYS:
        url = f"{sim.url}/system/v1/signing-keys"
        made = answered(lambda: web.post(url, auth=_auth(sim), timeout=TIMEOUT_S), "POST", url, 201).json()["data"]
        _KEYS[kept] = SigningKey.from_mux(made["id"], made["private_key"])
    return _KEYS[kept]


def _auth(sim) -> tuple[str, str]:
    return sim.config.token_id or "", sim.config.token_secret or ""


def _asset(web: requests.Session, sim, remote_id: str) -> dict:
    url = f"{sim.url}/video/v1/assets/{urllib.parse.quote(remote_id, safe='')}"
    return get(web, url, auth=_auth(sim)).json()["data"]
