"""The simulator's "cloudflare" profile against a client written from Cloudflare Stream's docs."""

from __future__ import annotations

import json
import time

import pytest

from tests.sim.support import verify_cloudflare, wait_for

TOKEN, ACCOUNT = "cf-api-token", "023e105f4ecef8ad9ca31a8372d0c353"
STATES = ["downloading", "queued", "inprogress", "ready"]


class StreamClient:
    """developers.cloudflare.com/stream: Bearer API token, /accounts/{account_id}/stream..., envelopes."""

    def __init__(self, web, base: str, token: str = TOKEN, account: str = ACCOUNT) -> None:
        self.web, self.root = web, f"{base}/accounts/{account}/stream"
        self.headers = {"Authorization": f"Bearer {token}"}

    def copy(self, url: str, ref: str = "lib/1", creator: str | None = "vm-abc", **extra):
        body = {"url": url, "meta": {"name": ref, "migration_ref": ref}, **extra}
        if creator is not None:
            body["creator"] = creator
        return self.web.post(f"{self.root}/copy", json=body, headers=self.headers)

    def list(self, **params):
        return self.web.get(self.root, params=params, headers=self.headers)

    def get(self, uid: str):
        return self.web.get(f"{self.root}/{uid}", headers=self.headers)


@pytest.fixture
def stream(launch, web):
    sim = launch("cloudflare", token=TOKEN, account_id=ACCOUNT)
    return sim, StreamClient(web, sim.url)


def _result(r):
    body = r.json()
    assert body["success"] is True and body["errors"] == [] and body["messages"] == []
    return body["result"]


def test_copy_then_states_progress_to_ready(stream):
    sim, client = stream
    sim.patch_config({"processing_delay_s": 0.6})
    r = client.copy("https://media.example/a.mp4?duration=7.25", ref="lib/7")
    assert r.status_code == 200
    video = _result(r)
    assert video["status"]["state"] == "downloading" and video["readyToStream"] is False
    assert video["duration"] == -1 and video["input"] == {"width": -1, "height": -1}
    source = "https://media.example/a.mp4?duration=7.25"
    assert video["meta"] == {"downloaded-from": source, "name": "lib/7", "migration_ref": "lib/7"}
    assert video["creator"] == "vm-abc" and video["created"].endswith("Z")
    seen = []
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        current = _result(client.get(video["uid"]))
        state = current["status"]["state"]
        if not seen or seen[-1][0] != state:
            seen.append((state, current["duration"], current["readyToStream"]))
        if state == "ready":
            break
        time.sleep(0.02)
    states = [s for s, _, _ in seen]
    assert states == sorted(states, key=STATES.index) and states[0] == "downloading" and states[-1] == "ready"
    assert {"queued", "inprogress"} & set(states)  # at least one intermediate state was seen
    assert all(duration == -1 for state, duration, _ in seen if state in ("downloading", "queued"))
    assert all(not streamable for state, _, streamable in seen if state != "inprogress" and state != "ready")
    ready = _result(client.get(video["uid"]))
    assert ready["readyToStream"] is True and ready["duration"] == 7.25
    assert ready["status"]["pctComplete"] == "100.000000" and ready["status"]["errorReasonCode"] == ""


def test_corrupt_source_ends_in_error_and_unknown_uid_is_404(stream):
    _sim, client = stream
    uid = _result(client.copy("https://media.example/corrupt.mp4"))["uid"]
    assert wait_for(lambda: _result(client.get(uid))["status"]["state"] == "error")
    failed = _result(client.get(uid))
    assert failed["status"]["errorReasonCode"] == "ERR_MALFORMED_VIDEO" and failed["status"]["errorReasonText"]
    assert failed["readyToStream"] is False and failed["duration"] == -1
    r = client.get("0" * 32)
    assert r.status_code == 404
    not_found = {"code": 10005, "message": "Video not found"}
    assert r.json() == {"success": False, "errors": [not_found], "messages": [], "result": None}


