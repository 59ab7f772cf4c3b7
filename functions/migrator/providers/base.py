"""The one interface every video provider is reached through.

The uploader, the webhook and reconcile speak only to `Provider`: create a video from a
URL tagged with our asset id, find what an earlier try created, poll a video, read a
signed webhook, list the library (for the audit), and read the provider's rate-limit
signals. Each provider module turns its own wire format into the facts of `facts.py`;
nothing outside the package asks which provider it is talking to. The decisions taken
on those facts stay pure functions elsewhere (`fate`, `heal`).
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace

from ..create_options import chosen_options
from ..extras import MAX_IMAGE_BYTES
from ..fate import Outcome, OutcomeKind, classify_failure, excerpt, transport_failure
from ..messages import Track
from ..playback_tokens import SigningKey
from ..signatures import Scheme, sign, verify
from ..trackfetch import FetchPolicy
from ..tracks import TrackOutcome, TrackResult
from .extras import ChaptersLook, ChaptersUpload, RemoteCollection, ThumbnailLook, ThumbnailUpload
from .facts import (
    AssetRef,
    CredentialsError,
    EventError,
    PlaybackKeys,
    Poll,
    RateSignal,
    RemoteTrack,
    SignedPlayback,
    SigningUnavailable,
    TrackList,
    TrackUpload,
    Video,
    WebhookEvent,
)
from .fidelity import CreateDefaults, details_of, playback_of
from .http import Answer, HttpTransport, TransportError
from .ratelimit import read_rate_headers

# How many pages `find` reads when the provider has no filter for our reference and no time bounds
# the search (`created_after` None: a poll with no recorded id).
FIND_MAX_PAGES = 5
# A create is looked for among videos made since the claim, less this margin for clocks.
FIND_MARGIN_S = 300.0
# How many pages a listing of the whole library (`videos()`, for the audit) reads at most: 10 M
# videos at 100 a page. A listing that would go on past it is a provider looping, and stops loudly.
LISTING_MAX_PAGES = 100_000
# A page of the library may be larger than an ordinary answer (1,000 Cloudflare videos run past
# 1 MiB); the audit reads it on the operator's machine, not in a Lambda.
LISTING_MAX_BODY_BYTES = 16 * 1024 * 1024


class Provider(ABC):
    """A video provider: its wire format behind the operations the migration needs.

    `secret` returns the credentials' raw text (Secrets Manager or SSM, cached); each
    provider reads its own format from it, per request, so a rotation is picked up.

    Past 300 lines on purpose: it is the one contract every provider fills in, its class facts (pacing,
    privacy, tracks) and the defaults most of them share read top to bottom; split by caller, a new
    provider's author would have to find the contract in several places.
    """

    name: str = ""
    default_base_url: str = ""
    # In which window a duplicate video is still possible, for the README and the audit.
    duplicate_window: str = ""
    # Webhook events one asset causes at the most (created, ready, per-quality, ...): with the
    # create ceiling, what the webhook route must be able to take (the template's WebhookThrottle).
    events_per_asset: int = 1
    # Whether it sends webhooks at all (Vimeo documents none: reconcile's poll settles every video).
    sends_webhooks: bool = True
    # Whether a caption track is uploaded as a file (Cloudflare, api.video), not fetched by URL (Mux).
    takes_caption_files: bool = True
    # Whether the provider can fetch an s3:// source through the presigned GET URL the uploader
    # hands it. One that first asks with HEAD (and range GETs) cannot: S3 signs the method, so a
    # URL presigned for GET answers HEAD with 403 SignatureDoesNotMatch.
    fetches_presigned_get: bool = True
    # Whether it reads an s3:// source itself, in the stack's own account (the aws target's MediaConvert role): it
    # is handed ArchiveFirst's archived copy as its s3:// URI, never a presigned link.
    reads_s3_itself: bool = False
    # Whether it is reached over HTTP of its own (HttpTransport, a simulator profile, the HTTP fuzzers); the aws target
    # is reached through the AWS SDK instead.
    speaks_http: bool = True
    # Pacing facts, from the provider's own documents (the pacer reads them):
    # videos it lets be queued or encoding at once (None: no documented bound);
    max_in_flight: int | None = None
    # the create rate it documents for every account, creates/s: the pacer's ceiling when the
    # operator sets none (ProviderRateLimit 0). None: no such rate, the pacer learns it from 429s;
    create_rate_per_s: float | None = None
    # the create rate it documents, creates/s, and the document that says so: what `migrator plan` times a
    # migration at (None: none documented, the plan asks for --rate); Mux's and JW Player's are `create_rate_per_s`;
    documented_rate_per_s: float | None = None
    documented_rate_doc: str = ""
    # whether its stated rate limit is a budget of every call (lookups, polls, other tools), not of creates;
    budget_covers_all_calls: bool = False
    # the window an `X-RateLimit-Limit` counts over, in seconds; None: not documented, and a limit
    # without a window is not read as a rate.
    rate_limit_window_s: float | None = 1.0
    # Whether a 409 to a create means "it exists already" (the seed contract), to be found by our reference.
    conflict_means_exists: bool = False
    # How long a source link handed to a create must stay valid, in seconds, where the provider documents that it
    # fetches the link later than the create (Vimeo's pull: 24 h): the hand-off never hands it a link that ends
    # sooner (link_life.decide: signed again for longer where the source can, else the asset refused with why).
    # None: it fetches the link once the create is accepted, and a link alive then will do. `link_need_doc`: the
    # document's words, quoted in a refusal.
    link_valid_for_s: float | None = None
    link_need_doc: str = ""

    def __init__(
        self,
        base_url: str | None,
        secret: Callable[[], str | None],
        clock: Callable[[], float] = time.time,
        session=None,
        connect_timeout_s: float = 3.05,
        read_timeout_s: float = 10.0,
        create_defaults: CreateDefaults | None = None,
        track_policy: FetchPolicy | None = None,
    ):
        base = base_url or self.default_base_url
        if not base:
            raise CredentialsError(f"the {self.name} provider needs a base URL (ProviderBaseUrl)")
        self.secret = secret
        self.clock = clock
        self.create_defaults = create_defaults or CreateDefaults()
        # Which track URLs may be handed on as they are (Mux fetches a create's text inputs itself).
        self.track_policy = track_policy or FetchPolicy()
        self.http = HttpTransport(base, self.auth_headers, session, connect_timeout_s, read_timeout_s)

    @abstractmethod
    def auth_headers(self) -> dict[str, str]:
        """The request's credentials, read from the secret (CredentialsError when malformed)."""

    # --- the uploader -----------------------------------------------------------------

    @abstractmethod
    def create(self, asset: AssetRef, source_url: str) -> Outcome:
        """Ask for a video made from `source_url`, tagged with the asset, carrying what the row says
        of it (`_create_body`); the answer classified, with the body's notes."""

    @abstractmethod
    def _create_body(self, asset: AssetRef, source_url: str) -> tuple[dict, list[str]]:
        """The create request's body, each of the row's fields in the provider's own place, and a
        note for each value cut, left out or kept only in the ledger. Pure: the uploader also calls
        it to know the notes of a video an earlier try made (`create_notes`)."""

    def create_notes(self, asset: AssetRef, source_url: str) -> tuple[str, ...]:
        """What a create of `asset` could not carry as the row has it (the notes of `_create_body`)."""
        return tuple(self._create_body(asset, source_url)[1])

    def ready_video(self, remote_id: str, asset: AssetRef) -> Video | None:
        """The ready video an event that says so (`WebhookEvent.says_ready`) names, from what the ledger holds
        of `asset`, without asking the provider; None: ask it (every provider but those whose budget the read
        would halve)."""
        return None

    def playback(self, asset: AssetRef) -> str:
        """How the asset's video is played at the provider, in our terms: public or signed."""
        return playback_of(details_of(asset).privacy, self.create_defaults.playback)

    def create_options(self, asset: AssetRef) -> tuple[dict[str, object], list[str]]:
        """The provider options this create uses (the row's over the stack's) and the notes of row
        values left out."""
        stack = self.create_defaults.options.get(self.name, {})
        return chosen_options(self.name, stack, details_of(asset).options)

    @abstractmethod
    def find(self, asset_id: str, created_after: float | None) -> Outcome:
        """A video an earlier try made for this asset: CREATED with its id, or NOT_FOUND.
        An errored video never counts. `created_after` bounds a search by time where the
        provider has no filter for our reference."""

    def source_problem(self, source_url: str) -> str | None:
        """Why this provider could never fetch `source_url`, or None: checked before any create,
        at load time (the CLI) and by the uploader, with the same words."""
        if not self.fetches_presigned_get and source_url.lower().startswith("s3://"):
            return unfetchable_s3(self.name)
        return None

    # --- reconcile and the webhook ------------------------------------------------------

    def poll(self, asset_id: str, remote_id: str | None) -> Poll:
        """The video's state now: by its id, or found by our reference when no id was recorded."""
        if not remote_id:
            found = self.find(asset_id, None)
            answer = poll_of(found)
            if answer is not None:
                return answer
            remote_id = found.remote_id
            if not remote_id:  # never so: every find's CREATED names its video; no id, no answer
                return Poll(0)
        return self._poll_video(asset_id, remote_id)

    @abstractmethod
    def _poll_video(self, asset_id: str, remote_id: str) -> Poll:
        """One read of the video `remote_id` (see `_get_video`)."""

    @abstractmethod
    def read_webhook(
        self, body: bytes, headers: Mapping[str, str], secrets: Sequence[str], now: float, tolerance_s: int
    ) -> WebhookEvent:
        """Verify a callback over its exact bytes (SignatureError, SecretError) and read it (EventError)."""

    # --- the audit ------------------------------------------------------------------------

    @abstractmethod
    def videos(self) -> Iterator[Video]:
        """Every video in the library, page by page (for `migrator audit`)."""

    def settled(self, video: Video) -> Video:
        """A listed video with its status filled in, where the listing leaves it out (one more read)."""
        return video

    # --- migrator verify: signed playback -------------------------------------------------------

    # Whether a settled video's playback info keeps a lasting HLS URL; where it does not (Vimeo's links expire
    # within hours), `signed_playback` hands verify a fresh one for public videos too.
    records_hls = True

    def signed_playback(self, playback: Mapping, ttl_s: float, keys: PlaybackKeys | None) -> SignedPlayback:
        """How to fetch a signed video's HLS for `ttl_s` (the ledger's `playback_info` of it): its manifest
        URL with a token this stack made, and what every later request it leads to carries. `keys` holds
        the stack's playback signing key where the provider signs with one (Mux). Raises SigningUnavailable
        where this provider cannot sign for us (the reason is printed), a TransportError where it did not
        answer (the asset is left for the next run)."""
        raise SigningUnavailable(f"the {self.name} provider gives no way to sign a playback URL")

    def create_signing_key(self) -> SigningKey:
        """A new playback signing key made through the provider's API (Mux's signing keys), for `PlaybackKeys`
        to keep: its private key is returned once and never again."""
        raise SigningUnavailable(f"the {self.name} provider makes no playback signing keys")

    # --- migrator doctor ---------------------------------------------------------------------

    @abstractmethod
    def check(self) -> Answer:
        """One cheap authenticated read: is the provider reachable, and are the credentials accepted?"""

    def doctor_event(self, secret: str, now: float) -> tuple[bytes, dict[str, str]]:
        """A signed callback that names nothing (the webhook acknowledges and ignores it): the proof
        that a request signed with `secret` is accepted end to end."""
        body = json.dumps({"type": "migrator.doctor", "id": f"doctor-{int(now)}", "data": {}}).encode()
        return body, sign(self.webhook_scheme, body, secret, now, f"msg_doctor_{int(now)}")

    webhook_scheme: Scheme = Scheme.SEED

    # --- caption tracks (the tracks worker; docs/providers.md "Caption tracks") --------------------

    takes_tracks: bool = False  # the provider has a text-track API at all
    track_needs_webvtt: bool = True  # the file itself is uploaded, and only as WebVTT
    one_track_per_language: bool = False  # a second file in a language replaces (or is refused)

    def create_time_tracks(self, asset: AssetRef) -> list[Track]:
        """The asset's tracks its create carries (the provider fetches them itself); none by default."""
        return []

    def tracks_at_create(self, asset: AssetRef) -> list[dict]:
        """The create body's entries for `create_time_tracks` (Mux's text inputs); none by default."""
        return []

    def track_list(self, remote_id: str) -> TrackList | TrackOutcome:
        """The video's text tracks as the provider lists them (the look before an upload)."""
        return TrackList()

    def track_language_key(self, language: str) -> str:
        """The language a track is filed under where the provider keeps one file per language (two tracks of one
        key clash: tracks.initial_states); the tag itself, without case, unless the provider files by another code
        (Bunny's ISO 639-1)."""
        return language.lower()

    def track_matches(self, remote: RemoteTrack, track: Track, ref: str) -> bool:
        """Whether a listed track is ours: by language, where the provider keeps one file per language."""
        return (remote.language or "").lower() == track.language.lower()

    def attach_track(self, remote_id: str, track: Track, upload: TrackUpload, label: str) -> TrackOutcome:
        """Give the video `remote_id` the track: ATTACHED, SUBMITTED (the provider confirms later) or why not."""
        return TrackOutcome(TrackResult.REFUSED, error=f"the {self.name} provider takes no text tracks")

    def publish_track(self, remote_id: str, remote: RemoteTrack) -> TrackOutcome:
        """Make a track the provider holds unpublished (a `draft`, JW's) delivered: ATTACHED, SUBMITTED (look
        again) or why not. Only a provider that lists drafts has one."""
        return TrackOutcome(TrackResult.REFUSED, error=f"the {self.name} provider holds the track unpublished")

    def _upload_caption(self, method: str, path: str, track: Track, upload: TrackUpload) -> Answer | TrackOutcome:
        """The caption file sent as a multipart `file` part (as WebVTT where the provider takes only that)."""
        content, suffix, media_type = upload.caption.for_upload(self.track_needs_webvtt)
        answer = self._track_send(method, path, files={"file": (f"{track.language}.{suffix}", content, media_type)})
        if isinstance(answer, Answer) and not 200 <= answer.status < 300:
            return self._track_failure(answer)
        return answer

    def _track_send(self, method: str, path: str, **kwargs) -> Answer | TrackOutcome:
        """A track call's answer, or TRANSIENT when none came (a retry looks before it uploads again)."""
        try:
            return self.http.send(method, path, **kwargs)
        except TransportError as exc:
            return TrackOutcome(TrackResult.TRANSIENT, error=f"provider: {exc.kind}")

    def _track_failure(self, answer: Answer) -> TrackOutcome:
        """A track call's non-2xx answer: paced, the video gone, refused (a 4xx about the track) or transient."""
        detail = excerpt(answer.text, 200)
        if answer.status == 429:
            return TrackOutcome(TrackResult.THROTTLED, retry_after=self.rate_signal(answer.headers).retry_after)
        if answer.status == 404:
            return TrackOutcome(TrackResult.VIDEO_GONE, error=f"provider: no such video (HTTP 404) {detail}".strip())
        if 400 <= answer.status < 500 and answer.status != 408:
            return TrackOutcome(TrackResult.REFUSED, error=f"provider: HTTP {answer.status}: {detail}")
        return TrackOutcome(TrackResult.TRANSIENT, error=f"provider: HTTP {answer.status}")

    def _track_list_failure(self, answer: Answer) -> TrackList | TrackOutcome:
        """A listing's non-2xx answer: a video that is not there (404) is an answer, the rest a failure."""
        failure = self._track_failure(answer)
        if failure.kind is TrackResult.VIDEO_GONE:
            return TrackList(video_gone=f"{self.name} has no such video (HTTP 404)")
        return failure

    def webhook_target(self) -> str | None:
        """Where the provider sends its callbacks, when it keeps one address per account and can say
        (Cloudflare Stream); None when it cannot say or keeps many (then doctor has nothing to check)."""
        return None

    # --- extras: thumbnails, chapters, collections, the publish date (docs/providers.md "What a viewer sees") ---
    # The tracks worker works each as a `track_states` entry (extras.py): a look where an earlier pass may have
    # done it, then the put; each answers a TrackOutcome (NOTED: carried otherwise, the note says how). The
    # defaults carry nothing: a target says what it takes in these facts and fills in the matching operations.

    takes_thumbnail: str | None = None  # "image" (set_thumbnail), "time" (set_thumbnail_time only) or None
    thumbnail_by_url: bool = False  # the target fetches the image itself (ThumbnailUpload.url), not an upload
    # Where the create itself carries the row's image (the aws target copies the archived one beside the renditions),
    # what the thumbnail's entry notes instead of a pass of its own; "" for the rest.
    thumbnail_with_create: str = ""
    thumbnail_max_bytes: int = MAX_IMAGE_BYTES
    poster_time_later: bool = False  # the row's poster time is set after the create (set_thumbnail_time)
    takes_chapters: bool = False
    chapters_by_url: bool = False  # the target fetches the chapters file itself (chapters_file, ChaptersUpload.url)
    takes_collections: bool = False
    one_collection_per_video: bool = False  # a video sits in one collection (Bunny): the row's first
    keeps_collection_order: bool = False  # order_collection sets the members' order (a showcase, a playlist)
    collections_instead: str = "kept in the ledger only"  # what a target without collections does instead
    published_field: str | None = None  # the create body's field for the original publish time, if any

    def thumbnail_state(self, remote_id: str) -> ThumbnailLook | TrackOutcome:
        """The look before a thumbnail is set: whether an earlier pass set ours already."""
        return ThumbnailLook()

    def set_thumbnail(self, remote_id: str, image: ThumbnailUpload) -> TrackOutcome:
        """Make `image` the video's poster: ATTACHED, or why not."""
        return TrackOutcome(TrackResult.REFUSED, error=f"the {self.name} provider takes no thumbnail image")

    def set_thumbnail_time(self, remote_id: str, time_s: float) -> TrackOutcome:
        """Make the frame at `time_s` the video's poster: ATTACHED, or why not."""
        return TrackOutcome(TrackResult.REFUSED, error=f"the {self.name} provider takes no thumbnail time")

    def chapters_of(self, remote_id: str, language: str) -> ChaptersLook | TrackOutcome:
        """The look before chapters are written: how many the video holds (in `language`, where it keeps one
        list a language)."""
        return ChaptersLook()

    def chapters_file(self, upload: ChaptersUpload) -> tuple[str, bytes, str]:
        """The file a target that fetches chapters by URL is handed (name, body, media type), staged in the stack's
        bucket: the WebVTT file by default, another format where the target reads one (Mux's JSON)."""
        return "chapters.vtt", upload.webvtt, "text/vtt"

    def set_chapters(self, remote_id: str, upload: ChaptersUpload) -> TrackOutcome:
        return TrackOutcome(TrackResult.REFUSED, error=f"the {self.name} provider takes no chapters")

    def find_collection(self, name: str, ref: str) -> RemoteCollection | TrackOutcome | None:
        """A collection made before (a lost answer, an earlier run): by our reference `ref` where the target keeps
        one, else by its exact name; None when there is none."""
        return None

    def create_collection(self, name: str, kind: str, ref: str) -> TrackOutcome:
        """Make a collection: ATTACHED with its id as `remote_track_id`, or why not."""
        return TrackOutcome(TrackResult.REFUSED, error=f"the {self.name} provider keeps no collections")

    def place(self, remote_id: str, collection_id: str, position: int | None) -> TrackOutcome:
        """Put the video in the collection: ATTACHED, or why not."""
        return TrackOutcome(TrackResult.REFUSED, error=f"the {self.name} provider keeps no collections")

    def collection_members(self, collection_id: str) -> tuple[str, ...] | TrackOutcome:
        """The collection's videos, in its order."""
        return ()

    def keeps_order_of(self, collection_id: str) -> bool:
        """Whether this collection keeps an order of its videos (what `order_collection` sets and verify reads back)."""
        return self.keeps_collection_order

    def placed_in(self, remote_id: str, collection_id: str) -> bool | TrackOutcome:
        """The look before a placement: whether the video is in the collection already."""
        members = self.collection_members(collection_id)
        return members if isinstance(members, TrackOutcome) else remote_id in members

    def order_collection(self, collection_id: str, ordered: Sequence[str]) -> TrackOutcome:
        """Set the order of the collection's videos `ordered` (those placed so far, in source order)."""
        return TrackOutcome(TrackResult.ATTACHED)

    def _extra_call(self, method: str, path: str, **kwargs) -> Answer | TrackOutcome:
        """One call of an extra's: its 2xx answer, or what a failure means for the entry (`_track_failure`: no
        answer, a 429, the video gone at a 404, a refusal, a 5xx)."""
        answer = self._track_send(method, path, **kwargs)
        if isinstance(answer, Answer) and not 200 <= answer.status < 300:
            return self._track_failure(answer)
        return answer

    # --- pacing -----------------------------------------------------------------------------

    def rate_signal(self, headers: Mapping[str, str]) -> RateSignal:
        """The provider's rate-limit headers, read in its own dialect (`rate_limit_window_s`)."""
        return read_rate_headers(headers, self.clock(), self.rate_limit_window_s)

    # --- shared plumbing for the subclasses ------------------------------------------------

    def _send(self, method: str, path: str, **kwargs) -> Answer | Outcome:
        """The answer, or a TRANSIENT outcome when no answer came (the create may have happened)."""
        try:
            return self.http.send(method, path, **kwargs)
        except TransportError as exc:
            return transport_failure(exc.kind)

    def _get_video(self, path: str, reader: Callable[[object], Video]) -> Poll:
        """One GET of a video: its answer read with `reader` (0 when no answer came)."""
        answer = self._send("GET", path)
        if isinstance(answer, Outcome):
            return Poll(0)
        video = reader(answer.body) if answer.status == 200 else None
        return Poll(answer.status, video, self.rate_signal(answer.headers).retry_after)

    def _listing(self, path: str, params: Mapping[str, str], key: str, absent_is_empty: bool = False) -> list | Outcome:
        """One page of a list (its `key` entry), or the lookup's failure as an outcome.
        `absent_is_empty`: a 404 means "nothing matches" (the seed contract's lookup)."""
        page = self._listing_page(path, params, key, absent_is_empty)
        return page if isinstance(page, Outcome) else page[1]

    def _listing_page(
        self, path: str, params: Mapping[str, str], key: str, absent_is_empty: bool = False
    ) -> tuple[dict, list] | Outcome:
        """One page of a list as an object and its `key` entry (for what the page says of itself: its length,
        the total), or the lookup's failure as an outcome."""
        answer = self._send("GET", path, params=params)
        if isinstance(answer, Outcome):
            return Outcome(answer.kind, error=f"lookup {answer.error}")
        if answer.status == 404 and absent_is_empty:
            return {}, []
        if not 200 <= answer.status < 300:
            return lookup_failure(self._failure(answer))
        body = answer.body if isinstance(answer.body, dict) else {}
        items = body.get(key)
        if not isinstance(items, list):
            return Outcome(OutcomeKind.TRANSIENT, error=f"lookup HTTP {answer.status} without a {key} list")
        return body, items

    def _library_page(self, path: str, params: Mapping[str, str], key: str) -> tuple[dict, list]:
        """One page of the library (for `videos()`): the page as an object and its `key` list, or
        the ListingError that stops the audit, so a page that cannot be read never ends it quietly."""
        try:
            answer = self.http.send("GET", path, params=params, max_body_bytes=LISTING_MAX_BODY_BYTES)
        except TransportError as exc:
            raise ListingError(f"listing the provider's videos failed: {exc.kind}") from None
        listed(answer)
        if answer.truncated:
            raise ListingError(f"listing the provider's videos failed: a page over {LISTING_MAX_BODY_BYTES} bytes")
        body = answer.body if isinstance(answer.body, dict) else {}
        items = body.get(key)
        if not isinstance(items, list):
            raise ListingError(f"listing the provider's videos failed: a page without a {key} list")
        return body, items

    def _failure(self, answer: Answer) -> Outcome:
        """A non-2xx answer classified: throttled, rejected (a 4xx about the asset) or transient."""
        signal = self.rate_signal(answer.headers)
        return replace(classify_failure(answer.status, answer.text, signal.retry_after), signal=signal)

    def _created(self, answer: Answer, remote_id: str | None) -> Outcome:
        """A 2xx create answer, with what its headers say about the limit."""
        return replace(created(answer, remote_id), signal=self.rate_signal(answer.headers))

    def _post_create(
        self,
        path: str,
        body: dict,
        notes: Sequence[str],
        remote_id_of: Callable[[object], str | None],
        headers: Mapping[str, str] | None = None,
    ) -> Outcome:
        """POST one create and classify its answer (`remote_id_of` reads the id from a 2xx body); the
        outcome carries the body's notes whatever it is."""
        answer = self._send("POST", path, json_body=body, headers=headers)
        if isinstance(answer, Outcome):
            outcome = answer
        elif 200 <= answer.status < 300:
            outcome = self._created(answer, remote_id_of(answer.body))
        elif answer.status == 409 and self.conflict_means_exists:
            outcome = Outcome(OutcomeKind.CONFLICT, error="HTTP 409: already exists")
        else:
            outcome = self._create_failure(answer)
        return replace(outcome, notes=tuple(notes))

    def _create_failure(self, answer: Answer) -> Outcome:
        """A create's non-2xx answer classified (a provider with account limits reads them here)."""
        return self._failure(answer)


