"""The answers each source adapter (functions/migrator/sources/) reads, as it reads them (see shapes/__init__.py).

Each entry mirrors the adapter's reader named in `reads`: the keys it needs are required, the ones it reads where
present are optional with their types, and the values it branches on are enums. Object stores (Cloud Storage,
Azure Blob, S3) are in shapes/stores.py.
"""

from __future__ import annotations

from .checker import BOOL, INT, NUM, STR, any_of, arr, either, nullable, obj, one_of
from .declared import Declared, Platform

TEXT = nullable(STR)
ID = r"[^/]+"

# --- Vimeo (sources/vimeo.py; vimeo.json 3.4) ------------------------------------------------------------------

VIMEO_VIDEO = obj(
    {"uri": STR},
    name=TEXT,
    description=TEXT,
    tags=arr(obj(name=STR)),
    created_time=STR,
    modified_time=STR,
    duration=NUM,
    # privacy.view -> our privacy (vimeo.PRIVACY); a value not there is read as private, with a note.
    privacy=obj(view=one_of("anybody", "unlisted", "nobody", "password", "contacts", "users", "disable")),
    parent_folder=nullable(obj(name=STR, uri=STR)),
    # The legacy `status` and `transcode.status` (vimeo.why_unfetchable: WORKING, *_error, quota, unavailable).
    status=one_of(
        "available",
        "uploading",
        "transcode_starting",
        "transcoding",
        "transcoding_error",
        "uploading_error",
        "quota_exceeded",
        "total_cap_exceeded",
        "unavailable",
    ),
    transcode=nullable(obj(status=one_of("complete", "error", "in_progress"))),
    download=arr(obj({"link": STR}, quality=STR, rendition=STR, expires=TEXT, size=INT)),
    metadata=obj(connections=obj(texttracks=obj(total=INT))),
    # What a viewer sees first (vimeo_extras.py): the active picture, whether there are chapters, the release time.
    pictures=nullable(obj(uri=STR, active=BOOL, type=STR, default_picture=BOOL)),
    has_chapters=BOOL,
    release_time=TEXT,
)
VIMEO_PICTURE = obj(sizes=arr(obj({"link": STR}, width=NUM)), active=BOOL, type=STR, default_picture=BOOL)
# A collection's page: Vimeo's {total, paging, data} (the OpenAPI types some as the bare list, which is read too).
VIMEO_NEXT = {"paging": obj(next=TEXT)}
VIMEO_CHAPTER = obj(timecode=NUM, title=TEXT)
VIMEO = Platform(
    "vimeo",
    "source",
    (
        Declared(
            "the video list",
            "GET",
            r"/me/videos|/users/\d+/videos",
            obj({"data": arr(VIMEO_VIDEO), "paging": obj(next=TEXT)}, total=INT, page=INT, per_page=INT),
            "VimeoSource._window",
        ),
        Declared("the video", "GET", r"/videos/\d+", VIMEO_VIDEO, "VimeoSource.video, .resolve"),
        Declared(
            "the text tracks",
            "GET",
            r"/videos/\d+/texttracks",
            obj({"data": arr(obj({"uri": STR, "type": STR}, active=BOOL, language=TEXT, name=TEXT, link=TEXT))}),
            "VimeoSource._tracks",
        ),
        Declared(
            "a text track",
            "GET",
            r"/videos/\d+/texttracks/\d+",
            obj({"link": STR}, link_expires_time=TEXT),
            "VimeoSource._resolve_track",
        ),
        Declared("a picture", "GET", r"/videos/\d+/pictures/\d+", VIMEO_PICTURE, "VimeoSource._resolve_picture"),
        Declared(
            "the chapters",
            "GET",
            r"/videos/\d+/chapters",
            any_of(arr(VIMEO_CHAPTER), obj({"data": arr(VIMEO_CHAPTER)}, **VIMEO_NEXT)),
            "vimeo_extras.read_chapters",
        ),
        Declared(
            "the showcases",
            "GET",
            r"/me/albums|/users/\d+/albums",
            obj(
                {
                    "data": arr(
                        obj({"uri": STR}, name=STR, sort=STR, metadata=obj(connections=obj(videos=obj(total=INT))))
                    )
                },
                **VIMEO_NEXT,
            ),
            "vimeo_extras.ShowcaseIndex._read",
        ),
        Declared(
            "a showcase's videos",
            "GET",
            r"/users/\d+/albums/\d+/videos",
            obj({"data": arr(obj({"uri": STR}))}, **VIMEO_NEXT),
            "vimeo_extras.ShowcaseIndex._videos",
        ),
    ),
)

