"""A small strict reader of HLS playlists (RFC 8216), for `migrator verify`: what a master playlist
offers (each variant's URI, BANDWIDTH and RESOLUTION) and how long a media playlist lasts.

Strict where a wrong answer would pass a broken video: the first line must be #EXTM3U (4.3.1.1),
every EXT-X-STREAM-INF needs BANDWIDTH and a URI line after it (4.3.4.2), every EXTINF a number
and a segment URI (4.3.2.1), a VOD playlist must end with EXT-X-ENDLIST (4.3.3.4), and no EXTINF
may exceed EXT-X-TARGETDURATION once rounded (4.3.3.1). Tags it does not need are skipped, as the
RFC tells clients to (4.1). The PyPI `m3u8` package was the alternative: it is lenient (it reads
anything as some playlist) and its last release is from 2024, so these 100 lines are checked here.
Input is untrusted: bounded in size and lines, never evaluated.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

MAX_PLAYLIST_BYTES = 4 * 1024 * 1024
MAX_LINES = 200_000
_ATTRIBUTE = re.compile(r'([A-Z0-9-]+)=("[^"\r\n]*"|[^",\r\n]*)')
_RESOLUTION = re.compile(r"^(\d{1,6})x(\d{1,6})$")
_DURATION = re.compile(r"^(\d{1,9}(?:\.\d{1,9})?)$")


class PlaylistError(ValueError):
    """Not a playlist this reader accepts; the message says where and why."""


@dataclass(frozen=True)
class Variant:
    uri: str
    bandwidth: int
    width: int | None = None
    height: int | None = None


@dataclass(frozen=True)
class Master:
    variants: tuple[Variant, ...]

    def top(self) -> Variant:
        """The variant with the most pixels (then the most bandwidth)."""
        return max(self.variants, key=lambda v: ((v.width or 0) * (v.height or 0), v.bandwidth))


@dataclass(frozen=True)
class Media:
    duration_s: float
    segments: int
    target_duration: int


def _lines(text: str) -> list[str]:
    if len(text.encode("utf-8", "surrogatepass")) > MAX_PLAYLIST_BYTES:
        raise PlaylistError(f"playlist is over {MAX_PLAYLIST_BYTES} bytes")
    lines = [line.strip() for line in text.lstrip("\ufeff").splitlines()]
    if len(lines) > MAX_LINES:
        raise PlaylistError(f"playlist has over {MAX_LINES} lines")
    if not lines or lines[0] != "#EXTM3U":
        raise PlaylistError("the first line is not #EXTM3U")
    return lines


def attributes(text: str) -> dict[str, str]:
    """An attribute list (4.2): NAME=value pairs, quoted strings unquoted; a malformed list raises."""
    out: dict[str, str] = {}
    position = 0
    while position < len(text):
        match = _ATTRIBUTE.match(text, position)
        if not match:
            raise PlaylistError(f"malformed attribute list at {text[position : position + 30]!r}")
        name, value = match.group(1), match.group(2)
        if name in out:
            raise PlaylistError(f"attribute {name} given twice")
        out[name] = value[1:-1] if value.startswith('"') else value
        position = match.end()
        if position < len(text):
            if text[position] != ",":
                raise PlaylistError(f"malformed attribute list at {text[position : position + 30]!r}")
            position += 1
    return out


def is_master(text: str) -> bool:
    return any(line.startswith("#EXT-X-STREAM-INF:") for line in _lines(text))


def parse_master(text: str) -> Master:
    lines = _lines(text)
    variants: list[Variant] = []
    pending: dict[str, str] | None = None
    for number, line in enumerate(lines[1:], start=2):
        if not line:
            continue
        if line.startswith("#EXT-X-STREAM-INF:"):
            if pending is not None:
                raise PlaylistError(f"line {number}: EXT-X-STREAM-INF without a URI after the one before")
            pending = attributes(line.split(":", 1)[1])
            if not pending.get("BANDWIDTH", "").isdigit():
                raise PlaylistError(f"line {number}: EXT-X-STREAM-INF without a BANDWIDTH")
            resolution = pending.get("RESOLUTION")
            if resolution is not None and not _RESOLUTION.match(resolution):
                raise PlaylistError(f"line {number}: RESOLUTION {resolution!r} is not WIDTHxHEIGHT")
        elif line.startswith("#EXTINF"):
            raise PlaylistError(f"line {number}: a master playlist holds no segments")
        elif line.startswith("#"):
            continue
        elif pending is not None:
            width = height = None
            if "RESOLUTION" in pending:
                width, height = map(int, pending["RESOLUTION"].split("x"))
            variants.append(Variant(line, int(pending["BANDWIDTH"]), width, height))
            pending = None
    if pending is not None:
        raise PlaylistError("the last EXT-X-STREAM-INF has no URI")
    if not variants:
        raise PlaylistError("a master playlist with no variant")
    return Master(tuple(variants))


def parse_media(text: str) -> Media:
    lines = _lines(text)
    target: int | None = None
    total, segments, longest, ended = 0.0, 0, 0.0, False
    pending: float | None = None
    for number, line in enumerate(lines[1:], start=2):
        if not line:
            continue
        if line.startswith("#EXT-X-TARGETDURATION:"):
            value = line.split(":", 1)[1]
            if not value.isdigit():
                raise PlaylistError(f"line {number}: EXT-X-TARGETDURATION {value!r} is not a whole number")
            target = int(value)
        elif line.startswith("#EXTINF:"):
            if pending is not None:
                raise PlaylistError(f"line {number}: EXTINF without a segment URI after the one before")
            value = line.split(":", 1)[1].split(",", 1)[0].strip()
            if not _DURATION.match(value):
                raise PlaylistError(f"line {number}: EXTINF duration {value!r} is not a number")
            pending = float(value)
        elif line == "#EXT-X-ENDLIST":
            ended = True
        elif line.startswith("#EXT-X-STREAM-INF"):
            raise PlaylistError(f"line {number}: a media playlist lists no variants")
        elif line.startswith("#"):
            continue
        elif pending is not None:
            total, segments, longest = total + pending, segments + 1, max(longest, pending)
            pending = None
        else:
            raise PlaylistError(f"line {number}: a URI with no EXTINF before it")
    if pending is not None:
        raise PlaylistError("the last EXTINF has no segment URI")
    if target is None:
        raise PlaylistError("no EXT-X-TARGETDURATION")
    if not segments:
        raise PlaylistError("no segments")
    if not ended:
        raise PlaylistError("no EXT-X-ENDLIST: not a finished (VOD) playlist")
    if math.floor(longest + 0.5) > target:
        raise PlaylistError(f"a segment of {longest:g} s is longer than EXT-X-TARGETDURATION {target}")
    return Media(round(total, 6), segments, target)
