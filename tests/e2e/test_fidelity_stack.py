"""What a video is arrives with it, end to end: template.yaml deployed with `Provider=<p>` against the
simulator speaking that provider's API, a library loaded with `migrator load`, and every field read
back from the simulator in the provider's own place.

For each of Mux, Cloudflare Stream and api.video, a library whose rows carry a title, a description,
tags, custom fields, a poster time, a creation time, a folder and a privacy (private, public,
unlisted, none) arrives with each field where that provider keeps it; private rows and rows with no
privacy (the stack's DefaultPlayback, left at its default) are signed at the provider, public and
unlisted ones public; the stack's provider options and a row's own reach the provider; what a
provider has no place for is noted in the ledger and the report; `migrator audit` finds no privacy
drift; and a row with an option the provider does not take is refused at load.
"""

from __future__ import annotations

import json

import pytest
from migrator.ledger import Ledger

from tests.conftest import unique
from tests.e2e.conftest import PROVIDERS, provider_stack
from tests.e2e.stacks import settle_with_reconcile

pytestmark = pytest.mark.e2e
# A row's own options, over the stack's.
ROW_OPTIONS = {
    "mux": {"mux": {"video_quality": "premium", "max_resolution_tier": "2160p"}},
    "cloudflare": {"cloudflare": {"allowedOrigins": ["media.example.org"]}},
    "apivideo": {"apivideo": {"playerId": "pl45KFKdlddgk654dspkze"}},
}
# An option the stack's provider does not take: the row is refused at load.
BAD_OPTIONS = {
    "mux": {"mux": {"playback_policies": ["public"]}},
    "cloudflare": {"cloudflare": {"requireSignedURLs": False}},
    "apivideo": {"apivideo": {"public": True}},
}
PRIVACIES = {"private": "signed", "public": "public", "unlisted": "public", "default": "signed"}


def held(deployed, remote_id: str) -> dict:
    """The provider's own object for a video, as the simulator holds it (GET, in its wire format)."""
    client = deployed.client()
    client.http.session.trust_env = False
    account = deployed.acct.sim.get("account_id")
    path, key = {
        "mux": (f"/video/v1/assets/{remote_id}", "data"),
        "cloudflare": (f"/accounts/{account}/stream/{remote_id}", "result"),
        "apivideo": (f"/videos/{remote_id}", None),
    }[deployed.name]
    answer = client.http.send("GET", path)
    assert answer.status == 200, answer.text
    return answer.body[key] if key else answer.body


@pytest.fixture(scope="module", params=PROVIDERS)
def deployed(request, stacks, sources, track_files):
    # DefaultPlayback is left at its default; the provider's options are set (stacks.PROVIDER_OPTIONS).
    with provider_stack(request.param, stacks, sources, track_files) as stack:
        yield stack


def library(run: str, name: str) -> list[dict]:
    """One row per privacy, each carrying everything a video is; one with its own options; one refused."""
    rows = []
    for word in PRIVACIES:
        row = {
            "id": f"{run}/{word}",
            "source_url": f"https://media.example.com/{run}/{word}.mp4?duration=40",
            "title": f"Talk ({word})",
            "duration_s": 40,
            "description": f"A talk that is {word}.",
            "tags": ["talks", word],
            "metadata": {"speaker": "Ada", "episode": 3},
            "poster_time_s": 10,
            "created_at": "2019-05-01T10:00:00Z",
            "folder": "conferences/2019",
        }
        if word != "default":
            row["privacy"] = word
        rows.append(row)
    rows.append(
        {"id": f"{run}/options", "source_url": f"https://m.example.com/{run}/o.mp4", "options": ROW_OPTIONS[name]}
    )
    rows.append({"id": f"{run}/long", "source_url": f"https://m.example.com/{run}/l.mp4", "title": "🎬" * 300})
    rows.append(
        {"id": f"{run}/refused", "source_url": f"https://m.example.com/{run}/r.mp4", "options": BAD_OPTIONS[name]}
    )
    return rows


