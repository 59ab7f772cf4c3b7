"""The target contract for the aws target, against the MediaConvert simulator (its S3 and EventBridge in memory).

The aws target speaks no HTTP of its own (boto3's `mediaconvert` client; its events come through EventBridge), so
its run of the contract in tests/conformance/providers.py takes the same steps on that simulator: doctor's read; a
create from an archived original; a create whose answer is lost, found again (by its request token within the
minute, by its user metadata after) with no second job; each job polled to READY; every state-change event read and
one naming a job made here; the audit's listing; the captions' listing from the master playlist.
"""

from __future__ import annotations

import time

from migrator.fate import OutcomeKind
from migrator.messages import AssetMessage, Track
from migrator.providers import AssetRef, AwsTarget, CreateDefaults, build
from migrator.providers.facts import TrackList
from migrator.states import State

from infra.sim.mediaconvert import MediaConvertConfig, MediaConvertSim
from tests.sim.mediaconvert_support import MemoryS3, RecordingEvents, sdk_client
from tests.sim.support import wait_for

READY_WITHIN_S = 60.0  # the simulator really transcodes: three renditions of a two-second clip
ARCHIVE, OUTPUT, STACK = "archive", "output", "conformance"
WEBVTT = b"WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nHello\n"


def check_aws(sample: bytes) -> None:
    """Run the target contract for the aws target; `sample` is a short video the simulator transcodes."""
    kept = {"captions/en.captions": "masters/conformance/made/captions/en.captions.vtt"}
    objects = {
        (ARCHIVE, "masters/conformance/made/original.mp4"): sample,
        (ARCHIVE, "masters/conformance/lost/original.mp4"): sample,
        (ARCHIVE, kept["captions/en.captions"]): WEBVTT,
    }
    s3, events = MemoryS3(objects), RecordingEvents()
    sim = MediaConvertSim(MediaConvertConfig(queues={"Default": 2}, seed=7), s3=s3, events=events).start()
    try:
        target = AwsTarget(
            role_arn="arn:aws:iam::111122223333:role/MediaConvertRole",
            queue="arn:aws:mediaconvert:us-east-1:111122223333:queues/Default",
            output_bucket=OUTPUT,
            playback_base_url="https://d111111abcdef8.cloudfront.net",
            stack=STACK,
            archive_bucket=ARCHIVE,
        )
        provider = build(
            "aws", sim.url, lambda: None, target=target, mediaconvert=sdk_client(sim.url), s3=s3,
            create_defaults=CreateDefaults("signed", {}),
        )  # fmt: skip
        _contract(provider, sim, events, kept)
    finally:
        sim.stop()


def _ref(asset_id: str, kept: dict | None = None) -> AssetRef:
    tracks = (Track("https://captions.example/en.vtt", "en"),) if kept else ()
    row = AssetMessage(asset_id, "brightcove://1", title=f"Conformance {asset_id}", privacy="private", tracks=tracks)
    return AssetRef(asset_id, row.title, 0, row, archived_files=tuple((kept or {}).items()))


def _contract(provider, sim, events: RecordingEvents, kept: dict) -> None:
    started = time.time() - 5
    assert provider.check().status == 200, "aws: doctor's read refused"

    made = provider.create(_ref("conformance/made", kept), f"s3://{ARCHIVE}/masters/conformance/made/original.mp4")
    assert made.kind is OutcomeKind.CREATED and made.remote_id, f"aws: create answered {made}"

    lost_source = f"s3://{ARCHIVE}/masters/conformance/lost/original.mp4"
    sim.config.lose_create_answer_rate = 1.0  # performed, never answered
    lost = provider.create(_ref("conformance/lost"), lost_source)
    sim.config.lose_create_answer_rate = 0.0
    assert lost.kind is OutcomeKind.TRANSIENT, f"aws: a lost answer read as {lost}"
    jobs = {j["Id"] for j in provider.mediaconvert.list_jobs(MaxResults=20)["Jobs"]}
    assert len(jobs) == 2, f"aws: the simulator did not perform the lost create once ({jobs})"
    again = provider.create(_ref("conformance/lost"), lost_source)  # within the minute: the token's first job
    assert again.kind is OutcomeKind.CREATED and again.remote_id in jobs - {made.remote_id}, again
    found = provider.find("conformance/lost", started)  # past the minute: found by its metadata
    assert found.kind is OutcomeKind.CREATED and found.remote_id == again.remote_id, f"aws: lookup found {found}"
    assert {j["Id"] for j in provider.mediaconvert.list_jobs(MaxResults=20)["Jobs"]} == jobs, "aws: a second job"

    remote = {"conformance/made": made.remote_id, "conformance/lost": found.remote_id}
    for asset_id, remote_id in remote.items():

        def ready(a=asset_id, r=remote_id) -> bool:
            poll = provider.poll(a, r)
            return poll.video is not None and poll.video.target is State.READY

        assert wait_for(ready, READY_WITHIN_S, 0.2), (
            f"aws: {asset_id} never polled READY ({provider.poll(asset_id, remote_id)})"
        )
    video = provider.poll("conformance/made", made.remote_id).video
    assert video.playback["policy"] == "signed" and video.playback["hls"].endswith(
        "/signed/conformance/made/index.m3u8"
    )

    read = [provider.read_job_event(e) for e in events.delivered()]
    complete = {e.remote_id for e in read if e.video and e.video.target is State.READY}
    assert complete == set(remote.values()), f"aws: the COMPLETE events named {complete}"

    listed = list(provider.videos())
    assert sorted(v.ref for v in listed) == sorted(remote), f"aws: the audit's listing held {listed}"
    assert len({v.remote_id for v in listed}) == len(listed), "aws: the listing named a job twice"

    tracks = provider.track_list(made.remote_id)
    assert isinstance(tracks, TrackList) and [t.language for t in tracks.tracks] == ["en"], tracks
