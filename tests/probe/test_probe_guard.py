"""probe_url behind its guard, with real ffprobe: what a source may reach, and where it may lead ffprobe.

The media servers listen on 127.0.0.1, which the guard refuses by default: tests that need a
source to be read either pass `allow_private` (the CLI's --allow-private-addresses) or a
policy that allows exactly the media servers' address, so that only where a redirect leads
is refused.
"""

from __future__ import annotations

import functools
import ipaddress
import shutil
import socket
import stat
import threading
from urllib.parse import quote, urlsplit

import pytest
from migrator_cli import guard
from migrator_cli.probe import MAX_REDIRECTS, ProbeResult, probe_url

REFUSED = "probe: source resolves to a private or local address ({}); refused"
MEDIA_SERVERS = ipaddress.ip_address("127.0.0.1")


def only_the_media_servers(ip) -> bool:
    return ip == MEDIA_SERVERS


def ca_of(server) -> str | None:
    return str(server.cert) if server.cert else None


@pytest.mark.parametrize("which", ["server", "tls_server"])
def test_a_source_on_127_0_0_1_is_refused_without_the_flag(which, request):
    source = request.getfixturevalue(which)
    result = probe_url(source.url("video.mp4?sig=s3cr3t"), timeout_s=20, ca_file=ca_of(source))
    assert result == ProbeResult(False, reason=REFUSED.format("127.0.0.1"))
    # The same source with the flag is read: the refusal was the guard's, not the server's.
    assert probe_url(source.url("video.mp4"), timeout_s=20, ca_file=ca_of(source), allow_private=True).ok


@pytest.mark.parametrize("host", ["localhost", "0x7f000001", "2130706433", "0177.0.0.1", "127.1"])
def test_loopback_in_any_spelling_is_judged_by_what_it_resolves_to(server, host):
    result = probe_url(server.url("video.mp4").replace("127.0.0.1", host), timeout_s=20)
    assert not result.ok and not result.retryable
    assert result.reason.startswith(f"probe: source resolves to a private or local address ({host} = ")
    assert "127.0.0.1" in result.reason


def test_a_public_name_whose_dns_answer_is_private_is_refused(server, monkeypatch):
    real = guard.resolve_host

    def resolve(host, port):
        return [ipaddress.ip_address("127.0.0.1")] if host == "cdn.example.com" else real(host, port)

    monkeypatch.setattr(guard, "resolve_host", resolve)
    result = probe_url(server.url("video.mp4").replace("127.0.0.1", "cdn.example.com"), timeout_s=20)
    assert result == ProbeResult(False, reason=REFUSED.format("cdn.example.com = 127.0.0.1"))


@pytest.mark.parametrize("which", ["server", "tls_server"])
def test_redirect_to_the_metadata_address_is_refused(which, request):
    # Over https the redirect comes inside the TLS tunnel, where the guard cannot read it:
    # it is ffprobe's next connection that the guard sees and refuses.
    source = request.getfixturevalue(which)
    metadata = "http://169.254.169.254/latest/meta-data/iam/security-credentials/"
    url = source.url(f"redirect?to={quote(metadata, safe='')}")
    result = probe_url(url, timeout_s=20, ca_file=ca_of(source), allowed=only_the_media_servers)
    assert result == ProbeResult(False, reason=REFUSED.format("169.254.169.254"))


def test_redirect_to_another_loopback_port_is_refused(server):
    # 0x7f000002 is 127.0.0.2: refused once resolved, whatever the spelling.
    port = urlsplit(server.base).port
    url = server.url(f"redirect?to={quote(f'http://0x7f000002:{port}/video.mp4', safe='')}")
    result = probe_url(url, timeout_s=20, allowed=only_the_media_servers)
    assert result == ProbeResult(False, reason=REFUSED.format("0x7f000002 = 127.0.0.2"))
    # The policy lets the first hop through: the same redirect to the server itself is read.
    back = server.url(f"redirect?to={quote(server.url('video.mp4'), safe='')}")
    assert probe_url(back, timeout_s=20, allowed=only_the_media_servers).ok


def test_a_redirect_chain_longer_than_max_redirects_is_not_followed(server):
    assert probe_url(server.url(f"hops/{MAX_REDIRECTS}/video.mp4"), timeout_s=20, allow_private=True).ok
    before = len(server.paths)
    result = probe_url(server.url(f"hops/{MAX_REDIRECTS + 1}/video.mp4"), timeout_s=20, allow_private=True)
    assert result == ProbeResult(False, reason="probe: ffprobe could not read the source: Input/output error")
    # The first request and MAX_REDIRECTS redirects followed; the last one was not.
    assert server.paths[before:] == [f"/hops/{n}/video.mp4" for n in range(MAX_REDIRECTS + 1, 0, -1)]


def test_an_hls_playlist_is_refused_and_its_segments_never_fetched(server):
    result = probe_url(server.url("playlist.m3u8"), timeout_s=20, allow_private=True)
    assert result == ProbeResult(
        False, reason="probe: format hls is not probed (only video files: no playlists or formats that open other URLs)"
    )
    assert "/playlist.m3u8" in server.paths
    assert not [path for path in server.paths if path.endswith(".ts")]


def test_a_name_that_does_not_resolve_is_left_for_later(server, monkeypatch):
    def resolve(host, port):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(guard, "resolve_host", resolve)
    result = probe_url("https://media.example.com/a.mp4?sig=s3cr3t", timeout_s=20)
    assert result == ProbeResult(
        False, reason="probe: could not resolve media.example.com: Name or service not known", retryable=True
    )


def test_the_operators_own_proxy_settings_cannot_route_around_the_guard(server, monkeypatch):
    monkeypatch.setenv("no_proxy", "*")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:1")
    assert probe_url(server.url("video.mp4"), timeout_s=20) == ProbeResult(False, reason=REFUSED.format("127.0.0.1"))


def test_every_probe_runs_behind_its_own_guard_which_stops_with_it(server, tmp_path):
    log = tmp_path / "proxy.log"
    wrapper = tmp_path / "ffprobe"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$http_proxy" >> "{log}"\nexec "{shutil.which("ffprobe")}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    for _ in range(2):
        assert probe_url(server.url("video.mp4"), ffprobe=str(wrapper), timeout_s=20, allow_private=True).ok
    proxies = log.read_text().split()
    assert len(proxies) == 2 and len(set(proxies)) == 2
    for proxy in proxies:
        assert proxy.startswith("http://127.0.0.1:")
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", urlsplit(proxy).port), timeout=2).close()
    assert not [t for t in threading.enumerate() if t.name.startswith("probe-guard")]


def test_a_connection_the_guard_turns_away_leaves_the_source_pending(server, monkeypatch):
    # Over its bound the guard used to close the connection unanswered: ffprobe said "End of
    # file", which reads like the source's answer, and a good source was rejected.
    from migrator_cli import probe

    monkeypatch.setattr(probe, "Guard", functools.partial(guard.Guard, max_connections=0))
    result = probe_url(server.url("video.mp4?sig=s3cr3t"), timeout_s=20, allow_private=True)
    assert result == ProbeResult(
        False, reason="probe: the guard cut the connection: connection limit (0) reached", retryable=True
    )