def test_a_library_arrives_with_every_field_in_the_providers_own_place_and_private_rows_private(
    deployed, aws, cli, tmp_path
):
    name, run = deployed.name, unique(deployed.name)
    rows = library(run, name)
    inventory = tmp_path / "library.jsonl"
    inventory.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    code, out, err = cli("load", str(inventory))
    assert f"line {len(rows)}: options.{name}." in err and "is not an option of" in err, err  # refused at load
    ids = [row["id"] for row in rows[:-1]]
    table = deployed.outputs["LedgerTableName"]
    settle_with_reconcile(aws("dynamodb"), table, ids, {"ready"}, 180, lambda: cli("reconcile", "--poll-after", "10"))
    ledger = Ledger(table, aws("dynamodb"))
    items = {asset_id: ledger.get(asset_id) for asset_id in ids}  # whole items, lists as lists
    videos = {asset_id: held(deployed, item["remote_id"]) for asset_id, item in items.items()}

    for word, playback in PRIVACIES.items():
        asset_id = f"{run}/{word}"
        video, item = videos[asset_id], items[asset_id]
        assert item["playback"] == playback, (word, item)
        check = {"mux": _mux_holds, "cloudflare": _cloudflare_holds, "apivideo": _apivideo_holds}[name]
        check(video, word, playback, asset_id)
        notes = item.get("fidelity_notes") or []
        if name == "mux":  # no field for them: kept in the ledger, and said
            assert "description: not carried by mux (kept in the ledger)" in notes
            assert "tags: not carried by mux (kept in the ledger)" in notes
        if word == "unlisted":
            assert f"privacy: unlisted sent as public ({name} has no unlisted)" in notes

    options = videos[f"{run}/options"]
    if name == "mux":
        assert (options["video_quality"], options["max_resolution_tier"]) == ("premium", "2160p")  # the row's
        assert [f["name"] for f in options["static_renditions"]["files"]] == ["highest.mp4"]  # the stack's
        assert videos[f"{run}/long"]["meta"]["title"] == "🎬" * 256  # 512 UTF-16 units
        assert "title: cut to 512 characters" in items[f"{run}/long"]["fidelity_notes"]
    elif name == "cloudflare":
        assert options["allowedOrigins"] == ["media.example.org"]
        assert "created_at" not in options["meta"]  # a row with none: never the ledger's own time
        assert videos[f"{run}/private"]["allowedOrigins"] == ["example.com"]
    else:
        assert options["playerId"] == "pl45KFKdlddgk654dspkze" and options["mp4Support"] is False
        assert "created_at" not in {m["key"] for m in options["metadata"]}  # a row with none

    code, out, err = cli("report", "--format", "jsonl")
    reported = {doc["id"]: doc for doc in map(json.loads, out.splitlines()) if doc["id"].startswith(run)}
    assert reported[f"{run}/unlisted"]["playback"] == "public"
    assert reported[f"{run}/unlisted"]["fidelity_notes"] == list(items[f"{run}/unlisted"]["fidelity_notes"])
    code, out, err = cli("audit", "--json")
    audited = json.loads(out)
    assert code == 0 and audited["privacy_drift"] == 0 and audited["ok"], out + err


def _mux_holds(asset: dict, word: str, playback: str, asset_id: str) -> None:
    assert [p["policy"] for p in asset["playback_ids"]] == [playback]
    assert asset["meta"]["title"] == f"Talk ({word})" and asset["passthrough"] == asset_id
    assert asset["video_quality"] == "plus"  # the stack's MuxVideoQuality
    assert [f["resolution"] for f in asset["static_renditions"]["files"]] == ["highest"]  # MuxStaticRenditions


def _cloudflare_holds(video: dict, word: str, playback: str, asset_id: str) -> None:
    assert video["requireSignedURLs"] is (playback == "signed")
    meta = video["meta"]
    assert (meta["name"], meta["migration_ref"], meta["description"]) == (
        f"Talk ({word})",
        asset_id,
        f"A talk that is {word}.",
    )
    assert (meta["tags"], meta["speaker"], meta["episode"]) == (["talks", word], "Ada", 3)
    assert (meta["created_at"], meta["folder"]) == ("2019-05-01T10:00:00Z", "conferences/2019")
    assert video["thumbnailTimestampPct"] == 0.25  # poster 10 s of 40
    assert video["allowedOrigins"] == ["example.com"]  # the stack's CloudflareAllowedOrigins


def _apivideo_holds(video: dict, word: str, playback: str, asset_id: str) -> None:
    assert video["public"] is (playback == "public")
    assert (video["title"], video["description"], video["tags"]) == (
        f"Talk ({word})",
        f"A talk that is {word}.",
        ["talks", word],
    )
    pairs = {m["key"]: m["value"] for m in video["metadata"]}
    assert (pairs["migration_ref"], pairs["speaker"], pairs["episode"]) == (asset_id, "Ada", "3")
    assert (pairs["created_at"], pairs["folder"], pairs["poster_time_s"]) == (
        "2019-05-01T10:00:00Z",
        "conferences/2019",
        "10.0",
    )
    assert video["mp4Support"] is False  # the stack's ApiVideoMp4Support
