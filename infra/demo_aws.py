"""The demo's aws target (`infra/demo --provider aws`, issue 44): the real sample video its rows point at, and the
summary's lines on what the target holds, read from the MediaConvert simulator's jobs instead of a provider
simulator's counters.

MediaConvert really transcodes what it is handed, so the sample rows (no --from) point at a real 2-second video
served by the demo's file server (the one the caption files come from, whose exact origin the stack's
TrackFetchTestOrigins already names: the archive worker fetches through the same guard), and the rows the sample
means to fail (an unsupported `.wmv`, a corrupt `.mp4`) at bytes that are no video: each is archived, then its job
ends in ERROR and the asset is rejected with MediaConvert's reason, as on AWS.

`migrator verify` reads each ready video's master and top media playlist through the edge (signed with the stack's
key where the row is private); `check_playback` goes further, as a viewer would: each private video's master must be
refused unsigned (403), and ffprobe must read a video stream from every rendition the master lists, through the
edge, with the stack's signed cookies where the row is private (a signed URL's query does not follow a playlist's
relative links; the cookies do). `variants_of`, `PlayTally` and its verdict are pure (tests/unit/test_localrun_aws.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import requests

from .captions import FileServer, body
from .localrun import LocalRun

# How long a signed check's policy lives, and ffprobe's own limit a video.
POLICY_TTL_S = 600
PROBE_TIMEOUT_S = 60
# What the sample's refused rows are served as: bytes no decoder reads.
NOT_A_VIDEO = b"this is not a video file\n" * 64


def serve_sample_media(server: FileServer, video: Path, paths: list[str]) -> None:
    """Every sample row's media path on `server`: the real video, or NOT_A_VIDEO for the rows meant to fail."""
    real = body(video.read_bytes(), headers={"Content-Type": "video/mp4"})
    broken = body(NOT_A_VIDEO, headers={"Content-Type": "application/octet-stream"})
    for path in paths:
        server.route(path, broken if "/unsupported-" in path or "/corrupt-" in path else real)


def provider_lines(run: LocalRun) -> tuple[list[str], int]:
    """The summary's lines on the target's side and its duplicates: for aws, the MediaConvert jobs (an asset
    with more than one job is a duplicate transcode); for any other target, the provider simulator's counters."""
    if run.mediaconvert is None:
        stats = run.simulator.stats()
        lines = [
            f"429s absorbed         {stats['throttled']}",
            f"provider videos       {stats['videos']} (duplicate videos: {stats['duplicate_videos']})",
        ]
        return lines, stats["duplicate_videos"]
    tally = run.mediaconvert.stats()
    lines = [
        "429s absorbed         n/a: the aws target is paced by its queue's concurrency (ProviderMaxInFlight), and"
        " the local MediaConvert throttles nothing unless told to",
        f"MediaConvert jobs     {tally.line()}",
    ]
    if tally.not_ours:
        lines.append(f"  {tally.not_ours} jobs name no asset: not this stack's")
    return lines, tally.duplicate_assets


def variants_of(master: str) -> list[str]:
    """A master playlist's variant URIs, each the line after its #EXT-X-STREAM-INF (RFC 8216 4.3.4.2)."""
    lines = [line.strip() for line in master.splitlines()]
    return [lines[i + 1] for i, line in enumerate(lines[:-1]) if line.startswith("#EXT-X-STREAM-INF")]


@dataclass
class PlayTally:
    """What the playback check found: videos checked and played (every rendition read), private ones refused
    unsigned, and each problem named (its asset, what failed)."""

    checked: int = 0
    played: int = 0
    private: int = 0
    refused_unsigned: int = 0
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        line = f"{self.played} of {self.checked} played, every rendition read by ffprobe through the CloudFront edge"
        return line + f"; private refused unsigned: {self.refused_unsigned} of {self.private}"

    def problem(self) -> str | None:
        """Why playback is not OK (the first reason), or None."""
        if self.refused_unsigned < self.private:
            return f"{self.private - self.refused_unsigned} private videos served unsigned by CloudFront"
        if self.played < self.checked:
            return f"{self.checked - self.played} ready videos not playable through CloudFront (above)"
        return None


def check_playback(run: LocalRun, ready: Sequence[Mapping], threads: int = 4) -> PlayTally:
    """Each ready video played as a viewer would, through the edge: see the module's docstring."""
    from migrator.cloudfront_key_plan import signing_key_from_secret

    secret = run.aws("secretsmanager").get_secret_value(SecretId=run.outputs["PlaybackKeySecretArn"])
    key = signing_key_from_secret(secret["SecretString"])
    tally = PlayTally()

    def one(item: Mapping) -> tuple[bool, bool | None, str | None]:
        """(played, refused unsigned: None for a public video, the problem)."""
        from migrator.cloudfront_signing import CustomPolicy, custom_cookies

        asset = str(item.get("asset_id"))
        found = item.get("playback_info")
        playback: Mapping = found if isinstance(found, Mapping) else {}
        hls = playback.get("hls")
        if run.edge is None or not isinstance(hls, str) or not hls.startswith(run.edge.url):
            return False, None, f"{asset}: no playback under the edge ({hls!r})"
        refused = None
        cookies: dict[str, str] = {}
        if playback.get("policy") == "signed":
            unsigned = requests.get(hls, timeout=30)
            refused = unsigned.status_code == 403
            folder = hls.rsplit("/", 1)[0] + "/"
            cookies = custom_cookies(key, CustomPolicy(folder + "*", int(time.time() + POLICY_TTL_S)))
        master = requests.get(hls, cookies=cookies, timeout=30)
        if master.status_code != 200:
            return False, refused, f"{asset}: the master playlist answered {master.status_code}"
        variants = variants_of(master.text)
        videos = probe_videos(hls, cookies)
        if not variants or videos < len(variants):
            return False, refused, f"{asset}: ffprobe read {videos} video streams of {len(variants)} renditions"
        return True, refused, None

    with ThreadPoolExecutor(threads) as pool:
        for item, (played, refused, problem) in zip(ready, pool.map(one, ready), strict=True):
            tally.checked += 1
            tally.played += played
            if refused is not None:
                tally.private += 1
                tally.refused_unsigned += refused
                if not refused:
                    tally.problems.append(f"{item.get('asset_id')}: served unsigned")
            if problem:
                tally.problems.append(problem)
    return tally


def probe_videos(url: str, cookies: Mapping[str, str]) -> int:
    """How many video streams ffprobe reads from an HLS master (one a rendition it could open), with `cookies`
    sent on every request (the HLS demuxer passes its `headers` on to each playlist and segment it opens)."""
    ffprobe = shutil.which("ffprobe")
    if not ffprobe:
        raise RuntimeError("the aws demo's playback check needs ffprobe (infra/bootstrap.sh installs it)")
    argv = [ffprobe, "-v", "error", "-print_format", "json", "-show_entries", "stream=codec_type"]
    if cookies:
        argv += ["-headers", "Cookie: " + "; ".join(f"{name}={value}" for name, value in cookies.items()) + "\r\n"]
    done = subprocess.run([*argv, url], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    if done.returncode != 0:
        return 0
    streams = json.loads(done.stdout or "{}").get("streams") or []
    return sum(1 for stream in streams if stream.get("codec_type") == "video")
