"""The aws target (the owner's MediaConvert output behind CloudFront): HLS and thumbnail where the map has them, an
MP4 only where the stack writes one, and no player: an iframe only where the map names a player URL (pure).

Facts (docs/providers.md "aws"): the job writes `{public|signed}/{asset id}/index.m3u8`, the poster beside it, and
with `AwsMp4` a `video.mp4` (say so with `--target-setting mp4=true`); a `signed/` video plays only with a
CloudFront signed URL, its query `Policy`, `Signature` and `Key-Pair-Id`
(https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/private-content-creating-signed-url-custom-policy.html),
each marked here.
"""

from __future__ import annotations

from .. import markup
from ..model import HLS, MP4, THUMBNAIL, TOKEN_MARKER, Destination, Embed, NoEquivalent, Player
from .common import Params, Target, none, render, translate

CITE = "docs/providers.md#aws"
NAME = "the aws target"
SIGNED = {"Policy": TOKEN_MARKER, "Signature": TOKEN_MARKER, "Key-Pair-Id": TOKEN_MARKER}


def signed(url: str, destination: Destination) -> str:
    return markup.with_query(url, SIGNED) if destination.signed else url


def player(destination: Destination, params: Params) -> str:
    if not destination.player_url:
        raise NoEquivalent(f"{NAME} has no player: CloudFront serves the HLS alone and the map names no player URL")
    return signed(destination.player_url, destination)


def media(kind: str, destination: Destination) -> tuple[str, tuple[str, ...]]:
    if kind in (HLS, THUMBNAIL):
        url = destination.hls_url if kind == HLS else destination.thumbnail_url
        if not url:
            raise none(NAME, kind, "the map records none")
        return signed(url, destination), ()
    if kind == MP4:
        if destination.settings.get("mp4", "").lower() not in ("1", "true", "yes") or not destination.hls_url:
            raise none(NAME, kind, "the job writes video.mp4 only with AwsMp4 (--target-setting mp4=true)")
        folder = destination.hls_url.split("?", 1)[0].rsplit("/", 1)[0]
        return signed(f"{folder}/video.mp4", destination), ()
    raise none(NAME, kind, "MediaConvert's job here writes HLS (and an MP4 with AwsMp4) only")


def params(embed: Embed) -> Params:
    return translate(embed, {})


TARGET = Target(NAME, player, params, media)
PLAYER = Player("aws", lambda embed, destination, original: render(TARGET, embed, destination, original), CITE)
