"""The tracks worker's fetch guard: what it refuses before any lookup, after the lookup, on a redirect,
and what it bounds (size, time), against real local servers; 127.0.0.1 is reached only as an explicit
test origin, and refused on every other port."""

from __future__ import annotations

import ipaddress
import socket
import time

import pytest
from migrator.trackfetch import (
    Fetched,
    FetchFailed,
    FetchPolicy,
    fetch,
    origin_of,
    parse_test_origins,
    url_problem,
)

from tests.track_files import VTT, FileServer, body, declared_huge, range_answer, redirect


@pytest.fixture
def server():
    with FileServer() as files:
        yield files


def allowing(server, **extra) -> FetchPolicy:
    return FetchPolicy(test_origins=frozenset({server.origin}), **extra)


# --- before any lookup --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://captions.example.com/a.vtt", "only https"),
        ("ftp://captions.example.com/a.vtt", "only https"),
        ("s3://bucket/a.vtt", "only https"),
        ("file:///etc/passwd", "only https"),
        ("https://user:secret@captions.example.com/a.vtt", "credentials"),
        ("https://127.0.0.1/a.vtt", "127.0.0.1 is loopback"),
        ("https://169.254.169.254/latest/meta-data/", "169.254.169.254 is link-local"),
        ("https://10.1.2.3/a.vtt", "10.1.2.3 is private"),
        ("https://192.168.0.10:8443/a.vtt", "private"),
        ("https://[::1]/a.vtt", "loopback"),
        ("https://[fd00:ec2::254]/", "private"),
        ("https://:443/a.vtt", "no host"),
        ("https://captions.example.com:99999/a.vtt", "does not parse"),
    ],
)
def test_urls_refused_before_any_lookup_say_why(url, reason):
    problem = url_problem(url, FetchPolicy())
    assert problem is not None and reason in problem


def test_a_public_https_url_passes_the_static_check():
    assert url_problem("https://captions.example.com/en.vtt?sig=1", FetchPolicy()) is None
    assert url_problem("https://93.184.216.34/en.vtt", FetchPolicy()) is None


def test_test_origins_are_exact_and_default_ports_are_written_out():
    origins = parse_test_origins(" http://127.0.0.1:8123 , HTTPS://Tracks.Test ,nonsense")
    assert origins == {"http://127.0.0.1:8123", "https://tracks.test:443"}
    assert origin_of("http://127.0.0.1:8123/x.vtt") in origins
    assert origin_of("http://127.0.0.1:8124/x.vtt") not in origins


# --- after the lookup -------------------------------------------------------------------------------


def public_resolver(mapping: dict):
    def resolve(host, port):
        if host not in mapping:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [ipaddress.ip_address(a) for a in mapping[host]]

    return resolve


@pytest.mark.parametrize(
    ("answers", "why"),
    [
        (["127.0.0.1"], "127.0.0.1, loopback"),
        (["169.254.169.254"], "169.254.169.254, link-local"),
        (["10.0.0.7"], "10.0.0.7, private"),
        (["93.184.216.34", "192.168.1.20"], "192.168.1.20, private"),  # one bad answer spoils the name
        (["::ffff:127.0.0.1"], "loopback"),
    ],
)
def test_a_name_is_refused_unless_every_address_it_resolves_to_is_public(answers, why):
    got = fetch(
        "https://captions.example.com/a.vtt", FetchPolicy(), resolve=public_resolver({"captions.example.com": answers})
    )
    assert isinstance(got, FetchFailed) and not got.retryable and why in got.reason


def test_a_name_that_does_not_resolve_fails_and_may_be_tried_again():
    got = fetch("https://nowhere.invalid/a.vtt", FetchPolicy(), resolve=public_resolver({}))
    assert isinstance(got, FetchFailed) and got.retryable and "does not resolve" in got.reason


