"""migrator.sources.wistia over a fake session: what only a fake can answer (a caption past the stack's cap),
and the requests the adapter builds (the release named on each, the two passes of a listing)."""

from __future__ import annotations

import json
import urllib.parse

import requests
from migrator.sources import ResolutionKind, build, parse_ref
from migrator.sources.wistia import API_VERSION, ARCHIVED_PASS
from migrator.trackfetch import MAX_TRACK_BYTES


class Fake(requests.Session):
    """Answers `answer(path, query)` -> (status, body bytes or JSON); keeps every request it was sent."""

    def __init__(self, answer):
        super().__init__()
        self.answer, self.sent = answer, []

    def send(self, request, **kwargs):
        self.sent.append(request)
        parts = urllib.parse.urlsplit(request.url)
        status, body = self.answer(parts.path, dict(urllib.parse.parse_qsl(parts.query)))
        response = requests.Response()
        response.status_code = status
        response._content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return response


def wistia(answer):
    source = build("wistia", lambda: {"token": "t"}, "https://api.example/modern")
    source.http.session = Fake(answer)
    return source, source.http.session


def query(request) -> dict:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(request.url).query))


def vtt(size: int) -> bytes:
    head = b"WEBVTT\n\n00:00:00.000 --> 00:00:02.000\n"
    return head + b"x" * (size - len(head))


def test_a_caption_past_the_stacks_cap_is_refused_with_its_reason_and_one_at_the_cap_is_read():
    sizes = {"eng": MAX_TRACK_BYTES, "fre": MAX_TRACK_BYTES + 1}
    source, fake = wistia(lambda path, q: (200, vtt(sizes[path.rsplit("/", 1)[1]])))
    kept = source.resolve(parse_ref("wistia://abc/captions/eng"))
    assert kept.kind is ResolutionKind.READY and len(kept.text) == MAX_TRACK_BYTES
    refused = source.resolve(parse_ref("wistia://abc/captions/fre"))
    assert refused.kind is ResolutionKind.UNFETCHABLE
    assert refused.reason == f"the track file is over the {MAX_TRACK_BYTES:,} bytes allowed"  # the guarded fetch's
    assert [r.headers["Accept"] for r in fake.sent] == ["text/vtt", "text/vtt"]


def test_every_request_names_the_release_and_a_listing_ends_with_the_archived_pass():
    def answer(path, query):
        if path.endswith("/captions"):
            return 200, []
        if path.endswith("/customizations"):  # the player's chapters (wistia_extras.py): none
            return 200, {}
        media = {"hashed_id": "abc", "type": "Video", "status": "ready", "archived": query["archived"] == "true"}
        return 200, [{**media, "assets": [{"type": "OriginalFile", "url": "https://cdn.example/o.bin"}]}]

    source, fake = wistia(answer)
    active = source.page(None)
    assert active.cursor == ARCHIVED_PASS and len(active.entries) == 1
    archived = source.page(active.cursor)
    assert archived.cursor is None and "archived in Wistia" in archived.entries[0].reason
    lists = [
        dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(r.url).query))
        for r in fake.sent
        if urllib.parse.urlsplit(r.url).path.endswith("/medias")
    ]
    assert [q["archived"] for q in lists] == ["false", "true"] and all(q["cursor[enabled]"] == "1" for q in lists)
    assert {r.headers["X-Wistia-API-Version"] for r in fake.sent} == {API_VERSION} and len(fake.sent) == 4


def test_a_resumed_archived_pass_keeps_its_cursor_and_a_delta_its_page_number():
    source, fake = wistia(lambda path, q: (200, []))
    source.page(ARCHIVED_PASS + "c123")
    source.page(ARCHIVED_PASS + "3", since=1_700_000_000)
    first, second = (query(r) for r in fake.sent)
    assert first["cursor[after]"] == "c123" and first["archived"] == "true"
    assert second["page"] == "3" and second["sort_by"] == "updated" and second["archived"] == "true"
