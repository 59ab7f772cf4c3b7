"""The aws target's pure parts: the MediaConvert job it asks for, a job read as a video, its events, its failures, the
lookup after a lost answer and the signed playback (providers/aws.py, providers/aws_job.py). The service itself is a
fake here; tests/sim/test_conformance.py drives the adapter against the MediaConvert simulator."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import rsa
from botocore.exceptions import ClientError, EndpointConnectionError
from migrator.cloudfront_signing import verify_signed_url
from migrator.fate import OutcomeKind
from migrator.messages import AssetMessage, Track
from migrator.playback_tokens import SigningKey
from migrator.providers import AssetRef, AwsProvider, AwsTarget, CreateDefaults, CredentialsError, EventError
from migrator.providers.aws import subtitle_languages
from migrator.providers.aws_job import (
    ASSET_KEY,
    STACK_KEY,
    captions_of,
    job_settings,
    output_prefix,
    request_token,
)
from migrator.signatures import SignatureError
from migrator.states import State

pytestmark = pytest.mark.unit

TARGET = AwsTarget(
    role_arn="arn:aws:iam::111122223333:role/MediaConvertRole",
    queue="arn:aws:mediaconvert:us-east-1:111122223333:queues/Default",
    output_bucket="out-bucket",
    playback_base_url="https://d111111abcdef8.cloudfront.net",
    stack="migration",
    archive_bucket="archive-bucket",
)


class FakeMediaConvert:
    """CreateJob, GetJob and ListJobs over a list of jobs (newest last), or an exception to raise."""

    def __init__(self, jobs=(), fail: Exception | None = None):
        self.jobs, self.fail, self.created, self.listed = list(jobs), fail, [], 0

    def create_job(self, **body):
        if self.fail:
            raise self.fail
        self.created.append(body)
        job = {"Id": f"1700000000000-job{len(self.jobs)}", "Status": "SUBMITTED", "UserMetadata": body["UserMetadata"]}
        self.jobs.append(job)
        return {"Job": job}

    def get_job(self, Id):
        if self.fail:
            raise self.fail
        return {"Job": next(j for j in self.jobs if j["Id"] == Id)}

    def list_jobs(self, MaxResults=20, Order="DESCENDING", Queue=None, NextToken=None):
        if self.fail:
            raise self.fail
        self.listed += 1
        newest = list(reversed(self.jobs))
        start = int(NextToken or 0)
        page = newest[start : start + MaxResults]
        more = start + MaxResults < len(newest)
        return {"Jobs": page, **({"NextToken": str(start + MaxResults)} if more else {})}


def provider(mediaconvert=None, playback="signed", target=TARGET) -> AwsProvider:
    return AwsProvider(
        None,
        lambda: None,
        target=target,
        mediaconvert=mediaconvert or FakeMediaConvert(),
        create_defaults=CreateDefaults(playback, {}),
        clock=lambda: 1_800_000_000.0,
    )


def asset(asset_id="lib/v1", privacy=None, tracks=(), kept=()) -> AssetRef:
    row = AssetMessage(asset_id, "vimeo://1", title="A title", privacy=privacy, tracks=tuple(tracks))
    return AssetRef(asset_id, row.title, 0, row, archived_files=tuple(kept))


def client_error(code: str, status: int) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": "said"}, "ResponseMetadata": {"HTTPStatusCode": status}}, "Op"
    )


def job(job_id="1700000000000-abc", status="COMPLETE", asset_id="lib/v1", stack="migration", folder="signed", **extra):
    destination = f"s3://out-bucket/{output_prefix(folder, asset_id)}/index"
    return {
        "Id": job_id,
        "Status": status,
        "UserMetadata": {ASSET_KEY: asset_id, STACK_KEY: stack},
        "Settings": {"OutputGroups": [{"OutputGroupSettings": {"HlsGroupSettings": {"Destination": destination}}}]},
        **extra,
    }


# --- the job ---------------------------------------------------------------------------------------------------


def test_the_job_reads_the_archived_copy_and_writes_hls_and_a_poster_under_the_assets_folder():
    settings = job_settings("s3://archive-bucket/masters/lib/v1/original.mp4", "out-bucket", "signed/lib/v1", [])
    (source,) = settings["Inputs"]
    assert source["FileInput"] == "s3://archive-bucket/masters/lib/v1/original.mp4"
    assert "CaptionSelectors" not in source
    hls, poster = settings["OutputGroups"]
    assert hls["OutputGroupSettings"]["HlsGroupSettings"]["Destination"] == "s3://out-bucket/signed/lib/v1/index"
    modifiers = [o["NameModifier"] for o in hls["Outputs"]]
    assert modifiers == ["_1080p", "_720p", "_360p"] and len(set(modifiers)) == len(modifiers)
    assert poster["OutputGroupSettings"]["FileGroupSettings"]["Destination"] == "s3://out-bucket/signed/lib/v1/poster"
    assert poster["Outputs"][0]["VideoDescription"]["CodecSettings"]["Codec"] == "FRAME_CAPTURE"


def test_each_archived_caption_becomes_a_selector_and_a_webvtt_rendition():
    tracks = [
        Track("https://x/en.vtt", "en"),
        Track("https://x/fr.srt", "fr-CA", kind="subtitles", name="Québec"),
        Track("https://x/de.vtt", "de"),  # the archive kept none: not given to the job
        Track("https://x/ch.vtt", "en", kind="chapters"),  # chapters: never a caption rendition
    ]
    kept = {
        "captions/en.captions": "masters/lib/v1/captions/en.captions.vtt",
        "captions/fr-CA.subtitles.Qu%C3%A9bec": "masters/lib/v1/captions/fr-CA.subtitles.Qu%C3%A9bec.srt",
        "chapters/en": "masters/lib/v1/chapters/en.vtt",
    }
    captions = captions_of(tracks, kept, "archive-bucket")
    assert [(c.language, c.source_type, c.label) for c in captions] == [
        ("en", "WEBVTT", "en"),
        ("fr-CA", "SRT", "Québec"),
    ]
    settings = job_settings("s3://a/o.mp4", "out", "public/x", captions)
    selectors = settings["Inputs"][0]["CaptionSelectors"]
    assert selectors["Captions 2"]["SourceSettings"]["FileSourceSettings"]["SourceFile"] == (
        "s3://archive-bucket/masters/lib/v1/captions/fr-CA.subtitles.Qu%C3%A9bec.srt"
    )
    renditions = [o for o in settings["OutputGroups"][0]["Outputs"] if "CaptionDescriptions" in o]
    assert [r["CaptionDescriptions"][0]["CustomLanguageCode"] for r in renditions] == ["en", "fr-CA"]
    assert {r["CaptionDescriptions"][0]["DestinationSettings"]["DestinationType"] for r in renditions} == {"WEBVTT"}


@pytest.mark.parametrize(
    ("kept_as", "given"),
    [("captions/en.captions.vtt", True), ("captions/en.captions.srt", True), ("captions/en.captions.txt", False)],
)
def test_a_caption_the_archive_could_not_read_is_not_given_to_the_job(kept_as, given):
    captions = captions_of([Track("https://x/en", "en")], {"captions/en.captions": f"m/{kept_as}"}, "b")
    assert bool(captions) is given


def test_the_request_token_is_one_per_stack_asset_and_generation_and_fits_the_api():
    token = request_token("migration", "lib/v1", 0)
    assert token == request_token("migration", "lib/v1", 0) and len(token) <= 64 and token.isascii()
    others = {request_token("migration", "lib/v1", 1), request_token("other", "lib/v1", 0), request_token("m", "v2", 0)}
    assert token not in others and len(others) == 3


@pytest.mark.parametrize(
    ("privacy", "default", "folder"),
    [
        ("public", "signed", "public"),
        ("private", "public", "signed"),
        (None, "signed", "signed"),
        (None, "public", "public"),
    ],
)
def test_the_create_writes_where_the_rows_playback_is_served_never_wider(privacy, default, folder):
    fake = FakeMediaConvert()
    made = provider(fake, playback=default).create(asset(privacy=privacy), "s3://archive-bucket/masters/v/original.mp4")
    assert made.kind is OutcomeKind.CREATED
    (body,) = fake.created
    destination = body["Settings"]["OutputGroups"][0]["OutputGroupSettings"]["HlsGroupSettings"]["Destination"]
    assert destination == f"s3://out-bucket/{folder}/lib/v1/index"
    assert body["UserMetadata"][ASSET_KEY] == "lib/v1" and body["UserMetadata"][STACK_KEY] == "migration"
    assert body["Role"] == TARGET.role_arn and body["Queue"] == TARGET.queue


def test_a_source_that_is_not_the_archived_copy_is_refused_before_any_job():
    fake = FakeMediaConvert()
    made = provider(fake).create(asset(), "https://cdn.example/v.mp4?sig=1")
    assert made.kind is OutcomeKind.REJECTED and "ArchiveFirst" in made.error and not fake.created


def test_an_unconfigured_target_is_refused_with_what_is_missing():
    with pytest.raises(CredentialsError, match="output_bucket"):
        provider(target=AwsTarget("arn:role", "Default", "", "https://d.cloudfront.net", "s"))


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (client_error("TooManyRequestsException", 429), OutcomeKind.THROTTLED),
        (client_error("BadRequestException", 400), OutcomeKind.REJECTED),
        (client_error("ForbiddenException", 403), OutcomeKind.REJECTED),
        (client_error("InternalServerErrorException", 500), OutcomeKind.TRANSIENT),
        (EndpointConnectionError(endpoint_url="https://mediaconvert"), OutcomeKind.TRANSIENT),
    ],
)
def test_a_failed_create_is_read_in_our_terms(error, kind):
    made = provider(FakeMediaConvert(fail=error)).create(asset(), "s3://archive-bucket/masters/v/original.mp4")
    assert made.kind is kind


# --- a job as a video ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "target"),
    [
        ("SUBMITTED", None),
        ("PROGRESSING", None),
        ("COMPLETE", State.READY),
        ("ERROR", State.REJECTED),
        ("CANCELED", State.REJECTED),
        ("SOMETHING_NEW", None),
    ],
)
def test_a_jobs_status_is_the_videos_state(status, target):
    video = provider().video_of(job(status=status, ErrorMessage="Unable to open input file", ErrorCode=1010))
    assert video.target is target and video.ref == "lib/v1"
    if target is State.REJECTED:
        assert video.error.startswith(f"MediaConvert {status.lower()}")


@pytest.mark.parametrize(("folder", "policy"), [("signed", "signed"), ("public", "public")])
def test_a_complete_job_plays_under_the_playback_address_as_its_folder_says(folder, policy):
    details = [{"OutputDetails": [{"DurationInMs": 12_500, "VideoDetails": {"WidthInPx": 1920, "HeightInPx": 1080}}]}]
    video = provider().video_of(job(folder=folder, OutputGroupDetails=details))
    base = f"https://d111111abcdef8.cloudfront.net/{folder}/lib/v1"
    assert video.playback == {
        "policy": policy,
        "hls": f"{base}/index.m3u8",
        "thumbnail": f"{base}/poster.0000000.jpg",
        "width": 1920,
        "height": 1080,
    }
    assert video.duration_s == 12.5 and video.privacy == policy


def test_a_job_written_elsewhere_or_of_another_stack_plays_nowhere_and_names_no_asset():
    elsewhere = job()
    elsewhere["Settings"]["OutputGroups"][0]["OutputGroupSettings"]["HlsGroupSettings"]["Destination"] = "s3://x/y"
    assert provider().video_of(elsewhere).playback is None
    assert provider().video_of(job(stack="another")).ref is None


# --- the events -------------------------------------------------------------------------------------------------


def event(status="COMPLETE", stack="migration", source="aws.mediaconvert", **detail):
    return {
        "id": "7bf73129-1428-4cd3-a780-95db273d1602",
        "detail-type": "MediaConvert Job State Change",
        "source": source,
        "detail": {
            "status": status,
            "jobId": "1700000000000-abc",
            "queue": TARGET.queue,
            "userMetadata": {ASSET_KEY: "lib/v1", STACK_KEY: stack},
            "outputGroupDetails": [
                {
                    "type": "HLS_GROUP",
                    "playlistFilePaths": ["s3://out-bucket/public/lib/v1/index.m3u8"],
                    "outputDetails": [{"durationInMs": 4000, "videoDetails": {"widthInPx": 640, "heightInPx": 360}}],
                }
            ],
            **detail,
        },
    }


def test_a_complete_event_settles_the_asset_it_names():
    read = provider().read_job_event(event())
    assert read.asset_id == "lib/v1" and read.remote_id == "1700000000000-abc"
    assert read.video.target is State.READY and read.video.duration_s == 4.0
    assert read.video.playback["hls"] == "https://d111111abcdef8.cloudfront.net/public/lib/v1/index.m3u8"


@pytest.mark.parametrize(
    "changed",
    [
        {"source": "aws.s3"},
        {"stack": "another"},
        {"detail-type": "MediaConvert Queue Change"},
        {"detail": "not an object"},
        {"id": ""},
    ],
)
def test_an_event_that_is_not_this_stacks_job_is_refused(changed):
    sent = event(stack=changed.pop("stack", "migration"), source=changed.pop("source", "aws.mediaconvert"))
    sent.update(changed)
    with pytest.raises(EventError):
        provider().read_job_event(sent)


def test_nothing_is_taken_through_the_public_webhook_route():
    with pytest.raises(SignatureError):
        provider().read_webhook(b"{}", {}, ["secret"], 0, 300)


# --- the lookup after a lost answer -----------------------------------------------------------------------------


def when(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def test_a_lost_creates_job_is_found_by_its_metadata_and_an_errored_one_never_counts():
    jobs = [
        job("1-errored", status="ERROR", CreatedAt=when(1_799_999_000)),
        job("2-ours", status="PROGRESSING", CreatedAt=when(1_799_999_100)),
        *[job(f"3-other{n}", asset_id=f"lib/x{n}", CreatedAt=when(1_799_999_200 + n)) for n in range(45)],
    ]
    fake = FakeMediaConvert(jobs)
    found = provider(fake).find("lib/v1", 1_799_999_050.0)
    assert found.kind is OutcomeKind.CREATED and found.remote_id == "2-ours"
    assert fake.listed == 3  # past two pages of others, newest first


def test_the_lookup_stops_at_the_first_claims_time():
    jobs = [job("1-ours", CreatedAt=when(1_700_000_000))] + [
        job(f"2-other{n}", asset_id=f"lib/x{n}", CreatedAt=when(1_799_999_000 + n)) for n in range(60)
    ]
    fake = FakeMediaConvert(jobs)
    assert provider(fake).find("lib/v1", 1_799_999_500.0).kind is OutcomeKind.NOT_FOUND
    assert fake.listed == 1  # the first page already reached back past the claim (less the margin)


def test_a_throttled_lookup_is_throttled_and_a_refused_one_says_nothing_of_the_source():
    assert provider(FakeMediaConvert(fail=client_error("TooManyRequestsException", 429))).find("v", None).kind is (
        OutcomeKind.THROTTLED
    )
    assert provider(FakeMediaConvert(fail=client_error("BadRequestException", 400))).find("v", None).kind is (
        OutcomeKind.TRANSIENT
    )


# --- signed playback and the captions' listing --------------------------------------------------------------------


class Keys:
    def __init__(self, key: SigningKey):
        self.key = key

    def cloudfront(self) -> SigningKey:
        return self.key


@pytest.fixture(scope="module")
def key_pair():
    public, private = rsa.newkeys(1024)
    return public, SigningKey("K2JCJMDEHXQW5F", private.save_pkcs1().decode())


def test_signed_playback_signs_the_videos_folder_so_every_segment_plays_with_the_same_query(key_pair):
    public, key = key_pair
    manifest = "https://d111111abcdef8.cloudfront.net/signed/lib/v1/index.m3u8"
    signed = provider().signed_playback({"hls": manifest}, 600, Keys(key))
    now = 1_800_000_000.0
    assert signed.manifest_url.startswith(manifest + "?")
    assert verify_signed_url(signed.manifest_url, {key.key_id: public}, now).allowed
    query = "&".join(f"{k}={v}" for k, v in signed.query)
    segment = f"https://d111111abcdef8.cloudfront.net/signed/lib/v1/index_720p_00001.ts?{query}"
    assert verify_signed_url(segment, {key.key_id: public}, now).allowed
    other = f"https://d111111abcdef8.cloudfront.net/signed/lib/v2/index.m3u8?{query}"
    assert not verify_signed_url(other, {key.key_id: public}, now).allowed
    assert not verify_signed_url(segment, {key.key_id: public}, now + 601).allowed


def test_the_caption_renditions_are_read_from_the_master_playlist():
    master = "\n".join(
        [
            "#EXTM3U",
            '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",LANGUAGE="en",NAME="English, CC",URI="index_captions_1.m3u8"',
            '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",LANGUAGE="de",NAME="Audio"',
            '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",LANGUAGE="fr-CA",NAME="Québec",URI="index_captions_2.m3u8"',
            '#EXT-X-STREAM-INF:BANDWIDTH=1000,SUBTITLES="subs"',
            "index_720p.m3u8",
        ]
    )
    assert subtitle_languages(master) == ["en", "fr-CA"]


# --- the poster: the row's own image where the archive kept one, else the frame capture -------------------------


class FakeS3:
    def __init__(self, fail: Exception | None = None):
        self.copies, self.fail = [], fail

    def copy_object(self, **request):
        if self.fail:
            raise self.fail
        self.copies.append(request)


@pytest.mark.parametrize(
    ("kept", "poster"),
    [
        ({"thumbnail": "masters/lib/v1/thumbnail.png"}, "poster.png"),
        ({"thumbnail": "masters/lib/v1/thumbnail.bin"}, None),  # the archive could not read it as an image
        ({}, None),
    ],
)
def test_the_archived_image_is_copied_beside_the_renditions_and_becomes_the_poster(kept, poster):
    fake, s3 = FakeMediaConvert(), FakeS3()
    target = provider(fake)
    target._s3 = s3
    made = target.create(asset(privacy="public", kept=kept.items()), "s3://archive-bucket/masters/lib/v1/original.mp4")
    assert made.kind is OutcomeKind.CREATED
    (body,) = fake.created
    assert body["UserMetadata"].get("migrator_poster") == poster
    if poster:
        (copy,) = s3.copies
        assert copy == {
            "Bucket": "out-bucket",
            "Key": f"public/lib/v1/{poster}",
            "CopySource": {"Bucket": "archive-bucket", "Key": kept["thumbnail"]},
        }
    else:
        assert not s3.copies
    complete = job(folder="public", UserMetadata={**body["UserMetadata"]})
    expected = poster or "poster.0000000.jpg"
    assert target.video_of(complete).playback["thumbnail"].endswith(f"/public/lib/v1/{expected}")


def test_a_poster_that_cannot_be_copied_leaves_the_frame_and_says_why():
    fake = FakeMediaConvert()
    target = provider(fake)
    target._s3 = FakeS3(fail=client_error("AccessDenied", 403))
    kept = {"thumbnail": "masters/lib/v1/thumbnail.jpg"}
    made = target.create(asset(kept=kept.items()), "s3://archive-bucket/masters/lib/v1/original.mp4")
    assert made.kind is OutcomeKind.CREATED and "migrator_poster" not in fake.created[0]["UserMetadata"]
    assert any("AccessDenied" in note and "frame is the poster" in note for note in made.notes)


def test_a_poster_name_in_the_metadata_is_taken_only_as_one_of_ours():
    forged = job(folder="public", UserMetadata={ASSET_KEY: "lib/v1", STACK_KEY: "migration", "migrator_poster": "../x"})
    assert provider().video_of(forged).playback["thumbnail"].endswith("/poster.0000000.jpg")


# --- the MP4, where asked (the stack's AwsMp4, a row's options.aws.mp4) ----------------------------------------


@pytest.mark.parametrize(
    ("stack", "row", "written"), [(None, None, False), (True, None, True), (True, False, False), (None, True, True)]
)
def test_an_mp4_is_written_beside_the_hls_where_asked_and_plays_from_the_same_folder(stack, row, written):
    fake = FakeMediaConvert()
    options = {"aws": {"mp4": stack}} if stack is not None else {}
    target = AwsProvider(
        None, lambda: None, target=TARGET, mediaconvert=fake, create_defaults=CreateDefaults("public", options)
    )
    message = AssetMessage(
        "lib/v1", "vimeo://1", privacy="public", options={"aws": {"mp4": row}} if row is not None else {}
    )
    made = target.create(AssetRef("lib/v1", None, 0, message), "s3://archive-bucket/masters/lib/v1/original.mp4")
    assert made.kind is OutcomeKind.CREATED
    (body,) = fake.created
    groups = body["Settings"]["OutputGroups"]
    assert (len(groups) == 3) is written
    if written:
        (download,) = groups[2]["Outputs"]
        assert (
            groups[2]["OutputGroupSettings"]["FileGroupSettings"]["Destination"]
            == "s3://out-bucket/public/lib/v1/video"
        )
        assert download["ContainerSettings"]["Container"] == "MP4" and download["VideoDescription"]["Height"] == 720
    playback = target.video_of(job(folder="public", UserMetadata=body["UserMetadata"])).playback
    assert playback.get("mp4") == ("https://d111111abcdef8.cloudfront.net/public/lib/v1/video.mp4" if written else None)
