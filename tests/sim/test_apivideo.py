"""The simulator's "apivideo" profile against a client written from api.video's OpenAPI file and docs."""

from __future__ import annotations

import json
import time

import pytest

from infra.provider_sim import sign_seed
from tests.sim.support import verify_apivideo, wait_for

API_KEY = "apivideo-key"
QUALITIES = {("hls", "360p"), ("hls", "480p"), ("hls", "720p"), ("hls", "1080p"), ("mp4", "1080p")}


class ApiVideoClient:
    """docs.api.video: HTTP Basic with the API key as user name and an empty password."""

    def __init__(self, web, base: str, api_key: str = API_KEY, password: str = "") -> None:
        self.web, self.base, self.auth = web, base, (api_key, password)

    def create(self, source: str, ref: str = "lib/1", **extra):
        body = {"title": ref, "source": source, "metadata": [{"key": "migration_ref", "value": ref}], **extra}
        return self.web.post(f"{self.base}/videos", json=body, auth=self.auth)

    def list(self, **params):
        return self.web.get(f"{self.base}/videos", params=params, auth=self.auth)

    def get(self, video_id: str):
        return self.web.get(f"{self.base}/videos/{video_id}", auth=self.auth)

    def status(self, video_id: str):
        return self.web.get(f"{self.base}/videos/{video_id}/status", auth=self.auth)


@pytest.fixture
def api(launch, web):
    sim = launch("apivideo", api_key=API_KEY)
    return sim, ApiVideoClient(web, sim.url)


def test_create_then_status_until_playable(api):
    sim, client = api
    sim.patch_config({"processing_delay_s": 0.45})
    r = client.create("https://media.example/a.mp4?duration=61.4", ref="lib/61", tags=["t1"])
    assert r.status_code == 201
    video = r.json()
    assert video["videoId"].startswith("vi") and len(video["videoId"]) == 24
    assert "status" not in video and "duration" not in video  # the video object has neither
    assert video["metadata"] == [{"key": "migration_ref", "value": "lib/61"}] and video["tags"] == ["t1"]
    assert video["source"] == {"uri": "https://media.example/a.mp4?duration=61.4"}
    assert video["createdAt"].endswith("+00:00")
    assert client.get(video["videoId"]).json() == video

    first = client.status(video["videoId"]).json()
    assert first["ingest"]["status"] == "ingesting" and first["encoding"]["playable"] is False
    assert {q["status"] for q in first["encoding"]["qualities"]} == {"waiting"}
    assert first["encoding"]["metadata"]["duration"] is None
    assert wait_for(lambda: client.status(video["videoId"]).json()["ingest"]["status"] == "ingested", timeout=2)
    assert wait_for(lambda: client.status(video["videoId"]).json()["encoding"]["playable"], timeout=2)
    done = client.status(video["videoId"]).json()
    assert {(q["type"], q["quality"]) for q in done["encoding"]["qualities"]} == QUALITIES
    assert {q["status"] for q in done["encoding"]["qualities"]} == {"encoded"}
    assert done["encoding"]["metadata"]["duration"] == 61  # an integer


def test_corrupt_source_never_ingests_and_every_quality_fails(api):
    sim, client = api
    vid = client.create("https://media.example/corrupt.mp4").json()["videoId"]
    assert wait_for(lambda: {q["status"] for q in client.status(vid).json()["encoding"]["qualities"]} == {"failed"})
    status = client.status(vid).json()
    assert status["ingest"]["status"] == "ingesting" and status["encoding"]["playable"] is False
    assert sim.stats()["errored_videos"] == 1
    missing = client.status("vi0000000000000000000000")
    assert missing.status_code == 404
    assert missing.json() == {
        "type": "https://docs.api.video/reference/resource-not-found",
        "title": "The requested resource was not found.",
        "status": 404,
        "name": "videoId",
    }
    assert client.get("vi0000000000000000000000").status_code == 404


def test_a_video_without_source_waits_for_an_upload(api):
    sim, client = api
    r = client.web.post(f"{sim.url}/videos", json={"title": "container"}, auth=client.auth)
    assert r.status_code == 201
    status = client.status(r.json()["videoId"]).json()
    assert status["encoding"] == {"playable": False, "qualities": [], "metadata": status["encoding"]["metadata"]}
    assert "ingest" not in status


def test_list_filters_sorts_and_pages_with_links(api):
    _, client = api
    refs = ["same", "r1", "same", "r3", "same"]
    ids = [client.create(f"https://media.example/{i}.mp4", ref=ref).json() for i, ref in enumerate(refs)]
    found = client.list(**{"metadata[migration_ref]": "same", "sortBy": "createdAt", "sortOrder": "desc"}).json()
    assert [v["videoId"] for v in found["data"]] == [ids[4]["videoId"], ids[2]["videoId"], ids[0]["videoId"]]
    assert found["pagination"]["itemsTotal"] == 3 and found["pagination"]["pagesTotal"] == 1
    assert client.list(**{"metadata[migration_ref]": "none"}).json()["data"] == []

    pages, page = [], client.list(pageSize=2, sortBy="createdAt", sortOrder="asc").json()
    while True:
        pages.append([v["videoId"] for v in page["data"]])
        links = {link["rel"]: link["uri"] for link in page["pagination"]["links"]}
        assert {"self", "first", "last"} <= set(links)
        if "next" not in links:
            break
        page = client.web.get(links["next"], auth=client.auth).json()
    order = [v["videoId"] for v in ids]
    assert pages == [order[0:2], order[2:4], order[4:]]
    assert page["pagination"]["currentPage"] == 3 and "previous" in links
    assert [v["title"] for v in client.list(title="r", sortBy="title").json()["data"]] == ["r1", "r3"]

    too_big = client.list(pageSize=101)
    assert too_big.status_code == 400 and too_big.json()["range"] == {"min": 1, "max": 100}
    bad_sort = client.list(sortBy="size")
    assert bad_sort.status_code == 400 and bad_sort.json()["name"] == "sortBy"


