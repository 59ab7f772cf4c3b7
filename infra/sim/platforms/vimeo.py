"""The "vimeo" profile: Vimeo's API as a source of videos (developer.vimeo.com/api/reference, vimeo.json 3.4).

Bearer personal access token; GET /me/videos and GET /users/{user_id}/videos (page, per_page <= 100,
sort, direction) -> a collection {total, page, per_page, paging {next, previous, first, last},
data}; GET /videos/{id}; GET /videos/{id}/texttracks[/{track}]. A video carries `download[]`
(quality "source" is the original) only when the account has file access; its links expire
(link_ttl_s, 24 h on Vimeo) and point at this simulator's /_media. Errors are Vimeo's
{"error", "developer_message", "error_code"}; rate headers X-RateLimit-Limit/-Remaining and
-Reset as an ISO 8601 time. As a target (library_size 0) it takes uploads by pull, its text tracks in
two steps, and sends no webhooks: infra/sim/vimeo_target.py (VimeoTarget), with its documents.

What each behaviour rests on, beside the code that models it:
- the lock-out past the per-minute limit (`throttle_hint`, budget knobs in the profile's `limits`);
- every `privacy.view` value (`view_of`), text tracks that are not active (`_tracks`);
- page-number paging that shifts when a video is deleted mid-sweep (`_list`, LibraryState.deleted);
- the token's own uploads (/me/videos) apart from its team's library (/users/{team}/videos, `in_view`);
- a video still transcoding, then done (library_processing_done, in library.item);
- what a viewer sees first, each documented in infra/sim/platforms/vimeo_library.py: the video's pictures (and the
  images at their links, `serve_delivery`), chapters, release time, and the account's showcases in order;
- each video's `stats.plays`, null for some (`render_library`, infra/sim/library_usage.py);
- the API's JSON filter, `fields` (dot paths), on the library's lists and videos as on the target's (`filtered`);
- as a target, what a viewer sees, each documented in infra/sim/platforms/vimeo_target_extras.py: pictures uploaded
  to their links and made active, chapters, folders, showcases in their arrangement.
"""

from __future__ import annotations

import math
import secrets
import time
import zlib
from collections.abc import Callable, Mapping
from typing import ClassVar, Literal

from .. import library_usage as usage
from ..bucket import RateState
from ..config import SimConfig
from ..library import Item, Served, Shelf
from ..profile import KIND_STATUS, Call, MadeUp, Profile, Reply, iso_offset, same
from . import vimeo_library as extras
from .vimeo_target import SORTS, VimeoTarget, filtered, list_query, paging
from .vimeo_target import _fields as fields_of
from .vimeo_target_extras import TargetExtras

ID_BASE = 700_000_000
# The token's own user (what /me is) and the team account it is a member of. Help centre, "Managing team
# members on your account" (help.vimeo.com/hc/en-us/articles/224818687): team members upload "to your account",
# the team owner's; "Get all the videos that the user has uploaded" is GET /users/{user_id}/videos, and
# /me/videos the same for the authenticated user (API reference, Videos: get_videos).
USER_ID = "1"
TEAM_ID = "2"
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
    # A create past the account's storage: 403, "Error code 4101: The authenticated user's maximum disk space has
    # been reached" (api.yaml, POST /me/videos).
    "full": (4101, "The authenticated user's maximum disk space has been reached."),
    "unavailable": (1, "Vimeo is temporarily unavailable."),
}
# privacy.view (vimeo.json 3.4, Video.privacy.view): anybody "Anyone can view the video", contacts "Only contacts",
# disable "Hide from vimeo", nobody "No one besides the owner", password "Anyone with the video's password",
# unlisted "Not searchable from vimeo.com", users "Only people with a Vimeo account". A private library video
# shows the non-public ones in turn; every tenth public one is unlisted ("anyone who has the video's unique URL":
# help centre, "Video privacy settings", help.vimeo.com/hc/articles/12426199699985).
PRIVATE_VIEWS = ("nobody", "password", "contacts", "users", "disable")
# A captioned video also keeps an older English caption file its owner deactivated: TextTrack.active, "Whether
# this text track is active" (vimeo.json 3.4); the file is still listed, with its link.
INACTIVE_TRACK = ("en", "captions", "English")


