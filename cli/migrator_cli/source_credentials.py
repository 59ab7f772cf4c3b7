"""Where `migrator inventory --from PLATFORM` finds the source's credentials on the operator's machine: a file,
a named profile, the stack's secret format in one variable, or the platform's own environment variables.

Kept apart from the sweep (sweep.py): reading the operator's files and variables is one concern, listing a
library another."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from migrator.sources import HTTP_SOURCES, credentials_by_platform

from .errors import CliError

# Credentials from the environment, per platform, when no file or profile names them: each source's own
# `credential_env` (its fields and their variables, declared with the source's class).
ENV_CREDENTIALS = {platform: dict(cls.credential_env) for platform, cls in HTTP_SOURCES.items()}
PROFILES_FILE = Path("~/.config/video-migrator/sources.json")


def source_credentials(
    platform: str, file: str | None, profile: str | None, env: Mapping[str, str] = os.environ
) -> dict | None:
    """The platform's credentials: from `--credentials FILE`, else `--source-profile NAME` (a key of
    ~/.config/video-migrator/sources.json, or MIGRATOR_SOURCES_FILE), else MIGRATOR_SOURCE_CREDENTIALS
    (the stack's secret format as text), else the platform's own variables (VIMEO_TOKEN, ...). Each file
    holds `{"<platform>": {...}}`, the stack's secret format. Errors name the file, never a value."""
    if file:
        return _from_text(_read(Path(file)), file).get(platform)
    if profile:
        path = Path(env.get("MIGRATOR_SOURCES_FILE") or PROFILES_FILE).expanduser()
        profiles = _json_object(_read(path), str(path))
        if not isinstance(profiles.get(profile), dict):
            raise CliError(f"{path} has no source profile {profile!r}")
        return _from_text(json.dumps(profiles[profile]), f"profile {profile!r} of {path}").get(platform)
    if env.get("MIGRATOR_SOURCE_CREDENTIALS"):
        return _from_text(env["MIGRATOR_SOURCE_CREDENTIALS"], "MIGRATOR_SOURCE_CREDENTIALS").get(platform)
    names = ENV_CREDENTIALS.get(platform, {})
    found = {key: env[name] for key, name in names.items() if env.get(name)}
    return found if found and len(found) == len(names) else None


def _read(path: Path) -> str:
    try:
        return path.expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None


def _json_object(text: str, where: str) -> dict:
    try:
        doc = json.loads(text)
    except ValueError:
        raise CliError(f"{where} is not valid JSON") from None
    if not isinstance(doc, dict):
        raise CliError(f"{where} must hold a JSON object")
    return doc


def _from_text(text: str, where: str) -> dict:
    from migrator.providers.facts import CredentialsError

    try:
        return credentials_by_platform(text)
    except CredentialsError as exc:
        raise CliError(f"{where}: {exc}") from None
