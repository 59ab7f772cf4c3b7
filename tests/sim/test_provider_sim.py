"""Tests for the fake video provider (infra/provider_sim.py) driven over real loopback HTTP."""

import base64
import email.utils
import hashlib
import hmac
import json
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from infra.provider_sim import ProviderSim, SimConfig, sign_standard  # noqa: E402


def _sim_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("provider-sim")]


def _wait_for(predicate, timeout=5.0, step=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


@pytest.fixture
def sim():
    # Other simulators may live in this session (the end-to-end tests keep one): only
    # the threads this one started must be gone after stop().
    before = set(_sim_threads())
    s = ProviderSim(SimConfig(port=0, processing_delay_s=0.05)).start()
    yield s
    s.stop()
    assert _wait_for(lambda: not (set(_sim_threads()) - before), timeout=3), set(_sim_threads()) - before


@pytest.fixture
def http():
    # trust_env off: a *_proxy variable in the environment must not capture loopback traffic.
    session = requests.Session()
    session.trust_env = False
    yield session
    session.close()


class Receiver:
    """A tiny webhook endpoint that records deliveries and answers with scripted status codes."""

    def __init__(self, statuses=()):
        self.statuses = list(statuses)
        self.calls: list[tuple[dict, bytes]] = []
        self.cond = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with receiver.cond:
                    receiver.calls.append(({k.lower(): v for k, v in self.headers.items()}, body))
                    status = receiver.statuses.pop(0) if receiver.statuses else 204
                    receiver.cond.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05})
        self.thread.start()

    def wait(self, n, timeout=5.0):
        with self.cond:
            self.cond.wait_for(lambda: len(self.calls) >= n, timeout)
            return list(self.calls)

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def create(http, sim, url="https://cdn.example/a.mp4", ref="ref-1", key=None, **headers):
    if key is not None:
        headers["Idempotency-Key"] = key
    body = {"input": url, "metadata": {"migration_ref": ref}}
    return http.post(f"{sim.url}/videos", json=body, headers=headers)


def configure(http, sim, **changes):
    r = http.post(f"{sim.url}/_sim/config", json=changes)
    assert r.status_code == 200, r.text
    return r.json()


def stats(http, sim):
    return http.get(f"{sim.url}/_sim/stats").json()


# ----- idempotency and duplicates ---------------------------------------------------------


def test_same_idempotency_key_returns_same_video(sim, http):
    first = create(http, sim, key="k1")
    second = create(http, sim, key="k1")
    assert first.status_code == 201 and second.status_code == 200
    assert first.json()["id"] == second.json()["id"]
    assert first.json()["id"].startswith("vid_") and first.json()["status"] == "preparing"
    s = stats(http, sim)
    assert s["duplicate_creates_prevented"] == 1
    assert s["creates"] == 1 and s["create_requests"] == 2 and s["videos"] == 1


def test_ignoring_idempotency_makes_duplicate_videos(sim, http):
    configure(http, sim, honour_idempotency=False)
    a, b = create(http, sim, key="k1"), create(http, sim, key="k1")
    assert (a.status_code, b.status_code) == (201, 201)
    assert a.json()["id"] != b.json()["id"]
    s = stats(http, sim)
    assert s["videos"] == 2 and s["duplicate_videos"] == 1 and s["duplicate_creates_prevented"] == 0


def test_conflict_on_duplicate_ref(sim, http):
    configure(http, sim, conflict_on_duplicate=True)
    assert create(http, sim, key="a").status_code == 201
    r = create(http, sim, key="b")
    assert r.status_code == 409 and r.json() == {"error": "exists"}
    assert stats(http, sim)["duplicate_creates_prevented"] == 1


# ----- rate limiting ----------------------------------------------------------------------


def _exhaust(http, sim, burst=3):
    configure(http, sim, rate=1, burst=burst)
    http.post(f"{sim.url}/_sim/reset")  # Refill to the new burst.
    codes = [create(http, sim, ref=f"r{i}").status_code for i in range(burst)]
    assert codes == [201] * burst
    return create(http, sim, ref="last")


def test_burst_then_429_with_integer_retry_after(sim, http):
    r = _exhaust(http, sim)
    assert r.status_code == 429
    assert int(r.headers["Retry-After"]) >= 1
    s = stats(http, sim)
    assert s["throttled"] == 1 and s["creates"] == 3
    last = http.get(f"{sim.url}/_sim/requests").json()[-1]
    assert last["status"] == 429 and last["ref"] == "last" and last["retry_after_s"] >= 1


