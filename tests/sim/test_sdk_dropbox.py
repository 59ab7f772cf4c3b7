"""The "dropbox" simulator driven by Dropbox's official SDK (dropbox 12.2.4): its stone validators check every
field of every answer (ids, revs, content hashes, times in '%Y-%m-%dT%H:%M:%SZ'), its route errors decode the
409s (GetTemporaryLinkError, ListFolderContinueError, RelocationError), its AuthError the 401 and its
RateLimitError the 429. A file the owner moves (files_move_v2) is a change a folder's cursor gives.

The SDK always calls https://api.dropboxapi.com; a requests adapter mounted on the session it is given hands
those requests to the simulator on loopback instead (the SDK takes a `session`, as its docs say, for pools)."""

from __future__ import annotations

import time

import dropbox
import pytest
import requests
from dropbox import files
from dropbox.exceptions import ApiError, AuthError, RateLimitError
from requests.adapters import HTTPAdapter

from infra.sim.platforms.dropbox import file_id, sidecar_id

TOKEN = "dbx-sim-token"


class ToSimulator(HTTPAdapter):
    """Every https request of the session, sent to the simulator at `base` instead (path and query kept)."""

    def __init__(self, base: str):
        super().__init__(max_retries=0)
        self.base = base

    def send(self, request, **kwargs):
        rest = request.url.partition("://")[2]
        request.url = self.base + "/" + rest.split("/", 1)[1]
        return super().send(request, **kwargs)


def sdk(sim, token: str = TOKEN, **options) -> dropbox.Dropbox:
    session = requests.Session()
    session.trust_env = False
    session.mount("https://", ToSimulator(sim.url))
    return dropbox.Dropbox(token, session=session, **options)


@pytest.fixture
def library(launch):
    def start(**config):
        return launch("dropbox", token=TOKEN, **{"library_size": 30, **config})

    return start


def test_the_sdk_lists_the_folder_page_by_page_and_reads_each_file(library):
    sim = library(library_captions_every=3)
    dbx = sdk(sim)
    first = dbx.files_list_folder("/Videos", recursive=True, limit=20)
    assert first.has_more and len(first.entries) == 20
    kinds = {type(e).__name__ for e in first.entries}
    assert kinds == {"FolderMetadata", "FileMetadata"}
    seen = list(first.entries)
    page = first
    while page.has_more:
        page = dbx.files_list_folder_continue(page.cursor)
        seen += page.entries
    videos = [e for e in seen if isinstance(e, files.FileMetadata) and e.name.endswith(".mp4")]
    assert len(videos) == 30 and videos[0].path_display == "/Videos/Marketing/Library video 000000.mp4"
    assert videos[0].id == file_id(0) and videos[0].is_downloadable and len(videos[0].content_hash) == 64
    names = {e.name for e in seen}
    assert {"Library video 000001.en.vtt", "Library video 000001.fr.srt", "README.txt"} <= names
    meta = dbx.files_get_metadata(file_id(4))
    assert meta.name == "Library video 000004.mp4" and meta.size == videos[4].size


def test_a_temporary_link_serves_the_file_and_is_gone_after_its_hours(library):
    sim = library(library_captions_every=3, link_ttl_s=3)  # 1 s did not outlive a loaded machine's way to the GET
    dbx = sdk(sim)
    link = dbx.files_get_temporary_link(file_id(2))
    assert link.metadata.id == file_id(2)
    answer = requests.get(link.link, headers={"Range": "bytes=0-15"}, timeout=5)
    assert answer.status_code == 206 and answer.content[4:8] == b"ftyp"
    caption = dbx.files_get_temporary_link(sidecar_id(1, "fr")).link
    assert requests.get(caption, timeout=5).text.startswith("1\n00:00:00,000 --> ")
    time.sleep(3.1)
    assert requests.get(link.link, timeout=5).status_code == 410  # "afterwards you will get 410 Gone"


def test_the_sdk_decodes_what_cannot_be_had_as_dropbox_names_it(library):
    sim = library(library_unfetchable_every=5)  # 4 not downloadable, 9 unsupported, 14 not allowed
    dbx = sdk(sim)
    assert dbx.files_get_metadata(file_id(4)).is_downloadable is False
    with pytest.raises(ApiError) as unsupported:
        dbx.files_get_temporary_link(file_id(9))
    assert unsupported.value.error.is_unsupported_file()
    with pytest.raises(ApiError) as refused:
        dbx.files_get_temporary_link(file_id(14))
    assert refused.value.error.is_not_allowed()
    with pytest.raises(ApiError) as missing:
        dbx.files_get_temporary_link("id:lib9999999999")
    assert missing.value.error.is_path() and missing.value.error.get_path().is_not_found()
    hidden = dbx.files_list_folder("/Videos", recursive=True, include_non_downloadable_files=False)
    assert file_id(4) not in {getattr(e, "id", None) for e in hidden.entries}
    with pytest.raises(AuthError):
        sdk(sim, token="wrong").files_list_folder("")


