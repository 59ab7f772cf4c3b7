"""BunnyProvider against Bunny's documents, no network: the requests it builds, what it reads from the
documented answers, events and headers, the tokens it makes checked against Bunny's own published
vectors (BunnyWay/BunnyCDN.TokenAuthentication e2e/vectors.json), and the ISO 639-1 code a caption is filed
under (Video_AddCaption's srclang)."""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.parse
from datetime import UTC, datetime

import pytest
from migrator.fate import OutcomeKind
from migrator.messages import AssetMessage, Track
from migrator.providers import AssetRef, CredentialsError, build
from migrator.providers.base import FIND_MARGIN_S, FIND_MAX_PAGES
from migrator.providers.bunny_formats import (
    FIND_ABSOLUTE_MAX_PAGES,
    bunny_time,
    caption_language,
    cdn_token,
    embed_token,
    read_video,
    signed_hls,
    title_tag,
)
from migrator.providers.fidelity import CreateDefaults
from migrator.signatures import SignatureError
from migrator.states import State
from migrator.tracks import initial_states

from tests.unit.test_providers import NOW, Session

SECRET = json.dumps({"library_id": "759", "api_key": "library-key", "token_key": "token-key"})
GUID = "eb1c4f77-0cda-46be-b47d-1118ad7c2ffe"  # the docs' example video
OK = {"success": True, "message": "OK", "statusCode": 200}


def bunny(*answers, protected=True, secret=SECRET):
    session = Session(*answers)
    defaults = CreateDefaults("signed", {"bunny": {"tokenAuthentication": protected}})
    made = build("bunny", None, lambda: secret, clock=lambda: NOW, create_defaults=defaults)
    made.http.session = session
    return made, session


