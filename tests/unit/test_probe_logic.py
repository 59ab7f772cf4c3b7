"""The probe's pure parts: what ffprobe's output means, which URLs may be probed, what is redacted."""

from __future__ import annotations

import json
import signal

import pytest
from migrator_cli.guard import GuardEvent
from migrator_cli.probe import (
    FORMAT_WHITELIST,
    MAX_REDIRECTS,
    PROTOCOL_WHITELIST,
    ProbeResult,
    classify_probe,
    ffprobe_argv,
    ffprobe_env,
    guarded,
    probeable,
    redact_url,
)


def ffprobe_json(*streams: dict, duration: str | None = "12.480000") -> str:
    """What `ffprobe -print_format json -show_entries ...` prints for a readable source."""
    doc: dict = {"programs": [], "streams": list(streams), "format": {}}
    if duration is not None:
        doc["format"]["duration"] = duration
    return json.dumps(doc, indent=4)


def stream(kind: str, duration: str | None = None, attached_pic: int = 0) -> dict:
    s: dict = {"codec_type": kind, "disposition": {"attached_pic": attached_pic}}
    if duration is not None:
        s["duration"] = duration
    return s


VIDEO, AUDIO = stream("video", "12.480000"), stream("audio", "12.470000")


# --- classify_probe -------------------------------------------------------------------------


def test_video_and_audio_is_ok_with_the_format_duration():
    assert classify_probe(0, ffprobe_json(VIDEO, AUDIO), "") == ProbeResult(True, duration_s=12.48)


def test_audio_only_has_no_video_stream():
    result = classify_probe(0, ffprobe_json(AUDIO), "")
    assert result == ProbeResult(False, reason="probe: no video stream (found: audio)")


def test_cover_art_is_not_a_video_stream():
    result = classify_probe(0, ffprobe_json(AUDIO, stream("video", "12.4", attached_pic=1)), "")
    assert result == ProbeResult(False, reason="probe: no video stream (found: audio, cover image)")


def test_no_streams_at_all():
    assert classify_probe(0, ffprobe_json(), "").reason == "probe: no video stream (found: no streams)"


def test_duration_falls_back_to_the_video_streams():
    result = classify_probe(0, ffprobe_json(stream("video", "7.5"), AUDIO, duration=None), "")
    assert result == ProbeResult(True, duration_s=7.5)


@pytest.mark.parametrize("duration", [None, "N/A", "0.000000", "-3", "nan", "inf", "1e400", ""])
def test_no_usable_duration_anywhere(duration):
    result = classify_probe(0, ffprobe_json(stream("video", duration), duration=duration), "")
    assert result == ProbeResult(False, reason="probe: duration unknown")


def test_an_image_is_a_video_stream_without_a_duration():
    # A JPEG served as a "video": ffprobe sees one video stream and no duration.
    assert classify_probe(0, ffprobe_json(stream("video"), duration=None), "").reason == "probe: duration unknown"


@pytest.mark.parametrize("stdout", ["", "garbage", "[1, 2]", "null", '{"streams": '])
def test_output_that_is_not_ffprobes_json_is_not_blamed_on_the_source(stdout):
    result = classify_probe(0, stdout, "")
    assert result == ProbeResult(False, reason="probe: ffprobe output is not JSON", retryable=True)


def test_odd_but_valid_json_is_read_defensively():
    weird = json.dumps({"streams": [1, "x", {"codec_type": "video", "disposition": "no"}], "format": []})
    assert classify_probe(0, weird, "") == ProbeResult(False, reason="probe: duration unknown")


def test_nonzero_exit_gives_the_first_stderr_line_without_url_or_heap_address():
    stderr = (
        "[mov,mp4,m4a,3gp,3g2,mj2 @ 0x55b82545fc00] moov atom not found\n"
        "https://bucket.s3.amazonaws.com/a.mp4?X-Amz-Signature=abc: Invalid data found when processing input\n"
    )
    result = classify_probe(1, "{\n\n}\n", stderr)
    assert result == ProbeResult(
        False, reason="probe: ffprobe could not read the source: [mov,mp4,m4a,3gp,3g2,mj2] moov atom not found"
    )


