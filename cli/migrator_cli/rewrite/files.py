"""What a file is to `migrator rewrite`: the container that streams it, or why it is skipped (pure).

By extension first, then by its head: NUL bytes in the first 8 KB make any file binary (an MPEG-TS segment named
.ts, a UTF-16 text, which a UTF-8 rewrite cannot keep, an image without its extension), and an .xml file declaring
WordPress's export namespace is a WXR export. A compressed file is skipped, not opened: decompress it and run again.

A file of a type not listed here whose head is UTF-8 text is rewritten as text: an embed in a file we did not
foresee (a .toml or .conf, an .htaccess, a template language of its own) would otherwise keep playing from the old
platform once it is gone, unseen, while a rewrite of it shows in the dry run's diff and is backed up. A file of an
unknown type that is not UTF-8 is skipped: it is most likely binary.
"""

from __future__ import annotations

import re
from pathlib import PurePath

HEAD_SIZE = 1 << 16  # what the caller reads of a file's start for `classify`
BINARY_PROBE = 8192

TEXT, JSON, CSV, SQL, WXR = "text", "json", "csv", "sql", "wxr"
KINDS = (TEXT, JSON, CSV, SQL, WXR)

# Why a file is skipped (the summary counts by these).
BINARY_TYPE = "binary file type"
BINARY_CONTENT = "binary content (NUL bytes)"
COMPRESSED = "compressed (decompress it first)"
NOT_UTF8 = "unknown type, not UTF-8 text"
SYMLINK = "symbolic link (not followed)"
SPECIAL = "not a regular file"
UNREADABLE = "unreadable"
LEFTOVER = "a rewrite's temporary file"

TEXT_EXTENSIONS = frozenset(
    "html htm xhtml shtml md mdx markdown txt text yaml yml xml svg liquid twig hbs handlebars mustache njk nunjucks "
    "jinja jinja2 j2 erb haml slim pug ejs php phtml vue svelte jsx tsx js mjs cjs ts mts astro rst adoc asciidoc "
    "org tex toml ini cfg conf properties env htaccess m3u8 m3u vtt srt css scss sass less rb py go java".split()
)
JSON_EXTENSIONS = frozenset("json jsonl ndjson geojson".split())
TABLE_EXTENSIONS = frozenset("csv tsv".split())
COMPRESSED_EXTENSIONS = frozenset("gz tgz bz2 tbz2 xz txz zst lz4 lzma z br zip 7z rar tar".split())
BINARY_EXTENSIONS = frozenset(
    # images
    "png jpg jpeg gif webp avif bmp ico icns tif tiff heic heif psd ai eps svgz jxl raw cr2 nef "
    # video and audio
    "mp4 m4v mov webm mkv avi wmv flv mpg mpeg m2ts mts 3gp ogv mp3 wav ogg oga opus flac aac m4a wma aiff mid "
    # fonts
    "woff woff2 ttf otf eot "
    # documents, archives, executables, databases
    "pdf doc docx xls xlsx ppt pptx odt ods odp epub jar war apk dmg iso img exe dll so dylib bin class pyc wasm "
    "sqlite sqlite3 db mdb ibd frm myd myi dat swf".split()
)
# WordPress's exporter declares xmlns:wp="http://wordpress.org/export/<WXR version>/" on its <rss> element
# (https://codehunter.cc/a/wordpress/wordpress-wxr-specification, quoting export.php; WXR has no official spec).
_WXR_NAMESPACE = re.compile(rb"""xmlns:wp\s*=\s*["']https?://wordpress\.org/export/""")


def extension(path: PurePath | str) -> str:
    """The lower-case extension without its dot; a dotfile's name (".htaccess") counts as its extension."""
    name = PurePath(path).name.lower()
    _, dot, suffix = name.rpartition(".")
    return suffix if dot else ""


def is_utf8(head: bytes) -> bool:
    """Whether `head` decodes as UTF-8, forgiving a character cut by the head's end."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start >= len(head) - 3 and error.reason == "unexpected end of data"
    return True


def classify(path: PurePath | str, head: bytes, column: str | None = None) -> tuple[str | None, str]:
    """(kind, "") for a file to rewrite, (None, why) for one to skip. `head` is its first HEAD_SIZE bytes; a CSV or
    TSV file is a table when a `column` is named, text otherwise."""
    suffix = extension(path)
    if suffix in COMPRESSED_EXTENSIONS:
        return None, COMPRESSED
    if suffix in BINARY_EXTENSIONS:
        return None, BINARY_TYPE
    if b"\0" in head[:BINARY_PROBE]:
        return None, BINARY_CONTENT
    if suffix in JSON_EXTENSIONS:
        return JSON, ""
    if suffix == "sql":
        return SQL, ""
    if suffix in TABLE_EXTENSIONS:
        return (CSV if column else TEXT), ""
    if suffix == "xml" and _WXR_NAMESPACE.search(head):
        return WXR, ""
    if suffix in TEXT_EXTENSIONS or is_utf8(head):
        return TEXT, ""
    return None, NOT_UTF8


def kind_of(path: PurePath | str, head: bytes, column: str | None = None) -> str | None:
    """The kind of container that streams the file, or None when it is skipped (`classify` says why)."""
    return classify(path, head, column)[0]
