"""`migrator verify`: the strict HLS reader, the guarded fetch, and each planted mismatch named with its
numbers; signed playback not fetched; an unanswered fetch left for the next run, which resumes from
the checkpoint."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from migrator_cli.fetch import Fetched, FetchError, guarded_get
from migrator_cli.hls import PlaylistError, parse_master, parse_media
from migrator_cli.verify import Checker, Checkpoint, Finding, Pace, Tolerance, Verdict, is_final, run_verify

MASTER = """#EXTM3U
#EXT-X-VERSION:3
#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.640028,mp4a.40.2"
360p.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=5000000,RESOLUTION=1920x1080,CODECS="avc1.640028,mp4a.40.2"
1080p.m3u8
"""


def media(*durations: float, end: bool = True) -> str:
    lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:6", "#EXT-X-PLAYLIST-TYPE:VOD"]
    for n, d in enumerate(durations):
        lines += [f"#EXTINF:{d:.3f},", f"s{n}.ts"]
    return "\n".join(lines + (["#EXT-X-ENDLIST"] if end else [])) + "\n"


def test_the_master_lists_variants_with_their_resolution():
    master = parse_master(MASTER)
    assert [(v.uri, v.bandwidth, v.width, v.height) for v in master.variants] == [
        ("360p.m3u8", 800000, 640, 360),
        ("1080p.m3u8", 5000000, 1920, 1080),
    ]
    assert master.top().uri == "1080p.m3u8"
    assert parse_media(media(6, 6, 3.5)).duration_s == 15.5


@pytest.mark.parametrize(
    "text, why",
    [
        ("#EXT-X-VERSION:3\n", "EXTM3U"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:RESOLUTION=1x1\na.m3u8\n", "BANDWIDTH"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=big\na.m3u8\n", "RESOLUTION"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n", "no URI"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,BANDWIDTH=2\na\n", "twice"),
        ("#EXTM3U\n", "no variant"),
    ],
)
def test_a_malformed_master_is_refused(text, why):
    with pytest.raises(PlaylistError, match=why):
        parse_master(text)


@pytest.mark.parametrize(
    "text, why",
    [
        (media(6, end=False), "ENDLIST"),
        (media(9), "longer than"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:abc,\na.ts\n#EXT-X-ENDLIST\n", "not a number"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-ENDLIST\n", "no segments"),
        ("#EXTM3U\n#EXTINF:1,\na.ts\n#EXT-X-ENDLIST\n", "TARGETDURATION"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:6\na.ts\n#EXT-X-ENDLIST\n", "no EXTINF"),
    ],
)
def test_a_malformed_media_playlist_is_refused(text, why):
    with pytest.raises(PlaylistError, match=why):
        parse_media(text)


HLS = "https://cdn.example/v/{n}/master.m3u8"


def item(n: int, **fields) -> dict:
    playback = {"policy": "public", "playback_id": f"p{n}", "hls": HLS.format(n=n)}
    return {
        "asset_id": f"lib/{n}",
        "state": "ready",
        "source_url": f"https://m.example/{n}.mp4",
        "duration_s": Decimal("15.5"),
        "provider_duration_s": Decimal("15.5"),
        "metadata": {"width": 1920, "height": 1080},
        "playback_info": playback,
        **fields,
    }


class FakeOrigin:
    """Answers each URL from a table; counts what was asked."""

    def __init__(self, table: dict):
        self.table = table
        self.asked: list[str] = []

    def __call__(self, url: str) -> Fetched:
        self.asked.append(url)
        answer = self.table.get(url, (404, ""))
        if isinstance(answer, Exception):
            raise answer
        status, text = answer
        return Fetched(status, text.encode(), url)


def origin_for(n: int, master: str = MASTER, playlist: str | None = None) -> dict:
    base = HLS.format(n=n)
    return {base: (200, master), base.replace("master.m3u8", "1080p.m3u8"): (200, playlist or media(6, 6, 3.5))}


def check_all(items, table, tmp_path=None, checkpoint=None):
    origin = FakeOrigin(table)
    check = Checker("cloudflare", Tolerance(1.0), Pace(0), origin, {})
    found = []
    summary = run_verify(items, check, checkpoint=checkpoint or Checkpoint(None), on_finding=found.append)
    return summary, found, origin


def test_a_clean_migration_passes():
    summary, found, origin = check_all([item(1), item(2)], {**origin_for(1), **origin_for(2)})
    assert (summary.passed, summary.failed, summary.ok) == (2, 0, True) and found == []
    assert len(origin.asked) == 4  # master and top variant, per asset


def test_each_planted_mismatch_is_named_with_its_numbers():
    low = MASTER.replace("1920x1080", "1280x720")
    table = {
        **origin_for(1),  # wrong duration: the provider says 20.5 s, the source 15.5 s
        **origin_for(3, master=low),  # lower resolution
        **origin_for(4, playlist=media(6, 6, 6, 2)),  # the manifest lasts 20 s
    }  # lib/2: no manifest at all
    items = [item(1, provider_duration_s=Decimal("20.5")), item(2), item(3), item(4)]
    summary, found, _ = check_all(items, table)
    by_id = {(f["id"], f["kind"]): f for f in found}
    assert by_id["lib/1", "duration"]["detail"].startswith("duration 20.500 s at the target, 15.500 s at the source")
    assert by_id["lib/1", "manifest_duration"]["manifest_s"] == 15.5  # and the manifest disagrees with the provider
    assert "HTTP 404" in by_id["lib/2", "manifest_missing"]["detail"]
    assert by_id["lib/3", "resolution"]["detail"] == "resolution 1280x720 at the target, 1920x1080 at the source"
    assert by_id["lib/4", "manifest_duration"]["detail"].startswith("the manifest lasts 20.000 s (4 segments)")
    assert (summary.failed, summary.passed, summary.ok) == (4, 0, False)
    assert summary.by_kind == {"duration": 1, "manifest_duration": 2, "manifest_missing": 1, "resolution": 1}


def test_tolerances_are_honoured():
    near = item(1, provider_duration_s=Decimal("16.2"))
    summary, found, _ = check_all([near], origin_for(1, playlist=media(6, 6, 4.2)))
    assert summary.passed == 1, found


def test_signed_playback_is_not_fetched_and_no_playback_fails():
    signed = item(1, playback_info={"policy": "signed", "playback_id": "p1"})
    bare = item(2, playback_info=None)
    summary, found, origin = check_all([signed, bare], {})
    assert (summary.signed, summary.failed) == (1, 1) and origin.asked == []
    assert found[0]["kind"] == "no_playback"


def test_a_signed_video_is_fetched_with_the_token_the_stack_makes_and_every_later_request_carries_its_query():
    """Review 4, item 11: verify skipped every private video and its summary said it had checked them all."""
    from migrator.providers import SignedPlayback

    signed = item(1, playback_info={"policy": "signed", "playback_id": "p1"})
    base = HLS.format(n=1)
    token_url = base + "?token=t0k"
    table = {token_url: (200, MASTER), base.replace("master.m3u8", "1080p.m3u8") + "?avh=s3ss": (200, media(6, 6, 3.5))}
    asked_to_sign = []

    def signer(playback):
        asked_to_sign.append(playback["playback_id"])
        return SignedPlayback(token_url, (("avh", "s3ss"),))

    origin = FakeOrigin(table)
    check = Checker("cloudflare", Tolerance(1.0), Pace(0), origin, {}, signer)
    summary = run_verify([signed], check, checkpoint=Checkpoint(None))
    assert asked_to_sign == ["p1"] and origin.asked == list(table)
    assert (summary.passed, summary.signed, summary.ok) == (1, 0, True)
    assert summary.result() == "OK: every ready asset checked (1) and matched"


def test_where_the_provider_cannot_sign_the_summary_counts_exactly_what_it_checked():
    from migrator.providers import SigningUnavailable

    def signer(playback):
        raise SigningUnavailable("the generic provider gives no way to sign a playback URL")

    items = [item(1), item(2, playback_info={"policy": "signed", "playback_id": "p2"})]
    origin = FakeOrigin(origin_for(1))
    summary = run_verify(
        items, Checker("generic", Tolerance(1.0), Pace(0), origin, {}, signer), checkpoint=Checkpoint(None)
    )
    assert (summary.passed, summary.signed, summary.ok) == (1, 1, True)
    lines = summary.lines()
    assert lines[0].startswith("verified        1 of 2 ready assets checked")
    assert "signed          1 not fetched: the generic provider gives no way to sign a playback URL" in lines
    assert lines[-1] == (
        "result          OK: 1 of 2 checked and matched; 1 signed not fetched"
        " (the generic provider gives no way to sign a playback URL)"
    )
    assert "every" not in lines[-1]


def test_an_unanswered_fetch_is_left_for_the_next_run_which_resumes(tmp_path):
    path = str(tmp_path / "verify.sqlite")
    table = {**origin_for(1), HLS.format(n=2): FetchError("unreachable", "timed out")}
    summary, found, _ = check_all([item(1), item(2)], table, checkpoint=Checkpoint(path))
    assert (summary.passed, summary.unchecked, summary.ok) == (1, 1, False)
    assert found == [{"type": "unchecked", "id": "lib/2", "reason": "the manifest: unreachable: timed out"}]
    # The next run asks only for lib/2, and its summary covers both runs.
    summary, found, origin = check_all(
        [item(1), item(2)], {**origin_for(1), **origin_for(2)}, checkpoint=Checkpoint(path)
    )
    assert origin.asked == [HLS.format(n=2), HLS.format(n=2).replace("master", "1080p")]
    assert (summary.passed, summary.skipped_done, summary.unchecked, summary.ok) == (2, 1, 0, True)


def test_an_asset_migrated_again_is_checked_again_and_a_failure_is_not_kept_for_good(tmp_path):
    """Review 4, item 9: a failed verdict stayed in the checkpoint, so an asset re-migrated (a new video)
    stayed failed however it arrived the second time."""
    path = str(tmp_path / "verify.sqlite")
    low = MASTER.replace("1920x1080", "1280x720")
    first = check_all(
        [item(1, remote_id="v1"), item(2, remote_id="v2")],
        {**origin_for(1, master=low), **origin_for(2)},
        checkpoint=Checkpoint(path),
    )[0]
    assert (first.passed, first.failed) == (1, 1)
    # lib/1 is migrated again: a new provider video, now at full resolution; lib/2 is the same video as before.
    summary, found, origin = check_all(
        [item(1, remote_id="v1-again"), item(2, remote_id="v2")],
        {**origin_for(1), **origin_for(2)},
        checkpoint=Checkpoint(path),
    )
    assert HLS.format(n=1) in origin.asked and HLS.format(n=2) not in origin.asked
    assert (summary.passed, summary.failed, summary.skipped_done, summary.ok) == (2, 0, 1, True) and found == []
    # A video that changes under the same asset (its remote_id) is checked again, even after passing.
    again = check_all([item(2, remote_id="v2-new")], origin_for(2), checkpoint=Checkpoint(path))[2]
    assert HLS.format(n=2) in again.asked


@pytest.mark.parametrize(
    ("status", "final"),
    [
        ("passed", True),  # fetched and matched: stands for the same video
        ("failed", False),  # what failed may have been mended
        ("signed", False),  # not fetched for want of a token or a signing key, which a later run may have
        ("unchecked", False),  # no answer (never kept, but never final either)
    ],
)
def test_only_a_passed_verdict_is_final_in_the_checkpoint(status, final):
    assert is_final(status) is final


def test_a_signed_video_not_fetched_for_want_of_a_key_is_fetched_by_the_rerun_that_has_one(tmp_path):
    """Review 47, item 4: a "signed, not fetched" verdict stayed in the checkpoint, so after the operator gave
    the signing key the rerun skipped those videos and said OK without fetching them."""
    from migrator.providers import SignedPlayback, SigningUnavailable

    path = str(tmp_path / "verify.sqlite")
    signed = item(1, remote_id="v1", playback_info={"policy": "signed", "playback_id": "p1"})
    token_url = HLS.format(n=1) + "?token=t0k"
    table = {token_url: (200, MASTER), HLS.format(n=1).replace("master.m3u8", "1080p.m3u8"): (200, media(6, 6, 3.5))}

    def no_key(playback):
        raise SigningUnavailable("no signing key: give the stack one")

    first = run_verify(
        [signed], Checker("mux", Tolerance(1.0), Pace(0), FakeOrigin(table), {}, no_key), checkpoint=Checkpoint(path)
    )
    assert (first.signed, first.passed) == (1, 0)
    origin = FakeOrigin(table)
    check = Checker("mux", Tolerance(1.0), Pace(0), origin, {}, lambda playback: SignedPlayback(token_url, ()))
    again = run_verify([signed], check, checkpoint=Checkpoint(path))
    assert origin.asked == list(table)  # fetched this time
    assert (again.passed, again.signed, again.skipped_done) == (1, 0, 0)
    assert again.result() == "OK: every ready asset checked (1) and matched"
    # Passed now, for the same video: the run after that skips it.
    third = check_all([signed], {}, checkpoint=Checkpoint(path))
    assert third[2].asked == [] and third[0].skipped_done == 1


def test_the_earlier_runs_failures_are_printed_once_however_many_this_run_found(tmp_path):
    path = str(tmp_path / "verify.sqlite")
    earlier = Checkpoint(path)
    earlier.record(Verdict("lib/old", "failed", (Finding("lib/old", "resolution", "earlier"),)), "v-old")
    earlier.close()
    many = [item(n, remote_id=f"v{n}") for n in range(1, 10_006)]  # 10,005 failures this run: no manifest
    summary, found, _ = check_all(many, {}, checkpoint=Checkpoint(path))
    reported = [doc["id"] for doc in found if doc["type"] == "mismatch"]
    assert len(reported) == len(set(reported)) == 10_006  # each once: this run's 10,005 and the earlier one
    assert summary.failed == 10_006


def test_a_5xx_is_no_verdict_but_a_refused_address_is():
    table = {HLS.format(n=1): (503, ""), HLS.format(n=2): FetchError("refused", "10.0.0.1 (private)")}
    summary, found, _ = check_all([item(1), item(2)], table)
    assert summary.unchecked == 1 and summary.failed == 1 and found[1]["kind"] == "refused"


def test_the_pace_spaces_fetches_out():
    now, slept = [0.0], []

    def sleep(s):
        slept.append(s)
        now[0] += s

    pace = Pace(4, clock=lambda: now[0], sleep=sleep)
    for _ in range(5):
        pace.wait()
    assert now[0] == pytest.approx(1.0) and len(slept) == 4


# --- the guarded fetch ----------------------------------------------------------------------------


class Local:
    """A loopback server: /ok answers, /hop redirects to `target`."""

    def __init__(self, target: str = ""):
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/hop":
                    self.send_response(302)
                    self.send_header("Location", target)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = b"#EXTM3U\n"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_the_fetch_reaches_public_addresses_only():
    local = Local()
    try:
        with pytest.raises(FetchError, match="loopback") as caught:
            guarded_get(f"http://127.0.0.1:{local.port}/ok")
        assert caught.value.kind == "refused" and not caught.value.transient
        assert guarded_get(f"http://127.0.0.1:{local.port}/ok", allow_private=True).body == b"#EXTM3U\n"
    finally:
        local.close()


def test_a_public_name_is_connected_to_at_the_address_checked_and_a_redirect_is_checked_again():
    local = Local("http://metadata.internal/latest/meta-data/")
    public = ipaddress.ip_address("93.184.215.14")
    resolved = {"media.example": [public], "metadata.internal": [ipaddress.ip_address("169.254.169.254")]}
    connected = []
    real = socket.create_connection

    def pinned(address, *args, **kwargs):  # the public name's address stands for the loopback server
        connected.append(address)
        return real(("127.0.0.1", local.port), *args, **kwargs)

    try:
        socket.create_connection = pinned
        with pytest.raises(FetchError, match="link-local"):
            guarded_get(f"http://media.example:{local.port}/hop", resolve=lambda h, p: resolved[h])
    finally:
        socket.create_connection = real
        local.close()
    assert connected == [("93.184.215.14", local.port)]  # the first hop went to the checked address only


def test_a_name_with_one_private_address_among_public_ones_is_refused():
    mixed = [ipaddress.ip_address("93.184.215.14"), ipaddress.ip_address("10.1.2.3")]
    with pytest.raises(FetchError, match="private"):
        guarded_get("https://cdn.example/a.m3u8", resolve=lambda h, p: mixed)


class Trickling:
    """A loopback server that answers a byte every 0.1 s: each read well inside any socket timeout."""

    ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.apple.mpegurl\r\nContent-Length: 8\r\n\r\n#EXTM3U\n"

    def __init__(self, head_only: bool):
        answer = self.ANSWER if head_only else self.ANSWER.replace(b"Content-Length: 8", b"Content-Length: 900")
        tail = b"" if head_only else b"#" * 892

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                try:
                    for byte in answer + tail:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(0.1)
                except OSError:
                    pass

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.slow  # seconds of real time or work: `make unit` and CI run it, `make quick` does not
@pytest.mark.parametrize("head_only", [True, False], ids=["status-and-headers", "body"])
def test_a_trickled_manifest_is_cut_at_the_whole_fetch_deadline(head_only):
    local = Trickling(head_only)
    started = time.monotonic()
    try:
        with pytest.raises(FetchError) as caught:
            guarded_get(f"http://127.0.0.1:{local.port}/m.m3u8", allow_private=True, timeout_s=1.0)
    finally:
        local.close()
    took = time.monotonic() - started
    assert took < 4.0, f"a fetch meant to stop at 3 s took {took:.1f} s"
    assert caught.value.kind == "unreachable" and "no answer within 3 s" in caught.value.detail


def test_signing_waits_out_the_providers_429s_and_gives_up_on_anything_else():
    from migrator.providers.http import TransportError
    from migrator_cli.commands.verify import through_throttles

    answers, slept = [TransportError("HTTP 429 reading the video")] * 2 + ["signed"], []

    def call():
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert through_throttles(call, waits=(1.0, 2.0, 4.0), sleep=slept.append, jitter=lambda: 1.0) == "signed"
    assert slept == [1.0, 2.0]  # two 429s, two growing waits, then the answer

    def always(kind):
        def call():
            raise TransportError(kind)

        return call

    slept.clear()
    with pytest.raises(TransportError, match="429"):  # still throttled after the last wait: no answer this run
        throttled = always("HTTP 429 reading the video")
        through_throttles(throttled, waits=(1.0, 2.0), sleep=slept.append, jitter=lambda: 1.0)
    assert slept == [1.0, 2.0]
    slept.clear()
    with pytest.raises(TransportError, match="timeout"):  # not a throttle: at once
        through_throttles(always("timeout"), waits=(1.0, 2.0), sleep=slept.append, jitter=lambda: 1.0)
    assert slept == []
