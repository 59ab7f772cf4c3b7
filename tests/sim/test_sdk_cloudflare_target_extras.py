"""What a Stream video shows besides its file (issue 42), on the "cloudflare" simulator as a target: the frame its
thumbnail shows, `thumbnailTimestampPct`, set after the create by "Edit video details" (`POST
/accounts/{a}/stream/{uid}`: cloudflare-python 5.9.0 `stream.edit`, StreamEditParams), driven with the SDK and by
our CloudflareProvider (which reads the video's duration first: the row may not know it); and what the create
carries of the rest, in `meta` (Stream documents no chapters, folders, playlists or publish time)."""

from __future__ import annotations

import json

import cloudflare
import pytest
from migrator.messages import AssetMessage
from migrator.providers import AssetRef, build
from migrator.row_extras import Collection
from migrator.tracks import TrackOutcome, TrackResult

from tests.sim.support import wait_for

TOKEN, ACCOUNT = "cf-extras-token", "023e105f4ecef8ad9ca31a8372d0c353"
SOURCE = "https://media.example.com/a.mp4?duration=40"


@pytest.fixture
def stream(launch):
    """(sim, the SDK's client, our provider) on one simulator."""
    sim = launch("cloudflare", token=TOKEN, account_id=ACCOUNT)
    client = cloudflare.Cloudflare(api_token=TOKEN, base_url=sim.url, max_retries=0)
    provider = build("cloudflare", sim.url, lambda: json.dumps({"account_id": ACCOUNT, "api_token": TOKEN}))
    provider.http.session.trust_env = False
    yield sim, client, provider
    client.close()


def made(provider, row: AssetMessage) -> str:
    remote_id = provider.create(AssetRef(row.asset_id, details=row), row.source_url).remote_id
    assert wait_for(lambda: provider.poll(row.asset_id, remote_id).video.target is not None)
    return remote_id


def test_sdk_edits_the_thumbnail_frame_and_reads_it_back(stream):
    _sim, client, provider = stream
    uid = made(provider, AssetMessage("lib/1", SOURCE, privacy="public"))
    edited = client.stream.edit(identifier=uid, account_id=ACCOUNT, thumbnail_timestamp_pct=0.25)
    assert edited.uid == uid and edited.thumbnail_timestamp_pct == 0.25
    assert client.stream.get(identifier=uid, account_id=ACCOUNT).thumbnail_timestamp_pct == 0.25
    with pytest.raises(cloudflare.BadRequestError):  # a fraction of the duration: 0 to 1
        client.stream.edit(identifier=uid, account_id=ACCOUNT, thumbnail_timestamp_pct=1.5)
    with pytest.raises(cloudflare.NotFoundError):
        client.stream.edit(identifier="0" * 32, account_id=ACCOUNT, thumbnail_timestamp_pct=0.5)


def test_our_poster_time_is_the_fraction_of_the_videos_own_duration_and_a_second_set_writes_nothing(stream):
    sim, client, provider = stream
    row = AssetMessage("lib/2", SOURCE, privacy="private")  # no duration in the row: the create could not set it
    uid = made(provider, row)
    assert provider.set_thumbnail_time(uid, 10.0) == TrackOutcome(TrackResult.ATTACHED, remote_track_id="0.25")
    video = client.stream.get(identifier=uid, account_id=ACCOUNT)
    assert video.thumbnail_timestamp_pct == 0.25 and video.require_signed_urls is True  # the edit changed that only
    assert video.meta["migration_ref"] == "lib/2"
    edits = [r for r in sim.requests_log(ops=None) if r["op"] == "video_edit"]
    assert provider.set_thumbnail_time(uid, 10.0).kind is TrackResult.ATTACHED  # a later pass: already so
    assert [r for r in sim.requests_log(ops=None) if r["op"] == "video_edit"] == edits and len(edits) == 1
    assert provider.set_thumbnail_time(uid, 99.0).remote_track_id == "1.0"  # past the end: the last frame
    gone = provider.set_thumbnail_time("0" * 32, 1.0)
    assert gone.kind is TrackResult.VIDEO_GONE


def test_the_create_carries_the_publish_time_and_the_collections_in_meta(stream):
    _sim, client, provider = stream
    row = AssetMessage(
        "lib/3", SOURCE, privacy="public", published_at="2019-05-01T10:00:00Z",
        collections=(Collection("folders/1", "Talks", "folder", 2),),
    )  # fmt: skip
    meta = client.stream.get(identifier=made(provider, row), account_id=ACCOUNT).meta
    assert meta["published_at"] == "2019-05-01T10:00:00Z"
    assert meta["collections"] == [{"id": "folders/1", "name": "Talks", "kind": "folder", "position": 2}]
