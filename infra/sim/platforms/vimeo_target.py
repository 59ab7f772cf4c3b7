"""The "vimeo" profile's target side: Vimeo taking uploads by pull, as its API reference documents it.

Documents: the vimeo/openapi api.yaml (febb900, 2023-12-13) for paths, bodies, enums and error codes;
PyVimeo 1.1.2 (vimeo/upload.py: UploadTexttrackMixin) and the official vimeo.js examples
(example/upload_texttrack.js) for the text-track upload; the help centre for what the reference leaves out.

- `POST /me/videos` {upload: {approach, link}, name, description, privacy: {view, embed}} -> 201 video
  ("The upload procedure has begun"). `upload` and its `approach` are required (one of post, pull,
  streaming, tus; only pull is simulated, the others answer 2230 "The upload type is invalid"); `type`
  in its place is 3116 ("Use upload.approach starting from API version 3.4"); a body that is not JSON
  2205; other invalid fields 2204. `privacy.view` disable or unlisted on a Basic plan (config `plan`):
  "Vimeo Basic members can't set this value to disable or unlisted", answered 400 2204 (the code is our
  choice: the reference names only the rule). Past the account's storage (config `storage_minutes`):
  403 4101 "The authenticated user's maximum disk space has been reached".
- The video: `upload.status` in_progress while the file is pulled, then `transcode.status` in_progress,
  then both complete (legacy `status` uploading, transcoding, available); a corrupt source ends
  transcoding_error (transcode error), one the pull could not fetch (check_source) uploading_error. The pull
  fetches its link later than the create, not at once: "The URL must be valid for at least 24 hours" (api.yaml,
  upload.link) says the fetch may come any time in that window, and when is not documented; here it comes as the
  upload phase ends (`fetch_after_share`), so a link that expired by then fails the upload. A link that ends
  before 24 hours is not refused at the create: api.yaml documents no such error (2204, 2205, 2230, 3116 only). A
  source
  URL naming `quota_exceeded` or `total_cap_exceeded` ends with that legacy status ("The user's quota is
  exceeded with this video", "The user has exceeded their total cap with this video"): a simulator
  convention, like "corrupt". `duration` whole seconds once transcoded; `link` and `player_embed_url` point
  at the simulator's player (media.py), an unlisted video's with its hash `h`, which the player page asks
  for; a video no one but the owner may watch (every view but anybody and unlisted) is refused there.
- `GET /me/videos` (page, per_page up to 100, sort, direction, query, fields): newest first by default;
  `query` "The search query to use to filter the results" is matched here against the name and the
  description, and a new video shows in a search only `search_lag_s` after its create (what a search
  covers and how soon are not documented: the adapter must not rely on it alone). `fields` is the API's
  JSON filter (dot paths), applied to the lists and to /me (one video's answer is whole, a superset).
- `GET /me`: the user, with `account` (the plan).
- `play` (api.yaml, Video.play: `status`, `hls.link`, `link_expiration_time`) on a transcoded video: an HLS
  link signed for the owner's token (`s`, `expires`; PLAY_TTL_S, Vimeo's lifetime is not documented) that plays
  whatever the privacy. Vimeo gives `play` only to tokens with file access (the video_files scope on a plan
  that has it); the simulator gives it on every plan.
- No webhooks: none are documented, so none are sent.
- Text tracks: `POST /videos/{id}/texttracks` {type, language, name (required), active} -> 201 with
  `link`, "You can upload to this link when you create it for the first time", and `link_expires_time`
  (link_ttl_s, else an hour: the lifetime is not documented). The file is PUT to the link as text/plain
  (the example: "'Content-Type': 'text/plain' // important!"), once, before it expires, its signature
  checked; WebVTT or SRT. `PATCH .../texttracks/{track}` edits it, `DELETE` removes it (204). "Only one text
  track per language and type can be active": activating one deactivates the others. A track created
  without `active` is inactive (not documented; the adapter always says).
"""

from __future__ import annotations

import builtins
import copy
import hashlib
import hmac
import json
import re
import secrets
import time
import urllib.parse
from typing import TYPE_CHECKING

from .. import media
from ..config import SimConfig, is_http_url
from ..profile import Account, Call, Draft, Event, ParamError, Reply, Store, derived_id, int_param, iso_offset
from ..texttracks import read_caption
from ..video import ERRORED, PROCESSING, TextTrack, Video

