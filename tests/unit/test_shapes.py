"""migrator.shapes: the checker as a table (and held to jsonschema, a development dependency, on the same table:
the declarations are a subset of JSON Schema), XML read as the checker reads it, and every platform declared."""

from __future__ import annotations

import re

import jsonschema
import pytest
from migrator.providers import PROVIDERS
from migrator.shapes import Declared, differences, platform, xml_doc
from migrator.shapes.checker import BOOL, INT, NUM, STR, any_of, arr, either, nullable, obj, one_of
from migrator.sources import PLATFORMS

MEDIA = obj({"media": arr(obj({"id": STR, "status": one_of("ready", "processing", "failed")}, duration=NUM))})

CASES = [
    # (schema, answer, the differences said)
    (MEDIA, {"media": [{"id": "a", "status": "ready", "duration": 1.5}]}, []),
    (MEDIA, {"media": [{"id": "a", "status": "ready"}], "extra": 1}, []),  # fields not declared are not read
    (
        MEDIA,
        {"media": [{"id": "a", "status": "published"}]},
        ["media[0].status: expected one of ready/processing/failed, got 'published'"],
    ),
    (MEDIA, {"media": [{"status": "ready"}]}, ["media[0].id: missing"]),
    (MEDIA, {"media": [{"id": 7, "status": "ready"}]}, ["media[0].id: expected string, got number 7"]),
    (
        MEDIA,
        {"media": [{"id": "a", "status": "ready", "duration": "1.5"}]},
        ["media[0].duration: expected number, got string '1.5'"],
    ),
    (MEDIA, {"items": []}, ["media: missing"]),
    (MEDIA, [], ["the answer: expected object, got array"]),
    (MEDIA, {"media": {"id": "a"}}, ["media: expected array, got object"]),
    # the same difference in every item is said once, with how many items are alike
    (
        MEDIA,
        {"media": [{"status": "ready"}, {"status": "ready"}, {"status": "ready"}]},
        ["media[0].id: missing (and 2 more items alike)"],
    ),
    (obj(n=INT), {"n": True}, ["n: expected integer, got boolean true"]),  # a boolean is no number
    (obj(n=INT), {"n": 2.5}, ["n: expected integer, got number 2.5"]),
    (obj(n=NUM), {"n": 3}, []),
    (obj(flag=BOOL), {"flag": "true"}, ["flag: expected boolean, got string 'true'"]),
    (obj(name=nullable(STR)), {"name": None}, []),
    (obj(state=nullable(one_of("a", "b"))), {"state": None}, []),
    (obj(state=nullable(one_of("a", "b"))), {"state": "c"}, ["state: expected one of a/b/null, got 'c'"]),
    (obj(id=either("string", "integer")), {"id": 4}, []),
    (obj(blobs=any_of(obj(Blob=arr(obj({"Name": STR}))), STR)), {"blobs": ""}, []),
    (
        obj(blobs=any_of(obj(Blob=arr(obj({"Name": STR}))), STR)),
        {"blobs": {"Blob": [{}]}},
        ["blobs.Blob[0].Name: missing"],
    ),
    (obj(blobs=any_of(obj(), STR)), {"blobs": 3}, ["blobs: expected object or string, got number 3"]),
    # a long value is quoted short: a signed link in an answer is not carried whole
    (
        obj(s=one_of("x")),
        {"s": "https://cdn.example/v.mp4?token=" + "k" * 60},
        ["s: expected one of x, got 'https://cdn.example/v.mp4?toke…"],
    ),
    (None, {"anything": 1}, []),
]


@pytest.mark.parametrize(("schema", "answer", "said"), CASES)
def test_the_checker_says_what_differs_and_where(schema, answer, said):
    assert differences(schema, answer) == said


@pytest.mark.parametrize(("schema", "answer", "said"), [c for c in CASES if c[0] is not None])
def test_the_checker_agrees_with_json_schema(schema, answer, said):
    """The declarations are JSON Schema: what jsonschema finds valid, the checker finds no difference in."""
    valid = jsonschema.Draft202012Validator(schema).is_valid(answer)
    assert valid == (said == [])


def test_many_differences_are_capped():
    schema = obj({f"k{i}": STR for i in range(9)})
    said = differences(schema, {})
    assert len(said) == 6 and said[-1] == "(and 4 more)"


@pytest.mark.parametrize(
    ("text", "lists", "doc"),
    [
        ("<R><A>1</A><B><C>x</C></B></R>", (), {"R": {"A": "1", "B": {"C": "x"}}}),
        ("<R><Blobs><Blob><Name>a</Name></Blob></Blobs></R>", ("Blob",), {"R": {"Blobs": {"Blob": [{"Name": "a"}]}}}),
        ("<R><Blobs><Blob><Name>a</Name></Blob></Blobs></R>", (), {"R": {"Blobs": {"Blob": {"Name": "a"}}}}),
        ("<R><N>a</N><N>b</N></R>", (), {"R": {"N": ["a", "b"]}}),  # a tag met twice is a list
        ("<R><Blobs /></R>", ("Blob",), {"R": {"Blobs": ""}}),
        ("not xml", (), None),
    ],
)
def test_xml_is_read_as_the_checker_reads_it(text, lists, doc):
    assert xml_doc(text, lists) == doc


