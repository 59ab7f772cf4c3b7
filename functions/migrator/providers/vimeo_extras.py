"""What a viewer sees on a Vimeo target (issue 42; docs/providers.md "What a viewer sees"): the row's thumbnail as the
video's active picture, its chapters, and its collections as Vimeo folders and showcases. `VimeoExtras` is the part
of VimeoProvider (vimeo.py) that does it, beside the pure readers and planners the unit tests take as tables.

Documents: vimeo/openapi api.yaml (febb900) for pictures, folders (projects) and showcases (albums); the API reference
as konfig-sdks/vimeo-python-sdk generates it (2024-03-19) for chapters and what api.yaml predates; PyVimeo 1.1.2
(vimeo/upload.py, UploadPictureMixin.upload_picture) for the picture's steps as Vimeo's own SDK sends them.

- thumbnail, three steps: `POST /videos/{id}/pictures` ("adds a thumbnail image to the specified video"; 201 with the
  picture and its `link`, "The upload URL for the picture. This field appears when you create the picture resource
  for the first time"), the image `PUT` to that link, then `PATCH .../pictures/{picture} {active: true}` ("Whether
  this thumbnail is the default"). The look (`thumbnail_state`, on a pass past the first) lists the video's pictures
  (`GET .../pictures`): an active custom picture is ours, set; a custom one left inactive is half made (its image
  may never have arrived) and is deleted (`DELETE .../pictures/{picture}`) before the three steps run again, so a
  lost answer never leaves two;
- chapters, one a call: `POST /videos/{id}/chapters {title, timecode}` (timecode "in seconds from the start of the
  video"). Each write first lists the video's chapters (`GET .../chapters`, 100 a page) and adds only those missing,
  latest first, the one at 0 last (a chapter at a wanted timecode under another title is then edited: `PATCH
  .../chapters/{chapter}`), so a pass cut short is finished by the next, never doubled. The first chapter is sent
  at 0 (noted where the row has it later): a list with no chapter at 0 is one cut short, which is how the look
  (`chapters_of`, and `migrator verify`) tells it from a whole one by a count alone. What else Vimeo asks of
  timecodes (a least spacing, whole seconds) is not documented: the row's are sent as they are;
- collections: a folder or a project is a Vimeo folder (`POST /me/projects {name}`, "creates a new folder"; a video
  placed by `PUT /me/projects/{id}/videos/{video}`), every other kind a showcase (`POST /me/albums {name, sort:
  "arranged"}`, "The videos appear as arranged by the owner of the showcase"; `PUT /me/albums/{id}/videos/{video}`).
  Their ids are kept as `projects/<id>` and `albums/<id>`. Neither keeps a field for our reference but a showcase's
  public description, so both are looked up by exact name (`GET /me/projects` or `/me/albums` with `query`, "The
  search query to use to filter the results") when they are made: `create_collection`, which knows the kind (a
  folder and a showcase may share a name), not `find_collection`. A video is in one folder (its `parent_folder`):
  placed in a second, it would leave the first, so the second is noted. A showcase's order: its videos replaced by
  the same videos in source order (`PUT /me/albums/{id}/videos {videos}`, "replaces all the existing videos in an
  album", a comma-separated list of video URIs), members placed outside our order kept after ours; that the list's
  order becomes the arrangement is not documented;
- the publish time: no field takes it (the video's `release_time` is read-only): noted at the create (vimeo.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from ..row_extras import Chapter
from ..tracks import TrackOutcome, TrackResult
from .base import Provider, listing_pages, too_many_pages
from .extras import ChaptersLook, ChaptersUpload, RemoteCollection, ThumbnailLook, ThumbnailUpload
from .facts import entries, finite_number, mapping, text
from .http import Answer, quote

FOLDER, SHOWCASE = "projects", "albums"
# The row's collection kinds (row_extras) and where each goes at Vimeo.
PLACES = {
    "folder": FOLDER,
    "project": FOLDER,
    "showcase": SHOWCASE,
    "album": SHOWCASE,
    "playlist": SHOWCASE,
    "category": SHOWCASE,
    "channel": SHOWCASE,
}
PER_PAGE = 100  # "up to a maximum of 100"
CHAPTER_PAGES = 6  # a row carries at most 500 chapters (row_extras): more listed is not a video of ours
NAME_PAGES = 10  # pages of folders or showcases a name's search may read
_COLLECTION_ID = re.compile(r"^(projects|albums)/(\d{1,20})$")
_PICTURE_URI = re.compile(r"^/videos/\d{1,20}/pictures/(\d{1,20})$")
ATTACHED = TrackOutcome(TrackResult.ATTACHED)


@dataclass(frozen=True)
class Picture:
    """A listed picture: its id, whether it is the video's active one, its type (custom, default, caution)."""

    picture_id: str
    active: bool
    kind: str


