"""The simulator's fault knobs in every profile: 503s, lost answers, rate-limit headers, live rate changes,
duplicate, forged and early webhooks; plus the request log, stats, control endpoints and command line."""

from __future__ import annotations

import json
import math
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.sim.support import VERIFY, Hooks, verify_generic, wait_for

ROOT = Path(__file__).resolve().parents[2]
PROFILES = ("generic", "mux", "cloudflare", "apivideo")
# Webhook deliveries one good video causes: mux also announces the creation, api.video
# sends one per encoded quality (four HLS renditions and one MP4).
EVENTS_PER_VIDEO = {"generic": 1, "mux": 2, "cloudflare": 1, "apivideo": 5}


# Per provider, as its docs give them: create, list and get paths; where the create answer
# holds the id; where a listing holds its videos; where a listed video holds our reference.
SPECS = {
    "generic": ("/videos", "/videos", "/videos/{}", ("id",), ("data",), ("metadata", "migration_ref")),
    "mux": ("/video/v1/assets", "/video/v1/assets", "/video/v1/assets/{}", ("data", "id"), ("data",), ("passthrough",)),
    "cloudflare": (
        "/accounts/acc/stream/copy",
        "/accounts/acc/stream",
        "/accounts/acc/stream/{}",
        ("result", "uid"),
        ("result",),
        ("meta", "migration_ref"),
    ),
    "apivideo": ("/videos", "/videos", "/videos/{}", ("videoId",), ("data",), ("metadata", 0, "value")),
}


def dig(value, path):
    for step in path:
        value = value[step]
    return value


class Api:
    """Just enough of each provider's API to drive the fault knobs."""

    def __init__(self, web, sim, profile: str) -> None:
        self.web, self.base, self.profile = web, sim.url, profile
        self.create_path, self.list_path, self.get_path, self.id_at, self.items_at, self.ref_at = SPECS[profile]

    def create(self, ref: str = "ref-1", url: str = "https://media.example/a.mp4"):
        body = {
            "generic": {"input": url, "metadata": {"migration_ref": ref}},
            "mux": {"inputs": [{"url": url}], "passthrough": ref},
            "cloudflare": {"url": url, "meta": {"migration_ref": ref}},
            "apivideo": {"title": ref, "source": url, "metadata": [{"key": "migration_ref", "value": ref}]},
        }[self.profile]
        return self.web.post(self.base + self.create_path, json=body)

    def list(self):
        return self.web.get(self.base + self.list_path)

    def get(self, video_id: str):
        return self.web.get(self.base + self.get_path.format(video_id))

    def video_id(self, reply) -> str:
        return dig(reply.json(), self.id_at)

    def listed_refs(self) -> list[str]:
        return [dig(v, self.ref_at) for v in dig(self.list().json(), self.items_at)]


def error_shaped(profile: str, status: int, body: object) -> bool:
    """The provider's documented error shape, checked loosely."""
    if profile == "generic":
        return isinstance(body, dict) and isinstance(body.get("error"), str)
    if profile == "mux":
        return isinstance(body["error"]["type"], str) and isinstance(body["error"]["messages"], list)
    if profile == "cloudflare":
        return body["success"] is False and body["result"] is None and isinstance(body["errors"][0]["code"], int)
    return body["status"] == status and body["type"] and body["title"]


# ----- configuration ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "patch",
    [
        {"profile": "youtube"},
        {"unavailable_rate": 1.5},
        {"unavailable_retry_after_fraction": -0.1},
        {"lose_rate": "often"},
        {"rate_headers": 1},
        {"webhook_duplicate_rate": 2},
        {"webhook_forged_rate": -1},
        {"webhook_early": "yes"},
        {"seed": 1.5},
        {"token_id": 5},
        {"account_id": ["a"]},
        {"api_key": True},
        {"others_take": -1},
        {"others_take": 1.5},
    ],
)
def test_new_knobs_are_validated(launch, web, patch):
    sim = launch()
    r = web.post(f"{sim.url}/_sim/config", json=patch)
    [name] = patch
    assert r.status_code == 400 and name in r.json()["error"]
    assert web.get(f"{sim.url}/_sim/config").json()[name] == sim.config_dict()[name]