def test_a_declared_answer_is_checked_only_in_the_form_the_adapter_reads():
    token = Declared("t", "POST", r"/v4/access_token", obj({"access_token": STR}), "x", statuses=(200, 201))
    assert token.check(201, {"access_token": "a"}) == [] and token.check(201, {}) == ["access_token: missing"]
    assert token.check(401, {"error": "invalid_client"}) == []  # an error is the adapter's to report
    assert token.check(200, None) == ["the answer: expected JSON, got none (not JSON, or empty)"]
    kaltura = platform("source", "kaltura").find("POST", "/api_v3/service/media/action/list")
    assert kaltura.check(200, {"objectType": "KalturaAPIException", "code": "INVALID_KS"}) == []
    assert kaltura.check(200, {"objectType": "KalturaMediaListResponse"}) == ["objects: missing", "totalCount: missing"]
    head = platform("source", "azure").find("HEAD", "/acct/box/videos/a.mp4")
    assert head.check(200, None, {"Content-Length": "4"}) == ["header Last-Modified: missing"]


@pytest.mark.parametrize(
    ("side", "name", "method", "path", "declared"),
    [
        ("source", "vimeo", "GET", "/me/videos", "the video list"),
        ("source", "vimeo", "GET", "/users/123/videos", "the video list"),
        ("source", "vimeo", "GET", "/videos/42/texttracks", "the text tracks"),
        ("source", "cloudflare", "POST", "/accounts/a/stream/u1/downloads", None),  # a write: never declared
        ("source", "cloudflare", "POST", "/accounts/a/stream/u1/token", None),
        ("source", "mux", "PUT", "/video/v1/assets/a1/master-access", None),
        ("source", "jwplayer", "GET", "/v2/sites/abcd1234/media/", "the media list"),
        ("source", "jwplayer", "GET", "/_stream/jwplayer/v2/media/J0000001", "the Delivery API's media"),
        ("source", "s3", "AWS", "ListObjectsV2", "the object list"),
        ("source", "s3", "AWS", "DeleteObject", None),
        ("target", "cloudflare", "GET", "/accounts/a/stream/webhook", "the account's webhook"),
        ("target", "cloudflare", "PUT", "/accounts/a/stream/webhook", None),
        ("target", "apivideo", "GET", "/webhooks", "the webhooks"),
        ("target", "apivideo", "POST", "/videos", None),
        ("target", "jwplayer", "GET", "/v2/webhooks/", "the webhooks"),
        ("target", "vimeo", "GET", "/me", "the account"),
        # What a viewer sees: the looks and a collection's lookup are reads; what sets, makes or mends is not.
        ("target", "apivideo", "GET", "/videos/vi1/chapters", "the chapters"),
        ("target", "apivideo", "POST", "/videos/vi1/chapters/en", None),
        ("target", "bunny", "GET", "/library/123/collections", "the collections"),
        ("target", "bunny", "POST", "/library/123/collections", None),
        ("target", "jwplayer", "GET", "/v2/sites/abcd1234/thumbnails/", "the thumbnails"),
        ("target", "jwplayer", "PATCH", "/v2/sites/abcd1234/thumbnails/th1/", None),
        ("target", "jwplayer", "GET", "/v2/sites/abcd1234/playlists/", "the playlists"),
        ("target", "jwplayer", "POST", "/v2/sites/abcd1234/playlists/manual_playlist/", None),
        ("target", "jwplayer", "PUT", "/v2/sites/abcd1234/media/m1/text_tracks/t1/publish/", None),
        ("target", "vimeo", "GET", "/videos/42/pictures", "the pictures"),
        ("target", "vimeo", "DELETE", "/videos/42/pictures/7", None),
        ("target", "vimeo", "GET", "/videos/42/chapters", "the chapters"),
        ("target", "vimeo", "GET", "/me/projects", "the folders"),
        ("target", "vimeo", "GET", "/me/albums", "the showcases"),
        ("target", "vimeo", "POST", "/me/albums", None),
    ],
)
def test_only_reads_are_declared(side, name, method, path, declared):
    found = platform(side, name).find(method, path)
    assert (found.name if found else None) == declared


KNOWN = {"type", "required", "properties", "items", "enum", "anyOf"}


def _keys(schema: dict):
    yield from schema
    for inner in schema.get("properties", {}).values():
        yield from _keys(inner)
    for inner in [schema["items"]] if "items" in schema else []:
        yield from _keys(inner)
    for inner in schema.get("anyOf", ()):
        yield from _keys(inner)


@pytest.mark.parametrize(("side", "names"), [("source", PLATFORMS), ("target", tuple(PROVIDERS))])
def test_every_platform_is_declared_in_the_checkers_words(side, names):
    for name in names:
        declared = platform(side, name)
        assert declared is not None and declared.answers, f"{side} {name} declares no answer"
        for answer in declared.answers:
            re.compile(answer.path)
            assert (
                answer.method in ("GET", "HEAD", "POST", "AWS")
                and answer.reads
                and answer.form in ("json", "xml", "text")
            )
            assert set(_keys(answer.schema or {})) <= KNOWN, (name, answer.name)
            jsonschema.Draft202012Validator.check_schema(answer.schema or {})
