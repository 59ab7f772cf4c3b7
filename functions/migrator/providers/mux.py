"""Mux Video (https://docs.mux.com; OpenAPI in muxinc's SDKs).

- credentials: an access token id and secret, HTTP Basic; the secret holds JSON
  `{"token_id": "...", "token_secret": "..."}`;
- create: `POST /video/v1/assets` with `inputs: [{url}]` (and caption-track inputs),
  `playback_policies` `["signed"]` or `["public"]` from the row's privacy, our id in
  `passthrough` (255 characters at most; a longer id travels as its hash), the attempt's key
  in `meta.external_id`, the title in `meta.title` (512), and the operator's `video_quality`,
  `max_resolution_tier`, `static_renditions` and `test`; 201 `{"data": asset}`. Mux has no
  field for a description, tags, custom metadata, the original's creation or publish time or a
  folder: those stay in the ledger, and the create's notes say so (the poster time is set once
  the asset is ready: below);
- no idempotency key and no filter by passthrough: an earlier create is found by paging
  the asset list (newest first, 100 a page) back to the time the caller gives, as many
  pages as the creates Mux allows since then can fill (see `find_page_cap`);
- poll: `GET /video/v1/assets/{id}`; status preparing | ready | errored, `duration` in
  seconds, `errors: {type, messages}`;
- webhooks: `Mux-Signature: t=<unix>,v1=<hex>` over `<t>.<body>`, any `v1` may match
  (rotation), events `video.asset.ready` / `video.asset.errored` with the asset as `data`
  and the event's own `id`;
- rate limits: 1 create a second sustained (bursts allowed), 5 other requests a second;
  a 429 may carry no hint at all;
- migrator verify of signed videos: a URL signing key made by `POST /system/v1/signing-keys`
  (201 `{"data": {id, created_at, private_key}}`, the private key a base64 PEM returned this once:
  docs.mux.com/api-reference/system/signing-keys), kept by the caller (`PlaybackKeys`); a signed
  playback id's HLS is `https://stream.mux.com/{playback id}.m3u8?token=<JWT>`, RS256 with `kid`
  the key's id, `sub` the playback id, `aud` "v", `exp` (docs.mux.com/guides/secure-video-playback),
  on the host the playback info's `hls` names where it names one (a custom domain); the manifest's
  renditions carry their own authorisation, so no query rides the later requests;
- caption tracks: Mux fetches a text track itself, SRT or WebVTT, from a URL: at create time
  as an extra `inputs` entry of type text (`language_code`, `name`, `closed_captions`,
  `text_type: subtitles`, `passthrough`), or later by `POST /video/v1/assets/{id}/tracks`
  once the asset is ready (docs.mux.com/api-reference/video/assets/create-asset-track;
  mux-python InputSettings, CreateTrackRequest, Track). A track is attached when the
  asset's `tracks` list shows it `ready` (matched by its `passthrough`), failed when
  `errored`;
- what a viewer sees first (docs/providers.md "What a viewer sees"): Mux keeps no poster image, only the frame
  its default thumbnail shows, `thumbnail_time`: "can only be set on an asset in the `ready` state, and cannot
  be set at asset creation time", `PATCH /video/v1/assets/{id} {"thumbnail_time": 12.67}`, "at least 0 and less
  than the asset's duration" (docs.mux.com/guides/set-a-default-thumbnail); so the row's poster time is set by
  the tracks worker, and a thumbnail image is kept in the stack's bucket with that time noted. Chapters: "Mux
  stores chapters as a track on the asset": `type` text, `text_type` chapters, its `url` a JSON file Mux
  fetches (docs.mux.com/guides/add-chapters; create-asset-track), written here in the form Mux serves a chapters
  track back, Apple's HLS chapter notation (sources/mux_extras.py); staged in the stack's bucket and handed as a
  link, attached once the asset lists the track `ready`. No folders, playlists or publish time: noted.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from urllib.parse import urlsplit

from ..extras import CHAPTERS_TRACK
from ..fate import Outcome, OutcomeKind, excerpt
from ..messages import Track, track_key
from ..playback_tokens import SigningKey, SigningKeyError, mux_playback_token
from ..signatures import Scheme
from ..states import State
from ..trackfetch import url_problem
from ..tracks import TrackOutcome, TrackResult, track_labels
from .base import FIND_MARGIN_S, FIND_MAX_PAGES, Provider, listing_pages, lookup_failure, too_many_pages, verified_event
from .extras import ChaptersLook, ChaptersUpload
from .facts import (
    AssetRef,
    CredentialsError,
    EventError,
    PlaybackKeys,
    Poll,
    RemoteTrack,
    SignedPlayback,
    SigningUnavailable,
    TrackList,
    TrackUpload,
    Video,
    WebhookEvent,
    duration_of,
    entries,
    epoch_of,
    mapping,
    our_ref,
    playback_of,
    playback_url,
    rejected_video,
    text,
    video_id,
)
from .fidelity import PUBLIC, SIGNED, details_of, not_carried, privacy_notes
from .fidelity import cut as cut_text
from .http import Answer, TransportError, quote
from .keys import PASSTHROUGH_MAX, idempotency_key, passthrough_for, track_ref

ASSETS = "/video/v1/assets"
SIGNING_KEYS = "/system/v1/signing-keys"
PAGE_SIZE = 100  # the list's maximum
WORKING = frozenset({"preparing"})
READY_EVENT, ERRORED_EVENT = "video.asset.ready", "video.asset.errored"
# The most creates a second one Mux environment can make, to size how far back `find` pages.
# Mux documents 1 create a second sustained "with bursts" whose size it does not give
# (docs.mux.com/docs/core/make-api-requests, rate limits); 10/s is a generous bound on what can
# lie between a lost create and its lookup, so the pages it derives cover the window with room,
# and they are read only until a page reaches back past it.
MUX_MAX_CREATES_PER_S = 10.0
# Beyond this many pages (a window of about 5.5 hours at MUX_MAX_CREATES_PER_S) `find` stops and
# answers TRANSIENT: a search that could not reach back far enough never reads as "not found",
# so the uploader never creates a second video on it.
FIND_ABSOLUTE_MAX_PAGES = 2_000
LOOKUP_TOO_LONG = "lookup window too long"
# "The asset title. Max 512 code points." (mux-python 5.1.2 AssetMetadata; docs.mux.com "Add metadata to your
# videos", which counts code points as JavaScript's length does: counted here in UTF-16 units).
TITLE_MAX = 512
# A language tag sent with a create: a plain ISO 639 language, and a region or script, if any. A tag Mux
# might refuse would refuse the whole create (the video rejected for its captions), so anything rarer
# waits for the asset's tracks endpoint, where a refusal fails that track alone.
CREATE_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(-([A-Za-z]{2}|[0-9]{3}|[A-Za-z]{4}(-[A-Za-z]{2})?))?$")
TRACK_STATUS = {"ready": "ready", "errored": "errored", "preparing": "preparing"}
# The chapters track: its text_type (add-chapters), the name it is listed under (a text track's `name` "must be
# unique within each group of text ... track types": not a caption's language name), our passthrough on it.
CHAPTERS_TEXT_TYPE, CHAPTERS_NAME, CHAPTERS_REF = "chapters", "Chapters", "migration-chapters"
# Where a playback id plays (the asset object carries ids, never URLs): HLS at
# stream.mux.com/{id}.m3u8 (docs.mux.com/guides/play-your-videos), a thumbnail at
# image.mux.com/{id}/thumbnail.jpg (docs.mux.com/guides/get-images-from-a-video), Mux Player's
# iframe at player.mux.com/{id} (docs.mux.com/guides/mux-player-web). A custom domain (or the
# simulator) replaces each host.
MUX_HOSTS = {"hls": "https://stream.mux.com", "thumbnail": "https://image.mux.com", "player": "https://player.mux.com"}


def basic_auth(raw: str | None) -> dict[str, str]:
    """HTTP Basic from `{"token_id": ..., "token_secret": ...}`."""
    if raw is None:
        return {}
    try:
        doc = json.loads(raw)
    except ValueError:
        raise CredentialsError('the Mux secret must be JSON {"token_id": ..., "token_secret": ...}') from None
    token_id = doc.get("token_id") if isinstance(doc, dict) else None
    secret = doc.get("token_secret") if isinstance(doc, dict) else None
    if not isinstance(token_id, str) or not token_id or not isinstance(secret, str) or not secret:
        raise CredentialsError('the Mux secret needs "token_id" and "token_secret"')
    return {"Authorization": "Basic " + base64.b64encode(f"{token_id}:{secret}".encode()).decode("ascii")}


def read_asset(asset: object) -> Video:
    """A Mux asset (a create's `data`, a GET's `data`, a webhook's `data`)."""
    if not isinstance(asset, dict):
        return Video(None, status="not an object", known=False)
    remote_id = video_id(asset.get("id"))
    passthrough = asset.get("passthrough")
    # A hashed passthrough stands for an id too long to carry: it names no asset by itself.
    ref = our_ref(passthrough) if isinstance(passthrough, str) and not passthrough.startswith("sha256:") else None
    status = asset.get("status") if isinstance(asset.get("status"), str) else ""
    created_at = epoch_of(asset.get("created_at"))
    privacy = privacy_of(asset.get("playback_ids"))
    if status == "ready":
        return Video(
            remote_id,
            ref,
            State.READY,
            status,
            duration_s=duration_of(asset.get("duration")),
            created_at=created_at,
            privacy=privacy,
            playback=read_playback(asset),
        )
    if status == "errored":
        errors = mapping(asset.get("errors"))
        messages = errors.get("messages")
        reason = "; ".join(m for m in messages if isinstance(m, str)) if isinstance(messages, list) else None
        reason = reason or (errors.get("type") if isinstance(errors.get("type"), str) else None)
        return rejected_video(remote_id, ref, status, reason, created_at=created_at, privacy=privacy)
    known = status in WORKING
    return Video(remote_id, ref, None, excerpt(status, 40), known=known, created_at=created_at, privacy=privacy)


def privacy_of(playback_ids: object) -> str | None:
    """Who may play an asset, from its `playback_ids` (each with a `policy`: public, signed or drm): public
    when any id is public, signed when it has ids and none is; None when it lists none (unknown)."""
    policies = [text(mapping(p).get("policy")) for p in playback_ids] if isinstance(playback_ids, list) else []
    policies = [p for p in policies if p]
    if not policies:
        return None
    return PUBLIC if PUBLIC in policies else SIGNED


def read_playback(asset: dict) -> dict | None:
    """`playback_ids: [{id, policy}]` (public, signed or drm) and the largest video track's
    `max_width`/`max_height`; the public id is the one a page can use without a token."""
    ids = [
        {"id": pid, "policy": policy}
        for item in entries(asset.get("playback_ids"))
        if (pid := video_id(mapping(item).get("id"))) and (policy := mapping(item).get("policy")) in _POLICIES
    ]
    chosen = next((i for i in ids if i["policy"] == "public"), ids[0] if ids else {})
    video = [t for t in entries(asset.get("tracks")) if mapping(t).get("type") == "video"]
    track = mapping(video[0]) if video else {}
    return playback_of(
        policy=chosen.get("policy"),
        playback_id=chosen.get("id"),
        ids=ids,
        width=track.get("max_width"),
        height=track.get("max_height"),
    )


def playback_urls(playback_id: str, hosts: dict[str, str] | None = None) -> dict[str, str]:
    """The HLS, thumbnail and player URLs of a Mux playback id (MUX_HOSTS, or `hosts` in their place)."""
    base = {**MUX_HOSTS, **(hosts or {})}
    pid = quote(playback_id)
    return {
        "hls": f"{base['hls'].rstrip('/')}/{pid}.m3u8",
        "thumbnail": f"{base['thumbnail'].rstrip('/')}/{pid}/thumbnail.jpg",
        "player": f"{base['player'].rstrip('/')}/{pid}",
    }


_POLICIES = ("public", "signed", "drm")


class MuxProvider(Provider):
    name = "mux"
    default_base_url = "https://api.mux.com"
    # X-RateLimit-Limit comes with no documented window (www.mux.com/docs/core/make-api-requests:
    # creates a sustained 1/s, other requests 5/s): a limit it states is not read as a rate.
    rate_limit_window_s = None
    # The same page: creates are held to about 1/s sustained. Learning with no ceiling, the fleet
    # keeps probing above it and meets a 429 (often with no hint: a 5 s hold) every ~10 creates.
    create_rate_per_s = 1.0
    documented_rate_per_s = create_rate_per_s
    documented_rate_doc = "1 create/s sustained (docs.mux.com/docs/core/make-api-requests, rate limits)"
    duplicate_window = (
        "Mux has no idempotency key and no filter by passthrough: before any second create the uploader "
        "pages the asset list, newest first, back to the time it gives the lookup (less 5 minutes for "
        "clocks), as many pages as 10 creates a second since then could fill (Mux documents 1/s sustained), "
        "up to 2,000 pages (about 5.5 hours of creates at that rate); a lookup that cannot reach back that "
        "far fails as transient and creates nothing. A duplicate remains possible if an earlier try created "
        "a video before the time the lookup reaches back to, or if Mux ever lists out of creation order; "
        "`migrator audit` finds any."
    )

    # video.asset.created, video.asset.ready (or .errored), and with static renditions and text
    # tracks subscribed video.asset.static_renditions.ready and video.asset.track.ready (docs.mux.com webhooks).
    events_per_asset = 4
    # "url: The URL of the file that Mux should download and use" (create-asset-track): fetched, not uploaded.
    takes_caption_files = False
    webhook_scheme = Scheme.MUX
    # The input's `url` is fetched as the asset is made (it is `preparing` meanwhile); no later fetch, and no
    # lifetime the link must have, is documented: a link alive at the create will do.
    link_valid_for_s = None

    def auth_headers(self) -> dict[str, str]:
        return basic_auth(self.secret())

    def check(self) -> Answer:
        return self.http.send("GET", ASSETS, params={"limit": "1"})

    def create(self, asset: AssetRef, source_url: str) -> Outcome:
        body, notes = self._create_body(asset, source_url)
        return self._post_create(ASSETS, body, notes, lambda answer: read_asset(mapping(answer).get("data")).remote_id)

    def _create_body(self, asset: AssetRef, source_url: str) -> tuple[dict, list[str]]:
        # Fields: mux-python 5.1.2 CreateAssetRequest and AssetMetadata (generated from Mux's OpenAPI).
        details, notes = details_of(asset), []
        meta = {"external_id": idempotency_key(asset.asset_id, asset.generation)}
        if asset.title:
            meta["title"], cut_notes = cut_text(asset.title, TITLE_MAX, "title", utf16=True)
            notes += cut_notes
        passthrough = passthrough_for(asset.asset_id)
        if passthrough != asset.asset_id:
            notes.append(f"id: passthrough carries its hash (over {PASSTHROUGH_MAX} characters)")
        body: dict = {
            # The video, then its caption files: Mux fetches those itself (tracks_at_create).
            "inputs": [{"url": source_url}, *self.tracks_at_create(asset)],
            # "public": anyone with the playback URL; "signed": a token is needed (CreateAssetRequest).
            "playback_policies": [self.playback(asset)],
            "passthrough": passthrough,
            "meta": meta,
        }
        notes += privacy_notes(details.privacy, self.name)
        options, option_notes = self.create_options(asset)
        for name in ("video_quality", "max_resolution_tier", "test"):
            if name in options:
                body[name] = options[name]
        renditions = options.get("static_renditions")  # checked: a list of distinct resolutions
        if isinstance(renditions, list) and renditions:  # the current form; `mp4_support` is deprecated, exclusive
            body["static_renditions"] = [{"resolution": r} for r in renditions]
        notes += option_notes
        fields = ("description", "tags", "metadata", "created_at", "published_at", "folder")
        notes += not_carried(details, self.name, fields)
        return body, notes

    def find(self, asset_id: str, created_after: float | None) -> Outcome:
        """Page the asset list newest first until a page reaches back before `created_after`
        (less FIND_MARGIN_S for clocks): CREATED when one of the pages holds the asset's video,
        NOT_FOUND when the search reached back that far or to the list's end, TRANSIENT when
        it could not (too many pages, a cursor repeated). With no `created_after` (a poll with no
        recorded id) it reads FIND_MAX_PAGES pages at most and answers NOT_FOUND after them."""
        wanted = passthrough_for(asset_id)
        needed = find_page_cap(created_after, self.clock())
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(min(needed, FIND_ABSOLUTE_MAX_PAGES)):
            page = self._page(cursor)
            if isinstance(page, Outcome):
                return page
            items, cursor = page
            for item in items:
                video = read_asset(item)
                ours = mapping(item).get("passthrough") == wanted
                if ours and video.remote_id and video.target is not State.REJECTED:
                    return Outcome(OutcomeKind.CREATED, remote_id=video.remote_id)
            # Listed newest first: once a page reaches back before the claim, older pages cannot hold it.
            oldest = min((v for v in (epoch_of(mapping(i).get("created_at")) for i in items) if v), default=None)
            past_the_claim = created_after is not None and oldest is not None and oldest < created_after - FIND_MARGIN_S
            if not cursor or past_the_claim:
                return Outcome(OutcomeKind.NOT_FOUND)
            if cursor in seen:  # a list that loops: what lies past it cannot be read
                return Outcome(OutcomeKind.TRANSIENT, error="lookup: the asset list repeated a cursor")
            seen.add(cursor)
        if created_after is None:
            return Outcome(OutcomeKind.NOT_FOUND)
        return Outcome(
            OutcomeKind.TRANSIENT,
            error=f"{LOOKUP_TOO_LONG}: {min(needed, FIND_ABSOLUTE_MAX_PAGES)} pages of assets did not reach back "
            "to the earlier try",
        )

    def _page(self, cursor: str | None) -> tuple[list, str | None] | Outcome:
        """One page of the asset list and the cursor of the next (the API's only paging)."""
        answer = self._send("GET", ASSETS, params=_page_params(cursor))
        if isinstance(answer, Outcome):
            return Outcome(answer.kind, error=f"lookup {answer.error}")
        if not 200 <= answer.status < 300:
            return lookup_failure(self._failure(answer))
        body = mapping(answer.body)
        items = body.get("data")
        if not isinstance(items, list):
            return Outcome(OutcomeKind.TRANSIENT, error=f"lookup HTTP {answer.status} without a data list")
        return items, _cursor(body)

    def _poll_video(self, asset_id: str, remote_id: str) -> Poll:
        return self._get_video(f"{ASSETS}/{quote(remote_id)}", lambda body: read_asset(mapping(body).get("data")))

    def read_webhook(
        self, body: bytes, headers: Mapping[str, str], secrets: Sequence[str], now: float, tolerance_s: int
    ) -> WebhookEvent:
        event, kind, _ = verified_event(Scheme.MUX, body, headers, secrets, now, tolerance_s)
        event_id = event.get("id")
        if not isinstance(event_id, str) or not event_id:
            raise EventError("event has no id")
        data = mapping(event.get("data"))
        # The event's type says what happened; the asset it carries has the details.
        status = {READY_EVENT: "ready", ERRORED_EVENT: "errored"}.get(kind)
        video = read_asset({**data, "status": status} if status else data)
        remote_id = video.remote_id or video_id(mapping(event.get("object")).get("id"))
        if status is None:
            return WebhookEvent(event_id[:255], video.ref, remote_id, note=f"not an outcome: {excerpt(kind, 60)}")
        return WebhookEvent(event_id[:255], video.ref, remote_id, video, note=status)

    def videos(self) -> Iterator[Video]:
        """Newest first, 100 a page, to the end of the cursors. A cursor seen before (a listing
        that loops) or an empty page ends it; past LISTING_MAX_PAGES pages it stops loudly."""
        cursor: str | None = None
        seen: set[str] = set()  # one cursor a page: bounded by the page cap, not by the library
        for _ in listing_pages():
            body, items = self._library_page(ASSETS, _page_params(cursor), "data")
            for item in items:
                yield read_asset(item)
            cursor = _cursor(body)
            if not items or not cursor or cursor in seen:
                return
            seen.add(cursor)
        raise too_many_pages()

    # --- migrator verify: signed playback --------------------------------------------------------

    def create_signing_key(self) -> SigningKey:
        """A new URL signing key of the environment (`POST /system/v1/signing-keys`, a System write)."""
        answer = self.http.send("POST", SIGNING_KEYS)  # no answer: the TransportError leaves it for the next run
        if answer.status == 429 or answer.status >= 500:
            raise TransportError(f"HTTP {answer.status} making a playback signing key")
        if not 200 <= answer.status < 300:
            raise SigningUnavailable(
                f"Mux refused to make a playback signing key (HTTP {answer.status}: {excerpt(answer.text, 120)});"
                " the stack's token needs System write permission"
            )
        data = mapping(mapping(answer.body).get("data"))
        key_id, private = video_id(data.get("id")), data.get("private_key")
        if key_id is None or not isinstance(private, str) or not private:
            raise SigningUnavailable("Mux's answer to the signing-key create holds no key id and private key")
        try:
            key = SigningKey.from_mux(key_id, private)
            key.private()  # it parses now, or never
        except SigningKeyError as exc:
            raise SigningUnavailable(f"Mux's new signing key: {exc}") from None
        return key

    def signed_playback(self, playback: Mapping, ttl_s: float, keys: PlaybackKeys | None) -> SignedPlayback:
        """The signed playback id's HLS with a token of ours, valid `ttl_s` from now."""
        pid = signed_playback_id(playback)
        if pid is None:
            drm = any(mapping(p).get("policy") == "drm" for p in entries(playback.get("playback_ids")))
            raise SigningUnavailable("DRM playback only (not fetched)" if drm else "no signed playback id recorded")
        if keys is None:
            raise SigningUnavailable("no playback signing key at hand")
        try:
            token = mux_playback_token(pid, keys.mux(), self.clock() + ttl_s)
        except SigningKeyError as exc:
            raise SigningUnavailable(f"the stack's playback signing key: {exc}") from None
        return SignedPlayback(f"{stream_base(playback)}/{quote(pid)}.m3u8?token={token}")

    # --- caption tracks ----------------------------------------------------------------------

    takes_tracks = True
    track_needs_webvtt = False  # Mux fetches SRT and WebVTT alike

    def create_time_tracks(self, asset: AssetRef) -> list[Track]:
        """The tracks Mux can fetch as they are listed: an https URL (or a test origin) that is not plainly
        internal, in a language tag Mux is sure to take. s3:// and source references wait for the worker."""
        tracks = asset.details.tracks if asset.details else ()
        return [
            t
            for t in tracks
            if t.kind != CHAPTERS_TRACK  # a WebVTT chapters file: the worker's, sent as JSON (set_chapters)
            and url_problem(t.url, self.track_policy) is None
            and CREATE_LANGUAGE.match(t.language)
        ]

    def tracks_at_create(self, asset: AssetRef) -> list[dict]:
        chosen = self.create_time_tracks(asset)
        labels = track_labels(asset.details.tracks) if chosen and asset.details else {}
        return [_text_input(t, t.url, labels[track_key(t)]) for t in chosen]

    def track_list(self, remote_id: str) -> TrackList | TrackOutcome:
        answer = self._track_send("GET", f"{ASSETS}/{quote(remote_id)}")
        if isinstance(answer, TrackOutcome):
            return answer
        if answer.status != 200:
            return self._track_list_failure(answer)
        asset = mapping(mapping(answer.body).get("data"))
        status = asset.get("status")
        if status == "errored":
            return TrackList(video_gone="the asset errored at Mux")
        tracks = tuple(_remote_track(t) for t in entries(asset.get("tracks")) if mapping(t).get("type") == "text")
        return TrackList(tracks, open_for_tracks=status == "ready")

    def track_matches(self, remote: RemoteTrack, track: Track, ref: str) -> bool:
        return remote.ref == ref

    def attach_track(self, remote_id: str, track: Track, upload: TrackUpload, label: str) -> TrackOutcome:
        body = _text_input(track, upload.url, label)  # the tracks endpoint takes the same fields
        answer = self._track_send("POST", f"{ASSETS}/{quote(remote_id)}/tracks", json_body=body)
        if isinstance(answer, TrackOutcome):
            return answer
        if 200 <= answer.status < 300:
            created = _remote_track(mapping(answer.body).get("data"))
            return TrackOutcome(TrackResult.SUBMITTED, remote_track_id=created.remote_id)
        return self._track_failure(answer)

    # --- what a viewer sees: the poster frame and chapters (no collections, no publish time) ------------------

    takes_thumbnail = "time"  # the asset's `thumbnail_time`: Mux keeps no image of its own
    poster_time_later = True  # "cannot be set at asset creation time": PATCHed once the asset is ready
    takes_chapters = True
    chapters_by_url = True  # a text track of text_type chapters: Mux fetches its file from `url`
    collections_instead = "kept in the ledger only (Mux has no folders or playlists)"

    def set_thumbnail_time(self, remote_id: str, time_s: float) -> TrackOutcome:
        """The frame the asset's default thumbnail shows (a 400 for a time at or past its end: refused)."""
        chosen = round(max(0.0, time_s), 3)
        answer = self._extra_call("PATCH", f"{ASSETS}/{quote(remote_id)}", json_body={"thumbnail_time": chosen})
        if isinstance(answer, TrackOutcome):
            return answer
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=f"{chosen:g}")

    def chapters_file(self, upload: ChaptersUpload) -> tuple[str, bytes, str]:
        """The chapters as the JSON Mux serves a chapters track in, Apple's HLS chapter notation."""
        doc = [
            {"chapter": n, "start-time": c.start_s, "titles": [{"language": upload.language, "title": c.title}]}
            for n, c in enumerate(upload.chapters, 1)
        ]
        return "chapters.json", json.dumps(doc, ensure_ascii=False).encode("utf-8"), "application/json"

    def chapters_of(self, remote_id: str, language: str) -> ChaptersLook | TrackOutcome:
        """The asset's chapters track (one list a video): there once `ready`; waited for while Mux fetches it, refused
        with Mux's reason once `errored`."""
        answer = self._extra_call("GET", f"{ASSETS}/{quote(remote_id)}")
        if isinstance(answer, TrackOutcome):
            return answer
        asset = mapping(mapping(answer.body).get("data"))
        if asset.get("status") == "errored":
            return TrackOutcome(TrackResult.VIDEO_GONE, error="the asset errored at Mux")
        listed = [mapping(t) for t in entries(asset.get("tracks"))]
        found = [_remote_track(t) for t in listed if (t.get("type"), t.get("text_type")) == ("text", "chapters")]
        if not found:
            return ChaptersLook()
        track = next((t for t in found if t.ref == CHAPTERS_REF), found[0])
        if track.status == "ready":
            return ChaptersLook(1)
        if track.status == "errored":
            return TrackOutcome(TrackResult.REFUSED, error=track.error or "provider: Mux could not read the chapters")
        return TrackOutcome(TrackResult.WAITING, error="Mux is still fetching the chapters file")

    def set_chapters(self, remote_id: str, upload: ChaptersUpload) -> TrackOutcome:
        """A chapters text track fetched from the staged file: SUBMITTED (a later pass's look finds it ready)."""
        if not upload.url:
            return TrackOutcome(TrackResult.REFUSED, error="Mux fetches chapters from a URL, and none was handed")
        body = {
            "url": upload.url,
            "type": "text",
            "text_type": CHAPTERS_TEXT_TYPE,
            "language_code": upload.language,
            "name": CHAPTERS_NAME,
            "passthrough": CHAPTERS_REF,
        }
        answer = self._extra_call("POST", f"{ASSETS}/{quote(remote_id)}/tracks", json_body=body)
        if isinstance(answer, TrackOutcome):
            return answer
        created = _remote_track(mapping(answer.body).get("data"))
        return TrackOutcome(TrackResult.SUBMITTED, remote_track_id=created.remote_id)