@pytest.mark.parametrize("profile", PROFILES)
def test_control_endpoints_and_reset_in_every_profile(launch, web, profile):
    sim = launch(profile)
    api = Api(web, sim, profile)
    assert api.create().status_code in (200, 201)
    assert web.get(f"{sim.url}/_sim/stats").json()["videos"] == 1
    assert web.get(f"{sim.url}/_sim/config").json()["profile"] == profile
    assert [r["op"] for r in web.get(f"{sim.url}/_sim/requests").json()] == ["create"]
    assert web.post(f"{sim.url}/_sim/reset").status_code == 200
    stats = web.get(f"{sim.url}/_sim/stats").json()
    assert stats == dict.fromkeys(stats, 0)
    assert web.get(f"{sim.url}/_sim/requests?op=all").json() == []


# ----- injected 500 and 503 ---------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_injected_failures_and_unavailability_speak_the_profile(launch, web, profile):
    sim = launch(profile, fail_rate=1.0)
    api = Api(web, sim, profile)
    r = api.create()
    assert r.status_code == 500 and error_shaped(profile, 500, r.json())
    sim.patch_config({"fail_rate": 0.0, "unavailable_rate": 1.0, "unavailable_retry_after_fraction": 1.0})
    for r in (api.create(), api.list(), api.get("x")):
        assert r.status_code == 503 and error_shaped(profile, 503, r.json())
        assert r.headers["Retry-After"] == "1"
    if profile == "apivideo":
        assert web.get(f"{sim.url}/videos/x/status").status_code == 503
    stats = sim.stats()
    assert stats["failed_injected"] == 1 and stats["videos"] == 0
    assert stats["unavailable_injected"] == (4 if profile == "apivideo" else 3)


def test_fail_rate_holds(launch, web):
    sim = launch(seed=2, fail_rate=0.3)
    codes = [Api(web, sim, "generic").create(ref=f"r{i}").status_code for i in range(150)]
    assert 25 <= codes.count(500) <= 65 and codes.count(500) + codes.count(201) == 150
    assert sim.stats()["failed_injected"] == codes.count(500) and sim.stats()["videos"] == codes.count(201)


def test_unavailable_rate_and_retry_after_fraction_hold(launch, web):
    sim = launch(seed=7, unavailable_rate=0.3, unavailable_retry_after_fraction=0.5)
    answers = [web.get(f"{sim.url}/videos") for _ in range(300)]
    refused = [r for r in answers if r.status_code == 503]
    assert all(r.status_code == 200 for r in answers if r.status_code != 503)
    assert 60 <= len(refused) <= 120, len(refused)
    hinted = [r for r in refused if "Retry-After" in r.headers]
    assert 0.3 <= len(hinted) / len(refused) <= 0.7, (len(hinted), len(refused))
    assert sim.stats()["unavailable_injected"] == len(refused)
    log = [e for e in sim.requests_log(ops=None) if e["status"] == 503]
    assert sum(1 for e in log if e["retry_after_s"] == 1.0) == len(hinted)
    sim.patch_config({"unavailable_retry_after_fraction": 0.0})
    while (r := web.get(f"{sim.url}/videos")).status_code != 503:
        pass
    assert "Retry-After" not in r.headers


# ----- lost answers -----------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_a_lost_answer_leaves_the_video_behind(launch, web, profile):
    sim = launch(profile, lose_rate=1.0)
    api = Api(web, sim, profile)
    with pytest.raises(requests.ConnectionError):
        api.create(ref="lost-1")
    sim.patch_config({"lose_rate": 0.0})
    assert api.listed_refs() == ["lost-1"]
    stats = sim.stats()
    assert stats["lost_responses"] == 1 and stats["creates"] == 1 and stats["videos"] == 1
    [entry] = sim.requests_log()
    assert entry["lost"] is True and entry["ref"] == "lost-1"


def test_lose_rate_holds_and_every_create_is_performed(launch, web):
    sim = launch(seed=3, lose_rate=0.25)
    lost = 0
    for i in range(200):
        try:
            assert Api(web, sim, "generic").create(ref=f"r{i}").status_code == 201
        except requests.ConnectionError:
            lost += 1
    assert 30 <= lost <= 70, lost
    stats = sim.stats()
    assert stats["lost_responses"] == lost and stats["videos"] == 200 and stats["duplicate_videos"] == 0


