"""What goes on the wire for any asset id, whatever text it holds, and the transport's failures."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
import tracemalloc

import pytest
import requests
from migrator.fate import OutcomeKind
from migrator.providers import AssetRef, build
from migrator.providers.http import MAX_BODY_BYTES, HttpTransport, TransportError
from migrator.providers.keys import idempotency_key

AWKWARD_IDS = ["library/日本語.mp4", "café", " leading space", "tab-free but ünïcödé", "emoji 🎬", "a" * 255]


@pytest.mark.parametrize("asset_id", AWKWARD_IDS)
def test_the_idempotency_key_is_header_safe_for_any_id(asset_id):
    key = idempotency_key(asset_id)
    assert key.isascii() and key.isprintable() and " " not in key and len(key) <= 64
    # requests accepts it as a header value (it refused the raw ' leading space' id).
    prepared = requests.Request("POST", "https://p.example/videos", headers={"Idempotency-Key": key}).prepare()
    assert prepared.headers["Idempotency-Key"] == key


def test_the_key_is_stable_per_id_and_generation_and_differs_otherwise():
    assert idempotency_key("café") == idempotency_key("café")
    assert idempotency_key("café") != idempotency_key("cafe")  # distinct ids never share a key
    assert idempotency_key("café", 1) != idempotency_key("café", 0)


class _Recorder(requests.Session):
    def __init__(self):
        super().__init__()
        self.sent: list[requests.PreparedRequest] = []

    def send(self, request, **kwargs):
        self.sent.append(request)
        response = requests.Response()
        response.status_code, response._content = 201, b'{"id": "vid_1"}'
        return response


@pytest.mark.parametrize("asset_id", AWKWARD_IDS)
def test_create_sends_the_exact_id_in_the_body_and_the_hash_in_the_header(asset_id):
    session = _Recorder()
    generic = build("generic", "https://p.example", lambda: "t", session=session)
    assert generic.create(AssetRef(asset_id), "https://h/a.mp4").kind is OutcomeKind.CREATED
    (request,) = session.sent
    assert json.loads(request.body)["metadata"]["migration_ref"] == asset_id
    assert request.headers["Idempotency-Key"] == idempotency_key(asset_id)


def test_a_request_that_cannot_be_encoded_is_a_transport_error_not_a_crash():
    class Refusing(requests.Session):
        def send(self, request, **kwargs):
            raise UnicodeEncodeError("latin-1", "日", 0, 1, "ordinal not in range(256)")

    transport = HttpTransport("https://p.example", lambda: {}, session=Refusing())
    with pytest.raises(TransportError, match="could not be encoded"):
        transport.send("GET", "/videos/vid_1")


def test_no_answer_is_a_transient_outcome_the_create_may_have_happened():
    class Down(requests.Session):
        def send(self, request, **kwargs):
            raise requests.ConnectTimeout("no route")

    generic = build("generic", "https://p.example", lambda: "t", session=Down())
    outcome = generic.create(AssetRef("a"), "https://h/a.mp4")
    assert (outcome.kind, outcome.error) == (OutcomeKind.TRANSIENT, "timeout")


# --- the transport against a local server: an answer's size and pace are untrusted too -----------


@contextlib.contextmanager
def local_server(respond, keep_alive: bool = False):
    """A server on 127.0.0.1 whose handler writes, raw, whatever `respond(wfile, sent)` writes;
    `sent` counts the body bytes it got out before the client went away. With `keep_alive` it speaks
    HTTP/1.1 and keeps the connection for the next request (the answers must state their length);
    otherwise it closes each one, which races a client that reuses it."""
    sent = [0]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

        def do_GET(self):
            with contextlib.suppress(OSError):  # the client closing on us is the point
                respond(self.wfile, sent)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", sent
    finally:
        server.shutdown()
        server.server_close()


def trickle(data: bytes, gap_s: float, step: int = 1):
    def respond(wfile, sent):
        for i in range(0, len(data), step):
            wfile.write(data[i : i + step])
            wfile.flush()
            sent[0] += step
            time.sleep(gap_s)

    return respond


def head_then_trickle(head: bytes, body: bytes, gap_s: float):
    def respond(wfile, sent):
        wfile.write(head)
        wfile.flush()
        trickle(body, gap_s)(wfile, sent)

    return respond


@pytest.mark.slow  # seconds of real time or work: `make unit` and CI run it, `make quick` does not
def test_a_trickled_body_is_cut_off_at_the_requests_overall_deadline():
    # One byte every 0.1 s never trips a 1 s read timeout (it is per socket read): 6 s of body.
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n"
    with local_server(head_then_trickle(head, b"[" + b" " * 58 + b"]", 0.1)) as (url, _):
        transport = HttpTransport(url, lambda: {}, connect_timeout_s=0.5, read_timeout_s=1.0)
        started = time.monotonic()
        with pytest.raises(TransportError, match="timeout"):
            transport.send("GET", "/videos")
        assert time.monotonic() - started < 1.5 + 1.0  # the 1.5 s budget, and a little for the machine


@pytest.mark.slow  # seconds of real time or work: `make unit` and CI run it, `make quick` does not
def test_trickled_headers_are_cut_off_at_the_requests_overall_deadline():
    lines = [b"HTTP/1.1 200 OK\r\n", *(b"X-Pad-%d: y\r\n" % i for i in range(20)), b"Content-Length: 0\r\n\r\n"]
    with local_server(trickle(b"".join(lines), 0.2, 12)) as (url, _):
        transport = HttpTransport(url, lambda: {}, connect_timeout_s=0.5, read_timeout_s=1.0)
        started = time.monotonic()
        with pytest.raises(TransportError, match="timeout"):
            transport.send("GET", "/videos")
        assert time.monotonic() - started < 1.5 + 1.0


@pytest.mark.slow  # seconds of real time or work: `make unit` and CI run it, `make quick` does not
def test_a_trickled_body_without_a_length_is_not_taken_as_complete_when_cut():
    # HTTP/1.0 style: the body ends when the connection closes, so the watchdog's cut looks like an end.
    head = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n"
    with local_server(head_then_trickle(head, b'{"data": [' + b" " * 30 + b"]}", 0.1)) as (url, _):
        transport = HttpTransport(url, lambda: {}, connect_timeout_s=0.5, read_timeout_s=1.0)
        with pytest.raises(TransportError, match="timeout"):
            transport.send("GET", "/videos")


HUGE = 32 * 1024 * 1024


def huge_body(wfile, sent):
    wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % HUGE)
    block = b" " * 65536
    while sent[0] < HUGE:
        wfile.write(block)
        sent[0] += len(block)


def test_a_huge_answer_is_read_only_up_to_the_cap_in_memory_and_on_the_wire():
    with local_server(huge_body) as (url, sent):
        transport = HttpTransport(url, lambda: {}, connect_timeout_s=2.0, read_timeout_s=10.0)
        tracemalloc.start()
        try:
            answer = transport.send("GET", "/videos")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        # The cap, its decoded text and a read chunk; the old transport held all 32 MiB (and a copy).
        assert peak < 4 * MAX_BODY_BYTES, f"peak {peak / 2**20:.1f} MiB"
        assert (answer.status, answer.truncated, answer.body) == (200, True, None)
        assert len(answer.text) == MAX_BODY_BYTES
        time.sleep(0.2)
        assert sent[0] < HUGE // 2  # the connection was closed, not drained


def test_a_cut_answer_leaves_no_half_read_connection_behind():
    answers = iter([huge_body, None])

    def respond(wfile, sent):
        if next(answers) is huge_body:
            return huge_body(wfile, sent)
        wfile.write(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"id": "v"}')

    with local_server(respond) as (url, _):
        transport = HttpTransport(url, lambda: {}, connect_timeout_s=2.0, read_timeout_s=10.0)
        assert transport.send("GET", "/a").truncated
        answer = transport.send("GET", "/b")
        assert (answer.status, answer.body, answer.truncated) == (200, {"id": "v"}, False)


def test_an_answer_within_the_cap_is_read_whole_and_the_connection_reused():
    body = json.dumps({"data": ["x" * 1000] * 500}).encode()  # 0.5 MB: several chunks
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    with local_server(lambda w, s: w.write(head + body), keep_alive=True) as (url, _):
        transport = HttpTransport(url, lambda: {})
        for _ in range(2):
            answer = transport.send("GET", "/videos")
            assert (answer.truncated, len(answer.body["data"])) == (False, 500)
