"""The answers each target adapter (functions/migrator/providers/) reads, as it reads them (see shapes/__init__.py).

The reads a migration makes of a target: the cheap authenticated read doctor's stack check makes (`check`), the
library's listing (the audit, and the lost-create lookup's `find`), one video's read (the poll), its text tracks
(the tracks worker's look before an upload) and where the platform keeps them, its webhook subscriptions; and what
a viewer sees (issue 42, providers/base.py "--- extras"): the looks the tracks worker makes before it sets a
thumbnail (`thumbnail_state`) or chapters (`chapters_of`), and the lookup before a collection is made
(`find_collection`, Vimeo's `_named`).
"""

from __future__ import annotations

from .checker import BOOL, INT, NUM, STR, arr, either, nullable, obj, one_of
from .declared import Declared, Platform
from .sources import (
    APIVIDEO_STATUS,
    APIVIDEO_VIDEO,
    JW_MEDIA,
    JW_TRACKS,
    MUX_ASSET,
    PAGINATION,
    STREAM,
    STREAM_VIDEO,
    TEXT,
)

ID = r"[^/]+"

# --- the generic contract (providers/generic.py, the seed's contract and this project's playback object) ---------

GENERIC_VIDEO = obj(
    {"id": either("string", "integer"), "status": STR},
    created_at=either("string", "number"),
    duration=nullable(NUM),
    metadata=obj(migration_ref=STR, privacy=STR),
    error=either("string", "object", "null"),
    playback=obj(policy=STR, hls=STR, player=STR, thumbnail=STR, width=INT, height=INT),
)
GENERIC = Platform(
    "generic",
    "target",
    (
        Declared(
            "the video list",
            "GET",
            r"/videos",
            obj({"data": arr(GENERIC_VIDEO)}, next_cursor=TEXT),
            "GenericProvider.videos, .find, .check",
        ),
        Declared("the video", "GET", rf"/videos/{ID}", GENERIC_VIDEO, "generic.read_video (bare or in data)"),
    ),
)

# --- Mux (providers/mux.py) ---------------------------------------------------------------------------------------

# A track's `passthrough` too: `_remote_track` reads it (the chapters track the worker made: mux.CHAPTERS_REF).
_MUX_TRACK = MUX_ASSET["properties"]["tracks"]["items"]
MUX_TARGET_ASSET = {
    **MUX_ASSET,
    "properties": {
        **MUX_ASSET["properties"],
        "tracks": arr({**_MUX_TRACK, "properties": {**_MUX_TRACK["properties"], "passthrough": STR}}),
    },
}
MUX = Platform(
    "mux",
    "target",
    (
        Declared(
            "the asset list",
            "GET",
            r"/video/v1/assets",
            obj({"data": arr(MUX_TARGET_ASSET)}, next_cursor=TEXT),
            "MuxProvider.videos, .find, .check",
        ),
        Declared(
            "the asset",
            "GET",
            rf"/video/v1/assets/{ID}",
            obj({"data": MUX_TARGET_ASSET}),
            "mux.read_asset, MuxProvider.track_list, .chapters_of",
        ),
    ),
)

# --- Cloudflare Stream (providers/cloudflare.py) ------------------------------------------------------------------

STREAM_TARGET_VIDEO = {
    **STREAM_VIDEO,
    "properties": {**STREAM_VIDEO["properties"], "meta": obj(name=STR, migration_ref=STR)},
}
CLOUDFLARE = Platform(
    "cloudflare",
    "target",
    (
        Declared(
            "the video list",
            "GET",
            STREAM,
            obj({"result": arr(STREAM_TARGET_VIDEO)}),
            "CloudflareProvider.videos, .find, .check",
        ),
        # Before the video: `.../stream/webhook` is no video's path.
        Declared(
            "the account's webhook",
            "GET",
            rf"{STREAM}/webhook",
            obj({"result": obj(notificationUrl=STR, notification_url=STR)}),
            "CloudflareProvider.webhook_target",
            statuses=(200,),
        ),
        Declared(
            "the video", "GET", rf"{STREAM}/{ID}", obj({"result": STREAM_TARGET_VIDEO}), "cloudflare.read_stream_video"
        ),
        Declared(
            "the captions",
            "GET",
            rf"{STREAM}/{ID}/captions",
            obj({"result": arr(obj({"language": STR}, generated=BOOL, status=one_of("ready", "inprogress", "error")))}),
            "CloudflareProvider.track_list",
        ),
    ),
)

# --- api.video (providers/apivideo.py) ------------------------------------------------------------------------------

