"""Vimeo as a source (developer.vimeo.com/api/reference, its OpenAPI file vimeo.json 3.4; PyVimeo 1.1.2
sends the same requests).

- credentials: a personal access token, `Authorization: bearer <token>`, with the `private` and
  `video_files` scopes; `{"token": "..."}`, and `"team": "<user id>"` to list a team's library
  (below). File links are given only to such a token on a plan that allows downloads (Standard or
  higher); a token without them sees no `download` field at all;
- list: `GET /me/videos?page=&per_page=&sort=date&direction=asc` (per_page "up to a maximum of
  100"), a collection `{total, page, per_page, paging: {next}, data}`; a delta sweep sorts by
  `modified_time`, newest first, and stops at the first video older than the mark. `fields` trims
  each video to what is carried (the API's JSON filter);
- pages are numbered over the list as it stands at each request, so a video deleted between two
  pages moves every later one a place back and the first of the next page would never be read:
  each page overlaps the one before by OVERLAP videos (a window of page number and size chosen so,
  `window`), repeats are dropped by id after the last video already listed, and a page that finds
  none of those is read again from further back once (the cursor carries the position and the last
  ids: `Cursor`);
- a team: `/me/videos` is what the token's user uploaded; a team's library, its other members'
  uploads too, is its owner's account (team members upload "to your account": help centre,
  "Managing team members on your account"), listed at `GET /users/{owner id}/videos` ("Get all the
  videos that the user has uploaded"): the credentials' `"team"`, or `VimeoSource(team=...)`;
- a video: `uri` "/videos/{id}", `name`, `description`, `tags[].name`, `created_time`,
  `modified_time` (ISO 8601), `duration` (s), `privacy.view`, `parent_folder.name`, `status` /
  `transcode.status`, `type`, and `download[]`: `{quality, rendition, link, expires, size, width,
  height}`, quality "source" being the file as it was uploaded; the links expire after 24 hours
  (Vimeo help centre, "Download links");
- privacy: each `privacy.view` becomes the narrowest of our privacies that still lets no one watch
  who could not before (`privacy_of`), with a note in the row's metadata where Vimeo's could not be
  kept as it was; the resolve just before the create reads it again (`Resolution.privacy`);
- a video still uploading or transcoding is no row yet: it goes to `page.pending`, and the next
  sweep asks `video(id)` for it, since a delta by modified time may never list it again;
- text tracks: `GET /videos/{id}/texttracks`, `{data: [{uri, active, type, language, link,
  link_expires_time, name}]}`, type captions or subtitles; how many a video has is in
  `metadata.connections.texttracks.total`, so they are asked for only where there are some. A track
  with `active: false` is its owner's still: carried after the active ones, its name marked
  INACTIVE and the row's metadata saying so, since no target keeps a track inactive;
- what a viewer sees first (issue 42; vimeo_extras.py): the active picture (`pictures`, in the video's own answer,
  carried as `vimeo://<video>/pictures/<picture>` and resolved to its largest image when it is set), the chapters
  (`GET /videos/{id}/chapters`, only where `has_chapters`), the folder (`parent_folder`) and the showcases that
  hold the video (the account's showcases read once a sweep, with each video's place in a showcase arranged by
  hand) as `collections`, and `release_time`, "when the video was released", as `published_at`. `folder` stays
  the folder's name, for the targets that take a folder as text. `tracks=False` (`--no-tracks`) leaves out the
  requests of their own: text tracks, chapters, showcases;
- usage (issue 45; inline_usage.py): `stats.plays`, asked for in `fields`, as the row's `usage`; where Vimeo
  answers it null (the count not shown), the row carries none: no plays known, not 0;
- rate limits: `X-RateLimit-Limit` / `-Remaining` / `-Reset`, the reset an ISO 8601 time
  ("2016-08-30T11:41:40+00:00"), per plan, no published number; past the limit a 429 and a
  lock-out of "up to a minute" with no Retry-After (help centre, "Rate limits"), waited out by
  HttpSource's lock-out backoff (`lockout_s`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import ClassVar, TypeGuard

from ..link_life import LinkTerms
from ..messages import MAX_TRACK_NAME_LENGTH
from ..pacing import RateSignal
from ..providers.facts import CredentialsError, entries, epoch_of, mapping, text
from ..providers.http import quote
from ..providers.ratelimit import read_rate_headers
from .base import Entry, HttpSource, Page, Resolution, SourceDenied, SourceRef, Unfetchable, gone
from .inline_usage import vimeo_usage
from .rows import TrackInfo, make_row, unfetchable
from .vimeo_extras import ShowcaseIndex, folder_of, largest_link, picture_id, read_chapters

PER_PAGE = 100
# Videos each page reads again of the one before: more deletions than this between two pages (of videos
# already listed) are caught by reading that page again from PER_PAGE further back.
OVERLAP = 5
VIDEO_FIELDS = (
    "uri,name,description,tags.name,created_time,modified_time,duration,privacy.view,parent_folder.name,"
    "status,transcode.status,type,download,metadata.connections.texttracks.total,"
    # What a viewer sees first, in the same answer: no request of its own (vimeo_extras.py).
    "release_time,has_chapters,parent_folder.uri,pictures.uri,pictures.active,pictures.type,pictures.default_picture,"
    # How much it was played (issue 45; inline_usage.py): asked for by name, as the JSON filter drops the rest.
    "stats.plays"
)
# A picture's answer, resolved: its largest size's link.
PICTURE_FIELDS = "uri,active,type,default_picture,sizes.width,sizes.link"
ACCEPT = "application/vnd.vimeo.*+json;version=3.4"  # the version pinned, as Vimeo asks
# privacy.view (vimeo.json 3.4; help centre, "Video privacy settings") -> the narrowest of our privacies that holds
# it, and why where Vimeo's could not be kept as it was. public: anyone; unlisted: anyone with the link (the
# targets play it as public, noted there); private: no one we could name, the owner signs playback for whom it
# chooses. Who may watch a password, contacts, users or embed-only video exists on Vimeo alone.
PRIVACY: dict[str, tuple[str, str | None]] = {
    "anybody": ("public", None),  # "Anyone can view the video"
    "unlisted": ("unlisted", None),  # "Not searchable from vimeo.com"; anyone with its link can watch it
    "nobody": ("private", None),  # "No one besides the owner can view the video"
    "password": ("private", "anyone with the video's password (the password is not carried)"),
    "contacts": ("private", "only the owner's contacts on Vimeo"),
    "users": ("private", "only people with a Vimeo account"),
    "disable": ("private", "hidden from vimeo.com, playable only where it is embedded"),
}
WORKING = frozenset({"uploading", "transcode_starting", "transcoding"})
NO_FILES = (
    "no file access: Vimeo gives download links only to a token with the video_files scope, on a plan "
    "that allows downloads (Standard or higher)"
)
STILL_PROCESSING = "still processing at the source: list it again once Vimeo has finished"
INACTIVE = "inactive on Vimeo"


def video_id_of(video: Mapping) -> str | None:
    """ "/videos/123" -> "123"."""
    uri = text(video.get("uri")) or ""
    tail = uri.rstrip("/").rpartition("/")[2]
    return tail if tail.isdigit() else None


def source_file(video: Mapping) -> Mapping | None:
    """The file to migrate: the original as uploaded (quality "source"), else the largest rendition."""
    files = [f for f in entries(video.get("download")) if isinstance(f, dict) and text(f.get("link"))]
    for f in files:
        if f.get("quality") == "source" or f.get("rendition") == "source":
            return f
    sized = [f for f in files if isinstance(f.get("size"), int | float) and not isinstance(f.get("size"), bool)]
    return max(sized, key=lambda f: f["size"]) if sized else (files[0] if files else None)


def _changed(video: Mapping) -> float | None:
    return epoch_of(video.get("modified_time")) or epoch_of(video.get("created_time"))


def privacy_of(video: Mapping) -> tuple[str | None, str | None]:
    """The row's privacy for the video's `privacy.view`, and the note where Vimeo's could not be kept as it was.
    A value Vimeo adds later is private, never wider; no privacy at all is left to the stack (DefaultPlayback)."""
    view = text(mapping(video.get("privacy")).get("view"))
    if view is None:
        return None, None
    privacy, who = PRIVACY.get(view, ("private", f"a privacy this migration does not know ({view[:40]!r})"))
    if who is None:
        return privacy, None
    return privacy, f"Vimeo privacy.view {view[:40]}: {who}; no target can hold that, so it is carried as {privacy}"


def why_unfetchable(video: Mapping) -> str | None:
    """The reason this video cannot be fetched now, in the words the inventory and the uploader share."""
    status = text(video.get("status")) or ""
    transcode = text(mapping(video.get("transcode")).get("status")) or ""
    if status in WORKING or transcode == "in_progress":
        return STILL_PROCESSING
    if status.endswith("_error") or transcode == "error" or status in ("quota_exceeded", "total_cap_exceeded"):
        return f"failed at the source (Vimeo status {status or transcode})"
    if status == "unavailable":
        return "unavailable at the source (Vimeo status unavailable)"
    if source_file(video) is None:
        return NO_FILES
    return None


def team_of(value: object) -> str | None:
    """The team owner's user id from `"12345"`, `"user12345"` or `"/users/12345"`; None for none given.
    CredentialsError (naming no secret: an id is none) for anything else."""
    if value is None or value == "":
        return None
    given = text(value) or ""
    plain = given.strip().removeprefix("/users/").removeprefix("user")
    if not plain.isdigit() or len(plain) > 20:
        raise CredentialsError('the vimeo "team" must be the team owner\'s user id (digits, or /users/<id>)')
    return plain


@dataclass(frozen=True)
class Cursor:
    """Where a listing stands: `offset` videos listed so far, the ids of the last ones (`tail`, newest last)."""

    offset: int = 0
    tail: tuple[str, ...] = ()

    @classmethod
    def parse(cls, cursor: str | None) -> Cursor:
        """`<offset>:<id>,<id>...`; a bare number is a page of PER_PAGE (a state saved before the overlap)."""
        if not cursor:
            return cls()
        head, sep, ids = cursor.partition(":")
        if not head.isdigit():
            return cls()
        if not sep:
            return cls((max(1, int(head)) - 1) * PER_PAGE)
        return cls(int(head), tuple(i for i in ids.split(",") if i.isdigit()))

    def __str__(self) -> str:
        return f"{self.offset}:{','.join(self.tail)}"


def window(offset: int, overlap: int, largest: int = PER_PAGE) -> tuple[int, int]:
    """(page, per_page) of the numbered page that starts at least `overlap` videos before `offset` and reaches
    furthest past it: page n of size p holds the videos at positions (n-1)p to np-1, so the sizes from `largest`
    down to half of it are tried (a page of a few videos would cost as many requests)."""
    start = max(0, offset - overlap)
    first, size = max(((start // p * p, p) for p in range(largest, largest // 2, -1)), key=lambda w: w[0] + w[1])
    return first // size + 1, size


class VimeoSource(HttpSource):
    platform = "vimeo"
    credential_env: ClassVar[Mapping[str, str]] = {"token": "VIMEO_TOKEN"}
    default_base_url = "https://api.vimeo.com"
    # Vimeo publishes no number (limits vary by plan and are told in the headers); this pace keeps a
    # listing well inside what its headers have shown, and the headers slow it further when they say so.
    documented_rate_per_s = None
    # Past the limit, "temporarily prevented from making requests for up to a minute" with nothing saying when
    # it ends (help centre, "Rate limits", help.vimeo.com/hc/en-us/articles/12427783954065).
    lockout_s = 60.0
    # Each download entry carries its `expires` (Resolution.expires_at); "Download links" in the help centre.
    link_terms = LinkTerms("Vimeo's download links expire, each at the time its `expires` says")

    def __init__(self, *args, team: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.team = team_of(team)
        self._showcases: ShowcaseIndex | None = None  # read on the first video that asks, kept for the sweep

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        token = creds.get("token")
        if not isinstance(token, str) or not token:
            raise CredentialsError('the vimeo credentials need "token" (a personal access token)')
        return {"Authorization": f"bearer {token}", "Accept": ACCEPT}

    def rate_signal(self, headers: Mapping[str, str]) -> RateSignal:
        signal = read_rate_headers(headers, self.clock(), self.rate_window_s)
        lowered = {str(k).lower(): v for k, v in headers.items()}
        reset = epoch_of(lowered.get("x-ratelimit-reset"))  # an ISO 8601 time, unlike most
        if reset is not None and reset > 1_000_000_000:
            signal = replace(signal, reset_after=max(0.0, reset - self.clock()))
        # The limit counts over a window Vimeo does not state: it is not read as a rate.
        return replace(signal, limit_per_s=None)

    # --- listing ---------------------------------------------------------------------------------

    def library_path(self) -> str:
        """The list to sweep: the team's library when one is named, else the token's own uploads."""
        team = self.team
        if team is None:
            try:
                team = team_of(mapping(self.credentials() or {}).get("team"))
            except CredentialsError as exc:
                raise SourceDenied(str(exc)) from None
        return "/me/videos" if team is None else f"/users/{quote(team)}/videos"

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        at = Cursor.parse(cursor)
        videos, first, more, total = self._window(at.offset, OVERLAP if at.tail else 0, since)
        fresh = _after(videos, at.tail)
        if fresh is None and first > 0:  # none of the last listed is there: read this page from further back
            videos, first, more, total = self._window(at.offset, OVERLAP + PER_PAGE, since)
            fresh = _after(videos, at.tail)
        if fresh is None:  # the last listed are all gone: every video here but them, repeats or not
            fresh = [v for v in videos if video_id_of(v) not in at.tail]
        page = Page()
        older_seen = self.take(page, fresh, _changed, since, tracks)
        hold_processing(page)
        end = first + len(videos)
        if isinstance(total, int) and not isinstance(total, bool) and since is None:
            page.remaining = max(0, total - end)
        if more and not older_seen:
            ids = [i for i in (video_id_of(v) for v in videos[-OVERLAP:]) if i]
            page.cursor = str(Cursor(end, tuple(ids) or at.tail))
        return page

    def _window(self, offset: int, overlap: int, since: float | None) -> tuple[list[dict], int, bool, object]:
        """The videos of the page `window` picks, the position of its first, whether more follow, the total."""
        number, size = window(offset, overlap)
        params = {"page": str(number), "per_page": str(size), "fields": VIDEO_FIELDS}
        params.update(
            {"sort": "modified_time", "direction": "desc"}
            if since is not None
            else {"sort": "date", "direction": "asc"}
        )
        body = mapping(self.read("GET", self.library_path(), "the video list", gone_ok=False, params=params))
        # Positions as the answer counts them, should it page otherwise than asked (a smaller per_page).
        told_page, told_size = body.get("page"), body.get("per_page")
        if _whole(told_page) and _whole(told_size) and told_page >= 1 and 1 <= told_size <= PER_PAGE:
            number, size = told_page, told_size
        videos = [mapping(v) for v in entries(body.get("data"))]
        more = bool(text(mapping(body.get("paging")).get("next")))
        return videos, (number - 1) * size, more, body.get("total")

    def video(self, video_id: str, tracks: bool = True) -> Page:
        """One video as a page lists it (the next sweep asks for those a page left pending)."""
        page = Page()
        if not video_id.isdigit():
            return page
        found = self.read("GET", f"/videos/{quote(video_id)}", "the video", params={"fields": VIDEO_FIELDS})
        if found is None:
            return page  # gone
        entry = self.entry(mapping(found), tracks)
        if entry is not None:
            page.entries.append(entry)
        hold_processing(page)
        return page

    def entry(self, video: Mapping, tracks: bool) -> Entry | None:
        vid = video_id_of(video)
        if vid is None:
            return None  # not a video we could ever name again
        ref = self.ref(vid)
        reason = why_unfetchable(video)
        if reason:
            return unfetchable(self.platform, vid, ref, reason, video.get("name"))
        chosen = source_file(video) or {}
        count = mapping(mapping(mapping(video.get("metadata")).get("connections")).get("texttracks")).get("total")
        found, inactive = self._tracks(vid) if tracks and isinstance(count, int) and count > 0 else ([], 0)
        privacy, privacy_note = privacy_of(video)
        metadata = {"source_file": text(chosen.get("quality")) or text(chosen.get("rendition")) or "unknown"}
        if privacy_note:
            metadata["privacy_note"] = privacy_note
        if inactive:
            metadata["texttracks_note"] = (
                f"{inactive} text track(s) {INACTIVE}: carried after the active ones, named '({INACTIVE})'; no "
                "target keeps a track inactive, so viewers there can choose them"
            )
        picture = picture_id(vid, video.get("pictures"))
        chapters = read_chapters(self.call, vid) if tracks and video.get("has_chapters") is True else []
        return make_row(
            self.platform,
            vid,
            ref,
            title=video.get("name"),
            description=video.get("description"),
            tags=[mapping(t).get("name") for t in entries(video.get("tags"))],
            created_at=video.get("created_time"),
            duration_s=video.get("duration"),
            size_bytes=chosen.get("size"),
            privacy=privacy,
            folder=mapping(video.get("parent_folder")).get("name"),
            tracks=found,
            metadata=metadata,
            thumbnail_url=self.ref(vid, "pictures", picture) if picture else None,
            chapters=chapters,
            collections=folder_of(video) + (self.showcases().of(vid) if tracks else []),
            published_at=video.get("release_time"),
            usage=vimeo_usage(video, self.clock()),
        )

    def showcases(self) -> ShowcaseIndex:
        """The showcases of the library listed (the token's, or the team owner's), read once a sweep."""
        if self._showcases is None:
            self._showcases = ShowcaseIndex(self.call, self.library_path().removesuffix("/videos") + "/albums")
        return self._showcases

    def _tracks(self, vid: str) -> tuple[list[TrackInfo], int]:
        """The video's caption and subtitle tracks, the active first (a target that keeps one file per language
        sends the first), and how many are inactive."""
        answer = self.call("GET", f"/videos/{quote(vid)}/texttracks")
        if answer.status != 200:
            return [], 0  # the video's tracks are lost, the video is not
        active, inactive = [], []
        for track in entries(mapping(answer.body).get("data")):
            track = mapping(track)
            tid = (text(track.get("uri")) or "").rstrip("/").rpartition("/")[2]
            if not tid or track.get("type") not in ("captions", "subtitles"):
                continue
            ref, name = self.ref(vid, "texttracks", tid), text(track.get("name"))
            if track.get("active") is False:
                shown = name[: MAX_TRACK_NAME_LENGTH - len(INACTIVE) - 3] if name else None
                inactive.append(TrackInfo(ref, track.get("language"), track["type"], _marked(shown)))
            else:
                active.append(TrackInfo(ref, track.get("language"), track["type"], name))
        return active + inactive, len(inactive)

    # --- resolving ---------------------------------------------------------------------------------

    def resolve(self, ref: SourceRef) -> Resolution:
        if ref.is_track:
            return self._resolve_track(ref)
        video = self.read("GET", f"/videos/{quote(ref.video_id)}", "the video", params={"fields": VIDEO_FIELDS})
        if video is None:
            return Resolution.unfetchable(gone("Vimeo"))
        video = mapping(video)
        reason = why_unfetchable(video)
        if reason:
            return Resolution.unfetchable(reason)
        chosen = source_file(video) or {}
        # The privacy as Vimeo says it now: a video made private since the inventory is not created public.
        return Resolution.ready(chosen["link"], epoch_of(chosen.get("expires")), privacy=privacy_of(video)[0])

    def _resolve_track(self, ref: SourceRef) -> Resolution:
        if ref.kind == "pictures":
            return self._resolve_picture(ref)
        if ref.kind != "texttracks":
            return Resolution.unfetchable(f"not a Vimeo track reference: {ref}")
        track = self.read("GET", f"/videos/{quote(ref.video_id)}/texttracks/{quote(ref.item or '')}", "the text track")
        if track is None:
            return Resolution.unfetchable(gone("Vimeo"))
        track = mapping(track)
        link = text(track.get("link"))
        if not link:
            return Resolution.unfetchable("the text track has no file link")
        return Resolution.ready(link, epoch_of(track.get("link_expires_time")))

    def _resolve_picture(self, ref: SourceRef) -> Resolution:
        """The picture's largest image; the one the video shows now if its owner has replaced it since."""
        vid, pid = quote(ref.video_id), quote(ref.item or "")
        picture = self.read("GET", f"/videos/{vid}/pictures/{pid}", "the picture", params={"fields": PICTURE_FIELDS})
        if picture is None:
            fields = ",".join(f"pictures.{name}" for name in PICTURE_FIELDS.split(","))
            video = self.read("GET", f"/videos/{vid}", "the video", params={"fields": fields})
            if video is None:
                return Resolution.unfetchable(gone("Vimeo"))
            picture = mapping(video).get("pictures")
            if picture_id(ref.video_id, picture) is None:
                return Resolution.unfetchable("the video shows no picture of its own on Vimeo any more")
        link = largest_link(picture)
        # Vimeo's image links say no end (help centre: they are read again, not kept): none is given.
        return Resolution.ready(link) if link else Resolution.unfetchable("the picture has no image link")


def hold_processing(page: Page) -> None:
    """A video still uploading or transcoding is not written off: it moves from the entries to `pending`."""
    held = [e for e in page.entries if isinstance(e, Unfetchable) and e.reason == STILL_PROCESSING]
    page.entries = [e for e in page.entries if not (isinstance(e, Unfetchable) and e.reason == STILL_PROCESSING)]
    page.pending.extend(held)


def _after(videos: list[dict], tail: tuple[str, ...]) -> list[dict] | None:
    """The videos after the last of `tail` found among them; None when none is (or there is no tail: all)."""
    if not tail:
        return videos
    seen = set(tail)
    for n in range(len(videos) - 1, -1, -1):
        if video_id_of(videos[n]) in seen:
            return videos[n + 1 :]
    return None


def _marked(name: str | None) -> str:
    return f"{name} ({INACTIVE})" if name else INACTIVE


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
