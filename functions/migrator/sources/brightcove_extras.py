"""What a viewer sees on Brightcove besides the video (issue 42), read for the row: the poster, the chapters, the folder
and the playlists, and the publish time. The readers are pure over Brightcove's answers; the one that pages
(`PlaylistIndex`) takes the source's own request function, so every request is paced and counted as the listing's
are.

Documents (apis.support.brightcove.com unless said): the CMS API reference (BrightcoveLearning/api-references-raml
`cms-api/v1/src/video.js`, `playlist.js`), "CMS API Video Fields Reference", "Images and the Dynamic Ingest API",
"Managing Playlists Using the CMS API", "Managing Text Tracks", "Activate/Deactivate or Schedule Videos" and the
Playback API's "JSON/MRSS Feed from a Playlist" sample:

- the poster: the video's `images` ("map of image maps"): `images.poster` and `images.thumbnail`, each `{asset_id,
  remote, src ("URL for the default poster source image"), sources[] of {src, width, height}}`. "The poster image is
  displayed in the Brightcove Player before the user plays the video"; the thumbnail "in playlists, end screens, and
  so forth" ("Images and the Dynamic Ingest API"). The row carries the poster, else the thumbnail where the video
  has no poster, as the reference `brightcove://<video>/images/poster` (or `/thumbnail`), not as its link: "the URLs
  for videos and assets returned by Brightcove APIs are signed, meaning that they include a token that is only good
  for a short time - usually a few hours, but this can vary depending on the account configuration" (the MRSS
  sample), the reference's own example gives `src` over plain http (the https one only among `sources`), and a
  remote image (`remote: true`) lives wherever its owner put it. The resolve reads the video again and hands the
  image it shows then (`image_src`): an https source (the widest where widths are given), else `src` where https;
- chapters: a text track of `kind` chapters ("captions", "chapters", "subtitles", "metadata": video.js), a WebVTT
  file at its `src`, in the video's own `text_tracks`: carried as a track of kind chapters (brightcove.py), a
  `draft` one left out and counted with the captions' drafts;
- the folder: `folder_id`, named by `GET .../folders` (read once a source), a collection of kind folder,
  `folders/<id>`;
- playlists: `GET /v1/accounts/{a}/playlists` ("Gets a page of playlist objects for the account": `limit` default
  20, `offset`; `id`, `name`, `type` "EXPLICIT or smart playlist type", `video_ids` "(EXPLICIT playlists only)",
  `search` "(smart playlists only)"), read once a sweep (`PlaylistIndex`), 100 a page ("A maximum of 100 records
  will be returned from a single request", the CMS API's paging). EXPLICIT is "a manual playlist. The included
  videos and the order of their appearance are defined by an array of video ids": each video's place is its
  `position`. The seven smart types (ACTIVATED_OLDEST_TO_NEWEST, ..., START_DATE_NEWEST_TO_OLDEST) "differ in how
  they order a set of videos that are selected dynamically using a search string": carried with the videos they
  hold at the sweep (`GET .../playlists/{id}/videos`, "Gets the video objects for videos in a playlist", one
  request a smart playlist), without a position: at the target it is a fixed list of what the playlist showed,
  which no longer follows the search, and the order Brightcove computes from activation dates or plays is not
  kept. Playlists need the credentials' `video-cloud/playlist/read` ("Overview: CMS API"); credentials without it
  (refused: 401/403) list no playlists, and each row says so (`playlists_note`);
- the publish time: `published_at`, "start date-time of first activation" (video.js); where the video's
  `schedule.starts_at` ("start date-time of availability") is later, that is when viewers first could play it,
  and it is the row's `published_at`. A video not yet playable (never activated, or scheduled to start ahead) has
  none: its schedule rides in the row's metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from urllib.parse import urlsplit

from ..providers.facts import entries, epoch_of, finite_number, mapping, text
from ..providers.http import Answer, quote
from .indexes import CollectionIndex
from .rows import CollectionInfo

PAGE_SIZE = 100  # the CMS API's most records a request
# Pages of playlists read at most (100,000 playlists), so a listing ends.
MAX_PLAYLIST_PAGES = 1000
IMAGE_KINDS = ("poster", "thumbnail")  # the order a row prefers them in
EXPLICIT = "EXPLICIT"
# The smart playlist types (playlist.js: the create request's `type`): videos found by a search, in Brightcove's order.
SMART = frozenset(
    {
        "ACTIVATED_OLDEST_TO_NEWEST",
        "ACTIVATED_NEWEST_TO_OLDEST",
        "ALPHABETICAL",
        "PLAYS_TOTAL",
        "PLAYS_TRAILING_WEEK",
        "START_DATE_OLDEST_TO_NEWEST",
        "START_DATE_NEWEST_TO_OLDEST",
    }
)
NO_PLAYLIST_READ = (
    "Brightcove refused to list the account's playlists (the API credentials need video-cloud/playlist/read):"
    " no playlist carried"
)

Request = Callable[..., Answer]  # HttpSource.call: (method, path, params=...) -> Answer


def _id(value: object) -> str | None:
    found = text(value)
    return found if found and found.isdigit() and len(found) <= 24 else None


def image_kind(video: Mapping, schemes: tuple[str, ...] = ("https",)) -> str | None:
    """Which of the video's images the row carries: its poster, else its thumbnail; None where it has neither (a
    video still processing, or one whose images were removed)."""
    images = mapping(video.get("images"))
    return next((kind for kind in IMAGE_KINDS if image_src(images.get(kind), schemes)), None)


def image_src(image: object, schemes: tuple[str, ...] = ("https",)) -> str | None:
    """The image's link: of its `sources`, the widest over an allowed scheme (the first where none says a width),
    else its own `src` where its scheme is allowed."""
    image = mapping(image)
    best, widest = None, -1.0
    for source in entries(image.get("sources")):
        src = text(mapping(source).get("src"))
        if src and _allowed(src, schemes):
            width = finite_number(mapping(source).get("width")) or 0.0
            if width > widest:
                best, widest = src, width
    if best:
        return best
    src = text(image.get("src"))
    return src if src and _allowed(src, schemes) else None


def _allowed(url: str, schemes: tuple[str, ...]) -> bool:
    parts = urlsplit(url)
    return parts.scheme in schemes and bool(parts.netloc) and len(url) <= 2048


def when(value: object) -> float | None:
    """A Brightcove time: ISO 8601 as the API sends it, or milliseconds from the epoch as its reference says."""
    epoch = epoch_of(value)
    if epoch is not None and not isinstance(value, str) and epoch > 1e11:
        return epoch / 1000.0
    return epoch


def published_of(video: Mapping, now: float) -> float | None:
    """The row's publish time: the first activation (`published_at`), or the start of the schedule where that is
    later; None where the video has never been activated or is scheduled to start ahead of `now`."""
    published = when(video.get("published_at"))
    if published is None:
        return None
    starts = when(mapping(video.get("schedule")).get("starts_at"))
    first_playable = max(published, starts) if starts is not None else published
    return first_playable if first_playable <= now else None


def folder_of(folder_id: str | None, name: str | None) -> list[CollectionInfo]:
    """The folder that holds the video, as a collection (none where it is in no folder, or the folder is gone)."""
    if not folder_id or not name or len(folder_id) > 64:
        return []
    return [CollectionInfo(f"folders/{folder_id}", name, "folder")]


class PlaylistIndex(CollectionIndex):
    """The playlists that hold each video of the account, read once (on the first `of`) and kept for the sweep."""

    refusal = NO_PLAYLIST_READ

    def __init__(self, call: Request, account_path: str):
        super().__init__()
        self.call, self.account_path = call, account_path

    def _read(self) -> dict[str, list[CollectionInfo]]:
        held: dict[str, list[CollectionInfo]] = {}
        for playlist in self._playlists():
            pid, kind = _id(playlist.get("id")), text(playlist.get("type"))
            if pid is None:
                continue
            if kind == EXPLICIT:
                members: Iterator[tuple[str, int | None]] = _ordered(playlist.get("video_ids"))
            elif kind in SMART:
                members = self._smart(pid)
            else:
                continue  # a type this migration does not know: what it holds is not guessed
            for video_id, position in members:
                found = held.setdefault(video_id, [])
                if all(c.id != f"playlists/{pid}" for c in found):
                    found.append(CollectionInfo(f"playlists/{pid}", playlist.get("name"), "playlist", position))
        return held

    def _playlists(self) -> Iterator[Mapping]:
        """Every playlist of the account, a page of 100 at a time until a short page. An answer other than 200 (but
        a refusal, raised) ends it: what it would have listed is lost, the listing is not."""
        for number in range(MAX_PLAYLIST_PAGES):
            params = {"limit": str(PAGE_SIZE), "offset": str(number * PAGE_SIZE), "sort": "name"}
            answer = self.call("GET", f"{self.account_path}/playlists", params=params)
            if answer.status != 200:
                return
            page = [mapping(p) for p in entries(answer.body)]
            yield from page
            if len(page) < PAGE_SIZE:
                return

    def _smart(self, playlist_id: str) -> Iterator[tuple[str, int | None]]:
        """The videos a smart playlist holds now, without a place: Brightcove orders them by its own rule."""
        answer = self.call("GET", f"{self.account_path}/playlists/{quote(playlist_id)}/videos")
        if answer.status != 200:
            return
        for video in entries(answer.body):
            video_id = _id(mapping(video).get("id"))
            if video_id:
                yield video_id, None


def _ordered(video_ids: object) -> Iterator[tuple[str, int | None]]:
    """An EXPLICIT playlist's videos with their places, in the order of its `video_ids`."""
    for place, value in enumerate(entries(video_ids)):
        video_id = _id(value)
        if video_id:
            yield video_id, place
