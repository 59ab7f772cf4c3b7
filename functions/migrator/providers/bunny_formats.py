"""Bunny Stream's formats, read and made without I/O: the stack's secret, the embed view and CDN tokens, and
the answers (VideoModel, its play data, a StatusModel refusal). The provider that speaks to Bunny, and the
documents behind each fact, are in bunny.py."""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import re
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from ..extras import chapter_ends
from ..fate import Outcome, excerpt
from ..row_extras import Chapter
from ..states import State
from .facts import (
    CredentialsError,
    SignedPlayback,
    Video,
    duration_of,
    entries,
    epoch_of,
    mapping,
    our_ref,
    playback_of,
    rejected_video,
    text,
    video_id,
)
from .fidelity import PUBLIC, SIGNED
from .keys import asset_tag

PAGE_SIZE = 1000  # "the listing endpoints' documented ceiling" (bunny-stream.ts)
# A search that reads this many pages (100,000 videos) without reaching back to the claim stops: never NOT_FOUND.
FIND_ABSOLUTE_MAX_PAGES = 100
STATUS_WORDS = {
    0: "created",
    1: "uploaded",
    2: "processing",
    3: "transcoding",
    4: "finished",
    5: "error",
    6: "upload failed",
    7: "jit segmenting",
    8: "jit playlists created",
}
FINISHED, FAILED = frozenset({4, 8}), frozenset({5, 6})
HOOK_FINISHED, HOOK_PLAYABLE, HOOK_FAILED = 3, 4, 5  # the webhook's own numbering
TRANSCODING_ERROR = 3  # Severity.Error
OUR_REF = "migration_ref"
THUMBNAIL_MAX_MS = 2**31 - 1  # `thumbnailTime` is an int32 of milliseconds
EMBED = "https://iframe.mediadelivery.net/embed"  # docs.bunny.net/stream/token-authentication
EMBED_TOKEN_TTL_S = 300  # "Tokens should be short-lived (1-5 minutes recommended)"
MAX_TOKEN_TTL_S = 86_400
UNPROTECTED = (
    "bunny: a {privacy} row needs a token-protected library, and Bunny has no per-video privacy: this video would"
    " play for anyone. Turn on the library's embed view token authentication and CDN token authentication"
    " (Stream > Security), set the stack's BunnyTokenAuthentication to true, then retry the rejected assets"
)
_LIBRARY_ID = re.compile(r"^[0-9]{1,19}$")
_OFFSET = re.compile(r"(Z|[+-][0-9]{2}:?[0-9]{2})$", re.IGNORECASE)


@dataclass(frozen=True)
class Credentials:
    library_id: str
    api_key: str
    token_key: str | None = None  # the library's token authentication key: embed view and CDN tokens


def credentials(raw: str | None) -> Credentials:
    """The library id, its API key and its token key, from the secret's JSON (never echoed)."""
    if raw is None:
        raise CredentialsError("no Bunny credentials are configured (ProviderTokenSecretName)")
    try:
        doc = json.loads(raw)
    except ValueError:
        raise CredentialsError('the Bunny secret must be JSON {"library_id": ..., "api_key": ...}') from None
    doc = doc if isinstance(doc, dict) else {}
    library, key, token_key = str(doc.get("library_id", "")), doc.get("api_key"), doc.get("token_key")
    if not _LIBRARY_ID.match(library):
        raise CredentialsError('the Bunny secret needs "library_id" (the video library\'s number)')
    if not isinstance(key, str) or not key:
        raise CredentialsError('the Bunny secret needs "api_key" (the video library\'s API key)')
    if token_key is not None and (not isinstance(token_key, str) or not token_key):
        raise CredentialsError("the Bunny secret's \"token_key\" must be the library's token authentication key")
    return Credentials(library, key, token_key)


# --- tokens ------------------------------------------------------------------------------------------


def embed_token(key: str, video: str, expires: int) -> str:
    """The embed view token: `SHA256_HEX(token_security_key + video_id + expiration)`."""
    return hashlib.sha256(f"{key}{video}{expires}".encode()).hexdigest()


def cdn_token(key: str, signed_path: str, expires: int, params: Mapping[str, str]) -> str:
    """Advanced CDN token: `HS256-` + base64url (no padding) of HMAC-SHA256 over the signed path, the
    expiry and the parameters sorted as `k=v&k=v` (no user IP)."""
    data = "&".join(f"{k}={v}" for k, v in sorted(params.items()))
    digest = hmac.new(key.encode(), f"{signed_path}{expires}{data}".encode(), hashlib.sha256).digest()
    return "HS256-" + base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def signed_hls(hls: str, video: str, key: str, expires: int) -> SignedPlayback | None:
    """The HLS manifest with a directory token for `/{video}/` in its query, and that query for every later
    request; None when the URL is not `<zone>/.../{video}/playlist.m3u8` over http(s)."""
    parts = urllib.parse.urlsplit(hls)
    if parts.scheme not in ("https", "http") or not parts.path.endswith(f"/{video}/playlist.m3u8"):
        return None
    directory = f"/{video}/"
    token = cdn_token(key, directory, expires, {"token_path": directory})
    query = (("token", token), ("token_path", directory), ("expires", str(expires)))
    return SignedPlayback(urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query))), query)


