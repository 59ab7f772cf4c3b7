"""What an api.video video shows besides its file (issue 42), on the "apivideo" profile, driven by the official
Python SDK (api-video 1.4.7): a thumbnail uploaded or picked from a time, chapters uploaded and listed, the
update that rewrites metadata; and what a player reads back at the video's own URLs (the image, the chapters
file). Then our provider against the same simulator: the create's collections as tags and metadata, a thumbnail
and chapters set, each looked for before a second write."""

from __future__ import annotations

import io
import struct
import zlib

import pytest
from apivideo.api_client import ApiClient
from apivideo.apis import ChaptersApi, VideosApi
from apivideo.configuration import Configuration
from apivideo.exceptions import ApiException, NotFoundException
from apivideo.model.metadata import Metadata
from apivideo.model.video_creation_payload import VideoCreationPayload
from apivideo.model.video_thumbnail_pick_payload import VideoThumbnailPickPayload
from apivideo.model.video_update_payload import VideoUpdatePayload
from migrator.extras import chapters_webvtt, digest
from migrator.messages import AssetMessage
from migrator.providers import AssetRef, build
from migrator.providers.extras import ChaptersUpload, ThumbnailUpload
from migrator.row_extras import Chapter, Collection
from migrator.tracks import TrackResult

from infra.sim import media
from tests.sim.support import wait_for

API_KEY = "apivideo-sdk-key"
CHAPTERS = b"WEBVTT\n\n00:00:00.000 --> 00:00:10.000\nIntro\n\n00:00:10.000 --> 00:00:20.000\nPart two\n"


