"""The "generic" profile: the seed contract the simulator always spoke, byte for byte.

Bearer token; POST /videos {"input", "metadata": {"migration_ref"}} with Idempotency-Key;
GET /videos?metadata[migration_ref]=; GET /videos/{id}; preparing -> ready|errored;
GET /videos lists the library oldest first: whole, as the seed did, or a page at a time when
asked with `limit` (1-1000) and `cursor` (the previous page's `next_cursor`, opaque; absent on
the last page), the paging this project added to the contract so an audit can read any size;
webhooks signed with the seed's x-signature or Standard Webhooks; 429 hints in every
common Retry-After dialect (retry_after_mode).
"""

from __future__ import annotations

import base64
import builtins
import copy
import email.utils
import json
import math
import secrets
import time
import urllib.parse
import uuid

from .. import media
from ..bucket import RateState
from ..config import SimConfig, is_http_url
from ..profile import (
    KIND_STATUS,
    Call,
    Draft,
    Event,
    MadeUp,
    ParamError,
    Profile,
    Reply,
    Store,
    ietf_ratelimit,
    int_param,
    reset_epoch,
    same,
    x_ratelimit,
)
from ..signing import sign_seed, sign_standard
from ..video import ERRORED, READY, Video

_STATUS = {READY: "ready", ERRORED: "errored"}  # anything else is still "preparing"
_MESSAGES = {
    "unsupported": "unsupported source",
    "unauthorized": "unauthorized",
    "forbidden": "forbidden",
    "not_found": "not found",
    "no_route": "not found",
    "method": "method not allowed",
    "conflict": "exists",
    "throttled": "rate limited",
    "busy": "too many videos processing",
    "full": "storage full",
    "failed": "injected",
    "unavailable": "unavailable",
}
_REF_FILTER = "metadata[migration_ref]"
PAGE_MAX = 1000


def _validate_create(body: object) -> str | None:
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    if not is_http_url(body.get("input")):
        return "input must be an http(s) URL string"
    metadata = body.get("metadata")
    if not isinstance(metadata, dict):
        return "metadata must be an object"
    ref = metadata.get("migration_ref")
    if not isinstance(ref, str) or not ref:
        return "metadata.migration_ref must be a non-empty string"
    # This project's contract (docs/providers.md): metadata is a free map, whose `privacy` says who may play.
    if "privacy" in metadata and metadata["privacy"] not in ("public", "signed"):
        return "metadata.privacy must be public or signed"
    return None


