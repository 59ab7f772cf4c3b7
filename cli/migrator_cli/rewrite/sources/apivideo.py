"""api.video's embed forms: the embed.api.video player iframe and URL, the vod.api.video HLS manifest, MP4 and
thumbnail (a private video's with its token in the path), and the player SDK's `new PlayerSdk(...)` script (pure;
registered at import).

`video_id` is the videoId the api.video source names a video by: `vi` and alphanumerics (22 in the API's ids, 20 in
the project's simulator, 21 in one of api.video's own examples: 18 to 24 are taken). api.video's guides also show
a placeholder id (`a1B2c3D4e5f6z7Y8z9`) without the `vi`: not an id, so not taken. Documents:
- https://docs.api.video/delivery/video-privacy-access-management (`https://embed.api.video/vod/{video id}`,
  `https://vod.api.video/vod/{video id}/hls/manifest.m3u8`, and a private video's: the token "a query string"
  of the embed, a path segment `/token/{private token}/` of the rest);
- https://docs.api.video/docs/private-video-delivery-web-browser (the private iframe
  `https://embed.api.video/vod/{video id}?token={private token}`);
- https://docs.api.video/vod/video-object (the asset URLs `.../mp4/source.mp4`, `.../thumbnail.jpg`; not seen
  verbatim here);
- https://github.com/apivideo/api.video-player-sdk (`window.player = new PlayerSdk("#target", { id: "<VIDEO_ID>" })`
  and its options autoplay, muted, loop, hideControls, chromeless, hideTitle, hidePoster, token, ...).
The player's options in the embed URL's fragment (`#autoplay;loop;hide-controls;t=30`, semicolon-separated) are
read as the SDK's are (from the SDK's option names; the fragment syntax not seen verbatim in a document).
"""

from __future__ import annotations

import re
from dataclasses import replace

from .. import forms, markup
from ..model import AUTOPLAY, CONTROLS, HLS, IFRAME, LOOP, MP4, MUTED, PLAYER_URL, SCRIPT, START, THUMBNAIL, Embed, Form
from ._pieces import SCHEME, iframe_pattern, url_pattern

PLATFORM = "apivideo"
VIDEO_ID = r"vi[A-Za-z0-9]{18,24}(?![A-Za-z0-9])"
TOKEN = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
EMBED = SCHEME + r"(?i:embed\.api\.video)/vod/(?P<id>" + VIDEO_ID + r")"
VOD = SCHEME + r"(?i:vod\.api\.video)/vod/(?P<id>" + VIDEO_ID + r")(?:/token/(?P<token>" + TOKEN + r"))?"
# The player's switches (in the URL's fragment, or the SDK's options) in our words; `hide-controls` and `chromeless`
# both hide the controls.
SWITCHES = {
    "autoplay": (AUTOPLAY, "1"),
    "muted": (MUTED, "1"),
    "loop": (LOOP, "1"),
    "hide-controls": (CONTROLS, "0"),
    "hidecontrols": (CONTROLS, "0"),
    "chromeless": (CONTROLS, "0"),
}

PRIVACY_DOC = "https://docs.api.video/delivery/video-privacy-access-management"
PRIVATE_EMBED_DOC = "https://docs.api.video/docs/private-video-delivery-web-browser"
VIDEO_OBJECT_DOC = "https://docs.api.video/vod/video-object"
SDK_DOC = "https://github.com/apivideo/api.video-player-sdk"


def read_fragment(fragment: str) -> tuple[dict[str, str], list[str]]:
    """The player's options from an embed URL's fragment (`autoplay;loop;t=30`), and the rest as unknown."""
    options: dict[str, str] = {}
    unknown: list[str] = []
    for part in filter(None, (p.strip() for p in fragment.split(";"))):
        name, _, value = part.partition("=")
        switch = SWITCHES.get(name.lower())
        start = markup.seconds(value) if name.lower() == "t" else None
        if switch and not value:
            options[switch[0]] = switch[1]
        elif start is not None:
            options[START] = start
        else:
            unknown.append(part)
    return options, unknown


def _embed(match: re.Match[str], form: str, kind: str) -> Embed:
    url = match.group("src")
    params = markup.query(url)
    options, unknown = read_fragment(markup.fragment(url))
    unknown += [f"{k}={v}" if v else k for k, v in params.items() if k != "token"]
    private = "token" in params or bool(match.groupdict().get("token"))
    return Embed(
        match.start(), match.end(), form, PLATFORM, kind, match.group("id"), options, tuple(unknown), {}, private
    )


def _reader(form: str, kind: str):
    return lambda match: _embed(match, form, kind)


