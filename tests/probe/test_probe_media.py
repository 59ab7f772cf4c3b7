"""probe_url against real ffprobe on real media, served over http(s) from 127.0.0.1."""

from __future__ import annotations

import threading
import time

import pytest
from migrator_cli import probe
from migrator_cli.errors import CliError
from migrator_cli.probe import probe_url

from tests.probe.media import VIDEO_S


def test_video_is_ok_with_its_duration(server):
    result = probe_url(server.url("video.mp4"), timeout_s=20, allow_private=True)
    assert result.ok, result.reason
    assert result.duration_s == pytest.approx(VIDEO_S, abs=0.2)
    assert result.reason is None


def test_audio_only_has_no_video_stream(server):
    result = probe_url(server.url("audio.m4a"), timeout_s=20, allow_private=True)
    assert not result.ok and not result.retryable
    assert result.reason == "probe: no video stream (found: audio)"


def test_cover_art_is_not_a_video_stream(server):
    # ffprobe lists an mp3's album art as a video stream; only its disposition tells.
    result = probe_url(server.url("cover.mp3"), timeout_s=20, allow_private=True)
    assert not result.ok and not result.retryable
    assert result.reason == "probe: no video stream (found: audio, cover image)"


def test_truncated_mp4_is_unreadable(server):
    result = probe_url(server.url("truncated.mp4"), timeout_s=20, allow_private=True)
    assert not result.ok and not result.retryable
    assert result.reason.startswith("probe: ffprobe could not read the source: ")
    assert "moov atom not found" in result.reason


def test_404_is_not_ok_and_the_presigned_query_stays_out_of_the_reason(server):
    result = probe_url(
        server.url("missing.mp4?X-Amz-Credential=AKIA%2Fx&X-Amz-Signature=s3cr3t"), timeout_s=20, allow_private=True
    )
    assert not result.ok and not result.retryable
    assert result.reason == "probe: ffprobe could not read the source: Server returned 404 Not Found"
    assert "s3cr3t" not in result.reason and "AKIA" not in result.reason


def test_upper_case_scheme_is_probed_like_lower_case(server):
    assert probe_url(server.url("video.mp4").replace("http://", "HTTP://"), timeout_s=20, allow_private=True).ok


def test_https_with_a_trusted_certificate(tls_server):
    # The whitelist's https needs tls and tcp beneath it (and nothing like crypto or hls).
    result = probe_url(tls_server.url("video.mp4"), timeout_s=20, ca_file=str(tls_server.cert), allow_private=True)
    assert result.ok, result.reason
    assert result.duration_s == pytest.approx(VIDEO_S, abs=0.2)


def test_https_with_an_untrusted_certificate_is_left_for_later(tls_server):
    # Certificates are verified; a failure says nothing about the source, so it is retryable.
    result = probe_url(tls_server.url("video.mp4?sig=s3cr3t"), timeout_s=20, allow_private=True)
    assert not result.ok and result.retryable
    assert "certificate" in result.reason and "s3cr3t" not in result.reason


def test_a_refused_connection_is_retryable():
    from infra.emulator import free_port

    result = probe_url(f"http://127.0.0.1:{free_port()}/video.mp4", timeout_s=10, allow_private=True)
    assert not result.ok and result.retryable
    assert "Connection refused" in result.reason


def test_a_silent_server_hits_the_deadline(server):
    # ffprobe's own read timeout lies past the deadline (see the next test): the deadline ends it.
    started = time.monotonic()
    result = probe_url(server.url("stall"), timeout_s=2, allow_private=True)
    assert 2 <= time.monotonic() - started < 5
    assert result == type(result)(False, reason="probe: timed out after 2 s", retryable=True)


def test_a_good_file_whose_transfer_pauses_midway_is_never_rejected(server):
    # The pause outlasts half the deadline, where ffprobe's read timeout was: it gave up on the
    # read mid-file, its demuxer said "moov atom not found" and the good source was rejected
    # (a busy machine stalls the guard or the server just so). Now ffprobe waits and reads it.
    result = probe_url(server.url("pause/16384/3.5/video.mp4"), timeout_s=6, allow_private=True)
    assert result.ok or result.retryable, result.reason
    if not result.ok:  # only on a machine so busy that the deadline came first: left pending
        assert result.reason == "probe: timed out after 6 s"
    else:
        assert result.duration_s == pytest.approx(VIDEO_S, abs=0.2)


def test_a_transfer_cut_short_leaves_the_source_pending(server, media_dir):
    # Fewer bytes than the server announced: the connection broke, the file may be fine.
    result = probe_url(server.url("cut/16384/video.mp4?sig=s3cr3t"), timeout_s=20, allow_private=True)
    size = (media_dir / "video.mp4").stat().st_size
    assert result == type(result)(
        False,
        reason=f"probe: ffprobe could not read the source: [http] Stream ends prematurely at 16384, should be {size}",
        retryable=True,
    )


def test_a_slow_drip_hits_the_deadline_and_ffprobe_is_killed(server):
    started = time.monotonic()
    result = probe_url(server.url("drip"), timeout_s=1.5, allow_private=True)
    assert 1.5 <= time.monotonic() - started < 5
    assert result == type(result)(False, reason="probe: timed out after 1.5 s", retryable=True)


def test_file_urls_never_reach_ffprobe(media_dir):
    with pytest.raises(ValueError, match="never probed"):
        probe_url(f"file://{media_dir / 'video.mp4'}")


def test_missing_ffprobe_says_how_to_install_it(server):
    with pytest.raises(CliError, match=r"apt-get install ffmpeg"):
        probe_url(server.url("video.mp4"), ffprobe="/nonexistent/ffprobe", allow_private=True)


def test_output_still_unread_when_ffprobe_exits_is_not_judged(server, monkeypatch):
    # On a starved machine the threads reading ffprobe's pipes can lag behind its exit. Judged
    # as it stood, the stderr read so far (here: none) may lack the words of a transient
    # failure, and "exit status 1, no message" rejected the source.
    gate = threading.Event()

    class Lagging(probe._CappedReader):
        def run(self):
            gate.wait(10)
            super().run()

    monkeypatch.setattr(probe, "_CappedReader", Lagging)
    monkeypatch.setattr(probe, "OUTPUT_GRACE_S", 0.2)
    try:
        result = probe_url(server.url("missing.mp4"), timeout_s=20, allow_private=True)
    finally:
        gate.set()
    assert result == type(result)(False, reason="probe: ffprobe's output was not read in time", retryable=True)
