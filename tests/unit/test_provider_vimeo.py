"""Vimeo as a target against its documentation (vimeo/openapi api.yaml; the help centre; vimeo.js's text-track
example): the requests the adapter builds and what it reads from the documented answers. No network: the
recording session of test_providers answers with canned bodies."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from migrator.captions import read_caption
from migrator.fate import OutcomeKind
from migrator.messages import AssetMessage, Track
from migrator.providers import AssetRef, CreateDefaults, CredentialsError
from migrator.providers.facts import TrackUpload
from migrator.providers.vimeo import ACCEPT, LOCKOUT_S, VimeoProvider, read_video, ref_line, ref_of, ref_tag
from migrator.signatures import Scheme, SignatureError, sign
from migrator.states import State
from migrator.tracks import TrackResult

from tests.track_files import SRT
from tests.unit.test_providers import NOW, SOURCE, Session

TOKEN = "vimeo-token"
VIDEO_ID = "258684937"
SECRET = json.dumps({"token": TOKEN})


def vimeo(*answers, secret=SECRET, playback="signed"):
    made = VimeoProvider(None, lambda: secret, clock=lambda: NOW, create_defaults=CreateDefaults(playback))
    session = Session(*answers)
    made.http.session = session
    return made, session


def asset(privacy=None, **fields) -> AssetRef:
    row = AssetMessage("library/intro-2019", SOURCE, title="Intro", privacy=privacy, **fields)
    return AssetRef("library/intro-2019", title="Intro", details=row)


def video(status="available", upload="complete", transcode="complete", ref="library/intro-2019", **extra) -> dict:
    """A video as api.yaml's `video` schema has it (the fields the adapter asks for)."""
    doc = {
        "uri": f"/videos/{VIDEO_ID}",
        "name": "Intro",
        "description": f"Our intro.\n\n{ref_line(ref)}",
        "created_time": "2026-11-30T10:00:00+00:00",
        "duration": 81,
        "width": 1920,
        "height": 1080,
        "link": f"https://vimeo.com/{VIDEO_ID}",
        "player_embed_url": f"https://player.vimeo.com/video/{VIDEO_ID}",
        "privacy": {"view": "nobody"},
        "status": status,
        "upload": {"status": upload},
        "transcode": {"status": transcode},
        "pictures": {"base_link": "https://i.vimeocdn.com/video/581495283_1280x720.jpg"},
    }
    return {**doc, **extra}


# --- the create ------------------------------------------------------------------------------------


def test_the_create_is_a_pull_upload_with_our_reference_line_and_nobody_for_a_row_with_no_privacy():
    provider, session = vimeo((201, video(upload="in_progress", transcode="in_progress", status="uploading")))
    outcome = provider.create(asset(description="Our intro."), SOURCE)
    assert (outcome.kind, outcome.remote_id) == (OutcomeKind.CREATED, VIDEO_ID)
    request = session.sent[0]
    assert (request.method, request.url) == ("POST", "https://api.vimeo.com/me/videos")
    assert request.headers["Authorization"] == f"bearer {TOKEN}" and request.headers["Accept"] == ACCEPT
    assert session.json() == {
        "upload": {"approach": "pull", "link": SOURCE},
        "name": "Intro",
        "description": f"Our intro.\n\nmigration-ref {ref_tag('library/intro-2019')} library/intro-2019",
        "privacy": {"view": "nobody"},  # DefaultPlayback signed: never anybody by accident
    }
    assert any("nobody" in note for note in outcome.notes) and any("reference line" in n for n in outcome.notes)


@pytest.mark.parametrize(
    ("privacy", "default", "view"),
    [
        ("public", "signed", "anybody"),
        ("private", "public", "nobody"),
        ("signed", "public", "nobody"),
        (None, "public", "anybody"),
    ],
)
def test_privacy_maps_to_a_view_never_wider(privacy, default, view):
    provider, session = vimeo((201, video()), playback=default)
    outcome = provider.create(asset(privacy), SOURCE)
    assert session.json()["privacy"] == {"view": view}
    if view == "nobody":
        assert any(note.startswith(f"privacy: {privacy}") for note in outcome.notes)