# --- readers -----------------------------------------------------------------------------------------


def bunny_time(value: object) -> float | None:
    """`dateUploaded`: ISO 8601, read as UTC when it carries no offset (Bunny's times are UTC)."""
    if isinstance(value, str) and 19 <= len(value) <= 40 and not _OFFSET.search(value):
        value += "+00:00"
    return epoch_of(value)


def meta_value(tags: object, prop: str) -> str | None:
    found = [mapping(t).get("value") for t in entries(tags) if mapping(t).get("property") == prop]
    return found[0] if found and isinstance(found[0], str) else None


def title_tag(asset_id: str) -> str:
    """What the fetch's title ends with until the update: the asset's tag, findable in a listing."""
    return f" [{asset_tag(asset_id)}]"


def is_ours(item: object, asset_id: str) -> bool:
    """A listed video made for this asset: tagged with its reference, or still titled with its tag."""
    title = text(mapping(item).get("title")) or ""
    return meta_value(mapping(item).get("metaTags"), OUR_REF) == asset_id or title.endswith(title_tag(asset_id))


def status_of(video: Mapping) -> int | None:
    status = video.get("status")
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def failure_reason(video: Mapping) -> str:
    generic = "Bunny could not fetch the source" if status_of(video) == 6 else "Bunny could not encode the video"
    said = [
        m["message"]
        for m in map(mapping, entries(video.get("transcodingMessages")))
        if m.get("level") == TRANSCODING_ERROR and isinstance(m.get("message"), str)
    ]
    return f"{generic}: {'; '.join(said)}" if said else generic


def read_video(video: object) -> Video:
    """A VideoModel (a GET, a list entry)."""
    if not isinstance(video, dict):
        return Video(None, status="not an object", known=False)
    remote_id, ref = video_id(video.get("guid")), our_ref(meta_value(video.get("metaTags"), OUR_REF))
    code, created_at = status_of(video), bunny_time(video.get("dateUploaded"))
    word = STATUS_WORDS.get(code, "unknown") if code is not None else "unknown"
    if code in FINISHED:
        duration = duration_of(video.get("length"))
        return Video(remote_id, ref, State.READY, word, duration_s=duration, created_at=created_at)
    if code in FAILED:
        return rejected_video(remote_id, ref, word, failure_reason(video), created_at=created_at)
    return Video(remote_id, ref, None, word, known=word != "unknown", created_at=created_at)


def read_play(play: object, video: Mapping, library: str) -> tuple[str | None, dict | None]:
    """(privacy, playback) from the play data (VideoPlayDataModel): `tokenAuthEnabled`, the playlist,
    thumbnail, preview and MP4 fallback URLs (their query, a token if any, left out), the embed URL."""
    play = mapping(play)
    protected = play.get("tokenAuthEnabled")
    privacy = (SIGNED if protected else PUBLIC) if isinstance(protected, bool) else None
    vid = video_id(video.get("guid"))
    urls = {name: _bare(play.get(key)) for name, key in (("hls", "videoPlaylistUrl"), ("thumbnail", "thumbnailUrl"))}
    urls["preview"] = _bare(play.get("previewUrl"))
    if play.get("enableMP4Fallback") is True or video.get("hasMP4Fallback") is True:
        urls["mp4"] = _bare(play.get("fallbackUrl"))
    embed = f"{EMBED}/{library}/{vid}" if vid else None
    policy = "public" if privacy == PUBLIC else "signed"  # public only when Bunny says so
    info = playback_of(
        policy=policy,
        playback_id=vid,
        embed=embed,
        player=embed,
        width=video.get("width"),
        height=video.get("height"),
        **urls,
    )
    return privacy, info


def refusal(body: object, what: str) -> str | None:
    """Why a 2xx StatusModel says `success: false` (Bunny's refusal with a 200), or None."""
    said = mapping(body)
    if said.get("success") is not False:
        return None
    return f"Bunny refused {what}: {excerpt(text(said.get('message')) or '', 200) or 'no reason given'}"


def _bare(url: object) -> str | None:
    return urllib.parse.urlsplit(url)._replace(query="").geturl() if isinstance(url, str) and len(url) < 4096 else None


def oldest_first(items: list) -> bool:
    """Whether a page lists its videos oldest first (its first upload before its last)."""
    times = [t for t in (bunny_time(mapping(i).get("dateUploaded")) for i in items) if t is not None]
    return len(times) >= 2 and times[0] < times[-1]


def list_page(body: object) -> tuple[list, int | None, int | None]:
    """A list page's `items`, `totalItems` and `itemsPerPage`."""
    body = mapping(body)
    total, per = body.get("totalItems"), body.get("itemsPerPage")
    total = total if isinstance(total, int) and not isinstance(total, bool) and total >= 0 else None
    per = per if isinstance(per, int) and not isinstance(per, bool) and per > 0 else None
    return entries(body.get("items")), total, per