def video_id(video: Item) -> str:
    return str(ID_BASE + video.index)


def index_of(vid: str) -> int:
    return int(vid) - ID_BASE if vid.isdigit() else -1


def view_of(cfg: SimConfig, video: Item) -> str:
    """The video's privacy.view."""
    if video.private:
        return PRIVATE_VIEWS[(video.index // max(1, cfg.library_private_every)) % len(PRIVATE_VIEWS)]
    return "unlisted" if video.index % 10 == 7 else "anybody"


def by_teammate(cfg: SimConfig, index: int) -> bool:
    """Whether video `index` was uploaded by another member of the team (library_team_every)."""
    n = cfg.library_team_every
    return n > 0 and index % n == n // 2


def in_view(cfg: SimConfig, user: str | None) -> Callable[[int], bool] | Literal[False] | None:
    """Which videos a listing shows: /me/videos (and the token's own /users/{id}) only what the token's user
    uploaded; the team's /users/{team}/videos all of the team's library. None: every video; False: no such user."""
    if user == TEAM_ID or cfg.library_team_every <= 0:
        return None if user in (None, USER_ID, TEAM_ID) else False
    if user in (None, USER_ID):
        return lambda index: not by_teammate(cfg, index)
    return False


class Vimeo(VimeoTarget, TargetExtras, Profile):
    name = "vimeo"
    hls_master = ("hls", "playlist.m3u8")  # where its video object's HLS link points (media.py)
    # As a source: Vimeo publishes no number (its limits vary by plan and are told in X-RateLimit-*): 10 reads/s in
    # bursts of 20 is our choice. Its limit is "the maximum number of requests that can be made per minute", and past
    # it a user is "temporarily prevented from making requests for up to a minute"
    # (https://help.vimeo.com/hc/en-us/articles/12427783954065-Rate-limits): a budget per 60 s window and a 60 s
    # block, off until a budget_quota (the plan's number, unpublished) is given.
    limits: ClassVar[Mapping[str, float | int]] = {
        "read_rate": 10.0,
        "read_burst": 20,
        "budget_window_s": 60.0,
        "budget_block_s": 60.0,
    }
    faults = FAULTS
    routes = (
        ("/me", {"GET": "me"}),
        ("/me/videos", {"GET": "list", "POST": "create"}),
        ("/users/{user}/videos", {"GET": "list"}),
        ("/videos/{id}", {"GET": "get"}),
        # One list, two sides: a target's text tracks (track_list), or a library's (src_tracks: `source_ops`).
        ("/videos/{id}/texttracks", {"GET": "track_list", "POST": "track_add"}),
        ("/videos/{id}/texttracks/{track}", {"GET": "src_track", "PATCH": "track_add", "DELETE": "track_add"}),
        # A new text track's upload link (Vimeo's captions.cloud.vimeo.com), here on the simulator itself.
        ("/captions/{id}/{track}", {"PUT": "track_add"}),
        # Pictures, chapters and showcases: a library's (vimeo_library.py, through `source_ops`), or a target's
        # with its folders (vimeo_target_extras.py).
        (
            "/videos/{id}/pictures",
            {"GET": "store_pictures", "POST": "store_picture_add"},
        ),
        (
            "/videos/{id}/pictures/{picture}",
            {"GET": "store_picture", "PATCH": "store_picture_edit", "DELETE": "store_picture_delete"},
        ),
        # A new picture's upload link (Vimeo's image upload host), here on the simulator itself.
        ("/picture-uploads/{id}/{picture}", {"PUT": "store_picture_upload"}),
        ("/videos/{id}/chapters", {"GET": "store_chapters", "POST": "store_chapter_add"}),
        (
            "/videos/{id}/chapters/{chapter}",
            {"GET": "store_chapter", "PATCH": "store_chapter_edit", "DELETE": "store_chapter_delete"},
        ),
        ("/videos/{id}/albums", {"GET": "src_video_albums"}),
        ("/me/albums", {"GET": "store_albums", "POST": "store_album_create"}),
        ("/users/{user}/albums", {"GET": "src_albums"}),
        ("/me/albums/{album}", {"GET": "store_album"}),
        ("/me/albums/{album}/videos", {"GET": "store_album_videos", "PUT": "store_album_replace"}),
        (
            "/me/albums/{album}/videos/{id}",
            {"GET": "store_album_video", "PUT": "store_album_add", "DELETE": "store_album_remove"},
        ),
        ("/users/{user}/albums/{album}/videos", {"GET": "src_album_videos"}),
        ("/me/projects", {"GET": "store_projects", "POST": "store_project_create"}),
        ("/me/projects/{project}", {"GET": "store_project"}),
        ("/me/projects/{project}/videos", {"GET": "store_project_videos"}),
        ("/me/projects/{project}/videos/{id}", {"PUT": "store_project_add", "DELETE": "store_project_remove"}),
    )
    # One path, two sides: what a library answers where a target answers with what it was sent.
    source_ops: ClassVar[dict[str, str]] = {
        "track_list": "src_tracks",
        "store_pictures": "src_pictures",
        "store_picture": "src_picture",
        "store_chapters": "src_chapters",
        "store_albums": "src_albums",
        "store_album_videos": "src_album_videos",
    }

    def made_up_target(self, webhook_scheme: str = "standard") -> MadeUp:
        """A personal access token; Vimeo sends no webhooks (the secret is the doctor's test)."""
        token = secrets.token_urlsafe(24)
        return MadeUp({"token": token}, {"token": token}, secrets.token_hex(16))

    def authorize(self, cfg: SimConfig, call: Call) -> Reply | None:
        if call.method == "PUT" and call.op in ("track_add", "store_picture_upload"):
            return None  # an upload link is its own credential (signed, expiring: checked with the file)
        given = call.headers.get("Authorization") or ""
        scheme, _, token = given.partition(" ")
        if cfg.token is None or (scheme.lower() == "bearer" and same(token, cfg.token)):
            return None
        return self.error("unauthorized")

    def error(self, kind: str, message: str | None = None, **detail: object) -> Reply:
        code, text = _ERRORS.get(kind, (1, message or kind))
        body = {"error": text, "link": None, "developer_message": message or text, "error_code": code}
        return Reply(403 if kind == "full" else KIND_STATUS[kind], body)

    # ----- the library

    def render_library(self, shelf: Shelf, video: Item) -> dict:
        vid = video_id(video)
        fault = video.fault
        # A video still transcoding (status transcoding, transcode.status in_progress) has no download yet; with
        # library_processing_done it has finished (library.item), as a later sweep finds it.
        status = {"processing": "transcoding", "failed": "transcoding_error"}.get(fault or "", "available")
        transcode = {"processing": "in_progress", "failed": "error"}.get(fault or "", "complete")
        view = view_of(shelf.cfg, video)
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
            # Released (made public) up to three days after its upload: release_time apart from created_time.
            "release_time": iso_offset(video.created + (video.index % 4) * 86_400),
            "privacy": {
                "view": view,
                # Hidden from vimeo.com, it plays where it is embedded: here only on the owner's chosen domains.
                "embed": "whitelist" if view == "disable" else "public",
                "download": False,
                "add": True,
                "comments": "anybody",
            },
            "tags": [{"uri": f"/tags/{t}", "name": t, "tag": t, "canonical": t} for t in video.tags],
            "parent_folder": {
                "uri": f"/users/{TEAM_ID if by_teammate(shelf.cfg, video.index) else USER_ID}/projects/"
                f"{zlib.crc32(video.folder.encode()) % 1000}",
                "name": video.folder,
            },
            "pictures": extras.pictures(shelf, vid, video)[0],  # the active picture
            "has_chapters": extras.chapter_count(video) > 0,
            "status": status,
            "transcode": {"status": transcode},
            "upload": {"status": "complete", "approach": "post", "size": video.size},
            "metadata": {
                "connections": {
                    "texttracks": {
                        "uri": f"/videos/{vid}/texttracks",
                        "options": ["GET", "POST"],
                        "total": len(self._tracks(shelf, video)),
                    },
                    "pictures": {
                        "uri": f"/videos/{vid}/pictures",
                        "options": ["GET", "POST"],
                        "total": len(extras.pictures(shelf, vid, video)),
                    },
                }
            },
            "is_playable": fault is None,
            # "The current total number of times that the video has been played" (Video.stats.plays, vimeo.json
            # 3.4), nullable: null where Vimeo does not show it (vimeo/vimeo.php issue 309), here one video in six
            # (library_usage.hidden). Counts from the library's arithmetic (infra/sim/library_usage.py).
            "stats": {"plays": None if usage.hidden(video.index) else usage.plays(video.index)},
        }
        if fault != "no_files" and fault != "processing":
            out["download"] = self._downloads(shelf, video)
        return out

    def _downloads(self, shelf: Shelf, video: Item) -> list[dict]:
        expires = shelf.expiry()
        common = {"created_time": iso_offset(video.created), "fps": 30, "md5": "0" * 32}
        common["expires"] = iso_offset(expires) if expires else None
        return [
            {
                "quality": "source",
                "rendition": "source",
                "type": "source",
                "width": 1920,
                "height": 1080,
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
                "link": shelf.url(video, "720p.mp4"),
                "size": video.size // 3,
                "public_name": "HD 720p",
                "size_short": f"{video.size / 3e6:.1f}MB",
                **common,
            },
        ]

    def _tracks(self, shelf: Shelf, video: Item) -> list[dict]:
        """The video's text tracks: its captions, active, then (where it has any) the inactive older file.
        Vimeo keeps no status for a text track (TextTrack has none in vimeo.json 3.4), so
        library_captions_processing has nothing to show here."""
        found = [self._track(shelf, video, n, *caption, True) for n, caption in enumerate(video.captions)]
        if video.captions:
            found.append(self._track(shelf, video, len(found), *INACTIVE_TRACK, False))
        return found

    def _track(self, shelf: Shelf, video: Item, n: int, language: str, kind: str, name: str, active: bool) -> dict:
        vid = video_id(video)
        expires = shelf.expiry()
        link = shelf.url(video, f"texttrack-{language}.vtt" if active else f"texttrack-draft-{language}.vtt")
        return {
            "uri": f"/videos/{vid}/texttracks/{n + 1}",
            "active": active,
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
        if op in ("src_albums", "src_album_videos"):
            return self._showcases(op, shelf, call)
        video = shelf.video(index_of(call.params.get("id", "")))
        if video is None:
            return self.error("not_found")
        if op == "get":
            return Reply(200, filtered(self.render_library(shelf, video), fields_of(call)))
        if op in ("src_pictures", "src_picture", "src_chapters", "src_video_albums"):
            return self._video_extras(op, shelf, call, video)
        tracks = self._tracks(shelf, video)
        if op == "src_tracks":
            return Reply(200, {"total": len(tracks), "page": 1, "per_page": 25, "paging": {}, "data": tracks})
        found = [t for t in tracks if t["uri"].rsplit("/", 1)[1] == call.params.get("track")]
        return Reply(200, found[0]) if found else self.error("not_found")

    def _list(self, shelf: Shelf, call: Call) -> Reply:
        asked = list_query(call, SORTS)
        if isinstance(asked, str):
            return self.error("invalid", asked)
        page, per_page, _sort, direction = asked
        user = call.params.get("user")
        keep = in_view(shelf.cfg, user)
        if keep is False:
            return self.error("not_found", "The requested user couldn't be found.")
        # Times grow with the index, so date and modified_time order alike; other sorts fall back to date. Pages
        # are counted in the library as it stands at each request: a video deleted since the last page moves every
        # later one a place back (LibraryState.deleted), as page-number paging over a live list does.
        newest_first = direction == "desc"
        start = (page - 1) * per_page
        if keep is None:
            videos, total = shelf.videos(start, per_page, newest_first)
        else:
            videos, total = _kept(shelf, keep, start, per_page, newest_first)
        path = "/me/videos" if user is None else f"/users/{user}/videos"
        data = [filtered(self.render_library(shelf, v), fields_of(call)) for v in videos]
        listed = {
            "total": total,
            "page": page,
            "per_page": per_page,
            "paging": paging(path, call, page, per_page, total),
        }
        return Reply(200, {**listed, "data": data})

    def _video_extras(self, op: str, shelf: Shelf, call: Call, video: Item) -> Reply:
        """A library video's pictures (all, or one), chapters, or the showcases that hold it (vimeo_library.py)."""
        vid = video_id(video)
        path = _path(call)
        if op == "src_picture":
            found = [p for p in extras.pictures(shelf, vid, video) if p["uri"].endswith(f"/{call.params['picture']}")]
            return (
                Reply(200, found[0]) if found else self.error("not_found", "The requested picture couldn't be found.")
            )
        if op == "src_pictures":
            answer = extras.listed(path, call, extras.pictures(shelf, vid, video), lambda p: p)
        elif op == "src_chapters":
            answer = extras.listed(path, call, extras.chapters(vid, video), lambda c: c)
        else:
            held = [s for s in extras.SHOWCASES if s.holds(video.index)]
            answer = extras.listed(path, call, held, lambda s: extras.album(s, shelf, USER_ID))
        return Reply(200, answer) if isinstance(answer, dict) else self.error("invalid", answer)

    def _showcases(self, op: str, shelf: Shelf, call: Call) -> Reply:
        """The account's showcases, or one showcase's videos in the order asked (vimeo_library.py). A team's
        library lists the showcases of the account it is (USER_ID's: in_view's users)."""
        user = call.params.get("user")
        if in_view(shelf.cfg, user) is False:
            return self.error("not_found", "The requested user couldn't be found.")
        path, owner = _path(call), user or USER_ID
        if op == "src_albums":
            answer = extras.listed(path, call, list(extras.SHOWCASES), lambda s: extras.album(s, shelf, owner))
            return Reply(200, answer) if isinstance(answer, dict) else self.error("invalid", answer)
        showcase = extras.showcase_of(call.params.get("album", ""))
        if showcase is None:
            return self.error("not_found", "The requested showcase couldn't be found.")
        videos = extras.album_videos(showcase, shelf, call)
        if isinstance(videos, str):
            return self.error("invalid", videos)

        def render(video: Item) -> dict:
            doc = filtered(self.render_library(shelf, video), fields_of(call))
            return doc if isinstance(doc, dict) else {}

        answer = extras.listed(path, call, videos, render, extras.ALBUM_VIDEO_SORTS)
        return Reply(200, answer) if isinstance(answer, dict) else self.error("invalid", answer)

    def serve_delivery(
        self, shelf: Shelf, method: str, path: str, query: str, range_header: str | None
    ) -> Served | None:
        """The images at the pictures' links (Vimeo's i.vimeocdn.com): vimeo_library.serve_picture."""
        return extras.serve_picture(shelf, method, path, index_of)

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
        if state.kind == "budget":
            # Past the per-minute limit a user "is returned a 429 error and temporarily prevented from making
            # requests for up to a minute" (help centre, "Rate limits", help.vimeo.com/hc/en-us/articles/
            # 12427783954065): the 429 says nothing of when the lock-out ends, no Retry-After and no reset.
            return {}, None
        # Vimeo's 429 says when through X-RateLimit-Reset, sent on every answer (with rate_headers on, or here).
        reset = time.time() + max(1, math.ceil(wait_s))
        return {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": iso_offset(reset)}, float(max(1, math.ceil(wait_s)))


def _kept(
    shelf: Shelf, keep: Callable[[int], bool], start: int, count: int, newest_first: bool
) -> tuple[list[Item], int]:
    """Shelf.videos over only the videos `keep` admits: walked, since only a test's team library filters."""
    order = range(shelf.size - 1, -1, -1) if newest_first else range(shelf.size)
    shown = [i for i in order if keep(i) and shelf.state.present(i)]
    found = [shelf.video(i) for i in shown[max(0, start) : max(0, start) + count]]
    return [v for v in found if v is not None], len(shown)


def _path(call: Call) -> str:
    """The path a library request of the showcases, pictures or chapters came to (its paging links name it)."""
    params = call.params
    owner = f"/users/{params['user']}" if params.get("user") else "/me"
    return {
        "src_pictures": f"/videos/{params.get('id')}/pictures",
        "src_chapters": f"/videos/{params.get('id')}/chapters",
        "src_video_albums": f"/videos/{params.get('id')}/albums",
        "src_albums": f"{owner}/albums",
        "src_album_videos": f"{owner}/albums/{params.get('album')}/videos",
    }.get(call.op, "/")
