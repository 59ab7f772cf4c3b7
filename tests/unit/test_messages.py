"""Message validation: every kind of bad input becomes poison with a clear reason."""

import json
from pathlib import Path

import jsonschema
import pytest
from migrator.messages import AssetMessage, Poison, encode_message, parse_message

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "events" / "asset-message.schema.json").read_text())
GOOD = {"id": "lib/0001", "source_url": "https://cdn.example.com/a.mp4"}


def body(**changes):
    doc = {**GOOD, **changes}
    return json.dumps({k: v for k, v in doc.items() if v is not ...})


def test_good_message_parses():
    msg = parse_message(body(title="A", duration_s=12.5, metadata={"k": "v"}))
    assert msg == AssetMessage("lib/0001", "https://cdn.example.com/a.mp4", "A", 12.5, {"k": "v"})


@pytest.mark.parametrize("url", ["http://x.example/a.mp4", "s3://bucket/key/a.mov", "HTTPS://X.EXAMPLE/a"])
def test_accepted_schemes(url):
    assert isinstance(parse_message(body(source_url=url)), AssetMessage)


POISON_CASES = [
    ("not json {", "body is not JSON", None),
    ("[1, 2]", "must be a JSON object", None),
    ('"just a string"', "must be a JSON object", None),
    (body(id=...), "id is missing", None),
    (body(id=""), "id is empty", None),
    (body(id="x" * 256), "over 255", None),
    (body(id="bad\nid"), "control characters", None),
    (body(id="tab\tid"), "control characters", None),
    (body(id=42), "id must be a string", None),
    (body(id="#pacer"), "reserved", None),
    (body(source_url=...), "source_url is missing", "lib/0001"),
    (body(source_url=""), "source_url is empty", "lib/0001"),
    (body(source_url="ftp://x.example/a.mp4"), "scheme 'ftp'", "lib/0001"),
    (body(source_url="file:///etc/passwd"), "scheme 'file'", "lib/0001"),
    (body(source_url="javascript:alert(1)"), "scheme", "lib/0001"),
    (body(source_url="https:///nohost"), "no host", "lib/0001"),
    (body(source_url="s3://bucket"), "no object key", "lib/0001"),
    (body(source_url="https://x.example/a b.mp4"), "whitespace", "lib/0001"),
    (body(source_url=123), "must be a string", "lib/0001"),
    (body(duration_s="12"), "duration_s must be a number", "lib/0001"),
    (body(duration_s=True), "duration_s must be a number", "lib/0001"),
    (body(duration_s=-1), "between 0 and", "lib/0001"),
    (body(title=7), "title", "lib/0001"),
    (body(metadata=[1]), "metadata must be an object", "lib/0001"),
    (body(sourceurl="https://typo.example/a"), "unknown field(s): sourceurl", "lib/0001"),
    (b"\xff\xfe", "not UTF-8", None),
    ("x" * 70_000, "over 65536 bytes", None),
    # Values that would pass a shape check and then fail at the ledger write, for days.
    ('{"id": "big", "source_url": "https://h/a", "duration_s": 1' + "0" * 400 + "}", "between 0 and", "big"),
    (body(duration_s=1e300), "between 0 and", "lib/0001"),
    (body(id="lone-\ud800"), "lone surrogate", None),
    (body(title="lone \udfff"), "title contains a lone surrogate", "lib/0001"),
    (body(source_url="https://h/\ud800.mp4"), "lone surrogate", "lib/0001"),
    (body(metadata={"n": 10**39}), "more than 38 digits", "lib/0001"),
    (body(metadata={"n": [1, {"x": 1e200}]}), "too large to store", "lib/0001"),
    (body(metadata={"": 1}), "empty key", "lib/0001"),
    (body(metadata={"k\ud800": 1}), "key with a lone surrogate", "lib/0001"),
    (body(metadata=json.loads("[" * 0 + '{"a":' * 31 + "1" + "}" * 31)), "nests deeper than 30", "lib/0001"),
]

