"""Bunny Stream (docs.bunny.net; the Stream API's OpenAPI file, as Bunny's own SDKs ship it: BunnyWay/
bunny-stream-ios Sources/BunnyStreamAPI/openapi.yml; Bunny's importer, BunnyWay/cli packages/stream-import).

- credentials: the video library's own API key as `AccessKey` ("The Stream API uses its own
  authentication keys. Authenticating via the bunny.net account API key will not work",
  docs.bunny.net/reference/api-overview); the secret holds JSON `{"library_id": "...", "api_key": "...",
  "token_key": "..."}`, `token_key` (optional) the library's token authentication key (Stream > Security),
  which verify signs with;
- create: `POST /library/{id}/videos/fetch` `{url, title}`, `thumbnailTime` (ms) in the query from the
  row's poster time; the answer is documented as a bare StatusModel `{success, message, statusCode}`
  "but it also returns the GUID" (`id`, bunny-stream.ts), and may not. Nothing carries our reference at
  the fetch, so its title carries our per-asset tag (`<title> [vm-<hash>]`) until the update below;
- no idempotency key: a lost answer, a 5xx or an answer without the id is indeterminate ("a POST may
  already have taken effect", rate-limit.ts), so the video is looked for by its tag before anything is
  sent again: `GET /library/{id}/videos`, 1,000 a page ("the listing endpoints' documented ceiling"),
  pages numbered and counted by `totalItems` (no `hasMoreItems`), newest first from `orderBy=date`
  (the direction is not documented: a page read oldest first is walked from the end);
- the update `POST /library/{id}/videos/{vid}` `{title, metaTags}` replaces `metaTags` whole ("Update
  replaces the whole array", bunny-stream.ts), so it is read, merged and written; metaTags are public in
  embeds: ours is `migration_ref` (the asset id) and, for a row that is public, `description` and
  `keywords` as Bunny's importer writes them; never a source URL, a key or the row's custom fields;
- poll: `GET /library/{id}/videos/{vid}`; `status` 0 Created, 1 Uploaded, 2 Processing, 3 Transcoding,
  4 Finished, 5 Error, 6 UploadFailed, 7 JitSegmenting, 8 JitPlaylistsCreated (VideoModelStatus),
  `length` whole seconds, `transcodingMessages` (level 3 = Error) say why one failed;
- webhooks: `{VideoLibraryId, VideoGuid, Status}` only, with their own numbering (0 Queued, 1
  Processing, 2 Encoding, 3 Finished, 4 Resolution finished: "the first request also signals that the
  video is now playable", 5 Failed, 6-8 presigned uploads, 9 CaptionsGenerated, 10
  TitleOrDescriptionGenerated: docs.bunny.net/docs/stream-webhook): 3 and 5 are prompts to read the
  video back, never outcomes; signed v1: `X-BunnyStream-Signature`, lowercase hex HMAC-SHA256 of the raw
  body keyed with the library's Read-Only API key, with `X-BunnyStream-Signature-Version: v1` and
  `-Algorithm: hmac-sha256`; no timestamp is signed (the body's hash stands in for an event id);
- privacy: none per video; a library's embed view token authentication and its pull zone's CDN token
  authentication (docs.bunny.net/stream/security). A private or signed row is refused unless the stack
  says its library is token-protected (BunnyTokenAuthentication), and a ready video's privacy is read
  from the play data's `tokenAuthEnabled` (`GET .../videos/{vid}/play`, asked with an embed view token
  `SHA256_HEX(key + video id + expires)` where the secret has the key), so an audit sees the truth;
- signed playback (migrator verify): the HLS with a CDN directory token in the query (`token`,
  `token_path` `/{vid}/`, `expires`; `HS256-` base64url HMAC-SHA256 of path + expires + the sorted
  parameters: docs.bunny.net/cdn/security/token-authentication/advanced, BunnyWay/BunnyCDN.
  TokenAuthentication), which every variant request carries too;
- rate limits: no numbers documented; a 429 carries `Retry-After` (rate-limit.ts waits it out);
- caption tracks: `POST .../videos/{vid}/captions/{srclang}` `{srclang, label, captionsFile}` with the
  file base64 (CaptionModelAdd), one per language; a video lists its own in `captions`. `srclang` is "The
  ISO 639-1 language code for the caption (e.g., 'en', 'fr')" (openapi.yml): a track's BCP 47 tag is filed
  under its language subtag (`pt-BR` -> pt; the label keeps the tag), `und` and a language with no ISO 639-1
  code are refused with why (bunny_formats.caption_language), and two tracks of one code are one language
  (`track_language_key`: the first is sent, the other fails saying so);
- what a viewer sees first (docs/providers.md "What a viewer sees"; openapi.yml): the thumbnail by URL, "Sets
  or updates the thumbnail image for the specified video using the provided thumbnail URL" (`POST .../videos/
  {vid}/thumbnail?thumbnailUrl=`, Video_SetThumbnail: Bunny fetches it, so a private source's image is handed
  as a copy staged in the stack's bucket); a custom thumbnail is served under the video's own
  `thumbnailFileName`, the default ones are `thumbnail.jpg` and `thumbnail_1.jpg`.. `thumbnail_5.jpg`
  (docs.bunny.net/stream/storage-structure), which is the look. Chapters are the update's `chapters`,
  ChapterModel `{title, start, end}` in whole seconds (UpdateVideoModel), read back on the video. Collections:
  `POST /library/{id}/collections {name}` (Collection_CreateCollection, UpdateCollectionModel) answers the
  CollectionModel with its `guid`; `GET .../collections?search=` finds one by name (Collection_List: "A search
  term to filter collections by name"); a video is placed by the update's `collectionId` ("it can be automated
  using the Update Video API by passing the desired collectionId to each video", docs.bunny.net/stream/
  collections), one collection a video (VideoModel `collectionId`): the row's first, the rest noted.
  Collections keep no order ("their sole purpose is to help you keep your video content neatly arranged in
  folders"). No field takes an original publish time (and metaTags are public): it is noted.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

from ..fate import Outcome, OutcomeKind, excerpt
from ..messages import Track
from ..signatures import Scheme, SignatureError, sign, verify
from ..states import State
from ..tracks import TrackOutcome, TrackResult
from .base import FIND_MARGIN_S, FIND_MAX_PAGES, Provider, json_event, listing_pages, lookup_failure, too_many_pages
from .bunny_formats import (
    EMBED_TOKEN_TTL_S,
    FAILED,
    FIND_ABSOLUTE_MAX_PAGES,
    HOOK_FAILED,
    HOOK_FINISHED,
    HOOK_PLAYABLE,
    MAX_TOKEN_TTL_S,
    OUR_REF,
    PAGE_SIZE,
    THUMBNAIL_MAX_MS,
    UNPROTECTED,
    Credentials,
    bunny_chapters,
    bunny_time,
    caption_language,
    caption_language_key,
    credentials,
    custom_thumbnail,
    embed_token,
    failure_reason,
    is_ours,
    list_page,
    meta_value,
    newest_first,
    read_play,
    read_video,
    refusal,
    signed_hls,
    status_of,
    title_tag,
)
from .extras import ChaptersLook, ChaptersUpload, RemoteCollection, ThumbnailLook, ThumbnailUpload
from .facts import (
    AssetRef,
    CredentialsError,
    PlaybackKeys,
    Poll,
    RemoteTrack,
    SignedPlayback,
    SigningUnavailable,
    TrackList,
    TrackUpload,
    Video,
    WebhookEvent,
    body_event_id,
    entries,
    mapping,
    text,
    video_id,
)
from .fidelity import PUBLIC, SIGNED, details_of, not_carried, privacy_notes
from .http import Answer, quote

# Collection_List pages read when looking a collection up by its name (the search matches parts of names too).
COLLECTION_PAGES, COLLECTION_PAGE_SIZE = 10, 100
ATTACHED = TrackOutcome(TrackResult.ATTACHED)


class BunnyProvider(Provider):
    name = "bunny"
    default_base_url = "https://video.bunnycdn.com"
    rate_limit_window_s = None  # no limit is documented, so no stated limit is read as a rate
    # Nor a create rate (a 429 with Retry-After): `documented_rate_per_s` None, the plan asks for --rate.
    duplicate_window = (
        "none found: the fetch takes no idempotency key and its answer may not name the video, so before any "
        "second fetch the uploader lists the library for the asset's tag (its title until tagged, then "
        "metaTags.migration_ref); a video Bunny does not list yet is the window"
    )
    # Queued, Processing, Encoding, a Resolution finished per rendition (4 on a 1080p ladder), Finished.
    events_per_asset = 8
    webhook_scheme = Scheme.BUNNY
    # The fetch (`POST .../videos/fetch`) downloads the URL as the video is made; no later fetch, and no lifetime
    # the link must have, is documented: a link alive at the create will do.
    link_valid_for_s = None

    def _creds(self) -> Credentials:
        return credentials(self.secret())

    def _library(self) -> str:
        return f"/library/{self._creds().library_id}"

    def auth_headers(self) -> dict[str, str]:
        return {"AccessKey": self._creds().api_key}

    def check(self) -> Answer:
        return self.http.send("GET", f"{self._library()}/videos", params={"page": "1", "itemsPerPage": "1"})

    def doctor_event(self, secret: str, now: float) -> tuple[bytes, dict[str, str]]:
        body = json.dumps({"VideoLibraryId": 0, "VideoGuid": "doctor", "Status": 0}).encode()
        return body, sign(Scheme.BUNNY, body, secret, now)

    def _token_protected(self) -> bool:
        """What the stack says of its library (BunnyTokenAuthentication): token authentication on."""
        return self.create_defaults.options.get(self.name, {}).get("tokenAuthentication") is True

    def playback(self, asset: AssetRef) -> str:
        """How the video plays at Bunny: the library's token authentication decides, not the row."""
        return SIGNED if self._token_protected() else self._asked(asset)

    def _asked(self, asset: AssetRef) -> str:
        """How the row asks to be played (its privacy, else the stack's DefaultPlayback)."""
        return super().playback(asset)

    # --- the create ---------------------------------------------------------------------------------

    def _create_body(self, asset: AssetRef, source_url: str) -> tuple[dict, list[str]]:
        # Fields: FetchVideoRequest {url, headers, title}; the query's thumbnailTime (ms) and collectionId.
        details, notes = details_of(asset), []
        body = {"url": source_url, "title": (asset.title or asset.asset_id) + title_tag(asset.asset_id)}
        signed = self._asked(asset) == SIGNED
        if signed:
            notes += not_carried(details, self.name, ("description", "tags"), "metaTags are public in Bunny's embeds")
        elif self._token_protected():
            notes.append("privacy: the library is token-protected, so this public row plays only with a token")
        notes += privacy_notes(details.privacy, self.name)
        notes += not_carried(details, self.name, ("metadata",), "metaTags are public in Bunny's embeds")
        notes += not_carried(details, self.name, ("created_at", "published_at", "folder"))
        if details.poster_time_s is not None and details.poster_time_s * 1000 > THUMBNAIL_MAX_MS:
            notes.append("poster_time_s: past thumbnailTime's range, the thumbnail left to Bunny")
        notes += self.create_options(asset)[1]
        return body, notes

    def _fetch_query(self, asset: AssetRef) -> dict[str, str]:
        poster = details_of(asset).poster_time_s
        ms = round(poster * 1000) if poster is not None and poster >= 0 else None
        return {"thumbnailTime": str(ms)} if ms is not None and ms <= THUMBNAIL_MAX_MS else {}

    def _our_tags(self, asset: AssetRef) -> list[dict]:
        details, tags = details_of(asset), [{"property": OUR_REF, "value": asset.asset_id}]
        if self._asked(asset) == PUBLIC:  # a private row's words never go where an embed shows them
            if details.description:
                tags.append({"property": "description", "value": details.description})
            if details.tags:
                tags.append({"property": "keywords", "value": ", ".join(details.tags)})
        return tags

    def create(self, asset: AssetRef, source_url: str) -> Outcome:
        body, notes = self._create_body(asset, source_url)
        if self._asked(asset) == SIGNED and not self._token_protected():
            privacy = details_of(asset).privacy or "default-signed (DefaultPlayback)"
            return Outcome(OutcomeKind.REJECTED, error=UNPROTECTED.format(privacy=privacy), notes=tuple(notes))
        path = f"{self._library()}/videos/fetch"
        answer = self._send("POST", path, json_body=body, params=self._fetch_query(asset))
        outcome = self._fetched(answer)
        if outcome is None:  # indeterminate: the video may exist; it is looked for before anything is sent again
            found = self._search(asset.asset_id, self.clock())
            if isinstance(found, Outcome):
                why = answer.error if isinstance(answer, Outcome) else f"HTTP {answer.status} naming no video"
                error = f"{why}: the fetch may have happened, and its video is looked for by its tag first"
                return Outcome(OutcomeKind.TRANSIENT, error=error, notes=tuple(notes))
            outcome = Outcome(OutcomeKind.CREATED, remote_id=found[0])
        if outcome.kind is OutcomeKind.CREATED and outcome.remote_id:  # CREATED always names its video
            self._tag(outcome.remote_id, asset.title or asset.asset_id, self._our_tags(asset))
        return replace(outcome, notes=tuple(notes))

    def _fetched(self, answer: Answer | Outcome) -> Outcome | None:
        """A fetch's answer: CREATED with the id it names, a refusal or a 429 (never taken effect), or None when
        it says nothing certain (no answer, a 5xx, a 2xx naming no video)."""
        if isinstance(answer, Outcome) or answer.status >= 500:
            return None
        if not 200 <= answer.status < 300:
            return self._failure(answer)
        said, refused = mapping(answer.body), refusal(answer.body, "the fetch")
        if refused:
            return Outcome(OutcomeKind.REJECTED, error=refused)
        remote_id = video_id(said.get("id")) or video_id(said.get("guid"))
        return self._created(answer, remote_id) if remote_id else None

    def _tag(self, remote_id: str, title: str, ours: list[dict]) -> bool:
        """Our title and metaTags on the video, read, merged and written (an update replaces metaTags whole):
        every tag already there is kept but those we write. False when it could not be done now."""
        path = f"{self._library()}/videos/{quote(remote_id)}"
        read = self._send("GET", path)
        if isinstance(read, Outcome) or read.status != 200 or not isinstance(read.body, dict):
            return False
        names = {t["property"] for t in ours}
        kept = [t for t in map(mapping, entries(read.body.get("metaTags"))) if t.get("property") not in names]
        wrote = self._send("POST", path, json_body={"title": title, "metaTags": kept + ours})
        return (
            isinstance(wrote, Answer) and 200 <= wrote.status < 300 and mapping(wrote.body).get("success") is not False
        )

    # --- finding an earlier create ----------------------------------------------------------------

    def find(self, asset_id: str, created_after: float | None) -> Outcome:
        """Our asset's video among those made since `created_after` (less FIND_MARGIN_S): CREATED (one still
        titled with its tag is tagged now, as Bunny's importer does), NOT_FOUND when the listing reached back
        that far or ended, TRANSIENT when it could not; a failed video never counts."""
        found = self._search(asset_id, created_after)
        if isinstance(found, Outcome):
            return found
        remote_id, video = found
        if meta_value(video.get("metaTags"), OUR_REF) != asset_id:
            title = (text(video.get("title")) or "").removesuffix(title_tag(asset_id)) or asset_id
            self._tag(remote_id, title, [{"property": OUR_REF, "value": asset_id}])
        return Outcome(OutcomeKind.CREATED, remote_id=remote_id)

    def _search(self, asset_id: str, created_after: float | None) -> tuple[str, dict] | Outcome:
        """The listed video made for the asset that has not failed, with its id, or the lookup's answer: NOT_FOUND
        once the pages reach back before `created_after` (less FIND_MARGIN_S) or the listing ends, TRANSIENT when
        they could not (too many pages; with no `created_after`, FIND_MAX_PAGES pages and then NOT_FOUND)."""
        bound = created_after - FIND_MARGIN_S if created_after is not None else None
        if created_after is None:
            cap, at_cap = FIND_MAX_PAGES, Outcome(OutcomeKind.NOT_FOUND)
        else:
            too_long = f"lookup window too long: {FIND_ABSOLUTE_MAX_PAGES} pages did not reach back to the claim"
            cap, at_cap = FIND_ABSOLUTE_MAX_PAGES, Outcome(OutcomeKind.TRANSIENT, error=too_long)
        for page in newest_first(self._page, cap, at_cap):
            if isinstance(page, Outcome):
                return page
            for item in page:
                remote_id = video_id(mapping(item).get("guid"))
                if is_ours(item, asset_id) and remote_id and status_of(item) not in FAILED:
                    return remote_id, mapping(item)
            times = [t for t in (bunny_time(mapping(i).get("dateUploaded")) for i in page) if t is not None]
            if bound is not None and times and min(times) < bound:
                break
        return Outcome(OutcomeKind.NOT_FOUND)

    def _page(self, number: int) -> tuple[list, int | None, int | None] | Outcome:
        params = {"page": str(number), "itemsPerPage": str(PAGE_SIZE), "orderBy": "date"}
        answer = self._send("GET", f"{self._library()}/videos", params=params)
        if isinstance(answer, Outcome):
            return Outcome(answer.kind, error=f"lookup {answer.error}")
        if not 200 <= answer.status < 300:
            return lookup_failure(self._failure(answer))
        if not isinstance(mapping(answer.body).get("items"), list):
            return Outcome(OutcomeKind.TRANSIENT, error=f"lookup HTTP {answer.status} without an items list")
        return list_page(answer.body)

    # --- reconcile and the webhook -------------------------------------------------------------

    def _poll_video(self, asset_id: str, remote_id: str) -> Poll:
        """One read of the video; once finished, its play data too (privacy and playback). A video still
        titled with its tag when the asset is known (reconcile) is tagged now."""
        answer = self._send("GET", f"{self._library()}/videos/{quote(remote_id)}")
        if isinstance(answer, Outcome):
            return Poll(0)
        if answer.status != 200:
            return Poll(answer.status, retry_after=self.rate_signal(answer.headers).retry_after)
        raw = mapping(answer.body)
        video = read_video(raw)
        if asset_id and (text(raw.get("title")) or "").endswith(title_tag(asset_id)):
            title = (text(raw.get("title")) or "").removesuffix(title_tag(asset_id)) or asset_id
            if self._tag(remote_id, title, [{"property": OUR_REF, "value": asset_id}]):
                video = replace(video, ref=asset_id)
        if video.target is State.READY:
            privacy, playback = self._play(raw)
            video = replace(video, privacy=privacy, playback=playback)
        return Poll(200, video)

    def _play(self, video: Mapping) -> tuple[str | None, dict | None]:
        """The play data of a finished video, asked with an embed view token where the secret has the key;
        refused (401/403) means the library is token-protected."""
        vid, creds = video_id(video.get("guid")), self._creds()
        params: dict[str, str] = {}
        if creds.token_key and vid:
            expires = int(self.clock()) + EMBED_TOKEN_TTL_S
            params = {"token": embed_token(creds.token_key, vid, expires), "expires": str(expires)}
        answer = self._send("GET", f"{self._library()}/videos/{quote(vid or '')}/play", params=params)
        if isinstance(answer, Outcome) or answer.status not in (200, 401, 403):
            return None, read_play({}, video, creds.library_id)[1]  # unknown privacy: recorded as signed
        if answer.status != 200:
            return SIGNED, read_play({"tokenAuthEnabled": True}, video, creds.library_id)[1]
        return read_play(answer.body, video, creds.library_id)

    def read_webhook(
        self, body: bytes, headers: Mapping[str, str], secrets: Sequence[str], now: float, tolerance_s: int
    ) -> WebhookEvent:
        verify(Scheme.BUNNY, body, headers, secrets, now, tolerance_s)
        lowered = {str(k).lower(): v for k, v in headers.items() if isinstance(v, str)}
        if lowered.get("x-bunnystream-signature-version", "v1").strip() != "v1":
            raise SignatureError("unsupported signature version")
        if lowered.get("x-bunnystream-signature-algorithm", "hmac-sha256").strip().lower() != "hmac-sha256":
            raise SignatureError("unsupported signature algorithm")
        event, event_id = json_event(body), body_event_id(body)
        remote_id, status = video_id(event.get("VideoGuid")), event.get("Status")
        try:
            ours = self._creds().library_id
        except CredentialsError:  # the receiver has no credentials to compare with: the confirming read decides
            ours = None
        if ours is not None and str(event.get("VideoLibraryId")) != ours:
            return WebhookEvent(event_id, None, None, note="not an outcome: another library's event")
        if status in (HOOK_FINISHED, HOOK_FAILED) and not isinstance(status, bool) and remote_id:
            word = "finished" if status == HOOK_FINISHED else "failed"
            return WebhookEvent(event_id, None, remote_id, confirm=True, note=f"status {status} {word} (reading it)")
        why = "playable, not finished" if status == HOOK_PLAYABLE else f"status {excerpt(str(status), 20)}"
        return WebhookEvent(event_id, None, remote_id, note=f"not an outcome: {why}")

    # --- the audit ------------------------------------------------------------------------------

    def videos(self) -> Iterator[Video]:
        """Every page, 1,000 at a time, until a page comes back empty or `totalItems` is reached (a page that
        states no total ends it too: Bunny always states one, and without it a repeated page would never
        end). Privacy is the library's: read once, from the first finished video's play data."""
        privacy: list[str | None] = []
        for number in listing_pages():
            params = {"page": str(number), "itemsPerPage": str(PAGE_SIZE), "orderBy": "date"}
            body, items = self._library_page(f"{self._library()}/videos", params, "items")
            for item in items:
                video = read_video(item)
                if video.target is State.READY and not privacy:
                    privacy.append(self._play(mapping(item))[0])
                yield replace(video, privacy=privacy[0] if privacy else None)
            _, total, per = list_page(body)
            if not items or total is None or number * (per or len(items)) >= total:
                return
        raise too_many_pages()

    # --- migrator verify ------------------------------------------------------------------------

    def signed_playback(self, playback: Mapping, ttl_s: float, keys: PlaybackKeys | None) -> SignedPlayback:
        """The recorded HLS with a CDN directory token this stack signs with the library's token key."""
        vid, hls = video_id(playback.get("playback_id")), text(playback.get("hls"))
        if vid is None or hls is None:
            raise SigningUnavailable("no Bunny video id and HLS URL recorded for it")
        try:
            key = self._creds().token_key
        except CredentialsError as exc:
            raise SigningUnavailable(str(exc)) from None
        if not key:
            raise SigningUnavailable(
                'the Bunny secret has no "token_key" (the library\'s token authentication key, Stream > Security);'
                " an embed view token signs the player only, not the HLS"
            )
        expires = int(self.clock() + min(max(ttl_s, 60.0), MAX_TOKEN_TTL_S))
        signed = signed_hls(hls, vid, key, expires)
        if signed is None:
            raise SigningUnavailable("the HLS URL recorded is not Bunny's <zone>/<video>/playlist.m3u8")
        return signed

    # --- caption tracks ----------------------------------------------------------------------

    takes_tracks = True
    one_track_per_language = True  # the path names the language: one file each

    def track_language_key(self, language: str) -> str:
        """The ISO 639-1 code a track is filed under: `pt` and `pt-BR` are one language at Bunny."""
        return caption_language_key(language)

    def track_matches(self, remote: RemoteTrack, track: Track, ref: str) -> bool:
        code, _ = caption_language(track.language)
        return code is not None and (remote.language or "").lower() == code

    def track_list(self, remote_id: str) -> TrackList | TrackOutcome:
        answer = self._track_send("GET", f"{self._library()}/videos/{quote(remote_id)}")
        if isinstance(answer, TrackOutcome):
            return answer
        if answer.status != 200:
            return self._track_list_failure(answer)
        video = mapping(answer.body)
        if status_of(video) in FAILED:
            return TrackList(video_gone=f"the video failed at Bunny ({failure_reason(video)})")
        listed = [mapping(c) for c in entries(video.get("captions"))]
        return TrackList(tuple(RemoteTrack(text(c.get("srclang")), remote_id=text(c.get("srclang"))) for c in listed))

    def attach_track(self, remote_id: str, track: Track, upload: TrackUpload, label: str) -> TrackOutcome:
        srclang, refused = caption_language(track.language)
        if srclang is None:
            return TrackOutcome(TrackResult.REFUSED, error=refused)
        content, _, _ = upload.caption.for_upload(self.track_needs_webvtt)
        body = {"srclang": srclang, "label": label, "captionsFile": base64.b64encode(content).decode("ascii")}
        path = f"{self._library()}/videos/{quote(remote_id)}/captions/{srclang}"
        done = self._status_call("POST", path, "the caption", json_body=body)
        return replace(done, remote_track_id=srclang) if done.kind is TrackResult.ATTACHED else done

    # --- what a viewer sees: thumbnail by URL, chapters and a collection on the video ----------------------

    takes_thumbnail = "image"
    thumbnail_by_url = True
    takes_chapters = True
    takes_collections = True
    one_collection_per_video = True

    def _video(self, remote_id: str) -> dict | TrackOutcome:
        """The video as Bunny has it now (the look of every extra), or why it cannot be read."""
        answer = self._extra_call("GET", f"{self._library()}/videos/{quote(remote_id)}")
        if isinstance(answer, TrackOutcome):
            return answer
        video = mapping(answer.body)
        if status_of(video) in FAILED:
            return TrackOutcome(TrackResult.VIDEO_GONE, error=f"provider: the video failed ({failure_reason(video)})")
        return video

    def _status_call(self, method: str, path: str, what: str, **kwargs) -> TrackOutcome:
        """A call Bunny answers with a StatusModel: ATTACHED, or why not (a 200 may say `success: false`)."""
        answer = self._extra_call(method, path, **kwargs)
        if isinstance(answer, TrackOutcome):
            return answer
        refused = refusal(answer.body, what)
        return TrackOutcome(TrackResult.REFUSED, error=f"provider: {refused}") if refused else ATTACHED

    def thumbnail_state(self, remote_id: str) -> ThumbnailLook | TrackOutcome:
        video = self._video(remote_id)
        if isinstance(video, TrackOutcome):
            return video
        name = custom_thumbnail(video)
        return ThumbnailLook(custom=name is not None, digest=name)

    def set_thumbnail(self, remote_id: str, image: ThumbnailUpload) -> TrackOutcome:
        if not image.url:
            return TrackOutcome(TrackResult.REFUSED, error="bunny takes a thumbnail by URL, and none was given")
        path = f"{self._library()}/videos/{quote(remote_id)}/thumbnail"
        done = self._status_call("POST", path, "the thumbnail", params={"thumbnailUrl": image.url})
        return replace(done, remote_track_id=image.digest) if done.kind is TrackResult.ATTACHED else done

    def chapters_of(self, remote_id: str, language: str) -> ChaptersLook | TrackOutcome:
        video = self._video(remote_id)
        return video if isinstance(video, TrackOutcome) else ChaptersLook(len(entries(video.get("chapters"))))

    def set_chapters(self, remote_id: str, upload: ChaptersUpload) -> TrackOutcome:
        body = {"chapters": bunny_chapters(upload.chapters, upload.duration_s)}
        return self._status_call("POST", f"{self._library()}/videos/{quote(remote_id)}", "the chapters", json_body=body)

    def find_collection(self, name: str, ref: str) -> RemoteCollection | TrackOutcome | None:
        """A collection of exactly `name` (Bunny keeps no reference of ours on one), the search's pages in turn."""
        for page in range(1, COLLECTION_PAGES + 1):
            params = {"search": name, "page": str(page), "itemsPerPage": str(COLLECTION_PAGE_SIZE)}
            answer = self._extra_call("GET", f"{self._library()}/collections", params=params)
            if isinstance(answer, TrackOutcome):
                return answer
            items, total, per = list_page(answer.body)
            for item in map(mapping, items):
                guid = video_id(item.get("guid"))
                if guid and item.get("name") == name:
                    return RemoteCollection(guid, name)
            if not items or total is None or page * (per or len(items)) >= total:
                return None
        return TrackOutcome(TrackResult.TRANSIENT, error=f"over {COLLECTION_PAGES} pages of collections named alike")

    def create_collection(self, name: str, kind: str, ref: str) -> TrackOutcome:
        answer = self._extra_call("POST", f"{self._library()}/collections", json_body={"name": name})
        if isinstance(answer, TrackOutcome):
            return answer
        guid = video_id(mapping(answer.body).get("guid"))
        if guid is None:
            return TrackOutcome(TrackResult.TRANSIENT, error=f"provider: HTTP {answer.status} naming no collection")
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=guid)

    def place(self, remote_id: str, collection_id: str, position: int | None) -> TrackOutcome:
        path, body = f"{self._library()}/videos/{quote(remote_id)}", {"collectionId": collection_id}
        placed = self._status_call("POST", path, "the collection", json_body=body)
        return replace(placed, remote_track_id=collection_id) if placed.kind is TrackResult.ATTACHED else placed

    def placed_in(self, remote_id: str, collection_id: str) -> bool | TrackOutcome:
        """The look before a placement: the video names its collection (one read, not the collection's list)."""
        video = self._video(remote_id)
        return video if isinstance(video, TrackOutcome) else video.get("collectionId") == collection_id

    def collection_members(self, collection_id: str) -> tuple[str, ...] | TrackOutcome:
        """The collection's videos (Video_List's `collection` filter), every page."""
        found: list[str] = []
        for page in listing_pages():
            params = {"collection": collection_id, "page": str(page), "itemsPerPage": str(PAGE_SIZE)}
            answer = self._extra_call("GET", f"{self._library()}/videos", params=params)
            if isinstance(answer, TrackOutcome):
                return answer
            items, total, per = list_page(answer.body)
            found += [g for g in (video_id(mapping(i).get("guid")) for i in items) if g]
            if not items or total is None or page * (per or len(items)) >= total:
                break
        return tuple(found)