USER_ID = "1"
APPROACHES = ("post", "pull", "streaming", "tus")
VIEWS = ("anybody", "contacts", "disable", "nobody", "password", "unlisted", "users")
EMBEDS = ("private", "public", "whitelist")
BASIC_BARRED = ("disable", "unlisted")
PLAY_TTL_S = 3600  # a `play` link's life here
WATCHABLE = ("anybody", "unlisted")  # who has the link can play it; the others need Vimeo's own login
TRACK_TYPES = ("captions", "chapters", "descriptions", "metadata", "subtitles")
# GET /me/videos `sort` (api.yaml).
SORTS = (
    "alphabetical",
    "comments",
    "date",
    "default",
    "duration",
    "last_user_action_event_date",
    "likes",
    "modified_time",
    "plays",
)
QUOTA_WORDS = ("quota_exceeded", "total_cap_exceeded")
_REF_LINE = re.compile(r"^migration-ref (vm[0-9a-f]{32}) (.+)$")
_UPLOADED_AT = 1 / 3  # the share of processing spent pulling the file
TRACK_LINK_TTL_S = 3600.0
BYTES_PER_S = 500_000  # what a pulled file weighs per second of video, for `upload.size`
_LINK_KEY = secrets.token_bytes(16)  # signs the track links this process hands out


def refusal(status: int, code: int, message: str) -> Reply:
    """Vimeo's error: {"error", "link", "developer_message", "error_code"} (api.yaml, error)."""
    return Reply(status, {"error": message, "link": None, "developer_message": message, "error_code": code})


def ref_in(description: object) -> str | None:
    """Our reference as the adapter writes it, the description's last line (for the request log and the
    duplicate count)."""
    if not isinstance(description, str):
        return None
    match = _REF_LINE.match(description.rstrip("\n").rpartition("\n")[2])
    return match.group(2) if match else None


def filtered(doc: object, fields: str | None) -> object:
    """The API's JSON filter: only the dot paths `fields` names ("uri,privacy.view,tags.name"); lists are
    filtered item by item."""
    if not fields or not isinstance(doc, dict):
        return doc
    out: dict = {}
    for path in fields.split(","):
        _merge(out, _pick(doc, [p for p in path.strip().split(".") if p]))
    return out


_NOTHING = object()


def _pick(value: object, parts: list[str]) -> object:
    """`value` down the dot path `parts` (each item of a list on the way), _NOTHING where it has no such field."""
    if not parts:
        return copy.deepcopy(value)
    if isinstance(value, list):
        return [kept for v in value if (kept := _pick(v, parts)) is not _NOTHING]
    if not isinstance(value, dict) or parts[0] not in value:
        return _NOTHING
    inner = _pick(value[parts[0]], parts[1:])
    return _NOTHING if inner is _NOTHING else {parts[0]: inner}


def _merge(into: dict, part: object) -> None:
    for key, value in part.items() if isinstance(part, dict) else ():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _fields(call: Call) -> str | None:
    return urllib.parse.parse_qs(call.query).get("fields", [None])[0]


def _statuses(video: Video, now: float) -> tuple[str, str, str]:
    """(legacy status, upload.status, transcode.status) of a video at monotonic time `now`: api.yaml, video.upload
    and video.transcode ("complete | error | in_progress") and the deprecated video.status (available,
    quota_exceeded, total_cap_exceeded, transcoding, transcoding_error, uploading, uploading_error...)."""
    if video.state == PROCESSING:
        if video.hung or video.progress(now) < _UPLOADED_AT:
            return "uploading", "in_progress", "in_progress"
        return "transcoding", "complete", "in_progress"
    if video.state == ERRORED:
        if video.failure == "fetch":
            return "uploading_error", "error", "error"
        return "transcoding_error", "complete", "error"
    over = next((w for w in QUOTA_WORDS if w in (video.source or "")), None)
    if over:
        return over, "complete", "error"
    return "available", "complete", "complete"


def _play_sig(vid: str, expires: int) -> str:
    return hmac.new(_LINK_KEY, f"{vid}/play/{expires}".encode(), hashlib.sha256).hexdigest()[:32]


def _play_signed(vid: str, query: str) -> bool:
    """Whether `query` carries a `play` link's signature for video `vid` that has not expired."""
    asked = urllib.parse.parse_qs(query)
    try:
        expires = int(asked.get("expires", [""])[0])
    except ValueError:
        return False
    return time.time() <= expires and hmac.compare_digest(asked.get("s", [""])[0], _play_sig(vid, expires))


