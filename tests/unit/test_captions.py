"""Caption files: told apart by content, checked, and SRT made WebVTT (checked against webvtt-py's own reading)."""

from __future__ import annotations

import io

import pytest
import webvtt
from migrator.captions import CaptionFile, read_caption

SRT = (
    "1\r\n00:00:01,000 --> 00:00:02,500\r\nHello <i>world</i>\r\n\r\n"
    "2\r\n00:00:03,250 --> 00:00:04,000\r\nTwo --> lines\r\nhere\r\n\r\n"
    "3\r\n01:02:03,004 --> 101:00:00,000\r\nLong\r\n"
)
VTT = "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nBonjour\n\nnote-id\n00:00:03.000 --> 00:00:04.000 align:start\nSalut\n"


def cues(vtt_bytes: bytes) -> list[tuple[str, str, str]]:
    parsed = webvtt.WebVTT.from_buffer(io.StringIO(vtt_bytes.decode("utf-8")), format="vtt")
    return [(c.start, c.end, c.raw_text) for c in parsed.captions]


def test_srt_becomes_webvtt_with_the_same_cues_times_and_text():
    found = read_caption(SRT.encode())
    assert isinstance(found, CaptionFile) and found.format == "srt" and found.cues == 3
    assert found.webvtt.startswith(b"WEBVTT\n\n")
    assert cues(found.webvtt) == [
        ("00:00:01.000", "00:00:02.500", "Hello <i>world</i>"),
        ("00:00:03.250", "00:00:04.000", "Two --&gt; lines\nhere"),
        ("01:02:03.004", "101:00:00.000", "Long"),
    ]


def test_webvtt_is_taken_as_it_is_and_counted():
    found = read_caption(VTT.encode())
    assert isinstance(found, CaptionFile) and (found.format, found.cues) == ("vtt", 2)
    assert found.webvtt == VTT.encode()


def test_the_content_decides_the_format_whatever_the_file_is_called():
    # The inventory's format is a hint only: read_caption never sees it, and a mislabelled file works.
    assert read_caption(VTT.encode()).format == "vtt"
    assert read_caption(SRT.encode()).format == "srt"


@pytest.mark.parametrize(
    ("raw", "encoding"),
    [
        (b"\xef\xbb\xbf" + VTT.encode(), "utf-8 with a byte order mark"),
        (VTT.encode("utf-16"), "utf-16 with a byte order mark"),
        (b"\xef\xbb\xbf" + SRT.encode(), "SRT, utf-8 with a byte order mark"),
    ],
)
def test_byte_order_marks_are_read_and_the_webvtt_sent_is_plain_utf8(raw, encoding):
    found = read_caption(raw)
    assert isinstance(found, CaptionFile), encoding
    assert not found.webvtt.startswith(b"\xef\xbb\xbf") and found.webvtt.startswith(b"WEBVTT")


def test_srt_for_a_provider_that_takes_srt_goes_as_it_came_and_as_webvtt_otherwise():
    found = read_caption(SRT.encode())
    assert found.for_upload(needs_webvtt=False) == (SRT.encode(), "srt", "application/x-subrip")
    assert found.for_upload(needs_webvtt=True)[1:] == ("vtt", "text/vtt")


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", "the file is empty"),
        (b"  \n\n", "the file is empty"),
        (b"<html><body>Not found</body></html>", "neither WebVTT (no WEBVTT header) nor SubRip"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not UTF-8"),
        (b"caf\xe9 au lait", "not UTF-8"),
        (b"WEBVTT\n\nno cues here\n", "a WebVTT file without a single cue"),
        (b"WEBVTTX\n\n00:01.000 --> 00:02.000\nhi\n", "neither WebVTT"),
        (b"plain\x00text", "binary"),
        (b'{"captions": []}', "neither WebVTT (no WEBVTT header) nor SubRip"),
    ],
)
def test_what_is_not_a_caption_file_says_why(raw, reason):
    found = read_caption(raw)
    assert isinstance(found, str) and reason in found


def test_a_reason_never_quotes_the_file():
    # srt's own error message quotes the unmatched content; what is stored is ours.
    found = read_caption(b'=HYPERLINK("http://evil") secret-token-123')
    assert isinstance(found, str) and "secret-token-123" not in found and "HYPERLINK" not in found
