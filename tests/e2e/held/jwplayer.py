"""What a JW Player target holds of a media's extras (issue 42), read through JW's own APIs on the "jwplayer" simulator
(infra/sim/platforms/jwplayer_target.py and jwplayer.py model them), never from what was sent.

Documents (docs.jwplayer.com unless said):
- the poster: "Manage a media poster" (platform/reference/vdh-manage-a-media-poster): a custom thumbnail promoted
  replaces the poster JW made "from the 10th second of your video"; the Management API lists a media's thumbnails
  (`GET /v2/sites/{site_id}/thumbnails/?q=media_id:<id>`, as our adapter and peer code ask it; jwplatform-go
  thumbnails.go: `source_type`, `status`, `relationships.media[].is_poster`). A player reads the poster at the
  Delivery API ("Embed content with the Delivery API": `/v2/media/{media_id}` "describing a media item including
  metadata, sources, and associated assets like tracks"; its item's `image`, the "Poster image URL"). The simulator
  stands the Delivery API's media at `/_play/jwplayer/{id}/media.json` and serves the promoted image as JW fetched it,
  unchanged (jwplayer_target.poster_image), so `thumbnail_as_uploaded` is True; JW itself serves its own renditions
  (`poster.jpg?width=`);
- chapters: the Delivery API item's `tracks` of `kind` "chapters" (JW Player's track kinds: captions, chapters,
  thumbnails), each `file` a WebVTT file a player fetches, one cue a chapter; read with webvtt-py (the project's
  dependency, not its own reader), every chapters track's cues together in start order (a track written twice
  shows twice);
- URL signing ("Protect your content with signed URLs"): on a property that signs, the Delivery API takes a JWT
  (HS256 with the property's secret; claims `resource`, the path, and `exp`) as `token`, and answers with its file
  URLs signed; made here as a site's own backend makes it;
- playlists: every playlist (`GET /v2/sites/{site_id}/playlists/`, `page`, `page_length`; `{playlists, page,
  page_length, total}`), a manual one's media in its order from `GET .../playlists/{playlist_id}/manual_playlist/`,
  `metadata.media_filter.include.values` (jwplatform-py 2.2.2 `_ManualPlaylistClient`; "Manual playlists are
  populated & ordered by dragging & dropping videos"). `remote_id` is the playlist's id, as our adapter records it.

A media the Delivery API does not deliver (not ready, or outside its publish window) is read by no player: its
extras are not read, and the reader says so (AssertionError) rather than answer "nothing".
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
import time
import urllib.parse

import requests
import webvtt

from . import HeldCollection, HeldExtras

PAGE_LENGTH = 500
MAX_PAGES = 100
TIMEOUT_S = 10
TOKEN_TTL_S = 600
# "60 requests/minute per API token ... will return a 429": a read refused is tried again to the minute's end.
THROTTLED_TRIES, THROTTLED_WAIT_S = 40, 2.0
CUSTOM = "custom_upload"  # a thumbnail's source_type when its image was given (thumbnails.go's fixture)


def _session(token: str | None = None) -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # the simulator is on loopback
    if token:
        session.headers["Authorization"] = f"Bearer {token}"
    return session


def _get(session: requests.Session, url: str, **params: str) -> requests.Response:
    for _ in range(THROTTLED_TRIES):
        answer = session.get(url, params=params, timeout=TIMEOUT_S)
        if answer.status_code != 429:
            return answer
        time.sleep(THROTTLED_WAIT_S)
    return answer


def _json(session: requests.Session, url: str, **params: str) -> dict:
    answer = _get(session, url, **params)
    assert answer.status_code == 200, f"GET {url}: HTTP {answer.status_code} {answer.text[:200]}"
    body = answer.json()
    assert isinstance(body, dict), f"GET {url}: not an object"
    return body


def _pages(session: requests.Session, url: str, key: str, **params: str) -> list[dict]:
    """Every item of a Management API collection, page by page until `total` is reached."""
    items: list[dict] = []
    for page in range(1, MAX_PAGES + 1):
        body = _json(session, url, page=str(page), page_length=str(PAGE_LENGTH), **params)
        listed = [item for item in body.get(key) or [] if isinstance(item, dict)]
        items += listed
        if len(listed) < PAGE_LENGTH or page * PAGE_LENGTH >= int(body.get("total") or 0):
            return items
    raise AssertionError(f"GET {url}: more than {MAX_PAGES} pages")


def _site(sim, suffix: str) -> str:
    return f"{sim.url}/v2/sites/{sim.config.account_id}/{suffix}"


def signed_token(resource: str, secret: str, ttl_s: float = TOKEN_TTL_S) -> str:
    """A Delivery API JWT (HS256) for `resource`, as a site's backend signs it."""

    def b64(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64(json.dumps({"resource": resource, "exp": int(time.time() + ttl_s)}).encode())
    signature = hmac.new(secret.encode(), f"{head}.{claims}".encode(), hashlib.sha256).digest()
    return f"{head}.{claims}.{b64(signature)}"


def on_sim(sim, link: str) -> str:
    """A link the simulator handed out, on the host the test reaches it at (its links name the host the create was
    addressed to: the stack's view of the simulator, which is its own CDN)."""
    parts = urllib.parse.urlsplit(link)
    if not parts.path.startswith("/_play/"):
        return link
    base = urllib.parse.urlsplit(sim.url)
    return urllib.parse.urlunsplit((base.scheme, base.netloc, parts.path, parts.query, ""))


def delivered(sim, remote_id: str) -> dict:
    """The Delivery API's playlist item of the media, as a player asks for it (signed where the property signs)."""
    params = {}
    if sim.config.signing_secret:
        params["token"] = signed_token(f"/v2/media/{remote_id}", sim.config.signing_secret)
    answer = _get(_session(), f"{sim.url}/_play/jwplayer/{remote_id}/media.json", **params)
    assert answer.status_code == 200, f"media {remote_id} is not delivered to players: HTTP {answer.status_code}"
    (item,) = answer.json()["playlist"]
    return item


def _custom_poster(sim, remote_id: str) -> bool:
    """Whether the media's poster is a custom thumbnail JW has read (its status ready), per the Management API."""
    listed = _pages(_session(sim.config.token), _site(sim, "thumbnails/"), "thumbnails", q=f"media_id:{remote_id}")
    for thumbnail in listed:
        links = (thumbnail.get("relationships") or {}).get("media") or []
        poster = any(m.get("id") == remote_id and m.get("is_poster") is True for m in links if isinstance(m, dict))
        if poster:
            return thumbnail.get("source_type") == CUSTOM and thumbnail.get("status") == "ready"
    return False


def _fetched(sim, link: str) -> bytes:
    answer = _get(_session(), on_sim(sim, link))
    assert answer.status_code == 200, f"GET {link}: HTTP {answer.status_code}"
    return answer.content


def seconds(stamp: str) -> float:
    """A WebVTT timestamp ("01:02:03.500" or "02:03.500") in seconds."""
    total = 0.0
    for part in stamp.split(":"):
        total = total * 60 + float(part)
    return total


def _chapters(sim, item: dict) -> tuple[tuple[float, str], ...]:
    held = []
    for track in item.get("tracks") or []:
        if isinstance(track, dict) and track.get("kind") == "chapters":
            text = _fetched(sim, track["file"]).decode("utf-8-sig")  # WebVTT is UTF-8, whatever the type says
            cues = webvtt.from_buffer(io.StringIO(text)).captions
            held += [(seconds(cue.start), " ".join(line.strip() for line in cue.lines if line.strip())) for cue in cues]
    return tuple(sorted(held, key=lambda c: c[0]))


def extras(sim, remote_id: str) -> HeldExtras:
    """The media's custom poster (as a player is served it, unchanged) and its delivered chapters."""
    item = delivered(sim, remote_id)
    thumbnail = _fetched(sim, item["image"]) if _custom_poster(sim, remote_id) else None
    return HeldExtras(thumbnail=thumbnail, chapters=_chapters(sim, item))


def collections(sim) -> list[HeldCollection]:
    """Every playlist of the property (oldest first, as the list gives them); a manual one's media in its order."""
    session = _session(sim.config.token)
    held = []
    for playlist in _pages(session, _site(sim, "playlists/"), "playlists"):
        pid, metadata = str(playlist["id"]), playlist.get("metadata") or {}
        if metadata.get("playlist_type", "manual") != "manual":  # a dynamic one holds a rule, not media
            held.append(HeldCollection(pid, str(metadata.get("title")), (), ordered=False))
            continue
        manual = _json(session, _site(sim, f"playlists/{pid}/manual_playlist/"))
        values = (((manual.get("metadata") or {}).get("media_filter") or {}).get("include") or {}).get("values")
        held.append(HeldCollection(pid, str(metadata.get("title")), tuple(values or ()), ordered=True))
    return held
