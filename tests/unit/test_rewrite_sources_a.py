"""The embed forms of Vimeo, Wistia, JW Player, Brightcove and Kaltura against their documents' snippets.

Each platform's snippets, look-alikes and citations live in tests/data/rewrite/snippets/<platform>.json (the corpus's
input too); these tests hold every registered form of the five to them.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from migrator_cli.rewrite import forms
from migrator_cli.rewrite.model import KINDS, OPTIONS, Embed

pytestmark = pytest.mark.unit

SNIPPETS = Path(__file__).resolve().parents[1] / "data" / "rewrite" / "snippets"
# Each platform's id shapes, as its source adapter writes them (functions/migrator/sources/<platform>.py).
ID_SHAPES = {
    "vimeo": ("76979871", "1", "1084537292"),
    "wistia": ("g5pnf59ala", "0123456789", "abcdefghij"),
    "jwplayer": ("hWF9vG66", "Qg61oDHZ", "12345678"),
    "brightcove": ("6176149862001", "1", "ref:spring-launch"),
    "kaltura": ("0_l7g2xtsz", "1_mylf2tlt", "1_abcd1234"),
}
PLATFORMS = tuple(ID_SHAPES)


def _data(platform: str) -> dict:
    return json.loads((SNIPPETS / f"{platform}.json").read_text(encoding="utf-8"))


def _mine(embeds: list[Embed], platform: str) -> list[Embed]:
    return [e for e in embeds if e.platform == platform]


def _entries() -> list[tuple[str, dict]]:
    return [(p, entry) for p in PLATFORMS for entry in _data(p)["forms"]]


def _lookalikes() -> list[tuple[str, dict]]:
    return [(p, entry) for p in PLATFORMS for entry in _data(p)["lookalikes"]]


def _registered(platform: str) -> list:
    return [f for f in forms.all_forms() if f.platform == platform]


def _label(value: object) -> str:
    if isinstance(value, dict):
        return str(value.get("form") or value.get("snippet", ""))[:40]
    return str(value)


@pytest.mark.parametrize(("platform", "entry"), _entries(), ids=_label)
def test_the_documents_snippet_is_found_as_expected(platform: str, entry: dict) -> None:
    assert entry["cite"].startswith("https://")
    found = _mine(forms.find(entry["snippet"]), platform)
    expected = entry["expect"]
    assert [(e.form, e.kind, e.video_id) for e in found] == [
        (entry["form"], x["kind"], x["video_id"]) for x in expected
    ]
    for embed, want in zip(found, expected, strict=True):
        assert embed.kind in KINDS and set(embed.options) <= set(OPTIONS)
        assert dict(embed.options) == want["options"]
        if "unknown" in want:
            assert sorted(embed.unknown) == sorted(want["unknown"])  # markup.query does not keep the order
        if "private" in want:
            assert embed.private is want["private"]
        if "detail" in want:
            assert embed.detail == want["detail"]
        for name, value in want.get("attributes", {}).items():
            assert embed.attributes.get(name) == value
        assert entry["snippet"][embed.start : embed.end] == want.get("text", entry["snippet"])


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_registered_form_has_a_documents_snippet(platform: str) -> None:
    registered = {f.name for f in _registered(platform)}
    assert registered, platform
    assert registered == {entry["form"] for entry in _data(platform)["forms"]}


@pytest.mark.parametrize("platform", PLATFORMS)
def test_each_forms_sample_is_found_as_that_form_for_each_id_shape(platform: str) -> None:
    for form in _registered(platform):
        assert form.cite.startswith("https://")
        for video_id in ID_SHAPES[platform]:
            sample = form.sample(video_id)
            assert form.hint in sample.lower()
            found = _mine(forms.find(sample), platform)
            assert [(e.form, e.video_id) for e in found] == [(form.name, video_id)], sample


@pytest.mark.parametrize(("platform", "entry"), _lookalikes(), ids=_label)
def test_a_lookalike_is_no_embed(platform: str, entry: dict) -> None:
    assert entry["why"]
    assert _mine(forms.find(entry["snippet"]), platform) == []


@pytest.mark.parametrize(("platform", "entry"), _entries(), ids=_label)
def test_in_a_page_the_span_covers_exactly_the_embed(platform: str, entry: dict) -> None:
    before = "<h1>Our work</h1>\n<p>See https://example.com/vimeo.com/wistia.com and more.</p>\n"
    after = "\n<p>Thanks (https://example.org/).</p>\n"
    page = before + entry["snippet"] + after
    found = _mine(forms.find(page), platform)
    assert len(found) == len(entry["expect"])
    for embed, want in zip(found, entry["expect"], strict=True):
        assert page[embed.start : embed.end] == want.get("text", entry["snippet"])
        assert embed.start >= len(before)


# One bare URL form of each platform, to put inside another URL.
BARE = {
    "vimeo": "vimeo.page-link",
    "wistia": "wistia.player-url",
    "jwplayer": "jwplayer.hls",
    "brightcove": "brightcove.player-url",
    "kaltura": "kaltura.hls",
}


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_url_inside_another_urls_query_is_found_plain_and_left_encoded(platform: str) -> None:
    # A redirect or share link that carries the video's URL as a parameter points at the video: rewriting it keeps
    # the link working, so a plain one is found; an encoded one (%3A%2F%2F) is part of the outer URL and is not.
    form = forms.all_forms()[[f.name for f in forms.all_forms()].index(BARE[platform])]
    url = form.sample(ID_SHAPES[platform][0])
    plain = f"https://example.com/share?next={url}"
    found = _mine(forms.find(plain), platform)
    assert [(e.form, plain[e.start : e.end]) for e in found] == [(form.name, url)]
    encoded = f"https://example.com/share?next={quote(url, safe='')}"
    assert _mine(forms.find(encoded), platform) == []


@pytest.mark.parametrize(
    ("platform", "url"),
    [
        ("vimeo", "https://vimeo.com/76979871"),
        ("vimeo", "https://player.vimeo.com/video/76979871"),
        ("wistia", "https://fast.wistia.net/embed/iframe/g5pnf59ala"),
        ("wistia", "https://home.wistia.com/medias/g5pnf59ala"),
        ("jwplayer", "https://cdn.jwplayer.com/manifests/hWF9vG66.m3u8"),
        ("jwplayer", "https://cdn.jwplayer.com/previews/hWF9vG66-Zq6530MP"),
    ],
)
def test_a_full_stop_after_a_url_in_prose_is_not_part_of_it(platform: str, url: str) -> None:
    text = f"The talk is at {url}. But {url}.html is a page of another name."
    found = _mine(forms.find(text), platform)
    assert [text[e.start : e.end] for e in found] == [url]


# Openings of each platform's embeds, repeated without ever closing: a pattern that backtracks without bound takes
# minutes over this; a bounded one takes well under a second (0.4 s at most for all five platforms when written).
UNCLOSED = (
    '<iframe src="https://player.vimeo.com/video/1',
    '<div class="wistia_embed wistia_async_abcdefghij ',
    '<script src="https://fast.wistia.com/embed/medias/abcdefghij.jsonp" async></script>',
    'jwplayer("a").setup({"playlist": "https://cdn.jwplayer.com/v2/media/abcdefgh"',
    '<div style="padding-bottom:1%"><iframe src="https://cdn.jwplayer.com/players/abcdefgh-abcdefgh.html"',
    '<video-js data-account="1" ',
    "<script>kWidget.embed({",
    "<script>KalturaPlayer.setup(",
    '<iframe src="https://cdnapisec.kaltura.com/p/1/embedPlaykitJs/uiconf_id/1?',
    "https://cdnapisec.kaltura.com/p/1/sp/100/playManifest/entryId/0_abcdefgh/x",
)


@pytest.mark.parametrize("opening", UNCLOSED)
def test_unclosed_openings_are_passed_over_in_linear_time(opening: str) -> None:
    text = opening * (50_000 // len(opening))
    started = time.perf_counter()
    for platform in PLATFORMS:
        for form in _registered(platform):
            form.find(text)
    assert time.perf_counter() - started < 5.0