def test_the_latest_cursor_and_continue_give_what_changed_since(library):
    sim = library()
    dbx = sdk(sim)
    latest = dbx.files_list_folder_get_latest_cursor("/Videos", recursive=True).cursor
    assert dbx.files_list_folder_continue(latest).entries == []
    sim.patch_config({"library_size": 32})  # two videos added, and the poster beside video 30
    sim.change_library(delete=[3], make_private=[])
    changes = dbx.files_list_folder_continue(latest)
    added = [e.id for e in changes.entries if isinstance(e, files.FileMetadata)]
    assert added == [file_id(30), sidecar_id(30, "poster"), file_id(31)]
    assert [type(e).__name__ for e in changes.entries if not isinstance(e, files.FileMetadata)] == ["DeletedMetadata"]
    sim.reset()  # the library's secret is new: every cursor handed out before is invalid
    with pytest.raises(ApiError) as reset:
        dbx.files_list_folder_continue(latest)
    assert reset.value.error.is_reset()


def test_a_file_moved_into_the_folder_is_a_change_the_cursor_gives_with_its_old_server_modified(library):
    sim = library()
    dbx = sdk(sim)
    training = dbx.files_list_folder_get_latest_cursor("/Videos/Training", recursive=True).cursor
    marketing = dbx.files_list_folder_get_latest_cursor("/Videos/Marketing", recursive=True).cursor
    before = dbx.files_get_metadata(file_id(0))  # in Marketing, changed 2020-01-01 01:00
    moved = dbx.files_move_v2(file_id(0), "/Videos/Training/2021/Library video 000000.mp4").metadata
    assert moved.path_display == "/Videos/Training/2021/Library video 000000.mp4" and moved.id == file_id(0)
    assert (moved.server_modified, moved.rev) == (before.server_modified, before.rev)  # no content changed
    changes = dbx.files_list_folder_continue(training)
    (arrived,) = changes.entries
    assert isinstance(arrived, files.FileMetadata) and arrived.id == file_id(0)
    assert arrived.server_modified == before.server_modified and not changes.has_more
    (left,) = dbx.files_list_folder_continue(marketing).entries
    assert isinstance(left, files.DeletedMetadata) and left.path_lower == before.path_lower
    assert dbx.files_list_folder_continue(changes.cursor).entries == []  # seen once
    with pytest.raises(ApiError) as missing:
        dbx.files_move_v2("id:lib9999999999", "/Videos/Webinars/x.mp4")
    assert missing.value.error.is_from_lookup() and missing.value.error.get_from_lookup().is_not_found()


def test_a_429_is_waited_out_by_the_sdk_from_its_retry_after(library):
    sim = library(read_rate=2, read_burst=1)
    dbx = sdk(sim, max_retries_on_rate_limit=0)
    dbx.files_get_metadata(file_id(0))
    with pytest.raises(RateLimitError) as limited:
        dbx.files_get_metadata(file_id(1))
    assert limited.value.backoff == 1
    assert sdk(sim).files_get_metadata(file_id(1)).id == file_id(1)  # its default: retried after the backoff


def test_the_sdk_finds_a_poster_and_a_chapters_file_beside_a_video_and_reads_them(library):
    sim = library(library_size=13)
    dbx = sdk(sim)
    beside = dbx.files_list_folder("/Videos/Marketing")  # video 0's folder, not recursively: what the source asks
    names = {e.name: e for e in beside.entries if isinstance(e, files.FileMetadata)}
    assert {"Library video 000000.jpg", "Library video 000000.chapters.vtt"} <= set(names)
    poster = dbx.files_get_temporary_link(names["Library video 000000.jpg"].id).link
    image = requests.get(poster, timeout=5)
    assert image.headers["Content-Type"] == "image/jpeg" and image.content[:3] == b"\xff\xd8\xff"
    chapters = dbx.files_get_temporary_link(sidecar_id(0, "chapters")).link
    assert requests.get(chapters, timeout=5).text.startswith("WEBVTT\n\n00:00:00.000 --> 00:00:10.000\nIntro")
    assert "Library video 000001.jpg" not in names and "Library video 000003.jpg" not in names  # 3 is in Webinars