def _read_iframe(match: re.Match[str]) -> Embed:
    embed = _embed(match, "apivideo.player-iframe", IFRAME)
    return replace(embed, attributes=markup.kept_attributes(markup.attributes(match.group(0))))


# The SDK's script: `<script ...> [window.]player = new PlayerSdk("#target", { id: "vi...", ... }); </script>`.
SDK_SCRIPT = re.compile(
    r"<script\b[^>]{0,300}>\s*(?:(?:var|let|const)\s+)?(?:[\w$]{1,40}(?:\.[\w$]{1,40})?\s*=\s*)?"
    r"new\s+PlayerSdk\(\s*(?P<q>[\"'])[^\"'<>]{1,200}(?P=q)\s*,\s*(?P<options>\{[^{}<>]{0,3000}\})\s*\)\s*;?\s*"
    r"</script\s*>",
    re.IGNORECASE,
)
_SDK_ID = re.compile(r"""(?<![\w$])id\s*:\s*(["'])(?P<id>""" + VIDEO_ID + r""")\1""")
_SDK_OPTION = re.compile(
    r"""(?<![\w$])(?P<name>[A-Za-z]{1,40})\s*:\s*(?P<value>true|false|-?\d{1,9}(?:\.\d{1,6})?|(["'])[^"']{0,500}\3)"""
)
_SDK_OPTIONS = {"autoplay": AUTOPLAY, "muted": MUTED, "loop": LOOP, "hidecontrols": CONTROLS, "chromeless": CONTROLS}


def _read_sdk(match: re.Match[str]) -> Embed | None:
    body = match.group("options")
    named = _SDK_ID.search(body)
    if named is None:
        return None  # an id from a variable or a template: nothing the map can be asked about
    options: dict[str, str] = {}
    unknown: list[str] = []
    private = False
    for option in _SDK_OPTION.finditer(body):
        name, value = option.group("name"), option.group("value").strip("\"'")
        ours = _SDK_OPTIONS.get(name.lower())
        if name == "id":
            continue
        if name == "token":
            private = True
        elif ours and value in ("true", "false"):
            on = value == "true"
            options[ours] = ("0" if on else "1") if ours == CONTROLS else ("1" if on else "0")
        else:
            unknown.append(f"{name}={value}")
    return Embed(match.start(), match.end(), "apivideo.player-sdk", PLATFORM, SCRIPT, named.group("id"),
                 options, tuple(unknown), {}, private)  # fmt: skip


forms.register(
    Form(
        "apivideo.player-iframe",
        PLATFORM,
        IFRAME,
        iframe_pattern(EMBED),
        _read_iframe,
        PRIVATE_EMBED_DOC,
        lambda vid: (
            f'<iframe src="https://embed.api.video/vod/{vid}" width="100%" height="100%" frameborder="0" '
            'scrolling="no" allowfullscreen="true"></iframe>'
        ),
        "embed.api.video",
    ),
    Form(
        "apivideo.player-url",
        PLATFORM,
        PLAYER_URL,
        url_pattern(EMBED),
        _reader("apivideo.player-url", PLAYER_URL),
        PRIVACY_DOC,
        lambda vid: f"https://embed.api.video/vod/{vid}#autoplay;loop",
        "embed.api.video",
    ),
    Form(
        "apivideo.hls",
        PLATFORM,
        HLS,
        url_pattern(VOD + r"/hls/manifest\.m3u8"),
        _reader("apivideo.hls", HLS),
        PRIVACY_DOC,
        lambda vid: f"https://vod.api.video/vod/{vid}/hls/manifest.m3u8",
        "vod.api.video",
    ),
    Form(
        "apivideo.mp4",
        PLATFORM,
        MP4,
        url_pattern(VOD + r"/mp4/source\.mp4"),
        _reader("apivideo.mp4", MP4),
        VIDEO_OBJECT_DOC,
        lambda vid: f"https://vod.api.video/vod/{vid}/mp4/source.mp4",
        "vod.api.video",
    ),
    Form(
        "apivideo.thumbnail",
        PLATFORM,
        THUMBNAIL,
        url_pattern(VOD + r"/thumbnail\.jpg"),
        _reader("apivideo.thumbnail", THUMBNAIL),
        VIDEO_OBJECT_DOC,
        lambda vid: f"https://vod.api.video/vod/{vid}/thumbnail.jpg",
        "vod.api.video",
    ),
    Form(
        "apivideo.player-sdk",
        PLATFORM,
        SCRIPT,
        SDK_SCRIPT,
        _read_sdk,
        SDK_DOC,
        lambda vid: (
            '<script type="text/javascript">\n  window.player = new PlayerSdk("#target", {\n'
            f'    id: "{vid}",\n  }});\n</script>'
        ),
        "playersdk",
    ),
)
