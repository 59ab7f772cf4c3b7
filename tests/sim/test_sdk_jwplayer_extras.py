"""The "jwplayer" simulator's library, what a viewer sees first (issue 42), read by JW Player's official Python SDK
(jwplatform 2.2.2): a media's publish date and its chapters text track, the property's playlists and a manual one's
media in order; and at the Delivery API, the media's poster (a real JPEG) and its chapters file, signed where the
property signs its URLs (checked with PyJWT). As a target: a thumbnail made from a link and promoted to the poster, a
chapters text track uploaded directly to its link and deleted, a manual playlist made and ordered.
infra/sim/platforms/jwplayer_extras.py and jwplayer_target.py cite the pages."""

from __future__ import annotations

import time

import jwt as pyjwt
import pytest
from jwplatform.errors import BadRequestError, NotFoundError
from jwplatform.upload import _get_bytes_hash
from migrator.extras import image_kind

from tests.sim.support import wait_for
from tests.sim.test_sdk_apivideo_extras import png
from tests.sim.test_sdk_jwplayer import fetch_body, jwp  # noqa: F401 (jwp: a property, and the SDK pointed at it)
from tests.sim.test_source_jwplayer import PROPERTY_SECRET, SECRET, SITE, media, sdk
from tests.track_files import FileServer, body


@pytest.fixture
def library(launch):
    def start(**config):
        config = {"token": SECRET, "account_id": SITE, "library_size": 30, "library_chapters_every": 2, **config}
        sim = launch("jwplayer", **config)
        return sim, sdk(sim)  # the official client, its connection pointed at the simulator

    return start


def test_the_sdk_reads_a_medias_publish_date_and_its_chapters_track(library):
    _, client = library(library_captions_every=3)
    got = client.Media.get(site_id=SITE, media_id=media(1)).json_body
    assert got["created"] == "2020-01-01T00:01:00.000000+00:00"
    assert got["metadata"]["publish_start_date"] == "2020-01-01T01:01:00.000000+00:00"  # first delivered an hour on
    tracks = list(client.Media.TextTrack.list(site_id=SITE, media_id=media(1)))
    assert [(t["track_kind"], t["metadata"]["srclang"], t["status"]) for t in tracks] == [
        ("captions", "en", "ready"),
        ("subtitles", "fr", "ready"),
        ("captions", "de", "draft"),
        ("chapters", "en", "ready"),  # every second from the second
    ]
    drafted = list(client.Media.TextTrack.list(site_id=SITE, media_id=media(5)))  # every third chaptered one
    assert [(t["track_kind"], t["status"]) for t in drafted] == [("chapters", "draft")]
    assert list(client.Media.TextTrack.list(site_id=SITE, media_id=media(2))) == []


def test_the_sdk_reads_the_playlists_and_a_manual_ones_media_in_order(library):
    _, client = library()
    listed = client.request("GET", f"/v2/sites/{SITE}/playlists/", query_params={"page_length": 2}).json_body
    assert listed["total"] == 3 and [p["metadata"]["playlist_type"] for p in listed["playlists"]] == [
        "manual",
        "manual",
    ]
    rest = client.request("GET", f"/v2/sites/{SITE}/playlists/", query_params={"page": 2, "page_length": 2})
    assert [(p["id"], p["metadata"]["playlist_type"]) for p in rest.json_body["playlists"]] == [("PLdyn003", "dynamic")]
    picks = client.Playlist.ManualPlaylist.get(site_id=SITE, playlist_id="PLman001").json_body
    assert picks["metadata"]["title"] == "Top picks « 2021 »"
    assert picks["metadata"]["media_filter"]["include"]["values"] == [media(i) for i in (25, 19, 13, 7, 1)]
    course = client.Playlist.ManualPlaylist.get(site_id=SITE, playlist_id="PLman002").json_body
    assert course["metadata"]["media_filter"]["include"]["values"] == [media(i) for i in (15, 19, 23, 27, 3, 7, 11)]
    with pytest.raises(NotFoundError):  # a dynamic playlist is no manual one
        client.Playlist.ManualPlaylist.get(site_id=SITE, playlist_id="PLdyn003")
    with pytest.raises(NotFoundError):  # jwplatform 2.2.2's Playlist.list asks /v2/playlists/: no property in it
        client.Playlist.list(site_id=SITE)