def test_the_source_url_prefix_is_dropped_so_reasons_group_well():
    stderr = "https://cdn.example.com/v/1.mp4?X-Amz-Signature=abc: Server returned 404 Not Found\n"
    assert (
        classify_probe(1, "", stderr).reason
        == "probe: ffprobe could not read the source: Server returned 404 Not Found"
    )


def test_a_presigned_query_inside_a_message_is_redacted():
    stderr = "[http @ 0x1] Redirect to https://u:pw@cdn.example.com/x.mp4?X-Amz-Signature=s3cr3t: failed\n"
    result = classify_probe(1, "", stderr)
    assert (
        result.reason
        == "probe: ffprobe could not read the source: [http] Redirect to https://cdn.example.com/x.mp4?…: failed"
    )
    assert "s3cr3t" not in result.reason and "pw" not in result.reason


def test_stderr_detail_is_one_printable_line_of_bounded_length():
    stderr = "\n\n  \x1b[31mbad\tthing\x07 " + "x" * 500 + "\nsecond line\n"
    reason = classify_probe(1, "", stderr).reason
    assert "\n" not in reason and "\x1b" not in reason and "\x07" not in reason and "second" not in reason
    assert reason.startswith("probe: ffprobe could not read the source: [31mbad thing ")
    assert len(reason) <= len("probe: ffprobe could not read the source: ") + 200


def test_nonzero_exit_without_a_message():
    assert classify_probe(1, "", "").reason == "probe: ffprobe could not read the source: exit status 1, no message"


@pytest.mark.parametrize(
    ("stderr", "retryable"),
    [
        ("http://h/a.mp4: Server returned 404 Not Found", False),
        ("[mov,mp4 @ 0x1] moov atom not found", False),
        ("http://h/a.mp4: Invalid data found when processing input", False),
        ("http://h/a.mp4: Server returned 403 Forbidden (access denied)", True),
        ("http://h/a.mp4: Server returned 401 Unauthorized (authorization failed)", True),
        ("http://h/a.mp4: Server returned 5XX Server Error reply", True),
        ("http://h/a.mp4: Server returned 4XX Client Error, but not one of 40{0,1,3,4}", True),
        ("[tcp @ 0x1] Connection to tcp://h:80 failed: Connection refused", True),
        ("http://h/a.mp4: Connection timed out", True),
        ("[tcp @ 0x1] Failed to resolve hostname h: Name or service not known", True),
        # What Debian's ffprobe (GnuTLS) prints for a certificate from an unknown CA, a wrong
        # name, and a handshake cut short.
        ("[tls @ 0x1] Peer certificate failed verification", True),
        ("[tls @ 0x1] The certificate's owner does not match hostname h", True),
        ("[tls @ 0x1] Error in the pull function.", True),
        ("[tls @ 0x1] A TLS fatal alert has been received.", True),
        ("[tls @ 0x1] The TLS connection was non-properly terminated.", True),
        # A transfer cut short, and a connection closed before any answer.
        ("[http @ 0x1] Stream ends prematurely at 16384, should be 32587\n[mov @ 0x2] moov atom not found", True),
        ("http://h/a.mp4?sig=1: End of file", True),
        # Words in the URL itself are not about the transport.
        ("https://h/tls/certificate-timeout.mp4: Invalid data found when processing input", False),
        # "tls" in a list of protocols is not a TLS failure: this source will never be read.
        ("[http @ 0x55d0c1a2b3c0] Protocol 'file' not on whitelist 'http,https,tcp,tls,httpproxy'!", False),
        ("[tls @ 0x1] Unsupported certificate type", False),
    ],
)
def test_which_failures_are_the_paths_fault(stderr, retryable):
    result = classify_probe(1, "", stderr + "\n")
    assert not result.ok
    assert result.retryable is retryable


def test_a_format_not_on_the_whitelist_is_rejected_with_a_clear_reason():
    stderr = f"[hls @ 0x562dbc77d300] Format not on whitelist '{FORMAT_WHITELIST}'\nhttp://h/a.m3u8: Invalid argument\n"
    assert classify_probe(1, "", stderr) == ProbeResult(
        False, reason="probe: format hls is not probed (only video files: no playlists or formats that open other URLs)"
    )