def newest_first(
    read_page: Callable[[int], tuple[list, int | None, int | None] | Outcome], cap: int, at_cap: Outcome
) -> Iterator[list | Outcome]:
    """Pages of the library newest first: numbered pages from 1, or from the last one backwards when the
    listing turns out to be oldest first (its direction is not documented). The listing's end stops
    it; a page that fails, or reading `cap` pages, ends it with an Outcome. Apart from the provider so the
    walk is one function of `read_page` (page number to items, `totalItems`, `itemsPerPage`)."""
    first = read_page(1)
    if isinstance(first, Outcome):
        yield first
        return
    items, total, per = first
    pages = -(-total // per) if total is not None and per else None
    backwards = bool(pages and pages > 1 and oldest_first(items))
    numbers: Iterable[int] = range(pages, 0, -1) if backwards and pages else itertools.count(1)
    for read, number in enumerate(numbers, start=1):
        if read > cap:
            yield at_cap
            return
        page = first if number == 1 else read_page(number)
        if isinstance(page, Outcome):
            yield page
            return
        items = page[0]
        if not items:
            return
        yield items
        if backwards:
            last = number == 1
        else:
            last = number >= pages if pages is not None else len(items) < (per or PAGE_SIZE)
        if last:
            return


# --- caption languages ---------------------------------------------------------------------------------
# Video_AddCaption's `srclang`: "The ISO 639-1 language code for the caption (e.g., 'en', 'fr')" (the Stream API's
# OpenAPI file, BunnyWay/bunny-stream-ios Sources/BunnyStreamAPI/openapi.yml; CaptionModelAdd likewise).
ISO_639_1 = frozenset(
    (
        "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz"
        " ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik"
        " io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml"
        " mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd"
        " se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi"
        " vo wa wo xh yi yo za zh zu"
    ).split()
)
# ISO 639-1 codes withdrawn in 1989 that BCP 47 still reads (the IANA registry marks them deprecated): their
# successors.
ISO_639_1_RENAMED = {"iw": "he", "in": "id", "ji": "yi", "jw": "jv", "mo": "ro"}
# BCP 47's special primary subtags, which no ISO 639-1 code stands for.
NO_LANGUAGE = {
    "und": "undetermined",
    "mul": "multiple languages",
    "zxx": "no linguistic content",
    "mis": "a language without a code",
}


def caption_language(tag: str) -> tuple[str | None, str | None]:
    """The ISO 639-1 code Bunny files a caption under for the BCP 47 `tag` (its language subtag: `pt-BR` -> pt,
    `zh-Hant-TW` -> zh; the region and script are not kept, the track's label keeps them), or (None, why not):
    `und` and the other special tags, a language ISO 639-1 has no code for (`fil`, `yue`), a private-use tag.
    Never a guess: a caption filed under the wrong language is worse than none."""
    primary = tag.strip().replace("_", "-").split("-", 1)[0].lower()
    primary = ISO_639_1_RENAMED.get(primary, primary)
    if primary in ISO_639_1:
        return primary, None
    rule = "bunny files a caption under an ISO 639-1 language code (Video_AddCaption's srclang)"
    if primary in NO_LANGUAGE:
        return None, (
            f"{rule}, and this track's language is {NO_LANGUAGE[primary]} ({primary}): name its language in the"
            " inventory (en, pt-BR, ...) to carry it to Bunny"
        )
    return None, f"{rule}, and this track's language ({excerpt(tag, 40)}) has none: it cannot be carried to Bunny"


def caption_language_key(tag: str) -> str:
    """The language two of an asset's tracks clash on at Bunny (one caption per srclang): the ISO 639-1 code, or
    the tag itself where there is none (such a track is refused alone, clashing with nothing)."""
    return caption_language(tag)[0] or tag.lower()


# --- what a viewer sees ------------------------------------------------------------------------------------------
# "Default thumbnail URLs": `{video}/thumbnail.jpg`, `thumbnail_1.jpg` .. `thumbnail_5.jpg`; "Custom thumbnail URL":
# `{video}/{thumbnail_filename}` (docs.bunny.net/stream/storage-structure).
DEFAULT_THUMBNAILS = frozenset({"thumbnail.jpg", *(f"thumbnail_{n}.jpg" for n in range(1, 6))})


def custom_thumbnail(video: Mapping) -> str | None:
    """The video's custom thumbnail's file name, or None while it shows one of Bunny's own frames."""
    name = text(video.get("thumbnailFileName"))
    return name if name and name not in DEFAULT_THUMBNAILS else None


def bunny_chapters(chapters: tuple[Chapter, ...], duration_s: float | None) -> list[dict]:
    """ChapterModel `{title, start, end}`, "in seconds" as int32 (openapi.yml): each start rounded down, each chapter
    ending where the next starts, the last at the video's end rounded up (never before its own start)."""
    ends = chapter_ends(chapters, duration_s)
    starts = [int(c.start_s) for c in chapters]
    last_end = -int(-ends[-1] // 1) if ends else 0
    out = []
    for chapter, start, end in zip(chapters, starts, [*starts[1:], last_end], strict=True):
        out.append({"title": chapter.title, "start": start, "end": max(start + 1, end)})
    return out
