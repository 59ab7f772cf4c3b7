"""The seed's provider contract ("generic"): the one the project began with, kept as it was.

- create: `POST {base}/videos` `{"input": url, "metadata": {"migration_ref": id, ...}}` with an
  `Idempotency-Key` (a hash of the id and its generation, see `idempotency_key`); the seed
  documents only `input` and `metadata`, so `metadata` (a free map) carries the rest of the
  row under its own names (title, description, tags, poster_time_s, created_at, published_at,
  folder, collections, privacy as public | signed, and the row's custom fields); it documents no
  thumbnail, chapters or collections, so the tracks worker keeps a thumbnail image and a chapters
  file in the stack's bucket and notes each (docs/providers.md "What a viewer sees");
- find: `GET {base}/videos?metadata[migration_ref]=<id>`;
- poll: `GET {base}/videos/{id}`; statuses preparing | ready | errored;
- webhooks: the seed's `x-signature` or Standard Webhooks, chosen by `WebhookScheme`;
  events `video.ready` / `video.errored` carrying the video;
- credentials: a bearer token (the secret's text, or JSON `{"token": ...}`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from ..fate import Outcome, OutcomeKind, excerpt
from ..signatures import Scheme
from ..states import State
from .base import Provider, listing_pages, secret_text, too_many_pages, verified_event
from .facts import (
    AssetRef,
    CredentialsError,
    Poll,
    Video,
    WebhookEvent,
    body_event_id,
    duration_of,
    epoch_of,
    found_among,
    mapping,
    our_ref,
    playback_of,
    rejected_video,
    text,
    video_id,
)
from .fidelity import PUBLIC, SIGNED, details_of, free_map, privacy_notes, row_fields, with_usage
from .http import Answer, quote
from .keys import idempotency_key

PAGE_SIZE = 100  # the listing's page (`limit`), where the provider pages it
# The statuses the seed contract uses for a video the provider is still working on.
WORKING = frozenset({"preparing", "processing", "queued", "pending", "waiting", "uploading", "created"})
# The row's fields `metadata` carries under their own names, beside our reference and the privacy.
METADATA_FIELDS = ("description", "tags", "poster_time_s", "created_at", "published_at", "folder")


def bearer_token(raw: str | None) -> dict[str, str]:
    """The Authorization header from the secret: the token itself, or JSON {"token": ...}."""
    token = secret_text(raw, "token", "provider")
    return {"Authorization": f"Bearer {token}"} if token else {}


def video_of(body: object) -> object:
    """The video an answer carries: the object itself, or the one under `data`. The seed reads
    the id as `body.id ?? body.data?.id`, so a provider may answer either shape."""
    if isinstance(body, dict) and body.get("id") is None and isinstance(body.get("data"), dict):
        return body["data"]
    return body


def read_video(video: object) -> Video:
    """A video object of the seed contract (a create's answer, a GET, a webhook's data), bare
    or wrapped in `{"data": ...}`."""
    video = video_of(video)
    if not isinstance(video, dict):
        return Video(None, status="not an object", known=False)
    remote_id = video_id(video.get("id"))
    metadata = mapping(video.get("metadata"))
    ref = our_ref(metadata.get("migration_ref"))
    status = video.get("status") if isinstance(video.get("status"), str) else ""
    created = epoch_of(video.get("created_at"))
    privacy = metadata.get("privacy") if metadata.get("privacy") in (PUBLIC, SIGNED) else None
    if status == "ready":
        return Video(
            remote_id,
            ref,
            State.READY,
            status,
            duration_s=duration_of(video.get("duration")),
            created_at=created,
            privacy=privacy,
            playback=read_playback(video, remote_id),
        )
    if status == "errored":
        error = video.get("error")  # the seed's text, or {"message": text}
        message = text(error.get("message")) if isinstance(error, dict) else text(error)
        return rejected_video(remote_id, ref, status, message, created_at=created, privacy=privacy)
    known = status in WORKING
    return Video(remote_id, ref, None, excerpt(status, 40), known=known, created_at=created, privacy=privacy)


def read_playback(video: dict, remote_id: str | None) -> dict | None:
    """The contract's optional `playback` object: `{policy, hls, player, thumbnail, width, height}`
    (this project's addition to the seed contract, for the cut-over map)."""
    playback = mapping(video.get("playback"))
    if not playback:
        return None
    return playback_of(
        policy=playback.get("policy", "public"),
        playback_id=remote_id,
        hls=playback.get("hls"),
        player=playback.get("player"),
        thumbnail=playback.get("thumbnail"),
        width=playback.get("width"),
        height=playback.get("height"),
    )


class GenericProvider(Provider):
    name = "generic"
    conflict_means_exists = True
    duplicate_window = (
        "none while the provider honours the Idempotency-Key; otherwise as with a metadata filter: "
        "a create whose answer was lost is found by `metadata[migration_ref]` before any second create"
    )

    # video.ready or video.errored (the seed contract).
    events_per_asset = 1
    # The seed contract says nothing of when `input` is fetched: taken as at once (a link alive at the create).
    link_valid_for_s = None
    # What a viewer sees: the contract documents no thumbnail, chapters or collections (base.py's defaults: a
    # thumbnail image and a chapters file kept in the stack's bucket, noted).
    collections_instead = "carried in metadata.collections at the create (the seed contract has no collections)"

    def __init__(self, *args, webhook_scheme: str = "seed", **kwargs):
        super().__init__(*args, **kwargs)
        self.scheme = Scheme(webhook_scheme)
        if self.scheme not in (Scheme.SEED, Scheme.STANDARD):
            raise CredentialsError("the generic provider signs webhooks with 'seed' or 'standard'")
        self.webhook_scheme = self.scheme  # what doctor_event signs with

    def auth_headers(self) -> dict[str, str]:
        return bearer_token(self.secret())

    def check(self) -> Answer:
        return self.http.send("GET", "/videos", params={"metadata[migration_ref]": "#doctor"})

    def create(self, asset: AssetRef, source_url: str) -> Outcome:
        body, notes = self._create_body(asset, source_url)
        key = {"Idempotency-Key": idempotency_key(asset.asset_id, asset.generation)}
        return self._post_create("/videos", body, notes, lambda answer: read_video(answer).remote_id, headers=key)

    def _create_body(self, asset: AssetRef, source_url: str) -> tuple[dict, list[str]]:
        details = details_of(asset)
        ours: dict = {"migration_ref": asset.asset_id}
        if asset.title:
            ours["title"] = asset.title
        ours.update(row_fields(details, METADATA_FIELDS))
        if details.collections:  # the contract has no collections: the row's list, in metadata
            ours["collections"] = [c.as_dict() for c in details.collections]
        ours["privacy"] = self.playback(asset)
        metadata, notes = free_map(ours, with_usage(details.metadata, details.usage), "metadata")
        return {"input": source_url, "metadata": metadata}, notes + privacy_notes(details.privacy, self.name)

    def find(self, asset_id: str, created_after: float | None) -> Outcome:
        items = self._listing("/videos", {"metadata[migration_ref]": asset_id}, "data", absent_is_empty=True)
        if isinstance(items, Outcome):
            return items
        # The filter already named the asset; an entry without the reference echoed is still ours.
        videos = [v if v.ref else Video(v.remote_id, asset_id, v.target) for v in map(read_video, items)]
        return found_among(videos, asset_id) or Outcome(OutcomeKind.NOT_FOUND)

    def _poll_video(self, asset_id: str, remote_id: str) -> Poll:
        return self._get_video(f"/videos/{quote(remote_id)}", read_video)

    def read_webhook(
        self, body: bytes, headers: Mapping[str, str], secrets: Sequence[str], now: float, tolerance_s: int
    ) -> WebhookEvent:
        event, kind, signed_id = verified_event(self.scheme, body, headers, secrets, now, tolerance_s)
        if signed_id:  # Standard Webhooks: the id the signature covers
            event_id = signed_id[:255]
        elif isinstance(event.get("id"), str) and event["id"]:
            event_id = event["id"][:255]
        else:
            event_id = body_event_id(body)
        data = mapping(video_of(event.get("data")))
        status = {"video.ready": "ready", "video.errored": "errored"}.get(kind)
        video = read_video({**data, "status": status}) if status else read_video(data)
        note = status or f"not an outcome: {excerpt(kind, 60)}"
        return WebhookEvent(event_id, video.ref, video.remote_id, video if status else None, note=note)

    def videos(self) -> Iterator[Video]:
        """Oldest first, `limit` a page, following `next_cursor`; a provider that pages nothing
        answers the whole list without one (the seed's contract), which is then the only page.
        A cursor seen before or an empty page ends it; past LISTING_MAX_PAGES pages it stops loudly."""
        cursor: str | None = None
        seen: set[str] = set()
        for _ in listing_pages():
            params = {"limit": str(PAGE_SIZE), **({"cursor": cursor} if cursor else {})}
            body, items = self._library_page("/videos", params, "data")
            for item in items:
                yield read_video(item)
            cursor = text(body.get("next_cursor")) or None
            if not items or cursor is None or cursor in seen:
                return
            seen.add(cursor)
        raise too_many_pages()