# ----- rate limiting ----------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_rate_headers_are_true_to_the_bucket(launch, web, profile):
    sim = launch(profile, rate=2, burst=4)
    api = Api(web, sim, profile)
    quiet = api.create(ref="r0")
    assert not any(h.lower() in ("x-ratelimit-limit", "ratelimit", "ratelimit-policy") for h in quiet.headers)
    sim.patch_config({"rate_headers": True})
    for left in (2, 1, 0):
        r = api.create(ref=f"r{left}")
        assert r.status_code in (200, 201)
        h = r.headers
        now = time.time()
        full_in = math.ceil((4 - left) / 2)  # seconds until the bucket holds 4 again, at 2/s
        if profile in ("generic", "mux"):
            assert h["X-RateLimit-Limit"] == "2" and h["X-RateLimit-Remaining"] == str(left)
            assert 0 <= int(h["X-RateLimit-Reset"]) - now <= full_in + 1
        if profile == "apivideo":
            assert h["X-RateLimit-Limit"] == "120" and h["X-RateLimit-Remaining"] == str(left)  # per minute
            assert int(h["X-RateLimit-Retry-After"]) == (0 if left else 1)
        policy, current = {
            "generic": ("RateLimit-Policy", "RateLimit"),
            "cloudflare": ("Ratelimit-Policy", "Ratelimit"),
        }.get(profile, (None, None))
        if policy:
            assert h[policy] == '"default";q=4;w=2'  # quota/window = 2 per second
            assert h[current] == f'"default";r={left};t={full_in}'
    listed = api.list()  # reads report the bucket without spending it
    assert listed.status_code == 200
    remaining = listed.headers.get("X-RateLimit-Remaining") or re.search(r";r=(\d+)", listed.headers["RateLimit"])[1]
    assert remaining == "0"
    assert api.create(ref="over").status_code == 429


def test_rate_header_scale_overstates_the_limit_while_the_bucket_stays_true(launch, web):
    # A provider whose headers state twice its true limit (issue 20's third bench scenario).
    sim = launch(rate=5, burst=5, rate_headers=True, rate_header_scale=2.0)
    api = Api(web, sim, "generic")
    first = api.create(ref="r0")
    assert first.headers["X-RateLimit-Limit"] == "10" and first.headers["X-RateLimit-Remaining"] == "8"
    assert first.headers["RateLimit-Policy"] == '"default";q=10;w=1'
    codes = [api.create(ref=f"r{i}").status_code for i in range(1, 6)]
    assert codes.count(429) >= 1 and sim.stats()["creates"] <= 6  # the true bucket: 5, plus what 5/s earned


def test_rate_changes_act_on_the_bucket_at_once(launch, web):
    sim = launch(rate=0.5, burst=3)
    api = Api(web, sim, "generic")
    codes = [api.create(ref=f"a{i}").status_code for i in range(6)]
    assert codes == [201, 201, 201, 429, 429, 429]  # the rate dropped: 429s

    sim.patch_config({"rate": 10_000})
    assert [api.create(ref=f"b{i}").status_code for i in range(10)] == [201] * 10  # raised: they stop

    sim.patch_config({"rate": 100})
    for i in range(3):
        api.create(ref=f"c{i}")  # spend the bucket...
    time.sleep(0.1)  # ...and let 100/s refill it
    sim.patch_config({"rate": 0.1})
    # What 100/s earned before the change stays earned; only then does 0.1/s apply.
    assert [api.create(ref=f"d{i}").status_code for i in range(4)] == [201, 201, 201, 429]
    assert sim.stats()["throttled"] == 4


@pytest.mark.parametrize("profile", PROFILES)
def test_others_take_throttles_the_next_creates_however_slow_they_come(launch, web, profile):
    # A bucket no single client could empty: only the account's other clients (others_take) do.
    sim = launch(profile, rate=1000, burst=50, rate_headers=True)
    api = Api(web, sim, profile)
    assert api.create(ref="before").status_code in (200, 201)
    sim.patch_config({"others_take": 2})
    first = api.create(ref="a")
    time.sleep(0.05)  # what 1000/s earns in 50 ms is refilled, and taken again by the others
    second = api.create(ref="b")
    time.sleep(0.05)
    assert [first.status_code, second.status_code] == [429, 429]
    assert api.create(ref="c").status_code in (200, 201)  # the others took two; the bucket is ours again
    assert error_shaped(profile, 429, first.json())
    told = [e["retry_after_s"] for e in sim.requests_log() if e["status"] == 429]
    assert len(told) == 2 and all(t is not None and t > 0 for t in told)  # the profile's own retry hint
    assert sim.stats()["throttled"] == 2 and sim.stats()["creates"] == 2
    assert sim.config_dict()["others_take"] == 0  # counted down as they were taken


# ----- webhook faults ---------------------------------------------------------------------


def _verifying(profile: str, secret: str) -> Hooks:
    return Hooks(lambda headers, body: 204 if VERIFY[profile](secret, headers, body) else 401)


