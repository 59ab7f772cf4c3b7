"""bench/store_listings.py against the emulators it stands in for: a sweep of the stand-in's library and a sweep of
the same library filled into fake-gcs-server or Azurite (infra/storage_emulators.StoreLibrary) write the same rows
and name the same objects unfetchable, with the same reasons. bench/inventory's million-object memory runs list
the stand-in; if it drifts from what the emulators answer, this fails."""

from __future__ import annotations

import json

import pytest
from migrator_cli.sweep import build_source, sweep

from bench.store_listings import StoreListing
from infra.storage_emulators import StoreLibrary

SIZE = 120  # past two of the stand-in's images (every 50th), one GCS page
# What names the store rather than the object: the account, the id and reference made from it, the upload's time.
PER_STORE = {"id", "source_url", "created_at"}


def swept(platform: str, library, tmp_path) -> tuple[dict, dict]:
    """{object name: row without PER_STORE}, {object name: reason} of one sweep of `library`."""
    source = build_source(platform, credentials=library.credentials, base_url=library.url, rate=0)
    out = tmp_path / f"{platform}-{type(library).__name__}.jsonl"
    with open(tmp_path / "log", "w") as log:
        summary = sweep(source, out, tracks=False, out=log, restart=True)
    assert summary.done
    rows, unfetchable = {}, {}
    for line in out.read_text().splitlines():
        row = json.loads(line)
        name = row["source_url"].split("/library/", 1)[1]
        metadata = {k: v for k, v in row["metadata"].items() if k not in ("source_id", "azure_account")}
        rows[name] = {**{k: v for k, v in row.items() if k not in PER_STORE}, "metadata": metadata}
    for line in out.with_name(out.name + ".unfetchable.jsonl").read_text().splitlines():
        entry = json.loads(line)
        unfetchable[entry["source_url"].split("/library/", 1)[1]] = entry["reason"]
    return rows, unfetchable


@pytest.mark.parametrize("platform", ["gcs", "azure"])
def test_the_stand_in_lists_what_the_emulator_holds_row_for_row(platform, tmp_path):
    emulator = StoreLibrary(platform, SIZE).start()
    try:
        real_rows, real_unfetchable = swept(platform, emulator, tmp_path)
    finally:
        emulator.stop()
    stand_in = StoreListing(platform, SIZE).start()
    try:
        rows, unfetchable = swept(platform, stand_in, tmp_path)
    finally:
        stand_in.stop()
    assert len(real_rows) == SIZE - 2 and len(real_unfetchable) == 2, "the library is not the one described"
    assert rows == real_rows
    assert unfetchable == real_unfetchable