def _link_sig(vid: str, tid: str, expires: int) -> str:
    return hmac.new(_LINK_KEY, f"{vid}/{tid}/{expires}".encode(), hashlib.sha256).hexdigest()[:32]


class VimeoTarget:
    """Vimeo's target API: a mixin of the `Vimeo` profile (infra/sim/vimeo.py), whose `error` it uses."""

    if TYPE_CHECKING:  # what the profile it is mixed into gives it

        def error(self, kind: str, message: str | None = None, **detail: object) -> Reply: ...

        def viewer_fields(self, video: Video, at: str, ready: bool) -> dict: ...

        def picture_file(self, video: Video, rest: builtins.list[str]) -> tuple[int, str, bytes] | None: ...

    # The pull's link "must be valid for at least 24 hours" (api.yaml, POST /me/videos, upload.link): Vimeo fetches
    # it later than the create, at a time it does not say. With check_source the link is fetched when the upload
    # phase ends (a third of the processing time), not at the create: one that expired by then ends uploading_error.
    fetch_after_share = _UPLOADED_AT

    def new_id(self) -> str:
        return str(10**9 + secrets.randbelow(9 * 10**9))  # ten digits, apart from the library's 700 million range

    def ref_of(self, body: object) -> str | None:
        return ref_in(body.get("description")) if isinstance(body, dict) else None

    def parse_create(self, body: object, parse_error: str | None, call: Call) -> Draft | Reply:
        # api.yaml POST /me/videos: 400 "2205: The body of the request isn't formatted properly", "2204: The request
        # contains invalid body parameters", "2230: The upload type is invalid", "3116: The type payload parameter
        # was supplied instead of upload.approach"; `upload` required, `upload.approach` required.
        if parse_error or not isinstance(body, dict):
            return refusal(400, 2205, "The body of the request isn't formatted properly.")
        if "type" in body and "upload" not in body:
            return refusal(400, 3116, "Use upload.approach starting from API version 3.4.")
        upload = body.get("upload")
        if not isinstance(upload, dict) or upload.get("approach") not in APPROACHES:
            return refusal(400, 2230, "The upload type is invalid.")
        if upload["approach"] != "pull":
            return refusal(
                400, 2230, f"The upload type is invalid (the simulator takes pull, not {upload['approach']})."
            )
        if not is_http_url(upload.get("link")):
            return refusal(400, 2204, "upload.link must be the URL of the video (approach pull).")
        problem = _body_problem(body, call.config)
        if problem:
            return refusal(400, 2204, problem)
        return Draft(source=upload["link"], ref=self.ref_of(body), request=body)

    def render_video(self, video: Video, now: float) -> dict:
        request = video.request
        legacy, uploaded, transcoded = _statuses(video, now)
        ready = transcoded == "complete"
        privacy = {"view": "anybody", "embed": "public", "download": False, "add": True, "comments": "anybody"}
        privacy.update({k: v for k, v in (request.get("privacy") or {}).items() if k in ("view", "embed", "download")})
        at = f"{media.base(video, 'vimeo')}/{video.id}"
        hashed = f"?h={derived_id(video.id, 10)}" if privacy["view"] == "unlisted" else ""
        width, height = media.top_size(video) if ready else (0, 0)
        viewer = self.viewer_fields(video, at, ready)  # the active picture, the folder (vimeo_target_extras.py)
        texttracks = {"uri": f"/videos/{video.id}/texttracks", "total": len(video.texts)}
        out = {
            "uri": f"/videos/{video.id}",
            "name": request.get("name") or "Untitled",
            "description": request.get("description"),
            "type": "video",
            "link": f"{at}{hashed}",
            "player_embed_url": f"{at}/embed{hashed}",
            "duration": round(video.duration) if ready else 0,
            "width": width,
            "height": height,
            "created_time": iso_offset(video.created),
            "modified_time": iso_offset(video.finished or video.created),
            "release_time": iso_offset(video.created),
            "privacy": privacy,
            "status": legacy,
            "upload": {
                "status": uploaded,
                "approach": "pull",
                "link": video.source,
                "size": int(video.duration * BYTES_PER_S) if uploaded == "complete" else None,
            },
            "transcode": {"status": transcoded},
            "is_playable": legacy == "available",
            "user": {"uri": f"/users/{USER_ID}"},
            "resource_key": derived_id(f"key/{video.id}", 40),
            "metadata": {"connections": {"texttracks": texttracks, **viewer.pop("connections")}},
        }
        if ready:
            expires = int(time.time() + PLAY_TTL_S)  # wall-clock: the link says when, as Vimeo's does
            signed = urllib.parse.urlencode({"s": _play_sig(video.id, expires), "expires": expires})
            hls = f"{at}/hls/playlist.m3u8?{signed}"
            out["play"] = {"status": "playable", "hls": {"link": hls, "link_expiration_time": iso_offset(expires)}}
        return {**out, **viewer}

    def created(self, video: Video, now: float, replay: bool) -> Reply:
        return Reply(201, self.render_video(video, now))

    def list_ref(self, call: Call) -> str | None:
        return urllib.parse.parse_qs(call.query).get("query", [None])[0]

    def list(self, store: Store, call: Call, now: float) -> Reply:
        asked = list_query(call, SORTS)
        if isinstance(asked, str):
            return self.error("invalid", asked)
        page, per_page, sort, direction = asked
        if call.params.get("user") not in (None, USER_ID):
            return self.error("not_found", "The requested user couldn't be found.")
        words = urllib.parse.parse_qs(call.query).get("query", [""])[0]
        videos = _searched(store.newest_first(), words, call.config)
        key = (lambda v: (v.request.get("name") or "").lower()) if sort == "alphabetical" else (lambda v: v.seq)
        videos.sort(key=key, reverse=direction == "desc")
        shown = videos[(page - 1) * per_page : page * per_page]
        data = [filtered(self.render_video(v, now), _fields(call)) for v in shown]
        path = "/me/videos" if "user" not in call.params else f"/users/{USER_ID}/videos"
        listed = {"total": len(videos), "page": page, "per_page": per_page}
        return Reply(200, {**listed, "paging": paging(path, call, page, per_page, len(videos)), "data": data})

    def get(self, video: Video | None, now: float) -> Reply:
        return self.error("not_found") if video is None else Reply(200, self.render_video(video, now))

    def account(self, cfg: SimConfig, call: Call, body: object, parse_error: str | None, held: dict) -> Account:
        """`GET /me`: the token's user and its plan (`account`)."""
        user = {"uri": f"/users/{USER_ID}", "name": "Simulated account", "link": f"https://vimeo.com/user{USER_ID}"}
        return Account(Reply(200, filtered({**user, "account": cfg.plan}, _fields(call))))

    # ----- text tracks

    def take_track(self, video: Video | None, call: Call, raw: bytes, cfg: SimConfig) -> TextTrack | Reply:
        if video is None:
            return self.error("not_found")
        if call.method == "PUT":
            return _put_file(video, call, raw, cfg)
        if call.method == "POST":
            return _new_track(video, call, raw, cfg)
        held = _track_of(video, call.params.get("track", ""))
        if held is None:
            return refusal(404, 5014, "The specified text track doesn't exist.")
        if call.method == "DELETE":
            video.texts.remove(held)
            video.extra.get("texttracks", {}).pop(held.id, None)
            return Reply(204, raw=b"")  # no body: a keep-alive connection stays in step
        edit, _ = _json(raw)
        problem = _track_problem(edit, partial=True)
        if problem:
            return refusal(400, 2204, problem)
        _edit(video, held, edit)
        return Reply(200, _track(video, held))

    def track_taken(self, video: Video, track: TextTrack, now: float) -> Reply:
        if track.status == "created":  # made, its file to come
            return Reply(201, _track(video, track))
        return Reply(200, {})  # the file PUT to its link

    def list_tracks(self, video: Video | None, call: Call, now: float) -> Reply:
        if video is None:
            return self.error("not_found")
        data = [filtered(_track(video, t), _fields(call)) for t in video.texts]
        return Reply(200, {"total": len(data), "page": 1, "per_page": 100, "paging": {}, "data": data})

    def open_playback(self, cfg: SimConfig, kept: dict, video: Video, rest: builtins.list[str], query: str):
        """The player plays what anyone with the link may watch: anybody, and unlisted with its hash; a `play`
        link (signed for the owner's token, expiring) plays whatever the privacy. A picture's image is served to
        anyone, as Vimeo's image CDN serves it (vimeo_target_extras.py)."""
        picture = self.picture_file(video, rest)
        if picture is not None:
            return picture
        if _play_signed(video.id, query):
            return None
        view = (video.request.get("privacy") or {}).get("view", "anybody")
        if view not in WATCHABLE:
            return 403, media.TEXT, b"Because of its privacy settings, this video cannot be played here.\n"
        if view == "unlisted" and urllib.parse.parse_qs(query).get("h", [""])[0] != derived_id(video.id, 10):
            return 404, media.TEXT, b"Sorry, we couldn't find that page (an unlisted video needs its hash).\n"
        return None

    def events(self, video: Video, moment: str, now: float) -> builtins.list[Event]:
        return []  # no webhooks are documented

    def signature_headers(self, cfg: SimConfig, event: Event, secret: str | None, timestamp: int) -> dict:
        return {}


