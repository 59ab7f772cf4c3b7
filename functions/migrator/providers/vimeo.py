"""Vimeo as a target (the API reference, its OpenAPI file vimeo/openapi api.yaml; PyVimeo 1.1.2 and the
official Node library's examples send the same requests).

- credentials: a personal access token with the `upload`, `edit` and `private` scopes,
  `Authorization: bearer <token>` and the version pinned in `Accept`
  (`application/vnd.vimeo.*+json;version=3.4`); the secret holds the token, or JSON `{"token": "..."}`;
- create: `POST /me/videos` with `upload: {approach: "pull", link: <the source URL>}` ("The public URL at
  which the video is hosted. The URL must be valid for at least 24 hours"), `name` (the title),
  `description` and `privacy: {view}`; 201 with the video, its id the last segment of `uri`. The create
  takes no tags, folder, custom fields or creation time: those stay in the ledger, noted (a poster time is a picture
  made from that frame once the video exists: vimeo_extras.py).
  The link is handed only when it lives those 24 hours (`link_valid_for_s`; the uploader's hand-off signs
  an S3, Cloud Storage or Azure link for that long, and refuses one that cannot live it, a Dropbox link's
  four hours, before any create: link_life.py);
- no idempotency key: our reference is the description's last line, `migration-ref vm<hash> <asset id>`
  (Vimeo has no free field of its own), and an earlier create is found by the list's `query` ("The
  search query to use to filter the results") for that tag, then, since what a search covers and how
  soon a new video shows in it are not documented, by paging the list newest first back to the claim;
  an errored video is never adopted;
- privacy: `privacy.view` anybody (public), unlisted (unlisted), nobody ("No one besides the owner can
  view the video") for private and signed rows, with a note: Vimeo signs no playback URLs. "Vimeo
  Basic members can't set this value to disable or unlisted": the account's plan (`GET /me`, `account`)
  is read before an unlisted row's create, and on Basic it is sent as nobody, narrower, with a note;
- poll: `GET /videos/{id}`: `upload.status` and `transcode.status` (complete | error | in_progress), and
  the legacy `status`, whose `quota_exceeded` ("The user's quota is exceeded with this video") and
  `total_cap_exceeded` end the video with that reason; ready once transcoded, `duration` in seconds;
- no webhooks are documented (none in api.yaml): reconcile's poll lane settles every video (the
  template's PollAfterSeconds); the webhook route verifies only our own doctor's signed test (seed
  scheme) and applies nothing;
- limits: a create past the account's quota is refused 403 with error code 4102 ("allotted quota has
  been reached") or 4101 ("maximum disk space has been reached"): rejected with that reason, never
  retried in a loop (raise the plan's quota, then `migrator retry`); rate limits are per minute ("the
  maximum number of requests that can be made per minute", every call of the user's), told in
  `X-RateLimit-Limit` / `-Remaining` / `-Reset` (an ISO 8601 time), and past them a 429 with no hint
  and a lock-out of "up to a minute" (help centre, "Rate limits"), waited out until the answer's
  `-Reset`, at most a minute (a minute when it has none);
- caption tracks, in two steps and a third: `POST /videos/{id}/texttracks {type, language, name,
  active: false}` (201, the track with `link`, "You can upload to this link when you create it for the
  first time", and `link_expires_time`), the file `PUT` to that link as text/plain before it expires
  (vimeo.js example upload_texttrack.js), then `PATCH .../texttracks/{track} {active: true}` ("Only one
  text track per language and type can be active"). A track of ours left inactive is half made (its
  file may never have arrived): the next attach deletes it and makes it again;
- playback: the video's `link` (its page) and `player_embed_url` (the player to embed), the picture's
  `base_link`, width and height; Vimeo gives no HLS URL to this token and signs none;
- what a viewer sees (the thumbnail as the active picture, chapters, folders and showcases in source order; no
  field takes the publish time, noted): vimeo_extras.py.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from urllib.parse import parse_qsl, urlsplit

from ..fate import Outcome, OutcomeKind, excerpt
from ..messages import Track
from ..pacing import RateSignal
from ..signatures import Scheme
from ..states import State
from ..tracks import TrackOutcome, TrackResult
from .base import FIND_MARGIN_S, FIND_MAX_PAGES, listing_pages, lookup_failure, secret_text, too_many_pages
from .base import verified_event as _verified_event
from .facts import (
    AssetRef,
    Poll,
    RemoteTrack,
    SignedPlayback,
    SigningUnavailable,
    TrackList,
    TrackUpload,
    Video,
    WebhookEvent,
    body_event_id,
    duration_of,
    entries,
    epoch_of,
    found_among,
    mapping,
    our_ref,
    playback_of,
    rejected_video,
    text,
)
from .fidelity import PUBLIC, SIGNED, details_of, not_carried
from .http import Answer, HttpTransport, TransportError, quote
from .keys import asset_tag
from .ratelimit import read_rate_headers
from .vimeo_extras import VimeoExtras

ACCEPT = "application/vnd.vimeo.*+json;version=3.4"  # the version pinned, as Vimeo asks
PAGE_SIZE = 100  # "up to a maximum of 100"
# What every read asks for (the API's JSON filter, `fields`): only what is read below.
FIELDS = (
    "uri,name,description,created_time,duration,width,height,link,player_embed_url,privacy.view,status,"
    "upload.status,transcode.status,pictures.base_link"
)
REF_PREFIX = "migration-ref"
_REF_LINE = re.compile(rf"^{REF_PREFIX} (vm[0-9a-f]{{32}}) (.+)$")
WORKING = frozenset({"uploading", "transcode_starting", "transcoding"})
# The legacy `status` values that end a video (api.yaml, video.status), and why, in the words an operator acts on.
QUOTA_STATUSES = {
    "quota_exceeded": "the account's upload quota is exceeded with this video (status quota_exceeded): raise the"
    " plan's quota or wait for its reset, then migrator retry",
    "total_cap_exceeded": "the account's total storage cap is exceeded with this video (status total_cap_exceeded):"
    " free space or upgrade the plan, then migrator retry",
}
FAILED_STATUSES = frozenset({"transcoding_error", "uploading_error", "unavailable"})
# A create's 403 at the account's quota (api.yaml, POST /me/videos).
QUOTA_CODES = {
    4102: "the authenticated user's allotted quota has been reached",
    4101: "the authenticated user's maximum disk space has been reached",
}
# "Vimeo Basic members can't set this value to disable or unlisted" (api.yaml, privacy.view).
BASIC_PLAN = "basic"
PLAN_CACHE_S = 600.0
# Past the per-minute limit a user is "temporarily prevented from making requests for up to a minute" and the
# 429 says nothing of when (help centre, "Rate limits", help.vimeo.com/hc/en-us/articles/12427783954065).
LOCKOUT_S = 60.0
# The most creates a second one account can make, to size how far back `find` pages when the search finds
# nothing: Vimeo publishes no number; the stack's own ceiling (ProviderRateLimit, at most 500/s) is far above any
# plan's per-minute budget, and 10/s bounds what lies between a lost create and its lookup with room.
MAX_CREATES_PER_S = 10.0
FIND_ABSOLUTE_MAX_PAGES = 500
VIEWS = {"anybody": PUBLIC, "unlisted": PUBLIC}  # every other view (nobody, password, contacts...) needs more
TRACK_TYPES = ("captions", "subtitles")
# A track's upload link with less than this left is not used: the file goes to a fresh track instead.
LINK_MARGIN_S = 30.0


def token_of(raw: str | None) -> str | None:
    return secret_text(raw, "token", "Vimeo")


def ref_tag(asset_id: str) -> str:
    """Our per-asset tag as one word of letters and digits, so a search by `query` can match it whole."""
    return asset_tag(asset_id).replace("-", "")


def ref_line(asset_id: str) -> str:
    return f"{REF_PREFIX} {ref_tag(asset_id)} {asset_id}"


def ref_of(description: object) -> str | None:
    """Our asset id from a description's last line, when its tag is the id's own (untrusted text)."""
    if not isinstance(description, str) or len(description) > 1_000_000:
        return None
    match = _REF_LINE.match(description.rstrip("\n").rpartition("\n")[2])
    if match is None:
        return None
    ref = our_ref(match.group(2))
    return ref if ref is not None and ref_tag(ref) == match.group(1) else None


def vimeo_id(video: object) -> str | None:
    """ "/videos/123" -> "123"."""
    tail = (text(mapping(video).get("uri")) or "").rstrip("/").rpartition("/")[2]
    return tail if tail.isdigit() and len(tail) <= 20 else None


def privacy_of(view: object) -> str | None:
    """Our term for a `privacy.view`: public for anybody and unlisted, signed (more than a link is needed) for
    every other, a value Vimeo adds later included; None when the answer does not say."""
    return VIEWS.get(view, SIGNED) if isinstance(view, str) else None


def read_playback(video: dict, remote_id: str | None) -> dict | None:
    """The video's page (`link`), its player (`player_embed_url`), its picture and size; the policy is public
    for anybody and unlisted, private for the rest (no one but those Vimeo lets in can play it)."""
    view = mapping(video.get("privacy")).get("view")
    return playback_of(
        policy="public" if privacy_of(view) == PUBLIC else "private",
        playback_id=remote_id,
        player=video.get("link"),
        embed=video.get("player_embed_url"),
        thumbnail=mapping(video.get("pictures")).get("base_link"),
        width=video.get("width"),
        height=video.get("height"),
    )


def read_video(video: object) -> Video:
    """A Vimeo video (a create's answer, a GET, a list entry)."""
    if not isinstance(video, dict):
        return Video(None, status="not an object", known=False)
    remote_id, ref = vimeo_id(video), ref_of(video.get("description"))
    legacy = text(video.get("status")) or ""
    upload = text(mapping(video.get("upload")).get("status")) or ""
    transcode = text(mapping(video.get("transcode")).get("status")) or ""
    view = mapping(video.get("privacy")).get("view")
    created_at, privacy = epoch_of(video.get("created_time")), privacy_of(view)
    if legacy in QUOTA_STATUSES:
        return rejected_video(
            remote_id, ref, legacy, f"Vimeo: {QUOTA_STATUSES[legacy]}", created_at=created_at, privacy=privacy
        )
    if legacy in FAILED_STATUSES or "error" in (upload, transcode):
        word = legacy if legacy in FAILED_STATUSES else f"{'uploading' if upload == 'error' else 'transcoding'}_error"
        return rejected_video(
            remote_id, ref, word, f"Vimeo could not ingest the source ({word})", created_at=created_at, privacy=privacy
        )
    if transcode == "complete" or (not transcode and legacy == "available"):
        duration, playback = duration_of(video.get("duration")), read_playback(video, remote_id)
        return Video(
            remote_id,
            ref,
            State.READY,
            "available",
            duration_s=duration,
            playback=playback,
            created_at=created_at,
            privacy=privacy,
        )
    known = legacy in WORKING or "in_progress" in (upload, transcode)
    return Video(
        remote_id,
        ref,
        None,
        excerpt(legacy or transcode or upload, 40),
        known=known,
        created_at=created_at,
        privacy=privacy,
    )


def error_code(answer: Answer) -> int | None:
    code = mapping(answer.body).get("error_code")
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def find_page_cap(created_after: float | None, now: float) -> int:
    """How many pages a scan newest first may need to reach back to `created_after` (less the clocks'
    margin): every create the account can make since, 100 a page, and 2 more."""
    if created_after is None:
        return FIND_MAX_PAGES
    window_s = max(0.0, now - created_after) + FIND_MARGIN_S
    if not math.isfinite(window_s):
        return FIND_ABSOLUTE_MAX_PAGES + 1
    return math.ceil(window_s * MAX_CREATES_PER_S / PAGE_SIZE) + 2


class VimeoProvider(VimeoExtras):
    name = "vimeo"
    default_base_url = "https://api.vimeo.com"
    # "the maximum number of requests that can be made per minute to the API by a user": every call counts.
    rate_limit_window_s = 60.0
    budget_covers_all_calls = True
    # No number is published: "the maximum number of requests that can be made per minute", per plan, told in
    # X-RateLimit-Limit (help.vimeo.com/hc/en-us/articles/12427783954065): `documented_rate_per_s` None, the
    # plan asks for --rate.
    duplicate_window = (
        "none found: before any second create the uploader looks for the asset's reference line in the "
        "descriptions (the list's query, then the newest videos back to the claim), so a create whose answer "
        "was lost is found as soon as Vimeo lists it"
    )
    # Vimeo sends none; the route is sized as the seed contract's, for the doctor's signed test.
    events_per_asset = 1
    sends_webhooks = False
    webhook_scheme = Scheme.SEED
    # The pull's link: "The public URL at which the video is hosted. The URL must be valid for at least 24 hours"
    # (api.yaml, POST /me/videos, upload.link): Vimeo fetches it later than the create, at a time it does not say.
    link_valid_for_s = 86_400.0
    link_need_doc = 'api.yaml, upload.link: "The URL must be valid for at least 24 hours"'

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._plan: tuple[float, str | None] | None = None  # (read at, the account's plan)

    def auth_headers(self) -> dict[str, str]:
        token = token_of(self.secret())
        return {"Authorization": f"bearer {token}", "Accept": ACCEPT} if token else {"Accept": ACCEPT}

    def check(self) -> Answer:
        """`GET /me`: the token's user, with the account's plan and upload quota."""
        return self.http.send("GET", "/me", params={"fields": "uri,account,upload_quota"})

    # --- the create -------------------------------------------------------------------------

    def create(self, asset: AssetRef, source_url: str) -> Outcome:
        if details_of(asset).privacy == "unlisted":
            known = self._read_plan()
            if isinstance(known, Outcome):
                return replace(known, notes=self.create_notes(asset, source_url))
        body, notes = self._create_body(asset, source_url)
        return self._post_create("/me/videos", body, notes, lambda answer: read_video(answer).remote_id)

    def _create_body(self, asset: AssetRef, source_url: str) -> tuple[dict, list[str]]:
        # Fields: api.yaml POST /me/videos (upload.approach, upload.link, name, description, privacy.view); no
        # lengths are documented for the name or the description, so what the message allows goes whole.
        details = details_of(asset)
        view, notes = self._view(asset)
        own = details.description.rstrip("\n") + "\n\n" if details.description else ""
        body = {
            "upload": {"approach": "pull", "link": source_url},
            "name": asset.title or asset.asset_id,
            "description": own + ref_line(asset.asset_id),
            "privacy": {"view": view},
        }
        notes.append("description: ends with our reference line (Vimeo has no field of its own for it)")
        carried_not = ("tags", "metadata", "created_at", "folder")
        notes += not_carried(details, self.name, carried_not, "Vimeo's create takes none")
        why = "no field of Vimeo's takes it: the video's release_time is read-only"
        notes += not_carried(details, self.name, ("published_at",), why)
        if details.poster_time_s is not None and details.thumbnail_url:  # else the frame is picked once it exists
            notes.append("poster_time_s: not set (the row's thumbnail image is the poster)")
        return body, notes

    def _view(self, asset: AssetRef) -> tuple[str, list[str]]:
        """The row's privacy as a `privacy.view`, never wider, and the note where Vimeo's is not the row's."""
        privacy = details_of(asset).privacy
        if privacy == "unlisted":
            if self._plan is not None and self._plan[1] == BASIC_PLAN:
                return "nobody", ["privacy: unlisted sent as nobody (Vimeo Basic cannot set unlisted; narrower)"]
            return "unlisted", []
        if self.playback(asset) == PUBLIC:
            return "anybody", []
        said = privacy or "none given (DefaultPlayback signed)"
        return "nobody", [f"privacy: {said} sent as nobody (only the account can watch; Vimeo signs no playback URL)"]

    def _read_plan(self) -> str | Outcome | None:
        """The account's plan (`GET /me` `account`), read again after PLAN_CACHE_S; a failed read is the
        create's failure (no create is made on a guess)."""
        now = self.clock()
        if self._plan is not None and now - self._plan[0] < PLAN_CACHE_S:
            return self._plan[1]
        answer = self._send("GET", "/me", params={"fields": "account"})
        if isinstance(answer, Outcome):
            return Outcome(answer.kind, error=f"reading the account's plan: {answer.error}")
        if answer.status != 200:
            return lookup_failure(self._failure(answer))
        self._plan = (now, text(mapping(answer.body).get("account")))
        return self._plan[1]

    def _create_failure(self, answer: Answer) -> Outcome:
        """The account's quota (403, 4101 or 4102) is said and not retried: every later create would meet it."""
        code = error_code(answer)
        if answer.status == 403 and code in QUOTA_CODES:
            reason = f"Vimeo refused the upload: {QUOTA_CODES[code]} (error {code}); raise the plan's quota, then"
            reason += " migrator retry"
            return Outcome(OutcomeKind.REJECTED, error=reason, signal=self.rate_signal(answer.headers))
        return self._failure(answer)

    def _failure(self, answer: Answer) -> Outcome:
        """A 429 holds the fleet until its X-RateLimit-Reset (sent on every answer, api.yaml), at most the
        lock-out's minute; one that says nothing of when, a minute. Holding a minute whatever the reset said
        made a short bucket's 429s cost 60 s each: a drain at 5 creates/s took 10x its ideal (bench/pacing)."""
        outcome = super()._failure(answer)
        if answer.status == 429 and outcome.retry_after is None:
            reset = outcome.signal.reset_after if outcome.signal is not None else None
            outcome = replace(outcome, retry_after=LOCKOUT_S if reset is None else min(LOCKOUT_S, max(1.0, reset)))
        return outcome

    def rate_signal(self, headers: Mapping[str, str]) -> RateSignal:
        """X-RateLimit-* per minute; the reset is an ISO 8601 time ("2016-08-30T11:41:40+00:00")."""
        signal = read_rate_headers(headers, self.clock(), self.rate_limit_window_s)
        lowered = {str(k).lower(): v for k, v in headers.items()}
        reset = epoch_of(lowered.get("x-ratelimit-reset"))
        if reset is not None and reset > 1_000_000_000:
            signal = replace(signal, reset_after=max(0.0, reset - self.clock()))
        return signal

    # --- finding an earlier create, polling ------------------------------------------------

    def find(self, asset_id: str, created_after: float | None) -> Outcome:
        """The asset's video by the list's search for its tag; else, since a search may not show a new video
        yet, by a scan newest first back to `created_after` (see `_scan`)."""
        params = {"query": ref_tag(asset_id), "sort": "date", "direction": "desc", "per_page": str(PAGE_SIZE)}
        items = self._listing("/me/videos", {**params, "fields": FIELDS}, "data")
        if isinstance(items, Outcome):
            return items
        return found_among([read_video(i) for i in items], asset_id) or self._scan(asset_id, created_after)

    def _scan(self, asset_id: str, created_after: float | None) -> Outcome:
        """Page the list newest first until a page reaches back before `created_after` (less FIND_MARGIN_S):
        CREATED when a page holds the asset's video, NOT_FOUND once the scan reached back that far or to the
        list's end, TRANSIENT when it could not (too many pages). With no `created_after`, FIND_MAX_PAGES."""
        needed = find_page_cap(created_after, self.clock())
        for page in range(1, min(needed, FIND_ABSOLUTE_MAX_PAGES) + 1):
            params = {"sort": "date", "direction": "desc", "per_page": str(PAGE_SIZE), "page": str(page)}
            items = self._listing("/me/videos", {**params, "fields": FIELDS}, "data")
            if isinstance(items, Outcome):
                return items
            videos = [read_video(i) for i in items]
            found = found_among(videos, asset_id)
            if found is not None:
                return found
            oldest = min((v.created_at for v in videos if v.created_at is not None), default=None)
            past = created_after is not None and oldest is not None and oldest < created_after - FIND_MARGIN_S
            if len(items) < PAGE_SIZE or past:
                return Outcome(OutcomeKind.NOT_FOUND)
        if created_after is None:
            return Outcome(OutcomeKind.NOT_FOUND)
        return Outcome(OutcomeKind.TRANSIENT, error=f"lookup window too long: {needed} pages of videos to read")

    def _poll_video(self, asset_id: str, remote_id: str) -> Poll:
        return self._get_video(f"/videos/{quote(remote_id)}?fields={FIELDS}", read_video)

    # --- webhooks (none), the audit -----------------------------------------------------------

    def read_webhook(
        self, body: bytes, headers: Mapping[str, str], secrets: Sequence[str], now: float, tolerance_s: int
    ) -> WebhookEvent:
        """Vimeo documents no webhooks: only our own signed test (doctor) is verified, and nothing is applied."""
        _event, kind, _ = _verified_event(Scheme.SEED, body, headers, secrets, now, tolerance_s)
        return WebhookEvent(body_event_id(body), note=f"Vimeo sends no webhooks: {excerpt(kind, 60)} ignored")

    # --- migrator verify: a fresh HLS link, public or private ------------------------------------

    records_hls = False

    def signed_playback(self, playback: Mapping, ttl_s: float, keys: object = None) -> SignedPlayback:
        """The video's HLS for verify's own fetches, whatever its privacy: the video read again for its `play`
        (api.yaml, Video.play: `hls.link`, with `link_expiration_time`), a link made for this token that
        expires within hours, so none is kept in the ledger. Its query (Vimeo's signature) is carried by
        every request the manifest leads to. `play` comes only to a token with file access (the
        video_files scope, on a plan that has it): without it the reason says so."""
        vid = text(playback.get("playback_id"))
        if not vid or not vid.isdigit():
            raise SigningUnavailable("no Vimeo video id is recorded for this playback")
        answer = self.http.send("GET", f"/videos/{quote(vid)}", params={"fields": "uri,play"})
        if answer.status == 429 or answer.status >= 500:
            raise TransportError(f"HTTP {answer.status} reading the video")
        if answer.status != 200:
            raise SigningUnavailable(f"reading the video at Vimeo answered HTTP {answer.status}")
        link = text(mapping(mapping(mapping(answer.body).get("play")).get("hls")).get("link"))
        if not link:
            raise SigningUnavailable(
                "Vimeo gives this token no HLS link (its `play` needs the video_files scope on a plan with file"
                " access): check the video in Vimeo's player instead"
            )
        parts = urlsplit(link)
        if parts.scheme not in ("https", "http") or not parts.netloc:
            raise SigningUnavailable("Vimeo's HLS link is not a URL")
        return SignedPlayback(link, tuple(parse_qsl(parts.query, keep_blank_values=True)))

    def videos(self) -> Iterator[Video]:
        """Oldest first, 100 a page, page by page until a short page or no `paging.next`; past
        LISTING_MAX_PAGES pages it stops loudly."""
        for page in listing_pages():
            params = {"sort": "date", "direction": "asc", "per_page": str(PAGE_SIZE), "page": str(page)}
            body, items = self._library_page("/me/videos", {**params, "fields": FIELDS}, "data")
            for item in items:
                yield read_video(item)
            if len(items) < PAGE_SIZE or not mapping(body.get("paging")).get("next"):
                return
        raise too_many_pages()

    # --- caption tracks ----------------------------------------------------------------------

    takes_tracks = True  # WebVTT is sent (what every example uploads); SRT is not confirmed

    def track_list(self, remote_id: str) -> TrackList | TrackOutcome:
        """The video's active text tracks; an inactive one of ours is half made, so it is not listed as ours
        (the attach that follows deletes it and makes it again)."""
        listed = self._tracks(remote_id)
        if not isinstance(listed, list):
            return listed
        return TrackList(tuple(_remote_track(t) for t in listed if t.get("active") is True))

    def track_matches(self, remote: RemoteTrack, track: Track, ref: str) -> bool:
        """Ours when its language, type and name are the track's (the name is the label we gave it)."""
        return _is_ours(remote, track)

    def attach_track(self, remote_id: str, track: Track, upload: TrackUpload, label: str) -> TrackOutcome:
        """Look first (an earlier try may have finished, or left a track half made), then create the track,
        PUT the file to its link and make it active."""
        listed = self._tracks(remote_id)
        if isinstance(listed, TrackList):
            return TrackOutcome(TrackResult.VIDEO_GONE, error=f"provider: {listed.video_gone}")
        if isinstance(listed, TrackOutcome):
            return listed
        kind = kind_of(track)
        settled = _settled(listed, track, kind)
        if settled is not None:
            return settled
        for stale in (t for t in listed if _is_ours(_remote_track(t), track) and t.get("active") is not True):
            gone = self._track_send("DELETE", f"/videos/{quote(remote_id)}/texttracks/{quote(_track_id(stale))}")
            if isinstance(gone, TrackOutcome):
                return gone
            if gone.status not in (204, 404):
                return self._track_failure(gone)
        body = {"type": kind, "language": track.language, "name": label, "active": False}
        made = self._track_send("POST", f"/videos/{quote(remote_id)}/texttracks", json_body=body)
        if isinstance(made, TrackOutcome):
            return made
        if not 200 <= made.status < 300:
            return self._track_failure(made)
        return self._fill(remote_id, mapping(made.body), upload)

    def _fill(self, remote_id: str, made: dict, upload: TrackUpload) -> TrackOutcome:
        """The file PUT to a new track's link, before the link expires, then the track made active."""
        track_id, link = _track_id(made), text(made.get("link"))
        expires = epoch_of(made.get("link_expires_time"))
        if not track_id or not link or urlsplit(link).scheme not in ("https", "http"):
            return TrackOutcome(TrackResult.TRANSIENT, error="provider: a new text track without an upload link")
        if expires is not None and expires - LINK_MARGIN_S <= self.clock():
            return TrackOutcome(TrackResult.TRANSIENT, error="provider: the track's upload link expired unused")
        content = upload.caption.for_upload(True)[0]
        sent = self._put_file(link, content)
        if isinstance(sent, TrackOutcome):
            return sent
        if not 200 <= sent.status < 300:
            return self._track_failure(sent)
        path = f"/videos/{quote(remote_id)}/texttracks/{quote(track_id)}"
        active = self._track_send("PATCH", path, json_body={"active": True})
        if isinstance(active, TrackOutcome):
            return active
        if not 200 <= active.status < 300:
            return self._track_failure(active)
        return TrackOutcome(TrackResult.ATTACHED, remote_track_id=track_id)

    def _put_file(self, link: str, content: bytes, media_type: str = "text/plain") -> Answer | TrackOutcome:
        """PUT the file to an upload link Vimeo handed (a track's as "Content-Type: text/plain", as Vimeo's example
        says; a picture's as its image type), with our token only where the link is Vimeo's (a *.vimeo.com host
        over https) or the API's own host."""
        parts, api = urlsplit(link), urlsplit(self.http.base)
        vimeo = parts.scheme == "https" and (parts.hostname or "").endswith(".vimeo.com")
        auth = self.auth_headers if vimeo or parts.netloc == api.netloc else (lambda: {"Accept": ACCEPT})
        origin = HttpTransport(f"{parts.scheme}://{parts.netloc}", auth, self.http.session, *self.http.timeout)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            return origin.send("PUT", path, data=content, headers={"Content-Type": media_type})
        except TransportError as exc:
            return TrackOutcome(TrackResult.TRANSIENT, error=f"provider: {exc.kind}")

    def _tracks(self, remote_id: str) -> list[dict] | TrackList | TrackOutcome:
        """The video's text tracks as objects, a TrackList naming a video gone (404), or why not."""
        path = f"/videos/{quote(remote_id)}/texttracks"
        answer = self._track_send("GET", path, params={"per_page": str(PAGE_SIZE)})
        if isinstance(answer, TrackOutcome):
            return answer
        if answer.status != 200:
            return self._track_list_failure(answer)
        return [t for t in entries(mapping(answer.body).get("data")) if isinstance(t, dict)]


def _track_id(track: Mapping) -> str:
    tail = (text(track.get("uri")) or "").rstrip("/").rpartition("/")[2]
    return tail if tail.isdigit() and len(tail) <= 20 else ""


def _remote_track(track: Mapping) -> RemoteTrack:
    """A listed text track: its language, and `type:name` as its reference (what `_is_ours` compares)."""
    ref = f"{text(track.get('type')) or ''}:{text(track.get('name')) or ''}"
    return RemoteTrack(text(track.get("language")), ref=ref, remote_id=_track_id(track) or None)


def kind_of(track: Track) -> str:
    """The text track's `type`: captions or subtitles, as the row says (captions where it says neither)."""
    return track.kind if track.kind in TRACK_TYPES else "captions"


def _is_ours(remote: RemoteTrack, track: Track) -> bool:
    kind, _, name = (remote.ref or "").partition(":")
    base = track.name or track.language
    same_name = name == base or name.startswith(f"{base} (")  # a repeated label gets a suffix (track_labels)
    return (remote.language or "").lower() == track.language.lower() and kind == kind_of(track) and same_name


def _settled(listed: list[dict], track: Track, kind: str) -> TrackOutcome | None:
    """ATTACHED where an earlier try finished (ours, active), REFUSED where another active track holds the
    language and type (only one can be active, so ours would take its place), else None."""
    for item in listed:
        remote = _remote_track(item)
        if item.get("active") is not True or (remote.language or "").lower() != track.language.lower():
            continue
        if _is_ours(remote, track):
            return TrackOutcome(TrackResult.ATTACHED, remote_track_id=remote.remote_id)
        if remote.ref and remote.ref.partition(":")[0] == kind:
            shown = excerpt(remote.ref.partition(":")[2], 60)
            error = f"Vimeo keeps one active text track per language and type: {track.language} {kind} is {shown!r}'s"
            return TrackOutcome(TrackResult.REFUSED, error=error)
    return None