def signed_playback_id(playback: Mapping) -> str | None:
    """The signed playback id of the ledger's playback info (`playback_ids`, else `playback_id` of policy signed)."""
    for item in entries(playback.get("playback_ids")):
        if mapping(item).get("policy") == "signed" and (pid := video_id(mapping(item).get("id"))):
            return pid
    return video_id(playback.get("playback_id")) if playback.get("policy") == "signed" else None


def stream_base(playback: Mapping) -> str:
    """Where the video's HLS lives: the host (and path) of the playback info's `hls` URL, a custom domain or a
    simulator, else stream.mux.com."""
    parts = urlsplit(playback_url(playback.get("hls")) or "")
    if parts.netloc and parts.path.endswith(".m3u8"):
        return f"{parts.scheme}://{parts.netloc}{parts.path.rsplit('/', 1)[0]}"
    return MUX_HOSTS["hls"]


def _text_input(track: Track, url: str, label: str) -> dict:
    """A text track as Mux's create `inputs` entry (and, with `type`, the tracks endpoint's body)."""
    return {
        "url": url,
        "type": "text",
        "text_type": "subtitles",  # "subtitles for subtitles and closed captions" (create-asset-track)
        "language_code": track.language,
        "name": label,
        "closed_captions": track.closed_captions,
        "passthrough": track_ref(track_key(track)),
    }


