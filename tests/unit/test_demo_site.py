"""The demo's sample site (infra/demo_site.py): made from a cut-over map, every embed on it is one the rewrite finds
and maps, and a video not moved keeps its embeds."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from migrator_cli.rewrite.engine import Engine
from migrator_cli.rewrite.forms import all_forms
from migrator_cli.rewrite.idmap import from_rows

from infra.demo_site import sample_site

pytestmark = pytest.mark.unit

ROWS = [
    ("v1", "vimeo", "76979871", "vimeo://76979871", "", "ready"),
    ("m1", "mux", "ASSETabc", "mux://ASSETabc", "PLAYBACKid01", "ready"),
    ("s1", "s3", "s1", "s3://demo-bucket/talks/a.mp4", "", "ready"),
    ("u1", "https", "u1", "https://media.example.org/talks/b.mp4", "", "ready"),
    ("k1", "kaltura", "1_abcd1234", "kaltura://1_abcd1234", "", "failed"),
]


def write_map(path: Path) -> list[dict]:
    rows = []
    for asset, platform, source_id, url, aliases, state in ROWS:
        rows.append(
            {
                "id": asset,
                "source_platform": platform,
                "source_id": source_id,
                "source_url": url,
                "source_aliases": aliases,
                "provider": "cloudflare",
                "remote_id": f"{asset}0000000000000000000000000000"[:32],
                "player_url": f"https://customer-abc.cloudflarestream.com/{asset}/iframe",
                "hls_url": f"https://customer-abc.cloudflarestream.com/{asset}/manifest/video.m3u8",
                "thumbnail_url": "",
                "state": state,
            }
        )
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def test_the_sample_site_holds_what_the_rewrite_finds_and_maps(tmp_path):
    rows = write_map(tmp_path / "cutover.csv")
    embeds = sample_site(tmp_path / "cutover.csv", tmp_path / "site", pages=5)
    pages = sorted((tmp_path / "site").glob("*.html"))
    assert len(pages) == 5
    per_platform = {f.platform for f in all_forms()}
    assert {"vimeo", "mux", "s3", "kaltura"} <= per_platform
    engine = Engine(from_rows(rows))
    for page in pages:
        engine.at(page.name)
        engine.rewrite(page.read_text(encoding="utf-8"))
    report = engine.report
    assert sum(report.found.values()) == embeds >= len([f for f in all_forms() if f.platform == "vimeo"])
    assert "not in the map" not in report.left
    assert report.left.get("rejected", 0) == report.found["kaltura"] > 0  # the failed video's embeds stay
    assert report.found["https"] == 2 and report.found["mux"] > 0 and report.found["s3"] > 0