APIVIDEO = Platform(
    "apivideo",
    "target",
    (
        Declared(
            "the video list",
            "GET",
            r"/videos",
            obj({"data": arr(APIVIDEO_VIDEO), "pagination": PAGINATION}),
            "ApiVideoProvider.videos, .find, .check",
        ),
        Declared(
            "the video",
            "GET",
            rf"/videos/{ID}",
            APIVIDEO_VIDEO,
            "apivideo.read_listed, .signed_playback, ApiVideoProvider.thumbnail_state (metadata: our mark)",
        ),
        Declared("the video's status", "GET", rf"/videos/{ID}/status", APIVIDEO_STATUS, "apivideo.read_status"),
        Declared(
            "the captions",
            "GET",
            rf"/videos/{ID}/captions",
            obj({"data": arr(obj({"srclang": STR}, uri=STR))}),
            "ApiVideoProvider.track_list",
        ),
        # One chapters file a language; the look counts those of the language asked (one page: a video has a few).
        Declared(
            "the chapters",
            "GET",
            rf"/videos/{ID}/chapters",
            obj({"data": arr(obj({"language": STR}))}),
            "ApiVideoProvider.chapters_of",
        ),
        Declared(
            "the webhooks",
            "GET",
            r"/webhooks",
            obj({"data": arr(obj({"url": STR}, webhookId=STR, events=arr(STR))), "pagination": PAGINATION}),
            "ApiVideoProvider.webhook_urls",
        ),
    ),
)

# --- Bunny Stream (providers/bunny.py, bunny_formats.py) ------------------------------------------------------------

BUNNY_VIDEO = obj(
    {"guid": STR, "status": one_of(0, 1, 2, 3, 4, 5, 6, 7, 8, kind="integer")},
    title=TEXT,
    dateUploaded=STR,
    length=NUM,
    width=INT,
    height=INT,
    hasMP4Fallback=BOOL,
    metaTags=nullable(arr(obj(property=TEXT, value=TEXT))),
    transcodingMessages=nullable(arr(obj(level=INT, message=TEXT))),
    captions=nullable(arr(obj({"srclang": STR}, label=TEXT))),
    # What a viewer sees (bunny.py): the custom thumbnail's file name (bunny_formats.custom_thumbnail), the chapters
    # counted by the look.
    thumbnailFileName=TEXT,
    chapters=nullable(arr()),
)
LIBRARY = r"/library/\d+"
BUNNY = Platform(
    "bunny",
    "target",
    (
        Declared(
            "the video list",
            "GET",
            rf"{LIBRARY}/videos",
            obj({"items": arr(BUNNY_VIDEO), "totalItems": INT}, itemsPerPage=INT, currentPage=INT),
            "BunnyProvider.videos, .find, .check",
        ),
        Declared(
            "the video",
            "GET",
            rf"{LIBRARY}/videos/{ID}",
            BUNNY_VIDEO,
            "bunny_formats.read_video, BunnyProvider.track_list, .thumbnail_state, .chapters_of",
        ),
        Declared(
            "the video's play data",
            "GET",
            rf"{LIBRARY}/videos/{ID}/play",
            obj(
                tokenAuthEnabled=BOOL,
                videoPlaylistUrl=TEXT,
                thumbnailUrl=TEXT,
                previewUrl=TEXT,
                fallbackUrl=TEXT,
                enableMP4Fallback=BOOL,
            ),
            "bunny_formats.read_play",
        ),
        # Collection_List, searched by name: the lookup before a collection is made (Bunny keeps no reference of ours).
        Declared(
            "the collections",
            "GET",
            rf"{LIBRARY}/collections",
            obj({"items": arr(obj({"guid": STR}, name=TEXT)), "totalItems": INT}, itemsPerPage=INT),
            "BunnyProvider.find_collection (bunny_formats.list_page)",
        ),
    ),
)

# --- JW Player (providers/jwplayer.py) ------------------------------------------------------------------------------

JW_MEDIA_PATH = r"/v2/sites/[^/]+/media"
JW_THUMBNAIL = obj(
    {"id": STR},
    source_type=STR,
    thumbnail_type=STR,
    status=STR,
    relationships=obj(media=arr(obj({"id": STR}, is_poster=BOOL))),
)
JWPLAYER = Platform(
    "jwplayer",
    "target",
    (
        Declared(
            "the media list",
            "GET",
            rf"{JW_MEDIA_PATH}/?",
            obj({"media": arr(JW_MEDIA)}, total=INT, page=INT, page_length=INT),
            "JwPlayerProvider.videos, .find, .check",
        ),
        Declared("the media", "GET", rf"{JW_MEDIA_PATH}/{ID}/?", JW_MEDIA, "jwplayer.read_media"),
        Declared(
            "the text tracks",
            "GET",
            rf"{JW_MEDIA_PATH}/{ID}/text_tracks/?",
            {**JW_TRACKS, "properties": {**JW_TRACKS["properties"], "total": INT}},
            "JwPlayerProvider.track_list, .chapters_of (jwplayer_extras.chapters_tracks)",
        ),
        # The media's thumbnails (`q=media_id:<id>`): the poster look. The list's key is read as `thumbnails` (peer
        # code) or `thumbnail` (jwplatform-go's struct tag), so neither is required.
        Declared(
            "the thumbnails",
            "GET",
            r"/v2/sites/[^/]+/thumbnails/?",
            obj(thumbnails=arr(JW_THUMBNAIL), thumbnail=arr(JW_THUMBNAIL)),
            "JwExtras.thumbnail_state (jwplayer_extras.poster_of)",
        ),
        # The property's playlists, paged: the lookup before a manual playlist is made (our reference, else the title).
        Declared(
            "the playlists",
            "GET",
            r"/v2/sites/[^/]+/playlists/?",
            obj(
                {
                    "playlists": arr(
                        obj(
                            {"id": STR},
                            playlist_type=TEXT,
                            metadata=obj(title=TEXT, playlist_type=TEXT, custom_params=nullable(obj())),
                        )
                    )
                },
                total=INT,
                page_length=INT,
            ),
            "JwExtras.find_collection",
        ),
        Declared(
            "the webhooks",
            "GET",
            r"/v2/webhooks/?",
            obj({"webhooks": arr(obj({"id": STR, "metadata": obj({"webhook_url": STR}, events=arr(STR))}))}),
            "JwPlayerProvider.webhook_urls",
        ),
    ),
)