def _body_problem(body: dict, cfg: SimConfig | None) -> str | None:
    """What a create's other fields break of api.yaml's types and enums (privacy.view, privacy.embed; "When you
    set privacy.view to password, you must provide the password"), and of the plan's rule ("Vimeo Basic members
    can't set this value to disable or unlisted")."""
    for name in ("name", "description"):
        if body.get(name) is not None and not isinstance(body[name], str):
            return f"{name} must be a string"
    privacy = body.get("privacy", {})
    if not isinstance(privacy, dict):
        return "privacy must be an object"
    view, embed = privacy.get("view", "anybody"), privacy.get("embed", "public")
    if view not in VIEWS or embed not in EMBEDS:
        return "privacy.view or privacy.embed is not one of the allowed values"
    if view == "password" and not isinstance(body.get("password"), str):
        return "When you set privacy.view to password, you must provide the password"
    if view in BASIC_BARRED and cfg is not None and cfg.plan == "basic":
        return f"Vimeo Basic members can't set privacy.view to {view}"
    return None


def _searched(videos, words: str, cfg: SimConfig | None) -> list[Video]:
    """The videos a `query` finds: its words in the name or the description, once indexed (search_lag_s)."""
    if not words:
        return list(videos)
    lag = cfg.search_lag_s if cfg is not None else 0.0
    wanted = words.lower()
    return [
        v
        for v in videos
        if time.time() - v.created >= lag
        and (wanted in (v.request.get("name") or "").lower() or wanted in (v.request.get("description") or "").lower())
    ]