def test_an_unlisted_row_reads_the_plan_first_and_on_basic_goes_as_nobody_with_a_note():
    provider, session = vimeo((200, {"account": "basic"}), (201, video()), (201, video()))
    outcome = provider.create(asset("unlisted"), SOURCE)
    assert session.sent[0].url == "https://api.vimeo.com/me?fields=account"
    assert session.json(1)["privacy"] == {"view": "nobody"}
    assert "privacy: unlisted sent as nobody (Vimeo Basic cannot set unlisted; narrower)" in outcome.notes
    provider.create(asset("unlisted"), SOURCE)  # the plan is kept a while: no second read
    assert [r.method for r in session.sent] == ["GET", "POST", "POST"]


def test_an_unlisted_row_on_a_paid_plan_stays_unlisted_and_no_create_is_made_on_a_plan_not_read():
    provider, session = vimeo((200, {"account": "pro"}), (201, video()))
    provider.create(asset("unlisted"), SOURCE)
    assert session.json(1)["privacy"] == {"view": "unlisted"}
    provider, session = vimeo((429, {"error": "Too Many API requests"}))
    outcome = provider.create(asset("unlisted"), SOURCE)
    assert outcome.kind is OutcomeKind.THROTTLED and [r.method for r in session.sent] == ["GET"]


def test_fields_the_create_has_no_place_for_are_noted():
    row = {"tags": ("a",), "metadata": {"k": "v"}, "created_at": "2020-01-01T00:00:00Z", "poster_time_s": 3.0}
    provider, _ = vimeo((201, video()))
    notes = provider.create(asset(**row), SOURCE).notes
    for name in ("tags", "metadata", "created_at"):
        assert any(note.startswith(f"{name}: not carried by vimeo") for note in notes), name
    # A poster time alone is a picture made from its frame once the video exists (vimeo_extras): no note at the
    # create; beside a thumbnail image, the image is the poster and the time is noted.
    assert not any(note.startswith("poster_time_s") for note in notes)
    provider, _ = vimeo((201, video()))
    notes = provider.create(asset(**row, thumbnail_url="https://i.example/p.jpg"), SOURCE).notes
    assert "poster_time_s: not set (the row's thumbnail image is the poster)" in notes


@pytest.mark.parametrize("code", [4101, 4102])
def test_the_accounts_quota_is_a_rejection_with_its_reason_not_a_retry(code):
    body = {"error": "quota", "developer_message": "quota", "error_code": code, "link": None}
    provider, _ = vimeo((403, body))
    outcome = provider.create(asset(), SOURCE)
    assert outcome.kind is OutcomeKind.REJECTED
    assert f"error {code}" in outcome.error and "migrator retry" in outcome.error


def test_a_403_that_is_not_the_quota_is_ours_to_fix_and_retried():
    provider, _ = vimeo((403, {"error": "Permission denied", "error_code": 3200}))
    assert provider.create(asset(), SOURCE).kind is OutcomeKind.TRANSIENT


@pytest.mark.parametrize(
    "reset_in_s, held_s",
    [
        (3, 3.0),  # the reset the 429 names
        (0, 1.0),  # a reset already past: a second, not a retry at once
        (300, LOCKOUT_S),  # past the lock-out's minute ("up to a minute"): a minute
        (None, LOCKOUT_S),  # no reset at all: a minute
    ],
)
def test_a_429_holds_until_its_reset_at_most_a_minute(reset_in_s, held_s):
    headers = {"X-RateLimit-Remaining": "0"}
    if reset_in_s is not None:
        headers["X-RateLimit-Reset"] = datetime.fromtimestamp(NOW + reset_in_s, UTC).isoformat()
    provider, _ = vimeo((429, {"error": "Too Many API requests"}, headers))
    outcome = provider.create(asset(), SOURCE)
    assert (outcome.kind, outcome.retry_after) == (OutcomeKind.THROTTLED, pytest.approx(held_s))


