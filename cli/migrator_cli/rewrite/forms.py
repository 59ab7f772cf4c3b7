"""The registry of source embed forms, and finding them in a text (pure).

Each source platform's module (rewrite/sources/<platform>.py) registers its forms once, at import; `find` runs them
all over a text and keeps, where two overlap, the one that starts first and, of those, the longest (a Wistia async
embed's block wins over the JSON-P URL inside it), so one embed is rewritten once.
"""

from __future__ import annotations

from collections.abc import Iterable

from .model import Embed, Form

_FORMS: dict[str, Form] = {}
# What every embed of a platform holds, whichever its form: its hosts, or its script embed's own names (lower case).
# A text holding none of any platform's (most of a dump's values) is passed over in one scan instead of one per form,
# and a text holding some is searched by those platforms' forms only. tests/unit/test_rewrite_corpus.py holds every
# documented snippet to its platform's marks.
PLATFORM_MARKS = {
    "vimeo": ("vimeo.com", "data-vimeo-"),
    "wistia": ("wistia.", "wi.st/", "wistia_async_", "<wistia-player"),
    "jwplayer": ("jwplayer", "jwplatform"),
    "brightcove": ("brightcove", "<video-js", "video-js"),
    "kaltura": ("kaltura", "kwidget"),
    "mux": ("mux.com", "<mux-player", "<mux-video"),
    "cloudflare": ("videodelivery.net", "cloudflarestream.com", "<stream"),
    "apivideo": ("api.video", "playersdk"),
    "s3": ("amazonaws.com",),
    "gcs": ("googleapis.com",),
    "azure": ("windows.net",),
    "bunny": ("mediadelivery.net", "b-cdn.net", "bunnycdn.com"),
}
_ALL: tuple[Form, ...] = ()
_BY_PLATFORM: dict[str, tuple[Form, ...]] = {}
_MARK_PLATFORMS: dict[str, tuple[str, ...]] = {}
_MARKED = False  # every registered platform has marks


def register(*forms: Form) -> None:
    for form in forms:
        if form.name in _FORMS:
            raise ValueError(f"rewrite form {form.name!r} is registered twice")
        if not form.name.startswith(form.platform + "."):
            raise ValueError(f"rewrite form {form.name!r} must be named <platform>.<name>")
        _FORMS[form.name] = form
    global _ALL
    _ALL = ()


def all_forms() -> list[Form]:
    return list(_registered())


def _registered() -> tuple[Form, ...]:
    global _ALL, _MARKED
    if not _ALL:
        from . import sources  # noqa: F401  (importing it registers every platform's forms)

        _ALL = tuple(_FORMS.values())
        _BY_PLATFORM.clear()
        for form in _ALL:
            _BY_PLATFORM[form.platform] = (*_BY_PLATFORM.get(form.platform, ()), form)
        _MARK_PLATFORMS.clear()
        for platform, marks in PLATFORM_MARKS.items():
            for mark in marks:
                _MARK_PLATFORMS[mark] = (*_MARK_PLATFORMS.get(mark, ()), platform)
        # A platform without marks can match anything: then every text is searched by every form.
        _MARKED = not set(_BY_PLATFORM) - set(PLATFORM_MARKS)
    return _ALL


def _candidates(lowered: str) -> tuple[Form, ...]:
    """The forms that can match in a text (`lowered`: lower case): those of the platforms whose marks it holds.
    (A substring test per mark is several times faster than one case-blind pattern of them all.)"""
    forms = _registered()
    if not _MARKED:
        return forms
    platforms = {p for mark, owners in _MARK_PLATFORMS.items() if mark in lowered for p in owners}
    if len(platforms) == len(_BY_PLATFORM):
        return forms
    return tuple(f for p in sorted(platforms) for f in _BY_PLATFORM.get(p, ()))


def find(text: str, forms: Iterable[Form] | None = None) -> list[Embed]:
    """Every embed in `text`, in order, none overlapping another."""
    lowered = text.lower()
    if forms is None:
        forms = _candidates(lowered)
        if not forms:
            return []
    found: list[Embed] = []
    for form in forms:
        if form.hint and form.hint not in lowered:
            continue
        found.extend(form.find(text))
    return non_overlapping(found)


def non_overlapping(found: Iterable[Embed]) -> list[Embed]:
    """`found` in order of start; where two overlap, the one that starts first and, of those, the longest."""
    kept: list[Embed] = []
    for embed in sorted(found, key=lambda e: (e.start, -(e.end - e.start))):
        if kept and embed.start < kept[-1].end:
            continue
        kept.append(embed)
    return kept
