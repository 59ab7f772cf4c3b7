"""The "mux" profile's assets made here, what a viewer sees first (issue 42): the frame an asset's default thumbnail
shows, and its chapters track served as a player reads it. The library's side (a source's assets) is
mux_library.py.

Documents (docs.mux.com):

- "Set a default thumbnail for a video" (https://www.mux.com/docs/guides/set-a-default-thumbnail):
  `PATCH /video/v1/assets/{ASSET_ID} {"thumbnail_time": 12.67}`, "a media time in seconds"; "`thumbnail_time` can
  only be set on an asset in the `ready` state, and cannot be set at asset creation time"; "The value must be at
  least `0` and less than the asset's duration. A negative value or a value at or past the end of the asset is
  rejected with a `400`"; "Once set, `thumbnail_time` is included in the asset object. It is omitted entirely when
  no value is set". The update's other fields (Update Asset: `passthrough`, `meta`) are not modelled: refused here,
  so a client that sends them learns the simulator does not keep them.
- "Add chapters" (https://www.mux.com/docs/guides/add-chapters): "Mux stores chapters as a track on the asset",
  `type` text, `text_type` chapters, `url` "a JSON file", added "after the asset is created, using create an asset
  track. The asset must be in the ready state first" (the profile's tracks endpoint takes it; processing.py fetches
  it and reads it as Apple's HLS chapter notation, the form Mux serves it back in: texttracks.read_chapters_json).
- The Stream API reference, "Retrieve chapters": `GET https://stream.mux.com/{PLAYBACK_ID}/chapters/{TRACK_ID}.json`,
  "only possible for assets with a text track where text_type is chapters"; a signed playback id's with a token
  (audience `v` here, as the text tracks beside it: mux_signing.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping

from .. import media
from ..profile import Reply
from ..video import READY, Video
from .mux_signing import SIGNED_POLICIES, VIDEO, token_of, token_problem

THUMBNAIL_TIME = "thumbnail_time"  # where an asset keeps it (Video.extras)
CHAPTERS = "chapters"  # the text_type of a chapters track


def update(video: Video | None, body: object, parse_error: str | None, error: Callable[..., Reply]) -> Reply | None:
    """`PATCH /video/v1/assets/{id}`: the asset's `thumbnail_time` set (None: the caller answers with the asset), or
    the refusal."""
    if video is None:
        return error("not_found")
    if parse_error or not isinstance(body, dict):
        return error("invalid", parse_error or "request body must be a JSON object")
    others = sorted(set(body) - {THUMBNAIL_TIME})
    if others:
        return error("invalid", f"the simulator's asset update keeps thumbnail_time only, not {', '.join(others)}")
    if video.state != READY:
        return error("invalid", "thumbnail_time can only be set on an asset in the ready state")
    chosen = body.get(THUMBNAIL_TIME)
    if isinstance(chosen, bool) or not isinstance(chosen, int | float) or not 0 <= chosen < video.duration:
        return error("invalid", "thumbnail_time must be at least 0 and less than the asset's duration")
    video.extras[THUMBNAIL_TIME] = chosen
    return None


def serve_chapters(
    videos: Iterable[Video], policies: Callable[[Video], list[dict]], held: Mapping, pid: str, name: str, query: str
) -> media.Answer:
    """A made asset's ready chapters track, `{pid}/chapters/{track id}.json`, as Mux serves it: the JSON it fetched."""
    for video in videos:
        policy = next((p["policy"] for p in policies(video) if p["id"] == pid), None)
        if policy is None:
            continue
        if policy in SIGNED_POLICIES:
            problem = token_problem(token_of(query), pid, VIDEO, held, time.time())
            if problem:
                return 403, media.TEXT, f"{problem}\n".encode()
        for track in video.texts:
            if track.kind == CHAPTERS and f"{track.id}.json" == name and track.status == "ready" and track.content:
                return 200, "application/json", track.content
        break
    return 404, media.TEXT, b"no such chapters track, or not ready\n"
