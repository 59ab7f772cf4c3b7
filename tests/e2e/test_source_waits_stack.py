"""Files a source must prepare before they can be fetched (Stream's MP4 download, Mux's master file), end to end:
each waited for without spending an attempt, one that never finishes failed with its reason once
SourcePrepareTimeoutSeconds has passed.
"""

from __future__ import annotations

import pytest

from tests.e2e.source_pairs import assert_never_sent, assert_titles_carried, held_by
from tests.e2e.stacks import SOURCE_PREPARE_TIMEOUT_S as PREPARE_TIMEOUT_S

pytestmark = pytest.mark.e2e


PREPARED = [
    ("cloudflare", "mux", "Stream is preparing the MP4 download"),
    ("mux", "cloudflare", "Mux is preparing the master file"),
]


@pytest.mark.parametrize(("platform", "to", "preparing"), PREPARED)
def test_files_the_source_prepares_are_waited_for_without_attempts_and_one_that_never_is_fails(
    platform, to, preparing, sources, targets, migrate, aws
):
    sources.sims[platform].patch_config({"library_stuck_every": 7})
    target = targets(to)
    rows, unfetchable, items = migrate(platform, target, timeout_s=PREPARE_TIMEOUT_S + 200)
    stuck = {r["id"] for r in rows if held_by(sources, platform, r).stuck}
    assert stuck, "no stuck preparation in the library: the test would prove nothing"
    for row in rows:
        record = items[row["id"]]
        if row["id"] in stuck:
            assert record["state"] == "failed" and "retry_after" not in record
            assert f"(SourcePrepareTimeoutSeconds {PREPARE_TIMEOUT_S}): {preparing}" in record["last_error"]
        else:
            assert record["state"] == "ready", record
            assert int(record["holds"]) >= 1 and int(record["attempts"]) == 1  # waited, and no attempt spent on it
    assert_never_sent(aws, target, unfetchable)
    assert_titles_carried(sources, platform, target, rows, items)
    assert target.sim.stats()["duplicate_videos"] == 0
