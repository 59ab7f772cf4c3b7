"""An account's collections, read once a sweep (issue 42): what the platform names on no video (Brightcove's and JW
Player's playlists), so the listing reads the account's collections once, on the first video that asks, and keeps
which hold each video for the rest of the sweep, never a request a video.

Credentials the platform refuses the collections (401/403: `SourceDenied`) list none, and `refused` says why, for
each row to carry in its metadata: the videos are listed still, without those collections.
"""

from __future__ import annotations

from typing import ClassVar

from .base import SourceDenied
from .rows import CollectionInfo


class CollectionIndex:
    """The collections that hold each video, read once (on the first `of`, by `_read`) and kept for the sweep."""

    # The note a row carries when the platform refused the read (the platform's words for what to grant).
    refusal: ClassVar[str] = "the source refused to list its collections: none carried"

    def __init__(self) -> None:
        self._held: dict[str, list[CollectionInfo]] | None = None
        self.refused: str | None = None  # why no collection could be read, for each row to say

    def of(self, video_id: str) -> list[CollectionInfo]:
        if self._held is None:
            try:
                self._held = self._read()
            except SourceDenied:
                self._held, self.refused = {}, self.refusal
        return self._held.get(video_id, [])

    def _read(self) -> dict[str, list[CollectionInfo]]:
        """{video id: the collections that hold it, each with the video's place where the platform keeps one}."""
        raise NotImplementedError
