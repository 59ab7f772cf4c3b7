"""Dropbox as a source: migrator.sources.dropbox against the "dropbox" simulator (itself checked against Dropbox's
official SDK in test_sdk_dropbox.py): the folder listed by its cursor, video files as rows with their sidecar
captions, what cannot be downloaded named up front with Dropbox's reason, four-hour temporary links minted at
the resolve, and a delta sweep continued from the cursor the last sweep kept, which lists every change it gives
(a file moved into the folder keeps its old server_modified)."""

from __future__ import annotations

import io
import json
import time

import pytest
import requests
from migrator.extras import read_chapters
from migrator.sources import ResolutionKind, Unfetchable, build, parse_ref
from migrator.sources import dropbox as dropbox_source
from migrator.sources.dropbox import NOT_ALLOWED, NOT_DOWNLOADABLE, UNSUPPORTED, sidecars
from migrator_cli.sweep import MARK_OVERLAP_S, read_mark, sweep

from infra.sim.platforms.dropbox import file_id, sidecar_id
from tests.sim.support import list_all

TOKEN = "dbx-source-token"


@pytest.fixture
def library(launch):
    def start(path: str = "/Videos", **config):
        sim = launch("dropbox", token=TOKEN, **{"library_size": 40, **config})
        creds = {"token": TOKEN, "path": path}
        return sim, build("dropbox", lambda: creds, sim.url, patient=True, rate_per_s=0)

    return start


def ops(sim) -> list[str]:
    return [r["op"] for r in sim.requests_log(ops=None)]


def test_video_files_are_rows_with_their_sidecar_captions(library):
    _sim, source = library(library_captions_every=4)  # captioned: 1, 5, 9, ...
    entries, _ = list_all(source)
    assert len(entries) == 40 and all(e.source_url.startswith("dropbox://id%3Alib") for e in entries)
    row = next(e for e in entries if e.asset_id == f"dropbox/{file_id(1)}")
    assert (row.title, row.metadata["file_name"]) == ("Library video 000001", "Library video 000001.mp4")
    assert row.created_at == "2020-01-01T00:01:00Z" and row.size_bytes > 0 and row.folder == "Training/2021"
    tracks = [(t.language, t.format, parse_ref(t.url).item) for t in row.tracks]
    assert tracks == [("en", "vtt", sidecar_id(1, "en")), ("fr", "srt", sidecar_id(1, "fr"))]
    assert not next(e for e in entries if e.asset_id.endswith(file_id(2))).tracks
    assert source.page(None).skipped > 0  # README.txt and the sidecars are files, not videos


def test_what_cannot_be_downloaded_is_named_up_front_with_dropboxs_reason(library):
    _sim, source = library(library_unfetchable_every=5)  # 4 not downloadable, 9 unsupported, 14 not allowed
    entries, _ = list_all(source)
    reasons = {e.asset_id.rsplit("/", 1)[1]: e.reason for e in entries if isinstance(e, Unfetchable)}
    assert reasons == {
        file_id(4): NOT_DOWNLOADABLE,
        file_id(9): UNSUPPORTED,
        file_id(14): NOT_ALLOWED,
        file_id(19): NOT_DOWNLOADABLE,
        file_id(24): UNSUPPORTED,
        file_id(29): NOT_ALLOWED,
        file_id(34): NOT_DOWNLOADABLE,
        file_id(39): UNSUPPORTED,
    }
    assert source.resolve(parse_ref(f"dropbox://{file_id(9)}")).reason == UNSUPPORTED


def test_the_temporary_link_is_minted_at_the_resolve_and_lives_four_hours(library):
    _sim, source = library(library_captions_every=4)
    ready = source.resolve(parse_ref(f"dropbox://{file_id(5)}"))
    assert ready.kind is ResolutionKind.READY and abs(ready.expires_at - (time.time() + 4 * 3600)) < 60
    assert requests.get(ready.url, headers={"Range": "bytes=0-15"}, timeout=5).status_code == 206
    (row,) = source.video(file_id(5)).entries
    srt = source.resolve(parse_ref(row.tracks[1].url))
    assert srt.kind is ResolutionKind.READY and requests.get(srt.url, timeout=5).text.startswith("1\n00:00:00,000")
    assert source.resolve(parse_ref("dropbox://id:lib9999999999")).kind is ResolutionKind.UNFETCHABLE  # gone
    assert source.video("id:lib9999999999").entries == [] and source.video("not-an-id").entries == []