def test_timeout_says_how_long():
    result = classify_probe(-9, "", "", timed_out=True, timeout_s=30)
    assert result == ProbeResult(False, reason="probe: timed out after 30 s", retryable=True)
    assert classify_probe(-9, "", "", True).reason == "probe: timed out"


def test_killed_from_outside_is_retryable_but_a_crash_is_the_files():
    assert classify_probe(-signal.SIGKILL, "", "").retryable
    crash = classify_probe(-signal.SIGSEGV, "", "")
    assert crash == ProbeResult(False, reason=f"probe: ffprobe was killed by signal {int(signal.SIGSEGV)}")


# --- guarded: what the guard saw ----------------------------------------------------------------

READ = ProbeResult(True, duration_s=2.0)
FAILED = ProbeResult(
    False, reason="probe: ffprobe could not read the source: Server returned 403 Forbidden", retryable=True
)


@pytest.mark.parametrize(
    ("event", "shown"),
    [
        (GuardEvent("refused", "169.254.169.254", 80, addresses=("169.254.169.254",)), "169.254.169.254"),
        (GuardEvent("refused", "0x7f000001", 80, addresses=("127.0.0.1",)), "0x7f000001 = 127.0.0.1"),
        (
            GuardEvent("refused", "cdn.example.com", 443, addresses=("10.0.0.5", "fd00::5")),
            "cdn.example.com = 10.0.0.5, fd00::5",
        ),
        (GuardEvent("refused", "::1", 443, addresses=("::1",)), "::1"),
    ],
)
def test_a_refused_target_rejects_the_source_and_names_what_was_refused(event, shown):
    expected = ProbeResult(False, reason=f"probe: source resolves to a private or local address ({shown}); refused")
    # Whatever ffprobe made of it: a 403 from the guard, or a source read before a refused hop.
    assert guarded(FAILED, event, None) == expected
    assert guarded(READ, event, GuardEvent("unreachable", "h", 80, detail="Connection refused")) == expected


def test_a_refused_hosts_name_is_one_bounded_line():
    # The name comes from the source's URL or a redirect: anything may be in it.
    event = GuardEvent("refused", "a\x1b[31m" + "b" * 300, 80, addresses=("10.0.0.1",))
    reason = guarded(FAILED, event, None).reason
    assert reason.startswith("probe: source resolves to a private or local address (a [31mbbb")
    assert reason.endswith("…); refused") and "\x1b" not in reason and len(reason) < 200


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (
            GuardEvent("unresolved", "cdn.example.com", 443, detail="Name or service not known"),
            "probe: could not resolve cdn.example.com: Name or service not known",
        ),
        (
            GuardEvent("unreachable", "203.0.113.9", 8080, detail="Connection refused"),
            "probe: could not connect to 203.0.113.9:8080: Connection refused",
        ),
        (
            GuardEvent("unreachable", "2001:db8::1", 443, detail="Network is unreachable"),
            "probe: could not connect to [2001:db8::1]:443: Network is unreachable",
        ),
        (
            GuardEvent("cut", "", 0, detail="connection limit (8) reached"),
            "probe: the guard cut the connection: connection limit (8) reached",
        ),
        (
            GuardEvent("cut", "cdn.example.com", 443, detail="nothing passed for 60 s"),
            "probe: the guard cut the connection to cdn.example.com:443: nothing passed for 60 s",
        ),
    ],
)
def test_a_target_the_guard_could_not_resolve_or_reach_leaves_the_source_pending(event, reason):
    assert guarded(FAILED, None, event) == ProbeResult(False, reason=reason, retryable=True)
    assert guarded(READ, None, event) == READ  # a failed side connection did not stop the read
    assert guarded(FAILED, None, None) == FAILED  # and with nothing seen, ffprobe's words stand


