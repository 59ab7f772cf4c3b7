"""The archive worker's small pure parts: what a message must be, and what row.json keeps."""

from __future__ import annotations

import pytest
from migrator.archiver import archive_message, archive_message_id, first_size, row_of, suffix_for
from migrator.trackfetch import Fetched


@pytest.mark.parametrize(
    ("body", "asset_id"),
    [
        (archive_message("vimeo/1"), "vimeo/1"),
        ('{"id": "a", "x": 1}', None),  # nothing but the id
        ('{"id": 3}', None),
        ('{"id": "#pacer"}', None),  # not an id the ledger takes: a control item's
        ("not json", None),
        ("", None),
        (None, None),
    ],
)
def test_an_archive_message_names_one_asset_or_is_poison(body, asset_id):
    assert archive_message_id(body) == asset_id


@pytest.mark.parametrize(
    ("status", "body", "headers", "size"),
    [
        (206, b"x" * 10, {"Content-Range": "bytes 0-9/1000"}, 1000),
        (206, b"x" * 10, {}, None),  # a range with no total: the size is unknown
        (200, b"x" * 10, {}, 10),  # the whole file: its length is its size
    ],
)
def test_the_files_size_comes_from_its_first_read(status, body, headers, size):
    assert first_size(Fetched(body, "https://h/f", status, headers)) == size


def test_the_suffix_is_the_sources_name_then_the_links_then_its_type():
    read = Fetched(b"", "https://cdn.example/dl/abc", 206, {"Content-Type": "video/quicktime"})
    assert suffix_for("https://videos.example/talk.mkv", read) == "mkv"
    assert suffix_for("vimeo://videos/1", read) == "mov"


def test_row_json_keeps_what_the_row_carried_and_not_the_ledgers_working_fields():
    item = {"asset_id": "a", "title": "T", "lease_token": "secret-ish", "due_lane": "heal#1", "tags": ["x"]}
    assert row_of(item) == {"asset_id": "a", "title": "T", "tags": ["x"]}
