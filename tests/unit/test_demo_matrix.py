"""The demo matrix's own logic: which pairs it runs, and how it reads a pair's verdict from its demo."""

from __future__ import annotations

import pytest
from migrator.providers import PROVIDERS
from migrator.sources import PLATFORMS

from infra.matrix import SAMPLE, Pair, all_pairs, chosen, line_of, verdict_of


def test_every_source_meets_a_target_and_every_target_the_sample():
    pairs = all_pairs()
    sources = {p.source for p in pairs if p.source != SAMPLE}
    assert sources == set(PLATFORMS)  # a new source not in the matrix fails here
    assert {p.target for p in pairs if p.source == SAMPLE} == set(PROVIDERS)
    takes_tracks = {name for name, cls in PROVIDERS.items() if cls.takes_tracks}
    assert takes_tracks <= {p.target for p in pairs if p.source != SAMPLE}  # each meets a library with captions
    assert len({p.name for p in pairs}) == len(pairs)


@pytest.mark.parametrize(
    "only, names",
    [
        (None, None),
        ("vimeo-mux", ["vimeo-mux"]),
        ("sample-bunny, vimeo-mux", ["vimeo-mux", "sample-bunny"]),  # in the matrix's order, spaces ignored
    ],
)
def test_only_picks_pairs_in_the_matrix_order(only, names):
    picked = [p.name for p in chosen(only)]
    assert picked == (names if names is not None else [p.name for p in all_pairs()])


def test_only_names_what_is_not_a_pair():
    with pytest.raises(ValueError, match="not a pair of the matrix: vimeo-youtube"):
        chosen("vimeo-mux,vimeo-youtube")


def test_a_pair_becomes_the_demo_arguments():
    assert Pair("vimeo", "mux").argv(None) == ["--provider", "mux", "--from", "vimeo", "--archive"]  # issue 43
    assert Pair("kaltura", "vimeo").argv(None) == ["--provider", "vimeo", "--from", "kaltura"]
    assert Pair(SAMPLE, "bunny").argv(100) == ["--provider", "bunny", "--assets", "100"]


VIMEO_MUX = Pair("vimeo", "mux")


@pytest.mark.parametrize(
    "output, code, ok, result",
    [
        (
            "...\nresult                OK: every asset resolved and verified\n",
            0,
            True,
            "OK: every asset resolved and verified",
        ),
        # verify's own result line comes earlier; the demo's is the last one
        (
            "result          OK: every ready asset checked (490) and matched\n"
            "result                NOT OK: 30 caption tracks still pending after a wait of 181 s\n",
            1,
            False,
            "NOT OK: 30 caption tracks still pending after a wait of 181 s",
        ),
        (
            "[run] deploying\n[demo] stopped: listing the provider's videos failed: HTTP 429\n",
            1,
            False,
            "exit 1, no result line: [demo] stopped: listing the provider's videos failed: HTTP 429",
        ),
        ("", -9, False, "exit -9, no result line: no output"),
        (
            "result                OK: every asset resolved and verified\nTraceback (most recent call last):\n",
            1,
            False,
            "exit 1 after OK: every asset resolved and verified",
        ),
    ],
)
def test_a_pair_is_ok_only_when_its_demo_says_ok_and_exits_0(output, code, ok, result):
    verdict = verdict_of(VIMEO_MUX, output, code, 151.84)
    assert (verdict.ok, verdict.result) == (ok, result)


def test_a_table_line_names_the_pair_its_verdict_and_its_time():
    ok = verdict_of(VIMEO_MUX, "result   OK: every asset resolved and verified", 0, 151.84)
    assert line_of(ok) == "     vimeo -> mux        OK       151.8 s  OK: every asset resolved and verified"
    failed = verdict_of(Pair(SAMPLE, "bunny"), "", 1, 3.0)
    assert line_of(failed).startswith("    sample -> bunny      NOT OK     3.0 s  exit 1")


@pytest.mark.parametrize("source", sorted(PLATFORMS))
def test_every_source_gets_an_address_its_clients_use(source):
    """The stack's SourceBaseUrls names every source: a simulator below its platform's API path, an object
    store's emulator (gcs, azure: no simulator profile) at its root. A KeyError here stopped two matrix pairs."""
    from types import SimpleNamespace

    from infra.localrun import LocalRun

    run = LocalRun([], {}, source=source)
    run.source_sim = SimpleNamespace(url="http://127.0.0.1:9", stop=lambda: None)
    assert run.source_url.startswith("http://127.0.0.1:9")
    assert run.source_url.endswith("/modern") == (source == "wistia")
