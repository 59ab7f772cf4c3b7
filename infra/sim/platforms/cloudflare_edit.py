"""The "cloudflare" profile's "Edit video details" (issue 42: the poster frame set after the create).

`POST /accounts/{account_id}/stream/{identifier}` "Edit details for a single video" (developers.cloudflare.com/api/
resources/stream/methods/edit; cloudflare-python 5.9.0 `stream.edit`, StreamEditParams, every field optional:
"Omit the field to indicate no change"), answered with the video. `thumbnailTimestampPct`: "The timestamp for a
thumbnail image calculated as a percentage value of the video's duration" (0 to 1, as at the create: OpenAPI
stream_thumbnailTimestampPct). The edit's other fields (allowedOrigins, creator, meta, requireSignedURLs,
scheduledDeletion, ...) are not modelled: refused, so a client that sends them learns the simulator does not keep
them.
"""

from __future__ import annotations

from collections.abc import Callable

from ..profile import Reply
from ..video import Video

EDITABLE = ("thumbnailTimestampPct", "uid")  # `uid`: "Can be used to verify the video being updated"


def edit(video: Video | None, body: object, parse_error: str | None, error: Callable[..., Reply]) -> Reply | None:
    """The edit applied to the video's fields (None: the caller answers with the video), or its refusal."""
    if video is None:
        return error("not_found")
    if parse_error or not isinstance(body, dict):
        return error("invalid", parse_error or "request body must be a JSON object")
    others = sorted(set(body) - set(EDITABLE))
    if others:
        return error("invalid", f"the simulator's edit keeps thumbnailTimestampPct only, not {', '.join(others)}")
    if "uid" in body and body["uid"] != video.id:
        return error("invalid", "uid does not name this video")
    pct = body.get("thumbnailTimestampPct")
    if "thumbnailTimestampPct" in body:
        if isinstance(pct, bool) or not isinstance(pct, int | float) or not 0 <= pct <= 1:
            return error("invalid", "thumbnailTimestampPct must be a number from 0 to 1")
        video.request["thumbnailTimestampPct"] = pct  # what render() shows
    return None
