"""The "kaltura" simulator profile driven by Kaltura's official Python client, KalturaApiClient 23.10.0 (XML answers,
as the client reads them): sessions from the admin secret and from an app token, media.list's filters, its page
size cut to 500 and its 10,000-entry ceiling, flavors and their download URLs (a KS in the URL where access control
or the scheduling window asks for one), caption assets served as WebVTT, categories, the categories with a privacy
context only categoryEntry.list names, access control profiles, and false written as 0. Each assertion reads what
the simulator answered through the client's own objects."""

from __future__ import annotations

import hashlib
import time

import pytest
import requests

KalturaClient = pytest.importorskip("KalturaClient")
from KalturaClient import KalturaClient as Client  # noqa: E402
from KalturaClient.Base import KalturaConfiguration  # noqa: E402
from KalturaClient.exceptions import KalturaException  # noqa: E402
from KalturaClient.Plugins.Caption import KalturaCaptionAssetFilter  # noqa: E402
from KalturaClient.Plugins.Core import (  # noqa: E402
    KalturaAssetFilter,
    KalturaCategoryEntryFilter,
    KalturaCategoryFilter,
    KalturaFilterPager,
    KalturaMediaEntryFilter,
    KalturaSessionType,
)

PARTNER = 2_012_345
SECRET = "admin-secret"
TOKEN_ID, TOKEN = "0_apptoken", "app-token-secret"


@pytest.fixture
def kaltura(launch):
    def start(**config):
        sim = launch("kaltura", token=SECRET, token_id=TOKEN_ID, token_secret=TOKEN, **{"library_size": 100, **config})
        client = Client(KalturaConfiguration(serviceUrl=sim.url))
        return sim, client

    return start


def admin(client) -> str:
    ks = client.session.start(SECRET, "", KalturaSessionType.ADMIN, PARTNER)
    client.setKs(ks)
    return ks


def test_a_session_from_the_admin_secret_lists_and_a_wrong_secret_is_refused(kaltura):
    _sim, client = kaltura(library_size=10)
    with pytest.raises(KalturaException) as refused:
        client.session.start("wrong", "", KalturaSessionType.ADMIN, PARTNER)
    assert refused.value.code == "START_SESSION_ERROR"
    admin(client)
    listed = client.media.list(KalturaMediaEntryFilter(), KalturaFilterPager(pageSize=5))
    assert listed.totalCount == 10 and len(listed.objects) == 5 and listed.objects[0].id.startswith("0_")


def test_an_app_token_session_needs_the_hash_of_the_widget_session_and_the_token(kaltura):
    """Generating Kaltura Sessions with Application Tokens: HASH(widget KS + token), SHA1 by default."""
    _sim, client = kaltura(library_size=3)
    widget = client.session.startWidgetSession(f"_{PARTNER}")
    client.setKs(widget.ks)
    with pytest.raises(KalturaException) as refused:
        client.appToken.startSession(TOKEN_ID, hashlib.sha1(b"not the widget ks" + TOKEN.encode()).hexdigest())
    assert refused.value.code == "INVALID_APP_TOKEN_HASH"
    info = client.appToken.startSession(TOKEN_ID, hashlib.sha1((widget.ks + TOKEN).encode()).hexdigest())
    assert info.sessionType.getValue() == KalturaSessionType.ADMIN and info.expiry > time.time() + 86_000
    client.setKs(info.ks)
    assert client.media.list().totalCount == 3


def test_a_ks_past_its_expiry_is_refused_with_invalid_ks_expired(kaltura):
    _sim, client = kaltura(library_size=3, session_ttl_s=1)
    info_ks = admin(client)
    assert client.media.list().totalCount == 3
    time.sleep(2.1)
    with pytest.raises(KalturaException) as refused:
        client.media.list()
    assert refused.value.code == "INVALID_KS" and "-5,EXPIRED" in refused.value.message and info_ks