def test_retry_after_date_mode(sim, http):
    configure(http, sim, retry_after_mode="date")
    before = time.time()
    r = _exhaust(http, sim)
    assert r.status_code == 429
    when = email.utils.parsedate_to_datetime(r.headers["Retry-After"])
    assert when.timestamp() > before


@pytest.mark.parametrize("mode", ["x-ratelimit", "absent"])
def test_other_retry_after_modes(sim, http, mode):
    configure(http, sim, retry_after_mode=mode)
    r = _exhaust(http, sim)
    assert r.status_code == 429 and "Retry-After" not in r.headers
    if mode == "x-ratelimit":
        assert int(r.headers["X-RateLimit-Retry-After"]) >= 1
    else:
        assert "X-RateLimit-Retry-After" not in r.headers
        assert http.get(f"{sim.url}/_sim/requests").json()[-1]["retry_after_s"] is None


# ----- auth, validation, lookups ----------------------------------------------------------


def test_token_required_when_configured(sim, http):
    configure(http, sim, token="s3cret")
    assert create(http, sim).status_code == 401
    assert create(http, sim, Authorization="Bearer wrong").status_code == 401
    assert http.get(f"{sim.url}/videos?metadata[migration_ref]=ref-1").status_code == 401
    assert create(http, sim, Authorization="Bearer s3cret").status_code == 201


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[]",
        json.dumps({"input": "ftp://x/a.mp4", "metadata": {"migration_ref": "r"}}).encode(),
        json.dumps({"input": 5, "metadata": {"migration_ref": "r"}}).encode(),
        json.dumps({"input": "https://x/a.mp4", "metadata": {"migration_ref": ""}}).encode(),
        json.dumps({"input": "https://x/a.mp4"}).encode(),
    ],
)
def test_bad_body_is_400(sim, http, body):
    r = http.post(f"{sim.url}/videos", data=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]
    assert stats(http, sim)["rejected"] == 1


def test_unsupported_source_is_400(sim, http):
    r = create(http, sim, url="https://cdn.example/unsupported/a.mkv")
    assert r.status_code == 400 and r.json() == {"error": "unsupported source"}


def test_lookup_by_migration_ref(sim, http):
    vid = create(http, sim, ref="lib/42").json()["id"]
    create(http, sim, ref="other")
    r = http.get(f"{sim.url}/videos", params={"metadata[migration_ref]": "lib/42"})
    assert [v["id"] for v in r.json()["data"]] == [vid]
    assert http.get(f"{sim.url}/videos", params={"metadata[migration_ref]": "none"}).json() == {"data": []}
    assert stats(http, sim)["lookups"] == 2


def test_unknown_path_wrong_method_and_missing_video(sim, http):
    assert http.get(f"{sim.url}/nope").status_code == 404
    assert http.get(f"{sim.url}/videos/vid_missing").status_code == 404
    assert http.delete(f"{sim.url}/videos").status_code == 405
    assert http.get(f"{sim.url}/_sim/reset").status_code == 405


def test_injected_failures(sim, http):
    configure(http, sim, fail_rate=1.0)
    r = create(http, sim)
    assert r.status_code == 500 and r.json() == {"error": "injected"}
    assert stats(http, sim)["failed_injected"] == 1


# ----- processing and webhooks ------------------------------------------------------------


def test_video_becomes_ready_with_duration(sim, http):
    configure(http, sim, processing_delay_s=0.2)
    vid = create(http, sim, url="https://cdn.example/a.mp4?duration=12.5").json()["id"]
    drifted = create(http, sim, url="https://cdn.example/b.mp4?duration=10&drift=0.25", ref="r2").json()["id"]
    assert http.get(f"{sim.url}/videos/{vid}").json()["status"] == "preparing"
    assert _wait_for(lambda: http.get(f"{sim.url}/videos/{vid}").json()["status"] == "ready", timeout=3)
    assert http.get(f"{sim.url}/videos/{vid}").json()["duration"] == 12.5
    assert _wait_for(lambda: http.get(f"{sim.url}/videos/{drifted}").json().get("duration") == 10.25, timeout=3)


def test_hashed_duration_is_stable_and_in_range(sim, http):
    from infra.provider_sim import source_duration

    d1, _ = source_duration("https://cdn.example/x.mp4")
    assert d1 == source_duration("https://cdn.example/x.mp4")[0]
    assert 5 <= d1 < 600 and round(d1, 3) == d1