# Python's json reads NaN and Infinity; JSON does not, and DynamoDB cannot store them.
NOT_JSON_NUMBERS = [
    ('{"id": "n", "source_url": "https://h/a", "duration_s": NaN}', "NaN is not a JSON number"),
    ('{"id": "n", "source_url": "https://h/a", "metadata": {"x": Infinity}}', "Infinity is not a JSON number"),
    ('{"id": "n", "source_url": "https://h/a", "metadata": {"x": [-Infinity]}}', "-Infinity is not a JSON number"),
]


@pytest.mark.parametrize(("raw", "reason"), NOT_JSON_NUMBERS)
def test_nan_and_infinity_are_poison_not_a_number(raw, reason):
    result = parse_message(raw)
    assert isinstance(result, Poison) and reason in result.reason


def test_values_at_the_storable_limits_are_accepted():
    deep = json.loads('{"a":' * 29 + "1" + "}" * 29)
    msg = parse_message(body(duration_s=10_000_000, metadata={"n": 10**37, "f": -9.9e124, "deep": deep}))
    assert isinstance(msg, AssetMessage) and msg.duration_s == 10_000_000.0


@pytest.mark.parametrize(("raw", "reason", "asset_id"), POISON_CASES)
def test_poison_reasons(raw, reason, asset_id):
    result = parse_message(raw)
    assert isinstance(result, Poison)
    assert reason in result.reason
    assert result.asset_id == asset_id


@pytest.mark.parametrize(("raw", "reason", "asset_id"), POISON_CASES)
def test_schema_agrees_with_the_validator_on_poison(raw, reason, asset_id):
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return  # not JSON at all: nothing for the schema to say
    if isinstance(raw, str) and len(raw) > 65_536:
        return  # the size limit is the transport's, not the schema's
    if "metadata" in doc or "title" in doc:
        return  # what DynamoDB can store inside them is beyond JSON Schema; the description says it
    assert not jsonschema.Draft202012Validator(SCHEMA).is_valid(doc)


@pytest.mark.parametrize(
    "doc",
    [
        GOOD,
        {**GOOD, "title": "t", "duration_s": 3, "metadata": {}},
        {**GOOD, "source_url": "s3://b/k.mp4"},
        {"id": "é/ü 日本", "source_url": "http://h/x"},
    ],
)
def test_schema_accepts_what_the_validator_accepts(doc):
    assert isinstance(parse_message(json.dumps(doc)), AssetMessage)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)


def test_encode_roundtrips():
    msg = AssetMessage("a", "https://h/x.mp4", title="T", duration_s=1.25, metadata={"n": 1})
    assert parse_message(encode_message(msg)) == msg


def test_sample_events_match_their_names():
    events = Path(__file__).resolve().parents[2] / "events"
    new = json.loads((events / "sqs-new-asset.json").read_text())
    assert all(isinstance(parse_message(r["body"]), AssetMessage) for r in new["Records"])
    poison = json.loads((events / "sqs-poison.json").read_text())
    assert all(isinstance(parse_message(r["body"]), Poison) for r in poison["Records"])


def test_the_fast_character_checks_match_unicode_over_every_code_point():
    import unicodedata

    from migrator.messages import _CONTROL, _SPACE_OR_CONTROL

    for code in range(0x110000):
        ch = chr(code)
        control = unicodedata.category(ch) == "Cc"
        assert bool(_CONTROL.search(ch)) is control, hex(code)
        assert bool(_SPACE_OR_CONTROL.search(ch)) is (control or ch.isspace()), hex(code)


