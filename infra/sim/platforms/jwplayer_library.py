"""The "jwplayer" profile's wire pieces both of its sides share (the list's `q`, `sort` and ceiling, errors, the
signatures), and its source library with the Delivery API that serves the library's files.

As JW Player documents them (docs.jwplayer.com), each beside the code:
- `GET /v2/sites/{site_id}/media/` pages by `page` (from 1) and `page_length` (default 10), filters with `q` and
  sorts with `sort=field:asc|dsc` ("Building a request"); "The API returns an upper limit of 10,000 media per
  search query. Regardless of pagination, only the first 10,000 results based on the sorting used may be
  retrieved" (listing-media): here a page past it is answered empty, with the query's true `total`, as a
  walk that pages on finds nothing more to say so;
- `q`: `<field>:[<from> TO <to>]` on `created` / `last_modified` (the date ranges peers send JW) and an exact
  match on a field, `external_id:<value>` ("Building a request", Query Parameter q: "Exact Match: Match with a
  single word or with multiple words encapsulated in quotes"). "Due to the complexities of searching longer
  text, value filters longer than 15 characters may not exactly match the results": here a value longer than
  15 characters matches every value that shares its first 15 (a false positive on ids with a common prefix,
  `matches`). A query on custom params, `custom_params: ( name: "abc" AND value: "123" )`, is documented only
  for JWP's separate Cross-Property Search API (docs.cross-property-search.jwp.services/search-api.html), not
  for the Management API's list: the simulator refuses it (400) rather than pretend to know what JW answers;
- errors are `{"errors": [{"code", "description"}]}` (jwplatform-py errors.py reads them so);
- the property's URL signing ("Protect your content with signed URLs", the `signing_secret` knob): the
  Delivery API's `/v2/media/{id}` takes a JWT (HS256, the property's secret) whose `resource` is that path
  and whose `exp` has not passed, and "the response includes signed video URLs"; the file routes
  (`/videos/{id}-{template}.mp4`, `/tracks/{id}.{ext}`, `/manifests/{id}.m3u8`) take `exp` and `sig`, md5 of
  "<path>:<exp>:<secret>" ("Legacy URL token signing"; the path here is the whole of it, `_stream/jwplayer/...`).
  With signing on, an unsigned request is refused 403;
- as a source (library_size > 0): media `J` + 7 digits, 60 s apart; a private one's publish window closed (its
  `publish_end_date` a day after its creation), which the Delivery API serves only to a request signed with
  the property's secret (the owner's; not documented either way); unfetchable in turn: failed, still
  processing, audio; text tracks with a `status` (processing under library_captions_processing), and beside a
  captioned media's published tracks a German one in `draft` ("Prevents a text track from delivering via the
  Delivery API by changing the track status from ready to draft": the unpublish reference,
  put_v2-sites-site-id-media-media-id-text-tracks-track-id-unpublish): the Delivery API's playlist lists only
  `ready` tracks and serves no file of any other;
- what a viewer sees first (issue 42): `publish_start_date` up to three hours after the upload (when it is first
  delivered, apart from `created`); a chapters track (`track_kind` chapters, a WebVTT file of chapter cues:
  chapter_cues.py) on every `library_chapters_every`th media, every third of them its owner's draft; the Delivery
  API's media item with its poster, `image` ("Poster image URL", at `width=720`) and `images[]` of {src, width,
  type} from 320 to 1920 wide (the Delivery API's media answer); the poster itself and the playlists are
  jwplayer_extras.py's.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import re
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from ..config import SimConfig
from ..library import EPOCH, STEP_S, VTT, Item, Served, Shelf, serve_media
from ..profile import KIND_STATUS, Reply
from . import chapter_cues

CEILING = 10_000
EXACT_MAX = 15
PAGE_LENGTH_DEFAULT = 10
# No maximum is published; the simulator takes what one query may ever return.
PAGE_LENGTH_MAX = CEILING
FIELDS = ("created", "last_modified")
FAULTS = ("failed", "processing", "audio")
MODIFIED_AFTER_S = 3600.0  # library.CHANGED_AFTER_S: each library video changed once, an hour on
# Renditions the Delivery API lists for a media: template id, width, height (the widest last).
RENDITIONS = (("Zq6530MP", 320, 180), ("TNpruJId", 1280, 720), ("ynRk0MiN", 1920, 1080))
_CODES = {
    "invalid": "invalid_body",
    "unsupported": "invalid_body",
    "unauthorized": "unauthorized",
    "forbidden": "forbidden",
    "not_found": "not_found",
    "no_route": "not_found",
    "method": "method_not_allowed",
    "conflict": "conflict",
    "full": "payload_too_large",
    "throttled": "too_many_requests",
    "busy": "too_many_requests",
    "failed": "server_error",
    "unavailable": "service_unavailable",
}
_RANGE = re.compile(r"^\s*(created|last_modified)\s*:\s*\[\s*(\S+)\s+TO\s+(\S+)\s*\]\s*$")
_EXTERNAL = re.compile(r'^\s*external_id\s*:\s*(?:"([^"]*)"|(\S+))\s*$')
# A draft track of a captioned library media, beside its published ones (language, kind, label).
DRAFT_TRACK = ("de", "captions", "Deutsch (Entwurf)")
POSTER_WIDTHS = (320, 480, 640, 720, 1280, 1920)  # the widths the Delivery API lists a poster at


def error(kind: str, message: str | None = None) -> Reply:
    description = message or kind.replace("_", " ")
    return Reply(KIND_STATUS[kind], {"errors": [{"code": _CODES.get(kind, kind), "description": description}]})


def iso(epoch: float) -> str:
    """JW's times: `2019-09-25T15:29:11.042095+00:00` (the jwplatform-py README's example)."""
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="microseconds")


def epoch(text: str) -> float | None:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


# ----- the list's query ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """What one list request asks for: a range of a time field, or a value of a field, and the order."""

    field: str | None = None  # created | last_modified, with `low` and `high` (None: open)
    low: float | None = None
    high: float | None = None
    external_id: str | None = None
    sort_field: str = "created"
    descending: bool = True
    page: int = 1
    page_length: int = PAGE_LENGTH_DEFAULT

    def window(self, total: int) -> tuple[int, int]:
        """(first, last) positions this page may show of `total` matches: never past the ceiling."""
        first = (self.page - 1) * self.page_length
        return first, max(first, min(total, CEILING, first + self.page_length))

    def in_range(self, when: float) -> bool:
        # A bound in whole seconds holds the whole of its second.
        return (self.low is None or when >= self.low) and (self.high is None or when < math.floor(self.high) + 1)


def paging(params: dict[str, list[str]]) -> tuple[int, int] | Reply:
    """A collection call's `page` (from 1) and `page_length` (default 10), as "Building a request" has them."""
    try:
        page = int(params.get("page", ["1"])[0])
        length = int(params.get("page_length", [str(PAGE_LENGTH_DEFAULT)])[0])
    except ValueError:
        return error("invalid", "page and page_length must be integers")
    if page < 1 or not 1 <= length <= PAGE_LENGTH_MAX:
        return error("invalid", f"page must be at least 1 and page_length between 1 and {PAGE_LENGTH_MAX}")
    return page, length