# --- Wistia (sources/wistia.py; its OpenAPI 2026.03.0) ---------------------------------------------------------

WISTIA_MEDIA = obj(
    {"hashed_id": STR, "type": STR, "status": one_of("queued", "processing", "ready", "failed")},
    id=INT,
    name=TEXT,
    description=TEXT,
    archived=BOOL,
    created=STR,
    updated=STR,
    duration=NUM,
    folder=nullable(obj(name=STR, hashedId=STR)),
    project=nullable(obj(name=STR)),
    subfolder=nullable(obj(name=STR)),
    tags=arr(obj(name=STR)),
    assets=arr(obj({"type": STR}, url=STR, file_size=INT)),
    cursor=STR,
    thumbnail=obj(url=STR),  # what a viewer sees first (wistia_extras.py)
)
# A player's customizations: every value a string; the chapters a plugin's (wistia_extras.chapters_of).
WISTIA_CHAPTERS = obj(on=STR, chapterList=arr(obj(title=STR, time=STR, deleted=STR)))
WISTIA = Platform(
    "wistia",
    "source",
    (
        Declared(
            "the media list", "GET", r"/medias", arr(WISTIA_MEDIA), "WistiaSource.page, wistia_extras.FolderOrder"
        ),
        Declared("the media", "GET", rf"/medias/{ID}", WISTIA_MEDIA, "WistiaSource.video, .resolve"),
        Declared(
            "the captions",
            "GET",
            rf"/medias/{ID}/captions",
            arr(obj({"language": STR}, english_name=TEXT, native_name=TEXT, is_draft=BOOL)),
            "WistiaSource._captions",
        ),
        Declared(
            "a caption's text", "GET", rf"/medias/{ID}/captions/{ID}", None, "HttpSource.api_caption", form="text"
        ),
        Declared(
            "the customizations",
            "GET",
            rf"/medias/{ID}/customizations",
            obj(plugin=obj(chapters=WISTIA_CHAPTERS)),
            "WistiaSource._chapters",
        ),
    ),
)

# --- Mux (sources/mux.py; mux-python 5.1.2) ----------------------------------------------------------------------

MUX_ASSET = obj(
    {"id": STR, "status": one_of("preparing", "ready", "errored")},
    created_at=STR,
    duration=NUM,
    meta=obj(title=STR, creator_id=STR, external_id=STR),
    passthrough=STR,
    playback_ids=arr(obj({"policy": one_of("public", "signed", "drm")}, id=STR)),
    is_live=BOOL,
    test=BOOL,
    tracks=arr(
        obj(
            {"type": STR},
            id=STR,
            text_type=STR,  # chapters: the chapters track (mux_extras.is_chapters); else a caption track
            language_code=STR,
            name=STR,
            closed_captions=BOOL,
            status=one_of("preparing", "ready", "errored", "deleted"),
        )
    ),
    thumbnail_time=NUM,  # the default thumbnail's frame (mux_extras.poster_time), omitted when not set
    master_access=one_of("none", "temporary"),
    master=obj(status=one_of("preparing", "ready", "errored"), url=STR),
    errors=obj(messages=arr(STR)),
)
MUX = Platform(
    "mux",
    "source",
    (
        Declared(
            "the asset list",
            "GET",
            r"/video/v1/assets",
            obj({"data": arr(MUX_ASSET)}, next_cursor=TEXT),
            "MuxSource.page",
        ),
        Declared("the asset", "GET", rf"/video/v1/assets/{ID}", obj({"data": MUX_ASSET}), "MuxSource._asset, .video"),
    ),
)

# --- Cloudflare Stream (sources/cloudflare.py; cloudflare-python 5.9.0) -----------------------------------------