def _remote_track(raw: object) -> RemoteTrack:
    track = mapping(raw)
    said = track.get("status")
    status = TRACK_STATUS.get(said if isinstance(said, str) else "", "preparing")
    error = None
    if status == "errored":  # the reason, where the track carries one ({"error": {"messages": [...]}})
        errors = mapping(track.get("error")) or mapping(track.get("errors"))
        words = "; ".join(m for m in entries(errors.get("messages")) if isinstance(m, str))
        error = "provider: " + (excerpt(words, 200) or "Mux could not ingest the text track")
    ref, language = track.get("passthrough"), track.get("language_code")
    return RemoteTrack(
        language if isinstance(language, str) else None,
        status,
        ref if isinstance(ref, str) else None,
        video_id(track.get("id")),
        error,
    )


def find_page_cap(created_after: float | None, now: float) -> int:
    """How many pages `find` may need: every create Mux allows between `created_after` (less the
    clocks' margin) and now, 100 a page, and 2 pages more for the one the window starts in and
    a create made as the search began."""
    if created_after is None:
        return FIND_MAX_PAGES
    window_s = max(0.0, now - created_after) + FIND_MARGIN_S
    if not math.isfinite(window_s):
        return FIND_ABSOLUTE_MAX_PAGES + 1
    return math.ceil(window_s * MUX_MAX_CREATES_PER_S / PAGE_SIZE) + 2


def _page_params(cursor: str | None) -> dict[str, str]:
    return {"limit": str(PAGE_SIZE), **({"cursor": cursor} if cursor else {})}


def _cursor(body: dict) -> str | None:
    cursor = body.get("next_cursor")
    return cursor if isinstance(cursor, str) and cursor else None
