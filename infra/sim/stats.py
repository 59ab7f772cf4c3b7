"""What the simulator reports of itself: its counters and stats, the caption tracks it holds, its request log."""

from __future__ import annotations

from collections.abc import Sequence

from .state import STAT_KEYS, SimState
from .video import ERRORED, PROCESSING


def stats(state: SimState) -> dict:
    """The counters with the figures computed from the videos, in STAT_KEYS order."""
    with state.lock:
        out = dict(state.counters)
        videos = state.store.videos
        out["videos"] = len(videos)
        out["errored_videos"] = sum(1 for v in videos.values() if v.state == ERRORED)
        out["hung_videos"] = sum(1 for v in videos.values() if v.hung and v.state == PROCESSING)
        # A duplicate is a second video for one reference that is not errored: an errored
        # video is expected to be replaced by a retry.
        out["duplicate_videos"] = sum(
            1 for ids in state.store.by_ref.values() if sum(1 for i in ids if videos[i].state != ERRORED) > 1
        )
        return {k: out[k] for k in STAT_KEYS}


def text_tracks(state: SimState) -> list[dict]:
    """What the provider holds of caption tracks: per video with any, its id, our reference, and each
    track as stored (language, name, status, error, format, how many times it was sent, its content)."""
    with state.lock:
        return [
            {
                "video_id": video.id,
                "ref": video.ref,
                "tracks": [
                    {
                        "id": t.id,
                        "language": t.language,
                        "name": t.name,
                        "closed_captions": t.closed_captions,
                        "ref": t.ref,
                        "status": t.status,
                        "error": t.error,
                        "format": t.format,
                        "uploads": t.uploads,
                        "content": t.content.decode("utf-8", "replace") if t.content is not None else None,
                    }
                    for t in video.texts
                ],
            }
            for video in state.store.videos.values()
            if video.texts
        ]


def requests_log(state: SimState, ops: Sequence[str] | None) -> list[dict]:
    """The logged requests of the given ops, every op with `ops=None`."""
    with state.lock:
        return [r for r in state.requests if ops is None or r["op"] in ops]