STREAM_STATES = ("pendingupload", "downloading", "queued", "inprogress", "live-inprogress", "ready", "error")
STREAM_VIDEO = obj(
    {"uid": STR, "status": obj({"state": one_of(*STREAM_STATES)}, errorReasonCode=STR, errReasonCode=STR)},
    meta=obj(name=TEXT),
    created=STR,
    modified=STR,
    duration=nullable(NUM),  # -1 while unknown
    size=nullable(INT),  # null until the upload is whole
    readyToStream=BOOL,
    requireSignedURLs=BOOL,
    allowedOrigins=arr(STR),
    thumbnailTimestampPct=NUM,
    thumbnail=STR,  # the default thumbnail's link, "omitted until encoding is complete"
    creator=TEXT,
)
STREAM = r"/accounts/[^/]+/stream"
CLOUDFLARE = Platform(
    "cloudflare",
    "source",
    (
        Declared(
            "the video list",
            "GET",
            STREAM,
            obj({"result": arr(STREAM_VIDEO)}, total=INT),
            "CloudflareSource.page",
        ),
        Declared("the video", "GET", rf"{STREAM}/{ID}", obj({"result": STREAM_VIDEO}), "CloudflareSource.video"),
        Declared(
            "the captions",
            "GET",
            rf"{STREAM}/{ID}/captions",
            obj({"result": arr(obj({"language": STR}, label=TEXT, status=one_of("ready", "inprogress", "error")))}),
            "CloudflareSource._captions",
        ),
        Declared(
            "the MP4 download",
            "GET",
            rf"{STREAM}/{ID}/downloads",
            obj(
                {
                    "result": obj(
                        default=obj({"status": one_of("ready", "inprogress", "error")}, url=STR, percentComplete=NUM)
                    )
                }
            ),
            "CloudflareSource.resolve (a download not made yet is asked for with a POST: a write doctor never sends)",
        ),
        Declared(
            "a caption's text", "GET", rf"{STREAM}/{ID}/captions/{ID}/vtt", None, "HttpSource.api_caption", form="text"
        ),
    ),
)

# --- api.video (sources/apivideo.py; oas_apivideo.yaml) ---------------------------------------------------------

APIVIDEO_VIDEO = obj(
    {"videoId": STR},
    title=TEXT,
    description=TEXT,
    tags=arr(STR),
    metadata=arr(obj(key=STR, value=STR)),
    createdAt=STR,
    updatedAt=STR,
    public=BOOL,
    mp4Support=BOOL,
    assets=obj(mp4=STR, hls=STR, thumbnail=STR),
    publishedAt=STR,
)
PAGINATION = obj(currentPage=INT, pagesTotal=INT, itemsTotal=INT)
# `GET /videos/{id}/status` (sources.apivideo.encoding_state, providers.apivideo.read_status); the metadata's
# numbers are null while the video encodes.
APIVIDEO_STATUS = obj(
    {
        "ingest": obj(status=one_of("missing", "uploading", "uploaded", "ingesting", "ingested")),
        "encoding": obj(
            {"playable": BOOL},
            qualities=arr(obj(type=STR, quality=STR, status=one_of("waiting", "encoding", "encoded", "failed"))),
            metadata=obj(duration=nullable(NUM), width=nullable(INT), height=nullable(INT)),
        ),
    }
)
APIVIDEO = Platform(
    "apivideo",
    "source",
    (
        Declared(
            "the video list",
            "GET",
            r"/videos",
            obj({"data": arr(APIVIDEO_VIDEO), "pagination": PAGINATION}),
            "ApiVideoSource.page",
        ),
        Declared("the video", "GET", rf"/videos/{ID}", APIVIDEO_VIDEO, "ApiVideoSource.video, .resolve"),
        Declared("the video's status", "GET", rf"/videos/{ID}/status", APIVIDEO_STATUS, "apivideo.encoding_state"),
        Declared(
            "the captions",
            "GET",
            rf"/videos/{ID}/captions",
            obj({"data": arr(obj({"srclang": STR}, languageName=TEXT, src=STR)), "pagination": PAGINATION}),
            "ApiVideoSource._captions",
        ),
        Declared("a caption", "GET", rf"/videos/{ID}/captions/{ID}", obj({"src": STR}), "ApiVideoSource.resolve"),
        Declared(
            "the chapters",
            "GET",
            rf"/videos/{ID}/chapters",
            obj({"data": arr(obj({"language": STR}, src=STR)), "pagination": PAGINATION}),
            "ApiVideoSource._chapters",
        ),
        Declared("a chapters file", "GET", rf"/videos/{ID}/chapters/{ID}", obj({"src": STR}), "ApiVideoSource.resolve"),
        Declared(
            "a private video's session",
            "GET",
            rf"(/.*)?/{ID}/token/{ID}/session",
            obj({"session_token": STR}),
            "providers.apivideo.open_session",
            note="opens a playback session on the video's private token (24 hours); stores nothing",
        ),
    ),
)