def test_media_list_shows_ready_approved_entries_unless_asked_and_ignores_unknown_fields(kaltura):
    """setDefaultStatus / setDefaultModerationStatus; an unsupported field answers everything."""
    _sim, client = kaltura(library_size=60, library_unfetchable_every=5, library_private_every=3)
    admin(client)
    everything = KalturaMediaEntryFilter(statusIn="-2,-1,0,1,2,4,5,6,7", moderationStatusIn="1,2,3,4,5,6")
    every = client.media.list(everything, KalturaFilterPager(pageSize=500))
    default = client.media.list(KalturaMediaEntryFilter(), KalturaFilterPager(pageSize=500))
    assert every.totalCount == 60
    assert all(e.status.getValue() == "2" and e.moderationStatus.getValue() != 1 for e in default.objects)
    assert default.totalCount < 60
    ignored = client.media.list(
        KalturaMediaEntryFilter(nameLike="nothing matches this", statusIn="2"), KalturaFilterPager(pageSize=500)
    )
    assert ignored.totalCount == default.totalCount  # nameLike is no field the simulator applies: ignored


def test_pages_are_cut_to_500_and_nothing_past_the_10000th_match_is_answered(kaltura):
    _sim, client = kaltura(library_size=10_600)
    admin(client)
    flt = KalturaMediaEntryFilter(orderBy="+createdAt")
    big = client.media.list(flt, KalturaFilterPager(pageSize=1000, pageIndex=1))
    assert len(big.objects) == 500
    last_allowed = client.media.list(flt, KalturaFilterPager(pageSize=500, pageIndex=20))
    past = client.media.list(flt, KalturaFilterPager(pageSize=500, pageIndex=21))
    assert len(last_allowed.objects) == 500 and past.objects == [] and past.totalCount >= 10_600


def test_the_creation_window_and_id_not_in_walk_past_a_shared_second(kaltura):
    """Seven entries share each creation second: the boundary's ids excluded by idNotIn, the window moved on."""
    _sim, client = kaltura(library_size=30)
    admin(client)
    first = client.media.list(KalturaMediaEntryFilter(orderBy="+createdAt"), KalturaFilterPager(pageSize=10)).objects
    boundary = first[-1].createdAt
    tied = [e.id for e in first if e.createdAt == boundary]
    flt = KalturaMediaEntryFilter(orderBy="+createdAt", createdAtGreaterThanOrEqual=boundary, idNotIn=",".join(tied))
    after = client.media.list(flt, KalturaFilterPager(pageSize=10)).objects
    assert after[0].createdAt == boundary and not set(tied) & {e.id for e in after}
    assert [e.id for e in first] + [e.id for e in after] == sorted({e.id for e in first + after})


def test_flavors_their_download_urls_and_the_ks_access_control_asks_for(kaltura, web):
    _sim, client = kaltura(library_size=40, library_private_every=2, library_unfetchable_every=5)
    admin(client)
    listed = client.media.list(KalturaMediaEntryFilter(statusIn="2"), KalturaFilterPager(pageSize=500)).objects
    restricted = next(e for e in listed if e.accessControlId == 2)
    plain = next(e for e in listed if e.accessControlId == 1)
    profiles = client.accessControlProfile.list().objects
    assert [len(p.rules) for p in profiles] == [0, 1]
    for entry, needs_ks in ((plain, False), (restricted, True)):
        flavors = client.flavorAsset.list(KalturaAssetFilter(entryIdEqual=entry.id)).objects
        source = next(f for f in flavors if f.isOriginal)
        url = client.flavorAsset.getUrl(source.id)
        assert ("/ks/" in url) is needs_ks
        assert web.get(url).status_code == 200
        if needs_ks:
            bare = url.split("/ks/")[0] + "/a.mp4"
            assert web.get(bare).status_code == 403
    purged = client.media.list(KalturaMediaEntryFilter(idEqual="0_0000000o")).objects[0]  # fault "purged" (24)
    flavors = client.flavorAsset.list(KalturaAssetFilter(entryIdEqual=purged.id)).objects
    assert [f.status.getValue() for f in flavors if f.isOriginal] == [3]  # DELETED
    with pytest.raises(KalturaException) as refused:
        client.flavorAsset.getUrl(next(f for f in flavors if f.isOriginal).id)
    assert refused.value.code == "FLAVOR_ASSET_IS_NOT_READY"


