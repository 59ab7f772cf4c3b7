"""What a ready video plays as, on the simulator itself: an HLS master playlist, one media playlist per
rendition, a DASH manifest, a thumbnail, a player page, an MP4; and the source-URL knobs that plant
what `migrator verify` must catch.

Every profile's video object points here (`/_play/<profile>/<key>/...`, see `urls`), in the place
its provider's URLs go, so an export read from the ledger can be fetched back. The playlists follow
RFC 8216: the master lists each rendition with BANDWIDTH and RESOLUTION (a ladder up to 1080p), and
each media playlist's EXTINF durations (6 s segments) add up to the duration the provider reports.

Knobs, in the source URL's query, beside `duration` and `drift` (video.py):
  manifest=missing      the master playlist answers 404
  manifest_drift=S      the media playlists last S seconds more than the duration reported
  max_height=H          the ladder stops at H (a lower resolution than the source's 1080p)
A signed or private video (Mux `signed`, Cloudflare `requireSignedURLs`, api.video `public: false`)
answers 403 without a `token` parameter, as a real one would without its token.
"""

from __future__ import annotations

import math
import re
import urllib.parse

from .video import READY, Video, query_number

PREFIX = "/_play/"  # apart from a source library's files (/_media/, library.py)
LADDER = (360, 480, 720, 1080)
SOURCE_SIZE = (1920, 1080)  # every simulated source is 1080p
SEGMENT_S = 6.0
BANDWIDTH = {360: 800_000, 480: 1_400_000, 720: 2_800_000, 1080: 5_000_000}
# A 16x9 grey JPEG (made once with ffmpeg: -f lavfi -i color=gray:s=16x9 -frames:v 1).
THUMBNAIL = bytes.fromhex(
    "ffd8ffe000104a46494600010200000100010000fffe00104c61766335392e33372e31303000ffdb004300083e3e493e49555555555555"
    "645d6468686864646464686868707070838383707070686870707c7c83838f938f8787838793939b9b9bbabab2b2d9d9e0ffffffffc400"
    "4a000100000000000000000000000000000000010100000000000000000000000000000000100100000000000000000000000000000000"
    "110100000000000000000000000000000000ffc00011080008001003012200021100031100ffda000c03010002110311003f00000fffd9"
)
_VARIANT = re.compile(r"^(\d+)p\.m3u8$")


def knobs(video: Video) -> dict:
    """The media knobs of a video's source URL."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(video.source or "").query)
    height = query_number(query, "max_height")
    return {
        "missing": query.get("manifest", [""])[0] == "missing",
        "drift": query_number(query, "manifest_drift") or 0.0,
        "max_height": int(height) if height and height > 0 else SOURCE_SIZE[1],
    }


def ladder(video: Video) -> list[tuple[int, int]]:
    """(width, height) of each rendition, smallest first, 16:9, up to the video's max_height."""
    top = knobs(video)["max_height"]
    heights = [h for h in LADDER if h <= top] or [top]
    return [(_even(h * 16 / 9), h) for h in heights]


def top_size(video: Video) -> tuple[int, int]:
    return ladder(video)[-1]


def _even(value: float) -> int:
    return int(round(value / 2) * 2)


def base(video: Video, profile: str) -> str:
    """Where this video's media live on the simulator the create was addressed to."""
    return f"{video.extra.get('media_base', '')}{PREFIX}{profile}"


def master_playlist(video: Video, variant_uri) -> str:
    lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-INDEPENDENT-SEGMENTS"]
    for width, height in ladder(video):
        lines.append(
            f"#EXT-X-STREAM-INF:BANDWIDTH={BANDWIDTH.get(height, 1_000_000)},RESOLUTION={width}x{height},"
            f'CODECS="avc1.640028,mp4a.40.2"'
        )
        lines.append(variant_uri(height))
    return "\n".join(lines) + "\n"


