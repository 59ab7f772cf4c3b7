"""The rewrite engine's decisions and splicing, the map's reading of export rows, and the report (pure)."""

from __future__ import annotations

import io
import re

import pytest
from migrator_cli.errors import CliError
from migrator_cli.rewrite import forms
from migrator_cli.rewrite.engine import ALREADY, Engine, Rewritten, decide
from migrator_cli.rewrite.idmap import IdMap, Missing, from_rows, read_export
from migrator_cli.rewrite.model import (
    IFRAME,
    MP4,
    TOKEN_MARKER,
    Destination,
    Embed,
    Form,
    NoEquivalent,
    Player,
    Rendered,
)
from migrator_cli.rewrite.targets import PLAYERS as REGISTERED

pytestmark = pytest.mark.unit

_FAKE = re.compile(r"<fake-embed id=\"(\w+)\"></fake-embed>")


def _read(match: re.Match) -> Embed | None:
    if match.group(1).startswith("bad"):
        return None  # a look-alike
    return Embed(match.start(), match.end(), "fakeplat.element", "fakeplat", IFRAME, match.group(1))


FAKE_FORM = Form("fakeplat.element", "fakeplat", IFRAME, _FAKE, _read, "https://example.org/doc", lambda i: i, "fake")


def _render(embed: Embed, where: Destination, original: str) -> Rendered:
    if where.remote_id == "nothing":
        return Rendered("  ", IFRAME)
    if where.remote_id == "none":
        raise NoEquivalent("no iframe for this one")
    token = f"?token={TOKEN_MARKER}" if where.signed else ""
    return Rendered(
        f'<iframe src="https://new.example/{where.remote_id}{token}"></iframe>', IFRAME, ("color",), where.signed
    )


PLAYERS = {"newplat": Player("newplat", _render, "https://example.org/target")}


def row(source_id: str, state: str = "ready", **extra) -> dict:
    return {
        "id": f"a-{source_id}",
        "source_platform": "fakeplat",
        "source_id": source_id,
        "source_url": f"fakeplat://{source_id}",
        "provider": "newplat",
        "remote_id": f"new-{source_id}",
        "player_url": f"https://new.example/{source_id}",
        "state": state,
        **extra,
    }


@pytest.fixture
def fake_forms(monkeypatch):
    monkeypatch.setattr(forms, "_candidates", lambda lowered: (FAKE_FORM,))


def test_decide_table():
    idmap = from_rows(
        [
            row("a1"),
            row("a2", playback_policy="signed", note="signed: needs a token"),
            row("a3", state="failed", note="source gone"),
            row("a4", state="queued"),
            row("a5", remote_id="none"),
            row("a6", remote_id="nothing"),
            {**row("a7"), "provider": "elsewhere"},
        ]
    )
    idmap.add_left_behind({"id": "lb", "source_url": "fakeplat://a8", "why": "plays > 0 is false: plays is 0"})

    def fate(video_id: str):
        return decide(Embed(0, 1, "fakeplat.element", "fakeplat", IFRAME, video_id), "x", idmap, PLAYERS)

    assert isinstance(fate("a1"), Rewritten) and "new-a1" in fate("a1").rendered.text
    signed = fate("a2")
    assert isinstance(signed, Rewritten) and signed.rendered.marked and TOKEN_MARKER in signed.rendered.text
    assert (fate("a3").reason, fate("a3").detail) == ("rejected", "failed: source gone")
    assert (fate("a4").reason, fate("a4").detail) == ("not moved yet", "state queued")
    assert (fate("a5").reason, fate("a5").detail) == ("no equivalent", "no iframe for this one")
    assert fate("a6").reason == "no equivalent"  # a blank rendering is never written
    assert fate("a7").reason == "no player"
    assert (fate("a8").reason, fate("a8").detail) == ("left behind", "plays > 0 is false: plays is 0")
    assert fate("zz").reason == "not in the map"
    assert fate("new-a1").reason == ALREADY  # a second run meets what the first wrote