def last_id(uri: object, collection: str) -> str | None:
    """The id a Vimeo URI ends with, where the segment before it is `collection` ("/users/1/projects/5" -> "5")."""
    parts = (text(uri) or "").rstrip("/").split("/")
    if len(parts) < 2 or parts[-2] != collection or not parts[-1].isdigit() or len(parts[-1]) > 20:
        return None
    return parts[-1]


def place_of(kind: str) -> str | None:
    """Where a row's collection of `kind` goes: a folder (`projects`) or a showcase (`albums`); None: no such kind."""
    return PLACES.get(kind)


def read_collection_id(collection_id: str) -> tuple[str, str] | None:
    """("projects" | "albums", the id) of a collection id we recorded, or None."""
    match = _COLLECTION_ID.match(collection_id or "")
    return (match.group(1), match.group(2)) if match else None


def read_picture(item: object) -> Picture | None:
    """A video's picture (`/videos/{id}/pictures/{picture}`; a user's portrait is none), or None."""
    doc = mapping(item)
    match = _PICTURE_URI.match(text(doc.get("uri")) or "")
    if match is None:
        return None
    return Picture(match.group(1), doc.get("active") is True, text(doc.get("type")) or "")


def timecode(start_s: float) -> int | float:
    """A chapter's start as the `timecode` sent: whole seconds as an integer, else to the millisecond."""
    rounded = round(start_s, 3)
    return int(rounded) if rounded == int(rounded) else rounded


def chapter_body(chapter: Chapter) -> dict:
    return {"title": chapter.title, "timecode": timecode(chapter.start_s)}


def read_chapter(item: object) -> tuple[str, float, str] | None:
    """(id, timecode, title) of a listed chapter, or None where it is not one."""
    doc = mapping(item)
    chapter_id, at = last_id(doc.get("uri"), "chapters"), finite_number(doc.get("timecode"))
    if chapter_id is None or at is None:
        return None
    return chapter_id, at, text(doc.get("title")) or ""


def from_zero(chapters: Sequence[Chapter]) -> tuple[tuple[Chapter, ...], str | None]:
    """The chapters as Vimeo is given them: the first at 0, and the note where the row has it later."""
    if not chapters or chapters[0].start_s == 0:
        return tuple(chapters), None
    first = chapters[0]
    note = (
        f"the first chapter, {first.title[:60]!r}, starts at 0 s at Vimeo (at {first.start_s:g} s in the row): a"
        " Vimeo list without a chapter at 0 is one a pass left cut short"
    )
    return (replace(first, start_s=0.0), *chapters[1:]), note


def chapters_plan(
    wanted: Sequence[Chapter], held: Sequence[tuple[str, float, str]]
) -> tuple[list[dict], list[tuple[str, dict]]]:
    """What to write so the video holds `wanted`: the bodies to add (no chapter at that timecode yet), latest first so
    a pass cut short leaves no chapter at 0, and the edits (id, body) of a chapter at a wanted timecode under another
    title. Chapters of other timecodes are left be."""
    at = {round(seconds, 3): (chapter_id, title) for chapter_id, seconds, title in held}
    adds, edits = [], []
    for chapter in sorted(wanted, key=lambda c: c.start_s, reverse=True):
        found = at.get(round(chapter.start_s, 3))
        if found is None:
            adds.append(chapter_body(chapter))
        elif found[1] != chapter.title:
            edits.append((found[0], {"title": chapter.title}))
    return adds, edits


def whole(held: Sequence[tuple[str, float, str]]) -> int:
    """How many chapters a look counts: all those held where one is at 0 (a whole list), else none."""
    return len(held) if any(seconds == 0 for _, seconds, _ in held) else 0