def test_the_delivery_api_serves_the_poster_and_the_chapters_file_signed_where_the_property_signs(library, web):
    sim, client = library(signing_secret=PROPERTY_SECRET)
    poster = f"{sim.url}/_stream/jwplayer/v2/media/{media(1)}/poster.jpg"
    assert web.get(poster, params={"width": 1920}).status_code == 403  # a signed URL is required
    claims = {"resource": f"/v2/media/{media(1)}/poster.jpg", "exp": int(time.time()) + 60}
    image = web.get(poster, params={"width": 1920, "token": pyjwt.encode(claims, PROPERTY_SECRET)})
    assert image.status_code == 200 and image.headers["Content-Type"] == "image/jpeg"
    assert image_kind(image.content).media_type == "image/jpeg" and b"poster of J0000001, width 1920" in image.content
    other = {**claims, "resource": f"/v2/media/{media(3)}/poster.jpg"}
    assert web.get(poster, params={"token": pyjwt.encode(other, PROPERTY_SECRET)}).status_code == 403
    token = pyjwt.encode({"resource": f"/v2/media/{media(1)}", "exp": int(time.time()) + 60}, PROPERTY_SECRET)
    item = web.get(f"{sim.url}/_stream/jwplayer/v2/media/{media(1)}", params={"token": token}).json()["playlist"][0]
    assert item["image"].endswith(f"/v2/media/{media(1)}/poster.jpg?width=720")
    assert [i["width"] for i in item["images"]] == [320, 480, 640, 720, 1280, 1920]
    (chapters,) = [t for t in item["tracks"] if t["kind"] == "chapters"]  # the published one, its file signed
    assert web.get(chapters["file"]).text.startswith("WEBVTT\n\n1\n00:00:00.000 --> ")
    assert web.get(chapters["file"].split("?")[0]).status_code == 403
    drafted = [(t["id"], t["status"]) for t in client.Media.TextTrack.list(site_id=SITE, media_id=media(5))]
    token = pyjwt.encode({"resource": f"/v2/media/{media(5)}", "exp": int(time.time()) + 60}, PROPERTY_SECRET)
    item = web.get(f"{sim.url}/_stream/jwplayer/v2/media/{media(5)}", params={"token": token}).json()["playlist"][0]
    assert drafted == [("C0000050", "draft")] and item["tracks"] == []  # a draft is delivered to no one


# --- as a target (jwplayer_target.py): the official SDK drives the routes JwPlayerProvider's extras use --------------


def test_the_sdk_makes_a_thumbnail_promotes_it_and_the_delivery_serves_it_as_the_poster(jwp, origin, web):  # noqa: F811
    sim, client = jwp()
    image = png(16, 9)
    with FileServer() as files:
        url = files.route("/poster.png", body(image, headers={"Content-Type": "image/png"}))
        mid = client.Media.create(site_id=SITE, body=fetch_body(origin, title="Intro")).json_body["id"]
        assert wait_for(lambda: client.Media.get(site_id=SITE, media_id=mid).json_body["status"] == "ready")
        made = client.Thumbnail.create(
            site_id=SITE,
            body={
                "relationships": {"media": [{"id": mid}]},
                "upload": {"method": "fetch", "thumbnail_type": "static", "download_url": url},
            },
        ).json_body
        assert (made["source_type"], made["status"]) == ("custom_upload", "processing")
        tid = made["id"]
        assert wait_for(lambda: client.Thumbnail.get(site_id=SITE, thumbnail_id=tid).json_body["status"] == "ready")
    listed = list(client.Thumbnail.list(site_id=SITE, query_params={"q": f"media_id:{mid}"}))
    assert [(t["source_type"], t["relationships"]["media"][0]["is_poster"]) for t in listed] == [
        ("video_frame", True),  # JW's own, from the 10th second, until a custom one is promoted
        ("custom_upload", False),
    ]
    promote = {"relationships": {"media": [{"id": mid, "is_poster": True}]}}
    assert client.Thumbnail.update(site_id=SITE, body=promote, thumbnail_id=tid).json_body["id"] == tid
    listed = list(client.Thumbnail.list(site_id=SITE, query_params={"q": f"media_id:{mid}"}))
    assert [t["relationships"]["media"][0]["is_poster"] for t in listed] == [False, True]  # one poster a media
    assert web.get(f"{sim.url}/_play/jwplayer/{mid}/poster.jpg", timeout=5).content == image
    assert web.get(listed[1]["delivery_url"], timeout=5).content == image
    with pytest.raises(BadRequestError):
        client.Thumbnail.list(site_id=SITE, query_params={"q": "title:x"})


