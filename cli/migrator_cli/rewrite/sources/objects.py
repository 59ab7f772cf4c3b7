"""Object-storage URLs of the file sources (S3, Google Cloud Storage, Azure Blob) and Bunny Stream's embeds (pure;
registered at import).

A bucket's object is named as the map keys the video its store's source listed (the key percent-decoded from the
URL's path): S3's rows carry the object's URL, `s3://<bucket>/<key>` (sources/s3.py), and the map keys a file
source by that URL; GCS's and Azure's rows are source references (`gcs://<bucket>/<object>`, sources/gcs.py;
`azure://<account>/<container>/<blob>`, sources/azure.py), keyed like every referenced platform's by the row's
source id, the reference's path: `<bucket>/<object>` and `<account>/<container>/<blob>`. Documents:
- S3, https://docs.aws.amazon.com/AmazonS3/latest/userguide/VirtualHosting.html: virtual-hosted
  `https://bucket-name.s3.region-code.amazonaws.com/key-name`, the legacy global `bucket.s3.amazonaws.com` and
  `s3-<region>` hosts, and path-style `https://s3.region-code.amazonaws.com/bucket-name/key-name`;
- GCS, https://cloud.google.com/storage/docs/request-endpoints: `https://storage.googleapis.com/BUCKET_NAME/
  OBJECT_NAME` and `https://BUCKET_NAME.storage.googleapis.com/OBJECT_NAME`;
- Azure, https://learn.microsoft.com/en-us/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata:
  `https://myaccount.blob.core.windows.net/mycontainer/myblob`.
Only objects named as videos are forms: a key ending in one of the video extensions the S3 source takes (the same
list, checked by the tests). The map holds videos only, so an image, a script or a stylesheet in the same bucket
would only ever be reported "not in the map"; a video stored without such an extension (the GCS and Azure sources
also take one by its Content-Type) cannot be told from a URL and is not found. A signed URL (`X-Amz-Signature`,
`Signature`, `X-Goog-Signature`, Azure's SAS `sig`) is private.

Dropbox shared links (`https://www.dropbox.com/s/<key>/<name>`, `/scl/fi/<id>/<name>?rlkey=`) name no file id, the
`dropbox://id:...` the Dropbox source names a video by, and no path either: which file one is cannot be told from
the link, so no form is registered (a URL-list source's own links are matched by the engine, not here).

Bunny Stream is not a source platform of the project: its embeds are found as platform "bunny", `video_id` the
video's GUID and `detail` the whole URL, so only a URL-list source that carried them puts them in the map
(https://docs.bunny.net/docs/stream-embedding-videos and https://docs.bunny.net/docs/video-storage-structure:
`iframe.mediadelivery.net/embed/{library}/{video}` (now also `player.mediadelivery.net`), `/play/` and
`video.bunnycdn.com/play/...`, `{pull_zone}.b-cdn.net/{video}/playlist.m3u8`, `/play_{height}p.mp4`, its thumbnail
and preview images). Its player parameters autoplay, muted, loop, t (start) and captions are read as ours; a
token (`token`, `expires`) marks it private.
"""

from __future__ import annotations

import html
import re
from dataclasses import replace
from urllib.parse import quote, unquote

from .. import forms, markup
from ..model import AUTOPLAY, CAPTIONS, HLS, IFRAME, LOOP, MP4, MUTED, PAGE, PLAYER_URL, START, THUMBNAIL, Embed, Form
from ._pieces import SCHEME, iframe_pattern, params_of, read_params, url_pattern

# The S3 source's VIDEO_EXTENSIONS (functions/migrator/sources/s3.py), kept here so the CLI imports no source.
VIDEO_EXTENSIONS = ("mp4", "mov", "m4v", "mkv", "webm", "avi", "mpg", "mpeg", "ts", "mts", "m2ts", "mxf", "flv",
                    "wmv", "3gp", "ogv")  # fmt: skip
