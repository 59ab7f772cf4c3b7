"""The CLI's own release, as its installed package says: what `migrator --version` prints and what `migrator doctor`
compares with the deployed stack's. A leaf, so the commands and the entry point both import it."""

from __future__ import annotations


def cli_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("video-migrator")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"