# --- JW Player (sources/jwplayer.py; jwplatform 2.2.2) ------------------------------------------------------------

JW_MEDIA = obj(
    {"id": STR, "status": one_of("created", "processing", "updating", "ready", "failed", "error")},
    created=STR,
    last_modified=STR,
    duration=NUM,
    media_type=STR,
    error_message=TEXT,
    metadata=obj(
        title=TEXT,
        description=TEXT,
        tags=arr(STR),
        custom_params=obj(),
        publish_start_date=TEXT,
        publish_end_date=TEXT,
        external_id=TEXT,
    ),
)
JW_LIST = obj({"media": arr(JW_MEDIA)}, total=INT, page=INT, page_length=INT)
# A playlist (jwplayer_extras.py): the list names its type where it says one; a manual one holds its media in order.
JW_PLAYLIST_META = {"title": TEXT, "playlist_type": TEXT}
JW_TRACKS = obj(
    {
        "text_tracks": arr(
            obj(
                {"id": STR},
                status=nullable(one_of("created", "processing", "draft", "ready", "failed")),
                track_kind=STR,
                format=STR,
                metadata=obj(label=TEXT, srclang=TEXT, track_kind=STR, format=STR),
            )
        )
    }
)
JW_MEDIA_PATH = r"/v2/sites/[^/]+/media"
JWPLAYER = Platform(
    "jwplayer",
    "source",
    (
        Declared("the media list", "GET", rf"{JW_MEDIA_PATH}/?", JW_LIST, "JwPlayerSource.page"),
        Declared("the media", "GET", rf"{JW_MEDIA_PATH}/{ID}/?", JW_MEDIA, "JwPlayerSource.video, .resolve"),
        Declared("the text tracks", "GET", rf"{JW_MEDIA_PATH}/{ID}/text_tracks/?", JW_TRACKS, "JwPlayerSource._tracks"),
        Declared(
            "the Delivery API's media",
            "GET",
            rf"(/_stream/jwplayer)?/v2/media/{ID}",
            obj({"playlist": arr(obj(sources=arr(obj({"file": STR}, type=STR, width=INT))))}),
            "JwPlayerSource._delivered",
        ),
        Declared(
            "the playlists",
            "GET",
            r"/v2/sites/[^/]+/playlists/?",
            obj({"playlists": arr(obj({"id": STR}, metadata=obj(**JW_PLAYLIST_META)))}, total=INT, page_length=INT),
            "jwplayer_extras.PlaylistIndex._playlists",
        ),
        Declared(
            "a manual playlist",
            "GET",
            rf"/v2/sites/[^/]+/playlists/{ID}/manual_playlist/?",
            obj(metadata=obj(media_filter=obj(include=obj(values=arr(STR))), **JW_PLAYLIST_META)),
            "jwplayer_extras.PlaylistIndex._read",
        ),
    ),
)

# --- Brightcove (sources/brightcove.py; CMS API, OAuth API v4) --------------------------------------------------

