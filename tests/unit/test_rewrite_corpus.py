"""The rewrite corpus (tests/rewrite_corpus.py): every documented form found, rewritten for every target where the
target has an equivalent, no look-alike touched, and a second pass that changes nothing."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from migrator_cli.rewrite.engine import ALREADY, Engine, Rewritten, decide
from migrator_cli.rewrite.forms import all_forms, find
from migrator_cli.rewrite.idmap import from_rows
from migrator_cli.rewrite.model import TOKEN_MARKER
from migrator_cli.rewrite.targets import PLAYERS

from tests.rewrite_corpus import TARGETS, build, map_rows

pytestmark = pytest.mark.unit

CORPUS = build()
# The kinds of embed each target has no equivalent of (its documents name no such URL or element for a video), which
# are left with that reason; everything else it rewrites. A change here is a change of what users get: say why.
NO_EQUIVALENT = {
    "mux": {"dash", "storyboard"},  # Mux delivers HLS only
    "cloudflare": {"storyboard"},
    "apivideo": {"dash", "storyboard"},
    "bunny": {"dash", "storyboard"},
    "jwplayer": {"dash", "mp4", "storyboard"},
    "vimeo": {"hls", "dash", "thumbnail", "mp4", "storyboard"},  # its files and images are behind the API, per plan
    "generic": {"dash", "mp4", "storyboard"},  # the contract gives an HLS, a player and a thumbnail URL
    "aws": {
        "iframe",
        "script",
        "element",
        "player_url",
        "page",
        "oembed",
        "dash",
        "mp4",
        "storyboard",
    },  # HLS and posters only
}


def test_the_corpus_covers_every_form_in_a_few_hundred_pages():
    documented = {e["form"] for page in CORPUS.pages for e in page.expected}
    assert {f.name for f in all_forms()} <= documented  # every registered form has a documented snippet
    assert len(CORPUS.pages) >= 300 and CORPUS.expected >= 300
    assert sum(p.lookalike for p in CORPUS.pages) >= 60
    assert set(PLAYERS) == set(TARGETS)


@pytest.mark.parametrize("page", [p for p in CORPUS.pages if not p.lookalike], ids=lambda p: p.name)
def test_each_page_holds_exactly_its_listed_embeds(page):
    found = [{"form": e.form, "platform": e.platform, "kind": e.kind, "video_id": e.video_id} for e in find(page.text)]
    wanted = [{k: e[k] for k in ("form", "platform", "kind", "video_id")} for e in page.expected]
    assert found == wanted


@pytest.mark.parametrize("page", [p for p in CORPUS.pages if p.lookalike], ids=lambda p: p.name)
def test_no_lookalike_is_an_embed(page):
    assert find(page.text) == []


@pytest.mark.parametrize("target", TARGETS)
def test_every_target_rewrites_the_corpus_and_a_second_pass_changes_nothing(target):
    idmap = from_rows(map_rows(CORPUS, target))
    engine = Engine(idmap)
    outputs = {}
    for page in CORPUS.pages:
        engine.at(page.name)
        outputs[page.name] = engine.rewrite(page.text)
        if page.lookalike:
            assert outputs[page.name] == page.text, f"a look-alike was rewritten in {page.name}"
        elif page.expected:
            assert outputs[page.name] != page.text or _all_left(engine, page.name), page.name
    report = engine.report
    assert sum(report.found.values()) == CORPUS.expected  # 100 % of the known forms found
    left = Counter(report.left)
    # What a target cannot write is said, per embed, with a reason; nothing else is left.
    assert set(left) <= {"no equivalent"}, left
    rewritten = sum(report.rewritten.values())
    assert rewritten + left["no equivalent"] == CORPUS.expected
    left_kinds = {_kind_of(entry) for entry in report.left_listed}
    assert left_kinds == NO_EQUIVALENT[target]
    for kind_pair in report.written_as:
        assert kind_pair.split(" -> ")[1] in ("iframe", "script", "element", "player_url"), kind_pair
    # No page keeps a found source embed that was rewritten, and a second pass changes nothing.
    again = Engine(idmap)
    for page in CORPUS.pages:
        assert again.rewrite(outputs[page.name]) == outputs[page.name], page.name
    assert sum(again.report.rewritten.values()) == 0
    assert set(again.report.left) <= {ALREADY, "no equivalent"}


def _kind_of(entry: dict) -> str:
    if entry["form"] == "mux.storyboard":
        return "storyboard"  # a thumbnail's kind, but a WebVTT of images no target writes
    return next(f.kind for f in all_forms() if f.name == entry["form"])


def _all_left(engine: Engine, name: str) -> bool:
    return any(entry["file"] == name for entry in engine.report.left_listed)


def test_the_manual_lists_every_form_and_every_target():
    from pathlib import Path

    manual = (Path(__file__).parents[2] / "docs" / "rewrite.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| [^|]+ \| `([a-z0-9]+\.[a-z0-9-]+)` \| ([a-z0-9_]+) \|", manual, re.MULTILINE))
    assert listed == {(f.name, f.kind) for f in all_forms()}
    names = {"apivideo": "api.video", "jwplayer": "JW Player", "cloudflare": "Cloudflare Stream", "bunny": "Bunny"}
    options_table = manual.split("| target | written | dropped (reported) |", 1)[1].split("\n\n", 1)[0]
    for provider in PLAYERS:
        assert re.search(rf"^\| [^|]*{re.escape(names.get(provider, provider))}", options_table, re.I | re.M), provider


@pytest.mark.parametrize("target", TARGETS)
def test_a_signed_video_is_never_written_without_the_token_marker(target):
    """Every embed of the corpus, its video signed at the target with its URLs known (as the ledger has them): what is
    written holds the marker where the token goes, or the embed is left; never a URL that would not play."""
    rows = [{**row, "playback_policy": "signed", "note": "signed: needs a token"} for row in map_rows(CORPUS, target)]
    idmap = from_rows(rows)
    written = left = 0
    for page in CORPUS.pages:
        for embed in find(page.text):
            outcome = decide(embed, page.text[embed.start : embed.end], idmap, PLAYERS)
            if isinstance(outcome, Rewritten):
                written += 1
                assert outcome.rendered.marked and TOKEN_MARKER in outcome.rendered.text, (page.name, outcome)
            else:
                left += 1
                assert outcome.reason == "no equivalent", (page.name, outcome)
    assert written + left == CORPUS.expected
    assert (written == 0) == (target == "vimeo")  # Vimeo signs nothing: a video private there has no embed to write
