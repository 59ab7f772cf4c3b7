"""Connections pinned to an address that was checked: the one guarded fetch the tracks worker and the CLI share.

A URL from outside names a host; resolving it once, checking every address it resolves to, then
letting http.client resolve it again would leave a DNS-rebinding gap. So the connection here goes
to the checked address itself, while the Host header, SNI and the certificate's check stay on the
name. `raw_sock` is the TCP socket under TLS, which `deadline.Watchdog` shuts to cut a server that
trickles. `first_refused` is the all-or-nothing rule: a name with one public and one private answer
could be steered, so one refused address refuses the name.
"""

from __future__ import annotations

import http.client
import socket
import ssl
from collections.abc import Iterable

from .addresses import IPAddress, address_refusal


class PinnedHTTPConnection(http.client.HTTPConnection):
    """Plain HTTP to `host` (its Host header), connected to the checked address `ip`."""

    def __init__(self, host: str, port: int, ip: IPAddress, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self._ip = ip
        self.raw_sock: socket.socket | None = None

    def connect(self) -> None:
        self.sock = self.raw_sock = socket.create_connection((str(self._ip), self.port), self.timeout)


class PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to `host`, connected to the checked address `ip`; TLS is verified for `host` (SNI, certificate)."""

    def __init__(self, host: str, port: int, ip: IPAddress, timeout: float, context: ssl.SSLContext | None = None):
        self._tls = context or ssl.create_default_context()
        super().__init__(host, port, timeout=timeout, context=self._tls)
        self._ip = ip
        self.raw_sock: socket.socket | None = None

    def connect(self) -> None:
        self.raw_sock = socket.create_connection((str(self._ip), self.port), self.timeout)
        self.sock = self._tls.wrap_socket(self.raw_sock, server_hostname=self.host)


def pinned_connection(
    scheme: str, host: str, port: int, ip: IPAddress, timeout: float, context: ssl.SSLContext | None = None
) -> http.client.HTTPConnection:
    """An https connection for "https", else plain http, to `host` at `ip`."""
    if scheme == "https":
        return PinnedHTTPSConnection(host, port, ip, timeout, context)
    return PinnedHTTPConnection(host, port, ip, timeout)


def first_refused(addresses: Iterable[IPAddress]) -> tuple[IPAddress, str] | None:
    """The first address the rules refuse, with why (`addresses.address_refusal`); None when all may be used."""
    for ip in addresses:
        why = address_refusal(ip)
        if why:
            return ip, why
    return None