# A key: path characters (no query, fragment, quote, space, bracket or parenthesis), ending in a video extension.
KEY = r"(?P<key>[^\s\"'<>()\[\]\\?#]{0,1024}?\.(?i:" + "|".join(VIDEO_EXTENSIONS) + r"))"
S3_BUCKET = r"(?P<bucket>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])"
S3_REGION = r"(?:[.-](?:dualstack\.)?(?!amazonaws\.)[a-z0-9-]{1,40})?"  # .us-east-1, -us-west-2, -accelerate, none
S3_VIRTUAL = SCHEME + r"(?i:" + S3_BUCKET + r"\.s3" + S3_REGION + r"\.amazonaws\.com)/" + KEY
S3_PATH = SCHEME + r"(?i:s3" + S3_REGION + r"\.amazonaws\.com)/" + S3_BUCKET + r"/" + KEY
GCS_BUCKET = r"(?P<bucket>[a-z0-9][a-z0-9._-]{1,220}[a-z0-9])"
GCS_PATH = SCHEME + r"(?i:storage\.googleapis\.com)/" + GCS_BUCKET + r"/" + KEY
GCS_VIRTUAL = SCHEME + r"(?i:" + GCS_BUCKET + r"\.storage\.googleapis\.com)/" + KEY
AZURE = (
    SCHEME + r"(?i:(?P<account>[a-z0-9]{3,24})\.blob\.core\.windows\.net)/"
    r"(?P<container>[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])?)/" + KEY
)
SIGNATURES = ("x-amz-signature", "signature", "x-goog-signature", "sig")

GUID = r"(?P<id>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
BUNNY_PLAYER = r"(?i:(?:iframe|player)\.mediadelivery\.net)"
BUNNY_EMBED = SCHEME + BUNNY_PLAYER + r"/embed/(?P<library>\d{1,12})/" + GUID
BUNNY_PLAY = SCHEME + r"(?:" + BUNNY_PLAYER + r"|(?i:video\.bunnycdn\.com))/play/(?P<library>\d{1,12})/" + GUID
BUNNY_ZONE = SCHEME + r"(?i:[a-z0-9][a-z0-9-]{0,62}\.b-cdn\.net)/" + GUID
BUNNY_OPTIONS = {"autoplay": AUTOPLAY, "muted": MUTED, "loop": LOOP, "t": START, "captions": CAPTIONS}

S3_DOC = "https://docs.aws.amazon.com/AmazonS3/latest/userguide/VirtualHosting.html"
GCS_DOC = "https://cloud.google.com/storage/docs/request-endpoints"
AZURE_DOC = (
    "https://learn.microsoft.com/en-us/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata"
)
BUNNY_EMBED_DOC = "https://docs.bunny.net/docs/stream-embedding-videos"
BUNNY_STORAGE_DOC = "https://docs.bunny.net/docs/video-storage-structure"


def _object_reader(form: str, reference):
    """An object URL's embed (kind MP4: the file itself), named by `reference(groups)`, the source's reference."""

    def read(match: re.Match[str]) -> Embed | None:
        key = unquote(html.unescape(match.group("key")))
        if not key or key.startswith("/"):
            return None  # an empty or doubled path names no object a source lists
        params = {name.lower() for name in markup.query(match.group("src"))}
        video_id = reference({**match.groupdict(), "key": key})
        platform = form.split(".", 1)[0]
        return Embed(match.start(), match.end(), form, platform, MP4, video_id, private=bool(params & set(SIGNATURES)))

    return read


def _bunny(form: str, kind: str):
    def read(match: re.Match[str]) -> Embed | None:
        url = match.group("src")
        params = params_of(url)
        options, unknown = read_params(params, BUNNY_OPTIONS if kind in (IFRAME, PLAYER_URL, PAGE) else {},
                                       skip=("token", "expires"))  # fmt: skip
        return Embed(match.start(), match.end(), form, "bunny", kind, match.group("id").lower(), options, unknown,
                     private="token" in params, detail=html.unescape(url))  # fmt: skip

    return read


def _bunny_iframe(match: re.Match[str]) -> Embed | None:
    embed = _bunny("bunny.player-iframe", IFRAME)(match)
    return (
        None if embed is None else replace(embed, attributes=markup.kept_attributes(markup.attributes(match.group(0))))
    )


def _split(reference: str, parts: int) -> list[str]:
    """`[scheme://]a/b/rest` as [a, b, rest], the key percent-encoded as a URL's path (for the samples, which take a
    reference as their id)."""
    found = reference.split("://", 1)[-1].split("/", parts - 1)
    return [*found[:-1], quote(found[-1], safe="/")]


BUNNY_SAMPLE_ZONE = "https://vz-a1b2c3d4-e5f.b-cdn.net"