def test_seed_webhooks_for_ready_and_errored(sim, http, receiver):
    configure(http, sim, webhook_url=receiver.url, webhook_secret="seed-secret")
    ok = create(http, sim, ref="ok").json()["id"]
    bad = create(http, sim, url="https://cdn.example/corrupt.mp4", ref="bad").json()["id"]
    calls = receiver.wait(2)
    events = {}
    for headers, body in calls:
        expected = hmac.new(b"seed-secret", body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(headers["x-signature"], expected)
        event = json.loads(body)
        assert event["id"].startswith("evt_")
        events[event["data"]["id"]] = event
    assert events[ok]["type"] == "video.ready" and events[ok]["data"]["status"] == "ready"
    assert events[bad]["type"] == "video.errored"
    assert events[bad]["data"]["error"] == {"type": "invalid_input", "message": "source could not be ingested"}
    assert _wait_for(lambda: stats(http, sim)["webhooks_delivered"] == 2)


def test_standard_webhook_signature(sim, http, receiver):
    key = b"0123456789abcdef0123456789abcdef"
    secret = "whsec_" + base64.b64encode(key).decode()
    configure(http, sim, webhook_url=receiver.url, webhook_scheme="standard", webhook_secret=secret)
    create(http, sim)
    [(headers, body)] = receiver.wait(1)
    msg_id, ts = headers["webhook-id"], headers["webhook-timestamp"]
    assert msg_id == json.loads(body)["id"] and abs(int(ts) - time.time()) < 10
    digest = hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    assert headers["webhook-signature"] == "v1," + base64.b64encode(digest).decode()


def test_standard_signing_matches_published_vector():
    # The Standard Webhooks reference test vector.
    sig = sign_standard(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, b'{"test": 2432232314}'
    )
    assert sig == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_webhook_retried_until_2xx(sim, http, receiver):
    receiver.statuses = [500, 500, 204]
    configure(http, sim, webhook_url=receiver.url, webhook_secret="s")
    create(http, sim)
    calls = receiver.wait(3, timeout=6)
    assert len(calls) == 3
    assert len({json.loads(body)["id"] for _, body in calls}) == 1  # Same event each time.
    assert _wait_for(lambda: stats(http, sim)["webhooks_delivered"] == 1)
    assert stats(http, sim)["webhooks_failed"] == 0


def test_no_webhooks_when_disabled(sim, http, receiver):
    configure(http, sim, webhook_url=receiver.url, webhooks_enabled=False)
    vid = create(http, sim).json()["id"]
    assert _wait_for(lambda: http.get(f"{sim.url}/videos/{vid}").json()["status"] == "ready")
    time.sleep(0.1)
    assert receiver.calls == []


# ----- config and reset -------------------------------------------------------------------


@pytest.mark.parametrize(
    "patch, needle",
    [({"nope": 1}, "nope"), ({"rate": "fast"}, "rate"), ({"burst": True}, "burst"), ({"host": "0.0.0.0"}, "host")],
)
def test_config_patch_rejects_bad_fields(sim, http, patch, needle):
    r = http.post(f"{sim.url}/_sim/config", json=patch)
    assert r.status_code == 400 and needle in r.json()["error"]
    assert http.get(f"{sim.url}/_sim/config").json()["rate"] == 20.0


def test_reset_clears_everything(sim, http):
    create(http, sim, key="k")
    assert http.post(f"{sim.url}/_sim/reset").status_code == 200
    assert stats(http, sim) == dict.fromkeys(stats(http, sim), 0)
    assert http.get(f"{sim.url}/_sim/requests").json() == []


def test_sim_config_validates_in_python():
    with pytest.raises(ValueError, match="loopback"):
        SimConfig(host="10.0.0.1")
    cfg = SimConfig()
    with pytest.raises(ValueError, match="fail_rate"):
        cfg.patch({"rate": 5, "fail_rate": 2})
    assert cfg.rate == 20.0  # A rejected patch changes nothing.


# ----- command line -----------------------------------------------------------------------


def test_help_mentions_rate():
    r = subprocess.run([sys.executable, "infra/provider_sim.py", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0 and "--rate" in r.stdout


def test_cli_serves_and_stops_on_sigterm(http):
    proc = subprocess.Popen(
        [sys.executable, "infra/provider_sim.py", "--port", "0", "--rate", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("provider-sim listening on http://127.0.0.1:")
        url = line.rsplit(" ", 1)[1]
        assert http.get(f"{url}/_sim/stats").json()["creates"] == 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
