"""What a viewer sees first, read from Wistia (issue 42): each media's thumbnail (the image as made, at its public
link), the chapters its player shows (a customization), and its folder as a collection with its place in the
folder's order, on the "wistia" simulator profile (infra/sim/platforms/wistia_extras.py cites the documents).

Wistia publishes no Python SDK (tests/sim/test_source_wistia.py says why none drives these): what the simulator
holds is read here over HTTP as its OpenAPI file describes it, and the rows are held to it, and the requests to the
budget: the customizations a request a media, each folder's order once a sweep, and neither without tracks.
"""

from __future__ import annotations

from collections import Counter

import pytest
from migrator.messages import AssetMessage
from migrator.sources import build

from tests.sim.support import list_all

TOKEN = "wistia-token"
HEADERS = {"Authorization": f"Bearer {TOKEN}", "X-Wistia-API-Version": "2026-03"}


@pytest.fixture
def library(launch):
    def start(**config):
        sim = launch("wistia", token=TOKEN, **{"library_size": 40, **config})
        return sim, build("wistia", lambda: {"token": TOKEN}, sim.url + "/modern", patient=True, rate_per_s=0)

    return start


def every(web, sim, path: str, **params) -> list[dict]:
    """Every media of a Wistia list, page after page (offset paging)."""
    found, page = [], 1
    while True:
        got = web.get(f"{sim.url}/modern{path}", headers=HEADERS, params={**params, "page": page, "per_page": 100})
        found += got.json()
        if len(got.json()) < 100:
            return found
        page += 1


def test_each_row_carries_the_thumbnail_chapters_and_folder_order_wistia_holds(library, web):
    sim, source = library(library_unfetchable_every=10)
    rows = [e for e in list_all(source)[0] if isinstance(e, AssetMessage)]
    assert len(rows) == 36
    orders: dict[str, list[str]] = {}
    for row in rows:
        hid = row.metadata["source_id"]
        media = web.get(f"{sim.url}/modern/medias/{hid}", headers=HEADERS).json()
        shown = media["thumbnail"]["url"]
        assert "image_crop_resized=" in shown and row.thumbnail_url == shown.split("?")[0]  # the image as made
        image = web.get(row.thumbnail_url)  # a public link: no token
        assert image.status_code == 200 and image.headers["Content-Type"] == "image/jpeg"
        assert image.content[:3] == b"\xff\xd8\xff" and f"wistia media {hid}".encode() in image.content
        plugin = web.get(f"{sim.url}/modern/medias/{hid}/customizations", headers=HEADERS).json().get("plugin", {})
        chapters = plugin.get("chapters", {"on": "false"})
        shown_chapters = [
            (float(c["time"]), c["title"]) for c in chapters.get("chapterList", []) if c["deleted"] != "true"
        ]
        assert [(c.start_s, c.title) for c in row.chapters] == (shown_chapters if chapters["on"] == "true" else [])
        folder = media["folder"]
        if folder["hashedId"] not in orders:
            listed = every(web, sim, "/medias", folder_id=folder["hashedId"], sort_by="position", archived="false")
            orders[folder["hashedId"]] = [m["hashed_id"] for m in listed]
        place = orders[folder["hashedId"]].index(hid)
        assert [(c.id, c.name, c.kind, c.position) for c in row.collections] == [
            (folder["hashedId"], folder["name"], "folder", place)
        ]
        assert row.published_at is None  # Wistia keeps no publish time: `created` is the upload
    by_id = {r.metadata["source_id"]: r for r in rows}
    assert [c.title for c in by_id["w000000002"].chapters] == ["Intro", "Results"]  # "Setting up" deleted
    assert by_id["w000000008"].chapters == ()  # its chapters turned off (`on` "false")
    marketing = sorted((r for r in rows if r.folder == "Marketing"), key=lambda r: r.collections[0].position)
    # Newest first, as its owner arranged it: media 36, then 33 (39 is archived: not among the active medias).
    assert [r.metadata["source_id"] for r in marketing][:2] == ["w000000010", "w00000000x"]
    assert [r.collections[0].position for r in marketing][:2] == [0, 1]


def test_the_extras_cost_a_request_a_media_for_chapters_and_one_a_folder_and_none_without_tracks(library):
    sim, source = library(library_size=230)
    rows = [e for e in list_all(source)[0] if isinstance(e, AssetMessage)]
    asked = Counter(entry["op"] for entry in sim.requests_log(ops=None))
    assert len(rows) == 230 and asked["src_customizations"] == 230 and asked["src_captions"] == 230
    # 3 pages of the library, the archived pass, and each of the 3 folders' order (77 medias: one page each).
    assert asked["list"] == 3 + 1 + 3
    assert all(r.thumbnail_url and r.collections[0].position is not None for r in rows)

    quiet, bare = library(library_size=230)
    rows = [e for e in list_all(bare, tracks=False)[0] if isinstance(e, AssetMessage)]
    asked = Counter(entry["op"] for entry in quiet.requests_log(ops=None))
    assert asked["src_customizations"] == 0 and asked["list"] == 3 + 1
    assert all(r.thumbnail_url and [c.position for c in r.collections] == [None] for r in rows)
    assert not any(r.chapters for r in rows)