def parse_query(query: str) -> Query | Reply:
    params = urllib.parse.parse_qs(query, keep_blank_values=True)
    paged = paging(params)
    if isinstance(paged, Reply):
        return paged
    page, length = paged
    sort = params.get("sort", ["created:dsc"])[0]
    field, _, order = sort.partition(":")
    if field not in FIELDS or order not in ("asc", "dsc"):
        return error("invalid", "sort must be created or last_modified, asc or dsc")
    found: dict = {"sort_field": field, "descending": order == "dsc", "page": page, "page_length": length}
    q = params.get("q", [""])[0]
    if not q.strip():
        return Query(**found)
    if ranged := _RANGE.match(q):
        low, high = (None if b == "*" else epoch(b) for b in ranged.group(2, 3))
        if (low is None and ranged.group(2) != "*") or (high is None and ranged.group(3) != "*"):
            return error("invalid", "a range's bounds must be dates (ISO 8601) or *")
        return Query(field=ranged.group(1), low=low, high=high, **found)
    if exact := _EXTERNAL.match(q):
        return Query(external_id=exact.group(1) if exact.group(1) is not None else exact.group(2), **found)
    # custom_params (the Cross-Property Search API's form), or any other: not what the list documents.
    return error("invalid", "the simulator's q takes a created/last_modified range or an external_id")