def test_engine_splices_and_reports(fake_forms):
    idmap = from_rows([row("a1"), row("a3", state="failed")])
    engine = Engine(idmap, PLAYERS)
    engine.at("blog/post.html")
    text = 'x <fake-embed id="a1"></fake-embed> y <fake-embed id="bad1"></fake-embed> <fake-embed id="a3"></fake-embed>'
    out = engine.rewrite(text)
    assert out == (
        'x <iframe src="https://new.example/new-a1"></iframe> y <fake-embed id="bad1"></fake-embed>'
        ' <fake-embed id="a3"></fake-embed>'
    )
    report = engine.report
    assert report.found == {"fakeplat": 2} and report.rewritten == {"fakeplat": 1}
    assert report.left == {"rejected": 1} and report.dropped == {"color": 1}
    assert report.left_listed == [
        {
            "file": "blog/post.html",
            "platform": "fakeplat",
            "form": "fakeplat.element",
            "video_id": "a3",
            "reason": "rejected",
            "detail": "failed",
            "asset_id": "a-a3",
        }
    ]
    assert report.problems == 1
    # A second pass changes nothing, and what it meets is counted as already done, not as a problem.
    again = Engine(idmap, PLAYERS)
    assert again.rewrite(out) == out
    assert again.report.problems == 1 and again.report.rewritten == {}


def test_listed_urls_are_matched_whole(fake_forms):
    idmap = from_rows(
        [
            {
                "id": "u1",
                "source_platform": "https",
                "source_id": "u1",
                "source_url": "https://Files.Example.com/talks/a.mp4?sig=1&x=2",
                "provider": "newplat",
                "remote_id": "new-u1",
                "state": "ready",
            }
        ]
    )
    engine = Engine(idmap, PLAYERS)
    text = (
        '<a href="https://files.example.com/talks/a.mp4?sig=1&amp;x=2">talk</a>.'
        " https://files.example.com/talks/a.mp4?sig=1&x=2. https://files.example.com/talks/a.mp4.evil"
    )
    out = engine.rewrite(text)
    assert out.count("new-u1") == 2 and out.endswith("https://files.example.com/talks/a.mp4.evil")
    assert engine.report.forms == {"https.listed-url": 2}
    assert all(e["form"] != "https.listed-url" for e in engine.report.left_listed)
    assert MP4 == "mp4"


def test_map_reads_export_csv_and_jsonl_and_refuses_other_files():
    csv_text = (
        "id,source_platform,source_id,source_url,source_aliases,provider,remote_id,playback_id,playback_policy,"
        "hls_url,player_url,thumbnail_url,privacy,state,tracks,note\n"
        "m1,mux,ASSET1,mux://ASSET1,PB1 PB2,cloudflare,cf1,,,https://h/1.m3u8,javascript:alert(1),,,ready,,\n"
        "s1,s3,s1,s3://bucket/v/a.mp4,,cloudflare,cf2,,,https://h/2.m3u8,,,,ready,,\n"
        ",,,,,,,,,,,,,,,\n"
    )
    idmap = from_rows(read_export(io.StringIO(csv_text), "map.csv"))
    assert (idmap.rows, idmap.skipped) == (2, 1)
    by_alias = idmap.find("mux", "PB2")
    assert isinstance(by_alias, Destination) and by_alias.remote_id == "cf1"
    assert by_alias.player_url is None  # a URL that is not http(s) is not taken from the file
    assert isinstance(idmap.find("s3", "s3://bucket/v/a.mp4"), Destination)
    assert isinstance(idmap.find("mux", "ASSET1"), Destination)
    jsonl = '{"id": "v1", "source_platform": "vimeo", "source_id": "76979871", "state": "uploading"}\n'
    entry = from_rows(read_export(io.StringIO(jsonl), "map.jsonl")).find("vimeo", "76979871")
    assert isinstance(entry, Missing) and entry.reason == "not moved yet"
    with pytest.raises(CliError, match="lacks source_id, source_platform, state"):
        list(read_export(io.StringIO("a,b\n1,2\n"), "notes.csv"))
    with pytest.raises(CliError, match="line 2 is not JSON"):
        list(read_export(io.StringIO('{"id": "x"}\nnope\n'), "map.jsonl"))


def test_report_lines_and_json(fake_forms):
    idmap = IdMap()
    engine = Engine(idmap, PLAYERS)
    engine.at("a.md")
    engine.rewrite('<fake-embed id="q1"></fake-embed>')
    doc = engine.report.as_dict()
    assert doc["embeds"]["left"] == {"not in the map": 1} and doc["left"][0]["video_id"] == "q1"
    text = "\n".join(engine.report.lines(applied=False))
    assert "left        1 (not in the map 1)" in text and "a.md: fakeplat q1 (not in the map)" in text