def showcase_order(ordered: Sequence[str], current: Sequence[str]) -> list[str]:
    """A showcase's videos in source order (`ordered`: those placed so far, sorted by their positions), then those it
    holds that are not among them, in its own order (a placement not yet ordered, a video put there by hand)."""
    ours = list(dict.fromkeys(ordered))
    return ours + [v for v in dict.fromkeys(current) if v not in set(ours)]


def named(items: object, name: str, collection: str) -> str | None:
    """The id of the first listed folder or showcase named exactly `name`."""
    for item in map(mapping, entries(items)):
        found = last_id(item.get("uri"), collection)
        if found and item.get("name") == name:
            return found
    return None


class VimeoExtras(Provider):
    """Thumbnails, chapters and collections at Vimeo (mixed into VimeoProvider, whose `_put_file` uploads)."""

    takes_thumbnail = "image"
    # A row's poster time with no image: `POST /videos/{id}/pictures {time, active}` "Creates an image of the video
    # from the given time offset" once the video exists (set_thumbnail_time).
    poster_time_later = True
    takes_chapters = True
    takes_collections = True
    keeps_collection_order = True  # a showcase made `arranged`; a folder keeps none (order_collection: nothing)
    published_field = None  # no field takes it: noted at the create

    def _put_file(self, link: str, content: bytes, media_type: str = "text/plain") -> Answer | TrackOutcome:
        raise NotImplementedError  # VimeoProvider's: a PUT to an upload link Vimeo handed us

    # --- the thumbnail ---------------------------------------------------------------------------------------

    def _pictures(self, remote_id: str) -> list[Picture] | TrackOutcome:
        answer = self._extra_call("GET", f"/videos/{quote(remote_id)}/pictures", params={"per_page": str(PER_PAGE)})
        if isinstance(answer, TrackOutcome):
            return answer
        return [p for p in map(read_picture, entries(mapping(answer.body).get("data"))) if p is not None]

    def thumbnail_state(self, remote_id: str) -> ThumbnailLook | TrackOutcome:
        """Set when the video's active picture is a custom one (only we give a migrated video one); a custom picture
        left inactive by an earlier pass is deleted, so the set that follows leaves one."""
        pictures = self._pictures(remote_id)
        if isinstance(pictures, TrackOutcome):
            return pictures
        active = next((p for p in pictures if p.active and p.kind == "custom"), None)
        if active is not None:
            return ThumbnailLook(custom=True, digest=active.picture_id)
        for stale in (p for p in pictures if p.kind == "custom"):
            path = f"/videos/{quote(remote_id)}/pictures/{quote(stale.picture_id)}"
            gone = self._track_send("DELETE", path)
            if isinstance(gone, TrackOutcome):
                return gone
            if gone.status not in (204, 404):
                return self._track_failure(gone)
        return ThumbnailLook()

    def set_thumbnail(self, remote_id: str, image: ThumbnailUpload) -> TrackOutcome:
        path = f"/videos/{quote(remote_id)}/pictures"
        made = self._extra_call("POST", path)
        if isinstance(made, TrackOutcome):
            return made
        picture = read_picture(made.body)
        link = text(mapping(made.body).get("link")) or ""
        if picture is None or urlsplit(link).scheme not in ("https", "http"):
            return TrackOutcome(TrackResult.TRANSIENT, error="provider: a new picture without an upload link")
        sent = self._put_file(link, image.body, image.media_type)
        if isinstance(sent, TrackOutcome):
            return sent
        if not 200 <= sent.status < 300:
            # The image itself refused (400, 415) fails the entry; the link's own trouble is tried again, the
            # half-made picture deleted by the next look.
            failure = self._track_failure(sent)
            if sent.status in (400, 413, 415) or failure.kind is TrackResult.THROTTLED:
                return failure
            return TrackOutcome(TrackResult.TRANSIENT, error=failure.error)
        active = self._extra_call("PATCH", f"{path}/{quote(picture.picture_id)}", json_body={"active": True})
        if isinstance(active, TrackOutcome):
            return active
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=picture.picture_id)

    def set_thumbnail_time(self, remote_id: str, time_s: float) -> TrackOutcome:
        """The frame at `time_s` made the video's active picture, in one call ("Creates an image of the video from the
        given time offset"); where a pass whose answer was lost made it already (the active picture is a custom one:
        only we give a migrated video one), it stands, so a retry never makes a second."""
        seen = self.thumbnail_state(remote_id)
        if isinstance(seen, TrackOutcome):
            return seen
        if seen.custom:
            return TrackOutcome(TrackResult.ATTACHED, remote_track_id=seen.digest)
        body = {"time": round(max(0.0, time_s), 3), "active": True}
        made = self._extra_call("POST", f"/videos/{quote(remote_id)}/pictures", json_body=body)
        if isinstance(made, TrackOutcome):
            return made
        picture = read_picture(made.body)
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=picture.picture_id if picture else None)

    # --- chapters -------------------------------------------------------------------------------------------

    def chapters_of(self, remote_id: str, language: str) -> ChaptersLook | TrackOutcome:
        """The video's chapters where they are a whole list (one at 0: `whole`); Vimeo keeps one list a video."""
        held = self._chapters(remote_id)
        return held if isinstance(held, TrackOutcome) else ChaptersLook(whole(held))

    def _chapters(self, remote_id: str) -> list[tuple[str, float, str]] | TrackOutcome:
        held: list[tuple[str, float, str]] = []
        for page in range(1, CHAPTER_PAGES + 1):
            params = {"per_page": str(PER_PAGE), "page": str(page)}
            answer = self._extra_call("GET", f"/videos/{quote(remote_id)}/chapters", params=params)
            if isinstance(answer, TrackOutcome):
                return answer
            items = entries(mapping(answer.body).get("data"))
            held += [c for c in map(read_chapter, items) if c is not None]
            if len(items) < PER_PAGE or not mapping(mapping(answer.body).get("paging")).get("next"):
                return held
        return TrackOutcome(TrackResult.REFUSED, error=f"the video holds over {CHAPTER_PAGES * PER_PAGE} chapters")

    def set_chapters(self, remote_id: str, upload: ChaptersUpload) -> TrackOutcome:
        held = self._chapters(remote_id)
        if isinstance(held, TrackOutcome):
            return held
        chapters, note = from_zero(upload.chapters)
        adds, edits = chapters_plan(chapters, held)
        path = f"/videos/{quote(remote_id)}/chapters"
        for body in adds:
            added = self._extra_call("POST", path, json_body=body)
            if isinstance(added, TrackOutcome):
                return added
        for chapter_id, body in edits:
            edited = self._extra_call("PATCH", f"{path}/{quote(chapter_id)}", json_body=body)
            if isinstance(edited, TrackOutcome):
                return edited
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=f"{len(chapters)} chapters", note=note)

    # --- folders and showcases ------------------------------------------------------------------------------

    def find_collection(self, name: str, ref: str) -> RemoteCollection | TrackOutcome | None:
        """None, asking nothing: a name names a folder or a showcase, and only `create_collection` is told which
        (it looks the name up there before it makes one)."""
        return None

    def _named(self, place: str, name: str) -> str | TrackOutcome | None:
        """The id of our account's folder or showcase named exactly `name`, by the list's `query`, page by page."""
        for page in range(1, NAME_PAGES + 1):
            params = {"query": name, "per_page": str(PER_PAGE), "page": str(page), "fields": "uri,name"}
            answer = self._extra_call("GET", f"/me/{place}", params=params)
            if isinstance(answer, TrackOutcome):
                return answer
            items = entries(mapping(answer.body).get("data"))
            found = named(items, name, place)
            if found is not None:
                return found
            if len(items) < PER_PAGE or not mapping(mapping(answer.body).get("paging")).get("next"):
                return None
        return TrackOutcome(TrackResult.TRANSIENT, error=f"over {NAME_PAGES} pages of {place} named alike")

    def create_collection(self, name: str, kind: str, ref: str) -> TrackOutcome:
        place = place_of(kind)
        if place is None:
            return TrackOutcome(TrackResult.REFUSED, error=f"vimeo keeps no collection of kind {kind!r}")
        found = self._named(place, name)
        if isinstance(found, TrackOutcome):
            return found
        if found is None:
            body = {"name": name} if place == FOLDER else {"name": name, "sort": "arranged"}
            made = self._extra_call("POST", f"/me/{place}", json_body=body)
            if isinstance(made, TrackOutcome):
                return made
            found = last_id(mapping(made.body).get("uri"), place)
            if found is None:
                return TrackOutcome(TrackResult.TRANSIENT, error=f"provider: HTTP {made.status} naming no {place}")
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=f"{place}/{found}")

    def _in_folder(self, remote_id: str) -> str | TrackOutcome | None:
        """The id of the folder the video is in (its `parent_folder`), None when in none."""
        answer = self._extra_call("GET", f"/videos/{quote(remote_id)}", params={"fields": "parent_folder.uri"})
        if isinstance(answer, TrackOutcome):
            return answer
        return last_id(mapping(mapping(answer.body).get("parent_folder")).get("uri"), FOLDER)

    def place(self, remote_id: str, collection_id: str, position: int | None) -> TrackOutcome:
        parsed = read_collection_id(collection_id)
        if parsed is None:
            return TrackOutcome(TrackResult.REFUSED, error=f"not a Vimeo folder or showcase: {collection_id[:60]!r}")
        place, number = parsed
        if place == FOLDER:
            folder = self._in_folder(remote_id)
            if isinstance(folder, TrackOutcome):
                return folder
            if folder not in (None, number):
                note = f"Vimeo keeps a video in one folder: it stays in folder {folder}, placed there first"
                return TrackOutcome(TrackResult.NOTED, note=note)
        placed = self._extra_call("PUT", f"/me/{place}/{number}/videos/{quote(remote_id)}")
        if isinstance(placed, TrackOutcome):
            return placed
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=collection_id)

    def placed_in(self, remote_id: str, collection_id: str) -> bool | TrackOutcome:
        """A folder: the video's `parent_folder`; a showcase: `GET /me/albums/{id}/videos/{video}`, which "determines
        whether the album contains the specified video" (404 when not)."""
        parsed = read_collection_id(collection_id)
        if parsed is None:
            return False
        place, number = parsed
        if place == FOLDER:
            folder = self._in_folder(remote_id)
            return folder if isinstance(folder, TrackOutcome) else folder == number
        answer = self._track_send("GET", f"/me/albums/{number}/videos/{quote(remote_id)}", params={"fields": "uri"})
        if isinstance(answer, TrackOutcome):
            return answer
        if answer.status == 404:
            return False
        return True if 200 <= answer.status < 300 else self._track_failure(answer)

    def collection_members(self, collection_id: str) -> tuple[str, ...] | TrackOutcome:
        """The folder's or showcase's videos (a showcase's in its arrangement: `sort=manual`), every page."""
        parsed = read_collection_id(collection_id)
        if parsed is None:
            return ()
        place, number = parsed
        found: list[str] = []
        for page in listing_pages():
            params = {"per_page": str(PER_PAGE), "page": str(page), "fields": "uri"}
            if place == SHOWCASE:
                params["sort"] = "manual"
            answer = self._extra_call("GET", f"/me/{place}/{number}/videos", params=params)
            if isinstance(answer, TrackOutcome):
                return answer
            items = entries(mapping(answer.body).get("data"))
            found += [v for v in (last_id(mapping(i).get("uri"), "videos") for i in items) if v]
            if len(items) < PER_PAGE or not mapping(mapping(answer.body).get("paging")).get("next"):
                return tuple(found)
        return TrackOutcome(TrackResult.TRANSIENT, error=str(too_many_pages()))

    def keeps_order_of(self, collection_id: str) -> bool:
        """A showcase keeps its videos' arrangement; a folder keeps none."""
        parsed = read_collection_id(collection_id)
        return parsed is not None and parsed[0] == SHOWCASE

    def order_collection(self, collection_id: str, ordered: Sequence[str]) -> TrackOutcome:
        """A showcase's videos in source order (`showcase_order`), written only where they are not so already; a
        folder keeps no order of its own."""
        parsed = read_collection_id(collection_id)
        if parsed is None or parsed[0] == FOLDER:
            return ATTACHED
        current = self.collection_members(collection_id)
        if isinstance(current, TrackOutcome):
            return current
        wanted = showcase_order(ordered, current)
        if wanted == list(current):
            return ATTACHED
        body = {"videos": ",".join(f"/videos/{v}" for v in wanted)}
        replaced = self._extra_call("PUT", f"/me/albums/{parsed[1]}/videos", json_body=body)
        return replaced if isinstance(replaced, TrackOutcome) else ATTACHED
