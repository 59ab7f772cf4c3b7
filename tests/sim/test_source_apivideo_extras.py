"""What a viewer sees first, read from api.video (issue 42): each video's thumbnail (a public video's lasting link, a
private one's as a reference resolved inside a session), its chapters files (a track of kind chapters a language),
and its publish time, on the "apivideo" simulator profile's library (infra/sim/platforms/apivideo_source_extras.py
cites the documents). api.video has no playlists: no collection.

api-video 1.4.7 (api.video's own client, which type-checks every field against oas_apivideo.yaml) reads what the
simulator holds (`VideosApi.get`, `ChaptersApi.list`; more of it in test_sdk_apivideo_library.py);
migrator.sources.apivideo lists the library into rows, held to what the client read, and to the budget: the
chapters a request a video with the captions, none without tracks; the thumbnail in the video's own answer.
"""

from __future__ import annotations

import base64
from collections import Counter

import pytest
from apivideo.api_client import ApiClient
from apivideo.apis import ChaptersApi, VideosApi
from apivideo.configuration import Configuration
from migrator.messages import AssetMessage
from migrator.sources import ResolutionKind, build, parse_ref

from tests.sim.support import list_all

API_KEY = "apivideo-extras-key"


@pytest.fixture
def library(launch):
    def start(**config):
        sim = launch("apivideo", api_key=API_KEY, **{"library_size": 24, "library_private_every": 3, **config})
        source = build("apivideo", lambda: {"api_key": API_KEY}, sim.url, patient=True, rate_per_s=0)
        source.http.session.trust_env = False
        header = "Basic " + base64.b64encode(f"{API_KEY}:".encode()).decode()
        client = ApiClient(Configuration(host=sim.url), header_name="Authorization", header_value=header)
        return sim, source, client

    return start


def vid(index: int) -> str:
    return f"vi{index:020d}"


def test_each_row_carries_the_thumbnail_chapters_tracks_and_publish_time_api_video_holds(library):
    sim, source, client = library()
    rows = [e for e in list_all(source)[0] if isinstance(e, AssetMessage)]
    asked = Counter(entry["op"] for entry in sim.requests_log(ops=None))
    assert len(rows) == 24 and asked["src_chapters"] == asked["src_captions"] == asked["status"] == 24
    assert asked["get"] == 0  # the thumbnail and the publish time are in the listing's own answer
    for row in rows:
        video = VideosApi(client).get(row.metadata["source_id"])
        thumbnail = video.assets.thumbnail
        expected = f"apivideo://{video.video_id}/thumbnail/assets" if "/token/" in thumbnail else thumbnail
        assert row.thumbnail_url == expected and row.published_at == video.published_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        held = [c.language for c in ChaptersApi(client).list(video.video_id).data]
        carried = [(t.kind, t.language, t.url) for t in row.tracks if t.kind == "chapters"]
        assert carried == [("chapters", lang, f"apivideo://{video.video_id}/chapters/{lang}") for lang in held]
        assert row.collections == ()  # no playlists at api.video: tags and metadata stay as they are

    quiet, bare, _client = library()
    rows = [e for e in list_all(bare, tracks=False)[0] if isinstance(e, AssetMessage)]
    asked = Counter(entry["op"] for entry in quiet.requests_log(ops=None))
    assert asked["src_chapters"] == 0 and all(r.thumbnail_url and not r.tracks for r in rows)


def test_references_resolve_to_the_image_and_the_chapters_file_a_private_ones_inside_a_session(library, web):
    sim, source, _client = library()
    private = source.resolve(parse_ref(f"apivideo://{vid(0)}/thumbnail/assets"))
    assert private.kind is ResolutionKind.READY and "avh=" in private.url and private.expires_at
    for _ in range(2):  # a session's link answers more than once (a HEAD, a retry)
        image = web.get(private.url)
        assert image.status_code == 200 and f"api.video {vid(0)}".encode() in image.content
    public = source.resolve(parse_ref(f"apivideo://{vid(1)}/thumbnail/assets"))
    assert public.kind is ResolutionKind.READY and "/token/" not in public.url and web.get(public.url).ok
    chapters = source.resolve(parse_ref(f"apivideo://{vid(1)}/chapters/fr"))
    assert chapters.kind is ResolutionKind.READY and web.get(chapters.url).text.startswith("WEBVTT")
    none = source.resolve(parse_ref(f"apivideo://{vid(2)}/chapters/en"))
    assert none.kind is ResolutionKind.UNFETCHABLE and none.reason.startswith("not found at the source")
    wrong = source.resolve(parse_ref(f"apivideo://{vid(1)}/thumbnail/other"))
    assert wrong.kind is ResolutionKind.UNFETCHABLE
    web.post(f"{sim.url}/_sim/library", json={"delete": [0]}).raise_for_status()
    gone = source.resolve(parse_ref(f"apivideo://{vid(0)}/thumbnail/assets"))
    assert gone.kind is ResolutionKind.UNFETCHABLE and gone.reason.startswith("not found at the source")