class Generic(Profile):
    name = "generic"
    hls_master = ("master.m3u8",)  # where its video object's HLS link points (media.py)
    routes = (("/videos", {"POST": "create", "GET": "list"}), ("/videos/{id}", {"GET": "get"}))
    honours_idempotency_key = True

    def made_up_target(self, webhook_scheme: str = "standard") -> MadeUp:
        """A bearer token, and a webhook secret in the scheme asked (Standard Webhooks' whsec_ key, or the seed's)."""
        token = secrets.token_urlsafe(24)
        if webhook_scheme == "standard":
            signing = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
        else:
            signing = secrets.token_urlsafe(24)
        return MadeUp({"token": token}, {"token": token}, signing, webhook_scheme)

    def authorize(self, cfg: SimConfig, call: Call) -> Reply | None:
        if cfg.token is None or same(call.headers.get("Authorization"), f"Bearer {cfg.token}"):
            return None
        return self.error("unauthorized")

    def error(self, kind: str, message: str | None = None, **detail: object) -> Reply:
        # Validation passes its reason; every other kind keeps the text it always had.
        return Reply(KIND_STATUS[kind], {"error": _MESSAGES.get(kind, message)})

    def new_id(self) -> str:
        return "vid_" + uuid.uuid4().hex

    def ref_of(self, body: object) -> str | None:
        metadata = body.get("metadata") if isinstance(body, dict) else None
        ref = metadata.get("migration_ref") if isinstance(metadata, dict) else None
        return ref if isinstance(ref, str) else None

    def parse_create(self, body: object, parse_error: str | None, call: Call) -> Draft | Reply:
        reason = parse_error or _validate_create(body)
        if reason or not isinstance(body, dict):  # not a dict: _validate_create says so
            return self.error("invalid", reason or "request body must be a JSON object")
        return Draft(source=body["input"], ref=body["metadata"]["migration_ref"], request=body)

    def render(self, video: Video, now: float) -> dict:
        out = {
            "id": video.id,
            "status": _STATUS.get(video.state, "preparing"),
            "input": video.source,
            "metadata": copy.deepcopy(video.request.get("metadata")),
            "created_at": int(video.created),
        }
        if video.state == READY:
            out["duration"] = video.duration
            out["playback"] = generic_playback(video)  # this project's addition to the contract
        elif video.state == ERRORED:
            message = "source could not be fetched" if video.failure == "fetch" else "source could not be ingested"
            out["error"] = {"type": "invalid_input", "message": message}
        return out

    def created(self, video: Video, now: float, replay: bool) -> Reply:
        return Reply(200 if replay else 201, self.render(video, now))

    def list_ref(self, call: Call) -> str | None:
        return urllib.parse.parse_qs(call.query).get(_REF_FILTER, [None])[0]

    def list(self, store: Store, call: Call, now: float) -> Reply:
        ref = self.list_ref(call)
        if ref is not None:
            return Reply(200, {"data": [self.render(v, now) for v in store.with_ref(ref)]})
        videos = list(reversed(store.newest_first()))
        query = urllib.parse.parse_qs(call.query)
        if "limit" not in query and "cursor" not in query:
            return Reply(200, {"data": [self.render(v, now) for v in videos]})
        try:
            limit = int_param(query, "limit", 100, 1, PAGE_MAX)
            after = int_param(query, "cursor", -1, 0, None)  # the last listed video's seq
        except ParamError as exc:
            return self.error("invalid", str(exc))
        page = [v for v in videos if v.seq > after][: limit + 1]
        more = len(page) > limit
        body: dict[str, object] = {"data": [self.render(v, now) for v in page[:limit]]}
        if more:
            body["next_cursor"] = str(page[limit - 1].seq)
        return Reply(200, body)

    def get(self, video: Video | None, now: float) -> Reply:
        return self.error("not_found") if video is None else Reply(200, self.render(video, now))

    def rate_headers(self, cfg: SimConfig, state: RateState) -> dict:
        # The de facto X-RateLimit-* (limit per second, reset as epoch seconds) and the IETF fields.
        return {
            **x_ratelimit(state, 1),
            "X-RateLimit-Reset": reset_epoch(state),
            **ietf_ratelimit(state, "RateLimit-Policy", "RateLimit"),
        }

    def throttle_hint(self, cfg: SimConfig, wait_s: float, state: RateState) -> tuple[dict, float | None]:
        told = max(1, math.ceil(wait_s))
        headers = {
            "seconds": {"Retry-After": str(told)},
            "date": {"Retry-After": email.utils.formatdate(time.time() + told, usegmt=True)},
            "x-ratelimit": {"X-RateLimit-Retry-After": str(told)},
            "absent": {},
        }[cfg.retry_after_mode]
        return headers, (float(told) if headers else None)

    def events(self, video: Video, moment: str, now: float) -> builtins.list[Event]:
        if moment != "finished":
            return []
        snapshot = self.render(video, now)
        event_id = "evt_" + uuid.uuid4().hex
        event = {
            "id": event_id,
            "type": f"video.{snapshot['status']}",
            "created_at": int(time.time()),
            "data": snapshot,
        }
        return [Event(event_id, json.dumps(event, separators=(",", ":")).encode())]

    def signature_headers(self, cfg: SimConfig, event: Event, secret: str | None, timestamp: int) -> dict:
        if cfg.webhook_scheme == "standard":
            # A fresh timestamp per attempt, as Standard Webhooks senders do; the id stays.
            headers = {"webhook-id": event.id, "webhook-timestamp": str(timestamp)}
            if secret:
                headers["webhook-signature"] = sign_standard(secret, event.id, timestamp, event.body)
            return headers
        return {"x-signature": sign_seed(secret, event.body)} if secret else {}


def generic_playback(video: Video) -> dict:
    at = f"{media.base(video, 'generic')}/{video.id}"
    width, height = media.top_size(video)
    return {
        "policy": "public",
        "hls": f"{at}/master.m3u8",
        "player": f"{at}/player",
        "thumbnail": f"{at}/thumbnail.jpg",
        "width": width,
        "height": height,
    }