def matches(held: object, wanted: str) -> bool:
    """`q`'s value match: exact up to 15 characters; past that, "may not exactly match": on the first 15 only."""
    if not isinstance(held, str):
        return False
    if len(wanted) > EXACT_MAX or len(held) > EXACT_MAX:
        return held[:EXACT_MAX] == wanted[:EXACT_MAX]
    return held == wanted


def listing(rendered: list[dict], total: int, query: Query) -> Reply:
    return Reply(200, {"media": rendered, "page": query.page, "page_length": query.page_length, "total": total})


# ----- signatures (HS256 JWTs and the non-JWT file signatures) -------------------------------------


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def jwt(claims: dict, secret: str) -> str:
    head = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = _b64(json.dumps(claims, separators=(",", ":")).encode())
    signature = hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64(signature)}"


def token_for(token: str | None, secret: str, resource: str) -> dict | None:
    """The claims of `token` where it is a JWT of the property's `secret` for `resource` whose `exp` has not
    passed ("Protect your content with signed URLs": claims `resource` and `exp`), else None."""
    claims = jwt_claims(token, secret) if token else None
    return claims if claims is not None and claims.get("resource") == resource and _live(claims.get("exp")) else None


def jwt_claims(token: str, secret: str) -> dict | None:
    """The claims of a token `secret` signed (HS256), or None."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    expected = hmac.new(secret.encode(), f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
    try:
        given = base64.urlsafe_b64decode(parts[2] + "=" * (-len(parts[2]) % 4))
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (binascii.Error, ValueError):
        return None
    return claims if hmac.compare_digest(expected, given) and isinstance(claims, dict) else None


def file_sig(path: str, expires: str, secret: str) -> str:
    return hashlib.md5(f"{path.lstrip('/')}:{expires}:{secret}".encode()).hexdigest()


def signed_file(path: str, query: str, secret: str) -> bool:
    """Whether `path` (JW's, from its first segment) carries a valid, unexpired `exp` and `sig`."""
    params = urllib.parse.parse_qs(query)
    expires, sig = params.get("exp", [""])[0], params.get("sig", [""])[0]
    if not expires.isdigit() or int(expires) < time.time():
        return False
    return hmac.compare_digest(sig, file_sig(path, expires, secret))


def sign_file(url: str, path: str, secret: str, expires: int) -> str:
    joiner = "&" if "?" in url else "?"
    return f"{url}{joiner}exp={expires}&sig={file_sig(path, str(expires), secret)}"


# ----- the library -----------------------------------------------------------------------------------


def library_id(index: int) -> str:
    return f"J{index:07d}"


def library_index(mid: str) -> int:
    return int(mid[1:]) if len(mid) == 8 and mid[0] == "J" and mid[1:].isdigit() else -1


def _times(video: Item) -> dict[str, float]:
    return {"created": video.created, "last_modified": video.modified}


def render_library(video: Item) -> dict:
    status = {"failed": "failed", "processing": "processing"}.get(video.fault or "", "ready")
    metadata = {
        "title": video.title,
        "description": video.description,
        "tags": list(video.tags),
        "custom_params": {"series": video.tags[0]},
        "external_id": f"lib-{video.index}",
        "author": "Library",
        "publish_start_date": iso(published(video)),
        "publish_end_date": iso(video.created + 86_400) if video.private else None,
        "permalink": f"https://example.com/videos/{video.index}",
    }
    return {
        "id": library_id(video.index),
        "type": "media",
        "created": iso(video.created),
        "last_modified": iso(video.modified),
        "status": status,
        "error_message": "The source file could not be transcoded" if status == "failed" else None,
        "duration": video.duration if status == "ready" else 0.0,
        "media_type": "audio" if video.fault == "audio" else "video",
        "hosting_type": "hosted",
        "external_id": f"lib-{video.index}",
        "mime_type": "video/mp4",
        "source_url": None,
        "trim_in_point": None,
        "trim_out_point": None,
        "metadata": metadata,
    }


def library_tracks(video: Item) -> list[dict]:
    """A media's text tracks: its captions, "processing" while JW still makes them (library_captions_processing),
    then a draft one (DRAFT_TRACK: its owner's, not published, so delivered to no one)."""
    published = [
        (language, kind, name, "processing" if video.captions_processing else "ready")
        for language, kind, name in video.captions
    ]
    drafts = [(*DRAFT_TRACK, "draft")] if video.captions else []
    return [
        {
            "id": f"T{video.index:06d}{n}",
            "type": "text_track",
            "status": status,
            "track_kind": kind,
            "metadata": {"label": name, "srclang": language, "track_kind": kind},
        }
        for n, (language, kind, name, status) in enumerate(published + drafts)
    ]


def published(video: Item) -> float:
    """When the media was first delivered: up to three hours after its upload (apart from `created`)."""
    return video.created + (video.index % 4) * 3600


def chapter_tracks(cfg: SimConfig, video: Item) -> list[dict]:
    """The media's chapters track where it has one (chapter_cues.has_chapters), id `C<index>0`: published, or
    on every third chaptered media its owner's draft."""
    if not chapter_cues.has_chapters(cfg, video.index):
        return []
    draft = (video.index // max(1, cfg.library_chapters_every)) % 3 == 2
    return [
        {
            "id": f"C{video.index:06d}0",
            "type": "text_track",
            "status": "draft" if draft else "ready",
            "track_kind": "chapters",
            "metadata": {"label": "Chapters", "srclang": "en", "track_kind": "chapters"},
        }
    ]


def _positions(shelf: Shelf, query: Query) -> range:
    """The library indexes a time range holds (created and last_modified grow with the index)."""
    if query.field is None:
        return range(shelf.size)
    shift = 0.0 if query.field == "created" else MODIFIED_AFTER_S
    first = 0 if query.low is None else max(0, math.ceil((query.low - EPOCH - shift) / STEP_S))
    end = (
        shelf.size
        if query.high is None
        else min(shelf.size, math.floor((query.high + 1 - EPOCH - shift - 1e-6) / STEP_S) + 1)
    )
    return range(first, max(first, end))


def list_library(shelf: Shelf, query: Query) -> Reply:
    """A page of the library as the query selects, orders and caps it (flat in memory: indexes are arithmetic)."""
    if query.external_id is not None:
        order: Sequence[int] = [i for i in range(shelf.size) if matches(f"lib-{i}", query.external_id)]
    else:
        order = _positions(shelf, query)
    order = order[::-1] if query.descending else order
    deleted = {i for i in shelf.state.deleted if 0 <= i < shelf.size}
    total = len(order) - sum(1 for i in deleted if i in order) if deleted else len(order)
    first, last = query.window(total)
    if deleted:
        shown = [i for i in order if i not in deleted][first:last]
    else:
        shown = list(order[first:last])
    videos = [v for v in (shelf.video(i) for i in shown) if v is not None]
    return listing([render_library(v) for v in videos], total, query)


# ----- the Delivery API --------------------------------------------------------------------------------


def delivered(cfg: SimConfig, video: Item, token: str | None, resource: str) -> str | None:
    """Why the Delivery API refuses `resource` of `video` ("403" / "404"), or None to serve it."""
    secret = cfg.signing_secret
    signed = secret is not None and bool(secret) and token_for(token, secret, resource) is not None
    if secret and not signed:
        return "403"
    if video.private and not signed:
        return "404"  # outside its publish window: delivered to no one but a request of the property's
    return None


def _live(exp: object) -> bool:
    return isinstance(exp, int | float) and not isinstance(exp, bool) and exp > time.time()


def playlist(shelf: Shelf, video: Item, token_exp: int | None) -> dict:
    """The Delivery API's `/v2/media/{id}`: one playlist item with its sources and tracks (signed when asked so)."""
    mid, base = library_id(video.index), f"{shelf.base_url}/_stream/jwplayer"

    def url(path: str) -> str:
        # The true duration rides every file's query, as library.media_url's do: what a target reads back.
        plain = f"{base}/{path}?{urllib.parse.urlencode(video.media_query())}"
        secret = shelf.cfg.signing_secret
        if token_exp is None or secret is None:  # a token_exp is asked for only where signing is on
            return plain
        return sign_file(plain, f"_stream/jwplayer/{path}", secret, token_exp)

    sources: list[dict[str, object]] = [{"file": url(f"manifests/{mid}.m3u8"), "type": "application/vnd.apple.mpegurl"}]
    sources += [
        {"file": url(f"videos/{mid}-{template}.mp4"), "type": "video/mp4", "width": w, "height": h,
         "label": f"H.264 {w}px", "filesize": video.size * w // 1920}
        for template, w, h in RENDITIONS
    ]  # fmt: skip
    # Only a published (ready) track is delivered ("Enables a text track to be delivered via the Delivery API by
    # changing the track status from draft to ready": put_v2-sites-site-id-media-media-id-text-tracks-track-id-publish).
    tracks = [
        {"file": url(f"tracks/{t['id']}.vtt"), "kind": t["metadata"]["track_kind"], "label": t["metadata"]["label"]}
        for t in library_tracks(video) + chapter_tracks(shelf.cfg, video)
        if t["status"] == "ready"
    ]
    poster = f"{base}/v2/media/{mid}/poster.jpg"
    item = {
        "mediaid": mid,
        "title": video.title,
        "image": f"{poster}?width=720",
        "images": [{"src": f"{poster}?width={w}", "width": w, "type": "image/jpeg"} for w in POSTER_WIDTHS],
        "duration": round(video.duration),
        "sources": sources,
        "tracks": tracks,
    }
    return {"title": video.title, "kind": "Single Item", "playlist": [item]}


def serve_delivery(shelf: Shelf, method: str, path: str, query: str, range_header: str | None) -> Served | None:
    """`/_stream/jwplayer/...`: the Delivery API's media JSON, and the files it points to."""
    prefix = "/_stream/jwplayer/"
    if not path.startswith(prefix):
        return None
    rest, cfg = path[len(prefix) :], shelf.cfg
    text = {"Content-Type": "text/plain"}
    if rest.startswith("v2/media/"):
        video = shelf.video(library_index(rest[len("v2/media/") :]))
        if video is None or video.fault is not None:
            return Served(404, text, b"Not Found")
        token = urllib.parse.parse_qs(query).get("token", [None])[0]
        refused = delivered(cfg, video, token, f"/v2/media/{library_id(video.index)}")
        if refused:
            return Served(int(refused), text, b"Forbidden: a signed URL is required" if refused == "403" else b"")
        claims = jwt_claims(token, cfg.signing_secret) if token and cfg.signing_secret else None
        body = json.dumps(playlist(shelf, video, int(claims["exp"]) if claims else None)).encode()
        return Served(200, {"Content-Type": "application/json"}, body)
    return _serve_file(shelf, method, rest, query, range_header)


def _serve_file(shelf: Shelf, method: str, rest: str, query: str, range_header: str | None) -> Served:
    text = {"Content-Type": "text/plain"}
    found = re.match(r"^(videos/(J\d{7})-([A-Za-z0-9]{8})\.mp4|tracks/([TC])(\d{6})(\d)\.vtt)$", rest)
    if not found:
        return Served(404, text, b"Not Found")
    index = int(found.group(2)[1:]) if found.group(2) else int(found.group(5))
    video = shelf.video(index)
    if video is None:
        return Served(404, text, b"Not Found")
    if shelf.cfg.signing_secret and not signed_file(f"_stream/jwplayer/{rest}", query, shelf.cfg.signing_secret):
        return Served(403, text, b"Forbidden: the URL is not signed, or its signature has expired")
    if found.group(4) == "C":  # a chapters file: served while the track is published
        if not any(t["status"] == "ready" for t in chapter_tracks(shelf.cfg, video)):
            return Served(404, text, b"Not Found")
        body = chapter_cues.vtt(video)
        return Served(
            200, {"Content-Type": "text/vtt", "Content-Length": str(len(body))}, b"" if method == "HEAD" else body
        )
    if found.group(4) is not None:
        n = int(found.group(6))
        if n >= len(video.captions) or video.captions_processing:  # past the captions: the draft, never delivered
            return Served(404, text, b"Not Found")
        body = VTT.format(i=video.index, language=video.captions[n][0]).encode()
        return Served(
            200, {"Content-Type": "text/vtt", "Content-Length": str(len(body))}, b"" if method == "HEAD" else body
        )
    file = urllib.parse.urlsplit(shelf.url(video, f"{found.group(3)}.mp4"))
    ready: Callable[[Item, str], bool] = lambda item, name: True  # noqa: E731
    return serve_media(shelf.cfg, shelf.state, method, file.path, file.query, range_header, shelf.faults, ready)