BC_IMAGE = obj(src=TEXT, sources=arr(obj(src=STR, width=nullable(NUM))))
BC_VIDEO = obj(
    {"id": STR, "complete": BOOL, "updated_at": STR},
    name=TEXT,
    description=TEXT,
    long_description=TEXT,
    tags=arr(STR),
    created_at=STR,
    duration=nullable(INT),
    state=one_of("ACTIVE", "INACTIVE", "PENDING", "DELETED"),
    schedule=nullable(obj(starts_at=TEXT, ends_at=TEXT)),
    geo=nullable(obj(restricted=BOOL, countries=nullable(arr(STR)), exclude_countries=BOOL)),
    folder_id=TEXT,
    reference_id=TEXT,
    delivery_type=STR,
    text_tracks=arr(obj({"id": STR}, kind=STR, src=STR, srclang=TEXT, label=TEXT, status=TEXT, mime_type=TEXT)),
    # What a viewer sees first (brightcove_extras.py): the images, the first activation.
    images=obj(poster=BC_IMAGE, thumbnail=BC_IMAGE),
    published_at=TEXT,
)
BC_PLAYLIST = obj({"id": STR, "type": STR}, name=TEXT, video_ids=arr(STR))
BC_ACCOUNT = r"/v1/accounts/\d+"
BRIGHTCOVE = Platform(
    "brightcove",
    "source",
    (
        Declared(
            "the access token",
            "POST",
            r"/v4/access_token",
            obj({"access_token": STR}, token_type=STR, expires_in=INT),
            "BrightcoveSource._mint",
            statuses=(200, 201),
            note="the OAuth client-credentials grant: a token for the reads, nothing stored",
        ),
        Declared("the video list", "GET", rf"{BC_ACCOUNT}/videos", arr(BC_VIDEO), "BrightcoveSource.page"),
        Declared(
            "the video count", "GET", rf"{BC_ACCOUNT}/counts/videos", obj({"count": INT}), "BrightcoveSource.page"
        ),
        Declared("the video", "GET", rf"{BC_ACCOUNT}/videos/\d+", BC_VIDEO, "BrightcoveSource.video, .resolve"),
        Declared(
            "the video's sources",
            "GET",
            rf"{BC_ACCOUNT}/videos/\d+/sources",
            arr(obj(src=STR, container=STR, type=STR, width=INT, height=INT, size=INT)),
            "brightcove.best_rendition",
        ),
        Declared(
            "the folders", "GET", rf"{BC_ACCOUNT}/folders", arr(obj(id=STR, name=STR)), "BrightcoveSource._folder"
        ),
        Declared(
            "the playlists", "GET", rf"{BC_ACCOUNT}/playlists", arr(BC_PLAYLIST), "brightcove_extras.PlaylistIndex"
        ),
        Declared(
            "a smart playlist's videos",
            "GET",
            rf"{BC_ACCOUNT}/playlists/\d+/videos",
            arr(obj({"id": STR})),
            "brightcove_extras.PlaylistIndex._smart",
        ),
    ),
)

# --- Kaltura (sources/kaltura.py, kaltura_api.py, kaltura_privacy.py; API v3 with format=1) ---------------------

ENUM = either("integer", "string")  # Kaltura's enums come as numbers or as their string values
KALTURA_ENTRY = obj(
    {"id": STR, "status": ENUM, "mediaType": ENUM},
    name=TEXT,
    description=TEXT,
    tags=TEXT,
    createdAt=INT,
    updatedAt=INT,
    msDuration=INT,
    duration=INT,
    categoriesIds=TEXT,
    moderationStatus=ENUM,
    displayInSearch=ENUM,
    accessControlId=INT,
    startDate=nullable(INT),
    endDate=nullable(INT),
    referenceId=TEXT,
    userId=TEXT,
    thumbnailUrl=TEXT,  # the entry's default image (kaltura_extras.py)
)


# Every Kaltura call answers HTTP 200; an error is `{"objectType": "KalturaAPIException", "code", "message"}`
# (kaltura_api.api_error), the adapter's to report.
KALTURA_ERROR = obj({"objectType": one_of("KalturaAPIException"), "code": STR})


def kaltura(objects: dict) -> dict:
    return obj({"objects": arr(objects), "totalCount": INT})


def service(name: str, action: str) -> str:
    return rf"/api_v3/service/{name}/action/{action}"


def kaltura_call(*args, **kwargs) -> Declared:
    return Declared(*args, **{"error_form": KALTURA_ERROR, **kwargs})


