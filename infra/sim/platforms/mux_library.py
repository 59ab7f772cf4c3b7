"""The "mux" profile's library, what a viewer sees first (issue 42): each asset's default thumbnail and its chapters,
computed from the video's index like the rest of the library (infra/sim/library.py), and served where Mux serves
them (image.mux.com, stream.mux.com: both at `/_play/mux/...` here). The profile's source side only: a target's
assets are not touched.

Documents (docs.mux.com):

- "Set a default thumbnail for a video": `thumbnail_time`, "a media time in seconds ... it applies to every
  default thumbnail request for the asset across all of its playback IDs"; "Once set, thumbnail_time is included
  in the asset object. It is omitted entirely when no value is set". Every other library asset (even index) has
  one, a quarter into it.
- "Get images from a video": `https://image.mux.com/{PLAYBACK_ID}/thumbnail.{png|jpg|webp}`, "If you don't include
  any [parameter], Mux will default to choosing an image from the middle of your video". Here the JPEG (a real
  one, media.THUMBNAIL; png and webp are not served); a signed playback id's "Using signed URLs": a token of
  audience `t` (thumbnail), else 403 (mux_signing.token_problem).
- "Add chapters": "Mux stores chapters as a track on the asset, the same way subtitles ... work", `type` text,
  `text_type` chapters: on the library videos the `library_chapters_every` knob names (chapter_cues.py, which
  gives their chapters too; 0, the default: none, so mux-python 5.1.2, whose Track allows `text_type`
  subtitles only, reads every asset of a library without them).
- The Stream API reference, "Retrieve chapters": `GET https://stream.mux.com/{PLAYBACK_ID}/chapters/{TRACK_ID}.json`,
  "Fetch the chapters for an asset as JSON. This is only possible for assets with a text track where text_type is
  chapters", `token` "Signed token (JWT) for secure video playback" (audience `v` here, as the text tracks beside
  it); the answer is Apple's HLS chapter notation, `[{"chapter": 1, "start-time": 0, "titles": [{"language": "en",
  "title": "Introduction"}]}, ...]`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping

from .. import media
from ..config import SimConfig
from ..library import Item
from .chapter_cues import cues, has_chapters
from .mux_signing import THUMBNAIL, VIDEO, token_of, token_problem

THUMBNAIL_TIME_EVERY = 2


def chapters_track_id(video: Item) -> str:
    return f"CH{video.index:08d}"


def thumbnail_time(video: Item) -> float | None:
    """The asset's `thumbnail_time` (None: not set, and omitted from the asset)."""
    return round(video.duration / 4, 2) if video.index % THUMBNAIL_TIME_EVERY == 0 else None


def chapters_track(cfg: SimConfig, video: Item) -> list[dict]:
    """The asset's chapters text track, as the asset lists it (Track: type text, text_type chapters)."""
    if not has_chapters(cfg, video.index):
        return []
    track = {"id": chapters_track_id(video), "type": "text", "text_type": "chapters", "text_source": "uploaded"}
    return [{**track, "language_code": "en", "name": "English", "status": "ready"}]


def chapters(video: Item) -> list[dict]:
    """The chapters in Apple's notation (chapter_cues.cues: each start and title)."""
    return [
        {"chapter": n, "start-time": start, "titles": [{"language": "en", "title": title}]}
        for n, (start, _end, title) in enumerate(cues(video), 1)
    ]


def serve(cfg: SimConfig, video: Item, pid: str, rest: list[str], query: str, held: Mapping) -> media.Answer | None:
    """A library asset's default thumbnail (`thumbnail.jpg`) or chapters (`chapters/{track}.json`) by its playback
    id `pid`; None for any other path (the profile answers those)."""
    if rest == ["thumbnail.jpg"]:
        audience, body, kind = THUMBNAIL, media.THUMBNAIL, "image/jpeg"
    elif len(rest) == 2 and rest[0] == "chapters" and rest[1].endswith(".json"):
        if [t["id"] for t in chapters_track(cfg, video)] != [rest[1].removesuffix(".json")]:
            return 404, media.TEXT, b"no such chapters track\n"
        audience, body, kind = VIDEO, json.dumps(chapters(video)).encode(), "application/json"
    else:
        return None
    if video.private:
        problem = token_problem(token_of(query), pid, audience, held, time.time())
        if problem:
            return 403, media.TEXT, f"{problem}\n".encode()
    return 200, kind, body
