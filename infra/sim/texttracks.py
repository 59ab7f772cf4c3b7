"""Caption files as the simulated providers take them: read (WebVTT or SubRip), fetched (Mux), or uploaded as multipart.

What the real APIs refuse, the profiles refuse with these: Cloudflare Stream and api.video take
WebVTT files only (`read_caption(..., webvtt_only=True)`), Mux fetches SRT or WebVTT from a URL
(`fetch_caption`, over loopback only like every fetch the simulator makes) and errors a track
whose file is neither. A file's cues are parsed with the same libraries the project pins
(`webvtt-py`, `srt`), so a file the simulator takes is one a player could read.
"""

from __future__ import annotations

import http.client
import io
import json
import urllib.error
import urllib.request
from email.parser import BytesParser
from email.policy import HTTP

import srt
import webvtt

from .fetch import _OPENER, _on_loopback

FETCH_TIMEOUT_S = 5.0
# A few of the labels the providers generate from a language ("if sent de, the label Deutsch will be created").
LABELS = {"en": "English", "fr": "Français", "de": "Deutsch", "es": "Español", "it": "Italiano", "pt": "Português"}


def label_of(language: str) -> str:
    return LABELS.get(language.split("-")[0].lower(), language)


def read_caption(raw: bytes, webvtt_only: bool) -> tuple[str | None, str | None]:
    """(format, None) for a caption file the provider takes, else (None, why not)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, "the file is not UTF-8 text"
    if text.startswith("WEBVTT"):
        try:
            cues = webvtt.WebVTT.from_buffer(io.StringIO(text), format="vtt").captions
        except Exception:
            cues = []
        return ("vtt", None) if cues else (None, "the file is not a valid WebVTT file")
    if webvtt_only:
        return None, "only WebVTT files are supported"
    try:
        return ("srt", None) if list(srt.parse(text)) else (None, "the file has no cues")
    except Exception:
        return None, "the file is not a valid WebVTT or SRT file"


def read_chapters_json(raw: bytes) -> tuple[str | None, str | None]:
    """("json", None) for a chapters file in Apple's HLS chapter notation, the form Mux serves a chapters track in
    (`[{"chapter": 1, "start-time": 0, "titles": [{"language": "en", "title": "Intro"}]}]`: docs.mux.com "Add
    chapters", "Retrieve chapters"), each start a number from 0, rising, each chapter titled; else (None, why)."""
    try:
        doc = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return None, "the chapters file is not JSON"
    if not isinstance(doc, list) or not doc:
        return None, "the chapters file is not a list of chapters"
    last = -1.0
    for entry in doc:
        start = entry.get("start-time") if isinstance(entry, dict) else None
        titles = entry.get("titles") if isinstance(entry, dict) else None
        if isinstance(start, bool) or not isinstance(start, int | float) or start < 0 or start <= last:
            return None, "each chapter needs a start-time from 0, later than the one before"
        if not isinstance(titles, list) or not titles:
            return None, "each chapter needs a title"
        if not all(isinstance(t, dict) and isinstance(t.get("title"), str) and t["title"] for t in titles):
            return None, "each chapter needs a title"
        last = start
    return "json", None


def fetch_caption(url: str, max_bytes: int) -> tuple[bytes | None, str | None]:
    """(content, None) or (None, why it could not be downloaded): loopback only, at most `max_bytes`."""
    if not _on_loopback(url):
        return None, "the text track could not be downloaded from the URL"
    try:
        with _OPENER.open(urllib.request.Request(url), timeout=FETCH_TIMEOUT_S) as response:
            content = response.read(max_bytes + 1)
    except urllib.error.HTTPError as exc:
        exc.close()
        return None, f"the text track could not be downloaded from the URL (HTTP {exc.code})"
    except (OSError, ValueError, http.client.HTTPException):
        return None, "the text track could not be downloaded from the URL"
    if len(content) > max_bytes:
        return None, f"the text track file is larger than {max_bytes} bytes"
    return content, None


def multipart_file(content_type: str | None, body: bytes, field: str = "file") -> tuple[bytes | None, str | None]:
    """The `field` part of a multipart/form-data body: (its bytes, None), or (None, what is wrong)."""
    if not content_type or not content_type.lower().startswith("multipart/form-data"):
        return None, "the request must be multipart/form-data with a file"
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    if not message.is_multipart():
        return None, "the multipart body could not be read"
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == field:
            payload = part.get_payload(decode=True)  # a leaf part's bytes (None: none)
            return (payload if isinstance(payload, bytes) else b""), None
    return None, f"the multipart body has no {field!r} part"


def uploaded_caption(content_type: str | None, body: bytes, max_bytes: int) -> tuple[bytes, str] | str:
    """A WebVTT caption uploaded as a multipart `file` (Cloudflare, api.video): (content, format), or why not."""
    content, problem = multipart_file(content_type, body)
    if content is None or problem:  # no content: a problem says why
        return problem or "the multipart body could not be read"
    if len(content) > max_bytes:
        return f"the caption file is larger than {max_bytes} bytes"
    fmt, problem = read_caption(content, webvtt_only=True)
    return (content, fmt) if fmt is not None else problem or "the file is not a caption file"
