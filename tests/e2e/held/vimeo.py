"""What a Vimeo target holds of a video's extras (issue 42), read through Vimeo's own API on the "vimeo" simulator
(infra/sim/platforms/vimeo_target_extras.py models it), never from what was sent.

Documents: vimeo/openapi api.yaml (febb900, 2023-12-13) for the video's `pictures` ("The video's active picture"),
pictures (`GET /videos/{id}/pictures` "returns all the thumbnail images"; a picture's `active`, `type` default or
custom, `sizes[].link`), folders (`GET /me/projects`, `GET /me/projects/{id}/videos`) and showcases (`GET /me/albums`,
`GET /me/albums/{id}/videos` with `sort=manual`, "Sort the results as the user has arranged them"); the API reference
as konfig-sdks/vimeo-python-sdk generates it (2024-03-19) for chapters (`GET /videos/{id}/chapters` "returns every
chapter", `timecode` "in seconds from the start of the video"). Every list is a page (`page`, `per_page` up to 100,
`paging.next` null on the last).

- the thumbnail: the video's active picture (`GET /videos/{id}`, its `pictures`); where it is a custom one, the image
  a player is served at its largest `sizes[].link`, read without credentials as Vimeo's image CDN serves it. The
  simulator serves the uploaded file unchanged (`picture_file`: the bytes PUT to the picture's link), so
  `thumbnail_as_uploaded` is True; Vimeo itself serves its own renditions of it;
- chapters: every page of `GET /videos/{id}/chapters`, as (timecode, title) in start order (two at one timecode are
  both kept: a chapter written twice shows);
- collections: every folder (`remote_id` "projects/<id>", no order of its own: a folder lists its videos by its own
  sort) and every showcase ("albums/<id>", in its arrangement), the forms our adapter records as a collection's id
  (functions/migrator/providers/vimeo_extras.py, `create_collection`).
"""

from __future__ import annotations

import time
import urllib.parse

import requests

from . import HeldCollection, HeldExtras

PER_PAGE = 100  # "up to a maximum of 100"
MAX_PAGES = 100  # a page count past this is a simulator that never says the last page
TIMEOUT_S = 10
THROTTLED_TRIES, THROTTLED_WAIT_S = 40, 2.0  # a read refused 429 (the account's rate, shared with the stack's calls)


def _session(sim) -> requests.Session:
    """The account's bearer token (its personal access token); the simulator is on loopback: no proxy."""
    session = requests.Session()
    session.trust_env = False
    session.headers["Authorization"] = f"Bearer {sim.config.token}"
    session.headers["Accept"] = "application/vnd.vimeo.*+json;version=3.4"
    return session


def _get(session: requests.Session, sim, path: str, **params: str) -> dict:
    for _ in range(THROTTLED_TRIES):
        answer = session.get(f"{sim.url}{path}", params=params, timeout=TIMEOUT_S)
        if answer.status_code != 429:
            break
        time.sleep(THROTTLED_WAIT_S)
    assert answer.status_code == 200, f"GET {path}: HTTP {answer.status_code} {answer.text[:200]}"
    body = answer.json()
    assert isinstance(body, dict), f"GET {path}: not an object"
    return body


def _pages(session: requests.Session, sim, path: str, **params: str) -> list[dict]:
    """Every item of a Vimeo list, page by page until `paging.next` is null."""
    items: list[dict] = []
    for page in range(1, MAX_PAGES + 1):
        body = _get(session, sim, path, page=str(page), per_page=str(PER_PAGE), **params)
        items += [item for item in body.get("data") or [] if isinstance(item, dict)]
        if not (body.get("paging") or {}).get("next"):
            return items
    raise AssertionError(f"GET {path}: more than {MAX_PAGES} pages")


def last_id(uri: object, collection: str) -> str:
    """The id a Vimeo URI ends with, the segment before it `collection` ("/users/1/projects/5" -> "5")."""
    parts = str(uri or "").rstrip("/").split("/")
    assert len(parts) >= 2 and parts[-2] == collection and parts[-1].isdigit(), f"not a {collection} URI: {uri!r}"
    return parts[-1]


def on_sim(sim, link: str) -> str:
    """A link the simulator handed out, on the host the test reaches it at: its links name the host the create was
    addressed to (the stack's view of the simulator), and the simulator is its own image CDN."""
    parts = urllib.parse.urlsplit(link)
    if not parts.path.startswith("/_play/"):
        return link
    base = urllib.parse.urlsplit(sim.url)
    return urllib.parse.urlunsplit((base.scheme, base.netloc, parts.path, parts.query, ""))


def _thumbnail(session: requests.Session, sim, remote_id: str) -> bytes | None:
    """The custom picture's image a player is served; None where the active picture is the video's own frame."""
    video = _get(session, sim, f"/videos/{remote_id}")
    picture = video.get("pictures")
    if not isinstance(picture, dict) or picture.get("type") != "custom" or picture.get("active") is not True:
        return None
    sizes = [s for s in picture.get("sizes") or [] if isinstance(s, dict) and s.get("link")]
    assert sizes, f"video {remote_id}: a custom active picture with no image link"
    largest = max(sizes, key=lambda s: s.get("width") or 0)
    plain = requests.Session()  # an image CDN: no credentials
    plain.trust_env = False
    image = plain.get(on_sim(sim, largest["link"]), timeout=TIMEOUT_S)
    assert image.status_code == 200, f"video {remote_id}: its picture's image answered HTTP {image.status_code}"
    return image.content


def _chapters(session: requests.Session, sim, remote_id: str) -> tuple[tuple[float, str], ...]:
    held = []
    for chapter in _pages(session, sim, f"/videos/{remote_id}/chapters"):
        held.append((float(chapter["timecode"]), str(chapter["title"])))
    return tuple(sorted(held, key=lambda c: c[0]))


def extras(sim, remote_id: str) -> HeldExtras:
    """The video's custom picture (as served, unchanged) and its chapters."""
    session = _session(sim)
    return HeldExtras(thumbnail=_thumbnail(session, sim, remote_id), chapters=_chapters(session, sim, remote_id))


def _members(session: requests.Session, sim, path: str, **params: str) -> tuple[str, ...]:
    return tuple(last_id(v.get("uri"), "videos") for v in _pages(session, sim, path, fields="uri", **params))


def collections(sim) -> list[HeldCollection]:
    """Every folder, then every showcase, of the account (oldest first, as the lists give them)."""
    session = _session(sim)
    held = []
    for folder in _pages(session, sim, "/me/projects"):
        number = last_id(folder.get("uri"), "projects")
        members = _members(session, sim, f"/me/projects/{number}/videos")
        held.append(HeldCollection(f"projects/{number}", str(folder.get("name")), members, ordered=False))
    for showcase in _pages(session, sim, "/me/albums"):
        number = last_id(showcase.get("uri"), "albums")
        members = _members(session, sim, f"/me/albums/{number}/videos", sort="manual")
        held.append(HeldCollection(f"albums/{number}", str(showcase.get("name")), members, ordered=True))
    return held