def test_a_delta_sweep_continues_from_the_cursor_the_last_one_kept(library, tmp_path):
    sim, source = library()
    marks = tmp_path / "marks.json"
    first = sweep(source, tmp_path / "all.jsonl", mark_path=marks, out=io.StringIO())
    assert first.rows == 40 and json.loads(marks.read_text())["dropbox"]["delta"]
    sim.patch_config({"library_size": 43})  # three files added, one deleted, since
    sim.change_library(delete=[7], make_private=[])
    before = len(ops(sim))
    since = read_mark(marks, "dropbox") - MARK_OVERLAP_S
    delta = sweep(source, tmp_path / "delta.jsonl", mark_path=marks, since=since, out=io.StringIO())
    rows = [json.loads(line)["id"] for line in (tmp_path / "delta.jsonl").read_text().splitlines()]
    assert rows == [f"dropbox/{file_id(i)}" for i in (40, 41, 42)] and delta.rows == 3
    asked = ops(sim)[before:]
    assert "src_continue" in asked and "src_list_folder" not in asked  # continued, not listed again
    since = read_mark(marks, "dropbox") - MARK_OVERLAP_S  # --since last
    again = sweep(source, tmp_path / "again.jsonl", mark_path=marks, since=since, out=io.StringIO())
    assert again.rows == 0  # the cursor the delta handed on: nothing changed since
    earlier = sweep(source, tmp_path / "earlier.jsonl", mark_path=marks, since=since - 3 * 60, out=io.StringIO())
    assert earlier.rows == 5  # earlier than the kept cursor: listed again by server_modified (38 to 42)


def move(sim, fid: str, to_path: str) -> None:
    """The owner moves a file (files/move_v2, as the SDK sends it): its server_modified stays as it was."""
    answer = requests.post(
        f"{sim.url}/2/files/move_v2",
        json={"from_path": fid, "to_path": to_path},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=5,
    )
    assert answer.status_code == 200, answer.text