def test_bad_credentials_are_401(api, web):
    sim, client = api
    for wrong in (ApiVideoClient(web, sim.url, "other"), ApiVideoClient(web, sim.url, API_KEY, "password")):
        r = wrong.create("https://media.example/a.mp4")
        assert r.status_code == 401 and r.json()["status"] == 401 and r.json()["type"].startswith("https://")
        assert wrong.list().status_code == 401
    assert web.get(f"{sim.url}/videos", headers={"Authorization": f"Bearer {API_KEY}"}).status_code == 401
    assert client.create("https://media.example/a.mp4").status_code == 201


@pytest.mark.parametrize(
    "body, name, kind",
    [
        ({"source": "https://x/a.mp4"}, "title", "attribute-required"),
        ({"title": 5, "source": "https://x/a.mp4"}, "title", "invalid-attribute"),
        ({"title": "t", "source": "https://x/a.mp4", "metadata": {"ref": "x"}}, "metadata", "invalid-attribute"),
        ({"title": "t", "source": "https://x/a.mp4", "tags": "a"}, "tags", "invalid-attribute"),
        ({"title": "t", "source": "ftp://x/a.mp4"}, "source", "invalid-attribute"),
        ({"title": "t", "source": "https://x/unsupported.mkv"}, "source", "invalid-attribute"),
    ],
)
def test_refused_creates_are_400_problems(api, body, name, kind):
    sim, client = api
    r = client.web.post(f"{sim.url}/videos", json=body, auth=client.auth)
    assert r.status_code == 400
    problem = r.json()
    assert problem["status"] == 400 and problem["type"] == f"https://docs.api.video/reference/{kind}"
    assert problem["title"] and (name is None or problem["name"] == name)
    assert sim.stats()["rejected"] == 1 and sim.stats()["videos"] == 0


def test_429_body_and_headers(api):
    sim, client = api
    sim.patch_config({"rate": 1, "burst": 1})
    assert client.create("https://media.example/a.mp4").status_code == 201
    r = client.create("https://media.example/b.mp4")
    assert r.status_code == 429
    too_many = {
        "type": "https://docs.api.video/reference/too-many-requests",
        "title": "Too many requests.",
        "status": 429,
    }
    assert r.json() == too_many
    assert int(r.headers["X-RateLimit-Retry-After"]) >= 1 and "X-RateLimit-Limit" not in r.headers
    assert "Retry-After" not in r.headers  # api.video documents only its own header

    sim.patch_config({"rate_headers": True})
    r = client.create("https://media.example/c.mp4")
    assert r.status_code == 429
    assert r.headers["X-RateLimit-Limit"] == "60" and r.headers["X-RateLimit-Remaining"] == "0"  # per minute
    assert int(r.headers["X-RateLimit-Retry-After"]) >= 1
    ok = client.list()
    assert ok.status_code == 200 and ok.headers["X-RateLimit-Limit"] == "60"


def test_webhook_per_quality_signed_and_none_for_failure(launch, web, hooks):
    secret = "sig_sec_0000000000000000000000"
    sim = launch("apivideo", webhook_url=hooks.url, webhook_secret=secret)
    client = ApiVideoClient(web, sim.url)
    vid = client.create("https://media.example/a.mp4").json()["videoId"]
    client.create("https://media.example/corrupt.mp4")
    deliveries = hooks.wait(len(QUALITIES))
    time.sleep(0.2)  # a failure would have been sent by now
    assert len(hooks.deliveries) == len(QUALITIES)
    seen = set()
    for d in deliveries:
        assert verify_apivideo(secret, d.headers, d.body)
        assert d.headers["x-api-video-webhookid"].startswith("webhook_")
        event = json.loads(d.body)
        assert set(event) == {"type", "emittedAt", "videoId", "encoding", "quality"}
        assert event["type"] == "video.encoding.quality.completed" and event["videoId"] == vid
        seen.add((event["encoding"], event["quality"]))
    assert seen == QUALITIES
    assert len({d.headers["x-api-video-webhookid"] for d in deliveries}) == 1  # one subscription
    assert client.status(vid).json()["encoding"]["playable"] is True


def test_apivideo_signing_matches_published_vector():
    # docs.api.video "create and manage webhooks": curl sample body and signature, secret from its 201 example.
    body = (
        b'{"type":"video.encoding.quality.completed","emittedAt":"2021-01-29T15:46:25.217Z",'
        b'"videoId":"vi0000000000000000000000","liveStreamId":"li0000000000000000000000",'
        b'"encoding":"hls","quality":"720p"}'
    )
    expected = "27a77d3a7fc626854886b5dbfae4e32c8b0170c1ea1b714c91ba77f1e7774e8c"
    assert sign_seed("sig_sec_0000000000000000000000", body) == expected