# --- Vimeo (providers/vimeo.py) ---------------------------------------------------------------------------------------

VIMEO_TARGET_VIDEO = obj(
    {"uri": STR},
    description=TEXT,
    created_time=STR,
    duration=NUM,
    privacy=obj(view=STR),
    status=STR,
    upload=obj(status=one_of("complete", "error", "in_progress")),
    transcode=nullable(obj(status=one_of("complete", "error", "in_progress"))),
)
# A page of folders or showcases found by name (`fields=uri,name`; vimeo_extras.named); the next page where `paging`
# says one (the pages of the chapters alike).
VIMEO_NAMED = obj({"data": arr(obj({"uri": STR}, name=TEXT))}, paging=obj(next=TEXT))
VIMEO = Platform(
    "vimeo",
    "target",
    (
        Declared(
            "the account",
            "GET",
            r"/me",
            obj({"uri": STR}, account=STR, upload_quota=obj()),
            "VimeoProvider.check, the plan read",
        ),
        Declared(
            "the video list",
            "GET",
            r"/me/videos",
            obj({"data": arr(VIMEO_TARGET_VIDEO), "paging": obj(next=TEXT)}, total=INT),
            "VimeoProvider.videos, .find",
        ),
        Declared("the video", "GET", rf"/videos/{ID}", VIMEO_TARGET_VIDEO, "vimeo.read_video"),
        Declared(
            "the text tracks",
            "GET",
            rf"/videos/{ID}/texttracks",
            obj({"data": arr(obj({"uri": STR}, active=BOOL, type=STR, language=TEXT, name=TEXT))}),
            "VimeoProvider._tracks",
        ),
        # What a viewer sees (vimeo_extras.py): the pictures (the thumbnail's look), the chapters (their look and
        # each write's list), and the folders and showcases a name's lookup reads before one is made.
        Declared(
            "the pictures",
            "GET",
            rf"/videos/{ID}/pictures",
            obj({"data": arr(obj({"uri": STR}, active=BOOL, type=STR))}),
            "VimeoExtras.thumbnail_state (vimeo_extras.read_picture)",
        ),
        Declared(
            "the chapters",
            "GET",
            rf"/videos/{ID}/chapters",
            obj({"data": arr(obj({"uri": STR, "timecode": NUM}, title=TEXT))}, paging=obj(next=TEXT)),
            "VimeoExtras.chapters_of (vimeo_extras.read_chapter)",
        ),
        Declared(
            "the folders",
            "GET",
            r"/me/projects",
            VIMEO_NAMED,
            "VimeoExtras._named (create_collection's lookup by name)",
        ),
        Declared(
            "the showcases",
            "GET",
            r"/me/albums",
            VIMEO_NAMED,
            "VimeoExtras._named (create_collection's lookup by name)",
        ),
    ),
)

# --- the aws target (providers/aws.py): MediaConvert through boto3, each call named by its operation -------------
# The API reference's Job (https://docs.aws.amazon.com/mediaconvert/latest/apireference/jobs-id.html), as boto3 reads
# it (PascalCase; a timestamp as ISO text here, a datetime in boto3's hands).

AWS_JOB = obj(
    {"Id": STR, "Status": one_of("SUBMITTED", "PROGRESSING", "COMPLETE", "CANCELED", "ERROR")},
    UserMetadata=obj(),
    CreatedAt=STR,
    ErrorMessage=STR,
    ErrorCode=INT,
    Settings=obj(OutputGroups=arr(obj(OutputGroupSettings=obj(HlsGroupSettings=obj(Destination=STR))))),
    OutputGroupDetails=arr(
        obj(OutputDetails=arr(obj(DurationInMs=INT, VideoDetails=obj(WidthInPx=INT, HeightInPx=INT))))
    ),
)
AWS = Platform(
    "aws",
    "target",
    (
        Declared(
            "the queue's jobs", "AWS", r"ListJobs", obj({"Jobs": arr(AWS_JOB)}, NextToken=STR), "AwsProvider.find"
        ),
        Declared("one job", "AWS", r"GetJob", obj({"Job": AWS_JOB}), "AwsProvider.video_of"),
    ),
)

TARGETS: dict[str, Platform] = {p.name: p for p in (GENERIC, MUX, CLOUDFLARE, APIVIDEO, BUNNY, JWPLAYER, VIMEO, AWS)}