KALTURA = Platform(
    "kaltura",
    "source",
    (
        kaltura_call(
            "a widget session",
            "POST",
            service("session", "startWidgetSession"),
            obj({"ks": STR}),
            "kaltura_api.Session._start",
            note="a session for the app token's hash: stores nothing",
        ),
        kaltura_call(
            "the app token's session",
            "POST",
            service("appToken", "startSession"),
            obj({"ks": STR}, expiry=INT),
            "kaltura_api.Session._start",
            note="the session every read carries (a KS): stores nothing",
        ),
        kaltura_call(
            "the admin session",
            "POST",
            service("session", "start"),
            STR,
            "kaltura_api.Session._start",
            note="the session every read carries (a KS): stores nothing",
        ),
        kaltura_call("the entry list", "POST", service("media", "list"), kaltura(KALTURA_ENTRY), "KalturaSource.page"),
        kaltura_call("the entry", "POST", service("media", "get"), KALTURA_ENTRY, "KalturaSource._entry"),
        kaltura_call(
            "the category links",
            "POST",
            service("categoryEntry", "list"),
            kaltura(obj({"entryId": STR, "categoryId": INT}, status=ENUM, createdAt=INT)),
            "KalturaSource._links",
        ),
        kaltura_call(
            "the categories",
            "POST",
            service("category", "list"),
            kaltura(obj({"id": INT}, fullName=TEXT, name=TEXT, privacy=ENUM, appearInList=ENUM)),
            "KalturaSource._read_categories, kaltura_privacy",
        ),
        kaltura_call(
            "the flavors",
            "POST",
            service("flavorAsset", "list"),
            kaltura(
                obj(
                    {"id": STR, "entryId": STR, "status": ENUM},
                    isOriginal=either("boolean", "integer", "string"),
                    height=INT,
                    bitrate=INT,
                    sizeInBytes=INT,
                    size=INT,
                )
            ),
            "kaltura.source_flavor",
        ),
        kaltura_call("a flavor's download URL", "POST", service("flavorAsset", "getUrl"), STR, "KalturaSource.resolve"),
        kaltura_call(
            "the captions",
            "POST",
            service("caption_captionasset", "list"),
            kaltura(obj({"id": STR, "entryId": STR, "status": ENUM}, languageCode=TEXT, language=TEXT, label=TEXT)),
            "KalturaSource._tracks",
        ),
        kaltura_call(
            "a caption's WebVTT",
            "GET",
            service("caption_captionasset", "serveWebVTT"),
            None,
            "KalturaSource._caption",
            form="text",
        ),
        kaltura_call(
            "the thumb assets",
            "POST",
            service("thumbAsset", "list"),
            kaltura(obj({"id": STR, "entryId": STR, "status": ENUM}, tags=TEXT)),
            "kaltura_extras.default_thumbs",
        ),
        kaltura_call(
            "a thumb asset's download URL", "POST", service("thumbAsset", "getUrl"), STR, "KalturaSource._thumb_url"
        ),
        kaltura_call(
            "the chapters (thumb cue points)",
            "POST",
            service("cuepoint_cuepoint", "list"),
            kaltura(obj({"entryId": STR, "cuePointType": STR}, subType=ENUM, status=ENUM, startTime=INT, title=TEXT)),
            "kaltura_extras.chapters_by_entry",
        ),
        kaltura_call(
            "the access control profiles",
            "POST",
            service("accessControlProfile", "list"),
            kaltura(obj({"id": INT}, rules=arr())),
            "KalturaSource._restricted",
        ),
    ),
)

# --- Dropbox (sources/dropbox.py; the HTTP API v2 as dropbox 12.2.4 calls it) ---------------------------------------

DROPBOX_ITEM = obj(
    {".tag": one_of("file", "folder", "deleted")},
    id=STR,
    name=STR,
    path_display=STR,
    path_lower=STR,  # the folder's id as a collection (DropboxSource._entry)
    client_modified=STR,
    server_modified=STR,
    size=INT,
    is_downloadable=BOOL,
    content_hash=STR,
)
DROPBOX_PAGE = obj({"entries": arr(DROPBOX_ITEM), "cursor": STR, "has_more": BOOL})
DROPBOX = Platform(
    "dropbox",
    "source",
    (
        Declared("the folder listing", "POST", r"/2/files/list_folder", DROPBOX_PAGE, "DropboxSource._list"),
        Declared("the next page", "POST", r"/2/files/list_folder/continue", DROPBOX_PAGE, "DropboxSource._list"),
        Declared(
            "the latest cursor",
            "POST",
            r"/2/files/list_folder/get_latest_cursor",
            obj({"cursor": STR}),
            "DropboxSource._list",
        ),
        Declared(
            "a temporary link",
            "POST",
            r"/2/files/get_temporary_link",
            obj({"link": STR}, metadata=obj()),
            "DropboxSource._link",
            note="a link to the file for four hours: stores nothing",
        ),
        Declared("the file", "POST", r"/2/files/get_metadata", DROPBOX_ITEM, "DropboxSource.video"),
    ),
)


def _all() -> dict[str, Platform]:
    from .stores import AZURE, GCS, S3

    return {p.name: p for p in (VIMEO, WISTIA, MUX, CLOUDFLARE, APIVIDEO, JWPLAYER, BRIGHTCOVE, KALTURA, DROPBOX)} | {
        p.name: p for p in (GCS, AZURE, S3)
    }


SOURCES: dict[str, Platform] = _all()
