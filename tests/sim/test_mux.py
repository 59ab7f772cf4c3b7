"""The simulator's "mux" profile against a client written from Mux Video's docs (not from the simulator)."""

from __future__ import annotations

import json
import time

import pytest

from infra.provider_sim import sign_timestamped
from tests.sim.support import verify_mux, wait_for

TOKEN_ID, TOKEN_SECRET = "token-id-1", "token-secret-1"


class MuxClient:
    """docs.mux.com: HTTP Basic with the access token id and secret; assets under /video/v1/assets."""

    def __init__(self, web, base: str, token_id: str = TOKEN_ID, token_secret: str = TOKEN_SECRET) -> None:
        self.web, self.base, self.auth = web, base, (token_id, token_secret)

    def create(self, url: str, passthrough: str | None = "lib/1", **extra):
        body = {"inputs": [{"url": url}], "playback_policies": ["public"], **extra}
        if passthrough is not None:
            body["passthrough"] = passthrough
        return self.web.post(f"{self.base}/video/v1/assets", json=body, auth=self.auth)

    def list(self, **params):
        return self.web.get(f"{self.base}/video/v1/assets", params=params, auth=self.auth)

    def get(self, asset_id: str):
        return self.web.get(f"{self.base}/video/v1/assets/{asset_id}", auth=self.auth)


@pytest.fixture
def mux(launch, web):
    sim = launch("mux", token_id=TOKEN_ID, token_secret=TOKEN_SECRET)
    return sim, MuxClient(web, sim.url)


def test_create_then_get_until_ready(mux):
    sim, client = mux
    sim.patch_config({"processing_delay_s": 0.2})
    r = client.create("https://media.example/a.mp4?duration=12.5", passthrough="lib/42", meta={"external_id": "vm-1"})
    assert r.status_code == 201
    asset = r.json()["data"]
    assert asset["status"] == "preparing" and asset["passthrough"] == "lib/42"
    assert asset["meta"] == {"external_id": "vm-1"}
    assert isinstance(asset["created_at"], str) and asset["created_at"].isdigit()  # Unix seconds as a string
    assert asset["playback_ids"][0]["policy"] == "public"
    assert "duration" not in asset
    assert client.get(asset["id"]).json()["data"]["status"] == "preparing"
    assert wait_for(lambda: client.get(asset["id"]).json()["data"]["status"] == "ready", timeout=3)
    ready = client.get(asset["id"]).json()["data"]
    assert ready["duration"] == 12.5 and ready["playback_ids"] == asset["playback_ids"]
    assert sim.stats()["gets"] >= 3


def test_corrupt_source_errors_and_unknown_asset_is_404(mux):
    sim, client = mux
    asset = client.create("https://media.example/corrupt.mp4").json()["data"]
    assert wait_for(lambda: client.get(asset["id"]).json()["data"]["status"] == "errored")
    errors = client.get(asset["id"]).json()["data"]["errors"]
    assert errors["type"] == "invalid_input" and errors["messages"]
    r = client.get("nope")
    assert r.status_code == 404 and r.json()["error"]["type"] == "not_found"
    assert sim.stats()["errored_videos"] == 1


def test_no_idempotency_a_repeat_makes_a_second_asset(mux):
    sim, client = mux
    a = client.create("https://media.example/a.mp4", passthrough="same")
    b = client.web.post(
        f"{sim.url}/video/v1/assets",
        json={"inputs": [{"url": "https://media.example/a.mp4"}], "passthrough": "same"},
        headers={"Idempotency-Key": "k"},
        auth=client.auth,
    )
    assert (a.status_code, b.status_code) == (201, 201)
    assert a.json()["data"]["id"] != b.json()["data"]["id"]
    assert sim.stats()["duplicate_videos"] == 1


