"""What an api.video video shows besides its file and captions (issue 42), for the "apivideo" profile: its custom
thumbnail, the frame picked as its poster, its chapters, and the update that rewrites its tags and metadata.
Each behaviour beside its document: oas_apivideo.yaml (apivideo/api.video-api-specification) and the official
Python client, api-video 1.4.7 (VideosApi.upload_thumbnail, pick_thumbnail, update; ChaptersApi).

- `POST /videos/{id}/thumbnail`: a multipart `file`, "The mime type should be image/jpeg, image/png or image/webp.
  The max allowed size is 8 MiB" (video-thumbnail-upload-payload); 200 with the video. The kind is read from the
  file's bytes (the simulator's reading of "mime type"); anything else is a 400.
- `PATCH /videos/{id}/thumbnail {"timecode"}`: "Frame in video to be used as a placeholder before the video plays",
  "Valid Patterns: "hh:mm:ss.ms" "hh:mm:ss:frameNumber" "124" (integer value is reported as seconds)" (video-
  thumbnail-pick-payload; its example is "00:01:00.000", and the pattern the SDK checks, unanchored, is
  `\\d{2}:\\d{2}:\\d{2}(\\.\\d{2})?`); 200 with the video. The picked frame replaces an uploaded image.
- `PATCH /videos/{id}`: tags and metadata "will overwrite the existing list" (video-update-payload).
- `POST /videos/{id}/chapters/{language}`: a multipart VTT `file` (chapters-update-payload), 200 with the Chapter
  `{uri, src, language}`; one file a language (a second replaces it); `GET /videos/{id}/chapters` lists them
  (paginated), `GET .../chapters/{language}` shows one (404 when there is none).

What a player reads is served at the video's delivery URLs (`serve`): the thumbnail at `assets.thumbnail`, a
chapters file at its `src`.
"""

from __future__ import annotations

import copy
import json
import re
from typing import TYPE_CHECKING

from .. import media
from ..texttracks import multipart_file, read_caption
from .apivideo_library import paged

if TYPE_CHECKING:
    from ..profile import Reply
    from ..video import Video

THUMBNAIL_MAX_BYTES = 8 * 1024 * 1024  # "The max allowed size is 8 MiB"
_TIMECODE = re.compile(r"\d{2}:\d{2}:\d{2}(\.\d{1,3}|:\d{1,3})?|\d+")
_IMAGES = ((b"\xff\xd8\xff", "image/jpeg"), (b"\x89PNG\r\n\x1a\n", "image/png"))
# video-update-payload's fields and their types.
_UPDATES = {"title": str, "description": str, "public": bool, "panoramic": bool, "mp4Support": bool, "playerId": str}


def image_type(content: bytes) -> str | None:
    """The image's media type by its first bytes (JPEG, PNG, WebP), or None."""
    if content[:4] == b"RIFF" and content[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _IMAGES if content.startswith(magic)), None)


def chapter(video: Video, language: str, base: str) -> dict:
    """The Chapter object: `{uri, src, language}` (ChaptersApi: Chapter)."""
    return {
        "uri": f"/videos/{video.id}/chapters/{language}",
        "src": f"{base}/{video.id}/chapters/{language}.vtt",
        "language": language,
    }


class Extras:
    """The store ops of the "apivideo" profile that touch one video's extras (mixed into ApiVideo)."""

    if TYPE_CHECKING:  # what the profile it is mixed into gives it

        def error(self, kind: str, message: str | None = None, **detail: object) -> Reply: ...

        def render(self, video: Video, now: float) -> dict: ...

        def invalid(self, name: str, detail: str) -> Reply: ...

    def extras_op(self, op: str, video: Video | None, call, raw: bytes, now: float) -> Reply:
        from ..profile import Reply

        if video is None:
            return self.error("not_found")
        if op == "store_thumbnail_upload":
            content, problem = multipart_file(call.headers.get("Content-Type"), raw)
            if content is None or problem:
                return self.invalid("file", problem or "The file could not be read.")
            kind = image_type(content)
            if kind is None or len(content) > THUMBNAIL_MAX_BYTES:
                return self.invalid("file", "The file must be a JPEG, PNG or WebP image of at most 8 MiB.")
            video.extras["thumbnail"] = {"content": content, "type": kind}
            video.extras.pop("thumbnail_time", None)
            return Reply(200, self.render(video, now))
        if op == "store_thumbnail_pick":
            body = _json(raw)
            timecode = body.get("timecode") if isinstance(body, dict) else None
            if not isinstance(timecode, str) or not _TIMECODE.fullmatch(timecode):
                return self.invalid("timecode", "This value must be a timecode like 00:01:00.00.")
            video.extras["thumbnail_time"] = timecode
            video.extras.pop("thumbnail", None)
            return Reply(200, self.render(video, now))
        if op == "store_video_update":
            return self._update(video, raw, now)
        base = media.base(video, "apivideo")
        held: dict = video.extras.setdefault("chapters", {})
        if op == "store_chapters_list":
            chosen = paged(call, f"/videos/{video.id}/chapters", [chapter(video, lang, base) for lang in held])
            return chosen if isinstance(chosen, Reply) else Reply(200, {"data": chosen[0], "pagination": chosen[1]})
        language = call.params.get("language", "")
        if op == "store_chapter_get":
            return Reply(200, chapter(video, language, base)) if language in held else self.error("not_found")
        content, problem = multipart_file(call.headers.get("Content-Type"), raw)
        if content is None or problem:
            return self.invalid("file", problem or "The file could not be read.")
        fmt, problem = read_caption(content, webvtt_only=True)
        if fmt is None:
            return self.invalid("file", problem or "The file must be a VTT file.")
        held[language] = content
        return Reply(200, chapter(video, language, base))

    def _update(self, video: Video, raw: bytes, now: float) -> Reply:
        from ..profile import Reply

        body = _json(raw)
        if not isinstance(body, dict):
            return self.invalid("body", "The request body must be a JSON object.")
        for name, kind in _UPDATES.items():
            if name in body and not isinstance(body[name], kind):
                return self.invalid(name, "This attribute has the wrong type.")
        tags, metadata = body.get("tags"), body.get("metadata")
        if tags is not None and (not isinstance(tags, list) or not all(isinstance(t, str) for t in tags)):
            return self.invalid("tags", "This attribute must be an array of strings.")
        if metadata is not None and (
            not isinstance(metadata, list)
            or not all(isinstance(m, dict) and isinstance(m.get("key"), str) for m in metadata)
            or not all(isinstance(m.get("value"), str) for m in metadata)
        ):
            return self.invalid("metadata", "This attribute must be an array of {key, value} strings.")
        for name in (*_UPDATES, "tags", "metadata"):
            if name in body:
                video.request[name] = copy.deepcopy(body[name])
        return Reply(200, self.render(video, now))


def serve(video: Video, rest: list[str]) -> tuple[int, str, bytes] | None:
    """A custom thumbnail or a chapters file at the video's delivery URLs, where it holds one; None: the common
    rules (media.answer: a default frame, the playlists)."""
    thumbnail = video.extras.get("thumbnail")
    if rest == ["thumbnail.jpg"] and thumbnail:
        return 200, thumbnail["type"], thumbnail["content"]
    if len(rest) == 2 and rest[0] == "chapters" and rest[1].endswith(".vtt"):
        content = video.extras.get("chapters", {}).get(rest[1][: -len(".vtt")])
        return (200, "text/vtt", content) if content is not None else (404, media.TEXT, b"no such chapters\n")
    return None


def _json(raw: bytes) -> object:
    try:
        return json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError):
        return None
