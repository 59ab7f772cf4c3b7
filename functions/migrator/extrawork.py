"""The tracks worker's pass on one extra (extras.py): a thumbnail, the chapters, a place in a collection.

Each pass is the caption track's own shape: a look where an earlier pass may have done it (on a pass past the
first: `look`), then fetch, check and put, answered as a `TrackOutcome` that `tracks.decide` turns into the
entry's next state, written fenced by the entry's claim (trackworker.py):

- thumbnail: the image fetched through the guarded fetch (`trackfetch`; s3:// presigned, a source reference
  resolved at the source), checked (`extras.image_kind`: JPEG, PNG or WebP by their bytes, at most the target's
  size), then set where the target takes an image (handed as a link where it fetches by URL: the source's own
  public https link, else a copy staged in the stack's bucket); where it takes only a frame time, the row's
  poster time is set and the image kept in the stack's bucket (`noted`, its key in the note); a row with a
  poster time and no image, on a target that picks the frame after the create, sets that time;
- chapters: the row's list, or its chapters track fetched and read (`extras.read_chapters`), written as the
  target takes them (a target that fetches the file by URL, Mux, is handed a copy staged in the stack's bucket, in
  its own format: `Provider.chapters_file`); a target without chapters gets `noted`, the WebVTT file kept in the
  stack's bucket;
- collection: the collection made once (its own ledger item: `ledger/collections.py`; a pass that finds another
  making it waits), the video placed in it, and where the target keeps an order, the order of every member
  placed so far set from their source positions.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from decimal import Decimal
from typing import Any

from .extras import (
    CHAPTERS,
    COLLECTION,
    MAX_IMAGE_BYTES,
    THUMBNAIL,
    Extra,
    ExtrasFacts,
    chapters_webvtt,
    digest,
    handoff_key,
    image_kind,
    kept_key,
    poster_time,
    read_chapters,
)
from .fate import excerpt
from .ledger import CollectionRefused, CollectionSource, CollectionState, Ledger
from .messages import SOURCE_PLATFORMS, parse_tracks
from .providers import Provider
from .providers.extras import ChaptersUpload, ThumbnailUpload
from .row_extras import MAX_POSITION
from .trackfetch import FetchFailed, FetchPolicy
from .tracks import LEASE_MARGIN_S, TrackOutcome, TrackResult, TrackState, decide

# The language chapters are filed under where the target keeps one list a language (api.video) and neither the
# chapters track nor the row's captions say one.
DEFAULT_CHAPTERS_LANGUAGE = "en"
WEBVTT = "text/vtt"


def extras_facts(provider: Provider) -> ExtrasFacts:
    """What the target does with each extra, from its class facts (base.py, "--- extras")."""
    return ExtrasFacts(
        provider.name,
        takes_thumbnail=provider.takes_thumbnail,
        poster_time_later=provider.poster_time_later,
        takes_chapters=provider.takes_chapters,
        takes_collections=provider.takes_collections,
        one_collection_per_video=provider.one_collection_per_video,
        collections_instead=provider.collections_instead,
    )


class ExtraPasses:
    """The passes on extras, mixed into TracksWorker (whose fields these are)."""

    ledger: Ledger
    provider: Provider
    policy: FetchPolicy
    fetch: Callable
    clock: Callable[[], float]
    rng: random.Random
    max_attempts: int
    # A file put in the stack's bucket: (key, body, media type) -> a short-lived link to it; None: no bucket.
    stage_extra: Callable[[str, bytes, str], str] | None

    def _location(self, url: str) -> Any:  # TracksWorker's: a URL to fetch, a caption's text, or why not
        raise NotImplementedError

    def _extra_pass(self, extra: Extra, entry: Mapping, remote_id: str, item: Mapping, deadline: float) -> TrackOutcome:
        look = int(entry.get("attempts", 1)) > 1
        if extra.kind == THUMBNAIL:
            return self._thumbnail_pass(extra, remote_id, item, look)
        if extra.kind == CHAPTERS:
            return self._chapters_pass(extra, remote_id, item, look)
        if extra.kind == COLLECTION:
            return self._collection_pass(extra, remote_id, look, deadline)
        return TrackOutcome(TrackResult.REFUSED, error=f"no pass for an entry of kind {extra.kind}")

    # --- the thumbnail -------------------------------------------------------------------------------------

    def _thumbnail_pass(self, extra: Extra, remote_id: str, item: Mapping, look: bool) -> TrackOutcome:
        provider, duration = self.provider, _duration(item)
        carried = getattr(provider, "thumbnail_with_create", "")
        if carried:  # carried by the create (its notes say where it could not be)
            return _noted(carried)
        if extra.url is None:  # the row's poster time, on a target that picks the frame after the create
            return provider.set_thumbnail_time(remote_id, poster_time(extra.poster_time_s, duration))
        if look and provider.takes_thumbnail == "image":
            seen = provider.thumbnail_state(remote_id)
            if isinstance(seen, TrackOutcome):
                return seen
            if seen.custom:
                return TrackOutcome(TrackResult.ATTACHED, remote_track_id=seen.digest)
        limit = provider.thumbnail_max_bytes if provider.takes_thumbnail == "image" else MAX_IMAGE_BYTES
        fetched = self._fetch_extra(extra.url, MAX_IMAGE_BYTES)
        if isinstance(fetched, TrackOutcome):
            return fetched
        body, public_url = fetched
        image = image_kind(body, limit)
        if isinstance(image, str):
            where = f" ({provider.name}'s limit)" if limit < MAX_IMAGE_BYTES and len(body) > limit else ""
            return TrackOutcome(TrackResult.REFUSED, error=f"not a thumbnail: {image}{where}")
        name = f"thumbnail.{image.suffix}"
        if provider.takes_thumbnail == "image":
            url: str | None = None
            if provider.thumbnail_by_url:
                handed = public_url or self._put_extra(handoff_key(remote_id, name), body, image.media_type)
                if isinstance(handed, TrackOutcome):
                    return handed
                url = handed
            upload = ThumbnailUpload(body, image.media_type, image.suffix, digest(body), url)
            return provider.set_thumbnail(remote_id, upload)
        kept = self._keep(remote_id, name, body, image.media_type, "image")
        if isinstance(kept, TrackOutcome):
            return kept
        if provider.takes_thumbnail == "time":
            at = poster_time(extra.poster_time_s, duration)
            done = provider.set_thumbnail_time(remote_id, at)
            if done.kind is not TrackResult.ATTACHED:
                return done
            return _noted(f"{provider.name} takes a poster time only: set to {at:g} s; {kept}")
        return _noted(f"{provider.name} takes no thumbnail image: {kept}")

    # --- the chapters --------------------------------------------------------------------------------------

    def _chapters_pass(self, extra: Extra, remote_id: str, item: Mapping, look: bool) -> TrackOutcome:
        provider, duration = self.provider, _duration(item)
        language = chapters_language(extra, item)
        if look and provider.takes_chapters:
            seen = provider.chapters_of(remote_id, language)
            if isinstance(seen, TrackOutcome):
                return seen
            if seen.count:
                return TrackOutcome(TrackResult.ATTACHED, remote_track_id=language)
        chapters = extra.chapters
        if extra.track is not None:
            fetched = self._fetch_extra(extra.track.url, self.policy.max_bytes, text_ok=True)
            if isinstance(fetched, TrackOutcome):
                return fetched
            read = read_chapters(fetched[0])
            if isinstance(read, str):
                return TrackOutcome(TrackResult.REFUSED, error=read)
            chapters = read
        vtt = chapters_webvtt(chapters, duration)
        if provider.takes_chapters:
            upload = ChaptersUpload(chapters, vtt, language, duration)
            if provider.chapters_by_url:  # the target fetches the file itself: a copy staged in the stack's bucket
                name, body, media_type = provider.chapters_file(upload)
                handed = self._put_extra(handoff_key(remote_id, name), body, media_type)
                if isinstance(handed, TrackOutcome):
                    return handed
                upload = replace(upload, url=handed)
            return provider.set_chapters(remote_id, upload)
        kept = self._keep(remote_id, "chapters.vtt", vtt, WEBVTT, "chapters file (WebVTT)")
        if isinstance(kept, TrackOutcome):
            return kept
        return _noted(f"{provider.name} takes no chapters: {kept}")

    # --- a place in a collection ---------------------------------------------------------------------------

    def _collection_pass(self, extra: Extra, remote_id: str, look: bool, deadline: float) -> TrackOutcome:
        collection, key = extra.collection, extra.collection_key
        if collection is None:
            return TrackOutcome(TrackResult.REFUSED, error="the entry names no collection")
        made = self._collection_id(extra, deadline)
        if isinstance(made, TrackOutcome):
            return made
        placed = self.provider.placed_in(remote_id, made) if look else False
        if isinstance(placed, TrackOutcome):
            return placed
        if not placed:
            outcome = self.provider.place(remote_id, made, collection.position)
            if outcome.kind is not TrackResult.ATTACHED:
                return outcome
        if self.provider.keeps_collection_order:
            return self._order(key, made, remote_id, collection.position, deadline)
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=made)

    def _collection_id(self, extra: Extra, deadline: float) -> str | TrackOutcome:
        """The collection's id at the target: recorded in its ledger item, or made now under the item's claim
        (looked up first: a lost answer may have made it); why not, or WAITING while another pass makes it."""
        collection, key = extra.collection, extra.collection_key
        assert collection is not None
        seen = _made(self.ledger.collection(key), collection.name)
        if seen is not None:
            return seen
        source = CollectionSource(extra.platform, collection.id, collection.name, collection.kind)
        token = uuid.uuid4().hex
        claim = self.ledger.claim_collection(key, source, token, self.clock(), deadline + LEASE_MARGIN_S)
        if isinstance(claim, CollectionRefused):
            return _made(claim.item, collection.name) or TrackOutcome(
                TrackResult.WAITING, error=f"the collection {collection.name[:80]!r} is being made by another pass"
            )
        found = self.provider.find_collection(collection.name, key)
        if found is None:
            outcome = self.provider.create_collection(collection.name, collection.kind, key)
        elif isinstance(found, TrackOutcome):
            outcome = found
        else:
            outcome = TrackOutcome(TrackResult.ATTACHED, remote_track_id=found.remote_id)
        if outcome.kind is TrackResult.ATTACHED and outcome.remote_track_id:
            if self.ledger.record_collection(key, token, outcome.remote_track_id, self.clock()).won:
                return outcome.remote_track_id
            return TrackOutcome(TrackResult.WAITING, error="the collection's claim was taken over before its write")
        if outcome.kind is TrackResult.ATTACHED:
            outcome = TrackOutcome(TrackResult.TRANSIENT, error=f"{self.provider.name} named no collection id")
        attempts = int(claim.item.get("attempts", 1))
        move = decide(outcome, attempts, 0, self.clock(), self.rng, self.max_attempts)
        self.ledger.release_collection(key, token, move, self.clock())
        if move.state is TrackState.FAILED and move.retry_at is None:
            why = excerpt(move.error or "no reason given", 300)
            return TrackOutcome(TrackResult.REFUSED, error=f"the collection {collection.name[:80]!r}: {why}")
        if outcome.kind is TrackResult.THROTTLED:
            return outcome
        return TrackOutcome(
            TrackResult.WAITING, error=f"the collection {collection.name[:80]!r} is made again later: {move.error}"
        )

    def _order(self, key: str, collection_id: str, remote_id: str, position: int | None, deadline: float):
        """Record the video's source position, then set the order of every member placed so far (one placement
        orders at a time: the last to order sees them all)."""
        kept = self.ledger.add_member(key, remote_id, MAX_POSITION if position is None else position, self.clock())
        if not kept.won:
            note = "placed; its place in the order is not set: the collection keeps the order of its first members"
            return TrackOutcome(TrackResult.ATTACHED, remote_track_id=collection_id, note=note)
        token = uuid.uuid4().hex
        item = self.ledger.claim_order(key, token, self.clock(), deadline + LEASE_MARGIN_S)
        if item is None:
            return TrackOutcome(TrackResult.WAITING, error="another placement is ordering the collection")
        try:
            members = item.get("members") or {}
            ordered = [rid for rid, _ in sorted(members.items(), key=lambda pair: (int(pair[1]), pair[0]))]
            outcome = self.provider.order_collection(collection_id, ordered)
        finally:
            self.ledger.release_order(key, token)
        if outcome.kind is TrackResult.ATTACHED:
            return replace(outcome, remote_track_id=collection_id)
        return outcome

    # --- fetching and keeping -------------------------------------------------------------------------------

    def _fetch_extra(self, url: str, max_bytes: int, text_ok: bool = False) -> tuple[bytes, str | None] | TrackOutcome:
        """The file at `url` (https, s3:// presigned, a source reference resolved), through the guarded fetch; and
        the URL itself where a target may fetch it as it is (public https, no query: no signature to expire).
        `text_ok`: a source may serve the file as text through its API (Mux's chapters, read as WebVTT there)."""
        location = self._location(url)
        if isinstance(location, FetchFailed):
            return _failed(location)
        if not isinstance(location, str):  # text a source serves itself (trackworker.InlineCaption): no image
            served = getattr(location, "text", None)
            if not text_ok or not isinstance(served, str):
                return TrackOutcome(TrackResult.REFUSED, error="the source serves text here, not a file")
            body = served.encode("utf-8")
            if len(body) > max_bytes:  # the cap a fetched file has, whatever the source serves
                return TrackOutcome(TrackResult.REFUSED, error=f"the file is {len(body):,} bytes, over {max_bytes:,}")
            return body, None
        fetched = self.fetch(location, replace(self.policy, max_bytes=max_bytes))
        if isinstance(fetched, FetchFailed):
            return _failed(fetched)
        scheme = url.split("://", 1)[0].lower()
        public = scheme in ("https", "http") and "?" not in url and scheme not in SOURCE_PLATFORMS
        return fetched.body, url if public else None

    def _put_extra(self, key: str, body: bytes, media_type: str) -> str | TrackOutcome:
        if self.stage_extra is None:
            return TrackOutcome(
                TrackResult.REFUSED,
                error=f"{self.provider.name} fetches the file by URL, its source link is private or short-lived, and"
                " the stack has no staging bucket to hand it from (redeploy from the current template.yaml)",
            )
        try:
            return self.stage_extra(key, body, media_type)
        except Exception as exc:  # the bucket's weather: the entry's retry, not the worker's crash
            return TrackOutcome(TrackResult.TRANSIENT, error=f"could not stage the file ({type(exc).__name__})")

    def _keep(self, remote_id: str, name: str, body: bytes, media_type: str, what: str) -> str | TrackOutcome:
        """The file kept in the stack's bucket, and the words that say where (for the entry's note)."""
        if self.stage_extra is None:
            return f"the stack has no staging bucket, so the {what} is not kept"
        key = kept_key(remote_id, name)
        put = self._put_extra(key, body, media_type)
        return put if isinstance(put, TrackOutcome) else f"the {what} is kept in the stack's bucket: {key}"


def chapters_language(extra: Extra, item: Mapping) -> str:
    """The language chapters are filed under: the chapters track's own, else the row's first caption track's,
    else DEFAULT_CHAPTERS_LANGUAGE."""
    if extra.track is not None and extra.track.language.lower() != "und":
        return extra.track.language
    tracks = parse_tracks(item.get("tracks")) if item.get("tracks") else ()
    caption = next((t for t in tracks if t.kind != "chapters"), None) if not isinstance(tracks, str) else None
    return caption.language if caption is not None else DEFAULT_CHAPTERS_LANGUAGE


def _made(item: Mapping | None, name: str) -> str | TrackOutcome | None:
    """What a collection's item says for a membership: its id once created, a refusal once failed for good; None
    while it is still to be made (or retried)."""
    if not item:
        return None
    if item.get("state") == CollectionState.CREATED.value and isinstance(item.get("remote_collection_id"), str):
        return item["remote_collection_id"]
    if item.get("state") == CollectionState.FAILED.value and item.get("retry_after") is None:
        why = excerpt(str(item.get("error") or "no reason given"), 300)
        return TrackOutcome(TrackResult.REFUSED, error=f"the collection {name[:80]!r} could not be made: {why}")
    return None


def _duration(item: Mapping) -> float | None:
    """The video's duration: the provider's, else the row's (a DynamoDB number is a Decimal)."""
    for name in ("provider_duration_s", "duration_s"):
        value = item.get(name)
        if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
            return float(value)
    return None


def _noted(note: str) -> TrackOutcome:
    return TrackOutcome(TrackResult.NOTED, note=note)


def _failed(failure: FetchFailed) -> TrackOutcome:
    return TrackOutcome(TrackResult.TRANSIENT if failure.retryable else TrackResult.REFUSED, error=failure.reason)
