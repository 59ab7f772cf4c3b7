"""JW Player as a target, what a viewer sees first (issue 42): the custom poster, the chapters and the playlists,
mixed into JwPlayerProvider (jwplayer.py) as the tracks worker's extras operations (base.py "--- extras"). The
readers of JW's answers are pure functions below the mixin.

Documents (docs.jwplayer.com unless said), each where it is used:
- the poster: "Manage a media poster" (platform/reference/vdh-manage-a-media-poster): "a new custom thumbnail must be
  created and promote[d] to replace the current poster": `POST /v2/sites/{site_id}/thumbnails` makes a thumbnail
  resource "associate[d] with a specific media resource", then it is promoted; "For a media resource, you can only
  select one static poster ... Previous posters remain associated to the media resource as thumbnails". The bodies
  are jwplatform-go's (thumbnails.go, the official Go SDK): create `{relationships: {media: [{id}]}, upload:
  {method: "fetch", thumbnail_type: "static", download_url}}` (the methods "direct" (default), "multipart",
  "external", "fetch"), the promotion `PATCH /v2/sites/{site_id}/thumbnails/{thumbnail_id}` with `{relationships:
  {media: [{id, is_poster: true}]}}`; a thumbnail lists `thumbnail_type`, `source_type` (`custom_upload` in its
  fixture: ours), `delivery_url`, `relationships.media[].is_poster`. The list `GET .../thumbnails/` is asked with
  `q=media_id:<id>`, as peer code asks it (the reference page was not readable here); its answer's key is read as
  `thumbnails` (peer code), or `thumbnail` (thumbnails.go's struct tag). JW fetches the image itself: a private
  or short-lived source link is handed as a copy staged in the stack's bucket (`thumbnail_by_url`). Accepted
  formats gif, jpeg, png, webp; 1920x1080 is the recommended size, not a limit;
- chapters: a text track whose `track_kind` is `chapters` (jwplatform-go text_tracks.go: the create's metadata
  `{label, srclang, position, track_kind}`, a track's `track_kind` at its top), uploaded as a file: `upload.method`
  "direct" (jwplatform-go's default) with `file_format` vtt and `auto_publish`, whose answer carries `upload_link`
  ("For direct uploads, the UploadLink will return a pre-signed S3 Upload Link"); the file is PUT there as bytes,
  without our credentials, and the answer's `ETag` is the file's md5 in quotes (jwplatform-py 2.2.2 upload.py
  `_upload_to_s3`, `SingleUpload.upload`). The file is WebVTT made by webvtt-py (extras.chapters_webvtt). A track
  still `created` (its file never arrived: the PUT's answer was lost before it was taken) is deleted (`DELETE
  .../text_tracks/{id}/`, text_tracks.go) before a new one is made; a `draft` is published (jwplayer.py's publish);
- playlists: a collection is a manual playlist. `POST /v2/sites/{site_id}/playlists/{playlist_type}/` with
  `metadata` {title, description, custom_params, media_filter} (the "Create a playlist" recipe, players/recipes/
  web-player-create-a-playlist; jwplatform-py 2.2.2 `_ManualPlaylistClient`: `/v2/sites/{site_id}/playlists/
  manual_playlist/` to create, `/v2/sites/{site_id}/playlists/{playlist_id}/manual_playlist/` to GET and PATCH).
  A manual playlist's media in order are `metadata.media_filter.include.values` (peer code's
  CreateManualPlaylistPayload and GetManualPlaylistResponse, citing post_/get_/patch_v2-sites-site-id-playlists-
  [playlist-id-]manual-playlist; "Manual playlists are populated & ordered by dragging & dropping videos"): each
  write sends the whole list. Our reference rides the playlist's `custom_params` (`migration_collection`), so a lost
  create is found again by it (`GET /v2/sites/{site_id}/playlists/`, paged), else by the exact title of a manual
  playlist. Ordering keeps every media the playlist holds: ours in source order first, the others after, as they
  were. "When updates are made to playlists, there may be up to 3 minutes of caching" (vdh-create-a-search-
  playlist): the Delivery API's feed may lag the Management API's answer, which is what is read back here;
- the original publish time: the create's `metadata.publish_start_date` (jwplayer.py: "Upload content"; jwplatform-go
  media.go MediaMetadata `publish_start_date`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

from ..tracks import TrackOutcome, TrackResult
from .apivideo import vod_allowed, vod_transport
from .base import Provider
from .extras import ChaptersLook, ChaptersUpload, RemoteCollection, ThumbnailLook, ThumbnailUpload
from .facts import entries, mapping, text, video_id
from .http import Answer, TransportError, quote

OURS = "custom_upload"  # a thumbnail's `source_type` when its image was given, not taken from the video
THUMBNAILS_PAGE_LENGTH = 50  # a media holds a few thumbnails: its frames, and each poster uploaded
CHAPTERS_LABEL = "Chapters"
CHAPTERS = "chapters"
COLLECTION_REF = "migration_collection"  # the playlist's custom param holding our collection key
PLAYLIST_PAGE_LENGTH = 500
PLAYLIST_MAX_PAGES = 20
TRACKS_PAGE_LENGTH = 50  # "Each media can have a maximum of 50 text tracks": one page


class JwExtras(Provider):
    """The extras operations of JwPlayerProvider (its credentials' property is `_site_id`)."""

    takes_thumbnail = "image"
    thumbnail_by_url = True  # upload.method "fetch": JW reads the image from its link
    takes_chapters = True
    takes_collections = True
    keeps_collection_order = True
    published_field = "metadata.publish_start_date"

    def _site_id(self) -> str:
        raise NotImplementedError  # JwPlayerProvider: the credentials' site_id

    def _site(self, suffix: str) -> str:
        return f"/v2/sites/{quote(self._site_id())}/{suffix}"

    # --- the poster ------------------------------------------------------------------------------------

    def thumbnail_state(self, remote_id: str) -> ThumbnailLook | TrackOutcome:
        """The media's custom poster, if a pass made one: a thumbnail of ours that is its poster; one of ours not
        yet promoted (the promotion's answer, or the create's, was lost) is promoted now, never made again."""
        params = {"q": f"media_id:{remote_id}", "page_length": str(THUMBNAILS_PAGE_LENGTH)}
        answer = self._extra_call("GET", self._site("thumbnails/"), params=params)
        if isinstance(answer, TrackOutcome):
            return answer
        poster, waiting = poster_of(answer.body, remote_id)
        if poster is not None:
            return ThumbnailLook(custom=True, digest=poster)
        if waiting is None:
            return ThumbnailLook()
        promoted = self._promote(remote_id, waiting)
        return promoted if promoted.kind is not TrackResult.ATTACHED else ThumbnailLook(custom=True, digest=waiting)

    def set_thumbnail(self, remote_id: str, image: ThumbnailUpload) -> TrackOutcome:
        if not image.url:
            return TrackOutcome(TrackResult.REFUSED, error="jwplayer takes a thumbnail by URL, and none was given")
        body = {
            "relationships": {"media": [{"id": remote_id}]},
            "upload": {"method": "fetch", "thumbnail_type": "static", "download_url": image.url},
        }
        answer = self._extra_call("POST", self._site("thumbnails/"), json_body=body)
        if isinstance(answer, TrackOutcome):
            return answer
        thumbnail = jw_id(mapping(answer.body).get("id"))
        if thumbnail is None:  # made, but unnamed: the next pass's look finds it and promotes it
            return TrackOutcome(TrackResult.TRANSIENT, error=f"provider: HTTP {answer.status} naming no thumbnail")
        return self._promote(remote_id, thumbnail)

    def _promote(self, remote_id: str, thumbnail: str) -> TrackOutcome:
        """Make the thumbnail the media's poster (a PATCH: the same again is harmless). A refusal here is not the
        image's fault for good (JW may still be fetching it): TRANSIENT, and the next look promotes it (or, the
        thumbnail gone, makes it again)."""
        body = {"relationships": {"media": [{"id": remote_id, "is_poster": True}]}}
        done = self._extra_call("PATCH", self._site(f"thumbnails/{quote(thumbnail)}/"), json_body=body)
        if isinstance(done, Answer):
            return TrackOutcome(TrackResult.ATTACHED, remote_track_id=thumbnail)
        if done.kind in (TrackResult.REFUSED, TrackResult.VIDEO_GONE):  # a 404 here: the thumbnail, not the media
            return replace(done, kind=TrackResult.TRANSIENT, error=f"{done.error} (promoting thumbnail {thumbnail})")
        return done

    # --- the chapters ----------------------------------------------------------------------------------

    def chapters_of(self, remote_id: str, language: str) -> ChaptersLook | TrackOutcome:
        """The media's published chapters tracks in `language`; a draft one is published, one JW still reads is
        waited for, and one whose file never arrived is deleted (so the write makes it once more, and only it)."""
        params = {"page": "1", "page_length": str(TRACKS_PAGE_LENGTH)}
        answer = self._extra_call("GET", self._site(f"media/{quote(remote_id)}/text_tracks/"), params=params)
        if isinstance(answer, TrackOutcome):
            return answer
        found = chapters_tracks(answer.body, language)
        ready = [t for t, status in found if status == "ready"]
        if ready:
            return ChaptersLook(len(ready))
        draft = next((t for t, status in found if status == "draft"), None)
        if draft is not None:
            path = self._site(f"media/{quote(remote_id)}/text_tracks/{quote(draft)}/publish/")
            published = self._extra_call("PUT", path)
            if isinstance(published, TrackOutcome):
                return published
            return ChaptersLook(1) if text(mapping(published.body).get("status")) == "ready" else _reading()
        if any(status == "processing" for _, status in found):
            return _reading()
        for stale in (t for t, status in found if status == "created"):
            gone = self._extra_call("DELETE", self._site(f"media/{quote(remote_id)}/text_tracks/{quote(stale)}/"))
            if isinstance(gone, TrackOutcome) and gone.kind is not TrackResult.VIDEO_GONE:
                return gone  # a 404 here is the track already gone
        return ChaptersLook()

    def set_chapters(self, remote_id: str, upload: ChaptersUpload) -> TrackOutcome:
        """A chapters text track, its WebVTT file PUT to the upload link the create answers with: SUBMITTED (JW
        reads the file; the next look finds the track ready)."""
        body = {
            "upload": {"method": "direct", "file_format": "vtt", "auto_publish": True},
            "metadata": {"label": CHAPTERS_LABEL, "srclang": upload.language, "track_kind": CHAPTERS},
        }
        answer = self._extra_call("POST", self._site(f"media/{quote(remote_id)}/text_tracks/"), json_body=body)
        if isinstance(answer, TrackOutcome):
            return answer
        made, link = mapping(answer.body), text(mapping(answer.body).get("upload_link"))
        track = jw_id(made.get("id"))
        if not link or not vod_allowed(link, self.http.base):
            return TrackOutcome(TrackResult.TRANSIENT, error="provider: the chapters track came without an upload link")
        try:  # the pre-signed link carries its own authority: our credentials never go there
            put = vod_transport(self.http).send("PUT", link, data=upload.webvtt)
        except TransportError as exc:
            return TrackOutcome(TrackResult.TRANSIENT, error=f"provider: the chapters file's upload: {exc.kind}")
        if not 200 <= put.status < 300:
            return TrackOutcome(TrackResult.TRANSIENT, error=f"provider: the chapters file's upload: HTTP {put.status}")
        etag = {k.lower(): v for k, v in put.headers.items()}.get("etag", "")
        if etag.strip('"') != hashlib.md5(upload.webvtt).hexdigest():  # upload.py's integrity check, as JW's SDK
            return TrackOutcome(TrackResult.TRANSIENT, error="provider: the chapters file arrived altered (ETag)")
        return TrackOutcome(TrackResult.SUBMITTED, remote_track_id=track)

    # --- the playlists ---------------------------------------------------------------------------------

    def find_collection(self, name: str, ref: str) -> RemoteCollection | TrackOutcome | None:
        """A playlist a pass made (our reference in its custom params), else a manual one titled exactly `name`."""
        titled: RemoteCollection | None = None
        for page in range(1, PLAYLIST_MAX_PAGES + 1):
            params = {"page": str(page), "page_length": str(PLAYLIST_PAGE_LENGTH)}
            answer = self._extra_call("GET", self._site("playlists/"), params=params)
            if isinstance(answer, TrackOutcome):
                return answer
            body = mapping(answer.body)
            listed = [mapping(p) for p in entries(body.get("playlists"))]
            for playlist in listed:
                pid, metadata = jw_id(playlist.get("id")), mapping(playlist.get("metadata"))
                if pid is None:
                    continue
                if mapping(metadata.get("custom_params")).get(COLLECTION_REF) == ref:
                    return RemoteCollection(pid, name)
                kind = text(metadata.get("playlist_type")) or text(playlist.get("playlist_type"))
                if titled is None and metadata.get("title") == name and kind in (None, "manual"):
                    titled = RemoteCollection(pid, name)
            total, size = body.get("total"), body.get("page_length")
            length = size if isinstance(size, int) and 0 < size <= PLAYLIST_PAGE_LENGTH else PLAYLIST_PAGE_LENGTH
            if len(listed) < length or not isinstance(total, int) or page * length >= total:
                return titled
        return TrackOutcome(TrackResult.TRANSIENT, error=f"over {PLAYLIST_MAX_PAGES} pages of playlists to look in")

    def create_collection(self, name: str, kind: str, ref: str) -> TrackOutcome:
        metadata = {"title": name, "custom_params": {COLLECTION_REF: ref, "migration_kind": kind}}
        answer = self._extra_call("POST", self._site("playlists/manual_playlist/"), json_body={"metadata": metadata})
        if isinstance(answer, TrackOutcome):
            return answer
        pid = jw_id(mapping(answer.body).get("id"))
        if pid is None:
            return TrackOutcome(TrackResult.TRANSIENT, error=f"provider: HTTP {answer.status} naming no playlist")
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=pid)

    def collection_members(self, collection_id: str) -> tuple[str, ...] | TrackOutcome:
        answer = self._playlist(collection_id)
        return answer if isinstance(answer, TrackOutcome) else tuple(manual_values(answer.body))

    def place(self, remote_id: str, collection_id: str, position: int | None) -> TrackOutcome:
        """The media at the playlist's end (its place in order is order_collection's)."""
        answer = self._playlist(collection_id)
        if isinstance(answer, TrackOutcome):
            return answer
        held = manual_values(answer.body)
        if remote_id in held:
            return TrackOutcome(TrackResult.ATTACHED, remote_track_id=collection_id)
        return self._write_values(collection_id, [*held, remote_id])

    def order_collection(self, collection_id: str, ordered: Sequence[str]) -> TrackOutcome:
        """Ours in source order, first; every other media the playlist holds after them, as they were. Written
        only where that differs (a member a concurrent placement's write dropped is put back here)."""
        answer = self._playlist(collection_id)
        if isinstance(answer, TrackOutcome):
            return answer
        held = manual_values(answer.body)
        wanted = ordered_values(held, ordered)
        return TrackOutcome(TrackResult.ATTACHED) if wanted == held else self._write_values(collection_id, wanted)

    def _playlist(self, collection_id: str) -> Answer | TrackOutcome:
        answer = self._extra_call("GET", self._site(f"playlists/{quote(collection_id)}/manual_playlist/"))
        if isinstance(answer, TrackOutcome) and answer.kind is TrackResult.VIDEO_GONE:  # the playlist, not a media
            return TrackOutcome(TrackResult.TRANSIENT, error=f"provider: playlist {collection_id} is not there (404)")
        return answer

    def _write_values(self, collection_id: str, values: list[str]) -> TrackOutcome:
        body = {"metadata": {"media_filter": {"include": {"values": values}}}}
        path = self._site(f"playlists/{quote(collection_id)}/manual_playlist/")
        written = self._extra_call("PATCH", path, json_body=body)
        if isinstance(written, TrackOutcome):
            return written
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=collection_id)