# --- probeable --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["https://cdn.example.com/a.mp4", "http://127.0.0.1:8080/a.mp4?sig=1", "HTTPS://CDN.example.com/a.mp4"],
)
def test_http_and_https_may_be_probed(url):
    assert probeable(url) is None


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("file:///etc/passwd", "scheme 'file' is never probed (only http, https)"),
        ("concat:https://a/1.mp4|https://a/2.mp4", "scheme 'concat' is never probed (only http, https)"),
        ("data:video/mp4;base64,AAAA", "scheme 'data' is never probed (only http, https)"),
        ("ftp://example.com/a.mp4", "scheme 'ftp' is never probed (only http, https)"),
        ("subfile,,start,0,end,0,,:/etc/passwd", "scheme 'none' is never probed (only http, https)"),
        ("hls+http://example.com/a.m3u8", "scheme 'hls+http' is never probed (only http, https)"),
        ("/etc/passwd", "scheme 'none' is never probed (only http, https)"),
        ("-f lavfi", "source_url contains whitespace or control characters"),
        ("s3://bucket/a.mp4", "s3 source_url must be presigned before probing"),
        ("https:///a.mp4", "source_url has no host"),
        ("https://a/b\nc", "source_url contains whitespace or control characters"),
        ("", "source_url is missing or not a string"),
        (None, "source_url is missing or not a string"),
        ("https://a/" + "x" * 20000, "source_url is over 16384 characters"),
    ],
)
def test_everything_else_is_refused(url, why):
    assert probeable(url) == why


# --- redaction and argv -----------------------------------------------------------------------


def test_redact_url_drops_query_userinfo_and_fragment():
    url = "https://AKIA:secret@bucket.s3.amazonaws.com:443/k/a.mp4?X-Amz-Credential=AKIA%2F&X-Amz-Signature=ff#t=1"
    assert redact_url(url) == "https://bucket.s3.amazonaws.com:443/k/a.mp4?…"
    assert redact_url("https://cdn.example.com/a.mp4") == "https://cdn.example.com/a.mp4"


def test_argv_is_a_list_with_the_safety_options_and_the_url_last():
    argv = ffprobe_argv("https://h/a.mp4?sig=1", ffprobe="/usr/bin/ffprobe", timeout_s=30)
    assert argv[0] == "/usr/bin/ffprobe"
    assert argv[-2:] == ["-i", "https://h/a.mp4?sig=1"]

    def option(name):
        return argv[argv.index(name) + 1]

    assert option("-protocol_whitelist") == PROTOCOL_WHITELIST
    assert set(PROTOCOL_WHITELIST.split(",")) == {"http", "https", "tcp", "tls", "httpproxy"}
    assert option("-v") == "error"
    # Microseconds, twice the deadline: never reached. ffprobe does not say a read timed out
    # mid-file (its demuxer blames the file), so only the deadline may end a stall.
    assert option("-rw_timeout") == "60000000"
    assert option("-tls_verify") == "1"
    assert option("-print_format") == "json"
    assert "-ca_file" not in argv
    assert ffprobe_argv("https://h/a", ca_file="/tmp/ca.pem")[-8:-6] == ["-ca_file", "/tmp/ca.pem"]


def test_argv_caps_redirects_and_allows_only_demuxers_that_open_no_other_urls():
    argv = ffprobe_argv("https://h/a.mp4")
    assert argv[argv.index("-max_redirects") + 1] == str(MAX_REDIRECTS) and 1 <= MAX_REDIRECTS <= 5
    formats = set(argv[argv.index("-format_whitelist") + 1].split(","))
    assert {"mov", "matroska", "avi", "mpegts", "mpeg", "flv", "asf", "mxf", "ogg"} <= formats
    opens_urls = {"hls", "dash", "concat", "imf", "image2", "webm_dash_manifest", "sdp", "rtsp", "ffmetadata", "tee"}
    assert not formats & opens_urls


def test_ffprobe_env_routes_every_scheme_through_the_guard_and_nothing_around_it():
    environ = {
        "PATH": "/usr/bin",
        "http_proxy": "http://corp:3128",
        "HTTPS_PROXY": "http://corp:3128",
        "ALL_PROXY": "socks5://corp:1080",
        "no_proxy": "*",
        "NO_PROXY": "169.254.169.254",
    }
    assert ffprobe_env("http://127.0.0.1:5000", environ) == {
        "PATH": "/usr/bin",
        "http_proxy": "http://127.0.0.1:5000",
        "https_proxy": "http://127.0.0.1:5000",
    }
    assert environ["no_proxy"] == "*"  # the caller's dict is left alone