def test_a_file_moved_into_the_folder_since_the_kept_cursor_is_listed_whatever_its_server_modified(library, tmp_path):
    sim, source = library(path="/Videos/Training")  # 1, 4, ..., 37: newest change 2020-01-01 01:37
    marks = tmp_path / "marks.json"
    first = sweep(source, tmp_path / "all.jsonl", mark_path=marks, out=io.StringIO())
    assert first.rows == 13
    move(sim, file_id(0), "/Videos/Training/2021/Library video 000000.mp4")  # changed 01:00, before the mark
    since = read_mark(marks, "dropbox") - MARK_OVERLAP_S  # --since last
    delta = sweep(source, tmp_path / "delta.jsonl", mark_path=marks, since=since, out=io.StringIO())
    rows = [json.loads(line) for line in (tmp_path / "delta.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == [f"dropbox/{file_id(0)}"] and delta.rows == 1
    assert rows[0]["folder"] == "2021"
    again = sweep(source, tmp_path / "again.jsonl", mark_path=marks, since=since, out=io.StringIO())
    assert again.rows == 0  # the cursor the delta handed on has given it already


@pytest.mark.parametrize("kept", [True, False])
def test_a_listing_from_the_folder_still_keeps_only_what_changed_since(library, monkeypatch, kept):
    """Without a kept cursor (or once Dropbox reset it), the folder is listed again from the start, page after
    page: those pages are no changes, and `since` still filters them by server_modified."""
    _sim, source = library(library_size=60)
    monkeypatch.setattr(dropbox_source, "PAGE_LIMIT", 20)  # several pages of the folder
    later = 1_577_836_800 + 50 * 60 + 3600  # server_modified of video 50 on
    cursor, found, pages = ("forged.cursor" if kept else None), [], 0
    while True:
        page = source.page(cursor, since=later, tracks=False)
        found, cursor, pages = found + [e.asset_id for e in page.entries], page.cursor, pages + 1
        if cursor is None:
            break
    assert pages >= 2 and found == [f"dropbox/{file_id(i)}" for i in range(50, 60)]


def test_a_cursor_dropbox_reset_lists_the_folder_again_keeping_what_changed_since(library, tmp_path):
    sim, source = library()
    marks = tmp_path / "marks.json"
    sweep(source, tmp_path / "all.jsonl", mark_path=marks, out=io.StringIO())
    sim.reset()  # every cursor handed out before is invalid now (the library's secret is new)
    later = 1_577_836_800 + 30 * 60 + 3600  # server_modified of video 30 on
    sweep(source, tmp_path / "delta.jsonl", mark_path=marks, since=later, out=io.StringIO())
    rows = [json.loads(line)["id"] for line in (tmp_path / "delta.jsonl").read_text().splitlines()]
    assert rows == [f"dropbox/{file_id(i)}" for i in range(30, 40)]
    assert "src_list_folder" in ops(sim)


def test_a_folder_below_the_root_is_migrated_alone_with_its_folders_named_below_it(library):
    _sim, source = library(path="/Videos/Training")
    entries, _ = list_all(source)
    assert {e.folder for e in entries} == {"2021"} and len(entries) == 13  # every third: 1, 4, ..., 37


def test_a_poster_and_a_chapters_file_beside_a_video_come_with_it_and_its_folder_is_a_collection(library):
    _sim, source = library(library_size=13)  # a poster beside 0, 3, 6, 9, 12; chapters beside 0, 4, 8, 12
    entries, _ = list_all(source)
    rows = {e.asset_id.rsplit("/", 1)[1]: e for e in entries}
    posters = {i for i in range(13) if rows[file_id(i)].thumbnail_url}
    chaptered = {i for i in range(13) if any(t.kind == "chapters" for t in rows[file_id(i)].tracks)}
    assert posters == {0, 3, 6, 9, 12} and chaptered == {0, 4, 8, 12}
    zero = rows[file_id(0)]
    assert parse_ref(zero.thumbnail_url).item == sidecar_id(0, "poster")
    [chapters] = [t for t in zero.tracks if t.kind == "chapters"]
    assert parse_ref(chapters.url).item == sidecar_id(0, "chapters") and chapters.language == "und"
    image = source.resolve(parse_ref(zero.thumbnail_url))
    assert requests.get(image.url, timeout=5).content[:3] == b"\xff\xd8\xff"
    vtt = requests.get(source.resolve(parse_ref(chapters.url)).url, timeout=5).content
    assert [(c.start_s, c.title) for c in read_chapters(vtt)] == [(0.0, "Intro"), (10.0, "Video 0: the demo")]
    assert [(c.id, c.name, c.kind) for c in rows[file_id(1)].collections] == [
        ("/videos/training/2021", "Training/2021", "folder")
    ]
    without = build("dropbox", lambda: {"token": TOKEN, "path": "/Videos"}, _sim.url, patient=True, rate_per_s=0)
    bare = {e.asset_id: e for e in list_all(without, tracks=False)[0]}
    assert not bare[zero.asset_id].thumbnail_url and bare[zero.asset_id].collections  # no folder listings


def test_sidecars_are_matched_by_the_videos_name():
    names = {
        "Talk.vtt": "id:a",
        "talk.en.srt": "id:b",
        "Talk.pt-BR.vtt": "id:c",
        "Talk 2.vtt": "id:d",
        "Talk.notes.txt": "id:e",
        "Talk.xx-invalid-.vtt": "id:f",
    }
    assert sidecars("Talk.mp4", names) == [("id:a", None, "vtt"), ("id:b", "en", "srt"), ("id:c", "pt-BR", "vtt")]
    assert sidecars("Talk.en.mp4", {"Talk.en.vtt": "id:g", "Talk.vtt": "id:h"}) == [("id:g", None, "vtt")]


def test_dropboxs_429_is_waited_out(library):
    sim, source = library(library_size=30, read_rate=10, read_burst=2)
    slept = []
    source.sleep = lambda s: (slept.append(s), time.sleep(min(s, 0.3)))
    entries, _ = list_all(source, tracks=False)
    assert len(entries) == 30 and source.throttled > 0 and slept and sim.stats()["read_throttled"] > 0