def test_the_sdk_uploads_a_chapters_track_directly_and_deletes_one(jwp, origin, web):  # noqa: F811
    _sim, client = jwp()
    mid = client.Media.create(site_id=SITE, body=fetch_body(origin, title="Intro")).json_body["id"]
    made = client.Media.TextTrack.create(
        site_id=SITE,
        media_id=mid,
        body={
            "upload": {"method": "direct", "file_format": "vtt", "auto_publish": True},
            "metadata": {"label": "Chapters", "srclang": "en", "track_kind": "chapters"},
        },
    ).json_body
    assert (made["status"], made["track_kind"]) == ("created", "chapters") and made["upload_link"]
    vtt = b"WEBVTT\n\n00:00:00.000 --> 00:00:05.000\nIntro\n"
    put = web.put(made["upload_link"], data=vtt, timeout=5)  # as jwplatform's _upload_to_s3 does: the bytes alone
    assert put.status_code == 200 and put.headers["ETag"] == f'"{_get_bytes_hash(vtt)}"'
    assert web.put(made["upload_link"], data=vtt, timeout=5).status_code == 403  # a link serves once
    (listed,) = client.Media.TextTrack.list(site_id=SITE, media_id=mid)
    assert (listed["track_kind"], listed["status"], listed["metadata"]["srclang"]) == ("chapters", "ready", "en")
    client.Media.TextTrack.delete(site_id=SITE, media_id=mid, track_id=made["id"])
    assert list(client.Media.TextTrack.list(site_id=SITE, media_id=mid)) == []


def test_the_sdk_makes_a_manual_playlist_and_orders_its_media(jwp, origin):  # noqa: F811
    _sim, client = jwp()
    mids = [client.Media.create(site_id=SITE, body=fetch_body(origin)).json_body["id"] for _ in range(3)]
    made = client.Playlist.ManualPlaylist.create(
        site_id=SITE,
        body={"metadata": {"title": "Course", "custom_params": {"migration_collection": "k1"}}},
    ).json_body
    pid = made["id"]
    assert made["metadata"]["media_filter"]["include"]["values"] == []
    ordered = {"metadata": {"media_filter": {"include": {"values": [mids[2], mids[0], mids[1]]}}}}
    client.Playlist.ManualPlaylist.update(site_id=SITE, body=ordered, playlist_id=pid)
    got = client.Playlist.ManualPlaylist.get(site_id=SITE, playlist_id=pid).json_body
    assert got["metadata"]["title"] == "Course" and got["metadata"]["custom_params"] == {"migration_collection": "k1"}
    assert got["metadata"]["media_filter"]["include"]["values"] == [mids[2], mids[0], mids[1]]
    listed = client.request("GET", f"/v2/sites/{SITE}/playlists/", query_params={"page_length": 10}).json_body
    assert [(p["id"], p["metadata"]["playlist_type"]) for p in listed["playlists"]] == [(pid, "manual")]
    with pytest.raises(BadRequestError):  # a media the property does not hold
        client.Playlist.ManualPlaylist.update(
            site_id=SITE, body={"metadata": {"media_filter": {"include": {"values": ["Jmissing"]}}}}, playlist_id=pid
        )