def media_playlist(video: Video) -> str:
    """6-second segments (the last one shorter) whose EXTINF durations add up to the reported duration."""
    total = max(0.001, round(video.duration + knobs(video)["drift"], 3))
    count = max(1, math.ceil(total / SEGMENT_S - 1e-9))
    durations = [SEGMENT_S] * (count - 1) + [round(total - SEGMENT_S * (count - 1), 3)]
    lines = [
        "#EXTM3U",
        "#EXT-X-VERSION:3",
        f"#EXT-X-TARGETDURATION:{math.ceil(max(durations))}",
        "#EXT-X-MEDIA-SEQUENCE:0",
        "#EXT-X-PLAYLIST-TYPE:VOD",
    ]
    for n, seconds in enumerate(durations):
        lines += [f"#EXTINF:{seconds:.3f},", f"seg{n}.ts"]
    lines.append("#EXT-X-ENDLIST")
    return "\n".join(lines) + "\n"


def dash_manifest(video: Video) -> str:
    width, height = top_size(video)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011"'
        f' mediaPresentationDuration="PT{video.duration:.3f}S" minBufferTime="PT2S">\n'
        f'  <Period><AdaptationSet mimeType="video/mp4"><Representation id="{height}p" bandwidth="'
        f'{BANDWIDTH.get(height, 1_000_000)}" width="{width}" height="{height}"/></AdaptationSet></Period>\n</MPD>\n'
    )


def player_page(video: Video) -> str:
    return f"<!doctype html><title>player</title><p>simulated player for video {video.id}</p>\n"


Answer = tuple[int, str, bytes]  # status, content type, body

TEXT = "text/plain; charset=utf-8"


def answer(video: Video | None, rest: list[str], query: str, signed: bool, variant_uri, is_master) -> Answer:
    """What the path `rest` under a video's media key serves."""
    if video is None or video.state != READY:
        return 404, TEXT, b"no such video, or not ready\n"
    if signed and "token" not in urllib.parse.parse_qs(query):
        return 403, TEXT, b"signed playback: a token is required\n"
    last = rest[-1] if rest else ""
    if is_master(rest):
        if knobs(video)["missing"]:
            return 404, TEXT, b"manifest not found\n"
        return 200, "application/vnd.apple.mpegurl", master_playlist(video, variant_uri).encode()
    match = _VARIANT.match(last)
    if match and int(match.group(1)) in {h for _, h in ladder(video)}:
        return 200, "application/vnd.apple.mpegurl", media_playlist(video).encode()
    if last.endswith(".mpd"):
        return 200, "application/dash+xml", dash_manifest(video).encode()
    if last.endswith(".jpg"):
        return 200, "image/jpeg", THUMBNAIL
    if last.endswith(".mp4"):
        return 200, "video/mp4", b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"
    if last.endswith((".m3u8", ".ts")):
        return 404, TEXT, b"no such rendition\n"
    return 200, "text/html; charset=utf-8", player_page(video).encode()


# --- serving ---------------------------------------------------------------------------------------


def split(path: str) -> tuple[str, str, list[str]] | None:
    """(profile, key, the rest) of a media path; Mux's master is `<playback id>.m3u8` itself."""
    parts = [urllib.parse.unquote(p) for p in path[len(PREFIX) :].split("/")]
    if len(parts) < 2 or not parts[0] or not parts[1]:
        return None
    return parts[0], parts[1], parts[2:]


def serve(master: tuple[str, ...], key: str, rest: list[str], query: str, find) -> Answer:
    """The answer for a media path below a video's key; `master`: the path its profile serves the HLS master at
    (the profile's `hls_master`; none: no master); `find(key)` is (video, signed) or (None, False). A profile with
    a delivery host of its own rules (Mux's playback ids) answers apart (Profile.serve_playback)."""
    video, signed = find(key)

    def is_master(path: list[str]) -> bool:
        return bool(master) and path == list(master)

    def variant_uri(height: int) -> str:  # relative to the master, as providers write them
        return f"{height}p.m3u8"

    return answer(video, rest, query, signed, variant_uri, is_master)