@pytest.mark.parametrize("profile", PROFILES)
def test_forged_copies_are_refused_by_a_verifying_receiver(launch, web, profile):
    hooks = _verifying(profile, "s3cret")
    try:
        sim = launch(profile, webhook_url=hooks.url, webhook_secret="s3cret", webhook_forged_rate=1.0)
        Api(web, sim, profile).create()
        n = EVENTS_PER_VIDEO[profile]
        deliveries = hooks.wait(2 * n)
        assert wait_for(lambda: sim.stats()["webhooks_delivered"] == n)
    finally:
        hooks.close()
    assert sorted(d.answered for d in deliveries) == [204] * n + [401] * n
    for forged in (d for d in deliveries if d.answered == 401):
        twin = [d for d in deliveries if d.body == forged.body and d.answered == 204]
        assert twin and twin[0].at >= forged.at  # the forgery comes first, with the same body
    stats = sim.stats()
    assert (stats["webhooks_forged_sent"], stats["webhooks_forged_refused"], stats["webhooks_forged_accepted"]) == (
        n,
        n,
        0,
    )


def _sixty_delivered(launch, web, hooks, **knobs):
    """60 generic videos processed at once and their webhooks delivered, with a fixed seed."""
    sim = launch(seed=11, webhook_url=hooks.url, webhook_secret="s", processing_delay_s=0, **knobs)
    api = Api(web, sim, "generic")
    for i in range(60):
        api.create(ref=f"r{i}")
    assert wait_for(lambda: sim.stats()["webhooks_delivered"] == 60)
    return sim


def test_forged_rate_holds_and_a_trusting_receiver_is_counted(launch, web, hooks):
    sim = _sixty_delivered(launch, web, hooks, webhook_forged_rate=0.3)
    stats = sim.stats()
    assert 8 <= stats["webhooks_forged_sent"] <= 32, stats
    assert stats["webhooks_forged_accepted"] == stats["webhooks_forged_sent"]  # this receiver checks nothing
    forged = [d for d in hooks.wait(60 + stats["webhooks_forged_sent"]) if not verify_generic("s", d.headers, d.body)]
    assert len(forged) == stats["webhooks_forged_sent"]


def test_duplicate_rate_holds_with_identical_deliveries(launch, web, hooks):
    sim = _sixty_delivered(launch, web, hooks, webhook_duplicate_rate=0.5)
    assert wait_for(lambda: len(hooks.deliveries) == 60 + sim.stats()["webhooks_duplicated"])
    duplicated = sim.stats()["webhooks_duplicated"]
    assert 18 <= duplicated <= 42, duplicated
    ids = [json.loads(d.body)["id"] for d in hooks.deliveries]
    assert len(set(ids)) == 60 and len(ids) - 60 == duplicated  # the same event, not a new one


@pytest.mark.parametrize("profile", ["mux", "apivideo"])
def test_duplicate_rate_one_sends_every_event_twice(launch, web, hooks, profile):
    sim = launch(profile, webhook_url=hooks.url, webhook_secret="s", webhook_duplicate_rate=1.0)
    Api(web, sim, profile).create()
    n = EVENTS_PER_VIDEO[profile]
    deliveries = hooks.wait(2 * n)
    assert wait_for(lambda: sim.stats()["webhooks_duplicated"] == n)
    bodies = [d.body for d in deliveries]
    assert all(bodies.count(b) == 2 for b in bodies)
    assert all(VERIFY[profile]("s", d.headers, d.body) for d in deliveries)


@pytest.mark.parametrize("profile", PROFILES)
def test_early_webhooks_arrive_before_the_create_is_answered(launch, web, hooks, profile):
    sim = launch(profile, webhook_url=hooks.url, webhook_secret="s", webhook_early=True, processing_delay_s=5)
    api = Api(web, sim, profile)
    r = api.create()
    answered = time.monotonic()
    n = EVENTS_PER_VIDEO[profile]
    assert len(hooks.deliveries) == n and all(d.at < answered for d in hooks.deliveries)
    assert r.status_code in (200, 201)
    # The answer was made at create time, before processing completed (api.video's has no status).
    state_at = {"generic": ("status",), "mux": ("data", "status"), "cloudflare": ("result", "status", "state")}
    if profile in state_at:
        assert dig(r.json(), state_at[profile]) in ("preparing", "downloading")
    vid = api.video_id(r)
    if profile == "apivideo":
        assert web.get(f"{sim.url}/videos/{vid}/status").json()["encoding"]["playable"] is True
    else:
        assert "ready" in json.dumps(api.get(vid).json())
    assert sim.stats()["webhooks_delivered"] == n