def test_the_real_resolver_refuses_localhost_whatever_its_spelling():
    for url in ("https://localhost/a.vtt", "https://127.1/a.vtt", "https://0x7f000001:8443/a.vtt"):
        got = fetch(url, FetchPolicy())
        assert isinstance(got, FetchFailed) and "loopback" in got.reason, (url, got)


# --- against a local server --------------------------------------------------------------------------


def test_loopback_is_refused_by_the_real_guard_without_a_test_origin(server):
    server.route("/en.vtt", body(VTT))
    got = fetch(server.url("/en.vtt"), FetchPolicy())
    assert isinstance(got, FetchFailed) and "only https" in got.reason
    assert server.seen == []  # nothing was sent


def test_a_test_origin_is_fetched_and_no_other_port_of_it(server):
    server.route("/en.vtt", body(VTT))
    got = fetch(server.url("/en.vtt"), allowing(server))
    assert got == Fetched(VTT, server.url("/en.vtt"))
    other = server.url("/en.vtt").replace(str(server.port), str(server.port + 1))
    refused = fetch(other, allowing(server))
    assert isinstance(refused, FetchFailed) and "only https" in refused.reason


def test_the_connection_goes_to_the_checked_address_never_the_name_again(server):
    # tracks.test resolves (here) to the server; real DNS knows no such name, so a second lookup would fail.
    server.route("/en.vtt", body(VTT))
    port = server.port
    policy = FetchPolicy(test_origins=frozenset({f"http://tracks.test:{port}"}))
    got = fetch(f"http://tracks.test:{port}/en.vtt", policy, resolve=public_resolver({"tracks.test": ["127.0.0.1"]}))
    assert isinstance(got, Fetched) and got.body == VTT
    assert server.seen == [("/en.vtt", f"tracks.test:{port}")]  # the name travels in Host only


@pytest.mark.parametrize(
    ("location", "why"),
    [
        ("http://127.0.0.1:1/x.vtt", "only https"),  # another port of the same host
        ("https://169.254.169.254/latest/meta-data/iam/", "link-local"),
        ("https://10.0.0.1/x.vtt", "private"),
        ("file:///etc/passwd", "only https"),
    ],
)
def test_every_redirect_is_checked_again(server, location, why):
    server.route("/en.vtt", redirect(location))
    got = fetch(server.url("/en.vtt"), allowing(server))
    assert isinstance(got, FetchFailed) and why in got.reason


def test_a_redirect_within_the_rules_is_followed_and_too_many_are_refused(server):
    server.route("/a", redirect("/b", 301))
    server.route("/b", redirect("/c", 307))
    server.route("/c", body(VTT))
    assert fetch(server.url("/a"), allowing(server)) == Fetched(VTT, server.url("/c"))
    server.route("/loop", redirect("/loop"))
    got = fetch(server.url("/loop"), allowing(server))
    assert isinstance(got, FetchFailed) and "more than 3 redirects" in got.reason


def test_a_declared_size_over_the_limit_is_refused_before_the_body_is_read(server):
    server.route("/big.vtt", declared_huge())
    got = fetch(server.url("/big.vtt"), allowing(server))
    assert isinstance(got, FetchFailed) and not got.retryable and "52,428,800 bytes" in got.reason


def test_a_body_without_a_length_stops_past_the_limit(server):
    def chunked(handler):
        handler.send_response(200)
        handler.send_header("Connection", "close")
        handler.end_headers()
        try:
            for _ in range(100):
                handler.wfile.write(b"y" * 65536)
        except OSError:
            pass

    server.route("/stream.vtt", chunked)
    got = fetch(server.url("/stream.vtt"), allowing(server, max_bytes=256 * 1024))
    assert isinstance(got, FetchFailed) and "over the 262,144 bytes allowed" in got.reason


