"""The guard's address policy and request parsing (pure), and the proxy itself over raw sockets."""

from __future__ import annotations

import ipaddress
import socket
import socketserver
import threading
import time

import pytest
from migrator_cli.guard import MAX_HEAD, Guard, GuardEvent, Request, address_refusal, parse_request, resolve_host

ip = ipaddress.ip_address


# --- the address policy -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "refusal"),
    [
        ("93.184.216.34", None),
        ("8.8.8.8", None),
        ("172.32.0.1", None),  # just past 172.16/12
        ("100.128.0.1", None),  # just past 100.64/10
        ("2606:4700:4700::1111", None),
        ("::ffff:8.8.8.8", None),  # mapped: judged as the IPv4 address it is
        ("2002:808:808::1", None),  # 6to4 of 8.8.8.8
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("10.0.0.5", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),  # the cloud metadata service
        ("100.64.0.1", "shared address space"),
        ("100.127.255.255", "shared address space"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("192.0.2.1", "private"),  # documentation
        ("198.18.0.1", "private"),  # benchmarking
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fc00::1", "private"),
        ("fd00:ec2::254", "private"),  # the metadata service over IPv6
        ("fec0::1", "site-local"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::ffff:10.0.0.1", "private"),
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("2002:a9fe:a9fe::", "link-local"),  # 6to4 of 169.254.169.254
        ("64:ff9b::a9fe:a9fe", "link-local"),  # NAT64 of 169.254.169.254
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"),  # Teredo, client 127.0.0.1
        ("2001:db8::1", "private"),  # documentation
    ],
)
def test_only_globally_routable_addresses_are_allowed(address, refusal):
    assert address_refusal(ip(address)) == refusal


@pytest.mark.parametrize("host", ["127.0.0.1", "0x7f000001", "2130706433", "0177.0.0.1", "127.1", "017700000001"])
def test_odd_spellings_of_loopback_are_judged_by_what_they_resolve_to(host):
    # No string matching: getaddrinfo normalises, the policy judges the address.
    assert resolve_host(host, 80) == [ip("127.0.0.1")]
    assert address_refusal(resolve_host(host, 80)[0]) == "loopback"


# --- parsing requests ------------------------------------------------------------------------


def test_connect_is_a_tunnel_to_host_and_port():
    head = b"CONNECT example.com:443 HTTP/1.1\r\nHost: 127.0.0.1:5000\r\nConnection: close\r\n\r\n"
    assert parse_request(head) == Request("example.com", 443, tunnel=True)
    assert parse_request(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n") == Request("::1", 8443, tunnel=True)


def test_an_absolute_form_get_is_rewritten_to_origin_form_and_one_request_per_connection():
    head = (
        b"GET http://cdn.example.com:8080/v/a.mp4?sig=1 HTTP/1.1\r\nUser-Agent: Lavf/59.27.100\r\n"
        b"Range: bytes=0-\r\nConnection: keep-alive\r\nProxy-Authorization: Basic eA==\r\n"
        b"Host: cdn.example.com:8080\r\n\r\n"
    )
    assert parse_request(head) == Request(
        "cdn.example.com",
        8080,
        tunnel=False,
        head=b"GET /v/a.mp4?sig=1 HTTP/1.1\r\nUser-Agent: Lavf/59.27.100\r\nRange: bytes=0-\r\n"
        b"Host: cdn.example.com:8080\r\nConnection: close\r\n\r\n",
    )
    assert parse_request(b"GET http://0x7f000001/ HTTP/1.1\r\n\r\n").port == 80


@pytest.mark.parametrize(
    ("head", "why"),
    [
        (b"GET /a.mp4 HTTP/1.1\r\n\r\n", "not an absolute http URL"),
        (b"GET https://h/a.mp4 HTTP/1.1\r\n\r\n", "not an absolute http URL"),
        (b"GET file:///etc/passwd HTTP/1.1\r\n\r\n", "not an absolute http URL"),
        (b"POST http://h/ HTTP/1.1\r\n\r\n", "method POST not served"),
        (b"CONNECT example.com HTTP/1.1\r\n\r\n", "no host or port"),
        (b"CONNECT example.com:99999 HTTP/1.1\r\n\r\n", "bad port"),
        (b"GET http://h/ SPDY/3\r\n\r\n", "not HTTP/1.x"),
        (b"\xff\xfe\r\n\r\n", "malformed request line"),
        (b"GET  http://h/ HTTP/1.1\r\n\r\n", "malformed request line"),
    ],
)
def test_anything_else_is_a_bad_request(head, why):
    assert parse_request(head) == why


# --- the proxy over raw sockets ----------------------------------------------------------------


class _Answer(socketserver.BaseRequestHandler):
    def handle(self):
        self.server.received.append(self.request.recv(65536))
        self.request.sendall(self.server.reply)


class Upstream(socketserver.ThreadingTCPServer):
    """A server on 127.0.0.1 that answers each connection's first bytes with a fixed reply."""

    daemon_threads = True

    def __init__(self, reply: bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"):
        self.received: list[bytes] = []
        self.reply = reply
        super().__init__(("127.0.0.1", 0), _Answer)
        self.port = self.server_address[1]
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()


@pytest.fixture
def upstream():
    running = Upstream()
    yield running
    running.shutdown()
    running.server_close()


def ask(guard: Guard, head: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", int(guard.url.rsplit(":", 1)[1])), timeout=5) as sock:
        sock.sendall(head)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_refused_target_gets_a_403_and_is_recorded_and_never_connected(upstream):
    with Guard(timeout_s=5) as guard:
        reply = ask(guard, f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
        assert reply.startswith(b"HTTP/1.1 403 ")
        assert guard.events == [GuardEvent("refused", "127.0.0.1", upstream.port, addresses=("127.0.0.1",))]
    assert upstream.received == []


def test_a_name_with_one_public_and_one_private_answer_is_refused(upstream):
    def resolve(host, port):
        return [ip("93.184.216.34"), ip("127.0.0.1")]

    with Guard(resolve=resolve, timeout_s=5) as guard:
        assert ask(guard, b"GET http://mixed.example/ HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403 ")
        assert guard.first("refused").addresses == ("127.0.0.1",)


def test_the_connection_goes_to_the_address_checked_never_the_name_again(upstream):
    # A rebinding DNS: the first answer passes the policy, any later one would not. The name
    # itself resolves nowhere, so only the checked address can have been connected to.
    answers = [[ip("127.0.0.1")]]

    def resolve(host, port):
        return answers.pop(0) if answers else [ip("10.0.0.1")]

    with Guard(allowed=lambda a: a == ip("127.0.0.1"), resolve=resolve, timeout_s=5) as guard:
        reply = ask(guard, f"GET http://rebind.invalid:{upstream.port}/a.mp4?x=1 HTTP/1.1\r\n\r\n".encode())
        assert reply.endswith(b"\r\n\r\nok") and guard.events == []
    assert upstream.received == [b"GET /a.mp4?x=1 HTTP/1.1\r\nConnection: close\r\n\r\n"]


def test_a_connect_tunnel_pipes_bytes_both_ways(upstream):
    with Guard(allowed=lambda a: True, timeout_s=5) as guard:
        reply = ask(guard, f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\nhello".encode())
    assert reply.startswith(b"HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK")
    assert upstream.received == [b"hello"]


def test_unresolvable_and_unreachable_targets_are_recorded_as_such():
    def resolve(host, port):
        if host == "nowhere.invalid":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [ip("127.0.0.1")]

    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    with Guard(allowed=lambda a: True, resolve=resolve, timeout_s=5) as guard:
        assert ask(guard, b"CONNECT nowhere.invalid:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 502 ")
        assert ask(guard, f"CONNECT closed.example:{port} HTTP/1.1\r\n\r\n".encode()).startswith(b"HTTP/1.1 502 ")
    assert guard.events == [
        GuardEvent("unresolved", "nowhere.invalid", 443, detail="Name or service not known"),
        GuardEvent("unreachable", "closed.example", port, detail="Connection refused"),
    ]


def test_an_oversized_head_is_a_bad_request_and_reaches_nothing(upstream):
    head = f"GET http://127.0.0.1:{upstream.port}/ HTTP/1.1\r\nX: {'a' * MAX_HEAD}\r\n\r\n".encode()
    with Guard(allowed=lambda a: True, timeout_s=5) as guard:
        assert ask(guard, head).startswith(b"HTTP/1.1 400 ")
    assert upstream.received == []
    assert guard.events == []  # the request's fault, not the path's


# What the guard cuts itself is recorded, and answered with a status that is not the source's:
# a bare close or a 400 would reach ffprobe as "End of file" or "Server returned 400", words
# that reject a source.


def test_connections_over_the_bound_get_a_503_and_are_recorded():
    with Guard(timeout_s=5, max_connections=1) as guard:
        port = int(guard.url.rsplit(":", 1)[1])
        first = socket.create_connection(("127.0.0.1", port), timeout=5)  # holds the only slot
        time.sleep(0.2)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as second:
            assert second.recv(100).startswith(b"HTTP/1.1 503 ")
        first.close()
    assert guard.events == [GuardEvent("cut", "", 0, detail="connection limit (1) reached")]


def test_a_request_that_never_comes_gets_a_408_and_is_recorded():
    with Guard(timeout_s=0.3) as guard:
        with socket.create_connection(("127.0.0.1", int(guard.url.rsplit(":", 1)[1])), timeout=5) as idle:
            assert idle.recv(100).startswith(b"HTTP/1.1 408 ")
    assert guard.events == [GuardEvent("cut", "", 0, detail="no request within 0.3 s")]


def test_a_pipe_idle_past_the_timeout_is_cut_and_recorded(upstream):
    with Guard(allowed=lambda a: True, timeout_s=0.3) as guard:
        # A tunnel through which nothing passes: the upstream waits for bytes that never come.
        reply = ask(guard, f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
    assert reply == b"HTTP/1.1 200 Connection established\r\n\r\n"
    assert guard.events == [GuardEvent("cut", "127.0.0.1", upstream.port, detail="nothing passed for 0.3 s")]


def test_closing_the_guard_ends_its_listener_connections_and_threads(upstream):
    guard = Guard(allowed=lambda a: True, timeout_s=60).__enter__()
    port = int(guard.url.rsplit(":", 1)[1])
    idle = socket.create_connection(("127.0.0.1", port), timeout=5)  # never sends its head
    tunnel = socket.create_connection(("127.0.0.1", port), timeout=5)
    tunnel.sendall(f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
    assert tunnel.recv(100).startswith(b"HTTP/1.1 200")
    started = time.monotonic()
    guard.close()
    assert time.monotonic() - started < 2
    assert not [t for t in threading.enumerate() if t.name.startswith("probe-guard")]
    assert idle.recv(100) == b""
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2)
    idle.close()
    tunnel.close()


@pytest.fixture
def unanswered_port():
    """A port whose connects hang: its one-slot backlog is full, and nothing accepts."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    filler = socket.create_connection(("127.0.0.1", port), timeout=5)
    yield port
    filler.close()
    listener.close()


def test_a_connect_that_hangs_ends_at_the_timeout_as_unreachable(unanswered_port):
    with Guard(allowed=lambda a: True, timeout_s=0.5) as guard:
        reply = ask(guard, f"CONNECT 127.0.0.1:{unanswered_port} HTTP/1.1\r\n\r\n".encode())
    assert reply.startswith(b"HTTP/1.1 502 ")
    assert guard.events == [GuardEvent("unreachable", "127.0.0.1", unanswered_port, detail="Connection timed out")]


def test_closing_the_guard_ends_a_connect_that_hangs(unanswered_port):
    guard = Guard(allowed=lambda a: True, timeout_s=60).__enter__()
    client = socket.create_connection(("127.0.0.1", int(guard.url.rsplit(":", 1)[1])), timeout=5)
    client.sendall(f"CONNECT 127.0.0.1:{unanswered_port} HTTP/1.1\r\n\r\n".encode())
    time.sleep(0.3)  # the guard is now waiting on the connect
    started = time.monotonic()
    guard.close()
    assert time.monotonic() - started < 2
    assert not [t for t in threading.enumerate() if t.name.startswith("probe-guard")]
    assert guard.events == []  # closing is not the target's failure
    client.close()