# --- plumbing shared by the provider modules -----------------------------------------------------


def verified_event(
    scheme: Scheme, body: bytes, headers: Mapping[str, str], secrets: Sequence[str], now: float, tolerance_s: int
) -> tuple[dict, str, str | None]:
    """A callback checked in `scheme` and read as a JSON object with a string `type`; also the
    event id the signature scheme itself carries (Standard Webhooks), if any."""
    verified = verify(scheme, body, headers, secrets, now, tolerance_s)
    event = json_event(body)
    kind = event.get("type")
    if not isinstance(kind, str):
        raise EventError("event type is not a string")
    return event, kind, verified.event_id


def json_event(body: bytes) -> dict:
    """A verified body as a JSON object, or the EventError that answers 400."""
    try:
        event = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise EventError("body is not valid JSON") from None
    if not isinstance(event, dict):
        raise EventError("event is not a JSON object")
    return event


def created(answer: Answer, remote_id: str | None) -> Outcome:
    """A 2xx create answer: CREATED with the id, or TRANSIENT when it names no usable video."""
    if answer.body is None:
        return Outcome(OutcomeKind.TRANSIENT, error=f"HTTP {answer.status} with a body that is not JSON")
    if remote_id is None:
        return Outcome(OutcomeKind.TRANSIENT, error=f"HTTP {answer.status} without a usable video id")
    return Outcome(OutcomeKind.CREATED, remote_id=remote_id)


