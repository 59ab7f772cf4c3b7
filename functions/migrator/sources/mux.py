"""Mux Video as a source (docs.mux.com "Download for offline editing" / master access, the asset API, "Secure
video playback"; mux-python 5.1.2's `AssetsApi.list_assets`, `get_asset`, `update_asset_master_access`).

- credentials: an access token id and secret with Mux Video read and write (master access is a
  write), HTTP Basic; `{"token_id": "...", "token_secret": "..."}` (the provider's format), and for
  the text tracks of assets with signed playback only, one of the environment's URL signing keys:
  `"signing_key_id"` and `"signing_private_key"` (as Mux's API returns it, a base64 PEM, or the PEM);
- list: `GET /video/v1/assets?limit=100&cursor=` newest first, `{data, next_cursor}`; no total, no
  filter by time: a delta sweep stops at the first asset created before the mark (an asset's
  metadata changed later is not seen again: Mux lists no modified time). So what is unfinished when
  listed (an asset still `preparing`, a live stream's asset still recording, `is_live`; a text track
  not yet `ready`) goes to `page.pending`, not the inventory: the next sweep asks for each by id
  (`video`, `GET /video/v1/assets/{id}`), since no listing past the mark would show it again;
- an asset: `id`, `status` (preparing, ready, errored), `created_at` (Unix seconds as a string),
  `duration`, `meta.title`, `passthrough`, `playback_ids[].policy` (public, signed, drm), `is_live`,
  `test`, `tracks[]` (type text: `id`, `text_type` subtitles, `language_code`, `name`,
  `closed_captions`, `status` preparing | ready | errored | deleted), `master_access` (none |
  temporary) and `master {status: preparing|ready|errored, url}`;
- a test asset (`test: true`: "watermarked with the Mux logo, limited to 10 seconds, deleted after
  24 hrs", mux-python CreateAssetRequest.test) is unfetchable, with that reason: its file is Mux's 10-second
  watermarked copy, not the video, and it is gone within a day whatever the migration does;
- resolve: the master file, the highest quality Mux kept, as an MP4: `PUT
  /video/v1/assets/{id}/master-access {"master_access": "temporary"}` asks for it; the asset's
  `master.status` is preparing until it is ready, and its `url` then lives 24 hours, after which
  master access reverts to none (mux-python's `update_asset_master_access`). Signed and DRM assets
  are fetched this way too: the master needs no playback token. The asset read then gives the
  privacy the create carries (`Resolution.privacy`: public, else signed for signed or DRM playback);
- text tracks are served at `https://stream.mux.com/{playback id}/text/{track id}.vtt`: a public
  playback id's as they are; a signed (else DRM) one's with `?token=<JWT>`, RS256 with the
  credentials' signing key, `sub` the playback id, `aud` "v" (video, which covers the subtitles and
  captions beside it), `exp` an hour on (docs.mux.com/guides/secure-video-playback). The key is
  never made here: a Lambda that made one per cold start would leave keys at Mux without bound, and
  the private key, shown once, has nowhere the stack's roles may write; without one such a track is
  unfetchable, with what to add. When the API address is overridden (a simulator), stream.mux.com is
  looked for under it, at `/_play/mux`;
- what a viewer sees first (issue 42; mux_extras.py): the poster frame (the asset's `thumbnail_time`, else the
  middle, as `poster_time_s`, and its default thumbnail at image.mux.com as `thumbnail_url`: a public playback
  id's link, else a reference signed at the fetch with a token of audience `t`), a chapters text track
  (`text_type: chapters`) as a chapters track, resolved to its JSON read as WebVTT cues; no collections, no
  publish time. image.mux.com is looked for at `/_play/mux` too under an overridden API address;
- the asset's playback ids (every policy) go in the row's metadata as `mux_playback_ids`: a site embeds a Mux video
  by a playback id, never by the asset's id, so `migrator rewrite` finds the asset by them in the ledger;
- rate limits: 5 requests a second other than creates (docs.mux.com, "Make API requests").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ..link_life import LinkTerms
from ..playback_tokens import THUMBNAIL, VIDEO, SigningKey, SigningKeyError, mux_playback_token
from ..providers.facts import entries, epoch_of, mapping, text
from ..providers.http import HttpTransport, TransportError, quote
from ..providers.mux import basic_auth
from ..trackfetch import MAX_TRACK_BYTES
from .base import HttpSource, Page, Resolution, ResolutionKind, SourceError, SourceRef, Unfetchable, gone
from .mux_extras import THUMBNAIL_FILE, chapters_text, is_chapters, playback_ids, poster_time, thumbnail_link
from .rows import TrackInfo, make_row, unfetchable

ASSETS = "/video/v1/assets"
# The row's metadata key for the asset's playback ids, what its embeds name (migrator rewrite reads it).
PLAYBACK_IDS = "mux_playback_ids"
PAGE_SIZE = 100
STREAM = "https://stream.mux.com"
IMAGE = "https://image.mux.com"
STILL_PROCESSING = "still processing at the source: list it again once Mux has finished"
LIVE = "a live stream's asset still recording: list it again once the stream has ended"
CAPTIONS_PREPARING = "a text track Mux is still making: listed once it is ready"
TEST_ASSET = (
    "a Mux test asset (test: true): watermarked, cut to 10 seconds and deleted by Mux 24 hours after its"
    " creation, so not the video itself"
)
PREPARING = "Mux is preparing the master file (master access temporary)"
NO_SIGNING_KEY = (
    "the track is served to signed playback only, and the Mux source credentials carry no signing key:"
    " add signing_key_id and signing_private_key (a URL signing key of the environment) to them"
)
# Master files of long videos take minutes; asked again this often.
PREPARE_POLL_S = 30.0
# How long a text track's signed URL plays: the tracks worker fetches it at once, and a target that fetches
# by URL itself (Mux) does so within minutes of the attach.
TRACK_TOKEN_TTL_S = 3600.0


@dataclass(frozen=True)
class _Pending:
    """An asset not finished when it was read: the sweep carries it to the next one (`Page.pending`)."""

    entry: Unfetchable


def why_unfetchable(asset: Mapping) -> str | None:
    status = text(asset.get("status")) or ""
    if status == "errored":
        messages = entries(mapping(asset.get("errors")).get("messages"))
        detail = text(messages[0]) if messages else None
        return "failed at the source (Mux asset errored" + (f": {detail})" if detail else ")")
    if asset.get("test") is True:
        return TEST_ASSET
    if asset.get("is_live") is True:
        return LIVE
    if status != "ready":
        return STILL_PROCESSING
    return None


def privacy_of(asset: Mapping) -> str:
    policies = {mapping(p).get("policy") for p in entries(asset.get("playback_ids"))}
    if "public" in policies:
        return "public"
    return "signed" if policies & {"signed", "drm"} else "private"


def playback_id(asset: Mapping, policy: str) -> str | None:
    for playback in entries(asset.get("playback_ids")):
        playback = mapping(playback)
        if playback.get("policy") == policy and text(playback.get("id")):
            return playback["id"]
    return None


def public_playback_id(asset: Mapping) -> str | None:
    return playback_id(asset, "public")


class MuxSource(HttpSource):
    platform = "mux"
    credential_env: ClassVar[Mapping[str, str]] = {"token_id": "MUX_TOKEN_ID", "token_secret": "MUX_TOKEN_SECRET"}
    default_base_url = "https://api.mux.com"
    documented_rate_per_s = 5.0
    requests_per_video = 3  # the asset read, master access asked for; once prepared, the asset read again
    # The master's `url` lives 24 hours from when Mux made it ready, then master access reverts to none
    # (mux-python update_asset_master_access); when that was, the asset does not say.
    link_terms = LinkTerms(
        "Mux's master file lives 24 hours from when Mux made it ready, not from the hand-off", expires_unsaid=True
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._plain: HttpTransport | None = None  # stream.mux.com's chapters, asked without the API's credentials

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        return basic_auth(json.dumps({k: creds.get(k) for k in ("token_id", "token_secret")}))

    @property
    def stream_url(self) -> str:
        return STREAM if self.base_url == self.default_base_url else self.base_url + "/_play/mux"

    @property
    def image_url(self) -> str:
        return IMAGE if self.base_url == self.default_base_url else self.base_url + "/_play/mux"

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        params = {"limit": str(PAGE_SIZE), **({"cursor": cursor} if cursor else {})}
        body = mapping(self.read("GET", ASSETS, "the asset list", gone_ok=False, params=params))
        page = Page()
        older_seen = self.take(page, body.get("data"), lambda asset: epoch_of(asset.get("created_at")), since, tracks)
        following = text(body.get("next_cursor"))
        if following and following != cursor and not older_seen:
            page.cursor = following
        return _sorted(page)

    def video(self, video_id: str, tracks: bool = True) -> Page:
        """The asset `video_id` as the list shows it (an asset a sweep left unfinished); empty when gone."""
        if not video_id.isalnum():
            return Page()
        asset = self.read("GET", f"{ASSETS}/{quote(video_id)}", "the asset")
        page = Page()
        if asset is not None:
            self.take(page, [mapping(asset).get("data")], lambda a: epoch_of(a.get("created_at")), None, tracks)
        return _sorted(page)

    def entry(self, asset: Mapping, tracks: bool):
        aid = text(asset.get("id"))
        if not aid or not aid.isalnum():
            return None
        ref = self.ref(aid)
        meta = mapping(asset.get("meta"))
        reason = why_unfetchable(asset)
        if reason in (LIVE, STILL_PROCESSING):
            return _Pending(unfetchable(self.platform, aid, ref, reason, meta.get("title")))
        if reason:
            return unfetchable(self.platform, aid, ref, reason, meta.get("title"))
        texts = [mapping(t) for t in entries(asset.get("tracks")) if mapping(t).get("type") == "text"] if tracks else []
        if any(t.get("status") == "preparing" for t in texts):
            return _Pending(unfetchable(self.platform, aid, ref, CAPTIONS_PREPARING, meta.get("title")))
        found = [self._track_info(aid, t) for t in texts if t.get("status") == "ready" and text(t.get("id"))]
        extra = {k: meta[k] for k in ("creator_id", "external_id") if isinstance(meta.get(k), str)}
        policies = dict(playback_ids(asset))
        if isinstance(asset.get("passthrough"), str):
            extra["passthrough"] = asset["passthrough"]
        if policies:
            extra[PLAYBACK_IDS] = [pid for _, pid in playback_ids(asset)]
        return make_row(
            self.platform,
            aid,
            ref,
            title=meta.get("title"),
            created_at=asset.get("created_at"),
            duration_s=asset.get("duration"),
            privacy=privacy_of(asset),
            poster_time_s=poster_time(asset) if policies else None,
            tracks=found,
            metadata=extra,
            thumbnail_url=self._thumbnail(aid, policies),
        )

    def _thumbnail(self, aid: str, policies: Mapping[str, str]) -> str | None:
        """The default thumbnail a viewer sees: a public playback id's link, else a signed one's reference."""
        if "public" in policies:
            return thumbnail_link(self.image_url, policies["public"])
        signed = policies.get("signed") or policies.get("drm")
        return self.ref(aid, "thumbnail", signed) if signed else None

    def _track_info(self, aid: str, track: Mapping) -> TrackInfo:
        if is_chapters(track):
            return TrackInfo(
                self.ref(aid, "chapters", track["id"]),
                track.get("language_code"),
                "chapters",
                track.get("name"),
                format="vtt",
            )
        closed = track.get("closed_captions") is True
        return TrackInfo(
            self.ref(aid, "tracks", track["id"]),
            track.get("language_code"),
            "captions" if closed else "subtitles",
            track.get("name"),
            closed_captions=closed,
            format="vtt",
        )

    def _asset(self, aid: str) -> Mapping | Resolution:
        asset = self.read("GET", f"{ASSETS}/{quote(aid)}", "the asset")
        return Resolution.unfetchable(gone("Mux")) if asset is None else mapping(mapping(asset).get("data"))

    def resolve(self, ref: SourceRef) -> Resolution:
        asset = self._asset(ref.video_id)
        if isinstance(asset, Resolution):
            return asset
        if ref.is_track:
            return self._track(asset, ref)
        reason = why_unfetchable(asset)
        if reason:
            return Resolution.unfetchable(reason)
        master = mapping(asset.get("master"))
        status = text(master.get("status"))
        if status == "ready" and text(master.get("url")):
            return Resolution.ready(master["url"], privacy=privacy_of(asset))
        if status == "errored":
            return Resolution.unfetchable("Mux could not prepare the master file (master errored)")
        if status == "preparing" and asset.get("master_access") == "temporary":
            return Resolution.preparing(PREPARING, PREPARE_POLL_S)
        path = f"{ASSETS}/{quote(ref.video_id)}/master-access"
        if self.read("PUT", path, "master access", json_body={"master_access": "temporary"}) is None:
            return Resolution.unfetchable(gone("Mux"))
        return Resolution.preparing(PREPARING, PREPARE_POLL_S)

    def _track(self, asset: Mapping, ref: SourceRef) -> Resolution:
        if ref.kind == "thumbnail":
            return self._thumbnail_image(asset, ref.item or "")
        if ref.kind not in ("tracks", "chapters"):
            return Resolution.unfetchable(f"not a Mux track reference: {ref}")
        track = next((mapping(t) for t in entries(asset.get("tracks")) if mapping(t).get("id") == ref.item), None)
        if track is None:
            return Resolution.unfetchable("the text track is no longer on the asset")
        if track.get("status") != "ready":
            return Resolution.unfetchable(f"the text track is {text(track.get('status')) or 'not ready'} at Mux")
        playback = public_playback_id(asset)
        signed = None if playback else playback_id(asset, "signed") or playback_id(asset, "drm")
        served = playback or signed
        if not served:
            return Resolution.unfetchable("the asset has no playback id: Mux serves its text tracks to no one")
        chapters = ref.kind == "chapters"
        url = (
            f"{self.stream_url}/{quote(served)}/chapters/{quote(ref.item or '')}.json"
            if chapters
            else f"{self.stream_url}/{quote(served)}/text/{quote(ref.item or '')}.vtt"
        )
        expires_at = None
        if signed is not None:
            token = self._token(signed, VIDEO)
            if isinstance(token, Resolution):
                return token
            url, expires_at = f"{url}?token={token[0]}", token[1]
        if chapters:
            return self._chapters(url, text(track.get("language_code")), asset.get("duration"))
        return Resolution.ready(url, expires_at=expires_at)

    def _thumbnail_image(self, asset: Mapping, pid: str) -> Resolution:
        """The default thumbnail of the asset's signed (or DRM) playback id `pid`, with a token of audience `t`."""
        policy = dict((p, k) for k, p in playback_ids(asset)).get(pid)
        if policy is None:
            return Resolution.unfetchable("the playback id is no longer the asset's: Mux serves no thumbnail by it")
        url = f"{self.image_url}/{quote(pid)}/{THUMBNAIL_FILE}"
        if policy == "public":
            return Resolution.ready(url)
        token = self._token(pid, THUMBNAIL)
        if isinstance(token, Resolution):
            return token
        return Resolution.ready(f"{url}?token={token[0]}", expires_at=token[1])

    def _token(self, pid: str, audience: str) -> tuple[str, float] | Resolution:
        """A playback token of the credentials' signing key for `pid`'s `audience`, and when it ends."""
        key = self._signing_key()
        if isinstance(key, Resolution):
            return key
        expires_at = self.clock() + TRACK_TOKEN_TTL_S
        try:
            return mux_playback_token(pid, key, expires_at, audience), expires_at
        except SigningKeyError as exc:
            return Resolution(ResolutionKind.DENIED, reason=f"the Mux source credentials' signing key: {exc}")

    def _chapters(self, url: str, language: str | None, duration: object) -> Resolution:
        """A chapters track's JSON read from stream.mux.com (no API credentials sent there) as WebVTT cues."""
        if self._plain is None:
            self._plain = HttpTransport("", dict, self.http.session, *self.http.timeout)
        self.requests += 1
        try:
            answer = self._plain.send("GET", url, max_body_bytes=MAX_TRACK_BYTES)
        except TransportError as exc:
            raise SourceError(f"mux: the chapters: {exc.kind}") from None
        if answer.status == 404:
            return Resolution.unfetchable("Mux serves no chapters for the track (HTTP 404)")
        if answer.status != 200 or answer.truncated:
            raise SourceError(f"mux: the chapters answered HTTP {answer.status}")
        found = chapters_text(answer.body, language, duration if isinstance(duration, int | float) else None)
        if found is None:
            return Resolution.unfetchable("the chapters track holds no chapter this migration can read")
        return Resolution.ready_text(found, "vtt")

    def _signing_key(self) -> SigningKey | Resolution:
        """The credentials' URL signing key: UNFETCHABLE without one, DENIED when it does not read as a key."""
        creds = mapping(self.credentials())
        key_id, private = creds.get("signing_key_id"), creds.get("signing_private_key")
        if not key_id and not private:
            return Resolution.unfetchable(NO_SIGNING_KEY)
        if not isinstance(key_id, str) or not key_id or not isinstance(private, str) or not private:
            reason = "the Mux source credentials need both signing_key_id and signing_private_key, as strings"
            return Resolution(ResolutionKind.DENIED, reason=reason)
        try:
            return SigningKey.from_mux(key_id, private)
        except SigningKeyError as exc:
            return Resolution(ResolutionKind.DENIED, reason=f"the Mux source credentials' signing key: {exc}")


def _sorted(page: Page) -> Page:
    """The page with the unfinished assets moved from its entries to `pending`."""
    page.pending += [e.entry for e in page.entries if isinstance(e, _Pending)]
    page.entries = [e for e in page.entries if not isinstance(e, _Pending)]
    return page