def list_query(call: Call, sorts: tuple[str, ...]) -> tuple[int, int, str, str] | str:
    """(page, per_page, sort, direction) of a list request, or what is wrong with them: per_page "up to a maximum
    of 100" (25 by default), sort one of `sorts`, direction asc or desc (asc by default for alphabetical only)."""
    query = urllib.parse.parse_qs(call.query, keep_blank_values=True)
    try:
        per_page = int_param(query, "per_page", 25, 1, 100)
        page = int_param(query, "page", 1, 1, None)
    except ParamError as exc:
        return str(exc)
    sort = query.get("sort", ["default"])[0]
    direction = query.get("direction", ["asc" if sort == "alphabetical" else "desc"])[0]
    if sort not in sorts or direction not in ("asc", "desc"):
        return "sort or direction is not one of the allowed values"
    return page, per_page, sort, direction


def paging(path: str, call: Call, page: int, per_page: int, total: int) -> dict:
    """A collection's `paging`: the next, previous, first and last pages' URIs, the request's other parameters kept."""
    last = max(1, -(-total // per_page))
    pairs = urllib.parse.parse_qsl(call.query, keep_blank_values=True)
    kept = [(k, v) for k, v in pairs if k not in ("page", "per_page")]

    def link(n: int) -> str:
        return f"{path}?" + urllib.parse.urlencode([*kept, ("page", n), ("per_page", per_page)])

    return {
        "next": link(page + 1) if page < last else None,
        "previous": link(page - 1) if page > 1 else None,
        "first": link(1),
        "last": link(last),
    }


def _json(raw: bytes) -> tuple[dict, bool]:
    try:
        doc = json.loads(raw) if raw else {}
    except (ValueError, UnicodeDecodeError):
        return {}, False
    return (doc, True) if isinstance(doc, dict) else ({}, False)


def _track_problem(body: dict, partial: bool) -> str | None:
    """api.yaml create_text_track: language, name and type required; type one of TRACK_TYPES; active a boolean."""
    for name in ("language", "name", "type"):
        if name not in body and not partial:
            return f"{name} is required"
        if name in body and (not isinstance(body[name], str) or not body[name]):
            return f"{name} must be a non-empty string"
    if "type" in body and body["type"] not in TRACK_TYPES:
        return "type is not one of the allowed values"
    if "active" in body and not isinstance(body["active"], bool):
        return "active must be a boolean"
    return None


def _new_track(video: Video, call: Call, raw: bytes, cfg: SimConfig) -> TextTrack | Reply:
    """api.yaml create_text_track: 201 with the track, its `link` ("You can upload to this link when you create it
    for the first time") and `link_expires_time`; inactive unless the body says (our choice: not documented)."""
    body, ok = _json(raw)
    if raw and not ok:
        return refusal(400, 2205, "The body of the request isn't formatted properly.")
    # vimeo.js's example sends type and language in the query: taken where the body leaves them out.
    query = {k: v[0] for k, v in urllib.parse.parse_qs(call.query).items() if k in ("type", "language", "name")}
    body = {**query, **body}
    problem = _track_problem(body, partial=False)
    if problem:
        return refusal(400, 2204, problem)
    seq = video.extra.get("texttrack_seq", 0) + 1
    video.extra["texttrack_seq"] = seq
    ttl = cfg.link_ttl_s if cfg.link_ttl_s > 0 else TRACK_LINK_TTL_S
    kept = video.extra.setdefault("texttracks", {})
    kept[str(seq)] = {"type": body["type"], "active": False, "expires": int(time.time() + ttl), "base": call.base_url}
    track = TextTrack(id=str(seq), language=body["language"], name=body["name"], status="created")
    _edit(video, track, {"active": body.get("active", False)})
    return track


def _edit(video: Video, track: TextTrack, edit: dict) -> None:
    """A PATCH's fields (api.yaml edit_text_track); an active track deactivates the others of its language and type
    ("Only one text track per language and per type can be active")."""
    kept = video.extra["texttracks"][track.id]
    track.language = edit.get("language", track.language)
    track.name = edit.get("name", track.name)
    kept["type"] = edit.get("type", kept["type"])
    if "active" in edit:
        kept["active"] = edit["active"]
    if kept["active"]:
        for other in video.texts:
            mine = video.extra["texttracks"].get(other.id, {})
            if other is not track and other.language == track.language and mine.get("type") == kept["type"]:
                mine["active"] = False


def _track_of(video: Video, tid: str) -> TextTrack | None:
    return next((t for t in video.texts if t.id == tid), None)


def _track(video: Video, track: TextTrack) -> dict:
    """A text track as api.yaml's text-track: the upload link until a file came, then the file's own."""
    kept = video.extra["texttracks"][track.id]
    expires = kept["expires"]
    link = f"{kept['base']}/captions/{video.id}/{track.id}.vtt?" + urllib.parse.urlencode(
        {"expires": expires, "sig": _link_sig(video.id, track.id, expires)}
    )
    return {
        "uri": f"/videos/{video.id}/texttracks/{track.id}",
        "active": kept["active"],
        "type": kept["type"],
        "language": track.language,
        "display_language": track.language,
        "id": int(track.id),
        "link": link,
        "link_expires_time": iso_offset(expires),
        "hls_link": link,
        "hls_link_expires_time": iso_offset(expires),
        "name": track.name,
    }


def _put_file(video: Video, call: Call, raw: bytes, cfg: SimConfig) -> TextTrack | Reply:
    """The file PUT to a track's link (vimeo.js example/upload_texttrack.js: PUT, "Content-Type: text/plain"): a link
    this simulator signed, not past its link_expires_time, used once ("when you create it for the first time")."""
    tid = call.params.get("track", "").removesuffix(".vtt")
    track = _track_of(video, tid)
    query = urllib.parse.parse_qs(call.query)
    try:
        expires = int(query.get("expires", [""])[0])
    except ValueError:
        expires = 0
    given = query.get("sig", [""])[0]
    if track is None or not hmac.compare_digest(given, _link_sig(video.id, tid, expires)):
        return refusal(403, 8003, "The upload link is not valid.")
    if time.time() > expires:
        return refusal(403, 8003, "The upload link has expired.")
    if track.status != "created":
        return refusal(403, 8003, "The upload link was used already: it takes a file when the track is first made.")
    if len(raw) > cfg.track_max_bytes:
        return refusal(400, 2204, f"the text track file is larger than {cfg.track_max_bytes} bytes")
    fmt, why = read_caption(raw, webvtt_only=False)
    if fmt is None:
        return refusal(400, 2204, f"The text track file could not be read: {why}")
    track.content, track.format, track.status = raw, fmt, "ready"
    return track