def test_a_library_script_stays_while_an_embed_of_its_platform_stays():
    """Two Wistia async embeds on a page that loads E-v1.js once, with the first: the first moves, the second is
    left behind, so E-v1.js stays (the second would not play without it); the first's own JSON-P goes."""

    def async_embed(media: str, library: bool) -> str:
        script = '<script src="https://fast.wistia.com/assets/external/E-v1.js" async></script>\n' if library else ""
        return (
            f'<script src="https://fast.wistia.com/embed/medias/{media}.jsonp" async></script>\n{script}'
            f'<div class="wistia_embed wistia_async_{media}" style="height:360px;width:640px">&nbsp;</div>'
        )

    page = f"<p>one</p>\n{async_embed('g5pnf59ala', True)}\n<p>two</p>\n{async_embed('abcde12345', False)}\n"
    rows = [
        {**row("g5pnf59ala"), "source_platform": "wistia", "provider": "mux", "playback_id": "PBnew1"},
        {**row("abcde12345", state="failed"), "source_platform": "wistia"},
    ]
    out = Engine(from_rows(rows)).rewrite(page)
    assert "wistia_async_g5pnf59ala" not in out and "g5pnf59ala.jsonp" not in out and "PBnew1" in out
    assert out.count("E-v1.js") == 1 and "wistia_async_abcde12345" in out
    # With nothing of Wistia's left on the page, its library goes with the embed.
    alone = Engine(from_rows(rows[:1])).rewrite(f"<p>one</p>\n{async_embed('g5pnf59ala', True)}\n")
    assert "E-v1.js" not in alone and "PBnew1" in alone


def test_a_listed_url_is_a_page_where_a_link_points_at_it_and_a_file_where_a_player_plays_it():
    from migrator_cli.rewrite.engine import _listed_urls
    from migrator_cli.rewrite.model import HLS, PAGE

    url = "https://files.example.com/a.mp4"
    listed = {**row("u1"), "source_platform": "https", "source_url": url}
    refused = {
        **row("u2", state="rejected"),
        "source_platform": "https",
        "source_url": "https://files.example.com/b.m3u8",
    }
    idmap = from_rows([listed, refused])
    text = (
        f'<a href="{url}">a</a> [a]({url}) <video src="{url}"></video> {url}.'
        ' <source src="https://files.example.com/b.m3u8"> https://files.example.com/unknown.mp4'
    )
    kinds = [(e.kind, e.video_id) for e in _listed_urls(text, idmap)]
    assert kinds == [(PAGE, url), (PAGE, url), (MP4, url), (MP4, url), (HLS, "https://files.example.com/b.m3u8")]


@pytest.mark.parametrize(
    ("provider", "public", "expected"),
    [
        (
            "cloudflare",
            {
                "remote_id": "ea95132c15732412d22c1476fa83f27a",
                "hls_url": "https://customer-f33zs165nr7gyfy4.cloudflarestream.com/ea95132c15732412d22c1476fa83f27a"
                "/manifest/video.m3u8",
            },
            "https://customer-f33zs165nr7gyfy4.cloudflarestream.com/MIGRATOR-TOKEN-REQUIRED/iframe",
        ),
        (
            "bunny",
            {
                "remote_id": "0b5b4a4e-7d0a-4c4e-9a4f-6f0f0c2f1a11",
                "player_url": "https://iframe.mediadelivery.net/embed/76543/0b5b4a4e-7d0a-4c4e-9a4f-6f0f0c2f1a11",
            },
            "https://iframe.mediadelivery.net/embed/76543/SIGNEDID",
        ),
    ],
)
def test_a_signed_row_takes_the_host_the_other_rows_show(provider, public, expected):
    """A signed row's map holds no URL (export writes none that would not play); its embed is built on the account's
    host the map's public rows show, whichever comes first in the map."""
    signed = {**row("s1", playback_policy="signed", note="signed: needs a token"), "provider": provider}
    signed.update(remote_id="SIGNEDID", player_url="", hls_url="")
    public_row = {**row("p1"), "provider": provider, "player_url": "", **public}
    idmap = from_rows([signed, public_row])
    embed = Embed(0, 1, "fakeplat.element", "fakeplat", IFRAME, "s1")
    outcome = decide(embed, '<iframe src="x"></iframe>', idmap, REGISTERED)
    assert isinstance(outcome, Rewritten), outcome
    assert expected in outcome.rendered.text and outcome.rendered.marked