FULL = {
    **GOOD,
    "title": "Episode 1",
    "description": "A long description\nwith lines.",
    "tags": ["news", "2024", "news"],
    "privacy": "private",
    "poster_time_s": 12.5,
    "created_at": "2019-06-01T10:00:00+02:00",
    "folder": "Shows/Season 1",
    "size_bytes": 123456789,
    "metadata": {"lat": 51.5072178},
    "tracks": [
        {"url": "https://cdn.example.com/a.en.srt", "language": "en", "kind": "captions", "closed_captions": True},
        {"url": "vimeo://123/texttracks/9", "language": "pt-BR", "kind": "subtitles", "name": "Português"},
    ],
    "options": {"mux": {"video_quality": "premium"}},
    "thumbnail_url": "vimeo://123/pictures/456",
    "chapters": [{"start_s": 0, "title": "Intro"}, {"start_s": 61.5, "title": "Épisode « deux » 🎬"}],
    "collections": [
        {"id": "projects/77", "name": "Shows/Season 1", "kind": "folder"},
        {"id": "albums/9", "name": "Best of", "kind": "showcase", "position": 3},
    ],
    "published_at": "2019-06-02T10:00:00-05:00",
}


def test_everything_a_video_is_travels_in_the_message():
    msg = parse_message(json.dumps(FULL))
    assert isinstance(msg, AssetMessage)
    assert msg.tags == ("news", "2024")  # a tag repeated is one tag
    assert msg.created_at == "2019-06-01T08:00:00Z"  # normalised to UTC
    assert [t.language for t in msg.tracks] == ["en", "pt-BR"] and msg.tracks[0].closed_captions
    assert msg.published_at == "2019-06-02T15:00:00Z" and msg.created_at == "2019-06-01T08:00:00Z"  # each its own
    assert msg.thumbnail_url == "vimeo://123/pictures/456"
    assert [(c.start_s, c.title) for c in msg.chapters] == [(0.0, "Intro"), (61.5, "Épisode « deux » 🎬")]
    assert [(c.id, c.kind, c.position) for c in msg.collections] == [
        ("projects/77", "folder", None),
        ("albums/9", "showcase", 3),
    ]
    assert parse_message(encode_message(msg)) == msg  # the encoder is the parser's inverse


@pytest.mark.parametrize(
    "url", ["vimeo://76979871", "wistia://e4a27b971d", "mux://a1b2", "cloudflare://ea95", "apivideo://vi4b"]
)
def test_a_source_reference_is_a_source(url):
    assert isinstance(parse_message(body(source_url=url)), AssetMessage)


FIDELITY_POISON = [
    (body(description=5), "description must be a string"),
    (body(description="x" * 10_001), "at most 10,000"),
    (body(tags="news"), "tags must be a list"),
    (body(tags=["ok", ""]), "each tag must be text"),
    (body(tags=["bell\u0007"]), "each tag must be text"),
    (body(tags=[str(i) for i in range(101)]), "at most 100"),
    (body(privacy="secret"), "privacy must be one of public, unlisted, private, signed"),
    (body(poster_time_s=-1), "poster_time_s must be a number between 0"),
    (body(created_at="yesterday"), "created_at must be an RFC 3339"),
    (body(created_at="2019-06-01T10:00:00"), "created_at must be an RFC 3339"),  # no time zone
    (body(size_bytes=1.5), "size_bytes must be a whole number"),
    (body(tracks={"url": "x"}), "tracks must be a list"),
    (body(tracks=[{"url": "ftp://x/a.srt", "language": "en"}]), "track 1: url scheme 'ftp'"),
    (body(tracks=[{"url": "https://x/a.srt", "language": "english!"}]), "track 1: language must be a BCP 47"),
    (body(tracks=[{"url": "https://x/a.srt", "language": "en", "kind": "descriptions"}]), "kind must be one of"),
    (body(tracks=[{"url": "https://x/a.srt", "language": "en", "lang": "en"}]), "unknown field(s): lang"),
    (body(tracks=[{"url": "https://x/a.srt", "language": "en"}] * 2), "two tracks share a language"),
    (body(options=[1]), "options must be an object"),
    (body(options={"x": "y" * 5000}), "options is over 4096 bytes"),
    (body(source_url="vimeo://"), "names no video"),
]


@pytest.mark.parametrize(("raw", "reason"), FIDELITY_POISON)
def test_what_a_video_is_is_checked_like_the_rest(raw, reason):
    result = parse_message(raw)
    assert isinstance(result, Poison) and reason in result.reason and result.asset_id == "lib/0001"
    doc = json.loads(raw)
    # The schema says nothing of formats, uniqueness or sizes as JSON: the validator alone checks those.
    if not {"created_at", "tags", "options"} & set(doc) and "share" not in reason:
        assert not jsonschema.Draft202012Validator(SCHEMA).is_valid(doc)


