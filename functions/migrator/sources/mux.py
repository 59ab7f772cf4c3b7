"""Mux Video as a source (docs.mux.com "Download for offline editing" / master access, the asset API;
mux-python 5.1.2's `AssetsApi.list_assets`, `get_asset`, `update_asset_master_access`).

- credentials: an access token id and secret with Mux Video read and write (master access is a
  write), HTTP Basic; `{"token_id": "...", "token_secret": "..."}` (the provider's format);
- list: `GET /video/v1/assets?limit=100&cursor=` newest first, `{data, next_cursor}`; no total, no
  filter by time: a delta sweep stops at the first asset created before the mark (an asset's
  metadata changed later is not seen again: Mux lists no modified time);
- an asset: `id`, `status` (preparing, ready, errored), `created_at` (Unix seconds as a string),
  `duration`, `meta.title`, `passthrough`, `playback_ids[].policy` (public, signed, drm), `is_live`,
  `tracks[]` (type text: `id`, `text_type` subtitles, `language_code`, `name`, `closed_captions`,
  `status`), `master_access` (none | temporary) and `master {status: preparing|ready|errored, url}`;
- resolve: the master file, the highest quality Mux kept, as an MP4: `PUT
  /video/v1/assets/{id}/master-access {"master_access": "temporary"}` asks for it; the asset's
  `master.status` is preparing until it is ready, and its `url` then lives 24 hours, after which
  master access reverts to none (mux-python's `update_asset_master_access`). Signed and DRM assets
  are fetched this way too: the master needs no playback token;
- text tracks are served at `https://stream.mux.com/{public playback id}/text/{track id}.vtt`, for
  an asset with a public playback id only (a signed one needs a token signed with a key this tool
  does not hold). When the API address is overridden (a simulator), that host is looked for under
  it, at `/_stream`;
- rate limits: 5 requests a second other than creates (docs.mux.com, "Make API requests").
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ..providers.facts import entries, epoch_of, mapping, text
from ..providers.http import quote
from ..providers.mux import basic_auth
from .base import HttpSource, Page, Resolution, SourceRef, gone
from .rows import TrackInfo, make_row, unfetchable

ASSETS = "/video/v1/assets"
PAGE_SIZE = 100
STREAM = "https://stream.mux.com"
STILL_PROCESSING = "still processing at the source: list it again once Mux has finished"
LIVE = "a live stream's asset still recording: list it again once the stream has ended"
PREPARING = "Mux is preparing the master file (master access temporary)"
# Master files of long videos take minutes; asked again this often.
PREPARE_POLL_S = 30.0


def why_unfetchable(asset: Mapping) -> str | None:
    status = text(asset.get("status")) or ""
    if status == "errored":
        messages = entries(mapping(asset.get("errors")).get("messages"))
        detail = text(messages[0]) if messages else None
        return "failed at the source (Mux asset errored" + (f": {detail})" if detail else ")")
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


def public_playback_id(asset: Mapping) -> str | None:
    for playback in entries(asset.get("playback_ids")):
        playback = mapping(playback)
        if playback.get("policy") == "public" and text(playback.get("id")):
            return playback["id"]
    return None


class MuxSource(HttpSource):
    platform = "mux"
    default_base_url = "https://api.mux.com"
    documented_rate_per_s = 5.0
    requests_per_video = 3  # the asset read, master access asked for; once prepared, the asset read again

    def auth_headers(self, creds: Mapping) -> dict[str, str]:
        return basic_auth(json.dumps(dict(creds)))

    @property
    def stream_url(self) -> str:
        return STREAM if self.base_url == self.default_base_url else self.base_url + "/_stream"

    def page(self, cursor: str | None, since: float | None = None, tracks: bool = True) -> Page:
        params = {"limit": str(PAGE_SIZE), **({"cursor": cursor} if cursor else {})}
        body = mapping(self.read("GET", ASSETS, "the asset list", gone_ok=False, params=params))
        page = Page()
        older_seen = self.take(page, body.get("data"), lambda asset: epoch_of(asset.get("created_at")), since, tracks)
        following = text(body.get("next_cursor"))
        if following and following != cursor and not older_seen:
            page.cursor = following
        return page

    def entry(self, asset: Mapping, tracks: bool):
        aid = text(asset.get("id"))
        if not aid or not aid.isalnum():
            return None
        ref = self.ref(aid)
        meta = mapping(asset.get("meta"))
        reason = why_unfetchable(asset)
        if reason:
            return unfetchable(self.platform, aid, ref, reason, meta.get("title"))
        found = []
        for track in entries(asset.get("tracks")) if tracks else []:
            track = mapping(track)
            if track.get("type") != "text" or track.get("status") != "ready" or not text(track.get("id")):
                continue
            kind = "captions" if track.get("closed_captions") is True else "subtitles"
            found.append(
                TrackInfo(
                    self.ref(aid, "tracks", track["id"]),
                    track.get("language_code"),
                    kind,
                    track.get("name"),
                    closed_captions=track.get("closed_captions") is True,
                    format="vtt",
                )
            )
        extra = {k: meta[k] for k in ("creator_id", "external_id") if isinstance(meta.get(k), str)}
        if isinstance(asset.get("passthrough"), str):
            extra["passthrough"] = asset["passthrough"]
        return make_row(
            self.platform,
            aid,
            ref,
            title=meta.get("title"),
            created_at=asset.get("created_at"),
            duration_s=asset.get("duration"),
            privacy=privacy_of(asset),
            tracks=found,
            metadata=extra,
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
            return Resolution.ready(master["url"])
        if status == "errored":
            return Resolution.unfetchable("Mux could not prepare the master file (master errored)")
        if status == "preparing" and asset.get("master_access") == "temporary":
            return Resolution.preparing(PREPARING, PREPARE_POLL_S)
        path = f"{ASSETS}/{quote(ref.video_id)}/master-access"
        if self.read("PUT", path, "master access", json_body={"master_access": "temporary"}) is None:
            return Resolution.unfetchable(gone("Mux"))
        return Resolution.preparing(PREPARING, PREPARE_POLL_S)

    def _track(self, asset: Mapping, ref: SourceRef) -> Resolution:
        if ref.kind != "tracks":
            return Resolution.unfetchable(f"not a Mux track reference: {ref}")
        track = next((mapping(t) for t in entries(asset.get("tracks")) if mapping(t).get("id") == ref.item), None)
        if track is None:
            return Resolution.unfetchable("the text track is no longer on the asset")
        playback = public_playback_id(asset)
        if playback is None:
            return Resolution.unfetchable(
                "the track is served to signed playback only (the asset has no public playback id)"
            )
        return Resolution.ready(f"{self.stream_url}/{quote(playback)}/text/{quote(ref.item or '')}.vtt")
