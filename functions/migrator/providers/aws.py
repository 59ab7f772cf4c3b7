"""The `aws` target: the owner's own AWS account, S3 + AWS Elemental MediaConvert + CloudFront (issue 44).

A video here is a MediaConvert job's output (providers/aws_job.py: the job and the output's layout). The provider's
"id" for a video is the job's id; what settles it is the job's state, told by EventBridge ("MediaConvert Job
State Change", read by `read_job_event`, delivered to the stack's job-events function by a rule, not through the
webhook's public URL) and read by GetJob where reconcile polls. The SDK is boto3's `mediaconvert` client, its
retries off (the pacer decides what is tried again) and its endpoint the stack's `ProviderBaseUrl` where set
(the local simulator), else the region's own.

Idempotency, from the API's documents:
- CreateJob's ClientRequestToken: "If you reuse a client request token within one minute of a successful request,
  the API returns the job details of the original request instead"
  (https://docs.aws.amazon.com/mediaconvert/latest/apireference/idempotency.html); ours is a digest of the stack,
  the asset and its generation (`aws_job.request_token`), so a create sent again soon after a lost answer returns
  the first job;
- later than that minute, the job is found by its UserMetadata (`migrator_asset`, `migrator_stack`): `find` reads
  ListJobs on the stack's queue, newest first ("up to twenty of your most recently created jobs"), back to the
  first claim's time (jobs.html, ListJobs). An errored or canceled job never counts.

The source is never a link: MediaConvert's HTTP inputs must be public and "can't include parameters"
(https://docs.aws.amazon.com/mediaconvert/latest/ug/http-input-requirements.html), so the stack archives each
original first (ArchiveFirst, a template rule) and hands the job the archived copy's s3:// URI, which the
MediaConvert role may read (`reads_s3_itself`).

Playback: a ready video's `hls` is its master playlist under the stack's playback address (the CloudFront
distribution's domain, or the operator's alternate domain); a signed one plays only with a CloudFront signed URL
or cookies from the stack's key group (`signed_playback`: a custom policy over the video's folder, so the one
query signs the manifest and every segment it leads to).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..archive.plan import key_of_id
from ..cloudfront_signing import CustomPolicy, sign_custom_url
from ..fate import Outcome, OutcomeKind, excerpt
from ..messages import CAPTION_KINDS
from ..signatures import SignatureError
from ..states import State
from ..tracks import TrackOutcome, TrackResult
from .aws_job import (
    ASSET_KEY,
    MASTER,
    MP4_FILE,
    MP4_KEY,
    POSTER_KEY,
    PUBLIC,
    SIGNED,
    STACK_KEY,
    Caption,
    captions_of,
    job_settings,
    output_prefix,
    poster_file,
    poster_image,
    request_token,
    user_metadata,
)
from .base import FIND_MARGIN_S, FIND_MAX_PAGES, ListingError, Provider, listing_pages, too_many_pages
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
    Video,
    WebhookEvent,
    duration_of,
    mapping,
    our_ref,
    pixels,
    playback_of,
    text,
    video_id,
)
from .http import Answer

EVENT_DETAIL_TYPE = "MediaConvert Job State Change"
EVENT_SOURCE = "aws.mediaconvert"
# The job statuses (the model's JobStatus) in our terms: COMPLETE is ready; ERROR and CANCELED end the video.
WORKING = ("SUBMITTED", "PROGRESSING")
ENDED_BADLY = ("ERROR", "CANCELED")
LIST_PAGE = 20  # ListJobs' maxResults at most
# A job a lookup may be answered with: ids are the service's (`1234567890123-abc123`), checked like our own.
THROTTLED_CODES = ("TooManyRequestsException", "ThrottlingException", "LimitExceededException")
NOT_ARCHIVED = (
    "the aws target transcodes from S3 only (MediaConvert's HTTP inputs must be public and carry no query"
    " string): the stack must archive each original first (ArchiveFirst=true)"
)
REFUSED_CODES = ("BadRequestException", "NotFoundException", "ForbiddenException", "ConflictException")


@dataclass(frozen=True)
class AwsTarget:
    """Where the stack's jobs run and land: what the template tells the functions (settings.py)."""

    role_arn: str  # the MediaConvert role the jobs run as (reads the archive, writes the output)
    queue: str  # the queue's ARN or name
    output_bucket: str
    playback_base_url: str  # https://<distribution domain> or the operator's alternate domain, no trailing slash
    stack: str  # the UserMetadata value the stack's jobs carry (the stack's name)
    archive_bucket: str = ""  # where the archived captions are (ArchiveBucket)
    event_source: str = EVENT_SOURCE  # the events' source: AWS's own, another only for a local simulator

    def problem(self) -> str | None:
        missing = [
            n for n in ("role_arn", "queue", "output_bucket", "playback_base_url", "stack") if not getattr(self, n)
        ]
        return f"the aws target is missing {', '.join(missing)}" if missing else None