def test_a_server_that_trickles_is_cut_at_the_deadline(server):
    def trickle(handler):
        handler.send_response(200)
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        try:
            for _ in range(1000):
                handler.wfile.write(b"z")
                handler.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass

    server.route("/slow.vtt", trickle)
    started = time.monotonic()
    got = fetch(server.url("/slow.vtt"), allowing(server, timeout_s=1.0))
    assert time.monotonic() - started < 2.5
    assert isinstance(got, FetchFailed) and got.retryable and "more than 1 s" in got.reason


def _trickle_head(handler, head: bytes):
    """The answer's status line and headers a byte every 0.1 s: each read within any socket timeout."""
    try:
        for byte in head:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(0.1)
    except OSError:
        pass


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\n" * 1 + b"Content-Length: 5\r\n\r\nWEBVT",  # the status line itself trickles
        b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"p" * 60 + b"\r\nContent-Length: 5\r\n\r\nWEBVT",  # headers
    ],
    ids=["status-line", "headers"],
)
def test_the_deadline_holds_while_the_status_line_and_headers_trickle(server, head):
    server.route("/slow-head.vtt", lambda handler: _trickle_head(handler, head))
    started = time.monotonic()
    got = fetch(server.url("/slow-head.vtt"), allowing(server, timeout_s=1.0))
    took = time.monotonic() - started
    assert took < 1.8, f"held {took:.1f} s past a 1 s deadline"
    assert isinstance(got, FetchFailed) and got.retryable and "more than 1 s" in got.reason


@pytest.mark.parametrize(("status", "retryable"), [(404, False), (403, False), (410, False), (503, True), (429, True)])
def test_an_error_answer_says_its_status_and_whether_a_retry_may_help(server, status, retryable):
    server.route("/x.vtt", body(b"nope", status))
    got = fetch(server.url("/x.vtt"), allowing(server))
    assert got == FetchFailed(f"the track's server answered HTTP {status}", retryable)


def test_a_closed_port_is_unreachable_and_may_be_tried_again():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    policy = FetchPolicy(test_origins=frozenset({f"http://127.0.0.1:{port}"}))
    got = fetch(f"http://127.0.0.1:{port}/x.vtt", policy)
    assert isinstance(got, FetchFailed) and got.retryable and "refused the connection" in got.reason


# --- a range (the archive's parts) ---------------------------------------------------------------


def ranged(content: bytes, honour: bool = True):
    """A file server answering `Range: bytes=a-b` with a 206 of those bytes (or ignoring it: a 200 of all)."""

    def answer(handler):
        if honour and handler.headers.get("Range", "").startswith("bytes="):
            range_answer(handler, content)
            return
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(content)))
        handler.end_headers()
        handler.wfile.write(content)

    return answer


def test_a_range_is_asked_for_and_answered_as_a_range_with_the_files_size(server):
    content = bytes(range(256)) * 4
    server.route("/master.mp4", ranged(content))
    got = fetch(server.url("/master.mp4"), allowing(server, max_bytes=100), byte_range=(100, 199))
    assert isinstance(got, Fetched) and got.status == 206 and got.body == content[100:200]
    assert got.headers["Content-Range"] == "bytes 100-199/1024" and got.headers["Content-Type"] == "video/mp4"


def test_a_server_that_ignores_the_range_answers_200_and_is_still_held_to_the_cap(server):
    content = b"v" * 1024
    server.route("/whole.mp4", ranged(content, honour=False))
    whole = fetch(server.url("/whole.mp4"), allowing(server), byte_range=(0, 99))
    assert isinstance(whole, Fetched) and whole.status == 200 and whole.body == content  # the caller sees it
    capped = fetch(server.url("/whole.mp4"), allowing(server, max_bytes=100), byte_range=(0, 99))
    assert isinstance(capped, FetchFailed) and "over the 100" in capped.reason


def test_a_206_without_a_range_asked_is_not_a_file(server):
    server.route("/partial", body(b"abc", 206))
    refused = fetch(server.url("/partial"), allowing(server))
    assert isinstance(refused, FetchFailed) and "HTTP 206" in refused.reason