def test_a_429_with_no_hint_holds_a_minute_and_the_headers_count_per_minute():
    headers = {
        "X-RateLimit-Limit": "600",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": "2027-01-15T08:00:30+00:00",
    }
    provider, _ = vimeo((429, {"error": "Too Many API requests"}))
    outcome = provider.create(asset(), SOURCE)
    assert (outcome.kind, outcome.retry_after, outcome.scope) == (OutcomeKind.THROTTLED, LOCKOUT_S, "rate")
    signal = provider.rate_signal(headers)
    assert (signal.limit_per_s, signal.remaining) == (pytest.approx(10.0), 0)  # 600 a minute


def test_the_iso_reset_is_read_as_seconds_to_go():
    provider, _ = vimeo()
    signal = provider.rate_signal({"X-RateLimit-Reset": "2027-01-15T08:00:30+00:00"})
    from datetime import datetime

    reset = datetime.fromisoformat("2027-01-15T08:00:30+00:00").timestamp()
    assert signal.reset_after == pytest.approx(max(0.0, reset - NOW))


def test_credentials_are_the_token_or_json_and_never_echoed():
    provider, session = vimeo((201, video()), secret="plain-token")
    provider.create(asset(), SOURCE)
    assert session.sent[0].headers["Authorization"] == "bearer plain-token"
    with pytest.raises(CredentialsError, match='"token"') as caught:
        vimeo(secret='{"tok": "sekrit"}')[0].create(asset(), SOURCE)
    assert "sekrit" not in str(caught.value)


# --- what a video says -----------------------------------------------------------------------------


def test_a_transcoded_video_is_ready_with_its_duration_and_playback():
    read = read_video(video())
    assert (read.remote_id, read.ref, read.target, read.duration_s, read.privacy) == (
        VIDEO_ID,
        "library/intro-2019",
        State.READY,
        81.0,
        "signed",
    )
    assert read.playback == {
        "policy": "private",
        "playback_id": VIDEO_ID,
        "player": f"https://vimeo.com/{VIDEO_ID}",
        "embed": f"https://player.vimeo.com/video/{VIDEO_ID}",
        "thumbnail": "https://i.vimeocdn.com/video/581495283_1280x720.jpg",
        "width": 1920,
        "height": 1080,
    }
    assert read_video(video(privacy={"view": "unlisted"})).playback["policy"] == "public"


@pytest.mark.parametrize(
    ("status", "upload", "transcode", "target", "known"),
    [
        ("uploading", "in_progress", "in_progress", None, True),
        ("transcoding", "complete", "in_progress", None, True),
        ("transcoding_error", "complete", "error", State.REJECTED, True),
        ("uploading_error", "error", "error", State.REJECTED, True),
        ("quota_exceeded", "complete", "error", State.REJECTED, True),
        ("total_cap_exceeded", "complete", "complete", State.REJECTED, True),
        ("something_new", "", "", None, False),
    ],
)
def test_upload_transcode_and_the_legacy_status_decide_the_state(status, upload, transcode, target, known):
    read = read_video(video(status=status, upload=upload, transcode=transcode))
    assert (read.target, read.known) == (target, known)
    if status in ("quota_exceeded", "total_cap_exceeded"):
        assert status in read.error and "migrator retry" in read.error


def test_the_reference_line_is_read_only_when_its_tag_is_the_ids_own():
    assert ref_of(f"text\n\n{ref_line('a/1')}") == "a/1"
    assert ref_of(f"{ref_line('a/1')}\n") == "a/1"
    assert ref_of(f"migration-ref {ref_tag('a/1')} a/2") is None  # a line copied onto another video's id
    assert ref_of(f"{ref_line('a/1')}\nmore text after it") is None
    assert ref_of(None) is None and ref_of({"x": 1}) is None


def test_garbage_reads_as_unknown_never_an_exception():
    for doc in ("x", {"uri": 5, "status": {"a": 1}, "upload": [], "duration": 10**400}, {"uri": "/videos/abc"}):
        read = read_video(doc)
        assert read.target is None and not read.known


