"""The rewrite's target players (rewrite/targets/): each target writes the embed's kind for a map row, in the forms
its documents give, with the options it has words for, the marker where a signed video's token goes, and a clear
reason where it has nothing of that kind; never an empty text.

Expected URLs are the targets' documented shapes, each with its page: Mux https://www.mux.com/docs/guides/player-mux-com
(`player.mux.com/{PLAYBACK_ID}`), .../modify-playback-behavior (`?token=`); Cloudflare
https://developers.cloudflare.com/stream/viewing-videos/using-the-stream-player (`customer-<CODE>.cloudflarestream.com
/<VIDEO_UID>/iframe`, a token in place of the uid); api.video https://docs.api.video/docs/private-video-delivery-web-
browser (`embed.api.video/vod/{id}?token=`); Bunny https://docs.bunny.net/docs/stream-embedding-videos
(`iframe.mediadelivery.net/embed/{library}/{video}?autoplay=true&...`) and .../stream-video-storage-structure; JW Player
(`cdn.jwplayer.com/players/{media}-{player}.js`, the dashboard's embed code, not seen verbatim); Vimeo
https://developer.vimeo.com/apis/oembed.
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlsplit

import pytest
from migrator_cli.rewrite import markup
from migrator_cli.rewrite.model import (
    DASH,
    ELEMENT,
    HLS,
    IFRAME,
    KINDS,
    MP4,
    OEMBED,
    PAGE,
    PLAYER_URL,
    SCRIPT,
    THUMBNAIL,
    TOKEN_MARKER,
    Destination,
    Embed,
    NoEquivalent,
)
from migrator_cli.rewrite.targets import PLAYERS, player_for

pytestmark = pytest.mark.unit

PROVIDERS = ("mux", "cloudflare", "apivideo", "bunny", "jwplayer", "vimeo", "generic", "aws")

# Each target's row as `migrator export` writes it for a ready public video (cutover.row_of over the adapter's
# playback), and the settings an operator gives where the target needs them.
ROWS = {
    "mux": Destination(
        "a1", "mux", "asset1", "PID1", "https://stream.mux.com/PID1.m3u8", "https://player.mux.com/PID1",
        "https://image.mux.com/PID1/thumbnail.jpg",
    ),
    "cloudflare": Destination(
        "a1", "cloudflare", "uid1", "uid1", "https://customer-f33zs165nr7gyfy4.cloudflarestream.com/uid1/manifest/video.m3u8",
        "https://customer-f33zs165nr7gyfy4.cloudflarestream.com/uid1/watch",
        "https://customer-f33zs165nr7gyfy4.cloudflarestream.com/uid1/thumbnails/thumbnail.jpg",
    ),
    "apivideo": Destination(
        "a1", "apivideo", "vi1", "vi1", "https://vod.api.video/vod/vi1/hls/manifest.m3u8",
        "https://embed.api.video/vod/vi1", "https://vod.api.video/vod/vi1/thumbnail.jpg",
    ),
    "bunny": Destination(
        "a1", "bunny", "g1", "g1", "https://vz-a1b2.b-cdn.net/g1/playlist.m3u8",
        "https://iframe.mediadelivery.net/embed/759/g1", "https://vz-a1b2.b-cdn.net/g1/thumbnail.jpg",
    ),
    "jwplayer": Destination(
        "a1", "jwplayer", "m1", "m1", "https://cdn.jwplayer.com/manifests/m1.m3u8", "https://cdn.jwplayer.com/previews/m1",
        "https://cdn.jwplayer.com/v2/media/m1/poster.jpg", settings={"player_id": "P1"},
    ),
    "vimeo": Destination(
        "a1", "vimeo", "123", "123", None, "https://vimeo.com/123", "https://i.vimeocdn.com/video/9_640",
    ),
    "generic": Destination(
        "a1", "generic", "x1", "x1", "https://media.example.com/x1.m3u8", "https://media.example.com/p/x1",
        "https://media.example.com/x1.jpg",
    ),
    "aws": Destination(
        "a1", "aws", "a1", None, "https://d1.cloudfront.net/public/a1/index.m3u8", None,
        "https://d1.cloudfront.net/public/a1/poster.0000000.jpg",
    ),
}  # fmt: skip
# What a signed row holds: no URL (cutover writes none that would not play), and the operator's settings.
SETTINGS = {"customer_code": "f33zs165nr7gyfy4", "library_id": "759", "cdn_host": "vz-a1b2.b-cdn.net"}

# A Vimeo iframe as the Vimeo form reads it (github.com/vimeo/player.js "Pre-existing player").
VIMEO_IFRAME = (
    '<iframe src="https://player.vimeo.com/video/76979871?h=8272103f6e&amp;autoplay=1&amp;muted=1&amp;color=ff0000'
    '#t=30s" width="640" height="360" frameborder="0" allowfullscreen allow="autoplay; encrypted-media"></iframe>'
)
EMBED = Embed(
    0, len(VIMEO_IFRAME), "vimeo.player-iframe", "vimeo", IFRAME, "76979871",
    options={"autoplay": "1", "muted": "1", "start": "30"}, unknown=("color=ff0000",),
    attributes={"width": "640", "height": "360", "frameborder": "0", "allowfullscreen": "",
                "allow": "autoplay; encrypted-media"},
)  # fmt: skip


def render(provider: str, embed: Embed = EMBED, destination: Destination | None = None, original: str = VIMEO_IFRAME):
    return PLAYERS[provider].render(embed, destination or ROWS[provider], original)


def src_of(text: str) -> str:
    return markup.attributes(text[text.index("<iframe") :])["src"]


def test_every_target_has_a_player_and_an_unknown_one_is_named():
    assert set(PLAYERS) == set(PROVIDERS)
    assert all(player_for(p).provider == p and player_for(p).cite for p in PROVIDERS)
    with pytest.raises(KeyError, match="no rewrite target 'wistia': one of apivideo, aws, bunny"):
        player_for("wistia")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("signed", [False, True])
def test_every_kind_is_written_or_refused_with_a_reason_never_emptied(provider, kind, signed):
    row = ROWS[provider]
    if signed:
        row = replace(row, signed=True, hls_url=None, player_url=None, thumbnail_url=None,
                      settings={**row.settings, **SETTINGS})  # fmt: skip
    try:
        rendered = render(provider, replace(EMBED, kind=kind), row)
    except NoEquivalent as refused:
        assert str(refused).strip() and len(str(refused)) > 20
        return
    assert rendered.text.strip() and rendered.kind in KINDS
    assert rendered.marked == (TOKEN_MARKER in rendered.text) == signed
    assert "76979871" not in rendered.text  # nothing of the source's video is left


@pytest.mark.parametrize(
    ("provider", "src", "dropped"),
    [
        # Mux: boolean parameters on when present; the start as start-time (player-mux-com-reference).
        ("mux", "https://player.mux.com/PID1?autoplay=true&muted=true&start-time=30", ("color=ff0000",)),
        (
            "cloudflare",
            "https://customer-f33zs165nr7gyfy4.cloudflarestream.com/uid1/iframe?autoplay=true&muted=true&startTime=30",
            ("color=ff0000",),
        ),
        # api.video has no fragment for starting muted ("HTML5 Player URL Fragments").
        ("apivideo", "https://embed.api.video/vod/vi1#autoplay;t=30", ("muted=1", "color=ff0000")),
        ("bunny", "https://iframe.mediadelivery.net/embed/759/g1?autoplay=true&muted=true&t=30s", ("color=ff0000",)),
        (
            "jwplayer",
            "https://cdn.jwplayer.com/players/m1-P1.html",
            ("autoplay=1", "muted=1", "start=30", "color=ff0000"),
        ),
        ("vimeo", "https://player.vimeo.com/video/123?autoplay=1&muted=1#t=30s", ("color=ff0000",)),
        ("generic", "https://media.example.com/p/x1", ("autoplay=1", "muted=1", "start=30", "color=ff0000")),
    ],
)
def test_an_iframe_becomes_the_targets_iframe_with_its_own_parameters(provider, src, dropped):
    rendered = render(provider)
    assert rendered.kind == IFRAME and not rendered.marked
    assert src_of(rendered.text) == src
    assert rendered.dropped == dropped
    # The embed's attributes, in their order, after the new src.
    assert list(markup.attributes(rendered.text)) == [
        "src",
        "width",
        "height",
        "frameborder",
        "allowfullscreen",
        "allow",
    ]
    assert markup.attributes(rendered.text)["allow"] == "autoplay; encrypted-media"  # the original's, kept


def test_the_map_s_own_player_url_is_preferred_a_simulators_included():
    sim = "http://127.0.0.1:5000/_play"
    mux = replace(ROWS["mux"], player_url=f"{sim}/mux/PID1")
    assert src_of(render("mux", destination=mux).text).startswith(f"{sim}/mux/PID1?autoplay=true")
    api = replace(ROWS["apivideo"], player_url=f"{sim}/apivideo/vi1/player")
    assert src_of(render("apivideo", destination=api).text) == f"{sim}/apivideo/vi1/player#autoplay;t=30"
    # Stream's row holds its watch page: the iframe is its documented /iframe on the same host.
    cf = replace(ROWS["cloudflare"], player_url=f"{sim}/cloudflare/uid1/watch", hls_url=None)
    assert src_of(render("cloudflare", destination=cf).text).startswith(f"{sim}/cloudflare/uid1/iframe?")


def test_mux_adds_its_documented_allow_only_where_the_embed_had_none():
    bare = replace(EMBED, attributes={"width": "640", "height": "360"})
    written = markup.attributes(render("mux", bare).text)
    assert written["allow"] == "accelerometer; gyroscope; autoplay; encrypted-media; picture-in-picture;"
    assert "allow" not in markup.attributes(render("bunny", bare).text)  # Bunny's document does not ask for one


def test_a_url_writes_its_ampersands_as_its_text_did():
    url = replace(EMBED, kind=PLAYER_URL, attributes={})
    escaped = render("bunny", url, original="https://player.vimeo.com/video/76979871?autoplay=1&amp;muted=1")
    assert escaped.text == "https://iframe.mediadelivery.net/embed/759/g1?autoplay=true&amp;muted=true&amp;t=30s"
    plain = render("bunny", url, original="https://player.vimeo.com/video/76979871?autoplay=1&muted=1")
    assert plain.text == "https://iframe.mediadelivery.net/embed/759/g1?autoplay=true&muted=true&t=30s"
    assert plain.kind == PLAYER_URL


@pytest.mark.parametrize(
    ("provider", "kind", "written"),
    [
        (
            "mux",
            IFRAME,
            "https://player.mux.com/PID1?autoplay=true&muted=true&start-time=30&playback-token=" + TOKEN_MARKER,
        ),
        ("mux", HLS, f"https://stream.mux.com/PID1.m3u8?token={TOKEN_MARKER}"),
        (
            "cloudflare",
            HLS,
            f"https://customer-f33zs165nr7gyfy4.cloudflarestream.com/{TOKEN_MARKER}/manifest/video.m3u8",
        ),
        ("apivideo", IFRAME, f"https://embed.api.video/vod/vi1?token={TOKEN_MARKER}#autoplay;t=30"),
        ("apivideo", HLS, f"https://vod.api.video/vod/vi1/token/{TOKEN_MARKER}/hls/manifest.m3u8"),
        ("bunny", HLS, f"https://vz-a1b2.b-cdn.net/g1/playlist.m3u8?token={TOKEN_MARKER}&expires={TOKEN_MARKER}"),
        ("jwplayer", HLS, f"https://cdn.jwplayer.com/manifests/m1.m3u8?exp={TOKEN_MARKER}&sig={TOKEN_MARKER}"),
    ],
)
def test_a_signed_video_is_written_with_the_marker_where_its_token_goes(provider, kind, written):
    row = replace(ROWS[provider], signed=True, hls_url=None, player_url=None, thumbnail_url=None, settings=SETTINGS)
    rendered = render(provider, replace(EMBED, kind=kind), row, original="plain text")
    assert rendered.marked
    assert (src_of(rendered.text) if kind == IFRAME else rendered.text) == written


def test_a_signed_video_where_the_target_signs_nothing_is_refused_saying_why():
    with pytest.raises(NoEquivalent, match="Vimeo has no token for a private video"):
        render("vimeo", destination=replace(ROWS["vimeo"], signed=True))
    with pytest.raises(NoEquivalent, match="the generic target has no player URL"):
        render("generic", destination=replace(ROWS["generic"], signed=True, player_url=None))
    signed_hls = render("generic", replace(EMBED, kind=HLS), replace(ROWS["generic"], signed=True))
    assert signed_hls.text == f"https://media.example.com/x1.m3u8?token={TOKEN_MARKER}" and signed_hls.marked


SCRIPT_EMBED = replace(EMBED, kind=SCRIPT, form="wistia.async", attributes={}, options={"autoplay": "1"}, unknown=())


def test_a_script_embed_is_the_targets_script_where_it_has_one_else_an_iframe_said_so():
    mux = render("mux", SCRIPT_EMBED)
    assert mux.kind == SCRIPT
    assert mux.text == (
        '<script src="https://cdn.jsdelivr.net/npm/@mux/mux-player"></script>'
        '<mux-player playback-id="PID1" autoplay></mux-player>'
    )
    jw = render("jwplayer", SCRIPT_EMBED)
    assert (jw.kind, jw.text) == (SCRIPT, '<script src="https://cdn.jwplayer.com/players/m1-P1.js"></script>')
    assert jw.dropped == ("autoplay=1",)
    no_player = render("jwplayer", SCRIPT_EMBED, replace(ROWS["jwplayer"], settings={}))
    assert no_player.kind == IFRAME and src_of(no_player.text) == "https://cdn.jwplayer.com/previews/m1"
    assert "script embed written as an iframe" in no_player.dropped[0]
    cf = render("cloudflare", SCRIPT_EMBED)
    assert cf.kind == IFRAME and cf.dropped == ("script embed written as an iframe",)


def test_a_responsive_embed_keeps_its_sizing_in_the_targets_responsive_form():
    wrapped = replace(SCRIPT_EMBED, options={"responsive": "1"})
    cf = render("cloudflare", wrapped).text
    assert cf.startswith('<div style="position: relative; padding-top: 56.25%;"><iframe ')
    assert "position: absolute" in markup.attributes(cf[cf.index("<iframe") :])["style"]
    assert 'style="aspect-ratio: 16/9; width: 100%; border: 0;"' in render("mux", wrapped).text
    # Mux's iframe documents its own responsive style, no wrapper (player-mux-com).
    mux_iframe = render("mux", replace(EMBED, options={"responsive": "1"}, unknown=())).text
    assert mux_iframe.startswith("<iframe ") and "width=" not in mux_iframe
    assert markup.attributes(mux_iframe)["style"] == "aspect-ratio: 16/9; width: 100%; border: 0;"
    assert markup.query(src_of(render("bunny", wrapped).text))["responsive"] == "true"


def test_an_element_is_the_targets_element_where_it_has_one():
    element = replace(EMBED, kind=ELEMENT, platform="mux", attributes={"title": "Intro"}, options={}, unknown=())
    mux = render("mux", element)
    assert mux.kind == ELEMENT and mux.text == '<mux-player playback-id="PID1" title="Intro"></mux-player>'
    other = render("apivideo", replace(element, platform="wistia"))
    assert other.kind == IFRAME and other.dropped == ("player element written as an iframe",)


def test_pages_and_oembed_links():
    page = replace(EMBED, kind=PAGE, options={"start": "30"}, unknown=())
    assert render("vimeo", page).text == "https://vimeo.com/123#t=30s"
    assert render("cloudflare", page).text == "https://customer-f33zs165nr7gyfy4.cloudflarestream.com/uid1/watch"
    assert render("cloudflare", page).dropped == ("start=30",)  # the watch page takes no documented parameter
    # Bunny autoplays by default ("Supported Parameters"): an embed that did not is written autoplay=false.
    assert render("bunny", page).text == "https://iframe.mediadelivery.net/play/759/g1?autoplay=false&amp;t=30s"
    mux = render("mux", page)
    assert (mux.kind, mux.text) == (PLAYER_URL, "https://player.mux.com/PID1?start-time=30")
    oembed = replace(page, kind=OEMBED, options={})
    vimeo = render("vimeo", oembed)
    assert vimeo.kind == OEMBED and markup.query(vimeo.text) == {"url": "https://vimeo.com/123"}
    assert urlsplit(vimeo.text).path == "/api/oembed.json"
    api = render("apivideo", oembed)
    assert api.kind == PLAYER_URL and api.dropped == ("no oEmbed endpoint documented: the player URL written",)


@pytest.mark.parametrize(
    ("provider", "kind", "written", "note"),
    [
        ("mux", MP4, "https://stream.mux.com/PID1/highest.mp4", "static rendition"),
        (
            "cloudflare",
            MP4,
            "https://customer-f33zs165nr7gyfy4.cloudflarestream.com/uid1/downloads/default.mp4",
            "downloads",
        ),
        ("cloudflare", DASH, "https://customer-f33zs165nr7gyfy4.cloudflarestream.com/uid1/manifest/video.mpd", None),
        ("apivideo", MP4, "https://vod.api.video/vod/vi1/mp4/source.mp4", None),
        ("bunny", MP4, "https://vz-a1b2.b-cdn.net/g1/play_720p.mp4", "MP4 fallback"),
        ("aws", THUMBNAIL, "https://d1.cloudfront.net/public/a1/poster.0000000.jpg", None),
        ("jwplayer", THUMBNAIL, "https://cdn.jwplayer.com/v2/media/m1/poster.jpg", None),
    ],
)
def test_media_urls_of_the_same_kind_with_their_conditions_noted(provider, kind, written, note):
    rendered = render(provider, replace(EMBED, kind=kind), original="plain")
    assert (rendered.kind, rendered.text) == (kind, written)
    assert rendered.dropped[-4:] == ("autoplay=1", "muted=1", "start=30", "color=ff0000")  # a URL plays no options
    assert (note is None) == (len(rendered.dropped) == 4) and (note is None or note in rendered.dropped[0])


@pytest.mark.parametrize(
    ("provider", "kind", "destination", "reason"),
    [
        ("mux", DASH, ROWS["mux"], "Mux has no dash URL for this video: Mux streams HLS only"),
        ("apivideo", DASH, ROWS["apivideo"], "api.video has no dash URL"),
        ("vimeo", HLS, ROWS["vimeo"], "Vimeo has no hls URL"),
        ("jwplayer", MP4, ROWS["jwplayer"], "rendition template"),
        ("aws", IFRAME, ROWS["aws"], "the aws target has no player"),
        ("aws", MP4, ROWS["aws"], "AwsMp4"),
        ("generic", DASH, ROWS["generic"], "the generic target has no dash URL"),
        ("cloudflare", IFRAME, Destination("a", "cloudflare", "uid1"), "customer_code=<CODE>"),
        ("bunny", IFRAME, Destination("a", "bunny", "g1"), "library_id=<id>"),
        ("bunny", HLS, Destination("a", "bunny", "g1"), "cdn_host="),
        ("mux", IFRAME, Destination("a", "mux", "asset1"), "no playback id"),
    ],
)
def test_no_equivalent_says_which_target_and_why(provider, kind, destination, reason):
    with pytest.raises(NoEquivalent) as refused:
        render(provider, replace(EMBED, kind=kind), destination)
    assert reason in str(refused.value)


def test_settings_build_the_documented_urls_where_the_map_has_none():
    bunny = Destination("a", "bunny", "g1", settings={"library_id": "759", "cdn_host": "vz-a1b2.b-cdn.net"})
    assert src_of(render("bunny", destination=bunny).text).startswith("https://iframe.mediadelivery.net/embed/759/g1?")
    assert render("bunny", replace(EMBED, kind=HLS), bunny).text == "https://vz-a1b2.b-cdn.net/g1/playlist.m3u8"
    cf = Destination("a", "cloudflare", "uid1", settings={"customer_code": "abc"})
    assert src_of(render("cloudflare", destination=cf).text).startswith(
        "https://customer-abc.cloudflarestream.com/uid1/iframe?"
    )
    aws = replace(ROWS["aws"], settings={"mp4": "true"})
    assert render("aws", replace(EMBED, kind=MP4), aws).text == "https://d1.cloudfront.net/public/a1/video.mp4"


# The sources' own documented samples (rewrite/sources/<platform>.py `sample`), read by their forms: what the engine
# hands a player, wrapper and all.
SAMPLES = {"wistia": "abcde12345", "brightcove": "6310000000001", "jwplayer": "abCD1234"}


def found(form_name: str) -> tuple[Embed, str]:
    from migrator_cli.rewrite import forms

    (form,) = [f for f in forms.all_forms() if f.name == form_name]
    text = form.sample(SAMPLES[form.platform])
    (embed,) = forms.find(text, [form])
    return embed, text[embed.start : embed.end]


@pytest.mark.parametrize("form", ["jwplayer.player-iframe", "brightcove.player-iframe", "brightcove.in-page"])
def test_a_source_embed_with_its_responsive_wrapper_gets_the_targets_responsive_form(form):
    embed, original = found(form)
    text = PLAYERS["cloudflare"].render(embed, ROWS["cloudflare"], original).text
    assert text.startswith('<div style="position: relative; padding-top: 56.25%;"><iframe ') and text.endswith("</div>")
    assert markup.attributes(text[text.index("<iframe") :])["style"] == (
        "border: none; position: absolute; top: 0; left: 0; height: 100%; width: 100%;"
    )
    mux = PLAYERS["mux"].render(embed, ROWS["mux"], original).text
    assert "aspect-ratio: 16/9" in mux and "<div" not in mux


def test_a_fixed_size_wistia_async_embed_keeps_its_size_as_mux_player():
    embed, original = found("wistia.async-embed")
    rendered = PLAYERS["mux"].render(embed, ROWS["mux"], original)
    assert rendered.kind == SCRIPT and rendered.text.startswith(
        '<script src="https://cdn.jsdelivr.net/npm/@mux/mux-player">'
    )
    assert markup.attributes(rendered.text[rendered.text.index("<mux-player") :])["style"] == (
        "height:360px;position:relative;width:640px"
    )
    iframe = PLAYERS["bunny"].render(embed, ROWS["bunny"], original)
    assert (
        iframe.kind == IFRAME and "<div" not in iframe.text and iframe.dropped[0] == "script embed written as an iframe"
    )