def test_list_is_newest_first_with_cursor_paging(mux):
    sim, client = mux
    made = [client.create(f"https://media.example/{i}.mp4", passthrough=f"p{i}").json()["data"]["id"] for i in range(5)]
    seen, cursor = [], None
    while True:
        page = client.list(limit=2, **({"cursor": cursor} if cursor else {})).json()
        assert len(page["data"]) <= 2
        seen += [a["id"] for a in page["data"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == made[::-1]
    assert [a["passthrough"] for a in client.list().json()["data"]] == [f"p{i}" for i in range(4, -1, -1)]
    assert client.list(page=2, limit=2).json()["data"][0]["id"] == made[2]
    too_many = client.list(limit=101)
    assert too_many.status_code == 400 and too_many.json()["error"]["type"] == "invalid_parameters"
    assert sim.stats()["lookups"] == 6  # three pages, one full list, one by page, one refused


def test_bad_credentials_are_401(mux, web):
    sim, client = mux
    for wrong in (MuxClient(web, sim.url, TOKEN_ID, "wrong"), MuxClient(web, sim.url, "other", TOKEN_SECRET)):
        r = wrong.create("https://media.example/a.mp4")
        assert r.status_code == 401 and r.json()["error"]["type"] == "unauthorized"
        assert wrong.list().status_code == 401
    assert web.get(f"{sim.url}/video/v1/assets").status_code == 401  # no credentials at all
    bearer = web.get(f"{sim.url}/video/v1/assets", headers={"Authorization": f"Bearer {TOKEN_SECRET}"})
    assert bearer.status_code == 401
    assert client.create("https://media.example/a.mp4").status_code == 201
    assert sim.stats()["videos"] == 1


@pytest.mark.parametrize(
    "body, needle",
    [
        ({"playback_policies": ["public"]}, "inputs"),
        ({"inputs": [{"url": "ftp://x/a.mp4"}]}, "url"),
        ({"inputs": [{"url": "https://x/a.mp4"}], "passthrough": "a" * 256}, "passthrough"),
        # 128 emoji are 256 UTF-16 units: Mux counts characters as JavaScript does.
        ({"inputs": [{"url": "https://x/a.mp4"}], "passthrough": "\U0001f600" * 128}, "passthrough"),
        ({"inputs": [{"url": "https://x/a.mp4"}], "meta": {"external_id": "x" * 129}}, "external_id"),
        ({"inputs": [{"url": "https://x/a.mp4"}], "playback_policies": ["everyone"]}, "playback_policies"),
    ],
)
def test_refused_creates_are_400_invalid_parameters(mux, body, needle):
    sim, client = mux
    r = client.web.post(f"{sim.url}/video/v1/assets", json=body, auth=client.auth)
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["type"] == "invalid_parameters" and needle in error["messages"][0]
    assert sim.stats()["rejected"] == 1


def test_longest_passthrough_and_deprecated_input_spelling_are_accepted(mux):
    sim, client = mux
    assert client.create("https://media.example/a.mp4", passthrough="a" * 255).status_code == 201
    r = client.web.post(f"{sim.url}/video/v1/assets", json={"input": "https://media.example/b.mp4"}, auth=client.auth)
    assert r.status_code == 201 and "passthrough" not in r.json()["data"]
    assert client.create("https://media.example/unsupported.mkv").status_code == 400


def test_429_body_and_headers(mux):
    sim, client = mux
    sim.patch_config({"rate": 1, "burst": 1})
    assert client.create("https://media.example/a.mp4").status_code == 201
    r = client.create("https://media.example/b.mp4")
    assert r.status_code == 429
    assert r.json() == {"error": {"type": "too_many_requests", "messages": ["Too many requests, retry later."]}}
    assert not any(h.lower().startswith(("retry-after", "x-ratelimit")) for h in r.headers)  # Mux sends no hint
    assert sim.requests_log()[-1]["retry_after_s"] is None

    sim.patch_config({"rate_headers": True})
    r = client.create("https://media.example/c.mp4")
    assert r.status_code == 429
    assert r.headers["X-RateLimit-Limit"] == "1" and r.headers["X-RateLimit-Remaining"] == "0"
    assert 0 < int(r.headers["X-RateLimit-Reset"]) - time.time() <= 2  # epoch seconds when the bucket is full
    assert sim.requests_log()[-1]["retry_after_s"] >= 1


def test_webhooks_are_signed_mux_events(launch, web, hooks):
    sim = launch("mux", webhook_url=hooks.url, webhook_secret="whsec-mux")
    client = MuxClient(web, sim.url)
    ok = client.create("https://media.example/a.mp4?duration=3", passthrough="ok").json()["data"]["id"]
    bad = client.create("https://media.example/corrupt.mp4", passthrough="bad").json()["data"]["id"]
    deliveries = hooks.wait(4)
    events = {}
    for d in deliveries:
        assert verify_mux("whsec-mux", d.headers, d.body)
        t = int(d.headers["mux-signature"].split(",")[0].removeprefix("t="))
        assert abs(t - time.time()) < 300  # inside the SDKs' 5-minute tolerance
        event = json.loads(d.body)
        assert event["object"] == {"type": "asset", "id": event["data"]["id"]}
        assert event["environment"] == {"id": "env", "name": "Production"} and event["attempts"] == []
        assert event["created_at"].endswith("Z") and len(event["id"]) == 36
        events[(event["data"]["id"], event["type"])] = event
    assert set(events) == {
        (ok, "video.asset.created"),
        (ok, "video.asset.ready"),
        (bad, "video.asset.created"),
        (bad, "video.asset.errored"),
    }
    assert events[(ok, "video.asset.ready")]["data"]["duration"] == 3.0
    assert events[(ok, "video.asset.ready")]["data"]["passthrough"] == "ok"
    assert events[(bad, "video.asset.errored")]["data"]["errors"]["type"] == "invalid_input"
    assert wait_for(lambda: sim.stats()["webhooks_delivered"] == 4)


def test_mux_signing_matches_published_vector():
    # muxinc/mux-elixir test vector: secret SuperSecret123, body {"test":"body"}, t=1565125718.
    expected = "854ece4c22acef7c66b57d4e504153bc512595e8e9c772ece2a68150548c19a7"
    assert sign_timestamped("SuperSecret123", 1565125718, b'{"test":"body"}') == expected
