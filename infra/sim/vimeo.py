"""The "vimeo" profile: Vimeo's API as a source of videos (developer.vimeo.com/api/reference, vimeo.json 3.4).

Bearer personal access token; GET /me/videos (page, per_page <= 100, sort, direction) -> a
collection {total, page, per_page, paging {next, previous, first, last}, data}; GET
/videos/{id}; GET /videos/{id}/texttracks[/{track}]. A video carries `download[]` (quality
"source" is the original) only when the account has file access; its links expire
(link_ttl_s, 24 h on Vimeo) and point at this simulator's /_media. Errors are Vimeo's
{"error", "developer_message", "error_code"}; rate headers X-RateLimit-Limit/-Remaining and
-Reset as an ISO 8601 time. Vimeo is no target here: creates are not routed.
"""

from __future__ import annotations

import math
import time
import urllib.parse
import zlib

from .bucket import RateState
from .config import SimConfig
from .library import Item, Shelf
from .profile import KIND_STATUS, Call, ParamError, Profile, Reply, int_param, iso_offset, same

ID_BASE = 700_000_000
# Unfetchable in turn: a plan or token without file access (no download field), a video still
# transcoding, one whose transcode failed.
FAULTS = ("no_files", "processing", "failed")
# error_code values: 5000 (not found) and 8003 (unauthenticated) are Vimeo's documented codes; 2204
# (invalid parameter) and 9000 (too many requests) likewise (developer.vimeo.com, "Error codes").
_ERRORS = {
    "unauthorized": (8003, "You must provide a valid authenticated access token."),
    "forbidden": (8003, "You must provide a valid authenticated access token."),
    "not_found": (5000, "The requested video couldn't be found."),
    "no_route": (5000, "The requested resource couldn't be found."),
    "method": (5000, "The requested method isn't allowed."),
    "invalid": (2204, "The parameters passed to this API endpoint didn't pass Vimeo's validation checks."),
    "throttled": (9000, "Too many API requests. Please wait and try again."),
    "failed": (1, "Something strange occurred. Please try again."),
    "unavailable": (1, "Vimeo is temporarily unavailable."),
}
SORTS = (
    "alphabetical",
    "date",
    "default",
    "duration",
    "last_user_action_event_date",
    "likes",
    "modified_time",
    "plays",
)


def video_id(video: Item) -> str:
    return str(ID_BASE + video.index)


def index_of(vid: str) -> int:
    return int(vid) - ID_BASE if vid.isdigit() else -1