class AwsProvider(Provider):
    name = "aws"
    default_base_url = "https://mediaconvert.{region}.amazonaws.com"  # what boto3 reaches when ProviderBaseUrl is empty
    duplicate_window = (
        "none: a create sent again within a minute returns its job, later the job is found by its metadata"
    )
    events_per_asset = 1  # none through the webhook route: the job events come through EventBridge
    takes_caption_files = True
    fetches_presigned_get = False  # it reads S3 itself (`reads_s3_itself`)
    reads_s3_itself = True
    speaks_http = False
    rate_limit_window_s = None
    takes_tracks = True  # captions become renditions of the job (create_time_tracks), listed from the master
    takes_thumbnail = None
    thumbnail_with_create = (
        "the poster is the row's image as the archive kept it, copied beside the renditions at the create (else the"
        " job's frame capture, and the create's notes say why)"
    )
    collections_instead = "kept in the ledger only (the aws target has no player of its own)"

    def __init__(
        self,
        base_url: str | None,
        secret: Callable[[], str | None],
        *,
        target: AwsTarget | None = None,
        mediaconvert=None,
        s3=None,
        clock: Callable[[], float] = time.time,
        connect_timeout_s: float = 3.05,
        read_timeout_s: float = 10.0,
        **options,
    ):
        options.pop("session", None)
        super().__init__(
            base_url,
            secret,
            clock=clock,
            connect_timeout_s=connect_timeout_s,
            read_timeout_s=read_timeout_s,
            **options,
        )
        if target is None or target.problem():
            raise CredentialsError(target.problem() if target else "the aws target is not configured")
        self.target = target
        endpoint = base_url or None  # None: boto3's own, the region's endpoint
        self.mediaconvert = mediaconvert or _client("mediaconvert", endpoint, connect_timeout_s, read_timeout_s)
        self._s3 = s3

    @property
    def s3(self):
        if self._s3 is None:
            import boto3

            self._s3 = boto3.client("s3")
        return self._s3

    def auth_headers(self) -> dict[str, str]:
        return {}  # the SDK signs each request with the function's role

    # --- the uploader -----------------------------------------------------------------------------------------

    def source_problem(self, source_url: str) -> str | None:
        return None  # any row: the template's rule archives every original first, and the job reads the copy

    def create(self, asset: AssetRef, source_url: str) -> Outcome:
        if not source_url.lower().startswith("s3://"):
            return Outcome(OutcomeKind.REJECTED, error=NOT_ARCHIVED)
        body, notes = self._create_body(asset, source_url)
        poster = poster_image(dict(asset.archived_files))
        if poster is not None:
            copied = self._copy_poster(poster, body["Settings"])
            if copied is None:
                body["UserMetadata"][POSTER_KEY] = poster[1]
            else:
                notes.append(copied)
        try:
            job = self.mediaconvert.create_job(**body).get("Job") or {}
        except Exception as exc:
            return _replace_notes(_failure(exc), notes)
        remote = video_id(job.get("Id"))
        if remote is None:
            return Outcome(
                OutcomeKind.TRANSIENT, error="CreateJob answered without a usable job id", notes=tuple(notes)
            )
        return Outcome(OutcomeKind.CREATED, remote_id=remote, notes=tuple(notes))

    def _create_body(self, asset: AssetRef, source_url: str) -> tuple[dict, list[str]]:
        playback = self.playback(asset)
        prefix = output_prefix(playback, asset.asset_id)
        tracks = asset.details.tracks if asset.details else ()
        captions = captions_of(tracks, dict(asset.archived_files), self.target.archive_bucket)
        notes = _caption_notes(tracks, captions)
        chosen, left_out = self.create_options(asset)
        notes += left_out
        mp4 = chosen.get("mp4") is True
        details = asset.details
        if details is not None and (details.description or details.tags):
            notes.append("description and tags kept in the ledger only (the aws target has no catalogue)")
        body = {
            "Role": self.target.role_arn,
            "Queue": self.target.queue,
            "Settings": job_settings(source_url, self.target.output_bucket, prefix, captions, mp4=mp4),
            "UserMetadata": user_metadata(self.target.stack, asset.asset_id, asset.generation)
            | ({MP4_KEY: "1"} if mp4 else {}),
            "ClientRequestToken": request_token(self.target.stack, asset.asset_id, asset.generation),
            "StatusUpdateInterval": "SECONDS_60",
        }
        return body, notes

    def _copy_poster(self, poster: tuple[str, str], settings: Mapping) -> str | None:
        """The row's own image, as the archive kept it, copied beside the renditions (a copy within S3, so it is made
        again the same by a create sent again); None once it is there, else the note of why the frame is the poster."""
        key, name = poster
        hls = settings["OutputGroups"][0]["OutputGroupSettings"]["HlsGroupSettings"]["Destination"]
        folder = hls.split("/", 3)[3].rsplit("/", 1)[0]  # s3://bucket/{folder}/index -> {folder}
        try:
            self.s3.copy_object(
                Bucket=self.target.output_bucket,
                Key=f"{folder}/{name}",
                CopySource={"Bucket": self.target.archive_bucket, "Key": key},
            )
        except Exception as exc:
            why = _code(exc) or type(exc).__name__
            return f"the row's thumbnail could not be copied ({why}): the frame is the poster"
        return None

    def create_time_tracks(self, asset: AssetRef):
        tracks = asset.details.tracks if asset.details else ()
        return [t for t in tracks if t.kind in CAPTION_KINDS]

    def find(self, asset_id: str, created_after: float | None) -> Outcome:
        since = None if created_after is None else created_after - FIND_MARGIN_S
        token = None
        for _page in range(FIND_MAX_PAGES if since is None else 10_000):
            try:
                page = self.mediaconvert.list_jobs(**_list_args(self.target.queue, token))
            except Exception as exc:
                failed = _failure(exc)
                kind = OutcomeKind.TRANSIENT if failed.kind is OutcomeKind.REJECTED else failed.kind
                return Outcome(kind, error=f"lookup {failed.error}", retry_after=failed.retry_after)
            jobs = page.get("Jobs") or []
            for job in jobs:
                video = self.video_of(job)
                if video.ref == asset_id and video.remote_id and video.target is not State.REJECTED:
                    return Outcome(OutcomeKind.CREATED, remote_id=video.remote_id)
            token = page.get("NextToken")
            oldest = _epoch(jobs[-1].get("CreatedAt")) if jobs else None
            if not token or (since is not None and oldest is not None and oldest < since):
                break
        return Outcome(OutcomeKind.NOT_FOUND)

    # --- reconcile and the job events -------------------------------------------------------------------------

    def _poll_video(self, asset_id: str, remote_id: str) -> Poll:
        try:
            job = self.mediaconvert.get_job(Id=remote_id).get("Job") or {}
        except Exception as exc:
            code = _code(exc)
            if code == "NotFoundException":
                return Poll(404)
            if code in THROTTLED_CODES:
                return Poll(429)
            return Poll(0)
        return Poll(200, self.video_of(job))

    def read_webhook(self, body, headers, secrets, now, tolerance_s) -> WebhookEvent:
        # Nothing is trusted through the public route: the jobs' events come through EventBridge (read_job_event).
        raise SignatureError("the aws target sends no webhooks; its job events come through EventBridge")

    def read_job_event(self, event: Mapping) -> WebhookEvent:
        """An EventBridge "MediaConvert Job State Change" event (delivered by the stack's rule, so AWS vouches for
        it): the job's state as a video, or EventError for anything else. The job must be one of this stack's."""
        if event.get("source") != self.target.event_source or event.get("detail-type") != EVENT_DETAIL_TYPE:
            raise EventError("not a MediaConvert job state change from the expected source")
        detail = event.get("detail")
        if not isinstance(detail, dict):
            raise EventError("the event has no detail")
        metadata = detail.get("userMetadata")
        if not isinstance(metadata, dict) or metadata.get(STACK_KEY) != self.target.stack:
            raise EventError("the job is not this stack's")
        event_id = text(event.get("id"))
        if not event_id or len(event_id) > 128:
            raise EventError("the event has no usable id")
        job = {
            "Id": detail.get("jobId"),
            "Status": detail.get("status"),
            "UserMetadata": metadata,
            "ErrorMessage": detail.get("errorMessage"),
            "ErrorCode": detail.get("errorCode"),
            "OutputGroupDetails": _camel_outputs(detail.get("outputGroupDetails")),
            "Playlists": _playlists(detail.get("outputGroupDetails")),
        }
        video = self.video_of(job)
        note = f"job {text(detail.get('status')) or '?'}"
        return WebhookEvent(event_id, asset_id=video.ref, remote_id=video.remote_id, video=video, note=note)

    def video_of(self, job: Mapping) -> Video:
        """A job (GetJob's or ListJobs' `Job`, or an event's detail in the same form) as a video, in our terms."""
        status = text(job.get("Status")) or ""
        metadata = mapping(job.get("UserMetadata"))
        ours = metadata.get(STACK_KEY) == self.target.stack
        ref = our_ref(metadata.get(ASSET_KEY)) if ours else None
        remote = video_id(job.get("Id"))
        created = _epoch(job.get("CreatedAt"))
        if status in WORKING:
            return Video(remote, ref, None, status.lower(), created_at=created)
        if status in ENDED_BADLY:
            why = excerpt(text(job.get("ErrorMessage")) or ("the job was canceled" if status == "CANCELED" else ""))
            code = job.get("ErrorCode")
            reason = f"MediaConvert {status.lower()}" + (f" ({code})" if isinstance(code, int) else "") + f": {why}"
            return Video(remote, ref, State.REJECTED, status.lower(), error=reason[:300], created_at=created)
        if status != "COMPLETE":
            return Video(remote, ref, None, status.lower() or "unknown", known=False, created_at=created)
        folder = self._folder_of(job, ref)
        duration, width, height = _first_output(job.get("OutputGroupDetails"))
        playback = None
        if folder is not None and ref is not None:
            base = f"{self.target.playback_base_url}/{folder}/{key_of_id(ref)}"
            playback = playback_of(
                policy="public" if folder == PUBLIC else "signed",
                hls=f"{base}/{MASTER}.m3u8",
                thumbnail=f"{base}/{poster_file(metadata)}",
                mp4=f"{base}/{MP4_FILE}" if metadata.get(MP4_KEY) == "1" else None,
                width=width,
                height=height,
            )
        privacy = None if folder is None else ("public" if folder == PUBLIC else "signed")
        return Video(remote, ref, State.READY, "complete", duration_s=duration, created_at=created,
                     privacy=privacy, playback=playback)  # fmt: skip

    def _folder_of(self, job: Mapping, ref: str | None) -> str | None:
        """Where the job wrote its master: `public` or `signed`, read from its own settings or the event's
        playlist paths, never assumed (a job of this stack written elsewhere says nothing about who may play it)."""
        if ref is None:
            return None
        places = list(job.get("Playlists") or ())
        settings = mapping(job.get("Settings"))
        for group in settings.get("OutputGroups") or ():
            hls = (((group or {}).get("OutputGroupSettings") or {}).get("HlsGroupSettings")) or {}
            if isinstance(hls.get("Destination"), str):
                places.append(hls["Destination"] + ".m3u8")
        for place in places:
            for folder in (PUBLIC, SIGNED):
                expected = f"s3://{self.target.output_bucket}/{output_prefix(folder, ref)}/{MASTER}.m3u8"
                if place == expected:
                    return folder
        return None

    # --- the audit ----------------------------------------------------------------------------------------------

    def videos(self) -> Iterator[Video]:
        token = None
        for _page in listing_pages():
            try:
                page = self.mediaconvert.list_jobs(**_list_args(self.target.queue, token))
            except Exception as exc:
                raise ListingError(
                    f"listing the stack's MediaConvert jobs failed: {_code(exc) or 'no answer'}"
                ) from None
            for job in page.get("Jobs") or []:
                video = self.video_of(job)
                if video.ref is not None:
                    yield video
            token = page.get("NextToken")
            if not token:
                return
        raise too_many_pages()

    # --- migrator verify: signed playback -------------------------------------------------------------------

    def signed_playback(self, playback: Mapping, ttl_s: float, keys: PlaybackKeys | None) -> SignedPlayback:
        manifest = playback.get("hls")
        if not isinstance(manifest, str) or not manifest.endswith(f"/{MASTER}.m3u8"):
            raise SigningUnavailable("the video's playback names no master playlist")
        if keys is None or not hasattr(keys, "cloudfront"):
            raise SigningUnavailable("no CloudFront signing key: the stack's key group secret is not readable")
        key = keys.cloudfront()
        folder = manifest[: -len(f"{MASTER}.m3u8")]
        policy = CustomPolicy(folder + "*", int(self.clock() + ttl_s))
        signed = sign_custom_url(manifest, key, policy)
        query = tuple(pair for pair in _query_pairs(signed[len(manifest) + 1 :]))
        return SignedPlayback(signed, query)

    # --- caption tracks: renditions of the job, listed from the master playlist ---------------------------------

    def track_list(self, remote_id: str) -> TrackList | TrackOutcome:
        try:
            job = self.mediaconvert.get_job(Id=remote_id).get("Job") or {}
        except Exception as exc:
            if _code(exc) == "NotFoundException":
                return TrackList(video_gone="MediaConvert has no such job")
            return TrackOutcome(TrackResult.TRANSIENT, error=f"provider: {_code(exc) or 'no answer'}")
        video = self.video_of(job)
        if video.target is State.REJECTED:
            return TrackList(video_gone=video.error or "the job failed")
        folder = self._folder_of(job, video.ref)
        if video.target is not State.READY or folder is None or video.ref is None:
            return TrackList(open_for_tracks=False)
        key = f"{output_prefix(folder, video.ref)}/{MASTER}.m3u8"
        try:
            master = self.s3.get_object(Bucket=self.target.output_bucket, Key=key)["Body"].read(1024 * 1024)
        except Exception as exc:
            return TrackOutcome(
                TrackResult.TRANSIENT, error=f"provider: the master playlist: {_code(exc) or 'no answer'}"
            )
        return TrackList(tuple(RemoteTrack(lang) for lang in subtitle_languages(master.decode("utf-8", "replace"))))

    def attach_track(self, remote_id, track, upload, label) -> TrackOutcome:
        return TrackOutcome(
            TrackResult.REFUSED,
            error="the aws target carries captions only as renditions of the transcode: the archive kept no"
            " WebVTT or SubRip file of this track for the job",
        )

    # --- migrator doctor --------------------------------------------------------------------------------------

    def check(self) -> Answer:
        try:
            self.mediaconvert.list_jobs(MaxResults=1, Queue=self.target.queue)
        except Exception as exc:
            code = _code(exc) or "no answer"
            return Answer(_status(exc), None, f"MediaConvert ListJobs: {code}")
        return Answer(200, {}, "MediaConvert ListJobs answered")

    def rate_signal(self, headers: Mapping[str, str]) -> RateSignal:
        return RateSignal()


