"""The "kaltura" simulator profile's thumbnails and chapters (issue 42; infra/sim/platforms/kaltura_extras.py) driven by
Kaltura's official Python client, KalturaApiClient 23.10.0 (XML answers, as the client reads them): thumb assets and
the one tagged default_thumb, thumbAsset.getUrl and the image at its URL (a KS in it where access control asks),
the entry's own thumbnailUrl, and chapters as thumb cue points beside slides and ads, filtered as asked."""

from __future__ import annotations

import pytest

KalturaClient = pytest.importorskip("KalturaClient")
from KalturaClient import KalturaClient as Client  # noqa: E402
from KalturaClient.Base import KalturaConfiguration  # noqa: E402
from KalturaClient.exceptions import KalturaException  # noqa: E402
from KalturaClient.Plugins.Core import (  # noqa: E402
    KalturaFilterPager,
    KalturaMediaEntryFilter,
    KalturaSessionType,
    KalturaThumbAssetFilter,
)
from KalturaClient.Plugins.CuePoint import KalturaCuePointFilter, KalturaCuePointType  # noqa: E402
from KalturaClient.Plugins.ThumbCuePoint import KalturaThumbCuePoint, KalturaThumbCuePointFilter  # noqa: E402

PARTNER, SECRET = 2_012_345, "admin-secret"


@pytest.fixture
def kaltura(launch):
    def start(**config):
        sim = launch("kaltura", token=SECRET, **{"library_size": 30, **config})
        client = Client(KalturaConfiguration(serviceUrl=sim.url))
        client.setKs(client.session.start(SECRET, "", KalturaSessionType.ADMIN, PARTNER))
        return sim, client

    return start


def test_each_entry_has_one_thumb_tagged_default_thumb_served_at_the_url_get_url_mints(kaltura, web):
    _sim, client = kaltura(library_private_every=1)  # every entry private, each of the kinds in turn
    ids = ",".join(f"0_0000000{i}" for i in range(7))
    thumbs = client.thumbAsset.list(KalturaThumbAssetFilter(entryIdIn=ids), KalturaFilterPager(pageSize=500)).objects
    by_entry: dict[str, list] = {}
    for thumb in thumbs:
        by_entry.setdefault(thumb.entryId, []).append(thumb)
    assert "0_00000005" not in by_entry  # an entry older than thumb assets: none
    for eid, held in by_entry.items():
        assert sum("default_thumb" in t.tags.split(",") for t in held) == 1, eid
        assert all(t.status.getValue() == 2 for t in held)  # KalturaThumbAssetStatus READY
    uploaded = next(t for t in by_entry["0_00000003"] if t.tags == "default_thumb")
    assert (uploaded.fileExt, uploaded.width, uploaded.height, uploaded.thumbParamsId) == (
        "png",
        1280,
        720,
        NotImplemented,
    )
    image = web.get(client.thumbAsset.getUrl(uploaded.id))
    assert image.headers["Content-Type"] == "image/png" and len(image.content) == uploaded.sizeInBytes
    frame = by_entry["0_00000001"][0]
    assert frame.tags == "default_thumb" and web.get(client.thumbAsset.getUrl(frame.id)).content[:3] == b"\xff\xd8\xff"
    restricted = client.thumbAsset.getUrl(by_entry["0_00000004"][0].id)  # its access control profile has a rule
    assert "/ks/" in restricted and web.get(restricted).status_code == 200
    assert web.get(restricted.split("/ks/")[0]).status_code == 403
    with pytest.raises(KalturaException) as refused:
        client.thumbAsset.getUrl("3_00000059")
    assert refused.value.code == "THUMB_ASSET_ID_NOT_FOUND"
    legacy = client.media.list(KalturaMediaEntryFilter(idEqual="0_00000005")).objects[0]
    own = web.get(legacy.thumbnailUrl)  # its own thumbnail, the image it shows
    assert own.status_code == 200 and own.content[:3] == b"\xff\xd8\xff"


def test_chapters_are_thumb_cue_points_of_sub_type_chapter_beside_slides_and_ads(kaltura):
    _sim, client = kaltura()
    everything = client.cuePoint.cuePoint.list(KalturaCuePointFilter(entryIdIn="0_00000001,0_00000002")).objects
    assert {type(p).__name__ for p in everything} == {"KalturaThumbCuePoint", "KalturaAdCuePoint"}
    thumbs = [p for p in everything if isinstance(p, KalturaThumbCuePoint)]
    assert sorted({p.subType.getValue() for p in thumbs}) == [1, 2] and {p.entryId for p in thumbs} == {"0_00000001"}
    chapters = client.cuePoint.cuePoint.list(
        KalturaThumbCuePointFilter(entryIdIn="0_00000001", cuePointTypeEqual=KalturaCuePointType.THUMB, subTypeEqual=2)
    ).objects
    assert [p.title for p in chapters] == ["Welcome", "Agenda — « Q3 »", "Demo"]
    starts = [p.startTime for p in chapters]  # milliseconds, from 0, in order
    assert starts[0] == 0 and starts == sorted(set(starts)) and all(p.status.getValue() == 1 for p in chapters)
    unknown = KalturaThumbCuePointFilter(entryIdIn="0_00000001", subTypeEqual=2)
    unknown.titleLike = "Demo"  # a field the simulator does not apply: ignored, as Kaltura ignores one
    assert len(client.cuePoint.cuePoint.list(unknown).objects) == 3
