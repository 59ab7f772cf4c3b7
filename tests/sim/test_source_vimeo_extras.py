"""What a viewer sees first, read from Vimeo (issue 42): each video's active picture, its chapters, its folder and the
showcases that hold it in their order, and its release time, on the "vimeo" simulator profile.

PyVimeo 1.1.2 (Vimeo's own SDK) reads what the simulator holds, as Vimeo documents it (infra/sim/platforms/
vimeo_library.py cites the pages), including the picture's image at its link; migrator.sources.vimeo lists the
library into rows, and each test holds the rows to what PyVimeo read, and the requests to the budget: nothing
asked that the video's own answer did not say was there.
"""

from __future__ import annotations

import struct
from collections import Counter

import pytest
import vimeo
from migrator.messages import AssetMessage
from migrator.sources import ResolutionKind, build, parse_ref

from tests.sim.support import list_all

TOKEN = "vimeo-pat"
EXTRA_OPS = ("src_chapters", "src_albums", "src_album_videos", "src_pictures", "src_picture", "src_video_albums")


@pytest.fixture
def library(launch):
    def start(**config):
        sim = launch("vimeo", **{"token": TOKEN, "library_size": 30, **config})
        return sim, build("vimeo", lambda: {"token": TOKEN}, sim.url, patient=True)

    return start


def pyvimeo(sim) -> vimeo.VimeoClient:
    client = vimeo.VimeoClient(token=TOKEN)
    client.API_ROOT = sim.url
    return client


def every(client, path: str, **params) -> list[dict]:
    """Every item of a Vimeo collection, page after page as its `paging.next` says."""
    items, following = [], path
    body = client.get(following, params={"per_page": 100, **params}).json()
    while True:
        items += body["data"]
        following = body["paging"]["next"]
        if not following:
            return items
        body = client.get(following).json()


def png_size(image: bytes) -> tuple[int, int]:
    """The width and height a PNG's IHDR chunk says (the first chunk, right after the signature)."""
    assert image[:8] == b"\x89PNG\r\n\x1a\n" and image[12:16] == b"IHDR"
    return struct.unpack(">II", image[16:24])


def test_pyvimeo_reads_pictures_chapters_and_showcases_and_the_image_behind_a_picture(library, web):
    sim, _ = library(library_size=120)
    client = pyvimeo(sim)
    video = client.get("/videos/700000000").json()
    active = video["pictures"]
    assert active["active"] is True and active["type"] == "custom" and active["uri"].startswith("/videos/700000000/")
    held = every(client, "/videos/700000000/pictures")
    assert [p["type"] for p in held] == ["custom", "default"] and [p["active"] for p in held] == [True, False]
    largest = max(active["sizes"], key=lambda s: s["width"])
    image = web.get(largest["link"])  # Vimeo's image links need no token
    assert image.status_code == 200 and image.headers["Content-Type"] == "image/png"
    assert png_size(image.content) == (largest["width"], largest["height"]) == (1920, 1080)
    assert web.get(largest["link"].replace("-d_1920x1080", "-d_1921x1080")).status_code == 404
    # Chapters: where has_chapters says so, a page of 100 at most, the rest on the next.
    assert client.get("/videos/700000000").json()["has_chapters"] is False
    assert client.get("/videos/700000100").json()["has_chapters"] is True
    first = client.get("/videos/700000100/chapters", params={"per_page": 100}).json()
    assert first["total"] == 130 and len(first["data"]) == 100 and first["paging"]["next"]
    chapters = every(client, "/videos/700000100/chapters")
    assert len(chapters) == 130 and [c["timecode"] for c in chapters] == sorted({c["timecode"] for c in chapters})
    # Showcases: the account's, and a showcase's videos in the order its owner arranged.
    albums = every(client, "/me/albums")
    assert [(a["name"], a["sort"]) for a in albums] == [
        ("Featured", "arranged"),
        ("Onboarding « 2021 »", "arranged"),
        ("Latest webinars", "newest"),
    ]
    featured = every(client, f"{albums[0]['uri']}/videos", sort="manual", fields="uri")
    assert [v["uri"] for v in featured][:3] == ["/videos/700000110", "/videos/700000099", "/videos/700000088"]
    assert featured[0] == {"uri": "/videos/700000110"}  # the JSON filter: only the fields asked
    assert [a["name"] for a in every(client, "/videos/700000066/albums")] == ["Featured"]


