"""Real media for the probe tests, made with Debian's ffmpeg, and a local server for it.

Plain helpers, so that both the probe tests and the emulator test can build fixtures on
them: `make_media(dir)` writes the files (well under a second each), `MediaServer`
serves a directory on 127.0.0.1 (plain or TLS) with misbehaving paths besides:
`/stall` (answers nothing), `/drip` (sends a byte every 0.1 s, forever),
`/redirect?to=URL` (a 302 to URL), `/hops/N/path` (N 302s before `/path`), and two that
interrupt a good file after its first N bytes, its whole length announced: `/cut/N/path`
(then closes) and `/pause/N/S/path` (then waits S seconds and sends the rest).
"""

from __future__ import annotations

import functools
import http.server
import shutil
import ssl
import subprocess
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

VIDEO_S = 2.0


def _ffmpeg(*args: str) -> None:
    ffmpeg = shutil.which("ffmpeg")
    assert ffmpeg, "ffmpeg is missing: infra/bootstrap.sh installs Debian's ffmpeg"
    subprocess.run([ffmpeg, "-nostdin", "-hide_banner", "-v", "error", "-y", *args], check=True, timeout=120)


def make_media(directory: Path) -> dict[str, Path]:
    """video.mp4 (2 s, video+audio), audio.m4a (no video), cover.mp3 (audio + cover art), truncated.mp4,
    and playlist.m3u8, an HLS playlist of its segments (playlist0.ts, ...)."""
    directory.mkdir(parents=True, exist_ok=True)
    video = directory / "video.mp4"
    _ffmpeg(
        *("-f", "lavfi", "-i", "testsrc=size=64x64:rate=10", "-f", "lavfi", "-i", "sine=frequency=440"),
        *("-t", str(VIDEO_S), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac"),
        str(video),
    )
    audio = directory / "audio.m4a"
    _ffmpeg("-f", "lavfi", "-i", "sine=frequency=440", "-t", str(VIDEO_S), "-c:a", "aac", str(audio))
    # An audio file with album art: ffprobe lists the art as a (one-frame) video stream.
    cover = directory / "cover.mp3"
    _ffmpeg(
        *("-f", "lavfi", "-i", f"sine=frequency=440:duration={VIDEO_S}"),
        *("-f", "lavfi", "-i", "color=c=red:size=32x32:duration=0.1"),
        *("-map", "0:a", "-map", "1:v", "-frames:v", "1", "-c:a", "libmp3lame", "-c:v", "mjpeg"),
        *("-disposition:v:0", "attached_pic", str(cover)),
    )
    # ffmpeg writes the moov atom (the index) last: the first 30 % of the file has none of it.
    data = video.read_bytes()
    assert data.find(b"moov") > len(data) * 0.3, "expected the moov atom at the end of the mp4"
    truncated = directory / "truncated.mp4"
    truncated.write_bytes(data[: int(len(data) * 0.3)])
    playlist = directory / "playlist.m3u8"
    _ffmpeg("-i", str(video), "-c", "copy", "-f", "hls", "-hls_time", "1", "-hls_list_size", "0", str(playlist))
    return {"video": video, "audio": audio, "cover": cover, "truncated": truncated, "playlist": playlist}


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost: (cert.pem, key.pem)."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    openssl = shutil.which("openssl")
    assert openssl, "openssl is missing"
    subprocess.run(
        [
            openssl,
            *("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"),
            *("-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"),
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return cert, key


class _Handler(http.server.SimpleHTTPRequestHandler):
    stop: threading.Event  # set on the class made per server
    paths: list[str]  # every request's path, in order (per server too)

    def do_GET(self):
        self.paths.append(self.path)
        if self.path.startswith("/stall"):
            self.stop.wait(30)  # read the request, answer nothing
            return
        if self.path.startswith("/drip"):
            self.send_response(200)
            self.send_header("Content-Type", "video/mp4")
            self.send_header("Content-Length", str(10**9))
            self.end_headers()
            try:
                while not self.stop.wait(0.1):
                    self.wfile.write(b"\0")
                    self.wfile.flush()
            except OSError:
                pass
            return
        parts = urlsplit(self.path)
        if parts.path == "/redirect":
            return self._redirect(parse_qs(parts.query)["to"][0])
        if parts.path.startswith("/hops/"):
            hops, _, rest = parts.path.removeprefix("/hops/").partition("/")
            return self._redirect(f"/hops/{int(hops) - 1}/{rest}" if int(hops) > 1 else f"/{rest}")
        if parts.path.startswith(("/cut/", "/pause/")):
            return self._break_off(parts.path)
        super().do_GET()

    def _break_off(self, path: str) -> None:
        how, n, rest = path.lstrip("/").split("/", 2)
        pause = None
        if how == "pause":
            pause, rest = rest.split("/", 1)
        data = (Path(self.directory) / rest).read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "video/mp4")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: int(n)])
        self.wfile.flush()
        if pause is None or self.stop.wait(float(pause)):
            return  # cut (or the server is stopping)
        try:
            self.wfile.write(data[int(n) :])
        except OSError:
            pass  # the client gave up

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format, *args):  # keep the test output quiet
        pass


class _Server(http.server.ThreadingHTTPServer):
    # socketserver listens with a backlog of 5: on a busy machine, with several probes and a
    # /stall or two at once, a full queue drops SYNs and each retry costs a second or more.
    request_queue_size = 64


class MediaServer:
    """Serves `directory` on 127.0.0.1 on a free port, in a thread; TLS when given a cert and key."""

    def __init__(self, directory: Path, tls: tuple[Path, Path] | None = None):
        self.stop_event = threading.Event()
        self.paths: list[str] = []
        handler = type("Handler", (_Handler,), {"stop": self.stop_event, "paths": self.paths})
        self.server = _Server(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
        scheme = "http"
        self.cert = tls[0] if tls else None  # what a client must trust
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*map(str, tls))
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            scheme = "https"
        self.base = f"{scheme}://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    def url(self, path: str) -> str:
        return f"{self.base}/{path.lstrip('/')}"

    def __enter__(self) -> MediaServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop_event.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
