"""A rewritten page plays from the target: a Vimeo iframe embed (Vimeo's own snippet) rewritten for a video made
ready on the target's simulator, the page served on loopback and opened in headless Chromium.

The destination is the cut-over map's row (cutover.row_of) of the ledger item the adapter's poll would settle, so the
player URL is the one the provider said. Checked: the simulator served its player page for that very video (its
playback log), and Chromium's screenshot is a PNG that is not one flat colour. The screenshot is kept under
$MIGRATOR_TEST_ARTIFACTS (else the test's tmp_path), and its path printed.
"""

from __future__ import annotations

import os
import struct
import subprocess
import tempfile
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from migrator.messages import AssetMessage
from migrator.providers import AssetRef, build
from migrator_cli.cutover import SIGNED, row_of
from migrator_cli.rewrite import forms, markup
from migrator_cli.rewrite.model import IFRAME, Destination
from migrator_cli.rewrite.targets import player_for

from infra.accounts import account
from infra.toolchain import ToolchainError, chromium

# The embed as Vimeo documents it (https://github.com/vimeo/player.js#pre-existing-player), with its example id.
VIMEO_EMBED = (
    '<iframe src="https://player.vimeo.com/video/76979871?h=8272103f6e" width="640" height="360" frameborder="0" '
    'allowfullscreen allow="autoplay; encrypted-media"></iframe>'
)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=800,600",
    "--virtual-time-budget=5000",
)


def ready_destination(launch, profile: str) -> tuple[object, Destination, str]:
    """A video made ready on the target's simulator through our adapter, as the map's row has it: (sim, destination,
    the id its player URL names)."""
    acct = account(profile)
    sim = launch(profile, **acct.sim)
    client = build(profile, sim.url, lambda: acct.credentials)
    client.http.session.trust_env = False
    row = AssetMessage("site/1", "vimeo://76979871", title="One", privacy="public")
    made = client.create(AssetRef(row.asset_id, "One", details=row), "https://media.example.com/one.mp4?duration=8")
    assert made.remote_id, made
    deadline, video = time.time() + 10, None
    while time.time() < deadline:
        video = client.poll(row.asset_id, made.remote_id).video
        if video is not None and video.playback:
            break
        time.sleep(0.05)
    assert video is not None and video.playback, "never ready"
    item = {"asset_id": row.asset_id, "source_url": row.source_url, "remote_id": made.remote_id, "state": "ready",
            "playback_info": video.playback}  # fmt: skip
    hosts = dict.fromkeys(("hls", "thumbnail", "player"), f"{sim.url}/_play/mux")  # export's --mux-*-url flags
    found = row_of(item, profile, hosts)
    destination = Destination(
        found["id"], profile, found["remote_id"], found["playback_id"], found["hls_url"], found["player_url"],
        found["thumbnail_url"], found["privacy"], signed=found["note"] == SIGNED,
    )  # fmt: skip
    return sim, destination, str(found["playback_id"] if profile == "mux" else found["remote_id"])


class Page:
    """One HTML page served at http://127.0.0.1:<port>/ until closed."""

    def __init__(self, body: str) -> None:
        data = body.encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def screenshot(url: str, out: Path) -> float:
    """Chromium's screenshot of `url` into `out`; the seconds it took."""
    try:
        browser = chromium()
    except ToolchainError as exc:  # no skip: a rewrite nobody saw play is not tested
        pytest.fail(f"Chromium is needed for this test and could not be installed: {exc}")
    with tempfile.TemporaryDirectory() as profile:
        argv = [browser, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={out}", url]
        started = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": profile})
        took = time.monotonic() - started
    assert out.exists(), f"Chromium wrote no screenshot (exit {done.returncode}):\n{done.stderr[-2000:]}"
    return took


def colours(png: bytes) -> int:
    """How many distinct pixels a PNG holds (8-bit RGB or RGBA, non-interlaced: what Chromium writes)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, idat, header = 8, b"", None
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    assert header is not None
    width, height, depth, colour_type, _, _, interlace = header
    assert depth == 8 and colour_type in (2, 6) and interlace == 0, header
    size = 3 if colour_type == 2 else 4
    raw, stride, seen, previous = zlib.decompress(idat), width * size, set(), bytearray(width * size)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - size] if x >= size else 0
            up, corner = previous[x], previous[x - size] if x >= size else 0
            if kind == 1:
                line[x] = (line[x] + left) & 255
            elif kind == 2:
                line[x] = (line[x] + up) & 255
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        seen.update(bytes(line[i : i + size]) for i in range(0, stride, size * 7))  # every 7th pixel is enough
        previous = line
    return len(seen)


@pytest.mark.parametrize("profile", ["mux", "apivideo", "cloudflare"])
def test_a_rewritten_vimeo_embed_plays_the_targets_player_in_a_browser(launch, tmp_path, profile):
    sim, destination, video_id = ready_destination(launch, profile)
    assert destination.player_url and destination.player_url.startswith(sim.url), destination  # what the sim said
    vimeo = [form for form in forms.all_forms() if form.platform == "vimeo"]
    (embed,) = forms.find(VIMEO_EMBED, vimeo)
    assert (embed.kind, embed.video_id) == (IFRAME, "76979871")
    rendered = player_for(profile).render(embed, destination, VIMEO_EMBED[embed.start : embed.end])
    src = markup.attributes(rendered.text)["src"]  # the map's player URL, or (Stream's watch page) its /iframe
    assert rendered.kind == IFRAME and src.startswith(f"{sim.url}/_play/{profile}/") and video_id in src, src
    body = f"<!doctype html><html><body style='margin:0;background:#fff'>{rendered.text}</body></html>"
    page = Page(body)
    out = Path(os.environ.get("MIGRATOR_TEST_ARTIFACTS") or tmp_path) / f"rewrite-browser-{profile}.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        took = screenshot(page.url, out)
    finally:
        page.close()
    print(f"\n[rewrite-browser] {profile}: {rendered.text}\n  screenshot {out} ({took:.1f} s in Chromium)")
    players = [e for e in sim.playback_log() if e["status"] == 200 and e["type"].startswith("text/html")]
    assert any(video_id in e["path"].split("/") for e in players), sim.playback_log()
    assert colours(out.read_bytes()) > 1, "the screenshot is blank"