def test_each_row_carries_the_picture_chapters_folder_showcases_and_release_time_vimeo_holds(library):
    sim, source = library(library_unfetchable_every=10)
    rows = [e for e in list_all(source)[0] if isinstance(e, AssetMessage)]
    client = pyvimeo(sim)
    # What Vimeo holds, read through PyVimeo: each showcase's videos, in the manual order of an arranged one.
    truth: dict[str, list[tuple[str, str, int | None]]] = {}
    for album in every(client, "/me/albums"):
        arranged = album["sort"] == "arranged"
        listed = every(client, f"{album['uri']}/videos", sort="manual" if arranged else "date", fields="uri")
        showcase = f"albums/{album['uri'].rsplit('/', 1)[1]}"
        for place, held in enumerate(listed):
            vid = held["uri"].rsplit("/", 1)[1]
            truth.setdefault(vid, []).append((showcase, album["name"], place if arranged else None))
    assert len(rows) == 27
    for row in rows:
        vid = row.metadata["source_id"]
        video = client.get(f"/videos/{vid}").json()
        assert row.thumbnail_url == f"vimeo://{vid}{video['pictures']['uri'].removeprefix(f'/videos/{vid}')}"
        assert row.published_at == video["release_time"].replace("+00:00", "Z")
        assert row.created_at == video["created_time"].replace("+00:00", "Z")
        chapters = every(client, f"/videos/{vid}/chapters") if video["has_chapters"] else []
        assert [(c.start_s, c.title) for c in row.chapters] == [(float(c["timecode"]), c["title"]) for c in chapters]
        folder = ("projects/" + video["parent_folder"]["uri"].rsplit("/", 1)[1], video["parent_folder"]["name"], None)
        shown = [(c.id, c.name, c.position) for c in row.collections]
        assert shown == [folder, *truth.get(vid, [])] and row.folder == video["parent_folder"]["name"]
        assert [c.kind for c in row.collections] == ["folder"] + ["showcase"] * len(truth.get(vid, []))
    by_id = {r.metadata["source_id"]: r for r in rows}
    assert by_id["700000000"].thumbnail_url == "vimeo://700000000/pictures/1800000001"  # the custom picture
    assert by_id["700000001"].thumbnail_url == "vimeo://700000001/pictures/1800000002"  # Vimeo's frame
    assert [(c.name, c.position) for c in by_id["700000000"].collections[1:]] == [("Featured", 2)]  # 22, 11, 0
    assert by_id["700000001"].published_at == "2020-01-02T00:01:00Z" != by_id["700000001"].created_at
    assert len(by_id["700000001"].chapters) == 3 and by_id["700000001"].chapters[0].title == "Intro"


def test_the_extras_cost_a_request_only_where_the_video_says_there_is_something(library):
    """Pictures, the folder and the release time come in the video's own answer (`fields`); chapters are asked for
    only where `has_chapters`; the showcases once a sweep, and each showcase's videos once. --no-tracks: none."""
    sim, source = library(library_unfetchable_every=10)
    rows = [e for e in list_all(source)[0] if isinstance(e, AssetMessage)]
    asked = Counter(entry["op"] for entry in sim.requests_log(ops=None))
    with_chapters = [r for r in rows if r.chapters]
    assert len(with_chapters) == 9 and asked["src_chapters"] == len(with_chapters)
    assert asked["src_albums"] == 1 and asked["src_album_videos"] == 3  # three showcases, none empty
    assert asked["src_pictures"] == asked["src_picture"] == asked["src_video_albums"] == 0
    assert asked["list"] == 1 and all(r.thumbnail_url and r.published_at for r in rows)

    quiet, bare = library(library_unfetchable_every=10)
    rows = [e for e in list_all(bare, tracks=False)[0] if isinstance(e, AssetMessage)]
    asked = Counter(entry["op"] for entry in quiet.requests_log(ops=None))
    assert sum(asked[op] for op in EXTRA_OPS) == 0 and asked["list"] == 1
    assert all(r.thumbnail_url for r in rows) and not any(r.chapters for r in rows)  # in the answer, or not read
    assert all([c.kind for c in r.collections] == ["folder"] for r in rows)


def test_a_picture_reference_resolves_to_its_largest_image_and_a_replaced_one_to_the_one_shown_now(library, web):
    sim, source = library(link_ttl_s=60)
    ready = source.resolve(parse_ref("vimeo://700000000/pictures/1800000001"))
    assert ready.kind is ResolutionKind.READY and ready.expires_at is None and "-d_1920x1080" in ready.url
    assert png_size(web.get(ready.url).content) == (1920, 1080)
    # The owner chose another picture since the inventory: the one the video shows now, not a failure.
    replaced = source.resolve(parse_ref("vimeo://700000000/pictures/1800000999"))
    assert replaced.kind is ResolutionKind.READY and "/1800000001-" in replaced.url
    web.post(f"{sim.url}/_sim/library", json={"delete": [0]}).raise_for_status()
    gone = source.resolve(parse_ref("vimeo://700000000/pictures/1800000001"))
    assert gone.kind is ResolutionKind.UNFETCHABLE and gone.reason.startswith("not found at the source")
    assert web.get(ready.url).status_code == 404  # the image of a deleted video is gone from the CDN too