def test_list_filters_order_and_time_paging(stream):
    _sim, client = stream
    uids = []
    for i, creator in enumerate(["a", "b", "a", "a"]):
        uids.append(_result(client.copy(f"https://media.example/{i}.mp4", ref=f"r{i}", creator=creator))["uid"])
        time.sleep(0.002)  # distinct creation times
    newest_first = client.list().json()
    assert [v["uid"] for v in newest_first["result"]] == uids[::-1]
    assert newest_first["total"] == 4 and newest_first["range"] == 4
    mine = client.list(creator="a").json()
    assert [v["uid"] for v in mine["result"]] == [uids[3], uids[2], uids[0]] and mine["total"] == 3
    assert [v["uid"] for v in client.list(asc="true", creator="a").json()["result"]] == [uids[0], uids[2], uids[3]]
    assert [v["uid"] for v in client.list(video_name="r1").json()["result"]] == [uids[1]]
    # No cursor: page by `before` = the created time of the last video seen.
    paged, before = [], None
    for _ in range(len(uids) + 1):  # bounded: a `before` that failed to exclude would loop forever
        page = client.list(limit=1, **({"before": before} if before else {})).json()
        if not page["result"]:
            break
        assert page["range"] == 1
        paged.append(page["result"][0]["uid"])
        before = page["result"][0]["created"]
    assert paged == uids[::-1]
    first = _result(client.get(uids[0]))["created"]
    assert [v["uid"] for v in client.list(after=first, asc="true").json()["result"]] == uids[1:]
    for bad in ({"limit": 1001}, {"limit": 0}, {"after": "yesterday"}):
        r = client.list(**bad)
        assert r.status_code == 400 and r.json()["success"] is False and r.json()["errors"][0]["code"]


def test_token_and_account_are_checked(stream, web):
    sim, client = stream
    r = StreamClient(web, sim.url, token="wrong").copy("https://media.example/a.mp4")
    assert r.status_code == 401
    assert r.json()["success"] is False and r.json()["errors"][0]["code"] == 10000
    assert web.get(f"{sim.url}/accounts/{ACCOUNT}/stream").status_code == 401  # no token at all
    other = StreamClient(web, sim.url, account="f" * 32)
    r = other.list()
    assert r.status_code == 403 and r.json()["errors"] == [{"code": 10000, "message": "Authentication error"}]
    assert other.copy("https://media.example/a.mp4").status_code == 403
    assert client.copy("https://media.example/a.mp4").status_code == 200
    assert sim.stats()["videos"] == 1


@pytest.mark.parametrize(
    "body, code",
    [
        ({"meta": {"name": "x"}}, 10010),  # url is required
        ({"url": "not a url"}, 10010),
        ({"url": "https://x/a.mp4", "creator": "c" * 65}, None),
        ({"url": "https://x/a.mp4", "meta": "name"}, None),
        ({"url": "https://x/unsupported.mkv"}, 10059),
    ],
)
def test_refused_copies_are_400_envelopes(stream, body, code):
    sim, client = stream
    r = client.web.post(f"{client.root}/copy", json=body, headers=client.headers)
    assert r.status_code == 400
    envelope = r.json()
    assert envelope["success"] is False and envelope["result"] is None and len(envelope["errors"]) == 1
    assert envelope["errors"][0]["message"] and (code is None or envelope["errors"][0]["code"] == code)
    assert sim.stats()["rejected"] == 1


def test_429_body_and_headers(stream):
    sim, client = stream
    sim.patch_config({"rate": 1, "burst": 1})
    assert client.copy("https://media.example/a.mp4").status_code == 200
    r = client.copy("https://media.example/b.mp4")
    assert r.status_code == 429
    assert r.json()["errors"] == [{"code": 971, "message": "Please wait and consider throttling your request speed"}]
    assert r.json()["success"] is False
    assert int(r.headers["retry-after"]) >= 1 and "Ratelimit" not in r.headers
    assert sim.requests_log()[-1]["retry_after_s"] == int(r.headers["retry-after"])

    sim.patch_config({"rate_headers": True})
    r = client.copy("https://media.example/c.mp4")
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
    assert r.headers["Ratelimit-Policy"] == '"default";q=1;w=1'
    assert r.headers["Ratelimit"].startswith('"default";r=0;t=')


def test_webhook_is_the_video_signed_with_sig1(launch, web, hooks):
    sim = launch("cloudflare", webhook_url=hooks.url, webhook_secret="85011ed3a913c6ad5f9cf6c5573cc0a7")
    client = StreamClient(web, sim.url)
    ok = _result(client.copy("https://media.example/a.mp4?duration=4", ref="ok"))["uid"]
    bad = _result(client.copy("https://media.example/corrupt.mp4", ref="bad"))["uid"]
    deliveries = hooks.wait(2)
    assert len(deliveries) == 2
    videos = {}
    for d in deliveries:
        assert verify_cloudflare("85011ed3a913c6ad5f9cf6c5573cc0a7", d.headers, d.body)
        t = int(d.headers["webhook-signature"].split(",")[0].removeprefix("time="))
        assert abs(t - time.time()) < 60
        video = json.loads(d.body)
        assert "result" not in video and "type" not in video  # the body is the video itself
        videos[video["uid"]] = video
    assert videos[ok]["status"]["state"] == "ready" and videos[ok]["readyToStream"] and videos[ok]["duration"] == 4
    assert videos[ok]["meta"]["migration_ref"] == "ok"
    assert videos[bad]["status"]["state"] == "error"
    assert videos[bad]["status"]["errorReasonCode"] == "ERR_MALFORMED_VIDEO"