def jw_id(value: object) -> str | None:
    """An id JW gives (a media, track, thumbnail or playlist: letters and digits), checked as untrusted text."""
    found = video_id(value)
    return found if found is not None and found.isalnum() else None


def _reading() -> TrackOutcome:
    return TrackOutcome(TrackResult.WAITING, error="JW is still reading the chapters file")


# --- JW's answers, read (pure) -----------------------------------------------------------------------------


def poster_of(body: object, media_id: str) -> tuple[str | None, str | None]:
    """(our thumbnail that is the media's poster, our thumbnail of it not promoted) among a thumbnails list."""
    listed = entries(mapping(body).get("thumbnails")) or entries(mapping(body).get("thumbnail"))
    poster = waiting = None
    for thumbnail in map(mapping, listed):
        tid = jw_id(thumbnail.get("id"))
        if tid is None or thumbnail.get("source_type") != OURS or thumbnail.get("thumbnail_type", "static") != "static":
            continue
        if thumbnail.get("status") in ("failed", "error"):  # JW could not read its image: made again, not promoted
            continue
        links = [mapping(m) for m in entries(mapping(thumbnail.get("relationships")).get("media"))]
        mine = [m for m in links if m.get("id") == media_id]
        if any(m.get("is_poster") is True for m in mine):
            poster = poster or tid
        elif mine:
            waiting = waiting or tid
    return poster, waiting