def test_captions_list_and_serve_webvtt_whole_with_segment_index_minus_one(kaltura, web):
    _sim, client = kaltura(library_size=10, library_captions_every=3)
    admin(client)
    captions = client.caption.captionAsset.list(KalturaCaptionAssetFilter(entryIdIn="0_00000001")).objects
    assert [c.languageCode.getValue() for c in captions] == ["en", "fr"]
    playlist = web.get(client.caption.captionAsset.serveWebVTT(captions[0].id))
    assert playlist.text.startswith("#EXTM3U") and "segmentIndex/1.vtt" in playlist.text
    whole = web.get(client.caption.captionAsset.serveWebVTT(captions[0].id, segmentIndex=-1))
    assert whole.headers["Content-Type"] == "text/vtt" and whole.text.startswith("WEBVTT")


def test_categories_say_privacy_appear_in_list_and_contribution_policy(kaltura):
    _sim, client = kaltura(library_size=5)
    admin(client)
    found = {c.id: c for c in client.category.list(KalturaCategoryFilter(idIn="1,2,3,4")).objects}
    assert found[1].privacy.getValue() == 1 and found[1].appearInList.getValue() == 1
    assert found[2].privacy.getValue() == 3 and found[4].appearInList.getValue() == 3
    assert found[3].privacy.getValue() == 2 and found[3].contributionPolicy.getValue() == 1


def test_the_simulator_answers_json_to_format_1(kaltura, web):
    sim, client = kaltura(library_size=2)
    ks = admin(client)
    body = web.post(f"{sim.url}/api_v3/service/media/action/list", json={"ks": ks, "format": 1}).json()
    assert body["objectType"] == "KalturaMediaListResponse" and body["totalCount"] == 2
    expired = web.post(f"{sim.url}/api_v3/service/media/action/list", json={"ks": "garbage", "format": 1})
    assert expired.status_code == 200 and expired.json()["code"] == "INVALID_KS"
    assert requests.codes.ok == 200


def test_xml_answers_write_false_as_0_as_kalturas_serializer_does(kaltura):
    """KalturaXmlSerializer::serializeByType: `case 'boolean': $object = ($object) ? 1 : 0;`. The client reads "0"
    as False and an empty element as None (getXmlNodeBool): a rendition's isOriginal was read as unknown."""
    _sim, client = kaltura(library_size=3, library_captions_every=1)
    admin(client)
    flavors = client.flavorAsset.list(KalturaAssetFilter(entryIdEqual="0_00000000")).objects
    assert [(f.isOriginal, f.isWeb) for f in flavors] == [(True, False), (False, True), (False, True)]
    captioned = next(
        e.id
        for e in client.media.list().objects
        if client.caption.captionAsset.list(KalturaCaptionAssetFilter(entryIdEqual=e.id)).objects
    )
    captions = client.caption.captionAsset.list(KalturaCaptionAssetFilter(entryIdEqual=captioned)).objects
    assert [c.isDefault.getValue() for c in captions] == [1, 0]  # KalturaNullableBoolean TRUE, FALSE
    assert client.accessControlProfile.list().objects[0].isDefault.getValue() == 1


