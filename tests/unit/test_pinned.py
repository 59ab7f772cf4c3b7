"""The one guarded connection the tracks worker and `migrator verify` share: pinned to the checked address."""

from __future__ import annotations

import ipaddress
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from migrator.pinned import PinnedHTTPConnection, PinnedHTTPSConnection, first_refused, pinned_connection

ip = ipaddress.ip_address


@pytest.mark.parametrize(
    "addresses, refused",
    [
        ([ip("93.184.216.34")], None),
        ([ip("93.184.216.34"), ip("2606:2800:220:1::1")], None),
        ([ip("93.184.216.34"), ip("169.254.169.254")], "169.254.169.254"),  # one private answer refuses the name
        ([ip("10.0.0.7"), ip("127.0.0.1")], "10.0.0.7"),  # the first refused is named
        ([ip("::ffff:127.0.0.1")], str(ip("::ffff:127.0.0.1"))),  # an IPv4 loopback inside IPv6
        ([], None),
    ],
)
def test_one_refused_address_refuses_the_name(addresses, refused):
    found = first_refused(addresses)
    assert (str(found[0]) if found else None) == refused
    if found:
        assert found[1]  # with why, in words


def test_the_connection_goes_to_the_checked_address_and_names_the_host():
    seen = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            seen["host"] = self.headers["Host"]
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        # A name that resolves nowhere: only the pinned address can have been connected to.
        conn = pinned_connection("http", "media.example.invalid", port, ip("127.0.0.1"), 5)
        assert isinstance(conn, PinnedHTTPConnection)
        conn.request("GET", "/")
        assert conn.getresponse().status == 204
        assert seen["host"] == f"media.example.invalid:{port}"
        assert conn.raw_sock is not None  # what the watchdog shuts
        conn.close()
    finally:
        server.shutdown()


def test_https_is_pinned_too_and_verifies_the_name():
    conn = pinned_connection("https", "media.example.com", 443, ip("93.184.216.34"), 5)
    assert isinstance(conn, PinnedHTTPSConnection)
    assert conn._context.check_hostname and conn.host == "media.example.com"