# --- finding an earlier create ----------------------------------------------------------------------


def listing(*videos, total=None) -> dict:
    return {"total": total or len(videos), "page": 1, "per_page": 100, "paging": {"next": None}, "data": list(videos)}


def test_find_searches_for_the_tag_first():
    provider, session = vimeo((200, listing(video(ref="other"), video())))
    found = provider.find("library/intro-2019", NOW - 60)
    assert (found.kind, found.remote_id) == (OutcomeKind.CREATED, VIDEO_ID)
    sent = session.sent[0]
    assert f"query={ref_tag('library/intro-2019')}" in sent.url and "sort=date" in sent.url and "fields=" in sent.url


def test_find_scans_the_newest_when_the_search_shows_nothing_yet_and_never_adopts_an_errored_video():
    errored = video(status="transcoding_error", transcode="error", uri="/videos/1")
    provider, session = vimeo((200, listing()), (200, listing(errored, video())))
    found = provider.find("library/intro-2019", NOW - 60)
    assert (found.kind, found.remote_id) == (OutcomeKind.CREATED, VIDEO_ID)
    assert "query=" not in session.sent[1].url and "page=1" in session.sent[1].url


def test_the_scan_stops_once_a_page_reaches_back_before_the_claim():
    old = [video(ref="other", created_time="2020-01-01T00:00:00+00:00", uri=f"/videos/{i}") for i in range(100)]
    provider, session = vimeo((200, listing()), (200, listing(*old, total=1000)))
    assert provider.find("library/intro-2019", NOW - 60).kind is OutcomeKind.NOT_FOUND
    assert len(session.sent) == 2


def test_a_lookup_that_fails_is_never_a_rejection():
    provider, _ = vimeo((400, {"error": "bad"}))
    assert provider.find("library/intro-2019", None).kind is OutcomeKind.TRANSIENT


# --- webhooks (none), the audit, doctor --------------------------------------------------------------


def test_only_our_own_signed_test_is_taken_and_nothing_is_applied():
    provider, _ = vimeo()
    body, headers = provider.doctor_event("s3cret", NOW)
    event = provider.read_webhook(body, headers, ["s3cret"], NOW, 300)
    assert event.video is None and event.asset_id is None and "no webhooks" in event.note
    with pytest.raises(SignatureError):
        provider.read_webhook(body, sign(Scheme.SEED, body, "forged", NOW), ["s3cret"], NOW, 300)


def test_videos_pages_oldest_first_until_the_last_page():
    full = [video(uri=f"/videos/{i}") for i in range(100)]
    page1 = {**listing(*full, total=101), "paging": {"next": "/me/videos?page=2"}}
    provider, session = vimeo((200, page1), (200, listing(video())))
    assert len(list(provider.videos())) == 101
    assert "direction=asc" in session.sent[0].url and "page=2" in session.sent[1].url


def test_check_reads_the_user_and_its_plan():
    provider, session = vimeo((200, {"uri": "/users/1", "account": "pro"}))
    assert provider.check().status == 200
    assert session.sent[0].url == "https://api.vimeo.com/me?fields=uri%2Caccount%2Cupload_quota"


# --- caption tracks -----------------------------------------------------------------------------------

TRACK = Track("https://captions.example.com/en.srt", "en", "captions", "English")


def texttrack(tid="5", active=False, name="English", kind="captions", language="en", link=None, expires=None):
    return {
        "uri": f"/videos/{VIDEO_ID}/texttracks/{tid}",
        "active": active,
        "type": kind,
        "language": language,
        "name": name,
        "link": link or f"https://captions.cloud.vimeo.com/captions/{tid}.vtt?expires=1&sig=x",
        "link_expires_time": expires or "2027-01-15T09:00:00+00:00",
    }


def upload() -> TrackUpload:
    return TrackUpload(read_caption(SRT), TRACK.url)


