"""The tracks worker Lambda: attaches an asset's caption tracks (and its extras) once its video exists, each once.

Its queue carries one message per asset (`{"id": ...}`), sent by the uploader when the
provider accepted the video, by reconcile for tracks left unsettled, and by `migrator retry
--tracks`. For each message: read the asset; wait while its video is not ready (tracks never
hold a video back, and Mux takes tracks only on a ready asset); start the tracks of this
video in the ledger if they are not yet (`ledger.arm_tracks`); then, per track that is due,
claim it (a conditional write with a lease), look at what the provider already holds when an
earlier pass may have attached it (publishing one it holds as a draft: JW Player's), else fetch
the file (`trackfetch`, the SSRF-guarded fetch), check it (`captions`), and hand it to the
provider; write the outcome fenced by the claim (`ledger.finish_track`). The message comes
back when the earliest unsettled track is due again, and goes once every track is settled.

The row's extras (its thumbnail, chapters and collections: extras.py) are entries of the same map, claimed,
retried and fenced the same way; the pass on each is in extrawork.py, chosen by the entry's kind.

A bad track fails alone, with its reason; a provider's 429 holds the fleet's pacer (creates
and tracks share the provider's limit) and sends the message back without spending anything.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import boto3
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from .batch import run_batch
from .captions import read_caption
from .extras import CHAPTERS_TRACK, Extra, extras_of
from .extrawork import ExtraPasses, extras_facts
from .fate import Fate, Outcome, OutcomeKind, excerpt
from .hours import Hours, window_hold
from .ledger import Ledger, NotResendable, TrackRefused, message_of
from .ledger.tracks import STATES, VIDEO
from .messages import SOURCE_PLATFORMS, AssetMessage, Track, parse_tracks, track_key
from .pacer import TRACK, Go, Pacer, wait_for_slot
from .presign import S3Presigner
from .providers import AssetRef, Provider, from_settings
from .providers.facts import TrackUpload
from .providers.http import watching
from .providers.keys import track_ref
from .retry import DEFAULT_THROTTLE_S
from .settings import Settings, load
from .states import State
from .trackfetch import FetchFailed, FetchPolicy, fetch, parse_test_origins
from .tracks import (
    LEASE_MARGIN_S,
    TrackOutcome,
    TrackResult,
    Via,
    claimable,
    decide,
    initial_states,
    listed_outcome,
    next_due,
    settled,
    track_labels,
    tracks_message_id,
)

logger = Logger(service="tracks")
metrics = Metrics(namespace="VideoMigration", service="tracks")

# While the video is not ready yet, the message comes back after a wait that grows with its receives, to
# 2 minutes at most: a video ready after a long encode has its tracks within 2 minutes, not 15 (the cap
# was 900 s; an e2e run under load saw a video made ready by reconcile wait past its test's window). A
# receive costs one SQS request: a 30-minute encode takes about 17 of them rather than 6.
NOT_READY_BASE_S = 20.0
NOT_READY_CAP_S = 120.0
# The longest a pass waits in place for its slot of the fleet's pace; a later slot sends the message back for then.
SLOT_WAIT_S = 10.0


@dataclass(frozen=True)
class InlineCaption:
    """A caption the source platform serves only as text through its API (Wistia's, Stream's)."""

    text: str
    format: str | None = None


def resolve_source_track(url: str) -> str | InlineCaption | FetchFailed:
    """A track's source reference (`vimeo://…`) as a URL to fetch, or the caption's text itself: the
    one place it is resolved (`migrator.sources.resolve`, with the stack's source credentials). A
    file still being prepared, a source pacing us or failing once is a retry; one that can never be
    fetched fails the track with the inventory's words."""
    from .sources import resolve
    from .sources.base import ResolutionKind

    try:
        resolved = resolve(url)
    except Exception as exc:  # a platform's (or our settings') failure is the track's, not the worker's
        return FetchFailed(f"the source reference could not be resolved ({type(exc).__name__})", retryable=True)
    if resolved.kind is ResolutionKind.READY:
        if resolved.text is not None:
            return InlineCaption(resolved.text, resolved.text_format)
        if resolved.url:
            return resolved.url
    if resolved.kind is ResolutionKind.UNFETCHABLE:
        return FetchFailed(f"the source cannot serve it: {resolved.reason or 'no reason given'}")
    why = resolved.reason or resolved.kind.value
    return FetchFailed(f"the source reference is not ready: {why}", retryable=True)


@dataclass
class TracksWorker(ExtraPasses):
    ledger: Ledger
    provider: Provider
    sqs: Any  # a boto3 SQS client (boto3 ships no types)
    queue_url: str
    policy: FetchPolicy = field(default_factory=FetchPolicy)
    presign: Callable[[str], str] = lambda url: url
    pacer: Pacer | None = None
    max_attempts: int = 5
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)
    fetch: Callable = fetch
    # Caption text a source serves only through its API, staged for a target that fetches by URL: (key, body)
    # -> a short-lived URL of it (`StagedCaptions`); None where the stack has no staging bucket.
    stage: Callable[[str, bytes], str] | None = None
    # An extra's file put in the stack's bucket: (key, body, media type) -> a short-lived URL of it (a thumbnail
    # handed to a target that fetches by URL; a file a target cannot take, kept): `StagedCaptions.put`.
    stage_extra: Callable[[str, bytes, str], str] | None = None
    resolve_source: Callable[[str], str | InlineCaption | FetchFailed] = resolve_source_track
    # Least time one more track needs: a listing, a fetch and an attach, each to its timeout.
    track_budget_s: float = 40.0
    hours: Hours | None = None  # the working hours (hours.py): outside them no pass starts; None: always open

    # --- the batch -----------------------------------------------------------------------

    def handle_batch(self, event: dict, remaining_s: Callable[[], float]) -> dict:
        return run_batch(
            event, self.process, remaining_s, self.sqs, self.queue_url, self.clock, self.rng, logger, metrics
        )

    # --- one asset -------------------------------------------------------------------------

    def process(self, record: dict, deadline: float) -> Fate:
        closed = window_hold(self.hours, self.clock())
        if closed is not None:  # outside the working hours: back to the queue until they open, nothing read
            return Fate.later(closed.until - self.clock() + self.rng.uniform(0, closed.spread), closed.reason, True)
        asset_id = tracks_message_id(record.get("body"))
        if asset_id is None:
            metrics.add_metric(name="Poison", unit=MetricUnit.Count, value=1)
            logger.warning("not a tracks message", extra={"message_id": record.get("messageId")})
            return Fate.poison("not a tracks message")
        logger.set_correlation_id(asset_id)
        item = self.ledger.get(asset_id)
        tracks = parse_tracks(item.get("tracks")) if item and item.get("tracks") else ()
        if isinstance(tracks, str):
            return Fate.finished(tracks)
        details = _details(item)
        extras = extras_of(details, self.provider.poster_time_later)
        if not item or not (tracks or extras):
            return Fate.finished("the asset has no tracks")
        state, remote_id = item.get("state"), item.get("remote_id")
        keys = [track_key(t) for t in tracks if t.kind != CHAPTERS_TRACK] + [e.key for e in extras]
        if state == State.REJECTED.value:
            return self._video_rejected(item, keys)
        if state != State.READY.value or not remote_id:
            if state == State.FAILED.value and item.get("retry_after") is None:
                return Fate.finished("the video failed for good: its tracks wait for the operator's retry")
            receives = _receives(record)
            delay = min(NOT_READY_CAP_S, NOT_READY_BASE_S * 2 ** min(receives - 1, 10))
            return Fate.later(delay, f"the video is {state}, not ready: its tracks wait")
        if item.get(VIDEO) != remote_id:
            item = self._arm(item, tracks, details, remote_id)
            if item is None:
                return Fate.later(self.rng.uniform(1, 5), "the asset moved while its tracks were armed")
        held = self._held()
        if held is not None:
            return Fate.later(held, "the provider holds the fleet", pacing=True)
        return self._work(item, tracks, extras, remote_id, deadline)

    def _arm(self, item: dict, tracks: tuple[Track, ...], details: AssetMessage | None, remote_id: str) -> dict | None:
        asset = AssetRef(item["asset_id"], details=details)
        at_create = {track_key(t) for t in self.provider.create_time_tracks(asset)}
        entries = initial_states(
            tracks,
            takes_tracks=self.provider.takes_tracks,
            provider=self.provider.name,
            at_create=at_create,
            one_per_language=self.provider.one_track_per_language,
            now=self.clock(),
            language_key=self.provider.track_language_key,
            details=details,
            extras=extras_facts(self.provider),
        )
        result = self.ledger.arm_tracks(item["asset_id"], remote_id, entries, self.clock())
        if result.won:
            logger.info("tracks armed", extra={"tracks": len(entries), "remote_id": remote_id})
            return result.current
        current = result.current or {}
        return current if current.get(VIDEO) == remote_id else None

    def _work(
        self, item: dict, tracks: tuple[Track, ...], extras: list[Extra], remote_id: str, deadline: float
    ) -> Fate:
        asset_id = item["asset_id"]
        states: dict = dict(item.get(STATES) or {})
        labels = track_labels(tracks)
        held = None
        listing: dict = {}  # the provider's list of the video's tracks, read once a pass (when a look needs it)
        # Caption tracks first, then the extras (a chapters list past the first is noted at arming: no pass).
        work: list[tuple[str, Track | Extra]] = [(track_key(t), t) for t in tracks if t.kind != CHAPTERS_TRACK]
        work += [(e.key, e) for e in extras if e.surplus is None]
        for key, unit in work:
            now = self.clock()
            if not claimable(states.get(key), now):
                continue
            if deadline - now < self.track_budget_s:
                break  # the message comes back at once for the rest
            held = self._slot(deadline)
            if held is not None:
                break  # the fleet's pace has no slot soon enough: the message comes back when it has
            claim = self.ledger.claim_track(asset_id, key, remote_id, uuid.uuid4().hex, now, deadline + LEASE_MARGIN_S)
            if isinstance(claim, TrackRefused):
                states[key] = ((claim.item.get(STATES) or {}).get(key)) or states.get(key) or {}
                continue
            calls = ProviderCalls(getattr(getattr(self.provider, "http", None), "base", ""))
            with watching(calls):
                if isinstance(unit, Track):
                    outcome = self._pass(unit, claim.entry, remote_id, labels[key], listing)
                else:
                    outcome = self._extra_pass(unit, claim.entry, remote_id, item, deadline)
            self._owe(calls.count - 1)
            attempts, waits = int(claim.entry.get("attempts", 1)), int(claim.entry.get("waits", 0))
            move = decide(outcome, attempts, waits, self.clock(), self.rng, self.max_attempts)
            result = self.ledger.finish_track(asset_id, key, remote_id, claim.token, move, self.clock())
            if result.won:
                states = dict((result.current or {}).get(STATES) or states)
                prefix = "Track" if isinstance(unit, Track) else "Extra"
                metrics.add_metric(name=f"{prefix}{move.state.value.title()}", unit=MetricUnit.Count, value=1)
                logger.info("track %s: %s", key, move.state.value, extra={"outcome": outcome.kind.value})
            else:
                logger.warning("lost the track's claim before writing its outcome", extra={"track": key})
            if outcome.kind is TrackResult.THROTTLED:
                held = self._hold(outcome)
                break  # the provider is pacing us: the other tracks wait too
        due_at = next_due(states, self.clock())
        # Only the keys armed for this video (an item armed by an earlier release has no extras' entries).
        self.ledger.close_tracks(asset_id, remote_id, [key for key, _ in work if key in states], due_at)
        if due_at is None:
            return Fate.finished("every track is settled")
        return Fate.later(max(due_at - self.clock(), held or 0.0), "tracks still to do", pacing=held is not None)

    # --- one track -------------------------------------------------------------------------

    def _pass(
        self, track: Track, entry: Mapping, remote_id: str, label: str, listing: dict | None = None
    ) -> TrackOutcome:
        """What became of one track in this pass: look first where an earlier pass (or the create)
        may have given it to the provider, else fetch, check and attach it. `listing` keeps the
        provider's list of the video's tracks for the rest of the pass (one read serves every track)."""
        submitted = entry.get("via") == Via.CREATE.value or bool(entry.get("submitted"))
        if submitted or int(entry.get("attempts", 1)) > 1:
            looked = self._look(track, remote_id, {} if listing is None else listing)
            if looked is not None:
                return looked
        return self._upload(track, remote_id, label)

    def _look(self, track: Track, remote_id: str, listing: dict) -> TrackOutcome | None:
        """The track as the provider lists it, or None when it is not there (so it is uploaded)."""
        if "listed" not in listing:
            listing["listed"] = self.provider.track_list(remote_id)
        listed = listing["listed"]
        if isinstance(listed, TrackOutcome):
            return listed
        if listed.video_gone:
            return TrackOutcome(TrackResult.VIDEO_GONE, error=f"provider: {listed.video_gone}")
        ref = track_ref(track_key(track))
        match = next((t for t in listed.tracks if self.provider.track_matches(t, track, ref)), None)
        if match is not None:
            seen = listed_outcome(match.status, match.remote_id, match.error)
            return seen if seen is not None else self.provider.publish_track(remote_id, match)
        if not listed.open_for_tracks:
            return TrackOutcome(TrackResult.WAITING, error="the provider's video is not ready for tracks")
        return None

    def _upload(self, track: Track, remote_id: str, label: str) -> TrackOutcome:
        location = self._location(track.url)
        if isinstance(location, FetchFailed):
            return _failed(location)
        inline = isinstance(location, InlineCaption)
        if isinstance(location, InlineCaption):
            body = location.text.encode("utf-8")
            if len(body) > self.policy.max_bytes:  # the same cap as a fetched file's, whatever the source serves
                return TrackOutcome(
                    TrackResult.REFUSED,
                    error=f"the track file is {len(body):,} bytes, over the {self.policy.max_bytes:,} allowed",
                )
            url = track.url
        else:
            fetched = self.fetch(location, self.policy)
            if isinstance(fetched, FetchFailed):
                return _failed(fetched)
            body, url = fetched.body, location
        caption = read_caption(body)
        if isinstance(caption, str):
            return TrackOutcome(TrackResult.REFUSED, error=f"not a caption file: {caption}")
        if inline and not self.provider.takes_caption_files:  # Mux fetches a caption by URL: hand it a staged copy
            staged = self._staged(track, remote_id, body)
            if isinstance(staged, TrackOutcome):
                return staged
            url = staged
        return self.provider.attach_track(remote_id, track, TrackUpload(caption, url), label)

    def _staged(self, track: Track, remote_id: str, body: bytes) -> str | TrackOutcome:
        """The caption's text put where the target can fetch it (the stack's staging bucket), as a short-lived
        URL; why not, when the stack has no bucket or the write failed (a retry may succeed)."""
        if self.stage is None:
            return TrackOutcome(
                TrackResult.REFUSED,
                error=f"{self.provider.name} fetches a caption by URL, this source serves only its text, and the"
                " stack has no staging bucket to hand it from (redeploy from the current template.yaml)",
            )
        try:
            return self.stage(f"captions/{remote_id}/{track_key(track)}", body)
        except Exception as exc:  # the bucket's weather: the track's retry, not the worker's crash
            return TrackOutcome(TrackResult.TRANSIENT, error=f"could not stage the caption ({type(exc).__name__})")

    def _location(self, url: str) -> str | InlineCaption | FetchFailed:
        scheme = url.split("://", 1)[0].lower()
        if scheme == "s3":
            try:
                return self.presign(url)
            except Exception as exc:
                return FetchFailed(f"the s3:// track could not be presigned ({type(exc).__name__})", retryable=True)
        if scheme in SOURCE_PLATFORMS:
            return self.resolve_source(url)
        return url

    # --- the provider's pace ---------------------------------------------------------------------

    def _held(self) -> float | None:
        """Seconds the fleet is held for (creates and tracks share the provider's limit), or None."""
        if self.pacer is None:
            return None
        try:
            hold = float((self.pacer.state() or {}).get("hold_until", 0))
        except Exception:  # the pacer's weather: go on, a 429 will say so
            return None
        wait = hold - self.clock()
        return wait + self.rng.uniform(0, 1) if wait > 0 else None

    def _slot(self, deadline: float) -> float | None:
        """Take a slot of the fleet's pace for one pass (creates, polls and tracks share the provider's limit: a
        worker that called until its first 429 spent the limit in bursts and then stood held), waiting for it in
        place while it is near; None once taken (or with no pacer, or the pacer unreadable: a 429 will say so),
        else the seconds until the fleet has one."""
        if self.pacer is None:
            return None
        now = self.clock()
        patience = min(SLOT_WAIT_S, max(0.0, deadline - now - self.track_budget_s))
        try:
            slot = self.pacer.reserve(now, patience, TRACK)
            due = wait_for_slot(
                self.pacer, slot, self.clock, self.sleep, lambda _go, wait: wait > patience, "too far for a track"
            )
        except Exception:  # the pacer's weather: go on unpaced
            logger.warning("could not take a slot of the fleet's pace")
            return None
        if isinstance(due, Go):
            return None
        return max(0.0, due.until - self.clock()) + self.rng.uniform(0, 1)

    def _owe(self, calls: int) -> None:
        """Take the slots of a pass's calls past its first (a Vimeo picture is three: made, uploaded, made active),
        after the fact: the fleet's pace then counts calls, not passes, and the next pass's slot lands after them."""
        if self.pacer is None:
            return
        try:
            for _ in range(max(0, calls)):
                if not isinstance(self.pacer.reserve(self.clock(), None, TRACK), Go):
                    return  # the fleet is held: its hold moves every slot anyway
        except Exception:  # the pacer's weather: the next 429 will say so
            logger.warning("could not take the slots of a pass's calls")

    def _hold(self, outcome: TrackOutcome) -> float:
        """A 429 told to the fleet's pacer as a create's would be (a hold for its Retry-After, or the default when
        it names none, and a cut of the rate): the seconds until the tracks may call again."""
        now = self.clock()
        asked = outcome.retry_after if outcome.retry_after is not None else DEFAULT_THROTTLE_S
        metrics.add_metric(name="ProviderThrottled", unit=MetricUnit.Count, value=1)
        if self.pacer is not None:
            told = Outcome(
                OutcomeKind.THROTTLED, retry_after=outcome.retry_after, error="tracks: HTTP 429", scope="rate"
            )
            try:
                self.pacer.observe(told, now)
            except Exception:
                logger.warning("could not hold the pacer after a 429")
        return asked

    def _video_rejected(self, item: dict, keys: list[str]) -> Fate:
        """The video was rejected: its unsettled tracks fail with the reason (a retry of the asset re-arms them)."""
        states, video = item.get(STATES) or {}, item.get(VIDEO)
        open_keys = [k for k in keys if k in states and not settled(states[k])]
        if video and open_keys:
            reason = f"the video was rejected: {excerpt(str(item.get('last_error') or 'no reason given'), 200)}"
            self.ledger.fail_tracks(item["asset_id"], video, open_keys, reason, self.clock())
        return Fate.finished("the video was rejected")


