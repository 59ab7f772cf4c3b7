"""Which addresses a request made for an untrusted URL may reach: globally routable ones only.

A URL from an inventory is untrusted, and so is every name it leads to: the cloud's metadata
service, localhost and the private network the stack runs in must never be reached on its
behalf. `address_refusal` says why an address is refused (or None when it is global);
`resolve_host` lists every address a name resolves to, so a caller can refuse the name unless
all of them pass and then connect to an address it checked (no DNS-rebinding gap). The probe's
guard proxy (cli) and the tracks worker's fetch (functions) share these rules.
"""

from __future__ import annotations

import ipaddress
import socket

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: not global, yet not "private" to Python 3.12.1
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses an IPv6 address carries and routes to: mapped, 6to4, Teredo, NAT64."""
    inner = [ip.ipv4_mapped, ip.sixtofour, *(ip.teredo or ())]
    if ip in _NAT64:
        inner.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return [v4 for v4 in inner if v4 is not None]


def address_refusal(ip: IPAddress) -> str | None:
    """Why a connection to `ip` is refused ("loopback", "private", ...), or None when it is global."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            # ::ffff:a.b.c.d is a.b.c.d on the wire: judge that (3.12.1 calls every mapped one private).
            return address_refusal(ip.ipv4_mapped)
        for inner in _embedded_ipv4(ip):
            if why := address_refusal(inner):
                return why
        if ip.is_site_local:
            return "site-local"
    checks = (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("shared address space", ip in _SHARED),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
        # Python's is_global reads IANA's special-purpose registries: whatever is left over.
        ("not globally routable", not ip.is_global),
    )
    return next((why for why, hit in checks if hit), None)


def is_public(ip: IPAddress) -> bool:
    """The default policy: only globally routable addresses."""
    return address_refusal(ip) is None


def literal_address(host: str) -> IPAddress | None:
    """`host` as an IP address when it is written as one ("10.0.0.1", "[::1]"), else None."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def resolve_host(host: str, port: int) -> list[IPAddress]:
    """Every address `host` resolves to, in getaddrinfo's order (which also reads 0x7f000001, 127.1...)."""
    found: list[IPAddress] = []
    for *_, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if ip not in found:
            found.append(ip)
    return found
