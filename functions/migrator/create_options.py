"""The provider options an operator may set on a create, and the check of each value (pure).

Per provider, each option goes by the provider's own field name and takes what its API
reference says. The same checks serve three places: the stack's template parameters (the
uploader's environment, read by settings.py), a row's `options.<provider>` at load time
(`migrator load` refuses the row, with the reason) and at create time (a value that still does
not pass is left out, and a note says so: the row was sent by something other than our load).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .redact import strip_controls

# Mux: mux-python 5.1.2 CreateAssetRequest (generated from Mux's OpenAPI): `video_quality` basic | plus |
# premium, `max_resolution_tier` 1080p | 1440p | 2160p, `static_renditions` [{resolution}] (the current form of
# the deprecated `mp4_support`; the two may not be combined), `test` a boolean.
MUX_VIDEO_QUALITIES = ("basic", "plus", "premium")
MUX_RESOLUTION_TIERS = ("1080p", "1440p", "2160p")
MUX_STATIC_RESOLUTIONS = ("highest", "audio-only", "2160p", "1440p", "1080p", "720p", "540p", "480p", "360p", "270p")
# Cloudflare: cloudflare-python 5.9.0 stream.copy.create: `thumbnailTimestampPct` a number from 0 to 1 (Cloudflare's
# OpenAPI schema stream_thumbnailTimestampPct: minimum 0, maximum 1), `allowedOrigins` a list of domains, `*` for
# wildcard subdomains ("Empty arrays allow the video to be viewed on any origin").
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_ORIGIN = re.compile(rf"^(\*\.)?{_LABEL}(\.{_LABEL})*(:\d{{1,5}})?$")
MAX_ORIGIN_LENGTH = 253
# api.video: oas_apivideo.yaml video-creation-payload: `mp4Support` a boolean, `playerId` a string.
_PLAYER_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class OptionError(ValueError):
    """A stack option's value that its check refuses (settings.py words it as a SettingsError)."""


@dataclass(frozen=True)
class Option:
    """One create option: its name (the provider's field), the uploader's environment variable for the
    stack's value, the check of a value (why it is refused, or None), and the value from that variable."""

    name: str
    env: str
    check: Callable[[object], str | None]
    parse: Callable[[str], object]
    # A setting of the provider's account the stack declares, which no row may set (Bunny's library security).
    stack_only: bool = False


def _one_of(values: tuple[str, ...]) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        return None if value in values else f"must be one of {', '.join(values)}"

    return check


def _distinct_of(values: tuple[str, ...]) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        if not isinstance(value, list) or any(v not in values for v in value) or len(set(value)) != len(value):
            return f"must be a list of distinct values from {', '.join(values)}"
        return None

    return check


def _boolean(value: object) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _fraction(value: object) -> str | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1
    return None if ok else "must be a number from 0 to 1 (a fraction of the duration)"


def _origins(value: object) -> str | None:
    if not isinstance(value, list) or not all(
        isinstance(v, str) and len(v) <= MAX_ORIGIN_LENGTH and _ORIGIN.match(v) for v in value
    ):
        return "must be a list of domains (example.com, *.example.com)"
    return None


def _player_id(value: object) -> str | None:
    ok = isinstance(value, str) and _PLAYER_ID.match(value)
    return None if ok else "must be a player id (letters, digits, - and _)"


def _text_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError("true or false")
    return lowered == "true"


def _text_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _text(text: str) -> str:
    return text.strip()


OPTIONS: dict[str, tuple[Option, ...]] = {
    "generic": (),
    "mux": (
        Option("video_quality", "MUX_VIDEO_QUALITY", _one_of(MUX_VIDEO_QUALITIES), _text),
        Option("max_resolution_tier", "MUX_MAX_RESOLUTION_TIER", _one_of(MUX_RESOLUTION_TIERS), _text),
        Option("static_renditions", "MUX_STATIC_RENDITIONS", _distinct_of(MUX_STATIC_RESOLUTIONS), _text_list),
        Option("test", "MUX_TEST", _boolean, _text_bool),
    ),
    "cloudflare": (
        Option("thumbnailTimestampPct", "CLOUDFLARE_THUMBNAIL_PCT", _fraction, float),
        Option("allowedOrigins", "CLOUDFLARE_ALLOWED_ORIGINS", _origins, _text_list),
    ),
    "apivideo": (
        Option("mp4Support", "APIVIDEO_MP4_SUPPORT", _boolean, _text_bool),
        Option("playerId", "APIVIDEO_PLAYER_ID", _player_id, _text),
    ),
    # Bunny Stream: whether the stack's video library has token authentication on (embed view and CDN:
    # docs.bunny.net/stream/security), the operator's word for a library setting the video API cannot read.
    "bunny": (Option("tokenAuthentication", "BUNNY_TOKEN_AUTHENTICATION", _boolean, _text_bool, stack_only=True),),
    # The aws target: `mp4` a boolean, our own word (the job then also writes one 720p MP4 for download: a FILE group
    # with an MP4 container, MediaConvert's apireference/jobs.html ContainerSettings).
    "aws": (Option("mp4", "AWS_MP4", _boolean, _text_bool),),
}


def stack_options(env: Mapping[str, str]) -> dict[str, dict[str, object]]:
    """Every provider's options the stack sets (an empty variable sets nothing); OptionError names
    the variable whose value does not pass."""
    out: dict[str, dict[str, object]] = {}
    for provider, options in OPTIONS.items():
        chosen: dict[str, object] = {}
        for option in options:
            raw = env.get(option.env, "").strip()
            if not raw:
                continue
            try:
                value = option.parse(raw)
            except ValueError:
                value = raw
            problem = option.check(value)
            if problem:
                raise OptionError(f"{option.env} {problem}, got {raw!r}")
            chosen[option.name] = value
        out[provider] = chosen
    return out


def row_problems(provider: str, options: Mapping[str, object]) -> list[str]:
    """Why a row's `options.<provider>` cannot be used as it is (empty: it can). Sections for other
    providers are not looked at: one inventory may carry options for several targets."""
    section = options.get(provider)
    if section is None:
        return []
    if not isinstance(section, dict):
        return [f"options.{provider} must be an object"]
    known = {option.name: option for option in OPTIONS.get(provider, ()) if not option.stack_only}
    problems = []
    for key, value in section.items():
        option = known.get(key)
        if option is None:
            names = ", ".join(known) or "none"
            shown = strip_controls(key)[:60]
            problems.append(f"options.{provider}.{shown} is not an option of {provider} (known: {names})")
            continue
        problem = option.check(value)
        if problem:
            problems.append(f"options.{provider}.{key} {problem}")
    return problems


def chosen_options(
    provider: str, stack: Mapping[str, object], options: Mapping[str, object]
) -> tuple[dict[str, object], list[str]]:
    """The options a create uses: the row's `options.<provider>` over the stack's, and a note for each
    row value left out (unknown, or refused by its check: the stack's value stands)."""
    chosen = dict(stack)
    section = options.get(provider)
    if section is None:
        return chosen, []
    if not isinstance(section, dict):
        return chosen, [f"options.{provider}: not an object (ignored)"]
    known = {option.name: option for option in OPTIONS.get(provider, ()) if not option.stack_only}
    notes = []
    for key, value in section.items():
        option = known.get(key)
        if option is None:
            notes.append(f"options.{provider}.{strip_controls(key)[:60]}: not an option of {provider} (ignored)")
        elif option.check(value):
            notes.append(f"options.{provider}.{key}: {option.check(value)} (ignored)")
        else:
            chosen[key] = value
    return chosen, notes
