"""The "apivideo" simulator profile's library (a source) driven by api-video 1.4.7, api.video's official Python client,
which type-checks every field against oas_apivideo.yaml: what a viewer sees first (issue 42;
infra/sim/platforms/apivideo_source_extras.py): a video's `assets.thumbnail` and the image at it (a private video's
token spent by one request), `publishedAt`, and its chapters (`ChaptersApi.list`, `get`) with the WebVTT file at each
one's `src`."""

from __future__ import annotations

import base64
import io

import pytest
import webvtt
from apivideo.api_client import ApiClient
from apivideo.apis import ChaptersApi, VideosApi
from apivideo.configuration import Configuration
from apivideo.exceptions import ApiException

API_KEY = "apivideo-library-key"


@pytest.fixture
def client(launch) -> ApiClient:
    sim = launch("apivideo", api_key=API_KEY, library_size=24, library_private_every=3)
    header = "Basic " + base64.b64encode(f"{API_KEY}:".encode()).decode()
    return ApiClient(Configuration(host=sim.url), header_name="Authorization", header_value=header)


def vid(index: int) -> str:
    return f"vi{index:020d}"


def test_the_sdk_reads_the_thumbnail_the_chapters_and_the_publish_time_and_the_files_behind_them(client, web):
    videos, chapters = VideosApi(client), ChaptersApi(client)
    public, private = videos.get(vid(1)), videos.get(vid(0))
    assert public.published_at == public.created_at and public.assets.thumbnail.endswith(f"/{vid(1)}/thumbnail.jpg")
    image = web.get(public.assets.thumbnail)
    assert image.status_code == 200 and image.content[:3] == b"\xff\xd8\xff"
    assert f"api.video {vid(1)}".encode() in image.content  # the video's own image
    assert "/token/" in private.assets.thumbnail and web.get(private.assets.thumbnail).status_code == 200
    assert web.get(private.assets.thumbnail).status_code == 404  # "can be consumed only once"
    listed = chapters.list(vid(1))
    assert [c.language for c in listed.data] == ["en", "fr"] and listed.pagination.items_total == 2
    assert chapters.list(vid(5), page_size=1).pagination.pages_total == 1
    english = chapters.get(vid(1), "en")
    cues = webvtt.from_buffer(io.StringIO(web.get(english.src).text))
    assert [c.text for c in cues] == ["Opening", "The method", "Summary"] and cues[0].start == "00:00:00.000"
    assert chapters.list(vid(2)).data == []
    with pytest.raises(ApiException) as missing:
        chapters.get(vid(2), "en")
    assert missing.value.status == 404