def test_category_entry_list_names_the_categories_categories_ids_leaves_out(kaltura):
    """KalturaBaseEntry.categoriesIds: "Only categories that don't have entitlement (privacy context) are listed, to
    retrieve the full list of categories, use the categoryEntry.list action". MediaSpace's gallery and channels
    have one; a link pending the category's moderation is PENDING (1), not ACTIVE (2)."""
    # entry 1: public, in its folder and the public gallery; entry 2: in a members' channel (private kind 1)
    _sim, client = kaltura(library_size=6, library_private_every=2)
    admin(client)
    entries = {e.id: e for e in client.media.list(KalturaMediaEntryFilter(), KalturaFilterPager(pageSize=500)).objects}
    assert entries["0_00000001"].categoriesIds == "11" and entries["0_00000001"].categories == "Library>Training/2021"
    ids = "0_00000001,0_00000002"
    links = client.categoryEntry.list(KalturaCategoryEntryFilter(entryIdIn=ids), KalturaFilterPager(pageSize=500))
    assert {(c.entryId, c.categoryId, c.status.getValue()) for c in links.objects} == {
        ("0_00000001", 11, 2),
        ("0_00000001", 1, 2),  # MediaSpace>site>galleries>Public
        ("0_00000002", 12, 2),
        ("0_00000002", 2, 2),  # MediaSpace>site>channels>Members
        ("0_00000002", 1, 1),  # suggested to the public gallery, pending its moderation
    }
    active = client.categoryEntry.list(KalturaCategoryEntryFilter(entryIdIn=ids, statusEqual=2)).objects
    assert len(active) == 4 and links.totalCount == 5
    in_gallery = client.media.list(KalturaMediaEntryFilter(categoriesIdsMatchOr="1"), KalturaFilterPager(pageSize=500))
    assert "0_00000001" in {e.id for e in in_gallery.objects} and "0_00000002" not in {e.id for e in in_gallery.objects}
    with pytest.raises(KalturaException) as refused:
        client.categoryEntry.list(KalturaCategoryEntryFilter())
    assert refused.value.code == "MUST_FILTER_ON_ENTRY_OR_CATEGORY"


def test_entries_outside_their_window_are_listed_to_an_admin_and_downloaded_only_with_the_url_ks(kaltura, web):
    """Entry scheduling (startDate/endDate, epoch seconds, getXmlNodeInt): an admin session lists every entry; the
    download URL of one outside its window carries a KS of its download privileges (getDownloadUrlWithExpiry), and
    without it the delivery refuses (NOT_SCHEDULED_NOW)."""
    _sim, client = kaltura(library_size=9, library_private_every=1)  # 6 not yet open, 7 closed, 8 closing
    admin(client)
    listed = client.media.list(KalturaMediaEntryFilter(), KalturaFilterPager(pageSize=500)).objects
    by_id = {e.id: e for e in listed}
    now = time.time()
    not_yet, closed, closing = (by_id[f"0_0000000{i}"] for i in (6, 7, 8))
    assert not_yet.startDate > now and not_yet.endDate is NotImplemented  # not set: left out of the XML
    assert closed.endDate < now and closing.startDate < now < now + 86_400 < closing.endDate
    assert by_id["0_00000000"].startDate is NotImplemented
    for entry, needs_ks in ((not_yet, True), (closed, True), (closing, False)):
        flavors = client.flavorAsset.list(KalturaAssetFilter(entryIdEqual=entry.id)).objects
        url = client.flavorAsset.getUrl(next(f for f in flavors if f.isOriginal).id)
        assert ("/ks/" in url) is needs_ks and web.get(url).status_code == 200, entry.id
        if needs_ks:
            assert web.get(url.split("/ks/")[0] + "/a.mp4").status_code == 403


def test_entries_carry_their_plays_views_and_last_play_as_kaltura_playable_entry_reads_them(kaltura):
    """KalturaPlayableEntry's read-only `plays`, `views` and `lastPlayedAt` (issue 45): counts on every entry, the
    last play an int of Unix seconds, unset (NotImplemented to the client) where the entry was never played."""
    from infra.sim import library_usage
    from infra.sim.platforms.kaltura_entries import created_at, index_of

    _sim, client = kaltura(library_size=20)
    admin(client)
    listed = client.media.list(KalturaMediaEntryFilter(), KalturaFilterPager(pageSize=20)).objects
    never = [e for e in listed if e.plays == 0]
    assert 0 < len(never) < len(listed)
    for entry in listed:
        index = index_of(entry.id)
        assert (entry.plays, entry.views) == (library_usage.plays(index), library_usage.views(index))
        if library_usage.never_played(index):
            assert entry.plays == 0 and entry.lastPlayedAt in (None, NotImplemented)
        else:
            assert entry.plays > 0 and entry.views >= entry.plays
            assert isinstance(entry.lastPlayedAt, int) and created_at(index) < entry.lastPlayedAt <= time.time()
    one = client.media.get(listed[0].id)  # media.get answers the same entry, counts and all
    assert (one.plays, one.views, one.lastPlayedAt) == (listed[0].plays, listed[0].views, listed[0].lastPlayedAt)