def iso(epoch: float) -> str:
    """A time as Bunny writes `dateUploaded`: UTC with milliseconds, no offset."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


def video(guid=GUID, status=4, title="Intro", tags=(), uploaded=NOW - 10, **fields) -> dict:
    return {
        "guid": guid,
        "status": status,
        "title": title,
        "metaTags": list(tags),
        "dateUploaded": iso(uploaded),
        **fields,
    }


def page(items, total=None, per=1000, number=1):
    return {
        "totalItems": len(items) if total is None else total,
        "currentPage": number,
        "itemsPerPage": per,
        "items": items,
    }


def asset(asset_id="library/intro-2019", privacy="private", **fields) -> AssetRef:
    message = AssetMessage(asset_id, "https://media.example.com/intro.mp4", privacy=privacy, **fields)
    return AssetRef(asset_id, fields.get("title"), details=message)


def test_the_cdn_token_is_bunnys_own_for_its_published_vectors():
    # inputs.json: key "SecurityKey", expires 1598024587; "plain" /300kb.jpg, "path_only" /abc/300kb.jpg under /abc.
    assert cdn_token("SecurityKey", "/300kb.jpg", 1598024587, {}) == "HS256-o10JRWlsAItyAsdKS6jJKjabHN4FrFsplDHPV1idcX4"
    assert (
        cdn_token("SecurityKey", "/abc", 1598024587, {"token_path": "/abc"})
        == "HS256-uVZvT3SbEoVKYJyDJgbcsDmSFf73cv-uNUVaJiKWpbQ"
    )


def test_the_embed_token_is_sha256_hex_of_key_video_and_expiry():
    assert embed_token("k", GUID, 1456761770) == hashlib.sha256(f"k{GUID}1456761770".encode()).hexdigest()


def test_a_signed_hls_carries_a_directory_token_for_its_video_and_refuses_any_other_url():
    signed = signed_hls(f"https://vz-1.b-cdn.net/{GUID}/playlist.m3u8", GUID, "k", 1700000000)
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(signed.manifest_url).query))
    assert query == dict(signed.query) and query["token_path"] == f"/{GUID}/" and query["expires"] == "1700000000"
    assert query["token"] == cdn_token("k", f"/{GUID}/", 1700000000, {"token_path": f"/{GUID}/"})
    assert signed_hls("https://vz-1.b-cdn.net/other/playlist.m3u8", GUID, "k", 1) is None
    assert signed_hls(f"ftp://vz-1.b-cdn.net/{GUID}/playlist.m3u8", GUID, "k", 1) is None


@pytest.mark.parametrize(
    "raw",
    ["not json", "[]", '{"api_key": "secret-value"}', '{"library_id": "../x", "api_key": "secret-value"}'],
)
def test_credentials_are_checked_and_never_echoed(raw):
    made, session = bunny(secret=raw)
    with pytest.raises(CredentialsError) as caught:
        made.create(asset(privacy="public"), "https://m.example/a.mp4")
    assert "secret-value" not in str(caught.value) and not session.sent


def test_the_create_is_the_documented_fetch_then_a_read_merge_write_of_our_tags():
    foreign = {"property": "vendor", "value": "v"}
    made, session = bunny((200, {**OK, "id": GUID}), (200, video(tags=[foreign])), (200, OK))
    row = asset(privacy="public", title="Intro", description="Shown", tags=("a", "b"), poster_time_s=2.5)
    outcome = made.create(row, "https://media.example.com/intro.mp4")
    assert (outcome.kind, outcome.remote_id) == (OutcomeKind.CREATED, GUID)
    fetch, read, write = session.sent
    assert (fetch.method, urllib.parse.urlsplit(fetch.url).path) == ("POST", "/library/759/videos/fetch")
    assert fetch.headers["AccessKey"] == "library-key" and "thumbnailTime=2500" in fetch.url
    assert session.json(0) == {"url": "https://media.example.com/intro.mp4", "title": "Intro" + title_tag(row.asset_id)}
    assert (read.method, write.method) == ("GET", "POST") and write.url.endswith(f"/library/759/videos/{GUID}")
    assert session.json(2) == {
        "title": "Intro",
        "metaTags": [
            foreign,
            {"property": "migration_ref", "value": "library/intro-2019"},
            {"property": "description", "value": "Shown"},
            {"property": "keywords", "value": "a, b"},
        ],
    }


def test_a_private_row_on_an_unprotected_library_is_refused_before_any_request():
    made, session = bunny(protected=False)
    outcome = made.create(asset(), "https://m.example/a.mp4")
    assert outcome.kind is OutcomeKind.REJECTED and "token-protected" in outcome.error and not session.sent


@pytest.mark.parametrize(
    "answer",
    [(503, {"success": False}), (200, OK), (200, b"<html>")],  # a 5xx; a StatusModel with no id; not JSON
)
def test_an_indeterminate_fetch_is_looked_for_before_anything_is_sent_again(answer):
    found = video(title="Intro" + title_tag("library/intro-2019"), status=2)
    made, session = bunny(answer, (200, page([found])), (200, found), (200, OK))
    outcome = made.create(asset(title="Intro"), "https://m.example/a.mp4")
    assert (outcome.kind, outcome.remote_id) == (OutcomeKind.CREATED, GUID)
    assert [r.method for r in session.sent] == ["POST", "GET", "GET", "POST"]  # fetch, listing, read, tag
    assert "/videos/fetch" not in session.sent[-1].url

    made, session = bunny(answer, (200, page([])))
    outcome = made.create(asset(title="Intro"), "https://m.example/a.mp4")
    assert outcome.kind is OutcomeKind.TRANSIENT and "looked for by its tag" in outcome.error
    assert [r.method for r in session.sent] == ["POST", "GET"]


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        ((429, {}, {"Retry-After": "30"}), OutcomeKind.THROTTLED),
        ((400, {"success": False, "message": "Failed fetching the video."}), OutcomeKind.REJECTED),
        ((200, {"success": False, "message": "Invalid URL", "statusCode": 400}), OutcomeKind.REJECTED),
    ],
)
def test_a_fetch_refused_or_throttled_never_took_effect_and_is_not_looked_for(answer, kind):
    made, session = bunny(answer)
    outcome = made.create(asset(), "https://m.example/a.mp4")
    assert outcome.kind is kind and len(session.sent) == 1
    if kind is OutcomeKind.THROTTLED:
        assert outcome.retry_after == 30.0


def test_find_pages_newest_first_and_stops_once_a_page_reaches_before_the_claim():
    claim = NOW - 100
    newer = [video(guid=f"v{i}", title="Other", uploaded=NOW - i / 10) for i in range(1000)]
    older = [video(guid="old", title="Other", uploaded=claim - FIND_MARGIN_S - 1)]
    made, session = bunny((200, page(newer, total=1001)), (200, page(older, total=1001, number=2)))
    assert made.find("library/intro-2019", claim).kind is OutcomeKind.NOT_FOUND
    assert [dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(r.url).query))["page"] for r in session.sent] == [
        "1",
        "2",
    ]

    ours = video(guid="ours", tags=[{"property": "migration_ref", "value": "library/intro-2019"}])
    failed = video(guid="dead", status=5, tags=[{"property": "migration_ref", "value": "library/intro-2019"}])
    made, _ = bunny((200, page([failed, ours])))
    found = made.find("library/intro-2019", claim)
    assert (found.kind, found.remote_id) == (OutcomeKind.CREATED, "ours")  # a failed video never counts


def test_find_walks_an_oldest_first_listing_from_its_last_page():
    tagged = video(guid="ours", title="Intro" + title_tag("library/intro-2019"), uploaded=NOW - 5)
    first = [video(guid=f"o{i}", title="Other", uploaded=NOW - 10_000 + i) for i in range(1000)]
    made, session = bunny(
        (200, page(first, total=1500)), (200, page([tagged], total=1500, number=2)), (200, tagged), (200, OK)
    )
    found = made.find("library/intro-2019", NOW - 60)
    assert (found.kind, found.remote_id) == (OutcomeKind.CREATED, "ours")
    assert "page=2" in session.sent[1].url  # the last page, where the newest are
    assert session.json(3) == {
        "title": "Intro",
        "metaTags": [{"property": "migration_ref", "value": "library/intro-2019"}],
    }


def test_a_search_that_cannot_reach_back_is_never_not_found():
    recent = [video(guid=f"v{i}", title="Other", uploaded=NOW) for i in range(1000)]
    answers = [(200, page(recent, total=10**6, number=n)) for n in range(1, FIND_ABSOLUTE_MAX_PAGES + 2)]
    made, session = bunny(*answers)
    outcome = made.find("library/intro-2019", NOW - 60)
    assert outcome.kind is OutcomeKind.TRANSIENT and "lookup window too long" in outcome.error
    assert len(session.sent) == FIND_ABSOLUTE_MAX_PAGES
    made, session = bunny(*answers)
    assert made.find("library/intro-2019", None).kind is OutcomeKind.NOT_FOUND  # a poll with no id: bounded
    assert len(session.sent) == FIND_MAX_PAGES


def signed(body: bytes, secret="read-only", **extra) -> dict:
    headers = {"X-BunnyStream-Signature": hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()}
    return {
        **headers,
        "X-BunnyStream-Signature-Version": "v1",
        "X-BunnyStream-Signature-Algorithm": "hmac-sha256",
        **extra,
    }


@pytest.mark.parametrize(
    ("doc", "confirm"),
    [
        ({"VideoLibraryId": 759, "VideoGuid": GUID, "Status": 3}, True),  # Finished
        ({"VideoLibraryId": 759, "VideoGuid": GUID, "Status": 5}, True),  # Failed
        ({"VideoLibraryId": 759, "VideoGuid": GUID, "Status": 4}, False),  # Resolution finished: only playable
        ({"VideoLibraryId": 133, "VideoGuid": GUID, "Status": 3}, False),  # another library's
        ({"VideoLibraryId": 759, "VideoGuid": GUID, "Status": True}, False),
    ],
)
def test_a_webhook_names_only_the_video_and_finished_or_failed_are_read_back(doc, confirm):
    made, _ = bunny()
    body = json.dumps(doc).encode()
    event = made.read_webhook(body, signed(body), ["read-only"], NOW, 300)
    assert event.confirm is confirm and event.asset_id is None and event.video is None
    assert event.event_id.startswith("sha256:")  # Bunny sends no event id


def test_a_webhook_in_another_version_or_forged_is_refused():
    made, _ = bunny()
    body = json.dumps({"VideoLibraryId": 759, "VideoGuid": GUID, "Status": 3}).encode()
    for headers in (signed(body, "wrong"), signed(body, **{"X-BunnyStream-Signature-Version": "v2"}), {}):
        with pytest.raises(SignatureError):
            made.read_webhook(body, headers, ["read-only"], NOW, 300)
    doctor, headers = made.doctor_event("read-only", NOW)
    assert not made.read_webhook(doctor, headers, ["read-only"], NOW, 300).confirm


@pytest.mark.parametrize(
    ("body", "target", "status"),
    [
        (video(status=4, length=61), State.READY, "finished"),
        (video(status=8), State.READY, "jit playlists created"),
        (video(status=6), State.REJECTED, "upload failed"),
        (video(status=3), None, "transcoding"),
        ({"guid": GUID, "status": "4"}, None, "unknown"),
        ({"guid": GUID, "status": 10**400, "length": 10**400}, None, "unknown"),
    ],
)
def test_the_video_models_status_has_its_own_numbers(body, target, status):
    read = read_video(body)
    assert (read.target, read.status) == (target, status)
    if status == "unknown":
        assert not read.known


def test_a_failed_videos_reason_is_its_error_level_messages():
    body = video(status=5, transcodingMessages=[{"level": 2, "message": "warn"}, {"level": 3, "message": "corrupt"}])
    assert read_video(body).error == "provider: Bunny could not encode the video: corrupt"


@pytest.mark.parametrize(
    ("text", "epoch"),
    [
        ("2026-01-01T00:00:00", 1767225600.0),
        ("2026-01-01T00:00:00.500Z", 1767225600.5),
        ("2026-01-01T01:00:00+01:00", 1767225600.0),
    ],
)
def test_upload_times_without_an_offset_are_utc(text, epoch):
    assert bunny_time(text) == epoch


def test_the_playback_recorded_is_the_librarys_and_a_row_option_cannot_declare_it():
    from migrator.create_options import chosen_options, row_problems

    protected, _ = bunny()
    unprotected, _ = bunny(protected=False)
    public = asset(privacy="public")
    assert (protected.playback(public), unprotected.playback(public)) == ("signed", "public")
    assert protected.playback(asset()) == unprotected.playback(asset()) == "signed"
    claim = {"bunny": {"tokenAuthentication": True}}  # a library setting: the stack's word only
    assert "is not an option of bunny" in row_problems("bunny", claim)[0]
    chosen, notes = chosen_options("bunny", {}, claim)
    assert chosen == {} and "(ignored)" in notes[0]


@pytest.mark.parametrize(
    ("tag", "code", "why"),
    [
        ("en", "en", None),
        ("pt-BR", "pt", None),  # the region is Bunny's to lose: the label keeps the tag
        ("EN_us", "en", None),
        ("zh-Hant-TW", "zh", None),
        ("iw", "he", None),  # ISO 639-1 withdrew iw for he in 1989; BCP 47 still reads it
        ("und", None, "undetermined (und): name its language"),
        ("mul", None, "multiple languages (mul)"),
        ("zxx", None, "no linguistic content (zxx)"),
        ("fil", None, "(fil) has none"),  # ISO 639-3 only: never guessed as tl
        ("eng", None, "(eng) has none"),  # BCP 47 writes English as en
        ("qq", None, "(qq) has none"),  # two letters, but no ISO 639-1 code
        ("x-klingon", None, "(x-klingon) has none"),
    ],
)
def test_a_caption_is_filed_under_its_iso_639_1_code_never_a_guess(tag, code, why):
    found, refused = caption_language(tag)
    assert found == code
    assert refused is None if why is None else (why in refused and "ISO 639-1" in refused)


@pytest.mark.parametrize(
    ("languages", "failed"),
    [
        (("pt-BR", "pt"), {"pt.captions.": "pt is track pt-BR.captions.'s"}),
        (("pt-BR", "pt-PT"), {"pt-PT.captions.": "pt-PT is filed as pt there, which is track pt-BR.captions.'s"}),
        (("en", "en-US", "fr"), {"en-US.captions.": "en-US is filed as en there, which is track en.captions.'s"}),
        (("und", "und-x-a", "de"), {}),  # refused one by one at the upload, clashing with nothing
        (("en", "fr"), {}),
    ],
)
def test_two_tracks_bunny_files_under_one_code_do_not_clash(languages, failed):
    provider, _ = bunny()
    tracks = [Track(f"https://c.example/{n}.vtt", language) for n, language in enumerate(languages)]
    states = initial_states(
        tracks,
        takes_tracks=True,
        provider="bunny",
        at_create=set(),
        one_per_language=provider.one_track_per_language,
        language_key=provider.track_language_key,
        now=NOW,
    )
    assert {k: v["error"] for k, v in states.items() if v["state"] == "failed"} == {
        k: f"bunny keeps one caption file per language, and {v}" for k, v in failed.items()
    }
