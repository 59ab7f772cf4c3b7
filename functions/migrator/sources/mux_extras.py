"""What a viewer sees on Mux besides the video (issue 42), read for the row: the poster frame and the chapters. The
readers are pure over Mux's answers. Mux has no collections (an asset belongs to no folder or playlist: none is
read) and no publish time (`created_at` is carried already).

Documents: docs.mux.com "Get images from a video", "Set a default thumbnail for a video", "Secure video playback",
"Add chapters", and the Stream API reference "Retrieve chapters":

- the poster: a Mux asset has no image of its own; `https://image.mux.com/{PLAYBACK_ID}/thumbnail.{png|jpg|webp}`
  is a frame: "If you don't include any [parameter], Mux will default to choosing an image from the middle of
  your video", unless the asset's `thumbnail_time` is set ("When you request a thumbnail from image.mux.com
  without a time parameter, Mux picks a frame from the middle of the video. Set thumbnail_time on the asset to
  choose that frame yourself ... it applies to every default thumbnail request for the asset across all of its
  playback IDs"; "It is omitted entirely when no value is set"). So the row's `poster_time_s` is that time,
  else the middle of the duration, and its `thumbnail_url` the default thumbnail, what a viewer sees: a public
  playback id's link as it is (it lasts; no time in it: Mux applies the asset's own), a signed (or DRM) one's
  as the reference `mux://<asset>/thumbnail/<playback id>`, signed when it is fetched with a token of audience
  `t` ("thumbnail"), as the stack signs text tracks;
- chapters: "Mux stores chapters as a track on the asset, the same way subtitles ... work": a text track with
  `text_type` chapters. Its chapters are served as JSON, `GET https://stream.mux.com/{PLAYBACK_ID}/chapters/
  {TRACK_ID}.json` ("Fetch the chapters for an asset as JSON. This is only possible for assets with a text
  track where text_type is chapters"; `token`, "Signed token (JWT) for secure video playback"), Apple's HLS
  chapter notation: `[{"chapter": 1, "start-time": 0, "titles": [{"language": "en", "title": "Introduction"}]}]`.
  Carried as a chapters track `mux://<asset>/chapters/<track id>`, resolved to that JSON read as WebVTT
  chapter cues (`chapters_webvtt`), the form the tracks worker reads every chapters track in.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..extras import chapters_webvtt
from ..providers.facts import entries, finite_number, mapping, text
from ..row_extras import Chapter
from .rows import ChapterInfo, chapter_docs, seconds

CHAPTERS_TEXT_TYPE = "chapters"
THUMBNAIL_FILE = "thumbnail.jpg"


def is_chapters(track: Mapping) -> bool:
    """Whether a text track of the asset is its chapters (else a caption or subtitle track)."""
    return track.get("text_type") == CHAPTERS_TEXT_TYPE


def poster_time(asset: Mapping) -> float | None:
    """The frame a viewer sees before playing: the asset's `thumbnail_time`, else the middle of its duration."""
    chosen = finite_number(asset.get("thumbnail_time"))
    if chosen is not None and chosen >= 0:
        return chosen
    duration = seconds(asset.get("duration"))
    return round(duration / 2, 3) if duration else None


def title_of(entry: Mapping, language: str | None) -> object:
    """A chapter's title in `language` (the track's), else its first; Apple's notation lists one a language."""
    titles = [mapping(t) for t in entries(entry.get("titles"))]
    chosen = next((t for t in titles if language and t.get("language") == language), titles[0] if titles else {})
    return chosen.get("title")


def read_apple_chapters(body: object, language: str | None = None) -> list[ChapterInfo]:
    """The chapters of Apple's HLS chapter notation (a list of {start-time, titles[]}), as Mux serves a chapters
    track; anything else gives none."""
    found = body if isinstance(body, list) else []
    return [ChapterInfo(mapping(e).get("start-time"), title_of(mapping(e), language)) for e in found]


def chapters_text(body: object, language: str | None, duration_s: float | None) -> str | None:
    """The chapters Mux serves as a WebVTT chapters file (cleaned as a row's are); None where there are none."""
    docs = chapter_docs(read_apple_chapters(body, language), duration_s)
    if not docs:
        return None
    return chapters_webvtt(tuple(Chapter(d["start_s"], d["title"]) for d in docs), duration_s).decode("utf-8")


def thumbnail_link(image_url: str, playback_id: str) -> str:
    """The default thumbnail of a public playback id (its query-less link: Mux applies the asset's thumbnail_time)."""
    return f"{image_url}/{playback_id}/{THUMBNAIL_FILE}"


def playback_ids(asset: Mapping) -> list[tuple[str, str]]:
    """(policy, id) of each playback id of the asset."""
    out = []
    for playback in entries(asset.get("playback_ids")):
        playback = mapping(playback)
        pid, policy = text(playback.get("id")), text(playback.get("policy"))
        if pid and policy and pid.isalnum():
            out.append((policy, pid))
    return out