forms.register(
    Form(
        "s3.object-url",
        "s3",
        MP4,
        url_pattern(S3_VIRTUAL),
        _object_reader("s3.object-url", lambda g: f"s3://{g['bucket'].lower()}/{g['key']}"),
        S3_DOC,
        lambda ref: "https://{}.s3.us-west-2.amazonaws.com/{}".format(*_split(ref, 2)),
        ".amazonaws.com/",
    ),
    Form(
        "s3.path-url",
        "s3",
        MP4,
        url_pattern(S3_PATH),
        _object_reader("s3.path-url", lambda g: f"s3://{g['bucket'].lower()}/{g['key']}"),
        S3_DOC,
        lambda ref: "https://s3.us-west-2.amazonaws.com/{}/{}".format(*_split(ref, 2)),
        ".amazonaws.com/",
    ),
    Form(
        "gcs.object-url",
        "gcs",
        MP4,
        url_pattern(GCS_PATH),
        _object_reader("gcs.object-url", lambda g: f"{g['bucket'].lower()}/{g['key']}"),
        GCS_DOC,
        lambda ref: "https://storage.googleapis.com/{}/{}".format(*_split(ref, 2)),
        "storage.googleapis.com/",
    ),
    Form(
        "gcs.virtual-url",
        "gcs",
        MP4,
        url_pattern(GCS_VIRTUAL),
        _object_reader("gcs.virtual-url", lambda g: f"{g['bucket'].lower()}/{g['key']}"),
        GCS_DOC,
        lambda ref: "https://{}.storage.googleapis.com/{}".format(*_split(ref, 2)),
        ".storage.googleapis.com/",
    ),
    Form(
        "azure.blob-url",
        "azure",
        MP4,
        url_pattern(AZURE),
        _object_reader("azure.blob-url", lambda g: f"{g['account'].lower()}/{g['container'].lower()}/{g['key']}"),
        AZURE_DOC,
        lambda ref: "https://{}.blob.core.windows.net/{}/{}".format(*_split(ref, 3)),
        ".blob.core.windows.net/",
    ),
    Form(
        "bunny.player-iframe",
        "bunny",
        IFRAME,
        iframe_pattern(BUNNY_EMBED),
        _bunny_iframe,
        BUNNY_EMBED_DOC,
        lambda guid: (
            f'<iframe src="https://iframe.mediadelivery.net/embed/759/{guid}?autoplay=true" loading="lazy" '
            'style="border: none; position: absolute; top: 0; height: 100%; width: 100%;" '
            'allow="accelerometer; gyroscope; autoplay; encrypted-media; picture-in-picture;" '
            'allowfullscreen="true"></iframe>'
        ),
        "mediadelivery.net/embed/",
    ),
    Form(
        "bunny.player-url",
        "bunny",
        PLAYER_URL,
        url_pattern(BUNNY_EMBED),
        _bunny("bunny.player-url", PLAYER_URL),
        BUNNY_EMBED_DOC,
        lambda guid: f"https://iframe.mediadelivery.net/embed/759/{guid}?autoplay=true&loop=false&muted=false",
        "mediadelivery.net/embed/",
    ),
    Form(
        "bunny.play-page",
        "bunny",
        PAGE,
        url_pattern(BUNNY_PLAY),
        _bunny("bunny.play-page", PAGE),
        BUNNY_STORAGE_DOC,
        lambda guid: f"https://video.bunnycdn.com/play/759/{guid}",
        "/play/",
    ),
    Form(
        "bunny.hls",
        "bunny",
        HLS,
        url_pattern(BUNNY_ZONE + r"/playlist\.m3u8"),
        _bunny("bunny.hls", HLS),
        BUNNY_STORAGE_DOC,
        lambda guid: f"{BUNNY_SAMPLE_ZONE}/{guid}/playlist.m3u8",
        ".b-cdn.net/",
    ),
    Form(
        "bunny.mp4",
        "bunny",
        MP4,
        url_pattern(BUNNY_ZONE + r"/play_\d{3,4}p\.mp4"),
        _bunny("bunny.mp4", MP4),
        BUNNY_STORAGE_DOC,
        lambda guid: f"{BUNNY_SAMPLE_ZONE}/{guid}/play_720p.mp4",
        ".b-cdn.net/",
    ),
    Form(
        "bunny.thumbnail",
        "bunny",
        THUMBNAIL,
        url_pattern(BUNNY_ZONE + r"/(?:thumbnail(?:_[A-Za-z0-9]{1,40})?\.jpg|preview\.(?:webp|gif))"),
        _bunny("bunny.thumbnail", THUMBNAIL),
        BUNNY_STORAGE_DOC,
        lambda guid: f"{BUNNY_SAMPLE_ZONE}/{guid}/thumbnail.jpg",
        ".b-cdn.net/",
    ),
)