def test_a_track_is_made_its_file_put_to_its_link_then_made_active():
    answers = [(200, listing()), (201, texttrack()), (200, b""), (200, texttrack(active=True))]
    provider, session = vimeo(*answers)
    outcome = provider.attach_track(VIDEO_ID, TRACK, upload(), "English")
    assert (outcome.kind, outcome.remote_track_id) == (TrackResult.ATTACHED, "5")
    get, post, put, patch = session.sent
    assert get.url.startswith(f"https://api.vimeo.com/videos/{VIDEO_ID}/texttracks")
    assert json.loads(post.body) == {"type": "captions", "language": "en", "name": "English", "active": False}
    assert put.method == "PUT" and put.url.startswith("https://captions.cloud.vimeo.com/captions/5.vtt?expires=1")
    assert put.headers["Content-Type"] == "text/plain" and put.body.startswith(b"WEBVTT")  # SRT sent as WebVTT
    assert put.headers["Authorization"] == f"bearer {TOKEN}"  # Vimeo's own host, as its example sends it
    assert (patch.method, json.loads(patch.body)) == ("PATCH", {"active": True})
    assert patch.url == f"https://api.vimeo.com/videos/{VIDEO_ID}/texttracks/5"


def test_an_earlier_try_that_finished_is_found_and_nothing_is_sent_again():
    provider, session = vimeo((200, listing(texttrack(active=True))))
    outcome = provider.attach_track(VIDEO_ID, TRACK, upload(), "English")
    assert (outcome.kind, outcome.remote_track_id, len(session.sent)) == (TrackResult.ATTACHED, "5", 1)


def test_a_half_made_track_is_deleted_and_made_again():
    answers = [(200, listing(texttrack(tid="4"))), (204, b""), (201, texttrack()), (200, b""), (200, texttrack())]
    provider, session = vimeo(*answers)
    assert provider.attach_track(VIDEO_ID, TRACK, upload(), "English").kind is TrackResult.ATTACHED
    assert (session.sent[1].method, session.sent[1].url) == (
        "DELETE",
        f"https://api.vimeo.com/videos/{VIDEO_ID}/texttracks/4",
    )
    # and the look before it does not count a half-made track as ours
    provider, _ = vimeo((200, listing(texttrack(tid="4"), texttrack(tid="6", active=True, language="fr"))))
    listed = provider.track_list(VIDEO_ID)
    assert [t.remote_id for t in listed.tracks] == ["6"]


def test_an_expired_link_is_never_used():
    provider, session = vimeo((200, listing()), (201, texttrack(expires="2020-01-01T00:00:00+00:00")))
    outcome = provider.attach_track(VIDEO_ID, TRACK, upload(), "English")
    assert outcome.kind is TrackResult.TRANSIENT and "expired" in outcome.error
    assert [r.method for r in session.sent] == ["GET", "POST"]


def test_a_link_elsewhere_never_gets_our_token():
    answers = [(200, listing()), (201, texttrack(link="https://uploads.example.net/5.vtt")), (200, b""), (200, {})]
    provider, session = vimeo(*answers)
    provider.attach_track(VIDEO_ID, TRACK, upload(), "English")
    assert "Authorization" not in session.sent[2].headers


def test_another_active_track_of_the_language_and_type_is_said_not_replaced():
    provider, session = vimeo((200, listing(texttrack(active=True, name="English SDH"))))
    outcome = provider.attach_track(VIDEO_ID, TRACK, upload(), "English")
    assert outcome.kind is TrackResult.REFUSED and "one active text track per language and type" in outcome.error
    assert len(session.sent) == 1


def test_a_gone_video_and_a_refused_file_are_said():
    provider, _ = vimeo((404, {"error": "No such video"}))
    assert provider.attach_track(VIDEO_ID, TRACK, upload(), "English").kind is TrackResult.VIDEO_GONE
    provider, _ = vimeo((200, listing()), (201, texttrack()), (400, {"error": "bad file"}))
    assert provider.attach_track(VIDEO_ID, TRACK, upload(), "English").kind is TrackResult.REFUSED