def test_the_schema_accepts_a_full_message():
    jsonschema.Draft202012Validator(SCHEMA).validate(FULL)


def test_a_row_without_privacy_is_narrowed_by_an_explicit_private_but_not_by_a_public():
    from migrator.messages import narrowest_privacy

    table = [
        (("public", "private"), "private"),
        (("private", "public"), "private"),
        ((None, "public"), None),  # the stack's DefaultPlayback (signed by default) is not widened
        ((None, "signed"), "signed"),
        (("unlisted", "public"), "unlisted"),
        (("public", "unlisted"), "unlisted"),
        (("private", "signed"), "private"),  # as narrow: the first kept
        (("public", None, "private", "unlisted"), "private"),
    ]
    for values, expected in table:
        assert narrowest_privacy(*values) == expected, values


# What a viewer sees first (issue 42): each bad value is poison with its reason. The third column: whether the JSON
# schema can say so too (an order, a uniqueness or a text the cue timing ends are the validator's alone).
CHAPTER = {"start_s": 0, "title": "Intro"}
COLLECTION = {"id": "albums/9", "name": "Best of", "kind": "showcase"}
EXTRAS_POISON = [
    (body(thumbnail_url="ftp://x/a.jpg"), "thumbnail_url scheme 'ftp'", True),
    (body(thumbnail_url=""), "thumbnail_url is empty", True),
    (body(thumbnail_url="https://x/a b.jpg"), "thumbnail_url contains whitespace", True),
    (body(thumbnail_url="s3://bucket"), "s3 thumbnail_url has no object key", True),
    (body(thumbnail_url=7), "thumbnail_url must be a string", True),
    (body(published_at="last spring"), "published_at must be an RFC 3339", False),
    (body(published_at="2019-06-01T10:00:00"), "published_at must be an RFC 3339", False),  # no time zone
    (body(chapters={"start_s": 0}), "chapters must be a list", True),
    (body(chapters=[CHAPTER] * 501), "at most 500", True),
    (body(chapters=["Intro"]), "chapter 1 must be an object", True),
    (body(chapters=[{"start_s": 0}]), "chapter 1: title must be text of 1 to 255", True),
    (body(chapters=[{"start_s": 0, "title": " "}]), "chapter 1: title must be text", True),
    (body(chapters=[{"start_s": 0, "title": "x" * 256}]), "chapter 1: title must be text of 1 to 255", True),
    (body(chapters=[{"start_s": 0, "title": "two\nlines"}]), "on one line", True),
    (body(chapters=[{"start_s": -1, "title": "Intro"}]), "chapter 1: start_s must be a number of seconds", True),
    (body(chapters=[{"start_s": "0", "title": "Intro"}]), "chapter 1: start_s must be a number", True),
    (body(chapters=[{"start_s": True, "title": "Intro"}]), "chapter 1: start_s must be a number", True),
    (body(chapters=[{"start_s": 1e300, "title": "Intro"}]), "between 0 and 1e+07", True),
    (body(chapters=[{**CHAPTER, "end_s": 5}]), "chapter 1 has unknown field(s): end_s", True),
    (body(chapters=[CHAPTER, {"start_s": 0, "title": "Again"}]), "chapter 2: start_s must be later", False),
    (body(chapters=[{"start_s": 9, "title": "B"}, {"start_s": 3, "title": "A"}]), "strictly increasing", False),
    (body(chapters=[{"start_s": 0, "title": "a --> b"}]), "may not contain '-->'", False),
    (body(collections="Best of"), "collections must be a list of at most 50", True),
    (body(collections=[{**COLLECTION, "id": f"albums/{i}"} for i in range(51)]), "at most 50", True),
    (body(collections=[{"name": "Best of", "kind": "showcase"}]), "collection 1: id must be text", True),
    (body(collections=[{**COLLECTION, "id": 9}]), "collection 1: id must be text", True),
    (body(collections=[{**COLLECTION, "name": ""}]), "collection 1: name must be text", True),
    (body(collections=[{**COLLECTION, "name": "tab\there"}]), "collection 1: name must be text", True),
    (body(collections=[{**COLLECTION, "kind": "shelf"}]), "collection 1: kind must be one of folder, project", True),
    (body(collections=[{**COLLECTION, "position": -1}]), "collection 1: position must be a whole number", True),
    (body(collections=[{**COLLECTION, "position": 1.5}]), "collection 1: position must be a whole number", True),
    (body(collections=[{**COLLECTION, "position": False}]), "collection 1: position must be a whole number", True),
    (body(collections=[{**COLLECTION, "sort": "manual"}]), "collection 1 has unknown field(s): sort", True),
    (
        body(collections=[COLLECTION, {**COLLECTION, "name": "Other"}]),
        "collection 2: id 'albums/9' is given twice",
        False,
    ),
    (body(tracks=[{"url": "https://x/c.vtt", "kind": "captions"}]), "track 1: language must be a BCP 47", True),
    (
        body(tracks=[{"url": "https://x/c.srt", "kind": "chapters", "format": "srt"}]),
        "a chapters track is WebVTT",
        False,
    ),
]


