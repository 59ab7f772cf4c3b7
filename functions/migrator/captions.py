"""Caption files: told apart by their content, checked, and turned into WebVTT where a provider takes only that (pure).

A track's file comes from outside and is untrusted: it must be text, and parse as WebVTT
(https://www.w3.org/TR/webvtt1/: a `WEBVTT` header, then cues) or as SubRip (SRT: numbered
cues with `00:00:01,000 --> 00:00:02,000` timings), with at least one cue; anything else
fails its track with the reason. The format is told by the content, not by the name or the
inventory's `format` (a mislabelled file still works). Parsing uses the pinned `webvtt-py`
(WebVTT) and `srt` (SubRip) libraries; a library that raises anything on a hostile file
fails the file, never the worker. Cloudflare Stream and api.video take WebVTT only, so an
SRT file becomes WebVTT here: the same cues, times with a dot, cue text kept as it is
(`<i>`, `<b>` and `<u>` mean the same in both) except that `-->`, which would end a cue
line in WebVTT, is escaped.
"""

from __future__ import annotations

import codecs
import io
from dataclasses import dataclass
from datetime import timedelta

import srt
import webvtt

WEBVTT_MEDIA_TYPE = "text/vtt"
SRT_MEDIA_TYPE = "application/x-subrip"


@dataclass(frozen=True)
class CaptionFile:
    """A checked caption file: its format as found, its cues, and the file as WebVTT (UTF-8)."""

    format: str  # "vtt" | "srt": what the content is, whatever it was called
    cues: int
    original: bytes
    webvtt: bytes

    def for_upload(self, needs_webvtt: bool) -> tuple[bytes, str, str]:
        """(bytes, file name suffix, media type) to send a provider that does or does not need WebVTT."""
        if needs_webvtt or self.format == "vtt":
            return self.webvtt, "vtt", WEBVTT_MEDIA_TYPE
        return self.original, "srt", SRT_MEDIA_TYPE


def read_caption(raw: bytes) -> CaptionFile | str:
    """The checked file, or why it is not a caption file (a short sentence, safe to store)."""
    if not raw.strip():
        return "the file is empty"
    text = _text(raw)
    if text is None:
        return "the file is not UTF-8 (or UTF-16 with a byte order mark) text"
    if "\x00" in text:
        return "the file is binary, not a caption file"
    if _is_webvtt(text):
        return _read_webvtt(raw, text)
    return _read_srt(raw, text)


def _text(raw: bytes) -> str | None:
    """UTF-8 (with or without a byte order mark), or UTF-16 with one; None for anything else."""
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if raw.startswith(bom):
            try:
                return raw.decode(encoding).lstrip("\ufeff")
            except UnicodeDecodeError:
                return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _is_webvtt(text: str) -> bool:
    # "WEBVTT" then a space, a tab, a line break, or the end (WebVTT 1.0, "file structure").
    return text.startswith("WEBVTT") and (len(text) == 6 or text[6] in " \t\r\n")


def _read_webvtt(raw: bytes, text: str) -> CaptionFile | str:
    try:
        parsed = webvtt.WebVTT.from_buffer(io.StringIO(text), format="vtt")
        cues = len(parsed.captions)
    except Exception as exc:  # a hostile file may break the library in any way: that is the file's fault
        return f"a WEBVTT header, but not a WebVTT file ({type(exc).__name__})"
    if cues == 0:
        return "a WebVTT file without a single cue"
    body = text.replace("\r\n", "\n").replace("\r", "\n")
    return CaptionFile("vtt", cues, raw, body.encode("utf-8"))


def _read_srt(raw: bytes, text: str) -> CaptionFile | str:
    try:
        subtitles = list(srt.parse(text))
    except srt.SRTParseError as exc:
        # Its message quotes the file; the position says enough, and stored text stays ours.
        where = exc.expected_start
        return f"neither WebVTT (no WEBVTT header) nor SubRip (no cue where one should start, at character {where})"
    except Exception as exc:
        return f"neither WebVTT (no WEBVTT header) nor SubRip ({type(exc).__name__})"
    if not subtitles:
        return "a SubRip file without a single cue"
    return CaptionFile("srt", len(subtitles), raw, srt_to_webvtt(subtitles).encode("utf-8"))


def srt_to_webvtt(subtitles: list[srt.Subtitle]) -> str:
    """SubRip cues as a WebVTT file: the same times (with a dot) and text, in order."""
    lines = ["WEBVTT", ""]
    for cue in subtitles:
        lines.append(f"{_timestamp(cue.start)} --> {_timestamp(cue.end)}")
        # A blank line would end the cue early, and "-->" would start a timing line.
        body = [line for line in cue.content.replace("\r", "").split("\n") if line.strip()]
        lines += [line.replace("-->", "--&gt;") for line in body] or [""]
        lines.append("")
    return "\n".join(lines)


def _timestamp(at: timedelta) -> str:
    """hh:mm:ss.ttt, hours as many digits as they need (WebVTT allows more than two)."""
    millis = max(0, round(at.total_seconds() * 1000))
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}"