# ----- stats and the request log ----------------------------------------------------------


def test_request_log_names_method_and_op(launch, web):
    sim = launch()
    api = Api(web, sim, "generic")
    vid = api.video_id(api.create(ref="lib/9"))
    api.list()
    web.get(f"{sim.url}/videos", params={"metadata[migration_ref]": "lib/9"})
    api.get(vid)
    api.get("missing")
    everything = web.get(f"{sim.url}/_sim/requests", params={"op": "all"}).json()
    assert [(e["method"], e["op"], e["ref"], e["status"]) for e in everything] == [
        ("POST", "create", "lib/9", 201),
        ("GET", "list", None, 200),
        ("GET", "list", "lib/9", 200),
        ("GET", "get", "lib/9", 200),
        ("GET", "get", None, 404),
    ]
    assert all({"t", "key", "retry_after_s"} <= set(e) for e in everything)
    assert [e["op"] for e in web.get(f"{sim.url}/_sim/requests").json()] == ["create"]  # as it always was
    assert len(web.get(f"{sim.url}/_sim/requests", params={"op": "get,list"}).json()) == 4
    stats = sim.stats()
    assert (stats["lookups"], stats["gets"]) == (2, 2)


def test_duplicate_videos_do_not_count_errored_ones(launch, web):
    sim = launch("mux")
    api = Api(web, sim, "mux")
    api.create(ref="lib/1", url="https://media.example/corrupt-1.mp4")
    api.create(ref="lib/1", url="https://media.example/corrupt-1.mp4")
    assert wait_for(lambda: sim.stats()["errored_videos"] == 2)
    assert sim.stats()["duplicate_videos"] == 0
    api.create(ref="lib/1")
    assert sim.stats()["duplicate_videos"] == 0  # one good video next to two errored ones
    api.create(ref="lib/1")
    assert sim.stats()["duplicate_videos"] == 1


# ----- command line -----------------------------------------------------------------------


def test_help_documents_profiles_credentials_and_knobs():
    r = subprocess.run([sys.executable, "infra/provider_sim.py", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0
    flags = """--profile --token-id --token-secret --account-id --api-key --rate-headers --unavailable-rate
        --unavailable-retry-after-fraction --lose-rate --seed --webhook-duplicate-rate --webhook-forged-rate
        --webhook-early""".split()
    for flag in flags:
        assert flag in r.stdout, flag
    assert "mux" in r.stdout and "cloudflare" in r.stdout and "apivideo" in r.stdout


def test_cli_serves_the_chosen_profile(web):
    proc = subprocess.Popen(
        [sys.executable, "infra/provider_sim.py", "--port", "0", "--profile", "mux", "--token-id", "id"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={"SIM_TOKEN_SECRET": "from-env", "PATH": ""},
    )
    try:
        url = proc.stdout.readline().strip().rsplit(" ", 1)[1]
        body = {"inputs": [{"url": "https://media.example/a.mp4"}]}
        assert web.post(f"{url}/video/v1/assets", json=body, auth=("id", "wrong")).status_code == 401
        assert web.post(f"{url}/video/v1/assets", json=body, auth=("id", "from-env")).status_code == 201
        assert web.get(f"{url}/_sim/config").json()["profile"] == "mux"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_a_share_of_videos_finish_early_and_503s_say_one_to_n_seconds(launch, web, hooks):
    """The benchmarks' hostile provider: 10 % of webhooks before the create's answer, and 503s
    whose Retry-After is 1 to 3 s."""
    sim = launch(
        "generic",
        seed=5,
        processing_delay_s=30.0,
        webhook_early_rate=0.1,
        webhook_url=hooks.url,
        unavailable_rate=0.3,
        unavailable_retry_after_fraction=1.0,
        unavailable_retry_after_max_s=3,
    )
    told = set()
    for i in range(200):
        answer = web.post(
            f"{sim.url}/videos", json={"input": f"https://m.example/{i}.mp4", "metadata": {"migration_ref": f"r{i}"}}
        )
        if answer.status_code == 503:
            told.add(answer.headers["Retry-After"])
    assert told == {"1", "2", "3"}
    accepted = sim.stats()["videos"]
    early = len(hooks.wait(1))  # sent inline, before each early video's answer; the rest take 30 s
    assert 0.04 * accepted <= early <= 0.2 * accepted, (early, accepted)