def is_chapters(track: object) -> bool:
    """Whether a listed text track is a chapters track (its `track_kind`, at its top or in its metadata)."""
    listed = mapping(track)
    return CHAPTERS in (listed.get("track_kind"), mapping(listed.get("metadata")).get("track_kind"))


def chapters_tracks(body: object, language: str) -> list[tuple[str, str]]:
    """(id, status) of each chapters track in `language` (case aside) a text tracks list holds."""
    found = []
    for track in map(mapping, entries(mapping(body).get("text_tracks"))):
        tid, srclang = jw_id(track.get("id")), text(mapping(track.get("metadata")).get("srclang")) or ""
        if tid is not None and is_chapters(track) and srclang.lower() == language.lower():
            found.append((tid, text(track.get("status")) or "processing"))
    return found


def manual_values(body: object) -> list[str]:
    """A manual playlist's media in its order (`metadata.media_filter.include.values`), each once."""
    include = mapping(mapping(mapping(mapping(body).get("metadata")).get("media_filter")).get("include"))
    values: list[str] = []
    for value in entries(include.get("values")):
        mid = jw_id(value)
        if mid is not None and mid not in values:
            values.append(mid)
    return values


def ordered_values(held: Sequence[str], ordered: Sequence[str]) -> list[str]:
    """The playlist's list with `ordered` (ours, in source order) first and the rest of `held` after, in its order."""
    first = list(dict.fromkeys(ordered))
    return first + [mid for mid in held if mid not in first]