# --- helpers ----------------------------------------------------------------------------------------------------


def subtitle_languages(master: str) -> list[str]:
    """The LANGUAGE of each `#EXT-X-MEDIA:TYPE=SUBTITLES` entry of a master playlist (RFC 8216 4.3.4.1)."""
    found = []
    for line in master.splitlines():
        if not line.startswith("#EXT-X-MEDIA:") or "TYPE=SUBTITLES" not in line:
            continue
        for part in _attributes(line[len("#EXT-X-MEDIA:") :]):
            name, _, value = part.partition("=")
            if name == "LANGUAGE":
                found.append(value.strip('"'))
    return found


def _attributes(text_: str) -> list[str]:
    """An attribute list's `NAME=value` entries, commas inside quoted strings kept."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for char in text_:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _caption_notes(tracks: Sequence, captions: Sequence[Caption]) -> list[str]:
    carried = {c.uri.rsplit("/", 1)[-1] for c in captions}
    wanted = [t for t in tracks if t.kind in CAPTION_KINDS]
    if len(wanted) > len(captions):
        return [f"{len(wanted) - len(captions)} caption track(s) not given to the job: the archive kept no WebVTT or"
                f" SubRip file of them ({len(carried)} carried)"]  # fmt: skip
    return []


def _list_args(queue: str, token: str | None) -> dict:
    args: dict[str, Any] = {"MaxResults": LIST_PAGE, "Order": "DESCENDING", "Queue": queue}
    if token:
        args["NextToken"] = token
    return args


def _client(service: str, endpoint: str | None, connect_timeout_s: float, read_timeout_s: float):
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"max_attempts": 1, "mode": "standard"},  # the pacer decides what is tried again
        connect_timeout=connect_timeout_s,
        read_timeout=read_timeout_s,
    )
    return boto3.client(service, endpoint_url=endpoint, config=config)


def _code(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str((response.get("Error") or {}).get("Code") or "")
    return ""


def _status(exc: Exception) -> int:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
        if isinstance(status, int):
            return status
    return 0


def _failure(exc: Exception) -> Outcome:
    """A call that failed, in our terms: throttled (the pacer slows), refused (a 4xx about the job: the asset's) or
    transient (no answer, a 5xx: the job may have been made; the lookup finds it)."""
    if type(exc).__name__ == "ParamValidationError":  # the SDK refused our own request before sending it
        return Outcome(OutcomeKind.REJECTED, error=f"MediaConvert request refused by the SDK: {excerpt(str(exc), 200)}")
    code = _code(exc)
    message = excerpt(str((getattr(exc, "response", {}) or {}).get("Error", {}).get("Message") or ""), 200)
    if code in THROTTLED_CODES or _status(exc) == 429:
        return Outcome(OutcomeKind.THROTTLED, error=f"MediaConvert: {code or 'HTTP 429'}", scope="rate")
    if code in REFUSED_CODES:
        return Outcome(OutcomeKind.REJECTED, error=f"MediaConvert {code}: {message}".strip())
    if code:
        return Outcome(OutcomeKind.TRANSIENT, error=f"MediaConvert {code} (HTTP {_status(exc)})")
    return Outcome(OutcomeKind.TRANSIENT, error=f"MediaConvert: no answer ({type(exc).__name__})")


def _replace_notes(outcome: Outcome, notes: Sequence[str]) -> Outcome:
    from dataclasses import replace

    return replace(outcome, notes=tuple(notes))


def _epoch(value: object) -> float | None:
    if hasattr(value, "timestamp"):
        return float(value.timestamp())  # boto3 reads a timestamp as a datetime
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _first_output(groups: object) -> tuple[float | None, int | None, int | None]:
    """The duration and largest picture of a job's outputs (OutputGroupDetails), where it says."""
    duration, width, height = None, None, None
    for group in groups if isinstance(groups, list) else ():
        for output in (group or {}).get("OutputDetails") or ():
            if not isinstance(output, dict):
                continue
            ms = output.get("DurationInMs")
            if duration is None and isinstance(ms, int) and not isinstance(ms, bool):
                duration = duration_of(ms / 1000)
            details = mapping(output.get("VideoDetails"))
            w, h = pixels(details.get("WidthInPx")), pixels(details.get("HeightInPx"))
            if w and h and (height is None or h > height):
                width, height = w, h
    return duration, width, height


def _camel_outputs(groups: object) -> list:
    """The event's `outputGroupDetails` (camelCase, as EventBridge carries the job's detail) in the API's form."""
    out = []
    for group in groups if isinstance(groups, list) else ():
        outputs = []
        for output in (group or {}).get("outputDetails") or () if isinstance(group, dict) else ():
            if isinstance(output, dict):
                video = mapping(output.get("videoDetails"))
                outputs.append({
                    "DurationInMs": output.get("durationInMs"),
                    "VideoDetails": {"WidthInPx": video.get("widthInPx"), "HeightInPx": video.get("heightInPx")},
                })  # fmt: skip
        out.append({"OutputDetails": outputs})
    return out


def _playlists(groups: object) -> list[str]:
    """The master playlists an event's `outputGroupDetails[].playlistFilePaths` names."""
    found = []
    for group in groups if isinstance(groups, list) else ():
        paths = group.get("playlistFilePaths") if isinstance(group, dict) else None
        found += [p for p in paths or () if isinstance(p, str) and len(p) < 2048]
    return found


def _query_pairs(query: str) -> list[tuple[str, str]]:
    from urllib.parse import parse_qsl

    return parse_qsl(query, keep_blank_values=True)


__all__ = ["AwsProvider", "AwsTarget", "subtitle_languages"]