def lookup_failure(outcome: Outcome) -> Outcome:
    """A failed lookup says nothing about the source: never a rejection. Its throttle's scope and
    rate-limit headers stay: a lookup's 429 paces the fleet like a create's, its 503 does not."""
    kind = OutcomeKind.TRANSIENT if outcome.kind is OutcomeKind.REJECTED else outcome.kind
    return replace(outcome, kind=kind, error="lookup " + (outcome.error or ""))


def poll_of(found: Outcome) -> Poll | None:
    """A poll's answer when a lookup (no id recorded) did not name a video: None when it did."""
    if found.kind is OutcomeKind.CREATED:
        return None
    if found.kind is OutcomeKind.THROTTLED:
        return Poll(429, retry_after=found.retry_after)
    return Poll(200 if found.kind is OutcomeKind.NOT_FOUND else 0)


def unfetchable_s3(provider: str) -> str:
    return (
        f"{provider} fetches a source with HEAD and range GETs, which an S3 URL presigned for GET refuses (403):"
        " serve the objects at an https URL that answers both (a CloudFront distribution, or a public-read"
        " prefix) and list those URLs instead of s3://"
    )


class ListingError(RuntimeError):
    """The library could not be listed (the audit stops and says why)."""


def listing_pages() -> range:
    """The page numbers (from 1) a listing may read; past the last, `too_many_pages`."""
    return range(1, LISTING_MAX_PAGES + 1)


def too_many_pages() -> ListingError:
    return ListingError(
        f"listing the provider's videos stopped after {LISTING_MAX_PAGES:,} pages: the provider keeps "
        "answering with more (a listing that loops?)"
    )


def listed(answer: Answer) -> Answer:
    """A page of the library, or the ListingError that stops the audit."""
    if answer.status != 200:
        raise ListingError(f"listing the provider's videos failed: HTTP {answer.status}: {excerpt(answer.text, 200)}")
    return answer


def secret_text(raw: str | None, field: str, what: str) -> str | None:
    """A single credential: the secret's text itself, or JSON `{field: ...}`; None when none is set."""
    if raw is None:
        return None
    text = raw.strip()
    if not text.startswith("{"):
        return text or None
    try:
        doc = json.loads(text)
    except ValueError:
        raise CredentialsError(f"the {what} secret is not valid JSON") from None
    value = doc.get(field) if isinstance(doc, dict) else None
    if not isinstance(value, str) or not value:
        raise CredentialsError(f'the {what} secret has no "{field}" field')
    return value