@pytest.mark.parametrize(("raw", "reason", "schema_tells"), EXTRAS_POISON)
def test_what_a_viewer_sees_is_checked_with_a_clear_reason(raw, reason, schema_tells):
    result = parse_message(raw)
    assert isinstance(result, Poison) and reason in result.reason and result.asset_id == "lib/0001", result
    if schema_tells:
        assert not jsonschema.Draft202012Validator(SCHEMA).is_valid(json.loads(raw))


@pytest.mark.parametrize(
    "extras",
    [
        {"thumbnail_url": "https://i.example.com/poster.jpg"},
        {"thumbnail_url": "s3://bucket/posters/a.png", "published_at": 1_560_000_000},
        {"chapters": [{"start_s": 0.5, "title": "One"}, {"start_s": 1, "title": "Two"}]},
        {"chapters": [{"start_s": 10_000_000, "title": "At the bound"}]},
        {"collections": [{"id": "projects/1", "name": "A", "kind": "project", "position": 0}]},
        {"collections": [{"id": "1", "name": "A", "kind": "folder"}, {"id": "2", "name": "A", "kind": "folder"}]},
        {"tracks": [{"url": "brightcove://6000/texttracks/ch", "kind": "chapters"}]},
        {"tracks": [{"url": "https://x/c.vtt", "kind": "chapters", "language": "fr", "format": "vtt"}]},
    ],
)
def test_the_schema_and_the_validator_accept_the_same_extras_and_they_travel_whole(extras):
    doc = {**GOOD, **extras}
    msg = parse_message(json.dumps(doc))
    assert isinstance(msg, AssetMessage), msg
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert parse_message(encode_message(msg)) == msg


def test_a_chapters_track_without_a_language_is_undetermined_and_stays_so():
    msg = parse_message(body(tracks=[{"url": "jwplayer://abc/texttracks/ch1", "kind": "chapters"}]))
    assert isinstance(msg, AssetMessage) and msg.tracks[0].language == "und" and msg.tracks[0].kind == "chapters"
    assert json.loads(encode_message(msg))["tracks"] == [
        {"url": "jwplayer://abc/texttracks/ch1", "language": "und", "kind": "chapters"}
    ]


def test_the_schema_takes_a_reference_to_every_platform_the_validator_takes():
    """The schema named five platforms; a jwplayer:// or dropbox:// row, valid to the uploader, failed it."""
    from migrator.messages import SOURCE_PLATFORMS

    for platform in SOURCE_PLATFORMS:
        doc = {**GOOD, "source_url": f"{platform}://b/o", "thumbnail_url": f"{platform}://v/pictures/1"}
        assert isinstance(parse_message(json.dumps(doc)), AssetMessage), platform
        jsonschema.Draft202012Validator(SCHEMA).validate(doc)