@dataclass
class ProviderCalls:
    """Counts the requests a pass sends to the target's API (`base`; "" counts every one): a file upload to another
    origin (Vimeo's upload link) and a source's API are not the target's limit."""

    base: str
    count: int = 0

    def before(self, method: str, url: str) -> None:
        if not self.base or url.startswith(self.base):
            self.count += 1

    def after(self, *_answered) -> None:
        return None


def _failed(failure: FetchFailed) -> TrackOutcome:
    return TrackOutcome(TrackResult.TRANSIENT if failure.retryable else TrackResult.REFUSED, error=failure.reason)


def _details(item: dict | None) -> AssetMessage | None:
    """The row as the ledger keeps it (its extras with it), or None where it could not travel as a message."""
    if not item:
        return None
    try:
        return message_of(item)
    except NotResendable:
        return None


def _receives(record: dict) -> int:
    raw = str(record.get("attributes", {}).get("ApproximateReceiveCount", "1"))
    return int(raw) if raw.isdigit() and int(raw) > 0 else 1


def build(settings: Settings | None = None) -> TracksWorker:
    from .uploader import count_calls

    settings = settings or load(require_queue=False)
    staged = StagedCaptions(settings.staging_bucket) if settings.staging_bucket else None
    dynamodb = count_calls(boto3.client("dynamodb"), "DynamoDBCalls")
    provider = from_settings(settings)
    return TracksWorker(
        ledger=Ledger(settings.table_name, dynamodb),
        provider=provider,
        sqs=count_calls(boto3.client("sqs"), "SQSCalls"),
        queue_url=settings.tracks_queue_url,
        policy=FetchPolicy(test_origins=parse_test_origins(settings.track_test_origins)),
        presign=S3Presigner(settings.presign_expiry_s),
        pacer=Pacer.for_tracks(settings, dynamodb, provider),
        max_attempts=settings.max_track_attempts,
        stage=staged,
        stage_extra=staged.put if staged else None,
        hours=Hours(settings.working_hours, settings.table_name, dynamodb),
    )


# How long a staged caption's link lives: the target fetches it within seconds of being handed it.
STAGED_LINK_S = 900


@dataclass
class StagedCaptions:
    """Caption text (or an extra's file) written to the stack's staging bucket, handed out as a presigned GET
    (SigV4)."""

    bucket: str
    s3: Any = None  # a boto3 S3 client; None: a new one for each call
    presign: Callable[[str], str] | None = None

    def __call__(self, key: str, body: bytes) -> str:
        return self.put(key, body, "text/plain; charset=utf-8")

    def put(self, key: str, body: bytes, content_type: str) -> str:
        s3 = self.s3 or boto3.client("s3")
        s3.put_object(Bucket=self.bucket, Key=key, Body=body, ContentType=content_type)
        presign = self.presign or S3Presigner(STAGED_LINK_S)
        return presign(f"s3://{self.bucket}/{key}")


_worker: TracksWorker | None = None


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event, context):
    global _worker
    if _worker is None:
        _worker = build()
    return _worker.handle_batch(event, lambda: context.get_remaining_time_in_millis() / 1000)
