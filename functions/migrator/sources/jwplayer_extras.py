"""What a viewer sees on JW Player besides the video (issue 42), read for the row: the poster, the chapters, the
playlists and the publish time. The readers are pure over JW's answers; the one that pages (`PlaylistIndex`) takes
the source's own request function, so every request is paced and counted as the listing's are (JW's 60 requests a
minute per token are the live site's too).

Documents (docs.jwplayer.com): "Protect your content with signed URLs" (the Delivery API's JWT resources, among them
`/v2/media/{media_id}/poster.jpg`), the Delivery API's media (`playlist[].image` "Poster image URL", `images[]` of
{src, width, type}, `https://cdn.jwplayer.com/v2/media/{id}/poster.jpg?width=...`, widths 320 to 1920), "Manage a
media poster" (every upload gets "an image (static) poster created from the 10th second of your video", which a
custom poster replaces), the text tracks' `track_kind` (captions, subtitles, chapters), "Building a request"
(collections paged by `page` and `page_length`), the playlists' Management API routes as jwplatform-java's
PlaylistsClient calls them (`GET /v2/sites/{site_id}/playlists/`, `GET .../playlists/{id}/manual_playlist/`), and
the playlist types of "Building & Managing Playlists" (support.jwplayer.com):

- the poster: every media has one (its custom poster, else the frame JW took), at the Delivery API's
  `/v2/media/{id}/poster.jpg`, widest at `width=1920`. Carried as the reference `jwplayer://<id>/poster/poster.jpg`
  and resolved to that URL when it is set, signed there with a JWT of the property's secret where the credentials
  carry it (a property with URL signing refuses an unsigned request): no Management API request, at the listing or
  at the resolve. The poster of a media whose publish window is closed is delivered to no one but a signed request;
- chapters: a text track whose `track_kind` is chapters, published (`ready`), read in the media's text tracks
  (the listing asks for them already): its Delivery API file `/tracks/{id}.vtt` is the WebVTT chapters file; a
  draft one is counted with the captions' drafts in the row's `text_tracks_note`;
- playlists: `GET /v2/sites/{site}/playlists/` (`page`, `page_length`), read once a sweep (`PlaylistIndex`). A
  manual playlist ("populated & ordered by dragging & dropping videos ... do not change after their creation
  unless you change them") is read at `GET .../playlists/{id}/manual_playlist/`, one request a manual playlist: its
  media in order, `metadata.media_filter.include.values` (the form peer code reads and writes; the reference's
  schema was not readable here), each media's place its `position`. The playlists JW fills by rule (dynamic:
  "automatically include or exclude videos that match content filtering rules", trending, article matching,
  search, recommendations, watchlist) are not carried: the Management API keeps their rule, not their media (those
  exist only in the Delivery API's feed, per request, per viewer for some), and a copy of today's would be a
  manual playlist that no longer follows the rule. A listed playlist that names no type is tried as a manual one
  (an answer other than 200: not one). Credentials refused the playlists (401/403) list none, and each row says so
  (`playlists_note`);
- the publish time: `metadata.publish_start_date`, when the media is first delivered (the media's own answer).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from ..providers.facts import entries, mapping, text
from ..providers.http import Answer, quote
from .indexes import CollectionIndex
from .rows import CollectionInfo

POSTER = "poster.jpg"  # the reference's item: jwplayer://<id>/poster/poster.jpg
POSTER_WIDTH = 1920  # the widest the Delivery API lists in a media's images
PAGE_LENGTH = 500  # playlists asked a page (none published; a smaller page the answer tells is read as told)
MAX_PLAYLIST_PAGES = 200
MANUAL = "manual"
# The types JW fills by rule ("Building & Managing Playlists"; jwplatform-py's playlist clients): not carried.
BY_RULE = frozenset({"dynamic", "trending", "article_matching", "search", "recommendations", "watchlist"})
NO_PLAYLIST_READ = (
    "JW Player refused to list the property's playlists (the API credentials cannot read them): no playlist carried"
)

Request = Callable[..., Answer]  # HttpSource.call: (method, path, params=...) -> Answer


def jw_id(value: object) -> str | None:
    """A media or playlist id as JW writes them (8 letters and digits; up to 64 taken), else None."""
    found = text(value)
    return found if found and found.isalnum() and len(found) <= 64 else None


def playlist_type(playlist: Mapping) -> str | None:
    """The type a listed playlist says it is (`metadata.playlist_type`, or at its top), lower-cased; None: none."""
    said = text(mapping(playlist.get("metadata")).get("playlist_type")) or text(playlist.get("playlist_type"))
    return said.strip().lower() if said else None


def manual_order(playlist: Mapping) -> list[str]:
    """A manual playlist's media ids in its order (`metadata.media_filter.include.values`), each once."""
    include = mapping(mapping(mapping(playlist.get("metadata")).get("media_filter")).get("include"))
    found: list[str] = []
    for value in entries(include.get("values")):
        mid = jw_id(value)
        if mid and mid not in found:
            found.append(mid)
    return found


class PlaylistIndex(CollectionIndex):
    """The manual playlists that hold each media of the property, read once (on the first `of`), kept for the sweep."""

    refusal = NO_PLAYLIST_READ

    def __init__(self, call: Request, site_path: str):
        super().__init__()
        self.call, self.site_path = call, site_path

    def _read(self) -> dict[str, list[CollectionInfo]]:
        held: dict[str, list[CollectionInfo]] = {}
        for listed in self._playlists():
            pid, kind = jw_id(listed.get("id")), playlist_type(listed)
            if pid is None or kind in BY_RULE or (kind is not None and kind != MANUAL):
                continue
            answer = self.call("GET", f"{self.site_path}/playlists/{quote(pid)}/manual_playlist/")
            if answer.status != 200:
                continue  # no manual playlist after all (or gone since the list): nothing to place
            playlist = mapping(answer.body)
            name = text(mapping(playlist.get("metadata")).get("title")) or text(
                mapping(listed.get("metadata")).get("title")
            )
            for place, mid in enumerate(manual_order(playlist)):
                held.setdefault(mid, []).append(CollectionInfo(f"playlists/{pid}", name, "playlist", place))
        return held

    def _playlists(self) -> Iterator[Mapping]:
        """Every playlist of the property, a page at a time until the total is reached or a page is short. An answer
        other than 200 (but a refusal, raised) ends it: what it would have listed is lost, the listing is not."""
        seen = 0
        for number in range(1, MAX_PLAYLIST_PAGES + 1):
            params = {"page": str(number), "page_length": str(PAGE_LENGTH)}
            answer = self.call("GET", f"{self.site_path}/playlists/", params=params)
            if answer.status != 200:
                return
            body = mapping(answer.body)
            page = [mapping(p) for p in entries(body.get("playlists"))]
            yield from page
            seen += len(page)
            told = body.get("page_length")
            length = told if isinstance(told, int) and not isinstance(told, bool) and told >= 1 else PAGE_LENGTH
            total = body.get("total")
            if len(page) < length or (isinstance(total, int) and not isinstance(total, bool) and seen >= total):
                return