def png(width: int = 4, height: int = 3) -> bytes:
    """A valid PNG of one grey colour (zlib and struct only)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x80\x80\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def named(content: bytes, name: str) -> io.BytesIO:
    f = io.BytesIO(content)
    f.name = name  # the SDK names the multipart part after the file
    return f


@pytest.fixture
def sdk(launch):
    sim = launch("apivideo", api_key=API_KEY, processing_delay_s=0.05)
    client = ApiClient(Configuration(host=sim.url, username=API_KEY, password=""))
    client.default_headers["Authorization"] = client.configuration.get_basic_auth_token()
    videos = VideosApi(client)
    video = videos.create(VideoCreationPayload(title="t", source="https://media.example.com/a.mp4?duration=30"))
    assert wait_for(lambda: videos.get_status(video.video_id).encoding.playable, timeout=3)
    return sim, videos, ChaptersApi(client), video.video_id


def test_sdk_uploads_a_thumbnail_and_the_player_reads_that_image_at_the_videos_thumbnail_url(sdk, web):
    _sim, videos, _, vid = sdk
    image = png()
    answer = videos.upload_thumbnail(vid, named(image, "poster.png"))
    assert answer.video_id == vid
    served = web.get(videos.get(vid).assets.thumbnail, timeout=5)
    assert served.status_code == 200 and served.content == image and served.headers["Content-Type"] == "image/png"


def test_sdk_picks_a_frame_which_replaces_the_image_and_a_bad_timecode_or_file_is_refused(sdk, web):
    sim, videos, _, vid = sdk
    videos.upload_thumbnail(vid, named(png(), "poster.png"))
    videos.pick_thumbnail(vid, VideoThumbnailPickPayload(timecode="00:00:05.00"))
    assert web.get(videos.get(vid).assets.thumbnail, timeout=5).content == media.THUMBNAIL  # a frame, not the image
    videos.pick_thumbnail(vid, VideoThumbnailPickPayload(timecode="00:01:00.000"))  # the documented example
    bad = web.patch(f"{sim.url}/videos/{vid}/thumbnail", json={"timecode": "five seconds"}, auth=(API_KEY, ""))
    assert bad.status_code == 400 and bad.json()["problems"][0]["name"] == "timecode"
    with pytest.raises(ApiException) as refused:
        videos.upload_thumbnail(vid, named(b"GIF89a not taken", "poster.gif"))
    assert refused.value.status == 400


def test_sdk_uploads_chapters_a_language_each_lists_them_and_the_player_reads_the_file(sdk, web):
    _sim, _, chapters, vid = sdk
    made = chapters.upload(vid, "en", named(CHAPTERS, "en.vtt"))
    assert made.language == "en" and made.uri == f"/videos/{vid}/chapters/en"
    assert [c.language for c in chapters.list(vid).data] == ["en"]
    assert chapters.get(vid, "en").src == made.src
    assert web.get(made.src, timeout=5).content == CHAPTERS
    with pytest.raises(NotFoundException):
        chapters.get(vid, "fr")
    with pytest.raises(ApiException) as refused:
        chapters.upload(vid, "fr", named(b"not a vtt file", "fr.vtt"))
    assert refused.value.status == 400


def test_sdk_update_overwrites_the_metadata_list_whole(sdk):
    _sim, videos, _, vid = sdk
    videos.update(vid, VideoUpdatePayload(metadata=[Metadata(key="a", value="1")], tags=["x"]))
    videos.update(vid, VideoUpdatePayload(metadata=[Metadata(key="b", value="2")]))
    video = videos.get(vid)
    assert video.metadata == [Metadata(key="b", value="2")] and video.tags == ["x"]


# --- our provider against the simulator ------------------------------------------------------------------------


def test_our_create_carries_collections_as_tags_and_metadata_and_the_publish_time_in_metadata(launch):
    sim = launch("apivideo")
    provider = build("apivideo", sim.url, lambda: "key")
    row = AssetMessage(
        "lib/1",
        "https://media.example.com/a.mp4",
        tags=("talks",),
        published_at="2019-05-01T10:00:00Z",
        collections=(Collection("f1", "Talks", "folder", 2), Collection("s9", "Best of", "showcase")),
    )
    made = provider.create(AssetRef("lib/1", details=row), row.source_url)
    video = sim.requests_log()[-1]
    assert made.kind.value == "created", made
    body = provider._create_body(AssetRef("lib/1", details=row), row.source_url)[0]
    assert body["tags"] == ["talks", "Talks", "Best of"]
    pairs = {m["key"]: m["value"] for m in body["metadata"]}
    assert pairs["published_at"] == "2019-05-01T10:00:00Z"
    assert '"name":"Talks"' in pairs["collections"] and '"position":2' in pairs["collections"]
    assert video["op"] == "create"


def test_our_thumbnail_is_uploaded_once_marked_and_found_by_a_later_look(launch, web):
    sim = launch("apivideo", processing_delay_s=0.05)
    provider = build("apivideo", sim.url, lambda: "key")
    vid = provider.create(AssetRef("lib/2"), "https://media.example.com/a.mp4").remote_id
    assert provider.thumbnail_state(vid).custom is False
    image = png()
    upload = ThumbnailUpload(image, "image/png", "png", digest(image))
    assert provider.set_thumbnail(vid, upload).kind is TrackResult.ATTACHED
    look = provider.thumbnail_state(vid)
    assert look.custom and look.digest == digest(image)
    # A private video (no privacy in the row, signed by default): its link carries a fresh private token.
    link = web.get(f"{sim.url}/videos/{vid}", auth=("key", ""), timeout=5).json()["assets"]["thumbnail"]
    assert "/token/" in link and web.get(link, timeout=5).content == image
    assert provider.set_thumbnail_time(vid, 12.5).kind is TrackResult.ATTACHED
    assert sim.requests_log(ops=None)[-1]["op"] == "store_thumbnail_pick"


def test_our_chapters_are_uploaded_as_webvtt_and_looked_for_in_their_language(launch, web):
    sim = launch("apivideo")
    provider = build("apivideo", sim.url, lambda: "key")
    row = AssetMessage("lib/3", "https://media.example.com/a.mp4", privacy="public")
    vid = provider.create(AssetRef("lib/3", details=row), row.source_url).remote_id
    chapters = (Chapter(0.0, "Intro"), Chapter(12.5, "The rest"))
    assert provider.chapters_of(vid, "en").count == 0
    vtt = chapters_webvtt(chapters, 60.0)
    assert provider.set_chapters(vid, ChaptersUpload(chapters, vtt, "en", 60.0)).kind is TrackResult.ATTACHED
    assert provider.chapters_of(vid, "en").count == 1 and provider.chapters_of(vid, "fr").count == 0
    served = web.get(f"{sim.url}{media.PREFIX}apivideo/{vid}/chapters/en.vtt", timeout=5)
    assert served.content == vtt and b"00:00:12.500 --> 00:01:00.000\nThe rest" in served.content
    assert provider.chapters_of("vi" + "0" * 22, "en").kind is TrackResult.VIDEO_GONE