class Vimeo(Profile):
    name = "vimeo"
    faults = FAULTS
    routes = (
        ("/me/videos", {"GET": "list"}),
        ("/videos/{id}", {"GET": "get"}),
        ("/videos/{id}/texttracks", {"GET": "src_tracks"}),
        ("/videos/{id}/texttracks/{track}", {"GET": "src_track"}),
    )

    def authorize(self, cfg: SimConfig, call: Call) -> Reply | None:
        given = call.headers.get("Authorization") or ""
        scheme, _, token = given.partition(" ")
        if cfg.token is None or (scheme.lower() == "bearer" and same(token, cfg.token)):
            return None
        return self.error("unauthorized")

    def error(self, kind: str, message: str | None = None, **detail: object) -> Reply:
        code, text = _ERRORS.get(kind, (1, message or kind))
        body = {"error": text, "link": None, "developer_message": message or text, "error_code": code}
        return Reply(KIND_STATUS[kind], body)

    def new_id(self) -> str:  # pragma: no cover - Vimeo is no target
        raise NotImplementedError

    # ----- the library

    def render(self, shelf: Shelf, video: Item) -> dict:
        vid = video_id(video)
        fault = video.fault
        status = {"processing": "transcoding", "failed": "transcoding_error"}.get(fault or "", "available")
        transcode = {"processing": "in_progress", "failed": "error"}.get(fault or "", "complete")
        out = {
            "uri": f"/videos/{vid}",
            "name": video.title,
            "description": video.description,
            "type": "video",
            "link": f"https://vimeo.com/{vid}",
            "duration": round(video.duration),
            "width": 1920,
            "height": 1080,
            "created_time": iso_offset(video.created),
            "modified_time": iso_offset(video.modified),
            "release_time": iso_offset(video.created),
            "privacy": {
                "view": "nobody" if video.private else "anybody",
                "embed": "public",
                "download": False,
                "add": True,
                "comments": "anybody",
            },
            "tags": [{"uri": f"/tags/{t}", "name": t, "tag": t, "canonical": t} for t in video.tags],
            "parent_folder": {
                "uri": f"/users/1/projects/{zlib.crc32(video.folder.encode()) % 1000}",
                "name": video.folder,
            },
            "status": status,
            "transcode": {"status": transcode},
            "upload": {"status": "complete", "approach": "post", "size": video.size},
            "metadata": {
                "connections": {
                    "texttracks": {
                        "uri": f"/videos/{vid}/texttracks",
                        "options": ["GET", "POST"],
                        "total": len(video.captions),
                    }
                }
            },
            "is_playable": fault is None,
        }
        if fault != "no_files" and fault != "processing":
            expires = shelf.expiry()
            common = {"created_time": iso_offset(video.created), "fps": 30, "md5": "0" * 32}
            out["download"] = [
                {
                    "quality": "source",
                    "rendition": "source",
                    "type": "source",
                    "width": 1920,
                    "height": 1080,
                    "expires": iso_offset(expires) if expires else None,
                    "link": shelf.url(video, "source.mp4"),
                    "size": video.size,
                    "public_name": "Original",
                    "size_short": f"{video.size / 1e6:.1f}MB",
                    **common,
                },
                {
                    "quality": "hd",
                    "rendition": "720p",
                    "type": "video/mp4",
                    "width": 1280,
                    "height": 720,
                    "expires": iso_offset(expires) if expires else None,
                    "link": shelf.url(video, "720p.mp4"),
                    "size": video.size // 3,
                    "public_name": "HD 720p",
                    "size_short": f"{video.size / 3e6:.1f}MB",
                    **common,
                },
            ]
        return out

    def _track(self, shelf: Shelf, video: Item, n: int) -> dict:
        language, kind, name = video.captions[n]
        vid = video_id(video)
        expires = shelf.expiry()
        link = shelf.url(video, f"texttrack-{language}.vtt")
        return {
            "uri": f"/videos/{vid}/texttracks/{n + 1}",
            "active": True,
            "type": kind,
            "language": language,
            "display_language": name,
            "id": n + 1,
            "link": link,
            "link_expires_time": iso_offset(expires) if expires else None,
            "hls_link": link,
            "hls_link_expires_time": iso_offset(expires) if expires else None,
            "name": name,
        }

    def source(self, op: str, shelf: Shelf, call: Call, body: object, now: float) -> Reply:
        if op == "list":
            return self._list(shelf, call)
        video = shelf.video(index_of(call.params.get("id", "")))
        if video is None:
            return self.error("not_found")
        if op == "get":
            return Reply(200, self.render(shelf, video))
        tracks = [self._track(shelf, video, n) for n in range(len(video.captions))]
        if op == "src_tracks":
            return Reply(200, {"total": len(tracks), "page": 1, "per_page": 25, "paging": {}, "data": tracks})
        found = [t for t in tracks if t["uri"].rsplit("/", 1)[1] == call.params.get("track")]
        return Reply(200, found[0]) if found else self.error("not_found")

    def _list(self, shelf: Shelf, call: Call) -> Reply:
        query = urllib.parse.parse_qs(call.query, keep_blank_values=True)
        try:
            per_page = int_param(query, "per_page", 25, 1, 100)
            page = int_param(query, "page", 1, 1, None)
        except ParamError as exc:
            return self.error("invalid", str(exc))
        sort = query.get("sort", ["default"])[0]
        direction = query.get("direction", ["asc" if sort == "alphabetical" else "desc"])[0]
        if sort not in SORTS or direction not in ("asc", "desc"):
            return self.error("invalid", "sort or direction is not one of the allowed values")
        # Times grow with the index, so date and modified_time order alike; other sorts fall back to date.
        newest_first = direction == "desc"
        videos, total = shelf.videos((page - 1) * per_page, per_page, newest_first)
        last = max(1, math.ceil(total / per_page))
        kept = [(k, v) for k, vs in query.items() for v in vs if k not in ("page", "per_page")]

        def link(n: int) -> str:
            return "/me/videos?" + urllib.parse.urlencode([*kept, ("page", n), ("per_page", per_page)])

        paging = {
            "next": link(page + 1) if page < last else None,
            "previous": link(page - 1) if page > 1 else None,
            "first": link(1),
            "last": link(last),
        }
        data = [self.render(shelf, v) for v in videos]
        return Reply(200, {"total": total, "page": page, "per_page": per_page, "paging": paging, "data": data})

    # ----- rate limits

    def rate_headers(self, cfg: SimConfig, state: RateState) -> dict:
        quota, _window = state.policy()
        reset = time.time() + state.reset_in_s()
        return {
            "X-RateLimit-Limit": str(quota),
            "X-RateLimit-Remaining": str(state.remaining),
            "X-RateLimit-Reset": iso_offset(reset),  # an ISO 8601 time, as Vimeo sends it
        }

    def throttle_hint(self, cfg: SimConfig, wait_s: float, state: RateState) -> tuple[dict, float | None]:
        # Vimeo's 429 says when through X-RateLimit-Reset, sent on every answer (with rate_headers on, or here).
        reset = time.time() + max(1, math.ceil(wait_s))
        return {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": iso_offset(reset)}, float(max(1, math.ceil(wait_s)))
